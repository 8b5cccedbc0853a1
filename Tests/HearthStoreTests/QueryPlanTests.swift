import Foundation
import HearthModel
@testable import HearthStore
import Testing

/// The index scheme: every query runs from an index (the documents' primary key, or the field index
/// of order-preserving value keys), never by scanning a collection; ordered scans stream in index
/// order without sorting. The plans are printed so they can be read in the test log.
@Suite("Query plans use indexes", .timeLimit(.minutes(1)))
struct QueryPlanTests {
    static func seed(_ store: DocumentStore) async throws {
        let c = try coll("items")
        for batch in 0..<5 {
            try await store.commit(try (0..<500).map { i -> DocumentWrite in
                let n = batch * 500 + i
                return .create(try c.document(String(format: "d%05d", n)), [
                    "owner": n % 2 == 0 ? "alice" : .string("user\(n % 97)"),
                    "rank": .int(Int64(n % 50)), "score": .double(Double(n) / 7), "title": .string("t\(n)"),
                    "tags": n % 10 == 0 ? ["red", "blue"] : ["green"],
                    "meta": ["level": .int(Int64(n % 5))],
                ])
            })
        }
        try await store.commit([.create(try doc("other/x"), ["owner": "alice"])])
    }

    struct Case: Sendable, CustomTestStringConvertible {
        var name: String
        var spec: QuerySpec
        /// Whether the plan streams in the query's order (so it must not sort).
        var ordered: Bool
        var testDescription: String { name }
    }

    static func cases() throws -> [Case] {
        let items = try CollectionPath("items")
        func q(_ edit: (inout QuerySpec) throws -> Void) rethrows -> QuerySpec {
            var spec = QuerySpec(collection: items)
            try edit(&spec)
            return spec
        }
        let owner = try FieldPath("owner"), rank = try FieldPath("rank"), score = try FieldPath("score"), tags = try FieldPath("tags")
        return try [
            Case(name: "equality + order + limit (selective equality)", spec: q {
                $0.filters = [.init(owner, .equal, "user5")]; $0.orderBy = [.init(rank)]; $0.limit = 20 }, ordered: false),
            Case(name: "equality + order + limit (broad equality)", spec: q {
                $0.filters = [.init(owner, .equal, "alice")]; $0.orderBy = [.init(score, .descending)]; $0.limit = 20 }, ordered: true),
            Case(name: "range on the order field", spec: q {
                $0.filters = [.init(score, .greaterThan, 10), .init(score, .lessThanOrEqual, 100)]; $0.orderBy = [.init(score)]; $0.limit = 20 }, ordered: true),
            Case(name: "range with the implicit order", spec: q { $0.filters = [.init(rank, .lessThan, 3)] }, ordered: true),
            Case(name: "order only, descending", spec: q { $0.orderBy = [.init(try FieldPath("title"), .descending)]; $0.limit = 5 }, ordered: true),
            Case(name: "nested field order", spec: q { $0.orderBy = [.init(try FieldPath("meta.level"))]; $0.limit = 5 }, ordered: true),
            Case(name: "array-contains", spec: q { $0.filters = [.init(tags, .arrayContains, "red")] }, ordered: true),
            Case(name: "array-contains + order + limit", spec: q {
                $0.filters = [.init(tags, .arrayContains, "green")]; $0.orderBy = [.init(rank)]; $0.limit = 10 }, ordered: true),
            Case(name: "equality by name", spec: q { $0.filters = [.init(owner, .equal, "alice")]; $0.limit = 10 }, ordered: true),
            Case(name: "in", spec: q { $0.filters = [.init(owner, .in, ["user1", "user2", "user3"])] }, ordered: false),
            Case(name: "in + order", spec: q { $0.filters = [.init(owner, .in, ["user1", "user2"])]; $0.orderBy = [.init(score)] }, ordered: false),
            Case(name: "array-contains-any", spec: q { $0.filters = [.init(tags, .arrayContainsAny, ["red", "blue"])] }, ordered: false),
            Case(name: "name order", spec: q { $0.limit = 10 }, ordered: true),
            Case(name: "name order descending with a start cursor", spec: q {
                $0.orderBy = [.init(.documentID, .descending)]; $0.startAt = .init(values: ["d00900"], before: true); $0.limit = 10 }, ordered: true),
            Case(name: "__name__ ==", spec: q { $0.filters = [.init(.documentID, .equal, "d00042")] }, ordered: false),
            Case(name: "__name__ in", spec: q { $0.filters = [.init(.documentID, .in, ["d00001", "d00002"])] }, ordered: false),
            Case(name: "!= with the implicit order", spec: q { $0.filters = [.init(owner, .notEqual, "alice")]; $0.limit = 5 }, ordered: true),
            Case(name: "limitToLast", spec: q { $0.orderBy = [.init(score)]; $0.limit = 3; $0.limitToLast = true }, ordered: true),
        ]
    }

    @Test("representative queries use the primary key or the field index, never a scan", arguments: try cases())
    func plans(_ c: Case) async throws {
        try await withStore { store, _ in
            try await Self.seed(store)
            let (plan, details) = try await store.sqlite.explain(c.spec)
            print("PLAN \(c.name): \(plan)\n  " + details.joined(separator: "\n  "))
            #expect(!details.isEmpty)
            for line in details {
                #expect(!line.hasPrefix("SCAN"), "\(c.name): \(line)")
                if line.contains("TEMP B-TREE") {
                    // Only plans over a bounded set of index matches may sort (in, array-contains-any by name).
                    #expect(!c.ordered, "\(c.name): \(line)")
                } else {
                    #expect(line.contains("PRIMARY KEY") || line.contains("INDEX") || line.hasPrefix("CORRELATED"), "\(c.name): \(line)")
                }
            }
            #expect(details.contains { $0.hasPrefix("SEARCH") }, "\(c.name)")
            // And the plan gives the right answer.
            let all = try await store.query(QuerySpec(collection: try coll("items")))
            #expect(try await store.query(c.spec).map(\.path) == ReferenceQuery.run(c.spec, over: all), "\(c.name)")
        }
    }
}
