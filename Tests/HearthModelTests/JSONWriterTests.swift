import HearthModel
import Testing

@Suite("JSON writer")
struct JSONWriterTests {
    struct DoubleCase: Sendable, CustomTestStringConvertible {
        var value: Double
        var text: String
        var testDescription: String { "\(value) → \(text)" }
    }

    @Test("doubles are written in the shortest form that reads back, integral ones with .0", arguments: [
        DoubleCase(value: 0.1, text: "0.1"),
        DoubleCase(value: 1.0, text: "1.0"),
        DoubleCase(value: -0.0, text: "-0.0"),
        DoubleCase(value: 0.0, text: "0.0"),
        DoubleCase(value: 100, text: "100.0"),
        DoubleCase(value: -2.5, text: "-2.5"),
        DoubleCase(value: 123_456_789_012_345, text: "123456789012345.0"),
        DoubleCase(value: 1e15, text: "1000000000000000.0"),
        DoubleCase(value: 9_007_199_254_740_992, text: "9007199254740992.0"),
        DoubleCase(value: 18_014_398_509_481_984, text: "1.8014398509481984e+16"),
        DoubleCase(value: 1e16, text: "1e+16"),
        DoubleCase(value: 1e300, text: "1e+300"),
        DoubleCase(value: Double.leastNonzeroMagnitude, text: "5e-324"),
        DoubleCase(value: 1e-7, text: "1e-07"),
        DoubleCase(value: 0.30000000000000004, text: "0.30000000000000004"),
    ])
    func doubles(_ c: DoubleCase) throws {
        #expect(JSONWriter.string(.double(c.value)) == c.text)
        let back = try JSONParser.parse(c.text)
        guard case .double(let d) = back else {
            Issue.record("\(c.text) read back as \(back)")
            return
        }
        #expect(d.bitPattern == c.value.bitPattern)
    }

    @Test("doubles survive a round trip bit for bit in plain and tagged styles", arguments: [
        0.1, 1e300, Double.leastNonzeroMagnitude, -0.0, 0.0, 1.0, 1e16, 1e15, 999_999_999_999_999, -1e-7, 2.5e-308, 1e22, 1e23,
        Double.greatestFiniteMagnitude, -Double.greatestFiniteMagnitude, Double.leastNormalMagnitude,
        Double.leastNonzeroMagnitude, 9_007_199_254_740_992, 4_611_686_018_427_387_904, 1.0 / 3, Double.pi,
    ])
    func doubleRoundTrip(_ d: Double) throws {
        for style in [JSONWriteOptions.plain, .tagged] {
            let back = try JSONParser.parse(JSONWriter.encode(.double(d), options: style), options: .tagged)
            guard case .double(let got) = back else {
                Issue.record("\(d) read back as \(back)")
                continue
            }
            #expect(got.bitPattern == d.bitPattern, "\(d) → \(got)")
        }
    }

    @Test("integers are exact at the 64-bit limits")
    func integers() throws {
        for i: Int64 in [0, -1, 1, .max, .min, 9_007_199_254_740_993, -9_007_199_254_740_993] {
            let text = JSONWriter.string(.int(i))
            #expect(text == String(i))
            #expect(try JSONParser.parse(text) == .int(i))
        }
    }

    @Test("non-finite doubles are null in plain style and tags in tagged style")
    func nonFinite() {
        #expect(JSONWriter.string([.double(.nan), .double(.infinity), .double(-.infinity)]) == "[null,null,null]")
        #expect(JSONWriter.string([.double(.nan), .double(.infinity), .double(-.infinity)], options: .tagged)
            == #"[{"$double":"NaN"},{"$double":"Infinity"},{"$double":"-Infinity"}]"#)
    }

    @Test("strings escape quotes, backslashes and control characters; other characters pass through")
    func stringEscaping() throws {
        let s = "a\"b\\c\n\r\t\u{8}\u{C}\u{1}\u{1F}\u{0}\u{7F}é😀/\u{2028}"
        let text = JSONWriter.string(.string(s))
        #expect(text == "\"a\\\"b\\\\c\\n\\r\\t\\b\\f\\u0001\\u001f\\u0000\u{7F}é😀/\u{2028}\"")
        #expect(try JSONParser.parse(text) == .string(s))
        for c in UInt8(0)..<0x20 {
            let written = JSONWriter.encode(.string(String(UnicodeScalar(c))))
            #expect(!written.dropFirst().dropLast().contains { $0 < 0x20 }, "control character \(c) was written raw")
        }
    }

    /// The escaping rules one character at a time, to check the writer's eight-bytes-at-a-time scan.
    static func referenceEscaped(_ s: String) -> String {
        var out = "\""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case "\u{08}": out += "\\b"
            case "\u{0C}": out += "\\f"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }

    @Test("every character that needs escaping is found at every position of strings up to 40 bytes, and random strings match the rules")
    func escapingEverywhere() throws {
        let specials: [Character] = ["\"", "\\", "\n", "\u{01}", "\u{1F}", "\u{7F}", " ", "é", "🚀", "\u{0}"]
        for length in 0...40 {
            for special in specials {
                for position in 0..<max(length, 1) {
                    var chars = Array(repeating: Character("a"), count: length)
                    if length > 0 { chars[position] = special }
                    let s = String(chars)
                    #expect(JSONWriter.string(.string(s)) == Self.referenceEscaped(s), "length \(length), \(special.unicodeScalars.first!.value) at \(position)")
                }
            }
        }
        var rng = SplitMix64(seed: 11)
        let pool: [Unicode.Scalar] = (0..<0x80).compactMap(Unicode.Scalar.init) + ["é", "東", "🚀", "\u{2028}", "\u{FFFF}"]
        for _ in 0..<2000 {
            var s = String.UnicodeScalarView()
            for _ in 0..<Int(rng.next() % 70) { s.append(pool[Int(rng.next() % UInt64(pool.count))]) }
            let text = String(s)
            let written = JSONWriter.string(.string(text))
            #expect(written == Self.referenceEscaped(text))
            #expect(try JSONParser.parse(written) == .string(text))
        }
    }

    @Test("keys are sorted by UTF-8 bytes, so equal maps give equal bytes")
    func sortedKeys() {
        let keys = ["b", "a", "é", "Z", "aa", "😀", "\u{FFFD}", ""]
        var forward: [String: Value] = [:]
        for (i, k) in keys.enumerated() { forward[k] = .int(Int64(i)) }
        var backward: [String: Value] = [:]
        for (i, k) in keys.enumerated().reversed() { backward[k] = .int(Int64(i)) }
        let sorted = JSONWriteOptions(sortKeys: true)
        let a = JSONWriter.encode(.map(forward), options: sorted)
        let b = JSONWriter.encode(.map(backward), options: sorted)
        #expect(a == b)
        #expect(String(decoding: a, as: UTF8.self) == #"{"":7,"Z":3,"a":1,"aa":4,"b":0,"é":2,"\#u{FFFD}":6,"😀":5}"#)
    }

    @Test("pretty output indents by two spaces, one member per line")
    func pretty() {
        let value: Value = ["b": [1, 2], "a": 1, "c": .map([:]), "d": .array([]), "e": [["x": nil]]]
        let text = JSONWriter.string(value, options: JSONWriteOptions(sortKeys: true, pretty: true))
        #expect(text == """
        {
          "a": 1,
          "b": [
            1,
            2
          ],
          "c": {},
          "d": [],
          "e": [
            {
              "x": null
            }
          ]
        }
        """)
    }

    @Test("plain style writes non-JSON types as strings and objects")
    func plainStyle() {
        let value: Value = [
            .timestamp(Timestamp(seconds: 0, nanos: 500_000_000)), .bytes([1, 2, 3]), .reference("a/b"),
            .geoPoint(GeoPoint(latitude: 1.5, longitude: -2)), nil, true, false,
        ]
        #expect(JSONWriter.string(value, options: JSONWriteOptions(sortKeys: true)) == #"["1970-01-01T00:00:00.500Z","AQID","a/b",{"latitude":1.5,"longitude":-2.0},null,true,false]"#)
    }

    @Test("tagged style writes each non-JSON type as a one-key object")
    func taggedStyle() {
        let value: Value = [
            .timestamp(Timestamp(seconds: 0, nanos: 500_000_000)), .bytes([1, 2, 3]), .reference("a/b"),
            .geoPoint(GeoPoint(latitude: 1.5, longitude: -2)),
        ]
        #expect(JSONWriter.string(value, options: .tagged)
            == #"[{"$timestamp":"1970-01-01T00:00:00.500Z"},{"$bytes":"AQID"},{"$reference":"a/b"},{"$geopoint":{"latitude":1.5,"longitude":-2.0}}]"#)
        #expect(Value.bytes([255]).description == #"{"$bytes":"/w=="}"#)
    }

    @Test("callable style wraps only integers beyond ±(2^53 − 1)")
    func callableWrap() throws {
        let wrap = { (v: Int64) in #"{"@type":"type.googleapis.com/google.protobuf.Int64Value","value":"\#(v)"}"# }
        let cases: [(Int64, String)] = [
            (0, "0"), (9_007_199_254_740_991, "9007199254740991"), (-9_007_199_254_740_991, "-9007199254740991"),
            (9_007_199_254_740_992, wrap(9_007_199_254_740_992)), (-9_007_199_254_740_992, wrap(-9_007_199_254_740_992)),
            (.max, wrap(.max)), (.min, wrap(.min)),
        ]
        for (v, text) in cases {
            #expect(JSONWriter.string(.int(v), options: .callable) == text)
            #expect(try JSONParser.parse(text, options: .callable) == .int(v))
        }
        // Doubles are never wrapped.
        #expect(JSONWriter.string(.double(1e300), options: .callable) == "1e+300")
    }

    @Test("callable style round-trips nested large integers")
    func callableRoundTrip() throws {
        let value: Value = ["big": .int(.max), "list": [.int(.min), .int(1), .int(9_007_199_254_740_993)], "d": 1.5, "s": "x"]
        let bytes = JSONWriter.encode(value, options: .callable)
        #expect(try JSONParser.parse(bytes, options: .callable) == value)
    }

    @Test("the writer appends to its buffer value after value")
    func writerInstance() {
        var writer = JSONWriter()
        writer.write(.int(1))
        writer.writeString("x")
        #expect(String(decoding: writer.bytes, as: UTF8.self) == "1\"x\"")
    }

    @Test("a one-member object written from its key and value is what writing the map gives, in every style", arguments: [
        JSONWriteOptions.plain, .callable, .tagged, .pretty,
    ])
    func member(options: JSONWriteOptions) {
        let values: [Value] = [.null, 7, "a \"quoted\" line\n", ["nested": ["list": [1, 2.5, true]]], .timestamp(Timestamp(seconds: 1, nanos: 5)),
                               .bytes([0, 255]), [:], []]
        for key in ["result", "error", "$tag", ""] {
            for value in values {
                #expect(JSONWriter.encode(member: key, value, options: options) == JSONWriter.encode(.map([key: value]), options: options),
                        "\(key): \(value)")
            }
        }
    }
}
