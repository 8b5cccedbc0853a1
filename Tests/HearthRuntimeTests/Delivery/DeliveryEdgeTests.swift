import Foundation
import HearthAuth
import HearthModel
@_spi(Internals) @testable import HearthRuntime
@testable import HearthStore
import HearthTesting
import Testing

/// Edge cases of the delivery engine: order with retries, refused units, shared directories,
/// stale leases, cursors and pruning, schedule catch-up.
@Suite("Delivery engine edge cases")
struct DeliveryEdgeTests {
    /// A delivery of the "routed" task function with an ordering key, as routing queues one.
    static func routed(_ id: String, key: String, at now: Timestamp, data: Value = .map([:])) -> NewDelivery {
        var d = TaskEnqueue(queue: "routed", id: id, data: data, scheduleTime: now).delivery
        d.orderingKey = key
        return d
    }

    @Test("a retrying change holds back later changes to its document, not other documents, and then they run in order")
    func orderWithRetry() async throws {
        let app = try await TestRuntime(units: ["DeliveryUnit"])
        try await app.write(["seq/a": ["n": 1, "failOnce": true]])
        try await app.write(["seq/a": ["n": 2]])
        try await app.write(["seq/b": ["n": 1]])
        await app.settle()
        #expect(try await app.document("seqLog/b")?.fields["seen"] == [1], "another document is not held back")
        #expect(try await app.document("seqLog/a") == nil, "n=2 waits while n=1 is retried")
        await app.advance(by: .seconds(10))
        let seen = try await app.document("seqLog/a")?.fields["seen"]
        let left = try app.deliveries().map { "#\($0.id) \($0.eventID) \($0.state) attempts \($0.attempts) due \($0.dueTime)" }
        #expect(seen == [1, 2], "seqLog/a saw \(String(describing: seen)) at \(app.clock.now()); deliveries \(left)")
        #expect(left.isEmpty)
    }

    @Test("while a unit is refused its trigger keeps its feed position; once it loads, it gets the changes made meanwhile")
    func refusedUnitKeepsCursor() async throws {
        let dir = NSTemporaryDirectory() + "hearth-refused-\(UUID().uuidString)"
        do {
            let app = try await TestRuntime(units: ["DeliveryUnit"], configure: { $0.dataDirectory = dir })
            try await app.write(["items/before": ["n": 1]])
            await app.settle()
        }
        do {
            // DeliveryUnit is missing and BrokenUnit is refused: a failed deploy.
            var config = makeConfig(units: ["BrokenUnit"])
            config.dataDirectory = dir
            let runtime = try await openRuntime(config: config, clock: ManualClock())
            await runtime.loadUnits()
            #expect(!runtime.loadErrors.isEmpty)
            try await runtime.startDeliveries(driving: false)
            try await runtime.store.commit([.set(try DocumentPath("items/during"), ["n": 2])])
            #expect(try await runtime.store.engine.cursors()["trigger:recordWrite"] != nil)
            runtime.close()
        }
        let app = try await TestRuntime(units: ["DeliveryUnit"], configure: { $0.dataDirectory = dir })
        await app.settle()
        let items = Set(try await app.documents(in: "runs").compactMap { $0.fields["item"]?.stringValue })
        #expect(items == ["before", "during"])
    }

    @Test("a second live runtime on the same data directory gets its own node id and does not take over running deliveries")
    func nodeIDIsExclusive() async throws {
        let dir = NSTemporaryDirectory() + "hearth-node-\(UUID().uuidString)"
        let a = try await TestRuntime(units: ["DeliveryUnit"], configure: { $0.dataDirectory = dir })
        try await a.enqueue("slow", ["sleep": 30], id: "held")
        await a.settle()
        #expect(await a.runtime.engine.runningCount == 1)
        let b = try await TestRuntime(units: ["DeliveryUnit"], configure: { $0.dataDirectory = dir })
        let (nodeA, nodeB) = (await a.runtime.engine.node, await b.runtime.engine.node)
        #expect(nodeA.owned)
        #expect(!nodeB.owned)
        #expect(nodeA.id != nodeB.id)
        #expect(try b.deliveries(function: "slow").first?.state == .running, "b did not take a's running delivery")
        await b.settle()
        #expect(await b.runtime.engine.runningCount == 0)
        await a.advance(by: .seconds(30))
        #expect(try await a.document("runs/slow-held")?.fields["count"] == 1)
    }

    @Test("an outcome only counts for the attempt and lease it belongs to")
    func staleOutcomeIgnored() async throws {
        let app = try await TestRuntime(units: ["DeliveryUnit"])
        let deliveries = app.runtime.deliveries
        try await app.enqueue("work", ["label": "x"], id: "lease-test", scheduleDelay: .seconds(3600))
        let now = app.clock.now() + .seconds(3600)
        let claimed = try await deliveries.claim([.init(function: "work", limit: 1)], now: now, owner: "node-a") { _ in now + .seconds(60) }.deliveries
        let d = try #require(claimed.first)
        // The lease ends; another node takes the delivery over (a second attempt).
        _ = try await deliveries.recoverLeases(owner: nil, now: now + .seconds(61))
        let taken = try await deliveries.claim([.init(function: "work", limit: 1)], now: now + .seconds(61), owner: "node-b") { _ in now + .seconds(200) }.deliveries
        #expect(taken.first?.attempts == 2)
        // node-a's late outcome changes nothing; node-b's counts.
        try await deliveries.complete([.dead(id: d.id, attempt: d.attempts, error: "late", status: 500)], owner: "node-a")
        #expect(try deliveries.delivery(id: d.id)?.state == .running)
        try await deliveries.complete([.succeeded(id: d.id, attempt: 2)], owner: "node-b")
        #expect(try deliveries.delivery(id: d.id) == nil)
    }

    @Test("the earliest lease end is read at most once a second of the engine's clock while none has ended; a lease another process took and let lapse in between is taken back at the first pass after that second")
    func leaseEndReadsBounded() async throws {
        let app = try await TestRuntime(units: ["DeliveryUnit"])
        let engine = app.runtime.engine
        await app.settle()
        let reads = await engine.leaseReads
        #expect(reads >= 1)
        // Five commits, each routed, run and recorded in passes of their own, all at one instant.
        for i in 0..<5 {
            try await app.write(["items/i\(i)": ["n": .int(Int64(i))]])
            await app.settle()
        }
        #expect(try await app.documents(in: "runs").count == 5)
        #expect(await engine.leaseReads == reads, "no read again within the second")

        // Another process claims a task with a lease shorter than that second, then dies.
        let start = app.clock.now()
        try await app.enqueue("work", ["label": "short"], id: "short-lease")
        let claimed = try await app.runtime.deliveries.claim([.init(function: "work", limit: 1)], now: start, owner: "node-b") { _ in start + .milliseconds(500) }
        #expect(claimed.deliveries.count == 1)
        await app.advance(by: .milliseconds(600))
        #expect(try app.deliveries(function: "work").map(\.state) == [.running], "lapsed 0.1 s ago, within the second of the last read")
        #expect(await engine.leaseReads == reads)
        await app.advance(to: start + .milliseconds(1100))
        #expect(await engine.leaseReads > reads)
        #expect(try await app.document("runs/work-short-lease")?.fields["count"] == 1, "taken back and run here")
        #expect(try app.deliveries(function: "work").isEmpty)
    }

    @Test("routing queues a delivery already claimed while its function has room: never past its concurrency (counting other processes' running deliveries), never ahead of an earlier delivery of its ordering key, never twice")
    func routingClaims() async throws {
        let app = try await TestRuntime(units: ["DeliveryUnit"])
        let deliveries = app.runtime.deliveries
        let now = app.clock.now()
        func routed(_ id: String, key: String) -> NewDelivery { Self.routed(id, key: key, at: now, data: ["id": .string(id)]) }
        let lease = now + .seconds(60)
        let claiming = RouteClaim(owner: "node-a", now: now, functions: ["routed": (limit: 10, concurrency: 3, leaseUntil: lease)])
        // Another process already runs one delivery of the function.
        _ = try await deliveries.route([FeedRoute(feed: .changes, cursor: "trigger:routed", through: 1, deliveries: [(1, routed("e0", key: "z"))])],
                                       claiming: RouteClaim(owner: "node-b", now: now, functions: ["routed": (limit: 1, concurrency: 3, leaseUntil: lease)]))
        let first = try await deliveries.route([FeedRoute(feed: .changes, cursor: "trigger:routed", through: 5, deliveries: [
            (2, routed("e1", key: "a")), (3, routed("e2", key: "a")), (4, routed("e3", key: "b")), (5, routed("e4", key: "c")),
        ])], claiming: claiming)
        // e1 and e3 fill the function's concurrency of 3 with e0; e2 waits behind e1 (same key); e4 finds no room.
        #expect(first.claimed.map(\.delivery.eventID) == ["e1", "e3"])
        #expect(first.added.map(\.eventID) == ["e2", "e4"])
        #expect(first.runningElsewhere["routed"] == 1, "node-b's")
        #expect(first.cursors["trigger:routed"] == 5)
        let e1 = try #require(first.claimed.first)
        #expect(e1.delivery.state == .running && e1.delivery.attempts == 1 && e1.delivery.firstAttemptTime == now)
        #expect(try e1.delivery.event() == e1.event, "the claimed delivery's payload is its event")
        let stored = try #require(try deliveries.delivery(id: e1.delivery.id))
        #expect(stored == e1.delivery, "what routing returns is what it stored")
        #expect(try deliveries.list(function: "routed", state: .running, limit: 10).map(\.eventID) == ["e0", "e1", "e3"])
        #expect(try deliveries.list(function: "routed", state: .pending, limit: 10).map(\.eventID) == ["e2", "e4"])
        // The same changes routed again (by a process behind this one) queue nothing; a repeated
        // event id is neither claimed nor queued twice.
        let again = try await deliveries.route([FeedRoute(feed: .changes, cursor: "trigger:routed", through: 6, deliveries: [
            (4, routed("e3", key: "b")), (6, routed("e3", key: "d")),
        ])], claiming: RouteClaim(owner: "node-a", now: now, functions: ["routed": (limit: 10, concurrency: 10, leaseUntil: lease)]))
        #expect(again.claimed.isEmpty && again.added.isEmpty)
        // The lease is a claim's: only its owner's outcome counts, and a later claim finds e2 once e1 is done.
        try await deliveries.complete([.succeeded(id: e1.delivery.id, attempt: 1)], owner: "node-b")
        #expect(try deliveries.delivery(id: e1.delivery.id)?.state == .running)
        try await deliveries.complete([.succeeded(id: e1.delivery.id, attempt: 1)], owner: "node-a")
        #expect(try deliveries.delivery(id: e1.delivery.id) == nil)
        let next = try await deliveries.claim([.init(function: "routed", limit: 10, concurrency: 10)], now: now, owner: "node-a") { _ in lease }
        #expect(next.deliveries.map(\.eventID) == ["e2", "e4"])
        // Lease recovery treats a routed claim like any other: a restarted node-a takes it back.
        let recovered = try await deliveries.recoverLeases(owner: "node-a", now: now, policy: { _ in nil })
        #expect(recovered.pending == 3)
    }

    @Test("routing records the outcomes handed to it first, in its own transaction: a finished delivery no longer holds back its ordering key; a routing that fails records none of them")
    func routingRecordsOutcomes() async throws {
        let app = try await TestRuntime(units: ["DeliveryUnit"])
        let deliveries = app.runtime.deliveries
        let now = app.clock.now()
        func route(_ sequence: Int64, _ id: String, key: String, completing outcomes: [DeliveryOutcome]? = nil) async throws -> RouteResult {
            let routes = [FeedRoute(feed: .changes, cursor: "trigger:routed", through: sequence, deliveries: [(sequence, Self.routed(id, key: key, at: now))])]
            let claiming = RouteClaim(owner: "node-a", now: now, functions: ["routed": (limit: 10, concurrency: 10, leaseUntil: now + .seconds(60))])
            guard let outcomes else { return try await deliveries.route(routes, claiming: claiming) }
            return try await deliveries.route(routes, claiming: claiming, completing: outcomes, owner: "node-a")
        }
        let e1 = try #require(try await route(1, "e1", key: "a").claimed.first).delivery
        #expect(try await route(2, "f1", key: "b").claimed.count == 1)
        // With e1's outcome, e1 is gone before e2 of its key is looked at, and e2 is claimed in the
        // same transaction; without f1's, f2 waits behind it.
        let e2 = try await route(3, "e2", key: "a", completing: [.succeeded(id: e1.id, attempt: 1)])
        #expect(try deliveries.delivery(id: e1.id) == nil)
        #expect(e2.claimed.map(\.delivery.eventID) == ["e2"])
        let f2 = try await route(4, "f2", key: "b", completing: [])
        #expect(f2.claimed.isEmpty && f2.added.map(\.eventID) == ["f2"], "behind f1, still running")
        // An outcome under another owner's lease changes nothing, as `complete` has it.
        let e2ID = try #require(e2.claimed.first).delivery.id
        _ = try await deliveries.route([], claiming: nil, completing: [.succeeded(id: e2ID, attempt: 1)], owner: "node-b")
        #expect(try deliveries.delivery(id: e2ID)?.state == .running)

        // Another process's trigger refuses the next insert: the routing fails, and e2's outcome,
        // recorded in the same transaction, is rolled back with it; the cursor stays.
        let other = try Connection(path: app.directory + "/store.sqlite", options: Connection.Options())
        try other.execute("CREATE TRIGGER refuse_e4 BEFORE INSERT ON deliveries WHEN NEW.event_id = 'e4' BEGIN SELECT RAISE(ABORT, 'refused'); END")
        await #expect(throws: (any Error).self) { _ = try await route(5, "e4", key: "c", completing: [.succeeded(id: e2ID, attempt: 1)]) }
        #expect(try deliveries.delivery(id: e2ID)?.state == .running, "not recorded")
        #expect(try await deliveries.cursor("trigger:routed", in: .changes) == 4)
        try other.execute("DROP TRIGGER refuse_e4")

        // Nothing to route: the outcomes are recorded alone.
        let alone = try await deliveries.route([], claiming: nil, completing: [.succeeded(id: e2ID, attempt: 1)], owner: "node-a")
        #expect(alone.claimed.isEmpty && alone.added.isEmpty)
        #expect(try deliveries.delivery(id: e2ID) == nil)
        #expect(try deliveries.list(function: "routed", state: .pending, limit: 10).map(\.eventID) == ["f2"])
    }

    @Test("an outcome that waits while routing fails is recorded alone at that pass, not held up by the routing", .timeLimit(.minutes(1)))
    func outcomeRecordedWhenRoutingFails() async throws {
        let app = try await TestRuntime(units: ["DeliveryUnit"])
        try await app.write(["items/a": ["n": 1]])
        // Another process's trigger refuses to move the feed cursor past items/a's change: the
        // change is routed, and every routing after it (of the handler's own writes) fails.
        let other = try Connection(path: app.directory + "/store.sqlite", options: Connection.Options())
        let routedThrough = try #require(try other.scalarInt("SELECT max(seq) FROM changes"))
        try other.execute("CREATE TRIGGER refuse_cursor BEFORE UPDATE ON consumers WHEN NEW.cursor > \(routedThrough) BEGIN SELECT RAISE(ABORT, 'refused'); END")
        await app.settle()
        #expect(try app.deliveries(function: "recordWrite").isEmpty, "the attempt's outcome recorded, though every routing since fails")
        #expect(try other.scalarInt("SELECT cursor FROM consumers WHERE name = 'trigger:recordWrite'") == routedThrough)
        try other.execute("DROP TRIGGER refuse_cursor")
        try await app.write(["items/a": ["n": 2]])
        await app.settle()
        #expect(try await app.document("orderLog/a")?.fields["seen"] == [1, 2])
        #expect(try app.deliveries(function: "recordWrite").isEmpty)
    }

    @Test("routing claims nothing while a delivery of its function is pending and due, whichever process queued it; a released claim is pending again with its attempt not counted")
    func routingLeavesDueWorkFirst() async throws {
        let app = try await TestRuntime(units: ["DeliveryUnit"])
        let deliveries = app.runtime.deliveries
        let now = app.clock.now()
        func routed(_ id: String) -> NewDelivery { Self.routed(id, key: id, at: now) }
        let lease = now + .seconds(60)
        let claiming = RouteClaim(owner: "node-a", now: now, functions: ["routed": (limit: 10, concurrency: 10, leaseUntil: lease)])
        // Another process queued one, pending and due: it runs first, so routing claims nothing.
        try await deliveries.add([routed("older")])
        let first = try await deliveries.route([FeedRoute(feed: .changes, cursor: "trigger:routed", through: 1, deliveries: [(1, routed("new"))])],
                                               claiming: claiming)
        #expect(first.claimed.isEmpty)
        #expect(first.added.map(\.eventID) == ["new"])
        let taken = try await deliveries.claim([.init(function: "routed", limit: 1, concurrency: 10)], now: now, owner: "node-b") { _ in lease }
        let older = try #require(taken.deliveries.first)
        #expect(older.eventID == "older")
        // "new" is still pending and due; node-b's running delivery is counted as another process's.
        let second = try await deliveries.route([FeedRoute(feed: .changes, cursor: "trigger:routed", through: 2, deliveries: [(2, routed("third"))])],
                                                claiming: claiming)
        #expect(second.claimed.isEmpty)
        #expect(second.runningElsewhere["routed"] == 1)
        // Released by its claimer: pending, no attempt counted, no first attempt time.
        try await deliveries.complete([.released(id: older.id, attempt: older.attempts)], owner: "node-b")
        let back = try #require(try deliveries.delivery(id: older.id))
        #expect(back.state == .pending && back.attempts == 0 && back.firstAttemptTime == nil)
        #expect(back.lastError == nil && back.executions == 0)
    }

    @Test("a claim counts as elsewhere only other owners' running deliveries; the concurrency limit still counts all of them")
    func claimCountsOthersOnly() async throws {
        let app = try await TestRuntime(units: ["DeliveryUnit"])
        let deliveries = app.runtime.deliveries
        let now = app.clock.now()
        let lease = now + .seconds(60)
        try await deliveries.add((0..<5).map { TaskEnqueue(queue: "capped", id: "c\($0)", data: [:], scheduleTime: now).delivery })
        // node-a runs two (one of them may have finished, its outcome not yet recorded: still a running row).
        let a = try await deliveries.claim([.init(function: "capped", limit: 2, concurrency: 3)], now: now, owner: "node-a") { _ in lease }
        #expect(a.deliveries.count == 2)
        #expect(a.runningElsewhere["capped"] == 0)
        let again = try await deliveries.claim([.init(function: "capped", limit: 5, concurrency: 3)], now: now, owner: "node-a") { _ in lease }
        #expect(again.deliveries.count == 1, "three at most across processes: two were running")
        #expect(again.runningElsewhere["capped"] == 0, "node-a's own rows are never another process's")
        let b = try await deliveries.claim([.init(function: "capped", limit: 5, concurrency: 4)], now: now, owner: "node-b") { _ in lease }
        #expect(b.deliveries.count == 1)
        #expect(b.runningElsewhere["capped"] == 3, "node-a's three")
        let c = try await deliveries.claim([.init(function: "capped", limit: 5, concurrency: 4)], now: now, owner: "node-a") { _ in lease }
        #expect(c.deliveries.isEmpty)
        #expect(c.runningElsewhere["capped"] == 1, "node-b's one")
    }

    @Test("user-trigger cursors live apart from the change feed's, so they never hold back pruning")
    func userCursorsDoNotBlockPruning() async throws {
        let app = try await TestRuntime(units: ["DeliveryUnit"])
        let feedCursors = try await app.runtime.store.engine.cursors()
        #expect(!feedCursors.keys.contains { $0.hasPrefix("user-trigger:") })
        #expect(try app.runtime.deliveries.userEventCursors().keys.sorted() == ["user-trigger:purge", "user-trigger:welcome"])
        try await app.write(["items/p": ["n": 1]])
        try await app.createUser(NewUser(uid: "prune"))
        await app.settle()
        await app.advance(by: .seconds(7200))
        let pruned = try await app.runtime.store.engine.pruneChanges(committedBefore: app.clock.now())
        #expect(pruned > 0, "every change was consumed by every feed cursor")
    }

    @Test("the engine prunes routed changes and user events past the retention, in batches, never one a cursor has not passed")
    func feedsPrunedByRetention() async throws {
        let app = try await TestRuntime(units: ["DeliveryUnit"], configure: { $0.store.changeRetentionHours = 24 })
        let engine = app.runtime.store.engine
        func changeCount() async throws -> Int { try await engine.changes(after: 0, limit: 1_000_000).count }
        for n in 1...5 { try await app.write(["items/p": ["n": .int(Int64(n))]]) }
        await app.settle()
        let total = try await changeCount()
        #expect(total > 5, "the writes and what their triggers wrote")
        // A consumer that has routed only the first two changes.
        try await engine.setCursor("trigger:laggard", to: 2)
        await app.advance(by: .seconds(25 * 3600))
        let left = try await engine.changes(after: 0, limit: 1_000_000)
        #expect(left.first?.sequence == 3, "everything the laggard has not read is kept")
        #expect(Set(left.map(\.sequence)).isSuperset(of: 3...Int64(total)))
        try await engine.removeCursor("trigger:laggard")
        await app.advance(by: .seconds(3600))
        let cutoff = app.clock.now() - .seconds(24 * 3600)
        let kept = try await engine.changes(after: 0, limit: 1_000_000)
        #expect(kept.allSatisfy { $0.commitTime >= cutoff }, "routed by every cursor and older than a day: gone")
        #expect(kept.allSatisfy { $0.sequence > Int64(total) })
        #expect(!kept.isEmpty, "the schedule's recent writes stay")
        // Sequences go on from the high-water mark, and triggers still see new changes.
        let last = engine.lastSequence
        try await app.write(["items/q": ["n": 9]])
        await app.settle()
        #expect(try await engine.changes(after: last, limit: 1).first?.path.description == "items/q")
        #expect(try await app.document("orderLog/q")?.fields["seen"] == [9])
    }

    @Test("user events past the retention are pruned once routed, keeping the newest as the log's high-water mark")
    func userEventsPruned() async throws {
        let app = try await TestRuntime(units: ["DeliveryUnit"], configure: { $0.store.changeRetentionHours = 1 })
        for uid in ["a", "b", "c"] { try await app.createUser(NewUser(uid: uid)) }
        try await app.deleteUser("a")
        await app.settle()
        await app.advance(by: .seconds(7200))
        let users = UserTable(engine: app.runtime.store.engine as! SQLiteEngine)
        let events = try users.events(after: 0, limit: 100)
        #expect(events.map(\.sequence) == [4])
        try await app.deleteUser("b")
        await app.settle()
        #expect(try users.events(after: 0, limit: 100).map(\.sequence) == [4, 5])
        #expect(try await app.document("runs/purge-user-5")?.fields["count"] == 1)
    }

    @Test("a dead task's id can be reused once the dedupe window has passed")
    func deadTaskIDReuse() async throws {
        let app = try await TestRuntime(units: ["DeliveryUnit"])
        try await app.enqueue("work", ["failUntil": 9], id: "again")
        await app.advance(by: .seconds(60))
        #expect(try app.deliveries(function: "work", state: .dead).count == 1)
        await #expect(throws: HTTPSError.self) { try await app.enqueue("work", [:], id: "again") }
        await app.advance(by: .seconds(86_400))
        try await app.enqueue("work", ["label": "second life"], id: "again")
        #expect(try app.deliveries(function: "work").map(\.state) == [.pending])
        await app.settle()
        #expect(try await app.document("runs/work-again")?.fields["label"] == "second life")
    }

    @Test("after long downtime the latest missed instant is found without stepping through every one")
    func latestInstantAfterDowntime() throws {
        let schedule = try Schedule("* * * * *")
        let first = Timestamp(rfc3339: "2026-01-01T00:01:00Z")!
        let now = Timestamp(rfc3339: "2026-03-15T12:34:56Z")!
        #expect(schedule.latestFire(from: first, upTo: now) == Timestamp(rfc3339: "2026-03-15T12:34:00Z")!)
        let daily = try Schedule("every day 09:00", timeZone: "Asia/Seoul")
        #expect(daily.latestFire(from: Timestamp(rfc3339: "2026-01-01T00:00:00Z")!, upTo: now)
                == Timestamp(rfc3339: "2026-03-15T00:00:00Z")!)
        #expect(daily.latestFire(from: first, upTo: first) == first)
    }
    @Test("outcomes that fail to be recorded (another process holds the write lock past the busy timeout) are recorded once it lets go, not left running until the lease ends", .timeLimit(.minutes(2)))
    func outcomeRecordedAfterLockContention() async throws {
        let app = try await TestRuntime(units: ["DeliveryUnit"])
        // hang sleeps an hour on the host clock: its attempt ends at its 60 s timeout, with no
        // retry (a dead letter). That is the outcome to record.
        try await app.write(["hang/a": ["n": 1]])
        await app.settle()
        #expect(try app.deliveries(function: "hang").map(\.state) == [.running])

        // Another process on the data directory takes SQLite's write lock and keeps it past the
        // store's 5 s busy timeout: recording the outcome fails.
        let other = try Connection(path: app.directory + "/store.sqlite", options: Connection.Options())
        try other.execute("BEGIN IMMEDIATE")
        await app.advance(by: .seconds(61))
        #expect(try app.deliveries(function: "hang").map(\.state) == [.running], "not recorded while the lock is held")
        try other.execute("ROLLBACK")

        // Recorded at the next try, a second later: as the attempt ended, not as a process death
        // when the lease runs out half an hour on.
        await app.advance(by: .seconds(2))
        let hang = try app.deliveries(function: "hang")
        #expect(hang.map(\.state) == [.dead])
        #expect(hang.first?.lastError?.hasPrefix("deadline-exceeded") == true, "\(hang.first?.lastError ?? "no error")")
        #expect(hang.first?.attempts == 1)
    }

    @Test("a new table that turns a document trigger into a user trigger drops the old kind's feed cursor and gives it one of the new kind; its old documents no longer reach it")
    func kindChangeDropsOldCursor() async throws {
        let app = try await TestRuntime(units: ["DeliveryUnit"])
        #expect(try await app.runtime.store.engine.cursors()["trigger:recordWrite"] != nil)
        let table = app.runtime.table
        let entries = table.entries.map { entry in
            entry.name == "recordWrite" ? FunctionEntry(spec: FunctionSpec(name: entry.name, trigger: .user(.created), options: entry.spec.options), unit: entry.unit) : entry
        }
        try await app.runtime.engine.update(table: FunctionTable(entries: entries))
        #expect(try await app.runtime.store.engine.cursors()["trigger:recordWrite"] == nil, "the document cursor no longer holds back pruning")
        #expect(try app.runtime.deliveries.userEventCursors()["user-trigger:recordWrite"] != nil)
        // Changes to its old documents no longer reach it.
        try await app.write(["items/after": ["n": 1]])
        await app.settle()
        #expect(try app.deliveries(function: "recordWrite").isEmpty)
        #expect(try await app.documents(in: "runs").isEmpty)
    }

    @Test("a new table without several triggers drops all their feed cursors, and none of the others'")
    func removedTriggersDropCursors() async throws {
        let app = try await TestRuntime(units: ["DeliveryUnit"])
        let before = try await app.runtime.store.engine.cursors()
        #expect(before["trigger:recordWrite"] != nil && before["trigger:orderedRetry"] != nil && before["trigger:flaky"] != nil)
        let gone: Set<String> = ["recordWrite", "orderedRetry"]
        try await app.runtime.engine.update(table: FunctionTable(entries: app.runtime.table.entries.filter { !gone.contains($0.name) }))
        let after = try await app.runtime.store.engine.cursors()
        #expect(after["trigger:recordWrite"] == nil && after["trigger:orderedRetry"] == nil)
        #expect(Set(after.keys) == Set(before.keys).subtracting(["trigger:recordWrite", "trigger:orderedRetry"]))
    }

    @Test("a delivery whose process died during its last allowed attempt is dead-lettered on recovery, not run again")
    func diedDuringAttempt() async throws {
        let dir = NSTemporaryDirectory() + "hearth-died-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: dir) }
        do {
            let first = try await TestRuntime(units: ["DeliveryUnit"], configure: { $0.dataDirectory = dir })
            try await first.write(["hang/a": ["n": 1]])
            try await first.enqueue("slow", ["sleep": 30], id: "held")
            await first.settle()
            #expect(try first.deliveries().map(\.state) == [.running, .running])
            first.runtime.close()  // the process "dies" with both attempts running
        }
        let second = try await TestRuntime(units: ["DeliveryUnit"], configure: { $0.dataDirectory = dir })
        // hang: no retries, so its one attempt is used up; slow (a task queue): 3 attempts, two left.
        let dead = try second.deliveries(function: "hang")
        #expect(dead.map(\.state) == [.dead])
        #expect(dead.first?.lastError == "internal: process died during attempt 1")
        #expect(dead.first?.attempts == 1)
        let task = try #require(try second.deliveries(function: "slow").first)
        #expect(task.state == .pending && task.attempts == 1)
        await second.advance(by: .seconds(30))
        #expect(try await second.document("runs/slow-held")?.fields["count"] == 1)
        #expect(try second.deliveries(function: "hang").map(\.state) == [.dead], "never run again")
    }
}

