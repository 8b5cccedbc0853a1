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
/// - In a worker process (`hearth worker`, started by a host that names itself in
///   `Boundary.workerProcessVariable`), every reply arrives on the worker's one socket reader
///   thread. The handler goes on there, inside the reply's delivery, instead of being queued for
///   one of Swift's pool threads: a service call then costs the worker no thread wake-up at all.
///   Only a delivery from the reader's own loop runs a handler so, one at a time: while a handler
///   runs on the reader thread (its first part, or a part resumed there) and waits for a
///   synchronous answer (the clock, a secret), the replies it reads meanwhile queue theirs for the
///   pool, and so does any task the running one wakes.
/// - In the host's own process (in-process units, tests), a reply may arrive on the store's writer
///   thread or on a thread serving HTTP, which must not run unit code: the handler's task has no
///   executor of its own and goes where any task goes.
///
/// The price in a worker: while a handler runs on the reader thread, the worker reads nothing
/// else. A handler that computes for long between two service calls holds up the replies of the
/// others (as its first part, before its first call, always did).
final class HandlerExecutor: TaskExecutor {
    static let shared = HandlerExecutor()

    func enqueue(_ job: consuming ExecutorJob) {
        if ReplyDelivery.takeInlineSlot() {
            job.runSynchronously(on: asUnownedTaskExecutor())
        } else {
            globalConcurrentExecutor.enqueue(job)
        }
    }
}

/// The state of the reply being delivered on the current thread, kept per thread.
enum ReplyDelivery {
    /// Whether this process is a worker, whose replies all arrive on its reader thread: its parent
    /// is the host that set the variable (a process the unit starts inherits the variable, not the
    /// parent). Read when the unit is exported, before any handler runs.
    static let inWorker: Bool = isWorker(variable: getenv(Boundary.workerProcessVariable).map { String(cString: $0) }, parent: getppid())

    /// Whether `variable` (the value of `Boundary.workerProcessVariable`, nil when unset) names
    /// `parent`: a process id in decimal and nothing else. Anything else means not a worker.
    static func isWorker(variable: String?, parent: pid_t) -> Bool {
        guard let variable, variable.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }),
              let host = pid_t(variable), host > 0 else { return false }
        return host == parent
    }

    /// The executor a handler's task prefers: `HandlerExecutor` in a worker, none elsewhere.
    static var handlerExecutor: (any TaskExecutor)? { inWorker ? HandlerExecutor.shared : nil }

    private enum State: Int {
        /// No reply is being delivered on this thread.
        case none = 0
        /// A reply is being delivered: the task it resumes may run here.
        case open = 1
        /// That task runs here (or ran, during this delivery), or a handler's first part does:
        /// anything else is queued.
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

    /// Runs `start` (which starts a handler on this thread) with the thread taken: replies the
    /// handler reads here meanwhile (a synchronous call's) do not run other handlers nested in it.
    static func starting<T>(_ start: () -> T) -> T {
        guard inWorker else { return start() }
        let before = state
        state = .taken
        defer { state = before }
        return start()
    }

    /// Claims the current thread for the one job a delivery may run here; false when no reply is
    /// being delivered here, or its job already ran or runs.
    static func takeInlineSlot() -> Bool {
        guard state == .open else { return false }
        state = .taken
        return true
    }
}
