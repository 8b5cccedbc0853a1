import Foundation
import HearthModel
@testable import HearthStore
import Synchronization
import Testing

/// Read-then-write transactions: locks, validation of reads at commit, retries on conflict.
// Bounds for hangs, not for speed (see BatchTests: each commit's return waits its turn on the
// suite's shared cooperative pool).
@Suite("Transactions", .timeLimit(.minutes(3)))
struct TransactionTests {
    /// Reads an integer counter and writes it back incremented.
    static func increment(_ t: StoreTransaction, _ path: DocumentPath) async throws -> Int64 {
        let current = try await t.get(path)?.fields["n"]?.intValue ?? 0
        t.write(.set(path, ["n": .int(current + 1)]))
        return current + 1
    }

    @Test("a transaction reads, then its writes commit together")
    func readThenWrite() async throws {
        try await withStore { store, _ in
            let a = try doc("c/a"), b = try doc("c/b")
            try await store.commit([.create(a, ["n": 5])])
            let seen = try await store.runTransaction { t in
                let docs = try await t.getAll([a, b])
                t.write(.update(a, [try upd("n", 6)]))
                t.write(.create(b, ["copied": docs[0]?.fields["n"] ?? nil]))
                return docs.map { $0 == nil }
            }
            #expect(seen == [false, true])
            #expect(try await store.get(a)?.fields["n"] == 6)
            #expect(try await store.get(b)?.fields["copied"] == 5)
            let changes = try await store.allChanges()
            #expect(changes.count == 3)
            #expect(changes[1].commitTime == changes[2].commitTime)
            #expect(store.transactions.locks.lockCount == 0)
            #expect(store.transactions.openCount == 0)
        }
    }

    @Test("reads after writes are rejected with invalid-argument and the transaction writes nothing")
    func readAfterWrite() async throws {
        try await withStore { store, _ in
            let a = try doc("c/a")
            await expectError(.invalidArgument, "reads before any write") {
                try await store.runTransaction { t in
                    t.write(.set(a, ["n": 1]))
                    _ = try await t.get(a)
                }
            }
            await expectError(.invalidArgument, "reads before any write") {
                try await store.runTransaction { t in
                    t.write(.set(a, ["n": 1]))
                    _ = try await t.query(QuerySpec(collection: try coll("c")))
                }
            }
            #expect(try await store.get(a) == nil)
            #expect(store.transactions.locks.lockCount == 0)
        }
    }

    @Test("an error thrown by the body rolls back: nothing written, no change, locks released")
    func bodyThrows() async throws {
        struct Boom: Error {}
        try await withStore { store, _ in
            let a = try doc("c/a")
            try await store.commit([.create(a, ["n": 1])])
            let attempts = Recorder<Int>()
            await #expect(throws: Boom.self) {
                try await store.runTransaction { t in
                    attempts.append(1)
                    _ = try await t.get(a)
                    t.write(.set(a, ["n": 2]))
                    throw Boom()
                }
            }
            #expect(attempts.count == 1, "a non-conflict error is not retried")
            #expect(try await store.get(a)?.fields["n"] == 1)
            #expect(try await store.allChanges().count == 1)
            #expect(store.transactions.locks.lockCount == 0)
            #expect(store.transactions.openCount == 0)
        }
    }

    @Test("a write of the transaction that fails its precondition rolls back the whole transaction")
    func commitFails() async throws {
        try await withStore { store, _ in
            let a = try doc("c/a"), b = try doc("c/b")
            try await store.commit([.create(b, [:])])
            await expectError(.alreadyExists) {
                try await store.runTransaction { t in
                    _ = try await t.get(a)
                    t.write(.create(a, ["n": 1]))
                    t.write(.create(b, ["n": 1]))
                }
            }
            #expect(try await store.get(a) == nil)
            #expect(try await store.allChanges().count == 1)
            #expect(store.transactions.locks.lockCount == 0)
        }
    }

    @Test("20 tasks × 50 transactional increments of one counter give exactly 1000, each commit distinct")
    func contention() async throws {
        try await withStore { store, _ in
            let counter = try doc("counters/c")
            try await store.commit([.create(counter, ["n": 0])])
            let results = Recorder<Int64>()
            try await withTimeout(seconds: 150) {
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for _ in 0..<20 {
                        group.addTask {
                            for _ in 0..<50 {
                                results.append(try await store.runTransaction { try await Self.increment($0, counter) })
                            }
                        }
                    }
                    try await group.waitForAll()
                }
            }
            #expect(try await store.get(counter)?.fields["n"] == 1000)
            #expect(Set(results.all) == Set(1...1000))
            let changes = try await store.allChanges()
            #expect(changes.count == 1001)
            #expect(Set(changes.map(\.commitTime)).count == 1001)
            #expect(changes.dropFirst().map { $0.after?.fields["n"]?.intValue ?? -1 } == Array(1...1000))
            #expect(store.transactions.locks.lockCount == 0)
            #expect(store.transactions.openCount == 0)
        }
    }

    @Test("transactions that find their document by a query serialize on its lock: 10 tasks × 20 increments give 200")
    func queryContention() async throws {
        try await withStore { store, _ in
            let counters = try coll("counters")
            try await store.commit([.create(try counters.document("hits"), ["kind": "hits", "n": 0]),
                                    .create(try counters.document("other"), ["kind": "other", "n": 0])])
            var q = QuerySpec(collection: counters)
            q.filters = [.init(try field("kind"), .equal, "hits")]
            let spec = q
            try await withTimeout(seconds: 150) {
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for _ in 0..<10 {
                        group.addTask {
                            for _ in 0..<20 {
                                try await store.runTransaction { t in
                                    let found = try await t.query(spec)
                                    guard let counter = found.first, let n = counter.fields["n"]?.intValue else { throw HTTPSError(.internal, "no counter") }
                                    t.write(.update(counter.path, [try upd("n", .int(n + 1))]))
                                }
                            }
                        }
                    }
                    try await group.waitForAll()
                }
            }
            #expect(try await store.get(try counters.document("hits"))?.fields["n"] == 200)
            #expect(try await store.get(try counters.document("other"))?.fields["n"] == 0)
            #expect(store.transactions.locks.lockCount == 0)
        }
    }

    @Test("a plain write to a document the transaction read aborts its commit, and the retry succeeds")
    func plainWriteConflict() async throws {
        try await withStore { store, _ in
            let counter = try doc("c/counter")
            try await store.commit([.create(counter, ["n": 0])])
            let attempts = Recorder<Int64>()
            let value = try await store.runTransaction { t in
                let n = try await t.get(counter)?.fields["n"]?.intValue ?? -1
                attempts.append(n)
                if attempts.count == 1 {
                    // Not through the transaction: the lock does not stop it, the commit's check does.
                    try await store.commit([.set(counter, ["n": 100])])
                }
                t.write(.set(counter, ["n": .int(n + 1)]))
                return n + 1
            }
            #expect(attempts.all == [0, 100])
            #expect(value == 101)
            #expect(try await store.get(counter)?.fields["n"] == 101)
            #expect(try await store.allChanges().compactMap { $0.after?.fields["n"] } == [0, 100, 101])
            #expect(store.transactions.locks.lockCount == 0)
        }
    }

    @Test("a document read as missing and then created by a plain write aborts the transaction")
    func phantomDocument() async throws {
        try await withStore { store, _ in
            let path = try doc("c/new")
            await expectError(.aborted) {
                try await store.runTransaction(maxAttempts: 1) { t in
                    #expect(try await t.get(path) == nil)
                    try await store.commit([.create(path, ["by": "plain"])])
                    t.write(.set(path, ["by": "transaction"]))
                }
            }
            #expect(try await store.get(path)?.fields["by"] == "plain")
        }
    }

    @Test("a transaction that always conflicts fails aborted after maxAttempts attempts")
    func maxAttempts() async throws {
        try await withStore { store, _ in
            let counter = try doc("c/counter")
            try await store.commit([.create(counter, ["n": 0])])
            for maxAttempts in [1, 3, 5] {
                let attempts = Recorder<Int>()
                let error = await expectError(.aborted, "after \(maxAttempts) attempts") {
                    try await store.runTransaction(maxAttempts: maxAttempts) { t in
                        attempts.append(1)
                        let n = try await t.get(counter)?.fields["n"]?.intValue ?? 0
                        try await store.commit([.set(counter, ["n": .int(n + 1000)])])
                        t.write(.set(counter, ["n": -1]))
                    }
                }
                #expect(error != nil)
                #expect(attempts.count == maxAttempts)
            }
            // Only the plain writes landed.
            #expect(try await store.get(counter)?.fields["n"] == .int(9 * 1000))
            #expect(store.transactions.locks.lockCount == 0)
            #expect(store.transactions.openCount == 0)
        }
    }

    @Test("the default is 5 attempts")
    func defaultAttempts() async throws {
        try await withStore { store, _ in
            let path = try doc("c/d")
            let attempts = Recorder<Int>()
            await expectError(.aborted) {
                try await store.runTransaction { t in
                    attempts.append(1)
                    _ = try await t.get(path)
                    try await store.commit([.set(path, ["n": .int(Int64(attempts.count))])])
                    t.write(.delete(path))
                }
            }
            #expect(attempts.count == 5)
        }
    }

    @Test("a deadlock between A-then-B and B-then-A is broken: both commit after a retry")
    func deadlock() async throws {
        try await withStore { store, _ in
            let a = try doc("c/a"), b = try doc("c/b")
            try await store.commit([.create(a, ["n": 0]), .create(b, ["n": 0])])
            // Both transactions hold their first lock before either asks for its second (first attempts only).
            let barrier = Barrier(parties: 2)
            let attempts = Recorder<String>()
            try await withTimeout(seconds: 90) {
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for (name, first, second) in [("AB", a, b), ("BA", b, a)] {
                        group.addTask {
                            let attempt = Mutex(0)
                            try await store.runTransaction { t in
                                let n = attempt.withLock { $0 += 1; return $0 }
                                attempts.append(name)
                                let x = try await t.get(first)?.fields["n"]?.intValue ?? 0
                                if n == 1 { await barrier.arriveAndWait() }
                                let y = try await t.get(second)?.fields["n"]?.intValue ?? 0
                                t.write(.set(first, ["n": .int(x + 1)]))
                                t.write(.set(second, ["n": .int(y + 1)]))
                            }
                        }
                    }
                    try await group.waitForAll()
                }
            }
            #expect(try await store.get(a)?.fields["n"] == 2)
            #expect(try await store.get(b)?.fields["n"] == 2)
            #expect(attempts.count == 3, "one of the two was aborted once and retried: \(attempts.all)")
            #expect(store.transactions.locks.lockCount == 0)
            #expect(store.transactions.locks.waiterCount == 0)
        }
    }

    @Test("a ring of transactions each waiting for the next one's lock is broken, and all commit", arguments: [3, 5])
    func deadlockRing(size: Int) async throws {
        try await withStore { store, _ in
            let docs = try (0..<size).map { try doc("ring/d\($0)") }
            try await store.commit(docs.map { .create($0, ["n": 0]) })
            let barrier = Barrier(parties: size)
            let attempts = Recorder<Int>()
            try await withTimeout(seconds: 90) {
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for i in 0..<size {
                        let first = docs[i], second = docs[(i + 1) % size]
                        group.addTask {
                            let attempt = Mutex(0)
                            try await store.runTransaction(maxAttempts: 10) { t in
                                let n = attempt.withLock { $0 += 1; return $0 }
                                attempts.append(i)
                                let x = try await t.get(first)?.fields["n"]?.intValue ?? 0
                                if n == 1 { await barrier.arriveAndWait() }
                                let y = try await t.get(second)?.fields["n"]?.intValue ?? 0
                                t.write(.set(first, ["n": .int(x + 1)]))
                                t.write(.set(second, ["n": .int(y + 1)]))
                            }
                        }
                    }
                    try await group.waitForAll()
                }
            }
            for d in docs { #expect(try await store.get(d)?.fields["n"] == 2, "\(d)") }
            #expect(attempts.count > size, "at least one transaction was aborted and retried")
            #expect(store.transactions.locks.lockCount == 0)
            #expect(store.transactions.locks.waiterCount == 0)
        }
    }

    @Test("a transaction's query is validated at commit: a new matching document from a plain write aborts it")
    func queryValidated() async throws {
        try await withStore { store, _ in
            let items = try coll("lists/l/items")
            try await store.commit([.create(try items.document("a"), ["done": false]), .create(try items.document("b"), ["done": true])])
            var open = QuerySpec(collection: items)
            open.filters = [.init(try field("done"), .equal, false)]
            let summary = try doc("lists/l")
            await expectError(.aborted) {
                try await store.runTransaction(maxAttempts: 1) { t in
                    let results = try await t.query(open)
                    try await store.commit([.create(try items.document("c"), ["done": false])])
                    t.write(.set(summary, ["open": .int(Int64(results.count))]))
                }
            }
            #expect(try await store.get(summary) == nil)
            // A change that leaves the results alone does not abort it.
            let count = try await store.runTransaction { t in
                let results = try await t.query(open)
                try await store.commit([.create(try items.document("d"), ["done": true])])
                t.write(.set(summary, ["open": .int(Int64(results.count))]))
                return results.count
            }
            #expect(count == 2)
            // A matching document changed by a plain write aborts; the retry sees the new state.
            let attempts = Recorder<Int>()
            let final = try await store.runTransaction { t in
                let results = try await t.query(open)
                attempts.append(results.count)
                if attempts.count == 1 { try await store.commit([.update(try items.document("a"), [try upd("done", true)])]) }
                t.write(.set(summary, ["open": .int(Int64(results.count))]))
                return results.count
            }
            #expect(attempts.all == [2, 1])
            #expect(final == 1)
            #expect(try await store.get(summary)?.fields["open"] == 1)
        }
    }

    @Test("a rolled-back transaction leaves no change and releases its locks")
    func rollbackLeavesNothing() async throws {
        try await withStore { store, _ in
            let a = try doc("c/a")
            let manager = store.transactions
            let txn = manager.begin()
            _ = try await manager.get(txn, [a, try doc("c/b")])
            #expect(manager.locks.lockCount == 2)
            manager.rollback(txn)
            #expect(manager.locks.lockCount == 0)
            #expect(manager.openCount == 0)
            #expect(try await store.allChanges().isEmpty)
            await expectError(.invalidArgument, "not open") { _ = try await manager.commit(txn, [.set(a, [:])]) }
            #expect(try await store.get(a) == nil)
        }
    }

    @Test("locks are released after commit")
    func locksReleasedAfterCommit() async throws {
        try await withStore { store, _ in
            let manager = store.transactions
            let txn = manager.begin()
            let paths = try (0..<5).map { try doc("c/d\($0)") }
            _ = try await manager.get(txn, paths)
            _ = try await manager.query(txn, QuerySpec(collection: try coll("c")))
            #expect(manager.locks.lockCount == 5)
            _ = try await manager.commit(txn, paths.map { .set($0, ["x": 1]) })
            #expect(manager.locks.lockCount == 0)
            #expect(manager.openCount == 0)
            #expect(try await store.count(QuerySpec(collection: try coll("c"))) == 5)
        }
    }

    @Test("a second transaction waits for the first one's lock and proceeds when it commits")
    func waitsForLock() async throws {
        try await withStore { store, _ in
            let manager = store.transactions
            let path = try doc("c/d")
            let first = manager.begin()
            _ = try await manager.get(first, [path])
            let second = manager.begin()
            let waiting = Task { try await manager.get(second, [path]).first ?? nil }
            // The second cannot hold the lock while the first does; commit the first to hand it over.
            _ = try await manager.commit(first, [.set(path, ["by": "first"])])
            let seen = try await withTimeout { try await waiting.value }
            #expect(seen?.fields["by"] == "first")
            _ = try await manager.commit(second, [.set(path, ["by": "second"])])
            #expect(try await store.get(path)?.fields["by"] == "second")
            #expect(manager.locks.lockCount == 0)
        }
    }

    @Test("cancelling a transaction waiting for a lock ends its wait at once; the holder and later waiters are unaffected")
    func cancelledWait() async throws {
        try await withStore { store, _ in
            let manager = store.transactions
            let path = try doc("c/d")
            let holder = manager.begin()
            _ = try await manager.get(holder, [path])
            let cancelled = manager.begin()
            let waiting = Task { try await manager.get(cancelled, [path]) }
            try await until(manager.locks.changes) { manager.locks.waiterCount == 1 }
            let patient = manager.begin()
            let queuedBehind = Task { try await manager.get(patient, [path]).first ?? nil }
            try await until(manager.locks.changes) { manager.locks.waiterCount == 2 }

            waiting.cancel()
            let outcome = try await withTimeout { await waiting.result }
            #expect(throws: CancellationError.self) { try outcome.get() }
            #expect(manager.locks.waiterCount == 1)
            await expectError(.invalidArgument) { _ = try await manager.commit(cancelled, [.set(path, ["by": "cancelled"])]) }

            // The holder commits; the lock passes to the transaction still waiting.
            _ = try await manager.commit(holder, [.set(path, ["by": "holder"])])
            let seen = try await withTimeout { try await queuedBehind.value }
            #expect(seen?.fields["by"] == "holder")
            _ = try await manager.commit(patient, [.set(path, ["by": "patient"])])
            #expect(try await store.get(path)?.fields["by"] == "patient")
            #expect(manager.locks.lockCount == 0)
            #expect(manager.locks.waiterCount == 0)

            // A task cancelled before it asks for a held lock does not wait at all.
            let again = manager.begin()
            _ = try await manager.get(again, [path])
            let late = manager.begin()
            let early = Task {
                withUnsafeCurrentTask { $0?.cancel() }
                return try await manager.get(late, [path])
            }
            await #expect(throws: CancellationError.self) { _ = try await withTimeout { try await early.value } }
            #expect(manager.locks.waiterCount == 0)
            manager.rollback(again)
        }
    }

    @Test("one transaction waiting for two locks at once: cancelling both or rolling back leaves no waiter and no lock behind")
    func concurrentWaitsInOneTransaction() async throws {
        try await withStore { store, _ in
            let manager = store.transactions
            let d1 = try doc("c/d1"), d2 = try doc("c/d2")
            let holder = manager.begin()
            _ = try await manager.get(holder, [d1, d2])

            // Cancelled: both waits leave their queues.
            let reader = manager.begin()
            let first = Task { try await manager.get(reader, [d1]) }
            let second = Task { try await manager.get(reader, [d2]) }
            try await until(manager.locks.changes) { manager.locks.waiterCount == 2 }
            first.cancel()
            second.cancel()
            _ = try await withTimeout { await first.result }
            _ = try await withTimeout { await second.result }
            #expect(manager.locks.waiterCount == 0)

            // Rolled back while waiting for both: both waits end with aborted.
            let other = manager.begin()
            let third = Task { try await manager.get(other, [d1]) }
            let fourth = Task { try await manager.get(other, [d2]) }
            try await until(manager.locks.changes) { manager.locks.waiterCount == 2 }
            manager.rollback(other)
            for task in [third, fourth] {
                let outcome = try await withTimeout { await task.result }
                #expect(throws: HTTPSError.self) { try outcome.get() }
            }
            #expect(manager.locks.waiterCount == 0)

            // The holder ends: nothing is handed to the transactions that gave up.
            manager.rollback(holder)
            #expect(manager.locks.lockCount == 0)
            let later = manager.begin()
            _ = try await withTimeout { try await manager.get(later, [d1, d2]) }
            _ = try await manager.commit(later, [.set(d1, ["x": 1])])
            #expect(manager.locks.lockCount == 0)
        }
    }

    @Test("two reads of one held document by one transaction both wait, and both proceed when the lock passes")
    func sameDocumentTwiceAtOnce() async throws {
        try await withStore { store, _ in
            let manager = store.transactions
            let path = try doc("c/d")
            let holder = manager.begin()
            _ = try await manager.get(holder, [path])
            let reader = manager.begin()
            let first = Task { try await manager.get(reader, [path]) }
            let second = Task { try await manager.get(reader, [path]) }
            try await until(manager.locks.changes) { manager.locks.waiterCount == 2 }
            _ = try await manager.commit(holder, [.set(path, ["by": "holder"])])
            #expect(try await withTimeout { try await first.value }.first??.fields["by"] == "holder")
            #expect(try await withTimeout { try await second.value }.first??.fields["by"] == "holder")
            _ = try await manager.commit(reader, [.set(path, ["by": "reader"])])
            #expect(manager.locks.lockCount == 0)
            #expect(manager.locks.waiterCount == 0)
        }
    }

    @Test("a transaction that has ended takes no lock, even from a read that was on its way")
    func endedTransactionTakesNoLock() async throws {
        try await withStore { store, _ in
            let manager = store.transactions
            let txn = manager.begin()
            manager.rollback(txn)
            await expectError(.invalidArgument) { _ = try await manager.locks.acquire("c/x", for: txn) }
            #expect(manager.locks.lockCount == 0)
        }
    }

    @Test("a transaction idle past the timeout is rolled back on the store's clock, and its locks released")
    func expireIdle() async throws {
        try await withStore { store, clock in
            let manager = store.transactions
            let path = try doc("c/d")
            let idle = manager.begin()
            _ = try await manager.get(idle, [path])
            clock.advance(by: .seconds(30))
            let active = manager.begin()
            #expect(manager.expireIdle() == 0)
            clock.advance(by: manager.idleTimeout - .seconds(29))  // idle for 61 s, active for 31 s
            try await until(manager.changes) { manager.openCount == 1 }
            #expect(manager.locks.lockCount == 0)
            await expectError(.invalidArgument) { _ = try await manager.commit(idle, [.set(path, ["x": 1])]) }
            // The lock is free for others now.
            _ = try await withTimeout { try await manager.get(active, [path]) }
            _ = try await manager.commit(active, [.set(path, ["x": 2])])
            #expect(try await store.get(path)?.fields["x"] == 2)
        }
    }

    @Test("the expiry of an idle transaction hands its lock to a transaction waiting for it")
    func expireIdleHandsOverLock() async throws {
        try await withStore { store, clock in
            let manager = store.transactions
            let path = try doc("c/d")
            let idle = manager.begin()
            _ = try await manager.get(idle, [path])
            clock.advance(by: .seconds(30))
            let waiter = manager.begin()
            let waiting = Task { try await manager.get(waiter, [path]) }
            clock.advance(by: .seconds(31))
            _ = try await withTimeout { try await waiting.value }
            _ = try await manager.commit(waiter, [.set(path, ["x": 1])])
            #expect(manager.locks.lockCount == 0)
            #expect(manager.openCount == 0)
        }
    }

    @Test("transaction ids are random, and a transaction bound to one caller is not open to another")
    func boundToCaller() async throws {
        try await withStore { store, _ in
            let manager = store.transactions
            let path = try doc("c/owned")
            let ids = (0..<50).map { _ in manager.begin(owner: 7) }
            #expect(Set(ids).count == 50)
            #expect(zip(ids, ids.dropFirst()).allSatisfy { $1 != $0 &+ 1 }, "not sequential")
            let txn = ids[0]
            await expectError(.invalidArgument, "is not open") { _ = try await manager.get(txn, [path], caller: 8) }
            await expectError(.invalidArgument) { _ = try await manager.commit(txn, [.set(path, ["by": "intruder"])], caller: 8) }
            manager.rollback(txn, caller: 8)
            #expect(manager.openCount == 50, "another caller's rollback is ignored")
            _ = try await manager.get(txn, [path], caller: 7)
            _ = try await manager.commit(txn, [.set(path, ["by": "owner"])], caller: 7)
            #expect(try await store.get(path)?.fields["by"] == "owner")
            manager.rollbackAll(owner: 7)
            #expect(manager.openCount == 0)
        }
    }
}
