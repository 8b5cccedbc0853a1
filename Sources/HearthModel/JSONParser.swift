/// A JSON parse failure: what is wrong and the byte offset where it was found.
public struct JSONError: Error, Sendable, Equatable, CustomStringConvertible {
    public var offset: Int
    public var message: String

    public init(offset: Int, message: String) {
        self.offset = offset
        self.message = message
    }

    public var description: String { "invalid JSON at byte \(offset): \(message)" }
}

/// How JSON maps onto `Value`.
public struct JSONReadOptions: Sendable {
    /// Arrays and objects nested deeper than this are refused.
    public var maxDepth: Int = ValueLimits.maxCarriedDepth
    /// Reads Hearth's tags for non-JSON types: single-key objects `{"$timestamp": "RFC 3339"}`,
    /// `{"$bytes": "base64"}`, `{"$reference": "a/b"}`, `{"$geopoint": {"latitude": 1, "longitude": 2}}`,
    /// `{"$double": "NaN" | "Infinity" | "-Infinity"}`, and `{"$map": {…}}` for a map whose only
    /// key starts with `$` (taken as is, so it is never mistaken for a tag).
    public var tagged: Bool = false
    /// Reads the Firebase callable wrappers `{"@type": "type.googleapis.com/google.protobuf.Int64Value", "value": "…"}`
    /// (and UInt64Value) as exact integers.
    public var callableWrappers: Bool = false

    public init(maxDepth: Int = ValueLimits.maxCarriedDepth, tagged: Bool = false, callableWrappers: Bool = false) {
        self.maxDepth = maxDepth
        self.tagged = tagged
        self.callableWrappers = callableWrappers
    }

    public static let plain = JSONReadOptions()
    public static let tagged = JSONReadOptions(tagged: true)
    /// A callable request body `{"data": …}`: the data at most `ValueLimits.maxDepth` deep.
    public static let callable = JSONReadOptions(maxDepth: ValueLimits.maxDepth + 1, callableWrappers: true)
    /// A request body from a client holding a value (the admin API, the CLI): tags and wrappers read,
    /// the value at most `ValueLimits.maxDepth` deep inside its envelope object.
    public static let clientBody = JSONReadOptions(maxDepth: ValueLimits.maxDepth + 1, tagged: true, callableWrappers: true)
}

/// A strict RFC 8259 parser from UTF-8 bytes to `Value`, written for speed.
///
/// Integers without fraction or exponent that fit in 64 bits become `.int` exactly; every other number
/// becomes `.double`. Invalid UTF-8, lone surrogates in `\u` escapes, trailing content and nesting past
/// `maxDepth` are errors that name the byte offset. Duplicate object keys: the last one wins.
public enum JSONParser {
    public static func parse(_ bytes: [UInt8], options: JSONReadOptions = .plain) throws(JSONError) -> Value {
        try bytes.withUnsafeBufferPointer { (buffer) throws(JSONError) -> Value in
            try parse(buffer, options: options)
        }
    }

    public static func parse(_ text: String, options: JSONReadOptions = .plain) throws(JSONError) -> Value {
        var text = text
        var outcome: Result<Value, JSONError> = .failure(JSONError(offset: 0, message: "empty input"))
        text.withUTF8 { buffer in
            outcome = Result { () throws(JSONError) -> Value in try parse(buffer, options: options) }
        }
        return try outcome.get()
    }

    public static func parse(_ buffer: UnsafeBufferPointer<UInt8>, options: JSONReadOptions = .plain) throws(JSONError) -> Value {
        var reader = JSONReader(buffer, options: options)
        return try reader.parseDocument()
    }

    public static func parse(_ buffer: UnsafeRawBufferPointer, options: JSONReadOptions = .plain) throws(JSONError) -> Value {
        try parse(buffer.bindMemory(to: UInt8.self), options: options)
    }

    /// The value of `key` when the document is an object with that member and no other (`{"data":
    /// …}`, a callable's envelope; a repeated `key`: the last one wins), else nil. The answer of
    /// `parse` followed by a look-up in a map of one member, without building that map; a document
    /// that is not such an object is not read past the point where that shows, so it is nil even
    /// when the rest is not JSON. Errors before that point, and in the member's value, throw as
    /// `parse` does (two forms of `key` that differ only in Unicode normalization included). With
    /// tagged reading, whose one-member objects can be tags or the `$map` escape, the document is
    /// parsed whole and the member looked up.
    public static func onlyMember(_ key: String, of bytes: [UInt8], options: JSONReadOptions = .plain) throws(JSONError) -> Value? {
        try bytes.withUnsafeBufferPointer { (buffer) throws(JSONError) -> Value? in
            var reader = JSONReader(buffer, options: options)
            return try reader.parseOnlyMember(key)
        }
    }
}

struct JSONReader {
    let base: UnsafePointer<UInt8>?
    let end: Int
    var i = 0
    var depth = 0
    let options: JSONReadOptions
    var scratch: [UInt8] = []
    /// Members and items of the containers being parsed, as a stack shared by all nesting levels:
    /// each container collects here and is built once at its end with its exact size.
    var memberStack: [(String, Value)] = []
    var itemStack: [Value] = []
    /// Set while parsing the value of a leading `"$map"` key in tagged mode: that object is read
    /// without tag interpretation, in case it turns out to be the escaped map (see `decodeSpecial`).
    var suppressTagOnce = false

    init(_ buffer: UnsafeBufferPointer<UInt8>, options: JSONReadOptions) {
        self.base = buffer.baseAddress
        self.end = buffer.count
        self.options = options
    }

    @inline(__always) func byte(_ at: Int) -> UInt8 { base.unsafelyUnwrapped[at] }

    func fail(_ message: String, at offset: Int? = nil) -> JSONError {
        JSONError(offset: offset ?? i, message: message)
    }

    mutating func parseDocument() throws(JSONError) -> Value {
        skipWhitespace()
        if i >= end { throw fail(end == 0 ? "empty input" : "expected a value, found end of input") }
        let value = try parseValue()
        skipWhitespace()
        if i < end { throw fail("unexpected trailing content") }
        return value
    }

    /// See `JSONParser.onlyMember(_:of:options:)`.
    mutating func parseOnlyMember(_ key: String) throws(JSONError) -> Value? {
        if options.tagged {
            guard case .map(let members) = try parseDocument(), members.count == 1 else { return nil }
            return members[key]
        }
        skipWhitespace()
        if i >= end { throw fail(end == 0 ? "empty input" : "expected a value, found end of input") }
        guard byte(i) == UInt8(ascii: "{") else { return nil }
        let start = i
        try enter()
        i += 1
        skipWhitespace()
        var found: Value?
        // The first form of `key` met, as a map keeps it, and a later form that differs from it
        // only in Unicode normalization: `parseObject` refuses that object once it is read.
        var kept: String?
        var clash: String?
        if i < end && byte(i) == UInt8(ascii: "}") {
            i += 1
        } else {
            repeat {
                let name = try parseMemberKey()
                guard name == key else { return nil }
                if let kept, clash == nil, !UTF8Key.equal(kept, name) { clash = name }
                kept = kept ?? name
                found = try parseValue()
            } while try !parseMemberEnd()
        }
        depth -= 1
        if let kept, let clash { throw normalizationClash(kept, clash, at: start) }
        skipWhitespace()
        if i < end { throw fail("unexpected trailing content") }
        return found
    }

    func normalizationClash(_ kept: String, _ other: String, at offset: Int) -> JSONError {
        fail("the keys \(Printable.quoted(kept, limit: 40)) and \(Printable.quoted(other, limit: 40)) differ only in Unicode normalization; Hearth cannot keep both (use one form)", at: offset)
    }

    @inline(__always) mutating func skipWhitespace() {
        while i < end {
            let c = byte(i)
            if c == 0x20 || c == 0x0A || c == 0x0D || c == 0x09 { i += 1 } else { return }
        }
    }

    mutating func parseValue() throws(JSONError) -> Value {
        guard i < end else { throw fail("expected a value, found end of input") }
        switch byte(i) {
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "{"): return try parseObject()
        case UInt8(ascii: "["): return try parseArray()
        case UInt8(ascii: "t"): try expectLiteral("true"); return .bool(true)
        case UInt8(ascii: "f"): try expectLiteral("false"); return .bool(false)
        case UInt8(ascii: "n"): try expectLiteral("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try parseNumber()
        default:
            throw fail("unexpected character \(describeByte(byte(i)))")
        }
    }

    func describeByte(_ c: UInt8) -> String {
        if c >= 0x20 && c < 0x7F { return "'\(Character(Unicode.Scalar(c)))'" }
        return "0x" + String(c, radix: 16)
    }

    mutating func expectLiteral(_ literal: StaticString) throws(JSONError) {
        let n = literal.utf8CodeUnitCount
        let start = i
        guard end - i >= n else { throw fail("invalid literal", at: start) }
        let p = literal.utf8Start
        for k in 0..<n where byte(i + k) != p[k] { throw fail("invalid literal", at: start) }
        i += n
    }

    mutating func enter() throws(JSONError) {
        depth += 1
        if depth > options.maxDepth { throw fail("nesting deeper than \(options.maxDepth)") }
    }

    mutating func parseArray() throws(JSONError) -> Value {
        try enter()
        i += 1
        skipWhitespace()
        if i < end && byte(i) == UInt8(ascii: "]") {
            i += 1
            depth -= 1
            return .array([])
        }
        let base = itemStack.count
        while true {
            skipWhitespace()
            let item = try parseValue()
            itemStack.append(item)
            skipWhitespace()
            guard i < end else { throw fail("unterminated array") }
            let c = byte(i)
            i += 1
            if c == UInt8(ascii: ",") { continue }
            if c == UInt8(ascii: "]") { break }
            throw fail("expected ',' or ']' in array", at: i - 1)
        }
        depth -= 1
        let items = Array(itemStack[base...])
        itemStack.removeSubrange(base...)
        return .array(items)
    }

    /// An object member's key and the colon after it, whitespace around skipped.
    mutating func parseMemberKey() throws(JSONError) -> String {
        skipWhitespace()
        guard i < end else { throw fail("unterminated object") }
        guard byte(i) == UInt8(ascii: "\"") else { throw fail("expected a string key in object") }
        let key = try parseString()
        skipWhitespace()
        guard i < end, byte(i) == UInt8(ascii: ":") else { throw fail("expected ':' after object key") }
        i += 1
        skipWhitespace()
        return key
    }

    /// After a member's value: true at the object's closing brace, false at a comma.
    mutating func parseMemberEnd() throws(JSONError) -> Bool {
        skipWhitespace()
        guard i < end else { throw fail("unterminated object") }
        let c = byte(i)
        i += 1
        if c == UInt8(ascii: ",") { return false }
        if c == UInt8(ascii: "}") { return true }
        throw fail("expected ',' or '}' in object", at: i - 1)
    }

    mutating func parseObject() throws(JSONError) -> Value {
        try enter()
        let suppressTag = suppressTagOnce
        suppressTagOnce = false
        let start = i
        i += 1
        skipWhitespace()
        if i < end && byte(i) == UInt8(ascii: "}") {
            i += 1
            depth -= 1
            return .map([:])
        }
        // One allocation for the small objects most requests carry, where appending grew the
        // stack at its first, second and third member.
        if memberStack.capacity == 0 { memberStack.reserveCapacity(8) }
        let base = memberStack.count
        var escapedIndex: Int?
        repeat {
            let key = try parseMemberKey()
            if options.tagged && key == "$map" && memberStack.count == base && i < end && byte(i) == UInt8(ascii: "{") {
                escapedIndex = memberStack.count
                suppressTagOnce = true
            }
            let member = try parseValue()
            suppressTagOnce = false
            memberStack.append((key, member))
        } while try !parseMemberEnd()
        depth -= 1
        if let k = escapedIndex, memberStack.count - base > 1, case .map(let inner) = memberStack[k].1,
           let special = try decodeSpecial(inner, at: start) {
            // "$map" had siblings, so it was not the escape: its value's own tag counts after all.
            memberStack[k].1 = special
        }
        var members = [String: Value](minimumCapacity: memberStack.count - base)
        for k in base..<memberStack.count {
            let (key, member) = memberStack[k]
            // A repeated key: the last one wins. Two keys Swift's String takes for one (canonically
            // equivalent, "é" and "e\u{301}") but Firestore keeps apart cannot both be kept:
            // refused, rather than one silently lost.
            if members.updateValue(member, forKey: key) != nil, let kept = members.index(forKey: key), !UTF8Key.equal(members[kept].key, key) {
                throw normalizationClash(members[kept].key, key, at: start)
            }
        }
        memberStack.removeSubrange(base...)
        if members.count <= 2 && !suppressTag && (options.tagged || options.callableWrappers) {
            if let special = try decodeSpecial(members, at: start) { return special }
        }
        return .map(members)
    }

    func decodeSpecial(_ members: [String: Value], at offset: Int) throws(JSONError) -> Value? {
        if options.callableWrappers, members.count == 2, case .string(let type)? = members["@type"] {
            guard case .string(let text)? = members["value"] else { return nil }
            switch type {
            case CallableWrapper.int64Type:
                guard let v = Int64(text) else { throw fail("Int64Value wrapper with invalid value \"\(text)\"", at: offset) }
                return .int(v)
            case CallableWrapper.uint64Type:
                guard let v = UInt64(text) else { throw fail("UInt64Value wrapper with invalid value \"\(text)\"", at: offset) }
                return v <= UInt64(Int64.max) ? .int(Int64(v)) : .double(Double(v))
            default:
                return nil
            }
        }
        guard options.tagged, members.count == 1, let (key, value) = members.first, key.utf8.first == UInt8(ascii: "$") else { return nil }
        switch key {
        case "$timestamp":
            guard case .string(let text) = value, let t = Timestamp(rfc3339: text) else {
                throw fail("$timestamp needs an RFC 3339 string", at: offset)
            }
            return .timestamp(t)
        case "$bytes":
            guard case .string(let text) = value, let b = Base64.decode(text) else {
                throw fail("$bytes needs a base64 string", at: offset)
            }
            return .bytes(b)
        case "$reference":
            guard case .string(let text) = value else { throw fail("$reference needs a string path", at: offset) }
            return .reference(text)
        case "$geopoint":
            guard let lat = value["latitude"]?.doubleValue, let lng = value["longitude"]?.doubleValue else {
                throw fail("$geopoint needs numeric latitude and longitude", at: offset)
            }
            return .geoPoint(GeoPoint(latitude: lat, longitude: lng))
        case "$map":
            guard case .map = value else { return nil }  // not the escape: a plain map with key "$map"
            return value
        case "$double":
            switch value.stringValue {
            case "NaN": return .double(.nan)
            case "Infinity": return .double(.infinity)
            case "-Infinity": return .double(-.infinity)
            default: throw fail("$double needs \"NaN\", \"Infinity\" or \"-Infinity\"", at: offset)
            }
        default:
            return nil
        }
    }

    // MARK: strings

    mutating func parseString() throws(JSONError) -> String {
        let start = i
        i += 1
        let contentStart = i
        // Fast path: no escapes. Skip plain ASCII eight bytes at a time, then validate UTF-8 as we scan.
        while i < end {
            i = skipPlainASCII(from: i)
            guard i < end else { break }
            let c = byte(i)
            if c == UInt8(ascii: "\"") {
                let s = String(decoding: UnsafeBufferPointer(start: base.unsafelyUnwrapped + contentStart, count: i - contentStart), as: UTF8.self)
                i += 1
                return s
            }
            if c == UInt8(ascii: "\\") { break }
            if c < 0x20 { throw fail("unescaped control character in string") }
            if c < 0x80 { i += 1 } else { try skipUTF8Sequence() }
        }
        if i >= end { throw fail("unterminated string", at: start) }
        // Slow path: copy what we have, then decode escapes.
        scratch.removeAll(keepingCapacity: true)
        scratch.append(contentsOf: UnsafeBufferPointer(start: base.unsafelyUnwrapped + contentStart, count: i - contentStart))
        while i < end {
            let c = byte(i)
            if c == UInt8(ascii: "\"") {
                i += 1
                return String(decoding: scratch, as: UTF8.self)
            }
            if c == UInt8(ascii: "\\") {
                try parseEscape()
            } else if c < 0x20 {
                throw fail("unescaped control character in string")
            } else if c < 0x80 {
                scratch.append(c)
                i += 1
            } else {
                let s = i
                try skipUTF8Sequence()
                scratch.append(contentsOf: UnsafeBufferPointer(start: base.unsafelyUnwrapped + s, count: i - s))
            }
        }
        throw fail("unterminated string", at: start)
    }

    /// The first index at or after `from` holding a byte that needs a look: a quote, a backslash, a
    /// control character or a non-ASCII byte. Reads eight bytes at a time (SWAR: a byte is flagged
    /// when its high bit survives the classic "has zero byte" test for each pattern).
    @inline(__always)
    func skipPlainASCII(from start: Int) -> Int {
        var k = start
        let p = UnsafeRawPointer(base.unsafelyUnwrapped)
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        while k + 8 <= end {
            let w = p.loadUnaligned(fromByteOffset: k, as: UInt64.self)
            let quote = w ^ (ones &* 0x22)
            let slash = w ^ (ones &* 0x5C)
            let hasQuote = (quote &- ones) & ~quote & highs
            let hasSlash = (slash &- ones) & ~slash & highs
            let hasControl = (w &- ones &* 0x20) & ~w & highs  // bytes < 0x20 (for bytes < 0x80)
            let flagged = hasQuote | hasSlash | hasControl | (w & highs)
            if flagged != 0 { return k + flagged.trailingZeroBitCount / 8 }
            k += 8
        }
        return k
    }

    mutating func parseEscape() throws(JSONError) {
        let at = i
        guard i + 1 < end else { throw fail("unterminated escape", at: at) }
        let e = byte(i + 1)
        i += 2
        switch e {
        case UInt8(ascii: "\""): scratch.append(0x22)
        case UInt8(ascii: "\\"): scratch.append(0x5C)
        case UInt8(ascii: "/"): scratch.append(0x2F)
        case UInt8(ascii: "b"): scratch.append(0x08)
        case UInt8(ascii: "f"): scratch.append(0x0C)
        case UInt8(ascii: "n"): scratch.append(0x0A)
        case UInt8(ascii: "r"): scratch.append(0x0D)
        case UInt8(ascii: "t"): scratch.append(0x09)
        case UInt8(ascii: "u"):
            var scalar = try readHex4(at: at)
            if scalar >= 0xD800 && scalar <= 0xDBFF {
                guard i + 1 < end, byte(i) == UInt8(ascii: "\\"), byte(i + 1) == UInt8(ascii: "u") else {
                    throw fail("unpaired high surrogate in \\u escape", at: at)
                }
                i += 2
                let low = try readHex4(at: i - 2)
                guard low >= 0xDC00 && low <= 0xDFFF else { throw fail("invalid low surrogate in \\u escape", at: at) }
                scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
            } else if scalar >= 0xDC00 && scalar <= 0xDFFF {
                throw fail("unpaired low surrogate in \\u escape", at: at)
            }
            appendScalar(scalar)
        default:
            throw fail("invalid escape \\\(describeByte(e))", at: at)
        }
    }

    mutating func readHex4(at escapeStart: Int) throws(JSONError) -> UInt32 {
        guard i + 4 <= end else { throw fail("truncated \\u escape", at: escapeStart) }
        var v: UInt32 = 0
        for _ in 0..<4 {
            let c = byte(i)
            let d: UInt32
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): d = UInt32(c - 48)
            case UInt8(ascii: "a")...UInt8(ascii: "f"): d = UInt32(c - 87)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): d = UInt32(c - 55)
            default: throw fail("invalid hex digit in \\u escape", at: escapeStart)
            }
            v = v << 4 | d
            i += 1
        }
        return v
    }

    mutating func appendScalar(_ v: UInt32) {
        if v < 0x80 {
            scratch.append(UInt8(v))
        } else if v < 0x800 {
            scratch.append(UInt8(0xC0 | (v >> 6)))
            scratch.append(UInt8(0x80 | (v & 0x3F)))
        } else if v < 0x10000 {
            scratch.append(UInt8(0xE0 | (v >> 12)))
            scratch.append(UInt8(0x80 | ((v >> 6) & 0x3F)))
            scratch.append(UInt8(0x80 | (v & 0x3F)))
        } else {
            scratch.append(UInt8(0xF0 | (v >> 18)))
            scratch.append(UInt8(0x80 | ((v >> 12) & 0x3F)))
            scratch.append(UInt8(0x80 | ((v >> 6) & 0x3F)))
            scratch.append(UInt8(0x80 | (v & 0x3F)))
        }
    }

    /// Validates one multi-byte UTF-8 sequence at `i` (RFC 3629: no overlongs, no surrogates, ≤ U+10FFFF).
    @inline(__always)
    mutating func skipUTF8Sequence() throws(JSONError) {
        let c0 = byte(i)
        func cont(_ k: Int) -> UInt8? {
            guard i + k < end else { return nil }
            let c = byte(i + k)
            return c & 0xC0 == 0x80 ? c : nil
        }
        switch c0 {
        case 0xC2...0xDF:
            guard cont(1) != nil else { throw fail("invalid UTF-8") }
            i += 2
        case 0xE0...0xEF:
            guard let c1 = cont(1), cont(2) != nil else { throw fail("invalid UTF-8") }
            if c0 == 0xE0 && c1 < 0xA0 { throw fail("invalid UTF-8 (overlong)") }
            if c0 == 0xED && c1 >= 0xA0 { throw fail("invalid UTF-8 (surrogate)") }
            i += 3
        case 0xF0...0xF4:
            guard let c1 = cont(1), cont(2) != nil, cont(3) != nil else { throw fail("invalid UTF-8") }
            if c0 == 0xF0 && c1 < 0x90 { throw fail("invalid UTF-8 (overlong)") }
            if c0 == 0xF4 && c1 >= 0x90 { throw fail("invalid UTF-8 (above U+10FFFF)") }
            i += 4
        default:
            throw fail("invalid UTF-8")
        }
    }

    // MARK: numbers

    mutating func parseNumber() throws(JSONError) -> Value {
        let start = i
        var negative = false
        if byte(i) == UInt8(ascii: "-") {
            negative = true
            i += 1
        }
        guard i < end, isDigit(byte(i)) else { throw fail("invalid number", at: start) }
        var mantissa: UInt64 = 0
        var digits = 0
        var overflow = false
        if byte(i) == UInt8(ascii: "0") {
            i += 1
            if i < end && isDigit(byte(i)) { throw fail("leading zero in number", at: start) }
        } else {
            while i < end, isDigit(byte(i)) {
                let d = UInt64(byte(i) - 48)
                if !overflow {
                    let (m1, o1) = mantissa.multipliedReportingOverflow(by: 10)
                    let (m2, o2) = m1.addingReportingOverflow(d)
                    if o1 || o2 { overflow = true } else { mantissa = m2 }
                }
                digits += 1
                i += 1
            }
        }
        var isInteger = true
        var fractionDigits = 0
        if i < end && byte(i) == UInt8(ascii: ".") {
            isInteger = false
            i += 1
            guard i < end, isDigit(byte(i)) else { throw fail("expected digits after '.'", at: start) }
            while i < end, isDigit(byte(i)) {
                if !overflow && digits < 19 {
                    mantissa = mantissa * 10 + UInt64(byte(i) - 48)
                    fractionDigits += 1
                    digits += 1
                } else {
                    overflow = true  // too many digits for the fast paths; Double(text) below is exact
                }
                i += 1
            }
        }
        var exponent = 0
        if i < end && (byte(i) == UInt8(ascii: "e") || byte(i) == UInt8(ascii: "E")) {
            isInteger = false
            i += 1
            var expNegative = false
            if i < end && (byte(i) == UInt8(ascii: "+") || byte(i) == UInt8(ascii: "-")) {
                expNegative = byte(i) == UInt8(ascii: "-")
                i += 1
            }
            guard i < end, isDigit(byte(i)) else { throw fail("expected digits in exponent", at: start) }
            while i < end, isDigit(byte(i)) {
                if exponent < 100_000 { exponent = exponent * 10 + Int(byte(i) - 48) }
                i += 1
            }
            if expNegative { exponent = -exponent }
        }
        if isInteger && !overflow {
            if negative {
                if mantissa <= UInt64(Int64.max) { return .int(-Int64(mantissa)) }
                if mantissa == UInt64(Int64.max) + 1 { return .int(Int64.min) }
            } else if mantissa <= UInt64(Int64.max) {
                return .int(Int64(mantissa))
            }
        }
        // Clinger's fast path: exact when the mantissa and the power of ten are both exact doubles.
        let e10 = exponent - fractionDigits
        if !overflow && mantissa < (1 << 53) && e10 >= -22 && e10 <= 22 {
            var d = Double(mantissa)
            if e10 < 0 { d /= JSONReader.powersOfTen[-e10] } else { d *= JSONReader.powersOfTen[e10] }
            return .double(negative ? -d : d)
        }
        let text = String(decoding: UnsafeBufferPointer(start: base.unsafelyUnwrapped + start, count: i - start), as: UTF8.self)
        guard let d = Double(text) else { throw fail("invalid number", at: start) }
        return .double(d)
    }

    @inline(__always) func isDigit(_ c: UInt8) -> Bool { c >= 48 && c <= 57 }

    static let powersOfTen: [Double] = (0...22).map { e in
        var v = 1.0
        for _ in 0..<e { v *= 10 }
        return v
    }
}

/// The Firebase callable protocol's wrappers for 64-bit integers.
public enum CallableWrapper {
    public static let int64Type = "type.googleapis.com/google.protobuf.Int64Value"
    public static let uint64Type = "type.googleapis.com/google.protobuf.UInt64Value"
}
