import Synchronization

/// Resumes one continuation with whichever result arrives first (an answer or a deadline, say);
/// later results are dropped. `onFinish` runs once the race is decided, to stop the losers.
public final class Race<T: Sendable>: Sendable {
    private struct State {
        var continuation: CheckedContinuation<T, Never>?
        var onFinish: (@Sendable () -> Void)?
        var finished = false
    }

    private let state: Mutex<State>

    public init(_ continuation: CheckedContinuation<T, Never>) { state = Mutex(State(continuation: continuation)) }

    /// Runs `action` once the race is decided (at once if it already is).
    public func onFinish(_ action: @escaping @Sendable () -> Void) {
        let runNow = state.withLock { s -> Bool in
            if s.finished { return true }
            s.onFinish = action
            return false
        }
        if runNow { action() }
    }

    /// Offers a result; true when it won.
    @discardableResult
    public func finish(_ value: T) -> Bool {
        let taken = state.withLock { s -> (CheckedContinuation<T, Never>, (@Sendable () -> Void)?)? in
            guard let c = s.continuation else { return nil }
            s.continuation = nil
            s.finished = true
            defer { s.onFinish = nil }
            return (c, s.onFinish)
        }
        guard let (continuation, action) = taken else { return false }
        continuation.resume(returning: value)
        action?()
        return true
    }
}
