import Foundation
import HearthModel
import Synchronization

public struct TimeoutError: Error, CustomStringConvertible {
    public var seconds: Double
    public var description: String { "timed out after \(seconds) s" }
}

/// Runs `operation`, failing with `TimeoutError` when it takes longer than `seconds` of wall time,
/// so a hang fails the test instead of stalling the run. The operation and the timer race in
/// unstructured tasks: a task group would wait for a hung child (awaiting `task.value` ignores
/// cancellation), so the loser is cancelled and left behind rather than awaited.
public func withTimeout<T: Sendable>(seconds: Double = 60, _ operation: @escaping @Sendable () async throws -> T) async throws -> T {
    let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<T, Error>, Never>) in
        let race = Race(continuation)
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
    return try result.get()
}

/// Waits until `condition` holds, checking it again each time `changes` records a change (never by
/// polling); fails with `TimeoutError` after `seconds`.
///
/// ```swift
/// try await until(clock.changes) { clock.sleeperCount == 2 }
/// ```
public func until(_ changes: Changes, seconds: Double = 30, _ condition: @escaping @Sendable () -> Bool) async throws {
    guard await changes.wait(atMost: .seconds(seconds), until: condition) else { throw TimeoutError(seconds: seconds) }
}

/// Waits until `condition` holds, checking every 10 ms for at most `seconds` (for what no clock or
/// change signal drives, such as another process exiting); returns whether it held.
public func eventually(seconds: Double = 10, _ condition: () -> Bool) async -> Bool {
    for _ in 0..<max(1, Int(seconds * 100)) {
        if condition() { return true }
        try? await Task.sleep(for: .milliseconds(10))
    }
    return condition()
}

/// Whether process `pid` is gone (or a zombie no one waits for is all that is left of it).
public func processGone(_ pid: Int32) -> Bool {
    guard kill(pid, 0) == 0 else { return true }
    let stat = (try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)) ?? ""
    return stat.split(separator: ")").last?.split(separator: " ").first == "Z"
}
