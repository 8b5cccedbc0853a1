import HearthModel
import Synchronization

/// The host-side tasks serving each invocation's service calls (a `clock.sleep`, a query…), so that
/// when an invocation is cancelled or times out, the work it started in the host stops too.
public final class ServiceTasks: Sendable {
    private struct State {
        var next: UInt64 = 0
        var byInvocation: [UInt64: [UInt64: Task<Void, Never>]] = [:]
        var cancelled: Set<UInt64> = []
        /// Inline tasks that finished before they were registered.
        var finishedEarly: Set<UInt64> = []
    }

    private let state = Mutex(State())
    /// Changes whenever a service task starts or finishes.
    public let changes = Changes()

    public init() {}

    /// Runs `body` in a task attributed to `invocation`; if the invocation is already cancelled the
    /// task starts cancelled. `inline` starts it on the calling thread, where it runs until it
    /// first suspends (`Task.immediate`): one thread hand-off less, for a body that does little
    /// before it suspends.
    func start(invocation: UInt64, inline: Bool = false, _ body: @escaping @Sendable () async -> Void) {
        if inline, let key = state.withLock({ s -> UInt64? in
            guard !s.cancelled.contains(invocation) else { return nil }
            s.next += 1
            return s.next
        }) {
            // Created outside the lock: the body may finish (and take the lock) before this returns.
            let task = Task.immediate {
                await body()
                self.finished(invocation: invocation, key: key)
            }
            let cancel = state.withLock { s -> Bool in
                if s.finishedEarly.remove(key) != nil { return false }
                s.byInvocation[invocation, default: [:]][key] = task
                return s.cancelled.contains(invocation)
            }
            if cancel { task.cancel() }
            changes.changed()
            return
        }
        state.withLock { s in
            s.next += 1
            let key = s.next
            let task = Task {
                await body()
                self.finished(invocation: invocation, key: key)
            }
            if s.cancelled.contains(invocation) { task.cancel() }
            s.byInvocation[invocation, default: [:]][key] = task
        }
        changes.changed()
    }

    private func finished(invocation: UInt64, key: UInt64) {
        state.withLock { s in
            if s.byInvocation[invocation]?.removeValue(forKey: key) == nil { s.finishedEarly.insert(key) }
            if s.byInvocation[invocation]?.isEmpty == true { s.byInvocation.removeValue(forKey: invocation) }
        }
        changes.changed()
    }

    /// Cancels every service task of `invocation`, and any it starts later.
    public func cancel(invocation: UInt64) {
        let tasks = state.withLock { s -> [Task<Void, Never>] in
            s.cancelled.insert(invocation)
            return Array(s.byInvocation[invocation]?.values ?? [:].values)
        }
        for task in tasks { task.cancel() }
    }

    /// Forgets a finished invocation's cancellation mark.
    public func forget(invocation: UInt64) {
        state.withLock { _ = $0.cancelled.remove(invocation) }
    }

    public var runningCount: Int { state.withLock { $0.byInvocation.values.reduce(0) { $0 + $1.count } } }
}
