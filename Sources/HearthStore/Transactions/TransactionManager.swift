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

    private let state = Mutex<[UInt64: Open]>([:])
    let locks = LockTable()
    let engine: any StorageEngine
    let clock: any Clock
    /// Transaction ids come from here.
    let random: any RandomSource
    /// Changes whenever a transaction begins or ends.
    public let changes = Changes()
    /// A transaction idle longer than this is rolled back and its locks released.
    public let idleTimeout: Duration
    /// Wakes the idle sweeper when a transaction begins (it sleeps while none is open).
    private let began: AsyncStream<Void>.Continuation
    private let beginnings: AsyncStream<Void>
    private let sweeper = Mutex<Task<Void, Never>?>(nil)

    init(engine: any StorageEngine, clock: any Clock, random: any RandomSource, idleTimeout: Duration = .seconds(60)) {
        self.engine = engine
        self.clock = clock
        self.random = random
        self.idleTimeout = idleTimeout
        (beginnings, began) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    public var openCount: Int { state.withLock { $0.count } }

    /// Whether `txn` is still open (not committed, rolled back or expired).
    public func isOpen(_ txn: UInt64) -> Bool { state.withLock { $0[txn] != nil } }

    /// Starts a transaction; `owner` ties it to an invocation: only calls on that invocation's
    /// behalf may use it, and it is rolled back when the invocation ends. Ids are random 64-bit
    /// numbers, so one cannot be guessed from another.
    public func begin(owner: UInt64? = nil) -> UInt64 {
        let now = clock.now()
        let txn = state.withLock { open in
            var id: UInt64
            repeat { id = random.next() } while id == 0 || open[id] != nil
            open[id] = Open(lastActivity: now, owner: owner)
            return id
        }
        locks.begin(txn)
        began.yield()
        changes.changed()
        return txn
    }

    /// Records activity on `txn` on behalf of `caller` (an invocation, nil in-process). A
    /// transaction that is not open, or belongs to another invocation, is "not open" alike.
    private func touch(_ txn: UInt64, caller: UInt64?) throws(HTTPSError) {
        let now = clock.now()
        let known = state.withLock { open -> Bool in
            guard let t = open[txn], caller == nil || t.owner == caller else { return false }
            open[txn]!.lastActivity = now
            return true
        }
        if !known { throw TransactionManager.notOpen(txn) }
    }

    /// Checks that `txn` is open and `caller`'s, and records the activity (a request that names
    /// the transaction without reading through it, such as a query that is only planned).
    public func check(_ txn: UInt64, caller: UInt64? = nil) throws(HTTPSError) { try touch(txn, caller: caller) }

    /// Reads documents inside a transaction, locking each first (in path order, so two transactions
    /// reading the same set never deadlock).
    public func get(_ txn: UInt64, _ paths: [DocumentPath], caller: UInt64? = nil) async throws -> [StoredDocument?] {
        try touch(txn, caller: caller)
        do {
            for path in Set(paths).sorted() { try await locks.acquire(path.description, for: txn) }
            // Waiting for locks is not idleness: record the activity, and refuse to read for a
            // transaction that ended meanwhile (the lock table takes no lock for it after that).
            try touch(txn, caller: caller)
        } catch {
            rollback(txn)
            throw error
        }
        let docs = try await engine.getAll(paths)
        state.withLock { open in
            for (path, doc) in zip(paths, docs) where open[txn]?.reads[path] == nil {
                open[txn]?.reads[path] = .some(doc?.updateTime)
            }
        }
        return docs
    }

    /// Runs a query inside a transaction: its result documents are locked, and the query is run
    /// again at commit to check its result has not changed.
    public func query(_ txn: UInt64, _ spec: QuerySpec, caller: UInt64? = nil) async throws -> [StoredDocument] {
        try await query(txn, spec, caller: caller, profiled: false).documents
    }

    /// `query`, also reporting what its final run read when `profiled` (Query Explain with
    /// `analyze` in a transaction).
    public func query(_ txn: UInt64, _ spec: QuerySpec, caller: UInt64? = nil, profiled: Bool) async throws -> (documents: [StoredDocument], profile: QueryProfile?) {
        try touch(txn, caller: caller)
        let docs = try await engine.query(spec)
        do {
            for path in Set(docs.map(\.path)).sorted() { try await locks.acquire(path.description, for: txn) }
            try touch(txn, caller: caller)
        } catch {
            rollback(txn)
            throw error
        }
        let (fresh, profile) = profiled ? try await engine.profiledQuery(spec) : (try await engine.query(spec), nil)
        state.withLock { open in
            open[txn]?.queries.append((spec, Dictionary(fresh.map { ($0.path, $0.updateTime) }, uniquingKeysWith: { a, _ in a })))
        }
        return (fresh, profile)
    }

    /// A transaction that ended (committed, rolled back, expired when idle) or is another caller's,
    /// in Firestore's words and status: its clients retry a transaction on an INVALID_ARGUMENT that
    /// says "transaction has expired" (nodejs-firestore, java-firestore).
    static func notOpen(_ txn: UInt64) -> HTTPSError {
        HTTPSError(.invalidArgument, "The referenced transaction has expired or is no longer valid (transaction \(txn) is not open: it committed, rolled back or expired).")
    }

    /// Commits the transaction's writes if nothing it read has changed; the transaction ends either way.
    public func commit(_ txn: UInt64, _ writes: [DocumentWrite], enqueues: [TaskEnqueue] = [], caller: UInt64? = nil) async throws -> CommitResult {
        try touch(txn, caller: caller)
        let open = state.withLock { $0[txn] }
        guard let open else { throw TransactionManager.notOpen(txn) }
        defer { rollback(txn) }
        var validations: [ReadValidation] = open.reads.map { .document($0.key, updateTime: $0.value) }
        validations += open.queries.map { .query($0.0, results: $0.1) }
        return try await engine.commit(writes, validations: validations, enqueues: enqueues).0
    }

    /// Ends a transaction without writing, releasing its locks. Unknown ids (and, with `caller`,
    /// another invocation's transactions) are ignored.
    public func rollback(_ txn: UInt64, caller: UInt64? = nil) {
        let ended = state.withLock { open -> Bool in
            guard let t = open[txn], caller == nil || t.owner == caller else { return false }
            open.removeValue(forKey: txn)
            return true
        }
        if ended || caller == nil { locks.releaseAll(txn) }
        if ended { changes.changed() }
    }

    /// Rolls back every transaction an invocation left open (it finished, failed or timed out).
    public func rollbackAll(owner: UInt64) {
        // Runs at the end of every invocation, almost always with none of the invocation's open:
        // the ids are collected without a filtered copy of the table (Dictionary.filter allocates
        // and clears one), and an empty result allocates nothing.
        let ids = state.withLock { open in open.compactMap { $0.value.owner == owner ? $0.key : nil } }
        for id in ids { rollback(id) }
    }

    /// Rolls back transactions idle longer than `idleTimeout`; returns how many.
    @discardableResult
    public func expireIdle() -> Int {
        let cutoff = clock.now() - idleTimeout
        let ids = state.withLock { open in open.filter { $0.value.lastActivity < cutoff }.map(\.key) }
        for id in ids { rollback(id) }
        return ids.count
    }

    /// When the transaction idle longest expires, nil when none is open.
    var nextExpiry: Timestamp? { state.withLock { $0.values.map(\.lastActivity).min() }.map { $0 + idleTimeout } }

    /// Starts rolling back idle transactions as they expire, on the manager's clock (a
    /// `ManualClock` in tests): it sleeps until the next expiry, or while no transaction is open.
    public func startExpiring() {
        sweeper.withLock { task in
            guard task == nil else { return }
            // Holds the manager only between waits, so an unclosed store can still go away.
            task = Task { [weak self, beginnings, clock] in
                var wakeups = beginnings.makeAsyncIterator()
                while !Task.isCancelled {
                    guard let next = self.map({ $0.nextExpiry }) else { return }
                    if let next {
                        do { try await clock.sleep(until: next) } catch { return }
                        self?.expireIdle()
                    } else if await wakeups.next() == nil {
                        return
                    }
                }
            }
        }
    }

    /// Stops the idle sweeper (the store is closing).
    public func stopExpiring() {
        sweeper.withLock { $0?.cancel(); $0 = nil }
        began.finish()
    }
}
