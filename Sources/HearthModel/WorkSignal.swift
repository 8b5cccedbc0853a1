import Synchronization

/// A wake-up call from whoever makes work to the one task that does it: the store notifies the
/// delivery engine that deliveries were queued (naming the functions whose queues changed when it
/// knows them), the engine notifies itself when an attempt ends, the invoker notifies a settling
/// test driver when an invocation ends or starts waiting for time.
///
/// Notifications accumulate until the waiter takes them, so none is lost between two waits: a
/// `wait` after a `notify` returns at once.
public final class WorkSignal: Sendable {
    private struct State {
        var names: Set<String> = []
        var all = false
        var pending = false
        var waiter: CheckedContinuation<Void, Never>?
        var timer: Task<Void, Never>?
    }

    private let state = Mutex(State())

    public init() {}

    /// Records that work may have arrived for `names` (nil: for anything) and wakes the waiter.
    public func notify(_ names: Set<String>? = []) {
        let (waiter, timer) = state.withLock { s -> (CheckedContinuation<Void, Never>?, Task<Void, Never>?) in
            if let names { s.names.formUnion(names) } else { s.all = true }
            guard let w = s.waiter else {
                s.pending = true
                return (nil, nil)
            }
            s.waiter = nil
            defer { s.timer = nil }
            return (w, s.timer)
        }
        timer?.cancel()
        waiter?.resume()
    }

    /// What was notified since the last `take`: the names, and whether anything at all may have changed.
    public func take() -> (names: Set<String>, all: Bool) {
        state.withLock { s in
            defer { s.names = []; s.all = false }
            return (s.names, s.all)
        }
    }

    /// Whether `notify()` was called since the last wait, clearing it: the waiter would return at
    /// once, so it can go on without waiting (or working out how long it would wait).
    public func takePending() -> Bool {
        state.withLock { s in
            defer { s.pending = false }
            return s.pending
        }
    }

    /// Returns on `notify()` (at once if notified since the last wait), at `deadline` on `clock`
    /// (never, when nil), or when the task is cancelled.
    public func wait(until deadline: Timestamp?, clock: any Clock) async {
        guard let deadline else { return await wait(sleep: nil) }
        let sleep: @Sendable () async throws -> Void = { try await clock.sleep(until: deadline) }
        await wait(sleep: sleep)
    }

    /// Returns on `notify()` or after `timeout` of elapsed time at most (a bound on a wait whose
    /// end is not a point on any clock: a test driver giving up on a handler that never finishes).
    public func wait(atMost timeout: Duration) async {
        await wait(sleep: { try await Task.sleep(for: timeout) })
    }

    private func wait(sleep: (@Sendable () async throws -> Void)?) async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
                let now: Bool = state.withLock { s in
                    if s.pending || Task.isCancelled {
                        s.pending = false
                        return true
                    }
                    s.waiter = c
                    return false
                }
                if now {
                    c.resume()
                    return
                }
                guard let sleep else { return }
                let timer = Task { [weak self] in
                    do { try await sleep() } catch { return }
                    self?.wakeWithoutWork()
                }
                let keep = state.withLock { s -> Bool in
                    guard s.waiter != nil else { return false }
                    s.timer = timer
                    return true
                }
                if !keep { timer.cancel() }
            }
        } onCancel: {
            wakeWithoutWork()
        }
        state.withLock { $0.pending = false }
    }

    /// Wakes the waiter without recording work (its deadline came, or it was cancelled).
    private func wakeWithoutWork() {
        let (waiter, timer) = state.withLock { s -> (CheckedContinuation<Void, Never>?, Task<Void, Never>?) in
            defer { s.waiter = nil; s.timer = nil }
            return (s.waiter, s.timer)
        }
        timer?.cancel()
        waiter?.resume()
    }
}
