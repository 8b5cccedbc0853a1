import Foundation
import HearthModel
@testable import HearthStore
import Testing

@Suite("Collection registry")
struct CollectionRegistryTests {
    struct RolledBack: Error {}

    @Test("an id read inside a write transaction is not cached: after a rollback the collection is unknown again, and the next one gets its own id")
    func noCacheInsideWriteTransaction() async throws {
        let path = temporaryStorePath()
        defer { try? FileManager.default.removeItem(atPath: URL(fileURLWithPath: path).deletingLastPathComponent().path) }
        try await DocumentStore.open(path: path, clock: ManualClock()).close()  // the schema
        let db = try Connection(path: path, options: .init())
        let registry = CollectionRegistry()
        let a = try CollectionPath("a"), b = try CollectionPath("b")

        var phantom: Int64 = 0
        #expect(throws: RolledBack.self) {
            try db.transaction {
                phantom = try registry.idCreating(a, on: db)
                #expect(try registry.id(of: a, on: db) == phantom, "the transaction sees its own row")
                throw RolledBack()
            }
        }
        #expect(try registry.id(of: a, on: db) == nil, "nothing of the rolled-back row was cached")
        let other = try db.transaction { try registry.idCreating(b, on: db) }
        #expect(try registry.id(of: b, on: db) == other)
        #expect(try registry.id(of: a, on: db) == nil, "b did not inherit a's cached id")
        // Read outside a write transaction, a committed id is cached: it stays known even when the
        // row can no longer be read.
        try db.execute("DELETE FROM collections WHERE path = 'b'")
        #expect(try registry.id(of: b, on: db) == other)
    }
}
