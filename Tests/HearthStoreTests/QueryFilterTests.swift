import Foundation
import HearthModel
@testable import HearthStore
import Testing

/// Every filter operator, on a top-level field and on a nested one, with Firestore's backend
/// semantics (the query docs and the SDKs' integration tests against the backend, e.g.
/// firebase-js-sdk `test/integration/api/query.test.ts` "can use != filters", "can use IN filters"):
/// range and equality filters are type-bracketed; `!=` and `not-in` need the field to exist and not
/// be null; `not-in` with null in its list matches nothing; range filters never match null or NaN
/// and match nothing when their value is null or NaN; null and NaN elements of `in` and
/// `array-contains-any` lists match nothing; a missing field never matches. Membership compares
/// numbers by value (1 matches 1.0) as Firestore's backend and indexes do.
@Suite("Query filters", .timeLimit(.minutes(1)))
struct QueryFilterTests {
    static let values: [(String, Value)] = [
        ("i1", 1), ("d1", 1.0), ("i2", 2), ("d25", 2.5), ("zero", 0), ("negz", .double(-0.0)), ("nan", .double(.nan)),
        ("ninf", .double(-.infinity)), ("null", nil), ("t", true), ("f", false), ("sa", "a"), ("sb", "b"), ("empty", ""),
        ("ts", .timestamp(Timestamp(seconds: 100))), ("by", .bytes([1])), ("ref", .reference("c/i1")),
        ("geo", .geoPoint(GeoPoint(latitude: 1, longitude: 2))), ("arr", [1, "a"]), ("arr2", [2, nil, 1.0]),
        ("arrEmpty", []), ("arrMap", [["k": 1]]), ("map", ["x": 1]),
    ]

    static var existing: [String] { values.map(\.0) }

    /// Stores every value under `v` and under `m.v`, plus a document without either.
    static func seed(_ store: DocumentStore) async throws {
        var writes: [DocumentWrite] = try values.map { id, v in .create(try doc("c/\(id)"), ["v": v, "m": ["v": v], "k": 1]) }
        writes.append(.create(try doc("c/missing"), ["other": 1, "m": ["w": 1], "k": 1]))
        writes.append(.create(try doc("c/mNotMap"), ["m": 5, "k": 1]))
        try await store.commit(writes)
    }

    static func except(_ ids: String...) -> [String] { existing.filter { !ids.contains($0) } }

    static let cases: [(QuerySpec.Operator, Value, [String])] = [
        (.equal, 1, ["d1", "i1"]),
        (.equal, 1.0, ["d1", "i1"]),
        (.equal, 0, ["negz", "zero"]),
        (.equal, .double(-0.0), ["negz", "zero"]),
        (.equal, .double(.nan), ["nan"]),
        (.equal, nil, ["null"]),
        (.equal, "a", ["sa"]),
        (.equal, "", ["empty"]),
        (.equal, false, ["f"]),
        (.equal, .bytes([1]), ["by"]),
        (.equal, .reference("c/i1"), ["ref"]),
        (.equal, .geoPoint(GeoPoint(latitude: 1, longitude: 2)), ["geo"]),
        (.equal, [1, "a"], ["arr"]),
        (.equal, [1.0, "a"], ["arr"]),
        (.equal, [], ["arrEmpty"]),
        (.equal, ["x": 1], ["map"]),
        (.equal, ["x": 1.0], ["map"]),
        (.equal, "1", []),
        (.notEqual, 1, except("i1", "d1", "null")),
        (.notEqual, nil, except("null")),
        (.notEqual, .double(.nan), except("nan", "null")),
        (.notEqual, "zzz", except("null")),
        (.lessThan, 2, ["d1", "i1", "negz", "ninf", "zero"]),
        (.lessThanOrEqual, 1, ["d1", "i1", "negz", "ninf", "zero"]),
        (.greaterThan, 1, ["d25", "i2"]),
        (.greaterThanOrEqual, 1, ["d1", "d25", "i1", "i2"]),
        (.greaterThan, .double(-.infinity), ["d1", "d25", "i1", "i2", "negz", "zero"]),
        (.greaterThan, .double(.nan), []),
        (.lessThan, .double(.nan), []),
        (.greaterThanOrEqual, .double(.nan), []),
        (.lessThanOrEqual, .double(.infinity), ["d1", "d25", "i1", "i2", "negz", "ninf", "zero"]),
        (.greaterThan, "a", ["sb"]),
        (.greaterThanOrEqual, "", ["empty", "sa", "sb"]),
        (.lessThan, "b", ["empty", "sa"]),
        (.lessThan, true, ["f"]),
        (.greaterThanOrEqual, false, ["f", "t"]),
        (.greaterThan, .timestamp(Timestamp(seconds: 0)), ["ts"]),
        (.lessThan, .timestamp(Timestamp(seconds: 0)), []),
        (.greaterThan, .bytes([]), ["by"]),
        (.lessThan, .reference("c/z"), ["ref"]),
        (.greaterThan, .geoPoint(GeoPoint(latitude: 0, longitude: 0)), ["geo"]),
        (.greaterThan, [1], ["arr", "arr2", "arrMap"]),
        (.lessThan, [1], ["arrEmpty"]),
        (.greaterThanOrEqual, [], ["arr", "arr2", "arrEmpty", "arrMap"]),
        (.greaterThan, .map([:]), ["map"]),
        (.greaterThan, nil, []),
        (.greaterThanOrEqual, nil, []),
        (.lessThanOrEqual, nil, []),
        (.in, [1, "a"], ["d1", "i1", "sa"]),
        (.in, [2.0, nil], ["i2"]),
        (.in, [nil], []),
        (.in, [.double(.nan)], []),
        (.in, [1, .double(.nan)], ["d1", "i1"]),
        (.in, [[1, "a"], ["x": 1]], ["arr", "map"]),
        (.in, ["nope"], []),
        (.notIn, [1, "a"], except("i1", "d1", "sa", "null")),
        (.notIn, [.double(.nan), true], except("nan", "t", "null")),
        (.notIn, [1, nil], []),
        (.notIn, [nil], []),
        (.arrayContains, 1, ["arr", "arr2"]),
        (.arrayContains, 1.0, ["arr", "arr2"]),
        (.arrayContains, "a", ["arr"]),
        (.arrayContains, nil, []),
        (.arrayContains, .double(.nan), []),
        (.arrayContains, ["k": 1], ["arrMap"]),
        (.arrayContains, 3, []),
        (.arrayContainsAny, [2, "a"], ["arr", "arr2"]),
        (.arrayContainsAny, [nil], []),
        (.arrayContainsAny, [nil, 2], ["arr2"]),
        (.arrayContainsAny, [9, "zz"], []),
        (.arrayContainsAny, [1, 2], ["arr", "arr2"]),
    ]

    @Test("each operator matches exactly the documents Firestore would", arguments: ["v", "m.v"], cases)
    func operatorMatches(fieldPath: String, testCase: (QuerySpec.Operator, Value, [String])) async throws {
        let (op, operand, expected) = testCase
        try await withStore { store, _ in
            try await Self.seed(store)
            var q = QuerySpec(collection: try coll("c"))
            q.filters = [.init(try field(fieldPath), op, operand)]
            // Results come in the query's order; compare as sets, then check the order separately.
            let ids = try await store.ids(q)
            #expect(Set(ids) == Set(expected), "\(fieldPath) \(op.rawValue) \(operand)")
            #expect(ids.count == expected.count, "no duplicates")
            #expect(try await store.count(q) == expected.count)
            // Ordered by name explicitly (which an inequality's implicit order may not follow), the
            // same documents in id order.
            if !op.isInequality {
                q.orderBy = [.init(.documentID)]
                #expect(try await store.ids(q) == expected.sorted(), "\(fieldPath) \(op.rawValue) \(operand) by name")
            }
            // With an equality filter on another field (the index intersection plans).
            q.filters.append(.init(try field("k"), .equal, 1))
            #expect(Set(try await store.ids(q)) == Set(expected), "\(fieldPath) \(op.rawValue) \(operand) with k == 1")
        }
    }

    @Test("inequality results come ordered by the inequality field, then by name")
    func inequalityOrder() async throws {
        try await withStore { store, _ in
            try await Self.seed(store)
            var q = QuerySpec(collection: try coll("c"))
            q.filters = [.init(try field("v"), .lessThan, 2)]
            #expect(try await store.ids(q) == ["ninf", "negz", "zero", "d1", "i1"])
            q.filters = [.init(try field("v"), .notEqual, 1)]
            let ids = try await store.ids(q)
            #expect(ids.prefix(3) == ["f", "t", "nan"])
            #expect(ids.last == "map")
        }
    }

    @Test("a filter through a non-map value, or on a missing field, never matches")
    func missingFields() async throws {
        try await withStore { store, _ in
            try await Self.seed(store)
            for op: QuerySpec.Operator in [.notEqual, .greaterThan, .lessThan] {
                var q = QuerySpec(collection: try coll("c"))
                q.filters = [.init(try field("m.v.deeper"), op, 0)]
                #expect(try await store.ids(q) == [], "\(op.rawValue)")
            }
            var q = QuerySpec(collection: try coll("c"))
            q.filters = [.init(try field("m.w"), .notIn, [5])]
            #expect(try await store.ids(q) == ["missing"])
            q.filters = [.init(try field("other"), .notEqual, nil)]
            #expect(try await store.ids(q) == ["missing"])
        }
    }

    @Test("several filters combine with AND")
    func conjunction() async throws {
        try await withStore { store, _ in
            let c = try coll("people")
            try await store.commit([
                .create(try c.document("a"), ["age": 30, "city": "Oslo", "tags": ["x", "y"]]),
                .create(try c.document("b"), ["age": 40, "city": "Oslo", "tags": ["y"]]),
                .create(try c.document("c"), ["age": 35, "city": "Rome", "tags": ["x"]]),
                .create(try c.document("d"), ["age": 25, "city": "Oslo"]),
            ])
            var q = QuerySpec(collection: c)
            q.filters = [.init(try field("city"), .equal, "Oslo"), .init(try field("age"), .greaterThan, 26),
                         .init(try field("tags"), .arrayContains, "y")]
            #expect(try await store.ids(q) == ["a", "b"])
            q.filters = [.init(try field("age"), .greaterThanOrEqual, 30), .init(try field("age"), .lessThan, 40),
                         .init(try field("city"), .notIn, ["Rome"])]
            #expect(try await store.ids(q) == ["a"])
            q.filters = [.init(try field("city"), .in, ["Rome", "Oslo"]), .init(try field("tags"), .arrayContains, "x")]
            #expect(try await store.ids(q) == ["a", "c"])
            q.filters = [.init(try field("city"), .equal, "Oslo"), .init(try field("tags"), .arrayContainsAny, ["x", "z"])]
            #expect(try await store.ids(q) == ["a"])
            q.filters = [.init(try field("age"), .greaterThan, 30), .init(try field("city"), .notEqual, "Oslo")]
            #expect(try await store.ids(q) == ["c"])
            // Several disjunctive filters, as Firestore allows them now: (city in …) AND (tags any …).
            q.filters = [.init(try field("city"), .in, ["Oslo", "Rome"]), .init(try field("tags"), .arrayContainsAny, ["x", "z"])]
            #expect(try await store.ids(q) == ["a", "c"])
            q.filters = [.init(try field("city"), .in, ["Oslo", "Rome"]), .init(try field("age"), .in, [25, 35, 40])]
            #expect(try await store.ids(q) == ["b", "c", "d"])
        }
    }

    /// A query breaking one of Firestore's rules, and what the refusal must say.
    struct RuleCase: Sendable, CustomTestStringConvertible {
        let name: String
        let filters: [QuerySpec.Filter]
        let message: String
        var testDescription: String { name }
    }

    static var ruleCases: [RuleCase] {
        get throws {
            let a = try field("a"), b = try field("b"), tags = try field("tags")
            let thirty: Value = .array((0..<30).map { .int(Int64($0)) })
            return [
                RuleCase(name: "in with no values", filters: [.init(a, .in, [])], message: "needs a non-empty array"),
                RuleCase(name: "in with a non-array", filters: [.init(a, .in, 1)], message: "needs a non-empty array"),
                RuleCase(name: "in with 31 values", filters: [.init(a, .in, .array((0..<31).map { .int(Int64($0)) }))], message: "at most 30 values"),
                RuleCase(name: "not-in with 11 values", filters: [.init(a, .notIn, .array((0..<11).map { .int(Int64($0)) }))], message: "at most 10 values"),
                RuleCase(name: "two array-contains", filters: [.init(tags, .arrayContains, 1), .init(b, .arrayContains, 2)], message: "at most one array-contains"),
                RuleCase(name: "array-contains with array-contains-any", filters: [.init(tags, .arrayContains, 1), .init(b, .arrayContainsAny, [2])],
                         message: "at most one array-contains"),
                RuleCase(name: "not-in with in", filters: [.init(a, .notIn, [1]), .init(b, .in, [2])], message: "'not-in' cannot be combined"),
                RuleCase(name: "not-in with array-contains-any", filters: [.init(a, .notIn, [1]), .init(tags, .arrayContainsAny, [2])],
                         message: "'not-in' cannot be combined"),
                RuleCase(name: "two not-equal", filters: [.init(a, .notEqual, 1), .init(b, .notEqual, 2)], message: "at most one '!=' or 'not-in'"),
                RuleCase(name: "not-equal with not-in", filters: [.init(a, .notEqual, 1), .init(b, .notIn, [2])], message: "at most one '!=' or 'not-in'"),
                RuleCase(name: "in × in over 30 disjunctions", filters: [.init(a, .in, [1, 2, 3, 4, 5, 6]), .init(b, .in, [1, 2, 3, 4, 5, 6])],
                         message: "at most 30 disjunctions"),
                RuleCase(name: "in × array-contains-any over 30 disjunctions", filters: [.init(a, .in, thirty), .init(tags, .arrayContainsAny, [1, 2])],
                         message: "at most 30 disjunctions"),
                RuleCase(name: "inequalities on 11 fields", filters: try (0..<11).map { .init(try field("f\($0)"), .greaterThan, 0) },
                         message: "on at most 10 fields (got 11)"),
                RuleCase(name: "inequalities with only an equality on __name__", filters: [.init(a, .greaterThan, 1), .init(.documentID, .equal, "x")],
                         message: "Equality on key is not allowed if there are other inequality fields and key does not appear in inequalities."),
                RuleCase(name: "inequalities with only __name__ in", filters: [.init(a, .notEqual, 1), .init(.documentID, .in, ["x", "y"])],
                         message: "Equality on key is not allowed"),
            ]
        }
    }

    @Test("queries breaking Firestore's filter rules are refused with invalid-argument naming the rule", arguments: try ruleCases)
    func rules(_ rule: RuleCase) async throws {
        try await withStore { store, _ in
            var q = QuerySpec(collection: try coll("c"))
            q.filters = rule.filters
            await expectError(.invalidArgument, rule.message) { _ = try await store.query(q) }
            await expectError(.invalidArgument, rule.message) { _ = try await store.count(q) }
        }
    }

    @Test("inequalities on 10 fields, or with __name__ among them beside an equality on it, are accepted")
    func inequalityLimits() async throws {
        try await withStore { store, _ in
            try await store.commit([.create(try doc("c/x"), .init(uniqueKeysWithValues: (0..<10).map { ("f\($0)", Value.int(1)) }))])
            var q = QuerySpec(collection: try coll("c"))
            q.filters = try (0..<10).map { .init(try field("f\($0)"), .greaterThan, 0) }
            #expect(try await store.ids(q) == ["x"])
            q.filters = [.init(try field("f0"), .greaterThan, 0), .init(.documentID, .greaterThan, "a"), .init(.documentID, .equal, "x")]
            #expect(try await store.ids(q) == ["x"])
        }
    }

    @Test("an explicit order on __name__ must come last, after every implicit inequality order too")
    func nameOrderLast() async throws {
        try await withStore { store, _ in
            try await store.commit([.create(try doc("c/x"), ["a": 1, "b": 1])])
            var q = QuerySpec(collection: try coll("c"))
            q.orderBy = [.init(.documentID), .init(try field("a"))]
            await expectError(.invalidArgument, "order by clause cannot contain more fields after the key") { _ = try await store.query(q) }
            q.orderBy = [.init(.documentID)]
            q.filters = [.init(try field("b"), .notEqual, 42)]  // implicitly ordered by __name__, then b
            await expectError(.invalidArgument, "order by clause cannot contain more fields after the key") { _ = try await store.query(q) }
            q.orderBy = [.init(try field("b")), .init(.documentID, .descending)]
            #expect(try await store.ids(q) == ["x"])
            q.filters = []
            q.orderBy = [.init(.documentID, .descending)]
            #expect(try await store.ids(q) == ["x"])
        }
    }

    @Test("disjunctive filters up to 30 disjunctions in all are accepted")
    func disjunctionsAtTheLimit() async throws {
        try await withStore { store, _ in
            try await store.commit([.create(try doc("c/x"), ["a": 5, "b": 2, "tags": [3]])])
            var q = QuerySpec(collection: try coll("c"))
            q.filters = [.init(try field("a"), .in, [1, 2, 3, 4, 5]), .init(try field("b"), .in, [1, 2, 3]), .init(try field("tags"), .arrayContainsAny, [3, 4])]
            #expect(try await store.ids(q) == ["x"])
            q.filters = [.init(try field("a"), .in, .array((0..<30).map { .int(Int64($0)) })), .init(try field("b"), .equal, 2)]
            #expect(try await store.ids(q) == ["x"])
        }
    }

    @Test("quoted field paths reach fields whose names hold dots or other characters, apart from nested paths")
    func quotedFieldPaths() async throws {
        try await withStore { store, _ in
            let c = try coll("c")
            try await store.commit([
                .create(try c.document("x"), ["a.b": 1, "a": ["b": 2], "é": 3, "odd`name": 4, "sp ace": 5]),
                .create(try c.document("y"), ["a.b": 2, "a": ["b": 1], "é": 4, "odd`name": 3, "sp ace": 6]),
            ])
            func ids(_ path: String, _ op: QuerySpec.Operator, _ v: Value) async throws -> [String] {
                var q = QuerySpec(collection: c)
                q.filters = [.init(try field(path), op, v)]
                return try await store.ids(q)
            }
            #expect(try await ids("`a.b`", .equal, 1) == ["x"])
            #expect(try await ids("a.b", .equal, 1) == ["y"])
            #expect(try await ids("`é`", .greaterThan, 3) == ["y"])
            #expect(try await ids("é", .greaterThan, 3) == ["y"])
            #expect(try await ids("`odd\\`name`", .lessThan, 4) == ["y"])
            #expect(try await ids("`sp ace`", .equal, 5) == ["x"])
            var q = QuerySpec(collection: c)
            q.orderBy = [.init(try field("`a.b`"), .descending)]
            #expect(try await store.ids(q) == ["y", "x"])
            q.orderBy = [.init(try field("a.b"), .descending)]
            #expect(try await store.ids(q) == ["x", "y"])
        }
    }

    @Test("filters on __name__: ==, in, not-in, <, >= with ids or references")
    func nameFilters() async throws {
        try await withStore { store, _ in
            let c = try coll("c")
            try await store.commit(try ["a", "b", "c", "d"].map { .create(try c.document($0), ["n": .int(Int64($0.unicodeScalars.first!.value))]) })
            try await store.commit([.create(try doc("other/a"), [:])])
            var q = QuerySpec(collection: c)
            q.filters = [.init(.documentID, .equal, "b")]
            #expect(try await store.ids(q) == ["b"])
            q.filters = [.init(.documentID, .equal, .reference("c/c"))]
            #expect(try await store.ids(q) == ["c"])
            q.filters = [.init(.documentID, .equal, .reference("other/a"))]
            #expect(try await store.ids(q) == [])
            q.filters = [.init(.documentID, .in, ["d", "a", "zz"])]
            #expect(try await store.ids(q) == ["a", "d"])
            q.filters = [.init(.documentID, .in, [.reference("c/b"), .reference("other/a")])]
            #expect(try await store.ids(q) == ["b"])
            q.filters = [.init(.documentID, .notIn, ["a", "c"])]
            #expect(try await store.ids(q) == ["b", "d"])
            q.filters = [.init(.documentID, .lessThan, "c")]
            #expect(try await store.ids(q) == ["a", "b"])
            q.filters = [.init(.documentID, .greaterThanOrEqual, .reference("c/b"))]
            #expect(try await store.ids(q) == ["b", "c", "d"])
            q.filters = [.init(.documentID, .notEqual, "b")]
            #expect(try await store.ids(q) == ["a", "c", "d"])
        }
    }

    @Test("__name__ in keeps the query's order by another field")
    func nameInWithOrder() async throws {
        try await withStore { store, _ in
            let c = try coll("c")
            try await store.commit([
                .create(try c.document("a"), ["n": 3]), .create(try c.document("b"), ["n": 1]),
                .create(try c.document("c"), ["n": 2]), .create(try c.document("d"), ["n": 0]),
            ])
            var q = QuerySpec(collection: c)
            q.filters = [.init(.documentID, .in, ["a", "b", "c"])]
            q.orderBy = [.init(try field("n"))]
            #expect(try await store.ids(q) == ["b", "c", "a"])
            q.orderBy = [.init(try field("n"), .descending)]
            #expect(try await store.ids(q) == ["a", "c", "b"])
            q.limit = 2
            #expect(try await store.ids(q) == ["a", "c"])
            q.orderBy = [.init(try field("n"))]
            q.startAt = QuerySpec.Cursor(values: [2], before: true)
            #expect(try await store.ids(q) == ["c", "a"])
        }
    }
}
