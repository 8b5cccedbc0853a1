import CEpollBatches
import Foundation
import Glibc
@testable import HearthHTTP
import HearthModel
import HearthTesting
import Synchronization
import Testing

/// A suspended connection's socket stays in its polling thread's epoll set (parked) instead of
/// being deleted at the suspension and added again after the answer
/// (Sources/CEpollBatches/parked_sockets.c). What could go wrong is a connection never woken
/// again or woken while suspended: these tests drive what the client may do while its request
/// waits (send more, hang up) and check that the connection, and the next ones to get its
/// descriptor, are served. The counts are the process's, other tests beside them add to them,
/// so only their growth is checked.
@Suite("Suspended connections parked in the epoll set")
struct ParkedSocketTests {
    static func request(_ path: String, body: String = "") -> String {
        "POST \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: text/plain\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)"
    }

    /// Deadlines are other tests' subject: with the whole suite beside them, a connection waiting
    /// its turn could otherwise pass the head deadline and be closed.
    static func patient(_ c: inout HTTPServer.Configuration, threads: Int) {
        c.threads = threads
        c.headTimeout = .seconds(300)
        c.connectionTimeoutSeconds = 300
    }

    /// Requests to `/held` wait in the handler until the test opens the gate; others answer at once.
    final class Gate: Sendable {
        private let state = Mutex<(open: Bool, arrived: Int, waiting: [CheckedContinuation<Void, Never>])>((false, 0, []))

        func pass() async {
            await withCheckedContinuation { c in
                let go = state.withLock { s -> Bool in
                    s.arrived += 1
                    if s.open { return true }
                    s.waiting.append(c)
                    return false
                }
                if go { c.resume() }
            }
        }

        func open() {
            for c in state.withLock({ s -> [CheckedContinuation<Void, Never>] in
                s.open = true
                defer { s.waiting = [] }
                return s.waiting
            }) { c.resume() }
        }

        var arrived: Int { state.withLock { $0.arrived } }

        /// Blocks (on a test thread) until `count` requests reached the gate, at most 30 s.
        func waitForArrivals(_ count: Int) -> Bool {
            for _ in 0..<30_000 {
                if arrived >= count { return true }
                usleep(1000)
            }
            return false
        }

        var handler: HTTPServer.Handler {
            { request in
                if request.path == "/held" { await self.pass() }
                return .text("\(request.path) \(String(decoding: request.body, as: UTF8.self))")
            }
        }
    }

    @Test("requests on a kept-alive connection suspend without deleting its socket from the epoll set")
    func suspensionsSpareSystemCalls() async throws {
        let before = hearth_parking_counts()
        try await withServer({ Self.patient(&$0, threads: 1) }, handler: echo) { server, _ in
            let port = server.port
            let wrong = try await onOwnThread { () -> [String] in
                let c = try RawConnection(port: port, timeoutSeconds: 30)
                var wrong: [String] = []
                for i in 0..<50 {
                    try c.send(Self.request("/n\(i)", body: "\(i)"))
                    let r = try c.readResponse()
                    if r.status != 200 || (try? JSONParser.parse(r.body))?["body"] != .string("\(i)") { wrong.append("request \(i): \(r.status) \(r.text)") }
                }
                return wrong
            }
            #expect(wrong == [])
        }
        let after = hearth_parking_counts()
        // Every suspension but the connection's first (its socket was added before the polling
        // thread was known) keeps the socket, and each answer's wait to read needs no add.
        #expect(after.deletes_spared - before.deletes_spared >= 49)
        #expect(after.adds_spared + after.adds_as_mod - before.adds_spared - before.adds_as_mod >= 49)
    }

    @Test("a request sent while the one before it waits, suspended, is answered after it")
    func requestArrivingWhileSuspended() async throws {
        let gate = Gate()
        let before = hearth_parking_counts()
        try await withServer({ Self.patient(&$0, threads: 1) }, handler: gate.handler) { server, _ in
            let port = server.port
            let answers = try await onOwnThread { () -> [String] in
                defer { gate.open() }
                let c = try RawConnection(port: port, timeoutSeconds: 30)
                // One answer first, so that the socket is registered by a known polling thread.
                try c.send(Self.request("/warm", body: "w"))
                _ = try c.readResponse()
                try c.send(Self.request("/held", body: "1"))
                guard gate.waitForArrivals(1) else { return ["the held request never reached the handler"] }
                // The polling thread, waiting in epoll_wait, is woken by this request's bytes on a
                // parked socket: the event is held back, not handed to libmicrohttpd.
                try c.send(Self.request("/after", body: "2"))
                for _ in 0..<30_000 where hearth_parking_counts().events_held == before.events_held { usleep(1000) }
                gate.open()
                return try [c.readResponse().text, c.readResponse().text]
            }
            #expect(answers == ["/held 1", "/after 2"])
        }
        #expect(hearth_parking_counts().events_held > before.events_held)
    }

    @Test("a client that hangs up while its request is suspended leaves nothing behind for the next connections")
    func hangUpWhileSuspended() async throws {
        let gate = Gate()
        let before = hearth_parking_counts()
        try await withServer({ Self.patient(&$0, threads: 1) }, handler: gate.handler) { server, _ in
            let port = server.port
            let wrong = try await onOwnThread { () -> [String] in
                defer { gate.open() }
                var wrong: [String] = []
                // Several rounds: each hung-up connection's descriptor is freed, and the next
                // connections accepted get it again.
                for round in 0..<5 {
                    let c = try RawConnection(port: port, timeoutSeconds: 30)
                    try c.send(Self.request("/warm", body: "w"))
                    _ = try c.readResponse()
                    try c.send(Self.request("/held", body: "\(round)"))
                    guard gate.waitForArrivals(round + 1) else { return ["round \(round): the held request never reached the handler"] }
                    shutdown(c.fd, Int32(SHUT_RDWR))
                    let next = try (0..<4).map { _ in try RawConnection(port: port, timeoutSeconds: 30) }
                    for (i, n) in next.enumerated() {
                        try n.send(Self.request("/next", body: "\(round).\(i)"))
                        let r = try n.readResponse()
                        if r.text != "/next \(round).\(i)" { wrong.append("round \(round), connection \(i): \(r.status) \(r.text)") }
                    }
                }
                // Let the held requests go: their connections, hung up, are closed with their
                // sockets still parked, which must delete them from the set for real first.
                gate.open()
                return wrong
            }
            #expect(wrong == [])
            #expect(try await settledInFlight(server) == 0)
            // And the server still serves new connections, on the descriptors those closed.
            let after = try await onOwnThread { () -> [String] in
                try (0..<8).map { i in
                    let c = try RawConnection(port: port, timeoutSeconds: 30)
                    try c.send(Self.request("/last", body: "\(i)"))
                    return try c.readResponse().text
                }
            }
            #expect(after == (0..<8).map { "/last \($0)" })
        }
        let after = hearth_parking_counts()
        #expect(after.deletes_forced - before.deletes_forced >= 5)
        // Deleted while the socket was still open: libmicrohttpd's "closed" notification comes
        // before it closes the descriptor.
        #expect(after.deletes_failed == before.deletes_failed)
    }

    @Test("a server stopped with requests suspended leaves the next server in the process working")
    func shutdownWithSuspendedRequests() async throws {
        let gate = Gate()
        defer { gate.open() }
        try await withServer({ Self.patient(&$0, threads: 2) }, handler: gate.handler) { server, _ in
            let port = server.port
            let held = try await onOwnThread { () -> [RawConnection] in
                let connections = try (0..<6).map { _ in try RawConnection(port: port, timeoutSeconds: 30) }
                for c in connections { try c.send(Self.request("/warm", body: "w")) }
                for c in connections { _ = try c.readResponse() }
                for c in connections { try c.send(Self.request("/held", body: "x")) }
                return gate.waitForArrivals(6) ? connections : []
            }
            #expect(held.count == 6)
            await server.shutdown(grace: .milliseconds(200))
            _ = held
        }
        gate.open()
        try await withServer({ Self.patient(&$0, threads: 2) }, handler: echo) { server, _ in
            let port = server.port
            let answers = try await onOwnThread { () -> [Int] in
                try (0..<12).map { i in
                    let c = try RawConnection(port: port, timeoutSeconds: 30)
                    try c.send(Self.request("/again", body: "\(i)"))
                    return try c.readResponse().status
                }
            }
            #expect(answers == Array(repeating: 200, count: 12))
        }
    }
}
