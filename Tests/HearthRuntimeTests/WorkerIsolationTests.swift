import CEpollBatches
import Foundation
import Glibc
import HearthModel
import HearthTesting
@_spi(Internals) @testable import HearthRuntime
import Synchronization
import Testing

/// Units in worker processes: a handler that traps, exits, spins or eats memory takes down its
/// worker only; the host answers for it, restarts the worker, and keeps serving everything else.
@Suite("Worker isolation", .serialized)
struct WorkerIsolationTests {
    func processRuntime(_ units: [String], clock: any Clock = SystemClock(), log: LogCapture = LogCapture(),
                        configure: (inout RuntimeConfig) -> Void = { _ in }) async throws -> Runtime {
        var config = makeConfig(units: units)
        config.defaultIsolation = .process
        config.workers.restartBackoffMaxSeconds = 0.5
        configure(&config)
        let runtime = try await openRuntime(config: config, clock: clock, log: log.makeLog(clock: clock))
        await runtime.loadUnits()
        #expect(runtime.loadErrors.isEmpty, "\(runtime.loadErrors)")
        return runtime
    }

    func pid(_ runtime: Runtime) async throws -> Int64 {
        let outcome = await runtime.call("crashPid", data: .null)
        return try #require(outcome.value?.intValue, "\(String(describing: outcome.error))")
    }

    @Test("a trapping handler fails its call with INTERNAL; the next call works in a new worker; another unit serves throughout")
    func trapKillsOneWorker() async throws {
        let log = LogCapture()
        let runtime = try await processRuntime(["CrashUnit", "EchoUnit"], log: log)
        defer { runtime.stopUnits() }
        #expect(runtime.table["crashPing"]?.unit.isolation == .process)
        let first = try await pid(runtime)
        #expect(first != Int64(getpid()), "the handler runs in a worker, not in the host")
        let echoBefore = await runtime.call("echo", data: "a")
        #expect(echoBefore.value == "a")

        // Int.max + 1 traps in the handler.
        let trapped = await runtime.call("crashAdd", data: ["a": .int(Int64.max), "b": 1])
        let error = try #require(trapped.error)
        #expect(error.code == .internal)
        #expect(error.message == "INTERNAL", "callers see Firebase's INTERNAL, not the cause")
        #expect(error.debug?.contains("worker died") == true)
        #expect(error.debug?.contains("signal") == true, "\(error.debug ?? "")")
        #expect(error.debug?.contains("(crashAdd)") == true, "the cause names the invocation in flight: \(error.debug ?? "")")

        // The other unit never noticed; this one answers again from a fresh worker.
        let echo = await runtime.call("echo", data: "b")
        #expect(echo.value == "b")
        let ping = await runtime.call("crashPing", data: .null)
        #expect(ping.value == "pong")
        let second = try await pid(runtime)
        #expect(second != first)
        #expect(log.contains("worker died"))
        #expect(log.contains("Fatal error") || log.contains("overflow"), "the worker's stderr reaches the host's log")

        // A force-unwrap and an exit are the same story.
        #expect(await runtime.call("crashUnwrap", data: .null).error?.code == .internal)
        #expect(await runtime.call("crashPing", data: .null).value == "pong")
        let exited = await runtime.call("crashExit", data: 3)
        #expect(exited.error?.debug?.contains("exited with status 3") == true, "\(String(describing: exited.error))")
        #expect(await runtime.call("crashPing", data: .null).value == "pong")
        let health = try #require(runtime.table["crashPing"]?.unit.health)
        #expect(health.restarts >= 3)
        #expect(!health.healthy, "three deaths within a minute: the unit is marked unhealthy")
        #expect(runtime.table["echo"]?.unit.health.healthy == true)
    }

    @Test("a worker killed with SIGKILL mid-invocation fails that call; the next one works")
    func sigkillMidInvocation() async throws {
        let clock = ManualClock()
        let runtime = try await processRuntime(["CrashUnit"], clock: clock)
        defer { runtime.stopUnits() }
        let worker = try await pid(runtime)
        async let napping = runtime.call("crashNap", data: 60)
        // The call's timeout and its nap both wait on the clock: the handler is mid-invocation.
        try await until(clock.changes) { clock.sleeperCount >= 2 }
        #expect(kill(pid_t(worker), SIGKILL) == 0)
        let outcome = await napping
        #expect(outcome.error?.code == .internal)
        #expect(outcome.error?.debug?.contains("SIGKILL") == true, "\(String(describing: outcome.error))")
        #expect(await runtime.call("crashPing", data: .null).value == "pong")
    }

    @Test("a handler in a tight loop is killed at its timeout, not merely cancelled")
    func spinningHandlerKilled() async throws {
        let log = LogCapture()
        let runtime = try await processRuntime(["CrashUnit"], log: log) { $0.workers.killGraceSeconds = 0.2 }
        defer { runtime.stopUnits() }
        let before = try await pid(runtime)
        // A call waiting in the same worker goes down with it (what `workers = N` is for).
        async let napping = runtime.call("crashNap", data: 30)
        for _ in 0..<1000 where runtime.invoker.inFlightCount == 0 { try await Task.sleep(for: .milliseconds(5)) }
        #expect(runtime.invoker.inFlightCount == 1)
        let spun = await runtime.call("crashSpin", data: .null)
        #expect(spun.error?.code == .deadlineExceeded)
        let nap = await napping
        #expect(nap.error?.code == .internal)
        #expect(nap.error?.debug?.contains("ran past its timeout") == true, "\(String(describing: nap.error))")
        try await until(log.changes) { log.contains("did not stop within") }
        #expect(await runtime.call("crashPing", data: .null).value == "pong")
        let after = try await pid(runtime)
        #expect(after != before)
        #expect(kill(pid_t(before), 0) != 0, "the spinning worker is gone")
    }

    @Test("a handler past the worker's memory limit kills its worker only")
    func memoryLimit() async throws {
        let runtime = try await processRuntime(["CrashUnit"]) { $0.workers.memoryLimitMB = 768 }
        defer { runtime.stopUnits() }
        let hog = await runtime.call("crashHog", data: .null)
        #expect(hog.error?.code == .internal)
        #expect(hog.error?.debug?.contains("worker died") == true, "\(String(describing: hog.error))")
        #expect(await runtime.call("crashPing", data: .null).value == "pong")
    }

    @Test("a worker's stdout and stderr reach the host's log with the unit's name; handler logs keep their invocation id")
    func workerOutputLogged() async throws {
        let log = LogCapture()
        let runtime = try await processRuntime(["CrashUnit"], log: log)
        defer { runtime.stopUnits() }
        let outcome = await runtime.call("crashPrint", data: "hello-worker")
        #expect(outcome.value == "hello-worker")
        try await until(log.changes) { log.contains("stdout: hello-worker") && log.contains("stderr: hello-worker") }
        let lines = log.all
        let out = try #require(lines.first { $0.contains("stdout: hello-worker") })
        #expect(out.contains("\"unit\":\"CrashUnit\"") && out.contains("worker output"))
        let logged = try #require(lines.first { $0.contains("logged: hello-worker") })
        #expect(logged.contains("\"invocation\":\"\(Invoker.format(outcome.id))\""))
    }

    /// EchoUnit in a worker, on a ManualClock moved `by` from its start (the `now` the calls read).
    func echoWorker(clockAdvancedBy by: Duration) async throws -> (Runtime, ManualClock) {
        let clock = ManualClock()
        let runtime = try await processRuntime(["EchoUnit"], clock: clock)
        clock.advance(by: by)
        return (runtime, clock)
    }

    /// Calls each of `functions` (with null data) at once; their outcomes in the order they end.
    /// Bounded in wall time: these runtimes run on a ManualClock, so the calls' own timeouts never
    /// come, and a worker that stopped answering would otherwise hang the test. A synchronous
    /// service the host left unanswered hangs its call (read on the reader thread) or fails it
    /// (`unavailable` after 60 s, elsewhere): either fails the test, through this bound or the
    /// tests' checks of every answer. They assert no shorter wall-clock duration, which the whole
    /// suite's load stretches.
    static func callAtOnce(_ runtime: Runtime, _ functions: [String]) async throws -> [InvocationOutcome] {
        try await withTimeout(seconds: 60) {
            await withTaskGroup(of: InvocationOutcome.self) { group in
                for function in functions { group.addTask { await runtime.call(function, data: .null) } }
                return await group.reduce(into: [InvocationOutcome]()) { $0.append($1) }
            }
        }
    }

    @Test("synchronous services (the host's clock, logs) answer a handler in a worker before its first suspension, many at once")
    func synchronousServicesFromWorker() async throws {
        let (runtime, clock) = try await echoWorker(clockAdvancedBy: .seconds(1234))
        defer { runtime.stopUnits() }
        // `now` reads the host clock synchronously at once: the worker's reader thread runs the
        // handler and must read the clock's reply itself.
        let answers = try await Self.callAtOnce(runtime, Array(repeating: "now", count: 50)).map(\.value)
        #expect(answers.count == 50)
        #expect(answers.allSatisfy { $0 == .timestamp(clock.now()) }, "\(answers.prefix(3))")
    }

    @Test("a handler in a worker goes on where its service reply arrives, on the reader thread; a synchronous call from there is answered, many at once")
    func handlerGoesOnOnReaderThread() async throws {
        let (runtime, clock) = try await echoWorker(clockAdvancedBy: .seconds(99))
        defer { runtime.stopUnits() }
        // One at a time: each handler starts on the reader thread (where its invocation arrives)
        // and goes on there once its read is answered.
        for _ in 0..<5 {
            let outcome = try #require(try await Self.callAtOnce(runtime, ["threads"]).first)
            let value = try #require(outcome.value, "\(String(describing: outcome.error))")
            #expect(value["before"] == value["after"], "\(value)")
            #expect(value["now"] == .timestamp(clock.now()))
        }
        // Many at once: a handler that reads the clock on the reader thread reads the other replies
        // that arrive meanwhile itself; theirs go on on Swift's pool. Every call is answered.
        let answers = try await Self.callAtOnce(runtime, Array(repeating: "threads", count: 40))
        #expect(answers.count == 40)
        #expect(answers.allSatisfy { $0.value?["now"] == .timestamp(clock.now()) }, "\(answers.prefix(2).map { String(describing: $0.result) })")
        // Handlers that read the clock before their first suspension (`now`) beside ones that read
        // it after a reply (`threads`): a reply read while a handler waits for its clock on the
        // reader thread never runs another handler nested there, whose own wait would read the
        // first one's answer and leave it waiting forever.
        let mixed = try await Self.callAtOnce(runtime, (0..<80).map { $0 % 2 == 0 ? "now" : "threads" }).map(\.value)
        #expect(mixed.count == 80)
        #expect(mixed.allSatisfy { $0 == .timestamp(clock.now()) || $0?["now"] == .timestamp(clock.now()) }, "\(mixed.prefix(4))")

        // In the host's own process a reply can arrive on the store's writer thread: there the
        // handler is queued for Swift's pool instead, and answers all the same.
        let local = try await startRuntime(units: ["EchoUnit"], clock: clock)
        let outcome = try #require(try await Self.callAtOnce(local, ["threads"]).first)
        #expect(outcome.value?["now"] == .timestamp(clock.now()), "\(String(describing: outcome.error))")
    }

    @Test("frames a worker could send its host that are out of range end the connection, never the host", arguments: [
        [0xff, 0xff, 0xff, 0x7f] as [UInt8],  // 2 GiB announced
        [0x05, 0x00, 0x00, 0x00, 1, 2, 3, 4, 5],  // shorter than a header
        [0x00, 0x00, 0x00, 0x05] + [UInt8](repeating: 0, count: 64),  // 80 MiB: over the worker cap
    ])
    func malformedFramesEndTheConnection(bytes: [UInt8]) async throws {
        let (a, b) = try FrameSocket.pair()
        let closed = Changes()
        let reason = Mutex<String??>(nil)
        let frames = Mutex(0)
        let socket = FrameSocket(fd: a)
        socket.startReading(name: "test-reader", maxFrame: WorkerProcess.maxWorkerFrame, onFrame: { _ in frames.withLock { $0 += 1 } },
                            onClose: { problem in
                                reason.withLock { $0 = .some(problem) }
                                closed.changed()
                            })
        // A good frame first, then the bad bytes.
        var good = Boundary.frame(Boundary.Header(kind: .request, operation: .log, invocation: 1), Boundary.Empty())
        good += bytes
        #expect(good.withUnsafeBytes { Glibc.write(b, $0.baseAddress!, $0.count) } == good.count)
        try await until(closed) { reason.withLock { $0 != nil } }
        #expect(frames.withLock { $0 } == 1)
        #expect(reason.withLock { $0 ?? nil }?.contains("out of range") == true)
        Glibc.close(b)
    }

    /// Reads from `fd` until `count` bytes came or the stream ended.
    func readBytes(_ fd: Int32, count: Int) -> [UInt8] {
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        while received.count < count {
            let n = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress!, $0.count) }
            if n <= 0 { break }
            received += buffer[0..<n]
        }
        return received
    }

    /// A frame socket on one end of a socket pair, and the raw descriptors of both ends (`a` its
    /// own, `b` the peer's), closed once `body` returns or throws.
    func withFrameSocketPair(sendTimeout: Double, _ body: (_ socket: FrameSocket, _ a: Int32, _ b: Int32) async throws -> Void) async throws {
        let (a, b) = try FrameSocket.pair()
        defer {
            Glibc.close(a)
            Glibc.close(b)
        }
        try await body(FrameSocket(fd: a, sendTimeout: sendTimeout), a, b)
    }

    @Test("a send marked sendsWithoutBlocking (the store's writer answering a unit's commit) never waits for a peer that is not reading: the rest goes out in the background, every byte in order",
          .timeLimit(.minutes(1)))
    func sendWithoutBlocking() async throws {
        // A blocking send would wait the whole timeout for a peer that reads nothing (the test's limit).
        try await withFrameSocketPair(sendTimeout: 120) { socket, _, b in
            let chunks = (0..<64).map { i in [UInt8](repeating: UInt8(i), count: 64 << 10) }  // 4 MiB, far past the socket's buffer
            for chunk in chunks {
                #expect(FrameSocket.$sendsWithoutBlocking.withValue(true) { socket.send(chunk) })
            }
            // Only now does the peer read: everything arrives, in order.
            let expected = chunks.flatMap { $0 }
            let received = readBytes(b, count: expected.count)
            #expect(received.count == expected.count)
            #expect(received == expected)
        }
    }

    @Test("frames an HTTP polling thread sends wait for its next poll, then go out together in one write; other threads' sends are not held",
          .timeLimit(.minutes(1)))
    func pollingThreadCorksUntilItPolls() async throws {
        try await withFrameSocketPair(sendTimeout: 10) { socket, _, b in
            let one = Boundary.frame(Boundary.Header(kind: .request, operation: .log, invocation: 1), Boundary.Empty())
            let two = Boundary.frame(Boundary.Header(kind: .request, operation: .log, invocation: 2), Boundary.Empty())
            @Sendable func readable(within milliseconds: Int32) -> Bool {
                var p = pollfd(fd: b, events: Int16(POLLIN), revents: 0)
                return poll(&p, 1, milliseconds) == 1
            }
            @Sendable func readOnce() -> [UInt8] {
                var buffer = [UInt8](repeating: 0, count: 1 << 16)
                let n = buffer.withUnsafeMutableBytes { Glibc.read(b, $0.baseAddress!, $0.count) }
                return n > 0 ? Array(buffer[0..<n]) : []
            }
            struct Seen: Sendable { var beforePoll = true, afterPoll = false, bytes: [UInt8] = [] }
            let seen: Seen = await withCheckedContinuation { done in
                let thread = Thread {
                    hearth_mark_polling_thread()
                    socket.send(one)
                    socket.send(two)
                    var s = Seen()
                    s.beforePoll = readable(within: 50)
                    // The thread's next poll (libmicrohttpd's loop calls epoll_wait once per pass).
                    let ep = epoll_create1(0)
                    var event = epoll_event()
                    _ = epoll_wait(ep, &event, 1, 0)
                    Glibc.close(ep)
                    s.afterPoll = readable(within: 5_000)
                    s.bytes = readOnce()
                    done.resume(returning: s)
                }
                thread.start()
            }
            #expect(!seen.beforePoll, "nothing is written before the polling thread polls")
            #expect(seen.afterPoll)
            #expect(seen.bytes == one + two, "both frames in one read: one write")
            // Any other thread's send goes out at once.
            #expect(socket.send(one))
            #expect(readable(within: 5_000))
            #expect(readOnce() == one)
        }
    }

    /// Lets a test see when the last reference to it goes.
    final class ReleaseProbe: Sendable {
        let released = Atomic<Bool>(false)
        let changes = Changes()
        final class Token: Sendable {
            let probe: ReleaseProbe
            init(_ probe: ReleaseProbe) { self.probe = probe }
            deinit {
                probe.released.store(true, ordering: .releasing)
                probe.changes.changed()
            }
        }
    }

    @Test("a call ended by its deadline lets go of its completion (and what it holds, an HTTP response say) while its worker never answers",
          .timeLimit(.minutes(1)))
    func deadlineReleasesCompletion() async throws {
        let clock = ManualClock()
        // A grace far past the test: the stopped worker is never killed, so its reply never comes.
        let runtime = try await processRuntime(["EchoUnit"], clock: clock) { $0.workers.killGraceSeconds = 600 }
        defer { runtime.stopUnits() }
        let entry = try #require(runtime.table["echo"])
        #expect(await runtime.call("echo", data: 1).value == 1)
        let pids = try #require(entry.unit.transport as? WorkerPool).pids
        #expect(!pids.isEmpty)
        for pid in pids { Glibc.kill(pid, SIGSTOP) }
        defer { for pid in pids { Glibc.kill(pid, SIGCONT) } }
        // A signal is delivered in its own time: stopped means the kernel says so ("T" in /proc).
        func stopped(_ pid: Int32) -> Bool {
            guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8), let end = stat.lastIndex(of: ")") else { return false }
            return stat[stat.index(after: end)...].trimmingCharacters(in: .whitespaces).hasPrefix("T")
        }
        #expect(await eventually { pids.allSatisfy(stopped) }, "the worker stops")

        let probe = ReleaseProbe()
        let ended = Changes()
        let outcome = Mutex<InvocationOutcome?>(nil)
        do {
            let token = ReleaseProbe.Token(probe)
            runtime.invoker.invoke(entry, event: .callable(Boundary.CallableEvent(data: 2)), timeout: .seconds(1)) { result in
                withExtendedLifetime(token) { outcome.withLock { $0 = result } }
                ended.changed()
            }
        }
        // The deadline (the clock's now + 1 s, fixed at the call) is past, whenever the shared
        // deadline timer gets to look at it.
        clock.advance(by: .seconds(2))
        try await until(ended) { outcome.withLock { $0 != nil } }
        #expect(outcome.withLock { $0 }?.error?.code == .deadlineExceeded)
        // The unit's pending reply still waits in the host (the worker is stopped), and holds none of it.
        try await until(probe.changes, seconds: 10) { probe.released.load(ordering: .acquiring) }
    }

    @Test("frames a thread sends inside a SendBatch wait for the outermost batch's end, thrown out of or not, then go out together; outside a batch they go at once",
          .timeLimit(.minutes(1)))
    func sendBatchHoldsFramesUntilItEnds() async throws {
        try await withFrameSocketPair(sendTimeout: 10) { socket, _, b in
            let frames = (1...3).map { Boundary.frame(Boundary.Header(kind: .request, operation: .log, invocation: UInt64($0)), Boundary.Empty()) }
            func readable(within milliseconds: Int32) -> Bool {
                var p = pollfd(fd: b, events: Int16(POLLIN), revents: 0)
                return poll(&p, 1, milliseconds) == 1
            }
            var heldInOuter = true, heldAfterInner = true
            SendBatch.run {
                socket.send(frames[0])
                heldInOuter = readable(within: 50)
                SendBatch.run { socket.send(frames[1]) }
                heldAfterInner = readable(within: 50)
            }
            #expect(!heldInOuter, "nothing is written inside the batch")
            #expect(!heldAfterInner, "an inner batch's end sends nothing while the outer one runs")
            #expect(readBytes(b, count: frames[0].count + frames[1].count) == frames[0] + frames[1])
            struct Stop: Error {}
            #expect(throws: Stop.self) {
                try SendBatch.run {
                    socket.send(frames[2])
                    throw Stop()
                }
            }
            #expect(readable(within: 5_000), "a batch that throws still sends")
            #expect(readBytes(b, count: frames[2].count) == frames[2])
            #expect(socket.send(frames[0]))
            #expect(readable(within: 5_000), "outside a batch a send goes at once")
            #expect(readBytes(b, count: frames[0].count) == frames[0])
        }
    }

    @Test("a batch never waits for a peer that is not reading: past the cork's limit and at its end, what cannot be written goes out in the background, every byte in order",
          .timeLimit(.minutes(1)))
    func sendBatchNeverBlocks() async throws {
        // A blocking send would wait the whole timeout for a peer that reads nothing (the test's limit).
        try await withFrameSocketPair(sendTimeout: 120) { socket, _, b in
            let chunks = (0..<64).map { i in [UInt8](repeating: UInt8(i), count: 64 << 10) }  // 4 MiB, far past the socket's buffer
            let sent = SendBatch.run { chunks.allSatisfy { socket.send($0) } }
            #expect(sent)
            let expected = chunks.flatMap { $0 }
            #expect(readBytes(b, count: expected.count) == expected)
        }
    }

    @Test("a polling thread never waits for a peer that is not reading: what its poll cannot write goes out in the background, every byte in order",
          .timeLimit(.minutes(1)))
    func pollingThreadNeverBlocks() async throws {
        // A blocking send would wait the whole timeout for a peer that reads nothing (the test's limit).
        try await withFrameSocketPair(sendTimeout: 120) { socket, _, b in
            let chunks = (0..<64).map { i in [UInt8](repeating: UInt8(i), count: 64 << 10) }  // 4 MiB, far past the socket's buffer
            let sent: Bool = await withCheckedContinuation { done in
                let thread = Thread {
                    hearth_mark_polling_thread()
                    var ok = true
                    for chunk in chunks { ok = socket.send(chunk) && ok }
                    let ep = epoll_create1(0)
                    var event = epoll_event()
                    _ = epoll_wait(ep, &event, 1, 0)
                    Glibc.close(ep)
                    done.resume(returning: ok)
                }
                thread.start()
            }
            #expect(sent)
            // Only now does the peer read: everything arrives, in order.
            let expected = chunks.flatMap { $0 }
            let received = readBytes(b, count: expected.count)
            #expect(received == expected)
        }
    }

    @Test("frames sent from several threads at once arrive whole, once and in each sender's order, while the socket reuses its written buffers (large ones let go)",
          .timeLimit(.minutes(2)))
    func concurrentSendersKeepFramesWhole() async throws {
        try await withFrameSocketPair(sendTimeout: 60) { socket, a, b in
            // Record: sender (1 byte), sequence (4), length (4), then `length` bytes of (sender + sequence).
            // Every 50th record is 100 KiB, past the size whose buffer is kept for reuse.
            let senders = 4, perSender = 400
            @Sendable func record(_ sender: Int, _ seq: Int) -> [UInt8] {
                let length = seq % 50 == 49 ? 100 << 10 : 1 + (seq * 37) % 700
                var r = [UInt8(sender)]
                for k in 0..<4 { r.append(UInt8(truncatingIfNeeded: seq >> (8 * k))) }
                for k in 0..<4 { r.append(UInt8(truncatingIfNeeded: length >> (8 * k))) }
                r += [UInt8](repeating: UInt8(truncatingIfNeeded: sender + seq), count: length)
                return r
            }
            // The peer reads on a thread of its own, to the end of the stream, while the senders write.
            let received = Mutex<[UInt8]>([])
            let readerDone = Atomic<Bool>(false)
            let reader = Thread {
                var buffer = [UInt8](repeating: 0, count: 1 << 16)
                while true {
                    let n = buffer.withUnsafeMutableBytes { Glibc.read(b, $0.baseAddress!, $0.count) }
                    if n <= 0 { break }
                    received.withLock { $0 += buffer[0..<n] }
                }
                readerDone.store(true, ordering: .releasing)
            }
            reader.start()
            let sent = Atomic<Int>(0)
            await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
                DispatchQueue.global().async {
                    DispatchQueue.concurrentPerform(iterations: senders) { sender in
                        // Sender 0 sends as the store's writer does: what does not fit goes out in the
                        // background, still in order.
                        FrameSocket.$sendsWithoutBlocking.withValue(sender == 0) {
                            for seq in 0..<perSender where socket.send(record(sender, seq)) { sent.wrappingAdd(1, ordering: .relaxed) }
                        }
                    }
                    done.resume()
                }
            }
            #expect(sent.load(ordering: .relaxed) == senders * perSender)
            // The write side shuts once everything queued is written: the reader then reads the end.
            socket.shutdownWriting()
            for _ in 0..<3000 where !readerDone.load(ordering: .acquiring) { try await Task.sleep(for: .milliseconds(10)) }
            let ended = readerDone.load(ordering: .acquiring)
            if !ended {
                // Ends the reader's read, and waits for it before the descriptors are closed (another
                // test could be given the same numbers).
                _ = Glibc.shutdown(b, Int32(SHUT_RDWR))
                _ = Glibc.shutdown(a, Int32(SHUT_RDWR))
                for _ in 0..<1000 where !readerDone.load(ordering: .acquiring) { try await Task.sleep(for: .milliseconds(10)) }
            }
            try #require(ended, "the stream did not end within 30 s")
            let bytes = received.withLock { $0 }
            // Parse the stream: each sender's records in order, each one intact, nothing after the last.
            var next = [Int](repeating: 0, count: senders)
            var offset = 0
            while offset + 9 <= bytes.count {
                let sender = Int(bytes[offset])
                let seq = (0..<4).reduce(0) { $0 | Int(bytes[offset + 1 + $1]) << (8 * $1) }
                let length = (0..<4).reduce(0) { $0 | Int(bytes[offset + 5 + $1]) << (8 * $1) }
                try #require(sender < senders && offset + 9 + length <= bytes.count, "a record's head is damaged at byte \(offset)")
                #expect(seq == next[sender], "sender \(sender): record \(seq) where \(next[sender]) was due")
                #expect(Array(bytes[offset..<(offset + 9 + length)]) == record(sender, seq))
                next[sender] = seq + 1
                offset += 9 + length
            }
            #expect(offset == bytes.count)
            #expect(next == [Int](repeating: perSender, count: senders))
        }
    }

    @Test("several workers for one unit share its calls")
    func severalWorkers() async throws {
        let runtime = try await processRuntime(["CrashUnit"]) { $0.units[0].workers = 2 }
        defer { runtime.stopUnits() }
        #expect(runtime.table["crashPing"]?.unit.health.workers == 2)
        // Two naps at once land on different workers (the one with fewer calls outstanding).
        async let a = runtime.call("crashNap", data: 0.3)
        async let b = runtime.call("crashNap", data: 0.3)
        let pids = Set([await a.value?.intValue, await b.value?.intValue].compactMap { $0 })
        #expect(pids.count == 2)
    }

    @Test("a result past what a worker may send fails that invocation alone; the worker keeps serving")
    func oversizedResult() async throws {
        let runtime = try await processRuntime(["EchoUnit"])
        defer { runtime.stopUnits() }
        let pid = await runtime.call("echo", data: "small").value
        #expect(pid == "small")
        // The request reaches the worker (it reads far larger frames); its echo cannot come back.
        let big = await runtime.call("echo", data: .string(String(repeating: "z", count: WorkerProcess.maxWorkerFrame + 1000)))
        #expect(big.error?.code == .resourceExhausted, "\(String(describing: big.error))")
        #expect(big.error?.message.contains("a worker may send to its host") == true, "\(String(describing: big.error))")
        #expect(await runtime.call("echo", data: "after").value == "after")
        // In-process the same result fails the same way.
        let local = try await startRuntime(units: ["EchoUnit"])
        let same = await local.call("echo", data: .string(String(repeating: "z", count: WorkerProcess.maxWorkerFrame + 1000)))
        #expect(same.error?.code == .resourceExhausted && same.error?.message == big.error?.message, "\(String(describing: same.error))")
    }

    @Test("every Documents client case answers the same from a worker as in-process (documents, queries, batches, transactions)")
    func servicesFromWorker() async throws {
        let isolated = try await processRuntime(["DocsUnit"])
        defer { isolated.stopUnits() }
        let local = try await startRuntime(units: ["DocsUnit"])
        #expect(isolated.table["docs"]?.unit.isolation == .process)
        #expect(local.table["docs"]?.unit.isolation == .inProcess)
        let cases = ["codable", "create-twice", "merge-and-update", "update-missing", "batch", "batch-atomic", "queries", "group",
                     "recursive", "transaction", "read-after-write", "transaction-error", "undecodable", "undecodable-caught",
                     "bad-path", "bad-id", "non-map", "batch-sizes"]
        for name in cases {
            let a = await isolated.call("docs", data: .string(name))
            let b = await local.call("docs", data: .string(name))
            #expect(a.value.map(Self.withoutTimes) == b.value.map(Self.withoutTimes), "case \(name)")
            #expect(a.error?.code == b.error?.code && a.error?.message == b.error?.message, "case \(name): \(String(describing: a.error)) vs \(String(describing: b.error))")
        }
    }

    /// A value with every timestamp replaced (two runs commit at different times).
    static func withoutTimes(_ v: Value) -> Value {
        switch v {
        case .timestamp: return "<time>"
        case .map(let m): return .map(m.mapValues(withoutTimes))
        case .array(let a): return .array(a.map(withoutTimes))
        default: return v
        }
    }
}
