/// A TOML 1.0.0 reader (https://toml.io/en/v1.0.0), for `runtime.toml` and `hearth config parse`.
///
/// ```swift
/// let config = try TOML.parse(text)
/// let port = config["server"]?["port"]?.integerValue ?? 8080
/// ```
///
/// The parser follows the specification and agrees with Python's `tomllib` (3.11) on what it accepts,
/// which the tests check on a corpus of documents. Where the specification leaves room, it does what
/// `tomllib` does:
/// - a byte order mark is not skipped: U+FEFF at the start is an error like any other stray character;
/// - CRLF is a newline everywhere, and inside multi-line strings it is read as LF; a CR on its own is
///   a control character and refused;
/// - seconds must be 00–59 (no leap second `60`), time offsets ±00:00–±23:59, and dates must exist
///   in the proleptic Gregorian calendar from year 1 (year 0 is refused);
/// - a float too large for a `Double` (`1e400`) reads as infinity and one too small as zero;
/// - a `[table]` header may reach into tables created by dotted keys (`[fruit.apple.texture]` after
///   `fruit.apple.color = 1`) but may not name one; dotted keys may extend tables created implicitly by
///   headers (`b.d = 1` in `[a]` after `[a.b.c]`), but not tables defined by a header or by dotted
///   keys in an earlier section.
///
/// Two deliberate differences: integers must fit in 64 bits (the specification says an integer that
/// cannot be represented losslessly must be an error), where `tomllib` returns Python's unbounded ints;
/// and nesting is limited to `maxDepth` levels, where `tomllib` accepts dotted keys and headers of any
/// depth.
public enum TOML {
    /// Tables, arrays and inline tables nested deeper than this (counted from the root table) are
    /// refused, so that recursion, here and in whatever walks the result, stays far from the end of a
    /// 512 KB thread stack. (`tomllib` gives up with a `RecursionError` near 500 nested arrays.)
    static let maxDepth = 128

    /// Parses a whole document into its root table.
    ///
    /// - Throws: `TOMLError` for the first problem found, with its line and column.
    public static func parse(_ text: String) throws(TOMLError) -> TOMLTable {
        var text = text
        var outcome: Result<TOMLTable, TOMLError> = .success(TOMLTable())
        text.withUTF8 { buffer in
            outcome = Result { () throws(TOMLError) -> TOMLTable in
                var parser = TOMLParser(buffer)
                do throws(TOMLFailure) {
                    return try parser.parseDocument()
                } catch {
                    throw error.located(in: buffer)
                }
            }
        }
        return try outcome.get()
    }
}

/// Why a document is not valid TOML, and where.
public struct TOMLError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The line of the problem, from 1. Lines end at LF (so a CRLF ends one line).
    public var line: Int
    /// The column of the problem, from 1, counted in Unicode scalars from the start of the line (a tab
    /// is one column, so is `é` written as one scalar).
    public var column: Int
    public var message: String

    public init(line: Int, column: Int, message: String) {
        self.line = line
        self.column = column
        self.message = message
    }

    /// `line L, column C: message`.
    public var description: String { "line \(line), column \(column): \(message)" }
}

/// A parse failure before its line and column are worked out: the parser only tracks a byte offset,
/// and the (rare) error path turns it into a position.
struct TOMLFailure: Error {
    var offset: Int
    var message: String

    func located(in buffer: UnsafeBufferPointer<UInt8>) -> TOMLError {
        let offset = min(self.offset, buffer.count)
        var line = 1
        var lineStart = 0
        for k in 0..<offset where buffer[k] == 0x0A {
            line += 1
            lineStart = k + 1
        }
        var column = 1
        for k in lineStart..<offset where buffer[k] & 0xC0 != 0x80 { column += 1 }
        return TOMLError(line: line, column: column, message: message)
    }
}
