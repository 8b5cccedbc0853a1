import CHearthSystem
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

/// Keeps the calling thread on the first core; with `idle`, it runs only when no other thread
/// there wants to (for tests that must decide which of two threads runs first). Returns the
/// error, or nil.
public func keepOnFirstCore(idle: Bool = false) -> String? {
    hearth_thread_first_core(idle ? 1 : 0) == 0 ? nil : String(cString: strerror(errno))
}

/// Undoes `keepOnFirstCore`: any core, the default scheduling. Returns the error, or nil.
public func releaseFirstCore() -> String? {
    hearth_thread_any_core() == 0 ? nil : String(cString: strerror(errno))
}

/// The calling thread's kernel id, and what a thread of this process is waiting in (its
/// /proc/self/task/<id>/wchan: "do_epoll_wait", say), for tests that must see a thread parked.
public func currentThreadID() -> Int32 { hearth_thread_id() }

public func threadWaitChannel(_ id: Int32) -> String {
    (try? String(contentsOfFile: "/proc/self/task/\(id)/wchan", encoding: .utf8)) ?? ""
}
