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
