import Foundation
import HearthModel
import HearthRuntime
import HearthStore
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
    public init(units: [String], start: Timestamp = Timestamp(seconds: 1_767_225_600), configure: (inout RuntimeConfig) -> Void = { _ in }) async throws {
        directory = NSTemporaryDirectory() + "hearth-test-" + UUID().uuidString
        var config = RuntimeConfig()
        config.units = units.map { RuntimeConfig.Unit(name: $0) }
        config.unitsDirectory = RuntimeConfig.executableDirectory
        config.dataDirectory = directory
        config.log.level = .warning
        configure(&config)
        clock = ManualClock(start)
        runtime = try await Runtime.open(config: config, clock: clock)
        await runtime.loadUnits()
        if let refused = runtime.loadErrors.first { throw refused }
    }

    public var store: DocumentStore { runtime.store }

    /// Calls a callable as `uid` (signed in with a real ID token minted and verified by the runtime's
    /// auth, with the user's custom claims and `claims`) or anonymously; returns its result or throws
    /// the `HTTPSError` it answered with.
    @discardableResult
    public func call(_ name: String, _ data: Value = .null, as uid: String? = nil, claims: [String: Value] = [:]) async throws -> Value {
        var auth: CallerAuth?
        if let uid { auth = try await caller(uid, claims) }
        let outcome = await runtime.call(name, data: data, auth: auth)
        switch outcome.result {
        case .success(let v): return v
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
        try await store.get(try DocumentPath(path))
    }

    /// Every document of a collection, ordered by id.
    public func documents(in collection: String) async throws -> [StoredDocument] {
        try await store.query(QuerySpec(collection: try CollectionPath(collection)))
    }

    /// Writes documents directly (test setup), bypassing functions.
    public func seed(_ documents: [String: Value]) async throws {
        var writes: [DocumentWrite] = []
        for (path, value) in documents {
            guard case .map(let fields) = value else { throw HTTPSError(.invalidArgument, "seed data for \(path) must be a map") }
            writes.append(.set(try DocumentPath(path), fields))
        }
        try await store.commit(writes)
    }

    deinit {
        runtime.store.close()
        try? FileManager.default.removeItem(atPath: directory)
    }
}
