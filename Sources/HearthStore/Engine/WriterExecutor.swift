import Dispatch

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

    init(label: String) {
        queue = DispatchQueue(label: label)
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedSerialExecutor()
        queue.async { job.runSynchronously(on: executor) }
    }

    /// Runs `block` on the writer's thread, in order with the actor's jobs.
    func run(_ block: @escaping @Sendable () -> Void) {
        queue.async(execute: block)
    }

    func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        UnownedSerialExecutor(ordinary: self)
    }

    /// Lets `Writer.assumeIsolated` check, from a block `run` queued, that it runs on this queue.
    func checkIsolated() {
        dispatchPrecondition(condition: .onQueue(queue))
    }
}
