/// One token of a rules file.
struct Token: Sendable {
    enum Kind: Sendable, Equatable {
        case identifier(String)
        /// The literal's text, digits only; the parser converts it (and reports overflow there).
        case int(String)
        case float(Double)
        case string(String)
        /// A bytes literal: `b'…'` or `b"…"`.
        case bytes([UInt8])
        /// An operator or punctuation mark: `{`, `==`, `&&`, `/`…
        case symbol(String)
        case end
    }

    var kind: Kind
    /// Offset of the first scalar, so the parser can rescan the source from here (path literals).
    var start: Int

    func isSymbol(_ s: String) -> Bool { kind == .symbol(s) }
    func isWord(_ w: String) -> Bool { kind == .identifier(w) }
}

/// Splits rules source into tokens on demand. The parser drives it one token at a time and can
/// move it back to a token's start, because `/` means division after an operand but begins a path
/// literal (`/databases/$(database)/documents/…`) where an operand is expected; the parser knows
/// which, the lexer does not.
struct Lexer {
    let scalars: [Unicode.Scalar]
    let sourceMap: SourceMap
    var position = 0

    init(_ source: String, fileName: String) {
        scalars = Array(source.unicodeScalars)
        sourceMap = SourceMap(scalars, fileName: fileName)
    }

    func location(_ offset: Int) -> SourceLocation { sourceMap.location(offset) }

    func error(_ message: String, at offset: Int) -> RulesError {
        RulesError(message, at: location(offset))
    }

    func scalar(at offset: Int) -> Unicode.Scalar? { offset < scalars.count ? scalars[offset] : nil }
    var current: Unicode.Scalar? { scalar(at: position) }

    static func isIdentifierStart(_ s: Unicode.Scalar) -> Bool {
        s == "_" || (s >= "a" && s <= "z") || (s >= "A" && s <= "Z")
    }
    static func isIdentifierPart(_ s: Unicode.Scalar) -> Bool { isIdentifierStart(s) || isDigit(s) }
    static func isDigit(_ s: Unicode.Scalar) -> Bool { s >= "0" && s <= "9" }

    /// Skips whitespace and `//` and `/* */` comments.
    mutating func skipTrivia() throws(RulesError) {
        while let s = current {
            if s == " " || s == "\t" || s == "\n" || s == "\r" || s == "\u{FEFF}" {
                position += 1
            } else if s == "/" && scalar(at: position + 1) == "/" {
                while let c = current, c != "\n" { position += 1 }
            } else if s == "/" && scalar(at: position + 1) == "*" {
                let start = position
                position += 2
                while true {
                    guard let c = current else { throw error("unterminated comment", at: start) }
                    if c == "*" && scalar(at: position + 1) == "/" { position += 2; break }
                    position += 1
                }
            } else {
                return
            }
        }
    }

    private static let twoCharacterSymbols: Set<String> = ["==", "!=", "<=", ">=", "&&", "||", "$("]
    private static let oneCharacterSymbols: Set<Unicode.Scalar> = [
        "{", "}", "(", ")", "[", "]", ";", ",", ":", ".", "?", "!", "=", "<", ">", "+", "-", "*", "/", "%", "|",
    ]

    mutating func next() throws(RulesError) -> Token {
        try skipTrivia()
        let start = position
        guard let s = current else { return Token(kind: .end, start: start) }
        if s == "b", let q = scalar(at: position + 1), q == "'" || q == "\"" {
            position += 1
            return Token(kind: .bytes(try bytes(quote: q)), start: start)
        }
        if Lexer.isIdentifierStart(s) {
            var word = String.UnicodeScalarView()
            while let c = current, Lexer.isIdentifierPart(c) { word.append(c); position += 1 }
            return Token(kind: .identifier(String(word)), start: start)
        }
        if Lexer.isDigit(s) { return try number(start) }
        if s == "'" || s == "\"" { return Token(kind: .string(try string(quote: s)), start: start) }
        if let n = scalar(at: position + 1) {
            let pair = String(String.UnicodeScalarView([s, n]))
            if Lexer.twoCharacterSymbols.contains(pair) {
                position += 2
                return Token(kind: .symbol(pair), start: start)
            }
        }
        if Lexer.oneCharacterSymbols.contains(s) {
            position += 1
            return Token(kind: .symbol(String(s)), start: start)
        }
        throw error("unexpected character '\(s.escaped(asASCII: true))'", at: start)
    }

    private mutating func number(_ start: Int) throws(RulesError) -> Token {
        var text = ""
        while let c = current, Lexer.isDigit(c) { text.unicodeScalars.append(c); position += 1 }
        var isFloat = false
        if current == ".", let after = scalar(at: position + 1), Lexer.isDigit(after) {
            isFloat = true
            text.append(".")
            position += 1
            while let c = current, Lexer.isDigit(c) { text.unicodeScalars.append(c); position += 1 }
        }
        if current == "e" || current == "E" {
            var p = position + 1
            if scalar(at: p) == "+" || scalar(at: p) == "-" { p += 1 }
            if let d = scalar(at: p), Lexer.isDigit(d) {
                isFloat = true
                text.unicodeScalars.append(contentsOf: scalars[position..<p])
                position = p
                while let c = current, Lexer.isDigit(c) { text.unicodeScalars.append(c); position += 1 }
            }
        }
        if let c = current, Lexer.isIdentifierStart(c) {
            throw error("unexpected '\(c)' after the number \(text)", at: position)
        }
        if isFloat {
            guard let value = Double(text), value.isFinite else { throw error("float literal \(text) is out of range", at: start) }
            return Token(kind: .float(value), start: start)
        }
        return Token(kind: .int(text), start: start)
    }

    /// A bytes literal's body after its `b` (https://firebase.google.com/docs/reference/rules/rules.Bytes):
    /// characters stand for their UTF-8 bytes, `\xHH` for one byte (two hex digits), `\ooo` for
    /// one byte (three octal digits, at most 377), and the string escapes for theirs.
    private mutating func bytes(quote: Unicode.Scalar) throws(RulesError) -> [UInt8] {
        let start = position
        position += 1
        var out: [UInt8] = []
        while true {
            guard let c = current, c != "\n" else {
                throw error("unterminated bytes literal (it ends on the line it starts, with \(quote))", at: start)
            }
            position += 1
            if c == quote { return out }
            if c != "\\" { out.append(contentsOf: Array(String(c).utf8)); continue }
            let escapeStart = position - 1
            guard let e = current else { continue }
            position += 1
            func digits(_ count: Int, radix: UInt32) throws(RulesError) -> UInt32 {
                var value: UInt32 = 0
                for _ in 0..<count {
                    guard let d = current, d.isASCII, let v = UInt32(String(d), radix: Int(radix)) else {
                        throw error("bytes escape needs \(count) \(radix == 16 ? "hexadecimal" : "octal") digits", at: escapeStart)
                    }
                    value = value * radix + v
                    position += 1
                }
                return value
            }
            switch e {
            case "\\", "'", "\"", "/": out.append(UInt8(e.value))
            case "n": out.append(0x0A)
            case "r": out.append(0x0D)
            case "t": out.append(0x09)
            case "b": out.append(0x08)
            case "f": out.append(0x0C)
            case "v": out.append(0x0B)
            case "x", "X": out.append(UInt8(try digits(2, radix: 16)))
            case "0"..."3":
                position -= 1
                out.append(UInt8(try digits(3, radix: 8)))
            default: throw error("unknown escape \\\(e) in a bytes literal", at: escapeStart)
            }
        }
    }

    /// A string literal after its opening quote: escapes `\\ \' \" \n \r \t \b \f \v \0 \/`,
    /// `\xHH`, `\uHHHH` and `\UHHHHHHHH`. A line break or the end of the file before the closing
    /// quote is an error at the opening quote.
    private mutating func string(quote: Unicode.Scalar) throws(RulesError) -> String {
        let start = position
        position += 1
        var out = String.UnicodeScalarView()
        while true {
            guard let c = current, c != "\n" else {
                throw error("unterminated string (a string ends on the line it starts, with \(quote))", at: start)
            }
            position += 1
            if c == quote { return String(out) }
            if c != "\\" { out.append(c); continue }
            let escapeStart = position - 1
            guard let e = current else { continue }
            position += 1
            switch e {
            case "\\", "'", "\"", "/": out.append(e)
            case "n": out.append("\n")
            case "r": out.append("\r")
            case "t": out.append("\t")
            case "b": out.append("\u{8}")
            case "f": out.append("\u{C}")
            case "v": out.append("\u{B}")
            case "0": out.append("\u{0}")
            case "x", "u", "U":
                let count = e == "x" ? 2 : (e == "u" ? 4 : 8)
                var code: UInt32 = 0
                for _ in 0..<count {
                    guard let h = current, let digit = Lexer.hexValue(h) else {
                        throw error("invalid escape: \\\(e) needs \(count) hexadecimal digits", at: escapeStart)
                    }
                    code = code * 16 + digit
                    position += 1
                }
                guard let scalar = Unicode.Scalar(code) else {
                    throw error("invalid escape: U+\(String(code, radix: 16, uppercase: true)) is not a Unicode scalar", at: escapeStart)
                }
                out.append(scalar)
            default:
                throw error("unknown escape '\\\(e)' in string", at: escapeStart)
            }
        }
    }

    static func hexValue(_ s: Unicode.Scalar) -> UInt32? {
        switch s {
        case "0"..."9": return s.value - 48
        case "a"..."f": return s.value - 87
        case "A"..."F": return s.value - 55
        default: return nil
        }
    }
}

/// Turns scalar offsets into lines and columns; kept by the ruleset to report where an evaluation
/// error happened.
struct SourceMap: Sendable {
    let fileName: String
    /// Offsets where each line begins.
    private let lineStarts: [Int]

    init(_ scalars: [Unicode.Scalar], fileName: String) {
        self.fileName = fileName
        var starts = [0]
        for (i, s) in scalars.enumerated() where s == "\n" { starts.append(i + 1) }
        lineStarts = starts
    }

    func location(_ offset: Int) -> SourceLocation {
        // The last line start at or before the offset.
        var lo = 0, hi = lineStarts.count - 1
        while lo < hi {
            let mid = (lo + hi + 1) / 2
            if lineStarts[mid] <= offset { lo = mid } else { hi = mid - 1 }
        }
        return SourceLocation(fileName: fileName, line: lo + 1, column: offset - lineStarts[lo] + 1)
    }
}
