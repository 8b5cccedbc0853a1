import CSQLite
import Foundation
import HearthModel
@testable import HearthStore
import Testing

/// The writer's WAL appends gathered and written once per transaction (Sources/CSQLiteWAL).
@Suite("Buffered WAL", .timeLimit(.minutes(1)))
struct BufferedWALTests {
    /// A new database in WAL mode with a table of blobs, in a directory of its own.
    func withDatabase(_ body: (String) throws -> Void) throws {
        let path = temporaryStorePath()
        let directory = URL(fileURLWithPath: path).deletingLastPathComponent().path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let setup = try Connection(path: path, options: Connection.Options())
        try setup.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, tag TEXT, body BLOB)")
        try body(path)
    }

    func buffered(_ path: String) throws -> Connection {
        let db = try Connection(path: path, options: Connection.Options(bufferedWAL: true))
        _ = try db.scalarInt("SELECT count(*) FROM t")  // opens the WAL
        #expect(db.startBufferedWAL())
        return db
    }

    func insert(_ db: Connection, rows: Int, bytes: Int, tag: String) throws {
        for _ in 0..<rows {
            try db.run("INSERT INTO t(tag, body) VALUES (?, randomblob(?))", [.text(tag), .integer(Int64(bytes))])
        }
    }

    func count(_ db: Connection, _ tag: String) throws -> Int64 {
        try db.scalarInt("SELECT count(*) FROM t WHERE tag = ?", [.text(tag)]) ?? -1
    }

    /// Reads the database back through a new connection (read-only, or one that may recover the
    /// WAL): the rows of each tag, and SQLite's integrity check.
    func expectReadBack(_ path: String, _ rows: KeyValuePairs<String, Int64>, recovering: Bool = false,
                        _ note: Comment? = nil, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let db = try Connection(path: path, options: Connection.Options(readOnly: !recovering))
        for (tag, expected) in rows {
            #expect(try count(db, tag) == expected, "\(tag) \(note?.rawValue ?? "")", sourceLocation: sourceLocation)
        }
        #expect(try db.query("PRAGMA integrity_check") { $0.text(0) } == ["ok"], sourceLocation: sourceLocation)
    }

    @Test("a transaction's frames reach the kernel together: dozens of page writes, one write call")
    func oneWritePerTransaction() throws {
        try withDatabase { path in
            let db = try buffered(path)
            let before = try #require(db.bufferedWALCounts)
            try db.transaction { try insert(db, rows: 20, bytes: 3000, tag: "a") }
            let after = try #require(db.bufferedWALCounts)
            // 20 rows of 3,000 bytes fill at least 14 pages of 4 KiB: two writes each (header, page).
            #expect(after.writes - before.writes >= 28)
            #expect(after.flushes - before.flushes == 1, "one write for the whole transaction (\(after.flushes - before.flushes))")
            #expect(after.late == 0, "written as the commit's last frame was, where a failure fails the commit")
        }
    }

    @Test("another connection reads each commit as soon as it returns, small ones, ones larger than one write call (127 KiB) and ones larger than the buffer (1 MiB)")
    func commitsAreVisibleAtOnce() throws {
        try withDatabase { path in
            let db = try buffered(path)
            let reader = try Connection(path: path, options: Connection.Options(readOnly: true))
            for (i, (rows, bytes)) in [(1, 10), (3, 5000), (40, 4000), (300, 4000), (1, 10), (2, 200_000)].enumerated() {
                try db.transaction { try insert(db, rows: rows, bytes: bytes, tag: "c\(i)") }
                #expect(try count(reader, "c\(i)") == Int64(rows), "commit \(i)")
            }
            #expect(try #require(db.bufferedWALCounts).late == 0)
            #expect(try reader.query("PRAGMA integrity_check") { $0.text(0) } == ["ok"], "read by the connection that was open throughout")
        }
    }

    @Test("a commit whose last page does not fit in what is left of the buffer still goes out with the commit, not at the next barrier")
    func commitFrameAtBufferEdge() throws {
        try withDatabase { path in
            let db = try buffered(path)
            let reader = try Connection(path: path, options: Connection.Options(readOnly: true))
            try db.transaction { try insert(db, rows: 300, bytes: 4000, tag: "row") }
            // With 4 KiB pages a frame takes 4,120 bytes: after 254 of them the 255th frame's header
            // fits in the 1 MiB buffer and its page does not. Rewriting the first k rows in place
            // (one leaf page each, the same size, so no other page changes) commits k frames.
            var frames: [Int] = []
            for k in 250...260 {
                let before = try #require(db.bufferedWALCounts)
                try db.run("UPDATE t SET tag = ?, body = randomblob(4000) WHERE id <= ?", [.text("k\(k)"), .integer(Int64(k))])
                let after = try #require(db.bufferedWALCounts)
                frames.append((after.writes - before.writes) / 2)
                #expect(after.late == before.late, "\(k) rows, \(frames.last!) frames: the commit's last page waited in the buffer")
                #expect(try count(reader, "k\(k)") == Int64(k))
            }
            #expect(frames.contains(255), "no commit ended at the buffer's edge: \(frames)")
            #expect(try reader.query("PRAGMA integrity_check") { $0.text(0) } == ["ok"])
        }
    }

    @Test("a transaction that spills pages into the WAL and rolls back leaves nothing, and another writer's commits after it stay whole")
    func spilledRollback() throws {
        try withDatabase { path in
            let db = try buffered(path)
            // A small page cache makes SQLite write pages to the WAL before the commit.
            try db.execute("PRAGMA cache_size = 10")
            let before = try #require(db.bufferedWALCounts)
            try db.execute("BEGIN IMMEDIATE")
            try insert(db, rows: 200, bytes: 4000, tag: "rolled-back")
            #expect(try #require(db.bufferedWALCounts).writes > before.writes, "the transaction spilled")
            try db.execute("ROLLBACK")

            let other = try Connection(path: path, options: Connection.Options())
            try other.transaction { try insert(other, rows: 50, bytes: 4000, tag: "other") }
            let beforeMine = try #require(db.bufferedWALCounts)
            // This one spills too, and writes some pages twice: SQLite then rewrites the frames'
            // checksums at the commit (walRewriteChecksums), the commit frame's header last.
            try db.transaction {
                try insert(db, rows: 50, bytes: 4000, tag: "mine")
                try db.run("UPDATE t SET body = randomblob(4000) WHERE tag = 'mine'")
            }
            let afterMine = try #require(db.bufferedWALCounts)
            #expect(afterMine.headerRewrites > beforeMine.headerRewrites, "SQLite rewrote the frames' checksums")
            #expect(afterMine.late == beforeMine.late, "the commit's frames and rewritten headers went out with the commit")
            try other.transaction { try insert(other, rows: 5, bytes: 100, tag: "other-2") }

            try expectReadBack(path, ["rolled-back": 0, "other": 50, "mine": 50, "other-2": 5])
        }
    }

    @Test("a commit whose frames fail to reach the file fails whole and leaves nothing; the next commit works")
    func failedCommitWrite() throws {
        try withDatabase { path in
            let db = try buffered(path)
            try db.transaction { try insert(db, rows: 2, bytes: 100, tag: "before") }
            #expect(db.failNextBufferedWALFlush())
            try db.execute("BEGIN IMMEDIATE")
            try insert(db, rows: 5, bytes: 3000, tag: "failed")
            #expect(throws: SQLiteError.self) { try db.execute("COMMIT") }
            #expect(!db.isInTransaction, "the failed COMMIT rolled the transaction back")
            try db.transaction { try insert(db, rows: 3, bytes: 100, tag: "after") }
            try expectReadBack(path, ["before": 2, "failed": 0, "after": 3])
        }
    }

    @Test("frames a transaction spilled that fail to reach the file when it reads them back roll the whole transaction back, not only the statement")
    func failedFlushOnRead() throws {
        try withDatabase { path in
            let db = try buffered(path)
            try db.execute("PRAGMA cache_size = 10")
            try db.execute("BEGIN IMMEDIATE")
            try insert(db, rows: 100, bytes: 4000, tag: "spilled")
            #expect(db.failNextBufferedWALFlush())
            // A statement that may fail halfway (the keys it changes could clash) has a statement
            // journal: "disk full" inside it would undo only the statement and leave the
            // transaction open on frames that never reached the file; an I/O error rolls the
            // transaction back. (The statement fails only if the spilled frames were still in
            // the buffer: the hook fails a flush that has bytes to write.)
            #expect(throws: SQLiteError.self) { try db.run("UPDATE t SET id = id + 1000000 WHERE tag = 'spilled'") }
            #expect(!db.isInTransaction, "the transaction is rolled back whole")
            try db.transaction { try insert(db, rows: 3, bytes: 4000, tag: "after") }
            try expectReadBack(path, ["spilled": 0, "after": 3])
        }
    }

    @Test("after a checkpoint the WAL starts over (its new header synced alone with NORMAL, buffered with the first frames with OFF); everything reads back after every connection closed and SQLite recovered the WAL from the file, and the first commit after that recovery goes out as it ends")
    func walStartsOver() throws {
        for synchronous in ["NORMAL", "OFF"] {
            try withDatabase { path in
                do {
                    let db = try Connection(path: path, options: Connection.Options(synchronous: synchronous, bufferedWAL: true))
                    _ = try db.scalarInt("SELECT count(*) FROM t")
                    #expect(db.startBufferedWAL())
                    let other = try Connection(path: path, options: Connection.Options())
                    for round in 0..<3 {
                        try db.transaction { try insert(db, rows: 10, bytes: 3000, tag: "r\(round)") }
                        // Copies every frame and makes the next commit start the WAL from its beginning.
                        let busy = try other.query("PRAGMA wal_checkpoint(RESTART)") { $0.int64(0) }
                        #expect(busy == [0], "\(synchronous): the checkpoint completed")
                    }
                    try db.transaction { try insert(db, rows: 10, bytes: 3000, tag: "last") }
                    #expect(try #require(db.bufferedWALCounts).late == 0)
                    #expect(try [count(other, "r0"), count(other, "r1"), count(other, "r2"), count(other, "last")] == [10, 10, 10, 10])
                    // Keep the WAL when the last connection closes, so that opening recovers it.
                    for connection in [db, other] {
                        var keep: Int32 = 1
                        #expect(sqlite3_file_control(connection.handle, "main", SQLITE_FCNTL_PERSIST_WAL, &keep) == SQLITE_OK)
                    }
                }
                let wal = try FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? Int ?? 0
                #expect(wal > 0, "\(synchronous): the WAL outlived its connections")
                // Opening recovers the WAL, reading its frames whole, as a checksum rewrite does:
                // the first commit after it must still be written as it ends, not left for later.
                let recovered = try buffered(path)
                try recovered.transaction { try insert(recovered, rows: 1, bytes: 10, tag: "after-recovery") }
                #expect(try #require(recovered.bufferedWALCounts).late == 0, "\(synchronous)")
                try expectReadBack(path, ["r0": 10, "r1": 10, "r2": 10, "last": 10, "after-recovery": 1], recovering: true, "\(synchronous)")
            }
        }
    }

    @Test("a connection opened without the VFS cannot start it and writes as before")
    func plainConnection() throws {
        try withDatabase { path in
            let db = try Connection(path: path, options: Connection.Options())
            #expect(!db.startBufferedWAL())
            #expect(db.bufferedWALCounts == nil)
            #expect(!db.failNextBufferedWALFlush())
            try db.transaction { try insert(db, rows: 3, bytes: 100, tag: "plain") }
            #expect(try count(db, "plain") == 3)
        }
    }

    @Test("the store's writer buffers its WAL with synchronous NORMAL, and not with FULL")
    func storeWriter() async throws {
        for synchronous in [SQLiteEngine.Options.Synchronous.normal, .full] {
            let path = temporaryStorePath()
            defer { try? FileManager.default.removeItem(atPath: URL(fileURLWithPath: path).deletingLastPathComponent().path) }
            let store = try await DocumentStore.open(path: path, options: .init(synchronous: synchronous), clock: ManualClock())
            defer { store.close() }
            try await store.commit((0..<10).map { .create(try doc("items/i\($0)"), ["n": .int(Int64($0))]) })
            let counts = await store.sqlite.writer.bufferedWALCounts
            if synchronous == .full {
                #expect(counts == nil)
            } else {
                let c = try #require(counts)
                #expect(c.writes > c.flushes && c.flushes > 0 && c.late == 0)
            }
            #expect(try await store.query(QuerySpec(collection: try coll("items"))).count == 10)
        }
    }
}
