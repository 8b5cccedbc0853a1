import Foundation

/// Encodes `Encodable` Swift values into `Value`s for documents, callable data and task payloads.
///
/// - `nil` optionals are written as explicit `null` (Firestore queries rely on `field == null`).
/// - `Date` and `Timestamp` become timestamps, `Data` bytes, `GeoPoint` geopoints, `DocumentPath` references;
///   `Value` is written as is.
/// - `FieldValue` sentinels (and nil `@ServerTimestamp` dates) become transforms, returned beside the value
///   by `encodeWithTransforms`, and leave no field in the map.
public struct ValueEncoder: Sendable {
    public init() {}

    public func encode<T: Encodable>(_ value: T) throws -> Value {
        let (encoded, transforms) = try encodeWithTransforms(value)
        if let first = transforms.first {
            throw EncodingError.invalidValue(value, .init(codingPath: [], debugDescription:
                "FieldValue at '\(first.path)' is only allowed in document writes"))
        }
        return encoded
    }

    /// The value and the field transforms (server timestamps, increments…) its sentinels asked for.
    public func encodeWithTransforms<T: Encodable>(_ value: T) throws -> (Value, [(path: FieldPath, transform: FieldTransform)]) {
        if let direct = ValueEncoderImpl.directValue(value) { return (direct, []) }
        let root = ValueEncoderImpl(codingPath: [], shared: EncoderShared())
        try value.encode(to: root)
        return (root.node?.value ?? .null, root.shared.transforms)
    }
}

final class EncoderShared {
    var transforms: [(path: FieldPath, transform: FieldTransform)] = []
}

/// A mutable tree under construction; maps and arrays are boxes so nested containers can write into them.
indirect enum EncodingNode {
    case value(Value)
    case map(MapBox)
    case array(ArrayBox)

    var value: Value {
        switch self {
        case .value(let v): return v
        case .map(let box): return .map(box.members.mapValues { $0.value })
        case .array(let box): return .array(box.items.map { $0.value })
        }
    }
}

final class MapBox { var members: [String: EncodingNode] = [:] }
final class ArrayBox { var items: [EncodingNode] = [] }

final class ValueEncoderImpl: Encoder {
    let codingPath: [CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }
    let shared: EncoderShared
    var node: EncodingNode?

    init(codingPath: [CodingKey], shared: EncoderShared) {
        self.codingPath = codingPath
        self.shared = shared
    }

    func recordTransform(_ transform: FieldTransform) {
        let path = FieldPath(segments: codingPath.map { $0.stringValue })
        shared.transforms.append((path, transform))
        node = nil
    }

    /// The value of the types written without an encoder: `Value` itself (and maps and arrays of
    /// it, as a unit's `set(["n": .int(1)])` passes), scalars, and the types with a `Value` case of
    /// their own. Nil for any other type.
    ///
    /// Tested by metatype, as `ValueDecoderImpl.directDecode` does, not with `as?` casts: a type
    /// that is none of these (every struct a unit writes, and each of its nested ones) failed
    /// eleven dynamic casts here, about a fifth of encoding a small struct in a worker's profile.
    static func directValue<T: Encodable>(_ value: T) -> Value? {
        let type = T.self
        if type == Value.self { return (value as! Value) }
        if type == [String: Value].self { return .map(value as! [String: Value]) }
        if type == String.self { return .string(value as! String) }
        if type == Int.self { return .int(Int64(value as! Int)) }
        if type == Bool.self { return .bool(value as! Bool) }
        if type == Double.self { return .double(value as! Double) }
        if type == Int64.self { return .int(value as! Int64) }
        if type == [Value].self { return .array(value as! [Value]) }
        if type == Timestamp.self { return .timestamp(value as! Timestamp) }
        if type == Date.self { return .timestamp(Timestamp(date: value as! Date)) }
        if type == Data.self { return .bytes([UInt8](value as! Data)) }
        if type == GeoPoint.self { return .geoPoint(value as! GeoPoint) }
        if type == DocumentPath.self { return .reference((value as! DocumentPath).description) }
        return nil
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        let box: MapBox
        if case .map(let existing)? = node {
            box = existing
        } else {
            box = MapBox()
            node = .map(box)
        }
        return KeyedEncodingContainer(KeyedValueEncodingContainer<Key>(encoder: self, box: box))
    }

    func unkeyedContainer() -> UnkeyedEncodingContainer {
        let box: ArrayBox
        if case .array(let existing)? = node {
            box = existing
        } else {
            box = ArrayBox()
            node = .array(box)
        }
        return UnkeyedValueEncodingContainer(encoder: self, box: box)
    }

    func singleValueContainer() -> SingleValueEncodingContainer { SingleValueEncoding(encoder: self) }

    /// Encodes a nested value at `key`, returning its node (nil when it became a transform).
    func encodeNested<T: Encodable>(_ value: T, key: CodingKey) throws -> EncodingNode? {
        if let direct = ValueEncoderImpl.directValue(value) { return .value(direct) }
        let child = ValueEncoderImpl(codingPath: codingPath + [key], shared: shared)
        try value.encode(to: child)
        return child.node ?? (child.wasTransform ? nil : .value(.map([:])))
    }

    var wasTransform: Bool {
        let path = codingPath.map { $0.stringValue }
        return shared.transforms.last.map { $0.path.segments == path } ?? false
    }
}

struct IndexKey: CodingKey {
    var stringValue: String
    var intValue: Int?
    init(_ index: Int) { stringValue = String(index); intValue = index }
    init?(stringValue: String) { self.stringValue = stringValue; intValue = Int(stringValue) }
    init?(intValue: Int) { self.init(intValue) }
}

struct KeyedValueEncodingContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let encoder: ValueEncoderImpl
    let box: MapBox
    var codingPath: [CodingKey] { encoder.codingPath }

    func set(_ value: Value, _ key: Key) { box.members[key.stringValue] = .value(value) }

    mutating func encodeNil(forKey key: Key) throws { set(.null, key) }
    mutating func encode(_ value: Bool, forKey key: Key) throws { set(.bool(value), key) }
    mutating func encode(_ value: String, forKey key: Key) throws { set(.string(value), key) }
    mutating func encode(_ value: Double, forKey key: Key) throws { set(.double(value), key) }
    mutating func encode(_ value: Float, forKey key: Key) throws { set(.double(Double(value)), key) }
    mutating func encode(_ value: Int, forKey key: Key) throws { set(.int(Int64(value)), key) }
    mutating func encode(_ value: Int8, forKey key: Key) throws { set(.int(Int64(value)), key) }
    mutating func encode(_ value: Int16, forKey key: Key) throws { set(.int(Int64(value)), key) }
    mutating func encode(_ value: Int32, forKey key: Key) throws { set(.int(Int64(value)), key) }
    mutating func encode(_ value: Int64, forKey key: Key) throws { set(.int(value), key) }
    mutating func encode(_ value: UInt, forKey key: Key) throws { set(try checkedInt(value, key), key) }
    mutating func encode(_ value: UInt8, forKey key: Key) throws { set(.int(Int64(value)), key) }
    mutating func encode(_ value: UInt16, forKey key: Key) throws { set(.int(Int64(value)), key) }
    mutating func encode(_ value: UInt32, forKey key: Key) throws { set(.int(Int64(value)), key) }
    mutating func encode(_ value: UInt64, forKey key: Key) throws { set(try checkedInt(value, key), key) }

    func checkedInt<T: BinaryInteger>(_ value: T, _ key: Key) throws -> Value {
        guard let v = Int64(exactly: value) else {
            throw EncodingError.invalidValue(value, .init(codingPath: codingPath + [key], debugDescription: "\(value) does not fit in a 64-bit signed integer"))
        }
        return .int(v)
    }

    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        if let node = try encoder.encodeNested(value, key: key) {
            box.members[key.stringValue] = node
        } else {
            box.members.removeValue(forKey: key.stringValue)
        }
    }

    // nil optionals are written as explicit nulls, unlike Foundation's encoders which omit them.
    mutating func encodeIfPresent(_ value: Bool?, forKey key: Key) throws { if let v = value { try encode(v, forKey: key) } else { set(.null, key) } }
    mutating func encodeIfPresent(_ value: String?, forKey key: Key) throws { if let v = value { try encode(v, forKey: key) } else { set(.null, key) } }
    mutating func encodeIfPresent(_ value: Double?, forKey key: Key) throws { if let v = value { try encode(v, forKey: key) } else { set(.null, key) } }
    mutating func encodeIfPresent(_ value: Float?, forKey key: Key) throws { if let v = value { try encode(v, forKey: key) } else { set(.null, key) } }
    mutating func encodeIfPresent(_ value: Int?, forKey key: Key) throws { if let v = value { try encode(v, forKey: key) } else { set(.null, key) } }
    mutating func encodeIfPresent(_ value: Int8?, forKey key: Key) throws { if let v = value { try encode(v, forKey: key) } else { set(.null, key) } }
    mutating func encodeIfPresent(_ value: Int16?, forKey key: Key) throws { if let v = value { try encode(v, forKey: key) } else { set(.null, key) } }
    mutating func encodeIfPresent(_ value: Int32?, forKey key: Key) throws { if let v = value { try encode(v, forKey: key) } else { set(.null, key) } }
    mutating func encodeIfPresent(_ value: Int64?, forKey key: Key) throws { if let v = value { try encode(v, forKey: key) } else { set(.null, key) } }
    mutating func encodeIfPresent(_ value: UInt?, forKey key: Key) throws { if let v = value { try encode(v, forKey: key) } else { set(.null, key) } }
    mutating func encodeIfPresent(_ value: UInt8?, forKey key: Key) throws { if let v = value { try encode(v, forKey: key) } else { set(.null, key) } }
    mutating func encodeIfPresent(_ value: UInt16?, forKey key: Key) throws { if let v = value { try encode(v, forKey: key) } else { set(.null, key) } }
    mutating func encodeIfPresent(_ value: UInt32?, forKey key: Key) throws { if let v = value { try encode(v, forKey: key) } else { set(.null, key) } }
    mutating func encodeIfPresent(_ value: UInt64?, forKey key: Key) throws { if let v = value { try encode(v, forKey: key) } else { set(.null, key) } }
    mutating func encodeIfPresent<T: Encodable>(_ value: T?, forKey key: Key) throws {
        if let v = value { try encode(v, forKey: key) } else { set(.null, key) }
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
        let child = MapBox()
        box.members[key.stringValue] = .map(child)
        let nested = ValueEncoderImpl(codingPath: codingPath + [key], shared: encoder.shared)
        nested.node = .map(child)
        return KeyedEncodingContainer(KeyedValueEncodingContainer<NestedKey>(encoder: nested, box: child))
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> UnkeyedEncodingContainer {
        let child = ArrayBox()
        box.members[key.stringValue] = .array(child)
        let nested = ValueEncoderImpl(codingPath: codingPath + [key], shared: encoder.shared)
        nested.node = .array(child)
        return UnkeyedValueEncodingContainer(encoder: nested, box: child)
    }

    mutating func superEncoder() -> Encoder { superEncoder(named: "super", key: Key(stringValue: "super")) }

    mutating func superEncoder(forKey key: Key) -> Encoder { superEncoder(named: key.stringValue, key: key) }

    /// `key` is nil when the container's keys have no case named `super` (the default key).
    private mutating func superEncoder(named name: String, key: Key?) -> Encoder {
        let child = MapBox()
        box.members[name] = .map(child)
        let nested = ValueEncoderImpl(codingPath: codingPath + [key.map { $0 as CodingKey } ?? SuperKey()], shared: encoder.shared)
        nested.node = .map(child)
        return nested
    }
}

struct UnkeyedValueEncodingContainer: UnkeyedEncodingContainer {
    let encoder: ValueEncoderImpl
    let box: ArrayBox
    var codingPath: [CodingKey] { encoder.codingPath }
    var count: Int { box.items.count }

    func append(_ value: Value) { box.items.append(.value(value)) }

    mutating func encodeNil() throws { append(.null) }
    mutating func encode(_ value: Bool) throws { append(.bool(value)) }
    mutating func encode(_ value: String) throws { append(.string(value)) }
    mutating func encode(_ value: Double) throws { append(.double(value)) }
    mutating func encode(_ value: Float) throws { append(.double(Double(value))) }
    mutating func encode(_ value: Int) throws { append(.int(Int64(value))) }
    mutating func encode(_ value: Int8) throws { append(.int(Int64(value))) }
    mutating func encode(_ value: Int16) throws { append(.int(Int64(value))) }
    mutating func encode(_ value: Int32) throws { append(.int(Int64(value))) }
    mutating func encode(_ value: Int64) throws { append(.int(value)) }
    mutating func encode(_ value: UInt8) throws { append(.int(Int64(value))) }
    mutating func encode(_ value: UInt16) throws { append(.int(Int64(value))) }
    mutating func encode(_ value: UInt32) throws { append(.int(Int64(value))) }
    mutating func encode(_ value: UInt) throws { try encode(UInt64(value)) }
    mutating func encode(_ value: UInt64) throws {
        guard let v = Int64(exactly: value) else {
            throw EncodingError.invalidValue(value, .init(codingPath: codingPath, debugDescription: "\(value) does not fit in a 64-bit signed integer"))
        }
        append(.int(v))
    }

    mutating func encode<T: Encodable>(_ value: T) throws {
        let key = IndexKey(box.items.count)
        if let node = try encoder.encodeNested(value, key: key) {
            box.items.append(node)
        } else {
            throw EncodingError.invalidValue(value, .init(codingPath: codingPath + [key], debugDescription: "FieldValue sentinels cannot be array elements"))
        }
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        let child = MapBox()
        let nested = ValueEncoderImpl(codingPath: codingPath + [IndexKey(box.items.count)], shared: encoder.shared)
        box.items.append(.map(child))
        nested.node = .map(child)
        return KeyedEncodingContainer(KeyedValueEncodingContainer<NestedKey>(encoder: nested, box: child))
    }

    mutating func nestedUnkeyedContainer() -> UnkeyedEncodingContainer {
        let child = ArrayBox()
        let nested = ValueEncoderImpl(codingPath: codingPath + [IndexKey(box.items.count)], shared: encoder.shared)
        box.items.append(.array(child))
        nested.node = .array(child)
        return UnkeyedValueEncodingContainer(encoder: nested, box: child)
    }

    mutating func superEncoder() -> Encoder {
        let child = MapBox()
        let nested = ValueEncoderImpl(codingPath: codingPath + [IndexKey(box.items.count)], shared: encoder.shared)
        box.items.append(.map(child))
        nested.node = .map(child)
        return nested
    }
}

struct SingleValueEncoding: SingleValueEncodingContainer {
    let encoder: ValueEncoderImpl
    var codingPath: [CodingKey] { encoder.codingPath }

    func set(_ value: Value) { encoder.node = .value(value) }

    mutating func encodeNil() throws { set(.null) }
    mutating func encode(_ value: Bool) throws { set(.bool(value)) }
    mutating func encode(_ value: String) throws { set(.string(value)) }
    mutating func encode(_ value: Double) throws { set(.double(value)) }
    mutating func encode(_ value: Float) throws { set(.double(Double(value))) }
    mutating func encode(_ value: Int) throws { set(.int(Int64(value))) }
    mutating func encode(_ value: Int8) throws { set(.int(Int64(value))) }
    mutating func encode(_ value: Int16) throws { set(.int(Int64(value))) }
    mutating func encode(_ value: Int32) throws { set(.int(Int64(value))) }
    mutating func encode(_ value: Int64) throws { set(.int(value)) }
    mutating func encode(_ value: UInt8) throws { set(.int(Int64(value))) }
    mutating func encode(_ value: UInt16) throws { set(.int(Int64(value))) }
    mutating func encode(_ value: UInt32) throws { set(.int(Int64(value))) }
    mutating func encode(_ value: UInt) throws { try encode(UInt64(value)) }
    mutating func encode(_ value: UInt64) throws {
        guard let v = Int64(exactly: value) else {
            throw EncodingError.invalidValue(value, .init(codingPath: codingPath, debugDescription: "\(value) does not fit in a 64-bit signed integer"))
        }
        set(.int(v))
    }

    mutating func encode<T: Encodable>(_ value: T) throws {
        if let direct = ValueEncoderImpl.directValue(value) {
            set(direct)
        } else {
            try value.encode(to: encoder)
        }
    }
}

/// The coding key of `superEncoder()` when the container's own keys have no `super`.
struct SuperKey: CodingKey {
    var stringValue: String { "super" }
    var intValue: Int? { nil }
    init() {}
    init?(stringValue: String) { guard stringValue == "super" else { return nil } }
    init?(intValue: Int) { nil }
}
