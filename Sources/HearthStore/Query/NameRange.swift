import HearthModel

/// The document names a query's `__name__` filters allow, and its cursors when it orders by name
/// alone: enough to leave out whole collections no result can come from. A collection group or
/// kindless query would otherwise read every collection it targets; firebase-tools' recursive
/// delete, for one, asks for every document of the database between
/// `users/__id-9223372036854775808__` and `users\0/__id-9223372036854775808__`, the range that holds
/// `users` and everything beneath it.
///
/// Only whole collections are decided here, so whether a bound is inclusive does not matter: a
/// collection's documents have names one segment longer than it, never equal to a bound that
/// decides for the whole collection. Everything kept is still checked in full by `QueryMatcher`.
struct NameRange {
    /// Names every result is at or after; each bound's segments.
    private(set) var lower: [[Substring]] = []
    /// Names every result is at or before.
    private(set) var upper: [[Substring]] = []

    init(_ spec: QuerySpec) {
        func segments(_ value: Value) -> [Substring]? {
            guard case .reference(let name) = value else { return nil }
            return PathRules.split(name)
        }
        for f in spec.filters where f.field.isDocumentID {
            guard let bound = segments(f.value) else { continue }
            switch f.op {
            case .equal: lower.append(bound); upper.append(bound)
            case .greaterThan, .greaterThanOrEqual: lower.append(bound)
            case .lessThan, .lessThanOrEqual: upper.append(bound)
            default: continue
            }
        }
        let order = spec.normalizedOrder
        guard order.count == 1 else { return }
        let ascending = order[0].direction == .ascending
        if let start = spec.startAt?.values.first.flatMap(segments) {
            if ascending { lower.append(start) } else { upper.append(start) }
        }
        if let end = spec.endAt?.values.first.flatMap(segments) {
            if ascending { upper.append(end) } else { lower.append(end) }
        }
    }

    var isUnbounded: Bool { lower.isEmpty && upper.isEmpty }

    /// False when every name in the collection at `path` falls outside the range.
    func mayHold(collection path: String) -> Bool {
        let collection = PathRules.split(path)
        for bound in lower where Self.compare(collection, bound) == .ascending { return false }
        for bound in upper where Self.compare(collection, bound) == .descending { return false }
        return true
    }

    /// The order of collections as the subtrees their names fill: by segments, and a collection
    /// after every path it is a prefix of (its names come from the whole subtree below it, so the
    /// highest of them is above any path that extends it). Descending name-order visits use it.
    static func orderAsSubtrees(_ a: [Substring], _ b: [Substring]) -> ComparisonOrder {
        PathRules.firstDifference(a, b) ?? ComparisonOrder(b.count, a.count)
    }

    /// Where the names in `collection` lie relative to `bound`: all before it, all after it, or
    /// `.same` when it lies among them. Their first segments are the collection's, so the segments
    /// the two share decide; when those are equal and the bound is no longer than the collection,
    /// the bound is a prefix of every name, which makes every name greater.
    static func compare<S: StringProtocol>(_ collection: [Substring], _ bound: [S]) -> ComparisonOrder {
        PathRules.firstDifference(collection, bound) ?? (bound.count <= collection.count ? .descending : .same)
    }
}

/// The `capacity` documents with the best names seen so far: the lowest, or the highest when
/// `descending`. A heap with the worst kept name (`cutoff`, once full) at the top.
struct NameHeap {
    let capacity: Int
    let descending: Bool
    private var items: [StoredDocument] = []

    init(capacity: Int, descending: Bool = false) {
        self.capacity = capacity
        self.descending = descending
    }

    /// Whether `a` comes before `b` in the query's order.
    func better(_ a: DocumentPath, than b: DocumentPath) -> Bool { descending ? b < a : a < b }

    /// The worst kept name when the heap is full: anything not better cannot be kept.
    var cutoff: DocumentPath? { items.count == capacity ? items.first?.path : nil }

    /// Keeps `doc` if it is among the best `capacity` names (the caller checks `cutoff` first).
    mutating func insert(_ doc: StoredDocument) {
        let worse = { [descending] (a: StoredDocument, b: StoredDocument) in descending ? a.path < b.path : b.path < a.path }
        if items.count < capacity {
            items.heapPush(doc, by: worse)
        } else if better(doc.path, than: items[0].path) {
            items.heapReplaceTop(with: doc, by: worse)
        }
    }

    func sorted() -> [StoredDocument] { items.sorted { better($0.path, than: $1.path) } }
}
