import HearthModel
import Testing

/// One value of each type, and several within each type, in Firestore's ascending order.
let orderedValues: [Value] = [
    .null,
    .bool(false),
    .bool(true),
    .double(.nan),
    .double(-.infinity),
    .double(-1e300),
    .int(Int64.min),
    .double(-1.5),
    .int(-1),
    .double(-0.5),
    .int(0),
    .double(0.5),
    .int(1),
    .double(1.5),
    .int(9_007_199_254_740_992),
    .int(9_007_199_254_740_993),
    .double(9_007_199_254_740_994),
    .int(Int64.max),
    .double(9.223372036854775807e18),
    .double(1e300),
    .double(.infinity),
    .timestamp(Timestamp(seconds: -1)),
    .timestamp(Timestamp(seconds: 0)),
    .timestamp(Timestamp(seconds: 0, nanos: 1)),
    .timestamp(Timestamp(seconds: 1)),
    .string(""),
    .string("Z"),
    .string("a"),
    .string("ab"),
    .string("b"),
    .string("é"),
    .string("\u{FFFD}"),
    .string("😀"),
    .bytes([]),
    .bytes([0]),
    .bytes([0, 0]),
    .bytes([1]),
    .bytes([255]),
    .reference("a/b"),
    .reference("a/b/c/d"),
    .reference("a-x/b"),
    .reference("b/a"),
    .geoPoint(GeoPoint(latitude: -10, longitude: 0)),
    .geoPoint(GeoPoint(latitude: 0, longitude: -5)),
    .geoPoint(GeoPoint(latitude: 0, longitude: 5)),
    .geoPoint(GeoPoint(latitude: 10, longitude: -100)),
    .array([]),
    .array([.null]),
    .array([.int(1)]),
    .array([.int(1), .int(2)]),
    .array([.int(2)]),
    .array([.string("a")]),
    .vector([]),
    .vector([9]),
    .vector([1, 2]),
    .vector([1, 3]),
    .vector([0, 0, 0]),
    .map([:]),
    .map(["a": .int(1)]),
    .map(["a": .int(1), "b": .int(0)]),
    .map(["a": .int(2)]),
    .map(["b": .int(0)]),
]

struct OrderedPair: Sendable, CustomTestStringConvertible {
    var lower: Value
    var higher: Value
    var testDescription: String { "\(lower) < \(higher)" }
}

@Suite("Firestore value ordering")
struct ValueOrderingTests {
    @Test("each value in the table sorts before the next one", arguments: zip(orderedValues, orderedValues.dropFirst()).map(OrderedPair.init))
    func adjacentPairs(_ pair: OrderedPair) {
        #expect(Value.compare(pair.lower, pair.higher) == .ascending)
        #expect(Value.compare(pair.higher, pair.lower) == .descending)
        #expect(pair.lower < pair.higher)
        #expect(!(pair.higher < pair.lower))
        #expect(pair.lower != pair.higher)
    }

    @Test("the whole table is strictly ascending, pair by pair, in both directions")
    func allPairs() {
        for i in orderedValues.indices {
            #expect(Value.compare(orderedValues[i], orderedValues[i]) == .same, "\(orderedValues[i])")
            for j in orderedValues.indices where i < j {
                #expect(Value.compare(orderedValues[i], orderedValues[j]) == .ascending, "\(orderedValues[i]) vs \(orderedValues[j])")
                #expect(Value.compare(orderedValues[j], orderedValues[i]) == .descending, "\(orderedValues[j]) vs \(orderedValues[i])")
            }
        }
    }

    @Test("sorting a shuffled table gives the table back")
    func sortShuffled() {
        var rng = SplitMix64(seed: 42)
        for _ in 0..<20 {
            let sorted = orderedValues.shuffled(using: &rng).sorted()
            #expect(sorted == orderedValues)
        }
    }

    @Test("type order ranks every type, integers and doubles together")
    func typeOrder() {
        let ranks: [(Value, Int)] = [
            (.null, 0), (.bool(true), 1), (.int(1), 2), (.double(1), 2), (.timestamp(.zero), 3), (.string(""), 4),
            (.bytes([]), 5), (.reference("a/b"), 6), (.geoPoint(GeoPoint(latitude: 0, longitude: 0)), 7),
            (.array([]), 8), (.vector([1]), 9), (.map([:]), 10),
            // Only the exact shape is a vector: integer components or a third key make a map.
            (.map(["__type__": "__vector__", "value": [1]]), 10), (.map(["__type__": "__vector__", "value": [.double(1)], "x": 1]), 10),
        ]
        for (value, rank) in ranks { #expect(value.typeOrder == rank, "\(value)") }
    }

    @Test("strings compare by UTF-8 bytes, not UTF-16 code units")
    func stringsByUTF8() {
        // In UTF-16, U+1F600 (a surrogate pair D83D DE00) sorts before U+FFFD; in UTF-8 (F0… vs EF…) after.
        #expect(Value.string("\u{FFFD}") < Value.string("😀"))
        #expect(Value.string("Z") < Value.string("a"))
        #expect(Value.string("a") < Value.string("é"))
        #expect(Value.string("é") < Value.string("😀"))
        // Precomposed é (C3 A9) and e + combining acute (65 CC 81) are different values.
        #expect(Value.string("e\u{301}") < Value.string("\u{E9}"))
        #expect(Value.string("e\u{301}") != Value.string("\u{E9}"))
    }

    @Test("references compare segment by segment")
    func referencesBySegment() {
        // Bytewise "a-x/b" < "a/b" because '-' (0x2D) < '/' (0x2F); by segments "a" < "a-x".
        #expect(Value.compare(.reference("a/b"), .reference("a-x/b")) == .ascending)
        #expect(Value.compare(.reference("a/b"), .reference("a/b/c/d")) == .ascending)
        #expect(Value.compare(.reference("a/b"), .reference("a/b")) == .same)
        #expect(Value.compare(.reference("a/z"), .reference("b/a")) == .ascending)
    }

    struct IntDoubleCase: Sendable, CustomTestStringConvertible {
        var int: Int64
        var double: Double
        var expected: ComparisonOrder
        var testDescription: String { "\(int) vs \(double) is \(expected)" }
    }

    @Test("integers and doubles compare exactly, even beyond 2^53", arguments: [
        IntDoubleCase(int: .max, double: 9.223372036854775807e18, expected: .ascending),  // the double is 2^63
        IntDoubleCase(int: .min, double: -9.223372036854775808e18, expected: .same),
        IntDoubleCase(int: .min, double: -9.223372036854777856e18, expected: .descending),  // next double below -2^63
        IntDoubleCase(int: 9_007_199_254_740_993, double: 9_007_199_254_740_992, expected: .descending),
        IntDoubleCase(int: 9_007_199_254_740_993, double: 9_007_199_254_740_994, expected: .ascending),
        IntDoubleCase(int: -9_007_199_254_740_993, double: -9_007_199_254_740_992, expected: .ascending),
        IntDoubleCase(int: 9_223_372_036_854_774_784, double: 9_223_372_036_854_774_784, expected: .same),
        IntDoubleCase(int: 9_223_372_036_854_774_785, double: 9_223_372_036_854_774_784, expected: .descending),
        IntDoubleCase(int: 3, double: 3.5, expected: .ascending),
        IntDoubleCase(int: 3, double: 2.5, expected: .descending),
        IntDoubleCase(int: -3, double: -3.5, expected: .descending),
        IntDoubleCase(int: -3, double: -2.5, expected: .ascending),
        IntDoubleCase(int: 0, double: -0.0, expected: .same),
        IntDoubleCase(int: 0, double: Double.leastNonzeroMagnitude, expected: .ascending),
        IntDoubleCase(int: 0, double: -Double.leastNonzeroMagnitude, expected: .descending),
        IntDoubleCase(int: .min, double: .nan, expected: .descending),
        IntDoubleCase(int: .max, double: .infinity, expected: .ascending),
        IntDoubleCase(int: .min, double: -.infinity, expected: .descending),
    ])
    func intVersusDouble(_ c: IntDoubleCase) {
        #expect(Value.compare(.int(c.int), .double(c.double)) == c.expected)
        #expect(Value.compare(.double(c.double), .int(c.int)) == c.expected.reversed)
    }

    @Test("compare calls an integer and an equal double the same; < puts the integer first")
    func compareVersusLess() {
        #expect(Value.compare(.int(1), .double(1.0)) == .same)
        #expect(Value.int(1) < Value.double(1.0))
        #expect(!(Value.double(1.0) < Value.int(1)))
        #expect(Value.int(1) != Value.double(1.0))
        #expect(Value.compare(.double(-0.0), .double(0.0)) == .same)
        #expect(Value.double(-0.0) < Value.double(0.0), "a tie `==` tells apart, broken as integers before doubles are")
        #expect(!(Value.double(0.0) < Value.double(-0.0)))
        #expect(Value.compare(.double(.nan), .double(.nan)) == .same)
        #expect(!(Value.double(.nan) < Value.double(.nan)))
    }

    @Test("exactly one of <, > and == holds, also inside arrays and maps", arguments: [
        (Value.int(1), Value.double(1)),
        (.double(1), .int(1)),
        (.array([.int(1)]), .array([.double(1)])),
        (.array([.double(1)]), .array([.int(1)])),
        (.array([.int(1), .int(2)]), .array([.double(1), .int(2)])),
        (.array([.double(1), .int(2)]), .array([.int(1), .double(2)])),
        (.map(["a": .int(1)]), .map(["a": .double(1)])),
        (.map(["a": .array([.int(0)]), "b": .int(1)]), .map(["a": .array([.double(0)]), "b": .int(1)])),
        (.map(["a": .double(1), "b": .int(1)]), .map(["a": .int(1), "b": .double(1)])),
        (.double(-0.0), .double(0)),
        (.double(.nan), .double(-.nan)),
        (.array([.double(-0.0)]), .array([.double(0)])),
    ])
    func trichotomy(_ a: Value, _ b: Value) {
        let outcomes = [a < b, b < a, a == b].filter { $0 }.count
        #expect(outcomes == 1, "\(a) vs \(b): < \(a < b), > \(b < a), == \(a == b)")
    }

    @Test("< is a strict total order consistent with == over random values")
    func randomTrichotomyAndTransitivity() {
        var gen = ValueGenerator(seed: 7, jsonOnly: false)
        gen.maxDepth = 2
        // Few distinct numbers so that ints and doubles of equal value meet often.
        func numberish(_ v: Value) -> Value {
            switch v {
            case .int(let i): return .int(i % 3)
            case .double(let d): return d.isFinite ? .double(Double(Int(d.truncatingRemainder(dividingBy: 3)))) : .double(d)
            case .array(let a): return .array(a.map(numberish))
            case .map(let m): return .map(m.mapValues(numberish))
            default: return v
            }
        }
        let values = (0..<300).map { _ in numberish(gen.value()) }
        for a in values {
            for b in values.prefix(60) {
                let count = [a < b, b < a, a == b].filter { $0 }.count
                #expect(count == 1, "\(a) vs \(b)")
            }
        }
        let sorted = values.sorted()
        for (x, y) in zip(sorted, sorted.dropFirst()) { #expect(!(y < x), "\(x) then \(y)") }
    }

    @Test("NaN equals NaN with equal hashes; -0.0 is not 0.0 (Firestore's value equality), though they order alike")
    func equalityAndHashing() {
        let quietNaN = Double.nan
        let payloadNaN = Double(nan: 0x1234, signaling: false)
        #expect(Value.double(quietNaN) == Value.double(payloadNaN))
        #expect(Value.double(quietNaN).hashValue == Value.double(payloadNaN).hashValue)
        #expect(Value.double(-0.0) != Value.double(0.0))
        #expect(Value.compare(.double(-0.0), .double(0.0)) == .same)
        #expect(Value.double(-0.0) < Value.double(0.0))
        let set: Set<Value> = [.double(0.0), .double(-0.0), .double(quietNaN), .double(-payloadNaN), .int(0), .int(1), .double(1)]
        #expect(set.count == 6)
    }

    @Test("equality is structural: an integer never equals a double and strings compare by bytes")
    func structuralEquality() {
        #expect(Value.int(1) != Value.double(1))
        #expect(Value.reference("a/b") != Value.string("a/b"))
        #expect(Value.bytes([1]) != Value.array([.int(1)]))
        #expect(Value.map(["a": .int(1)]) == Value.map(["a": .int(1)]))
        #expect(Value.map(["a": .int(1)]) != Value.map(["a": .double(1)]))
        let precomposed = Value.string("\u{E9}"), decomposed = Value.string("e\u{301}")
        #expect(precomposed != decomposed)
        #expect(Set([precomposed, decomposed]).count == 2)
    }

    @Test("map keys that differ only in Unicode normalization are two keys, compared by their bytes as Firestore's; compare agrees with ==")
    func normalizationOfKeys() {
        let precomposed = Value.map(["\u{E9}": 1]), decomposed = Value.map(["e\u{301}": 1])
        #expect(precomposed != decomposed)
        #expect(Value.compare(decomposed, precomposed) == .ascending, "e (0x65) sorts before é (0xC3 0xA9)")
        #expect(decomposed < precomposed && !(precomposed < decomposed))
        #expect(Value.compare(precomposed, Value.map(["\u{E9}": 1])) == .same)
    }

    @Test("equal values hash equally across every table entry and its copy")
    func hashTable() {
        for v in orderedValues {
            let copy = v
            #expect(v == copy)
            #expect(v.hashValue == copy.hashValue)
        }
        #expect(Set(orderedValues).count == orderedValues.count)
    }

    @Test("accessors return the payload only for their own type")
    func accessors() {
        let m: Value = ["a": 1, "b": "x", "c": [true, nil], "d": 2.5]
        #expect(m["a"]?.intValue == 1)
        #expect(m["b"]?.stringValue == "x")
        #expect(m["c"]?.arrayValue == [.bool(true), .null])
        #expect(m["d"]?.doubleValue == 2.5)
        #expect(m["a"]?.doubleValue == 1.0)
        #expect(m["missing"] == nil)
        #expect(Value.int(1)["a"] == nil)
        #expect(Value.null.isNull)
        #expect(Value.int(1).stringValue == nil)
        #expect(Value.string("x").intValue == nil)
        #expect(Value.bool(true).boolValue == true)
        #expect(Value.bytes([1]).bytesValue == [1])
        #expect(Value.timestamp(.zero).timestampValue == .zero)
        #expect(m.mapValue?.count == 4)
        #expect(Value.emptyMap == .map([:]))
        #expect(Value.geoPoint(GeoPoint(latitude: 1, longitude: 2)).typeName == "geopoint")
        #expect(Value.int(1).typeName == "integer")
        #expect(Value.double(1).typeName == "double")
    }
}
