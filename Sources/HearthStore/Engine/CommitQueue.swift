import HearthModel
import Synchronization

/// Group commit, driven by the writer's own thread. A caller submits its commit and waits; the
/// first submission that finds the queue idle starts a drain: queued on the writer's thread
/// (`Writer.onWriterThread`), or, for a small async commit when the writer is idle, on the
/// caller's own thread (`Writer.onThisThreadIfIdle`: a lone commit then costs no thread switch).
/// A drain takes every commit waiting (up to `maxGroup`) into one SQLite transaction
/// (`Writer.commitGroup`), answers each after the COMMIT, and schedules itself again while commits
/// keep arriving. A lone commit is written alone, as `Writer.commit`.
///
/// The writer never waits for a caller to come back and lead the next group: under load the next
/// group starts as soon as the last one is answered, with no thread wake-up in between. Each
/// drain takes one group and then queues itself behind whatever else the writer was asked to do
/// meanwhile (routing, deliveries, users), so a steady stream of commits does not starve them.
final class CommitQueue: Sendable {
    struct Waiting {
        let job: Writer.CommitJob
        /// Called on the writer's queue with the commit's outcome, after its group's COMMIT.
        let done: @Sendable (Writer.CommitOutcome) -> Void
    }

    /// The most commits one group takes (the rest wait for the next).
    static let maxGroup = 64
    /// The most a drain on a caller's thread takes (the rest go to the writer's thread).
    static let maxGroupHere = 8

    private let state = Mutex<(waiting: [Waiting], scheduled: Bool)>(([], false))

    /// Queues a commit; true when the caller must schedule a drain (none was scheduled).
    func submit(_ waiting: Waiting) -> Bool {
        state.withLock { s in
            s.waiting.append(waiting)
            defer { s.scheduled = true }
            return !s.scheduled
        }
    }

    /// The commits waiting now, up to a group's worth. On a caller's thread (`small`), at most
    /// `maxGroupHere` of the small commits at the head (`CommitJob.mayRunHere`): a batch behind
    /// them waits for the writer's thread, so a pool thread never commits someone else's batch.
    func take(small: Bool = false) -> [Waiting] {
        state.withLock { s in
            var n = min(s.waiting.count, small ? CommitQueue.maxGroupHere : CommitQueue.maxGroup)
            if small, let large = s.waiting.prefix(n).firstIndex(where: { !$0.job.mayRunHere }) { n = max(large, 1) }
            if n == s.waiting.count {
                defer { s.waiting.removeAll(keepingCapacity: true) }
                return s.waiting
            }
            let group = Array(s.waiting.prefix(n))
            s.waiting.removeFirst(n)
            return group
        }
    }

    /// After a group: true when more commits wait (the drain goes on); false ends the drain, and
    /// the next submission schedules another.
    func more() -> Bool {
        state.withLock { s in
            if s.waiting.isEmpty { s.scheduled = false }
            return s.scheduled
        }
    }
}
