import Foundation
import HearthTesting
import Testing

/// `hearth serve` accepts connections on a thread of its own and hands them to libmicrohttpd's
/// polling threads alternately (`Acceptor`), so that connections opened together are served by
/// both threads about equally. Measured from outside on a real server process: each polling
/// thread's voluntary context switches while requests go one at a time over the connections
/// (a thread sleeps in `epoll_wait` after each of its requests, and only then).
@Suite("hearth serve's connections spread over its polling threads")
struct AcceptorTests {
    /// Voluntary context switches of each of `pid`'s libmicrohttpd polling threads, by thread id.
    static func pollingThreadSwitches(_ pid: pid_t) -> [Int32: Int] {
        var found: [Int32: Int] = [:]
        for tid in threadIDs(of: pid) {
            let comm = (try? String(contentsOfFile: "/proc/\(pid)/task/\(tid)/comm", encoding: .utf8)) ?? ""
            guard comm.hasPrefix("MHD-worker"),
                  let status = try? String(contentsOfFile: "/proc/\(pid)/task/\(tid)/status", encoding: .utf8),
                  let line = status.split(separator: "\n").first(where: { $0.hasPrefix("voluntary_ctxt_switches:") }),
                  let count = Int(line.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)) else { continue }
            found[tid] = count
        }
        return found
    }

    @Test("32 connections opened together, then 10 rounds of one request at a time on each: both polling threads serve about half")
    func connectionsAlternate() async throws {
        let dir = TempDir()
        _ = dir.write("runtime.toml", "units_dir = \"\(buildDirectory)\"\nunits = [\"EchoUnit\"]\n[server]\nport = 0\nthreads = 2\n")
        let child = try ChildProcess(["serve"], directory: dir.path)
        let port = try await child.servingPort()
        let pid = child.process.pid
        let body = #"{"data":"spread"}"#
        let (before, after) = try await onOwnThread { () -> ([Int32: Int], [Int32: Int]) in
            let connections = try (0..<32).map { _ in try RawConnection(port: port, timeoutSeconds: 60) }
            // One request on each first: every connection has reached its polling thread.
            func round() throws {
                for c in connections {
                    try c.send("POST /echo HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)")
                    let response = try c.readResponse()
                    guard response.status == 200 else { throw RawConnection.Failure("status \(response.status): \(response.text)") }
                }
            }
            try round()
            let before = AcceptorTests.pollingThreadSwitches(pid)
            for _ in 0..<10 { try round() }
            return (before, AcceptorTests.pollingThreadSwitches(pid))
        }
        #expect(before.count == 2, "two polling threads: \(before)")
        let served = before.keys.map { (after[$0] ?? 0) - before[$0, default: 0] }
        // 320 requests, each at least one sleep of its thread: alternate connections make the two
        // counts about equal; libmicrohttpd's own accepting split such a burst about 2 to 1.
        print("polling threads: voluntary switches over 320 requests \(served)")
        #expect(served.count == 2 && served.allSatisfy { $0 >= 100 }, "switches per thread: \(served)")
        if let low = served.min(), let high = served.max() {
            #expect(Double(high) / Double(max(low, 1)) < 1.5, "switches per thread: \(served)")
        }
        child.signal(SIGTERM)
        #expect(try await child.waitForExit() == 0)
    }
}
