import HearthModel
import Testing

/// Runs each job inline on the thread that enqueues it. A task woken by `ManualClock.advance` then
/// runs up to its next suspension inside `advance`, before time moves on — the way swift-nio's
/// embedded event loop runs due work — so what each sleeper observes is deterministic.
final class InlineTaskExecutor: TaskExecutor {
    func enqueue(_ job: consuming ExecutorJob) {
        job.runSynchronously(on: asUnownedTaskExecutor())
    }
}

struct Wake: Sendable, Equatable, CustomStringConvertible {
    var name: String
    var now: Timestamp
    var description: String { "\(name)@\(now.seconds)" }
}

@Suite("ManualClock")
struct ClockTests {
    let start = Timestamp(seconds: 1_000)

    @Test("advance wakes sleepers in deadline order, each seeing now equal to its deadline")
    func wakeOrder() async throws {
        let clock = ManualClock(start)
        let executor = InlineTaskExecutor()
        let wakes = Recorder<Wake>()
        var tasks: [Task<Void, Error>] = []
        // Registered out of order; b2 shares b's deadline and registers later.
        for (name, offset) in [("c", 30), ("a", 10), ("e", 90), ("b", 20), ("d", 50), ("b2", 20)] {
            tasks.append(Task(executorPreference: executor) {
                try await clock.sleep(until: start + .seconds(offset))
                wakes.append(Wake(name: name, now: clock.now()))
            })
        }
        // With the inline executor every task has reached its sleep by now.
        #expect(clock.sleeperCount == 6)
        #expect(clock.nextDeadline == start + .seconds(10))

        clock.advance(to: start + .seconds(60))
        #expect(wakes.all == [
            Wake(name: "a", now: start + .seconds(10)), Wake(name: "b", now: start + .seconds(20)),
            Wake(name: "b2", now: start + .seconds(20)), Wake(name: "c", now: start + .seconds(30)),
            Wake(name: "d", now: start + .seconds(50)),
        ])
        #expect(clock.now() == start + .seconds(60))
        // The sleeper beyond the target is still asleep.
        #expect(clock.sleeperCount == 1)
        #expect(clock.nextDeadline == start + .seconds(90))

        clock.advance(by: .seconds(30))
        #expect(wakes.all.last == Wake(name: "e", now: start + .seconds(90)))
        #expect(clock.sleeperCount == 0)
        #expect(clock.nextDeadline == nil)
        for task in tasks { try await withTimeout { try await task.value } }
    }

    @Test("a sleeper woken by advance can sleep again and is woken again within the same advance")
    func chainedSleeps() async throws {
        let clock = ManualClock(start)
        let executor = InlineTaskExecutor()
        let wakes = Recorder<Wake>()
        let task = Task(executorPreference: executor) {
            for i in 1...3 {
                try await clock.sleep(for: .seconds(10))
                wakes.append(Wake(name: "tick\(i)", now: clock.now()))
            }
        }
        clock.advance(by: .seconds(25))
        #expect(wakes.all == [Wake(name: "tick1", now: start + .seconds(10)), Wake(name: "tick2", now: start + .seconds(20))])
        #expect(clock.now() == start + .seconds(25))
        #expect(clock.nextDeadline == start + .seconds(30))
        clock.advance(by: .seconds(5))
        #expect(wakes.all.count == 3)
        try await withTimeout { try await task.value }
    }

    @Test("sleepers on the default executor are all woken by advance")
    func defaultExecutor() async throws {
        let clock = ManualClock(start)
        let tasks = (1...5).map { i in
            Task { try await clock.sleep(until: start + .seconds(i * 10)) }
        }
        // Wait (bounded) until every task has registered; the clock cannot know before.
        try await withTimeout {
            while clock.sleeperCount < 5 { try Task.checkCancellation(); await Task.yield() }
        }
        clock.advance(to: start + .seconds(35))
        for task in tasks.prefix(3) { try await withTimeout { try await task.value } }
        #expect(clock.sleeperCount == 2)
        #expect(clock.now() == start + .seconds(35))
        clock.advance(to: start + .seconds(50))
        for task in tasks.suffix(2) { try await withTimeout { try await task.value } }
        #expect(clock.sleeperCount == 0)
    }

    @Test("a deadline at or before now returns at once without registering")
    func pastDeadline() async throws {
        let clock = ManualClock(start)
        try await withTimeout {
            try await clock.sleep(until: start - .seconds(1))
            try await clock.sleep(until: start)
            try await clock.sleep(for: .zero)
            try await clock.sleep(for: .seconds(-5))
        }
        #expect(clock.sleeperCount == 0)
        #expect(clock.now() == start)
    }

    @Test("cancelling a sleeper throws CancellationError and removes it")
    func cancellation() async throws {
        let clock = ManualClock(start)
        let executor = InlineTaskExecutor()
        let stayer = Task(executorPreference: executor) { try await clock.sleep(until: start + .seconds(10)) }
        let cancelled = Task(executorPreference: executor) { try await clock.sleep(until: start + .seconds(5)) }
        #expect(clock.sleeperCount == 2)
        cancelled.cancel()
        #expect(clock.sleeperCount == 1)
        let outcome = try await withTimeout { await cancelled.result }
        #expect(throws: CancellationError.self) { try outcome.get() }
        // Its deadline no longer counts; the other sleeper is untouched.
        #expect(clock.nextDeadline == start + .seconds(10))
        clock.advance(by: .seconds(10))
        try await withTimeout { try await stayer.value }
        #expect(clock.sleeperCount == 0)
    }

    @Test("cancelling on the default executor also removes the sleeper")
    func cancellationDefaultExecutor() async throws {
        let clock = ManualClock(start)
        let task = Task { try await clock.sleep(until: start + .seconds(5)) }
        try await withTimeout { while clock.sleeperCount < 1 { try Task.checkCancellation(); await Task.yield() } }
        task.cancel()
        let outcome = try await withTimeout { await task.result }
        #expect(throws: CancellationError.self) { try outcome.get() }
        #expect(clock.sleeperCount == 0)
    }

    @Test("a task cancelled before it sleeps throws at once")
    func cancelledBeforeSleeping() async throws {
        let clock = ManualClock(start)
        let outcome = try await withTimeout {
            await Task {
                withUnsafeCurrentTask { $0?.cancel() }
                try await clock.sleep(until: start + .seconds(5))
            }.result
        }
        #expect(throws: CancellationError.self) { try outcome.get() }
        #expect(clock.sleeperCount == 0)
    }

    @Test("time never moves backward; set moves it without waking anyone")
    func monotonicAndSet() async throws {
        let clock = ManualClock(start)
        clock.advance(to: start - .seconds(10))
        #expect(clock.now() == start)
        clock.advance(by: .seconds(-3))
        #expect(clock.now() == start)
        clock.advance(by: .milliseconds(1500))
        #expect(clock.now() == Timestamp(seconds: 1_001, nanos: 500_000_000))

        let executor = InlineTaskExecutor()
        let task = Task(executorPreference: executor) { try await clock.sleep(until: start + .seconds(10)) }
        clock.set(start + .seconds(20))
        #expect(clock.now() == start + .seconds(20))
        #expect(clock.sleeperCount == 1)
        // The next advance wakes the overdue sleeper without moving time back to its deadline.
        clock.advance(by: .zero)
        #expect(clock.sleeperCount == 0)
        #expect(clock.now() == start + .seconds(20))
        try await withTimeout { try await task.value }
    }

    @Test("a wait that never ends fails with a timeout instead of hanging the run")
    func timeoutHelper() async {
        let clock = ManualClock(start)
        await #expect(throws: TimeoutError.self) {
            try await withTimeout(seconds: 0.2) { try await clock.sleep(for: .seconds(1)) }
        }
        // The abandoned sleeper was cancelled, which removes it from the clock.
        await #expect(throws: Never.self) {
            try await withTimeout { while clock.sleeperCount > 0 { try Task.checkCancellation(); await Task.yield() } }
        }
    }

    @Test("the default start is 2026-01-01T00:00:00Z")
    func defaultStart() {
        #expect(ManualClock().now().rfc3339 == "2026-01-01T00:00:00Z")
    }

    @Test("the system clock reads a plausible time and sleeps past deadlines at once")
    func systemClock() async throws {
        let clock = SystemClock()
        let a = clock.now()
        let b = clock.now()
        #expect(a <= b)
        #expect(a.seconds > 1_700_000_000)
        #expect((0..<1_000_000_000).contains(a.nanos))
        try await withTimeout { try await clock.sleep(until: a - .seconds(1)) }
    }
}
