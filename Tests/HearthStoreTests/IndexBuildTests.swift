import Foundation
import HearthModel
@testable import HearthStore
import Testing

@Suite("Indexes built on a field's first query")
struct IndexBuildTests {
    func fieldRows(_ store: DocumentStore, _ field: String) throws -> Int {
        try store.sqlite.readers.withReader { db in
            Int(try db.scalarInt("SELECT count(*) FROM field_index WHERE field = ?", [.text(field)]) ?? 0)
        }
    }

    @Test("writes index nothing until a query needs a field; the first query builds its index from the existing documents")
    func builtOnFirstQuery() async throws {
        try await withStore { store, _ in
            for i in 0..<50 {
                try await store.commit([.create(try doc("shelves/s\(i % 2)/books/b\(i)"), ["n": .int(Int64(i)), "tags": i % 3 == 0 ? ["x"] : ["y"], "title": "t"])])
            }
            #expect(try store.indexRowCount() == 0, "no query yet, so no index rows")
            var q = QuerySpec(collectionID: "books", allDescendants: true)
            q.filters = [.init(try field("n"), .greaterThanOrEqual, 40)]
            q.orderBy = [.init(try field("n"), .descending)]
            #expect(try await store.query(q).map { $0.fields["n"] } == (40..<50).reversed().map { .int(Int64($0)) })
            #expect(try fieldRows(store, "n") == 50, "built across every collection named books")
            #expect(try fieldRows(store, "title") == 0, "fields never queried stay unindexed")
            #expect(store.sqlite.indexes.indexed("books").keys.map(\.string).sorted() == ["n"])
        }
    }

    @Test("once built, an index is kept by creates, updates and deletes, array elements included")
    func maintained() async throws {
        try await withStore { store, _ in
            let items = try coll("items")
            try await store.commit([.create(try items.document("a"), ["tags": ["x", "y"]])])
            var q = QuerySpec(collection: items)
            q.filters = [.init(try field("tags"), .arrayContains, "z")]
            #expect(try await store.ids(q) == [])
            try await store.commit([.create(try items.document("b"), ["tags": ["z"]])])
            try await store.commit([.update(try items.document("a"), [(try field("tags"), Value.array(["z", "z"]))])])
            #expect(try await store.ids(q) == ["a", "b"])
            try await store.commit([.delete(try items.document("b"))])
            #expect(try await store.ids(q) == ["a"])
            #expect(try fieldRows(store, "tags") == 2, "one whole-value row and one element row for a")
        }
    }

    @Test("indexes survive reopening: the registry is in the database")
    func persisted() async throws {
        let path = temporaryStorePath()
        do {
            let store = try await DocumentStore.open(path: path, clock: ManualClock())
            try await store.commit([.create(try doc("c/1"), ["k": 1])])
            var q = QuerySpec(collection: try coll("c"))
            q.filters = [.init(try field("k"), .equal, 1)]
            _ = try await store.query(q)
            store.close()
        }
        let reopened = try await DocumentStore.open(path: path, clock: ManualClock())
        #expect(reopened.sqlite.indexes.indexed("c").keys.map(\.string).sorted() == ["k"])
        try await reopened.commit([.create(try doc("c/2"), ["k": 1])])
        #expect(try fieldRows(reopened, "k") == 2, "the reopened writer maintains the index")
    }

    @Test("an index build and concurrent writes never leave the index out of step with the documents")
    func concurrentBuild() async throws {
        try await withStore { store, _ in
            for i in 0..<200 { try await store.commit([.create(try doc("w/d\(i)"), ["v": .int(Int64(i % 7))])]) }
            var q = QuerySpec(collection: try coll("w"))
            q.filters = [.init(try field("v"), .equal, 3)]
            async let writes: Void = {
                for i in 200..<400 { try await store.commit([.create(try doc("w/d\(i)"), ["v": .int(Int64(i % 7))])]) }
            }()
            async let first = store.query(q)
            _ = try await (writes, first)
            let expected = (0..<400).filter { $0 % 7 == 3 }.count
            #expect(try await store.query(q).count == expected)
            #expect(try fieldRows(store, "v") == 400)
        }
    }
}
