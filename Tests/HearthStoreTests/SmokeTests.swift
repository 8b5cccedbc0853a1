import Foundation
import HearthModel
@testable import HearthStore
import Testing

func temporaryStorePath() -> String {
    NSTemporaryDirectory() + "hearth-store-\(UUID().uuidString)/store.sqlite"
}

@Suite("Store smoke")
struct SmokeTests {
    @Test("SQLite keeps no memory statistics once the store has opened (they cost a global lock per allocation)")
    func noMemoryStatistics() async throws {
        let store = try await DocumentStore.open(path: temporaryStorePath(), clock: ManualClock())
        try await store.commit([.create(try DocumentPath("a/b"), ["n": 1])])
        #expect(try await store.get(try DocumentPath("a/b"))?.fields["n"] == 1)
        #expect(!Connection.memoryStatisticsKept)
    }

    @Test("create, read, query, update, delete, and the change feed records each")
    func basics() async throws {
        let clock = ManualClock()
        let store = try await DocumentStore.open(path: temporaryStorePath(), clock: clock)
        let a = try DocumentPath("members/alice/items/a")
        let b = try DocumentPath("members/alice/items/b")
        try await store.commit([.create(a, ["title": "milk", "n": 2, "tags": ["x", "y"]]), .create(b, ["title": "eggs", "n": 1])])
        #expect(try await store.get(a)?.fields["title"] == "milk")
        let items = try CollectionPath("members/alice/items")
        var q = QuerySpec(collection: items)
        q.orderBy = [.init(try FieldPath("n"))]
        #expect(try await store.query(q).map(\.path.id) == ["b", "a"])
        q.filters = [.init(try FieldPath("tags"), .arrayContains, "y")]
        #expect(try await store.query(q).map(\.path.id) == ["a"])
        try await store.commit([.update(a, [(try FieldPath("n"), Value.int(5))])])
        try await store.commit([.delete(b)])
        let changes = try await store.engine.changes(after: 0, limit: 10)
        #expect(changes.map(\.kind) == [.created, .created, .updated, .deleted])
        #expect(try await store.count(QuerySpec(collection: items)) == 1)
        let e = try await (store.engine as! SQLiteEngine).explain(q)
        print("PLAN", e)
    }
}
