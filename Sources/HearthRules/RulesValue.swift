import HearthModel

/// A value while rules are evaluated: Firestore's values seen as the rules language types them
/// (integers and floats apart, references as paths, geopoints as latlng), and the rules' own
/// types (duration, set, path, map diff). Two symbolic cases stand for what a list query cannot
/// pin down (see `QueryFacts`).
indirect enum RulesValue: Sendable {
    case null
    case bool(Bool)
    case int(Int64)
    case float(Double)
    case string(String)
    case bytes([UInt8])
    case timestamp(Timestamp)
    /// Nanoseconds; arithmetic is checked and an overflow is an evaluation error.
    case duration(Int64)
    case latlng(GeoPoint)
    /// A vector value's components (`FieldValue.vector`), a type of its own in the rules.
    case vector([Double])
    case list([RulesValue])
    /// Distinct elements (by rules equality), in first-seen order.
    case set([RulesValue])
    case map([String: RulesValue])
    /// Segments of a path, `databases/(default)/documents/members/alice` for a document's name.
    case path([String])
    case mapDiff(MapDiff)
    /// For a list query: the value of `resource.data` at this field in a document the query may
    /// return; what the query's filters say about it is in the evaluation's `QueryFacts`.
    case field(FieldPath)
    /// A value the evaluation cannot know (for a list query: a document id, a comparison the
    /// filters do not decide), with the reason, reported when it decides a denial.
    case unknown(String)

    var typeName: String {
        switch self {
        case .null: return "null"
        case .bool: return "bool"
        case .int: return "int"
        case .float: return "float"
        case .string: return "string"
        case .bytes: return "bytes"
        case .timestamp: return "timestamp"
        case .duration: return "duration"
        case .latlng: return "latlng"
        case .vector: return "vector"
        case .list: return "list"
        case .set: return "set"
        case .map: return "map"
        case .path: return "path"
        case .mapDiff: return "map diff"
        case .field, .unknown: return "unknown"
        }
    }

    var isSymbolic: Bool {
        switch self {
        case .field, .unknown: return true
        default: return false
        }
    }

    /// A document's value as the rules see it; references become full document names.
    init(_ value: Value, database: String) {
        switch value {
        case .null: self = .null
        case .bool(let b): self = .bool(b)
        case .int(let i): self = .int(i)
        case .double(let d): self = .float(d)
        case .timestamp(let t): self = .timestamp(t)
        case .string(let s): self = .string(s)
        case .bytes(let b): self = .bytes(b)
        case .reference(let r):
            self = .path(RulesValue.documentsPrefix(database) + PathRules.split(r).map(String.init))
        case .geoPoint(let g): self = .latlng(g)
        case .array(let a): self = .list(a.map { RulesValue($0, database: database) })
        case .map(let m):
            if let components = value.vectorComponents {
                self = .vector(components)
            } else {
                self = .map(m.mapValues { RulesValue($0, database: database) })
            }
        }
    }

    static func map(_ fields: [String: Value], database: String) -> RulesValue {
        .map(fields.mapValues { RulesValue($0, database: database) })
    }

    static func documentsPrefix(_ database: String) -> [String] { ["databases", database, "documents"] }

    /// The Firestore value a concrete rules value stands for, to compare it with a query's
    /// filter values; nil for the rules-only types.
    func firestoreValue(database: String) -> Value? {
        switch self {
        case .null: return .null
        case .bool(let b): return .bool(b)
        case .int(let i): return .int(i)
        case .float(let d): return .double(d)
        case .string(let s): return .string(s)
        case .bytes(let b): return .bytes(b)
        case .timestamp(let t): return .timestamp(t)
        case .latlng(let g): return .geoPoint(g)
        case .vector(let components): return .vector(components)
        case .path(let segments):
            let prefix = RulesValue.documentsPrefix(database)
            guard segments.count > prefix.count, segments.starts(with: prefix) else { return nil }
            return .reference(segments.dropFirst(prefix.count).joined(separator: "/"))
        case .list(let items):
            var out: [Value] = []
            for item in items {
                guard let v = item.firestoreValue(database: database) else { return nil }
                out.append(v)
            }
            return .array(out)
        case .map(let m):
            var out: [String: Value] = [:]
            for (k, item) in m {
                guard let v = item.firestoreValue(database: database) else { return nil }
                out[k] = v
            }
            return .map(out)
        case .duration, .set, .mapDiff, .field, .unknown:
            return nil
        }
    }

    /// A short rendering for messages: strings quoted, long values cut.
    var brief: String {
        let text: String
        switch self {
        case .null: text = "null"
        case .bool(let b): text = b ? "true" : "false"
        case .int(let i): text = String(i)
        case .float(let d): text = String(d)
        case .string(let s): text = "'" + s + "'"
        case .bytes(let b): text = "bytes(\(b.count))"
        case .timestamp(let t): text = "timestamp(\(t.rfc3339))"
        case .duration(let n): text = "duration(\(n)ns)"
        case .latlng(let g): text = "latlng(\(g.latitude), \(g.longitude))"
        case .vector(let c): text = "vector(\(c.count))"
        case .list(let items): text = "[" + items.prefix(8).map(\.brief).joined(separator: ", ") + (items.count > 8 ? ", …" : "") + "]"
        case .set(let items): text = "set([" + items.prefix(8).map(\.brief).joined(separator: ", ") + (items.count > 8 ? ", …" : "") + "])"
        case .map(let m):
            let keys = m.keys.sorted().prefix(8)
            text = "{" + keys.map { "\($0): \(m[$0]?.brief ?? "")" }.joined(separator: ", ") + (m.count > 8 ? ", …" : "") + "}"
        case .path(let s): text = "/" + s.joined(separator: "/")
        case .mapDiff: text = "map diff"
        case .field(let p): text = "resource.data.\(p)"
        case .unknown: text = "unknown"
        }
        return text.count > 80 ? String(text.prefix(77)) + "…" : text
    }
}

/// `left.diff(right)`: what changed from `right` to `left`, by top-level key.
struct MapDiff: Sendable {
    var left: [String: RulesValue]
    var right: [String: RulesValue]

    // Keys by their bytes, as Firestore's field names compare.
    var addedKeys: [String] { left.keys.filter { right[bytes: $0] == nil }.sorted() }
    var removedKeys: [String] { right.keys.filter { left[bytes: $0] == nil }.sorted() }
    var changedKeys: [String] {
        left.keys.filter { k in right[bytes: k].map { !RulesValue.alike(left[k] ?? .null, $0) } ?? false }.sorted()
    }
    var unchangedKeys: [String] {
        left.keys.filter { k in right[bytes: k].map { RulesValue.alike(left[k] ?? .null, $0) } ?? false }.sorted()
    }
    var affectedKeys: [String] { (addedKeys + removedKeys + changedKeys).sorted() }
}

// MARK: Equality, ordering, hashing

extension RulesValue {
    /// The rules' `==` on concrete values, as Firebase evaluates it: two numbers compare by value
    /// across int and float (`1 == 1.0`); anything else as `same`, so `[1] != [1.0]` and
    /// `{'a': 1} != {'a': 1.0}`. Values of different types are simply unequal (never an error).
    static func equal(_ a: RulesValue, _ b: RulesValue) -> Bool {
        switch (a, b) {
        case let (.int(x), .float(y)): return Value.compareIntDouble(x, y) == .same
        case let (.float(x), .int(y)): return Value.compareIntDouble(y, x) == .same
        default: return same(a, b)
        }
    }

    /// Equality inside lists and maps, and a list's `in`, `hasAny`, `hasAll`, `hasOnly` and
    /// `removeAll`: an int never equals a float, at any depth, and NaN equals nothing (as a float
    /// compares); a set inside still compares as a set (`alike`).
    static func same(_ a: RulesValue, _ b: RulesValue) -> Bool { compare(a, b, asSetElements: false) }

    /// Equality of set elements (a set's `in`, `hasAny`, `union`…, `toSet()`) and of a map diff's
    /// values: numbers by value across int and float at any depth (`[1].toSet() == [1.0].toSet()`),
    /// NaN equal to NaN (`[NaN, NaN].toSet().size() == 1`), as Firebase's emulator answers.
    static func alike(_ a: RulesValue, _ b: RulesValue) -> Bool { compare(a, b, asSetElements: true) }

    /// Value equality (strings by UTF-8 bytes, sets without order); ints and floats equal by
    /// value, and NaN equal to NaN, only `asSetElements`.
    private static func compare(_ a: RulesValue, _ b: RulesValue, asSetElements: Bool) -> Bool {
        let sameFloat = { (x: Double, y: Double) in x == y || (asSetElements && x.isNaN && y.isNaN) }
        switch (a, b) {
        case (.null, .null): return true
        case let (.bool(x), .bool(y)): return x == y
        case let (.int(x), .int(y)): return x == y
        case let (.float(x), .float(y)): return sameFloat(x, y)
        case let (.int(x), .float(y)): return asSetElements && Value.compareIntDouble(x, y) == .same
        case let (.float(x), .int(y)): return asSetElements && Value.compareIntDouble(y, x) == .same
        case let (.string(x), .string(y)): return x.utf8.elementsEqual(y.utf8)
        case let (.bytes(x), .bytes(y)): return x == y
        case let (.timestamp(x), .timestamp(y)): return x == y
        case let (.duration(x), .duration(y)): return x == y
        case let (.latlng(x), .latlng(y)): return x == y
        case let (.vector(x), .vector(y)):
            return x.count == y.count && zip(x, y).allSatisfy(sameFloat)
        case let (.path(x), .path(y)): return x.elementsEqual(y, by: UTF8Key.equal)
        case let (.list(x), .list(y)):
            return x.count == y.count && zip(x, y).allSatisfy { compare($0, $1, asSetElements: asSetElements) }
        case let (.set(x), .set(y)):
            guard x.count == y.count else { return false }
            let ys = Set(y.map { HashKey($0) })
            return x.allSatisfy { ys.contains(HashKey($0)) }
        case let (.map(x), .map(y)):
            guard x.count == y.count else { return false }
            for (k, v) in x {
                // Keys by their bytes, as strings compare (and as `HashKey` hashes them): Swift's
                // lookup would match a canonically equivalent key ("é" and "e\u{301}"), making
                // equal values hash differently, which a growing Set traps on.
                guard let w = y[bytes: k], compare(v, w, asSetElements: asSetElements) else { return false }
            }
            return true
        default:
            return false
        }
    }

    /// The rules' `<` family: numbers, strings (UTF-8 order), timestamps, durations and bytes,
    /// each with its own kind; nil when the two cannot be compared (an evaluation error).
    static func order(_ a: RulesValue, _ b: RulesValue) -> ComparisonOrder? {
        switch (a, b) {
        case let (.int(x), .int(y)): return ComparisonOrder(x, y)
        case let (.float(x), .float(y)):
            if x.isNaN || y.isNaN { return nil }
            return ComparisonOrder(x, y)
        case let (.int(x), .float(y)):
            if y.isNaN { return nil }
            return Value.compareIntDouble(x, y)
        case let (.float(x), .int(y)):
            if x.isNaN { return nil }
            return Value.compareIntDouble(y, x).reversed
        case let (.string(x), .string(y)): return Value.compareUTF8(x, y)
        case let (.timestamp(x), .timestamp(y)): return ComparisonOrder(x, y)
        case let (.duration(x), .duration(y)): return ComparisonOrder(x, y)
        case let (.bytes(x), .bytes(y)):
            if x == y { return .same }
            return x.lexicographicallyPrecedes(y) ? .ascending : .descending
        default:
            return nil
        }
    }
}

/// A rules value as a dictionary key. By default it hashes and compares as set elements do
/// (`RulesValue.alike`: 1 and 1.0 collide on purpose; sets and maps hash without order);
/// `typed` keys compare as list elements do (`RulesValue.same`).
struct HashKey: Hashable {
    let value: RulesValue
    let typed: Bool

    init(_ value: RulesValue, typed: Bool = false) {
        self.value = value
        self.typed = typed
    }

    static func == (a: HashKey, b: HashKey) -> Bool {
        a.typed ? RulesValue.same(a.value, b.value) : RulesValue.alike(a.value, b.value)
    }

    func hash(into hasher: inout Hasher) { HashKey.combine(value, typed: typed, into: &hasher) }

    static func combine(_ value: RulesValue, typed: Bool, into hasher: inout Hasher) {
        switch value {
        case .null: hasher.combine(0 as UInt8)
        case .bool(let b): hasher.combine(1 as UInt8); hasher.combine(b)
        case .int(let i): hasher.combine(2 as UInt8); hasher.combine(numberBits(Double(i)))
        case .float(let d): hasher.combine(typed ? 13 as UInt8 : 2); hasher.combine(numberBits(d))
        case .string(let s): hasher.combine(3 as UInt8); hasher.combine(s.utf8.count); for b in s.utf8 { hasher.combine(b) }
        case .bytes(let b): hasher.combine(4 as UInt8); hasher.combine(b)
        case .timestamp(let t): hasher.combine(5 as UInt8); hasher.combine(t)
        case .duration(let n): hasher.combine(6 as UInt8); hasher.combine(n)
        case .latlng(let g): hasher.combine(7 as UInt8); hasher.combine(g)
        case .vector(let c): hasher.combine(14 as UInt8); hasher.combine(c.count); for d in c { hasher.combine(numberBits(d)) }
        case .list(let items):
            hasher.combine(8 as UInt8); hasher.combine(items.count)
            for i in items { combine(i, typed: typed, into: &hasher) }
        case .set(let items): hasher.combine(9 as UInt8); hasher.combine(unordered(items.map { ($0, nil) }, typed: false))
        case .map(let m): hasher.combine(10 as UInt8); hasher.combine(unordered(m.map { (.string($0.key), $0.value) }, typed: typed))
        case .path(let s): hasher.combine(11 as UInt8); hasher.combine(s)
        case .mapDiff, .field, .unknown: hasher.combine(12 as UInt8)
        }
    }

    /// Equal numbers hash alike: an integer as the double it converts to (exact whenever a double
    /// equals it), NaN as one value, -0.0 as 0.0.
    private static func numberBits(_ d: Double) -> UInt64 {
        d.isNaN ? Double.nan.bitPattern : (d == 0 ? 0 : d.bitPattern)
    }

    /// An order-independent hash of elements (or key-value pairs).
    private static func unordered(_ pairs: [(RulesValue, RulesValue?)], typed: Bool) -> Int {
        var total = 0
        for (a, b) in pairs {
            var h = Hasher()
            combine(a, typed: typed, into: &h)
            if let b { combine(b, typed: typed, into: &h) }
            total = total &+ h.finalize()
        }
        return total
    }
}
