import Foundation
import HearthModel
@testable import HearthStore
import Testing

/// Randomized differential testing: a seeded generator builds documents with values of mixed
/// types (many ties, missing fields, nested fields, arrays) and many random queries (filters,
/// orders, limits, cursors, collection groups); the engine must agree with `ReferenceQuery` on
/// every one. A failure prints the seed and the query, and replays exactly.
@Suite("Query differential testing", .timeLimit(.minutes(3)))
struct QueryDifferentialTests {
    struct Generator {
        var rng: SplitMix64

        mutating func int(_ range: ClosedRange<Int>) -> Int { Int.random(in: range, using: &rng) }
        mutating func chance(_ p: Double) -> Bool { Double.random(in: 0..<1, using: &rng) < p }
        mutating func pick<T>(_ items: [T]) -> T { items[int(0...(items.count - 1))] }

        static let scalars: [Value] = [
            nil, false, true, .double(.nan), .double(-.infinity), -1, .double(-0.0), 0, 0.5, 1, 1.0, 2, 3, 1e10,
            .int(Int64.max), .double(.infinity), .timestamp(Timestamp(seconds: 0)), .timestamp(Timestamp(seconds: 1)),
            "", "a", "b", "ab", .bytes([]), .bytes([1]), .reference("c/d1"), .reference("items/x"),
            .geoPoint(GeoPoint(latitude: 0, longitude: 0)), .geoPoint(GeoPoint(latitude: 1, longitude: -1)),
        ]

        mutating func value() -> Value {
            switch int(0...9) {
            case 0: return .array((0..<int(0...3)).map { _ in pick(Generator.scalars) })
            case 1: return pick([.map([:]), ["k": 1], ["k": 2], ["k": "a"], ["k": 1, "l": nil]])
            default: return pick(Generator.scalars)
            }
        }

        mutating func fields() -> [String: Value] {
            var f: [String: Value] = [:]
            for name in ["a", "b", "c"] where chance(0.85) { f[name] = value() }
            if chance(0.8) { f["m"] = chance(0.9) ? ["x": value()] : value() }
            if chance(0.7) { f["tags"] = .array((0..<int(0...4)).map { _ in pick(Generator.scalars) }) }
            return f
        }

        static let fields = ["a", "b", "c", "m.x", "tags"]

        /// A valid random query over `docs` (cursor values are often taken from a document, so that
        /// they land exactly on ties).
        mutating func query(group: Bool, docs: [StoredDocument]) throws -> QuerySpec {
            var q: QuerySpec
            if group {
                q = QuerySpec(parent: chance(0.3) ? try DocumentPath("p/1") : nil, collectionID: "items", allDescendants: true)
            } else {
                q = QuerySpec(collectionID: "items")
            }
            var arrayOps = 0, disjunctions = 1, inLike = 0, notIns = 0, notEquals = 0
            for _ in 0..<int(0...3) {
                let onName = chance(0.12)
                let f = onName ? FieldPath.documentID : try FieldPath(pick(Generator.fields))
                var ops = QuerySpec.Operator.allCases
                if onName { ops.removeAll { $0 == .arrayContains || $0 == .arrayContainsAny } }
                let op = pick(ops)
                switch op {
                case .arrayContains, .arrayContainsAny: if arrayOps > 0 { continue }
                default: break
                }
                // Firestore's rules: 'not-in' alone among the disjunctive filters; 'in' and
                // 'array-contains-any' together up to 30 disjunctions (checked once the list is drawn).
                if op == .notIn && inLike > 0 { continue }
                if (op == .in || op == .arrayContainsAny) && notIns > 0 { continue }
                if [.notEqual, .notIn].contains(op) && notEquals > 0 { continue }
                let operand: Value
                if onName {
                    let one = { (g: inout Generator) -> Value in
                        let d = g.pick(docs)
                        return group || g.chance(0.5) ? .reference(d.path.description) : .string(d.path.id)
                    }
                    operand = [.in, .notIn].contains(op) ? .array((0..<int(1...4)).map { _ in one(&self) }) : one(&self)
                } else if [.in, .notIn, .arrayContainsAny].contains(op) {
                    operand = .array((0..<int(1...(op == .notIn ? 4 : 6))).map { _ in value() })
                } else {
                    operand = value()
                }
                if op == .in || op == .arrayContainsAny {
                    let n = operand.arrayValue?.count ?? 1
                    if disjunctions * n > QuerySpec.maxDisjunctionValues { continue }
                    disjunctions *= n
                    inLike += 1
                }
                if op == .arrayContains || op == .arrayContainsAny { arrayOps += 1 }
                if op == .notIn { notIns += 1 }
                if op == .notEqual || op == .notIn { notEquals += 1 }
                q.filters.append(.init(f, op, operand))
            }
            var used: Set<FieldPath> = []
            for _ in 0..<int(0...2) {
                let f = chance(0.2) ? FieldPath.documentID : try FieldPath(pick(Generator.fields))
                guard used.insert(f).inserted else { continue }
                q.orderBy.append(.init(f, chance(0.5) ? .ascending : .descending))
            }
            // Firestore refuses an explicit __name__ order followed by any other (an implicit
            // inequality order included), and an equality on __name__ as the only key constraint
            // beside inequalities on fields: leave those out.
            if let key = ReferenceQuery.normalizedOrder(q).firstIndex(where: { $0.field.isDocumentID }),
               key != ReferenceQuery.normalizedOrder(q).count - 1 {
                q.orderBy.removeAll { $0.field.isDocumentID }
            }
            let inequalities = q.filters.filter { $0.op.isInequality }
            if inequalities.contains(where: { !$0.field.isDocumentID }) && !inequalities.contains(where: { $0.field.isDocumentID }) {
                q.filters.removeAll { $0.field.isDocumentID && ($0.op == .equal || $0.op == .in) }
            }
            if chance(0.6) { q.limit = int(0...12) }
            if q.limit != nil && !q.orderBy.isEmpty && chance(0.4) { q.limitToLast = true }
            let order = ReferenceQuery.normalizedOrder(q)
            for which in 0..<2 where chance(0.35) {
                let n = int(1...order.count)
                var values: [Value]
                let source = pick(docs)
                if chance(0.7), order.allSatisfy({ $0.field.isDocumentID || ReferenceQuery.value(source, $0.field) != nil }) {
                    values = order.prefix(n).map { o in
                        o.field.isDocumentID ? (group || chance(0.5) ? .reference(source.path.description) : .string(source.path.id))
                            : ReferenceQuery.value(source, o.field)!
                    }
                } else {
                    values = order.prefix(n).map { o in
                        o.field.isDocumentID ? .reference(pick(docs).path.description) : value()
                    }
                }
                let cursor = QuerySpec.Cursor(values: values, before: chance(0.5))
                if which == 0 { q.startAt = cursor } else { q.endAt = cursor }
            }
            return q
        }
    }

    static func seed(_ store: DocumentStore, rng: inout Generator, count: Int) async throws -> [StoredDocument] {
        let parents = ["", "p/1/", "p/2/", "q/1/", "p/1/items/i3/"]
        var writes: [DocumentWrite] = []
        for i in 0..<count {
            let parent = i < count / 2 ? "" : rng.pick(parents)
            writes.append(.set(try DocumentPath("\(parent)items/i\(i)"), rng.fields()))
            if writes.count == 500 {
                try await store.commit(writes)
                writes = []
            }
        }
        try await store.commit(writes)
        try await store.commit([.create(try DocumentPath("other/x"), ["a": 1]), .create(try DocumentPath("p/1/itemz/y"), ["a": 1])])
        return try await store.query(QuerySpec(collectionID: "items", allDescendants: true))
    }

    @Test("random queries agree with the reference evaluation", arguments: [1 as UInt64, 2, 3])
    func differential(seed: UInt64) async throws {
        try await withStore { store, _ in
            var rng = Generator(rng: SplitMix64(seed: seed))
            let docs = try await Self.seed(store, rng: &rng, count: 300)
            #expect(docs.count == 300)
            var disagreements = 0
            var nonEmpty = 0
            for i in 0..<700 {
                let group = i % 4 == 3
                let q = try rng.query(group: group, docs: docs)
                let expected = ReferenceQuery.run(q, over: docs)
                let actual: [DocumentPath]
                do {
                    actual = try await store.query(q).map(\.path)
                } catch {
                    Issue.record("seed \(seed) query \(i) threw \(error): \(q)")
                    disagreements += 1
                    continue
                }
                if !expected.isEmpty { nonEmpty += 1 }
                if actual != expected {
                    disagreements += 1
                    if disagreements <= 5 {
                        Issue.record("""
                            seed \(seed) query \(i) disagrees
                              query:    \(q)
                              expected: \(expected.map(\.description))
                              actual:   \(actual.map(\.description))
                            """)
                    }
                }
                if i % 5 == 0 {
                    var unlimited = q
                    unlimited.limit = nil
                    unlimited.limitToLast = false
                    let count = try await store.count(unlimited)
                    #expect(count == ReferenceQuery.run(unlimited, over: docs).count, "seed \(seed) count of query \(i)")
                }
            }
            #expect(disagreements == 0, "seed \(seed)")
            #expect(nonEmpty > 200, "the generator should produce mostly useful queries")
        }
    }

    /// A random query that carries an equality-type filter matching most documents, ordered first
    /// by a field (for `largeCollection`).
    static func broadQuery(_ rng: inout Generator, _ i: Int, docs: [StoredDocument]) throws -> QuerySpec {
        let k = try FieldPath("k"), tags = try FieldPath("tags")
        var q = try rng.query(group: false, docs: docs)
        q.filters.removeAll { $0.field == k || [.arrayContains, .arrayContainsAny, .in, .notIn].contains($0.op) }
        switch i % 3 {
        case 0: q.filters.append(.init(k, .equal, 1))
        case 1: q.filters.append(.init(k, .in, [1.0, "x"]))
        default: q.filters.append(.init(tags, .arrayContains, 1))
        }
        if q.orderBy.isEmpty || q.orderBy[0].field == k || q.orderBy[0].field.isDocumentID {
            q.orderBy.insert(.init(try FieldPath(rng.pick(["a", "b", "m.x"])), rng.chance(0.5) ? .ascending : .descending), at: 0)
            var seen: Set<FieldPath> = []
            q.orderBy = q.orderBy.filter { seen.insert($0.field).inserted }
            q.startAt = nil
            q.endAt = nil
        }
        if q.limit == nil { q.limit = rng.int(1...30) }
        // Removing inequality filters can shorten the normalized order: trim cursors to fit it.
        let n = ReferenceQuery.normalizedOrder(q).count
        for key in [\QuerySpec.startAt, \QuerySpec.endAt] {
            if var c = q[keyPath: key], c.values.count > n {
                c.values = Array(c.values.prefix(n))
                q[keyPath: key] = c
            }
        }
        return q
    }

    static func broadDocument(_ rng: inout Generator) -> [String: Value] {
        var fields = rng.fields()
        let common: [Value] = [.int(1), .double(1.0), .int(1), .int(1)]
        let rare: [Value] = ["x", [1, "x"], ["x"], 2]
        fields["k"] = rng.chance(0.8) ? rng.pick(common) : rng.pick(rare)
        let extra: [Value] = (0..<rng.int(0...2)).map { _ in rng.pick(Generator.scalars) }
        fields["tags"] = rng.chance(0.85) ? Value.array([Value.int(1)] + extra) : rng.value()
        return fields
    }

    /// Over 1000 documents match the common equality filters, so the engine walks the order index
    /// and checks equality through the field index (`orderScan` with index lookups) instead of
    /// materializing the matches.
    @Test("random queries agree with the reference on a collection large enough for ordered index scans")
    func largeCollection() async throws {
        try await withStore { store, _ in
            var rng = Generator(rng: SplitMix64(seed: 7))
            for batch in 0..<3 {
                var writes: [DocumentWrite] = []
                for i in 0..<500 { writes.append(.set(try DocumentPath("items/i\(batch * 500 + i)"), Self.broadDocument(&rng))) }
                try await store.commit(writes)
            }
            let docs = try await store.query(QuerySpec(collectionID: "items"))
            #expect(docs.count == 1500)
            var orderScans = 0
            for i in 0..<250 {
                let q = try Self.broadQuery(&rng, i, docs: docs)
                if try await store.sqlite.explain(q).plan.hasPrefix("orderScan") { orderScans += 1 }
                let expected = ReferenceQuery.run(q, over: docs)
                let actual = try await store.query(q).map(\.path)
                #expect(actual == expected, "query \(i): \(q)")
            }
            #expect(orderScans > 100)
        }
    }

    @Test("random queries still agree after updates and deletes move documents around")
    func afterChurn() async throws {
        try await withStore { store, _ in
            var rng = Generator(rng: SplitMix64(seed: 42))
            var docs = try await Self.seed(store, rng: &rng, count: 200)
            for _ in 0..<4 {
                var writes: [DocumentWrite] = []
                for d in docs where rng.chance(0.3) {
                    switch rng.int(0...3) {
                    case 0: writes.append(.delete(d.path))
                    case 1: writes.append(.update(d.path, [(try FieldPath(rng.pick(Generator.fields)), rng.value())]))
                    case 2: writes.append(.merge(d.path, ["m": ["x": rng.value()]]))
                    default: writes.append(.set(d.path, rng.fields()))
                    }
                }
                try await store.commit(Array(writes.prefix(500)))
                docs = try await store.query(QuerySpec(collectionID: "items", allDescendants: true))
                for i in 0..<150 {
                    let q = try rng.query(group: i % 3 == 0, docs: docs)
                    let expected = ReferenceQuery.run(q, over: docs)
                    let actual = try await store.query(q).map(\.path)
                    #expect(actual == expected, "\(q)")
                }
            }
        }
    }
}
