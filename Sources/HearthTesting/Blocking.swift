import Foundation

/// Runs blocking work (a socket read, waiting for a child process, a pipe) on a thread of its own
/// and awaits its result. Swift's concurrency runs on as many threads as there are cores; blocking
/// one of them in a test stalls every other task, including the server or runtime under test.
public func onOwnThread<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        let thread = Thread {
            do { continuation.resume(returning: try work()) } catch { continuation.resume(throwing: error) }
        }
        thread.stackSize = 8 << 20  // Process.run and friends need more than a small stack
        thread.start()
    }
}

/// Waits on the calling thread (one of the test's own, `onOwnThread`) until `condition` holds,
/// checking every millisecond for at most `seconds`; returns whether it held.
public func holdsSoon(seconds: Double = 30, _ condition: () -> Bool) -> Bool {
    for _ in 0..<max(1, Int(seconds * 1000)) {
        if condition() { return true }
        usleep(1000)
    }
    return condition()
}
