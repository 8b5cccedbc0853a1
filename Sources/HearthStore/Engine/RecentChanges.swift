import HearthModel
import Synchronization

/// The last changes this process committed, as the commits returned them, so that the feed's
/// readers (the delivery engine routing triggers, first of all) take them from memory instead of
/// reading them back and decoding their documents again.
///
/// Sequence numbers are contiguous across every process writing the file, so a run of consecutive
/// numbers here is exactly what the database holds for them. The window answers only such a run
/// starting right after the asked position; anything else (an older position, a gap where
/// another process committed) is left to the database, which also gives what follows the run.
final class RecentChanges: Sendable {
    private struct Window {
        var changes: [DocumentChange] = []
        /// Index of the oldest change kept in `changes` (a ring buffer once full).
        var start = 0

        var first: DocumentChange? { changes.isEmpty ? nil : changes[start] }
        var last: DocumentChange? { changes.isEmpty ? nil : changes[(start + changes.count - 1) % changes.count] }
        /// The i-th oldest change.
        func at(_ i: Int, _ count: Int) -> DocumentChange { changes[(start + i) % count] }
    }

    let capacity: Int
    private let window = Mutex(Window())

    init(capacity: Int) { self.capacity = max(1, capacity) }

    /// Adds a commit's changes, in commit order. Changes that do not continue the window (a commit
    /// announced out of order) start it over.
    func append(_ changes: [DocumentChange]) {
        guard let first = changes.first else { return }
        window.withLock { w in
            if let last = w.last, first.sequence <= last.sequence { w = Window() }
            for change in changes.suffix(capacity) {
                if w.changes.count < capacity {
                    w.changes.append(change)
                } else {
                    w.changes[w.start] = change
                    w.start = (w.start + 1) % capacity
                }
            }
        }
    }

    /// The changes after `sequence`, at most `limit`, when the window holds the change right after
    /// it; nil when the database must answer.
    func after(_ sequence: Int64, limit: Int) -> [DocumentChange]? {
        guard limit > 0 else { return nil }
        return window.withLock { w -> [DocumentChange]? in
            guard let oldest = w.first, let newest = w.last, sequence >= oldest.sequence - 1, sequence < newest.sequence else { return nil }
            let count = w.changes.count
            // Where sequence + 1 would be if the window had no gap before it.
            let offset = Int(sequence + 1 - oldest.sequence)
            guard offset < count, w.at(offset, count).sequence == sequence + 1 else { return nil }
            var run: [DocumentChange] = []
            run.reserveCapacity(min(limit, count - offset))
            var expected = sequence + 1
            var i = offset
            while i < count, run.count < limit {
                let change = w.at(i, count)
                // A gap: another process committed in between. Only the database has it all.
                guard change.sequence == expected else { return nil }
                run.append(change)
                expected += 1
                i += 1
            }
            return run
        }
    }

    /// Forgets changes numbered below `sequence` (pruned from the feed).
    func drop(below sequence: Int64) {
        window.withLock { w in
            guard let oldest = w.first, oldest.sequence < sequence else { return }
            let kept = (0..<w.changes.count).map { w.at($0, w.changes.count) }.filter { $0.sequence >= sequence }
            w = Window(changes: kept, start: 0)
        }
    }
}
