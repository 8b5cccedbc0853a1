import HearthModel
import Testing

func parseError(_ input: [UInt8], options: JSONReadOptions = .plain) -> JSONError? {
    do {
        _ = try JSONParser.parse(input, options: options)
        return nil
    } catch {
        return error
    }
}

func parseError(_ text: String, options: JSONReadOptions = .plain) -> JSONError? {
    parseError(Array(text.utf8), options: options)
}

struct JSONErrorCase: Sendable, CustomTestStringConvertible {
    var input: [UInt8]
    var offset: Int
    var message: String

    init(_ text: String, at offset: Int, _ message: String) {
        self.input = Array(text.utf8)
        self.offset = offset
        self.message = message
    }

    init(bytes: [UInt8], at offset: Int, _ message: String) {
        self.input = bytes
        self.offset = offset
        self.message = message
    }

    var testDescription: String {
        let text = String(decoding: input.prefix(40), as: UTF8.self)
        return "\(text.debugDescription) fails at \(offset): \(message)"
    }
}

struct NumberCase: Sendable, CustomTestStringConvertible {
    var text: String
    var expected: Value
    var testDescription: String { "\(text) → \(expected)" }
}

@Suite("JSON parser")
struct JSONParserTests {
    @Test("numbers: exact 64-bit integers, doubles for fractions, exponents and out-of-range integers", arguments: [
        NumberCase(text: "0", expected: .int(0)),
        NumberCase(text: "-0", expected: .int(0)),
        NumberCase(text: "42", expected: .int(42)),
        NumberCase(text: "-17", expected: .int(-17)),
        NumberCase(text: "9223372036854775807", expected: .int(.max)),
        NumberCase(text: "-9223372036854775808", expected: .int(.min)),
        NumberCase(text: "9007199254740993", expected: .int(9_007_199_254_740_993)),
        NumberCase(text: "9223372036854775808", expected: .double(9.223372036854775808e18)),
        NumberCase(text: "-9223372036854775809", expected: .double(-9.223372036854775809e18)),
        NumberCase(text: "18446744073709551615", expected: .double(1.8446744073709551615e19)),
        NumberCase(text: "18446744073709551616", expected: .double(1.8446744073709551616e19)),
        NumberCase(text: "123456789012345678901234567890", expected: .double(1.2345678901234568e29)),
        NumberCase(text: "1.0", expected: .double(1)),
        NumberCase(text: "1e2", expected: .double(100)),
        NumberCase(text: "1E+2", expected: .double(100)),
        NumberCase(text: "1e-2", expected: .double(0.01)),
        NumberCase(text: "-1.5e3", expected: .double(-1500)),
        NumberCase(text: "0.1", expected: .double(0.1)),
        NumberCase(text: "0.001", expected: .double(0.001)),
        NumberCase(text: "123.456", expected: .double(123.456)),
        NumberCase(text: "0.30000000000000004", expected: .double(0.30000000000000004)),
        NumberCase(text: "5e-324", expected: .double(Double.leastNonzeroMagnitude)),
        NumberCase(text: "2.2250738585072014e-308", expected: .double(2.2250738585072014e-308)),
        NumberCase(text: "1.7976931348623157e308", expected: .double(1.7976931348623157e308)),
        NumberCase(text: "1e300", expected: .double(1e300)),
        NumberCase(text: "1e22", expected: .double(1e22)),
        NumberCase(text: "1e23", expected: .double(1e23)),
        NumberCase(text: "9007199254740993.0", expected: .double(9_007_199_254_740_992)),
        NumberCase(text: "3.14159265358979323846264338327950288", expected: .double(3.141592653589793)),
        NumberCase(text: "12345678901234567890.5", expected: .double(12_345_678_901_234_567_890.5)),
        NumberCase(text: "0e0", expected: .double(0)),
    ])
    func numbers(_ c: NumberCase) throws {
        let parsed = try JSONParser.parse(c.text)
        #expect(parsed == c.expected)
        if case .double(let expected) = c.expected, case .double(let got) = parsed {
            #expect(got.bitPattern == expected.bitPattern, "\(got) vs \(expected)")
        }
    }

    @Test("a repeated key: the last wins; two keys equal only under Unicode normalization are refused, not merged")
    func repeatedKeys() throws {
        #expect(try JSONParser.parse(Array(#"{"a": 1, "a": 2}"#.utf8)) == ["a": 2])
        let error = parseError(Array(#"{"é": 1, "é": 2}"#.utf8))
        #expect(error?.description.contains("Unicode normalization") == true, "\(String(describing: error))")
        #expect(parseError(Array(#"{"x": {"é": 1, "é": 2}}"#.utf8))?.description.contains("Unicode normalization") == true, "nested too")
        #expect(parseError(Array(#"{"\u00e9": 1, "e\u0301": 2}"#.utf8))?.description.contains("Unicode normalization") == true, "as JSON escapes too")
        #expect(try JSONParser.parse(Array(#"{"é": 1, "f": 2}"#.utf8)).mapValue?.count == 2)
    }

    @Test("-0.0 keeps its sign")
    func negativeZero() throws {
        let parsed = try JSONParser.parse("-0.0")
        let d = try #require(parsed.doubleValue)
        #expect(d == 0 && d.sign == .minus)
        #expect(parsed.intValue == nil)
    }

    @Test("every escape decodes, surrogate pairs included")
    func escapes() throws {
        let text = #""\"\\\/\b\f\n\r\t\u0041\u00e9\u00E9\u20ac\ud83d\ude00\uD83D\uDE00\u0000""#
        let parsed = try JSONParser.parse(text)
        #expect(parsed == .string("\"\\/\u{8}\u{C}\n\r\tAéé€😀😀\u{0}"))
    }

    @Test("escapes mixed with raw UTF-8 keep both")
    func escapesAndRawUTF8() throws {
        #expect(try JSONParser.parse(#""é\n😀\u00e9x""#) == .string("é\n😀éx"))
        #expect(try JSONParser.parse(#"{"k\u00e9y":"v"}"#) == ["kéy": "v"])
    }

    @Test("raw non-ASCII strings decode as is")
    func rawUTF8() throws {
        #expect(try JSONParser.parse("\"é€😀中\"") == .string("é€😀中"))
        #expect(try JSONParser.parse("\"\u{7F}\"") == .string("\u{7F}"))
    }

    @Test("structures: nesting, whitespace, empty containers, duplicate keys keep the last")
    func structures() throws {
        let parsed = try JSONParser.parse(" \t\r\n{ \"a\" : [ 1 , 2.5 , \"x\" , null , true , false , { } , [ ] ] , \"b\" : { \"c\" : null } } \n")
        #expect(parsed == ["a": [1, 2.5, "x", nil, true, false, .map([:]), .array([])], "b": ["c": nil]])
        #expect(try JSONParser.parse(#"{"a":1,"a":2}"#) == ["a": 2])
        #expect(try JSONParser.parse("[]") == .array([]))
        #expect(try JSONParser.parse("{}") == .map([:]))
        #expect(try JSONParser.parse("\"\"") == .string(""))
        #expect(try JSONParser.parse("null") == .null)
    }

    @Test("nested objects and arrays keep their own members; a repeated key keeps its last value at every level")
    func nestedMembers() throws {
        let text = #"{"a":{"x":1,"x":2},"b":[{"k":1,"k":3},[{"q":[]}],{}],"a":{"y":[0,{"z":{"a":1}}]},"c":[[],[[]],{"":""}]}"#
        let expected: Value = [
            "a": ["y": [0, ["z": ["a": 1]]]],
            "b": [["k": 3], [["q": .array([])]], .map([:])],
            "c": [.array([]), [.array([])], ["": ""]],
        ]
        #expect(try JSONParser.parse(text) == expected)
        // A failed parse leaves nothing behind for the next one.
        #expect(parseError(#"{"a":[1,{"b":2,"c":"#) != nil)
        #expect(try JSONParser.parse(#"{"a":[1,{"b":2}]}"#) == ["a": [1, ["b": 2]]])
    }

    @Test("special bytes are found at every position of strings of every length and alignment")
    func specialBytesEverywhere() throws {
        for pad in 0..<8 {
            let padding = [UInt8](repeating: 0x20, count: pad)
            for length in 0..<34 {
                let plain = [UInt8](repeating: UInt8(ascii: "a"), count: length)
                let ok = try JSONParser.parse(padding + [0x22] + plain + [0x22] + padding)
                #expect(ok == .string(String(repeating: "a", count: length)), "pad \(pad) length \(length)")
                for position in 0..<length {
                    var content = plain
                    let at = pad + 1 + position
                    content[position] = 0x1F
                    let control = parseError(padding + [0x22] + content + [0x22])
                    #expect(control?.offset == at && control?.message == "unescaped control character in string", "pad \(pad) length \(length) at \(position)")
                    content[position] = 0xFF
                    let invalid = parseError(padding + [0x22] + content + [0x22])
                    #expect(invalid?.offset == at && invalid?.message == "invalid UTF-8", "pad \(pad) length \(length) at \(position)")
                    content[position] = 0x7F
                    #expect(try JSONParser.parse(padding + [0x22] + content + [0x22]).stringValue?.utf8.count == length)

                    var escaped = plain
                    escaped.replaceSubrange(position...position, with: [0x5C, UInt8(ascii: "n")])
                    var expected = String(repeating: "a", count: length).unicodeScalars.map(Character.init)
                    expected[position] = "\n"
                    #expect(try JSONParser.parse(padding + [0x22] + escaped + [0x22]) == .string(String(expected)), "escape at \(position)")

                    var accented = plain
                    accented.replaceSubrange(position...position, with: [0xC3, 0xA9])
                    expected[position] = "é"
                    #expect(try JSONParser.parse(padding + [0x22] + accented + [0x22]) == .string(String(expected)), "é at \(position)")

                    // The string ends early: a quote inside the run closes it, and the rest is trailing content.
                    var early = plain
                    early[position] = 0x22
                    let trailing = parseError(padding + [0x22] + early + [0x22])
                    #expect(trailing?.offset == at + 1 && trailing?.message == "unexpected trailing content", "quote at \(position)")
                }
            }
        }
    }

    @Test("byte arrays, strings and raw buffers parse the same")
    func entryPoints() throws {
        let text = #"{"a":[1,"é"]}"#
        let fromString = try JSONParser.parse(text)
        let fromBytes = try JSONParser.parse(Array(text.utf8))
        let fromRaw = try Array(text.utf8).withUnsafeBytes { (raw) throws(JSONError) -> Value in try JSONParser.parse(raw) }
        #expect(fromString == fromBytes)
        #expect(fromString == fromRaw)
    }

    @Test("malformed input fails with the byte offset of the problem", arguments: [
        JSONErrorCase("", at: 0, "empty input"),
        JSONErrorCase("   ", at: 3, "expected a value, found end of input"),
        JSONErrorCase("1 x", at: 2, "unexpected trailing content"),
        JSONErrorCase("{} {}", at: 3, "unexpected trailing content"),
        JSONErrorCase("truex", at: 4, "unexpected trailing content"),
        JSONErrorCase("01", at: 0, "leading zero in number"),
        JSONErrorCase("[-01]", at: 1, "leading zero in number"),
        JSONErrorCase("1.", at: 0, "expected digits after '.'"),
        JSONErrorCase("[1.]", at: 1, "expected digits after '.'"),
        JSONErrorCase("1.e5", at: 0, "expected digits after '.'"),
        JSONErrorCase(".5", at: 0, "unexpected character '.'"),
        JSONErrorCase("-", at: 0, "invalid number"),
        JSONErrorCase("[-]", at: 1, "invalid number"),
        JSONErrorCase("-a", at: 0, "invalid number"),
        JSONErrorCase("+1", at: 0, "unexpected character '+'"),
        JSONErrorCase("1e", at: 0, "expected digits in exponent"),
        JSONErrorCase("[2E+]", at: 1, "expected digits in exponent"),
        JSONErrorCase("NaN", at: 0, "unexpected character 'N'"),
        JSONErrorCase("Infinity", at: 0, "unexpected character 'I'"),
        JSONErrorCase("-Infinity", at: 0, "invalid number"),
        JSONErrorCase("[1, NaN]", at: 4, "unexpected character 'N'"),
        JSONErrorCase("tru", at: 0, "invalid literal"),
        JSONErrorCase("[nul]", at: 1, "invalid literal"),
        JSONErrorCase("[fals]", at: 1, "invalid literal"),
        JSONErrorCase("\"abc", at: 0, "unterminated string"),
        JSONErrorCase("[\"a\\n", at: 1, "unterminated string"),
        JSONErrorCase("\"\\", at: 1, "unterminated escape"),
        JSONErrorCase("\"a\u{01}b\"", at: 2, "unescaped control character in string"),
        JSONErrorCase("\"\\n\u{1F}\"", at: 3, "unescaped control character in string"),
        JSONErrorCase("\"a\nb\"", at: 2, "unescaped control character in string"),
        JSONErrorCase("\"a\\x\"", at: 2, "invalid escape \\'x'"),
        JSONErrorCase("\"\\u12zz\"", at: 1, "invalid hex digit in \\u escape"),
        JSONErrorCase("\"\\u12", at: 1, "truncated \\u escape"),
        JSONErrorCase("\"\\ud800\"", at: 1, "unpaired high surrogate in \\u escape"),
        JSONErrorCase("\"ab\\ud83d\"", at: 3, "unpaired high surrogate in \\u escape"),
        JSONErrorCase("\"\\ud83dx\"", at: 1, "unpaired high surrogate in \\u escape"),
        JSONErrorCase("\"\\udc00\"", at: 1, "unpaired low surrogate in \\u escape"),
        JSONErrorCase("\"\\ude00\\ud83d\"", at: 1, "unpaired low surrogate in \\u escape"),
        JSONErrorCase("\"\\ud800\\u0041\"", at: 1, "invalid low surrogate in \\u escape"),
        JSONErrorCase("\"\\ud800\\ud800\"", at: 1, "invalid low surrogate in \\u escape"),
        JSONErrorCase("\"\\ud800\\uzzzz\"", at: 7, "invalid hex digit in \\u escape"),
        JSONErrorCase("[1,]", at: 3, "unexpected character ']'"),
        JSONErrorCase("[1 2]", at: 3, "expected ',' or ']' in array"),
        JSONErrorCase("[1", at: 2, "unterminated array"),
        JSONErrorCase("[", at: 1, "expected a value, found end of input"),
        JSONErrorCase("{\"a\" 1}", at: 5, "expected ':' after object key"),
        JSONErrorCase("{\"a\":1,}", at: 7, "expected a string key in object"),
        JSONErrorCase("{1:2}", at: 1, "expected a string key in object"),
        JSONErrorCase("{'a':1}", at: 1, "expected a string key in object"),
        JSONErrorCase("{\"a\":1 \"b\":2}", at: 7, "expected ',' or '}' in object"),
        JSONErrorCase("{\"a\":1", at: 6, "unterminated object"),
        JSONErrorCase("{", at: 1, "unterminated object"),
        JSONErrorCase("{\"a\":}", at: 5, "unexpected character '}'"),
        JSONErrorCase(bytes: [0xFF], at: 0, "unexpected character 0xff"),
        JSONErrorCase(bytes: [0x5B, 0x00, 0x5D], at: 1, "unexpected character 0x0"),
    ])
    func malformed(_ c: JSONErrorCase) throws {
        let error = try #require(parseError(c.input))
        #expect(error.offset == c.offset)
        #expect(error.message == c.message)
        #expect(error.description == "invalid JSON at byte \(c.offset): \(c.message)")
    }

    @Test("invalid UTF-8 in strings is refused at the first byte of the bad sequence", arguments: [
        JSONErrorCase(bytes: [0x22, 0xC0, 0x80, 0x22], at: 1, "invalid UTF-8"),  // overlong NUL
        JSONErrorCase(bytes: [0x22, 0xC1, 0xBF, 0x22], at: 1, "invalid UTF-8"),  // overlong 2-byte
        JSONErrorCase(bytes: [0x22, 0xE0, 0x80, 0x80, 0x22], at: 1, "invalid UTF-8 (overlong)"),
        JSONErrorCase(bytes: [0x22, 0xE0, 0x9F, 0xBF, 0x22], at: 1, "invalid UTF-8 (overlong)"),
        JSONErrorCase(bytes: [0x22, 0xF0, 0x80, 0x80, 0x80, 0x22], at: 1, "invalid UTF-8 (overlong)"),
        JSONErrorCase(bytes: [0x22, 0xF0, 0x8F, 0xBF, 0xBF, 0x22], at: 1, "invalid UTF-8 (overlong)"),
        JSONErrorCase(bytes: [0x22, 0x61, 0xED, 0xA0, 0x80, 0x22], at: 2, "invalid UTF-8 (surrogate)"),  // U+D800
        JSONErrorCase(bytes: [0x22, 0xED, 0xBF, 0xBF, 0x22], at: 1, "invalid UTF-8 (surrogate)"),  // U+DFFF
        JSONErrorCase(bytes: [0x22, 0xF4, 0x90, 0x80, 0x80, 0x22], at: 1, "invalid UTF-8 (above U+10FFFF)"),
        JSONErrorCase(bytes: [0x22, 0xF5, 0x80, 0x80, 0x80, 0x22], at: 1, "invalid UTF-8"),
        JSONErrorCase(bytes: [0x22, 0xFF, 0x22], at: 1, "invalid UTF-8"),
        JSONErrorCase(bytes: [0x22, 0x80, 0x22], at: 1, "invalid UTF-8"),  // lone continuation byte
        JSONErrorCase(bytes: [0x22, 0xE2, 0x82, 0x22], at: 1, "invalid UTF-8"),  // truncated by the quote
        JSONErrorCase(bytes: [0x22, 0x61, 0xE2, 0x82], at: 2, "invalid UTF-8"),  // truncated by the end
        JSONErrorCase(bytes: [0x22, 0xF0, 0x9F, 0x98], at: 1, "invalid UTF-8"),
        JSONErrorCase(bytes: [0x22, 0xC3, 0x41, 0x22], at: 1, "invalid UTF-8"),  // continuation missing
        JSONErrorCase(bytes: [0x22, 0x5C, 0x6E, 0xC0, 0xAF, 0x22], at: 3, "invalid UTF-8"),  // after an escape
        JSONErrorCase(bytes: [0x7B, 0x22, 0xED, 0xA0, 0x80, 0x22, 0x3A, 0x31, 0x7D], at: 2, "invalid UTF-8 (surrogate)"),  // in a key
    ])
    func invalidUTF8(_ c: JSONErrorCase) throws {
        let error = try #require(parseError(c.input))
        #expect(error.offset == c.offset)
        #expect(error.message == c.message)
    }

    @Test("valid UTF-8 at the edges of each range is accepted")
    func utf8Edges() throws {
        let samples: [[UInt8]] = [
            [0xC2, 0x80], [0xDF, 0xBF], [0xE0, 0xA0, 0x80], [0xED, 0x9F, 0xBF], [0xEE, 0x80, 0x80],
            [0xEF, 0xBF, 0xBF], [0xF0, 0x90, 0x80, 0x80], [0xF4, 0x8F, 0xBF, 0xBF],
        ]
        for sample in samples {
            let parsed = try JSONParser.parse([0x22] + sample + [0x22])
            #expect(parsed.stringValue.map { Array($0.utf8) } == sample)
        }
    }

    @Test("nesting up to the default limit of 512 parses; one more fails at the opening bracket")
    func defaultDepth() throws {
        let ok = String(repeating: "[", count: 512) + String(repeating: "]", count: 512)
        var value = try JSONParser.parse(ok)
        var depth = 0
        while case .array(let items) = value {
            depth += 1
            value = items.first ?? .null
        }
        #expect(depth == 512)

        let deep = String(repeating: "[", count: 513) + String(repeating: "]", count: 513)
        let error = try #require(parseError(deep))
        #expect(error.offset == 512)
        #expect(error.message == "nesting deeper than 512")

        let objects = String(repeating: #"{"a":"#, count: 513) + "1" + String(repeating: "}", count: 513)
        let objectError = try #require(parseError(objects))
        #expect(objectError.offset == 512 * 5)
        #expect(objectError.message == "nesting deeper than 512")
    }

    @Test("a custom depth limit counts arrays and objects together")
    func customDepth() throws {
        let options = JSONReadOptions(maxDepth: 3)
        #expect(try JSONParser.parse("[[[1]]]", options: options) == [[[1]]])
        #expect(try JSONParser.parse(#"[{"a":[]}]"#, options: options) == [["a": .array([])]])
        let error = try #require(parseError("[[[[1]]]]", options: options))
        #expect(error.offset == 3)
        #expect(error.message == "nesting deeper than 3")
        let mixed = try #require(parseError(#"[{"a":[{}]}]"#, options: options))
        #expect(mixed.offset == 7)
        // Siblings do not add up: depth is how deep, not how many.
        #expect(try JSONParser.parse("[[[]],[[]],[[]]]", options: options) == [[.array([])], [.array([])], [.array([])]])
        #expect(parseError("1", options: JSONReadOptions(maxDepth: 0)) == nil)
        #expect(parseError("[]", options: JSONReadOptions(maxDepth: 0))?.offset == 0)
    }

    @Test("callable wrappers read as exact integers when enabled")
    func callableWrappersRead() throws {
        let int64 = #"{"@type":"type.googleapis.com/google.protobuf.Int64Value","value":"9223372036854775807"}"#
        #expect(try JSONParser.parse(int64, options: .callable) == .int(.max))
        #expect(try JSONParser.parse(int64) == ["@type": "type.googleapis.com/google.protobuf.Int64Value", "value": "9223372036854775807"])
        let negative = #"{"value":"-9223372036854775808","@type":"type.googleapis.com/google.protobuf.Int64Value"}"#
        #expect(try JSONParser.parse(negative, options: .callable) == .int(.min))
        let uint = #"[{"@type":"type.googleapis.com/google.protobuf.UInt64Value","value":"42"},{"@type":"type.googleapis.com/google.protobuf.UInt64Value","value":"18446744073709551615"}]"#
        #expect(try JSONParser.parse(uint, options: .callable) == [.int(42), .double(1.8446744073709551615e19)])
        let other = #"{"@type":"type.googleapis.com/google.protobuf.StringValue","value":"x"}"#
        #expect(try JSONParser.parse(other, options: .callable) == ["@type": "type.googleapis.com/google.protobuf.StringValue", "value": "x"])
        let numericValue = #"{"@type":"type.googleapis.com/google.protobuf.Int64Value","value":5}"#
        #expect(try JSONParser.parse(numericValue, options: .callable).mapValue?.count == 2)
    }

    @Test("a callable wrapper with a bad number fails at the wrapper's opening brace")
    func callableWrapperErrors() throws {
        let bad = #"[1, {"@type":"type.googleapis.com/google.protobuf.Int64Value","value":"12x"}]"#
        let error = try #require(parseError(bad, options: .callable))
        #expect(error.offset == 4)
        #expect(error.message == "Int64Value wrapper with invalid value \"12x\"")
        let tooBig = #"{"@type":"type.googleapis.com/google.protobuf.Int64Value","value":"9223372036854775808"}"#
        #expect(parseError(tooBig, options: .callable)?.offset == 0)
        let negativeUnsigned = #"{"@type":"type.googleapis.com/google.protobuf.UInt64Value","value":"-1"}"#
        #expect(parseError(negativeUnsigned, options: .callable)?.message == "UInt64Value wrapper with invalid value \"-1\"")
    }

    @Test("tagged objects read as timestamps, bytes, references, geopoints and special doubles")
    func taggedRead() throws {
        let text = #"""
        [{"$timestamp":"2024-05-01T09:00:00.5+02:00"},{"$bytes":"AQID"},{"$reference":"members/alice"},
         {"$geopoint":{"latitude":1.5,"longitude":-2}},{"$double":"NaN"},{"$double":"Infinity"},{"$double":"-Infinity"},
         {"$other":1},{"$timestamp":"x","also":1}]
        """#
        let parsed = try JSONParser.parse(text, options: .tagged)
        let expected: Value = [
            .timestamp(Timestamp(rfc3339: "2024-05-01T07:00:00.5Z")!), .bytes([1, 2, 3]), .reference("members/alice"),
            .geoPoint(GeoPoint(latitude: 1.5, longitude: -2)), .double(.nan), .double(.infinity), .double(-.infinity),
            ["$other": 1], ["$timestamp": "x", "also": 1],
        ]
        #expect(parsed == expected)
        // Without the option, tags are ordinary maps.
        #expect(try JSONParser.parse(#"{"$bytes":"AQID"}"#) == ["$bytes": "AQID"])
    }

    @Test("malformed tags fail at the tag's opening brace", arguments: [
        JSONErrorCase(#"{"$timestamp":5}"#, at: 0, "$timestamp needs an RFC 3339 string"),
        JSONErrorCase(#"[1,{"$timestamp":"2024-02-30T00:00:00Z"}]"#, at: 3, "$timestamp needs an RFC 3339 string"),
        JSONErrorCase(#"{"$bytes":"***"}"#, at: 0, "$bytes needs a base64 string"),
        JSONErrorCase(#"{"$reference":1}"#, at: 0, "$reference needs a string path"),
        JSONErrorCase(#"{"a": {"$geopoint":{"latitude":1}}}"#, at: 6, "$geopoint needs numeric latitude and longitude"),
        JSONErrorCase(#"{"$double":"nan"}"#, at: 0, "$double needs \"NaN\", \"Infinity\" or \"-Infinity\""),
    ])
    func taggedErrors(_ c: JSONErrorCase) throws {
        let error = try #require(parseError(c.input, options: .tagged))
        #expect(error.offset == c.offset)
        #expect(error.message == c.message)
    }

    // MARK: a one-member envelope read without its map

    /// What `onlyMember` must answer: the whole document parsed, then its one member looked up.
    static func envelopeByParsing(_ bytes: [UInt8], options: JSONReadOptions) -> Value? {
        guard case .map(let m)? = try? JSONParser.parse(bytes, options: options), m.count == 1 else { return nil }
        return m["data"]
    }

    static func envelopeDirect(_ bytes: [UInt8], options: JSONReadOptions) -> Value? {
        (try? JSONParser.onlyMember("data", of: bytes, options: options)) ?? nil
    }

    @Test("a callable envelope read directly answers as parsing it whole and looking up its member", arguments: [
        #"{"data":{"title":"buy milk","n":7}}"#, #" { "data" : [1, 2.5, null, true] } "#, #"{"data":1,"data":2}"#,
        #"{"d\u0061ta":"escaped key"}"#, #"{"data":1,"x":2}"#, #"{"x":1,"data":2}"#, #"{}"#, #"[]"#, #""data""#, "",
        "   ", #"{"data":1} x"#, #"{"data":1"#, #"{"data"}"#, #"{"data":}"#, #"{"data":1,}"#, #"{data:1}"#,
        #"{"data":{"@type":"type.googleapis.com/google.protobuf.Int64Value","value":"12345678901234567"}}"#,
        #"{"@type":"type.googleapis.com/google.protobuf.Int64Value","value":"5"}"#,
        #"{"data":{"@type":"type.googleapis.com/google.protobuf.Int64Value","value":"x"}}"#,
        #"{"data":"\ud800"}"#, #"{"dat\u0061":1,"data":2}"#, #"{"data":1}{"#, "{\"data\":\"\u{0}\"}",
    ])
    func envelopeDirect(_ text: String) {
        let bytes = Array(text.utf8)
        #expect(Self.envelopeDirect(bytes, options: .callable) == Self.envelopeByParsing(bytes, options: .callable))
        #expect(Self.envelopeDirect(bytes, options: .plain) == Self.envelopeByParsing(bytes, options: .plain))
    }

    @Test("the direct envelope agrees with the whole parse on 10,000 envelopes with up to two bytes changed")
    func envelopeDirectMutated() {
        let seeds = [#"{"data":{"a":[1,{"b":null}],"c":"d"}}"#, #"{ "data" : 12 , "data" : -0.5e3 }"#, #"{"data":"x","y":1}"#]
        let alphabet = Array(#"{}[]:,"\ datxy01.-e"#.utf8) + [0x80, 0xFF, 0x00]
        var rng = SplitMix64(seed: 0xE4_7E10)
        var agreed = 0, found = 0
        for _ in 0..<10_000 {
            var bytes = Array(seeds[Int(rng.next() % UInt64(seeds.count))].utf8)
            for _ in 0..<Int(rng.next() % 3) {
                let at = Int(rng.next() % UInt64(bytes.count + 1))
                let b = alphabet[Int(rng.next() % UInt64(alphabet.count))]
                switch rng.next() % 3 {
                case 0: bytes.insert(b, at: at)
                case 1: if at < bytes.count { bytes.remove(at: at) }
                default: if at < bytes.count { bytes[at] = b }
                }
            }
            let direct = Self.envelopeDirect(bytes, options: .callable)
            if direct == Self.envelopeByParsing(bytes, options: .callable) { agreed += 1 } else {
                Issue.record("disagree on \(String(decoding: bytes, as: UTF8.self))")
            }
            if direct != nil { found += 1 }
        }
        #expect(agreed == 10_000)
        // Many envelopes stay valid and many do not: both answers are exercised.
        #expect(found > 1_000 && found < 9_000, "\(found) envelopes found")
    }

    @Test("with tagged reading, and with a key in two Unicode forms, the direct read still answers as the whole parse")
    func envelopeDirectTaggedAndNormalization() throws {
        func byParsing(_ text: String, _ key: String, _ options: JSONReadOptions) -> Result<Value?, JSONError> {
            Result { () throws(JSONError) -> Value? in
                guard case .map(let m) = try JSONParser.parse(text, options: options), m.count == 1 else { return nil }
                return m[key]
            }
        }
        func direct(_ text: String, _ key: String, _ options: JSONReadOptions) -> Result<Value?, JSONError> {
            Result { () throws(JSONError) -> Value? in try JSONParser.onlyMember(key, of: Array(text.utf8), options: options) }
        }
        // The `$map` escape and a tag are one-member objects only to a whole parse.
        for text in [#"{"$map":{"data":1}}"#, #"{"$timestamp":"2020-01-01T00:00:00Z"}"#, #"{"data":{"$bytes":"AQI="}}"#, #"{"$map":{"data":1},"x":2}"#] {
            #expect(direct(text, "data", .tagged) == byParsing(text, "data", .tagged), "\(text)")
            #expect(direct(text, "$timestamp", .tagged) == byParsing(text, "$timestamp", .tagged), "\(text)")
        }
        #expect(try direct(#"{"$map":{"data":1}}"#, "data", .tagged).get() == 1)
        // "é" precomposed and decomposed: one form alone is found by the other; both in one object
        // are refused, with the same message and offset.
        let composed = "\u{E9}", decomposed = "e\u{301}"
        for text in ["{\"\(composed)\":1}", "{\"\(decomposed)\":1}", "{\"\(composed)\":1,\"\(decomposed)\":2}",
                     "{\"\(decomposed)\":1,\"\(composed)\":2} ", "{\"\(composed)\":1,\"\(composed)\":2}"] {
            for key in [composed, decomposed] {
                #expect(direct(text, key, .plain) == byParsing(text, key, .plain), "\(Array(text.utf8)) by \(Array(key.utf8))")
            }
        }
        #expect(throws: JSONError.self) { try JSONParser.onlyMember(composed, of: Array("{\"\(composed)\":1,\"\(decomposed)\":2}".utf8)) }
    }

    @Test("a too deep value in the envelope is refused as parsing refuses it")
    func envelopeDirectDepth() {
        let depth = ValueLimits.maxDepth
        let deepest = #"{"data":"# + String(repeating: "[", count: depth) + String(repeating: "]", count: depth) + "}"
        let deeper = #"{"data":"# + String(repeating: "[", count: depth + 1) + String(repeating: "]", count: depth + 1) + "}"
        #expect(Self.envelopeDirect(Array(deepest.utf8), options: .callable) != nil)
        #expect(Self.envelopeDirect(Array(deeper.utf8), options: .callable) == nil)
        #expect(throws: JSONError.self) { try JSONParser.onlyMember("data", of: Array(deeper.utf8), options: .callable) }
    }
}
