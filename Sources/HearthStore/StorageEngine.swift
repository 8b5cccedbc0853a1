import HearthModel

/// Everything Hearth keeps in its database, as the runtime sees it: documents and the change feed
/// (here), the delivery queue (`deliveries`: deliveries, task ids, schedules, trigger cursors) and
/// auth's users with their event log (`users`). `SQLiteEngine` is the embedded engine; a PostgreSQL
/// engine for several nodes implements the same three parts (row locks and LISTEN/NOTIFY in place of
/// the in-process writer and notifier) and nothing above this protocol changes.
///
/// Every commit appends its changes to the feed in the same database transaction, so a change is in
/// the feed if and only if its write committed; tasks enqueued with a commit and user events logged
/// with a user's creation or deletion commit with it, or not at all.
public protocol StorageEngine: Sendable {
    func getAll(_ paths: [DocumentPath]) async throws -> [StoredDocument?]
    /// Applies writes atomically after checking `validations` (aborting on a mismatch), together with
    /// `enqueues` (tasks that commit with the writes or not at all).
    func commit(_ writes: [DocumentWrite], validations: [ReadValidation], enqueues: [TaskEnqueue]) async throws -> (CommitResult, [DocumentChange])
    /// The same commit, answered through `done` on a thread of the engine's choosing (the embedded
    /// engine's writer thread, right after the COMMIT), with no task to resume. `done` must not
    /// block.
    func commit(_ writes: [DocumentWrite], validations: [ReadValidation], enqueues: [TaskEnqueue],
                done: @escaping @Sendable (Result<(CommitResult, [DocumentChange]), any Error>) -> Void)
    func query(_ spec: QuerySpec) async throws -> [StoredDocument]
    func count(_ spec: QuerySpec) async throws -> Int
    /// The query's results with what running it cost (Query Explain with `analyze`).
    func profiledQuery(_ spec: QuerySpec) async throws -> (documents: [StoredDocument], profile: QueryProfile)
    /// The indexes the query's plan reads, without running it (Query Explain without `analyze`).
    func planSummary(_ spec: QuerySpec) async throws -> QueryProfile
    /// Collections directly under a document (the root when nil) that hold documents at any depth.
    func listCollections(under parent: DocumentPath?) async throws -> [CollectionPath]
    /// Documents of a collection, including ids that exist only as parents of deeper documents.
    func listDocuments(in collection: CollectionPath) async throws -> [DocumentListing]
    /// The names of the documents a query without filters or cursors targets (a collection, a
    /// group, kindless), in name order: names only, nothing decoded.
    func documentNames(_ spec: QuerySpec) async throws -> [DocumentPath]
    /// Up to `limit` documents at `path` (a document or a collection) or anywhere beneath it.
    func documents(under path: [String], limit: Int) async throws -> [DocumentPath]
    /// Changes after `sequence`, oldest first.
    func changes(after sequence: Int64, limit: Int) async throws -> [DocumentChange]
    /// Changes after `sequence` for routing them to triggers, oldest first: this process's own
    /// last commits alone when they continue the feed right after `sequence` with no gap, without
    /// a read of the database; else as `changes(after:limit:)`. Other processes' changes that
    /// follow those come at a later call, from `sequence` past them. What the answer leaves out
    /// is only ever at its end: routing moves its cursors through the answer's last sequence.
    func changesToRoute(after sequence: Int64, limit: Int) async throws -> [DocumentChange]
    /// The sequence of the last committed change this process knows of (0 for an empty feed): its
    /// own commits, and other processes' once the feed is read past them.
    var lastSequence: Int64 { get }
    /// The sequence of the last change committed to the database by any process (0 for an empty
    /// feed); `lastSequence` moves to it.
    func feedEnd() throws -> Int64
    /// Returns once a change after `sequence` is committed, the task is cancelled, or the engine is closed.
    func waitForChanges(after sequence: Int64) async
    /// Records how far a consumer of the feed has read; pruning keeps what any consumer still needs.
    func setCursor(_ consumer: String, to sequence: Int64) async throws
    func removeCursor(_ consumer: String) async throws
    func cursors() async throws -> [String: Int64]
    /// Deletes changes committed before `cutoff` that every consumer has read, at most `limit`
    /// (oldest first, so callers prune in short transactions); returns how many.
    func pruneChanges(committedBefore cutoff: Timestamp, limit: Int) async throws -> Int
    /// Problems the database's own consistency check finds (empty when sound).
    func integrityCheck() async throws -> [String]

    // MARK: export and import (see `ExportFormat`)

    /// Hands every record an export holds to `body`: documents by path, users by uid, deliveries
    /// by id, schedules' last firings, reserved task ids. All are read in one snapshot, so a commit
    /// landing meanwhile (from this process or another) is wholly in the export or wholly not.
    /// Runs on the caller's thread; an error `body` throws stops it and is rethrown.
    func exportRecords(_ body: (ExportRecord) throws -> Void) throws
    /// Writes the records `next` returns, until it returns nil, in one transaction: every one of
    /// them, or nothing when any is refused (an `ImportError` saying why, or the error `next`
    /// throws). With `requireEmpty`, a store holding a document, a user or a delivery is refused,
    /// naming what it holds. Nothing is logged to the change feed or the user event log, so no
    /// trigger runs on what is imported; create and update times are the records'. Running
    /// deliveries become pending; schedule state and task ids replace the store's own.
    func importRecords(requireEmpty: Bool, _ next: @Sendable () throws -> ExportRecord?) async throws -> ImportedRecords

    /// The delivery queue in this database.
    var deliveries: any DeliveryStorage { get }
    /// Auth's users, refresh tokens and user event log in this database.
    var users: any UserStorage { get }
    /// The pushes functions sent (the messaging outbox).
    var outbox: any OutboxStorage { get }
    /// Deploy history: unit versions and their activations.
    var deploys: any DeployStorage { get }
    /// Signalled after commits that may give the delivery engine work (deliveries queued, user
    /// events logged, document changes committed), with the functions whose queues changed when
    /// known. The delivery engine waits on it.
    var activity: WorkSignal { get }

    func close()
}

extension StorageEngine {
    /// For an engine that keeps no commits in memory: the feed as the database has it.
    public func changesToRoute(after sequence: Int64, limit: Int) async throws -> [DocumentChange] {
        try await changes(after: sequence, limit: limit)
    }

    public func pruneChanges(committedBefore cutoff: Timestamp) async throws -> Int {
        try await pruneChanges(committedBefore: cutoff, limit: Int.max)
    }

    public func commit(_ writes: [DocumentWrite], validations: [ReadValidation]) async throws -> (CommitResult, [DocumentChange]) {
        try await commit(writes, validations: validations, enqueues: [])
    }

    /// For an engine with no completion path of its own: the async commit, in a task.
    public func commit(_ writes: [DocumentWrite], validations: [ReadValidation], enqueues: [TaskEnqueue],
                       done: @escaping @Sendable (Result<(CommitResult, [DocumentChange]), any Error>) -> Void) {
        Task {
            do { done(.success(try await commit(writes, validations: validations, enqueues: enqueues))) } catch { done(.failure(error)) }
        }
    }
}

/// Auth's users as the storage engine keeps them (see `UserRepository`), with the log of user
/// events that `onUserCreated` and `onUserDeleted` triggers read.
public protocol UserStorage: UserRepository {
    /// User events after `sequence`, oldest first.
    func events(after sequence: Int64, limit: Int) async throws -> [UserEventRecord]
    /// How many users there are.
    func count() async throws -> Int
}

/// A user created or deleted, logged in the same transaction as the change so `onUserCreated` and
/// `onUserDeleted` run at least once even across a crash.
public struct UserEventRecord: Sendable, Equatable {
    public var sequence: Int64
    public var time: Timestamp
    public var kind: UserEventKind
    /// The user (as it was before, for a deletion).
    public var user: UserRecord

    public init(sequence: Int64, time: Timestamp, kind: UserEventKind, user: UserRecord) {
        self.sequence = sequence
        self.time = time
        self.kind = kind
        self.user = user
    }
}

/// What `importRecords` wrote.
public struct ImportedRecords: Sendable, Equatable {
    public var counts: [ExportFormat.Kind: Int] = [:]
    /// Deliveries that were running when exported, pending now.
    public var madePending = 0
    /// The functions whose queues gained deliveries.
    public var functions: Set<String> = []

    public init() {}
}
