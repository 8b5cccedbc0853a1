/// Hearth's binary encoding of `Value`: the message format of the unit boundary and the storage
/// format of documents.
///
/// Each value is a tag byte followed by its body: varints are unsigned LEB128, signed integers
/// zig-zag encoded, doubles their IEEE bit pattern in 8 little-endian bytes, strings and bytes a
/// varint length and the bytes, arrays a varint count and the items, maps a varint count and
/// (key, value) pairs. With `canonical`, map keys are written in UTF-8 byte order, so equal values
/// give equal bytes (used for hashing stores).
public enum BinaryValueCodec {
    enum Tag: UInt8 {
        case null = 0, boolFalse, boolTrue, int, double, timestamp, string, bytes, reference, geoPoint, array, map
    }

    public static func encode(_ value: Value, canonical: Bool = false) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(64)
        encode(value, into: &out, canonical: canonical)
        return out
    }

    public static func encode(_ value: Value, into out: inout [UInt8], canonical: Bool = false) {
        switch value {
        case .null: out.append(Tag.null.rawValue)
        case .bool(let b): out.append(b ? Tag.boolTrue.rawValue : Tag.boolFalse.rawValue)
        case .int(let v):
            out.append(Tag.int.rawValue)
            writeVarint(zigzag(v), into: &out)
        case .double(let d):
            out.append(Tag.double.rawValue)
            writeFixed64(d.bitPattern, into: &out)
        case .timestamp(let t):
            out.append(Tag.timestamp.rawValue)
            let t = Timestamp(seconds: t.seconds, nanos: t.nanos)  // nanos are settable: normalize
            writeVarint(zigzag(t.seconds), into: &out)
            writeVarint(UInt64(truncatingIfNeeded: t.nanos), into: &out)
        case .string(let s):
            out.append(Tag.string.rawValue)
            writeString(s, into: &out)
        case .bytes(let b):
            out.append(Tag.bytes.rawValue)
            writeVarint(UInt64(b.count), into: &out)
            out.append(contentsOf: b)
        case .reference(let r):
            out.append(Tag.reference.rawValue)
            writeString(r, into: &out)
        case .geoPoint(let g):
            out.append(Tag.geoPoint.rawValue)
            writeFixed64(g.latitude.bitPattern, into: &out)
            writeFixed64(g.longitude.bitPattern, into: &out)
        case .array(let items):
            out.append(Tag.array.rawValue)
            writeVarint(UInt64(items.count), into: &out)
            for item in items { encode(item, into: &out, canonical: canonical) }
        case .map(let members):
            out.append(Tag.map.rawValue)
            writeVarint(UInt64(members.count), into: &out)
            if canonical && members.count > 1 {
                for (key, member) in JSONWriter.sortedMembers(members) {
                    writeString(key, into: &out)
                    encode(member, into: &out, canonical: true)
                }
            } else {
                for (key, member) in members {
                    writeString(key, into: &out)
                    encode(member, into: &out, canonical: canonical)
                }
            }
        }
    }

    @inline(__always) static func zigzag(_ v: Int64) -> UInt64 { UInt64(bitPattern: (v << 1) ^ (v >> 63)) }
    @inline(__always) static func unzigzag(_ v: UInt64) -> Int64 { Int64(bitPattern: (v >> 1) ^ (0 &- (v & 1))) }

    @inline(__always)
    static func writeVarint(_ value: UInt64, into out: inout [UInt8]) {
        var v = value
        while v >= 0x80 {
            out.append(UInt8(truncatingIfNeeded: v) | 0x80)
            v >>= 7
        }
        out.append(UInt8(v))
    }

    @inline(__always)
    static func writeFixed64(_ value: UInt64, into out: inout [UInt8]) {
        withUnsafeBytes(of: value.littleEndian) { out.append(contentsOf: $0) }
    }

    @inline(__always)
    static func writeString(_ s: String, into out: inout [UInt8]) {
        var s = s
        s.withUTF8 { p in
            writeVarint(UInt64(p.count), into: &out)
            out.append(contentsOf: p)
        }
    }

    public static func decode(_ bytes: [UInt8], maxDepth: Int = ValueLimits.maxCarriedDepth) throws(BinaryCodecError) -> Value {
        try bytes.withUnsafeBufferPointer { (p) throws(BinaryCodecError) -> Value in try decode(p, maxDepth: maxDepth) }
    }

    public static func decode(_ buffer: UnsafeBufferPointer<UInt8>, maxDepth: Int = ValueLimits.maxCarriedDepth) throws(BinaryCodecError) -> Value {
        var reader = BinaryReader(buffer: buffer, maxDepth: maxDepth)
        let value = try reader.readValue(depth: 0)
        guard reader.i == buffer.count else { throw BinaryCodecError(offset: reader.i, message: "trailing bytes after value") }
        return value
    }

    public static func decode(_ buffer: UnsafeRawBufferPointer, maxDepth: Int = ValueLimits.maxCarriedDepth) throws(BinaryCodecError) -> Value {
        try decode(buffer.bindMemory(to: UInt8.self), maxDepth: maxDepth)
    }
}

/// Malformed binary-encoded value: where and what.
public struct BinaryCodecError: Error, Sendable, Equatable, CustomStringConvertible {
    public var offset: Int
    public var message: String
    public var description: String { "invalid encoded value at byte \(offset): \(message)" }
}

struct BinaryReader {
    let buffer: UnsafeBufferPointer<UInt8>
    let maxDepth: Int
    var i = 0

    init(buffer: UnsafeBufferPointer<UInt8>, maxDepth: Int) {
        self.buffer = buffer
        self.maxDepth = maxDepth
    }

    func fail(_ message: String) -> BinaryCodecError { BinaryCodecError(offset: i, message: message) }

    @inline(__always)
    mutating func readByte() throws(BinaryCodecError) -> UInt8 {
        guard i < buffer.count else { throw fail("truncated") }
        defer { i += 1 }
        return buffer[i]
    }

    @inline(__always)
    mutating func readVarint() throws(BinaryCodecError) -> UInt64 {
        var result: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            let b = try readByte()
            if shift == 63 && b > 1 { throw BinaryCodecError(offset: i - 1, message: "varint overflows 64 bits") }
            result |= UInt64(b & 0x7F) << shift
            if b < 0x80 { return result }
            shift += 7
            if shift > 63 { throw fail("varint too long") }
        }
    }

    mutating func readFixed64() throws(BinaryCodecError) -> UInt64 {
        guard buffer.count - i >= 8 else { throw fail("truncated") }
        var v: UInt64 = 0
        for k in 0..<8 { v |= UInt64(buffer[i + k]) << (8 * UInt64(k)) }
        i += 8
        return v
    }

    mutating func readLength() throws(BinaryCodecError) -> Int {
        let n = try readVarint()
        guard n <= UInt64(buffer.count - i) else { throw fail("length \(n) exceeds the remaining \(buffer.count - i) bytes") }
        return Int(n)
    }

    mutating func readString() throws(BinaryCodecError) -> String {
        let n = try readLength()
        let slice = UnsafeBufferPointer(rebasing: buffer[i..<(i + n)])
        // ASCII (field names, paths, ids: nearly every string) is valid UTF-8 as it stands, and
        // `String(decoding:)` takes it without the generic validation `String(validating:)` runs
        // (5.8% of a worker's CPU under write+trigger).
        let s: String
        if BinaryReader.isASCII(slice) {
            s = String(decoding: slice, as: UTF8.self)
        } else {
            guard let valid = String(validating: slice, as: UTF8.self) else { throw fail("invalid UTF-8 in string") }
            s = valid
        }
        i += n
        return s
    }

    /// Whether every byte is below 0x80, eight at a time.
    static func isASCII(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let base = bytes.baseAddress else { return true }
        var i = 0
        var seen: UInt64 = 0
        while i + 8 <= bytes.count {
            seen |= UnsafeRawPointer(base + i).loadUnaligned(as: UInt64.self)
            i += 8
        }
        while i < bytes.count {
            seen |= UInt64(base[i])
            i += 1
        }
        return seen & 0x8080_8080_8080_8080 == 0
    }

    mutating func readValue(depth: Int) throws(BinaryCodecError) -> Value {
        let tagOffset = i
        let raw = try readByte()
        guard let tag = BinaryValueCodec.Tag(rawValue: raw) else {
            i = tagOffset
            throw fail("unknown tag \(raw)")
        }
        switch tag {
        case .null: return .null
        case .boolFalse: return .bool(false)
        case .boolTrue: return .bool(true)
        case .int: return .int(BinaryValueCodec.unzigzag(try readVarint()))
        case .double: return .double(Double(bitPattern: try readFixed64()))
        case .timestamp:
            let s = BinaryValueCodec.unzigzag(try readVarint())
            let nanosOffset = i
            let n = try readVarint()
            guard n < 1_000_000_000 else { throw BinaryCodecError(offset: nanosOffset, message: "timestamp nanos out of range") }
            return .timestamp(Timestamp(seconds: s, nanos: Int32(n)))
        case .string: return .string(try readString())
        case .bytes:
            let n = try readLength()
            let b = Array(buffer[i..<(i + n)])
            i += n
            return .bytes(b)
        case .reference: return .reference(try readString())
        case .geoPoint:
            let lat = Double(bitPattern: try readFixed64())
            let lng = Double(bitPattern: try readFixed64())
            return .geoPoint(GeoPoint(latitude: lat, longitude: lng))
        case .array:
            guard depth < maxDepth else { throw BinaryCodecError(offset: tagOffset, message: "nesting deeper than \(maxDepth)") }
            let n = try readLength()  // each item takes at least one byte
            var items: [Value] = []
            items.reserveCapacity(min(n, 4096))  // a length is a claim until the items are read
            for _ in 0..<n { items.append(try readValue(depth: depth + 1)) }
            return .array(items)
        case .map:
            guard depth < maxDepth else { throw BinaryCodecError(offset: tagOffset, message: "nesting deeper than \(maxDepth)") }
            let n = try readLength()
            // Sized at creation: `reserveCapacity` on a dictionary is not inlinable, so it runs
            // unspecialized (a generic metadata lookup and a resize, about 100 ns more per map).
            var members = [String: Value](minimumCapacity: min(n, 4096))
            for _ in 0..<n {
                let key = try readString()
                members[key] = try readValue(depth: depth + 1)
            }
            return .map(members)
        }
    }
}
