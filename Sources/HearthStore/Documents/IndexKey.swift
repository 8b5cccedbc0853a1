import HearthModel

/// An order-preserving byte encoding of values: for any two values, `memcmp` of their keys orders
/// them as Firestore does (`Value.compare`), and values Firestore treats as equal (`1` and `1.0`,
/// `0.0` and `-0.0`) get identical keys. Index rows store these keys, so SQLite's B-tree order is
/// Firestore's order and range filters become key ranges.
///
/// Layout: a type byte (gaps left between types), then the body:
/// - numbers: the largest double ≤ the value, with its bits made order-preserving, then a 2-byte
///   remainder for integers beyond 2^53 that doubles cannot hold exactly (so 2^53 + 1 sorts between
///   2^53 and 2^53 + 2); NaN is the lowest number;
/// - strings and bytes: the bytes with 0x00 escaped as 0x00 0xFF, ended by 0x00 0x01;
/// - references: each segment so escaped and ended, then 0x00 0x00 (segment-wise order); a
///   numeric id (`__id7__`, which sorts before other ids) is 0x00 0x02 and its number's 8 bytes
///   (sign bit flipped): above the end of a shorter reference (0x00 0x00) and below every id a
///   path can hold (ids are not empty, and a leading 0x00 is escaped to 0x00 0xFF);
/// - arrays: the elements' keys, then 0x00; vectors: the dimension (8 bytes), then each
///   component's key (vectors sort by dimension first); maps: 0x01, key, value for each key in
///   order, then 0x00.
enum IndexKey {
    static let null: UInt8 = 0x05
    static let boolean: UInt8 = 0x0A
    static let number: UInt8 = 0x10
    static let timestamp: UInt8 = 0x14
    static let string: UInt8 = 0x18
    static let bytes: UInt8 = 0x1C
    static let reference: UInt8 = 0x20
    static let geoPoint: UInt8 = 0x24
    static let array: UInt8 = 0x28
    static let vector: UInt8 = 0x2A
    static let map: UInt8 = 0x2C
    /// Greater than every type byte: the exclusive end of the last type's range.
    static let end: UInt8 = 0xFF

    static func encode(_ value: Value) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(16)
        append(value, to: &out)
        return out
    }

    static func append(_ value: Value, to out: inout [UInt8]) {
        switch value {
        case .null: out.append(null)
        case .bool(let b):
            out.append(boolean)
            out.append(b ? 1 : 0)
        case .int(let i): appendNumber(int: i, double: nil, to: &out)
        case .double(let d): appendNumber(int: nil, double: d, to: &out)
        case .timestamp(let t):
            out.append(timestamp)
            appendBigEndian(UInt64(bitPattern: t.seconds) ^ (1 << 63), to: &out)
            appendBigEndian32(UInt32(t.nanos), to: &out)
        case .string(let s):
            out.append(string)
            var s = s
            s.withUTF8 { appendEscaped($0, to: &out) }
        case .bytes(let b):
            out.append(bytes)
            b.withUnsafeBufferPointer { appendEscaped($0, to: &out) }
        case .reference(let r):
            out.append(reference)
            for segment in PathRules.split(r) {
                if segment.utf8.first == UInt8(ascii: "_"), let n = PathRules.numericID(segment) {
                    out.append(0)
                    out.append(2)
                    appendBigEndian(UInt64(bitPattern: n) ^ (1 << 63), to: &out)
                    continue
                }
                var s = String(segment)
                s.withUTF8 { appendEscaped($0, to: &out) }
            }
            out.append(0)
            out.append(0)
        case .geoPoint(let g):
            out.append(geoPoint)
            appendBigEndian(orderedBits(g.latitude), to: &out)
            appendBigEndian(orderedBits(g.longitude), to: &out)
        case .array(let items):
            out.append(array)
            for item in items { append(item, to: &out) }
            out.append(0)
        case .map where value.isVector:
            let components = value.vectorItems ?? []
            out.append(vector)
            appendBigEndian(UInt64(components.count), to: &out)
            for component in components { append(component, to: &out) }
        case .map(let members):
            out.append(map)
            for (key, member) in JSONWriter.sortedMembers(members) {
                out.append(1)
                var k = key
                k.withUTF8 { appendEscaped($0, to: &out) }
                append(member, to: &out)
            }
            out.append(0)
        }
    }

    static func appendEscaped(_ p: UnsafeBufferPointer<UInt8>, to out: inout [UInt8]) {
        for c in p {
            out.append(c)
            if c == 0 { out.append(0xFF) }
        }
        out.append(0)
        out.append(1)
    }

    /// Doubles' bits rearranged so unsigned order is numeric order (NaN lowest, -0 == +0).
    static func orderedBits(_ d: Double) -> UInt64 {
        if d.isNaN { return 0 }
        let bits = (d == 0 ? 0.0 : d).bitPattern
        return bits & (1 << 63) != 0 ? ~bits : bits | (1 << 63)
    }

    static func appendNumber(int: Int64?, double: Double?, to out: inout [UInt8]) {
        out.append(number)
        if let d = double, d.isNaN {
            out.append(0)
            return
        }
        out.append(1)
        var base: Double
        var remainder: UInt16 = 0
        if let i = int {
            base = Double(i)
            if Value.compareIntDouble(i, base) == .ascending { base = base.nextDown }  // largest double ≤ i
            remainder = UInt16(truncatingIfNeeded: i &- Int64(base))
        } else {
            base = double!
        }
        appendBigEndian(orderedBits(base), to: &out)
        out.append(UInt8(remainder >> 8))
        out.append(UInt8(remainder & 0xFF))
    }

    @inline(__always)
    static func appendBigEndian(_ v: UInt64, to out: inout [UInt8]) {
        withUnsafeBytes(of: v.bigEndian) { out.append(contentsOf: $0) }
    }

    @inline(__always)
    static func appendBigEndian32(_ v: UInt32, to out: inout [UInt8]) {
        withUnsafeBytes(of: v.bigEndian) { out.append(contentsOf: $0) }
    }

    /// The type byte that starts keys of values of `value`'s type order (numbers share one).
    static func typePrefix(_ value: Value) -> UInt8 {
        switch value {
        case .null: return null
        case .bool: return boolean
        case .int, .double: return number
        case .timestamp: return timestamp
        case .string: return string
        case .bytes: return bytes
        case .reference: return reference
        case .geoPoint: return geoPoint
        case .array: return array
        case .map: return value.isVector ? vector : map
        }
    }

    /// The smallest key after every key of `value`'s type: the exclusive upper bound of its type range.
    static func typeEnd(_ value: Value) -> [UInt8] { [typePrefix(value) + 1] }
    static func typeStart(_ value: Value) -> [UInt8] { [typePrefix(value)] }
}
