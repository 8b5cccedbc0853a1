import HearthModel
import HearthStore

/// runQuery and runAggregationQuery: a `StructuredQuery` read into the store's `QuerySpec`s.
///
/// The store runs conjunctions; a `where` with OR is brought to disjunctive normal form (at most
/// 30 disjunctions, Firestore's own limit), each conjunction runs in the query's full order (the
/// explicit order, then every inequality field of any branch, then the name), and the results
/// are merged in that order before `offset` and `limit` apply.
extension FirestoreREST {
    /// A structured query, read.
    struct ParsedQuery {
        /// One spec per disjunction, each in the same full order, with the cursors; no limit.
        var branches: [QuerySpec]
        var order: [QuerySpec.Order]
        /// `orderBy` as sent, which the rules see as `request.query.orderBy`.
        var requestedOrder: [QuerySpec.Order]
        var offset: Int
        var limit: Int?
        /// `select`: nil for whole documents; empty for names only.
        var projection: [FieldPath]?
        /// `findNearest`: the branches' results are the candidates of a vector search.
        var nearest: NearestSearch?
    }

    static let maxDisjunctions = 30

    func parseQuery(_ json: Value?, parent: DocumentPath?, names: FirestoreJSON) throws(HTTPSError) -> ParsedQuery {
        guard case .map(let q)? = json else { throw .invalidArgument("structuredQuery: is required") }
        for key in q.keys where !["select", "from", "where", "orderBy", "startAt", "endAt", "offset", "limit", "findNearest"].contains(key) {
            throw .invalidArgument("structuredQuery: unknown field '\(key)'")
        }
        var nearest: NearestSearch?
        if let json = q["findNearest"], json != .null {
            nearest = try NearestSearch(json, names: names)
            // The search orders and limits its results itself (its order supersedes orderBy, which
            // is read and then set aside). An offset of 0 is proto3's default, sent when unset.
            for key in ["startAt", "endAt", "offset", "limit"] where q[key] != nil && q[key] != .null && !(key == "offset" && q[key] == .int(0)) {
                throw .invalidArgument("structuredQuery.\(key): cannot be combined with findNearest (its limit bounds the results)")
            }
        }
        guard case .array(let from)? = q["from"], from.count == 1, case .map(let selector) = from[0] else {
            throw .invalidArgument("structuredQuery.from: exactly one collection selector is required")
        }
        for key in selector.keys where key != "collectionId" && key != "allDescendants" {
            throw .invalidArgument("structuredQuery.from[0]: unknown field '\(key)'")
        }
        // No collectionId (or an empty one, proto3's default) is a kindless query: every
        // collection under the parent (`QuerySpec.isKindless`).
        let collectionID: String
        switch selector["collectionId"] {
        case nil, .null: collectionID = ""
        case .string(let id): collectionID = id
        case let other?: throw .invalidArgument("structuredQuery.from[0].collectionId: must be a string (got \(other.typeName))")
        }
        let allDescendants: Bool
        switch selector["allDescendants"] {
        case nil, .null: allDescendants = false
        case .bool(let b): allDescendants = b
        case let other?: throw .invalidArgument("structuredQuery.from[0].allDescendants: must be a boolean (got \(other.typeName))")
        }
        // Values in filters and cursors may name numeric ids (`__id7__`), which clients use as
        // the bounds of a collection's names.
        let names = names.forQueries

        var projection: [FieldPath]?
        if case .map(let select)? = q["select"] {
            projection = []
            if case .array(let fields)? = select["fields"] {
                for (i, f) in fields.enumerated() { projection?.append(try FirestoreJSON.fieldReference(f, field: "structuredQuery.select.fields[\(i)]")) }
            }
        }

        var disjunctions: [[QuerySpec.Filter]] = [[]]
        if let filter = q["where"] {
            disjunctions = try dnf(filter, field: "structuredQuery.where", names: names)
            // Firestore's rule over the whole filter, which the branches alone cannot see.
            let (ops, hasOR) = FirestoreREST.filterOperators(filter)
            if ops["NOT_IN"] != nil && (hasOR || ops["IN"] != nil || ops["ARRAY_CONTAINS_ANY"] != nil) {
                throw .invalidArgument("'NOT_IN' cannot be used in the same query with 'IN', 'ARRAY_CONTAINS_ANY' or 'OR'.")
            }
            if ops.filter({ ["NOT_EQUAL", "NOT_IN", "IS_NOT_NAN", "IS_NOT_NULL"].contains($0.key) }).values.reduce(0, +) > 1 {
                throw .invalidArgument("Only a single 'NOT_EQUAL', 'NOT_IN', 'IS_NOT_NAN', or 'IS_NOT_NULL' filter allowed per query.")
            }
        }
        var orderBy: [QuerySpec.Order] = []
        if let list = q["orderBy"] {
            guard case .array(let items) = list else { throw .invalidArgument("structuredQuery.orderBy: must be an array") }
            for (i, item) in items.enumerated() {
                let field = "structuredQuery.orderBy[\(i)]"
                let path = try FirestoreJSON.fieldReference(item["field"], field: field + ".field")
                let direction: QuerySpec.Direction
                switch item["direction"] {
                case nil, .string("ASCENDING"), .int(1), .string("DIRECTION_UNSPECIFIED"), .int(0): direction = .ascending
                case .string("DESCENDING"), .int(2): direction = .descending
                case let other?: throw .invalidArgument("\(field).direction: '\(other)' is not ASCENDING or DESCENDING")
                }
                orderBy.append(QuerySpec.Order(path, direction))
            }
        }
        if nearest != nil { orderBy = [] }  // superseded by the search's own order
        let startAt = try cursor(q["startAt"], field: "structuredQuery.startAt", names: names)
        let endAt = try cursor(q["endAt"], field: "structuredQuery.endAt", names: names)
        // Cursors follow the order as sent (the SDKs send the whole order, __name__ included),
        // and a value at a __name__ position is a document reference, as Firestore requires.
        for cursor in [startAt, endAt].compactMap({ $0 }) {
            guard cursor.values.count <= orderBy.count else { throw .invalidArgument("Cursor has too many values.") }
            for (value, order) in zip(cursor.values, orderBy) where order.field.isDocumentID {
                guard case .reference = value else { throw .invalidArgument("Cursor __key__ value is not a document reference.") }
            }
        }
        var offset = 0
        if let o = q["offset"] { offset = try FirestoreJSON.int32(o, field: "structuredQuery.offset") }
        var limit: Int?
        if let l = q["limit"] {
            // Int32Value: a bare number in JSON, or the wrapper's object form.
            limit = try FirestoreJSON.int32(l["value"] ?? l, field: "structuredQuery.limit")
        }

        // The full order: every branch must run in it, so their results merge.
        var whole = QuerySpec(parent: parent, collectionID: collectionID, allDescendants: allDescendants,
                              filters: disjunctions.flatMap { $0 }, orderBy: orderBy)
        let order = whole.normalizedOrder
        var branches: [QuerySpec] = []
        for filters in disjunctions {
            var spec = whole
            spec.filters = filters
            spec.orderBy = disjunctions.count > 1 ? order : orderBy
            spec.startAt = startAt
            spec.endAt = endAt
            try spec.validate()
            branches.append(spec)
        }
        whole.filters = []
        return ParsedQuery(branches: branches, order: order, requestedOrder: orderBy, offset: offset, limit: limit,
                           projection: projection, nearest: nearest)
    }

    func cursor(_ json: Value?, field: String, names: FirestoreJSON) throws(HTTPSError) -> QuerySpec.Cursor? {
        guard let json else { return nil }
        guard case .map(let c) = json else { throw .invalidArgument("\(field): must be an object") }
        var values: [Value] = []
        if case .array(let items)? = c["values"] {
            for (i, item) in items.enumerated() { values.append(try names.value(item, field: "\(field).values[\(i)]")) }
        }
        return QuerySpec.Cursor(values: values, before: c["before"]?.boolValue ?? false)
    }

    /// A filter tree in disjunctive normal form: OR of ANDs of field filters.
    func dnf(_ json: Value, field: String, names: FirestoreJSON) throws(HTTPSError) -> [[QuerySpec.Filter]] {
        guard case .map(let f) = json, f.count == 1, let (kind, body) = f.first else {
            throw .invalidArgument("\(field): a Filter sets exactly one of compositeFilter, fieldFilter, unaryFilter")
        }
        switch kind {
        case "compositeFilter":
            guard case .array(let children)? = body["filters"] else { throw .invalidArgument("\(field).compositeFilter.filters: is required") }
            let parts = try children.enumerated().map { i, child throws(HTTPSError) in
                try dnf(child, field: "\(field).compositeFilter.filters[\(i)]", names: names)
            }
            switch body["op"] {
            case .string("AND"), .int(1):
                var product: [[QuerySpec.Filter]] = [[]]
                for part in parts {
                    var next: [[QuerySpec.Filter]] = []
                    for left in product { for right in part { next.append(left + right) } }
                    guard next.count <= FirestoreREST.maxDisjunctions else { throw tooManyDisjunctions(field) }
                    product = next
                }
                return product
            case .string("OR"), .int(2):
                let sum = parts.flatMap { $0 }
                guard sum.count <= FirestoreREST.maxDisjunctions else { throw tooManyDisjunctions(field) }
                return sum.isEmpty ? [[]] : sum
            case let op: throw .invalidArgument("\(field).compositeFilter.op: '\(op.map { "\($0)" } ?? "missing")' is not AND or OR")
            }
        case "fieldFilter":
            let path = try FirestoreJSON.fieldReference(body["field"], field: field + ".fieldFilter.field")
            guard let raw = body["value"] else { throw .invalidArgument("\(field).fieldFilter.value: is required") }
            let value = try names.value(raw, field: field + ".fieldFilter.value")
            if path.isDocumentID {
                // __name__ compares with document references only (a list of them for IN and NOT_IN).
                let operands = value.arrayValue ?? [value]
                guard operands.allSatisfy({ if case .reference = $0 { true } else { false } }) else {
                    throw .invalidArgument("__key__ filter value must be a Key")
                }
            }
            let op: QuerySpec.Operator
            switch body["op"] {
            case .string("LESS_THAN"), .int(1): op = .lessThan
            case .string("LESS_THAN_OR_EQUAL"), .int(2): op = .lessThanOrEqual
            case .string("GREATER_THAN"), .int(3): op = .greaterThan
            case .string("GREATER_THAN_OR_EQUAL"), .int(4): op = .greaterThanOrEqual
            case .string("EQUAL"), .int(5): op = .equal
            case .string("NOT_EQUAL"), .int(6): op = .notEqual
            case .string("ARRAY_CONTAINS"), .int(7): op = .arrayContains
            case .string("IN"), .int(8): op = .in
            case .string("ARRAY_CONTAINS_ANY"), .int(9): op = .arrayContainsAny
            case .string("NOT_IN"), .int(10): op = .notIn
            case let other: throw .invalidArgument("\(field).fieldFilter.op: '\(other.map { "\($0)" } ?? "missing")' is not a field filter operator")
            }
            // A field filter's == or != with null matches nothing, as in Firestore (IS_NULL and
            // IS_NOT_NULL, which the SDKs send for == null and != null, are unary filters): no branch.
            if value == .null && (op == .equal || op == .notEqual) { return [] }
            // NaN in a field filter equals nothing, as in Firestore (IS_NAN and IS_NOT_NAN do the
            // NaN matching): == NaN matches no document, != NaN every one whose field is not null
            // (as != anything), and NaN in an IN or NOT_IN list stands for nothing.
            func isNaN(_ v: Value) -> Bool { if case .double(let d) = v { d.isNaN } else { false } }
            // A range on null or NaN matches nothing either (and so orders nothing: Firestore
            // takes such a query whatever its order).
            if [.lessThan, .lessThanOrEqual, .greaterThan, .greaterThanOrEqual].contains(op) && (value == .null || isNaN(value)) { return [] }
            switch op {
            case .equal where isNaN(value): return []
            case .notEqual where isNaN(value): return [[QuerySpec.Filter(path, .notEqual, .null)]]
            case .in, .notIn:
                guard case .array(let list) = value, list.contains(where: isNaN) else { break }
                let kept = list.filter { !isNaN($0) }
                if kept.isEmpty { return op == .in ? [] : [[QuerySpec.Filter(path, .notEqual, .null)]] }
                return [[QuerySpec.Filter(path, op, .array(kept))]]
            default: break
            }
            return [[QuerySpec.Filter(path, op, value)]]
        case "unaryFilter":
            let path = try FirestoreJSON.fieldReference(body["field"], field: field + ".unaryFilter.field")
            switch body["op"] {
            case .string("IS_NAN"), .int(2): return [[QuerySpec.Filter(path, .equal, .double(.nan))]]
            case .string("IS_NULL"), .int(3): return [[QuerySpec.Filter(path, .equal, .null)]]
            case .string("IS_NOT_NAN"), .int(4): return [[QuerySpec.Filter(path, .notEqual, .double(.nan))]]
            case .string("IS_NOT_NULL"), .int(5): return [[QuerySpec.Filter(path, .notEqual, .null)]]
            case let other: throw .invalidArgument("\(field).unaryFilter.op: '\(other.map { "\($0)" } ?? "missing")' is not IS_NAN, IS_NULL, IS_NOT_NAN or IS_NOT_NULL")
            }
        default:
            throw .invalidArgument("\(field): unknown filter kind '\(kind)'")
        }
    }

    /// How many times each filter operator appears anywhere in a filter tree (field and unary
    /// filters alike), and whether it has an OR.
    static func filterOperators(_ json: Value) -> (ops: [String: Int], hasOR: Bool) {
        var ops: [String: Int] = [:], hasOR = false
        func walk(_ f: Value, _ depth: Int) {
            guard depth < 64, case .map(let m) = f else { return }
            if case .map(let body)? = m["fieldFilter"] {
                switch body["op"] {
                case .string(let s)?: ops[s, default: 0] += 1
                case .int(let n)?: if let name = [6: "NOT_EQUAL", 8: "IN", 9: "ARRAY_CONTAINS_ANY", 10: "NOT_IN"][n] { ops[name, default: 0] += 1 }
                default: break
                }
            }
            if case .map(let body)? = m["unaryFilter"] {
                switch body["op"] {
                case .string(let s)?: ops[s, default: 0] += 1
                case .int(let n)?: if let name = [4: "IS_NOT_NAN", 5: "IS_NOT_NULL"][n] { ops[name, default: 0] += 1 }
                default: break
                }
            }
            if case .map(let body)? = m["compositeFilter"] {
                if body["op"] == .string("OR") || body["op"] == .int(2) { hasOR = true }
                for child in body["filters"]?.arrayValue ?? [] { walk(child, depth + 1) }
            }
        }
        walk(json, 0)
        return (ops, hasOR)
    }

    func tooManyDisjunctions(_ field: String) -> HTTPSError {
        .invalidArgument("\(field): the filter has more than \(FirestoreREST.maxDisjunctions) disjunctions in disjunctive normal form")
    }

    /// Runs a parsed query (in a transaction when `txn` is set): every branch, merged, offset,
    /// limited. `profiled` also adds up what the branches read (Query Explain with `analyze`).
    func execute(_ query: ParsedQuery, txn: UInt64?, caller: FirestoreCaller?, profiled: Bool = false) async throws -> (docs: [StoredDocument], skipped: Int, profile: QueryProfile?) {
        var results: [[StoredDocument]] = []
        var profile: QueryProfile? = profiled ? QueryProfile() : nil
        let needed = query.limit.map { $0.addingReportingOverflow(query.offset).overflow ? Int.max : $0 + query.offset }
        for var spec in query.branches {
            spec.limit = needed
            let (found, cost): ([StoredDocument], QueryProfile?)
            if let txn {
                (found, cost) = try await store.transactions.query(txn, spec, caller: caller.map(owner), profiled: profiled)
            } else if profiled {
                (found, cost) = try await store.profiledQuery(spec)
            } else {
                (found, cost) = (try await store.query(spec), nil)
            }
            results.append(found)
            if let cost { profile?.add(cost) }
        }
        var docs = results.count == 1 ? results[0] : DocumentStore.merged(results, order: query.order)
        let skipped = min(query.offset, docs.count)
        docs.removeFirst(skipped)
        if let limit = query.limit, docs.count > limit { docs.removeLast(docs.count - limit) }
        return (docs, skipped, profile)
    }

    /// The plan of every branch, not run (Query Explain without `analyze`).
    func planSummary(_ query: ParsedQuery) async throws -> QueryProfile {
        var profile = QueryProfile()
        for var spec in query.branches {
            spec.limit = query.limit.map { $0.addingReportingOverflow(query.offset).overflow ? Int.max : $0 + query.offset }
            profile.add(try await store.planSummary(spec))
        }
        return profile
    }

    /// The rules' check of a query, branch by branch: each as the client asked, with its limit,
    /// offset and `orderBy` as sent (not the order Firestore adds for inequalities and
    /// aggregations), as `request.query` shows them.
    func authorize(_ query: ParsedQuery, for caller: FirestoreCaller) throws {
        for spec in query.branches {
            var checked = spec
            checked.limit = query.nearest?.limit ?? query.limit
            checked.orderBy = query.requestedOrder
            try access.authorize(caller, .list(checked, offset: query.offset), reads: .single)
        }
    }

    func runQuery(_ call: Call, parent: DocumentPath?) async throws -> Value {
        let body = try call.body()
        let query = try parseQuery(body["structuredQuery"], parent: parent, names: call.names)
        // Authorized before a transaction begins or reads anything.
        try authorize(query, for: call.caller)
        let explain = try FirestoreREST.explainOptions(body, caller: call.caller)
        let (txn, began) = try readTransaction(body, for: call.caller)
        if explain == false { return try await planOnly(query, txn: txn, began: began, caller: call.caller) }
        let started = ContinuousClock.now
        var (docs, skipped, profile) = try await execute(query, txn: txn, caller: call.caller, profiled: explain == true)
        var vectorEntries: Int?
        if let nearest = query.nearest { (docs, vectorEntries) = nearest.nearest(docs) }
        let elapsed = ContinuousClock.now - started
        let readTime = Value.string(store.clock.now().rfc3339)
        var out: [Value] = docs.map { doc in
            var fields = doc.fields
            if let projection = query.projection { fields = FirestoreJSON.project(fields, projection) }
            return ["document": call.names.document(StoredDocument(path: doc.path, fields: fields, createTime: doc.createTime, updateTime: doc.updateTime)),
                    "readTime": readTime]
        }
        if out.isEmpty { out.append(["readTime": readTime]) }
        if skipped > 0, case .map(var first) = out[0] {
            first["skippedResults"] = .int(Int64(skipped))
            out[0] = .map(first)
        }
        if began, let txn, case .map(var first) = out[0] {
            first["transaction"] = .string(FirestoreREST.transactionBytes(txn))
            out[0] = .map(first)
        }
        if let profile, case .map(var last) = out[out.count - 1] {
            // Sent once, with the last response, as Firestore sends it. Billed: every document
            // returned or skipped by the offset, and one read when there are none; a vector
            // search adds one read per hundred vectors compared.
            let documents = docs.count + skipped
            let vectorReads = vectorEntries.map { ($0 + 99) / 100 } ?? 0
            last["explainMetrics"] = FirestoreREST.explainMetrics(profile, execution: .init(
                resultsReturned: docs.count, duration: elapsed, documentsBillable: documents, indexEntriesBillable: 0,
                vectorEntriesBillable: vectorEntries, readOperations: max(documents + vectorReads, 1)))
            out[out.count - 1] = .map(last)
        }
        // The last response says the stream is complete, as Firestore's (RunQueryResponse.done).
        if case .map(var last) = out[out.count - 1] {
            last["done"] = true
            out[out.count - 1] = .map(last)
        }
        return .array(out)
    }

    /// What Query Explain reports of a run (`ExecutionStats`).
    struct ExplainExecution {
        var resultsReturned: Int
        var duration: Duration
        var documentsBillable: Int
        var indexEntriesBillable: Int
        /// A vector search's vectors compared (nil for other queries).
        var vectorEntriesBillable: Int? = nil
        var readOperations: Int
    }

    /// Query Explain without `analyze`: one response with the plan, and the transaction when the
    /// request began one. A transaction named is checked as a read through it would be.
    func planOnly(_ query: ParsedQuery, txn: UInt64?, began: Bool, caller: FirestoreCaller) async throws -> Value {
        do {
            if let txn, !began { try store.transactions.check(txn, caller: owner(caller)) }
            var only: [String: Value] = ["explainMetrics": FirestoreREST.explainMetrics(try await planSummary(query), execution: nil)]
            if began, let txn { only["transaction"] = .string(FirestoreREST.transactionBytes(txn)) }
            return [.map(only)]
        } catch {
            if began, let txn { store.transactions.rollback(txn) }
            throw error
        }
    }

    /// `explainOptions` of runQuery and runAggregationQuery: nil without one, else whether the
    /// query is to be run too (`analyze`; planned only by default). Admin only: Firestore offers
    /// Query Explain to its server client libraries, and its plans and counts describe documents
    /// a client's rules may not let it read (how many match a filter, across every user).
    static func explainOptions(_ body: [String: Value], caller: FirestoreCaller) throws(HTTPSError) -> Bool? {
        switch body["explainOptions"] {
        case nil, .null?: return nil
        case .map(let options)?:
            guard caller.isAdmin else {
                throw HTTPSError(.permissionDenied, "Missing or insufficient permissions. (Query Explain is for the admin token only, as Firestore offers it to its server client libraries)")
            }
            for key in options.keys where key != "analyze" { throw .invalidArgument("explainOptions: unknown field '\(key)'") }
            switch options["analyze"] {
            case nil, .null?: return false
            case .bool(let analyze)?: return analyze
            case let other?: throw .invalidArgument("explainOptions.analyze: must be a boolean (got \(other.typeName))")
            }
        case let other?: throw .invalidArgument("explainOptions: must be an object (got \(other.typeName))")
        }
    }

    /// `ExplainMetrics` in Firestore's JSON (https://firebase.google.com/docs/firestore/reference/rest/v1/ExplainMetrics):
    /// the plan's indexes, and with a run its statistics. Debug statistics use the keys of
    /// Firestore's report (https://firebase.google.com/docs/firestore/reference/query-explain-report-reference),
    /// with Hearth's own counts: the rows its scans stepped and the documents it decoded.
    static func explainMetrics(_ profile: QueryProfile, execution: ExplainExecution?) -> Value {
        let indexes: [Value] = profile.indexesUsed.map { ["query_scope": .string($0.queryScope), "properties": .string($0.properties)] }
        var metrics: [String: Value] = ["planSummary": ["indexesUsed": .array(indexes)]]
        if let execution {
            // A Duration in JSON: seconds with nine fractional digits, then "s" ("0.000412000s").
            let (seconds, attoseconds) = execution.duration.components
            let nanos = String(attoseconds / 1_000_000_000)
            var billing: [String: Value] = [
                "documents_billable": .string(String(execution.documentsBillable)),
                "index_entries_billable": .string(String(execution.indexEntriesBillable)),
                "small_ops": "0",
                "min_query_cost": .string(execution.documentsBillable + execution.indexEntriesBillable == 0 ? "1" : "0"),
            ]
            if let vectors = execution.vectorEntriesBillable { billing["knn_vector_index_entries_billable"] = .string(String(vectors)) }
            metrics["executionStats"] = [
                "resultsReturned": .string(String(execution.resultsReturned)),
                "executionDuration": .string("\(seconds).\(String(repeating: "0", count: max(9 - nanos.count, 0)))\(nanos)s"),
                "readOperations": .string(String(execution.readOperations)),
                "debugStats": [
                    "index_entries_scanned": .string(String(profile.indexEntriesScanned)),
                    "documents_scanned": .string(String(profile.documentsScanned)),
                    "billing_details": .map(billing),
                ],
            ]
        }
        return .map(metrics)
    }

    // MARK: partitions

    /// partitionQuery: split points for reading a collection group in parallel. Each returned
    /// cursor names a document; running the query up to the first, between each two, and from the
    /// last covers every result once (https://firebase.google.com/docs/firestore/reference/rest/v1/projects.databases.documents/partitionQuery).
    /// As in Firestore, the query must be a collection group ordered by name alone, with no
    /// filters, cursors, limit, offset or projection; fewer cursors than asked come back when there
    /// are too few documents, evenly spaced among them. A page token carries how many cursors were
    /// given and the last one, so a later page only gives cursors after it: pages stay in order
    /// even when documents come and go between them (Python's `get_partitions` does not sort).
    /// Admin only, like the Admin SDKs that call it (`getPartitions`, `get_partitions`).
    func partitionQuery(_ call: Call, parent: DocumentPath?) async throws -> Value {
        guard call.caller.isAdmin else {
            throw HTTPSError(.permissionDenied, "Missing or insufficient permissions. (partitionQuery is for the admin token only)")
        }
        let body = try call.body()
        if body["readTime"] != nil { throw FirestoreREST.readTimeRefused }
        for key in body.keys where !["structuredQuery", "partitionCount", "pageToken", "pageSize"].contains(key) {
            throw HTTPSError(.invalidArgument, "unknown field '\(key)'")
        }
        guard let countJSON = body["partitionCount"] else { throw HTTPSError(.invalidArgument, "partitionCount: is required") }
        let asked = try FirestoreJSON.int64(countJSON, field: "partitionCount")
        guard asked > 0 else { throw HTTPSError(.invalidArgument, "partitionCount: must be positive (got \(asked))") }
        let pageSize = try body["pageSize"].map { try FirestoreJSON.int32($0, field: "pageSize") } ?? 0
        if case .map(let q)? = body["structuredQuery"] {
            for key in ["where", "startAt", "endAt", "limit", "offset", "select", "findNearest"] where q[key] != nil {
                throw HTTPSError(.invalidArgument, "structuredQuery.\(key): a partition query cannot have one (a collection group ordered by __name__ only)")
            }
        }
        let query = try parseQuery(body["structuredQuery"], parent: parent, names: call.names)
        guard let spec = query.branches.first, query.branches.count == 1, spec.allDescendants, !spec.isKindless else {
            throw HTTPSError(.invalidArgument, "structuredQuery.from: a partition query reads a collection group (a collectionId with allDescendants)")
        }
        guard spec.orderBy.allSatisfy({ $0.field.isDocumentID && $0.direction == .ascending }) else {
            throw HTTPSError(.invalidArgument, "structuredQuery.orderBy: a partition query is ordered by __name__ ascending only")
        }
        // The page token: "<cursors given so far>\n<the last one's path>".
        var given = 0
        var after: DocumentPath?
        switch body["pageToken"] {
        case nil, .null, .string(""): break
        case .string(let token):
            guard let bytes = Base64.decodeURL(token), let text = String(validating: bytes, as: UTF8.self),
                  let newline = text.firstIndex(of: "\n"), let n = Int(text[..<newline]), n > 0, Int64(n) < asked,
                  let last = try? DocumentPath(String(text[text.index(after: newline)...])) else {
                throw HTTPSError(.invalidArgument, "pageToken: not a page token this server issued")
            }
            given = n
            after = last
        case let other?: throw HTTPSError(.invalidArgument, "pageToken: must be a string (got \(other.typeName))")
        }
        let names = try await store.documentNames(spec)
        // k split points make k + 1 partitions, each holding at least one document.
        let splits = Int(min(asked, Int64(max(names.count - 1, 0))))
        var points: [DocumentPath] = []
        let room = Int(min(asked - Int64(given), Int64(pageSize > 0 ? pageSize : Int.max)))
        for i in stride(from: 1, through: splits, by: 1) where points.count < room {
            let name = names[i * names.count / (splits + 1)]
            if let after, !(after < name) { continue }
            points.append(name)
        }
        var out: [String: Value] = ["partitions": .array(points.map { ["values": [["referenceValue": .string(call.names.name($0))]]] })]
        let total = given + points.count
        if let last = points.last, Int64(total) < asked, last != names[splits * names.count / (splits + 1)] {
            out["nextPageToken"] = .string(Base64.encodeURL(Array("\(total)\n\(last.description)".utf8)))
        }
        return .map(out)
    }

    // MARK: aggregation

    enum Aggregation {
        case count(upTo: Int?)
        case sum(FieldPath)
        case average(FieldPath)
    }

    func runAggregationQuery(_ call: Call, parent: DocumentPath?) async throws -> Value {
        let body = try call.body()
        guard case .map(let aggregationQuery)? = body["structuredAggregationQuery"] else {
            throw HTTPSError(.invalidArgument, "structuredAggregationQuery: is required")
        }
        var query = try parseQuery(aggregationQuery["structuredQuery"], parent: parent, names: call.names)
        if query.nearest != nil {
            throw HTTPSError(.invalidArgument, "structuredAggregationQuery.structuredQuery.findNearest: an aggregation cannot run a vector search")
        }
        guard case .array(let list)? = aggregationQuery["aggregations"], !list.isEmpty else {
            throw HTTPSError(.invalidArgument, "structuredAggregationQuery.aggregations: at least one aggregation is required")
        }
        guard list.count <= 5 else { throw HTTPSError(.invalidArgument, "structuredAggregationQuery.aggregations: at most 5 aggregations (got \(list.count))") }
        var aggregations: [(alias: String, kind: Aggregation)] = []
        for (i, item) in list.enumerated() {
            let field = "structuredAggregationQuery.aggregations[\(i)]"
            let alias = item["alias"]?.stringValue ?? "field_\(i + 1)"
            guard !aggregations.contains(where: { $0.alias == alias }) else { throw HTTPSError(.invalidArgument, "\(field).alias: '\(alias)' is used twice") }
            if let count = item["count"] {
                let upTo = try count["upTo"].map { try FirestoreJSON.int64($0["value"] ?? $0, field: field + ".count.upTo") }
                if let upTo, upTo < 1 { throw HTTPSError(.invalidArgument, "\(field).count.upTo: must be at least 1") }
                aggregations.append((alias, .count(upTo: upTo.map { Int(clamping: $0) })))
            } else if let sum = item["sum"] {
                aggregations.append((alias, .sum(try FirestoreREST.aggregatedField(sum["field"], field: field + ".sum.field"))))
            } else if let avg = item["avg"] {
                aggregations.append((alias, .average(try FirestoreREST.aggregatedField(avg["field"], field: field + ".avg.field"))))
            } else {
                throw HTTPSError(.invalidArgument, "\(field): set one of count, sum, avg")
            }
        }
        query = try FirestoreREST.orderedByAggregatedFields(query, aggregations.compactMap { a -> FieldPath? in
            switch a.kind {
            case .sum(let path), .average(let path): return path
            case .count: return nil
            }
        })
        try authorize(query, for: call.caller)
        let explain = try FirestoreREST.explainOptions(body, caller: call.caller)
        let (txn, began) = try readTransaction(body, for: call.caller)
        if explain == false { return try await planOnly(query, txn: txn, began: began, caller: call.caller) }
        let started = ContinuousClock.now
        let (docs, _, profile) = try await execute(query, txn: txn, caller: call.caller, profiled: explain == true)
        let elapsed = ContinuousClock.now - started
        var fields: [String: Value] = [:]
        for (alias, kind) in aggregations {
            switch kind {
            case .count(let upTo): fields[alias] = .int(Int64(min(docs.count, upTo ?? Int.max)))
            case .sum(let path): fields[alias] = FirestoreREST.sum(docs.compactMap { Value.map($0.fields).value(at: path) })
            case .average(let path):
                let numbers = docs.compactMap { Value.map($0.fields).value(at: path)?.doubleValue }
                fields[alias] = numbers.isEmpty ? .null : .double(numbers.reduce(0, +) / Double(numbers.count))
            }
        }
        var result: [String: Value] = ["result": ["aggregateFields": call.names.fieldsJSON(fields)], "readTime": .string(store.clock.now().rfc3339)]
        if began, let txn { result["transaction"] = .string(FirestoreREST.transactionBytes(txn)) }
        if let profile {
            // Firestore bills an aggregation by the index entries it aggregates, one read per
            // thousand, at least one; counts that all stop at `upTo` read no further.
            var entries = docs.count
            let caps = aggregations.compactMap { if case .count(let upTo?) = $0.kind { upTo } else { nil } }
            if caps.count == aggregations.count, let cap = caps.max() { entries = min(entries, cap) }
            result["explainMetrics"] = FirestoreREST.explainMetrics(profile, execution: .init(
                resultsReturned: 1, duration: elapsed, documentsBillable: 0, indexEntriesBillable: entries,
                readOperations: max((entries + 999) / 1000, 1)))
        }
        return .array([.map(result)])
    }

    /// The field of a sum or an average; Firestore cannot aggregate document names.
    static func aggregatedField(_ json: Value?, field: String) throws(HTTPSError) -> FieldPath {
        let path = try FirestoreJSON.fieldReference(json, field: field)
        if path.isDocumentID { throw .invalidArgument("\(field): aggregations are not supported for the property __name__") }
        return path
    }

    /// Firestore computes a sum or an average from its field's index, as the emulator shows: the
    /// query runs as if ordered by each aggregated field too (in the fields' order, in the
    /// direction of its last order, as for inequality filters), after its own order and before
    /// `__name__`. So a document without one of those fields (of whatever value) is left out of
    /// every aggregation of the query, its count included ("queries with multiple aggregations
    /// include only the documents that contain all the fields in each aggregation"), and offset
    /// and limit count documents in that order.
    static func orderedByAggregatedFields(_ query: ParsedQuery, _ fields: [FieldPath]) throws(HTTPSError) -> ParsedQuery {
        let extra = Set(fields).subtracting(query.order.map(\.field)).sorted()
        if extra.isEmpty { return query }
        // An order by __name__ as sent (as the SDKs send it to page with a cursor) leaves no place
        // for them: Firestore refuses, in these words (its emulator, side by side).
        if query.requestedOrder.contains(where: { $0.field.isDocumentID }) {
            throw .invalidArgument("This query requires an index that has fields [\(extra.map(\.description).joined(separator: ", "))] after __name__ "
                + "and Firestore does not currently support such an index. Please try the query again with additional ordering on those fields.")
        }
        var out = query
        let name = query.order.last(where: { $0.field.isDocumentID }) ?? QuerySpec.Order(.documentID, .ascending)
        out.order = query.order.filter { !$0.field.isDocumentID } + extra.map { QuerySpec.Order($0, name.direction) } + [name]
        for i in out.branches.indices {
            out.branches[i].orderBy = out.order
            try out.branches[i].validate()
        }
        return out
    }

    /// Firestore's sum: an integer while every value is one and the total fits in 64 bits (the
    /// running total may leave that range on the way, as the emulator's does), else a double;
    /// values that are not numbers are skipped.
    static func sum(_ values: [Value]) -> Value {
        var integer: Int128 = 0
        var double = 0.0
        var isDouble = false
        for v in values {
            switch v {
            case .int(let i): integer += Int128(i)
            case .double(let d): isDouble = true; double += d
            default: continue
            }
        }
        if !isDouble, let exact = Int64(exactly: integer) { return .int(exact) }
        return .double(Double(integer) + double)
    }
}
