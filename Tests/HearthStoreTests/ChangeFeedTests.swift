import Foundation
import HearthModel
@testable import HearthStore
import Testing

/// The change feed: one entry per changed document per commit, appended in the commit's own SQLite
/// transaction; readers page through it, waiters are woken after commits, and retention prunes
/// what every consumer has read.
@Suite("Change feed", .timeLimit(.minutes(1)))
struct ChangeFeedTests {
    @Test("every committed write appends sequence, commit time, path, kind, before and after")
    func entries() async throws {
        try await withStore { store, clock in
            let a = try doc("c/a"), b = try doc("c/b")
            let t1 = try await store.commit([.create(a, ["n": 1])])
            clock.advance(by: .seconds(1))
            let t2 = try await store.commit([.update(a, [try upd("n", 2)]), .set(b, ["x": true])])
            clock.advance(by: .seconds(1))
            let t3 = try await store.commit([.delete(a)])
            let changes = try await store.allChanges()
            #expect(changes.map(\.sequence) == [1, 2, 3, 4])
            #expect(changes.map(\.kind) == [.created, .updated, .created, .deleted])
            #expect(changes.map(\.path) == [a, a, b, a])
            #expect(changes.map(\.commitTime) == [t1.commitTime, t2.commitTime, t2.commitTime, t3.commitTime])

            #expect(changes[0].before == nil)
            #expect(changes[0].after == StoredDocument(path: a, fields: ["n": 1], createTime: t1.commitTime, updateTime: t1.commitTime))
            #expect(changes[1].before == changes[0].after)
            #expect(changes[1].after == StoredDocument(path: a, fields: ["n": 2], createTime: t1.commitTime, updateTime: t2.commitTime))
            #expect(changes[2].after?.fields == ["x": true])
            #expect(changes[3].before == changes[1].after)
            #expect(changes[3].after == nil)
            #expect(store.engine.lastSequence == 4)
        }
    }

    @Test("the memory of recent changes answers only gap-free runs, is bounded by count and by size (the oldest going first), and starts over when a commit does not continue it")
    func recentChangesBounded() throws {
        let recent = RecentChanges(capacity: 10, maxBytes: 1 << 20)
        let path = try doc("c/d")
        let t = Timestamp(seconds: 1_800_000_000, nanos: 0)
        func change(_ sequence: Int64, bytes: Int) -> DocumentChange {
            DocumentChange(sequence: sequence, commitTime: t, path: path, kind: .created, before: nil,
                           after: StoredDocument(path: path, fields: ["b": .bytes(Array(repeating: 7, count: bytes))], createTime: t, updateTime: t))
        }
        recent.append((1...20).map { change($0, bytes: 10) })
        #expect(recent.after(10, limit: 100)?.map(\.sequence) == Array(11...20), "the last ten")
        #expect(recent.after(12, limit: 3)?.map(\.sequence) == [13, 14, 15])
        #expect(recent.after(12, limit: .max)?.map(\.sequence) == Array(13...20), "any limit, Int.max included")
        #expect(recent.after(9, limit: 100) == nil, "older than the window: the database answers")
        #expect(recent.after(20, limit: 100) == nil, "nothing newer here: the database answers")
        #expect(recent.after(15, limit: 0) == nil)
        // 1 MiB holds three documents of 300 kB.
        recent.append((21...25).map { change($0, bytes: 300_000) })
        #expect(recent.after(22, limit: 100)?.map(\.sequence) == [23, 24, 25])
        #expect(recent.after(21, limit: 100) == nil)
        // A commit that does not continue the window starts it over.
        recent.append([change(3, bytes: 1)])
        #expect(recent.after(2, limit: 10)?.map(\.sequence) == [3])
        #expect(recent.after(22, limit: 10) == nil)
        // A gap (another process's commit, 4): a run through it, or after it, is the database's.
        recent.append([change(5, bytes: 1), change(6, bytes: 1)])
        #expect(recent.after(2, limit: 10) == nil)
        #expect(recent.after(4, limit: 10) == nil)
        #expect(recent.after(2, limit: 1)?.map(\.sequence) == [3], "a run that ends before the gap")
        recent.drop(below: 6)
        #expect(recent.after(5, limit: 10)?.map(\.sequence) == [6])
        #expect(recent.after(4, limit: 10) == nil)
    }

    @Test("sequences stay contiguous across many commits, failed commits and no-op writes")
    func contiguous() async throws {
        try await withStore { store, _ in
            let path = try doc("c/d")
            for i in 0..<50 {
                switch i % 5 {
                case 0: try await store.commit([.set(path, ["i": .int(Int64(i))])])
                case 1: await expectError(.alreadyExists) { try await store.commit([.create(path, [:])]) }
                case 2: try await store.commit([.set(path, ["i": .int(Int64(i - 2))])])  // no change
                case 3: try await store.commit([.set(try doc("c/e\(i)"), [:]), .delete(try doc("c/missing"))])
                default: try await store.commit([.delete(try doc("c/e\(i - 1)"))])
                }
            }
            let changes = try await store.allChanges()
            #expect(changes.map(\.sequence) == Array(1...Int64(changes.count)))
            #expect(changes.count == 30)
            #expect(zip(changes, changes.dropFirst()).allSatisfy { $0.commitTime <= $1.commitTime })
        }
    }

    @Test("readers get the changes after a sequence, a page at a time")
    func paging() async throws {
        try await withStore { store, _ in
            for i in 0..<25 { try await store.commit([.create(try doc("c/d\(i)"), [:])]) }
            var after: Int64 = 0
            var pages: [[Int64]] = []
            while true {
                let page = try await store.engine.changes(after: after, limit: 10)
                if page.isEmpty { break }
                pages.append(page.map(\.sequence))
                after = page.last!.sequence
            }
            #expect(pages.map(\.count) == [10, 10, 5])
            #expect(pages.flatMap { $0 } == Array(1...25))
            #expect(try await store.engine.changes(after: 25, limit: 10).isEmpty)
            #expect(try await store.engine.changes(after: 20, limit: 2).map(\.sequence) == [21, 22])
        }
    }

    @Test("waitForChanges returns at once when the feed is already past the sequence")
    func waitBehind() async throws {
        try await withStore { store, _ in
            try await store.commit([.create(try doc("c/d"), [:])])
            let engine = store.engine
            try await withTimeout(seconds: 30) { await engine.waitForChanges(after: 0) }
        }
    }

    @Test("waitForChanges is woken by the next commit that changes something")
    func waitWoken() async throws {
        try await withStore { store, _ in
            let path = try doc("c/d")
            try await store.commit([.create(path, ["n": 0])])
            let engine = store.engine
            let last = engine.lastSequence
            let waiter = Task { () -> Int64 in
                await engine.waitForChanges(after: last)
                return engine.lastSequence
            }
            // A commit that changes nothing appends nothing and wakes no one: then a real one does.
            try await store.commit([.set(path, ["n": 0])])
            #expect(engine.lastSequence == last)
            try await store.commit([.set(path, ["n": 1])])
            let woke = try await withTimeout(seconds: 30) { await waiter.value }
            #expect(woke == last + 1)
        }
    }

    @Test("many waiters are all woken by one commit")
    func manyWaiters() async throws {
        try await withStore { store, _ in
            let engine = store.engine
            let waiters = (0..<10).map { _ in Task { await engine.waitForChanges(after: 0) } }
            try await store.commit([.create(try doc("c/d"), [:])])
            try await withTimeout(seconds: 30) { for w in waiters { await w.value } }
        }
    }

    @Test("a cancelled waiter returns without a commit")
    func cancelledWaiter() async throws {
        try await withStore { store, _ in
            let engine = store.engine
            let waiter = Task { await engine.waitForChanges(after: 0) }
            waiter.cancel()
            try await withTimeout(seconds: 30) { await waiter.value }
            #expect(engine.lastSequence == 0)
        }
    }

    @Test("a rolled-back transaction or batch leaves no change")
    func rollbacksLeaveNothing() async throws {
        struct Boom: Error {}
        try await withStore { store, _ in
            let path = try doc("c/d")
            try await store.commit([.create(path, ["n": 0])])
            await #expect(throws: Boom.self) {
                try await store.runTransaction { t in
                    _ = try await t.get(path)
                    t.write(.set(path, ["n": 1]))
                    throw Boom()
                }
            }
            await expectError(.notFound) {
                try await store.commit([.set(path, ["n": 2]), .update(try doc("c/missing"), [try upd("x", 1)])])
            }
            await expectError(.aborted) {
                try await store.runTransaction(maxAttempts: 1) { t in
                    _ = try await t.get(path)
                    try await store.commit([.set(path, ["n": 3])])
                    t.write(.set(path, ["n": 4]))
                }
            }
            let changes = try await store.allChanges()
            #expect(changes.compactMap { $0.after?.fields["n"] } == [0, 3])
            #expect(store.engine.lastSequence == 2)
        }
    }

    @Test("pruning with no consumers deletes every entry committed before the cutoff")
    func pruneNoConsumers() async throws {
        try await withStore { store, clock in
            let start = clock.now()
            for i in 0..<10 {
                try await store.commit([.create(try doc("c/d\(i)"), [:])])
                clock.advance(by: .seconds(60))
            }
            // Entries 1...10 were committed at start + 0, 60, ..., 540 s.
            #expect(try await store.engine.pruneChanges(committedBefore: start) == 0)
            #expect(try await store.engine.pruneChanges(committedBefore: start + .seconds(180)) == 3)
            #expect(try await store.allChanges().map(\.sequence) == Array(4...10))
            #expect(try await store.engine.pruneChanges(committedBefore: clock.now()) == 7)
            #expect(try await store.allChanges().isEmpty)
            // The sequence keeps counting after everything was pruned.
            try await store.commit([.create(try doc("c/next"), [:])])
            #expect(try await store.allChanges().map(\.sequence) == [11])
        }
    }

    @Test("pruning in batches deletes at most the batch, oldest first")
    func pruneInBatches() async throws {
        try await withStore { store, clock in
            for i in 0..<25 { try await store.commit([.create(try doc("c/d\(i)"), [:])]) }
            clock.advance(by: .seconds(60))
            #expect(try await store.engine.pruneChanges(committedBefore: clock.now(), limit: 10) == 10)
            #expect(try await store.allChanges().first?.sequence == 11)
            #expect(try await store.engine.pruneChanges(committedBefore: clock.now(), limit: 10) == 10)
            #expect(try await store.engine.pruneChanges(committedBefore: clock.now(), limit: 10) == 5)
            #expect(try await store.engine.pruneChanges(committedBefore: clock.now(), limit: 10) == 0)
        }
    }

    @Test("pruning keeps what the slowest consumer has not read; removing a cursor releases it")
    func pruneWithConsumers() async throws {
        try await withStore { store, clock in
            for i in 0..<10 {
                try await store.commit([.create(try doc("c/d\(i)"), [:])])
                clock.advance(by: .seconds(60))
            }
            let engine = store.engine
            try await engine.setCursor("triggers", to: 7)
            try await engine.setCursor("exporter", to: 3)
            #expect(try await engine.cursors() == ["triggers": 7, "exporter": 3])
            let everything = clock.now()
            #expect(try await engine.pruneChanges(committedBefore: everything) == 3)
            #expect(try await store.allChanges().first?.sequence == 4)
            // Age still applies: only entries older than the cutoff go, even when read.
            try await engine.setCursor("exporter", to: 9)
            #expect(try await engine.cursors()["exporter"] == 9)
            let cutoff = clock.now() - .seconds(5 * 60)  // entries 6...10 are newer
            #expect(try await engine.pruneChanges(committedBefore: cutoff) == 2)
            #expect(try await store.allChanges().first?.sequence == 6)
            #expect(try await engine.pruneChanges(committedBefore: everything) == 2)
            #expect(try await store.allChanges().first?.sequence == 8)
            try await engine.removeCursor("triggers")
            #expect(try await engine.cursors() == ["exporter": 9])
            #expect(try await engine.pruneChanges(committedBefore: everything) == 2)
            #expect(try await store.allChanges().map(\.sequence) == [10])
            try await engine.removeCursor("exporter")
            #expect(try await engine.pruneChanges(committedBefore: everything) == 1)
            #expect(try await store.allChanges().isEmpty)
        }
    }

    @Test("cursors survive reopening the database")
    func cursorsPersist() async throws {
        let path = temporaryStorePath()
        defer { try? FileManager.default.removeItem(atPath: URL(fileURLWithPath: path).deletingLastPathComponent().path) }
        let clock = ManualClock()
        do {
            let store = try await DocumentStore.open(path: path, clock: clock)
            try await store.commit([.create(try doc("c/d"), [:])])
            try await store.engine.setCursor("triggers", to: 1)
            store.close()
        }
        let reopened = try await DocumentStore.open(path: path, clock: clock)
        defer { reopened.close() }
        #expect(try await reopened.engine.cursors() == ["triggers": 1])
        #expect(reopened.engine.lastSequence == 1)
    }
}
