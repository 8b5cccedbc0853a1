import Foundation
import HearthModel
import HearthTesting
import Synchronization
import Testing

/// Runs the real `hearth` binary as a child process (stdout discarded, stderr kept).
final class ChildProcess: Sendable {
    let process: Subprocess

    init(_ arguments: [String], directory: String, environment: [String: String] = [:]) throws {
        process = try Subprocess(buildDirectory + "/hearth", arguments, directory: directory, environment: environment, stdout: .discard, stderr: .capture)
    }

    var stderrText: String { process.stderrText }

    /// Sends `signal` to the process.
    func signal(_ signal: Int32) { process.signal(signal) }

    /// Waits until stderr contains `text`, for at most `seconds`.
    func waitFor(_ text: String, seconds: Double = 90) async throws {
        try await process.waitFor(seconds: seconds, "'\(text)'") { $0.stderrText.contains(text) }
    }

    /// Waits for the process to exit, for at most `seconds` (it is killed if it does not); returns
    /// its exit status, or 128 + the signal that ended it.
    func waitForExit(seconds: Double = 90) async throws -> Int32 {
        switch try await process.wait(seconds: seconds) {
        case .exited(let status): return status
        case .signaled(let signal): return 128 + signal
        case .lost(let error): throw Failure("hearth could not be waited for (errno \(error))")
        }
    }

    /// The port `hearth serve` reported in its `ready` line.
    func servingPort(seconds: Double = 30) async throws -> Int {
        // The whole `ready` line, not just its first word: stderr arrives in pieces.
        let pattern = #"ready[^\n]*port[=":]+([0-9]+)[^\n]*\n"#
        try await process.waitFor(seconds: seconds, "a 'ready' line with the port") { $0.stderrText.range(of: pattern, options: .regularExpression) != nil }
        let text = stderrText
        guard let line = text.range(of: pattern, options: .regularExpression),
              let range = text[line].range(of: #"port[=":]+([0-9]+)"#, options: .regularExpression),
              let port = Int(text[line][range].filter(\.isNumber)) else { throw Failure("no port in:\n\(text)") }
        return port
    }

    /// The process's worker processes (its children), from /proc/<pid>/task/*/children.
    var workers: [pid_t] {
        let pid = process.pid
        return threadIDs(of: pid).flatMap { task -> [pid_t] in
            let text = (try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/children", encoding: .utf8)) ?? ""
            return text.split(separator: " ").compactMap { pid_t($0) }
        }
    }

    deinit { process.signal(SIGKILL) }
}

/// The ids of `pid`'s threads now (/proc/<pid>/task).
func threadIDs(of pid: pid_t) -> [Int32] {
    ((try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []).compactMap { Int32($0) }
}

struct Failure: Error, CustomStringConvertible {
    var description: String
    init(_ d: String) { description = d }
}

@Suite("hearth serve as a real process")
struct ServeProcessTests {
    @Test("serve loads the units, reports the function table, and exits 0 on SIGTERM and on SIGINT", arguments: [SIGTERM, SIGINT])
    func serveStopsOnSignal(signal: Int32) async throws {
        let dir = TempDir()
        _ = dir.write("runtime.toml", "units_dir = \"\(buildDirectory)\"\nunits = [\"EchoUnit\", \"BrokenUnit\"]\n[server]\nport = 0\n")
        let child = try ChildProcess(["serve"], directory: dir.path)
        try await child.waitFor("ready")
        #expect(child.stderrText.contains("name=echo"))
        #expect(child.stderrText.contains("unit refused"), "the broken unit is reported but does not stop the others")
        child.signal(signal)
        let status = try await child.waitForExit()
        #expect(status == 0)
        #expect(child.stderrText.contains("stopped"))
    }
}
