import Synchronization

/// Wakes tasks waiting for the change feed to move past a sequence number. The writer reports each
/// commit's last sequence; waiters whose sequence is behind it resume at once, with no polling.
final class ChangeNotifier: Sendable {
    private struct Waiter {
        let id: UInt64
        let after: Int64
        let continuation: CheckedContinuation<Void, Never>
    }

    private struct State {
        var last: Int64
        var waiters: [Waiter] = []
        var nextID: UInt64 = 0
        /// Set on close: waiting would never end, so every wait returns at once.
        var closed = false
    }

    private let state: Mutex<State>

    init(last: Int64) { state = Mutex(State(last: last)) }

    var last: Int64 { state.withLock { $0.last } }

    func committed(upTo sequence: Int64) {
        let ready: [Waiter] = state.withLock { s in
            guard sequence > s.last else { return [] }
            s.last = sequence
            let (due, rest) = (s.waiters.filter { $0.after < sequence }, s.waiters.filter { $0.after >= sequence })
            s.waiters = rest
            return due
        }
        for w in ready { w.continuation.resume() }
    }

    /// Returns once the feed holds a change after `sequence` (at once if it already does), when
    /// the task is cancelled, or when the store is closed.
    func wait(after sequence: Int64) async {
        let id: UInt64 = state.withLock { s in
            s.nextID += 1
            return s.nextID
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
                let now: Bool = state.withLock { s in
                    if s.last > sequence || s.closed || Task.isCancelled { return true }
                    s.waiters.append(Waiter(id: id, after: sequence, continuation: c))
                    return false
                }
                if now { c.resume() }
            }
        } onCancel: {
            let waiter: Waiter? = state.withLock { s in
                guard let i = s.waiters.firstIndex(where: { $0.id == id }) else { return nil }
                return s.waiters.remove(at: i)
            }
            waiter?.continuation.resume()
        }
    }

    /// Wakes every waiter, and lets no one wait from now on (on close).
    func wakeAll() {
        let all = state.withLock { s -> [Waiter] in
            s.closed = true
            defer { s.waiters = [] }
            return s.waiters
        }
        for w in all { w.continuation.resume() }
    }
}
