/// A dotted-key component and the byte offset where it was written (for errors).
struct TOMLKeyPart {
    var name: String
    var offset: Int
}

/// The recursive-descent reader behind `TOML.parse`. It walks the UTF-8 bytes once, never copies the
/// document, and hands statements to `TOMLDocumentBuilder`, which owns the table rules.
///
/// Positions are byte offsets; `TOMLFailure.located(in:)` turns one into a line and column only when
/// an error is thrown. Past the end, `byte(_:)` answers 0xFF, a byte that never occurs in UTF-8, so the
/// scanners test for the end only where they meet that byte.
struct TOMLParser {
    let input: UnsafeBufferPointer<UInt8>
    let end: Int
    var i = 0
    /// The nesting of the container being filled: tables, arrays and inline tables together.
    var depth = 0
    var builder = TOMLDocumentBuilder()
    /// Reused for strings that cannot be sliced straight from the input (escapes, CRLF).
    var scratch: [UInt8] = []

    static let eof: UInt8 = 0xFF

    init(_ input: UnsafeBufferPointer<UInt8>) {
        self.input = input
        self.end = input.count
    }

    @inline(__always) func byte(_ k: Int) -> UInt8 { k < end ? input[k] : Self.eof }

    func fail(_ message: String, at offset: Int? = nil) -> TOMLFailure {
        TOMLFailure(offset: offset ?? i, message: message)
    }

    // MARK: - Document

    mutating func parseDocument() throws(TOMLFailure) -> TOMLTable {
        while true {
            skipWhitespace()
            let c = byte(i)
            switch c {
            case Self.eof:
                return builder.finish()
            case 0x0A:
                i += 1
                continue
            case 0x0D where byte(i + 1) == 0x0A:
                i += 2
                continue
            case UInt8(ascii: "#"):
                break
            case UInt8(ascii: "["):
                try parseHeader()
            case UInt8(ascii: "\""), UInt8(ascii: "'"):
                try parseKeyValue()
            case _ where Self.isBareKeyByte(c):
                try parseKeyValue()
            default:
                throw fail("expected a key, a [table] header or a comment, found \(describe(at: i))")
            }
            try endStatement()
        }
    }

    /// After a statement: optional whitespace and comment, then a newline or the end of the document.
    mutating func endStatement() throws(TOMLFailure) {
        skipWhitespace()
        if byte(i) == UInt8(ascii: "#") { try skipComment() }
        switch byte(i) {
        case Self.eof: return
        case 0x0A: i += 1
        case 0x0D where byte(i + 1) == 0x0A: i += 2
        default: throw fail("expected the end of the line, found \(describe(at: i))")
        }
    }

    /// `[a.b]` or `[[a.b]]`; whitespace is allowed around the key but not inside `[[` or `]]`.
    mutating func parseHeader() throws(TOMLFailure) {
        let start = i
        let isArray = byte(i + 1) == UInt8(ascii: "[")
        i += isArray ? 2 : 1
        skipWhitespace()
        let key = try parseKey()
        if isArray {
            guard byte(i) == UInt8(ascii: "]"), byte(i + 1) == UInt8(ascii: "]") else {
                throw fail("expected ']]' to close the array of tables header, found \(describe(at: i))")
            }
            i += 2
        } else {
            guard byte(i) == UInt8(ascii: "]") else {
                throw fail("expected ']' to close the table header, found \(describe(at: i))")
            }
            i += 1
        }
        guard key.count <= TOML.maxDepth else {
            throw fail("tables are nested deeper than \(TOML.maxDepth) levels", at: start)
        }
        if isArray {
            try builder.appendArrayElement(key, headerOffset: start)
        } else {
            try builder.openTable(key, headerOffset: start)
        }
    }

    mutating func parseKeyValue() throws(TOMLFailure) {
        let key = try parseKey()
        try expectEquals(after: key)
        depth = builder.currentDepth + key.count - 1
        guard depth <= TOML.maxDepth else { throw fail("tables are nested deeper than \(TOML.maxDepth) levels") }
        let value = try parseValue()
        try builder.insert(key, value)
    }

    mutating func expectEquals(after key: [TOMLKeyPart]) throws(TOMLFailure) {
        guard byte(i) == UInt8(ascii: "=") else {
            let found = describe(at: i)
            throw fail("expected '=' after the key \(TOMLDocumentBuilder.display(key[...])), found \(found)")
        }
        i += 1
        skipWhitespace()
    }

    // MARK: - Keys

    /// A bare, quoted or dotted key, with the whitespace after it skipped.
    mutating func parseKey() throws(TOMLFailure) -> [TOMLKeyPart] {
        var parts = [try parseKeyPart()]
        skipWhitespace()
        while byte(i) == UInt8(ascii: ".") {
            i += 1
            skipWhitespace()
            parts.append(try parseKeyPart())
            skipWhitespace()
        }
        return parts
    }

    mutating func parseKeyPart() throws(TOMLFailure) -> TOMLKeyPart {
        let start = i
        let c = byte(i)
        if Self.isBareKeyByte(c) {
            repeat { i += 1 } while Self.isBareKeyByte(byte(i))
            return TOMLKeyPart(name: String(decoding: UnsafeBufferPointer(rebasing: input[start..<i]), as: UTF8.self),
                               offset: start)
        }
        if c == UInt8(ascii: "\"") || c == UInt8(ascii: "'") {
            if byte(i + 1) == c && byte(i + 2) == c { throw fail("a multi-line string cannot be used as a key") }
            let name = try parseString(c == UInt8(ascii: "\"") ? .basic : .literal)
            return TOMLKeyPart(name: name, offset: start)
        }
        throw fail("expected a key, found \(describe(at: i))")
    }

    /// `A-Z a-z 0-9 _ -`.
    @inline(__always) static func isBareKeyByte(_ c: UInt8) -> Bool {
        switch c {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
             UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"), UInt8(ascii: "-"):
            return true
        default:
            return false
        }
    }

    // MARK: - Values

    mutating func parseValue() throws(TOMLFailure) -> TOMLValue {
        let c = byte(i)
        switch c {
        case UInt8(ascii: "\""):
            if byte(i + 1) == c && byte(i + 2) == c { return .string(try parseString(.multilineBasic)) }
            return .string(try parseString(.basic))
        case UInt8(ascii: "'"):
            if byte(i + 1) == c && byte(i + 2) == c { return .string(try parseString(.multilineLiteral)) }
            return .string(try parseString(.literal))
        case UInt8(ascii: "t"):
            try expectWord("true")
            return .boolean(true)
        case UInt8(ascii: "f"):
            try expectWord("false")
            return .boolean(false)
        case UInt8(ascii: "["):
            return .array(try parseArray())
        case UInt8(ascii: "{"):
            return .table(try parseInlineTable())
        case UInt8(ascii: "i"), UInt8(ascii: "n"):
            return .float(try parseSpecialFloat(negative: false))
        case UInt8(ascii: "+"), UInt8(ascii: "-"):
            let next = byte(i + 1)
            if next == UInt8(ascii: "i") || next == UInt8(ascii: "n") {
                i += 1
                return .float(try parseSpecialFloat(negative: c == UInt8(ascii: "-")))
            }
            return try parseNumber()
        case UInt8(ascii: "0")...UInt8(ascii: "9"):
            if isDigit(at: i + 1) && isDigit(at: i + 2) && isDigit(at: i + 3) && byte(i + 4) == UInt8(ascii: "-") {
                return try parseDateOrDateTime()
            }
            if isDigit(at: i + 1) && byte(i + 2) == UInt8(ascii: ":") {
                return .localTime(try parseTime())
            }
            return try parseNumber()
        default:
            throw fail("expected a value, found \(describe(at: i))")
        }
    }

    mutating func expectWord(_ word: StaticString) throws(TOMLFailure) {
        let n = word.utf8CodeUnitCount
        let bytes = UnsafeBufferPointer(start: word.utf8Start, count: n)
        for k in 0..<n where byte(i + k) != bytes[k] {
            throw fail("expected a value, found \(describe(at: i))")
        }
        i += n
    }

    @inline(__always) func isDigit(at k: Int) -> Bool {
        let c = byte(k)
        return c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9")
    }

    /// `[ v, v, ]`: newlines and comments may appear anywhere between the brackets, a trailing comma is
    /// allowed, and element types may mix.
    mutating func parseArray() throws(TOMLFailure) -> [TOMLValue] {
        try enterContainer()
        defer { depth -= 1 }
        i += 1
        var items: [TOMLValue] = []
        while true {
            try skipWhitespaceNewlinesAndComments()
            if byte(i) == UInt8(ascii: "]") {
                i += 1
                return items
            }
            items.append(try parseValue())
            try skipWhitespaceNewlinesAndComments()
            switch byte(i) {
            case UInt8(ascii: ","):
                i += 1
            case UInt8(ascii: "]"):
                i += 1
                return items
            case Self.eof:
                throw fail("unterminated array: expected ',' or ']', found end of input")
            default:
                throw fail("expected ',' or ']' after an array element, found \(describe(at: i))")
            }
        }
    }

    /// `{ k = v, k.k = v }`: on one line (newlines may only appear inside values), no trailing comma,
    /// and closed once written (`TOMLDocumentBuilder` refuses later additions).
    mutating func parseInlineTable() throws(TOMLFailure) -> TOMLTable {
        try enterContainer()
        defer { depth -= 1 }
        i += 1
        let table = builder.beginInlineTable()
        skipWhitespace()
        if byte(i) == UInt8(ascii: "}") {
            i += 1
            return builder.endInlineTable(table)
        }
        let outerDepth = depth
        while true {
            try checkInlineTableKeyStart()
            let key = try parseKey()
            try expectEquals(after: key)
            depth = outerDepth + key.count - 1
            guard depth <= TOML.maxDepth else { throw fail("tables are nested deeper than \(TOML.maxDepth) levels") }
            let value = try parseValue()
            depth = outerDepth
            try builder.insert(key, value, intoInlineTable: table)
            skipWhitespace()
            switch byte(i) {
            case UInt8(ascii: ","):
                i += 1
                skipWhitespace()
                if byte(i) == UInt8(ascii: "}") { throw fail("an inline table cannot have a trailing comma") }
            case UInt8(ascii: "}"):
                i += 1
                return builder.endInlineTable(table)
            case 0x0A, 0x0D:
                throw fail("an inline table must be closed on the line where it starts")
            case UInt8(ascii: "#"):
                throw fail("comments are not allowed inside an inline table")
            case Self.eof:
                throw fail("unterminated inline table: expected ',' or '}', found end of input")
            default:
                throw fail("expected ',' or '}' after an inline table entry, found \(describe(at: i))")
            }
        }
    }

    func checkInlineTableKeyStart() throws(TOMLFailure) {
        switch byte(i) {
        case 0x0A, 0x0D: throw fail("an inline table must be closed on the line where it starts")
        case UInt8(ascii: "#"): throw fail("comments are not allowed inside an inline table")
        default: return
        }
    }

    mutating func enterContainer() throws(TOMLFailure) {
        depth += 1
        guard depth <= TOML.maxDepth else {
            throw fail("arrays and tables are nested deeper than \(TOML.maxDepth) levels")
        }
    }

    // MARK: - Whitespace and comments

    /// Spaces and tabs, TOML's only whitespace.
    @inline(__always) mutating func skipWhitespace() {
        while true {
            let c = byte(i)
            guard c == 0x20 || c == 0x09 else { return }
            i += 1
        }
    }

    /// Inside arrays: whitespace, LF, CRLF and comments.
    mutating func skipWhitespaceNewlinesAndComments() throws(TOMLFailure) {
        while true {
            switch byte(i) {
            case 0x20, 0x09, 0x0A: i += 1
            case 0x0D where byte(i + 1) == 0x0A: i += 2
            case UInt8(ascii: "#"): try skipComment()
            default: return
            }
        }
    }

    /// From `#` to the end of the line. Comments may hold any character but the control characters
    /// other than tab (U+0000–U+0008, U+000A–U+001F, U+007F); the CR of a CRLF ends the comment.
    mutating func skipComment() throws(TOMLFailure) {
        i += 1
        while true {
            let c = byte(i)
            if c >= 0x20 && c != 0x7F {
                if c == Self.eof { return }
                i += 1
                continue
            }
            switch c {
            case 0x09: i += 1
            case 0x0A: return
            case 0x0D where byte(i + 1) == 0x0A: return
            default: throw fail("\(describe(at: i)) is not allowed in a comment")
            }
        }
    }

    // MARK: - Error text

    /// A short human description of the character at `k`: `'x'`, `'é' (U+00E9)`, `end of line`.
    func describe(at k: Int) -> String {
        guard k < end else { return "end of input" }
        let c = input[k]
        switch c {
        case 0x0A: return "end of line"
        case 0x0D: return k + 1 < end && input[k + 1] == 0x0A ? "end of line" : "a carriage return (U+000D)"
        case 0x09: return "a tab"
        case 0x20: return "a space"
        case 0x21..<0x7F: return "'\(Character(Unicode.Scalar(c)))'"
        case 0..<0x20, 0x7F: return "control character \(Self.codePoint(UInt32(c)))"
        default:
            let length = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : 2
            let text = String(decoding: UnsafeBufferPointer(rebasing: input[k..<min(k + length, end)]), as: UTF8.self)
            let scalar = text.unicodeScalars.first.map { $0.value } ?? 0xFFFD
            return "'\(text)' (\(Self.codePoint(scalar)))"
        }
    }

    static func codePoint(_ value: UInt32) -> String {
        let hex = String(value, radix: 16, uppercase: true)
        return "U+" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
    }
}
