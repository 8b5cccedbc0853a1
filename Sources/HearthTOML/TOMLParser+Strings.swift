// The four string forms (https://toml.io/en/v1.0.0#string), read by one scanner.

/// One of TOML's four string forms: which quote delimits it, whether it spans lines, and how its
/// errors read. Basic strings (`"`) have escapes; literal strings (`'`) are verbatim.
struct TOMLStringForm {
    let quote: UInt8
    let multiline: Bool
    /// "unterminated …", at the opening quote.
    let unterminated: String
    /// What a disallowed character is told: "must be escaped in a string" / "is not allowed in a literal string".
    let disallowed: String
    /// For a single-line form reaching a newline: "basic" / "literal".
    let kind: String

    var escapes: Bool { quote == UInt8(ascii: "\"") }

    static let basic = TOMLStringForm(quote: UInt8(ascii: "\""), multiline: false, unterminated: "unterminated string",
                                      disallowed: "must be escaped in a string", kind: "basic")
    static let multilineBasic = TOMLStringForm(quote: UInt8(ascii: "\""), multiline: true, unterminated: "unterminated multi-line string",
                                               disallowed: "must be escaped in a string", kind: "basic")
    static let literal = TOMLStringForm(quote: UInt8(ascii: "'"), multiline: false, unterminated: "unterminated literal string",
                                        disallowed: "is not allowed in a literal string", kind: "literal")
    static let multilineLiteral = TOMLStringForm(quote: UInt8(ascii: "'"), multiline: true, unterminated: "unterminated multi-line literal string",
                                                 disallowed: "is not allowed in a literal string", kind: "literal")

    /// A byte that is content as it is: printable ASCII other than the quote (and, with escapes, the
    /// backslash), or any byte of a non-ASCII scalar.
    @inline(__always) func isPlain(_ c: UInt8) -> Bool {
        c >= 0x20 && c != 0x7F && c != TOMLParser.eof && c != quote && !(escapes && c == UInt8(ascii: "\\"))
    }
}

extension TOMLParser {
    /// Reads a string of `form` starting at its opening quote(s). Strings without escapes or CRLFs
    /// are sliced straight from the input; the others are assembled in `scratch`.
    ///
    /// - `"…"`: one line, escapes, no control characters but tab.
    /// - `"""…"""`: a newline right after the opening quotes is dropped, CRLF reads as LF, a
    ///   backslash at the end of a line swallows the following whitespace and newlines, and up to two
    ///   quotes may precede the closing three.
    /// - `'…'`: one line, verbatim, no control characters but tab.
    /// - `'''…'''`: verbatim except that a newline right after the opening quotes is dropped and CRLF
    ///   reads as LF; up to two apostrophes may precede the closing three.
    mutating func parseString(_ form: TOMLStringForm) throws(TOMLFailure) -> String {
        let open = i
        i += form.multiline ? 3 : 1
        if form.multiline { skipNewlineAfterOpeningDelimiter() }
        var runStart = i
        var assembled = false
        scratch.removeAll(keepingCapacity: true)
        while true {
            let c = byte(i)
            if form.isPlain(c) {
                i += 1
                continue
            }
            switch c {
            case form.quote:
                guard form.multiline else {
                    let text = makeString(runStart, i, assembled: assembled)
                    i += 1
                    return text
                }
                if let end = try closingDelimiter(c) {
                    let text = makeString(runStart, end.contentEnd, assembled: assembled)
                    i = end.next
                    return text
                }
            case UInt8(ascii: "\\") where form.escapes:
                assembled = true
                appendInput(runStart, i)
                try parseEscape(multiline: form.multiline)
                runStart = i
            case 0x09:
                i += 1
            case 0x0A where form.multiline:
                i += 1
            case 0x0D where form.multiline:
                try skipCRLFInString(runStart: &runStart, assembled: &assembled)
            case 0x0A, 0x0D:
                guard c == 0x0A || byte(i + 1) == 0x0A else { throw fail("\(describe(at: i)) \(form.disallowed)") }
                throw fail("unterminated string: a \(form.kind) string must end on the line where it starts")
            case Self.eof:
                throw fail(form.unterminated, at: open)
            default:
                throw fail("\(describe(at: i)) \(form.disallowed)")
            }
        }
    }

    // MARK: - Pieces

    /// At a run of `quote` inside a multi-line string: nil (and past the run) when it is shorter than
    /// three; otherwise where the content ends and where parsing resumes. The first three quotes close
    /// the string, so a run of 4 or 5 leaves 1 or 2 quotes in the content and a run of 6 or more is
    /// an error.
    mutating func closingDelimiter(_ quote: UInt8) throws(TOMLFailure) -> (contentEnd: Int, next: Int)? {
        var n = 1
        while byte(i + n) == quote { n += 1 }
        if n < 3 {
            i += n
            return nil
        }
        if n > 5 {
            let q = Character(Unicode.Scalar(quote))
            throw fail("too many \(q) in a row: a multi-line string may end with at most five", at: i + 5)
        }
        return (i + n - 3, i + n)
    }

    mutating func skipNewlineAfterOpeningDelimiter() {
        if byte(i) == 0x0A {
            i += 1
        } else if byte(i) == 0x0D && byte(i + 1) == 0x0A {
            i += 2
        }
    }

    /// At a CR inside a multi-line string: drops it from the content if an LF follows.
    mutating func skipCRLFInString(runStart: inout Int, assembled: inout Bool) throws(TOMLFailure) {
        guard byte(i + 1) == 0x0A else {
            throw fail("a carriage return must be followed by a line feed")
        }
        assembled = true
        appendInput(runStart, i)
        i += 1
        runStart = i
    }

    /// At `\` in a basic string: appends the escaped character to `scratch` and moves past it.
    mutating func parseEscape(multiline: Bool) throws(TOMLFailure) {
        let c = byte(i + 1)
        switch c {
        case UInt8(ascii: "b"): scratch.append(0x08)
        case UInt8(ascii: "t"): scratch.append(0x09)
        case UInt8(ascii: "n"): scratch.append(0x0A)
        case UInt8(ascii: "f"): scratch.append(0x0C)
        case UInt8(ascii: "r"): scratch.append(0x0D)
        case UInt8(ascii: "\""): scratch.append(0x22)
        case UInt8(ascii: "\\"): scratch.append(0x5C)
        case UInt8(ascii: "u"): return try parseUnicodeEscape(digits: 4)
        case UInt8(ascii: "U"): return try parseUnicodeEscape(digits: 8)
        case 0x20, 0x09, 0x0A, 0x0D:
            guard multiline else { throw invalidEscape() }
            return try skipLineEndingBackslash()
        case Self.eof:
            throw fail("unterminated string")
        default:
            throw invalidEscape()
        }
        i += 2
    }

    func invalidEscape() -> TOMLFailure {
        fail("invalid escape sequence: '\\' followed by \(describe(at: i + 1))")
    }

    /// `\uXXXX` or `\UXXXXXXXX`: exactly that many hex digits naming a Unicode scalar value (so not a
    /// surrogate and not above U+10FFFF).
    mutating func parseUnicodeEscape(digits: Int) throws(TOMLFailure) {
        var value: UInt32 = 0
        for k in 0..<digits {
            guard let d = Self.hexDigitValue(byte(i + 2 + k)) else {
                let form = digits == 4 ? "\\uXXXX" : "\\UXXXXXXXX"
                throw fail("invalid Unicode escape: expected \(form) with \(digits) hex digits")
            }
            value = value << 4 | UInt32(d)
        }
        guard let scalar = Unicode.Scalar(value) else {
            throw fail("invalid Unicode escape: \(Self.codePoint(value)) is not a Unicode scalar value")
        }
        UTF8.encode(scalar) { scratch.append($0) }
        i += 2 + digits
    }

    /// A `\` followed by optional spaces or tabs and a newline: skips it all and every whitespace and
    /// newline after it, up to the next other character.
    mutating func skipLineEndingBackslash() throws(TOMLFailure) {
        var k = i + 1
        while byte(k) == 0x20 || byte(k) == 0x09 { k += 1 }
        if byte(k) == 0x0A {
            k += 1
        } else if byte(k) == 0x0D && byte(k + 1) == 0x0A {
            k += 2
        } else if k < end {
            throw fail("a backslash followed by whitespace must be the last thing on its line")
        }
        while true {
            let c = byte(k)
            if c == 0x20 || c == 0x09 || c == 0x0A {
                k += 1
            } else if c == 0x0D && byte(k + 1) == 0x0A {
                k += 2
            } else {
                break
            }
        }
        i = k
    }

    @inline(__always) static func hexDigitValue(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return c - UInt8(ascii: "A") + 10
        default: return nil
        }
    }

    mutating func appendInput(_ from: Int, _ to: Int) {
        if to > from { scratch.append(contentsOf: UnsafeBufferPointer(rebasing: input[from..<to])) }
    }

    /// The string for input bytes `from..<to`, after whatever `scratch` already holds if `assembled`.
    mutating func makeString(_ from: Int, _ to: Int, assembled: Bool) -> String {
        if !assembled { return String(decoding: UnsafeBufferPointer(rebasing: input[from..<to]), as: UTF8.self) }
        appendInput(from, to)
        return String(decoding: scratch, as: UTF8.self)
    }
}
