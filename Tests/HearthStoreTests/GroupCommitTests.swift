import CSQLite
import Dispatch
import Foundation
import Glibc
import HearthModel
@testable import HearthStore
import Synchronization
import Testing

/// Group commit: concurrent commits share one SQLite transaction, each in a savepoint of its own.
@Suite("Group commit", .timeLimit(.minutes(2)))
struct GroupCommitTests {
    @Test("many concurrent commits, some failing: each failure is alone and leaves nothing; the others all land, with feed sequences unique and contiguous")
    func concurrentWithFailures() async throws {
        try await withStore { store, _ in
            // Every third commit creates a document that already exists and must fail alone.
            try await store.commit((0..<100).filter { $0 % 3 == 0 }.map { .create(try doc("taken/t\($0)"), ["old": true]) })
            let outcomes = try await withThrowingTaskGroup(of: (Int, Bool).self) { group in
                for i in 0..<100 {
                    group.addTask {
                        let writes: [DocumentWrite] = i % 3 == 0
                            ? [.create(try doc("fresh/f\(i)"), ["i": .int(Int64(i))]), .create(try doc("taken/t\(i)"), ["new": true])]
                            : [.create(try doc("fresh/f\(i)"), ["i": .int(Int64(i))]), .set(try doc("other/o\(i)"), ["i": .int(Int64(i))])]
                        do {
                            let result = try await store.commit(writes)
                            return (i, result.writeResults.count == 2)
                        } catch let error as HTTPSError where error.code == .alreadyExists {
                            return (i, false)
                        }
                    }
                }
                var all: [Int: Bool] = [:]
                for try await (i, ok) in group { all[i] = ok }
                return all
            }
            #expect(outcomes.count == 100)
            for i in 0..<100 {
                #expect(outcomes[i] == (i % 3 != 0), "commit \(i)")
                let fresh = try await store.get(try doc("fresh/f\(i)"))
                #expect((fresh != nil) == (i % 3 != 0), "a failed commit's other write must not land (\(i))")
            }
            for i in stride(from: 0, to: 100, by: 3) {
                #expect(try await store.get(try doc("taken/t\(i)"))?.fields == ["old": true])
            }
            let changes = try await store.allChanges()
            let setup = 34, landed = 66 * 2
            #expect(changes.count == setup + landed)
            #expect(changes.map(\.sequence) == Array(1...Int64(setup + landed)), "unique, contiguous, in commit order")
            #expect(zip(changes, changes.dropFirst()).allSatisfy { $0.commitTime <= $1.commitTime })
            // Each successful commit's changes share one commit time, distinct from every other commit's.
            let times = Dictionary(grouping: changes.dropFirst(setup), by: \.commitTime)
            #expect(times.count == 66 && times.values.allSatisfy { $0.count == 2 })
        }
    }

    @Test("a group is written without savepoints until a commit in it fails; then again with one per commit, only the failed commit undone, and the next groups keep savepoints for a while")
    func savepointsOnlyAfterAFailure() async throws {
        try await withStore { store, _ in
            let engine = try #require(store.engine as? SQLiteEngine)
            let writer = engine.writer
            func job(_ writes: [DocumentWrite]) -> Writer.CommitJob { Writer.CommitJob(writes: writes, validations: [], enqueues: []) }
            func landed(_ outcomes: [Writer.CommitOutcome]) -> [Bool] { outcomes.map { (try? $0.get()) != nil } }
            let statements = StatementLog()
            await writer.trace(into: statements)
            // Straight to the writer (not announced), so the feed below is read from the database.
            #expect(landed(try await writer.commitGroup([job([.create(try doc("taken/t"), ["old": true])]), job([.create(try doc("a/1"), [:])])])) == [true, true])
            #expect(await writer.carefulGroups == 0, "no commit failed: no savepoints next time either")
            #expect(statements.take() == ["BEGIN IMMEDIATE": 1, "COMMIT": 1, "SAVEPOINT": 0, "ROLLBACK TO": 0, "ROLLBACK": 0], "one transaction, no savepoint")

            // The middle commit writes a document, then fails on its second write.
            let mixed = try await writer.commitGroup([
                job([.create(try doc("b/1"), [:])]),
                job([.create(try doc("b/2"), [:]), .create(try doc("taken/t"), ["new": true])]),
                job([.create(try doc("b/3"), [:])]),
            ])
            #expect(landed(mixed) == [true, false, true])
            #expect(statements.take() == ["BEGIN IMMEDIATE": 2, "COMMIT": 1, "SAVEPOINT": 3, "ROLLBACK TO": 1, "ROLLBACK": 1],
                    "written without savepoints and rolled back, then again with one per commit")
            let failure = try #require(mixed[1].failureError as? HTTPSError)
            #expect(failure.code == .alreadyExists)
            #expect(try await store.get(try doc("b/2")) == nil, "the failed commit's first write is undone")
            #expect(try await store.get(try doc("taken/t"))?.fields == ["old": true])
            #expect(try await store.get(try doc("b/1")) != nil)
            #expect(try await store.get(try doc("b/3")) != nil)
            #expect(await writer.carefulGroups == Writer.carefulGroupsAfterFailure)
            let changes = try await store.allChanges()
            #expect(changes.map(\.path.description) == ["taken/t", "a/1", "b/1", "b/3"])
            #expect(changes.map(\.sequence) == [1, 2, 3, 4], "the failed attempt left no gap in the feed")
            // What the callers were told is what the second attempt wrote.
            let told = try [mixed[0].get(), mixed[2].get()]
            #expect(told.map(\.1.first?.sequence) == [3, 4])
            #expect(told.map(\.0.commitTime) == [changes[2].commitTime, changes[3].commitTime])
            #expect(changes[1].commitTime < changes[2].commitTime && changes[2].commitTime < changes[3].commitTime)

            // The careful groups count down, one per group, then groups go without savepoints again.
            _ = statements.take()
            // All 64 groups in one turn of the writer: one await each took 0.5 s in the whole suite on
            // 2 cores (each hop back waits behind every other test's tasks on Swift's pool), and
            // the loop alone outlasted the suite's time limit.
            let groups = try (0..<Writer.carefulGroupsAfterFailure).map { i in [job([.create(try doc("c/\(i)"), [:])]), job([.create(try doc("d/\(i)"), [:])])] }
            let outcomes = try await writer.inOneTurn { writer in try groups.map { try writer.commitGroup($0) } }
            for (i, group) in outcomes.enumerated() {
                #expect(landed(group) == [true, true], "group \(i): \(group.compactMap(\.failureError))")
            }
            #expect(await writer.carefulGroups == 0)
            #expect(statements.take()["SAVEPOINT"] == 2 * Writer.carefulGroupsAfterFailure)
            #expect(try await store.allChanges().count == 4 + 2 * Writer.carefulGroupsAfterFailure)
            _ = try await writer.commitGroup([job([.create(try doc("e/1"), [:])]), job([.create(try doc("e/2"), [:])])])
            #expect(statements.take()["SAVEPOINT"] == 0, "past the countdown, no savepoints again")
        }
    }

    @Test("transactions validate against commits earlier in the same group: a conflict aborts only the stale one")
    func validationsInAGroup() async throws {
        try await withStore { store, _ in
            try await store.commit([.set(try doc("counters/c"), ["n": 0])])
            let before = try #require(try await store.get(try doc("counters/c")))
            let results = try await withThrowingTaskGroup(of: Bool.self) { group in
                for n in 1...20 {
                    group.addTask {
                        do {
                            _ = try await store.engine.commit([.set(try doc("counters/c"), ["n": .int(Int64(n))])],
                                                              validations: [.document(try doc("counters/c"), updateTime: before.updateTime)], enqueues: [])
                            return true
                        } catch let error as HTTPSError where error.code == .aborted { return false }
                    }
                }
                var all: [Bool] = []
                for try await ok in group { all.append(ok) }
                return all
            }
            #expect(results.filter { $0 }.count == 1, "exactly one read-validated write wins: \(results)")
        }
    }

    @Test("the completion form answers each caller once, after its group's COMMIT: a reader on another connection already sees the document when `done` runs, and a failing commit fails alone")
    func completionAfterCommit() async throws {
        try await withStore { store, _ in
            let engine = try #require(store.engine as? SQLiteEngine)
            try await store.commit([.create(try doc("taken/t"), ["old": true])])
            let n = 200
            // (answers, of which visible to a reader when answered, failures naming the taken document)
            let seen = Mutex((answers: 0, visible: 0, alreadyExists: 0))
            await withCheckedContinuation { (finished: CheckedContinuation<Void, Never>) in
                for i in 0..<n {
                    let path = try! doc("fresh/f\(i)")
                    // Every tenth also creates the existing document, so it must fail, and alone.
                    let writes: [DocumentWrite] = i % 10 == 0
                        ? [.create(path, ["i": .int(Int64(i))]), .create(try! doc("taken/t"), ["new": true])]
                        : [.create(path, ["i": .int(Int64(i))])]
                    engine.commit(writes, validations: [], enqueues: []) { outcome in
                        let visible = ((try? engine.getAll([path]))?.first ?? nil) != nil
                        var failed = false, exists = false
                        if case .failure(let error) = outcome {
                            failed = true
                            exists = (error as? HTTPSError)?.code == .alreadyExists
                        }
                        let done = seen.withLock { s -> Bool in
                            s.answers += 1
                            if visible && !failed { s.visible += 1 }
                            if failed && exists && !visible { s.alreadyExists += 1 }
                            return s.answers == n
                        }
                        if done { finished.resume() }
                    }
                }
            }
            let counts = seen.withLock { $0 }
            #expect(counts.answers == n)
            #expect(counts.visible == n - n / 10, "every successful commit is readable from another connection when it is answered")
            #expect(counts.alreadyExists == n / 10, "each failing commit fails alone with already-exists and leaves nothing")
            #expect(try await store.get(try doc("taken/t"))?.fields == ["old": true])
            #expect(try await store.allChanges().count == 1 + (n - n / 10))
        }
    }

    @Test("a stream of commits does not hold up the writer's other work: what was queued for the writer behind the first group runs before the second")
    func drainYields() async throws {
        try await withStore { store, _ in
            let engine = try #require(store.engine as? SQLiteEngine)
            let n = CommitQueue.maxGroup * 10
            // Hold the writer's thread while everything is queued: the first drain, then the marker.
            let gate = DispatchSemaphore(value: 0)
            engine.writer.onWriterThread { _ in gate.wait() }
            let answered = Mutex(0)
            let all = AsyncStream<Void>.makeStream()
            for i in 0..<n {
                engine.commit([.create(try doc("items/i\(i)"), ["i": .int(Int64(i))])], validations: [], enqueues: []) { outcome in
                    #expect((try? outcome.get()) != nil)
                    if answered.withLock({ $0 += 1; return $0 }) == n { all.continuation.finish() }
                }
            }
            let atMarker = Mutex(-1)
            engine.writer.onWriterThread { _ in atMarker.withLock { $0 = answered.withLock { $0 } } }
            gate.signal()
            for await _ in all.stream {}
            #expect(atMarker.withLock { $0 } == CommitQueue.maxGroup, "the marker ran after the first group of \(CommitQueue.maxGroup), not after all \(n)")
            #expect(try await store.allChanges().count == n)
        }
    }

    @Test("a commit that may run here does when the writer is idle, on the caller's thread with no switch, and is queued for the writer's thread when it is busy or the batch is large; a completion-form commit never runs on its caller's thread")
    func lonerRunsHere() async throws {
        try await withStore { store, _ in
            let engine = try #require(store.engine as? SQLiteEngine)
            func job(_ id: String) throws -> Writer.CommitJob {
                Writer.CommitJob(writes: [.create(try doc("items/\(id)"), ["id": .string(id)])], validations: [], enqueues: [])
            }
            // The writer is idle once what opening the store queued has run, and the block that ran
            // last has been counted out (just after it returns, which under load can be well after
            // it resumed this task: waited for, bounded): a commit that then finds it busy is queued
            // for the writer's thread, so the check is tried again, a bounded number of times.
            var ranHere = false
            for attempt in 0..<50 where !ranHere {
                await withCheckedContinuation { c in engine.writer.onWriterThread { _ in c.resume() } }
                for _ in 0..<1_000 where !engine.writer.isIdle { try await Task.sleep(for: .milliseconds(1)) }
                // Taken after the last suspension: a task may resume on another of the pool's threads.
                let caller = UInt(pthread_self())
                let idle = Mutex<UInt?>(nil)
                engine.commit(try job("idle\(attempt)"), here: true) { outcome in
                    if (try? outcome.get()) != nil { idle.withLock { $0 = UInt(pthread_self()) } }
                }
                ranHere = idle.withLock { $0 } == caller
            }
            #expect(ranHere, "answered before commit returned, on the caller's thread")

            // Busy: the writer's thread holds the queue, so the commit waits for it there.
            let gate = DispatchSemaphore(value: 0)
            engine.writer.onWriterThread { _ in gate.wait() }
            let busy = AsyncStream<UInt>.makeStream()
            let busyCaller = UInt(pthread_self())
            engine.commit(try job("busy"), here: true) { _ in busy.continuation.yield(UInt(pthread_self())); busy.continuation.finish() }
            gate.signal()
            var busyThread: UInt?
            for await t in busy.stream { busyThread = t }
            #expect(busyThread != nil && busyThread != busyCaller)

            let completion = AsyncStream<UInt>.makeStream()
            let completionCaller = UInt(pthread_self())
            store.commit([.create(try doc("items/completion"), [:])]) { _ in completion.continuation.yield(UInt(pthread_self())); completion.continuation.finish() }
            var completionThread: UInt?
            for await t in completion.stream { completionThread = t }
            #expect(completionThread != nil && completionThread != completionCaller)

            // A batch larger than mayRunHere allows goes to the writer's thread even when it is
            // idle and the caller allows running here.
            let batch = Writer.CommitJob(writes: try (0..<17).map { .create(try doc("batch/b\($0)"), [:]) }, validations: [], enqueues: [])
            #expect(try job("one").mayRunHere && !batch.mayRunHere)
            let large = AsyncStream<UInt>.makeStream()
            let largeCaller = UInt(pthread_self())
            engine.commit(batch, here: true) { outcome in
                if (try? outcome.get()) != nil { large.continuation.yield(UInt(pthread_self())) }
                large.continuation.finish()
            }
            var largeThread: UInt?
            for await t in large.stream { largeThread = t }
            #expect(largeThread != nil && largeThread != largeCaller)
            #expect(try await store.get(try doc("batch/b16")) != nil)
            #expect(try await store.get(try doc("items/idle0")) != nil)
            #expect(try await store.get(try doc("items/busy")) != nil)
            #expect(try await store.get(try doc("items/completion")) != nil)
        }
    }

    @Test("a thread marked as never committing itself (a worker's socket reader) has even a small commit on an idle writer run on the writer's thread")
    func markedThreadNeverRunsHere() async throws {
        try await withStore { store, _ in
            let engine = try #require(store.engine as? SQLiteEngine)
            // (An unmarked caller on an idle writer commits on its own thread: `lonerRunsHere`.)
            let job = Writer.CommitJob(writes: [.create(try doc("items/reader"), [:])], validations: [], enqueues: [])
            #expect(job.mayRunHere)
            let threads = AsyncStream<(caller: UInt, committed: UInt?, onMarked: Bool)>.makeStream()
            // A thread of its own, marked for its life, as the host's socket readers are. It waits
            // for the answer before it ends, so that no thread started meanwhile (the writer's)
            // can reuse its identity.
            let thread = Thread {
                CommitPlacement.neverOnThisThread()
                let caller = UInt(pthread_self())
                let answered = DispatchSemaphore(value: 0)
                engine.commit(job, here: true) { outcome in
                    threads.continuation.yield((caller, (try? outcome.get()) != nil ? UInt(pthread_self()) : nil, CommitPlacement.forbiddenHere))
                    threads.continuation.finish()
                    answered.signal()
                }
                _ = answered.wait(timeout: .now() + 30)
            }
            thread.start()
            var seen: (caller: UInt, committed: UInt?, onMarked: Bool)?
            for await t in threads.stream { seen = t }
            let result = try #require(seen)
            #expect(result.committed != nil, "committed")
            #expect(result.committed != result.caller && !result.onMarked, "on the writer's thread, not the marked caller's")
            #expect(try await store.get(try doc("items/reader")) != nil)
        }
    }

    @Test("a drain on a caller's thread takes only the small commits at the head, at most maxGroupHere: a batch or a transaction that read a query waits for the writer's thread")
    func callerTakesOnlySmall() throws {
        func waiting(writes n: Int, validations: [ReadValidation] = []) throws -> CommitQueue.Waiting {
            CommitQueue.Waiting(job: Writer.CommitJob(writes: try (0..<n).map { .create(try doc("q/d\($0)"), [:]) }, validations: validations, enqueues: []), done: { _ in })
        }
        let queue = CommitQueue()
        #expect(queue.submit(try waiting(writes: 1)), "the first submission schedules the drain")
        #expect(!queue.submit(try waiting(writes: 2)))
        #expect(!queue.submit(try waiting(writes: 500)))
        #expect(!queue.submit(try waiting(writes: 1)))
        #expect(queue.take(small: true).map(\.job.writes.count) == [1, 2])
        #expect(queue.more())
        #expect(queue.take().map(\.job.writes.count) == [500, 1], "the writer's thread takes the rest, batch and all")
        #expect(!queue.more(), "empty: the drain ends")

        #expect(queue.submit(try waiting(writes: 1)))
        for _ in 0..<(CommitQueue.maxGroupHere + 3) { _ = queue.submit(try waiting(writes: 1)) }
        #expect(queue.take(small: true).count == CommitQueue.maxGroupHere)
        #expect(queue.more() && queue.take().count == 4 && !queue.more())

        let query = ReadValidation.query(QuerySpec(collectionID: "q"), results: [:])
        #expect(try waiting(writes: 1).job.mayRunHere)
        #expect(!(try waiting(writes: 1, validations: [query]).job.mayRunHere), "a query to run again")
        #expect(!(try waiting(writes: 10, validations: Array(repeating: .document(try doc("q/x"), updateTime: nil), count: 7)).job.mayRunHere))
    }
}

extension Result {
    /// The error of a failure, nil for a success.
    var failureError: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}

/// The writer's statements as SQLite traces them, counted by their first words.
final class StatementLog: Sendable {
    /// "ROLLBACK TO" (a savepoint) before "ROLLBACK" (the transaction).
    static let kinds = ["BEGIN IMMEDIATE", "COMMIT", "SAVEPOINT", "ROLLBACK TO", "ROLLBACK"]
    private let counts = Mutex<[String: Int]>([:])

    func record(_ sql: String) {
        let key = StatementLog.kinds.first { sql.hasPrefix($0) }
        if let key { counts.withLock { $0[key, default: 0] += 1 } }
    }

    /// The counts since the last take (every key present).
    func take() -> [String: Int] {
        counts.withLock { c in
            defer { c = [:] }
            return StatementLog.kinds.reduce(into: [:]) { $0[$1] = c[$1, default: 0] }
        }
    }
}

extension Writer {
    /// Runs `body` isolated to the writer, in one turn of its executor.
    func inOneTurn<T: Sendable>(_ body: @Sendable (isolated Writer) throws -> T) throws -> T { try body(self) }

    /// Sends every statement the writer's connection starts to `log` (SQLite's statement trace).
    /// The trace keeps the log alive (retained once and never released: it is a test's).
    func trace(into log: StatementLog) {
        let context = Unmanaged.passRetained(log).toOpaque()
        sqlite3_trace_v2(db.handle, UInt32(SQLITE_TRACE_STMT), { _, context, _, sql in
            guard let context, let sql else { return 0 }
            Unmanaged<StatementLog>.fromOpaque(context).takeUnretainedValue().record(String(cString: sql.assumingMemoryBound(to: CChar.self)))
            return 0
        }, context)
    }
}
