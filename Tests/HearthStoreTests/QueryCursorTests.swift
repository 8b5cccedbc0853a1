import Foundation
import HearthModel
@testable import HearthStore
import Testing

/// Cursors: startAt, startAfter, endAt, endBefore; values for a prefix of the normalized order
/// (the name may be given as an id or a reference); with descending orders, limit and limitToLast.
@Suite("Query cursors", .timeLimit(.minutes(1)))
struct QueryCursorTests {
    /// p: 1 1 1 2 2 3 3 3 4 (one missing); q varies within each p.
    static let rows: [(String, Value, Value)] = [
        ("a", 1, "x"), ("b", 1, "y"), ("c", 1.0, "x"), ("d", 2, "z"), ("e", 2, "x"),
        ("f", 3, "y"), ("g", 3, "y"), ("h", 3, "x"), ("i", 4, "x"),
    ]

    static func seed(_ store: DocumentStore) async throws -> [StoredDocument] {
        let c = try coll("c")
        try await store.commit(try rows.map { .create(try c.document($0.0), ["p": $0.1, "q": $0.2]) })
        try await store.commit([.create(try c.document("nop"), ["q": "x"]), .create(try doc("other/a"), ["p": 1, "q": "x"])])
        return try await store.query(QuerySpec(collectionID: "c", allDescendants: true)) + [try #require(try await store.get(try doc("other/a")))]
    }

    static func at(_ values: Value...) -> QuerySpec.Cursor { .init(values: values, before: true) }
    static func after(_ values: Value...) -> QuerySpec.Cursor { .init(values: values, before: false) }

    @Test("startAt, startAfter, endAt and endBefore on one order field")
    func singleField() async throws {
        try await withStore { store, _ in
            _ = try await Self.seed(store)
            var q = QuerySpec(collection: try coll("c"))
            q.orderBy = [.init(try field("p"))]
            #expect(try await store.ids(q) == ["a", "b", "c", "d", "e", "f", "g", "h", "i"])
            q.startAt = Self.at(2)
            #expect(try await store.ids(q) == ["d", "e", "f", "g", "h", "i"])
            q.startAt = Self.after(2)  // startAfter
            #expect(try await store.ids(q) == ["f", "g", "h", "i"])
            q.startAt = Self.after(1.0)
            #expect(try await store.ids(q) == ["d", "e", "f", "g", "h", "i"])
            q.startAt = nil
            q.endAt = Self.after(2)  // endAt
            #expect(try await store.ids(q) == ["a", "b", "c", "d", "e"])
            q.endAt = Self.at(2)  // endBefore
            #expect(try await store.ids(q) == ["a", "b", "c"])
            q.startAt = Self.after(1)
            q.endAt = Self.after(3)
            #expect(try await store.ids(q) == ["d", "e", "f", "g", "h"])
            q.startAt = Self.at(2.5)
            q.endAt = Self.after(2.7)
            #expect(try await store.ids(q) == [])
            // Values of another type: a string sorts after every number, null before.
            q.startAt = Self.at("a")
            q.endAt = nil
            #expect(try await store.ids(q) == [])
            q.startAt = Self.after(nil)
            #expect(try await store.ids(q).count == 9)
        }
    }

    @Test("a cursor with the name as an id or as a reference positions within ties")
    func nameInCursor() async throws {
        try await withStore { store, _ in
            _ = try await Self.seed(store)
            var q = QuerySpec(collection: try coll("c"))
            q.orderBy = [.init(try field("p"))]
            q.startAt = Self.at(1, "b")
            #expect(try await store.ids(q) == ["b", "c", "d", "e", "f", "g", "h", "i"])
            q.startAt = Self.after(1, .reference("c/b"))
            #expect(try await store.ids(q) == ["c", "d", "e", "f", "g", "h", "i"])
            q.startAt = nil
            q.endAt = Self.at(3, "g")  // endBefore
            #expect(try await store.ids(q) == ["a", "b", "c", "d", "e", "f"])
            q.endAt = Self.after(3, .reference("c/g"))  // endAt
            #expect(try await store.ids(q) == ["a", "b", "c", "d", "e", "f", "g"])
            // Ordered by name only.
            var byName = QuerySpec(collection: try coll("c"))
            byName.startAt = Self.after("c")
            byName.endAt = Self.after(.reference("c/f"))
            #expect(try await store.ids(byName) == ["d", "e", "f"])
            byName.orderBy = [.init(.documentID, .descending)]
            byName.startAt = Self.at("f")
            byName.endAt = Self.at(.reference("c/c"))
            #expect(try await store.ids(byName) == ["f", "e", "d"])
            // A reference into another collection positions by full path.
            byName.orderBy = []
            byName.startAt = Self.at(.reference("b/zzz"))
            byName.endAt = nil
            #expect(try await store.ids(byName).count == 10)
            byName.startAt = Self.at(.reference("d/a"))
            #expect(try await store.ids(byName) == [])
        }
    }

    @Test("cursors on descending orders count from the top")
    func descending() async throws {
        try await withStore { store, _ in
            _ = try await Self.seed(store)
            var q = QuerySpec(collection: try coll("c"))
            q.orderBy = [.init(try field("p"), .descending)]
            #expect(try await store.ids(q) == ["i", "h", "g", "f", "e", "d", "c", "b", "a"])
            q.startAt = Self.at(3)
            #expect(try await store.ids(q) == ["h", "g", "f", "e", "d", "c", "b", "a"])
            q.startAt = Self.after(3)
            #expect(try await store.ids(q) == ["e", "d", "c", "b", "a"])
            q.endAt = Self.at(1)  // endBefore
            #expect(try await store.ids(q) == ["e", "d"])
            q.startAt = Self.at(3, "g")
            q.endAt = Self.after(1, "b")  // endAt
            #expect(try await store.ids(q) == ["g", "f", "e", "d", "c", "b"])
        }
    }

    @Test("cursors with two order fields, partial and full")
    func twoFields() async throws {
        try await withStore { store, _ in
            _ = try await Self.seed(store)
            var q = QuerySpec(collection: try coll("c"))
            q.orderBy = [.init(try field("p")), .init(try field("q"), .descending)]
            #expect(try await store.ids(q) == ["b", "c", "a", "d", "e", "g", "f", "h", "i"])
            q.startAt = Self.at(1, "x")
            #expect(try await store.ids(q) == ["c", "a", "d", "e", "g", "f", "h", "i"])
            q.startAt = Self.after(3, "y")
            #expect(try await store.ids(q) == ["h", "i"])
            q.startAt = Self.after(3, "y", "f")
            #expect(try await store.ids(q) == ["h", "i"])
            q.startAt = Self.after(3, "y", "g")
            #expect(try await store.ids(q) == ["f", "h", "i"])
            q.startAt = Self.at(2)
            q.endAt = Self.at(3, "x")
            #expect(try await store.ids(q) == ["d", "e", "g", "f"])
        }
    }

    @Test("cursors with limit and limitToLast")
    func withLimits() async throws {
        try await withStore { store, _ in
            _ = try await Self.seed(store)
            var q = QuerySpec(collection: try coll("c"))
            q.orderBy = [.init(try field("p"))]
            q.startAt = Self.at(2)
            q.endAt = Self.after(3)
            q.limit = 2
            #expect(try await store.ids(q) == ["d", "e"])
            q.limitToLast = true
            #expect(try await store.ids(q) == ["g", "h"])
            q.limit = 10
            #expect(try await store.ids(q) == ["d", "e", "f", "g", "h"])
            q.orderBy = [.init(try field("p"), .descending)]
            q.startAt = Self.after(4)
            q.endAt = Self.at(1)
            q.limit = 3
            #expect(try await store.ids(q) == ["f", "e", "d"])
            q.limitToLast = false
            #expect(try await store.ids(q) == ["h", "g", "f"])
        }
    }

    /// Every cursor kind, at every document's position, with partial and full value lists, ascending
    /// and descending, alone and in pairs, with and without limits, against `ReferenceQuery`.
    @Test("every cursor combination agrees with the reference evaluation")
    func allCombinations() async throws {
        try await withStore { store, _ in
            let docs = try await Self.seed(store)
            let inC = docs.filter { $0.path.collectionID == "c" && $0.fields["p"] != nil }
            var checked = 0
            for orders in [[QuerySpec.Order(try field("p"))], [.init(try field("p"), .descending)],
                           [.init(try field("p")), .init(try field("q"), .descending)],
                           [.init(try field("q")), .init(.documentID, .descending)], [.init(.documentID)]] {
                var base = QuerySpec(collection: try coll("c"))
                base.orderBy = orders
                let order = ReferenceQuery.normalizedOrder(base)
                var cursors: [QuerySpec.Cursor?] = [nil]
                for d in inC {
                    let values = order.map { o in o.field.isDocumentID ? Value.string(d.path.id) : ReferenceQuery.value(d, o.field)! }
                    for n in 1...values.count {
                        var prefix = Array(values.prefix(n))
                        if n == values.count, d.path.id.hasPrefix("b") { prefix[n - 1] = .reference(d.path.description) }
                        cursors.append(.init(values: prefix, before: true))
                        cursors.append(.init(values: prefix, before: false))
                    }
                }
                for start in cursors {
                    for end in cursors where end == nil || start == nil || checked % 3 == 0 {
                        for (limit, last) in [(nil, false), (2, false), (2, true), (0, false)] as [(Int?, Bool)] {
                            var q = base
                            q.startAt = start
                            q.endAt = end
                            q.limit = limit
                            q.limitToLast = last
                            let expected = ReferenceQuery.run(q, over: docs)
                            let actual = try await store.query(q).map(\.path)
                            #expect(actual == expected, "\(q)")
                            checked += 1
                        }
                    }
                }
            }
            #expect(checked > 1000)
        }
    }

    @Test("a cursor from a document's values (a snapshot) starts at that document")
    func fromSnapshot() async throws {
        try await withStore { store, _ in
            _ = try await Self.seed(store)
            var q = QuerySpec(collection: try coll("c"))
            q.orderBy = [.init(try field("q")), .init(try field("p"), .descending)]
            let all = try await store.query(q)
            for (i, snapshot) in all.enumerated() {
                let values = q.normalizedOrder.map { o in o.field.isDocumentID ? Value.reference(snapshot.path.description) : snapshot.fields[o.field.segments[0]]! }
                var page = q
                page.startAt = .init(values: values, before: false)
                #expect(try await store.query(page).map(\.path) == all.dropFirst(i + 1).map(\.path))
                page.startAt = .init(values: values, before: true)
                page.limit = 2
                #expect(try await store.query(page).map(\.path) == all.dropFirst(i).prefix(2).map(\.path))
            }
        }
    }
}
