import HearthModel

/// The delivery queue as a storage engine keeps it: deliveries (document and user triggers,
/// schedule firings, tasks) with their leases and outcomes, reserved task ids, schedules' last
/// firings, trigger functions' feed cursors and the shared token buckets of rate limits.
///
/// Every change is atomic, and the queue is shared by every process using the database: a claim is
/// a lease held in the database (two processes never run one delivery at once), concurrency and
/// rate limits are counted there, and a cursor moves in the transaction that queues what it passed.
public protocol DeliveryStorage: Sendable {
    // MARK: adding

    /// Queues deliveries (those already queued, by function and event id, are skipped). Returns how
    /// many were new.
    @discardableResult
    func add(_ deliveries: [NewDelivery]) async throws -> Int
    /// Queues deliveries routed from a feed and moves the routing functions' cursors in one
    /// transaction, compare-and-set against the stored cursors, so a change is never queued twice
    /// by processes routing the same feed. With `claiming`, a delivery whose function has room is
    /// queued already claimed (see `RouteClaim`). Returns what was queued and every cursor's position.
    func route(_ routes: [FeedRoute], claiming: RouteClaim?) async throws -> RouteResult
    /// The same, with `outcomes` of attempts made under `owner`'s lease recorded first, as
    /// `complete` records them, in the same transaction: a delivery that finished no longer
    /// counts against its function's room, nor holds back a routed delivery of its ordering key.
    /// Nothing of either is recorded when it fails.
    func route(_ routes: [FeedRoute], claiming: RouteClaim?, completing outcomes: [DeliveryOutcome], owner: String) async throws -> RouteResult
    /// Adds tasks in one transaction (all or none); an id used in its queue within its dedupe
    /// window, or still queued, is `already-exists`.
    func enqueue(_ tasks: [TaskEnqueue]) async throws
    /// Removes a task that has not started; false when there is no such pending task.
    func deleteTask(queue: String, id: String) async throws -> Bool

    // MARK: claiming and completing

    /// Claims due deliveries (never one whose ordering key has an earlier delivery pending or
    /// running), under a lease held by `owner` until `leaseUntil`, counting the attempt, within
    /// each request's limits across every process.
    func claim(_ requests: [ClaimRequest], now: Timestamp, owner: String, leaseUntil: (String) -> Timestamp) async throws -> Claim
    /// Records outcomes of attempts made under `owner`'s lease; one for a delivery no longer running
    /// that attempt under that lease changes nothing.
    func complete(_ outcomes: [DeliveryOutcome], owner: String) async throws
    /// Makes running deliveries pending again (or dead, when `policy` allows no further attempt):
    /// those leased by `owner`, and those whose lease ended before `now`.
    @discardableResult
    func recoverLeases(owner: String?, now: Timestamp, policy: @Sendable (String) -> RetryPolicy?) async throws -> (pending: Int, dead: Int)

    // MARK: reading

    /// When a function's earliest claimable delivery is due (nil when none is pending).
    func nextClaimableDue(function: String) throws -> Timestamp?
    /// The earliest end of a lease among running deliveries.
    func nextLeaseEnd() throws -> Timestamp?
    func delivery(id: Int64) throws -> Delivery?
    /// Deliveries, oldest first, optionally only one function's and one state's.
    func list(function: String?, state: DeliveryState?, limit: Int) throws -> [Delivery]
    /// Counts by function and state, and each function's oldest pending due time.
    func counts() throws -> [String: DeliveryCounts]

    // MARK: dead letters

    /// Makes a dead delivery pending again, due at `now`, its attempts reset; false when there is none.
    func retryDead(id: Int64, now: Timestamp) async throws -> Bool
    /// Deletes a delivery that is not running; false when there is none (or it is running).
    func drop(id: Int64) async throws -> Bool

    // MARK: schedules

    func lastFire(schedule function: String) throws -> Timestamp?
    /// Every schedule's last firing, as stored (whichever process fired it, or an import).
    func lastFires() throws -> [String: Timestamp]
    /// Records `instant` as a new schedule's last firing (queueing nothing); a known schedule keeps its own.
    func registerSchedule(_ function: String, at instant: Timestamp) async throws
    /// Queues a schedule's firing for `instant` and records it, atomically, unless some process
    /// already fired it at or after `instant`. Returns whether it fired.
    func fire(schedule function: String, instant: Timestamp, delivery: NewDelivery) async throws -> Bool

    // MARK: feed cursors and housekeeping

    /// A consumer's cursor in a feed; a new one starts at the feed's end.
    func cursor(_ name: String, in feed: Feed) async throws -> Int64
    func userEventCursors() throws -> [String: Int64]
    func removeUserEventCursor(_ name: String) async throws
    /// Deletes user events logged before `cutoff` that every user trigger has routed, at most
    /// `limit`; returns how many.
    @discardableResult
    func pruneUserEvents(loggedBefore cutoff: Timestamp, limit: Int) async throws -> Int
    /// Forgets task ids reserved before `cutoff`; returns how many.
    @discardableResult
    func pruneTaskIDs(enqueuedBefore cutoff: Timestamp) async throws -> Int
}

extension DeliveryStorage {
    public func list(function: String? = nil, state: DeliveryState? = nil) throws -> [Delivery] {
        try list(function: function, state: state, limit: 100)
    }

    @discardableResult
    public func recoverLeases(owner: String?, now: Timestamp) async throws -> (pending: Int, dead: Int) {
        try await recoverLeases(owner: owner, now: now, policy: { _ in nil })
    }
}

/// The two feeds trigger functions read: document changes and user events.
public enum Feed: Sendable, Hashable {
    case changes
    case userEvents
}

/// What one trigger function routed from a feed: its deliveries, each with the feed sequence it
/// came from, and the position it read through (its cursor's new place).
public struct FeedRoute: Sendable {
    public var feed: Feed
    public var cursor: String
    public var through: Int64
    public var deliveries: [(sequence: Int64, delivery: NewDelivery)]

    public init(feed: Feed, cursor: String, through: Int64, deliveries: [(sequence: Int64, delivery: NewDelivery)]) {
        self.feed = feed
        self.cursor = cursor
        self.through = through
        self.deliveries = deliveries
    }
}


/// Deliveries a routing transaction may claim as it queues them, so that an event whose function
/// has room starts without a claim of its own: per function, at most `limit` (this process's room)
/// and at most `concurrency` running across every process, none while a delivery of the function
/// is pending and due (a claim takes those first), and each only when no earlier delivery of its
/// ordering key is pending or running; the store checks all of it in the transaction. The engine
/// lists only functions with no rate limit (token buckets are the claim's).
public struct RouteClaim: Sendable {
    public var owner: String
    public var now: Timestamp
    public var functions: [String: (limit: Int, concurrency: Int, leaseUntil: Timestamp)]

    public init(owner: String, now: Timestamp, functions: [String: (limit: Int, concurrency: Int, leaseUntil: Timestamp)]) {
        self.owner = owner
        self.now = now
        self.functions = functions
    }
}

/// What a routing transaction did: the deliveries it queued pending, those it queued already
/// claimed (running under the claim's lease, first attempt counted) with their events, how many
/// deliveries of each claiming function run under other processes' leases, and every named
/// cursor's position.
public struct RouteResult: Sendable {
    public var added: [NewDelivery] = []
    public var claimed: [(delivery: Delivery, event: Boundary.Event)] = []
    public var runningElsewhere: [String: Int] = [:]
    public var cursors: [String: Int64] = [:]

    public init() {}
}

extension DeliveryStorage {
    /// Routes without claiming.
    public func route(_ routes: [FeedRoute]) async throws -> (added: [NewDelivery], cursors: [String: Int64]) {
        let result = try await route(routes, claiming: nil)
        return (result.added, result.cursors)
    }
}

/// What one function may claim: at most `limit` (this process's room), at most `concurrency`
/// running at once across every process sharing the database, and at most what the function's
/// shared token bucket (`rate` per second, holding up to `burst`) allows.
public struct ClaimRequest: Sendable {
    public var function: String
    public var limit: Int
    public var concurrency: Int?
    public var rate: Double?
    public var burst: Double

    public init(function: String, limit: Int, concurrency: Int? = nil, rate: Double? = nil, burst: Double = 1) {
        self.function = function
        self.limit = limit
        self.concurrency = concurrency
        self.rate = rate
        self.burst = burst
    }
}

/// What a claim found: the deliveries, and per function how many run now in all processes and
/// the tokens its shared bucket has left (nil without a rate).
public struct Claim: Sendable {
    public var deliveries: [Delivery]
    /// Per function asked for: how many of its deliveries other owners run (under their leases).
    public var runningElsewhere: [String: Int]
    public var tokens: [String: Double]

    public init(deliveries: [Delivery] = [], runningElsewhere: [String: Int] = [:], tokens: [String: Double] = [:]) {
        self.deliveries = deliveries
        self.runningElsewhere = runningElsewhere
        self.tokens = tokens
    }
}

