import HearthModel
import Synchronization

/// The delivery queue in the SQLite database: deliveries, reserved task ids, schedule state and
/// the feed cursors of trigger functions. Every change goes through the store's single writer, so
/// claims, completions and enqueues are atomic; a claim is a lease in the database, so two
/// processes sharing the file never run one delivery at once.
final class SQLiteDeliveries: DeliveryStorage {
    let writer: Writer
    let readers: ReaderPool
    /// Notified after the database gains deliveries (from this process).
    let activity: WorkSignal

    init(writer: Writer, readers: ReaderPool, activity: WorkSignal) {
        self.writer = writer
        self.readers = readers
        self.activity = activity
    }

    /// SQL for a delivery's state, from its named case.
    static let pending = DeliveryState.pending.rawValue, running = DeliveryState.running.rawValue, dead = DeliveryState.dead.rawValue

    // MARK: adding

    /// Queues deliveries (those already queued, by function and event id, are skipped). Returns how
    /// many were new.
    @discardableResult
    func add(_ deliveries: [NewDelivery]) async throws -> Int {
        guard !deliveries.isEmpty else { return 0 }
        let now = RowEncoding.micros(writer.clock.now())
        let payloads = deliveries.map { $0.event.wireBytes }
        let added = try await writer.withTransaction { db -> Int in
            var added = 0
            for (d, payload) in zip(deliveries, payloads) {
                added += try SQLiteDeliveries.insert(db, d, payload: payload, createTime: now, ifNew: true) ? 1 : 0
            }
            return added
        }
        if added > 0 { activity.notify(Set(deliveries.map(\.function))) }
        return added
    }

    /// Queues deliveries routed from a feed and moves the routing functions' cursors, in one
    /// transaction and compare-and-set against the stored cursors: several processes may route the
    /// same feed (two servers, or a server and a CLI command on one data directory), and a change
    /// one of them already routed (at or below the stored cursor) is skipped, so it is never queued
    /// twice, nor again after its delivery ran and was deleted. A cursor never moves back.
    ///
    /// With `claiming`, a delivery of a function listed there is inserted already running under the
    /// claim's lease (its first attempt counted) while the function has room, in this process and
    /// across processes, nothing of it is pending and due, and no earlier delivery of its ordering
    /// key is pending or running: what `claim` checks, in the same transaction. The rest are
    /// inserted pending, for a claim.
    func route(_ routes: [FeedRoute], claiming: RouteClaim?) async throws -> RouteResult {
        try await route(routes, claiming: claiming, completing: [], owner: claiming?.owner ?? "")
    }

    /// Under write+trigger the engine has outcomes to record at nearly every pass: in the routing
    /// transaction they cost no BEGIN and COMMIT of their own, and the deliveries' pages their
    /// deletes and the routing's inserts change are written to the WAL once.
    func route(_ routes: [FeedRoute], claiming: RouteClaim?, completing outcomes: [DeliveryOutcome], owner: String) async throws -> RouteResult {
        guard !routes.isEmpty else {
            try await complete(outcomes, owner: owner)
            return RouteResult()
        }
        let now = RowEncoding.micros(writer.clock.now())
        // Encoded here, on the caller's thread: the writer's thread is the one every commit waits for.
        // Closures, not key paths: a key path through the computed `wireBytes` was projected at run
        // time (`KeyPath._projectReadOnly`, copying each delivery and event on the way), 5% of
        // the delivery engine's samples under write+trigger.
        let payloads = routes.map { route in route.deliveries.map { $0.delivery.event.wireBytes } }
        let result = try await writer.withTransaction { db -> RouteResult in
            try SQLiteDeliveries.record(outcomes, owner: owner, in: db)
            var result = RouteResult()
            var room: [String: Int] = [:]
            for (route, routePayloads) in zip(routes, payloads) {
                let table = route.feed.cursorTable
                let stored = try db.scalarInt("SELECT cursor FROM \(table) WHERE name = ?", [.text(route.cursor)])
                for ((sequence, delivery), payload) in zip(route.deliveries, routePayloads) where sequence > (stored ?? Int64.min) {
                    if let claim = claiming, let limits = claim.functions[delivery.function] {
                        if room[delivery.function] == nil {
                            room[delivery.function] = try SQLiteDeliveries.routingRoom(db, delivery.function, claim, limits, &result)
                        }
                        if room[delivery.function, default: 0] > 0, try !SQLiteDeliveries.hasEarlier(db, delivery) {
                            guard let claimed = try SQLiteDeliveries.insertClaimed(db, delivery, payload: payload, createTime: now, owner: claim.owner,
                                                                                   now: claim.now, leaseUntil: limits.leaseUntil) else { continue }
                            room[delivery.function, default: 0] -= 1
                            result.claimed.append((claimed, delivery.event))
                            continue
                        }
                    }
                    if try SQLiteDeliveries.insert(db, delivery, payload: payload, createTime: now, ifNew: true) { result.added.append(delivery) }
                }
                let position = max(stored ?? route.through, route.through)
                if position != stored { try SQLiteDeliveries.setCursor(db, table, route.cursor, position, now: now) }
                result.cursors[route.cursor] = position
            }
            return result
        }
        if !result.added.isEmpty { activity.notify(Set(result.added.map(\.function))) }
        return result
    }

    /// How many deliveries of `function` routing may claim: none while one is pending and due (a
    /// claim takes those first, oldest due first, whichever process queued them), else its room
    /// here and under its concurrency across processes. Notes how many other processes run.
    static func routingRoom(_ db: Connection, _ function: String, _ claim: RouteClaim,
                            _ limits: (limit: Int, concurrency: Int, leaseUntil: Timestamp), _ result: inout RouteResult) throws -> Int {
        let (running, elsewhere) = try runningCounts(db, function, owner: claim.owner)
        result.runningElsewhere[function] = elsewhere
        let waiting = try db.scalarInt("SELECT 1 FROM deliveries WHERE function = ? AND state = \(Self.pending) AND due_time <= ? LIMIT 1",
                                       [.text(function), .integer(RowEncoding.micros(claim.now))]) != nil
        return waiting ? 0 : min(limits.limit, max(0, limits.concurrency - running))
    }

    /// How many deliveries of `function` run, in all processes and in processes other than
    /// `owner`. The second is what a node takes off its own room: its own are in its lanes, which
    /// also know the ones that finished and whose outcome is not recorded yet (still running here).
    static func runningCounts(_ db: Connection, _ function: String, owner: String) throws -> (all: Int, elsewhere: Int) {
        try db.query("""
            SELECT count(*), coalesce(sum(lease_owner IS NOT ?), 0) FROM deliveries WHERE function = ? AND state = \(Self.running)
            """, [.text(owner), .text(function)]) { (Int($0.int64(0)), Int($0.int64(1))) }.first ?? (0, 0)
    }

    /// Whether a delivery of the same function and ordering key is pending or running (a new one
    /// waits its turn behind it).
    private static let earlierSQL =
        "SELECT 1 FROM deliveries WHERE function = ? AND ordering_key = ? AND state IN (\(pending), \(running)) LIMIT 1"

    static func hasEarlier(_ db: Connection, _ d: NewDelivery) throws -> Bool {
        guard let key = d.orderingKey else { return false }
        return try db.scalarInt(earlierSQL, [.text(d.function), .text(key)]) != nil
    }

    /// Inserts one delivery already claimed: running under `owner`'s lease, its first attempt
    /// counted. Nil when it was already queued (same function and event id): that row is left alone.
    /// `payload` is `d.event.wireBytes`, encoded before the transaction.
    static func insertClaimed(_ db: Connection, _ d: NewDelivery, payload: [UInt8], createTime: Int64, owner: String, now: Timestamp,
                              leaseUntil: Timestamp) throws -> Delivery? {
        guard try insertRow(db, d, payload: payload, createTime: createTime, ifNew: true, lease: (owner, now, leaseUntil)) else { return nil }
        return Delivery(id: db.lastInsertRowID, function: d.function, eventID: d.eventID, orderingKey: d.orderingKey, payload: payload,
                        attempts: 1, firstAttemptTime: now, dueTime: d.dueTime, state: .running, lastError: nil, lastStatus: nil,
                        dispatchDeadline: d.dispatchDeadline, createTime: RowEncoding.time(createTime), executions: 0)
    }

    /// Adds tasks to their queues in one transaction (all or none). A task id used in its queue
    /// within the dedupe window, or still queued, is `already-exists`.
    func enqueue(_ tasks: [TaskEnqueue]) async throws {
        guard !tasks.isEmpty else { return }
        let now = writer.clock.now()
        // Encoded here, on the caller's thread, as `route` and `add` do (a schedule's fan-out
        // enqueues thousands at a time).
        let payloads = tasks.map { $0.delivery.event.wireBytes }
        try await writer.withTransaction { db in
            for (task, payload) in zip(tasks, payloads) { try SQLiteDeliveries.insertTask(db, task, payload: payload, now: now) }
        }
        activity.notify(Set(tasks.map(\.queue)))
    }

    /// The insert behind every enqueue, also run inside document commits (so a task enqueued in a
    /// transaction or batch commits with its writes or not at all). `payload` is
    /// `task.delivery.event.wireBytes`.
    static func insertTask(_ db: Connection, _ task: TaskEnqueue, payload: [UInt8], now: Timestamp) throws {
        let window = RowEncoding.micros(now - task.dedupeWindow)
        if let previous = try db.scalarInt("SELECT enqueue_time FROM task_ids WHERE queue = ? AND id = ?", [.text(task.queue), .text(task.id)]),
           previous > window {
            throw HTTPSError(.alreadyExists, "a task with id '\(task.id)' was already enqueued in queue '\(task.queue)' (ids are reserved for \(Int(task.dedupeWindow.secondsDouble)) s)")
        }
        if let state = try db.scalarInt("SELECT state FROM deliveries WHERE function = ? AND event_id = ?", [.text(task.queue), .text(task.id)]) {
            // Past the window a dead letter no longer holds its id: the new task replaces it.
            guard state == DeliveryState.dead.rawValue else {
                throw HTTPSError(.alreadyExists, "a task with id '\(task.id)' is still queued in '\(task.queue)'")
            }
            try db.run("DELETE FROM deliveries WHERE function = ? AND event_id = ? AND state = \(Self.dead)", [.text(task.queue), .text(task.id)])
        }
        try db.run("INSERT OR REPLACE INTO task_ids(queue, id, enqueue_time) VALUES (?, ?, ?)",
                   [.text(task.queue), .text(task.id), .integer(RowEncoding.micros(now))])
        _ = try insert(db, task.delivery, payload: payload, createTime: RowEncoding.micros(now), ifNew: false)
    }

    /// Inserts one delivery row; with `ifNew`, one already queued (same function and event id) is
    /// left alone and false is returned. `payload` is `d.event.wireBytes`: where the callers can,
    /// they encode it before their transaction, off the writer's thread.
    static func insert(_ db: Connection, _ d: NewDelivery, payload: [UInt8], createTime: Int64, ifNew: Bool) throws -> Bool {
        try insertRow(db, d, payload: payload, createTime: createTime, ifNew: ifNew, lease: nil)
    }

    /// The row insert behind `insert` and `insertClaimed`: pending, or with `lease` running under
    /// it with its first attempt counted.
    private static func insertRow(_ db: Connection, _ d: NewDelivery, payload: [UInt8], createTime: Int64, ifNew: Bool,
                                  lease: (owner: String, now: Timestamp, until: Timestamp)?) throws -> Bool {
        var values: [SQLiteValue] = [.text(d.function), .text(d.eventID), d.orderingKey.map { .text($0) } ?? .null, .blob(payload),
                                     .integer(RowEncoding.micros(d.dueTime)), d.dispatchDeadline.map { .real($0.secondsDouble) } ?? .null,
                                     .integer(createTime)]
        if let lease {
            values += [.integer(Self.running), .integer(1), .integer(RowEncoding.micros(lease.now)), .text(lease.owner),
                       .integer(RowEncoding.micros(lease.until))]
        }
        try db.run(lease == nil ? (ifNew ? InsertSQL.newPending : InsertSQL.pending) : (ifNew ? InsertSQL.newLeased : InsertSQL.leased), values)
        return db.changes > 0
    }

    /// `insertRow`'s statements, built once (every routed delivery runs one): a pending row or one
    /// under a lease, and each with `OR IGNORE` for `ifNew`. The placeholders follow the columns.
    private enum InsertSQL {
        static let columns = ["function", "event_id", "ordering_key", "payload", "due_time", "dispatch_deadline", "create_time"]
        static let leaseColumns = ["state", "attempts", "first_attempt_time", "lease_owner", "lease_until"]
        static func sql(_ columns: [String], ignoring: Bool) -> String {
            "INSERT \(ignoring ? "OR IGNORE " : "")INTO deliveries(\(columns.joined(separator: ", "))) VALUES (\(Array(repeating: "?", count: columns.count).joined(separator: ", ")))"
        }
        static let pending = sql(columns, ignoring: false), newPending = sql(columns, ignoring: true)
        static let leased = sql(columns + leaseColumns, ignoring: false), newLeased = sql(columns + leaseColumns, ignoring: true)
    }

    /// Removes a task that has not started yet; false when the queue has no such pending task.
    func deleteTask(queue: String, id: String) async throws -> Bool {
        try await writer.withTransaction { db in
            try db.run("DELETE FROM deliveries WHERE function = ? AND event_id = ? AND state = \(Self.pending)", [.text(queue), .text(id)])
            return db.changes > 0
        }
    }

    /// Deletes user events logged before `cutoff` that every user trigger has routed, at most
    /// `limit`, oldest first; returns how many. The newest event always stays: its sequence is the
    /// log's high-water mark, so sequences are never handed out twice.
    @discardableResult
    func pruneUserEvents(loggedBefore cutoff: Timestamp, limit: Int) async throws -> Int {
        try await writer.withTransaction { db in
            guard let last = try db.scalarInt("SELECT max(seq) FROM user_events"),
                  let first = try db.scalarInt("SELECT seq FROM user_events ORDER BY seq LIMIT 1") else { return 0 }
            let floor = try db.scalarInt("SELECT min(cursor) FROM user_event_cursors") ?? Int64.max
            let batchEnd = first.saturatingAdd(Int64(clamping: max(1, limit)) - 1)
            try db.run("DELETE FROM user_events WHERE seq < ? AND seq <= ? AND seq <= ? AND time < ?",
                       [.integer(last), .integer(floor), .integer(batchEnd), .integer(RowEncoding.micros(cutoff))])
            return db.changes
        }
    }

    /// Forgets task ids reserved before `cutoff`; returns how many.
    @discardableResult
    func pruneTaskIDs(enqueuedBefore cutoff: Timestamp) async throws -> Int {
        try await writer.withTransaction { db in
            try db.run("DELETE FROM task_ids WHERE enqueue_time < ?", [.integer(RowEncoding.micros(cutoff))])
            return db.changes
        }
    }

    // MARK: claiming and completing

    /// Claims due deliveries (never one whose ordering key has an earlier delivery pending or
    /// running), marking them running under a lease held by `owner` until `leaseUntil`, and counting
    /// the attempt. Oldest due first. Limits hold across processes: running deliveries are counted
    /// in the database and token buckets live there, all inside the claim's transaction.
    func claim(_ requests: [ClaimRequest], now: Timestamp, owner: String,
               leaseUntil: (String) -> Timestamp) async throws -> Claim {
        let wanted = requests.filter { $0.limit > 0 }
        guard !wanted.isEmpty else { return Claim() }
        let nowMicros = RowEncoding.micros(now)
        let leases = Dictionary(wanted.map { ($0.function, RowEncoding.micros(leaseUntil($0.function))) }, uniquingKeysWith: { a, _ in a })
        return try await writer.withTransaction { db in
            var result = Claim()
            for request in wanted {
                let function = request.function
                var limit = request.limit
                let (running, elsewhere) = try Self.runningCounts(db, function, owner: owner)
                result.runningElsewhere[function] = elsewhere
                if let concurrency = request.concurrency { limit = min(limit, max(0, concurrency - running)) }
                var tokens: Double?
                if let rate = request.rate {
                    let bucket = try db.query("SELECT tokens, refilled FROM dispatch_buckets WHERE function = ?", [.text(function)]) { ($0.double(0), $0.int64(1)) }.first
                    var available = request.burst
                    if let (stored, refilled) = bucket {
                        let elapsed = Double(max(0, nowMicros - refilled)) / 1e6
                        available = min(request.burst, stored + elapsed * rate)
                    }
                    limit = min(limit, Int(min(available + 1e-9, 1e12).rounded(.down)))
                    tokens = available
                }
                var claimed = 0
                if limit > 0 {
                    let rows = try db.query("""
                        SELECT \(SQLiteDeliveries.columns) FROM deliveries AS d
                        WHERE d.function = ? AND d.state = \(Self.pending) AND d.due_time <= ?
                          AND (d.ordering_key IS NULL OR NOT EXISTS (
                              SELECT 1 FROM deliveries AS e
                              WHERE e.function = d.function AND e.ordering_key = d.ordering_key AND e.id < d.id AND e.state IN (\(Self.pending), \(Self.running))))
                        ORDER BY d.due_time, d.id LIMIT ?
                        """, [.text(function), .integer(nowMicros), .integer(Int64(limit))], SQLiteDeliveries.row)
                    for var d in rows {
                        d.attempts += 1
                        d.firstAttemptTime = d.firstAttemptTime ?? now
                        d.state = .running
                        try db.run("""
                            UPDATE deliveries SET state = \(Self.running), attempts = ?, first_attempt_time = ?, lease_owner = ?, lease_until = ? WHERE id = ?
                            """, [.integer(Int64(d.attempts)), .integer(RowEncoding.micros(d.firstAttemptTime!)), .text(owner),
                                  .integer(leases[function]!), .integer(d.id)])
                        result.deliveries.append(d)
                    }
                    claimed = rows.count
                }
                if let available = tokens {
                    let left = max(0, available - Double(claimed))
                    result.tokens[function] = left
                    // Nothing taken, nothing to write: refilling is linear and capped, so the stored
                    // state reads the same later (and other processes see no commit to catch up on).
                    guard claimed > 0 else { continue }
                    try db.run("INSERT INTO dispatch_buckets(function, tokens, refilled) VALUES (?, ?, ?) ON CONFLICT(function) DO UPDATE SET tokens = excluded.tokens, refilled = excluded.refilled",
                               [.text(function), .real(left), .integer(nowMicros)])
                }
            }
            return result
        }
    }

    /// Records what became of attempts made under `owner`'s lease, in one transaction. An outcome
    /// for a delivery no longer running that attempt under that lease (dropped, or taken over after
    /// the lease ended) changes nothing.
    func complete(_ outcomes: [DeliveryOutcome], owner: String) async throws {
        guard !outcomes.isEmpty else { return }
        try await writer.withTransaction { db in try SQLiteDeliveries.record(outcomes, owner: owner, in: db) }
    }

    /// `complete`'s writes, inside a transaction the caller holds.
    static func record(_ outcomes: [DeliveryOutcome], owner: String, in db: Connection) throws {
        for outcome in outcomes {
            switch outcome {
            case .succeeded(let id, let attempt):
                try db.run(OutcomeSQL.succeeded, [.integer(id), .text(owner), .integer(Int64(attempt))])
            case .retry(let id, let attempt, let due, let error, let status):
                try db.run(OutcomeSQL.retry, [.integer(RowEncoding.micros(due)), .text(error), .integer(Int64(status)), .integer(Self.executed(status)),
                                              .integer(id), .text(owner), .integer(Int64(attempt))])
            case .dead(let id, let attempt, let error, let status):
                try db.run(OutcomeSQL.dead, [.text(error), .integer(Int64(status)), .integer(Self.executed(status)), .integer(id), .text(owner), .integer(Int64(attempt))])
            case .released(let id, let attempt):
                try db.run(OutcomeSQL.released, [.integer(id), .text(owner), .integer(Int64(attempt))])
            }
        }
    }

    /// `complete`'s statements, built once (a succeeded delivery runs one each): each changes only
    /// the row still running the attempt under the owner's lease.
    private enum OutcomeSQL {
        static let mine = "id = ? AND state = \(SQLiteDeliveries.running) AND lease_owner = ? AND attempts = ?"
        static let succeeded = "DELETE FROM deliveries WHERE \(mine)"
        static let retry = """
            UPDATE deliveries SET state = \(SQLiteDeliveries.pending), due_time = ?, last_error = ?, last_status = ?, lease_owner = NULL, lease_until = NULL,
                executions = executions + ?
            WHERE \(mine)
            """
        static let dead = """
            UPDATE deliveries SET state = \(SQLiteDeliveries.dead), last_error = ?, last_status = ?, lease_owner = NULL, lease_until = NULL,
                executions = executions + ?
            WHERE \(mine)
            """
        static let released = """
            UPDATE deliveries SET state = \(SQLiteDeliveries.pending), attempts = attempts - 1, lease_owner = NULL, lease_until = NULL,
                first_attempt_time = CASE WHEN attempts = 1 THEN NULL ELSE first_attempt_time END
            WHERE \(mine)
            """
    }

    /// Whether a failed attempt with this status counts as an execution (Cloud Tasks leaves out 5xx).
    static func executed(_ status: Int) -> Int64 { status < 500 ? 1 : 0 }

    /// Makes running deliveries pending again: those leased by `owner` (this node, restarted) and
    /// those whose lease ended before `now` (their runner died). The attempt that was running when
    /// its process died counts: a delivery whose function's `policy` allows no attempt after it is
    /// dead-lettered instead ("process died during attempt N"), so a handler that kills its process
    /// is not run again forever. Functions `policy` does not know (nil) are made pending.
    @discardableResult
    func recoverLeases(owner: String?, now: Timestamp, policy: @Sendable (String) -> RetryPolicy?) async throws -> (pending: Int, dead: Int) {
        try await writer.withTransaction { db in
            let rows = try db.query("""
                SELECT id, function, attempts, first_attempt_time FROM deliveries
                WHERE state = \(Self.running) AND (lease_until <= ? OR lease_owner = ?)
                """, [.integer(RowEncoding.micros(now)), owner.map { .text($0) } ?? .null]) { s in
                (s.int64(0), s.text(1), Int(s.int64(2)), s.isNull(3) ? now : RowEncoding.time(s.int64(3)))
            }
            var recovered = (pending: 0, dead: 0)
            for (id, function, attempts, first) in rows {
                if let retry = policy(function), !retry.allowsRetry(afterAttempts: attempts, firstAttempt: first, next: now) {
                    try db.run("""
                        UPDATE deliveries SET state = \(Self.dead), last_error = ?, last_status = 500, lease_owner = NULL, lease_until = NULL WHERE id = ?
                        """, [.text(DeliveryErrors.died(attempt: attempts)), .integer(id)])
                    recovered.dead += 1
                } else {
                    try db.run("UPDATE deliveries SET state = \(Self.pending), lease_owner = NULL, lease_until = NULL WHERE id = ?", [.integer(id)])
                    recovered.pending += 1
                }
            }
            return recovered
        }
    }

    // MARK: reading

    /// When a function's earliest claimable delivery is due: a pending one with no earlier pending or
    /// running delivery of its ordering key (those wait their turn). Nil when none is pending.
    func nextClaimableDue(function: String) throws -> Timestamp? {
        try readers.withReader { db in
            try db.query("""
                SELECT d.due_time FROM deliveries AS d
                WHERE d.function = ? AND d.state = \(Self.pending)
                  AND (d.ordering_key IS NULL OR NOT EXISTS (
                      SELECT 1 FROM deliveries AS e
                      WHERE e.function = d.function AND e.ordering_key = d.ordering_key AND e.id < d.id AND e.state IN (\(Self.pending), \(Self.running))))
                ORDER BY d.due_time LIMIT 1
                """, [.text(function)]) { RowEncoding.time($0.int64(0)) }.first
        }
    }

    private static let leaseEndSQL = "SELECT min(lease_until) FROM deliveries WHERE state = \(running)"

    /// The earliest end of a lease among running deliveries.
    func nextLeaseEnd() throws -> Timestamp? {
        try readers.withReader { db in
            try db.scalarInt(SQLiteDeliveries.leaseEndSQL).map(RowEncoding.time)
        }
    }

    func delivery(id: Int64) throws -> Delivery? {
        try readers.withReader { db in
            try db.query("SELECT \(SQLiteDeliveries.columns) FROM deliveries AS d WHERE d.id = ?", [.integer(id)], SQLiteDeliveries.row).first
        }
    }

    /// Deliveries, oldest first, optionally only one function's and only one state's.
    func list(function: String?, state: DeliveryState?, limit: Int) throws -> [Delivery] {
        var conditions: [String] = []
        var values: [SQLiteValue] = []
        if let function { conditions.append("d.function = ?"); values.append(.text(function)) }
        if let state { conditions.append("d.state = ?"); values.append(.integer(state.rawValue)) }
        let whereClause = conditions.isEmpty ? "" : "WHERE " + conditions.joined(separator: " AND ")
        values.append(.integer(Int64(limit)))
        return try readers.withReader { db in
            try db.query("SELECT \(SQLiteDeliveries.columns) FROM deliveries AS d \(whereClause) ORDER BY d.id LIMIT ?", values, SQLiteDeliveries.row)
        }
    }

    /// Counts by function and state, and each function's oldest pending due time.
    func counts() throws -> [String: DeliveryCounts] {
        try readers.withReader { db in
            var out: [String: DeliveryCounts] = [:]
            let rows = try db.query("SELECT function, state, count(*), min(due_time) FROM deliveries GROUP BY function, state") {
                ($0.text(0), $0.int64(1), Int($0.int64(2)), $0.int64(3))
            }
            for (function, state, count, due) in rows {
                var c = out[function] ?? DeliveryCounts()
                switch DeliveryState(rawValue: state) {
                case .pending?:
                    c.pending = count
                    c.oldestPendingDue = RowEncoding.time(due)
                case .running?: c.running = count
                case .dead?: c.dead = count
                case nil: break
                }
                out[function] = c
            }
            return out
        }
    }

    // MARK: dead letters

    /// Makes a dead delivery pending again, due at `now`, with its attempts reset. False when there
    /// is no dead delivery with that id.
    func retryDead(id: Int64, now: Timestamp) async throws -> Bool {
        let done = try await writer.withTransaction { db in
            try db.run("""
                UPDATE deliveries SET state = \(Self.pending), attempts = 0, executions = 0, first_attempt_time = NULL, due_time = ? WHERE id = ? AND state = \(Self.dead)
                """, [.integer(RowEncoding.micros(now)), .integer(id)])
            return db.changes > 0
        }
        if done { activity.notify(nil) }
        return done
    }

    /// Deletes a delivery that is not running; false when there is none with that id (or it is running).
    func drop(id: Int64) async throws -> Bool {
        try await writer.withTransaction { db in
            try db.run("DELETE FROM deliveries WHERE id = ? AND state != \(Self.running)", [.integer(id)])
            return db.changes > 0
        }
    }

    // MARK: schedules

    /// A schedule's last firing instant, if it ever fired or was registered.
    func lastFire(schedule function: String) throws -> Timestamp? {
        try readers.withReader { db in
            try db.scalarInt("SELECT last_fire FROM schedules WHERE function = ?", [.text(function)]).map(RowEncoding.time)
        }
    }

    func lastFires() throws -> [String: Timestamp] {
        try readers.withReader { db in
            let rows = try db.query("SELECT function, last_fire FROM schedules") { ($0.text(0), RowEncoding.time($0.int64(1))) }
            return Dictionary(rows, uniquingKeysWith: { a, _ in a })
        }
    }

    /// Records `instant` as a schedule's last firing without queueing anything (a new schedule
    /// starts from now), unless it already has a later one.
    func registerSchedule(_ function: String, at instant: Timestamp) async throws {
        _ = try await writer.withTransaction { db in
            try db.run("INSERT INTO schedules(function, last_fire) VALUES (?, ?) ON CONFLICT(function) DO NOTHING",
                       [.text(function), .integer(RowEncoding.micros(instant))])
        }
    }

    /// Fires a schedule for `instant`: queues `delivery` and records the instant, atomically, unless
    /// the schedule already fired at or after it (another process did). Returns whether it fired.
    func fire(schedule function: String, instant: Timestamp, delivery: NewDelivery) async throws -> Bool {
        let micros = RowEncoding.micros(instant)
        let payload = delivery.event.wireBytes
        let fired = try await writer.withTransaction { db -> Bool in
            if let last = try db.scalarInt("SELECT last_fire FROM schedules WHERE function = ?", [.text(function)]), last >= micros { return false }
            try db.run("INSERT INTO schedules(function, last_fire) VALUES (?, ?) ON CONFLICT(function) DO UPDATE SET last_fire = excluded.last_fire",
                       [.text(function), .integer(micros)])
            return try SQLiteDeliveries.insert(db, delivery, payload: payload, createTime: RowEncoding.micros(writer.clock.now()), ifNew: true)
        }
        if fired { activity.notify([function]) }
        return fired
    }

    // MARK: feed cursors

    /// A consumer's cursor in a feed; a new one is created at the feed's end (read in the same
    /// transaction, so it counts what other processes committed), so a function added later sees
    /// only what happens from now on.
    func cursor(_ name: String, in feed: Feed) async throws -> Int64 {
        let table = feed.cursorTable
        if let existing = try readers.withReader({ db in try db.scalarInt("SELECT cursor FROM \(table) WHERE name = ?", [.text(name)]) }) {
            return existing
        }
        let now = RowEncoding.micros(writer.clock.now())
        return try await writer.withTransaction { db in
            let end: Int64
            switch feed {
            case .changes: end = try Writer.feedEnd(db).sequence
            case .userEvents: end = try db.scalarInt("SELECT max(seq) FROM user_events") ?? 0
            }
            try db.run("INSERT INTO \(table)(name, cursor, updated_time) VALUES (?, ?, ?) ON CONFLICT(name) DO NOTHING",
                       [.text(name), .integer(end), .integer(now)])
            return try db.scalarInt("SELECT cursor FROM \(table) WHERE name = ?", [.text(name)]) ?? end
        }
    }

    /// The user event log's cursors by name.
    func userEventCursors() throws -> [String: Int64] {
        try readers.withReader { db in
            Dictionary(try db.query("SELECT name, cursor FROM user_event_cursors") { ($0.text(0), $0.int64(1)) }, uniquingKeysWith: { a, _ in a })
        }
    }

    func removeUserEventCursor(_ name: String) async throws {
        try await writer.withTransaction { db in try db.run("DELETE FROM user_event_cursors WHERE name = ?", [.text(name)]) }
    }

    static func setCursor(_ db: Connection, _ table: String, _ name: String, _ cursor: Int64, now: Int64) throws {
        try db.run("""
            INSERT INTO \(table)(name, cursor, updated_time) VALUES (?, ?, ?)
            ON CONFLICT(name) DO UPDATE SET cursor = max(cursor, excluded.cursor), updated_time = excluded.updated_time
            """, [.text(name), .integer(cursor), .integer(now)])
    }

    // MARK: rows

    static let columns = """
        d.id, d.function, d.event_id, d.ordering_key, d.payload, d.attempts, d.first_attempt_time, d.due_time, d.state,
        d.last_error, d.last_status, d.dispatch_deadline, d.create_time, d.executions
        """

    static func row(_ s: Statement) throws -> Delivery {
        Delivery(id: s.int64(0), function: s.text(1), eventID: s.text(2), orderingKey: s.isNull(3) ? nil : s.text(3),
                 payload: s.blob(4), attempts: Int(s.int64(5)),
                 firstAttemptTime: s.isNull(6) ? nil : RowEncoding.time(s.int64(6)), dueTime: RowEncoding.time(s.int64(7)),
                 state: DeliveryState(rawValue: s.int64(8)) ?? .pending, lastError: s.isNull(9) ? nil : s.text(9),
                 lastStatus: s.isNull(10) ? nil : Int(s.int64(10)), dispatchDeadline: s.isNull(11) ? nil : .seconds(double: s.double(11)),
                 createTime: RowEncoding.time(s.int64(12)), executions: Int(s.int64(13)))
    }
}

extension Feed {
    /// Where consumers' positions are kept: apart, because change-feed cursors decide how far the
    /// change feed may be pruned.
    var cursorTable: String {
        switch self {
        case .changes: return "consumers"
        case .userEvents: return "user_event_cursors"
        }
    }
}
