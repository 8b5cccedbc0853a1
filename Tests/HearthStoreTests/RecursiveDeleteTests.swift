import Foundation
import HearthModel
@testable import HearthStore
import Testing

/// Recursive delete of a document or collection and everything beneath it, in batches, safe to run
/// again after a crash half-way; listing collections and documents (including parent-only ones).
@Suite("Recursive delete and listings", .timeLimit(.minutes(1)))
struct RecursiveDeleteTests {
    /// A tree several levels deep. `lists/b` and `lists/b/items/x` exist only as parents.
    static let tree = [
        "lists/a", "lists/a/items/1", "lists/a/items/2", "lists/a/items/2/notes/n1", "lists/a/items/2/notes/n2",
        "lists/a/items/2/notes/n2/replies/r1", "lists/a/members/m1",
        "lists/b/items/x/notes/deep", "lists/b/items/y",
        "lists/c",
        "listsX/a", "lists-other/a", "other/lists",
    ]

    static func seed(_ store: DocumentStore) async throws {
        try await store.commit(try tree.enumerated().map { i, p in .create(try doc(p), ["i": .int(Int64(i))]) })
    }

    static func remaining(_ store: DocumentStore) async throws -> [String] {
        var out: [String] = []
        for p in tree where try await store.get(try doc(p)) != nil { out.append(p) }
        return out
    }

    @Test("deleting a document removes it and every document beneath it, at any depth")
    func deleteDocument() async throws {
        try await withStore { store, _ in
            try await Self.seed(store)
            let deleted = try await store.recursiveDelete(["lists", "a", "items", "2"])
            #expect(deleted == 4)
            #expect(try await Self.remaining(store) == Self.tree.filter { !$0.hasPrefix("lists/a/items/2") })
            // Each deletion is an ordinary change in the feed.
            let changes = try await store.allChanges().filter { $0.kind == .deleted }
            #expect(Set(changes.map(\.path.description)) == ["lists/a/items/2", "lists/a/items/2/notes/n1", "lists/a/items/2/notes/n2",
                                                               "lists/a/items/2/notes/n2/replies/r1"])
            #expect(changes.allSatisfy { $0.before != nil && $0.after == nil })
        }
    }

    @Test("deleting a collection removes its documents, their subcollections, and parent-only documents' descendants")
    func deleteCollection() async throws {
        try await withStore { store, _ in
            try await Self.seed(store)
            let deleted = try await store.recursiveDelete(["lists"])
            #expect(deleted == 10)
            #expect(try await Self.remaining(store) == ["listsX/a", "lists-other/a", "other/lists"])
            #expect(try await store.listCollections(under: nil).map(\.description) == ["lists-other", "listsX", "other"])
            #expect(try await store.query(QuerySpec(collectionID: "items", allDescendants: true)).isEmpty)
        }
    }

    @Test("deleting a parent-only document removes what lies beneath it")
    func deleteParentOnly() async throws {
        try await withStore { store, _ in
            try await Self.seed(store)
            #expect(try await store.recursiveDelete(["lists", "b"]) == 2)
            #expect(try await store.listDocuments(in: try coll("lists")).map(\.path.id) == ["a", "c"])
        }
    }

    @Test("deleting what does not exist deletes nothing")
    func deleteNothing() async throws {
        try await withStore { store, _ in
            try await Self.seed(store)
            #expect(try await store.recursiveDelete(["nothing"]) == 0)
            #expect(try await store.recursiveDelete(["lists", "zzz"]) == 0)
            #expect(try await store.recursiveDelete(["lists", "a", "nothing"]) == 0)
            #expect(try await Self.remaining(store) == Self.tree)
        }
    }

    @Test("small batches delete the whole tree, one commit per batch", arguments: [1, 2, 3, 500])
    func batches(batchSize: Int) async throws {
        try await withStore { store, _ in
            try await Self.seed(store)
            let before = store.engine.lastSequence
            #expect(try await store.recursiveDelete(["lists"], batchSize: batchSize) == 10)
            let changes = try await store.engine.changes(after: before, limit: 100)
            #expect(changes.count == 10)
            #expect(Set(changes.map(\.commitTime)).count == (10 + batchSize - 1) / batchSize)
        }
    }

    @Test("a recursive delete stopped half-way (a crash after some batches) finishes when run again, also after reopening")
    func resumeAfterCrash() async throws {
        let clock = ManualClock()
        let path = temporaryStorePath()
        defer { try? FileManager.default.removeItem(atPath: URL(fileURLWithPath: path).deletingLastPathComponent().path) }
        do {
            let store = try await DocumentStore.open(path: path, clock: clock)
            try await Self.seed(store)
            // What one run does before it is killed: two batches of 2, each its own commit.
            for _ in 0..<2 {
                let batch = try await store.engine.documents(under: ["lists"], limit: 2)
                #expect(batch.count == 2)
                try await store.commit(batch.map { .delete($0) })
            }
            #expect(try await Self.remaining(store).count == Self.tree.count - 4)
            store.close()
        }
        let reopened = try await DocumentStore.open(path: path, clock: clock)
        defer { reopened.close() }
        #expect(try await Self.remaining(reopened).count == Self.tree.count - 4)
        #expect(try await reopened.recursiveDelete(["lists"], batchSize: 2) == 6)
        #expect(try await Self.remaining(reopened) == ["listsX/a", "lists-other/a", "other/lists"])
        #expect(try await reopened.recursiveDelete(["lists"], batchSize: 2) == 0)
        #expect(try reopened.sqlite.integrityCheck().isEmpty)
    }

    @Test("listCollections names the collections under a document or the root, excluding empty ones")
    func listCollections() async throws {
        try await withStore { store, _ in
            try await Self.seed(store)
            #expect(try await store.listCollections(under: nil).map(\.description) == ["lists", "lists-other", "listsX", "other"])
            #expect(try await store.listCollections(under: try doc("lists/a")).map(\.description) == ["lists/a/items", "lists/a/members"])
            #expect(try await store.listCollections(under: try doc("lists/b")).map(\.description) == ["lists/b/items"])
            #expect(try await store.listCollections(under: try doc("lists/b/items/x")).map(\.description) == ["lists/b/items/x/notes"])
            #expect(try await store.listCollections(under: try doc("lists/c")).isEmpty)
            #expect(try await store.listCollections(under: try doc("nope/x")).isEmpty)
            // A collection whose only document is deleted is no longer listed.
            try await store.commit([.delete(try doc("lists/a/members/m1"))])
            #expect(try await store.listCollections(under: try doc("lists/a")).map(\.description) == ["lists/a/items"])
            // A collection holding only deeper documents is listed.
            try await store.commit([.create(try doc("lists/c/sub/p/deeper/q"), [:])])
            #expect(try await store.listCollections(under: try doc("lists/c")).map(\.description) == ["lists/c/sub"])
        }
    }

    @Test("listDocuments includes documents that exist only as parents, marked as missing")
    func listDocuments() async throws {
        try await withStore { store, _ in
            try await Self.seed(store)
            let lists = try await store.listDocuments(in: try coll("lists"))
            #expect(lists.map(\.path.description) == ["lists/a", "lists/b", "lists/c"])
            #expect(lists.map(\.exists) == [true, false, true])
            let items = try await store.listDocuments(in: try coll("lists/b/items"))
            #expect(items.map(\.path.id) == ["x", "y"])
            #expect(items.map(\.exists) == [false, true])
            #expect(try await store.listDocuments(in: try coll("empty")).isEmpty)
            try await store.commit([.delete(try doc("lists/b/items/y"))])
            #expect(try await store.listDocuments(in: try coll("lists/b/items")).map(\.path.id) == ["x"])
        }
    }
}
