import Foundation
import HearthModel
import Testing

@Suite("JSON round trips")
struct JSONRoundTripTests {
    @Test("hand-picked values round-trip in plain style")
    func plainRoundTrip() throws {
        let value: Value = [
            "int": .int(.max), "min": .int(.min), "doubles": [0.1, 1e300, .double(.leastNonzeroMagnitude), -0.0, 1.0, 1e16],
            "s": "\u{0}\u{1F}\"\\/é😀", "nested": [[[]], ["k": nil]], "": true, "f": false,
        ]
        let back = try JSONParser.parse(JSONWriter.encode(value))
        #expect(back == value)
        #expect(back["doubles"]?.arrayValue?[3].doubleValue?.sign == .minus)
        #expect(back["doubles"]?.arrayValue?[4] == .double(1.0))
    }

    @Test("every type round-trips in tagged style")
    func taggedRoundTrip() throws {
        let value: Value = [
            "ts": .timestamp(Timestamp(seconds: -62_135_596_800, nanos: 1)), "ts2": .timestamp(Timestamp(seconds: 253_402_300_799, nanos: 999_999_999)),
            "bytes": .bytes([0, 255, 1, 2]), "empty": .bytes([]), "ref": .reference("members/alice/items/i1"),
            "geo": .geoPoint(GeoPoint(latitude: -90, longitude: 180)), "nan": .double(.nan), "inf": [.double(.infinity), .double(-.infinity)],
            "d": 1.0, "i": 1, "n": nil,
        ]
        #expect(try JSONParser.parse(JSONWriter.encode(value, options: .tagged), options: .tagged) == value)
        #expect(try JSONParser.parse(value.description, options: .tagged) == value)
    }

    @Test("a one-key map whose key is a tag name is not mistaken for the tagged type")
    func tagLookalikeMaps() throws {
        let lookalikes: [Value] = [["$bytes": "AQID"], ["$timestamp": 5], ["$reference": "a/b"]]
        // A map whose only key starts with "$" is written as {"$map": …}, so it reads back as itself.
        for value in lookalikes + [["$map": 1], ["$anything": ["$bytes": "x"]]] {
            let text = JSONWriter.encode(value, options: .tagged)
            #expect(String(decoding: text, as: UTF8.self).hasPrefix("{\"$map\":"))
            let parsed = try JSONParser.parse(text, options: .tagged)
            #expect(parsed == value)
        }
        // Maps with a "$" key beside others are never tags.
        let safe: Value = ["$bytes": "AQID", "other": 1]
        #expect(try JSONParser.parse(JSONWriter.encode(safe, options: .tagged), options: .tagged) == safe)
    }

    @Test("random plain values round-trip through our parser and read the same in JSONSerialization")
    func randomPlain() throws {
        var gen = ValueGenerator(seed: 0x5EED_0001, jsonOnly: true)
        for round in 0..<3000 {
            let value = gen.value()
            let sorted = JSONWriter.encode(value, options: JSONWriteOptions(sortKeys: true))
            let unsorted = JSONWriter.encode(value, options: JSONWriteOptions(sortKeys: false))
            let pretty = JSONWriter.encode(value, options: JSONWriteOptions(pretty: true))
            #expect(try JSONParser.parse(sorted) == value, "round \(round): \(value)")
            #expect(try JSONParser.parse(unsorted) == value, "round \(round)")
            #expect(try JSONParser.parse(pretty) == value, "round \(round)")
            // An independent parser must read the same structure and numbers.
            let foundation = try JSONSerialization.jsonObject(with: Data(sorted), options: [.fragmentsAllowed])
            #expect(matchesFoundation(value, foundation), "round \(round): \(String(decoding: sorted, as: UTF8.self))")
        }
    }

    @Test("random values of every type round-trip in tagged style")
    func randomTagged() throws {
        var gen = ValueGenerator(seed: 0x5EED_0002, jsonOnly: false)
        for round in 0..<3000 {
            let value = gen.value()
            let text = JSONWriter.encode(value, options: .tagged)
            #expect(try JSONParser.parse(text, options: .tagged) == value, "round \(round): \(value)")
            let pretty = JSONWriter.encode(value, options: JSONWriteOptions(style: .tagged, pretty: true))
            #expect(try JSONParser.parse(pretty, options: .tagged) == value, "round \(round)")
        }
    }

    @Test("random plain values round-trip in callable style")
    func randomCallable() throws {
        var gen = ValueGenerator(seed: 0x5EED_0003, jsonOnly: true)
        for round in 0..<1000 {
            let value = gen.value()
            #expect(try JSONParser.parse(JSONWriter.encode(value, options: .callable), options: .callable) == value, "round \(round)")
        }
    }

    @Test("mutated JSON never crashes the parser: it parses or fails with an offset inside the input")
    func mutationFuzz() {
        var gen = ValueGenerator(seed: 0x5EED_0004, jsonOnly: false)
        var rng = SplitMix64(seed: 99)
        var failures = 0
        for _ in 0..<2000 {
            var bytes = JSONWriter.encode(gen.value(), options: .tagged)
            for _ in 0..<Int.random(in: 1...3, using: &rng) {
                guard !bytes.isEmpty else { break }
                let at = Int.random(in: 0..<bytes.count, using: &rng)
                switch Int.random(in: 0...2, using: &rng) {
                case 0: bytes[at] = UInt8.random(in: 0...255, using: &rng)
                case 1: bytes.remove(at: at)
                default: bytes.removeSubrange(at...)
                }
            }
            if let error = parseError(bytes, options: JSONReadOptions(tagged: true, callableWrappers: true)) {
                failures += 1
                #expect(error.offset >= 0 && error.offset <= bytes.count)
            }
        }
        #expect(failures > 0)
    }
}

/// Whether Foundation's reading of our JSON agrees with the value we wrote.
func matchesFoundation(_ value: Value, _ any: Any) -> Bool {
    switch value {
    case .null:
        return any is NSNull
    case .bool(let b):
        guard let n = any as? NSNumber else { return false }
        return n.objCType.pointee == CChar(UInt8(ascii: "c")) && n.boolValue == b
    case .int(let i):
        guard let n = any as? NSNumber, n.objCType.pointee != CChar(UInt8(ascii: "c")) else { return false }
        return n.int64Value == i
    case .double(let d):
        guard let n = any as? NSNumber, n.objCType.pointee == CChar(UInt8(ascii: "d")) else { return false }
        // Foundation keeps long numbers as NSDecimalNumber, whose doubleValue is not correctly rounded:
        // compare its exact decimal digits instead.
        if let decimal = n as? NSDecimalNumber { return Double(decimal.stringValue) == d }
        return n.doubleValue == d && n.doubleValue.sign == d.sign
    case .string(let s):
        guard let t = any as? String else { return false }
        return t.utf8.elementsEqual(s.utf8)
    case .array(let items):
        guard let list = any as? [Any], list.count == items.count else { return false }
        return zip(items, list).allSatisfy { matchesFoundation($0, $1) }
    case .map(let members):
        guard let object = any as? [String: Any], object.count == members.count else { return false }
        return members.allSatisfy { key, member in object[key].map { matchesFoundation(member, $0) } ?? false }
    default:
        return false
    }
}

@Suite("Tagged JSON escapes")
struct TaggedEscapeTests {
    @Test("the $map escape applies only to a one-member object; with siblings its value's tag is read")
    func escapeOnlyWhenAlone() throws {
        let sibling = try JSONParser.parse(#"{"$map": {"$bytes": "AQID"}, "x": 1}"#, options: .tagged)
        #expect(sibling == ["$map": .bytes([1, 2, 3]), "x": 1])
        let alone = try JSONParser.parse(#"{"$map": {"$bytes": "AQID"}}"#, options: .tagged)
        #expect(alone == ["$bytes": "AQID"])
        let nested = try JSONParser.parse(#"{"$map": {"$bytes": [{"$bytes": "AQID"}]}}"#, options: .tagged)
        #expect(nested == ["$bytes": [.bytes([1, 2, 3])]])
        let array = try JSONParser.parse(#"{"a": {"$map": [{"$bytes": "AQID"}]}}"#, options: .tagged)
        #expect(array == ["a": ["$map": [.bytes([1, 2, 3])]]])
    }
}
