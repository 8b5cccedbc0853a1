import Foundation
import HearthModel
@testable import HearthStore
import Testing

/// Ordering: Firestore's cross-type value order
/// (https://firebase.google.com/docs/firestore/manage-data/data-types#value_type_ordering), several
/// order fields, the implicit order (inequality fields, then `__name__`), limit and limitToLast.
@Suite("Query ordering and limits", .timeLimit(.minutes(1)))
struct QueryOrderTests {
    /// One value of every type, in ascending Firestore order. Documents holding values that compare
    /// equal (1 and 1.0, 0 and -0.0) are listed in id order: the name breaks the tie. Ids are chosen
    /// so that id order differs from value order.
    static let ordered: [(String, Value)] = [
        ("z00", nil),
        ("y01", false),
        ("x02", true),
        ("w03", .double(.nan)),
        ("v04", .double(-.infinity)),
        ("u05", .int(Int64.min)),
        ("t06", -1e18),
        ("s07", -1.5),
        ("r08", -1),
        ("negzero", .double(-0.0)),
        ("zero", 0),
        ("q09", .double(Double.leastNonzeroMagnitude)),
        ("p10", 0.5),
        ("one-double", 1.0),
        ("one-int", 1),
        ("o11", .int(9_007_199_254_740_992)),          // 2^53
        ("n12", .int(9_007_199_254_740_993)),          // 2^53 + 1: not a double, sorts after 2^53
        ("m13", .double(9_007_199_254_740_994)),
        ("l14", .int(Int64.max)),
        ("k15", 1e300),
        ("j16", .double(.infinity)),
        ("i17", .timestamp(Timestamp(seconds: Timestamp.minSeconds))),
        ("h18", .timestamp(Timestamp(seconds: -1, nanos: 999_999_000))),
        ("g19", .timestamp(Timestamp(seconds: 0))),
        ("f20", .timestamp(Timestamp(seconds: 0, nanos: 1000))),
        ("e21", ""),
        ("d22", "\u{0}"),
        ("c23", "A"),
        ("b24", "a"),
        ("a25", "a\u{0}"),
        ("zz26", "ab"),
        ("zy27", "b"),
        ("zx28", "é"),            // U+00E9: UTF-8 C3 A9
        ("zw29", "\u{FFFD}"),     // EF BF BD
        ("zv30", "😀"),           // F0 9F 98 80: UTF-8 order, not UTF-16 order
        ("zu31", .bytes([])),
        ("zt32", .bytes([0])),
        ("zs33", .bytes([0, 0])),
        ("zr34", .bytes([1])),
        ("zq35", .bytes([255])),
        ("zp36", .reference("a/b")),
        ("zo37", .reference("a/b/c/d")),
        ("zn38", .reference("a/c")),
        ("zm39", .reference("a-x/b")),      // segment-wise: "a" < "a-x" although "/" > "-"
        ("zl40", .reference("b/a")),
        ("zk41", .geoPoint(GeoPoint(latitude: -90, longitude: 180))),
        ("zj42", .geoPoint(GeoPoint(latitude: 0, longitude: -5))),
        ("zi43", .geoPoint(GeoPoint(latitude: 0, longitude: 5))),
        ("zh44", .geoPoint(GeoPoint(latitude: 45, longitude: -180))),
        ("zg45", []),
        ("zf46", [nil]),
        ("ze47", [false, 5]),
        ("zd48", [1]),
        ("zc49", [1, nil]),
        ("zb50", [1, 2]),
        ("za51", [2]),
        ("yz52", ["a"]),
        ("yy53", [["k": 1]]),
        // Vectors: after arrays, before maps; by dimension, then component by component.
        ("vv1", .vector([])),
        ("vv2", .vector([7])),
        ("vv3", .vector([-1, 5])),
        ("vv4", .vector([1, 0])),
        ("vv5", .vector([1, 2])),
        ("vv6", .vector([0, 0, 0])),
        ("yx54", .map([:])),
        ("yw55", ["a": nil]),
        ("yv56", ["a": 1]),
        ("yu57", ["a": 1, "b": 0]),
        ("yt58", ["a": 2]),
        ("ys59", ["a": "x"]),
        ("yr60", ["b": 0]),
        ("yq61", ["b": ["c": 1]]),
    ]

    static func seed(_ store: DocumentStore, collection: String = "c") async throws {
        try await store.commit(try ordered.map { id, v in .create(try doc("\(collection)/\(id)"), ["v": v, "m": ["v": v]]) })
        try await store.commit([.create(try doc("\(collection)/no-v"), ["other": 1])])
    }

    @Test("a field holding one value of every type orders by Firestore's cross-type order, ties by name",
          arguments: ["v", "m.v"])
    func crossTypeOrder(fieldPath: String) async throws {
        try await withStore { store, _ in
            try await Self.seed(store)
            let expected = Self.ordered.map(\.0)
            var q = QuerySpec(collection: try coll("c"))
            q.orderBy = [.init(try field(fieldPath))]
            #expect(try await store.ids(q) == expected)
            q.orderBy = [.init(try field(fieldPath), .descending)]
            #expect(try await store.ids(q) == expected.reversed())
            // The same order as Value.compare with the name as tiebreak.
            let sorted = Self.ordered.sorted { a, b in
                let c = Value.compare(a.1, b.1)
                return c == .same ? a.0 < b.0 : c == .ascending
            }.map(\.0)
            #expect(sorted == expected)
        }
    }

    @Test("ordered scans limited to a few documents stop in the right place, ascending and descending")
    func orderWithLimit() async throws {
        try await withStore { store, _ in
            try await Self.seed(store)
            let expected = Self.ordered.map(\.0)
            for n in [1, 2, 10, 14, 15, 40, 66, 100] {
                var q = QuerySpec(collection: try coll("c"))
                q.orderBy = [.init(try field("v"))]
                q.limit = n
                #expect(try await store.ids(q) == Array(expected.prefix(n)))
                q.orderBy = [.init(try field("v"), .descending)]
                #expect(try await store.ids(q) == Array(expected.reversed().prefix(n)))
                q.limitToLast = true
                #expect(try await store.ids(q) == Array(expected.prefix(n).reversed()), "limitToLast \(n)")
            }
        }
    }

    @Test("type-bracketed range filters pick each type's slice of the order")
    func typeSlices() async throws {
        try await withStore { store, _ in
            try await Self.seed(store)
            let all = Self.ordered
            let probes: [Value] = [false, 0, .timestamp(Timestamp(seconds: 0)), "", .bytes([]), .reference("a/a"),
                                   .geoPoint(GeoPoint(latitude: -90, longitude: -180)), [], .map([:])]
            for probe in probes {
                var q = QuerySpec(collection: try coll("c"))
                q.filters = [.init(try field("v"), .greaterThanOrEqual, probe)]
                let expected = all.filter { $0.1.typeOrder == probe.typeOrder && Value.compare($0.1, probe) != .ascending }.map(\.0)
                #expect(try await store.ids(q) == expected, "\(probe)")
                q.filters = [.init(try field("v"), .lessThan, probe)]
                // Ranges never match NaN, though NaN orders below every number.
                let below = all.filter { $0.1.typeOrder == probe.typeOrder && Value.compare($0.1, probe) == .ascending && $0.1.doubleValue?.isNaN != true }.map(\.0)
                #expect(try await store.ids(q) == below, "< \(probe)")
            }
        }
    }

    @Test("documents missing an order field are excluded")
    func missingOrderField() async throws {
        try await withStore { store, _ in
            let c = try coll("c")
            try await store.commit([
                .create(try c.document("a"), ["x": 1, "y": 1]), .create(try c.document("b"), ["x": 2]),
                .create(try c.document("c"), ["y": 3]), .create(try c.document("d"), ["x": nil, "y": nil]),
            ])
            var q = QuerySpec(collection: c)
            q.orderBy = [.init(try field("x"))]
            #expect(try await store.ids(q) == ["d", "a", "b"])
            q.orderBy = [.init(try field("x")), .init(try field("y"))]
            #expect(try await store.ids(q) == ["d", "a"])
            #expect(try await store.count(q) == 2)
            q.orderBy = [.init(try field("y"), .descending)]
            #expect(try await store.ids(q) == ["c", "a", "d"])
        }
    }

    @Test("several order fields: each breaks the ties of the one before, then the name")
    func multipleOrders() async throws {
        try await withStore { store, _ in
            let c = try coll("c")
            let rows: [(String, Value, Value)] = [("a", 1, "x"), ("b", 2, "x"), ("c", 1, "y"), ("d", 2, "y"), ("e", 1, "x"), ("f", 1.0, "y")]
            try await store.commit(try rows.map { .create(try c.document($0.0), ["p": $0.1, "q": $0.2]) })
            var q = QuerySpec(collection: c)
            q.orderBy = [.init(try field("p")), .init(try field("q"))]
            #expect(try await store.ids(q) == ["a", "e", "c", "f", "b", "d"])
            q.orderBy = [.init(try field("p")), .init(try field("q"), .descending)]
            #expect(try await store.ids(q) == ["f", "c", "e", "a", "d", "b"])
            q.orderBy = [.init(try field("p"), .descending), .init(try field("q"))]
            #expect(try await store.ids(q) == ["b", "d", "a", "e", "c", "f"])
            q.orderBy = [.init(try field("q")), .init(.documentID, .descending), .init(try field("p"))]
            await expectError(.invalidArgument, "order by clause cannot contain more fields after the key") { _ = try await store.ids(q) }
            q.orderBy = [.init(try field("q")), .init(.documentID, .descending)]
            #expect(try await store.ids(q) == ["e", "b", "a", "f", "d", "c"])
            q.orderBy = [.init(try field("p"), .descending), .init(.documentID)]
            #expect(try await store.ids(q) == ["b", "d", "a", "c", "e", "f"])
        }
    }

    @Test("the implicit order appends inequality fields in field-path order, then __name__, with the last explicit direction")
    func normalizedOrder() async throws {
        var q = QuerySpec(collectionID: "c")
        q.filters = [.init(try field("z"), .notEqual, 1), .init(try field("b"), .lessThan, 5), .init(try field("a"), .equal, 1),
                     .init(try field("m.x"), .greaterThan, 0)]
        #expect(q.normalizedOrder == [.init(try field("b")), .init(try field("m.x")), .init(try field("z")), .init(.documentID)])
        q.orderBy = [.init(try field("z"), .descending)]
        #expect(q.normalizedOrder == [.init(try field("z"), .descending), .init(try field("b"), .descending),
                                      .init(try field("m.x"), .descending), .init(.documentID, .descending)])
        q.orderBy = [.init(try field("a"), .descending), .init(try field("c"))]
        #expect(q.normalizedOrder.map(\.direction) == [.descending, .ascending, .ascending, .ascending, .ascending, .ascending])
        q.orderBy = [.init(.documentID, .descending)]
        #expect(q.normalizedOrder == [.init(.documentID, .descending), .init(try field("b"), .descending),
                                      .init(try field("m.x"), .descending), .init(try field("z"), .descending)])
        #expect(QuerySpec(collectionID: "c").normalizedOrder == [.init(.documentID)])
    }

    @Test("results follow the implicit order of inequality fields")
    func implicitOrderResults() async throws {
        try await withStore { store, _ in
            let c = try coll("c")
            let rows: [(String, Value, Value)] = [("a", 3, 1), ("b", 1, 2), ("c", 2, 2), ("d", 1, 1), ("e", 5, 0)]
            try await store.commit(try rows.map { .create(try c.document($0.0), ["x": $0.1, "y": $0.2]) })
            var q = QuerySpec(collection: c)
            q.filters = [.init(try field("y"), .greaterThan, 0), .init(try field("x"), .lessThan, 4)]
            #expect(try await store.ids(q) == ["d", "b", "c", "a"])  // by x, then y, then name
            q.filters = [.init(try field("y"), .greaterThan, 0), .init(try field("x"), .notEqual, 3)]
            q.orderBy = [.init(try field("y"), .descending)]
            #expect(try await store.ids(q) == ["c", "b", "d"])  // y desc, then x desc, then name desc
            q.orderBy = []
            q.filters = [.init(try field("x"), .notIn, [3, 5])]
            #expect(try await store.ids(q) == ["b", "d", "c"])
        }
    }

    @Test("limit keeps the first results; limit 0 returns none; limitToLast keeps the last, in query order")
    func limits() async throws {
        try await withStore { store, _ in
            let c = try coll("c")
            try await store.commit(try (0..<10).map { .create(try c.document("d\($0)"), ["n": .int(Int64($0 % 4)), "k": 1]) })
            var q = QuerySpec(collection: c)
            q.orderBy = [.init(try field("n"))]
            let all = try await store.ids(q)
            #expect(all == ["d0", "d4", "d8", "d1", "d5", "d9", "d2", "d6", "d3", "d7"])
            for n in [0, 1, 3, 9, 10, 11] {
                q.limit = n
                q.limitToLast = false
                #expect(try await store.ids(q) == Array(all.prefix(n)), "limit \(n)")
                #expect(try await store.count(q) == min(n, 10))
                q.limitToLast = true
                #expect(try await store.ids(q) == Array(all.suffix(n)), "limitToLast \(n)")
            }
            // limitToLast with a descending order and an equality filter.
            q.filters = [.init(try field("k"), .equal, 1)]
            q.orderBy = [.init(try field("n"), .descending)]
            q.limit = 4
            #expect(try await store.ids(q) == ["d1", "d8", "d4", "d0"])
            // Unordered limit: by name.
            var byName = QuerySpec(collection: c)
            byName.limit = 3
            #expect(try await store.ids(byName) == ["d0", "d1", "d2"])
            #expect(try await store.count(byName) == 3)
        }
    }

    @Test("count matches the number of query results, with and without filters")
    func count() async throws {
        try await withStore { store, _ in
            let c = try coll("c")
            try await store.commit(try (0..<30).map { .create(try c.document("d\($0)"), ["n": .int(Int64($0)), "even": .bool($0 % 2 == 0)]) })
            try await store.commit([.create(try doc("c/d0/sub/x"), ["n": 1]), .create(try doc("other/y"), ["n": 1])])
            var q = QuerySpec(collection: c)
            #expect(try await store.count(q) == 30)
            q.filters = [.init(try field("even"), .equal, true)]
            #expect(try await store.count(q) == 15)
            q.filters.append(.init(try field("n"), .greaterThanOrEqual, 10))
            #expect(try await store.count(q) == 10)
            q.limit = 4
            #expect(try await store.count(q) == 4)
            #expect(try await store.count(QuerySpec(collectionID: "empty")) == 0)
            try await store.commit([.delete(try doc("c/d1"))])
            #expect(try await store.count(QuerySpec(collection: c)) == 29)
        }
    }
}
