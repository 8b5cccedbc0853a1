import Foundation
import HearthAuth
import HearthModel
import HearthStore

// The runtime as the CLI, HearthTesting and tools use it: everything they need, in HearthModel's
// vocabulary, so nothing above the runtime imports the store or auth modules (DESIGN.md,
// dependency rules). Units never come this way: they reach the same store through the boundary.

/// The runtime's documents: reads, writes and the change feed, as a trusted caller (no rules).
public struct RuntimeDocuments: Sendable {
    let store: DocumentStore
    /// Writes made this way are inputs from outside (the CLI, the admin API, tests' writes).
    var recording: RecordingSwitch?

    init(store: DocumentStore, recording: RecordingSwitch? = nil) {
        self.store = store
        self.recording = recording
    }

    /// Opens the configured store alone, without a runtime (commands that only touch documents).
    /// With `[record]` configured, its writes are recorded as inputs.
    public static func open(config: RuntimeConfig, clock: any Clock = SystemClock()) async throws -> RuntimeDocuments {
        let store = try await DocumentStore.open(path: config.storePath, options: config.storeOptions, clock: clock)
        guard let options = config.recordOptions(process: "cli") else { return RuntimeDocuments(store: store) }
        let recording = RecordingSwitch()
        let header = RecordingHeader(format: RecordingHeader.currentFormat, hearth: HearthVersion.string, boundary: Int(Boundary.version), process: "cli",
                                     pid: Int(getpid()), startedAt: clock.now(), units: [:], config: config.recordedValue)
        // Everything in the secrets file is kept out (this process loads no units to declare more).
        let secrets = (try? Secrets.load(path: config.secretsFile.map(config.resolve)))?.declaredValues([]) ?? [:]
        _ = recording.set(try Recorder(options: options, redactor: Redactor(secrets: secrets), clock: clock, header: { header }))
        return RuntimeDocuments(store: store, recording: recording)
    }

    public func get(_ path: DocumentPath) async throws -> StoredDocument? { try await store.get(path) }
    public func getAll(_ paths: [DocumentPath]) async throws -> [StoredDocument?] { try await store.getAll(paths) }
    public func query(_ spec: QuerySpec) async throws -> [StoredDocument] { try await store.query(spec) }
    public func count(_ spec: QuerySpec) async throws -> Int { try await store.count(spec) }

    /// Commits writes atomically (any number); their triggers run as any commit's do.
    @discardableResult
    public func commit(_ writes: [DocumentWrite]) async throws -> CommitResult {
        let result = try await store.commit(writes)
        recording?.recorder?.input(.write(Boundary.Commit(writes: writes)))
        return result
    }

    /// Deletes a document or collection and everything beneath it, in batches; returns how many documents.
    @discardableResult
    public func recursiveDelete(_ path: [String], batchSize: Int = 500) async throws -> Int {
        let deleted = try await store.recursiveDelete(path, batchSize: batchSize)
        recording?.recorder?.input(.recursiveDelete(path: path))
        return deleted
    }

    public func listCollections(under parent: DocumentPath?) async throws -> [CollectionPath] { try await store.listCollections(under: parent) }
    public func listDocuments(in collection: CollectionPath) async throws -> [DocumentListing] { try await store.listDocuments(in: collection) }

    /// Every document path at or beneath `path` (a document or collection), up to `limit`.
    public func paths(under path: [String], limit: Int = Int.max) async throws -> [DocumentPath] {
        try await store.engine.documents(under: path, limit: limit)
    }

    /// The change feed: the last committed sequence, and changes after a sequence.
    public var lastSequence: Int64 { store.engine.lastSequence }
    public func changes(after sequence: Int64, limit: Int = 1000) async throws -> [DocumentChange] {
        try await store.engine.changes(after: sequence, limit: limit)
    }

    /// Transactions units (or anyone) left open.
    public var openTransactions: Int { store.transactions.openCount }

    /// Closes the store (only for one opened with `open`; a runtime closes its own).
    public func close() { store.close() }
}

/// The runtime's auth users and signing keys, as the Admin SDK has them.
public struct RuntimeUsers: Sendable {
    let auth: AuthService
    let clock: any Clock

    public func list(maxResults: Int = 1000, pageToken: String? = nil) async throws -> (users: [UserRecord], nextPageToken: String?) {
        try await auth.listUsers(maxResults: maxResults, pageToken: pageToken)
    }

    /// The user, or `not-found`.
    public func get(_ lookup: UserLookup) async throws -> UserRecord {
        switch lookup {
        case .uid(let uid): return try await auth.getUser(uid: uid)
        case .email(let email): return try await auth.getUser(email: email)
        case .phoneNumber(let phone): return try await auth.getUser(phoneNumber: phone)
        case .provider(let provider, let uid): return try await auth.getUser(provider: provider, providerUID: uid)
        }
    }

    /// Creates a user (its `onUserCreated` triggers run as for any creation).
    @discardableResult
    public func create(_ user: NewUser) async throws -> UserRecord { try await auth.createUser(user) }
    public func update(uid: String, _ update: UserUpdate) async throws -> UserRecord { try await auth.updateUser(uid: uid, update) }
    /// Deletes a user (its `onUserDeleted` triggers run).
    public func delete(uid: String) async throws { try await auth.deleteUser(uid: uid) }
    public func setCustomClaims(uid: String, _ claims: [String: Value]?) async throws { try await auth.setCustomClaims(uid: uid, claims) }
    public func revokeRefreshTokens(uid: String) async throws { try await auth.revokeRefreshTokens(uid: uid) }

    /// Verifies an ID token as the front door does: the caller, or `unauthenticated` saying why.
    public func verify(idToken: String) async throws -> CallerAuth {
        do {
            let verified = try await auth.verifyIDToken(idToken)
            return CallerAuth(uid: verified.uid, claims: verified.claims, rawToken: idToken)
        } catch {
            throw HTTPSError(.unauthenticated, error.description)
        }
    }

    /// The public signing keys as a JWKS document.
    public func jwks() throws -> Value { try auth.keys.jwks() }

    /// Makes a new signing key the active one (the previous ones still verify); returns its key id
    /// and how many keys are trusted.
    public func rotateSigningKey() throws -> (activeKid: String, keys: Int) {
        // A cached verification made with a key the ring drops here counts no more (the cache
        // keeps each token's key id and asks the ring).
        let entry = try auth.keys.rotate(clock: clock)
        return (entry.kid, auth.keys.entries.count)
    }

    /// A signing key file's contents with one new key, as a runtime creates on first start (test
    /// suites copy one into many runtimes instead of generating a key each).
    public static func newKeyFile() throws -> [UInt8] {
        let directory = NSTemporaryDirectory() + "hearth-keys-" + SystemRandom().autoID()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/auth-keys.json"
        _ = try KeyRing(path: path, clock: SystemClock())
        guard let data = FileManager.default.contents(atPath: path) else { throw HTTPSError(.internal, "the new key file cannot be read") }
        return [UInt8](data)
    }
}

extension Runtime {
    /// The runtime's documents.
    public var documents: RuntimeDocuments { RuntimeDocuments(store: store, recording: recording) }

    /// The runtime's auth users and signing keys.
    public var users: RuntimeUsers { RuntimeUsers(auth: auth, clock: clock) }

    /// Deliveries, oldest first, optionally only one function's and one state's.
    /// The pushes functions sent (the messaging outbox), after `sequence`, oldest first.
    public func outbox(after sequence: Int64 = 0, limit: Int = 100) throws -> [OutboxEntry] {
        try store.engine.outbox.entries(after: sequence, limit: limit)
    }

    public func deliveryList(function: String? = nil, state: DeliveryState? = nil, limit: Int = 100) throws -> [Delivery] {
        try deliveries.list(function: function, state: state, limit: limit)
    }

    /// Removes a task that has not started; `not-found` when there is none.
    public func deleteTask(queue: String, id: String) async throws {
        guard try await deliveries.deleteTask(queue: queue, id: id) else {
            throw HTTPSError(.notFound, "no pending task '\(id)' in queue '\(queue)'")
        }
    }
}
