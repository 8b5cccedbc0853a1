import HearthModel

/// Runs queries on one connection (a reader, or the writer when validating a transaction).
///
/// Every query is driven by an index, never by scanning a collection's documents for a filter:
/// - ordered by a field: the field's index, in order, bounded by the filters and the start cursor
///   on that field, with equality filters on other fields checked through their index entries
///   before a document is read (`orderScan`);
/// - ordered by name with an equality-type filter (`==`, `in`, `array-contains`, `array-contains-any`):
///   that filter's index entries, which are in name order (`equalityScan`);
/// - ordered by name without one: the documents' primary key (`nameScan`);
/// - ordered by a field with an equality filter matching few documents (under `materializeLimit`):
///   those documents, then sorted (`materialize`), which beats walking a long order index.
/// Each candidate is then checked against every filter and cursor in Swift with Firestore's exact
/// semantics (`QueryMatcher`), so the index only has to produce a superset in the right order.
struct QueryEngine {
    let db: Connection
    let collections: CollectionRegistry
    /// Set to profile the query (Query Explain): the indexes planned, the rows and documents read.
    var profiler: QueryProfiler? = nil

    static let materializeLimit = 1000

    enum Plan: Equatable {
        /// Documents named by a `__name__ ==` or `in` filter, read by primary key.
        case nameLookup([String])
        case nameScan
        case equalityScan(QuerySpec.Filter)
        case orderScan(FieldPath)
        case materialize(QuerySpec.Filter)
    }

    /// The query as run: validated, with ids turned into references and limitToLast turned around.
    struct Prepared {
        var spec: QuerySpec
        var order: [QuerySpec.Order]
        var matcher: QueryMatcher
        var reversed: Bool
    }

    func prepare(_ original: QuerySpec) throws(HTTPSError) -> Prepared {
        try original.validate()
        var spec = original
        var reversed = false
        if spec.limitToLast {
            // Run in the opposite order with the cursors swapped, then reverse the results.
            reversed = true
            spec.orderBy = spec.orderBy.map { QuerySpec.Order($0.field, $0.direction.reversed) }
            let start = spec.startAt, end = spec.endAt
            spec.startAt = end.map { QuerySpec.Cursor(values: $0.values, before: !$0.before) }
            spec.endAt = start.map { QuerySpec.Cursor(values: $0.values, before: !$0.before) }
            spec.limitToLast = false
        }
        let order = spec.normalizedOrder
        // Document ids in filters and cursors may be given bare; make them references.
        let base = spec.collectionPath?.description
        func reference(_ v: Value) throws(HTTPSError) -> Value {
            switch v {
            case .string(let id):
                guard let base else { throw .invalidArgument("a collection group or kindless query needs full document references, not the id '\(id)'") }
                return .reference(base + "/" + id)
            case .array(let items):
                var out: [Value] = []
                for item in items { out.append(try reference(item)) }
                return .array(out)
            default:
                return v
            }
        }
        for i in spec.filters.indices where spec.filters[i].field.isDocumentID {
            spec.filters[i].value = try reference(spec.filters[i].value)
        }
        for cursorKey in [\QuerySpec.startAt, \QuerySpec.endAt] {
            guard var cursor = spec[keyPath: cursorKey] else { continue }
            for (i, o) in zip(cursor.values.indices, order) where o.field.isDocumentID {
                cursor.values[i] = try reference(cursor.values[i])
            }
            spec[keyPath: cursorKey] = cursor
        }
        return Prepared(spec: spec, order: order, matcher: QueryMatcher(filters: spec.filters, order: order), reversed: reversed)
    }

    /// The collections a query reads: one, every one of a group (under `parent`, if set), or for
    /// a kindless query every one under `parent` (its own, or all beneath it). Collections that
    /// no name in the query's `__name__` range can fall in are left out (`NameRange`).
    func targetCollections(_ spec: QuerySpec) throws -> [(id: Int64, path: String)] {
        if let path = spec.collectionPath {
            guard let id = try collections.id(of: path, on: db) else { return [] }
            return [(id, path.description)]
        }
        let row = { (s: Statement) in (id: s.int64(0), path: s.text(1)) }
        var sql = "SELECT id, path FROM collections WHERE "
        var bindings: [SQLiteValue] = []
        if !spec.isKindless {
            sql += "collection_id = ? AND "
            bindings.append(.text(spec.collectionID))
        }
        if spec.isKindless && !spec.allDescendants {
            sql += "parent_path = ?"
            bindings.append(.text(spec.parent?.description ?? ""))
        } else if let parent = spec.parent {
            // Paths under the parent: ≥ "parent/" and < "parent0" ('0' follows '/').
            sql += "path >= ? AND path < ?"
            bindings += [.text(parent.description + "/"), .text(parent.description + "0")]
        } else {
            sql += "1"
        }
        let found = try db.query(sql, bindings, row)
        let range = NameRange(spec)
        return range.isUnbounded ? found : found.filter { range.mayHold(collection: $0.path) }
    }

    func run(_ spec: QuerySpec) throws -> [StoredDocument] {
        let prepared = try prepare(spec)
        let targets = try targetCollections(prepared.spec)
        if targets.count > 1, let limit = prepared.spec.limit, prepared.order.count == 1 {
            var results = try firstByName(prepared, targets, limit: limit, descending: prepared.order[0].direction == .descending)
            if prepared.reversed { results.reverse() }
            return results
        }
        var results: [StoredDocument] = []
        for target in targets {
            results += try runCollection(prepared, collection: target.id, path: target.path)
        }
        if targets.count > 1 {
            results.sort { prepared.matcher.compare($0, $1) == .ascending }
            if let limit = prepared.spec.limit, results.count > limit { results.removeLast(results.count - limit) }
        }
        if prepared.reversed { results.reverse() }
        return results
    }

    /// The first `limit` results, in the query's order, of a query over several collections ordered
    /// by name alone: a page of a collection group or of a recursive delete. Reading `limit` from
    /// every collection and sorting, as other orders do, made each page of a tree with many
    /// subcollections read nearly the whole tree. Here collections are visited in the query's
    /// order while a heap keeps the best `limit` names so far, and once the heap is full the
    /// first collection wholly past its worst name ends the visit, and a collection's stream stops
    /// at the first name past it:
    /// - ascending, collections by path: each collection's names sort after its path, so a
    ///   collection whose names all come after the worst kept one is followed only by such;
    /// - descending, collections by their path followed by a segment above every id (a
    ///   collection's names all sort below that): the mirror image.
    func firstByName(_ p: Prepared, _ targets: [(id: Int64, path: String)], limit: Int, descending: Bool) throws -> [StoredDocument] {
        guard limit > 0 else { return [] }
        let ordered = targets.map { (target: $0, segments: PathRules.split($0.path)) }
            .sorted { descending ? NameRange.orderAsSubtrees($1.segments, $0.segments) == .ascending
                                 : PathRules.compareSegments($0.segments, $1.segments) == .ascending }
        var best = NameHeap(capacity: limit, descending: descending)
        let past: ComparisonOrder = descending ? .ascending : .descending
        for (target, segments) in ordered {
            if let worst = best.cutoff, NameRange.compare(segments, worst.segments) == past { break }
            for doc in try runCollection(p, collection: target.id, path: target.path) {
                if let worst = best.cutoff, !best.better(doc.path, than: worst) { break }
                best.insert(doc)
            }
        }
        return best.sorted()
    }

    func count(_ spec: QuerySpec) throws -> Int {
        let prepared = try prepare(spec)
        let s = prepared.spec
        if s.filters.isEmpty && s.startAt == nil && s.endAt == nil && s.orderBy.isEmpty {
            var total = 0
            for target in try targetCollections(s) {
                total += Int(try db.scalarInt("SELECT count(*) FROM documents WHERE collection = ?", [.integer(target.id)]) ?? 0)
            }
            return s.limit.map { min($0, total) } ?? total
        }
        return try run(spec).count
    }

    // MARK: planning

    static func isEqualityType(_ f: QuerySpec.Filter) -> Bool {
        !f.field.isDocumentID && [.equal, .in, .arrayContains, .arrayContainsAny].contains(f.op)
    }

    /// The index keys an equality-type filter selects, and whether they are array-element entries.
    func keys(of f: QuerySpec.Filter) -> (element: Bool, keys: [[UInt8]]) {
        switch f.op {
        case .equal: return (false, [IndexKey.encode(f.value)])
        case .in: return (false, (f.value.arrayValue ?? []).map(IndexKey.encode))
        case .arrayContains: return (true, [IndexKey.encode(f.value)])
        case .arrayContainsAny: return (true, (f.value.arrayValue ?? []).map(IndexKey.encode))
        default: return (false, [])
        }
    }

    /// Index entries matching a filter, counted up to `cap`.
    func estimate(_ f: QuerySpec.Filter, collection: Int64, cap: Int) throws -> Int {
        let (element, keys) = keys(of: f)
        let placeholders = Array(repeating: "?", count: keys.count).joined(separator: ", ")
        let sql = "SELECT count(*) FROM (SELECT 1 FROM field_index WHERE collection = ? AND field = ? AND element = ? AND value IN (\(placeholders)) LIMIT ?)"
        return Int(try db.scalarInt(sql, [.integer(collection), .text(f.field.description), .integer(element ? 1 : 0)] + keys.map { .blob($0) } + [.integer(Int64(cap))]) ?? 0)
    }

    func plan(_ p: Prepared, collection: Int64, path: String) throws -> Plan {
        for f in p.spec.filters where f.field.isDocumentID && (f.op == .equal || f.op == .in) {
            let refs = f.op == .equal ? [f.value] : (f.value.arrayValue ?? [])
            let ids = refs.compactMap { ref -> String? in
                guard case .reference(let r) = ref, let (parent, id) = PathRules.lastSegment(r), UTF8Key.equal(parent, Substring(path)) else { return nil }
                return String(id)
            }
            return .nameLookup(ids)
        }
        let first = p.order[0]
        let candidates = p.spec.filters.filter { QueryEngine.isEqualityType($0) && $0.field != first.field }
        var best: (QuerySpec.Filter, Int)?
        for f in candidates {
            let n = try estimate(f, collection: collection, cap: QueryEngine.materializeLimit)
            if best == nil || n < best!.1 { best = (f, n) }
        }
        if first.field.isDocumentID {
            if let (f, _) = best { return .equalityScan(f) }
            return .nameScan
        }
        if let (f, n) = best, n < QueryEngine.materializeLimit { return .materialize(f) }
        return .orderScan(first.field)
    }

    // MARK: execution

    static let documentColumns = "d.data, d.create_time, d.update_time"

    func readDocument(_ s: Statement, idColumn: Int32, dataColumn: Int32, collection: [String]) throws -> StoredDocument {
        let id = s.text(idColumn)
        let fields = try s.withBlob(dataColumn) { try RowEncoding.decodeFields($0) }
        return StoredDocument(path: DocumentPath(trustedSegments: collection + [id]), fields: fields,
                              createTime: RowEncoding.time(s.int64(dataColumn + 1)), updateTime: RowEncoding.time(s.int64(dataColumn + 2)))
    }

    /// The SQL and bindings a plan runs (also what `explain` shows); `path` is the collection's path.
    func statement(for plan: Plan, _ p: Prepared, collection: Int64, path: String) -> (sql: String, bindings: [SQLiteValue]) {
        let direction = p.order[0].direction == .ascending ? "ASC" : "DESC"
        switch plan {
        case .nameLookup(let ids):
            let placeholders = Array(repeating: "?", count: ids.count).joined(separator: ", ")
            return ("SELECT d.id, \(QueryEngine.documentColumns) FROM documents AS d WHERE d.collection = ? AND d.id IN (\(placeholders)) ORDER BY d.id \(direction)",
                    [.integer(collection)] + ids.map { .text($0) })
        case .nameScan:
            var sql = "SELECT d.id, \(QueryEngine.documentColumns) FROM documents AS d WHERE d.collection = ?"
            var bindings: [SQLiteValue] = [.integer(collection)]
            // The start cursor bounds the ids when it names a document of this collection or one
            // beneath it: its segment at the ids' depth, `id`, then bounds them, since this
            // collection's ids on the far side of `id` name documents on the far side of the
            // cursor. A cursor elsewhere says nothing about these ids (it is still applied to every
            // document in Swift), nor does a numeric id (`__id7__`), which sorts before every id a
            // document can have but not in SQLite's byte order.
            if let start = p.spec.startAt, case .reference(let ref)? = start.values.first {
                let cursor = PathRules.split(ref), collection = PathRules.split(path)
                if cursor.count > collection.count, cursor.starts(with: collection, by: UTF8Key.equal), PathRules.numericID(cursor[collection.count]) == nil {
                    sql += direction == "ASC" ? " AND d.id >= ?" : " AND d.id <= ?"
                    bindings.append(.text(String(cursor[collection.count])))
                }
            }
            return (sql + " ORDER BY d.id \(direction)", bindings)
        case .equalityScan(let f):
            let (element, keys) = keys(of: f)
            let placeholders = Array(repeating: "?", count: keys.count).joined(separator: ", ")
            let sql = """
                SELECT i.id, \(QueryEngine.documentColumns) FROM field_index AS i \
                JOIN documents AS d ON d.collection = i.collection AND d.id = i.id \
                WHERE i.collection = ? AND i.field = ? AND i.element = ? AND i.value IN (\(placeholders)) \
                ORDER BY i.id \(direction)
                """
            return (sql, [.integer(collection), .text(f.field.description), .integer(element ? 1 : 0)] + keys.map { .blob($0) })
        case .materialize(let f):
            let (element, keys) = keys(of: f)
            let placeholders = Array(repeating: "?", count: keys.count).joined(separator: ", ")
            let sql = """
                SELECT i.id, \(QueryEngine.documentColumns) FROM field_index AS i \
                JOIN documents AS d ON d.collection = i.collection AND d.id = i.id \
                WHERE i.collection = ? AND i.field = ? AND i.element = ? AND i.value IN (\(placeholders))
                """
            return (sql, [.integer(collection), .text(f.field.description), .integer(element ? 1 : 0)] + keys.map { .blob($0) })
        case .orderScan(let field):
            var sql = "SELECT i.id, \(QueryEngine.documentColumns), i.value FROM field_index AS i JOIN documents AS d ON d.collection = i.collection AND d.id = i.id WHERE i.collection = ? AND i.field = ? AND i.element = 0"
            var bindings: [SQLiteValue] = [.integer(collection), .text(field.description)]
            let (lower, upper) = bounds(on: field, p)
            if let lower {
                sql += lower.inclusive ? " AND i.value >= ?" : " AND i.value > ?"
                bindings.append(.blob(lower.key))
            }
            if let upper {
                sql += upper.inclusive ? " AND i.value <= ?" : " AND i.value < ?"
                bindings.append(.blob(upper.key))
            }
            // Equality filters on other fields are checked against their index entries, so only
            // documents that pass them are read.
            for f in p.spec.filters where QueryEngine.isEqualityType(f) && f.field != field && f.op != .arrayContainsAny {
                let (element, keys) = keys(of: f)
                let placeholders = Array(repeating: "?", count: keys.count).joined(separator: ", ")
                sql += " AND EXISTS (SELECT 1 FROM field_index AS f WHERE f.collection = i.collection AND f.field = ? AND f.element = ? AND f.value IN (\(placeholders)) AND f.id = i.id)"
                bindings += [.text(f.field.description), .integer(element ? 1 : 0)] + keys.map { .blob($0) }
            }
            return (sql + " ORDER BY i.value \(direction), i.id \(direction)", bindings)
        }
    }

    struct Bound {
        var key: [UInt8]
        var inclusive: Bool
    }

    /// Key bounds on the ordered field from its range and equality filters and the start cursor.
    /// Conservative: anything outside cannot match; anything inside is still checked in Swift.
    func bounds(on field: FieldPath, _ p: Prepared) -> (lower: Bound?, upper: Bound?) {
        var lower: Bound?, upper: Bound?
        func raiseLower(_ b: Bound) {
            if let l = lower, !l.key.lexicographicallyPrecedes(b.key), !(l.key == b.key && l.inclusive && !b.inclusive) { return }
            lower = b
        }
        func lowerUpper(_ b: Bound) {
            if let u = upper, !b.key.lexicographicallyPrecedes(u.key), !(u.key == b.key && u.inclusive && !b.inclusive) { return }
            upper = b
        }
        for f in p.spec.filters where f.field == field {
            let key = IndexKey.encode(f.value)
            switch f.op {
            case .equal:
                raiseLower(Bound(key: key, inclusive: true)); lowerUpper(Bound(key: key, inclusive: true))
            case .greaterThan:
                raiseLower(Bound(key: key, inclusive: false)); lowerUpper(Bound(key: IndexKey.typeEnd(f.value), inclusive: false))
            case .greaterThanOrEqual:
                raiseLower(Bound(key: key, inclusive: true)); lowerUpper(Bound(key: IndexKey.typeEnd(f.value), inclusive: false))
            case .lessThan:
                raiseLower(Bound(key: IndexKey.typeStart(f.value), inclusive: true)); lowerUpper(Bound(key: key, inclusive: false))
            case .lessThanOrEqual:
                raiseLower(Bound(key: IndexKey.typeStart(f.value), inclusive: true)); lowerUpper(Bound(key: key, inclusive: true))
            default:
                break
            }
        }
        if let start = p.spec.startAt, let first = start.values.first {
            let b = Bound(key: IndexKey.encode(first), inclusive: true)
            if p.order[0].direction == .ascending { raiseLower(b) } else { lowerUpper(b) }
        }
        return (lower, upper)
    }

    func runCollection(_ p: Prepared, collection: Int64, path: String) throws -> [StoredDocument] {
        let plan = try plan(p, collection: collection, path: path)
        let segments = PathRules.split(path).map(String.init)
        let (sql, bindings) = statement(for: plan, p, collection: collection, path: path)
        let s = try db.prepare(sql)
        defer { s.reset() }
        try s.bind(bindings)
        let limit = p.spec.limit ?? Int.max
        var out: [StoredDocument] = []
        profiler?.planned(plan, p)
        if limit == 0 { return out }
        let m = p.matcher

        // Plans that read an unordered (materialize) or name-ordered (nameLookup) set of documents
        // sort it in the query's order before applying cursors and the limit.
        var sortsInMemory = false
        switch plan {
        case .materialize, .nameLookup: sortsInMemory = true
        default: break
        }
        if sortsInMemory {
            var candidates: [StoredDocument] = []
            var seen: Set<UTF8Key> = []
            while try s.step() {
                profiler?.profile.indexEntriesScanned += 1
                // array-contains-any can reach one document through several entries: read it once.
                guard seen.insert(UTF8Key(s.text(0))).inserted else { continue }
                let doc = try readDocument(s, idColumn: 0, dataColumn: 1, collection: segments)
                profiler?.profile.documentsScanned += 1
                if m.matches(doc) { candidates.append(doc) }
            }
            candidates.sort { m.compare($0, $1) == .ascending }
            for doc in candidates {
                if m.isBeforeStart(doc, p.spec.startAt) { continue }
                if m.isAfterEnd(doc, p.spec.endAt) { break }
                out.append(doc)
                if out.count >= limit { break }
            }
            return out
        }

        // Streamed plans: candidates arrive ordered by the first order component; documents that tie
        // on it are buffered and sorted by the rest of the order before they are emitted.
        var group: [StoredDocument] = []
        var groupKey: [UInt8]?
        var lastID: String?
        var done = false
        func flush() {
            if group.count > 1 { group.sort { m.compare($0, $1) == .ascending } }
            for doc in group {
                if m.isBeforeStart(doc, p.spec.startAt) { continue }
                if m.isAfterEnd(doc, p.spec.endAt) { done = true; break }
                out.append(doc)
                if out.count >= limit { done = true; break }
            }
            group.removeAll(keepingCapacity: true)
        }
        while !done, try s.step() {
            profiler?.profile.indexEntriesScanned += 1
            let id = s.text(0)
            if case .equalityScan = plan {
                // array-contains-any can reach one document twice; on bytes, as SQLite orders the
                // ids, or two ids Swift calls equal ("café" and "cafe\u{301}") would be taken for one.
                if let lastID, UTF8Key.equal(id, lastID) { continue }
                lastID = id
            }
            if case .orderScan = plan {
                let key = s.blob(4)
                if key != groupKey {
                    flush()
                    if done { break }
                    groupKey = key
                }
            }
            let doc = try readDocument(s, idColumn: 0, dataColumn: 1, collection: segments)
            profiler?.profile.documentsScanned += 1
            guard m.matches(doc) else { continue }
            group.append(doc)
            if case .orderScan = plan { continue }
            flush()
        }
        if !done { flush() }
        return out
    }

    /// The indexes a query's plan reads, without running it (Query Explain without `analyze`):
    /// each target collection's plan, or, when no collection holds documents yet, the plan an
    /// empty collection gets (so the summary is never empty).
    func planSummary(_ spec: QuerySpec) throws -> QueryProfile {
        let p = try prepare(spec)
        let profiler = QueryProfiler()
        let targets = try targetCollections(p.spec)
        for target in targets.isEmpty ? [(id: Int64(-1), path: p.spec.collectionPath?.description ?? "")] : targets {
            profiler.planned(try plan(p, collection: target.id, path: target.path), p)
        }
        return profiler.profile
    }

    /// SQLite's plan for the statement a query runs on its first collection, for tests and tools.
    func explain(_ spec: QuerySpec) throws -> (plan: Plan, details: [String]) {
        let p = try prepare(spec)
        guard let target = try targetCollections(p.spec).first else { return (.nameScan, []) }
        let chosen = try plan(p, collection: target.id, path: target.path)
        let (sql, bindings) = statement(for: chosen, p, collection: target.id, path: target.path)
        let details = try db.query("EXPLAIN QUERY PLAN " + sql, bindings) { $0.text(3) }
        return (chosen, details)
    }
}
