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
        func waitForArrivals(_ count: Int) -> Bool { holdsSoon { arrived >= count } }

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
        // Every suspension keeps the socket, and each answer's wait to read needs no add (other
        // tests beside this one only add to the process's counts).
        #expect(after.deletes_spared - before.deletes_spared >= 50)
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
                try c.send(Self.request("/held", body: "1"))
                guard gate.waitForArrivals(1) else { return ["the held request never reached the handler"] }
                guard let socket = server.core.connections.openDescriptors.first, hearth_socket_parked(socket) == 1 else {
                    return ["the suspended connection's socket is not parked"]
                }
                // The polling thread, waiting in epoll_wait, is woken by this request's bytes on a
                // parked socket: the event is held back, not handed to libmicrohttpd.
                try c.send(Self.request("/after", body: "2"))
                guard holdsSoon({ hearth_socket_parked(socket) == 2 }) else { return ["no event held back for the parked socket"] }
                gate.open()
                let answers = try [c.readResponse().text, c.readResponse().text]
                // The connection's add, once it waits to read again after the answers, is made as
                // a modify (events were held back), which reports the socket's readiness again.
                // Waited for with the client still connected: had it hung up first, the server
                // would close the parked socket without any add.
                let modified = holdsSoon { hearth_socket_parked(socket) == 0 && hearth_parking_counts().adds_as_mod > before.adds_as_mod }
                return withExtendedLifetime(c) { answers + (modified ? [] : ["the add after the answers was not made as a modify"]) }
            }
            #expect(answers == ["/held 1", "/after 2"])
        }
    }

    @Test("a client that hangs up while its request is suspended leaves nothing behind for the next connections")
    func hangUpWhileSuspended() async throws {
        let gates = (0..<5).map { _ in Gate() }
        let handler: HTTPServer.Handler = { request in
            if request.path == "/held", let k = Int(String(decoding: request.body, as: UTF8.self)) { await gates[k].pass() }
            return .text("\(request.path) \(String(decoding: request.body, as: UTF8.self))")
        }
        let before = hearth_parking_counts()
        try await withServer({ Self.patient(&$0, threads: 1) }, handler: handler) { server, _ in
            let port = server.port
            let wrong = try await onOwnThread { () -> [String] in
                defer { for g in gates { g.open() } }
                var wrong: [String] = []
                for round in 0..<5 {
                    // The round before's connections, closed by the client, closed by the server.
                    _ = holdsSoon { server.openConnections == 0 }
                    let c = try RawConnection(port: port, timeoutSeconds: 30)
                    try c.send(Self.request("/held", body: "\(round)"))
                    guard gates[round].waitForArrivals(1) else { return ["round \(round): the held request never reached the handler"] }
                    guard let socket = server.core.connections.openDescriptors.first, hearth_socket_parked(socket) != 0 else {
                        return ["round \(round): the suspended connection's socket is not parked"]
                    }
                    shutdown(c.fd, Int32(SHUT_RDWR))
                    // The answer goes to a client that hung up: the connection closes with its
                    // socket still parked, which must delete the registration first.
                    gates[round].open()
                    guard holdsSoon({ server.openConnections == 0 }) else { return ["round \(round): the hung-up connection was never closed"] }
                    // The next connections get the freed descriptor again (the lowest free number).
                    let next = try (0..<4).map { _ in try RawConnection(port: port, timeoutSeconds: 30) }
                    for (i, n) in next.enumerated() {
                        try n.send(Self.request("/next", body: "\(round).\(i)"))
                        let r = try n.readResponse()
                        if r.text != "/next \(round).\(i)" { wrong.append("round \(round), connection \(i): \(r.status) \(r.text)") }
                    }
                }
                return wrong
            }
            #expect(wrong == [])
        }
        let after = hearth_parking_counts()
        #expect(after.deletes_forced - before.deletes_forced >= 5)
        // Deleted while the socket was still open: close deletes before it closes.
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

/// The same mechanism on sockets of the test's own: a socket pair registered in an epoll instance
/// of the test's, parked by a delete made as a suspension makes it, so that each step can be seen.
@Suite("Parked sockets, step by step")
struct ParkedSocketStepTests {
    static let edge = EPOLLIN.rawValue | EPOLLET.rawValue

    /// A connected socket pair (the first end is registered) and an epoll instance.
    struct Pair {
        let ours: Int32, peer: Int32
        init() throws {
            var fds: [Int32] = [0, 0]
            guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds) == 0 else { throw RawConnection.Failure("socketpair: errno \(errno)") }
            ours = fds[0]
            peer = fds[1]
        }
        func poke() { _ = write(peer, "x", 1) }
        func drain() {
            var b = [UInt8](repeating: 0, count: 64)
            _ = recv(ours, &b, b.count, Int32(MSG_DONTWAIT))
        }
    }

    /// Data unique to a descriptor open now (tests beside these park sockets of their own, and an
    /// event is matched to its parked socket by its data).
    static func data(_ socket: Int32) -> UInt64 { 0x5EED_0000_0000 | UInt64(socket) }

    static func add(_ epoll: Int32, _ socket: Int32, data: UInt64) -> Int32 {
        var event = epoll_event(events: edge, data: epoll_data_t(u64: data))
        return epoll_ctl(epoll, EPOLL_CTL_ADD, socket, &event)
    }

    static func park(_ epoll: Int32, _ socket: Int32) -> Int32 {
        hearth_suspending(1)
        defer { hearth_suspending(0) }
        return epoll_ctl(epoll, EPOLL_CTL_DEL, socket, nil)
    }

    /// The data of the events ready now.
    static func ready(_ epoll: Int32) -> [UInt64] {
        var events = [epoll_event](repeating: epoll_event(), count: 512)
        let n = epoll_wait(epoll, &events, Int32(events.count), 0)
        return n <= 0 ? [] : events[0..<Int(n)].map { $0.data.u64 }
    }

    /// Runs `steps` on a thread of its own marked as a polling thread, with an epoll instance and
    /// a socket pair, all closed after; returns what went wrong.
    static func onPollingThread(_ steps: @escaping @Sendable (_ epoll: Int32, _ pair: Pair) throws -> [String]) async throws -> [String] {
        try await onOwnThread {
            hearth_mark_polling_thread()
            let epoll = epoll_create1(Int32(EPOLL_CLOEXEC))
            let pair = try Pair()
            defer { close(pair.ours); close(pair.peer); close(epoll) }
            return try steps(epoll, pair)
        }
    }

    @Test("a parked socket's events are held back on a polling thread, and the add after makes the kernel report them again")
    func heldThenReported() async throws {
        let wrong = try await Self.onPollingThread { epoll, pair in
            var wrong: [String] = []
            if Self.add(epoll, pair.ours, data: Self.data(pair.ours)) != 0 { wrong.append("add: errno \(errno)") }
            if Self.park(epoll, pair.ours) != 0 || hearth_socket_parked(pair.ours) != 1 { wrong.append("not parked") }
            pair.poke()
            if Self.ready(epoll) != [] { wrong.append("an event of a parked socket reached the polling thread") }
            if hearth_socket_parked(pair.ours) != 2 { wrong.append("the event was not recorded as held back") }
            if Self.add(epoll, pair.ours, data: Self.data(pair.ours)) != 0 || hearth_socket_parked(pair.ours) != 0 { wrong.append("the add did not unpark") }
            if Self.ready(epoll) != [Self.data(pair.ours)] { wrong.append("the held-back event was not reported again after the add") }
            pair.drain()
            // Parked with nothing held: the add is not made, and later events arrive as usual.
            _ = Self.park(epoll, pair.ours)
            if Self.add(epoll, pair.ours, data: Self.data(pair.ours)) != 0 { wrong.append("second add: errno \(errno)") }
            pair.poke()
            if Self.ready(epoll) != [Self.data(pair.ours)] { wrong.append("an event after the add was not reported") }
            return wrong
        }
        #expect(wrong == [])
    }

    @Test("a socket suspended again before any add (the next request read straight from it) stays parked with what it held back")
    func suspendedAgainWhileParked() async throws {
        let wrong = try await Self.onPollingThread { epoll, pair in
            var wrong: [String] = []
            _ = Self.add(epoll, pair.ours, data: Self.data(pair.ours))
            _ = Self.park(epoll, pair.ours)
            pair.poke()
            if !Self.ready(epoll).isEmpty || hearth_socket_parked(pair.ours) != 2 { wrong.append("the event was not held back") }
            let before = hearth_parking_counts()
            if Self.park(epoll, pair.ours) != 0 { wrong.append("the second suspension's delete failed: errno \(errno)") }
            if hearth_socket_parked(pair.ours) != 2 { wrong.append("the second suspension did not keep the socket parked with its held event") }
            if hearth_parking_counts().deletes_spared <= before.deletes_spared { wrong.append("the second suspension's delete was made") }
            pair.poke()
            if !Self.ready(epoll).isEmpty { wrong.append("an event reached the polling thread while suspended again") }
            // The add after the last answer makes the kernel report what was held back.
            if Self.add(epoll, pair.ours, data: Self.data(pair.ours)) != 0 || hearth_socket_parked(pair.ours) != 0 { wrong.append("the add did not unpark") }
            if Self.ready(epoll) != [Self.data(pair.ours)] { wrong.append("the held-back events were not reported after the add") }
            return wrong
        }
        #expect(wrong == [])
    }

    @Test("closing a parked socket deletes its registration, even while a copy of the descriptor keeps the socket open")
    func closeDeletes() async throws {
        let wrong = try await onOwnThread { () -> [String] in
            // Not a polling thread: nothing is held back here, so a registration left behind
            // would show as an event.
            let epoll = epoll_create1(Int32(EPOLL_CLOEXEC))
            let pair = try Pair()
            let copy = dup(pair.ours)
            defer { close(copy); close(pair.peer); close(epoll) }
            var wrong: [String] = []
            _ = Self.add(epoll, pair.ours, data: Self.data(pair.ours))
            if Self.park(epoll, pair.ours) != 0 || hearth_socket_parked(pair.ours) != 1 { wrong.append("not parked") }
            close(pair.ours)
            pair.poke()
            if Self.ready(epoll) != [] { wrong.append("the closed socket is still in the epoll set") }
            return wrong
        }
        #expect(wrong == [])
    }

    @Test("two hundred sockets parked and unparked in shuffled orders: exactly the parked ones are held back")
    func manyParked() async throws {
        let wrong = try await onOwnThread { () -> [String] in
            hearth_mark_polling_thread()
            let epoll = epoll_create1(Int32(EPOLL_CLOEXEC))
            let pairs = try (0..<200).map { _ in try Pair() }
            defer {
                for p in pairs { close(p.ours); close(p.peer) }
                close(epoll)
            }
            var rng = SystemRandomNumberGenerator()
            var wrong: [String] = []
            for p in pairs { _ = Self.add(epoll, p.ours, data: Self.data(p.ours)) }
            for i in pairs.indices.shuffled(using: &rng) { _ = Self.park(epoll, pairs[i].ours) }
            for p in pairs { p.poke() }
            if !Self.ready(epoll).isEmpty { wrong.append("events of parked sockets reached the polling thread") }
            // Half unparked, in another order: their held events are reported again.
            let unparked = Set(pairs.indices.shuffled(using: &rng).prefix(100))
            for i in unparked.shuffled(using: &rng) { _ = Self.add(epoll, pairs[i].ours, data: Self.data(pairs[i].ours)) }
            let seen = Set(Self.ready(epoll))
            if seen != Set(unparked.map { Self.data(pairs[$0].ours) }) { wrong.append("after unparking half: \(seen.count) sockets reported, expected \(unparked.count)") }
            // New events: the parked half still held back, the other half reported.
            for p in pairs { p.drain(); p.poke() }
            let again = Set(Self.ready(epoll))
            if again != Set(unparked.map { Self.data(pairs[$0].ours) }) { wrong.append("new events: \(again.count) sockets reported, expected \(unparked.count)") }
            for i in pairs.indices where !unparked.contains(i) {
                if hearth_socket_parked(pairs[i].ours) != 2 { wrong.append("socket \(i) not parked with its events held"); break }
            }
            return wrong
        }
        #expect(wrong == [])
    }
}

/// A resumption's wake-up of its polling thread skipped while an earlier one is unread
/// (Sources/CEpollBatches/coalesced_wakeups.c). What could go wrong is a resumed connection the
/// polling thread never comes back to: these tests resume many connections at once, round after
/// round, and check every request is answered, and then drive the channel step by step.
@Suite("Resumptions' wake-ups coalesced")
struct CoalescedWakeupTests {
    @Test("160 requests resumed at once, five rounds (full batches of events included): every one answered, and wake-ups skipped")
    func burstsOfResumptions() async throws {
        // Coalescing is on here (libmicrohttpd 0.9.75 with the epoll_wait correction), or this
        // test would prove nothing about it.
        #expect(knownLibmicrohttpd)
        let before = hearth_wakeup_counts()
        // More connections than libmicrohttpd's 128 events per epoll_wait, on one polling thread.
        let rounds = 5, width = 160
        try await withServer({ ParkedSocketTests.patient(&$0, threads: 1) }, handler: { request in
            if request.path == "/held" { await Self.gates.withLock { $0[request.body.first.map(Int.init) ?? 0] }?.pass() }
            return .text("\(request.path) \(request.body.count)")
        }) { server, _ in
            let port = server.port
            let wrong = try await onOwnThread { () -> [String] in
                var wrong: [String] = []
                let connections = try (0..<width).map { _ in try RawConnection(port: port, timeoutSeconds: 30) }
                for round in 0..<rounds {
                    let gate = ParkedSocketTests.Gate()
                    Self.gates.withLock { $0[round] = gate }
                    defer { gate.open() }
                    for c in connections { try c.send(Self.held(round: round)) }
                    guard gate.waitForArrivals(width) else { return ["round \(round): \(gate.arrived) of \(width) requests reached the handler"] }
                    // Every handler answers at once: the connections are resumed in a burst.
                    gate.open()
                    for (i, c) in connections.enumerated() {
                        let r = try c.readResponse()
                        if r.text != "/held 1" { wrong.append("round \(round), connection \(i): \(r.status) \(r.text)") }
                    }
                }
                return wrong
            }
            #expect(wrong == [])
        }
        let after = hearth_wakeup_counts()
        // Every resumption went through the coalescing, and some found a wake-up still unread.
        #expect(after.written + after.skipped - before.written - before.skipped >= UInt(rounds * width))
        #expect(after.skipped > before.skipped)
    }

    static let gates = Mutex<[Int: ParkedSocketTests.Gate]>([:])

    /// A held request whose one-byte body names its round.
    static func held(round: Int) -> String {
        "POST /held HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/octet-stream\r\nContent-Length: 1\r\n\r\n\(String(UnicodeScalar(UInt8(round))))"
    }

    static func wake(_ descriptor: Int32) -> Int {
        var one: UInt64 = 1
        hearth_resuming(1)
        defer { hearth_resuming(0) }
        return write(descriptor, &one, 8)
    }

    /// The eventfd's counter, read (and so cleared) as libmicrohttpd clears its channel.
    static func clear(_ descriptor: Int32) -> UInt64 {
        var value: UInt64 = 0
        return read(descriptor, &value, 8) == 8 ? value : 0
    }

    /// Whether a thread of this process waits in read(2) on `descriptor`: /proc's `syscall` file of
    /// each thread names the call it is blocked in and its arguments.
    static func someThreadWaitsInRead(_ descriptor: Int32) -> Bool {
        #if arch(x86_64)
        let readCall = "0"
        #else
        let readCall = "63"  // arm64's generic numbering
        #endif
        let threads = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        return threads.contains { thread in
            guard let text = try? String(contentsOfFile: "/proc/self/task/\(thread)/syscall", encoding: .utf8) else { return false }
            let fields = text.split(separator: " ")
            return fields.count > 1 && fields[0] == readCall && UInt64(fields[1].dropFirst(2), radix: 16) == UInt64(descriptor)
        }
    }

    // The poller reads its channel when epoll_wait reports it, which may be a wake-up of another
    // kind (a connection added); a channel's first resumption can record it and write while that
    // read is under way. The read must clear what it took: left pending with nothing to read,
    // every later resumption would skip its write and the poller sleep with connections to resume.
    @Test("a channel's first wake-up, written while the poller's read of the channel is already under way, is not left pending")
    func firstWakeupDuringRead() async throws {
        let wrong = try await onOwnThread { () -> [String] in
            // Blocking, so that the read waits inside read(2) until the wake-up's write.
            let channel = eventfd(0, Int32(EFD_CLOEXEC))
            defer { close(channel) }
            guard hearth_wakeup_channel_state(channel) == 0 else { return ["a new descriptor is already recorded"] }
            let taken = Mutex<UInt64?>(nil)
            let done = DispatchSemaphore(value: 0)
            Thread {
                let value = Self.clear(channel)
                taken.withLock { $0 = value }
                done.signal()
            }.start()
            guard holdsSoon({ Self.someThreadWaitsInRead(channel) }) else { return ["the reader never waited in read(2)"] }
            var wrong: [String] = []
            if Self.wake(channel) != 8 { wrong.append("the wake-up's write did not answer 8") }
            guard done.wait(timeout: .now() + 30) == .success else { return wrong + ["the reader's read never returned"] }
            if taken.withLock({ $0 }) != 1 { wrong.append("the read did not take the wake-up") }
            if hearth_wakeup_channel_state(channel) != 1 { wrong.append("the wake-up the read took is still pending (state \(hearth_wakeup_channel_state(channel)))") }
            // So the next resumption writes, and the poller wakes (looked at without blocking: a
            // skipped write would leave the channel empty).
            _ = Self.wake(channel)
            var ready = pollfd(fd: channel, events: Int16(POLLIN), revents: 0)
            if poll(&ready, 1, 0) != 1 {
                wrong.append("the next wake-up was not written")
            } else if Self.clear(channel) != 1 {
                wrong.append("the next wake-up was not read back")
            }
            return wrong
        }
        #expect(wrong == [])
    }

    @Test("a wake-up is skipped only while one is unread; other writes and failed ones are not, and a closed channel is forgotten")
    func stepByStep() async throws {
        let wrong = try await onOwnThread { () -> [String] in
            var wrong: [String] = []
            let channel = eventfd(0, Int32(EFD_NONBLOCK | EFD_CLOEXEC))
            if Self.wake(channel) != 8 || Self.wake(channel) != 8 || Self.wake(channel) != 8 { wrong.append("a wake-up's write did not answer 8") }
            if Self.clear(channel) != 1 { wrong.append("three wake-ups before a clear did not write once") }
            if hearth_wakeup_channel_state(channel) != 1 { wrong.append("a cleared channel is still pending") }
            if Self.wake(channel) != 8 || Self.clear(channel) != 1 { wrong.append("the wake-up after a clear was not written") }
            // Writes outside a resumption, and a second write inside one, always go through.
            var one: UInt64 = 1
            _ = Self.wake(channel)
            _ = write(channel, &one, 8)
            hearth_resuming(1)
            _ = write(channel, &one, 8)
            _ = write(channel, &one, 8)
            hearth_resuming(0)
            if Self.clear(channel) != 3 { wrong.append("writes other than a resumption's first were skipped") }
            // Left pending, then closed: nothing is left recorded for the next descriptor of that number.
            _ = Self.wake(channel)
            if hearth_wakeup_channel_state(channel) != 3 { wrong.append("a wake-up left unread is not recorded as pending") }
            close(channel)
            if hearth_wakeup_channel_state(channel) != 0 { wrong.append("a closed channel is still recorded") }
            // A write that fails leaves nothing pending: the next one is tried again.
            let bad: Int32 = 60_000
            if Self.wake(bad) != -1 || Self.wake(bad) != -1 { wrong.append("a wake-up to a closed descriptor did not fail") }
            if hearth_wakeup_channel_state(bad) != 0 { wrong.append("a descriptor whose wake-up failed is still recorded") }
            return wrong
        }
        #expect(wrong == [])
    }
}
