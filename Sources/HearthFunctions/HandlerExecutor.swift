#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import HearthModel

/// Where a handler's task runs.
///
/// A handler starts on the thread that hands the unit its invocation (`Task.immediate` in
/// `UnitDispatcher.invoke`) and runs there until it first waits for the host. What happens when the
/// host's reply comes back depends on where the unit runs:
///
/// - In a worker process (`hearth worker`, which sets `Boundary.workerProcessVariable`), every
///   reply arrives on the worker's one socket reader thread. The handler goes on there, inside the
///   reply's delivery, instead of being queued for one of Swift's pool threads: a service call then
///   costs the worker no thread wake-up at all. One handler at a time runs so on that thread: a
///   task the resumed handler wakes in turn is queued as usual.
/// - In the host's own process (in-process units, tests), a reply may arrive on the store's writer
///   thread or on a thread serving HTTP, which must not run unit code: the handler is queued for
///   Swift's pool as any task is.
///
/// The price in a worker: while a handler runs on the reader thread, the worker reads nothing
/// else. A handler that computes for long between two service calls holds up the replies of the
/// others (as its first part, before its first call, always did).
final class HandlerExecutor: TaskExecutor {
    static let shared = HandlerExecutor()

    func enqueue(_ job: consuming ExecutorJob) {
        if ReplyDelivery.takeInlineSlot() {
            job.runSynchronously(on: asUnownedTaskExecutor())
            ReplyDelivery.releaseInlineSlot()
        } else {
            globalConcurrentExecutor.enqueue(job)
        }
    }
}

/// The state of the reply being delivered on the current thread, kept per thread.
enum ReplyDelivery {
    /// Whether this process is a worker, whose replies all arrive on its reader thread.
    static let inWorker: Bool = getenv(Boundary.workerProcessVariable) != nil

    private enum State: Int {
        /// No reply is being delivered on this thread.
        case none = 0
        /// A reply is being delivered: the task it resumes may run here.
        case open = 1
        /// That task runs here now: anything else is queued.
        case taken = 2
    }

    /// The per-thread state (a pthread key: Swift has no thread-local storage of its own).
    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        pthread_key_create(&key, nil)
        return key
    }()

    private static var state: State {
        get { State(rawValue: Int(bitPattern: pthread_getspecific(key))) ?? .none }
        set { pthread_setspecific(key, UnsafeRawPointer(bitPattern: newValue.rawValue)) }
    }

    /// Runs `resume` (which resumes a handler waiting for a reply) so that the handler may go on on
    /// this thread: in a worker, and when no other reply is being delivered here already.
    static func deliver(_ resume: () -> Void) {
        guard inWorker, state == .none else { return resume() }
        state = .open
        resume()
        state = .none
    }

    /// Claims the current thread for one job of a resumed handler; false when no reply is being
    /// delivered here, or its one job already runs.
    static func takeInlineSlot() -> Bool {
        guard state == .open else { return false }
        state = .taken
        return true
    }

    static func releaseInlineSlot() { state = .open }
}
