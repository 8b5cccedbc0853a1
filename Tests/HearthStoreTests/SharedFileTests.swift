import Foundation
import HearthModel
@testable import HearthStore
import Testing

/// Several stores on one database file, as `hearth serve` and CLI commands share a data directory:
/// each has its own connections and in-memory registries, exactly as separate processes would, so
/// whatever one of them knows only from memory is tested against the others' commits.
@Suite("One database file, several writers", .timeLimit(.minutes(2)))
struct SharedFileTests {
    /// Opens `count` stores on one new file (the first on `clock`, the others on clocks of their
    /// own `skew` behind it, as processes' clocks may differ), runs `body`, closes them and removes the file.
    func withStores(_ count: Int, skew: Duration = .zero, _ body: ([DocumentStore], ManualClock) async throws -> Void) async throws {
        let path = temporaryStorePath()
        let clock = ManualClock()
        var stores: [DocumentStore] = []
        for k in 0..<count {
            stores.append(try await DocumentStore.open(path: path, clock: k == 0 ? clock : ManualClock(clock.now() - skew)))
        }
        defer {
            for store in stores { store.close() }
            try? FileManager.default.removeItem(atPath: URL(fileURLWithPath: path).deletingLastPathComponent().path)
        }
        try await body(stores, clock)
    }

    @Test("a commit by another writer does not break this one's: sequences and commit times continue from the database")
    func sequencesContinue() async throws {
        try await withStores(2, skew: .seconds(10)) { stores, _ in
            let (a, b) = (stores[0], stores[1])  // b's clock is 10 s behind a's: commits must not go back in time
            try await a.commit([.create(try doc("c/a1"), ["n": 1])])
            try await b.commit([.create(try doc("c/b1"), ["n": 1])])
            try await a.commit([.create(try doc("c/a2"), ["n": 2])])
            try await a.commit([.update(try doc("c/b1"), [try upd("n", 2)])])
            try await b.commit([.delete(try doc("c/a1"))])
            let changes = try await a.allChanges()
            #expect(changes.map(\.sequence) == [1, 2, 3, 4, 5])
            #expect(changes.map(\.path.description) == ["c/a1", "c/b1", "c/a2", "c/b1", "c/a1"])
            #expect(zip(changes, changes.dropFirst()).allSatisfy { $0.commitTime < $1.commitTime }, "commit times rise across writers")
            #expect(try await b.get(try doc("c/b1"))?.fields["n"] == 2)
        }
    }

    @Test("another writer's commits: feedEnd() reads them from the database and brings lastSequence to them, as reading the feed does")
    func feedEndSeesOtherWriters() async throws {
        try await withStores(2) { stores, _ in
            let (a, b) = (stores[0], stores[1])
            try await a.commit([.create(try doc("c/a1"), [:])])
            for k in 0..<3 { try await b.commit([.create(try doc("c/b\(k)"), [:])]) }
            #expect(a.engine.lastSequence == 1, "a has not looked")
            #expect(try a.engine.feedEnd() == 4)
            #expect(a.engine.lastSequence == 4)
            try await b.commit([.create(try doc("c/b3"), [:])])
            #expect(try await a.engine.changes(after: 4, limit: 10).map(\.sequence) == [5])
            #expect(a.engine.lastSequence == 5, "a read the feed past b's commit")
            #expect(try b.engine.feedEnd() == 5)
        }
    }

    @Test("a commit that fails just after another writer's commit does not make the next one reuse that writer's sequence")
    func failedCommitAfterAnotherWriter() async throws {
        try await withStores(2) { stores, _ in
            let (a, b) = (stores[0], stores[1])
            try await a.commit([.create(try doc("c/a1"), ["n": 1])])
            try await b.commit([.create(try doc("c/b1"), ["n": 1])])
            // a's transaction reads the feed's end b left, then fails: a must not fall back to its own older end.
            await #expect(throws: HTTPSError.self) { try await a.commit([.create(try doc("c/a1"), ["n": 2])]) }
            try await a.commit([.create(try doc("c/a2"), ["n": 2])])
            try await b.commit([.create(try doc("c/b2"), ["n": 2])])
            #expect(try await a.allChanges().map(\.sequence) == [1, 2, 3, 4])
        }
    }

    @Test("two writers each committing 60 at once (grouped), a fifth failing: every other commit lands once, the feed has no gap or duplicate")
    func groupedCommitsFromTwoWriters() async throws {
        try await withStores(2) { stores, _ in
            try await stores[0].commit([.create(try doc("taken/t"), ["n": 0])])
            try await withThrowingTaskGroup(of: Void.self) { group in
                for (k, store) in stores.enumerated() {
                    for i in 0..<60 {
                        group.addTask {
                            // Every fifth creates a document that exists: it fails alone, inside its group.
                            let target = i % 5 == 0 ? try doc("taken/t") : try doc("w\(k)/d\(i)")
                            do { try await store.commit([.create(target, ["i": .int(Int64(i))])]) } catch let error as HTTPSError where error.code == .alreadyExists {}
                        }
                    }
                }
                try await group.waitForAll()
            }
            let changes = try await stores[1].allChanges()
            #expect(changes.map(\.sequence) == Array(1...Int64(1 + 2 * 48)), "unique and contiguous across both writers")
            #expect(Set(changes.map(\.path.description)).count == changes.count, "each commit once")
            for k in 0..<2 {
                for i in 0..<60 where i % 5 != 0 { #expect(try await stores[k].get(try doc("w\(k)/d\(i)"))?.fields["i"] == .int(Int64(i))) }
            }
            #expect(try await stores[0].get(try doc("taken/t"))?.fields == ["n": 0])
        }
    }

    @Test("two writers' groups where commits fail after writing into a new collection: each failure leaves nothing, and every collection keeps its own id")
    func groupsFailingPartwayFromTwoWriters() async throws {
        try await withStores(2) { stores, _ in
            try await stores[0].commit([.create(try doc("taken/t"), ["n": 0])])
            try await withThrowingTaskGroup(of: Void.self) { group in
                for (k, store) in stores.enumerated() {
                    for i in 0..<40 {
                        group.addTask {
                            // All into one collection new to the database, so a group's later commits
                            // find the id its first one created; every fourth then fails on a
                            // document that exists, and its group is rolled back and written again.
                            var writes: [DocumentWrite] = [.create(try doc("s\(k)/d\(i)"), ["i": .int(Int64(i))])]
                            if i % 4 == 0 { writes.append(.create(try doc("taken/t"), ["n": 1])) }
                            do { try await store.commit(writes) } catch let error as HTTPSError where error.code == .alreadyExists {}
                        }
                    }
                }
                try await group.waitForAll()
            }
            // Collections made afterwards get ids of their own: one shared with `s0` or `s1` (a
            // rolled-back id still cached) would list documents of both.
            for k in 0..<2 {
                for j in 0..<5 { try await stores[k].commit([.create(try doc("after\(k)x\(j)/a"), [:])]) }
            }
            for k in 0..<2 {
                for reader in stores {
                    let listed = try await reader.query(QuerySpec(collection: try CollectionPath("s\(k)"))).map(\.path.id)
                    #expect(Set(listed) == Set((0..<40).filter { $0 % 4 != 0 }.map { "d\($0)" }), "s\(k)")
                    for j in 0..<5 {
                        #expect(try await reader.query(QuerySpec(collection: try CollectionPath("after\(k)x\(j)"))).map(\.path.id) == ["a"])
                    }
                }
            }
            let changes = try await stores[0].allChanges()
            #expect(changes.map(\.sequence) == Array(1...Int64(1 + 2 * 30 + 10)), "unique and contiguous across both writers")
        }
    }

    @Test("writers interleaving 400 commits from four stores: every commit lands, the feed has no gap or duplicate")
    func interleaved() async throws {
        try await withStores(4) { stores, _ in
            try await withThrowingTaskGroup(of: Void.self) { group in
                for (k, store) in stores.enumerated() {
                    group.addTask {
                        for i in 0..<100 { try await store.commit([.set(try doc("w\(k)/d\(i % 10)"), ["i": .int(Int64(i))])]) }
                    }
                }
                try await group.waitForAll()
            }
            let changes = try await stores[0].allChanges()
            #expect(changes.map(\.sequence) == Array(1...400))
            for k in 0..<4 { #expect(try await stores[0].get(try doc("w\(k)/d9"))?.fields["i"] == 99) }
        }
    }

    @Test("an index one writer builds is kept by every other writer's writes, so queries agree with a full scan")
    func indexesShared() async throws {
        try await withStores(2) { stores, _ in
            let (server, cli) = (stores[0], stores[1])
            for i in 0..<20 { try await server.commit([.create(try doc("items/s\(i)"), ["v": .int(Int64(i % 3))])]) }
            try await cli.commit([.create(try doc("items/c0"), ["v": 1])])  // the CLI's writer is open and has written before
            var q = QuerySpec(collection: try coll("items"))
            q.filters = [.init(try field("v"), .equal, 1)]
            _ = try await server.query(q)  // the server builds the index of v
            for i in 1..<10 { try await cli.commit([.create(try doc("items/c\(i)"), ["v": .int(Int64(i % 3))])]) }
            try await cli.commit([.update(try doc("items/s1"), [try upd("v", 2)])])
            try await cli.commit([.delete(try doc("items/s4"))])
            let all = try await server.query(QuerySpec(collection: try coll("items")))
            let expected = all.filter { $0.fields["v"] == 1 }.map(\.path.id).sorted()
            #expect(try await server.ids(q).sorted() == expected)
            #expect(try await cli.ids(q).sorted() == expected, "the CLI's reader finds the index complete too")
            #expect(expected.contains("c1") && !expected.contains("s1") && !expected.contains("s4"))
        }
    }

    @Test("a field's index requested by two writers at once is built once and complete")
    func concurrentIndexBuilds() async throws {
        try await withStores(2) { stores, _ in
            for i in 0..<50 { try await stores[i % 2].commit([.create(try doc("g/d\(i)"), ["k": .int(Int64(i % 5))])]) }
            var q = QuerySpec(collection: try coll("g"))
            q.filters = [.init(try field("k"), .equal, 2)]
            async let first = stores[0].ids(q)
            async let second = stores[1].ids(q)
            let (x, y) = try await (first, second)
            #expect(x.count == 10 && y.count == 10)
            let rows = try stores[0].sqlite.readers.withReader { Int(try $0.scalarInt("SELECT count(*) FROM field_index WHERE field = 'k'") ?? 0) }
            #expect(rows == 50)
        }
    }

    @Test("two stores opening one new database at once both migrate it without error")
    func concurrentMigration() async throws {
        for _ in 0..<10 {
            let path = temporaryStorePath()
            async let a = DocumentStore.open(path: path, clock: ManualClock())
            async let b = DocumentStore.open(path: path, clock: ManualClock())
            async let c = DocumentStore.open(path: path, clock: ManualClock())
            let (x, y, z) = try await (a, b, c)
            try await x.commit([.create(try doc("c/1"), [:])])
            try await y.commit([.create(try doc("c/2"), [:])])
            try await z.commit([.create(try doc("c/3"), [:])])
            #expect(try await x.allChanges().map(\.sequence) == [1, 2, 3])
            x.close()
            y.close()
            z.close()
            try? FileManager.default.removeItem(atPath: URL(fileURLWithPath: path).deletingLastPathComponent().path)
        }
    }
    @Test("the feed to route: a writer's own last commits from memory when they follow the position with no gap, another writer's later commits at the next call, and anything with a gap or older than memory from the database")
    func changesToRoute() async throws {
        try await withStores(2) { stores, _ in
            let (a, b) = (stores[0], stores[1])
            try await b.commit([.create(try doc("c/b1"), [:])])  // 1
            try await a.commit([.create(try doc("c/a1"), [:])])  // 2
            try await a.commit([.create(try doc("c/a2"), [:])])  // 3
            // From 0: a's memory starts at 2, so the database answers, whole.
            #expect(try await a.engine.changesToRoute(after: 0, limit: 10).map(\.sequence) == [1, 2, 3])
            // From 1, a's own run 2...3 continues the feed: memory alone, even with b's 4 after it.
            try await b.commit([.create(try doc("c/b2"), [:])])  // 4
            #expect(try await a.engine.changesToRoute(after: 1, limit: 10).map(\.sequence) == [2, 3], "b's 4 waits for the next call")
            #expect(try await a.engine.changesToRoute(after: 1, limit: 1).map(\.sequence) == [2], "a limit cuts a run from memory")
            #expect(try await a.engine.changes(after: 1, limit: 10).map(\.sequence) == [2, 3, 4], "reading the feed still sees it")
            // The next call, from where routing left off: nothing in memory after 3, the database has 4.
            #expect(try await a.engine.changesToRoute(after: 3, limit: 10).map(\.path.id) == ["b2"])
            // a's memory now has a gap at 4: past it, the database answers.
            try await a.commit([.create(try doc("c/a3"), [:]), .create(try doc("c/a4"), [:])])  // 5, 6
            #expect(try await a.engine.changesToRoute(after: 4, limit: 10).map(\.sequence) == [5, 6])
            // b has no memory of a's commits: always the database; the same changes either way.
            #expect(try await b.engine.changesToRoute(after: 1, limit: 10).map(\.sequence) == [2, 3, 4, 5, 6])
            #expect(try await a.engine.changesToRoute(after: 1, limit: 2) == (try await b.engine.changes(after: 1, limit: 2)))
        }
    }

    @Test("the feed a writer reads back from its own last commits (kept in memory) is exactly the database's, and any gap another writer left is read from the database")
    func recentChangesMatchTheDatabase() async throws {
        try await withStores(2) { stores, clock in
            let (a, b) = (stores[0], stores[1])
            let d = try doc("c/d")
            try await a.commit([.create(d, ["n": 1, "tags": ["x"], "m": ["deep": ["v": -0.0]], "nan": .double(.nan)])])
            clock.advance(by: .milliseconds(3))
            try await a.commit([.update(d, [try upd("n", 2)], transforms: [.init(try field("at"), .serverTimestamp),
                                                                          .init(try field("count"), .increment(5))]),
                                .set(try doc("c/e"), ["bytes": .bytes([0, 255]), "ref": .reference("c/d")])])
            try await a.commit([.delete(try doc("c/e")), .delete(try doc("c/missing"))])
            let fromMemory = try await a.engine.changes(after: 0, limit: 100)
            let fromDatabase = try await b.engine.changes(after: 0, limit: 100)
            #expect(fromMemory.count == 4)
            #expect((a.engine as? SQLiteEngine)?.recent.after(0, limit: 100)?.count == 4, "a's own commits are answered from memory")
            #expect(fromMemory == fromDatabase)
            // A page from the middle, and the end.
            #expect(try await a.engine.changes(after: 1, limit: 2) == Array(fromDatabase[1...2]))
            #expect(try await a.engine.changes(after: 4, limit: 10).isEmpty)
            // b commits in between: a's window has a gap at 6 (or ends before it) and reads the database.
            try await a.commit([.set(try doc("c/f"), ["k": 1])])
            try await b.commit([.set(try doc("c/g"), ["k": 2])])
            try await a.commit([.set(try doc("c/h"), ["k": 3])])
            #expect(try await a.engine.changes(after: 4, limit: 10).map(\.path.id) == ["f", "g", "h"])
            #expect(try await a.engine.changes(after: 5, limit: 10).map(\.path.id) == ["g", "h"])
            #expect(try await a.engine.changes(after: 6, limit: 10).map(\.path.id) == ["h"])
            // Past the window's capacity the oldest are read from the database.
            for batch in 0..<5 {
                try await a.commit((0..<500).map { .set(try! doc("big/\(batch)-\($0)"), ["i": .int(Int64($0))]) })
            }
            let all = try await b.engine.changes(after: 0, limit: 10_000)
            #expect(all.count == 2507)
            #expect(try await a.engine.changes(after: 0, limit: 10_000) == all)
            #expect(try await a.engine.changes(after: 2000, limit: 300) == Array(all[2000..<2300]))
            // Changes pruned by another writer, or by this one, are not answered from memory.
            try await a.engine.setCursor("everyone", to: 2600)
            clock.advance(by: .seconds(10))
            #expect(try await b.engine.pruneChanges(committedBefore: clock.now(), limit: 1200) == 1200)
            #expect(try await a.engine.changes(after: 1000, limit: 10_000) == Array(all[1200...]))
            #expect(try await a.engine.changes(after: 1300, limit: 10) == Array(all[1300..<1310]))
            #expect(try await a.engine.pruneChanges(committedBefore: clock.now(), limit: 1200) == 1200)
            #expect(try await a.engine.changes(after: 0, limit: 10_000) == Array(all[2400...]))
            #expect((a.engine as? SQLiteEngine)?.recent.after(2000, limit: 10) == nil, "what was pruned here is forgotten")
        }
    }
}
