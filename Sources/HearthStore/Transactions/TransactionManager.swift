import HearthModel
import Synchronization

/// Interactive transactions (read, then write): what each open transaction read, its locks, and
/// its commit with those reads validated. Units drive transactions through this across the unit
/// boundary one message at a time; `DocumentStore.runTransaction` drives it in-process.
///
/// Serializability rests on two mechanisms: the lock table makes transactions that touch the same
/// documents wait for each other, and the commit re-checks every read document's update time and
/// re-runs every query, so a change slipped in by a plain (non-transactional) write aborts the
/// transaction rather than being overwritten.
public final class TransactionManager: Sendable {
    struct Open {
        var reads: [DocumentPath: Timestamp?] = [:]
        var queries: [(QuerySpec, [DocumentPath: Timestamp])] = []
        var lastActivity: Timestamp
        var owner: UInt64?
    }

    private let state = Mutex<(next: UInt64, open: [UInt64: Open])>((0, [:]))
    let locks = LockTable()
    let engine: any StorageEngine
    let clock: any Clock
    /// A transaction idle longer than this is rolled back and its locks released.
    public let idleTimeout: Duration

    init(engine: any StorageEngine, clock: any Clock, idleTimeout: Duration = .seconds(60)) {
        self.engine = engine
        self.clock = clock
        self.idleTimeout = idleTimeout
    }

    public var openCount: Int { state.withLock { $0.open.count } }

    /// Starts a transaction; `owner` ties it to an invocation so it can be rolled back with it.
    public func begin(owner: UInt64? = nil) -> UInt64 {
        let now = clock.now()
        let txn = state.withLock { s in
            s.next += 1
            s.open[s.next] = Open(lastActivity: now, owner: owner)
            return s.next
        }
        locks.begin(txn)
        return txn
    }

    private func touch(_ txn: UInt64) throws(HTTPSError) {
        let now = clock.now()
        let known = state.withLock { s -> Bool in
            guard s.open[txn] != nil else { return false }
            s.open[txn]!.lastActivity = now
            return true
        }
        if !known { throw HTTPSError(.failedPrecondition, "transaction \(txn) is not open (it committed, rolled back or expired)") }
    }

    /// Reads documents inside a transaction, locking each first (in path order, so two transactions
    /// reading the same set never deadlock).
    public func get(_ txn: UInt64, _ paths: [DocumentPath]) async throws -> [StoredDocument?] {
        try touch(txn)
        do {
            for path in Set(paths).sorted() { try await locks.acquire(path.description, for: txn) }
            // Waiting for locks is not idleness: record the activity, and refuse to read for a
            // transaction that ended meanwhile (the lock table takes no lock for it after that).
            try touch(txn)
        } catch {
            rollback(txn)
            throw error
        }
        let docs = try await engine.getAll(paths)
        state.withLock { s in
            for (path, doc) in zip(paths, docs) where s.open[txn]?.reads[path] == nil {
                s.open[txn]?.reads[path] = .some(doc?.updateTime)
            }
        }
        return docs
    }

    /// Runs a query inside a transaction: its result documents are locked, and the query is run
    /// again at commit to check its result has not changed.
    public func query(_ txn: UInt64, _ spec: QuerySpec) async throws -> [StoredDocument] {
        try touch(txn)
        let docs = try await engine.query(spec)
        do {
            for path in Set(docs.map(\.path)).sorted() { try await locks.acquire(path.description, for: txn) }
            try touch(txn)
        } catch {
            rollback(txn)
            throw error
        }
        let fresh = try await engine.query(spec)
        state.withLock { s in
            s.open[txn]?.queries.append((spec, Dictionary(fresh.map { ($0.path, $0.updateTime) }, uniquingKeysWith: { a, _ in a })))
        }
        return fresh
    }

    /// Commits the transaction's writes if nothing it read has changed; the transaction ends either way.
    public func commit(_ txn: UInt64, _ writes: [DocumentWrite], enqueues: [TaskEnqueue] = []) async throws -> CommitResult {
        try touch(txn)
        let open = state.withLock { $0.open[txn] }
        guard let open else { throw HTTPSError(.failedPrecondition, "transaction \(txn) is not open") }
        defer { rollback(txn) }
        var validations: [ReadValidation] = open.reads.map { .document($0.key, updateTime: $0.value) }
        validations += open.queries.map { .query($0.0, results: $0.1) }
        return try await engine.commit(writes, validations: validations, enqueues: enqueues).0
    }

    /// Ends a transaction without writing, releasing its locks. Unknown ids are ignored.
    public func rollback(_ txn: UInt64) {
        state.withLock { _ = $0.open.removeValue(forKey: txn) }
        locks.releaseAll(txn)
    }

    /// Rolls back every transaction an invocation left open (it finished, failed or timed out).
    public func rollbackAll(owner: UInt64) {
        let ids = state.withLock { s in s.open.filter { $0.value.owner == owner }.map(\.key) }
        for id in ids { rollback(id) }
    }

    /// Rolls back transactions idle longer than `idleTimeout`; returns how many.
    @discardableResult
    public func expireIdle() -> Int {
        let cutoff = clock.now() - idleTimeout
        let ids = state.withLock { s in s.open.filter { $0.value.lastActivity < cutoff }.map(\.key) }
        for id in ids { rollback(id) }
        return ids.count
    }
}
