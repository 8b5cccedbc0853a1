/// How `Value`s that JSON cannot express are written.
public struct JSONWriteOptions: Sendable {
    public enum Style: Sendable {
        /// Timestamps as RFC 3339 strings, bytes as base64 strings, references as path strings,
        /// geopoints as `{"latitude", "longitude"}`, non-finite doubles as null. Loses type information.
        case plain
        /// Hearth's tags (`{"$timestamp": …}`, see `JSONReadOptions.tagged`): reads back to the same
        /// value; a map whose only key starts with `$` is wrapped as `{"$map": …}`.
        case tagged
        /// The Firebase callable encoding: `plain`, with integers outside ±(2^53 − 1) wrapped as
        /// `{"@type": "type.googleapis.com/google.protobuf.Int64Value", "value": "…"}` so JavaScript clients keep them exact.
        case callable
    }

    public var style: Style
    /// Writes map keys in UTF-8 byte order, so the same value always gives the same bytes. Off by
    /// default: sorting costs about half the encoding time, and only tools and tests need it.
    public var sortKeys: Bool
    /// Indents with two spaces and puts each member on its own line.
    public var pretty: Bool

    public init(style: Style = .plain, sortKeys: Bool = false, pretty: Bool = false) {
        self.style = style
        self.sortKeys = sortKeys
        self.pretty = pretty
    }

    public static let plain = JSONWriteOptions()
    /// Plain JSON with sorted keys: the same value always gives the same text.
    public static let sorted = JSONWriteOptions(sortKeys: true)
    /// Tagged, with sorted keys (for logs, CLI output and test messages).
    public static let tagged = JSONWriteOptions(style: .tagged, sortKeys: true)
    public static let callable = JSONWriteOptions(style: .callable)
    /// Indented, sorted: for people.
    public static let pretty = JSONWriteOptions(sortKeys: true, pretty: true)
}

/// A fast JSON writer from `Value` to UTF-8 bytes.
///
/// The output is a buffer the writer owns and appends to through a raw pointer, so a byte costs a
/// capacity check and a store (an `Array` append also checks uniqueness on every call); strings are
/// scanned for characters to escape eight bytes at a time. The writer is noncopyable: it frees its
/// buffer when it ends, and `bytes` copies the output out.
public struct JSONWriter: ~Copyable {
    private var base: UnsafeMutablePointer<UInt8>
    private var count = 0
    private var capacity: Int
    let options: JSONWriteOptions
    var indent = 0

    public init(options: JSONWriteOptions = .plain, capacity: Int = 256) {
        self.options = options
        self.capacity = max(capacity, 16)
        base = .allocate(capacity: self.capacity)
    }

    deinit { base.deallocate() }

    /// What has been written so far.
    public var bytes: [UInt8] { Array(UnsafeBufferPointer(start: base, count: count)) }

    public static func encode(_ value: Value, options: JSONWriteOptions = .plain) -> [UInt8] {
        var writer = JSONWriter(options: options)
        writer.write(value)
        return writer.bytes
    }

    /// `{"key": value}`, as `encode(.map([key: value]))` writes it, without building the map: every
    /// callable's answer is one (`{"result": …}` or `{"error": …}`).
    public static func encode(member key: String, _ value: Value, options: JSONWriteOptions = .plain) -> [UInt8] {
        var writer = JSONWriter(options: options)
        if options.style == .tagged, key.utf8.first == UInt8(ascii: "$") {
            writer.write(.map([key: value]))  // wrapped as a tag, as writeMap does
        } else {
            writer.append(UInt8(ascii: "{"))
            writer.indent += 1
            var first = true
            writer.writeMember(key, value, first: &first)
            writer.indent -= 1
            if options.pretty { writer.newline() }
            writer.append(UInt8(ascii: "}"))
        }
        return writer.bytes
    }

    public static func string(_ value: Value, options: JSONWriteOptions = .plain) -> String {
        var writer = JSONWriter(options: options)
        writer.write(value)
        return String(unsafeUninitializedCapacity: writer.count) { target in
            _ = target.initialize(from: UnsafeBufferPointer(start: writer.base, count: writer.count))
            return writer.count
        }
    }

    // MARK: the buffer

    @inline(__always) private mutating func reserve(_ extra: Int) {
        if count + extra > capacity { grow(to: count + extra) }
    }

    @inline(never) private mutating func grow(to needed: Int) {
        let newCapacity = max(needed, capacity * 2)
        let newBase = UnsafeMutablePointer<UInt8>.allocate(capacity: newCapacity)
        newBase.update(from: base, count: count)
        base.deallocate()
        base = newBase
        capacity = newCapacity
    }

    @inline(__always) mutating func append(_ byte: UInt8) {
        reserve(1)
        base[count] = byte
        count += 1
    }

    @inline(__always) mutating func append(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard let source = bytes.baseAddress, bytes.count > 0 else { return }
        reserve(bytes.count)
        (base + count).update(from: source, count: bytes.count)
        count += bytes.count
    }

    /// Removes the last byte (the writer's own output only).
    private mutating func dropLast() { count -= 1 }
    private var last: UInt8? { count > 0 ? base[count - 1] : nil }

    public mutating func write(_ value: Value) {
        switch value {
        case .null: appendLiteral("null")
        case .bool(let b): if b { appendLiteral("true") } else { appendLiteral("false") }
        case .int(let v): writeInt(v)
        case .double(let d): writeDouble(d)
        case .string(let s): writeString(s)
        case .array(let items): writeArray(items)
        case .map(let members): writeMap(members)
        case .timestamp(let t):
            if options.style == .tagged { writeTag("$timestamp") { $0.writeString(t.rfc3339) } } else { writeString(t.rfc3339) }
        case .bytes(let b):
            if options.style == .tagged { writeTag("$bytes") { $0.writeString(Base64.encode(b)) } } else { writeString(Base64.encode(b)) }
        case .reference(let r):
            if options.style == .tagged { writeTag("$reference") { $0.writeString(r) } } else { writeString(r) }
        case .geoPoint(let g):
            let inner: Value = ["latitude": .double(g.latitude), "longitude": .double(g.longitude)]
            if options.style == .tagged { writeTag("$geopoint") { $0.write(inner) } } else { write(inner) }
        }
    }

    mutating func writeTag(_ tag: String, _ body: (inout JSONWriter) -> Void) {
        append(UInt8(ascii: "{"))
        writeString(tag)
        append(UInt8(ascii: ":"))
        body(&self)
        append(UInt8(ascii: "}"))
    }

    @inline(__always) mutating func appendLiteral(_ s: StaticString) {
        append(UnsafeBufferPointer(start: s.utf8Start, count: s.utf8CodeUnitCount))
    }

    mutating func writeInt(_ v: Int64) {
        if options.style == .callable && (v > 9_007_199_254_740_991 || v < -9_007_199_254_740_991) {
            appendLiteral("{\"@type\":\"type.googleapis.com/google.protobuf.Int64Value\",\"value\":\"")
            writeDigits(v)
            appendLiteral("\"}")
            return
        }
        writeDigits(v)
    }

    mutating func writeDigits(_ v: Int64) {
        if v == 0 { append(48); return }
        var magnitude = v.magnitude
        if v < 0 { append(UInt8(ascii: "-")) }
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { buf in
            var n = 20
            while magnitude > 0 {
                n -= 1
                buf[n] = UInt8(48 + magnitude % 10)
                magnitude /= 10
            }
            append(UnsafeBufferPointer(rebasing: buf[n..<20]))
        }
    }

    mutating func writeDouble(_ d: Double) {
        guard d.isFinite else {
            if options.style == .tagged {
                writeTag("$double") { $0.writeString(d.isNaN ? "NaN" : (d > 0 ? "Infinity" : "-Infinity")) }
            } else {
                appendLiteral("null")
            }
            return
        }
        // Integral doubles keep a ".0" so they read back as doubles.
        if d == d.rounded(.towardZero) && abs(d) < 1e15 {
            writeDigits(Int64(d))
            if d == 0 && d.sign == .minus && last == 48 {
                dropLast()
                appendLiteral("-0")
            }
            appendLiteral(".0")
            return
        }
        var text = d.description  // shortest representation that reads back to the same double
        text.withUTF8 { append($0) }
    }

    /// Appends bytes that already are JSON (or JSON punctuation), unchecked.
    public mutating func writeRaw(_ bytes: [UInt8]) { bytes.withUnsafeBufferPointer { append($0) } }
    public mutating func writeRaw(_ literal: StaticString) { appendLiteral(literal) }

    /// A key and its colon, for a hand-written object (`"key":`).
    public mutating func writeKey(_ key: StaticString) {
        append(UInt8(ascii: "\""))
        appendLiteral(key)
        appendLiteral("\":")
    }

    public mutating func writeString(_ s: String) {
        var s = s
        s.withUTF8 { writeUTF8String($0) }
    }

    mutating func writeUTF8String(_ p: UnsafeBufferPointer<UInt8>) {
        let n = p.count
        reserve(n + 2)
        base[count] = UInt8(ascii: "\"")
        count += 1
        if n > 0, let start = p.baseAddress {
            var runStart = 0
            var k = 0
            while true {
                // Eight bytes at a time while none of them needs escaping; the last few bytes are
                // checked as one word padded with spaces.
                while k + 8 <= n && !JSONWriter.needsEscape(UnsafeRawPointer(start + k).loadUnaligned(as: UInt64.self)) { k += 8 }
                if k + 8 > n {
                    guard k < n else { break }
                    var tail: UInt64 = 0x2020_2020_2020_2020
                    withUnsafeMutableBytes(of: &tail) { $0.baseAddress!.copyMemory(from: start + k, byteCount: n - k) }
                    if !JSONWriter.needsEscape(tail) { k = n; break }
                }
                // A byte in this word needs escaping: go through it one byte at a time.
                let stop = min(k + 8, n)
                while k < stop {
                    let c = start[k]
                    if c >= 0x20 && c != 0x22 && c != 0x5C {
                        k += 1
                        continue
                    }
                    if k > runStart { append(UnsafeBufferPointer(start: start + runStart, count: k - runStart)) }
                    switch c {
                    case 0x22: appendLiteral("\\\"")
                    case 0x5C: appendLiteral("\\\\")
                    case 0x0A: appendLiteral("\\n")
                    case 0x0D: appendLiteral("\\r")
                    case 0x09: appendLiteral("\\t")
                    case 0x08: appendLiteral("\\b")
                    case 0x0C: appendLiteral("\\f")
                    default:
                        appendLiteral("\\u00")
                        append(JSONWriter.hexDigit(c >> 4))
                        append(JSONWriter.hexDigit(c & 0xF))
                    }
                    k += 1
                    runStart = k
                }
                if k >= n { break }
            }
            if n > runStart { append(UnsafeBufferPointer(start: start + runStart, count: n - runStart)) }
        }
        append(UInt8(ascii: "\""))
    }

    /// Whether any of eight bytes is a control character (below 0x20), a quote or a backslash. Bit
    /// tricks from "Bit Twiddling Hacks" (haszero, hasless): exact about whether any byte matches;
    /// bytes of 0x80 and above (UTF-8 sequences) never do.
    @inline(__always) static func needsEscape(_ w: UInt64) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101, highs: UInt64 = 0x8080_8080_8080_8080
        let control = (w &- ones &* 0x20) & ~w & highs
        let q = w ^ (ones &* 0x22), quote = (q &- ones) & ~q & highs
        let b = w ^ (ones &* 0x5C), backslash = (b &- ones) & ~b & highs
        return (control | quote | backslash) != 0
    }

    @inline(__always) static func hexDigit(_ v: UInt8) -> UInt8 { v < 10 ? 48 + v : 87 + v }

    mutating func newline() {
        append(0x0A)
        for _ in 0..<indent { append(0x20); append(0x20) }
    }

    mutating func writeArray(_ items: [Value]) {
        append(UInt8(ascii: "["))
        if items.isEmpty { append(UInt8(ascii: "]")); return }
        indent += 1
        for (k, item) in items.enumerated() {
            if k > 0 { append(UInt8(ascii: ",")) }
            if options.pretty { newline() }
            write(item)
        }
        indent -= 1
        if options.pretty { newline() }
        append(UInt8(ascii: "]"))
    }

    mutating func writeMap(_ members: [String: Value]) {
        // In tagged style a map whose only key starts with "$" would read back as a tag: wrap it.
        if options.style == .tagged, members.count == 1, let key = members.keys.first, key.utf8.first == UInt8(ascii: "$") {
            writeTag("$map") { $0.writeMapBody(members) }
            return
        }
        writeMapBody(members)
    }

    mutating func writeMapBody(_ members: [String: Value]) {
        append(UInt8(ascii: "{"))
        if members.isEmpty { append(UInt8(ascii: "}")); return }
        indent += 1
        var first = true
        if options.sortKeys && members.count > 1 {
            for (key, value) in JSONWriter.sortedMembers(members) {
                writeMember(key, value, first: &first)
            }
        } else {
            for (key, value) in members { writeMember(key, value, first: &first) }
        }
        indent -= 1
        if options.pretty { newline() }
        append(UInt8(ascii: "}"))
    }

    @inline(__always)
    mutating func writeMember(_ key: String, _ value: Value, first: inout Bool) {
        if !first { append(UInt8(ascii: ",")) }
        first = false
        if options.pretty { newline() }
        writeString(key)
        append(UInt8(ascii: ":"))
        if options.pretty { append(0x20) }
        write(value)
    }

    /// Byte order of UTF-8, which is also code point order.
    static func utf8Less(_ a: String, _ b: String) -> Bool {
        Value.compareUTF8(a, b) == .ascending
    }

    /// A map's members in UTF-8 byte order of their keys.
    public static func sortedMembers(_ members: [String: Value]) -> [(key: String, value: Value)] {
        var pairs = Array(members)
        pairs.sort { a, b in Value.compareUTF8(a.key, b.key) == .ascending }
        return pairs
    }
}
