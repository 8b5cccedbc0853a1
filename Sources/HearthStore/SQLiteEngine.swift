import Foundation
import HearthModel

/// The embedded engine: one SQLite database in WAL mode, a single writer (an actor) and a pool of
/// readers. See `Schema` for the tables and `QueryEngine` for how queries use the field index.
public final class SQLiteEngine: StorageEngine {
    public struct Options: Sendable {
        public enum Synchronous: String, Sendable { case off = "OFF", normal = "NORMAL", full = "FULL" }
        /// NORMAL survives a process crash; FULL also survives power loss (and costs an fsync per commit).
        public var synchronous: Synchronous = .normal
        /// Idle reader connections kept open.
        public var readers: Int = 4
        /// WAL checkpoints on a thread of their own instead of inside the commit that fills the
        /// WAL (see `Checkpointer`); false: SQLite's automatic checkpoint.
        public var backgroundCheckpoints = true
        /// The WAL's size in pages at which the checkpoint thread is asked (tests set it lower).
        var checkpointThreshold: Int32 = Checkpointer.defaultThreshold

        public init(synchronous: Synchronous = .normal, readers: Int = 4, backgroundCheckpoints: Bool = true) {
            self.synchronous = synchronous
            self.readers = readers
            self.backgroundCheckpoints = backgroundCheckpoints
        }
    }

    public let path: String
    let writer: Writer
    /// Runs WAL checkpoints off the writer's path (nil: SQLite's automatic checkpoint).
    let checkpointer: Checkpointer?
    let readers: ReaderPool
    let collections = CollectionRegistry()
    let indexes = IndexRegistry()
    let notifier: ChangeNotifier
    let commitQueue = CommitQueue()
    /// This process's last commits' changes, for the feed's readers (see `RecentChanges`).
    let recent = RecentChanges(capacity: 2048, maxBytes: 8 << 20)
    public let activity = WorkSignal()
    /// The delivery queue and the users, in the same database (and the same writer).
    let deliveryTables: SQLiteDeliveries
    public let userTable: UserTable
    public var deliveries: any DeliveryStorage { deliveryTables }
    public var users: any UserStorage { userTable }
    let outboxTable: OutboxTable
    public var outbox: any OutboxStorage { outboxTable }
    let deployTable: DeployTable
    public var deploys: any DeployStorage { deployTable }

    public init(path: String, options: Options = Options(), clock: any Clock) async throws {
        self.path = path
        let directory = URL(fileURLWithPath: path).deletingLastPathComponent().path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        writer = try Writer(path: path, synchronous: options.synchronous.rawValue, collections: collections, indexes: indexes, clock: clock)
        if options.backgroundCheckpoints {
            let checkpointer = Checkpointer(path: path, threshold: options.checkpointThreshold)
            await writer.attach(checkpointer)
            self.checkpointer = checkpointer
        } else {
            checkpointer = nil
        }
        readers = ReaderPool(path: path, capacity: options.readers)
        notifier = ChangeNotifier(last: await writer.lastSequence)
        deliveryTables = SQLiteDeliveries(writer: writer, readers: readers, activity: activity)
        // Beside the database file as SQLite resolves it (it follows symbolic links), so that every
        // process names the same file however it reached the database.
        let userChanges = UserChanges(directory: URL(fileURLWithPath: path).resolvingSymlinksInPath().deletingLastPathComponent().path)
        userChanges.prepare()
        userTable = UserTable(writer: writer, readers: readers, activity: activity, tokenStates: TokenStateCache(changes: userChanges))
        outboxTable = OutboxTable(writer: writer, readers: readers)
        deployTable = DeployTable(writer: writer, readers: readers)
    }

    /// The last sequence this process knows of: its own commits, and other processes' as far as
    /// it has read the feed (`feedEnd()` asks the database).
    public var lastSequence: Int64 { notifier.last }

    public func feedEnd() throws -> Int64 {
        let end = try readers.withReader { db in try Writer.feedEnd(db).sequence }
        notifier.committed(upTo: end)
        return end
    }

    public func getAll(_ paths: [DocumentPath]) throws -> [StoredDocument?] {
        try readers.withSnapshot { db in
            try paths.map { path in
                guard let collection = try collections.id(of: path.collection, on: db) else { return nil }
                let s = try db.prepare("SELECT data, create_time, update_time FROM documents WHERE collection = ? AND id = ?")
                defer { s.reset() }
                try s.bind([.integer(collection), .text(path.id)])
                guard try s.step() else { return nil }
                let fields = try s.withBlob(0) { try RowEncoding.decodeFields($0) }
                return StoredDocument(path: path, fields: fields, createTime: RowEncoding.time(s.int64(1)), updateTime: RowEncoding.time(s.int64(2)))
            }
        }
    }

    /// Commits through the group commit queue (`CommitQueue`): alone at once, under load with the
    /// commits that arrive while the writer is busy. A small one runs on the caller's thread when
    /// the writer is idle (`CommitJob.mayRunHere`), unless that thread is a worker's socket reader
    /// (`CommitPlacement`: a unit's transaction commit starts there).
    public func commit(_ writes: [DocumentWrite], validations: [ReadValidation], enqueues: [TaskEnqueue]) async throws -> (CommitResult, [DocumentChange]) {
        try await withCheckedThrowingContinuation { continuation in
            commit(Writer.CommitJob(writes: writes, validations: validations, enqueues: enqueues), here: true) { continuation.resume(with: $0) }
        }
    }

    public func commit(_ writes: [DocumentWrite], validations: [ReadValidation], enqueues: [TaskEnqueue],
                       done: @escaping @Sendable (Result<(CommitResult, [DocumentChange]), any Error>) -> Void) {
        commit(Writer.CommitJob(writes: writes, validations: validations, enqueues: enqueues), here: false, done: done)
    }

    /// Queues `job` for the writer; `done` is called after its group's COMMIT (or its failure),
    /// before the writer starts anything else, on the writer's thread, or with `here` on the
    /// caller's own when the writer was idle and the job small (`CommitJob.mayRunHere`): the
    /// commit then ran there, with no thread switch.
    /// The completion form never commits `here`: its callers are a worker's socket reader, which
    /// would read that worker's next commit only after this one, and no group would ever form.
    func commit(_ job: Writer.CommitJob, here: Bool, done: @escaping @Sendable (Writer.CommitOutcome) -> Void) {
        if commitQueue.submit(CommitQueue.Waiting(job: job, done: done)),
           !(here && job.mayRunHere && writer.onThisThreadIfIdle({ drainCommits($0, small: true) })) {
            writer.onWriterThread { [self] in drainCommits($0) }
        }
    }

    /// One group of the commits waiting, on the writer's thread (or, `small`, on a caller's: only
    /// the small commits at the head, `CommitQueue.take`): written in one transaction (a lone
    /// commit without savepoints), announced, each caller answered; then the next group is queued
    /// on the writer's thread, behind whatever else the writer has to do.
    private func drainCommits(_ writer: isolated Writer, small: Bool = false) {
        let group = commitQueue.take(small: small)
        let outcomes: [Writer.CommitOutcome]
        if group.count == 1 {
            let job = group[0].job
            outcomes = [Result { try writer.commit(job.writes, validations: job.validations, enqueues: job.enqueues) }]
        } else {
            do { outcomes = try writer.commitGroup(group.map(\.job)) } catch {
                outcomes = Array(repeating: .failure(error), count: group.count)
            }
        }
        announce(zip(group, outcomes).compactMap { waiting, outcome in (try? outcome.get()).map { (waiting.job, $0.1) } })
        // The group's answers to a unit's worker leave in one write per worker, after the last.
        SendBatch.run { for (waiting, outcome) in zip(group, outcomes) { waiting.done(outcome) } }
        if commitQueue.more() { writer.onWriterThread { [self] in drainCommits($0) } }
    }

    /// Tells the feed's readers and the delivery engine what commits added: the feed's new end,
    /// and the task queues that gained work (any change may give a trigger work).
    private func announce(_ committed: [(job: Writer.CommitJob, changes: [DocumentChange])]) {
        for (_, changes) in committed { recent.append(changes) }
        if let last = committed.compactMap({ $0.changes.last?.sequence }).max() { notifier.committed(upTo: last) }
        guard committed.contains(where: { !$0.changes.isEmpty || !$0.job.enqueues.isEmpty }) else { return }
        activity.notify(Set(committed.flatMap { $0.job.enqueues.map(\.queue) }))
    }

    public func query(_ spec: QuerySpec) async throws -> [StoredDocument] {
        try await ensureIndexes(for: spec)
        return try readers.withSnapshot { try QueryEngine(db: $0, collections: collections).run(spec) }
    }

    public func profiledQuery(_ spec: QuerySpec) async throws -> (documents: [StoredDocument], profile: QueryProfile) {
        try await ensureIndexes(for: spec)
        return try readers.withSnapshot { db in
            var engine = QueryEngine(db: db, collections: collections)
            let profiler = QueryProfiler()
            engine.profiler = profiler
            let documents = try engine.run(spec)
            // No collection visited (none holds documents, or the name range excludes them all):
            // the plan an empty collection gets, as `planSummary` names it.
            if profiler.profile.indexesUsed.isEmpty { profiler.profile.indexesUsed = try engine.planSummary(spec).indexesUsed }
            return (documents, profiler.profile)
        }
    }

    public func planSummary(_ spec: QuerySpec) async throws -> QueryProfile {
        try await ensureIndexes(for: spec)
        return try readers.withSnapshot { try QueryEngine(db: $0, collections: collections).planSummary(spec) }
    }

    public func count(_ spec: QuerySpec) async throws -> Int {
        try await ensureIndexes(for: spec)
        return try readers.withSnapshot { try QueryEngine(db: $0, collections: collections).count(spec) }
    }

    /// Builds the indexes a query needs that do not exist yet (once per field and collection id).
    func ensureIndexes(for spec: QuerySpec) async throws {
        let wanted = IndexRegistry.fields(of: spec)
        guard !wanted.isEmpty, !indexes.missing(wanted, in: spec.collectionID).isEmpty else { return }
        try spec.validate()
        try await writer.ensureIndexes(wanted, collectionID: spec.collectionID)
    }

    /// The plan a query gets and SQLite's `EXPLAIN QUERY PLAN` of its statement.
    public func explain(_ spec: QuerySpec) async throws -> (plan: String, details: [String]) {
        try await ensureIndexes(for: spec)
        return try readers.withSnapshot { db in
            let (plan, details) = try QueryEngine(db: db, collections: collections).explain(spec)
            return (String(describing: plan), details)
        }
    }

    /// The id that follows `prefix` (a path and "/") in `path`, cut on bytes.
    static func firstID(of path: String, below prefix: String) -> Substring? {
        PathRules.split(Substring(path.utf8.dropFirst(prefix.utf8.count))).first
    }

    /// Collections under `prefix` (a path followed by "/") holding at least one document.
    private func populatedCollections(_ db: Connection, underPrefix prefix: String) throws -> [String] {
        let upper = String(Substring(prefix.utf8.dropLast())) + "0"  // bytes: the "/" may share a Character
        return try db.query("""
            SELECT c.path FROM collections AS c
            WHERE c.path >= ? AND c.path < ? AND EXISTS (SELECT 1 FROM documents AS d WHERE d.collection = c.id)
            ORDER BY c.path
            """, [.text(prefix), .text(upper)]) { $0.text(0) }
    }

    public func listCollections(under parent: DocumentPath?) throws -> [CollectionPath] {
        try readers.withSnapshot { db in
            let prefix = parent.map { $0.description + "/" } ?? ""
            let populated = prefix.isEmpty
                ? try db.query("SELECT c.path FROM collections AS c WHERE EXISTS (SELECT 1 FROM documents AS d WHERE d.collection = c.id)") { $0.text(0) }
                : try populatedCollections(db, underPrefix: prefix)
            var ids: Set<UTF8Key> = []
            for path in populated {
                if let id = Self.firstID(of: path, below: prefix) { ids.insert(UTF8Key(id)) }
            }
            return try ids.map(\.string).sorted(by: { Value.compareUTF8($0, $1) == .ascending }).map { id in try CollectionPath(prefix + id) }
        }
    }

    public func documentNames(_ spec: QuerySpec) throws -> [DocumentPath] {
        guard spec.filters.isEmpty, spec.startAt == nil, spec.endAt == nil else {
            throw HTTPSError(.invalidArgument, "document names are listed for a query without filters or cursors")
        }
        try spec.validate()
        return try readers.withSnapshot { db in
            var names: [DocumentPath] = []
            for target in try QueryEngine(db: db, collections: collections).targetCollections(spec) {
                let segments = PathRules.split(target.path).map(String.init)
                names += try db.query("SELECT id FROM documents WHERE collection = ?", [.integer(target.id)]) {
                    DocumentPath(trustedSegments: segments + [$0.text(0)])
                }
            }
            return names.sorted()
        }
    }

    public func listDocuments(in collection: CollectionPath) throws -> [DocumentListing] {
        try readers.withSnapshot { db in
            var listing: [UTF8Key: Bool] = [:]
            if let id = try collections.id(of: collection, on: db) {
                for docID in try db.query("SELECT id FROM documents WHERE collection = ?", [.integer(id)], { $0.text(0) }) {
                    listing[UTF8Key(docID)] = true
                }
            }
            let prefix = collection.description + "/"
            for path in try populatedCollections(db, underPrefix: prefix) {
                if let id = Self.firstID(of: path, below: prefix), listing[UTF8Key(id)] == nil {
                    listing[UTF8Key(id)] = false
                }
            }
            return try listing.sorted(by: { Value.compareUTF8($0.key.string, $1.key.string) == .ascending }).map { id, exists in
                DocumentListing(path: try collection.document(id.string), exists: exists)
            }
        }
    }

    public func documents(under path: [String], limit: Int) throws -> [DocumentPath] {
        try readers.withSnapshot { db in
            var out: [DocumentPath] = []
            let text = path.joined(separator: "/")
            if path.count % 2 == 0 {
                let doc = DocumentPath(trustedSegments: path)
                if try getAllOn(db, [doc]).first! != nil { out.append(doc) }
            } else if let id = try collections.id(of: CollectionPath(trustedSegments: path), on: db) {
                out += try db.query("SELECT id FROM documents WHERE collection = ? LIMIT ?", [.integer(id), .integer(Int64(limit))]) {
                    DocumentPath(trustedSegments: path + [$0.text(0)])
                }
            }
            guard out.count < limit else { return Array(out.prefix(limit)) }
            let rows = try db.query("""
                SELECT c.path, d.id FROM collections AS c JOIN documents AS d ON d.collection = c.id
                WHERE c.path >= ? AND c.path < ? LIMIT ?
                """, [.text(text + "/"), .text(text + "0"), .integer(Int64(limit - out.count))]) { ($0.text(0), $0.text(1)) }
            for (collectionPath, id) in rows {
                out.append(DocumentPath(trustedSegments: PathRules.split(collectionPath).map(String.init) + [id]))
            }
            return out
        }
    }

    private func getAllOn(_ db: Connection, _ paths: [DocumentPath]) throws -> [Bool?] {
        try paths.map { path in
            guard let collection = try collections.id(of: path.collection, on: db) else { return nil }
            return try db.scalarInt("SELECT 1 FROM documents WHERE collection = ? AND id = ?", [.integer(collection), .text(path.id)]) != nil ? true : nil
        }
    }

    /// The feed after `sequence`. What this process committed last comes from memory (see
    /// `RecentChanges`), once the database confirms it still holds the first of those (no other
    /// process pruned it); the database adds what follows them, usually nothing. Both are lookups
    /// by sequence, with no documents to decode.
    public func changes(after sequence: Int64, limit: Int) throws -> [DocumentChange] {
        let recent = recent.after(sequence, limit: limit)
        let read = try readers.withReader { db in
            guard let recent, let first = recent.first, let last = recent.last,
                  // Another process may have pruned what memory still holds.
                  let oldest = try db.scalarInt("SELECT min(seq) FROM changes"), oldest <= first.sequence else {
                return try SQLiteEngine.storedChanges(db, after: sequence, limit: limit)
            }
            if recent.count == limit { return recent }
            return recent + (try SQLiteEngine.storedChanges(db, after: last.sequence, limit: limit - recent.count))
        }
        // Other processes' commits count as known once read.
        if let end = read.last?.sequence { notifier.committed(upTo: end) }
        return read
    }

    /// See `StorageEngine.changesToRoute`. A run from memory needs no check that another process
    /// pruned it: pruning deletes only what every cursor has passed, and routing skips what its
    /// stored cursor has passed (`SQLiteDeliveries.route`). Under write load this spares the
    /// delivery engine a reader transaction at each pass (two statements, with the reader's pages
    /// read again after every commit).
    public func changesToRoute(after sequence: Int64, limit: Int) throws -> [DocumentChange] {
        if let run = recent.after(sequence, limit: limit) { return run }
        return try changes(after: sequence, limit: limit)
    }

    private static func storedChanges(_ db: Connection, after sequence: Int64, limit: Int) throws -> [DocumentChange] {
        try db.query("SELECT seq, commit_time, path, kind, before, after FROM changes WHERE seq > ? ORDER BY seq LIMIT ?",
                     [.integer(sequence), .integer(Int64(limit))]) { s in
            let path = try DocumentPath(s.text(2))
            let before = s.isNull(4) ? nil : try RowEncoding.decodeDocument(s.blob(4), path: path)
            let after = s.isNull(5) ? nil : try RowEncoding.decodeDocument(s.blob(5), path: path)
            return DocumentChange(sequence: s.int64(0), commitTime: RowEncoding.time(s.int64(1)), path: path,
                                  kind: ChangeKind(code: s.int64(3)) ?? .updated, before: before, after: after)
        }
    }

    public func waitForChanges(after sequence: Int64) async {
        await notifier.wait(after: sequence)
    }

    public func setCursor(_ consumer: String, to sequence: Int64) async throws {
        let now = RowEncoding.micros(writer.clock.now())
        try await writer.withTransaction { db in
            try db.run("INSERT INTO consumers(name, cursor, updated_time) VALUES (?, ?, ?) ON CONFLICT(name) DO UPDATE SET cursor = excluded.cursor, updated_time = excluded.updated_time",
                       [.text(consumer), .integer(sequence), .integer(now)])
        }
    }

    public func removeCursor(_ consumer: String) async throws {
        try await writer.withTransaction { db in try db.run("DELETE FROM consumers WHERE name = ?", [.text(consumer)]) }
    }

    public func cursors() throws -> [String: Int64] {
        try readers.withReader { db in
            Dictionary(try db.query("SELECT name, cursor FROM consumers") { ($0.text(0), $0.int64(1)) }, uniquingKeysWith: { a, _ in a })
        }
    }

    public func pruneChanges(committedBefore cutoff: Timestamp, limit: Int) async throws -> Int {
        let micros = RowEncoding.micros(cutoff)
        let (deleted, keptFrom) = try await writer.withTransaction { db -> (Int, Int64) in
            // Remember the feed's end before deleting: it may be the last entry (see Schema, migration 2).
            if let seq = try db.scalarInt("SELECT max(seq) FROM changes"),
               let time = try db.scalarInt("SELECT commit_time FROM changes WHERE seq = ?", [.integer(seq)]) {
                try db.run("""
                    INSERT INTO feed_state(id, last_sequence, last_commit_time) VALUES (1, ?, ?)
                    ON CONFLICT(id) DO UPDATE SET last_sequence = max(last_sequence, excluded.last_sequence),
                                                  last_commit_time = max(last_commit_time, excluded.last_commit_time)
                    """, [.integer(seq), .integer(time)])
            }
            let floor = try db.scalarInt("SELECT min(cursor) FROM consumers") ?? Int64.max
            // Commit times rise with sequence numbers, so the entries committed before the cutoff are
            // a prefix of the feed: find its end by walking from the start (only through the entries
            // about to be deleted), with no index on commit_time for every commit to maintain.
            let firstKept = try db.scalarInt("SELECT seq FROM changes WHERE commit_time >= ? ORDER BY seq LIMIT 1", [.integer(micros)]) ?? Int64.max
            // An empty feed: nothing deleted, nothing for memory to forget.
            guard let first = try db.scalarInt("SELECT seq FROM changes ORDER BY seq LIMIT 1") else { return (0, Int64.min) }
            let batchEnd = first.saturatingAdd(Int64(clamping: max(1, limit)) - 1)
            try db.run("DELETE FROM changes WHERE seq < ? AND seq <= ? AND seq <= ?", [.integer(firstKept), .integer(floor), .integer(batchEnd)])
            // Everything below the first sequence this kept is gone.
            return (db.changes, min(firstKept, floor.saturatingAdd(1), batchEnd.saturatingAdd(1)))
        }
        recent.drop(below: keptFrom)
        return deleted
    }

    public func integrityCheck() throws -> [String] {
        try readers.withReader { db in
            let rows = try db.query("PRAGMA integrity_check") { $0.text(0) }
            return rows == ["ok"] ? [] : rows
        }
    }

    public func close() {
        checkpointer?.stop()
        writer.close()
        readers.close()
        notifier.wakeAll()
    }
}
