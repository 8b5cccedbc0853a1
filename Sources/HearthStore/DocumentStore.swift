import HearthModel
import Synchronization

/// Hearth's document database: Firestore's data model and semantics over a `StorageEngine`.
///
/// Reads (`get`, `query`, `count`) see the latest committed state. Writes go through `commit`,
/// atomically. `runTransaction` gives serializable read-then-write transactions, retried when they
/// conflict. Every committed change is in the change feed, which drives document triggers.
public final class DocumentStore: Sendable {
    public let engine: any StorageEngine
    public let clock: any Clock
    /// Open transactions (for units driving them across the boundary).
    public let transactions: TransactionManager

    public init(engine: any StorageEngine, clock: any Clock, random: any RandomSource = SystemRandom(), transactionIdleTimeout: Duration = .seconds(60)) {
        self.engine = engine
        self.clock = clock
        self.transactions = TransactionManager(engine: engine, clock: clock, random: random, idleTimeout: transactionIdleTimeout)
        transactions.startExpiring()
    }

    /// Opens (creating if needed) an embedded store at `path`.
    public static func open(path: String, options: SQLiteEngine.Options = .init(), clock: any Clock,
                            random: any RandomSource = SystemRandom()) async throws -> DocumentStore {
        DocumentStore(engine: try await SQLiteEngine(path: path, options: options, clock: clock), clock: clock, random: random)
    }

    public func get(_ path: DocumentPath) async throws -> StoredDocument? { try await getAll([path])[0] }

    public func getAll(_ paths: [DocumentPath]) async throws -> [StoredDocument?] { try await engine.getAll(paths) }

    public func query(_ spec: QuerySpec) async throws -> [StoredDocument] { try await engine.query(spec) }

    public func count(_ spec: QuerySpec) async throws -> Int { try await engine.count(spec) }

    /// Runs a query and reports what it read: the indexes its plan used, the index entries and
    /// documents it scanned (Firestore's Query Explain with `analyze`).
    public func profiledQuery(_ spec: QuerySpec) async throws -> (documents: [StoredDocument], profile: QueryProfile) {
        try await engine.profiledQuery(spec)
    }

    /// The indexes a query's plan would read, without running it (Query Explain's default).
    public func planSummary(_ spec: QuerySpec) async throws -> QueryProfile { try await engine.planSummary(spec) }

    /// Commits writes atomically (any number; at most 500 field transforms on one document), with
    /// the tasks in `enqueues`.
    @discardableResult
    public func commit(_ writes: [DocumentWrite], validations: [ReadValidation] = [], enqueues: [TaskEnqueue] = []) async throws -> CommitResult {
        try await engine.commit(writes, validations: validations, enqueues: enqueues).0
    }

    /// The same commit, answered through `done` (on the store's writer thread, right after the
    /// COMMIT) instead of by resuming a task: for a caller whose answer is a message to send, such
    /// as a unit's commit read from its worker's socket. `done` must not block.
    public func commit(_ writes: [DocumentWrite], enqueues: [TaskEnqueue] = [],
                       done: @escaping @Sendable (Result<CommitResult, any Error>) -> Void) {
        engine.commit(writes, validations: [], enqueues: enqueues) { done($0.map(\.0)) }
    }

    /// Runs `body` as a serializable transaction: its reads lock documents, its writes are buffered
    /// and committed together when it returns. On a conflict it is run again, up to `maxAttempts`
    /// times in all, then fails with `aborted`. Errors `body` throws roll it back and are rethrown.
    public func runTransaction<T: Sendable>(maxAttempts: Int = 5, owner: UInt64? = nil,
                                            _ body: (StoreTransaction) async throws -> T) async throws -> T {
        var lastError: Error = HTTPSError(.aborted, "transaction aborted")
        for _ in 0..<max(1, maxAttempts) {
            let txn = transactions.begin(owner: owner)
            let transaction = StoreTransaction(id: txn, manager: transactions)
            do {
                let value = try await body(transaction)
                _ = try await transactions.commit(txn, transaction.takeWrites())
                return value
            } catch let error as HTTPSError where error.code == .aborted {
                transactions.rollback(txn)
                lastError = error
                continue
            } catch {
                transactions.rollback(txn)
                throw error
            }
        }
        throw HTTPSError(.aborted, "transaction failed after \(maxAttempts) attempts: \((lastError as? HTTPSError)?.message ?? "\(lastError)")")
    }

    /// Deletes a document or collection and everything beneath it, at any depth, in commits of at
    /// most `batchSize` documents. Each batch is an ordinary commit (document triggers see every
    /// deletion), and running it again after a crash half-way finishes the job. Returns the number
    /// of documents deleted.
    @discardableResult
    public func recursiveDelete(_ path: [String], batchSize: Int = 500) async throws -> Int {
        guard !path.isEmpty else { throw HTTPSError(.invalidArgument, "recursive delete needs a path") }
        // Each segment is one id: a slash inside a segment would silently name another path.
        guard try PathRules.segments(path.joined(separator: "/"), document: nil) == path else {
            throw HTTPSError(.invalidArgument, "invalid path segments \(path): a segment cannot contain '/'")
        }
        var deleted = 0
        var size = max(1, min(batchSize, 500))
        while true {
            let batch = try await engine.documents(under: path, limit: size)
            if batch.isEmpty { return deleted }
            do {
                try await commit(batch.map { .delete($0) })
            } catch let error as HTTPSError where error.message == Writer.transactionTooBig && batch.count > 1 {
                // Large documents: a batch replacing more than a commit may is halved, as Firebase's
                // own batch deleters do against "Transaction too big", down to one document.
                size = max(1, batch.count / 2)
                continue
            }
            deleted += batch.count
        }
    }

    public func listCollections(under parent: DocumentPath?) async throws -> [CollectionPath] {
        try await engine.listCollections(under: parent)
    }

    public func listDocuments(in collection: CollectionPath) async throws -> [DocumentListing] {
        try await engine.listDocuments(in: collection)
    }

    /// The names of the documents a query without filters or cursors targets, in name order.
    public func documentNames(_ spec: QuerySpec) async throws -> [DocumentPath] {
        try await engine.documentNames(spec)
    }

    public func close() {
        transactions.stopExpiring()
        engine.close()
    }
}

/// A transaction in progress, handed to `runTransaction`'s body: read first, then write.
public final class StoreTransaction: Sendable {
    public let id: UInt64
    let manager: TransactionManager
    private let writes = Mutex<(list: [DocumentWrite], wrote: Bool)>(([], false))

    init(id: UInt64, manager: TransactionManager) {
        self.id = id
        self.manager = manager
    }

    public func get(_ path: DocumentPath) async throws -> StoredDocument? { try await getAll([path])[0] }

    public func getAll(_ paths: [DocumentPath]) async throws -> [StoredDocument?] {
        if writes.withLock({ $0.wrote }) { throw HTTPSError(.invalidArgument, "transactions must do all reads before any write") }
        return try await manager.get(id, paths)
    }

    public func query(_ spec: QuerySpec) async throws -> [StoredDocument] {
        if writes.withLock({ $0.wrote }) { throw HTTPSError(.invalidArgument, "transactions must do all reads before any write") }
        return try await manager.query(id, spec)
    }

    /// Buffers a write, committed with the transaction.
    public func write(_ write: DocumentWrite) {
        writes.withLock { w in
            w.list.append(write)
            w.wrote = true
        }
    }

    func takeWrites() -> [DocumentWrite] { writes.withLock { $0.list } }
}
