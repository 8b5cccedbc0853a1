/// Why a schedule expression (or its time zone) was rejected.
public struct ScheduleError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The expression exactly as it was given.
    public var expression: String
    /// What is wrong, naming the offending token, e.g. "unknown day name 'xyz'".
    public var message: String
    /// 1-based character position of the offending token in `expression`,
    /// or nil when the error has no position (empty expression, missing
    /// trailing token, wrong field count that is too small, unknown time zone).
    public var column: Int?

    public init(expression: String, message: String, column: Int? = nil) {
        self.expression = expression
        self.message = message
        self.column = column
    }

    /// E.g. "schedule '*/5 * * * mon-xyz': unknown day name 'xyz' at column 15".
    public var description: String {
        var text = "schedule '\(expression)': \(message)"
        if let column { text += " at column \(column)" }
        return text
    }
}

/// A parse failure before the expression text is attached (parsers only know
/// messages and columns; `Schedule.init` wraps them into a `ScheduleError`).
struct ParseFailure: Error {
    var message: String
    var column: Int?

    init(_ message: String, at column: Int?) {
        self.message = message
        self.column = column
    }
}
