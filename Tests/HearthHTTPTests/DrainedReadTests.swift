import CEpollBatches
import Foundation
import Glibc
@testable import HearthHTTP
import HearthModel
import HearthTesting
import Testing

/// libmicrohttpd's read after each answer is answered EAGAIN without a system call when the socket
/// can only be empty (Sources/CEpollBatches/drained_reads.c). What could go wrong is a request's
/// bytes left unread with no event to report them: the step test reads bytes that arrived while
/// such a read was answered, and the server tests send requests every way a client may.
@Suite("Reads of drained sockets spared")
struct DrainedReadTests {
    typealias Steps = ParkedSocketStepTests

    /// Reads through libmicrohttpd's recv (as replaced): the bytes, or nil with errno.
    static func read(_ socket: Int32, _ count: Int = 64) -> [UInt8]? {
        var buffer = [UInt8](repeating: 0, count: count)
        let n = buffer.withUnsafeMutableBytes { hearth_libmicrohttpd_recv(socket, $0.baseAddress!, count, 0) }
        return n < 0 ? nil : Array(buffer[0..<n])
    }

    static func write(_ socket: Int32, _ text: String) { _ = Glibc.write(socket, text, text.utf8.count) }

    /// The pair's socket made non-blocking and registered, and three bytes reported and read: a
    /// short read, as libmicrohttpd's read of a whole request is. What went wrong.
    static func shortReadFirst(_ epoll: Int32, _ pair: Steps.Pair) -> [String] {
        var wrong: [String] = []
        _ = fcntl(pair.ours, F_SETFL, fcntl(pair.ours, F_GETFL) | O_NONBLOCK)
        _ = Steps.add(epoll, pair.ours, data: Steps.data(pair.ours))
        write(pair.peer, "abc")
        if Steps.ready(epoll) != [Steps.data(pair.ours)] { wrong.append("the first bytes were not reported") }
        if read(pair.ours) != Array("abc".utf8) { wrong.append("the first read did not get the bytes") }
        return wrong
    }

    @Test("a read after a short one, while parked with nothing held back, is answered EAGAIN; bytes that came meanwhile are reported after the add and read")
    func stepByStep() async throws {
        let wrong = try await Steps.onPollingThread { epoll, pair in
            var wrong = Self.shortReadFirst(epoll, pair)
            let data = Steps.data(pair.ours)
            _ = Steps.park(epoll, pair.ours)
            let before = hearth_drained_reads_spared()
            if Self.read(pair.ours) != nil || errno != EAGAIN { wrong.append("the read after the short one was not answered EAGAIN") }
            // Bytes arrive while parked; their event is queued, not reported yet.
            Self.write(pair.peer, "def")
            if Self.read(pair.ours) != nil || errno != EAGAIN { wrong.append("a read with nothing reported since was not answered EAGAIN") }
            if hearth_drained_reads_spared() - before < 2 { wrong.append("the reads answered were not counted") }
            // The add after the answer: nothing was held back, so it is not made, and the queued
            // event is reported by the next wait.
            if Steps.add(epoll, pair.ours, data: data) != 0 || hearth_socket_parked(pair.ours) != 0 { wrong.append("the add did not unpark") }
            if Steps.ready(epoll) != [data] { wrong.append("the bytes that came meanwhile were not reported") }
            if Self.read(pair.ours) != Array("def".utf8) { wrong.append("the bytes that came meanwhile were not read") }
            // Parked again, and an event held back: the read is made.
            _ = Steps.park(epoll, pair.ours)
            Self.write(pair.peer, "g")
            if Steps.ready(epoll) != [] || hearth_socket_parked(pair.ours) != 2 { wrong.append("the event was not held back") }
            if Self.read(pair.ours) != Array("g".utf8) { wrong.append("a read after a held-back event was not made") }
            _ = Steps.add(epoll, pair.ours, data: data)
            // A read that filled its buffer: the socket may hold more, so the next read is made
            // (here it finds bytes that came after, with no event reported).
            Self.write(pair.peer, String(repeating: "h", count: 64))
            _ = Steps.ready(epoll)
            if Self.read(pair.ours)?.count != 64 { wrong.append("the full read did not get 64 bytes") }
            _ = Steps.park(epoll, pair.ours)
            Self.write(pair.peer, "i")
            if Self.read(pair.ours) != Array("i".utf8) { wrong.append("a read after a full one was answered without reading") }
            _ = Steps.add(epoll, pair.ours, data: data)
            return wrong
        }
        #expect(wrong == [])
    }

    @Test("a suspension in a later pass than the short read keeps no record: an event reported in between and not read leaves bytes the next read gets")
    func suspendedInALaterPass() async throws {
        let wrong = try await Steps.onPollingThread { epoll, pair in
            var wrong = Self.shortReadFirst(epoll, pair)
            let data = Steps.data(pair.ours)
            // More bytes, reported by the next pass and not read (libmicrohttpd writing a response
            // only marks the connection ready), then a suspension in that later pass.
            Self.write(pair.peer, "def")
            if Steps.ready(epoll) != [data] { wrong.append("the second bytes were not reported") }
            _ = Steps.park(epoll, pair.ours)
            // No event is left to report them: the read must be made.
            if Self.read(pair.ours) != Array("def".utf8) { wrong.append("the read after a suspension in a later pass did not get the bytes") }
            _ = Steps.add(epoll, pair.ours, data: data)
            return wrong
        }
        #expect(wrong == [])
    }

    @Test("on a thread that is not a polling thread every read is made")
    func otherThreads() async throws {
        let wrong = try await onOwnThread { () -> [String] in
            let pair = try Steps.Pair()
            defer { close(pair.ours); close(pair.peer) }
            _ = fcntl(pair.ours, F_SETFL, fcntl(pair.ours, F_GETFL) | O_NONBLOCK)
            Self.write(pair.peer, "abc")
            _ = Self.read(pair.ours)
            Self.write(pair.peer, "def")
            return Self.read(pair.ours) == Array("def".utf8) ? [] : ["a read on another thread was not made"]
        }
        #expect(wrong == [])
    }

    @Test("kept-alive requests, one at a time, pipelined, and sent while the one before waits, are all answered, with the reads after answers spared")
    func requestsAreAllAnswered() async throws {
        let before = hearth_drained_reads_spared()
        let gate = ParkedSocketTests.Gate()
        try await withServer({ ParkedSocketTests.patient(&$0, threads: 1) }, handler: gate.handler) { server, _ in
            let port = server.port
            let wrong = try await onOwnThread { () -> [String] in
                defer { gate.open() }
                let c = try RawConnection(port: port, timeoutSeconds: 30)
                var wrong: [String] = []
                let request = ParkedSocketTests.request
                for i in 0..<30 {
                    try c.send(request("/n\(i)", "\(i)"))
                    if try c.readResponse().text != "/n\(i) \(i)" { wrong.append("request \(i)") }
                }
                // Pipelined: five requests in one write.
                try c.send((0..<5).map { request("/p\($0)", "\($0)") }.joined())
                for i in 0..<5 where try c.readResponse().text != "/p\(i) \(i)" { wrong.append("pipelined request \(i)") }
                // One sent while the one before waits in the handler, then another after the answer.
                try c.send(request("/held", "h"))
                guard gate.waitForArrivals(1) else { return wrong + ["the held request never reached the handler"] }
                try c.send(request("/while", "w"))
                gate.open()
                if try c.readResponse().text != "/held h" { wrong.append("the held request") }
                if try c.readResponse().text != "/while w" { wrong.append("the request sent while it waited") }
                try c.send(request("/last", "l"))
                if try c.readResponse().text != "/last l" { wrong.append("the request after") }
                return wrong
            }
            #expect(wrong == [])
        }
        #expect(drainedReadsSpared == knownLibmicrohttpd)
        // Only reads after a suspension can be spared, and a handler that answers before its
        // request is suspended has none: how many are depends on the threads' timing (15 to 36 of
        // the 36 answers when run alone).
        if drainedReadsSpared { #expect(hearth_drained_reads_spared() - before >= 5) }
    }
}
