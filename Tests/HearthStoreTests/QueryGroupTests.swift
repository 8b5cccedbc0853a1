import Foundation
import HearthModel
@testable import HearthStore
import Testing

/// Collection-group queries, and the rules every query must follow.
@Suite("Collection groups and query validation", .timeLimit(.minutes(1)))
struct QueryGroupTests {
    static let itemPaths = [
        "items/r1", "items/r2",
        "lists/a/items/a1", "lists/a/items/a2", "lists/a/items/a3",
        "lists/b/items/b1",
        "lists/a/items/a1/items/deep",
        "users/u/lists/a/items/0x",
        "lists/ab/items/ab1",
    ]

    static func seed(_ store: DocumentStore) async throws {
        var writes: [DocumentWrite] = []
        for (i, p) in itemPaths.enumerated() {
            writes.append(.create(try doc(p), ["n": .int(Int64(i % 4)), "tags": i % 2 == 0 ? ["even"] : ["odd"]]))
        }
        writes.append(.create(try doc("lists/a/other/o1"), ["n": 0]))
        writes.append(.create(try doc("itemsX/no"), ["n": 0]))
        try await store.commit(writes)
    }

    static var sortedPaths: [String] {
        itemPaths.sorted { (try! DocumentPath($0)) < (try! DocumentPath($1)) }
    }

    @Test("a collection group query reads every collection with the id, at any depth, ordered by name")
    func allItems() async throws {
        try await withStore { store, _ in
            try await Self.seed(store)
            let group = QuerySpec(collectionID: "items", allDescendants: true)
            #expect(try await store.paths(group) == Self.sortedPaths)
            #expect(try await store.count(group) == Self.itemPaths.count)
            var desc = group
            desc.orderBy = [.init(.documentID, .descending)]
            #expect(try await store.paths(desc) == Self.sortedPaths.reversed())
        }
    }

    @Test("a collection group query scoped to a parent document reads only beneath it")
    func scoped() async throws {
        try await withStore { store, _ in
            try await Self.seed(store)
            var group = QuerySpec(parent: try doc("lists/a"), collectionID: "items", allDescendants: true)
            #expect(try await store.paths(group) == ["lists/a/items/a1", "lists/a/items/a1/items/deep", "lists/a/items/a2", "lists/a/items/a3"])
            group.parent = try doc("lists/a/items/a1")
            #expect(try await store.paths(group) == ["lists/a/items/a1/items/deep"])
            group.parent = try doc("users/u")
            #expect(try await store.paths(group) == ["users/u/lists/a/items/0x"])
            group.parent = try doc("nobody/here")
            #expect(try await store.paths(group) == [])
        }
    }

    @Test("collection group queries filter, order across collections, limit and page")
    func groupOrderLimit() async throws {
        try await withStore { store, _ in
            try await Self.seed(store)
            var group = QuerySpec(collectionID: "items", allDescendants: true)
            group.orderBy = [.init(try field("n")), .init(.documentID, .descending)]
            let all = try await store.getAll(try Self.itemPaths.map(doc)).compactMap { $0 }
            #expect(all.count == Self.itemPaths.count)
            let expected = ReferenceQuery.run(group, over: all)
            #expect(try await store.query(group).map(\.path) == expected)
            group.limit = 3
            #expect(try await store.query(group).map(\.path) == Array(expected.prefix(3)))
            group.limitToLast = true
            #expect(try await store.query(group).map(\.path) == Array(expected.suffix(3)))
            group.limitToLast = false
            group.filters = [.init(try field("tags"), .arrayContains, "odd")]
            group.limit = nil
            #expect(try await store.query(group).map(\.path) == ReferenceQuery.run(group, over: all))
            group.filters = [.init(try field("n"), .greaterThan, 1)]
            #expect(try await store.query(group).map(\.path) == ReferenceQuery.run(group, over: all))
        }
    }

    @Test("name-ordered group pages with a filter and a cursor, both directions, agree with the plain evaluation")
    func namePagesWithFilterAndCursor() async throws {
        try await withStore { store, _ in
            try await Self.seed(store)
            let all = try await store.getAll(try Self.itemPaths.map(doc)).compactMap { $0 }
            for direction in [QuerySpec.Direction.ascending, .descending] {
                for cursor in Self.sortedPaths {
                    for limit in [1, 2, 3] {
                        var q = QuerySpec(collectionID: "items", allDescendants: true)
                        q.orderBy = [.init(.documentID, direction)]
                        q.filters = [.init(try field("tags"), .arrayContains, "even")]  // an equality scan per collection
                        q.startAt = .init(values: [.reference(cursor)], before: false)
                        q.limit = limit
                        #expect(try await store.query(q).map(\.path) == ReferenceQuery.run(q, over: all), "\(direction) after \(cursor) limit \(limit)")
                    }
                }
            }
        }
    }

    @Test("collection group cursors and filters on __name__ use full references")
    func groupNames() async throws {
        try await withStore { store, _ in
            try await Self.seed(store)
            var group = QuerySpec(collectionID: "items", allDescendants: true)
            group.startAt = .init(values: [.reference("lists/a/items/a2")], before: true)
            #expect(try await store.paths(group) == Array(Self.sortedPaths.drop { $0 != "lists/a/items/a2" }))
            group.startAt = .init(values: [.reference("lists/a/items/a2")], before: false)
            group.endAt = .init(values: [.reference("lists/b/items/b1")], before: false)
            #expect(try await store.paths(group) == ["lists/a/items/a3", "lists/ab/items/ab1", "lists/b/items/b1"])
            group.startAt = nil
            group.endAt = nil
            group.filters = [.init(.documentID, .greaterThanOrEqual, .reference("lists/b"))]
            #expect(try await store.paths(group) == ["lists/b/items/b1", "users/u/lists/a/items/0x"])
            group.filters = [.init(.documentID, .in, [.reference("items/r2"), .reference("lists/b/items/b1")])]
            #expect(try await store.paths(group) == ["items/r2", "lists/b/items/b1"])
            group.filters = [.init(.documentID, .equal, "r1")]
            await expectError(.invalidArgument, "full document references") { _ = try await store.query(group) }
        }
    }

    // MARK: validation

    static func invalidQueries() throws -> [(String, QuerySpec)] {
        func q(_ edit: (inout QuerySpec) throws -> Void) rethrows -> QuerySpec {
            var spec = QuerySpec(collectionID: "c")
            try edit(&spec)
            return spec
        }
        let a = try FieldPath("a"), b = try FieldPath("b")
        return [
            ("limitToLast without orderBy", q { $0.limit = 1; $0.limitToLast = true }),
            ("limitToLast without limit", q { $0.orderBy = [.init(a)]; $0.limitToLast = true }),
            ("negative limit", q { $0.limit = -1 }),
            ("two array-contains", q { $0.filters = [.init(a, .arrayContains, 1), .init(b, .arrayContains, 2)] }),
            ("array-contains and array-contains-any", q { $0.filters = [.init(a, .arrayContains, 1), .init(b, .arrayContainsAny, [2])] }),
            ("in and not-in", q { $0.filters = [.init(a, .in, [1]), .init(b, .notIn, [2])] }),
            ("two != filters", q { $0.filters = [.init(a, .notEqual, 1), .init(b, .notEqual, 2)] }),
            ("!= and not-in", q { $0.filters = [.init(a, .notEqual, 1), .init(b, .notIn, [2])] }),
            ("in with 31 values", q { $0.filters = [.init(a, .in, .array((0..<31).map { .int(Int64($0)) }))] }),
            ("array-contains-any with 31 values", q { $0.filters = [.init(a, .arrayContainsAny, .array((0..<31).map { .int(Int64($0)) }))] }),
            ("not-in with 11 values", q { $0.filters = [.init(a, .notIn, .array((0..<11).map { .int(Int64($0)) }))] }),
            ("in with an empty list", q { $0.filters = [.init(a, .in, [])] }),
            ("in with a non-array", q { $0.filters = [.init(a, .in, 1)] }),
            ("not-in with a non-array", q { $0.filters = [.init(a, .notIn, "x")] }),
            ("array-contains-any with a non-array", q { $0.filters = [.init(a, .arrayContainsAny, nil)] }),
            ("cursor with more values than order fields", q { $0.orderBy = [.init(a)]; $0.startAt = .init(values: [1, "x", 3], before: true) }),
            ("end cursor with too many values", q { $0.endAt = .init(values: ["x", "y"], before: true) }),
            ("a field ordered twice", q { $0.orderBy = [.init(a), .init(a, .descending)] }),
            ("array-contains on __name__", q { $0.filters = [.init(.documentID, .arrayContains, "x")] }),
            ("__name__ compared with a number", q { $0.filters = [.init(.documentID, .equal, 5)] }),
            ("__name__ compared with a path", q { $0.filters = [.init(.documentID, .lessThan, "a/b")] }),
        ]
    }

    @Test("invalid queries are refused with invalid-argument, by query and by count")
    func invalid() async throws {
        try await withStore { store, _ in
            try await store.commit([.create(try doc("c/x"), ["a": 1])])
            for (name, spec) in try Self.invalidQueries() {
                let error = await expectError(.invalidArgument) { _ = try await store.query(spec) }
                #expect(error != nil, "\(name)")
                await expectError(.invalidArgument) { _ = try await store.count(spec) }
            }
        }
    }

    @Test("queries at the limits are accepted: in with 30 values, not-in with 10, cursors as long as the normalized order")
    func limitsAccepted() async throws {
        try await withStore { store, _ in
            try await store.commit([.create(try doc("c/x"), ["a": 7, "b": 1])])
            var q = QuerySpec(collection: try coll("c"))
            q.filters = [.init(try field("a"), .in, .array((0..<30).map { .int(Int64($0)) }))]
            #expect(try await store.ids(q) == ["x"])
            q.filters = [.init(try field("a"), .notIn, .array((10..<20).map { .int(Int64($0)) }))]
            #expect(try await store.ids(q) == ["x"])
            q.filters = [.init(try field("a"), .arrayContainsAny, .array((0..<30).map { .int(Int64($0)) }))]
            #expect(try await store.ids(q) == [])
            q.filters = [.init(try field("b"), .greaterThan, 0)]
            q.orderBy = [.init(try field("a"))]
            q.startAt = .init(values: [7, 1, "x"], before: true)
            #expect(try await store.ids(q) == ["x"])
        }
    }
}
