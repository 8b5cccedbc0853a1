import Foundation
import HearthModel
@testable import HearthStore
import Synchronization
import Testing

/// The store's part of export and import: one snapshot out, one transaction in.
@Suite("Store export and import")
struct StoreExportImportTests {
    func exported(_ store: DocumentStore) throws -> [ExportRecord] {
        var out: [ExportRecord] = []
        try store.engine.exportRecords { out.append($0) }
        return out
    }

    func importing(_ records: [ExportRecord], into store: DocumentStore, requireEmpty: Bool = true) async throws -> ImportedRecords {
        let queue = Mutex(records[...])
        return try await store.engine.importRecords(requireEmpty: requireEmpty) { queue.withLock { $0.popFirst() } }
    }

    @Test("records come out ordered (documents by path, users by uid, deliveries by id) and go back in as they were; running deliveries come back pending")
    func roundTrip() async throws {
        try await withStore { source, clock in
            try await source.commit([.set(try doc("b/2"), ["n": 2]), .set(try doc("a/1/c/3"), ["n": 3]), .set(try doc("a/1"), ["n": 1])])
            clock.advance(by: .seconds(5))
            try await source.commit([.merge(try doc("a/1"), ["m": true])])
            let users = UserTable(engine: source.sqlite)
            try await users.create(UserRecord(uid: "zed", email: "zed@example.com", metadata: .init(creationTime: clock.now())), time: clock.now())
            try await users.create(UserRecord(uid: "amy", metadata: .init(creationTime: clock.now()), providerData: [.init(providerId: "apple.com", uid: "a-1")]), time: clock.now())
            let deliveries = source.engine.deliveries
            try await deliveries.enqueue((1...3).map { TaskEnqueue(queue: "work", id: "t\($0)", data: .int(Int64($0)), scheduleTime: clock.now()) })
            _ = try await deliveries.claim([ClaimRequest(function: "work", limit: 1)], now: clock.now(), owner: "node-a", leaseUntil: { _ in clock.now() + .seconds(60) })
            try await deliveries.registerSchedule("nightly", at: clock.now())

            let records = try exported(source)
            #expect(records.compactMap { if case .document(let d) = $0 { d.path.description } else { nil } } == ["a/1", "a/1/c/3", "b/2"])
            #expect(records.compactMap { if case .user(let u) = $0 { u.uid } else { nil } } == ["amy", "zed"])
            #expect(records.compactMap { (r: ExportRecord) -> DeliveryState? in if case .delivery(let d) = r { d.state } else { nil } } == [.running, .pending, .pending])
            #expect(records.map(\.kind) == records.map(\.kind).sorted(), "kind by kind, in the files' order")

            try await withStore { target, _ in
                let result = try await importing(records, into: target)
                #expect(result.counts == [.documents: 3, .users: 2, .deliveries: 3, .schedules: 1, .taskIDs: 3])
                #expect(result.madePending == 1 && result.functions == ["work"])
                let back = try exported(target)
                #expect(back.count == records.count)
                for (a, b) in zip(records, back) {
                    if case .delivery(var d) = a, d.state == .running {
                        d.state = .pending
                        #expect(b == .delivery(d))
                    } else {
                        #expect(a == b)
                    }
                }
                #expect(try await target.engine.changes(after: 0, limit: 10).isEmpty, "no change feed entry: no trigger")
                #expect(try await target.engine.users.events(after: 0, limit: 10).isEmpty, "no user event")
                #expect(try await target.engine.users.user(provider: "apple.com", providerUID: "a-1")?.uid == "amy", "provider links are indexed")
                #expect(try await target.engine.users.user(email: "ZED@example.com")?.uid == "zed")
                // The reserved ids hold: the same task cannot be enqueued again.
                await expectError(.alreadyExists) { try await target.engine.deliveries.enqueue([TaskEnqueue(queue: "work", id: "t2", data: 0, scheduleTime: .zero)]) }
            }
        }
    }

    @Test("an import keeps the target's field indexes, and a refused one leaves nothing behind, not even a collection id")
    func indexesAndRollback() async throws {
        try await withStore { target, _ in
            var spec = QuerySpec(collection: try coll("items"))
            spec.filters = [.init(try field("n"), .greaterThanOrEqual, 5)]
            #expect(try await target.query(spec).isEmpty)  // builds (an empty) index of n
            let time = Timestamp(seconds: 1_700_000_000)
            let records = try (0..<10).map { ExportRecord.document(StoredDocument(path: try doc("items/i\($0)"), fields: ["n": .int(Int64($0))], createTime: time, updateTime: time)) }
            let refused = records + [.document(StoredDocument(path: try doc("fresh/x"), fields: [:], createTime: time, updateTime: time)), records[3]]
            let error = await #expect(throws: ImportError.self) { try await importing(refused, into: target) }
            #expect(error?.message == "field 'path': the document items/i3 appears twice")
            #expect(try target.documentRowCount() == 0 && target.indexRowCount() == 0)
            #expect(try target.sqlite.readers.withReader { try $0.scalarInt("SELECT count(*) FROM collections") } == 0)
            _ = try await importing(records, into: target)
            #expect(try await target.query(spec).map(\.path.id) == ["i5", "i6", "i7", "i8", "i9"], "the index has the imported documents")
            #expect(try target.indexRowCount() == 10)
            try await target.commit([.set(try doc("items/i11"), ["n": 11])])
            #expect(try await target.query(spec).count == 6, "and later writes keep it")
        }
    }

    @Test("requireEmpty refuses documents, users and deliveries by name; without it, users join a store that has others, and a taken email is named")
    func emptiness() async throws {
        try await withStore { target, clock in
            let users = UserTable(engine: target.sqlite)
            try await users.create(UserRecord(uid: "old", email: "old@example.com", metadata: .init(creationTime: clock.now())), time: clock.now())
            let newcomer = ExportRecord.user(UserRecord(uid: "new", email: "new@example.com", metadata: .init(creationTime: clock.now())))
            let refused = await #expect(throws: ImportError.self) { try await importing([newcomer], into: target) }
            #expect(refused?.message == "the store already holds 1 user (first: old); import into an empty store")
            _ = try await importing([newcomer], into: target, requireEmpty: false)
            let clash = ExportRecord.user(UserRecord(uid: "third", email: "OLD@example.com", metadata: .init(creationTime: clock.now())))
            let taken = await #expect(throws: ImportError.self) { try await importing([clash], into: target, requireEmpty: false) }
            #expect(taken?.message == "field 'email': OLD@example.com is already the address of user 'old'")
            #expect(try users.count() == 2)
        }
    }
}
