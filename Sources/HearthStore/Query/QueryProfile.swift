import HearthModel

/// What a query's plan and run cost, as Firestore's Query Explain reports it
/// (https://firebase.google.com/docs/firestore/reference/query-explain-report-reference): the
/// indexes the plan reads, and, once run, how many index entries and documents it read.
public struct QueryProfile: Sendable, Equatable {
    /// An index a plan reads, in Firestore's words: `queryScope` "Collection" or "Collection
    /// group", `properties` such as "(age ASC, __name__ ASC)" or "(tags ARRAY_CONTAINS, __name__ ASC)".
    public struct IndexUse: Sendable, Hashable {
        public let queryScope: String
        public let properties: String
        public init(queryScope: String, properties: String) {
            self.queryScope = queryScope
            self.properties = properties
        }
    }

    /// Each index once, in the order the plan first reads it.
    public var indexesUsed: [IndexUse] = []
    /// Rows the scans returned: entries of a field's index, or of the name index (the
    /// documents' primary key) for a scan by name. A scan ordered by a field checks the query's
    /// equality filters against their own indexes inside SQLite; entries those checks reject, and
    /// the entries the checks and the planner's estimates look up, are not counted.
    public var indexEntriesScanned = 0
    /// Documents read and decoded to be checked against the query (a superset of the results).
    public var documentsScanned = 0

    public init() {}

    /// Adds another run's profile (another branch of an OR query, or another collection).
    public mutating func add(_ other: QueryProfile) {
        for use in other.indexesUsed where !indexesUsed.contains(use) { indexesUsed.append(use) }
        indexEntriesScanned += other.indexEntriesScanned
        documentsScanned += other.documentsScanned
    }
}

/// Collects a `QueryProfile` while `QueryEngine` plans and runs one query on one thread.
final class QueryProfiler {
    var profile = QueryProfile()

    /// Records the indexes `plan` reads for `p` (the query as run).
    func planned(_ plan: QueryEngine.Plan, _ p: QueryEngine.Prepared) {
        let scope = p.spec.allDescendants ? "Collection group" : "Collection"
        let direction = p.order[0].direction == .ascending ? "ASC" : "DESC"
        func field(_ f: QuerySpec.Filter) -> String {
            let mode = f.op == .arrayContains || f.op == .arrayContainsAny ? "ARRAY_CONTAINS" : "ASC"
            return "(\(f.field) \(mode), __name__ \(direction))"
        }
        var properties: [String] = []
        switch plan {
        case .nameLookup, .nameScan: properties = ["(__name__ \(direction))"]
        case .equalityScan(let f), .materialize(let f): properties = [field(f)]
        case .orderScan(let ordered):
            properties = ["(\(ordered) \(direction), __name__ \(direction))"]
            // The other equality filters are checked against their own index entries (`statement`).
            for f in p.spec.filters where QueryEngine.isEqualityType(f) && f.field != ordered && f.op != .arrayContainsAny {
                properties.append(field(f))
            }
        }
        for text in properties {
            let use = QueryProfile.IndexUse(queryScope: scope, properties: text)
            if !profile.indexesUsed.contains(use) { profile.indexesUsed.append(use) }
        }
    }
}
