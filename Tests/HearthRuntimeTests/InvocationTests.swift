import Foundation
import Synchronization
import HearthModel
@_spi(Internals) @testable import HearthRuntime
import Testing

@Suite("Invoking callables through the unit boundary")
struct InvocationTests {
    @Test("echo returns every kind of value unchanged across the boundary")
    func echoRoundTrip() async throws {
        let runtime = try await startRuntime(units: ["EchoUnit"])
        let values: [Value] = [
            .null, true, 0, .int(Int64.max), .int(Int64.min), 1.5, .double(-0.0), "héllo ✓", .bytes([0, 255, 7]),
            .timestamp(Timestamp(seconds: 1_700_000_000, nanos: 123_456_789)), .reference("members/a"),
            .geoPoint(GeoPoint(latitude: 37.5, longitude: 127)), [1, "two", [3]], ["a": ["b": [nil, 1]]],
        ]
        for value in values {
            let outcome = await runtime.call("echo", data: value)
            #expect(outcome.value == value)
        }
    }

    @Test("typed Codable handlers decode input and encode output")
    func typedHandler() async throws {
        let runtime = try await startRuntime(units: ["EchoUnit"])
        #expect(await runtime.call("add", data: ["a": 2, "b": 40]).value == ["sum": 42])
    }

    @Test("headers given to a call in-process reach the handler as the front door gives them: names lower-cased, in order, repeats kept")
    func callHeaders() async throws {
        let runtime = try await startRuntime(units: ["EchoUnit"])
        let outcome = await runtime.call("headers", data: .null, headers: HTTPHeaders([("User-Agent", "cli/2"), ("X-Trace", "1"), ("x-TRACE", "2")]))
        #expect(outcome.value == ["instanceIdToken": .null, "appId": .null, "userAgent": "cli/2", "traces": ["1", "2"], "namesLowerCased": true])
    }

    @Test("input that does not fit the handler's type is invalid-argument naming the field")
    func badInput() async throws {
        let runtime = try await startRuntime(units: ["EchoUnit"])
        let error = try #require(await runtime.call("add", data: ["a": "two", "b": 1]).error)
        #expect(error.code == .invalidArgument)
        #expect(error.message.contains("a: expected integer, found string"))
        let missing = try #require(await runtime.call("add", data: ["a": 1]).error)
        #expect(missing.message.contains("b: missing required field"))
    }

    @Test("an HTTPSError keeps its code, message and details")
    func httpsError() async throws {
        let runtime = try await startRuntime(units: ["EchoUnit"])
        let error = try #require(await runtime.call("fail", data: ["code": "not-found", "message": "no item", "details": ["id": 7]]).error)
        #expect(error.code == .notFound)
        #expect(error.message == "no item")
        #expect(error.details == ["id": 7])
    }

    @Test("any other error is internal with the message hidden, and the real error only in the log")
    func opaqueError() async throws {
        let log = LogCapture()
        let runtime = try await startRuntime(units: ["EchoUnit"], log: log)
        let outcome = await runtime.call("opaque", data: nil)
        let error = try #require(outcome.error)
        #expect(error.code == .internal)
        #expect(error.message == "INTERNAL")
        #expect(!error.httpsError.description.contains("hunter2"))
        #expect(log.contains("hunter2"), "the real error is logged")
        #expect(log.contains(Invoker.format(outcome.id)), "with the invocation id")
    }

    @Test("the caller's uid and claims reach the handler; no auth means nil")
    func authReachesHandler() async throws {
        let runtime = try await startRuntime(units: ["EchoUnit"])
        #expect(await runtime.call("whoami", data: nil).value == .null)
        let auth = CallerAuth(uid: "alice", claims: ["sub": "alice", "admin": true])
        let result = await runtime.call("whoami", data: nil, auth: auth).value
        #expect(result?["uid"] == "alice")
        #expect(result?["claims"]?["admin"] == true)
    }

    @Test("handler logs carry the invocation id and function")
    func handlerLogs() async throws {
        let log = LogCapture()
        let runtime = try await startRuntime(units: ["EchoUnit"], log: log)
        let outcome = await runtime.call("log", data: "hello from the unit")
        #expect(outcome.value == .null)
        let line = try #require(log.all.first { $0.contains("hello from the unit") })
        let parsed = try JSONParser.parse(line)
        #expect(parsed["invocation"] == .string(Invoker.format(outcome.id)))
        #expect(parsed["function"] == "log")
        #expect(parsed["unit"] == "EchoUnit")
        #expect(parsed["source"] == "EchoUnit")
    }

    @Test("one structured log line per invocation: function, unit, trigger, id, duration, outcome, code")
    func invocationLogLine() async throws {
        let log = LogCapture()
        let runtime = try await startRuntime(units: ["EchoUnit"], log: log)
        let outcome = await runtime.call("fail", data: ["code": "permission-denied", "message": "no"])
        let line = try #require(log.all.first { $0.contains("\"invocation\"") && $0.contains(Invoker.format(outcome.id)) && $0.contains("outcome") })
        let parsed = try JSONParser.parse(line)
        #expect(parsed["function"] == "fail")
        #expect(parsed["unit"] == "EchoUnit")
        #expect(parsed["trigger"] == "callable")
        #expect(parsed["outcome"] == "error")
        #expect(parsed["code"] == "permission-denied")
        #expect(parsed["durationMs"]?.doubleValue != nil)
    }

    @Test("the unit reads the host's clock, so a ManualClock controls handler time")
    func hostClock() async throws {
        let clock = ManualClock(Timestamp(seconds: 1_000))
        let runtime = try await startRuntime(units: ["EchoUnit"], clock: clock)
        #expect(await runtime.call("now", data: nil).value == .timestamp(Timestamp(seconds: 1_000)))
        clock.advance(by: .seconds(90))
        #expect(await runtime.call("now", data: nil).value == .timestamp(Timestamp(seconds: 1_090)))
    }

    @Test("a handler past its timeout gets deadline-exceeded and its task is cancelled")
    func timeout() async throws {
        let clock = ManualClock()
        let runtime = try await startRuntime(units: ["EchoUnit"], clock: clock)
        // `sleep` has timeoutSeconds 5 and sleeps on the host clock for the requested seconds.
        let call = Task { await runtime.call("sleep", data: 60) }
        // Wait until both the handler's sleep and the invocation's timer are registered on the clock.
        try await until(clock.changes, seconds: 120) { clock.sleeperCount >= 2 }
        clock.advance(by: .seconds(5))
        let outcome = try await withTimeout { await call.value }
        #expect(outcome.error?.code == .deadlineExceeded)
        // The handler's host-side sleep is cancelled with the invocation.
        try await until(clock.changes) { clock.sleeperCount == 0 }
        try await until(runtime.invoker.serviceTasks.changes) { runtime.invoker.serviceTasks.runningCount == 0 }
        #expect(runtime.invoker.inFlightCount == 0)
    }

    @Test("a handler that outlives its timeout can no longer reach the store: its writes are refused, not committed")
    func lateWriteRefused() async throws {
        let clock = ManualClock()
        let log = LogCapture()
        let runtime = try await startRuntime(units: ["EchoUnit"], clock: clock, log: log)
        let call = Task { await runtime.call("lateWrite", data: nil) }
        try await until(clock.changes, seconds: 120) { clock.sleeperCount >= 2 }
        clock.advance(by: .seconds(5))
        #expect(try await withTimeout { await call.value }.error?.code == .deadlineExceeded)
        try await until(log.changes) { log.contains("late write:") }
        #expect(log.contains("late write: cancelled"), "\(log.all.filter { $0.contains("late write") })")
        #expect(try await runtime.store.get(try DocumentPath("late/a")) == nil)
    }

    /// Calls `entry` with `data` through the invoker's completion, which captures a `Tracked`: its
    /// release, counted by `released`, shows when nothing holds the completion any more.
    fileprivate static func invokeTracked(_ runtime: Runtime, _ entry: FunctionEntry, _ data: Value, _ released: ReleaseCount) -> Task<InvocationOutcome, Never> {
        Task {
            let tracked = Tracked(released)
            return await withCheckedContinuation { continuation in
                runtime.invokeCallable(entry, Boundary.CallableEvent(data: data)) { outcome in
                    _ = tracked
                    continuation.resume(returning: outcome)
                }
            }
        }
    }

    @Test("whether the reply or the deadline ends an invocation, its timer is cancelled or spent and its completion released once it has run")
    func endingReleases() async throws {
        let clock = ManualClock()
        let runtime = try await startRuntime(units: ["EchoUnit"], clock: clock)
        let entry = try #require(runtime.table["sleep"])
        let released = ReleaseCount()
        // `sleep` has timeoutSeconds 5: 0 s answers at once, 60 s only past the deadline.
        for (seconds, answersInTime) in [(0.0, true), (60, false)] {
            let before = released.count
            let call = Self.invokeTracked(runtime, entry, .double(seconds), released)
            if !answersInTime {
                try await until(clock.changes, seconds: 120) { clock.sleeperCount >= 2 }
                clock.advance(by: .seconds(5))
            }
            let outcome = try await withTimeout { await call.value }
            if answersInTime {
                #expect(outcome.value == "woke")
            } else {
                #expect(outcome.error?.code == .deadlineExceeded)
            }
            // Nothing but the in-flight entry held the completion: gone with it, whichever came first.
            try await until(released.changes) { released.count == before + 1 }
            #expect(runtime.invoker.inFlightCount == 0)
            // The reply cancelled the timer; the deadline spent it.
            #expect(runtime.invoker.deadlines.pendingCount == 0)
        }
    }

    @Test("past its deadline, an invocation whose unit has not replied keeps nothing alive: its completion is released before the reply comes")
    func deadlineWithoutReply() async throws {
        let clock = ManualClock()
        let runtime = try await startRuntime(units: ["EchoUnit"], clock: clock)
        let entry = try #require(runtime.table["stubborn"])
        let gate = NSTemporaryDirectory() + "hearth-gate-" + UUID().uuidString
        // Whatever happens, the handler is let go at the end (it polls for the file).
        defer {
            _ = FileManager.default.createFile(atPath: gate, contents: nil)
        }
        let released = ReleaseCount()
        let call = Self.invokeTracked(runtime, entry, .string(gate), released)
        // The invocation's timer, on the clock (the handler waits on the real one).
        try await until(clock.changes, seconds: 120) { runtime.invoker.deadlines.pendingCount == 1 && clock.sleeperCount >= 1 }
        clock.advance(by: .seconds(5))
        #expect(try await withTimeout { await call.value }.error?.code == .deadlineExceeded)
        // Released while the unit still holds its reply closure: the handler has not finished.
        try await until(released.changes) { released.count == 1 }
        #expect(!FileManager.default.fileExists(atPath: gate))
        #expect(runtime.invoker.inFlightCount == 0)
    }

    @Test("a handler that finishes before its timeout answers normally")
    func withinTimeout() async throws {
        let clock = ManualClock()
        let runtime = try await startRuntime(units: ["EchoUnit"], clock: clock)
        let call = Task { await runtime.call("sleep", data: 2) }
        try await until(clock.changes, seconds: 120) { clock.sleeperCount >= 2 }
        clock.advance(by: .seconds(2))
        #expect(try await withTimeout { await call.value }.value == "woke")
    }

    @Test("calling an unknown function or a non-callable is an error, not a crash")
    func wrongFunction() async throws {
        let runtime = try await startRuntime(units: ["EchoUnit"])
        #expect(await runtime.call("nope", data: nil).error?.code == .notFound)
        #expect(await runtime.call("tick", data: nil).error?.code == .failedPrecondition)
    }

    @Test("many concurrent invocations all complete with their own results")
    func concurrent() async throws {
        let runtime = try await startRuntime(units: ["EchoUnit"])
        let results = try await withTimeout {
            await withTaskGroup(of: (Int, Value?).self) { group in
                for i in 0..<500 { group.addTask { (i, await runtime.call("add", data: ["a": .int(Int64(i)), "b": 1]).value) } }
                var out: [Int: Value?] = [:]
                for await (i, v) in group { out[i] = v }
                return out
            }
        }
        #expect(results.count == 500)
        for (i, v) in results { #expect(v == ["sum": .int(Int64(i + 1))]) }
    }

    @Test("a system replay's seed planner is consulted by every invocation and stays the closure it was set to (a closure kept bare in a Mutex gained a thunk per read, and a replay of 40,000 invocations overflowed the stack)")
    func plannerStaysOneClosure() async throws {
        let runtime = try await startRuntime(units: ["EchoUnit"])
        // Each call notes how deep the stack is where the planner runs: one thunk more per read
        // would put every invocation one frame deeper than the one before.
        let depths = Mutex<[Int]>([])
        runtime.invoker.planner.set { _, _, _ in
            let depth = Thread.callStackReturnAddresses.count
            depths.withLock { $0.append(depth) }
            return nil
        }
        for i in 0..<200 {
            #expect(await runtime.call("add", data: ["a": .int(Int64(i)), "b": 1]).value == ["sum": .int(Int64(i + 1))])
        }
        let seen = depths.withLock { $0 }
        #expect(seen.count == 200)
        #expect((seen.max() ?? 0) < 110, "a stack shallow enough to see growth in (backtraces stop at 128): \(seen.max() ?? 0)")
        // The same path each time, give or take how the task's job was started.
        #expect((seen.max() ?? 0) - (seen.min() ?? 0) <= 8, "planner stack depths from \(seen.min() ?? 0) to \(seen.max() ?? 0)")
    }
}

/// Counts the `Tracked` objects released.
private final class ReleaseCount: Sendable {
    let changes = Changes()
    private let released = Atomic<Int>(0)
    var count: Int { released.load(ordering: .acquiring) }
    func note() {
        released.wrappingAdd(1, ordering: .releasing)
        changes.changed()
    }
}

/// An object a completion captures, to see when it is released.
private final class Tracked: Sendable {
    let counter: ReleaseCount
    init(_ counter: ReleaseCount) { self.counter = counter }
    deinit { counter.note() }
}
