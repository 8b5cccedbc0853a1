import Synchronization
import HearthModel

/// What a transaction read, checked again at its commit so that a conflicting change aborts it.
public enum ReadValidation: Sendable, Hashable {
    /// The document must still have this update time (nil: must still be absent).
    case document(DocumentPath, updateTime: Timestamp?)
    /// The query must still return exactly these documents at these update times.
    case query(QuerySpec, results: [DocumentPath: Timestamp])
}

/// The store's single writer: one connection, confined to this actor (the actor's serial executor),
/// through which every commit passes. SQLite allows one writer at a time anyway; serializing here
/// means commits never wait on SQLITE_BUSY and commit times and sequence numbers are assigned in
/// commit order.
actor Writer {
    /// The writer's own thread (see `WriterExecutor`).
    private nonisolated let executor = WriterExecutor(label: "hearth-writer")
    nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    let db: Connection
    let collections: CollectionRegistry
    let indexes: IndexRegistry
    let clock: any Clock
    /// The feed's end and the last commit time. Other processes sharing the file commit too, so
    /// both are read again inside each write transaction when `PRAGMA data_version` says so.
    private(set) var lastSequence: Int64 = 0
    private var lastCommitMicros: Int64 = 0
    /// `PRAGMA data_version` as this connection last saw it. "The integer values returned by two
    /// invocations of PRAGMA data_version from the same connection will be different if changes
    /// were committed to the database by any other connection in the interim" (its own commits do
    /// not change it): https://www.sqlite.org/pragma.html#pragma_data_version
    private var seenDataVersion: Int64 = 0
    /// Collection ids a transaction created or read, remembered by the registry once it commits.
    typealias LearnedCollections = [(CollectionPath, Int64)]
    /// Groups still to write with a savepoint per commit since a commit failed (`commitGroup`).
    private(set) var carefulGroups = 0
    static let carefulGroupsAfterFailure = 64
    /// The statements every commit runs, prepared once.
    private let hot: HotStatements
    /// Set by `close()`: every later write is refused with `StoreError.closed`, so nothing is written
    /// by a store its owner has given up (a runtime shutting down, a test's second opening).
    private let closed = Atomic<Bool>(false)

    nonisolated func close() { closed.store(true, ordering: .relaxed) }

    /// Runs `body` on the writer's thread, isolated to the writer, without a task: the group
    /// commit's drain (`CommitQueue`) answers its callers from there.
    nonisolated func onWriterThread(_ body: @escaping @Sendable (isolated Writer) -> Void) {
        executor.run { self.assumeIsolated { body($0) } }
    }

    /// Runs `body` isolated to the writer on the calling thread when the writer is idle (see
    /// `WriterExecutor.runHereIfIdle`); false, with nothing run, otherwise.
    nonisolated func onThisThreadIfIdle(_ body: @Sendable (isolated Writer) -> Void) -> Bool {
        executor.runHereIfIdle { self.assumeIsolated { body($0) } }
    }

    /// Whether the writer's thread has nothing queued or running (for tests).
    nonisolated var isIdle: Bool { executor.isIdle }

    private func ensureOpen() throws {
        if closed.load(ordering: .relaxed) { throw StoreError.closed }
    }

    struct HotStatements {
        let select, insert, replace, delete, change, indexInsert, indexDelete: Statement

        init(_ db: Connection) throws {
            select = try db.prepare("SELECT data, create_time, update_time FROM documents WHERE collection = ? AND id = ?")
            insert = try db.prepare("INSERT INTO documents(collection, id, data, create_time, update_time) VALUES (?, ?, ?, ?, ?)")
            replace = try db.prepare("INSERT OR REPLACE INTO documents(collection, id, data, create_time, update_time) VALUES (?, ?, ?, ?, ?)")
            delete = try db.prepare("DELETE FROM documents WHERE collection = ? AND id = ?")
            change = try db.prepare("INSERT INTO changes(seq, commit_time, path, kind, before, after) VALUES (?, ?, ?, ?, ?, ?)")
            indexInsert = try db.prepare(IndexEntries.insertSQL)
            indexDelete = try db.prepare("DELETE FROM field_index WHERE collection = ? AND field = ? AND element = ? AND value = ? AND id = ?")
        }
    }

    /// Firestore's one limit on what a commit holds (https://cloud.google.com/firestore/quotas):
    /// at most 500 field transforms on any one document. The number of writes is not limited:
    /// Firestore dropped its 500, and bounds a request by its size (10 MiB) instead.
    static let maxTransformsPerDocument = 500

    /// The most bytes of existing documents one commit may replace or delete: a bound on what the
    /// writer holds in memory and writes to the feed for one commit. Without a count of writes, a
    /// 10 MiB request of deletes could otherwise name 150,000 documents of up to 1 MiB each.
    /// Firestore bounds a transaction's size too, with the message used here.
    static let maxReplacedBytes = 128 << 20
    static let transactionTooBig = "Transaction too big. Decrease transaction size."

    /// Why `writes` cannot be one commit, or nil.
    static func limitProblem(_ writes: [DocumentWrite]) -> HTTPSError? {
        var total = 0
        for write in writes { total += write.transforms.count }
        guard total > maxTransformsPerDocument else { return nil }
        var perDocument: [DocumentPath: Int] = [:]
        for write in writes where !write.transforms.isEmpty {
            let n = perDocument[write.path, default: 0] + write.transforms.count
            if n > maxTransformsPerDocument {
                return .invalidArgument("a commit may apply at most \(maxTransformsPerDocument) field transforms to one document (\(write.path) has \(n) or more)")
            }
            perDocument[write.path] = n
        }
        return nil
    }

    init(path: String, synchronous: String, collections: CollectionRegistry, indexes: IndexRegistry, clock: any Clock) throws {
        // With FULL or EXTRA, SQLite may split a commit's last frame around a sync, and the buffer
        // would hold its end until the next commit: the writer's WAL is buffered with NORMAL and
        // OFF only.
        let buffered = ["NORMAL", "OFF"].contains(synchronous.uppercased())
        db = try Connection(path: path, options: Connection.Options(synchronous: synchronous, bufferedWAL: buffered))
        try Schema.migrate(db)
        // The WAL is open once the connection has read the database. Should the buffer not start
        // (no memory for it, or an SQLite release other than the one the buffer was checked
        // against), the writer writes its frames as SQLite does, unbuffered.
        if buffered { _ = db.startBufferedWAL() }
        // The version first: anything another process commits after this read changes it, so the
        // first write transaction reloads what the reads below might have missed.
        seenDataVersion = try db.scalarInt("PRAGMA data_version") ?? 0
        try indexes.load(db)
        hot = try HotStatements(db)
        self.collections = collections
        self.indexes = indexes
        self.clock = clock
        (lastSequence, lastCommitMicros) = try Writer.feedEnd(db)
    }

    /// The feed's last sequence and commit time, or the high-water mark pruning recorded when it
    /// emptied the feed (commit times rise with sequences, so the last row has the latest time).
    static func feedEnd(_ db: Connection) throws -> (sequence: Int64, commitMicros: Int64) {
        let saved = try db.query("SELECT last_sequence, last_commit_time FROM feed_state WHERE id = 1") { ($0.int64(0), $0.int64(1)) }.first
        let last = try db.query("SELECT seq, commit_time FROM changes ORDER BY seq DESC LIMIT 1") { ($0.int64(0), $0.int64(1)) }.first
        return (max(last?.0 ?? 0, saved?.0 ?? 0), max(last?.1 ?? 0, saved?.1 ?? 0))
    }

    /// Runs `body` in a write transaction, first taking in what other connections (other processes
    /// on the same file: `hearth serve` and CLI commands) committed since this writer's last
    /// transaction: the feed's end, so sequences and commit times continue theirs, and the index
    /// registry, so this writer maintains every index another process built. Holding the write
    /// lock, nobody else can commit until this transaction ends.
    private func transaction<T>(_ body: () throws -> T) throws -> T {
        try db.transaction {
            let version = try db.scalarInt("PRAGMA data_version") ?? 0
            if version != seenDataVersion {
                seenDataVersion = version
                let (sequence, commitMicros) = try Writer.feedEnd(db)
                lastSequence = max(lastSequence, sequence)
                lastCommitMicros = max(lastCommitMicros, commitMicros)
                try indexes.load(db)
            }
            return try body()
        }
    }

    /// A commit time strictly after the previous one, in microseconds.
    private func nextCommitTime() -> Timestamp {
        let now = RowEncoding.micros(clock.now())
        lastCommitMicros = max(now, lastCommitMicros + 1)
        return RowEncoding.time(lastCommitMicros)
    }

    /// A document's state while a commit is being built.
    private struct Pending {
        var collection: Int64?
        var original: StoredDocument?
        /// The original's stored bytes, reused for its change-feed entry.
        var originalBytes: [UInt8]?
        var fields: [String: Value]?
        var updateTime: Timestamp?
        /// Not read before a create: the insert itself fails if the document exists.
        var unread = false
    }

    /// One caller's commit, as `commitGroup` takes it.
    struct CommitJob: Sendable {
        var writes: [DocumentWrite]
        var validations: [ReadValidation]
        var enqueues: [TaskEnqueue]

        /// Small enough to commit on the caller's thread (one of Swift's pool threads) when the
        /// writer is idle: 16 writes, enqueues and document checks at most, and no query to run
        /// again. A larger batch, or a transaction that read a query, goes to the writer's thread
        /// so it never holds the pool for long.
        var mayRunHere: Bool {
            writes.count + enqueues.count + validations.count <= 16
                && !validations.contains { if case .query = $0 { true } else { false } }
        }
    }

    typealias CommitOutcome = Result<(CommitResult, [DocumentChange]), any Error>

    /// Applies `writes` atomically after checking `validations`; returns the result and the changes
    /// it appended to the feed (one per document whose contents changed).
    func commit(_ writes: [DocumentWrite], validations: [ReadValidation] = [], enqueues: [TaskEnqueue] = []) throws -> (CommitResult, [DocumentChange]) {
        try committing { learnedCollections in
            try apply(CommitJob(writes: writes, validations: validations, enqueues: enqueues), learnedCollections: &learnedCollections)
        }
    }

    /// Commits several callers' commits in one SQLite transaction (group commit: one BEGIN, one
    /// COMMIT and one WAL append for all of them), in order: a commit that fails (a precondition,
    /// a conflict, a bad value) is rolled back alone and the others stand. Each sees the ones
    /// before it, as if they had committed one by one, and gets its own commit time and feed
    /// sequences. Nothing is answered before the COMMIT: a failing COMMIT fails them all.
    ///
    /// Commits rarely fail, so a group is first written without savepoints: a savepoint makes
    /// SQLite copy every page a commit touches into its statement journal, and the commits of a
    /// group all touch the same last page of the feed. Should one fail, that transaction is rolled
    /// back whole and the group written again with a savepoint per commit, which undoes the failed
    /// one alone. Groups then go straight to savepoints until `carefulGroupsAfterFailure` in a row
    /// have had no failure, so a load where commits keep failing does not pay for each group twice.
    func commitGroup(_ jobs: [CommitJob]) throws -> [CommitOutcome] {
        // A commit over a limit fails however it is written: straight to savepoints.
        if carefulGroups == 0, jobs.allSatisfy({ Writer.limitProblem($0.writes) == nil }) {
            var commitFailed = false
            do {
                return try committing { learnedCollections in
                    try jobs.map { job -> CommitOutcome in
                        do { return .success(try apply(job, learnedCollections: &learnedCollections)) } catch {
                            commitFailed = true
                            throw error
                        }
                    }
                }
            } catch where commitFailed {
                carefulGroups = Writer.carefulGroupsAfterFailure
            }
        } else {
            carefulGroups = max(0, carefulGroups - 1)
        }
        return try committing { learnedCollections in
            var outcomes: [CommitOutcome] = []
            outcomes.reserveCapacity(jobs.count)
            for job in jobs {
                var mine: LearnedCollections = []
                try db.run("SAVEPOINT commit_job")
                do {
                    let outcome = try apply(job, learnedCollections: &mine)
                    try db.run("RELEASE commit_job")
                    learnedCollections += mine
                    outcomes.append(.success(outcome))
                } catch {
                    // SQLite may have rolled the whole transaction back itself (a full disk, an I/O
                    // error): then that error fails the group, not the missing savepoint's.
                    guard db.isInTransaction else { throw error }
                    try db.run("ROLLBACK TO commit_job")
                    try db.run("RELEASE commit_job")
                    outcomes.append(.failure(error))
                    carefulGroups = Writer.carefulGroupsAfterFailure  // failures go on: stay careful
                }
            }
            return outcomes
        }
    }

    /// Runs `body` in a write transaction, then remembers the collection ids it created or read
    /// (`CollectionRegistry` caches none inside a write transaction). When the
    /// transaction fails (a commit's error, or a failed COMMIT after changes were numbered), the
    /// feed's end goes back to where it was, and is read again from the database next time: this
    /// transaction may have read it from another process's commits.
    private func committing<T>(_ body: (inout LearnedCollections) throws -> T) throws -> T {
        try ensureOpen()
        var learnedCollections: LearnedCollections = []
        let startSequence = lastSequence
        let result: T
        do {
            result = try transaction { try body(&learnedCollections) }
        } catch {
            lastSequence = startSequence
            seenDataVersion = -1
            throw error
        }
        for (path, id) in learnedCollections { collections.remember(path, id: id) }
        return result
    }

    /// One commit inside the open transaction; moves `lastSequence` past its changes.
    private func apply(_ job: CommitJob, learnedCollections: inout LearnedCollections) throws -> (CommitResult, [DocumentChange]) {
        let writes = job.writes, validations = job.validations, enqueues = job.enqueues
        if let problem = Writer.limitProblem(writes) { throw problem }
        var changes: [DocumentChange] = []
        var sequence: Int64 = 0
        let result: CommitResult = try {
            let commitTime = nextCommitTime()
            sequence = lastSequence
            for validation in validations { try check(validation, learned: &learnedCollections) }
            // Sized at creation: a dictionary's `reserveCapacity` is not inlinable and runs unspecialized.
            var pending = [DocumentPath: Pending](minimumCapacity: writes.count)
            var order: [DocumentPath] = []
            var transformResults: [[Value]] = []
            // Collection ids looked up in this commit (a batch usually writes into one collection).
            var collectionIDs: [UTF8Key: Int64?] = [:]
            func collectionID(_ path: DocumentPath) throws -> Int64? {
                // Looked up by the collection's slash path: its segments are built only on a miss.
                let key = UTF8Key(path.collectionDescription)
                if let known = collectionIDs[key] { return known }
                let id = try self.collectionID(path.collection, learned: &learnedCollections)
                collectionIDs[key] = id
                return id
            }
            var replacedBytes = 0
            for write in writes {
                var state: Pending
                if var existing = pending[write.path] {
                    if existing.unread {
                        // A later write to a document created blind: the create's precondition is
                        // checked now, as the final state may no longer be an insert that fails.
                        if try load(write.path, learned: &learnedCollections).original != nil {
                            throw HTTPSError(.alreadyExists, "Document already exists: \(write.path)")
                        }
                        existing.unread = false
                    }
                    state = existing
                } else if write.precondition == .exists(false), case .update(_, nil) = write.operation {
                    // A create needs no read: the document must be absent, and the insert fails if not.
                    state = Pending(collection: try collectionID(write.path), unread: true)
                    order.append(write.path)
                } else {
                    state = try load(write.path, learned: &learnedCollections)
                    order.append(write.path)
                    replacedBytes += state.originalBytes?.count ?? 0
                    if replacedBytes > Writer.maxReplacedBytes { throw HTTPSError(.invalidArgument, Writer.transactionTooBig) }
                }
                let outcome = try WriteApplication.apply(write, to: state.fields, updateTime: state.updateTime, commitTime: commitTime)
                state.fields = try outcome.fields.map { fields throws in try WriteApplication.validate(fields, path: write.path) }
                state.updateTime = state.fields == nil ? nil : commitTime
                pending[write.path] = state
                transformResults.append(outcome.transformResults)
            }
            var finalTimes: [DocumentPath: Timestamp?] = [:]
            for path in order {
                let state = pending[path]!
                let change = try persist(path, state, commitTime: commitTime, learnedCollections: &learnedCollections)
                finalTimes[path] = state.fields == nil ? nil : (change == nil ? state.original?.updateTime : commitTime)
                if let (change, afterBytes) = change {
                    sequence += 1
                    let record = DocumentChange(sequence: sequence, commitTime: commitTime, path: path, kind: change,
                                                before: state.original,
                                                after: state.fields.map { StoredDocument(path: path, fields: $0, createTime: state.original?.createTime ?? commitTime, updateTime: commitTime) })
                    try append(record, beforeBytes: state.originalBytes, afterBytes: afterBytes)
                    changes.append(record)
                }
            }
            for task in enqueues { try SQLiteDeliveries.insertTask(db, task, payload: task.delivery.event.wireBytes, now: commitTime) }
            let results = zip(writes, transformResults).map { write, transforms in
                WriteResult(updateTime: finalTimes[write.path] ?? nil, transformResults: transforms)
            }
            return CommitResult(commitTime: commitTime, writeResults: results)
        }()
        lastSequence = sequence
        return (result, changes)
    }

    /// The id of `collection` (nil: it never held a document). The registry caches nothing read
    /// inside this transaction (it may be a row an earlier commit of the group inserted, which a
    /// rollback removes): an id it did not answer goes to `learned`, remembered once the
    /// transaction commits.
    private func collectionID(_ collection: CollectionPath, learned: inout LearnedCollections) throws -> Int64? {
        let (id, cached) = try collections.lookup(collection, on: db)
        if let id, !cached { learned.append((collection, id)) }
        return id
    }

    /// A document as stored, for a write to apply to (its collection's id through `collectionID`).
    private func load(_ path: DocumentPath, learned: inout LearnedCollections) throws -> Pending {
        guard let collection = try collectionID(path.collection, learned: &learned) else { return Pending() }
        let s = hot.select
        s.reset()
        defer { s.reset() }
        try s.bind([.integer(collection), .text(path.id)])
        guard try s.step() else { return Pending(collection: collection) }
        let bytes = s.blob(0)
        let fields = try bytes.withUnsafeBufferPointer { try RowEncoding.decodeFields($0) }
        let doc = StoredDocument(path: path, fields: fields, createTime: RowEncoding.time(s.int64(1)), updateTime: RowEncoding.time(s.int64(2)))
        return Pending(collection: collection, original: doc, originalBytes: bytes, fields: fields, updateTime: doc.updateTime)
    }

    /// Writes a document's final state of this commit; returns the change kind and the stored bytes
    /// of the new state, or nil when nothing changed.
    private func persist(_ path: DocumentPath, _ state: Pending, commitTime: Timestamp,
                         learnedCollections: inout LearnedCollections) throws -> (ChangeKind, [UInt8]?)? {
        let indexed = indexes.indexed(path.collectionID)
        switch (state.original, state.fields) {
        case (nil, nil):
            return nil
        case (let original?, nil):
            try db.run(hot.delete, [.integer(state.collection!), .text(path.id)])
            try removeIndex(IndexEntries.of(original.fields, indexed: indexed), collection: state.collection!, id: path.id)
            return (.deleted, nil)
        case (let original, let fields?):
            if let original, Value.map(original.fields) == .map(fields) { return nil }  // field names by their bytes
            var collection = state.collection
            if collection == nil {
                let id = try collections.idCreating(path.collection, on: db)
                learnedCollections.append((path.collection, id))
                collection = id
            }
            let data = RowEncoding.encodeFields(fields)
            guard data.count <= DocumentLimits.maxDocumentBytes else {
                throw HTTPSError(.invalidArgument, "document \(path) would be \(data.count) bytes, more than the limit of \(DocumentLimits.maxDocumentBytes)")
            }
            let created = original?.createTime ?? commitTime
            let values: [SQLiteValue] = [.integer(collection!), .text(path.id), .blob(data), .integer(RowEncoding.micros(created)), .integer(RowEncoding.micros(commitTime))]
            if state.unread {
                do {
                    try db.run(hot.insert, values)
                } catch {
                    // `db.run` throws SQLiteError only; a primary-key clash means the document exists.
                    if error.code == SQLiteError.constraint { throw HTTPSError(.alreadyExists, "Document already exists: \(path)") }
                    throw error
                }
            } else {
                try db.run(hot.replace, values)
            }
            let newEntries = IndexEntries.of(fields, indexed: indexed)
            if let original {
                let old = Set(IndexEntries.of(original.fields, indexed: indexed))
                let new = Set(newEntries)
                try removeIndex(old.subtracting(new), collection: collection!, id: path.id)
                try insertIndex(new.subtracting(old), collection: collection!, id: path.id)
                return (.updated, data)
            }
            try insertIndex(newEntries, collection: collection!, id: path.id)
            return (.created, data)
        }
    }

    /// Builds the index of `fields` in every collection named `collectionID`, from the documents
    /// already there, and registers it so every later write keeps it current.
    func ensureIndexes(_ fields: Set<String>, collectionID: String) throws {
        try ensureOpen()
        let parsed = Dictionary(uniqueKeysWithValues: try fields.map { (UTF8Key($0), try FieldPath($0)) })
        var built: Set<String> = []
        try transaction {
            // Known only now: another process may have built some of them meanwhile.
            let missing = indexes.missing(fields, in: collectionID)
            guard !missing.isEmpty else { return }
            built = missing
            let parsed = parsed.filter { missing.contains($0.key.string) }
            for field in missing {
                try db.run("INSERT OR IGNORE INTO indexed_fields(collection_id, field) VALUES (?, ?)", [.text(collectionID), .text(field)])
            }
            let targets = try db.query("SELECT id FROM collections WHERE collection_id = ?", [.text(collectionID)]) { $0.int64(0) }
            for collection in targets {
                let rows = try db.query("SELECT id, data FROM documents WHERE collection = ?", [.integer(collection)]) { ($0.text(0), $0.blob(1)) }
                for (id, data) in rows {
                    let fields = try data.withUnsafeBufferPointer { try RowEncoding.decodeFields($0) }
                    try insertIndex(IndexEntries.of(fields, indexed: parsed), collection: collection, id: id)
                }
            }
        }
        indexes.add(built, to: collectionID)
    }

    private func insertIndex<S: Sequence>(_ entries: S, collection: Int64, id: String) throws where S.Element == IndexEntry {
        try runIndex(hot.indexInsert, entries, collection: collection, id: id)
    }

    private func removeIndex<S: Sequence>(_ entries: S, collection: Int64, id: String) throws where S.Element == IndexEntry {
        try runIndex(hot.indexDelete, entries, collection: collection, id: id)
    }

    /// Runs an index row statement (insert or delete: both bind the same columns) once per entry.
    private func runIndex<S: Sequence>(_ s: Statement, _ entries: S, collection: Int64, id: String) throws where S.Element == IndexEntry {
        for e in entries {
            s.reset()
            try s.bind([.integer(collection), .text(e.field), .integer(e.element ? 1 : 0), .blob(e.key), .text(id)])
            _ = try s.step()
        }
        s.reset()
    }

    /// Appends a change, reusing the documents' already-encoded fields.
    private func append(_ change: DocumentChange, beforeBytes: [UInt8]?, afterBytes: [UInt8]?) throws {
        func encoded(_ doc: StoredDocument?, _ bytes: [UInt8]?) -> SQLiteValue {
            guard let doc else { return .null }
            if let bytes { return .blob(RowEncoding.encodeDocument(fieldsBytes: bytes, createTime: doc.createTime, updateTime: doc.updateTime)) }
            return .blob(RowEncoding.encodeDocument(doc))
        }
        try db.run(hot.change, [
            .integer(change.sequence), .integer(RowEncoding.micros(change.commitTime)), .text(change.path.description),
            .integer(change.kind.code), encoded(change.before, beforeBytes), encoded(change.after, afterBytes),
        ])
    }

    private func check(_ validation: ReadValidation, learned: inout LearnedCollections) throws {
        switch validation {
        case .document(let path, let expected):
            let current = try load(path, learned: &learned).original?.updateTime
            if current != expected {
                throw HTTPSError(.aborted, "transaction conflict: \(path) changed since it was read")
            }
        case .query(let spec, let expected):
            let now = try QueryEngine(db: db, collections: collections).run(spec)
            let current = Dictionary(now.map { ($0.path, $0.updateTime) }, uniquingKeysWith: { a, _ in a })
            if current != expected {
                throw HTTPSError(.aborted, "transaction conflict: the results of a query on \(spec.scopeDescription) changed since it ran")
            }
        }
    }

    /// Runs `body` with the writer's connection inside a write transaction (for the store's own
    /// maintenance: pruning, recursive deletes, cursors).
    func withTransaction<T: Sendable>(_ body: (Connection) throws -> T) throws -> T {
        try ensureOpen()
        return try transaction { try body(db) }
    }

    /// Hands this connection's WAL checkpoints to `checkpointer` (see `Checkpointer`), kept as long
    /// as the connection whose hook points at it.
    func attach(_ checkpointer: Checkpointer) {
        self.checkpointer = checkpointer
        checkpointer.attach(to: db)
    }

    private var checkpointer: Checkpointer?

    /// What the writer's WAL buffer did (`Connection.bufferedWALCounts`); nil when its WAL is not
    /// buffered.
    var bufferedWALCounts: (writes: Int, flushes: Int, late: Int, headerRewrites: Int)? { db.bufferedWALCounts }

    func checkpoint() throws {
        try ensureOpen()
        try db.execute("PRAGMA wal_checkpoint(PASSIVE)")
    }
}
