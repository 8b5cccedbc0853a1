import CSQLite

/// An SQLite failure: the result code (primary and extended), SQLite's message and the SQL that
/// failed. Match primary codes in `catch` with the static values:
/// `catch let e as SQLiteError where e.code == SQLiteError.busy`.
public struct SQLiteError: Error, Sendable, CustomStringConvertible, Equatable {
    /// The extended result code (`SQLITE_CONSTRAINT_PRIMARYKEY`…).
    public let extendedCode: Int32
    public let message: String
    public let sql: String?

    /// The primary result code (`SQLITE_CONSTRAINT`…).
    public var code: Int32 { extendedCode & 0xFF }

    public init(code: Int32, message: String, sql: String? = nil) {
        extendedCode = code
        self.message = message
        self.sql = sql
    }

    init(connection: OpaquePointer?, code: Int32, sql: String?) {
        let message = connection.flatMap { sqlite3_errmsg($0) }.map { String(cString: $0) } ?? String(cString: sqlite3_errstr(code))
        self.init(code: connection.map { sqlite3_extended_errcode($0) } ?? code, message: message, sql: sql)
    }

    public var description: String {
        "SQLite error \(extendedCode) (\(String(cString: sqlite3_errstr(extendedCode)))): \(message)" + (sql.map { " — in \($0)" } ?? "")
    }

    public static let error = SQLITE_ERROR
    public static let busy = SQLITE_BUSY
    public static let locked = SQLITE_LOCKED
    public static let constraint = SQLITE_CONSTRAINT
    public static let corrupt = SQLITE_CORRUPT
    public static let full = SQLITE_FULL
    public static let cantOpen = SQLITE_CANTOPEN
}
