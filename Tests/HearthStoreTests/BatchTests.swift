import Foundation
import HearthModel
@testable import HearthStore
import Testing

/// Batches: any number of writes committed atomically, at one commit time (Firestore dropped its
/// limit of 500; what remains is 500 field transforms on one document per commit).
// Bounds for hangs, not for speed: every commit hops to the writer's thread and back, and each
// return waits its turn behind everything else on the cooperative pool, which the whole suite
// shares on two cores (WriterExecutor); 200 commits took 30 s there under load, 0.1 s alone.
@Suite("Batches", .timeLimit(.minutes(3)))
struct BatchTests {
    @Test("a batch of 500 writes commits atomically at one commit time")
    func fiveHundred() async throws {
        try await withStore { store, _ in
            let writes = try (0..<500).map { DocumentWrite.create(try doc("c/d\($0)"), ["i": .int(Int64($0))]) }
            let result = try await store.commit(writes)
            #expect(result.writeResults.count == 500)
            #expect(result.writeResults.allSatisfy { $0.updateTime == result.commitTime })
            #expect(try await store.count(QuerySpec(collection: try coll("c"))) == 500)
            let changes = try await store.allChanges()
            #expect(changes.count == 500)
            #expect(changes.allSatisfy { $0.commitTime == result.commitTime })
            #expect(changes.map(\.sequence) == Array(1...500))
        }
    }

    @Test("a batch of 2,000 writes commits atomically too: there is no limit of 500 writes")
    func twoThousand() async throws {
        try await withStore { store, _ in
            let writes = try (0..<2000).map { DocumentWrite.create(try doc("c/d\($0)"), ["i": .int(Int64($0))]) }
            let result = try await store.commit(writes)
            #expect(result.writeResults.count == 2000)
            #expect(try await store.count(QuerySpec(collection: try coll("c"))) == 2000)
            // All or nothing still: one failing write among 2,000 leaves nothing of the others.
            var again = try (2000..<3999).map { DocumentWrite.create(try doc("c/d\($0)"), [:]) }
            again.append(.create(try doc("c/d0"), [:]))
            await expectError(.alreadyExists) { try await store.commit(again) }
            #expect(try store.documentRowCount() == 2000)
        }
    }

    @Test("a commit that would replace more than 128 MiB of stored documents is Firestore's 'Transaction too big' and changes nothing")
    func transactionTooBig() async throws {
        try await withStore { store, _ in
            let blob = Value.string(String(repeating: "x", count: 1_000_000))
            for start in stride(from: 0, to: 140, by: 20) {
                try await store.commit(try (start..<start + 20).map { .create(try doc("big/d\($0)"), ["s": blob]) })
            }
            // 140 documents of about 1 MB are more than the writer holds for one commit.
            await expectError(.invalidArgument, "Transaction too big. Decrease transaction size.") {
                try await store.commit(try (0..<140).map { .delete(try doc("big/d\($0)")) })
            }
            #expect(try store.documentRowCount() == 140)
            // A recursive delete halves its batch until one fits: 140 refused, then 70 and 70.
            #expect(try await store.recursiveDelete(["big"]) == 140)
            #expect(try store.documentRowCount() == 0)
        }
    }

    @Test("more than 500 field transforms on one document in one commit is invalid-argument and writes nothing")
    func transformsPerDocument() async throws {
        try await withStore { store, _ in
            let path = try doc("c/t")
            func transforms(_ n: Int) throws -> [FieldTransformSpec] {
                try (0..<n).map { FieldTransformSpec(try field("f\($0)"), .increment(1)) }
            }
            // 500 on one document (split over two writes) and 500 more on another: allowed.
            try await store.commit([.set(path, [:], transforms: try transforms(300)), .update(path, [], transforms: try transforms(200)),
                                    .set(try doc("c/u"), [:], transforms: try transforms(500))])
            #expect(try await store.get(path)?.fields.count == 300)
            await expectError(.invalidArgument, "at most 500 field transforms to one document (c/t has 501 or more)") {
                try await store.commit([.update(path, [], transforms: try transforms(250)), .update(path, [], transforms: try transforms(251))])
            }
            #expect(try await store.get(path)?.fields["f0"] == 2)
        }
    }

    static let failing: [(String, FunctionsErrorCode)] = [
        ("create of an existing document", .alreadyExists),
        ("update of a missing document", .notFound),
        ("stale update time", .failedPrecondition),
        ("invalid value", .invalidArgument),
    ]

    @Test("one failing write rolls back the whole batch: nothing written, no change-feed entries", arguments: failing)
    func rollback(name: String, code: FunctionsErrorCode) async throws {
        try await withStore { store, clock in
            let existing = try doc("c/existing")
            let created = try await store.commit([.create(existing, ["v": 1])])
            clock.advance(by: .seconds(1))
            let failing: DocumentWrite
            switch code {
            case .alreadyExists: failing = .create(existing, ["v": 2])
            case .notFound: failing = .update(try doc("c/missing"), [try upd("v", 1)])
            case .failedPrecondition:
                failing = DocumentWrite(path: existing, operation: .update(fields: ["v": 3], mask: nil), precondition: .updateTime(created.commitTime + .seconds(7)))
            default: failing = .set(try doc("c/bad"), ["__bad__": 1])
            }
            let batch: [DocumentWrite] = [
                .create(try doc("c/new1"), ["v": 1]),
                .update(existing, [try upd("v", 100)]),
                .set(try doc("other/new2"), ["v": 2]),
                failing,
                .delete(try doc("c/existing")),
            ]
            await expectError(code) { try await store.commit(batch) }
            #expect(try await store.get(try doc("c/new1")) == nil, "\(name)")
            #expect(try await store.get(try doc("other/new2")) == nil)
            #expect(try await store.get(existing)?.fields == ["v": 1])
            #expect(try await store.get(existing)?.updateTime == created.commitTime)
            #expect(try await store.allChanges().count == 1)
            #expect(store.engine.lastSequence == 1)
            #expect(try await store.listCollections(under: nil).map(\.description) == ["c"])
            // The store is healthy afterwards: the next commit takes the next sequence.
            try await store.commit([.create(try doc("c/after"), [:])])
            #expect(try await store.allChanges().map(\.sequence) == [1, 2])
        }
    }

    @Test("several writes to one document in a batch apply in order and produce one change")
    func oneDocumentManyWrites() async throws {
        try await withStore { store, _ in
            let path = try doc("c/d")
            let result = try await store.commit([
                .set(path, ["n": 1, "m": ["x": 1]]),
                .update(path, [try upd("n", 2)]),
                .merge(path, ["m": ["y": 2]]),
                .update(path, [], transforms: [.init(try field("n"), .increment(10))]),
            ])
            #expect(try await store.get(path)?.fields == ["n": 12, "m": ["x": 1, "y": 2]])
            #expect(result.writeResults.count == 4)
            #expect(result.writeResults[3].transformResults == [12])
            let changes = try await store.allChanges()
            #expect(changes.count == 1)
            #expect(changes.first?.kind == .created)
            #expect(changes.first?.before == nil)
            #expect(changes.first?.after?.fields == ["n": 12, "m": ["x": 1, "y": 2]])
        }
    }

    @Test("an update after a create in the same batch sees the created document")
    func createThenUpdate() async throws {
        try await withStore { store, _ in
            let path = try doc("c/d")
            try await store.commit([.create(path, ["a": 1]), .update(path, [try upd("b", 2)])])
            #expect(try await store.get(path)?.fields == ["a": 1, "b": 2])
        }
    }

    @Test("a create then delete of one document in a batch leaves nothing and no change")
    func createThenDelete() async throws {
        try await withStore { store, _ in
            let path = try doc("c/d")
            try await store.commit([.create(path, ["a": 1]), .delete(path)])
            #expect(try await store.get(path) == nil)
            #expect(try await store.allChanges().isEmpty)
            #expect(try store.indexRowCount() == 0)
        }
    }

    @Test("a delete then set of an existing document in a batch is one update")
    func deleteThenSet() async throws {
        try await withStore { store, clock in
            let path = try doc("c/d")
            try await store.commit([.create(path, ["a": 1])])
            clock.advance(by: .seconds(1))
            try await store.commit([.delete(path), .set(path, ["b": 2])])
            #expect(try await store.get(path)?.fields == ["b": 2])
            let changes = try await store.allChanges()
            #expect(changes.map(\.kind) == [.created, .updated])
            #expect(changes.last?.before?.fields == ["a": 1])
        }
    }

    @Test("readers see a batch whole or not at all while commits run concurrently")
    func snapshotIsolation() async throws {
        try await withStore { store, _ in
            let a = try doc("accounts/a"), b = try doc("accounts/b")
            try await store.commit([.create(a, ["balance": 0]), .create(b, ["balance": 0])])
            let accounts = try coll("accounts")
            try await withTimeout(seconds: 150) {
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask {
                        for i in 1...200 {
                            try await store.commit([.set(a, ["balance": .int(Int64(i))]), .set(b, ["balance": .int(Int64(-i))])])
                        }
                    }
                    for _ in 0..<2 {
                        group.addTask {
                            for _ in 0..<200 {
                                let pair = try await store.getAll([a, b])
                                let sum = (pair[0]?.fields["balance"]?.intValue ?? 99) + (pair[1]?.fields["balance"]?.intValue ?? 99)
                                #expect(sum == 0)
                                let rows = try await store.query(QuerySpec(collection: accounts))
                                #expect(rows.compactMap { $0.fields["balance"]?.intValue }.reduce(0, +) == 0)
                            }
                        }
                    }
                    try await group.waitForAll()
                }
            }
        }
    }

    @Test("batches that create a new collection and then fail leave no trace of it")
    func failedBatchNewCollections() async throws {
        try await withStore { store, _ in
            // Two documents in a new collection, then a write that fails after they were applied.
            let tooBig: Value = .string(String(repeating: "x", count: 1_100_000))
            await expectError(.invalidArgument) {
                try await store.commit([.create(try doc("ghost/a"), ["n": 1]), .create(try doc("ghost/b"), ["n": 2]),
                                        .create(try doc("ghost/z"), ["big": tooBig])])
            }
            // A collection created afterwards must not be confused with the one rolled back.
            try await store.commit([.create(try doc("real/x"), ["n": 10])])
            try await store.commit([.create(try doc("ghost/y"), ["n": 20])])
            #expect(try await store.paths(QuerySpec(collection: try coll("real"))) == ["real/x"])
            #expect(try await store.paths(QuerySpec(collection: try coll("ghost"))) == ["ghost/y"])
            #expect(try await store.get(try doc("real/y")) == nil)
            #expect(try await store.get(try doc("ghost/x")) == nil)
            #expect(try await store.listCollections(under: nil).map(\.description) == ["ghost", "real"])
        }
    }
}
