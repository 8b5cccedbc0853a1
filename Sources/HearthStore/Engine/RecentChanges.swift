import HearthModel
import Synchronization

/// The last changes this process committed, as the commits returned them, so that the feed's
/// readers (the delivery engine routing triggers, first of all) take them from memory instead of
/// reading them back and decoding their documents again.
///
/// Sequence numbers are contiguous across every process writing the file, so a run of consecutive
/// numbers here is exactly what the database holds for them. `after` answers only a run that
/// starts right after the asked position and has no gap (where another process committed); for
/// anything else it answers nil and the database is read. The caller still asks the database what
/// follows the run, and whether another process pruned its start (`SQLiteEngine.changes`).
///
/// Bounded by a count and by the documents' approximate size, the oldest going first.
final class RecentChanges: Sendable {
    private struct Window {
        /// The changes kept are `changes[head...]`, oldest first, each with its `weight`.
        var changes: [(change: DocumentChange, weight: Int)] = []
        var head = 0
        var bytes = 0

        var count: Int { changes.count - head }
        var first: DocumentChange? { count > 0 ? changes[head].change : nil }
        var last: DocumentChange? { count > 0 ? changes[changes.count - 1].change : nil }
        /// The i-th oldest change kept.
        func at(_ i: Int) -> DocumentChange { changes[head + i].change }

        mutating func dropOldest() {
            bytes -= changes[head].weight
            head += 1
            // Compact once the dropped prefix is as long as what is kept.
            if head >= count { changes.removeFirst(head); head = 0 }
        }
    }

    let capacity: Int
    let maxBytes: Int
    private let window = Mutex(Window())

    init(capacity: Int, maxBytes: Int) {
        self.capacity = max(1, capacity)
        self.maxBytes = max(1, maxBytes)
    }

    /// Adds a commit's changes. Commits arrive in sequence order (`SQLiteEngine.announce` runs before
    /// the next commit starts); should one not continue the window, the window starts over.
    func append(_ changes: [DocumentChange]) {
        guard let first = changes.first else { return }
        window.withLock { w in
            if let last = w.last, first.sequence <= last.sequence { w = Window() }
            for change in changes {
                let weight = RecentChanges.weight(change)
                w.changes.append((change, weight))
                w.bytes += weight
                while w.count > capacity || (w.bytes > maxBytes && w.count > 0) { w.dropOldest() }
            }
        }
    }

    /// The changes after `sequence`, at most `limit`, when the window holds the one right after it
    /// and no gap follows it; nil when the database must answer.
    func after(_ sequence: Int64, limit: Int) -> [DocumentChange]? {
        guard limit > 0 else { return nil }
        return window.withLock { w -> [DocumentChange]? in
            guard let oldest = w.first, let newest = w.last, sequence >= oldest.sequence - 1, sequence < newest.sequence else { return nil }
            // Where sequence + 1 is if nothing before it is missing; a gap before it means a miss.
            let offset = Int(sequence + 1 - oldest.sequence)
            guard offset < w.count, w.at(offset).sequence == sequence + 1 else { return nil }
            let end = limit >= w.count - offset ? w.count : offset + limit  // no overflow for any limit
            var run: [DocumentChange] = []
            run.reserveCapacity(end - offset)
            for i in offset..<end {
                let change = w.at(i)
                // A gap: another process committed in between.
                guard i == offset || change.sequence == run[run.count - 1].sequence + 1 else { return nil }
                run.append(change)
            }
            return run
        }
    }

    /// Forgets changes numbered below `sequence` (pruned from the feed).
    func drop(below sequence: Int64) {
        window.withLock { w in
            while let oldest = w.first, oldest.sequence < sequence { w.dropOldest() }
        }
    }

    /// About how many bytes a change holds: its documents' values, walked (no encoding).
    static func weight(_ change: DocumentChange) -> Int {
        func document(_ d: StoredDocument?) -> Int { d.map { $0.fields.reduce(0) { $0 + $1.key.utf8.count + value($1.value) } } ?? 0 }
        func value(_ v: Value) -> Int {
            switch v {
            case .string(let s), .reference(let s): return 16 + s.utf8.count
            case .bytes(let b): return 16 + b.count
            case .array(let a): return 16 + a.reduce(0) { $0 + value($1) }
            case .map(let m): return 16 + m.reduce(0) { $0 + $1.key.utf8.count + value($1.value) }
            default: return 16
            }
        }
        return 64 + change.path.description.utf8.count + document(change.before) + document(change.after)
    }
}
