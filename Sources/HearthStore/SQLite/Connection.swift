import CSQLite
import CSQLiteWAL
#if canImport(Glibc)
import Glibc
#endif

/// One SQLite connection. It owns the `sqlite3*` and a cache of prepared statements, and is used by
/// one thread at a time (opened with SQLITE_OPEN_NOMUTEX: "multi-thread" mode,
/// https://www.sqlite.org/threadsafe.html); the store confines the writer to an actor and lends
/// readers out of a pool.
final class Connection {
    let handle: OpaquePointer
    let path: String
    /// What its busy handler waits for another connection's lock, ms (`Options`).
    let busyTimeoutMilliseconds: Int32
    private var cache: [String: Statement] = [:]

    struct Options {
        var readOnly = false
        var synchronous = "NORMAL"
        /// How long a statement waits on another connection's lock before SQLITE_BUSY, ms.
        var busyTimeoutMilliseconds: Int32 = 5000
        /// Opened through the buffered-WAL VFS (`startBufferedWAL`), for the store's writer.
        var bufferedWAL = false
    }

    /// Process-wide settings made once, before the first connection initializes SQLite: no memory
    /// statistics (nothing reads them, and with them every allocation SQLite makes takes one global
    /// mutex, shared by the writer and every reader; Debian's build has no lookaside allocator, so
    /// a statement allocates often).
    private static let configured: Void = { _ = hearth_sqlite3_disable_memstatus() }()

    /// Whether SQLite counts the memory it uses (it should not, once a connection has opened).
    static var memoryStatisticsKept: Bool {
        var current: sqlite3_int64 = 0, highest: sqlite3_int64 = 0
        return sqlite3_status64(SQLITE_STATUS_MEMORY_USED, &current, &highest, 0) == SQLITE_OK && current > 0
    }

    init(path: String, options: Options) throws(SQLiteError) {
        _ = Connection.configured
        var db: OpaquePointer?
        let flags = (options.readOnly ? SQLITE_OPEN_READONLY : (SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE)) | SQLITE_OPEN_NOMUTEX
        let vfs = options.bufferedWAL && hearth_buffered_wal_register() == SQLITE_OK ? hearth_buffered_wal_vfs : nil
        let rc = sqlite3_open_v2(path, &db, flags, vfs)
        guard rc == SQLITE_OK, let db else {
            let error = SQLiteError(connection: db, code: rc, sql: nil)
            sqlite3_close_v2(db)
            throw SQLiteError(code: error.extendedCode, message: "cannot open \(path): \(error.message)")
        }
        handle = db
        self.path = path
        busyTimeoutMilliseconds = options.busyTimeoutMilliseconds
        sqlite3_extended_result_codes(db, 1)
        sqlite3_busy_timeout(db, options.busyTimeoutMilliseconds)
        if !options.readOnly {
            // WAL: readers do not block the writer nor the writer readers (https://www.sqlite.org/wal.html).
            // Switching a new database to WAL needs an exclusive lock, and SQLite answers SQLITE_BUSY
            // at once (without the busy handler) when another connection opening the same new file
            // holds one: retry for as long as the busy timeout would wait.
            var waited = 0
            while true {
                do {
                    try execute("PRAGMA journal_mode = WAL")
                    break
                } catch where error.code & 0xFF == SQLITE_BUSY && waited < Int(options.busyTimeoutMilliseconds) {
                    usleep(10_000)
                    waited += 10
                }
            }
        }
        // NORMAL in WAL mode survives a process crash; FULL also survives power loss
        // (https://www.sqlite.org/pragma.html#pragma_synchronous).
        try execute("PRAGMA synchronous = \(options.synchronous)")
        try execute("PRAGMA foreign_keys = OFF")
        try execute("PRAGMA temp_store = MEMORY")
    }

    deinit {
        cache.removeAll()
        sqlite3_close_v2(handle)
    }

    /// Runs `body` with SQLite's busy handler off: a lock another connection holds fails the
    /// statement at once with SQLITE_BUSY instead of waiting up to the busy timeout.
    func withoutBusyWaits<T>(_ body: () throws -> T) rethrows -> T {
        sqlite3_busy_timeout(handle, 0)
        defer { sqlite3_busy_timeout(handle, busyTimeoutMilliseconds) }
        return try body()
    }

    /// A cached prepared statement for `sql`, reset and ready to bind.
    func prepare(_ sql: String) throws(SQLiteError) -> Statement {
        if let cached = cache[sql] {
            cached.reset()
            return cached
        }
        let statement = try Statement(connection: self, sql: sql)
        cache[sql] = statement
        return statement
    }

    /// Runs SQL that returns no rows (possibly several statements, without bindings).
    func execute(_ sql: String) throws(SQLiteError) {
        var error: UnsafeMutablePointer<CChar>?
        let rc = sqlite3_exec(handle, sql, nil, nil, &error)
        if rc != SQLITE_OK {
            let message = error.map { String(cString: $0) } ?? String(cString: sqlite3_errmsg(handle))
            sqlite3_free(error)
            throw SQLiteError(code: sqlite3_extended_errcode(handle), message: message, sql: sql)
        }
    }

    /// Runs one statement with bindings, ignoring any rows.
    func run(_ sql: String, _ values: [SQLiteValue] = []) throws(SQLiteError) {
        try run(try prepare(sql), values)
    }

    /// Runs a statement prepared earlier (hot paths keep theirs, skipping the cache lookup).
    func run(_ s: Statement, _ values: [SQLiteValue]) throws(SQLiteError) {
        s.reset()
        defer { s.reset() }
        try s.bind(values)
        while try s.step() {}
    }

    /// Reads rows of one statement with `row` (called once per row, with the statement positioned on it).
    func query<T>(_ sql: String, _ values: [SQLiteValue] = [], _ row: (Statement) throws -> T) throws -> [T] {
        let s = try prepare(sql)
        defer { s.reset() }
        try s.bind(values)
        var out: [T] = []
        while try s.step() { out.append(try row(s)) }
        return out
    }

    /// The first row's first column as an integer, or nil when there is no row.
    func scalarInt(_ sql: String, _ values: [SQLiteValue] = []) throws -> Int64? {
        try query(sql, values) { $0.isNull(0) ? nil : $0.int64(0) }.first ?? nil
    }

    /// Flushes the main database file to disk through SQLite's own file layer (its `xSync`, as a
    /// checkpoint with `synchronous = NORMAL` does), without a transaction or a lock: the pages
    /// already written to the file reach the disk. False when the file cannot be reached or the
    /// sync fails.
    func syncDatabaseFile() -> Bool {
        var file: UnsafeMutablePointer<sqlite3_file>?
        guard sqlite3_file_control(handle, "main", SQLITE_FCNTL_FILE_POINTER, &file) == SQLITE_OK,
              let file, let sync = file.pointee.pMethods?.pointee.xSync else { return false }
        return sync(file, SQLITE_SYNC_NORMAL) == SQLITE_OK
    }

    var changes: Int { Int(sqlite3_changes(handle)) }
    /// The rowid of the last row this connection inserted.
    var lastInsertRowID: Int64 { sqlite3_last_insert_rowid(handle) }
    var isInTransaction: Bool { sqlite3_get_autocommit(handle) == 0 }

    /// Gathers this connection's WAL appends and writes them once per transaction, not twice per
    /// page (see Sources/CSQLiteWAL/buffered_wal.c). Needs `Options.bufferedWAL` and an open WAL
    /// (the connection has read the database in WAL mode) and SQLite 3.40.x, the release the buffer
    /// was checked against; false, with nothing changed, otherwise.
    /// Not for `synchronous = FULL` or `EXTRA`.
    func startBufferedWAL() -> Bool {
        hearth_buffered_wal_start(handle) == SQLITE_OK
    }

    /// For tests: the next write of this connection's WAL buffer fails as with a full disk and
    /// writes nothing; false when its WAL is not buffered.
    func failNextBufferedWALFlush() -> Bool {
        hearth_buffered_wal_fail_next_flush(handle) == SQLITE_OK
    }

    /// The WAL writes this connection made through the buffer, the writes the kernel got for
    /// them, the late ones among those (from a shared-memory call, after the transaction's own
    /// writes: where a failure could no longer fail the commit), and the frame headers SQLite
    /// rewrote at a commit after reading their frames; nil when its WAL is not buffered.
    var bufferedWALCounts: (writes: Int, flushes: Int, late: Int, headerRewrites: Int)? {
        var writes: Int64 = 0, flushes: Int64 = 0, late: Int64 = 0, rewrites: Int64 = 0
        hearth_buffered_wal_counts(handle, &writes, &flushes, &late, &rewrites)
        return writes < 0 ? nil : (Int(writes), Int(flushes), Int(late), Int(rewrites))
    }

    /// Whether a write transaction is open: what this connection reads may then be its own
    /// uncommitted rows.
    var isInWriteTransaction: Bool { sqlite3_txn_state(handle, nil) == SQLITE_TXN_WRITE }

    /// Runs `body` in a transaction; commits when it returns, rolls back and rethrows its error
    /// (the first one) when it throws.
    func transaction<T>(immediate: Bool = true, _ body: () throws -> T) throws -> T {
        try run(immediate ? "BEGIN IMMEDIATE" : "BEGIN DEFERRED")  // prepared once, like every statement
        do {
            let result = try body()
            try run("COMMIT")
            return result
        } catch {
            if isInTransaction { try? run("ROLLBACK") }
            throw error
        }
    }
}

@available(*, unavailable)
extension Connection: Sendable {}
