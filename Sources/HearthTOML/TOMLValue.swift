/// A TOML value, as `TOML.parse` produces it.
///
/// Equality is structural. Floats compare by value (`0.0 == -0.0`) except that NaN equals NaN whatever
/// its sign, a choice made for tests. Strings compare by Unicode scalars, as TOML keys do, so the
/// precomposed `"é"` and `"e\u{301}"` differ (Swift's `String ==` would call them equal). An integer
/// never equals a float.
public enum TOMLValue: Sendable {
    case string(String)
    case integer(Int64)
    case float(Double)
    case boolean(Bool)
    // Only the wide date and time payloads are boxed; arrays and tables already store their elements
    // out of line, so keeping the rest inline spares an allocation per value and keeps the enum small.
    indirect case offsetDateTime(TOMLOffsetDateTime)
    indirect case localDateTime(TOMLLocalDateTime)
    indirect case localDate(TOMLLocalDate)
    indirect case localTime(TOMLLocalTime)
    case array([TOMLValue])
    case table(TOMLTable)
}

extension TOMLValue: Equatable {
    public static func == (lhs: TOMLValue, rhs: TOMLValue) -> Bool {
        switch (lhs, rhs) {
        case let (.string(a), .string(b)): return TOMLKey.same(a, b)
        case let (.integer(a), .integer(b)): return a == b
        case let (.float(a), .float(b)): return a == b || (a.isNaN && b.isNaN)
        case let (.boolean(a), .boolean(b)): return a == b
        case let (.offsetDateTime(a), .offsetDateTime(b)): return a == b
        case let (.localDateTime(a), .localDateTime(b)): return a == b
        case let (.localDate(a), .localDate(b)): return a == b
        case let (.localTime(a), .localTime(b)): return a == b
        case let (.array(a), .array(b)): return a == b
        case let (.table(a), .table(b)): return a == b
        default: return false
        }
    }
}

extension TOMLValue {
    public var stringValue: String? { if case .string(let v) = self { return v } else { return nil } }
    public var integerValue: Int64? { if case .integer(let v) = self { return v } else { return nil } }
    public var floatValue: Double? { if case .float(let v) = self { return v } else { return nil } }
    public var booleanValue: Bool? { if case .boolean(let v) = self { return v } else { return nil } }
    public var arrayValue: [TOMLValue]? { if case .array(let v) = self { return v } else { return nil } }
    public var tableValue: TOMLTable? { if case .table(let v) = self { return v } else { return nil } }

    /// The member `key` of a table, or nil for a missing key or a value that is not a table.
    public subscript(key: String) -> TOMLValue? {
        if case .table(let t) = self { return t[key] }
        return nil
    }

    /// The TOML name of the value's type, for error messages.
    public var typeName: String {
        switch self {
        case .string: return "string"
        case .integer: return "integer"
        case .float: return "float"
        case .boolean: return "boolean"
        case .offsetDateTime: return "offset date-time"
        case .localDateTime: return "local date-time"
        case .localDate: return "local date"
        case .localTime: return "local time"
        case .array: return "array"
        case .table: return "table"
        }
    }
}

// No dictionary literal: its `Value` associated type would shadow `HearthModel.Value` in extensions.
extension TOMLValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral,
    ExpressibleByBooleanLiteral, ExpressibleByArrayLiteral
{
    public init(stringLiteral value: String) { self = .string(value) }
    public init(integerLiteral value: Int64) { self = .integer(value) }
    public init(floatLiteral value: Double) { self = .float(value) }
    public init(booleanLiteral value: Bool) { self = .boolean(value) }
    public init(arrayLiteral elements: TOMLValue...) { self = .array(elements) }
}

/// A TOML table: keys in document order (the order in which each key was first defined, which for a
/// table created implicitly by `[a.b]` is where `a` first appeared).
///
/// Keys are distinct by Unicode scalars, as TOML requires; Swift's `String ==` would merge canonically
/// equivalent spellings such as `"é"` and `"e\u{301}"`. Equality compares the entries in order.
/// Lookup scans small tables (most of a config's) and uses a hash index past `indexThreshold` keys.
public struct TOMLTable: Sendable {
    /// The entries in document order.
    public private(set) var entries: [(key: String, value: TOMLValue)] = []
    private var index: [TOMLKey: Int]?

    static let indexThreshold = 16

    public init() {}

    /// Entries known to have distinct keys; the parser's way in.
    init(uniqueEntries: [(key: String, value: TOMLValue)]) {
        entries = uniqueEntries
        if entries.count > Self.indexThreshold { buildIndex() }
    }

    /// The keys in document order.
    public var keys: [String] { entries.map(\.key) }
    public var count: Int { entries.count }
    public var isEmpty: Bool { entries.isEmpty }

    /// The value for `key`; setting nil removes the key, setting a new key appends it.
    public subscript(key: String) -> TOMLValue? {
        get { position(of: key).map { entries[$0].value } }
        set {
            switch (position(of: key), newValue) {
            case let (k?, value?):
                entries[k].value = value
            case let (k?, nil):
                entries.remove(at: k)
                index = nil
                if entries.count > Self.indexThreshold { buildIndex() }
            case let (nil, value?):
                entries.append((key, value))
                if index != nil {
                    index![TOMLKey(key)] = entries.count - 1
                } else if entries.count > Self.indexThreshold {
                    buildIndex()
                }
            case (nil, nil):
                break
            }
        }
    }

    private func position(of key: String) -> Int? {
        if let index { return index[TOMLKey(key)] }
        return entries.firstIndex { TOMLKey.same($0.key, key) }
    }

    private mutating func buildIndex() {
        var index: [TOMLKey: Int] = [:]
        index.reserveCapacity(entries.count)
        for (k, entry) in entries.enumerated() { index[TOMLKey(entry.key)] = k }
        self.index = index
    }
}

extension TOMLTable: Equatable {
    public static func == (lhs: TOMLTable, rhs: TOMLTable) -> Bool {
        lhs.entries.count == rhs.entries.count
            && zip(lhs.entries, rhs.entries).allSatisfy { a, b in TOMLKey.same(a.key, b.key) && a.value == b.value }
    }
}

extension TOMLTable {
    /// A table with these entries in this order; a repeated key keeps its first position and last value.
    ///
    /// ```swift
    /// let server = TOMLTable(["host": "0.0.0.0", "port": 8080])
    /// ```
    public init(_ entries: KeyValuePairs<String, TOMLValue>) {
        for (key, value) in entries { self[key] = value }
    }
}

/// A string compared and hashed by its UTF-8 bytes (that is, by Unicode scalars), the identity TOML
/// gives keys.
struct TOMLKey: Hashable, Sendable {
    var string: String

    init(_ string: String) { self.string = string }

    static func == (lhs: TOMLKey, rhs: TOMLKey) -> Bool { same(lhs.string, rhs.string) }

    func hash(into hasher: inout Hasher) {
        var copy = string
        copy.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
    }

    /// Byte equality, without `String ==`'s canonical equivalence.
    @inline(__always) static func same(_ a: String, _ b: String) -> Bool {
        var a = a
        var b = b
        return a.withUTF8 { pa in b.withUTF8 { pb in pa.elementsEqual(pb) } }
    }
}
