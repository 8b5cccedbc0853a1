import Foundation

/// Firestore's ordering of values across types
/// (https://firebase.google.com/docs/firestore/manage-data/data-types#value_type_ordering):
/// null < booleans < numbers (NaN first, then by value, integers and doubles mixed)
/// < timestamps < strings (UTF-8 byte order) < bytes < references (segment by segment, numeric
/// ids such as `__id7__` first) < geopoints (latitude, then longitude) < arrays (element by
/// element, then length) < vectors (by dimension, then component by component) < maps (keys
/// sorted, key then value pairwise, then size).
extension Value {
    /// The rank of the value's type in Firestore's ordering; integers and doubles share one.
    public var typeOrder: Int {
        switch self {
        case .null: return 0
        case .bool: return 1
        case .int, .double: return 2
        case .timestamp: return 3
        case .string: return 4
        case .bytes: return 5
        case .reference: return 6
        case .geoPoint: return 7
        case .array: return 8
        case .map: return isVector ? 9 : 10
        }
    }

    /// Firestore's comparison: numbers compare by value (`1 == 1.0`, `NaN == NaN`, `-0.0 == 0.0`).
    /// This is the order queries use; `<` refines it so that an integer sorts before an equal double.
    public static func compare(_ lhs: Value, _ rhs: Value) -> ComparisonOrder {
        let lo = lhs.typeOrder, ro = rhs.typeOrder
        if lo != ro { return lo < ro ? .ascending : .descending }
        switch (lhs, rhs) {
        case (.null, .null): return .same
        case let (.bool(a), .bool(b)): return a == b ? .same : (a ? .descending : .ascending)
        case let (.int(a), .int(b)): return ComparisonOrder(a, b)
        case let (.double(a), .double(b)): return compareDoubles(a, b)
        case let (.int(a), .double(b)): return compareIntDouble(a, b)
        case let (.double(a), .int(b)): return compareIntDouble(b, a).reversed
        case let (.timestamp(a), .timestamp(b)): return ComparisonOrder(a, b)
        case let (.string(a), .string(b)): return compareUTF8(a, b)
        case let (.bytes(a), .bytes(b)): return compareBytes(a, b)
        case let (.reference(a), .reference(b)): return compareReferences(a, b)
        case let (.geoPoint(a), .geoPoint(b)):
            let lat = compareDoubles(a.latitude, b.latitude)
            return lat != .same ? lat : compareDoubles(a.longitude, b.longitude)
        case let (.array(a), .array(b)):
            for (x, y) in zip(a, b) {
                let c = compare(x, y)
                if c != .same { return c }
            }
            return ComparisonOrder(a.count, b.count)
        case (.map, .map) where lo == 9:
            let a = lhs.vectorItems ?? [], b = rhs.vectorItems ?? []
            if a.count != b.count { return ComparisonOrder(a.count, b.count) }
            for (x, y) in zip(a, b) {
                let c = compare(x, y)
                if c != .same { return c }
            }
            return .same
        case let (.map(a), .map(b)):
            let ak = a.keys.sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) })
            let bk = b.keys.sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) })
            for (x, y) in zip(ak, bk) {
                // Keys by their bytes, as `==` and Firestore compare them.
                let kc = compareUTF8(x, y)
                if kc != .same { return kc }
                let vc = compare(a[x]!, b[y]!)
                if vc != .same { return vc }
            }
            return ComparisonOrder(ak.count, bk.count)
        default:
            return .same
        }
    }

    static func compareDoubles(_ a: Double, _ b: Double) -> ComparisonOrder {
        if a.isNaN { return b.isNaN ? .same : .ascending }
        if b.isNaN { return .descending }
        return a < b ? .ascending : (a > b ? .descending : .same)
    }

    /// Exact comparison of an integer with a double (no rounding of the integer to a double).
    public static func compareIntDouble(_ i: Int64, _ d: Double) -> ComparisonOrder {
        if d.isNaN { return .descending }
        if d >= 9_223_372_036_854_775_808.0 { return .ascending }
        if d < -9_223_372_036_854_775_808.0 { return .descending }
        let whole = d.rounded(.towardZero)
        let wi = Int64(whole)
        if i != wi { return i < wi ? .ascending : .descending }
        let frac = d - whole
        return frac > 0 ? .ascending : (frac < 0 ? .descending : .same)
    }

    public static func compareUTF8(_ a: String, _ b: String) -> ComparisonOrder {
        // Native and small strings expose their UTF-8 without copying; others take the slow path.
        if let order = a.utf8.withContiguousStorageIfAvailable({ pa in
            b.utf8.withContiguousStorageIfAvailable { pb in compareBuffers(pa, pb) }
        }), let order {
            return order
        }
        if a.utf8.elementsEqual(b.utf8) { return .same }
        return a.utf8.lexicographicallyPrecedes(b.utf8) ? .ascending : .descending
    }

    static func compareBytes(_ a: [UInt8], _ b: [UInt8]) -> ComparisonOrder {
        a.withUnsafeBufferPointer { pa in b.withUnsafeBufferPointer { pb in compareBuffers(pa, pb) } }
    }

    static func compareBuffers(_ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>) -> ComparisonOrder {
        let n = min(a.count, b.count)
        if n > 0, let pa = a.baseAddress, let pb = b.baseAddress {
            let c = memcmpBytes(pa, pb, n)
            if c != 0 { return c < 0 ? .ascending : .descending }
        }
        return ComparisonOrder(a.count, b.count)
    }

    /// References compare segment by segment, so `a/b` sorts before `a-x/b` even though `/` > `-`;
    /// numeric ids (`__id7__`) sort before other ids (`PathRules.compareIDs`).
    static func compareReferences(_ a: String, _ b: String) -> ComparisonOrder {
        PathRules.compareSegments(PathRules.split(a), PathRules.split(b))
    }

    @inline(__always)
    static func memcmpBytes(_ a: UnsafePointer<UInt8>, _ b: UnsafePointer<UInt8>, _ n: Int) -> Int {
        Int(memcmp(a, b, n))
    }
}

extension Value: Comparable {
    /// Firestore's order, with an integer before a double of equal value and -0.0 before 0.0 so
    /// that `<` and `==` agree, also inside arrays and maps (`[1] < [1.0]`).
    public static func < (lhs: Value, rhs: Value) -> Bool {
        switch compare(lhs, rhs) {
        case .ascending: return true
        case .descending: return false
        case .same: return numberKindOrder(lhs, rhs) == .ascending
        }
    }

    /// Orders two values that `compare` calls the same: the first integer/double pair of equal value
    /// (integer first) or pair of zeros of opposite signs (-0.0 first), in the order `compare`
    /// visits them, decides. `.same` when no such pair exists.
    static func numberKindOrder(_ lhs: Value, _ rhs: Value) -> ComparisonOrder {
        switch (lhs, rhs) {
        case (.int, .double): return .ascending
        case (.double, .int): return .descending
        case let (.double(a), .double(b)) where a == 0 && b == 0 && a.sign != b.sign:
            return a.sign == .minus ? .ascending : .descending
        case let (.array(a), .array(b)):
            for (x, y) in zip(a, b) {
                let c = numberKindOrder(x, y)
                if c != .same { return c }
            }
            return .same
        case let (.map(a), .map(b)):
            // `compare` found the same keys in both maps, so visiting `a`'s keys in order covers both.
            for key in a.keys.sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }) {
                guard let x = a[key], let y = b[key] else { return .same }
                let c = numberKindOrder(x, y)
                if c != .same { return c }
            }
            return .same
        default:
            return .same
        }
    }
}

/// The result of a three-way comparison.
public enum ComparisonOrder: Int8, Sendable {
    case ascending = -1
    case same = 0
    case descending = 1

    @inline(__always)
    public init<T: Comparable>(_ a: T, _ b: T) {
        self = a < b ? .ascending : (a == b ? .same : .descending)
    }

    public var reversed: ComparisonOrder { ComparisonOrder(rawValue: -rawValue)! }
}
