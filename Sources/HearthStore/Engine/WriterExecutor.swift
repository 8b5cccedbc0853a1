import Dispatch
import HearthModel
import Synchronization

/// Threads that must never run a commit themselves, even when the writer is idle
/// (`WriterExecutor.runHereIfIdle`): a worker's socket reader in the host, which would read
/// nothing more from that worker until the commit (and any checkpoint tail it triggers) is done,
/// and whose worker's other commits could not join a group meanwhile. Their commits go to the
/// writer's thread.
public enum CommitPlacement {
    private static let marked = ThreadLocalWord()

    /// Marks the calling thread, for the rest of its life, as one that never commits itself.
    public static func neverOnThisThread() { marked.value = 1 }

    /// Whether the calling thread was marked.
    static var forbiddenHere: Bool { marked.value != 0 }
}

/// Where the writer actor runs: a serial dispatch queue of its own, not Swift's cooperative pool.
/// Everything the writer does is synchronous SQLite work (page writes, index builds, a whole
/// import in one transaction, a WAL checkpoint when the background one falls behind), and the
/// pool has only as many threads as cores: two on this project's machine. On the pool, one long
/// writer job held half of it, and every handler, timer and HTTP answer of the process queued
/// behind the rest (the test suite's stalls under load: an import of 12,000 documents held a pool
/// thread for seconds at a time). Here it blocks only the writer's own thread, and callers wait
/// for it by suspending.
final class WriterExecutor: SerialExecutor {
    private let queue: DispatchQueue
    /// Marks the queue's own thread (`DispatchQueue.getSpecific`).
    private let onQueue = DispatchSpecificKey<Bool>()
    /// Blocks queued or running: zero when the writer is idle.
    private let pending = Atomic<Int>(0)

    init(label: String) {
        queue = DispatchQueue(label: label)
        queue.setSpecific(key: onQueue, value: true)
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedSerialExecutor()
        pending.add(1, ordering: .relaxed)
        queue.async { [self] in
            job.runSynchronously(on: executor)
            pending.subtract(1, ordering: .relaxed)
        }
    }

    /// Runs `block` on the writer's thread, in order with the actor's jobs.
    func run(_ block: @escaping @Sendable () -> Void) {
        pending.add(1, ordering: .relaxed)
        queue.async { [self] in
            block()
            pending.subtract(1, ordering: .relaxed)
        }
    }

    /// Runs `block` on the queue from the calling thread when the writer has nothing queued or
    /// running: `DispatchQueue.sync` then runs it right here ("as a performance optimization, this
    /// function executes blocks on the current thread whenever possible"), so a lone commit costs
    /// no thread switch either way. False, with nothing run, when the writer is busy, the caller
    /// is the writer, or the caller's thread must never commit itself (`CommitPlacement`). Jobs
    /// queued between the check and the `sync` run first while the caller waits for them: a narrow
    /// window, but a preempted caller can wait for whatever arrived in it.
    func runHereIfIdle(_ block: () -> Void) -> Bool {
        guard DispatchQueue.getSpecific(key: onQueue) == nil, !CommitPlacement.forbiddenHere,
              pending.compareExchange(expected: 0, desired: 1, ordering: .relaxed).exchanged else { return false }
        queue.sync(execute: block)
        pending.subtract(1, ordering: .relaxed)
        return true
    }

    /// Nothing queued or running (for tests that need an idle writer).
    var isIdle: Bool { pending.load(ordering: .relaxed) == 0 }

    func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        UnownedSerialExecutor(ordinary: self)
    }

    /// Lets `Writer.assumeIsolated` check, from a block `run` queued, that it runs on this queue.
    func checkIsolated() {
        dispatchPrecondition(condition: .onQueue(queue))
    }
}
