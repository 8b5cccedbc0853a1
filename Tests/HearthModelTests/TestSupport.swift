import Foundation
import HearthModel
@_exported import HearthTesting
import Synchronization
import Testing

// Shared helpers for the HearthModel tests: a seeded generator, random values, timeouts.

/// Builds random `Value`s for property tests.
struct ValueGenerator {
    var rng: SplitMix64
    /// Only the types plain JSON keeps (null, bool, int, finite double, string, array, map).
    var jsonOnly: Bool
    var maxDepth = 4

    init(seed: UInt64, jsonOnly: Bool) {
        rng = SplitMix64(seed: seed)
        self.jsonOnly = jsonOnly
    }

    mutating func int(_ range: ClosedRange<Int>) -> Int { Int.random(in: range, using: &rng) }

    mutating func value(depth: Int = 0) -> Value {
        let scalarKinds = jsonOnly ? 5 : 10
        let kinds = depth >= maxDepth ? scalarKinds : scalarKinds + 2
        let k = int(0...(kinds - 1))
        if k >= scalarKinds {
            return k == scalarKinds ? .array(array(depth: depth)) : .map(map(depth: depth))
        }
        switch k {
        case 0: return .null
        case 1: return .bool(rng.next() & 1 == 0)
        case 2: return .int(integer())
        case 3: return .double(double())
        case 4: return .string(string())
        case 5: return .timestamp(Timestamp(seconds: Int64(int(-62_135_596_800...253_402_300_799)), nanos: Int32(int(0...999_999_999))))
        case 6: return .bytes((0..<int(0...12)).map { _ in UInt8.random(in: 0...255, using: &rng) })
        case 7: return .reference("c\(int(0...9))/d\(int(0...99))")
        case 8: return .geoPoint(GeoPoint(latitude: Double(int(-90_000...90_000)) / 1000, longitude: Double(int(-180_000...180_000)) / 1000))
        default:
            let specials: [Double] = [.nan, .infinity, -.infinity]
            return .double(specials[int(0...2)])
        }
    }

    mutating func array(depth: Int) -> [Value] {
        (0..<int(0...4)).map { _ in value(depth: depth + 1) }
    }

    mutating func map(depth: Int) -> [String: Value] {
        var out: [String: Value] = [:]
        for _ in 0..<int(0...4) { out[key()] = value(depth: depth + 1) }
        return out
    }

    mutating func integer() -> Int64 {
        switch int(0...4) {
        case 0: return Int64(int(-100...100))
        case 1: return Int64(bitPattern: rng.next())
        case 2: return [Int64.min, Int64.max, 9_007_199_254_740_991, -9_007_199_254_740_992, 0][int(0...4)]
        default: return Int64(int(-1_000_000...1_000_000))
        }
    }

    mutating func double() -> Double {
        switch int(0...5) {
        case 0:
            // Any finite bit pattern: subnormals, huge, tiny.
            while true {
                let d = Double(bitPattern: rng.next())
                if d.isFinite { return d }
            }
        case 1: return [0.1, 1e300, Double.leastNonzeroMagnitude, -0.0, 0.0, 1.0, 1e16, 1e15, -1e-7, 123456.789][int(0...9)]
        case 2: return Double(int(-1000...1000)) / 8
        default: return Double.random(in: -1e6...1e6, using: &rng)
        }
    }

    mutating func scalar() -> Unicode.Scalar {
        switch int(0...6) {
        case 0: return Unicode.Scalar(UInt8(int(0...0x1F)))  // control characters
        case 1: return ["\"", "\\", "/", "$", "@", "\u{7F}"][int(0...5)]
        case 2: return Unicode.Scalar(UInt32(int(0x80...0xD7FF)))!
        case 3: return Unicode.Scalar(UInt32(int(0xE000...0xFFFD)))!
        case 4: return Unicode.Scalar(UInt32(int(0x10000...0x10FFFF)))!
        default: return Unicode.Scalar(UInt8(int(0x20...0x7E)))
        }
    }

    mutating func string() -> String {
        var s = String.UnicodeScalarView()
        for _ in 0..<int(0...8) { s.append(scalar()) }
        return String(s)
    }

    /// Map keys never start with "$" or "@": a one-key map named like a tag is read back as the tagged type.
    mutating func key() -> String {
        var s = string()
        while let first = s.unicodeScalars.first, first == "$" || first == "@" { s.removeFirst() }
        return s
    }
}

/// A thread-safe list for recording what concurrent code saw.
final class Recorder<Element: Sendable>: Sendable {
    private let items = Mutex<[Element]>([])
    func append(_ item: Element) { items.withLock { $0.append(item) } }
    var all: [Element] { items.withLock { $0 } }
}

func bytes(_ s: String) -> [UInt8] { Array(s.utf8) }
