import HearthModel
import HearthStore
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Runs everything asynchronous: document and user triggers, task queues and schedules. Each is a
/// delivery in the database (see `DeliveryStorage`): queued once per function and event, claimed
/// under a lease, run through the invoker, then deleted, retried by the function's `RetryPolicy`,
/// or kept as a dead letter.
///
/// The engine never sleeps on its own: `nextDeadline()` says when something will be due and
/// `runDue(at:)` does what is due. `start(driving: true)` runs a loop that sleeps on the runtime's
/// clock until the next deadline or until the store signals new work (a commit, an enqueue, a user
/// event: no polling on that path); tests leave the loop off and drive the engine with a
/// `ManualClock` through `settle()` and `advance(by:)` (see `TestRuntime`).
///
/// This file holds the engine's state and lifecycle and the loop; routing the feeds, firing
/// schedules, claiming and running, housekeeping and settling each have a file of their own.
public actor DeliveryEngine {
    /// Off in a system replay, where schedule instants come from the recording (`fireRecorded`).
    var firesSchedules = true

    /// Whether schedules fire on their own (a system replay turns it off and fires the recorded instants).
    public func setFiresSchedules(_ on: Bool) { firesSchedules = on }

    /// Runs one delivery at a time, in due order (a system replay, for determinism).
    var serial = false
    public func setSerial(_ on: Bool) { serial = on }
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

        /// A fresh id of this process alone, owning no earlier leases: unique on this machine (the
        /// process id and a count of the process's nodes) whatever the generator, and random beyond it.
        public static func ephemeral(_ random: any RandomSource) -> Node {
            let n = Node.created.wrappingAdd(1, ordering: .relaxed).newValue
            return Node(id: "node-\(getpid())-\(n)-" + random.autoID(length: 12).lowercased(), owned: false)
        }

        private static let created = Atomic<Int>(0)
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
        /// Keep each trigger's commit-to-start latency (for benchmarks; meaningful on a real clock).
        public var recordsTriggerLatency = false

        public init(pollInterval: Duration? = nil, taskDedupeWindow: Duration = .seconds(86_400),
                    defaultConcurrency: Int = 100, leaseMargin: Duration = .seconds(60), routeBatch: Int = 500,
                    feedRetention: Duration? = nil, recordsTriggerLatency: Bool = false) {
            self.pollInterval = pollInterval
            self.taskDedupeWindow = taskDedupeWindow
            self.defaultConcurrency = defaultConcurrency
            self.leaseMargin = leaseMargin
            self.routeBatch = routeBatch
            self.feedRetention = feedRetention
            self.recordsTriggerLatency = recordsTriggerLatency
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
    public private(set) var node: Node
    /// The database: `feed` for document changes, `deliveries` for the queue, `users` for the user event log.
    let feed: any StorageEngine
    let deliveries: any DeliveryStorage
    let users: any UserStorage
    let invoker: Invoker
    let clock: any Clock
    /// Retry jitter comes from here (seeded in tests and replay).
    let random: any RandomSource
    let log: RuntimeLog
    public nonisolated let stats = DeliveryStats()

    var lanes: [String: Lane] = [:]
    /// Lanes of functions a new unit version removed, while deliveries they started still run
    /// (their outcomes are recorded as usual; nothing new is claimed for them).
    var drainingLanes: [String: Lane] = [:]
    /// Each event function's retry policy, for deliveries recovered from dead processes.
    var retryPolicies: [String: RetryPolicy] = [:]
    var documentRoutes: [DocumentRoute] = []
    var userRoutes: [UserRoute] = []
    /// Cursors of routes a new table took out, still to delete (`removeGoneCursors`).
    var goneCursors: [(id: Int, cursor: GoneCursor)] = []
    var nextGoneID = 0
    /// The last id queued when the current pass began (see `removeGoneCursors`).
    var passGoneHorizon = 0
    /// Set while `removeGoneCursors` works through them.
    var removingCursors = false
    var schedules: [String: ScheduleState] = [:]
    /// When the schedules' next instants were last worked out again from the stored last firings.
    var schedulesReadAt: Timestamp?
    /// Attempts ended and not yet recorded in the store, with their functions (whose lanes are
    /// read again once they are).
    var completions: [(function: String, outcome: DeliveryOutcome)] = []
    /// Set when recording `completions` failed (another process held the write lock past the busy
    /// timeout, a full disk): they are recorded again from then on, not at every pass.
    var completionsRetryAt: Timestamp?
    /// How long recording waits after it failed.
    static let completionsRetryDelay = Duration.seconds(1)
    /// Deliveries this engine started whose attempt's end it has not taken in yet (`takeEnded`).
    var running: Set<Int64> = []
    /// Attempts that ended, in the order the invoker reported them, on the thread that read the
    /// unit's answer (or the deadline's timer): the engine takes them in at its next pass, with no
    /// task waiting per attempt and no hop onto the engine per attempt.
    nonisolated let ended = Mutex<[(delivery: Delivery, outcome: InvocationOutcome)]>([])
    var stopping = false
    var started = false
    var lastPrune: Timestamp?
    /// The last read of the earliest lease end among running deliveries (`earliestLeaseEnd(now:)`): when,
    /// by the engine's clock, and what it found.
    var leaseRead: (at: Timestamp, end: Timestamp?)?
    /// How many times the engine read it (for tests).
    public internal(set) var leaseReads = 0
    /// Pruning stopped at its per-pass bound with more to delete: the next pass goes on.
    var pruneBacklog = false
    /// A `runDue` pass is under way (passes never overlap).
    var inPass = false
    /// Where the store (and the engine itself) signal work: the loop waits on it, and reads from
    /// it which functions' queues changed.
    nonisolated let work: WorkSignal
    private var driver: Task<Void, Never>?

    public init(configuration: Configuration, storage: any StorageEngine, invoker: Invoker, clock: any Clock,
                random: any RandomSource, log: RuntimeLog) {
        self.configuration = configuration
        self.feed = storage
        self.deliveries = storage.deliveries
        self.users = storage.users
        work = storage.activity
        self.invoker = invoker
        self.clock = clock
        self.random = random
        self.log = log
        node = Node.ephemeral(random)
    }

    // MARK: lifecycle

    /// Takes the event functions of `table`: recovers this node's unfinished deliveries, places
    /// each trigger function's feed cursor (a new function starts at the end of the feed),
    /// registers schedules (a new one first fires at its next instant after now), and with
    /// `driving` starts the loop that runs deliveries as they come due.
    public func start(table: FunctionTable, driving: Bool, node: Node? = nil, removeStaleCursors: Bool = true) async throws {
        if let node { self.node = node }
        let now = clock.now()
        // Only a node that owns its id (see `Runtime.nodeIdentity`) takes back its own leases at once.
        var policies: [String: RetryPolicy] = [:]
        for entry in table.entries where entry.trigger.isEvent {
            policies[entry.name] = Lane(entry: entry, now: now, defaultConcurrency: configuration.defaultConcurrency).retry
        }
        retryPolicies = policies
        let known = policies
        let owner = self.node.owned ? self.node.id : nil
        let recovered = try await deliveries.recoverLeases(owner: owner, now: now, policy: { known[$0] })
        if recovered.pending + recovered.dead > 0 {
            log.log(.notice, "deliveries recovered", ["pending": .int(Int64(recovered.pending)), "deadLettered": .int(Int64(recovered.dead)), "node": .string(self.node.id)])
        }
        let wantedCursors = try await registerRoutes(table, now: now)
        // Cursors of trigger functions no longer declared would hold back pruning of the feed forever.
        // Not while a unit is refused: its functions keep their place for when it loads again.
        if removeStaleCursors { try await removeCursors(except: wantedCursors) }
        started = true
        if driving {
            driver = Task { [weak self] in await self?.drive() }
        }
    }

    /// Stops claiming, lets running deliveries finish within `grace` (elapsed time: a shutdown's
    /// grace is real time whatever the runtime's clock), records what finished, and leaves the rest
    /// pending (or running under this node's lease, which the next start with the same node id
    /// takes back).
    public func stop(grace: Duration) async {
        stopping = true
        work.notify(nil)
        driver?.cancel()
        await driver?.value
        driver = nil
        let deadline = ContinuousClock.now + grace
        takeEnded()
        while !running.isEmpty, ContinuousClock.now < deadline {
            await invoker.progress.wait(atMost: deadline - ContinuousClock.now)
            takeEnded()
        }
        // A last try, even within the pause after a failed one.
        completionsRetryAt = nil
        await flushCompletions()
    }

    /// Makes the driving loop look for work now (after a change it cannot see, such as a dead letter
    /// retried through the store).
    public nonisolated func poke() {
        work.notify(nil)
    }

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
            // Notified during the pass (a commit, an attempt's end): the wait would return at once,
            // so the next pass starts without working out the deadline (a read of the next lease
            // end and of each changed function's next due delivery, passes apart under load).
            if work.takePending() {
                // A suspension point all the same, as the wait was: other calls on the engine
                // (stop, settle) get their turn between passes.
                await Task.yield()
                continue
            }
            var deadline = await nextDeadline()
            if let poll = configuration.pollInterval {
                let next = clock.now() + poll
                deadline = deadline.map { min($0, next) } ?? next
            }
            await work.wait(until: deadline, clock: clock)
        }
    }

    /// The earliest time something becomes due: a pending delivery of a function that has room
    /// (and a token), a schedule's next instant, or the end of a lease. Nil when nothing is waiting.
    public func nextDeadline() async -> Timestamp? {
        let now = clock.now()
        var earliest: Timestamp?
        func consider(_ t: Timestamp?) { if let t { earliest = earliest.map { min($0, t) } ?? t } }
        absorbWork()
        refreshDirtyLanes()
        // While outcomes wait to be recorded again, the lanes wait with them: the database still
        // counts those deliveries as running, so a lane that looks free here could claim nothing.
        if completionsRetryAt == nil {
            for (_, lane) in lanes where lane.capacity > 0 {
                guard let due = lane.nextDue else { continue }
                var l = lane
                l.refill(at: now)
                consider(max(due, l.tokenTime(after: now)))
            }
        }
        if firesSchedules { for state in schedules.values { consider(state.next) } }
        // Leases are taken back only once outcomes waiting to be recorded are (`runDue`).
        if completionsRetryAt == nil { consider(try? earliestLeaseEnd(now: now)) }
        if !completions.isEmpty { consider(completionsRetryAt.map { max($0, now) } ?? now) }
        if pruneBacklog { consider(now) }
        return earliest
    }

    /// Does everything due at `now`: records finished attempts, queues new document changes and
    /// user events, fires due schedules, takes back deliveries whose lease ended, and starts as
    /// many due deliveries as each function's concurrency and rate allow.
    public func runDue(at now: Timestamp) async {
        guard started, !inPass else { return }
        inPass = true
        passGoneHorizon = nextGoneID
        defer { inPass = false }
        absorbWork()
        // The routes of these cursors are gone already: routing goes on if deleting them fails.
        await removeGoneCursors()
        do {
            // The first routing transaction records the outcomes that wait (`routeDocuments`).
            // With nothing to route they are recorded here, before anything else, as they were
            // before routing; what ends during a routing waits for the flush before the claim.
            var routed = false
            do { while try await routeDocuments(now: now, routed: &routed) {} } catch {
                await flushCompletions()
                throw error
            }
            if !routed { await flushCompletions() }
            while try await routeUserEvents(now: now) {}
            if firesSchedules { try await fireSchedules(now: now) }
            // Not while outcomes of this node wait to be recorded: recovery could take back a lease
            // whose attempt ended, and the outcome would then change nothing.
            if completionsRetryAt == nil { try await recoverLapsedLeases(now: now) }
            try await housekeeping(now: now)
            guard !stopping else { return }
            // Attempts that ended during the steps above: taken in and recorded first, so the
            // lanes' counts and the database's count of running deliveries (which limits hold
            // across processes) are current.
            takeEnded()
            await flushCompletions()
            try await claimAndStart(now: now)
        } catch {
            log.error("delivery engine step failed", ["error": .string("\(error)")])
        }
    }

    /// Takes in the attempts that ended, then marks the lanes whose queues the store reported
    /// changed as needing a fresh look.
    func absorbWork() {
        takeEnded()
        let (names, all) = work.take()
        if all { markAllDirty() } else { for name in names { markDirty(name, due: nil) } }
    }

    /// Deliveries started and not taken in as ended (tests): one whose attempt ended since the
    /// engine's last pass still counts.
    public var runningCount: Int { running.count }
}
