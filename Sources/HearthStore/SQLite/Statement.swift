import CSQLite

/// A value bound to or read from SQLite.
public enum SQLiteValue: Sendable, Equatable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob([UInt8])
}

extension SQLiteValue: ExpressibleByIntegerLiteral, ExpressibleByStringLiteral, ExpressibleByNilLiteral {
    public init(integerLiteral value: Int64) { self = .integer(value) }
    public init(stringLiteral value: String) { self = .text(value) }
    public init(nilLiteral: ()) { self = .null }
}

/// `SQLITE_TRANSIENT`: SQLite copies bound text and blobs before the bind returns
/// (https://www.sqlite.org/c3ref/bind_blob.html). The macro does not import into Swift.
let SQLITE_TRANSIENT = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

/// A prepared statement, owned by the connection that prepared it: prepared in `init`, finalized in
/// `deinit`, never shared across threads. Text and blobs are copied out as soon as a row is read.
final class Statement {
    let handle: OpaquePointer
    let sql: String
    unowned let connection: Connection

    init(connection: Connection, sql: String) throws(SQLiteError) {
        var stmt: OpaquePointer?
        let rc = sqlite3_prepare_v3(connection.handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &stmt, nil)
        guard rc == SQLITE_OK, let stmt else {
            throw SQLiteError(connection: connection.handle, code: rc, sql: sql)
        }
        self.handle = stmt
        self.sql = sql
        self.connection = connection
    }

    deinit { sqlite3_finalize(handle) }

    func reset() {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
    }

    func bind(_ values: [SQLiteValue]) throws(SQLiteError) {
        for (i, v) in values.enumerated() { try bind(v, at: Int32(i + 1)) }
    }

    func bind(_ value: SQLiteValue, at index: Int32) throws(SQLiteError) {
        let rc: Int32
        switch value {
        case .null: rc = sqlite3_bind_null(handle, index)
        case .integer(let v): rc = sqlite3_bind_int64(handle, index, v)
        case .real(let v): rc = sqlite3_bind_double(handle, index, v)
        case .text(let s):
            var s = s
            rc = s.withUTF8 { p in
                UnsafeRawPointer(p.baseAddress ?? UnsafePointer(bitPattern: 1)!).withMemoryRebound(to: CChar.self, capacity: max(p.count, 1)) {
                    // The 64-bit form: a length past Int32 is SQLite's SQLITE_TOOBIG, not a trap here.
                    sqlite3_bind_text64(handle, index, $0, sqlite3_uint64(p.count), SQLITE_TRANSIENT, UInt8(SQLITE_UTF8))
                }
            }
        case .blob(let b):
            rc = b.withUnsafeBytes { p in sqlite3_bind_blob64(handle, index, p.baseAddress ?? UnsafeRawPointer(bitPattern: 1), sqlite3_uint64(p.count), SQLITE_TRANSIENT) }
        }
        guard rc == SQLITE_OK else { throw SQLiteError(connection: connection.handle, code: rc, sql: sql) }
    }

    /// Steps once: true when a row is available.
    @inline(__always)
    func step() throws(SQLiteError) -> Bool {
        let rc = sqlite3_step(handle)
        if rc == SQLITE_ROW { return true }
        if rc == SQLITE_DONE { return false }
        throw SQLiteError(connection: connection.handle, code: rc, sql: sql)
    }

    // Column readers (0-based), copying text and blobs out of SQLite's buffers.

    @inline(__always) func int64(_ column: Int32) -> Int64 { sqlite3_column_int64(handle, column) }
    @inline(__always) func double(_ column: Int32) -> Double { sqlite3_column_double(handle, column) }
    @inline(__always) func isNull(_ column: Int32) -> Bool { sqlite3_column_type(handle, column) == SQLITE_NULL }

    func text(_ column: Int32) -> String {
        guard let p = sqlite3_column_text(handle, column) else { return "" }
        let n = Int(sqlite3_column_bytes(handle, column))
        return String(decoding: UnsafeBufferPointer(start: p, count: n), as: UTF8.self)
    }

    func blob(_ column: Int32) -> [UInt8] {
        let n = Int(sqlite3_column_bytes(handle, column))
        guard n > 0, let p = sqlite3_column_blob(handle, column) else { return [] }
        return Array(UnsafeRawBufferPointer(start: p, count: n))
    }

    /// Calls `body` with the blob's bytes in place (valid only during the call).
    func withBlob<T>(_ column: Int32, _ body: (UnsafeBufferPointer<UInt8>) throws -> T) rethrows -> T {
        let n = Int(sqlite3_column_bytes(handle, column))
        guard n > 0, let p = sqlite3_column_blob(handle, column) else { return try body(UnsafeBufferPointer(start: nil, count: 0)) }
        return try body(UnsafeBufferPointer(start: p.assumingMemoryBound(to: UInt8.self), count: n))
    }

    func value(_ column: Int32) -> SQLiteValue {
        switch sqlite3_column_type(handle, column) {
        case SQLITE_INTEGER: return .integer(int64(column))
        case SQLITE_FLOAT: return .real(double(column))
        case SQLITE_TEXT: return .text(text(column))
        case SQLITE_BLOB: return .blob(blob(column))
        default: return .null
        }
    }

    var columnCount: Int32 { sqlite3_column_count(handle) }
}

@available(*, unavailable)
extension Statement: Sendable {}
