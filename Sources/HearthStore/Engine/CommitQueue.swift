import HearthModel
import Synchronization

/// Group commit: concurrent commits wait here while one caller, the leader, runs them all in one
/// SQLite transaction (`Writer.commitGroup`). A caller that finds no leader leads at once and
/// commits alone, so a lone commit costs what it did without the queue; under load, the commits
/// that arrive while a group is being written are the next group, led by the first of them. Each
/// caller is answered only after its group's COMMIT.
final class CommitQueue: Sendable {
    struct Waiting {
        let job: Writer.CommitJob
        /// Resumed with the commit's outcome, or with nil: this caller leads the next group.
        let continuation: CheckedContinuation<Writer.CommitOutcome?, Never>
    }

    /// The most commits one group takes (the rest wait for the next).
    static let maxGroup = 64

    private let state = Mutex<(waiting: [Waiting], leading: Bool)>(([], false))

    /// Nil when the caller leads (it must `run` a group and `handOff`), else its commit's outcome.
    func join(_ job: Writer.CommitJob) async -> Writer.CommitOutcome? {
        if state.withLock({ s in defer { s.leading = true }; return !s.leading }) { return nil }
        return await withCheckedContinuation { continuation in
            let leads = state.withLock { s -> Bool in
                if !s.leading { s.leading = true; return true }  // the leader finished meanwhile
                s.waiting.append(Waiting(job: job, continuation: continuation))
                return false
            }
            if leads { continuation.resume(returning: nil) }
        }
    }

    /// The commits waiting now, up to a group's worth.
    func take() -> [Waiting] {
        state.withLock { s in
            let n = min(s.waiting.count, CommitQueue.maxGroup - 1)
            let group = Array(s.waiting.prefix(n))
            s.waiting.removeFirst(n)
            return group
        }
    }

    /// Ends a leader's turn: the first caller still waiting leads next, or nobody does.
    func handOff() {
        let next = state.withLock { s -> Waiting? in
            if s.waiting.isEmpty { s.leading = false; return nil }
            return s.waiting.removeFirst()
        }
        next?.continuation.resume(returning: nil)
    }
}
