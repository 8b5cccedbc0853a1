import CSQLite
import HearthModel

/// Export and import: every table an export holds, read in one snapshot on one reader connection,
/// and written back in one transaction of the writer's.
extension SQLiteEngine {
    public func exportRecords(_ body: (ExportRecord) throws -> Void) throws {
        // One read transaction: WAL gives it the database as of its first read, whatever other
        // connections commit until it ends (https://www.sqlite.org/wal.html#concurrency).
        try readers.withSnapshot { db in
            try db.forEach("""
                SELECT c.path, d.id, d.data, d.create_time, d.update_time FROM collections AS c JOIN documents AS d ON d.collection = c.id
                ORDER BY c.path, d.id
                """) { s in
                let path = try DocumentPath(s.text(0) + "/" + s.text(1))
                let fields = try s.withBlob(2) { try RowEncoding.decodeFields($0) }
                try body(.document(StoredDocument(path: path, fields: fields, createTime: RowEncoding.time(s.int64(3)), updateTime: RowEncoding.time(s.int64(4)))))
            }
            try db.forEach("SELECT record FROM users ORDER BY uid") { s in try body(.user(try UserTable.decode(s.blob(0)))) }
            try db.forEach("SELECT \(SQLiteDeliveries.columns) FROM deliveries AS d ORDER BY d.id") { s in try body(.delivery(try SQLiteDeliveries.row(s))) }
            try db.forEach("SELECT function, last_fire FROM schedules ORDER BY function") { s in
                try body(.schedule(function: s.text(0), lastFire: RowEncoding.time(s.int64(1))))
            }
            try db.forEach("SELECT queue, id, enqueue_time FROM task_ids ORDER BY queue, id") { s in
                try body(.taskID(queue: s.text(0), id: s.text(1), enqueueTime: RowEncoding.time(s.int64(2))))
            }
        }
    }

    public func importRecords(requireEmpty: Bool, _ next: @Sendable () throws -> ExportRecord?) async throws -> ImportedRecords {
        let collections = self.collections, indexes = self.indexes
        let (result, resolved) = try await writer.withTransaction { db -> (ImportedRecords, [(CollectionPath, Int64)]) in
            if requireEmpty { try BulkInsert.checkEmpty(db) }
            var insert = BulkInsert(db: db, collections: collections, indexes: indexes)
            while let record = try next() { try insert.add(record) }
            return (insert.result, Array(insert.collectionIDs.values))
        }
        // Cached only now that they are committed (see `CollectionRegistry.idCreating`).
        for (path, id) in resolved { collections.remember(path, id: id) }
        if result.counts[.users, default: 0] > 0 { userTable.tokenStates.changed() }
        if !result.functions.isEmpty || result.counts[.users, default: 0] > 0 { activity.notify(result.functions) }
        return result
    }
}

/// The rows of one import, inserted inside the writer's transaction.
struct BulkInsert {
    let db: Connection
    let collections: CollectionRegistry
    let indexes: IndexRegistry
    var result = ImportedRecords()
    /// Collections resolved in this transaction, by path.
    var collectionIDs: [UTF8Key: (CollectionPath, Int64)] = [:]
    var schedules: Set<String> = []
    var taskIDs: Set<[String]> = []
    /// SQLITE_CONSTRAINT_PRIMARYKEY, a macro Swift does not import (https://www.sqlite.org/rescode.html#constraint_primarykey).
    static let primaryKeyClash = SQLITE_CONSTRAINT | (6 << 8)

    init(db: Connection, collections: CollectionRegistry, indexes: IndexRegistry) {
        self.db = db
        self.collections = collections
        self.indexes = indexes
    }

    /// Refuses a store that holds a document, a user or a delivery, naming how many and the first.
    static func checkEmpty(_ db: Connection) throws {
        func refuse(_ table: String, _ noun: String, first sql: String) throws {
            let count = try db.scalarInt("SELECT count(*) FROM \(table)") ?? 0
            guard count > 0 else { return }
            let first = try db.query(sql) { $0.text(0) }.first ?? "?"
            throw ImportError("the store already holds \(count) \(noun)\(count == 1 ? "" : "s") (first: \(Printable.quoted(first, limit: 200))); import into an empty store")
        }
        try refuse("documents", "document", first: """
            SELECT c.path || '/' || d.id FROM collections AS c JOIN documents AS d ON d.collection = c.id ORDER BY c.path, d.id LIMIT 1
            """)
        try refuse("users", "user", first: "SELECT uid FROM users ORDER BY uid LIMIT 1")
        try refuse("deliveries", "delivery", first: """
            SELECT function || ' ' || event_id || ' (' || CASE state WHEN \(SQLiteDeliveries.pending) THEN 'pending' WHEN \(SQLiteDeliveries.running) THEN 'running' ELSE 'dead' END || ')'
            FROM deliveries ORDER BY id LIMIT 1
            """)
    }

    mutating func add(_ record: ExportRecord) throws {
        switch record {
        case .document(let doc): try add(doc)
        case .user(let user): try add(user)
        case .delivery(let delivery): try add(delivery)
        case .schedule(let function, let lastFire):
            guard schedules.insert(function).inserted else { throw ImportError("field 'function': the schedule \(function) appears twice") }
            try db.run("INSERT INTO schedules(function, last_fire) VALUES (?, ?) ON CONFLICT(function) DO UPDATE SET last_fire = excluded.last_fire",
                       [.text(function), .integer(RowEncoding.micros(lastFire))])
        case .taskID(let queue, let id, let time):
            guard taskIDs.insert([queue, id]).inserted else { throw ImportError("field 'id': the task id '\(Printable.quoted(id))' of queue \(queue) appears twice") }
            try db.run("INSERT OR REPLACE INTO task_ids(queue, id, enqueue_time) VALUES (?, ?, ?)", [.text(queue), .text(id), .integer(RowEncoding.micros(time))])
        }
        result.counts[record.kind, default: 0] += 1
    }

    private mutating func add(_ doc: StoredDocument) throws {
        let fields = try WriteApplication.validate(doc.fields, path: doc.path)
        let data = RowEncoding.encodeFields(fields)
        guard data.count <= DocumentLimits.maxDocumentBytes else {
            throw ImportError("document \(doc.path) is \(data.count) bytes, more than the limit of \(DocumentLimits.maxDocumentBytes)")
        }
        let collection = try collectionID(doc.path.collection)
        do {
            try db.run("INSERT INTO documents(collection, id, data, create_time, update_time) VALUES (?, ?, ?, ?, ?)", [
                .integer(collection), .text(doc.path.id), .blob(data), .integer(RowEncoding.micros(doc.createTime)), .integer(RowEncoding.micros(doc.updateTime)),
            ])
        } catch {
            guard error.code == SQLiteError.constraint else { throw error }
            throw ImportError("field 'path': the document \(doc.path) appears twice")
        }
        let entries = IndexEntries.of(fields, indexed: indexes.indexed(doc.path.collectionID))
        guard !entries.isEmpty else { return }
        let s = try db.prepare(IndexEntries.insertSQL)
        for e in entries { try db.run(s, [.integer(collection), .text(e.field), .integer(e.element ? 1 : 0), .blob(e.key), .text(doc.path.id)]) }
    }

    private mutating func collectionID(_ path: CollectionPath) throws -> Int64 {
        if let (_, id) = collectionIDs[UTF8Key(path.description)] { return id }
        let id = try collections.idCreating(path, on: db)
        collectionIDs[UTF8Key(path.description)] = (path, id)
        return id
    }

    private mutating func add(_ user: UserRecord) throws {
        switch try UserTable.clash(db, user, except: nil) {
        case nil: break
        case .uid?: throw ImportError("field 'uid': the uid '\(Printable.quoted(user.uid))' is taken (by a stored user, or one earlier in this import)")
        case .email(let owner)?:
            throw ImportError("field 'email': \(Printable.quoted(user.email ?? "")) is already the address of user '\(Printable.quoted(owner))'")
        case .phone(let owner)?:
            throw ImportError("field 'phoneNumber': \(Printable.quoted(user.phoneNumber ?? "")) is already the number of user '\(Printable.quoted(owner))'")
        case .provider(let p, let owner)?:
            throw ImportError("field 'providerData': the \(p.providerId) account '\(Printable.quoted(p.uid))' is already linked to user '\(Printable.quoted(owner))'")
        }
        try UserTable.insert(db, user, record: try UserTable.encode(user))
    }

    private mutating func add(_ d: Delivery) throws {
        // A delivery running when it was exported has no runner here: it is due again, its attempt counted.
        let state: DeliveryState = d.state == .running ? .pending : d.state
        if d.state == .running { result.madePending += 1 }
        do {
            try db.run("""
                INSERT INTO deliveries(id, function, event_id, ordering_key, payload, attempts, first_attempt_time, due_time, state,
                                       last_error, last_status, dispatch_deadline, create_time, executions)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """, [.integer(d.id), .text(d.function), .text(d.eventID), d.orderingKey.map { .text($0) } ?? .null, .blob(d.payload),
                      .integer(Int64(d.attempts)), d.firstAttemptTime.map { .integer(RowEncoding.micros($0)) } ?? .null,
                      .integer(RowEncoding.micros(d.dueTime)), .integer(state.rawValue), d.lastError.map { .text($0) } ?? .null,
                      d.lastStatus.map { .integer(Int64($0)) } ?? .null, d.dispatchDeadline.map { .real($0.secondsDouble) } ?? .null,
                      .integer(RowEncoding.micros(d.createTime)), .integer(Int64(d.executions))])
        } catch {
            throw BulkInsert.clash(error, id: d.id, eventID: d.eventID, function: d.function)
        }
        result.functions.insert(d.function)
    }

    /// A delivery's insert refused: its id or its (function, event id) taken by an earlier line.
    static func clash(_ error: SQLiteError, id: Int64, eventID: String, function: String) -> any Error {
        guard error.code == SQLiteError.constraint else { return error }
        if error.extendedCode == primaryKeyClash { return ImportError("field 'id': the delivery id \(id) appears twice") }
        return ImportError("field 'eventId': the event '\(Printable.quoted(eventID))' is queued twice for \(function)")
    }
}

extension Connection {
    /// Runs one statement and hands each row to `row` as it is read (nothing collected).
    func forEach(_ sql: String, _ values: [SQLiteValue] = [], _ row: (Statement) throws -> Void) throws {
        let s = try prepare(sql)
        defer { s.reset() }
        try s.bind(values)
        while try s.step() { try row(s) }
    }
}
