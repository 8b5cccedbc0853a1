import Synchronization

/// SplitMix64 (Steele, Lea, Flood 2014): a tiny, fast, seedable generator, so randomized tests and
/// benchmark corpora replay exactly from their seed.
public struct SplitMix64: RandomNumberGenerator {
    public var state: UInt64

    public init(seed: UInt64) { state = seed }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

public struct TimeoutError: Error, CustomStringConvertible {
    public var seconds: Double
    public var description: String { "timed out after \(seconds) s" }
}

/// Runs `operation`, failing with `TimeoutError` when it takes longer than `seconds` of wall time,
/// so a hang fails the test instead of stalling the run. The operation and the timer race in
/// unstructured tasks: a task group would wait for a hung child (awaiting `task.value` ignores
/// cancellation), so the loser is cancelled and left behind rather than awaited.
public func withTimeout<T: Sendable>(seconds: Double = 60, _ operation: @escaping @Sendable () async throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, Error>) in
        let race = TimeoutRace(continuation)
        let work = Task {
            do {
                race.finish(.success(try await operation()))
            } catch {
                race.finish(.failure(error))
            }
        }
        let timer = Task {
            try await Task.sleep(for: .seconds(seconds))
            if race.finish(.failure(TimeoutError(seconds: seconds))) { work.cancel() }
        }
        race.onFinish { timer.cancel() }
    }
}

/// Waits, yielding, until `condition` holds; fails with `TimeoutError` after `seconds`.
public func eventually(_ seconds: Double = 30, _ condition: @escaping @Sendable () -> Bool) async throws {
    try await withTimeout(seconds: seconds) {
        while !condition() {
            try Task.checkCancellation()
            await Task.yield()
        }
    }
}

/// Resumes a continuation once, with whichever result comes first.
final class TimeoutRace<T: Sendable>: Sendable {
    private let state: Mutex<(continuation: CheckedContinuation<T, Error>?, onFinish: (@Sendable () -> Void)?, finished: Bool)>

    init(_ continuation: CheckedContinuation<T, Error>) { state = Mutex((continuation, nil, false)) }

    /// Runs `action` once the race is decided (at once if it already is).
    func onFinish(_ action: @escaping @Sendable () -> Void) {
        let runNow = state.withLock { s -> Bool in
            if s.finished { return true }
            s.onFinish = action
            return false
        }
        if runNow { action() }
    }

    @discardableResult
    func finish(_ result: Result<T, Error>) -> Bool {
        let taken = state.withLock { s -> (CheckedContinuation<T, Error>, (@Sendable () -> Void)?)? in
            guard let c = s.continuation else { return nil }
            s.continuation = nil
            s.finished = true
            defer { s.onFinish = nil }
            return (c, s.onFinish)
        }
        guard let (continuation, action) = taken else { return false }
        continuation.resume(with: result)
        action?()
        return true
    }
}
