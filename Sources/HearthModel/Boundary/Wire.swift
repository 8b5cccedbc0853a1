/// The compact binary encoding of the unit boundary's messages (see `Boundary`).
///
/// Every message type writes its fields in a fixed order, with no names: integers as LEB128
/// varints (signed ones zig-zag encoded), doubles as their 8-byte bit pattern, strings and byte
/// strings as a varint length and the bytes, optionals as a presence byte, lists as a varint count
/// and the items, `Value`s in `BinaryValueCodec`'s encoding. A field added to a message is a new
/// boundary version (`Boundary.version`).
public struct WireWriter {
    public private(set) var bytes: [UInt8]

    public init(capacity: Int = 128) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    /// The bytes written, handing over the buffer.
    public func finish() -> [UInt8] { bytes }

    @inline(__always) public mutating func byte(_ b: UInt8) { bytes.append(b) }
    @inline(__always) public mutating func bool(_ b: Bool) { bytes.append(b ? 1 : 0) }
    @inline(__always) public mutating func varint(_ v: UInt64) { BinaryValueCodec.writeVarint(v, into: &bytes) }
    @inline(__always) public mutating func int(_ v: Int64) { BinaryValueCodec.writeVarint(BinaryValueCodec.zigzag(v), into: &bytes) }
    @inline(__always) public mutating func int(_ v: Int) { int(Int64(v)) }
    @inline(__always) public mutating func fixed64(_ v: UInt64) { BinaryValueCodec.writeFixed64(v, into: &bytes) }
    @inline(__always) public mutating func double(_ v: Double) { BinaryValueCodec.writeFixed64(v.bitPattern, into: &bytes) }
    @inline(__always) public mutating func string(_ s: String) { BinaryValueCodec.writeString(s, into: &bytes) }

    public mutating func bytes(_ b: [UInt8]) {
        varint(UInt64(b.count))
        bytes.append(contentsOf: b)
    }

    /// Appends bytes that already are an encoding (a recorded message), with no length.
    public mutating func raw(_ b: [UInt8]) { bytes.append(contentsOf: b) }

    public mutating func value(_ v: Value) { BinaryValueCodec.encode(v, into: &bytes) }

    /// A map of values, written as one `Value.map`.
    public mutating func fields(_ m: [String: Value]) { BinaryValueCodec.encode(.map(m), into: &bytes) }

    /// Any encodable item: a message, an optional (a presence byte, then the item), a list.
    public mutating func write<T: WireEncodable>(_ item: T) { item.encode(to: &self) }

    public mutating func list<T: WireEncodable>(_ items: [T]) {
        varint(UInt64(items.count))
        for item in items { item.encode(to: &self) }
    }

    /// A map of strings (in the dictionary's order).
    public mutating func stringMap(_ map: [String: String]) {
        varint(UInt64(map.count))
        for (key, value) in map {
            string(key)
            string(value)
        }
    }

    /// Reserves `count` bytes to fill in later with `patch` (a frame's length).
    @usableFromInline mutating func reserve(_ count: Int) -> Int {
        let at = bytes.count
        bytes.append(contentsOf: repeatElement(0, count: count))
        return at
    }

    @usableFromInline mutating func patchUInt32(_ v: UInt32, at offset: Int) {
        for k in 0..<4 { bytes[offset + k] = UInt8(truncatingIfNeeded: v >> (8 * UInt32(k))) }
    }
}

/// Why a boundary message could not be read: malformed bytes (a bug or corruption: the offset and
/// what was wrong), or a well-formed field whose value is not valid (a path that is not a path),
/// which keeps the validation error to send back as it is.
public enum WireError: Error, Sendable, Equatable, CustomStringConvertible {
    case malformed(offset: Int, message: String)
    case invalid(HTTPSError)

    public var description: String {
        switch self {
        case .malformed(let offset, let message): return "malformed boundary message at byte \(offset): \(message)"
        case .invalid(let error): return error.message
        }
    }

    /// As a reply to whoever sent the message.
    public var remoteError: RemoteError {
        switch self {
        case .malformed: return RemoteError(code: .internal, message: "INTERNAL", debug: description)
        case .invalid(let error): return RemoteError(error)
        }
    }
}

/// Reads what `WireWriter` wrote. Every length is checked against the bytes left before anything is
/// allocated, so no input can make it trap or allocate more than the message's size.
public struct WireReader {
    var reader: BinaryReader

    public init(_ buffer: UnsafeRawBufferPointer) {
        reader = BinaryReader(buffer: buffer.bindMemory(to: UInt8.self), maxDepth: ValueLimits.maxCarriedDepth)
    }

    public var offset: Int { reader.i }
    public var remaining: Int { reader.buffer.count - reader.i }

    func failure(_ message: String) -> WireError { .malformed(offset: reader.i, message: message) }

    @inline(__always) mutating func wrap<T>(_ body: (inout BinaryReader) throws(BinaryCodecError) -> T) throws(WireError) -> T {
        do { return try body(&reader) } catch { throw .malformed(offset: error.offset, message: error.message) }
    }

    public mutating func byte() throws(WireError) -> UInt8 { try wrap { r throws(BinaryCodecError) in try r.readByte() } }

    public mutating func bool() throws(WireError) -> Bool {
        switch try byte() {
        case 0: return false
        case 1: return true
        case let b: throw failure("\(b) is not a boolean")
        }
    }

    public mutating func varint() throws(WireError) -> UInt64 { try wrap { r throws(BinaryCodecError) in try r.readVarint() } }
    public mutating func int() throws(WireError) -> Int64 { BinaryValueCodec.unzigzag(try varint()) }

    /// An `Int`-sized integer (every platform Hearth runs on has 64-bit `Int`).
    public mutating func intValue() throws(WireError) -> Int { Int(try int()) }

    public mutating func fixed64() throws(WireError) -> UInt64 { try wrap { r throws(BinaryCodecError) in try r.readFixed64() } }
    public mutating func double() throws(WireError) -> Double { Double(bitPattern: try wrap { r throws(BinaryCodecError) in try r.readFixed64() }) }
    public mutating func string() throws(WireError) -> String { try wrap { r throws(BinaryCodecError) in try r.readString() } }

    public mutating func bytes() throws(WireError) -> [UInt8] {
        try wrap { r throws(BinaryCodecError) in
            let n = try r.readLength()
            defer { r.i += n }
            return Array(r.buffer[r.i..<(r.i + n)])
        }
    }

    public mutating func value() throws(WireError) -> Value { try wrap { r throws(BinaryCodecError) in try r.readValue(depth: 0) } }

    public mutating func fields() throws(WireError) -> [String: Value] {
        guard case .map(let m) = try value() else { throw failure("expected a map of fields") }
        return m
    }

    public mutating func read<T: WireDecodable>(_ type: T.Type = T.self) throws(WireError) -> T { try T(from: &self) }

    public mutating func optional<T: WireDecodable>(_ type: T.Type = T.self) throws(WireError) -> T? { try T?(from: &self) }

    /// A list; its count is checked against the bytes left (every item takes at least one).
    public mutating func list<T: WireDecodable>(_ type: T.Type = T.self) throws(WireError) -> [T] {
        let n = try count()
        var items: [T] = []
        items.reserveCapacity(min(n, 4096))  // a count is a claim until the items are read (as in BinaryValueCodec)
        for _ in 0..<n { items.append(try T(from: &self)) }
        return items
    }

    public mutating func stringMap() throws(WireError) -> [String: String] {
        let n = try count()
        var out = [String: String](minimumCapacity: min(n, 4096))  // not `reserveCapacity` (see BinaryReader)
        for _ in 0..<n {
            let key = try string()
            out[key] = try string()
        }
        return out
    }

    mutating func count() throws(WireError) -> Int { try wrap { r throws(BinaryCodecError) in try r.readLength() } }

    /// Fails unless every byte was read.
    public func end() throws(WireError) {
        guard remaining == 0 else { throw failure("\(remaining) bytes left over after the message") }
    }

    /// A field whose value failed validation: its error goes back as it is.
    public func invalid(_ body: () throws(HTTPSError) -> Void) throws(WireError) {
        do { try body() } catch { throw .invalid(error) }
    }
}

/// A type with a boundary encoding of its own.
public protocol WireEncodable {
    func encode(to writer: inout WireWriter)
}

public protocol WireDecodable {
    init(from reader: inout WireReader) throws(WireError)
}

public typealias WireCodable = WireEncodable & WireDecodable

extension WireEncodable {
    /// The encoding of this value alone.
    public var wireBytes: [UInt8] {
        var w = WireWriter()
        encode(to: &w)
        return w.finish()
    }
}

extension WireDecodable {
    /// Decodes a value that fills `bytes` exactly.
    public init(wireBytes bytes: [UInt8]) throws(WireError) {
        let result = bytes.withUnsafeBytes { p -> Result<Self, WireError> in
            var r = WireReader(p)
            do throws(WireError) {
                let value = try Self(from: &r)
                try r.end()
                return .success(value)
            } catch {
                return .failure(error)
            }
        }
        self = try result.get()
    }
}

// MARK: the vocabulary's encodings

extension String: WireCodable {
    public func encode(to w: inout WireWriter) { w.string(self) }
    public init(from r: inout WireReader) throws(WireError) { self = try r.string() }
}

extension Bool: WireCodable {
    public func encode(to w: inout WireWriter) { w.bool(self) }
    public init(from r: inout WireReader) throws(WireError) { self = try r.bool() }
}

extension Int64: WireCodable {
    public func encode(to w: inout WireWriter) { w.int(self) }
    public init(from r: inout WireReader) throws(WireError) { self = try r.int() }
}

extension Int: WireCodable {
    public func encode(to w: inout WireWriter) { w.int(self) }
    public init(from r: inout WireReader) throws(WireError) { self = try r.intValue() }
}

extension UInt64: WireCodable {
    public func encode(to w: inout WireWriter) { w.varint(self) }
    public init(from r: inout WireReader) throws(WireError) { self = try r.varint() }
}

extension Double: WireCodable {
    public func encode(to w: inout WireWriter) { w.double(self) }
    public init(from r: inout WireReader) throws(WireError) { self = try r.double() }
}

extension Value: WireCodable {
    public func encode(to w: inout WireWriter) { w.value(self) }
    public init(from r: inout WireReader) throws(WireError) { self = try r.value() }
}

extension Timestamp: WireCodable {
    public func encode(to w: inout WireWriter) {
        let t = Timestamp(seconds: seconds, nanos: nanos)  // normalized
        w.int(t.seconds)
        w.varint(UInt64(truncatingIfNeeded: t.nanos))
    }

    public init(from r: inout WireReader) throws(WireError) {
        let seconds = try r.int()
        let nanos = try r.varint()
        guard nanos < 1_000_000_000 else { throw r.failure("timestamp nanos \(nanos) out of range") }
        self = Timestamp(seconds: seconds, nanos: Int32(nanos))
    }
}

extension Duration: WireCodable {
    public func encode(to w: inout WireWriter) {
        w.int(components.seconds)
        w.int(components.attoseconds)
    }

    public init(from r: inout WireReader) throws(WireError) {
        let seconds = try r.int()
        let attoseconds = try r.int()
        guard (-999_999_999_999_999_999...999_999_999_999_999_999).contains(attoseconds) else {
            throw r.failure("duration attoseconds \(attoseconds) out of range")
        }
        self = Duration(secondsComponent: seconds, attosecondsComponent: attoseconds)
    }
}

extension DocumentPath: WireCodable {
    public func encode(to w: inout WireWriter) { w.string(description) }

    public init(from r: inout WireReader) throws(WireError) {
        let text = try r.string()
        do { self = try DocumentPath(text) } catch { throw .invalid(error) }
    }
}

extension CollectionPath: WireCodable {
    public func encode(to w: inout WireWriter) { w.string(description) }

    public init(from r: inout WireReader) throws(WireError) {
        let text = try r.string()
        do { self = try CollectionPath(text) } catch { throw .invalid(error) }
    }
}

extension FieldPath: WireCodable {
    public func encode(to w: inout WireWriter) { w.string(description) }

    public init(from r: inout WireReader) throws(WireError) {
        let text = try r.string()
        do { self = try FieldPath(text) } catch { throw .invalid(error) }
    }
}
