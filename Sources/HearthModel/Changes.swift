import Synchronization

/// Wakes tasks waiting for some state to satisfy a condition, each time that state changes (a
/// `ManualClock`'s sleepers, a lock table's waiters, an invoker's service tasks): a waiter checks
/// its condition, and again after every change, never by polling.
public final class Changes: Sendable {
    private struct State {
        var generation: UInt64 = 0
        var waiters: [UInt64: CheckedContinuation<Void, Never>] = [:]
        var nextID: UInt64 = 0
    }

    private let state = Mutex(State())

    public init() {}

    /// Records a change: every waiter checks its condition again.
    public func changed() {
        let waiters = state.withLock { s -> [CheckedContinuation<Void, Never>] in
            s.generation &+= 1
            defer { s.waiters = [:] }
            return Array(s.waiters.values)
        }
        for w in waiters { w.resume() }
    }

    /// Returns true once `condition` holds (checked now and after each change), or false after
    /// `timeout` of elapsed time, or when the task is cancelled.
    public func wait(atMost timeout: Duration, until condition: @Sendable () -> Bool) async -> Bool {
        let end = ContinuousClock.now + timeout
        while true {
            let generation = state.withLock { $0.generation }
            if condition() { return true }
            guard ContinuousClock.now < end, !Task.isCancelled else { return false }
            await next(after: generation, until: end)
        }
    }

    /// Returns after the first change past `generation` (at once if there was one), at `end`, or on cancellation.
    private func next(after generation: UInt64, until end: ContinuousClock.Instant) async {
        let id = state.withLock { s -> UInt64 in
            s.nextID &+= 1
            return s.nextID
        }
        let timer = Task { [weak self] in
            try? await Task.sleep(until: end)
            self?.release(id)
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
                let now = state.withLock { s -> Bool in
                    // Past `end` already: the timer may have fired before this waiter was here to release.
                    if s.generation != generation || Task.isCancelled || ContinuousClock.now >= end { return true }
                    s.waiters[id] = c
                    return false
                }
                if now { c.resume() }
            }
        } onCancel: {
            release(id)
        }
        timer.cancel()
    }

    private func release(_ id: UInt64) {
        state.withLock { $0.waiters.removeValue(forKey: id) }?.resume()
    }
}
