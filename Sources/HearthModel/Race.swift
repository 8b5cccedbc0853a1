import Synchronization

/// Hands whichever result arrives first (an answer or a deadline, say) to one continuation or
/// callback; later results are dropped. `onFinish` runs once the race is decided, to stop the losers.
///
/// Inlinable, so that a caller in another module (the invoker, per call) gets it specialized for its
/// `T`: unspecialized, every race made looked up its generic metadata at run time.
public final class Race<T: Sendable>: Sendable {
    @usableFromInline struct State {
        @usableFromInline var winner: (@Sendable (T) -> Void)?
        @usableFromInline var onFinish: (@Sendable () -> Void)?
        @usableFromInline var finished = false

        @inlinable init(winner: (@Sendable (T) -> Void)?) { self.winner = winner }
    }

    @usableFromInline let state: Mutex<State>

    @inlinable public init(_ continuation: CheckedContinuation<T, Never>) { state = Mutex(State(winner: { continuation.resume(returning: $0) })) }

    /// A race whose winner is passed to `winner`, on the thread that offered it.
    @inlinable public init(_ winner: @escaping @Sendable (T) -> Void) { state = Mutex(State(winner: winner)) }

    /// Runs `action` once the race is decided (at once if it already is).
    @inlinable public func onFinish(_ action: @escaping @Sendable () -> Void) {
        let runNow = state.withLock { s -> Bool in
            if s.finished { return true }
            s.onFinish = action
            return false
        }
        if runNow { action() }
    }

    /// Offers a result; true when it won.
    @discardableResult
    @inlinable public func finish(_ value: T) -> Bool {
        let taken = state.withLock { s -> (@Sendable (T) -> Void, (@Sendable () -> Void)?)? in
            guard let w = s.winner else { return nil }
            s.winner = nil
            s.finished = true
            defer { s.onFinish = nil }
            return (w, s.onFinish)
        }
        guard let (winner, action) = taken else { return false }
        winner(value)
        action?()
        return true
    }
}
