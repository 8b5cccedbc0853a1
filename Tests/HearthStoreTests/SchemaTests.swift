import Foundation
import HearthModel
@testable import HearthStore
import Testing

/// The database file across opens: migrations, refusing a newer schema, what must survive a restart
/// (documents, indexes, the feed's sequence and commit times), and closing.
@Suite("Schema, reopening and closing", .timeLimit(.minutes(1)))
struct SchemaTests {
    /// A temporary database path, removed after `body`.
    static func withPath<T>(_ body: (String) async throws -> T) async throws -> T {
        let path = temporaryStorePath()
        defer { try? FileManager.default.removeItem(atPath: URL(fileURLWithPath: path).deletingLastPathComponent().path) }
        return try await body(path)
    }

    /// Turns the database at `path` back into what a binary knowing only the migrations before
    /// `first` left behind: later migrations undone newest first (their tables dropped, their added
    /// columns removed), `user_version` set back.
    static func undoMigrations(from first: Int, at path: String) throws {
        let raw = try Connection(path: path, options: .init())
        for migration in Schema.migrations[first...].reversed() {
            for line in migration.split(separator: "\n").reversed() {
                if line.hasPrefix("CREATE TABLE ") {
                    let table = line.dropFirst("CREATE TABLE ".count).prefix { $0 != " " && $0 != "(" }
                    try raw.execute("DROP TABLE \(table)")
                } else if line.hasPrefix("ALTER TABLE "), let add = line.range(of: " ADD COLUMN ") {
                    let table = line[line.index(line.startIndex, offsetBy: "ALTER TABLE ".count)..<add.lowerBound]
                    let column = line[add.upperBound...].prefix { $0 != " " }
                    try raw.execute("ALTER TABLE \(table) DROP COLUMN \(column)")
                }
            }
        }
        try raw.execute("PRAGMA user_version = \(first)")
    }

    @Test("reopening an existing database keeps documents, indexes, collections and the feed")
    func reopen() async throws {
        try await Self.withPath { path in
            let clock = ManualClock()
            let written: CommitResult
            do {
                let store = try await DocumentStore.open(path: path, clock: clock)
                written = try await store.commit([.create(try doc("c/a"), ["n": 1, "tags": ["x"]]), .create(try doc("c/a/sub/b"), ["n": 2])])
                store.close()
            }
            let store = try await DocumentStore.open(path: path, clock: clock)
            defer { store.close() }
            let a = try #require(try await store.get(try doc("c/a")))
            #expect(a.fields == ["n": 1, "tags": ["x"]])
            #expect(a.createTime == written.commitTime)
            var q = QuerySpec(collection: try coll("c"))
            q.filters = [.init(try field("tags"), .arrayContains, "x")]
            #expect(try await store.ids(q) == ["a"])
            #expect(try await store.listCollections(under: try doc("c/a")).map(\.description) == ["c/a/sub"])
            #expect(store.engine.lastSequence == 2)
            let next = try await store.commit([.update(try doc("c/a"), [try upd("n", 3)])])
            #expect(next.commitTime > written.commitTime)
            #expect(try await store.allChanges().map(\.sequence) == [1, 2, 3])
            #expect(try store.sqlite.integrityCheck().isEmpty)
        }
    }

    @Test("a database at the current schema version is opened as is; user_version records it")
    func userVersion() async throws {
        try await Self.withPath { path in
            let store = try await DocumentStore.open(path: path, clock: ManualClock())
            store.close()
            let raw = try Connection(path: path, options: .init())
            #expect(try raw.scalarInt("PRAGMA user_version") == Int64(Schema.version))
            let again = try await DocumentStore.open(path: path, clock: ManualClock())
            again.close()
        }
    }

    @Test("a database from before the feed_state migration is migrated on open, keeps its data, and prunes safely")
    func migratesOlderDatabase() async throws {
        try await Self.withPath { path in
            do {
                let store = try await DocumentStore.open(path: path, clock: ManualClock())
                try await store.commit([.create(try doc("c/a"), ["n": 1])])
                store.close()
            }
            // Back to what a binary without the feed_state migration left behind: the tables of that
            // migration and any later one dropped, user_version before it.
            let first = try #require(Schema.migrations.firstIndex { $0.contains("CREATE TABLE feed_state") })
            try Self.undoMigrations(from: first, at: path)
            let store = try await DocumentStore.open(path: path, clock: ManualClock())
            defer { store.close() }
            #expect(try await store.get(try doc("c/a"))?.fields["n"] == 1)
            #expect(store.engine.lastSequence == 1)
            #expect(try await store.engine.pruneChanges(committedBefore: ManualClock().now() + .seconds(60)) == 1)
            let raw = try Connection(path: path, options: .init())
            #expect(try raw.scalarInt("PRAGMA user_version") == Int64(Schema.version))
            #expect(try raw.scalarInt("SELECT last_sequence FROM feed_state") == 1)
        }
    }

    @Test("refresh tokens stored before migration 8 stay live after it, and can then be revoked")
    func refreshTokenMigration() async throws {
        try await Self.withPath { path in
            let hash = Array("token-hash".utf8)
            do {
                let store = try await DocumentStore.open(path: path, clock: ManualClock())
                try await UserTable(engine: store.sqlite).storeRefreshToken(
                    hash: hash, RefreshTokenRecord(uid: "u1", claims: ["role": "admin"], authTime: Timestamp(seconds: 100), createTime: Timestamp(seconds: 100)))
                store.close()
            }
            let eighth = try #require(Schema.migrations.firstIndex { $0.contains("refresh_tokens ADD COLUMN revoked_time") })
            try Self.undoMigrations(from: eighth, at: path)
            let store = try await DocumentStore.open(path: path, clock: ManualClock())
            defer { store.close() }
            let users = UserTable(engine: store.sqlite)
            let migrated = try #require(try users.refreshTokenRecord(hash: hash))
            #expect(migrated == RefreshTokenRecord(uid: "u1", claims: ["role": "admin"], authTime: Timestamp(seconds: 100), createTime: Timestamp(seconds: 100)))
            #expect(try await users.revokeAllRefreshTokens(uid: "u1") == 1)
            #expect(try users.refreshTokenRecord(hash: hash)?.revokedTime != nil)
            #expect(try await users.revokeAllRefreshTokens(uid: "u1") == 0, "a revoked token is not revoked again")
        }
    }

    @Test("emails stored under the old Unicode lower-casing are re-keyed by migration 11, so sign-in by email finds them")
    func emailKeyMigration() async throws {
        try await Self.withPath { path in
            do {
                let store = try await DocumentStore.open(path: path, clock: ManualClock())
                let users = UserTable(engine: store.sqlite)
                try await users.create(UserRecord(uid: "u1", email: "ÄB@Example.io", metadata: .init(creationTime: Timestamp(seconds: 1))), time: Timestamp(seconds: 1))
                store.close()
            }
            // What the previous binary stored: the whole address lower-cased the Unicode way.
            let eleventh = 11 - 1
            try Self.undoMigrations(from: eleventh, at: path)
            let raw = try Connection(path: path, options: .init())
            try raw.run("UPDATE users SET email = ? WHERE uid = 'u1'", [.text("äb@example.io")])
            let store = try await DocumentStore.open(path: path, clock: ManualClock())
            defer { store.close() }
            let users = UserTable(engine: store.sqlite)
            #expect(try users.get(email: "ÄB@EXAMPLE.IO")?.uid == "u1")
            #expect(try users.get(email: "äb@example.io") == nil, "another address, as Firebase compares them")
        }
    }

    @Test("delivery payloads stored as Value maps before migration 12 become typed events; an unreadable one is dead-lettered, kept")
    func payloadMigration() async throws {
        try await Self.withPath { path in
            let t = Timestamp(seconds: 1_700_000_000)
            let doc = StoredDocument(path: try DocumentPath("items/a"), fields: ["n": 1], createTime: t, updateTime: t)
            let user = UserRecord(uid: "u3", email: "u3@example.com", metadata: .init(creationTime: t))
            let legacy: [(function: String, event: String, payload: [UInt8])] = [
                ("onItem", "7", BinaryValueCodec.encode(["id": "7", "time": .timestamp(t), "kind": "created", "path": "items/a",
                                                         "params": ["itemId": "a"], "after": ["path": "items/a", "fields": .map(doc.fields),
                                                                   "createTime": .timestamp(t), "updateTime": .timestamp(t)]])),
                ("work", "t1", BinaryValueCodec.encode(["data": ["n": 1], "scheduledTime": .timestamp(t)])),
                ("tick", "2023-11-14T22:13:20Z", BinaryValueCodec.encode(["jobName": "tick", "scheduleTime": .timestamp(t)])),
                ("purge", "user-3", BinaryValueCodec.encode(["id": "user-3", "time": .timestamp(t), "kind": "deleted", "user": try ValueEncoder().encode(user)])),
                ("odd", "x", BinaryValueCodec.encode(.int(5))),
            ]
            do {
                let store = try await DocumentStore.open(path: path, clock: ManualClock())
                store.close()
            }
            try Self.undoMigrations(from: 12 - 1, at: path)
            let raw = try Connection(path: path, options: .init())
            for row in legacy {
                try raw.run("INSERT INTO deliveries(function, event_id, payload, due_time, create_time) VALUES (?, ?, ?, 0, 0)",
                            [.text(row.function), .text(row.event), .blob(row.payload)])
            }
            let store = try await DocumentStore.open(path: path, clock: ManualClock())
            defer { store.close() }
            let rows = Dictionary(uniqueKeysWithValues: try store.engine.deliveries.list(function: nil, state: nil, limit: 10).map { ($0.function, $0) })
            #expect(try rows["onItem"]?.event() == .document(Boundary.DocumentEvent(id: "7", time: t, kind: .created, path: doc.path,
                                                                                     params: ["itemId": "a"], before: nil, after: doc)))
            #expect(try rows["work"]?.event() == .task(Boundary.TaskEvent(queueName: "work", id: "t1", data: ["n": 1], scheduledTime: t)))
            #expect(try rows["tick"]?.event() == .schedule(Boundary.ScheduleEvent(jobName: "tick", scheduleTime: t)))
            #expect(try rows["purge"]?.event() == .user(Boundary.UserEvent(id: "user-3", time: t, kind: .deleted, user: user)))
            let odd = try #require(rows["odd"])
            #expect(odd.state == .dead)
            #expect(odd.lastError == "internal: the payload stored by an older version could not be read")
            #expect(odd.payload == BinaryValueCodec.encode(.int(5)), "kept as it was")
            #expect(throws: WireError.self) { try odd.event() }
        }
    }

    @Test("a database whose user_version is newer than this binary's schema is refused with schemaTooNew")
    func tooNew() async throws {
        try await Self.withPath { path in
            do {
                let store = try await DocumentStore.open(path: path, clock: ManualClock())
                try await store.commit([.create(try doc("c/a"), [:])])
                store.close()
            }
            do {
                let raw = try Connection(path: path, options: .init())
                try raw.execute("PRAGMA user_version = \(Schema.version + 1)")
            }
            await #expect(throws: StoreError.schemaTooNew(found: Schema.version + 1, supported: Schema.version)) {
                _ = try await DocumentStore.open(path: path, clock: ManualClock())
            }
            // Refusing it changed nothing: the version is still the newer one.
            let raw = try Connection(path: path, options: .init())
            #expect(try raw.scalarInt("PRAGMA user_version") == Int64(Schema.version + 1))
            #expect(try raw.scalarInt("SELECT count(*) FROM documents") == 1)
        }
    }

    @Test("a new database file in a directory that does not exist yet is created")
    func createsDirectory() async throws {
        let base = NSTemporaryDirectory() + "hearth-store-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: base) }
        let store = try await DocumentStore.open(path: base + "/a/b/store.sqlite", clock: ManualClock())
        defer { store.close() }
        try await store.commit([.create(try doc("c/a"), [:])])
        #expect(FileManager.default.fileExists(atPath: base + "/a/b/store.sqlite"))
    }

    @Test("sequence numbers and commit times are never reused, even after pruning the whole feed and reopening")
    func sequenceSurvivesPruneAndReopen() async throws {
        try await Self.withPath { path in
            let clock = ManualClock()
            let last: CommitResult
            do {
                let store = try await DocumentStore.open(path: path, clock: clock)
                for i in 0..<5 { try await store.commit([.create(try doc("c/d\(i)"), [:])]) }
                last = try await store.commit([.create(try doc("c/last"), [:])])
                #expect(try await store.engine.pruneChanges(committedBefore: clock.now() + .seconds(1)) == 6)
                store.close()
            }
            // The clock is behind the last commit when the store comes back.
            clock.set(last.commitTime - .seconds(3600))
            let store = try await DocumentStore.open(path: path, clock: clock)
            defer { store.close() }
            #expect(store.engine.lastSequence == 6)
            let next = try await store.commit([.create(try doc("c/next"), [:])])
            #expect(next.commitTime > last.commitTime)
            #expect(try await store.allChanges().map(\.sequence) == [7])
        }
    }

    @Test("after close, reads and writes fail with StoreError.closed, nothing more is written, and change waiters return")
    func close() async throws {
        try await Self.withPath { path in
            let store = try await DocumentStore.open(path: path, clock: ManualClock())
            try await store.commit([.create(try doc("c/a"), ["n": 1])])
            let engine = store.engine
            let early = Task { await engine.waitForChanges(after: 1) }
            store.close()
            await #expect(throws: StoreError.closed) { _ = try await store.get(try doc("c/a")) }
            await #expect(throws: StoreError.closed) { _ = try await store.query(QuerySpec(collectionID: "c")) }
            await #expect(throws: StoreError.closed) { try await store.commit([.create(try doc("c/b"), [:])]) }
            await #expect(throws: StoreError.closed) { try await store.commit([.set(try doc("c/a"), ["n": 2])]) }
            await #expect(throws: StoreError.closed) { try await store.recursiveDelete(["c"]) }
            await #expect(throws: StoreError.closed) { _ = try await store.sqlite.pruneChanges(committedBefore: Timestamp(seconds: 4_000_000_000)) }
            try await withTimeout(seconds: 30) { await early.value }
            try await withTimeout(seconds: 30) { await engine.waitForChanges(after: 1) }

            // What was committed before the close is all there is.
            let reopened = try await DocumentStore.open(path: path, clock: ManualClock())
            defer { reopened.close() }
            #expect(try await reopened.get(try doc("c/a"))?.fields == ["n": 1])
            #expect(try await reopened.get(try doc("c/b")) == nil)
            #expect(try await reopened.allChanges().count == 1)
        }
    }

    @Test("a database opened with synchronous FULL and few readers works the same")
    func options() async throws {
        try await Self.withPath { path in
            let store = try await DocumentStore.open(path: path, options: .init(synchronous: .full, readers: 1), clock: ManualClock())
            defer { store.close() }
            try await store.commit([.create(try doc("c/a"), ["n": 1])])
            async let x = store.get(try doc("c/a"))
            async let y = store.query(QuerySpec(collection: try coll("c")))
            #expect(try await x?.fields["n"] == 1)
            #expect(try await y.count == 1)
        }
    }
}
