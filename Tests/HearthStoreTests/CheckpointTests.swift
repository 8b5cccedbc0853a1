import Foundation
import HearthModel
@testable import HearthStore
import Testing

@Suite("WAL checkpoints off the writer's path")
struct CheckpointTests {
    func path() -> String { NSTemporaryDirectory() + "hearth-checkpoint-" + UUID().uuidString + "/store.sqlite" }

    func walBytes(_ path: String) -> Int { ((try? FileManager.default.attributesOfItem(atPath: path + "-wal"))?[.size] as? Int) ?? 0 }

    /// 4,000 commits of about 1 KB each, about 22,000 WAL frames: past the default threshold of
    /// 16,000 pages (each commit writes five or six pages: the document's, the feed's and their
    /// indexes').
    func write(_ store: DocumentStore, count: Int = 4_000, prefix: String = "d") async throws {
        let text = String(repeating: "x", count: 1000)
        for i in 0..<count { try await store.commit([.set(try DocumentPath("docs/\(prefix)\(i)"), ["i": .int(Int64(i)), "text": .string(text)])]) }
    }

    /// Reopens the file (after its stores closed): all 4,000 documents are there, `last` among them.
    func expectReadsBack(_ path: String, last: [String] = ["d3999"]) async throws {
        let reopened = try await DocumentStore.open(path: path, clock: SystemClock())
        defer { reopened.close() }
        #expect(try await reopened.count(QuerySpec(collection: try CollectionPath("docs"))) == 4_000)
        for id in last {
            let expected = Int64(id.dropFirst())
            #expect(try await reopened.get(try DocumentPath("docs/\(id)"))?.fields["i"] == expected.map(Value.int), "docs/\(id)")
        }
    }

    /// The store's checkpointer (background checkpoints are on by default).
    func checkpointer(of store: DocumentStore) throws -> Checkpointer {
        try #require((store.engine as? SQLiteEngine)?.checkpointer)
    }

    /// Small commits, 10 ms apart, until the WAL has started over: its size after a commit (the
    /// frames since it last started over, from the writer's hook) passed the threshold and fell
    /// below it again, whether a tail or the thread's own copy let it. Below the threshold at the
    /// start, about 170 commits of ~3 pages take it past first. At most three minutes, then false:
    /// with the whole suite beside it on 2 cores an await took about half a second (Group commit's
    /// 64 commits in a row took 34 s: each hop back waits behind every other test's tasks on
    /// Swift's pool), this loop awaits twice per commit, and a minute was once not enough.
    func commitUntilWALStartsOver(_ store: DocumentStore, _ checkpointer: Checkpointer) async throws -> Bool {
        let deadline = ContinuousClock.now + .seconds(180)
        var passed = false
        var extra = 0
        while ContinuousClock.now < deadline {
            try await store.commit([.set(try DocumentPath("later/e\(extra)"), ["i": .int(Int64(extra))])])
            extra += 1
            let pages = checkpointer.lastPages.load(ordering: .relaxed)
            if pages >= checkpointer.threshold { passed = true } else if passed { return true }
            try await Task.sleep(for: .milliseconds(10))
        }
        return false
    }

    /// A store whose checkpoint thread is asked at `threshold` pages (500: a test sees many cycles).
    func openSmallCycles(_ path: String, threshold: Int32 = 500) async throws -> DocumentStore {
        var options = SQLiteEngine.Options()
        options.checkpointThreshold = threshold
        return try await DocumentStore.open(path: path, options: options, clock: SystemClock())
    }

    @Test("the checkpointer thread keeps the WAL bounded while the writer commits; everything committed reads back after reopening")
    func bounded() async throws {
        let p = path()
        defer { try? FileManager.default.removeItem(atPath: URL(fileURLWithPath: p).deletingLastPathComponent().path) }
        let store = try await DocumentStore.open(path: p, clock: SystemClock())
        let engine = try #require(store.engine as? SQLiteEngine)
        let checkpointer = try #require(engine.checkpointer)
        try await write(store)
        #expect(await eventually(seconds: 30) { checkpointer.completed.load(ordering: .relaxed) > 0 }, "no checkpoint ran")
        // Bounded by the inline fallback's limit (64,000 frames by default, of a 4 KiB page and a
        // 24-byte header, and the commits in flight when it is reached), however far behind the thread falls on a
        // loaded machine.
        #expect(walBytes(p) < Int(checkpointer.limit) * (4096 + 24) + (8 << 20), "\(walBytes(p)) bytes of WAL")
        store.close()
        try await expectReadsBack(p)
    }

    @Test("under a steady stream of commits the WAL starts over every cycle: the thread is asked once, then the writer copies the tail")
    func cycles() async throws {
        let p = path()
        defer { try? FileManager.default.removeItem(atPath: URL(fileURLWithPath: p).deletingLastPathComponent().path) }
        let store = try await openSmallCycles(p)
        let checkpointer = try checkpointer(of: store)
        // About 22,000 WAL frames (five or six pages a commit), one commit after another: the
        // writer always commits again before the thread's checkpoint ends.
        try await write(store)
        // The writer copies the tail at its first commit after the thread's cycle ends. On a loaded
        // machine (CI, with the whole suite beside it, once: the thread asked once, its passes not
        // done 13 s later, behind the suite's fsyncs) that is after the last of those commits, so
        // small ones go on, 10 ms apart, until the WAL has started over. With commits that far
        // apart the thread may copy everything itself and the next commit start the WAL over
        // with no tail: either shows the cycle working.
        let startedOver = checkpointer.tails.load(ordering: .relaxed) > 0 ? true : try await commitUntilWALStartsOver(store, checkpointer)
        let asked = checkpointer.asked.load(ordering: .relaxed), tails = checkpointer.tails.load(ordering: .relaxed)
        let passes = checkpointer.completed.load(ordering: .relaxed)
        #expect(startedOver, "the WAL never started over (the thread was asked \(asked) times, \(tails) tails)")
        // The thread is asked once a cycle, and again only after retryStep more pages while it has
        // not copied everything (a reader in the way, or a thread slow on a loaded machine): not
        // after every commit past the threshold. Each commit here writes at most 8 pages.
        let bound = tails + 1 + 4_000 * 8 / Int(checkpointer.retryStep)
        #expect(asked <= bound, "the thread was asked \(asked) times for \(tails) cycles")
        #expect(passes <= asked * Checkpointer.passes, "\(passes) passes for \(asked) requests")
        // The thread flushed the database file before every tail it left the writer.
        #expect(checkpointer.synced.load(ordering: .relaxed) >= tails, "\(checkpointer.synced.load(ordering: .relaxed)) syncs for \(tails) tails")
        // The file keeps its largest size. Unloaded, the WAL starts over long before holding all
        // 22,000 frames; a checkpoint thread slow on a loaded machine let it reach 8,430
        // frames once and all of them once. What holds however slow the thread is: it never reaches
        // the writer's own fallback (checked below: no inline checkpoint).
        #expect(walBytes(p) < Int(checkpointer.limit) * (4096 + 24), "\(walBytes(p)) bytes of WAL")
        #expect(checkpointer.inline.load(ordering: .relaxed) == 0)
        store.close()
        try await expectReadsBack(p)
    }

    @Test("the writer's inline fallback lies at 64,000 pages or four times the threshold unless given, and never below the threshold")
    func limits() {
        #expect(Checkpointer(path: "unused").threshold == 16_000)
        #expect(Checkpointer(path: "unused").limit == 64_000)
        #expect(Checkpointer(path: "unused", threshold: 500).limit == 64_000)
        #expect(Checkpointer(path: "unused", threshold: 20_000).limit == 80_000)
        #expect(Checkpointer(path: "unused", threshold: 500, limit: 700).limit == 700)
        #expect(Checkpointer(path: "unused", threshold: 500, limit: 100).limit == 500)
        #expect(Checkpointer(path: "unused", threshold: .max).limit == .max)
        #expect(Checkpointer(path: "unused", threshold: .max / 4 + 1).limit == .max)
    }

    @Test("a connection flushes its database file through SQLite's file layer; one with no file says it cannot")
    func syncDatabaseFile() throws {
        let p = path()
        defer { try? FileManager.default.removeItem(atPath: URL(fileURLWithPath: p).deletingLastPathComponent().path) }
        try FileManager.default.createDirectory(atPath: URL(fileURLWithPath: p).deletingLastPathComponent().path, withIntermediateDirectories: true)
        let db = try Connection(path: p, options: Connection.Options())
        try db.execute("CREATE TABLE t (x); INSERT INTO t VALUES (1); PRAGMA wal_checkpoint(PASSIVE)")
        #expect(db.syncDatabaseFile())
        let memory = try Connection(path: ":memory:", options: Connection.Options())
        #expect(!memory.syncDatabaseFile())
    }

    @Test("two stores committing at once on one file, as hearth serve and a CLI command do: the WAL starts over while both write and again once one stops, nothing is lost")
    func twoWriters() async throws {
        let p = path()
        defer { try? FileManager.default.removeItem(atPath: URL(fileURLWithPath: p).deletingLastPathComponent().path) }
        let a = try await openSmallCycles(p)
        let b = try await openSmallCycles(p)
        let checkpointers = try [a, b].map(checkpointer(of:))
        async let fromA: Void = write(a, count: 2_000, prefix: "a")
        async let fromB: Void = write(b, count: 2_000, prefix: "b")
        _ = try await (fromA, fromB)
        // Either writer's tail lets the next commit, by either, start the WAL over.
        func state() -> String {
            let asked = checkpointers.map { $0.asked.load(ordering: .relaxed) }, tails = checkpointers.map { $0.tails.load(ordering: .relaxed) }
            let restarts = checkpointers.map { $0.restarts.load(ordering: .relaxed) }
            return "thread asked \(asked) times, tails \(tails), restarts \(restarts); \(walBytes(p)) bytes of WAL"
        }
        #expect(checkpointers.reduce(0) { $0 + $1.tails.load(ordering: .relaxed) } > 0, "no writer copied a tail: \(state())")
        #expect(checkpointers.reduce(0) { $0 + $1.restarts.load(ordering: .relaxed) } > 0, "no tail left the WAL to start over: \(state())")
        // How far the WAL grows meanwhile is the machine's: each writer's transactions keep the
        // other's checkpoints from copying everything, and one checkpoint thread serves every
        // store of the process. Of about 22,000 frames written, with these RESTART tails the file
        // reached 1,900 to 6,200 frames beside two busy loops and a disk writer (10,000 and 11,900
        // once each), and 23,900, all that was written, with the whole suite beside it in CI (with
        // the PASSIVE tails before them, 14,500 under load and 21,000 in CI). No bound holds there
        // (README, "Several processes on one data directory").
        // Once the other stops, one writer's cycle starts the WAL over: no connection of either
        // store is left holding a snapshot.
        #expect(try await commitUntilWALStartsOver(a, checkpointers[0]),
                "the WAL did not start over once one writer stopped: \(checkpointers[0].lastPages.load(ordering: .relaxed)) pages; \(state())")
        a.close()
        b.close()
        try await expectReadsBack(p, last: ["a1999", "b1999"])
    }

    @Test("a reader holding a snapshot does not stop commits; its snapshot stays as it was; checkpoints resume once it ends")
    func pinnedReader() async throws {
        let p = path()
        defer { try? FileManager.default.removeItem(atPath: URL(fileURLWithPath: p).deletingLastPathComponent().path) }
        // Asked at 4,000 pages: the 1,500 commits after the reader ends (about 8,000 frames) pass it
        // whatever the WAL held before.
        let store = try await openSmallCycles(p, threshold: 4_000)
        let engine = try #require(store.engine as? SQLiteEngine)
        try await store.commit([.set(try DocumentPath("docs/first"), ["v": 1])])
        // A second process's view: its own connection, in a read transaction throughout.
        let reader = try Connection(path: p, options: Connection.Options(readOnly: true))
        try reader.execute("BEGIN")
        #expect(try reader.scalarInt("SELECT count(*) FROM documents") == 1)
        try await write(store, count: 2_000)
        #expect(try reader.scalarInt("SELECT count(*) FROM documents") == 1, "the snapshot holds")
        try reader.execute("COMMIT")
        try await write(store, count: 1_500)
        #expect(await eventually(seconds: 30) { (engine.checkpointer?.completed.load(ordering: .relaxed) ?? 0) > 0 })
        #expect(try await store.count(QuerySpec(collection: try CollectionPath("docs"))) == 2_001, "docs/first and d0…d1999")
        store.close()
    }

    @Test("[store] background_checkpoints = false leaves checkpoints to SQLite, in the writer")
    func off() async throws {
        let p = path()
        defer { try? FileManager.default.removeItem(atPath: URL(fileURLWithPath: p).deletingLastPathComponent().path) }
        let store = try await DocumentStore.open(path: p, options: SQLiteEngine.Options(backgroundCheckpoints: false), clock: SystemClock())
        #expect((store.engine as? SQLiteEngine)?.checkpointer == nil)
        try await write(store, count: 1_500)
        #expect(walBytes(p) < 8 << 20, "SQLite's own checkpoint keeps it small too")
        store.close()
    }
}
