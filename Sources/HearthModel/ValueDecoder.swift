import Foundation

/// Decodes `Decodable` Swift values from `Value`s: the reverse of `ValueEncoder`.
///
/// Timestamps decode as `Date` or `Timestamp` (RFC 3339 strings are accepted too); integers decode into
/// any integer type they fit and into floating point; doubles decode into integer types only when exact.
/// Errors name the field path (`items[2].title: expected string, found integer`).
public struct ValueDecoder: Sendable {
    public init() {}

    public func decode<T: Decodable>(_ type: T.Type, from value: Value) throws -> T {
        if let direct = try ValueDecoderImpl.directDecode(type, value, codingPath: []) { return direct }
        return try T(from: ValueDecoderImpl(value: value, codingPath: []))
    }
}

/// A readable description of a decoding error: the field path and what went wrong.
public func describeDecodingError(_ error: Error) -> String {
    func path(_ codingPath: [CodingKey]) -> String {
        var out = ""
        for key in codingPath {
            if key is IndexKey, let index = key.intValue {
                out += "[\(index)]"
            } else {
                out += out.isEmpty ? key.stringValue : "." + key.stringValue
            }
        }
        return out.isEmpty ? "value" : out
    }
    guard let decoding = error as? DecodingError else { return String(describing: error) }
    switch decoding {
    case .typeMismatch(_, let c): return "\(path(c.codingPath)): \(c.debugDescription)"
    case .valueNotFound(_, let c): return "\(path(c.codingPath)): \(c.debugDescription)"
    case .keyNotFound(let key, let c): return "\(path(c.codingPath + [key])): missing required field"
    case .dataCorrupted(let c): return "\(path(c.codingPath)): \(c.debugDescription)"
    @unknown default: return String(describing: error)
    }
}

struct ValueDecoderImpl: Decoder {
    let value: Value
    let codingPath: [CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    static func mismatch(_ expected: String, _ value: Value, _ codingPath: [CodingKey]) -> DecodingError {
        .typeMismatch(Any.self, .init(codingPath: codingPath, debugDescription: "expected \(expected), found \(value.typeName)"))
    }

    static func directDecode<T: Decodable>(_ type: T.Type, _ value: Value, codingPath: [CodingKey]) throws -> T? {
        if type == Value.self { return (value as! T) }
        if type == Date.self {
            switch value {
            case .timestamp(let t): return (t.date as! T)
            case .string(let s):
                if let t = Timestamp(rfc3339: s) { return (t.date as! T) }
                throw mismatch("timestamp", value, codingPath)
            default: throw mismatch("timestamp", value, codingPath)
            }
        }
        if type == Timestamp.self {
            switch value {
            case .timestamp(let t): return (t as! T)
            case .string(let s):
                if let t = Timestamp(rfc3339: s) { return (t as! T) }
                throw mismatch("timestamp", value, codingPath)
            default: throw mismatch("timestamp", value, codingPath)
            }
        }
        if type == Data.self {
            switch value {
            case .bytes(let b): return (Data(b) as! T)
            case .string(let s):
                if let b = Base64.decode(s) { return (Data(b) as! T) }
                throw mismatch("bytes", value, codingPath)
            default: throw mismatch("bytes", value, codingPath)
            }
        }
        if type == GeoPoint.self, case .geoPoint(let g) = value { return (g as! T) }
        if type == DocumentPath.self {
            switch value {
            case .reference(let r), .string(let r):
                do { return (try DocumentPath(r) as! T) } catch {
                    throw DecodingError.dataCorrupted(.init(codingPath: codingPath, debugDescription: "invalid document path: \(error)"))
                }
            default: throw mismatch("reference", value, codingPath)
            }
        }
        return nil
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        guard case .map(let members) = value else { throw ValueDecoderImpl.mismatch("map", value, codingPath) }
        return KeyedDecodingContainer(KeyedValueDecodingContainer<Key>(members: members, codingPath: codingPath))
    }

    func unkeyedContainer() throws -> UnkeyedDecodingContainer {
        guard case .array(let items) = value else { throw ValueDecoderImpl.mismatch("array", value, codingPath) }
        return UnkeyedValueDecodingContainer(items: items, codingPath: codingPath)
    }

    func singleValueContainer() throws -> SingleValueDecodingContainer {
        SingleValueDecoding(value: value, codingPath: codingPath)
    }
}

/// The scalar conversions the three container kinds share. The coding path is an autoclosure: it
/// names the field in an error, and a keyed container's path (its own and the key, a new array)
/// is built only then, not for every field decoded (a fifth of decoding a small struct in a
/// worker's profile).
enum ScalarDecoding {
    static func bool(_ v: Value, _ path: @autoclosure () -> [CodingKey]) throws -> Bool {
        guard case .bool(let b) = v else { throw ValueDecoderImpl.mismatch("boolean", v, path()) }
        return b
    }

    static func string(_ v: Value, _ path: @autoclosure () -> [CodingKey]) throws -> String {
        guard case .string(let s) = v else { throw ValueDecoderImpl.mismatch("string", v, path()) }
        return s
    }

    static func double(_ v: Value, _ path: @autoclosure () -> [CodingKey]) throws -> Double {
        switch v {
        case .double(let d): return d
        case .int(let i): return Double(i)
        default: throw ValueDecoderImpl.mismatch("number", v, path())
        }
    }

    static func integer<T: FixedWidthInteger>(_ v: Value, _ path: @autoclosure () -> [CodingKey]) throws -> T {
        switch v {
        case .int(let i):
            guard let r = T(exactly: i) else {
                throw DecodingError.dataCorrupted(.init(codingPath: path(), debugDescription: "\(i) does not fit in \(T.self)"))
            }
            return r
        case .double(let d):
            guard let r = T(exactly: d) else {
                throw DecodingError.dataCorrupted(.init(codingPath: path(), debugDescription: "\(d) is not an integer that fits in \(T.self)"))
            }
            return r
        default:
            throw ValueDecoderImpl.mismatch("integer", v, path())
        }
    }

    static func decode<T: Decodable>(_ type: T.Type, _ v: Value, _ path: [CodingKey]) throws -> T {
        if let direct = try ValueDecoderImpl.directDecode(type, v, codingPath: path) { return direct }
        return try T(from: ValueDecoderImpl(value: v, codingPath: path))
    }
}

struct KeyedValueDecodingContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let members: [String: Value]
    let codingPath: [CodingKey]

    var allKeys: [Key] { members.keys.compactMap { Key(stringValue: $0) } }

    func contains(_ key: Key) -> Bool { members[key.stringValue] != nil }

    func value(_ key: Key) throws -> Value {
        guard let v = members[key.stringValue] else {
            throw DecodingError.keyNotFound(key, .init(codingPath: codingPath, debugDescription: "missing field '\(key.stringValue)'"))
        }
        return v
    }

    func path(_ key: Key) -> [CodingKey] { codingPath + [key] }

    func decodeNil(forKey key: Key) throws -> Bool { members[key.stringValue]?.isNull ?? true }
    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try ScalarDecoding.bool(value(key), path(key)) }
    func decode(_ type: String.Type, forKey key: Key) throws -> String { try ScalarDecoding.string(value(key), path(key)) }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try ScalarDecoding.double(value(key), path(key)) }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { Float(try ScalarDecoding.double(value(key), path(key))) }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try ScalarDecoding.integer(value(key), path(key)) }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try ScalarDecoding.integer(value(key), path(key)) }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try ScalarDecoding.integer(value(key), path(key)) }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try ScalarDecoding.integer(value(key), path(key)) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try ScalarDecoding.integer(value(key), path(key)) }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try ScalarDecoding.integer(value(key), path(key)) }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try ScalarDecoding.integer(value(key), path(key)) }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try ScalarDecoding.integer(value(key), path(key)) }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try ScalarDecoding.integer(value(key), path(key)) }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try ScalarDecoding.integer(value(key), path(key)) }
    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T { try ScalarDecoding.decode(type, value(key), path(key)) }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
        try ValueDecoderImpl(value: value(key), codingPath: path(key)).container(keyedBy: type)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> UnkeyedDecodingContainer {
        try ValueDecoderImpl(value: value(key), codingPath: path(key)).unkeyedContainer()
    }

    func superDecoder() throws -> Decoder {
        ValueDecoderImpl(value: members["super"] ?? .null, codingPath: codingPath)
    }

    func superDecoder(forKey key: Key) throws -> Decoder {
        ValueDecoderImpl(value: members[key.stringValue] ?? .null, codingPath: path(key))
    }
}

struct UnkeyedValueDecodingContainer: UnkeyedDecodingContainer {
    let items: [Value]
    let codingPath: [CodingKey]
    var currentIndex = 0

    init(items: [Value], codingPath: [CodingKey]) {
        self.items = items
        self.codingPath = codingPath
    }

    var count: Int? { items.count }
    var isAtEnd: Bool { currentIndex >= items.count }

    mutating func next() throws -> (Value, [CodingKey]) {
        let path = codingPath + [IndexKey(currentIndex)]
        guard !isAtEnd else {
            throw DecodingError.valueNotFound(Any.self, .init(codingPath: path, debugDescription: "array has only \(items.count) elements"))
        }
        defer { currentIndex += 1 }
        return (items[currentIndex], path)
    }

    mutating func decodeNil() throws -> Bool {
        if !isAtEnd, items[currentIndex].isNull {
            currentIndex += 1
            return true
        }
        return false
    }

    mutating func decode(_ type: Bool.Type) throws -> Bool { let (v, p) = try next(); return try ScalarDecoding.bool(v, p) }
    mutating func decode(_ type: String.Type) throws -> String { let (v, p) = try next(); return try ScalarDecoding.string(v, p) }
    mutating func decode(_ type: Double.Type) throws -> Double { let (v, p) = try next(); return try ScalarDecoding.double(v, p) }
    mutating func decode(_ type: Float.Type) throws -> Float { let (v, p) = try next(); return Float(try ScalarDecoding.double(v, p)) }
    mutating func decode(_ type: Int.Type) throws -> Int { let (v, p) = try next(); return try ScalarDecoding.integer(v, p) }
    mutating func decode(_ type: Int8.Type) throws -> Int8 { let (v, p) = try next(); return try ScalarDecoding.integer(v, p) }
    mutating func decode(_ type: Int16.Type) throws -> Int16 { let (v, p) = try next(); return try ScalarDecoding.integer(v, p) }
    mutating func decode(_ type: Int32.Type) throws -> Int32 { let (v, p) = try next(); return try ScalarDecoding.integer(v, p) }
    mutating func decode(_ type: Int64.Type) throws -> Int64 { let (v, p) = try next(); return try ScalarDecoding.integer(v, p) }
    mutating func decode(_ type: UInt.Type) throws -> UInt { let (v, p) = try next(); return try ScalarDecoding.integer(v, p) }
    mutating func decode(_ type: UInt8.Type) throws -> UInt8 { let (v, p) = try next(); return try ScalarDecoding.integer(v, p) }
    mutating func decode(_ type: UInt16.Type) throws -> UInt16 { let (v, p) = try next(); return try ScalarDecoding.integer(v, p) }
    mutating func decode(_ type: UInt32.Type) throws -> UInt32 { let (v, p) = try next(); return try ScalarDecoding.integer(v, p) }
    mutating func decode(_ type: UInt64.Type) throws -> UInt64 { let (v, p) = try next(); return try ScalarDecoding.integer(v, p) }
    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T { let (v, p) = try next(); return try ScalarDecoding.decode(type, v, p) }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
        let (v, p) = try next()
        return try ValueDecoderImpl(value: v, codingPath: p).container(keyedBy: type)
    }

    mutating func nestedUnkeyedContainer() throws -> UnkeyedDecodingContainer {
        let (v, p) = try next()
        return try ValueDecoderImpl(value: v, codingPath: p).unkeyedContainer()
    }

    mutating func superDecoder() throws -> Decoder {
        let (v, p) = try next()
        return ValueDecoderImpl(value: v, codingPath: p)
    }
}

struct SingleValueDecoding: SingleValueDecodingContainer {
    let value: Value
    let codingPath: [CodingKey]

    func decodeNil() -> Bool { value.isNull }
    func decode(_ type: Bool.Type) throws -> Bool { try ScalarDecoding.bool(value, codingPath) }
    func decode(_ type: String.Type) throws -> String { try ScalarDecoding.string(value, codingPath) }
    func decode(_ type: Double.Type) throws -> Double { try ScalarDecoding.double(value, codingPath) }
    func decode(_ type: Float.Type) throws -> Float { Float(try ScalarDecoding.double(value, codingPath)) }
    func decode(_ type: Int.Type) throws -> Int { try ScalarDecoding.integer(value, codingPath) }
    func decode(_ type: Int8.Type) throws -> Int8 { try ScalarDecoding.integer(value, codingPath) }
    func decode(_ type: Int16.Type) throws -> Int16 { try ScalarDecoding.integer(value, codingPath) }
    func decode(_ type: Int32.Type) throws -> Int32 { try ScalarDecoding.integer(value, codingPath) }
    func decode(_ type: Int64.Type) throws -> Int64 { try ScalarDecoding.integer(value, codingPath) }
    func decode(_ type: UInt.Type) throws -> UInt { try ScalarDecoding.integer(value, codingPath) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try ScalarDecoding.integer(value, codingPath) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try ScalarDecoding.integer(value, codingPath) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try ScalarDecoding.integer(value, codingPath) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try ScalarDecoding.integer(value, codingPath) }
    func decode<T: Decodable>(_ type: T.Type) throws -> T { try ScalarDecoding.decode(type, value, codingPath) }
}

// MARK: Value itself is Codable, so it can sit inside Codable types and travel through other coders.

extension Value: Codable {
    public init(from decoder: Decoder) throws {
        if let direct = decoder as? ValueDecoderImpl {
            self = direct.value
            return
        }
        let c = try decoder.singleValueContainer()
        if c.decodeNil() { self = .null; return }
        if let b = try? c.decode(Bool.self) { self = .bool(b); return }
        if let i = try? c.decode(Int64.self) { self = .int(i); return }
        if let d = try? c.decode(Double.self) { self = .double(d); return }
        if let s = try? c.decode(String.self) { self = .string(s); return }
        if let a = try? c.decode([Value].self) { self = .array(a); return }
        if let m = try? c.decode([String: Value].self) { self = .map(m); return }
        throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "not a value"))
    }

    public func encode(to encoder: Encoder) throws {
        if let direct = encoder as? ValueEncoderImpl {
            direct.node = .value(self)
            return
        }
        var c = encoder.singleValueContainer()
        switch self {
        case .null: try c.encodeNil()
        case .bool(let b): try c.encode(b)
        case .int(let i): try c.encode(i)
        case .double(let d): try c.encode(d)
        case .string(let s), .reference(let s): try c.encode(s)
        case .timestamp(let t): try c.encode(t.rfc3339)
        case .bytes(let b): try c.encode(Base64.encode(b))
        case .geoPoint(let g): try c.encode(g)
        case .array(let a): try c.encode(a)
        case .map(let m): try c.encode(m)
        }
    }
}
