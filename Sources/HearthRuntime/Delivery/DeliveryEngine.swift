import Foundation
import HearthModel
import HearthStore
import Synchronization

/// Runs everything asynchronous: document and user triggers, task queues and schedules. Each is a
/// delivery in the database (see `DeliveryStore`): queued once per function and event, claimed
/// under a lease, run through the invoker, then deleted, retried by the function's `RetryPolicy`,
/// or kept as a dead letter.
///
/// The engine never sleeps on its own: `nextDeadline()` says when something will be due and
/// `runDue(at:)` does what is due. `start(driving: true)` runs a loop that sleeps on the runtime's
/// clock until the next deadline or until the store reports new work (a commit, an enqueue, a user
/// event: no polling on that path); tests leave the loop off and drive the engine with a
/// `ManualClock` through `settle()` and `advance(by:)` (see `TestRuntime`).
public actor DeliveryEngine {
    /// Names this process's leases; a restarted process with the same id takes back its own
    /// running deliveries at once (others' wait for their lease to end).
    public struct Node: Sendable, Hashable {
        public var id: String
        /// Whether this process holds the id exclusively (no other live process uses it), so that
        /// running deliveries under it at start are leftovers of a dead process.
        public var owned: Bool

        public init(id: String, owned: Bool) {
            self.id = id
            self.owned = owned
        }

        /// A fresh id of this process alone, owning no earlier leases.
        public static func ephemeral() -> Node { Node(id: UUID().uuidString.lowercased(), owned: false) }
    }

    public struct Configuration: Sendable {
        /// How often the driving loop looks for work other processes queued (nil: never).
        public var pollInterval: Duration?
        /// How long an enqueued task id stays reserved.
        public var taskDedupeWindow: Duration
        /// Concurrency of trigger functions that set none.
        public var defaultConcurrency: Int
        /// Lease beyond an attempt's timeout, after which another process may run the delivery.
        public var leaseMargin: Duration
        /// Changes or user events read per routing step.
        public var routeBatch: Int
        /// How long routed changes and user events are kept before they are pruned (nil: forever).
        public var feedRetention: Duration?
        /// Rows deleted per pruning transaction: short ones, so commits are not held up behind them.
        public var pruneBatch = 1000

        public init(pollInterval: Duration? = nil, taskDedupeWindow: Duration = .seconds(86_400),
                    defaultConcurrency: Int = 100, leaseMargin: Duration = .seconds(60), routeBatch: Int = 500,
                    feedRetention: Duration? = nil) {
            self.pollInterval = pollInterval
            self.taskDedupeWindow = taskDedupeWindow
            self.defaultConcurrency = defaultConcurrency
            self.leaseMargin = leaseMargin
            self.routeBatch = routeBatch
            self.feedRetention = feedRetention
        }
    }

    struct DocumentRoute {
        let function: String
        let kind: DocumentEventKind
        let pattern: PathPattern
        var cursor: Int64
    }

    struct UserRoute {
        let function: String
        let kind: UserEventKind
        var cursor: Int64
    }

    struct ScheduleState {
        let function: String
        let schedule: Schedule
        var next: Timestamp?
    }

    public nonisolated let configuration: Configuration
    /// The node this engine claims under, set by `start`.
    public private(set) var node = Node.ephemeral()
    let deliveries: DeliveryStore
    let users: UserTable
    let feed: any StorageEngine
    let invoker: Invoker
    let clock: any Clock
    let log: RuntimeLog
    public nonisolated let stats = DeliveryStats()

    var lanes: [String: Lane] = [:]
    /// Each event function's retry policy, for deliveries recovered from dead processes.
    var retryPolicies: [String: RetryPolicy] = [:]
    var documentRoutes: [DocumentRoute] = []
    var userRoutes: [UserRoute] = []
    var schedules: [String: ScheduleState] = [:]
    var completions: [DeliveryOutcome] = []
    var running: [Int64: Task<Void, Never>] = [:]
    var stopping = false
    var started = false
    var lastPrune: Timestamp?
    /// Pruning stopped at its per-pass bound with more to delete: the next pass goes on.
    var pruneBacklog = false
    /// A `runDue` pass is under way (passes never overlap).
    var inPass = false
    private nonisolated let wakeup = Wakeup()
    /// Functions whose queues the store reported changed since the last pass (`all`: any may have).
    private nonisolated let touched = Touched()

    final class Touched: Sendable {
        private let state = Mutex<(names: Set<String>, all: Bool)>(([], false))
        func add(_ functions: Set<String>?) {
            state.withLock { t in if let functions { t.names.formUnion(functions) } else { t.all = true } }
        }
        func take() -> (Set<String>, Bool) { state.withLock { t in defer { t = ([], false) }; return (t.names, t.all) } }
    }
    private var driver: Task<Void, Never>?

    public init(configuration: Configuration, deliveries: DeliveryStore, users: UserTable, feed: any StorageEngine,
                invoker: Invoker, clock: any Clock, log: RuntimeLog) {
        self.configuration = configuration
        self.deliveries = deliveries
        self.users = users
        self.feed = feed
        self.invoker = invoker
        self.clock = clock
        self.log = log
        let wakeup = self.wakeup
        let touched = self.touched
        deliveries.activity.subscribe { functions in
            touched.add(functions)
            wakeup.notify()
        }
    }

    // MARK: lifecycle

    /// Takes the event functions of `table`: recovers this node's unfinished deliveries, places
    /// each trigger function's feed cursor (a new function starts at the end of the feed),
    /// registers schedules (a new one first fires at its next instant after now), and with
    /// `driving` starts the loop that runs deliveries as they come due.
    public func start(table: FunctionTable, driving: Bool, node: Node = .ephemeral(), removeStaleCursors: Bool = true) async throws {
        self.node = node
        let now = clock.now()
        // Only a node that owns its id (see `Runtime.nodeIdentity`) takes back its own leases at once.
        var policies: [String: RetryPolicy] = [:]
        for entry in table.entries where entry.trigger.isEvent {
            policies[entry.name] = Lane(entry: entry, now: now, defaultConcurrency: configuration.defaultConcurrency).retry
        }
        retryPolicies = policies
        let known = policies
        let recovered = try await deliveries.recoverLeases(owner: node.owned ? node.id : nil, now: now, policy: { known[$0] })
        if recovered.pending + recovered.dead > 0 {
            log.log(.notice, "deliveries recovered", ["pending": .int(Int64(recovered.pending)), "deadLettered": .int(Int64(recovered.dead)), "node": .string(node.id)])
        }
        var wantedCursors: Set<String> = []
        for entry in table.entries where entry.trigger.isEvent {
            lanes[entry.name] = Lane(entry: entry, now: now, defaultConcurrency: configuration.defaultConcurrency)
            stats.register(entry.name)
            switch entry.trigger {
            case .document(let kind, let pattern):
                let name = DeliveryEngine.documentCursor(entry.name)
                wantedCursors.insert(name)
                let cursor = try await deliveries.cursor(name, in: .changes)
                documentRoutes.append(DocumentRoute(function: entry.name, kind: kind, pattern: try PathPattern(pattern), cursor: cursor))
            case .user(let kind):
                let name = DeliveryEngine.userCursor(entry.name)
                wantedCursors.insert(name)
                userRoutes.append(UserRoute(function: entry.name, kind: kind, cursor: try await deliveries.cursor(name, in: .userEvents)))
            case .schedule(let expression, let zone):
                let schedule = try Schedule(expression, timeZone: zone)
                try await deliveries.registerSchedule(entry.name, at: now)
                let last = try deliveries.lastFire(schedule: entry.name) ?? now
                schedules[entry.name] = ScheduleState(function: entry.name, schedule: schedule, next: schedule.nextFire(after: last))
            default:
                break
            }
        }
        // Cursors of trigger functions no longer declared would hold back pruning of the feed forever.
        // Not while a unit is refused: its functions keep their place for when it loads again.
        if removeStaleCursors {
            for (name, _) in try await feed.cursors() where name.hasPrefix("trigger:") && !wantedCursors.contains(name) {
                try await feed.removeCursor(name)
                log.log(.notice, "feed cursor removed", ["cursor": .string(name), "reason": "its function is not declared by any unit"])
            }
            for (name, _) in try deliveries.userEventCursors() where !wantedCursors.contains(name) {
                try await deliveries.removeUserEventCursor(name)
            }
        }
        started = true
        if driving {
            driver = Task { [weak self] in await self?.drive() }
        }
    }

    /// Stops claiming, lets running deliveries finish within `grace` (wall time), records what
    /// finished, and leaves the rest pending (or running under this node's lease, which the next
    /// start with the same node id takes back).
    public func stop(grace: Duration) async {
        stopping = true
        wakeup.notify()
        driver?.cancel()
        await driver?.value
        driver = nil
        let deadline = ContinuousClock.now + grace
        while !running.isEmpty && ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(5))
        }
        for task in running.values { task.cancel() }
        await flushCompletions()
    }

    /// Makes the driving loop look for work now (after a change it cannot see, such as a dead letter
    /// retried through the store).
    public nonisolated func poke() {
        touched.add(nil)
        wakeup.notify()
    }

    /// Marks the lanes whose queues changed as needing a fresh look.
    private func absorbTouched() {
        let (names, all) = touched.take()
        if all { markAllDirty() } else { for name in names { markDirty(name, due: nil) } }
    }

    static func documentCursor(_ function: String) -> String { "trigger:" + function }
    static func userCursor(_ function: String) -> String { "user-trigger:" + function }

    // MARK: the loop

    private func drive() async {
        var lastPoll = clock.now()
        while !stopping && !Task.isCancelled {
            if let poll = configuration.pollInterval, clock.now() - lastPoll >= poll {
                // Other processes may have queued work this one was not told about.
                markAllDirty()
                lastPoll = clock.now()
            }
            await runDue(at: clock.now())
            var deadline = await nextDeadline()
            if let poll = configuration.pollInterval {
                let next = clock.now() + poll
                deadline = deadline.map { min($0, next) } ?? next
            }
            await wakeup.wait(until: deadline, clock: clock)
        }
    }

    /// The earliest time something becomes due: a pending delivery of a function that has room
    /// (and a token), a schedule's next instant, or the end of a lease. Nil when nothing is waiting.
    public func nextDeadline() async -> Timestamp? {
        let now = clock.now()
        var earliest: Timestamp?
        func consider(_ t: Timestamp?) { if let t { earliest = earliest.map { min($0, t) } ?? t } }
        refreshDirtyLanes()
        for (_, lane) in lanes where lane.capacity > 0 {
            guard let due = lane.nextDue else { continue }
            var l = lane
            l.refill(at: now)
            consider(max(due, l.tokenTime(after: now)))
        }
        for state in schedules.values { consider(state.next) }
        consider(try? deliveries.nextLeaseEnd())
        if !completions.isEmpty || pruneBacklog { consider(now) }
        return earliest
    }

    /// Does everything due at `now`: records finished attempts, queues new document changes and
    /// user events, fires due schedules, takes back deliveries whose lease ended, and starts as
    /// many due deliveries as each function's concurrency and rate allow.
    public func runDue(at now: Timestamp) async {
        guard started, !inPass else { return }
        inPass = true
        defer { inPass = false }
        absorbTouched()
        await flushCompletions()
        do {
            while try await routeDocuments(now: now) {}
            while try await routeUserEvents(now: now) {}
            try await fireSchedules(now: now)
            if let lease = try deliveries.nextLeaseEnd(), lease <= now {
                let policies = retryPolicies
                let n = try await deliveries.recoverLeases(owner: nil, now: now, policy: { policies[$0] })
                if n.pending + n.dead > 0 { markAllDirty() }
                if n.dead > 0 { log.warning("deliveries dead-lettered: their process died during their last attempt", ["count": .int(Int64(n.dead))]) }
            }
            try await pruneTaskIDs(now: now)
            guard !stopping else { return }
            // Attempts that ended during the steps above: recorded first, so the database's count
            // of running deliveries (which limits hold across processes) is current.
            await flushCompletions()
            try await claimAndStart(now: now)
        } catch {
            log.error("delivery engine step failed", ["error": .string("\(error)")])
        }
    }

    /// Runs until nothing is due at the clock's current time and every running delivery is either
    /// finished or waiting for time on a `ManualClock` (its handler sleeps on the host clock): every
    /// delivery due now has been attempted, and retries due now too. For tests and replay, with the
    /// loop off. Gives up (returning) after `wallSeconds` of waiting for handlers that neither finish
    /// nor wait for time.
    public func settle(wallSeconds: Double = 60) async {
        let giveUp = ContinuousClock.now + .seconds(wallSeconds)
        while ContinuousClock.now < giveUp {
            await runDue(at: clock.now())
            if running.isEmpty {
                if !completions.isEmpty { continue }
                guard let next = await nextDeadline(), next <= clock.now() else { return }
                continue
            }
            // Wait until a running delivery finishes, or until all of them wait for time.
            let before = Set(running.keys)
            while Set(running.keys) == before && !allRunningWaitForTime() && ContinuousClock.now < giveUp {
                try? await Task.sleep(for: .milliseconds(1))
            }
            if Set(running.keys) == before && allRunningWaitForTime() {
                // Outcomes to record, or due work with room: another pass. Otherwise nothing moves
                // until time does.
                if !completions.isEmpty { continue }
                if let next = await nextDeadline(), next <= clock.now(), hasRoomForDueWork() { continue }
                return
            }
        }
        log.warning("settle gave up: deliveries neither finish nor wait for time", ["running": .int(Int64(running.count))])
    }

    /// Whether every running delivery's handler is asleep on the (manual) clock.
    private func allRunningWaitForTime() -> Bool {
        guard let manual = clock as? ManualClock else { return false }
        let invocations = invoker.deliveryInvocations
        guard invocations.count == running.count else { return false }
        // Asleep, and not past a timeout that is about to end the attempt.
        let now = clock.now()
        let sleeping = manual.sleepingTags
        return invocations.allSatisfy { id, deadline in sleeping.contains(id) && (deadline.map { $0 > now } ?? true) }
    }

    /// Whether some lane with due work could start more now.
    private func hasRoomForDueWork() -> Bool {
        let now = clock.now()
        return lanes.values.contains { lane in
            guard lane.capacity > 0, let due = lane.nextDue, due <= now else { return false }
            var l = lane
            l.refill(at: now)
            return l.availableTokens > 0
        }
    }

    /// Whether deliveries are running now (tests).
    public var runningCount: Int { running.count }

    // MARK: routing the feeds

    /// Queues deliveries for one batch of document changes; true when there may be more.
    private func routeDocuments(now: Timestamp) async throws -> Bool {
        guard let floor = documentRoutes.map(\.cursor).min() else { return false }
        let changes = try await feed.changes(after: floor, limit: configuration.routeBatch)
        guard let last = changes.last else { return false }
        var routes: [FeedRoute] = []
        for route in documentRoutes where route.cursor < last.sequence {
            var deliveries: [(sequence: Int64, delivery: NewDelivery)] = []
            for change in changes where change.sequence > route.cursor && route.kind.accepts(change.kind) {
                guard let params = route.pattern.match(change.path) else { continue }
                deliveries.append((change.sequence, NewDelivery(function: route.function, eventID: String(change.sequence), orderingKey: change.path.description,
                                                                payload: DeliveryEngine.documentEvent(change, params: params), dueTime: min(change.commitTime, now))))
            }
            routes.append(FeedRoute(feed: .changes, cursor: DeliveryEngine.documentCursor(route.function), through: last.sequence, deliveries: deliveries))
        }
        let (added, cursors) = try await deliveries.route(routes)
        // Only now that the deliveries and cursors are committed do the cursors move here: to where
        // the database has them, which another process may have taken further.
        for i in documentRoutes.indices {
            if let position = cursors[DeliveryEngine.documentCursor(documentRoutes[i].function)] { documentRoutes[i].cursor = position }
        }
        for d in added { markDirty(d.function, due: d.dueTime) }
        return changes.count == configuration.routeBatch
    }

    static func documentEvent(_ change: DocumentChange, params: [String: String]) -> Value {
        var event: [String: Value] = [
            "id": .string(String(change.sequence)), "time": .timestamp(change.commitTime), "kind": .string(change.kind.rawValue),
            "path": .string(change.path.description), "params": .map(params.mapValues { .string($0) }),
        ]
        if let before = change.before { event["before"] = before.value }
        if let after = change.after { event["after"] = after.value }
        return .map(event)
    }

    /// Queues deliveries for one batch of user events; true when there may be more.
    private func routeUserEvents(now: Timestamp) async throws -> Bool {
        guard let floor = userRoutes.map(\.cursor).min() else { return false }
        let events = try users.events(after: floor, limit: configuration.routeBatch)
        guard let last = events.last else { return false }
        var routes: [FeedRoute] = []
        for route in userRoutes where route.cursor < last.sequence {
            var deliveries: [(sequence: Int64, delivery: NewDelivery)] = []
            for event in events where event.sequence > route.cursor && event.kind == route.kind {
                let payload: Value = ["id": .string("user-\(event.sequence)"), "time": .timestamp(event.time), "kind": .string(event.kind.rawValue),
                                      "user": try ValueEncoder().encode(event.user)]
                deliveries.append((event.sequence, NewDelivery(function: route.function, eventID: "user-\(event.sequence)", orderingKey: event.user.uid,
                                                               payload: payload, dueTime: min(event.time, now))))
            }
            routes.append(FeedRoute(feed: .userEvents, cursor: DeliveryEngine.userCursor(route.function), through: last.sequence, deliveries: deliveries))
        }
        let (added, cursors) = try await deliveries.route(routes)
        for i in userRoutes.indices {
            if let position = cursors[DeliveryEngine.userCursor(userRoutes[i].function)] { userRoutes[i].cursor = position }
        }
        for d in added { markDirty(d.function, due: d.dueTime) }
        return events.count == configuration.routeBatch
    }

    // MARK: schedules

    /// Fires each schedule whose next instant has come: once, for the latest instant that has
    /// passed (after downtime, missed instants do not fire one by one).
    private func fireSchedules(now: Timestamp) async throws {
        for (name, state) in schedules {
            guard let next = state.next, next <= now else { continue }
            let instant = state.schedule.latestFire(from: next, upTo: now)
            try await fire(name, instant: instant)
            schedules[name]?.next = state.schedule.nextFire(after: instant)
        }
    }

    /// Queues the firing of schedule `name` for `instant` (unless some process already did).
    private func fire(_ name: String, instant: Timestamp) async throws {
        let payload: Value = ["jobName": .string(name), "scheduleTime": .timestamp(instant)]
        let fired = try await deliveries.fire(schedule: name, instant: instant,
                                              delivery: NewDelivery(function: name, eventID: instant.rfc3339, payload: payload, dueTime: instant))
        if fired { markDirty(name, due: instant) }
    }

    /// Hourly housekeeping: task ids past their dedupe window, and the change feed and user event
    /// log past their retention once every cursor has passed them, a short transaction at a time
    /// with other work let in between.
    /// At most this many pruning transactions per pass, so a large backlog never holds up routing
    /// and claiming for long; the rest waits for the next pass.
    static let pruneBatchesPerPass = 8

    private func pruneTaskIDs(now: Timestamp) async throws {
        if !pruneBacklog, let last = lastPrune, now - last < .seconds(3600) { return }
        if !pruneBacklog {
            lastPrune = now
            try await deliveries.pruneTaskIDs(enqueuedBefore: now - configuration.taskDedupeWindow)
        }
        guard let retention = configuration.feedRetention else { return }
        let batch = configuration.pruneBatch
        var pruned = 0, batches = 0
        for feedKind in [Feed.changes, .userEvents] {
            while batches < DeliveryEngine.pruneBatchesPerPass {
                let n = feedKind == .changes
                    ? try await feed.pruneChanges(committedBefore: now - retention, limit: batch)
                    : try await deliveries.pruneUserEvents(loggedBefore: now - retention, limit: batch)
                pruned += n
                batches += 1
                if n < batch { break }
            }
        }
        // Out of budget: there may be more (at worst one pass finds nothing).
        pruneBacklog = batches >= DeliveryEngine.pruneBatchesPerPass
        if pruneBacklog { wakeup.notify() }
        if pruned > 0 { log.info("feeds pruned", ["rows": .int(Int64(pruned)), "retentionHours": .double(retention.secondsDouble / 3600)]) }
    }

    // MARK: claiming and running

    private func markDirty(_ function: String, due: Timestamp?) {
        guard var lane = lanes[function] else { return }
        lane.dirty = true
        if let due { lane.nextDue = lane.nextDue.map { min($0, due) } ?? due }
        lanes[function] = lane
    }

    /// Every lane looks at its queue again (and at what other processes run: that count is only
    /// refreshed by a claim, so it is cleared here, at the poll, for the next claim to read anew).
    private func markAllDirty() {
        for name in Array(lanes.keys) {
            lanes[name]?.dirty = true
            lanes[name]?.runningElsewhere = 0
        }
    }

    private func refreshDirtyLanes() {
        for (name, lane) in lanes where lane.dirty {
            lanes[name]?.nextDue = (try? deliveries.nextClaimableDue(function: name)) ?? nil
            lanes[name]?.dirty = false
        }
    }

    private func claimAndStart(now: Timestamp) async throws {
        refreshDirtyLanes()
        var requests: [DeliveryStore.ClaimRequest] = []
        for (name, var lane) in lanes {
            lane.refill(at: now)
            lanes[name] = lane
            guard let due = lane.nextDue, due <= now else { continue }
            let limit = min(lane.capacity, lane.availableTokens, 500)
            if limit > 0 { requests.append(.init(function: name, limit: limit, concurrency: lane.concurrency, rate: lane.rate, burst: lane.burst)) }
        }
        guard !requests.isEmpty else { return }
        let snapshot = lanes
        let margin = configuration.leaseMargin
        let claim = try await deliveries.claim(requests, now: now, owner: node.id) { function in
            // Long enough for the longest attempt (a task's own deadline is at most 1800 s).
            now + max(snapshot[function]?.timeout(dispatchDeadlineSeconds: nil) ?? .seconds(60), .seconds(1800)) + margin
        }
        for request in requests {
            guard var lane = lanes[request.function] else { continue }
            lane.dirty = true
            // What other processes run and took from the shared bucket, as the database says.
            let mine = lane.running + claim.deliveries.filter { $0.function == request.function }.count
            lane.runningElsewhere = max(0, (claim.running[request.function] ?? mine) - mine)
            if let left = claim.tokens[request.function] {
                lane.tokens = left + Double(claim.deliveries.filter { $0.function == request.function }.count)
                lane.refilled = now
            }
            lanes[request.function] = lane
        }
        for delivery in claim.deliveries {
            // A delivery made pending again after its process died (by a process that did not know
            // its policy) whose attempts are used up: dead, not run once more.
            if delivery.attempts > 1, let lane = lanes[delivery.function],
               !lane.retry.allowsRetry(afterAttempts: delivery.attempts - 1, firstAttempt: delivery.firstAttemptTime ?? now, next: delivery.dueTime) {
                let reason = DeliveryStore.diedReason(attempt: delivery.attempts - 1)
                completions.append(.dead(id: delivery.id, attempt: delivery.attempts, error: reason, status: 500))
                stats.finished(delivery.function, .dead)
                log.warning("delivery dead-lettered", ["function": .string(delivery.function), "delivery": .int(delivery.id), "error": .string(reason)])
                continue
            }
            start(delivery, now: now)
        }
    }

    private func start(_ delivery: Delivery, now: Timestamp) {
        guard var lane = lanes[delivery.function] else { return }
        lane.take()
        lane.running += 1
        lanes[delivery.function] = lane
        stats.started(delivery.function, latency: triggerLatency(delivery))
        let entry = lane.entry
        let event = DeliveryEngine.event(for: delivery, entry: entry)
        let timeout = lane.timeout(dispatchDeadlineSeconds: delivery.dispatchDeadlineSeconds)
        let invoker = self.invoker
        running[delivery.id] = Task { [weak self] in
            let outcome = await invoker.invoke(entry, event: event, timeout: timeout, delivery: delivery.id,
                                               logFields: ["delivery": .int(delivery.id), "attempt": .int(Int64(delivery.attempts))])
            await self?.finished(delivery, outcome)
        }
    }

    /// Commit (or enqueue) to start, for document and user triggers: what the latency benchmark reads.
    private func triggerLatency(_ delivery: Delivery) -> Duration? {
        guard clock is SystemClock, delivery.attempts == 1, let time = delivery.payload["time"]?.timestampValue else { return nil }
        return clock.now() - time
    }

    /// The event a handler receives.
    static func event(for delivery: Delivery, entry: FunctionEntry) -> Value {
        guard entry.trigger == .task else { return delivery.payload }
        var event = delivery.payload.mapValue ?? [:]
        event["queueName"] = .string(delivery.function)
        event["id"] = .string(delivery.eventID)
        event["retryCount"] = .int(Int64(delivery.attempts - 1))
        event["executionCount"] = .int(Int64(delivery.executions))
        if let status = delivery.lastStatus { event["previousResponse"] = .int(Int64(status)) }
        if let reason = delivery.lastError { event["retryReason"] = .string(reason) }
        return .map(event)
    }

    private func finished(_ delivery: Delivery, _ outcome: InvocationOutcome) {
        running[delivery.id] = nil
        guard var lane = lanes[delivery.function] else { return }
        lane.running -= 1
        lane.dirty = true
        let now = clock.now()
        switch outcome.result {
        case .success:
            completions.append(.succeeded(id: delivery.id, attempt: delivery.attempts))
            stats.finished(delivery.function, .succeeded)
        case .failure(let error):
            let status = error.code.httpStatus
            // Kept with the delivery (and shown by `deliveries list`): a handler's message is bounded.
            let reason = Printable.truncated("\(error.code.rawValue): \(error.message)", bytes: 4096)
            let due = now + lane.retry.backoff(afterAttempt: delivery.attempts, random: { Double.random(in: 0..<1) })
            if lane.retry.allowsRetry(afterAttempts: delivery.attempts, firstAttempt: delivery.firstAttemptTime ?? now, next: due) {
                completions.append(.retry(id: delivery.id, attempt: delivery.attempts, due: due, error: reason, status: status))
                lane.nextDue = lane.nextDue.map { min($0, due) } ?? due
                stats.finished(delivery.function, .failed)
            } else {
                completions.append(.dead(id: delivery.id, attempt: delivery.attempts, error: reason, status: status))
                stats.finished(delivery.function, .dead)
                log.warning("delivery dead-lettered", ["function": .string(delivery.function), "delivery": .int(delivery.id),
                                                        "event": .string(delivery.eventID), "attempts": .int(Int64(delivery.attempts)), "error": .string(reason)])
            }
        }
        lanes[delivery.function] = lane
        wakeup.notify()
    }

    private func flushCompletions() async {
        guard !completions.isEmpty else { return }
        let batch = completions
        completions = []
        do {
            try await deliveries.complete(batch, owner: node.id)
        } catch {
            // The attempts ran; their rows stay running until the lease ends, then run again.
            log.error("recording delivery outcomes failed", ["count": .int(Int64(batch.count)), "error": .string("\(error)")])
        }
    }
}

/// Counters of what the engine did, by function, for metrics (readable without the actor).
public final class DeliveryStats: Sendable {
    public enum Result: Sendable { case succeeded, failed, dead }

    public struct Counters: Sendable {
        public var started = 0
        public var succeeded = 0
        /// Failed attempts that will be retried.
        public var failed = 0
        public var dead = 0
    }

    private let state = Mutex<(counters: [String: Counters], latencies: [Double])>(([:], []))

    func register(_ function: String) { state.withLock { if $0.counters[function] == nil { $0.counters[function] = Counters() } } }

    func started(_ function: String, latency: Duration?) {
        state.withLock { s in
            s.counters[function, default: Counters()].started += 1
            if let latency, s.latencies.count < 1_000_000 { s.latencies.append(latency.secondsDouble) }
        }
    }

    func finished(_ function: String, _ result: Result) {
        state.withLock { s in
            switch result {
            case .succeeded: s.counters[function, default: Counters()].succeeded += 1
            case .failed: s.counters[function, default: Counters()].failed += 1
            case .dead: s.counters[function, default: Counters()].dead += 1
            }
        }
    }

    public var counters: [String: Counters] { state.withLock { $0.counters } }

    /// Seconds from commit to the start of a trigger's first attempt, as recorded (benchmarks).
    public func takeLatencies() -> [Double] { state.withLock { s in defer { s.latencies = [] }; return s.latencies } }
}

/// Wakes the engine's loop: sleeps until a deadline on the clock or until notified, whichever is first.
final class Wakeup: Sendable {
    private struct State {
        var pending = false
        var waiter: CheckedContinuation<Void, Never>?
        var timer: Task<Void, Never>?
    }

    private let state = Mutex(State())

    func notify() {
        let (waiter, timer) = state.withLock { s -> (CheckedContinuation<Void, Never>?, Task<Void, Never>?) in
            guard let w = s.waiter else {
                s.pending = true
                return (nil, nil)
            }
            s.waiter = nil
            defer { s.timer = nil }
            return (w, s.timer)
        }
        timer?.cancel()
        waiter?.resume()
    }

    /// Returns at `deadline` (never, when nil), on `notify()`, or at once if notified since the last wait.
    func wait(until deadline: Timestamp?, clock: any Clock) async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
                let now: Bool = state.withLock { s in
                    if s.pending || Task.isCancelled {
                        s.pending = false
                        return true
                    }
                    s.waiter = c
                    return false
                }
                if now {
                    c.resume()
                    return
                }
                if let deadline {
                    let timer = Task { [weak self] in
                        do { try await clock.sleep(until: deadline) } catch { return }
                        self?.notify()
                    }
                    state.withLock { s in if s.waiter != nil { s.timer = timer } else { timer.cancel() } }
                }
            }
        } onCancel: {
            notify()
        }
        state.withLock { $0.pending = false }
    }
}
