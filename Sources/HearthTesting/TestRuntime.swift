import Foundation
import HearthModel
import HearthRuntime
import Synchronization

/// The real runtime, in-process, for tests: a temporary store, a `ManualClock`, and the named units
/// loaded from their built libraries (next to the test binary), exactly as `hearth serve` loads them.
///
/// ```swift
/// let app = try await TestRuntime(units: ["Members", "Items"])
/// let reply = try await app.call("createItem", ["title": "milk"], as: "alice")
/// ```
public final class TestRuntime: Sendable {
    public let runtime: Runtime
    public let clock: ManualClock
    public let directory: String

    /// Boots a runtime with `units`; fails if any unit is refused.
    /// Where the runtime's ids, seeds and retry jitter come from: seeded, so a test's ids and
    /// backoffs are the same on every run.
    public let random: SeededRandom

    public init(units: [String], start: Timestamp = Timestamp(seconds: 1_767_225_600), seed: UInt64 = 0x4845_4152_5448,
                configure: (inout RuntimeConfig) -> Void = { _ in }) async throws {
        directory = NSTemporaryDirectory() + "hearth-test-" + SystemRandom().autoID()
        var config = RuntimeConfig()
        config.units = units.map { RuntimeConfig.Unit(name: $0) }
        config.unitsDirectory = RuntimeConfig.executableDirectory
        config.dataDirectory = directory
        config.log.level = .warning
        configure(&config)
        clock = ManualClock(start)
        random = SeededRandom(seed: seed)
        try TestKeys.install(for: config)
        runtime = try await Runtime.open(config: config, clock: clock, random: random)
        await runtime.loadUnits()
        if let refused = runtime.loadErrors.first { throw refused }
        try await runtime.startDeliveries(driving: false)
    }

    // MARK: time and deliveries

    /// Runs every delivery due now (document and auth triggers of what was written, tasks due,
    /// schedules due, retries due) until nothing due is left and every running handler has either
    /// finished or is waiting for time.
    public func settle() async {
        await runtime.engine.settle()
    }

    /// Moves the clock forward by `duration`, stopping at every deadline on the way (a delivery or
    /// retry coming due, a schedule's instant, a handler's sleep or timeout) to run what is due
    /// then, in order. Nothing sleeps on the wall clock.
    public func advance(by duration: Duration) async {
        await advance(to: clock.now() + duration)
    }

    /// Moves the clock forward to `target`; see `advance(by:)`.
    public func advance(to target: Timestamp) async {
        await settle()
        while true {
            let engineNext = await runtime.engine.nextDeadline()
            let candidates = [engineNext, clock.nextDeadline].compactMap { $0 }.filter { $0 <= target }
            guard let step = candidates.min() else { break }
            clock.advance(to: max(step, clock.now()))
            await settle()
        }
        clock.advance(to: target)
        await settle()
    }

    /// Writes documents as a client would (their triggers run at the next `settle`/`advance`).
    public func write(_ documents: [String: Value], merge: Bool = false) async throws {
        var writes: [DocumentWrite] = []
        for (path, value) in documents.sorted(by: { $0.key < $1.key }) {
            guard case .map(let fields) = value else { throw HTTPSError(.invalidArgument, "data for \(path) must be a map") }
            writes.append(merge ? .merge(try DocumentPath(path), fields) : .set(try DocumentPath(path), fields))
        }
        try await runtime.documents.commit(writes)
    }

    /// Deletes a document (its triggers run at the next `settle`/`advance`).
    public func delete(_ path: String) async throws {
        try await documents.commit([.delete(try DocumentPath(path))])
    }

    /// Enqueues a task as `tasks.queue(queue).enqueue(data, …)` would; returns its id.
    @discardableResult
    public func enqueue(_ queue: String, _ data: Value, id: String? = nil, scheduleDelay: Duration? = nil) async throws -> String {
        try await runtime.enqueue([TaskSpec(queue: queue, data: data, id: id, start: scheduleDelay.map { .after($0) } ?? .now)])[0]
    }

    /// Creates an auth user (its `onUserCreated` triggers run at the next `settle`/`advance`).
    @discardableResult
    public func createUser(_ user: NewUser) async throws -> UserRecord {
        try await runtime.users.create(user)
    }

    /// Deletes an auth user (its `onUserDeleted` triggers run at the next `settle`/`advance`).
    public func deleteUser(_ uid: String) async throws {
        try await runtime.users.delete(uid: uid)
    }

    /// Deliveries waiting, running or dead, optionally only one function's.
    public func deliveries(function: String? = nil, state: DeliveryState? = nil) throws -> [Delivery] {
        try runtime.deliveryList(function: function, state: state, limit: 100_000)
    }

    /// The runtime's documents (reads, writes and the change feed, without rules).
    public var documents: RuntimeDocuments { runtime.documents }

    /// Calls a callable as `uid` (signed in with a real ID token minted and verified by the runtime's
    /// auth, with the user's custom claims and `claims`) or anonymously; returns its result or throws
    /// the `HTTPSError` it answered with.
    @discardableResult
    public func call(_ name: String, _ data: Value = .null, as uid: String? = nil, claims: [String: Value] = [:]) async throws -> Value {
        var auth: CallerAuth?
        if let uid { auth = try await caller(uid, claims) }
        let outcome = await runtime.call(name, data: data, auth: auth)
        switch outcome.result {
        case .success(let v): return v.value
        case .failure(let e): throw e.httpsError
        }
    }

    private let callers = Mutex<[String: (CallerAuth, Timestamp)]>([:])

    /// A caller for `uid`, minted once and reused until its token nears expiry.
    func caller(_ uid: String, _ claims: [String: Value]) async throws -> CallerAuth {
        let key = uid + "\u{0}" + JSONWriter.string(.map(claims), options: .sorted)
        let now = clock.now()
        if let (cached, expires) = callers.withLock({ $0[key] }), now + .seconds(300) < expires { return cached }
        let auth = try await runtime.caller(asUser: uid, claims: claims)
        let expires = Timestamp(seconds: auth.claims["exp"]?.intValue ?? now.seconds)
        callers.withLock { $0[key] = (auth, expires) }
        return auth
    }

    /// Calls a callable and decodes its result.
    public func call<T: Decodable>(_ name: String, _ data: Value = .null, as uid: String? = nil, returning: T.Type) async throws -> T {
        try ValueDecoder().decode(T.self, from: try await call(name, data, as: uid))
    }

    /// The document at `path`, or nil.
    public func document(_ path: String) async throws -> StoredDocument? {
        try await documents.get(try DocumentPath(path))
    }

    /// Every document of a collection, ordered by id.
    public func documents(in collection: String) async throws -> [StoredDocument] {
        try await documents.query(QuerySpec(collection: try CollectionPath(collection)))
    }

    /// Writes documents directly (test setup), bypassing functions.
    public func seed(_ documents: [String: Value]) async throws {
        var writes: [DocumentWrite] = []
        for (path, value) in documents {
            guard case .map(let fields) = value else { throw HTTPSError(.invalidArgument, "seed data for \(path) must be a map") }
            writes.append(.set(try DocumentPath(path), fields))
        }
        try await runtime.documents.commit(writes)
    }

    deinit {
        runtime.close()
        try? FileManager.default.removeItem(atPath: directory)
    }
}
