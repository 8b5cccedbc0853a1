/// A Firestore value: what a document field, a callable's data and every message across the unit
/// boundary are made of.
///
/// Equality is structural (`.int(1) != .double(1)`, strings compare by their UTF-8 bytes, NaN equals
/// NaN); ordering follows Firestore's cross-type order (see `Value+Ordering.swift`), where numbers
/// compare by value and an integer sorts just before an equal double.
public enum Value: Sendable {
    case null
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case timestamp(Timestamp)
    case string(String)
    case bytes([UInt8])
    /// A reference to a document, as its slash path (`members/alice`).
    case reference(String)
    case geoPoint(GeoPoint)
    case array([Value])
    /// A map. Keys are Swift strings, so two keys that differ only in Unicode normalization
    /// ("é" precomposed and "e\u{301}") are one key, unlike in Firestore where they are distinct.
    case map([String: Value])
}

/// A latitude and longitude in degrees.
public struct GeoPoint: Sendable, Hashable, Codable {
    public var latitude: Double
    public var longitude: Double

    public init(latitude: Double, longitude: Double) {
        self.latitude = latitude
        self.longitude = longitude
    }
}

extension Value {
    /// The empty map.
    public static let emptyMap = Value.map([:])

    public var isNull: Bool { if case .null = self { return true } else { return false } }

    public var boolValue: Bool? { if case .bool(let v) = self { return v } else { return nil } }
    public var intValue: Int64? { if case .int(let v) = self { return v } else { return nil } }
    public var stringValue: String? { if case .string(let v) = self { return v } else { return nil } }
    public var arrayValue: [Value]? { if case .array(let v) = self { return v } else { return nil } }
    public var mapValue: [String: Value]? { if case .map(let v) = self { return v } else { return nil } }
    public var timestampValue: Timestamp? { if case .timestamp(let v) = self { return v } else { return nil } }
    public var bytesValue: [UInt8]? { if case .bytes(let v) = self { return v } else { return nil } }

    /// The value as a double when it is a number of either kind.
    public var doubleValue: Double? {
        switch self {
        case .double(let v): return v
        case .int(let v): return Double(v)
        default: return nil
        }
    }

    /// The member `key` of a map, or nil for a missing key or a value that is not a map.
    public subscript(key: String) -> Value? {
        if case .map(let m) = self { return m[key] }
        return nil
    }

    /// A short name of the value's type, for error messages.
    public var typeName: String {
        switch self {
        case .null: return "null"
        case .bool: return "boolean"
        case .int: return "integer"
        case .double: return "double"
        case .timestamp: return "timestamp"
        case .string: return "string"
        case .bytes: return "bytes"
        case .reference: return "reference"
        case .geoPoint: return "geopoint"
        case .array: return "array"
        case .map: return "map"
        }
    }
}

extension Value: Equatable {
    public static func == (lhs: Value, rhs: Value) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): return true
        case let (.bool(a), .bool(b)): return a == b
        case let (.int(a), .int(b)): return a == b
        // Firestore's value equality: -0.0 is not 0.0 (a write from one to the other is a change,
        // though queries order them alike), and NaN is NaN.
        case let (.double(a), .double(b)): return a.bitPattern == b.bitPattern || (a.isNaN && b.isNaN)
        case let (.timestamp(a), .timestamp(b)): return a == b
        case let (.string(a), .string(b)): return a.utf8.elementsEqual(b.utf8)
        case let (.bytes(a), .bytes(b)): return a == b
        case let (.reference(a), .reference(b)): return a.utf8.elementsEqual(b.utf8)
        case let (.geoPoint(a), .geoPoint(b)): return a == b
        case let (.array(a), .array(b)): return a == b
        // Keys by their bytes, as strings compare: "é" and "e\u{301}" name two fields in Firestore.
        case let (.map(a), .map(b)): return a.count == b.count && a.allSatisfy { key, value in b[bytes: key] == value }
        default: return false
        }
    }
}

extension Value: Hashable {
    public func hash(into hasher: inout Hasher) {
        switch self {
        case .null: hasher.combine(0 as UInt8)
        case .bool(let v): hasher.combine(1 as UInt8); hasher.combine(v)
        case .int(let v): hasher.combine(2 as UInt8); hasher.combine(v)
        case .double(let v): hasher.combine(3 as UInt8); hasher.combine(v.isNaN ? Double.nan.bitPattern : v.bitPattern)
        case .timestamp(let v): hasher.combine(4 as UInt8); hasher.combine(v)
        case .string(let v): hasher.combine(5 as UInt8); UTF8Key.hash(v, into: &hasher)
        case .bytes(let v): hasher.combine(6 as UInt8); hasher.combine(v)
        case .reference(let v): hasher.combine(7 as UInt8); UTF8Key.hash(v, into: &hasher)
        case .geoPoint(let v): hasher.combine(8 as UInt8); hasher.combine(v)
        case .array(let v): hasher.combine(9 as UInt8); hasher.combine(v)
        case .map(let v): hasher.combine(10 as UInt8); hasher.combine(v)
        }
    }
}

extension Value: ExpressibleByNilLiteral, ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral, ExpressibleByStringLiteral, ExpressibleByArrayLiteral,
    ExpressibleByDictionaryLiteral
{
    public init(nilLiteral: ()) { self = .null }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(integerLiteral value: Int64) { self = .int(value) }
    public init(floatLiteral value: Double) { self = .double(value) }
    public init(stringLiteral value: String) { self = .string(value) }
    public init(arrayLiteral elements: Value...) { self = .array(elements) }
    public init(dictionaryLiteral elements: (String, Value)...) {
        var map: [String: Value] = [:]
        map.reserveCapacity(elements.count)
        for (key, value) in elements { map[key] = value }
        self = .map(map)
    }
}

extension Value: CustomStringConvertible {
    /// The value as tagged JSON (see `JSONWriter`), for logs and test failures.
    public var description: String { JSONWriter.string(self, options: .tagged) }
}


/// How deeply values nest, one rule for the whole path a value travels: what a client may send
/// (a callable's data, the admin API's bodies) is checked where it enters, and every codec on the
/// way after (the unit boundary, the store) takes that plus room for the envelopes it is wrapped
/// in, so a value accepted at the door is never refused further in with an internal error.
public enum ValueLimits {
    /// Arrays and maps nested inside one another in a value from a client.
    public static let maxDepth = 500
    /// What codecs carrying such a value accept: the value and a few envelopes around it
    /// (request body, event, boundary message).
    public static let maxCarriedDepth = maxDepth + 12
}
