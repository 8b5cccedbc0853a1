import HearthModel
import Synchronization

/// Group commit's driver: queues each commit (`CommitQueue`), drains the queue in groups on the
/// writer's thread (`Writer.commitGroup`: one SQLite transaction per group), announces what the
/// group added to the feed, and answers each caller after the COMMIT.
///
/// The store's own small transactions on the delivery queue (a delivery engine's routing and the
/// outcomes of its attempts) ride in the same groups (`inNextGroup`): under load each would
/// otherwise be a transaction of its own, with its own BEGIN, COMMIT and WAL append, written
/// between two groups of commits.
final class GroupCommits: Sendable {
    let writer: Writer
    let queue = CommitQueue()
    /// Tells the feed's readers and the delivery engine what a group committed.
    private let announce: @Sendable ([(job: Writer.CommitJob, changes: [DocumentChange])]) -> Void

    init(writer: Writer, announce: @escaping @Sendable ([(job: Writer.CommitJob, changes: [DocumentChange])]) -> Void) {
        self.writer = writer
        self.announce = announce
    }

    /// Queues `job` for the writer; `done` is called after its group's COMMIT (or its failure),
    /// before the writer starts anything else, on the writer's thread, or with `here` on the
    /// caller's own when the writer was idle and the job small (`CommitJob.mayRunHere`): the
    /// commit then ran there, with no thread switch.
    /// The completion form never commits `here`: its callers are a worker's socket reader, which
    /// would read that worker's next commit only after this one, and no group would ever form.
    func submit(_ job: Writer.CommitJob, here: Bool, done: @escaping @Sendable (Writer.CommitOutcome) -> Void) {
        if queue.submit(CommitQueue.Waiting(job: job, done: done)),
           !(here && job.mayRunHere && writer.onThisThreadIfIdle({ drain($0, small: true) })) {
            writer.onWriterThread { [self] in drain($0) }
        }
    }

    /// Runs `body` in the transaction of the next group of commits, in its place in the queue, and
    /// returns what it returned once that group has committed. `body` may run twice: should
    /// another commit of its group fail, the group is written again, each commit under a savepoint
    /// (`Writer.commitGroup`), and only the second run's work is committed. A `body` that throws
    /// undoes its own work alone, as a failed commit does.
    func inNextGroup<T: Sendable>(_ body: @escaping @Sendable (Connection) throws -> T) async throws -> T {
        let result = Mutex<T?>(nil)
        let job = Writer.CommitJob(writes: [], validations: [], enqueues: [], work: { db in
            let value = try body(db)
            result.withLock { $0 = value }
        })
        _ = try await withCheckedThrowingContinuation { continuation in
            submit(job, here: false) { continuation.resume(with: $0) }
        }
        guard let value = result.withLock({ $0 }) else { throw HTTPSError(.internal, "a grouped transaction committed without its work's result") }
        return value
    }

    /// One group of the commits waiting, on the writer's thread (or, `small`, on a caller's: only
    /// the small commits at the head, `CommitQueue.take`): written in one transaction (a lone
    /// commit without savepoints), announced, each caller answered; then the next group is queued
    /// on the writer's thread, behind whatever else the writer has to do.
    private func drain(_ writer: isolated Writer, small: Bool = false) {
        let group = queue.take(small: small)
        let outcomes: [Writer.CommitOutcome]
        if group.count == 1 {
            let job = group[0].job
            outcomes = [Result { try writer.commit(job) }]
        } else {
            do { outcomes = try writer.commitGroup(group.map(\.job)) } catch {
                outcomes = Array(repeating: .failure(error), count: group.count)
            }
        }
        announce(zip(group, outcomes).compactMap { waiting, outcome in (try? outcome.get()).map { (waiting.job, $0.1) } })
        // The group's answers to a unit's worker leave in one write per worker, after the last.
        SendBatch.run { for (waiting, outcome) in zip(group, outcomes) { waiting.done(outcome) } }
        if queue.more() { writer.onWriterThread { [self] in drain($0) } }
    }
}
