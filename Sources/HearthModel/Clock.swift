#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// Where every part of Hearth gets the time. Production uses `SystemClock`; tests and replay use
/// `ManualClock`, which only moves when told to.
public protocol Clock: Sendable {
    /// The current time.
    func now() -> Timestamp
    /// Suspends until `deadline` (returns at once when it has passed). Throws `CancellationError`
    /// when the task is cancelled first.
    func sleep(until deadline: Timestamp) async throws
}

extension Clock {
    public func sleep(for duration: Duration) async throws {
        try await sleep(until: now() + duration)
    }
}

/// The wall clock. The only place Hearth reads the system time.
public struct SystemClock: Clock {
    public init() {}

    public func now() -> Timestamp {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Timestamp(seconds: Int64(ts.tv_sec), nanos: Int32(ts.tv_nsec))
    }

    /// Sleeps a day at a time: `Task.sleep` adds its duration to the monotonic clock's reading,
    /// which traps past `Int64` seconds, and a deadline may be as far off as `distantFuture`.
    public func sleep(until deadline: Timestamp) async throws {
        while true {
            let remaining = deadline - now()
            guard remaining > .zero else { return }
            try await Task.sleep(for: min(remaining, .seconds(86_400)))
        }
    }
}

/// A clock that stands still until advanced, for deterministic tests and replay.
///
/// `advance(to:)` moves time forward to each pending sleeper's deadline in order, setting "now" to that
/// deadline before waking it, as swift-nio's `advanceTime(by:)` does; then it sets "now" to the target.
public final class ManualClock: Clock {
    struct Sleeper {
        let id: UInt64
        let deadline: Timestamp
        let continuation: CheckedContinuation<Void, Error>
    }

    struct State {
        var now: Timestamp
        var sleepers: [Sleeper] = []
        var nextID: UInt64 = 0
    }

    private let state: Mutex<State>

    public init(_ start: Timestamp = Timestamp(seconds: 1_767_225_600)) {  // 2026-01-01T00:00:00Z
        state = Mutex(State(now: start))
    }

    public func now() -> Timestamp { state.withLock { $0.now } }

    /// The number of tasks sleeping on this clock.
    public var sleeperCount: Int { state.withLock { $0.sleepers.count } }

    /// Changes whenever a task starts or stops sleeping on this clock, so a test can wait for
    /// "two handlers asleep" without polling: `await clock.changes.wait(atMost: …) { clock.sleeperCount == 2 }`.
    public let changes = Changes()

    /// The earliest deadline a sleeper waits for.
    public var nextDeadline: Timestamp? { state.withLock { $0.sleepers.map(\.deadline).min() } }

    public func sleep(until deadline: Timestamp) async throws {
        let id: UInt64 = state.withLock { s in
            s.nextID += 1
            return s.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, Error>) in
                let resumeNow: Bool = state.withLock { s in
                    if deadline <= s.now { return true }
                    if Task.isCancelled { return true }
                    s.sleepers.append(Sleeper(id: id, deadline: deadline, continuation: continuation))
                    return false
                }
                if resumeNow {
                    if Task.isCancelled { continuation.resume(throwing: CancellationError()) } else { continuation.resume() }
                } else {
                    changes.changed()
                }
            }
        } onCancel: {
            let sleeper: Sleeper? = state.withLock { s in
                guard let index = s.sleepers.firstIndex(where: { $0.id == id }) else { return nil }
                return s.sleepers.remove(at: index)
            }
            if let sleeper {
                changes.changed()
                sleeper.continuation.resume(throwing: CancellationError())
            }
        }
    }

    /// Moves time forward by `duration`, waking sleepers in deadline order.
    public func advance(by duration: Duration) {
        advance(to: now() + duration)
    }

    /// Moves time forward to `target` (never backward), waking each sleeper whose deadline has come,
    /// in deadline order, with "now" equal to its deadline.
    public func advance(to target: Timestamp) {
        while true {
            let due: Sleeper? = state.withLock { s in
                guard let index = s.sleepers.indices.min(by: { s.sleepers[$0].deadline < s.sleepers[$1].deadline || (s.sleepers[$0].deadline == s.sleepers[$1].deadline && s.sleepers[$0].id < s.sleepers[$1].id) }),
                      s.sleepers[index].deadline <= target else {
                    if target > s.now { s.now = target }
                    return nil
                }
                let sleeper = s.sleepers.remove(at: index)
                if sleeper.deadline > s.now { s.now = sleeper.deadline }
                return sleeper
            }
            guard let due else { return }
            changes.changed()
            due.continuation.resume()
        }
    }

    /// Sets the time without waking anyone (for setting up a test's starting point).
    public func set(_ time: Timestamp) {
        state.withLock { $0.now = time }
    }
}
