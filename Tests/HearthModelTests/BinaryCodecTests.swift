import HearthModel
import Testing

func decodeError(_ bytes: [UInt8], maxDepth: Int = 512) -> BinaryCodecError? {
    do {
        _ = try BinaryValueCodec.decode(bytes, maxDepth: maxDepth)
        return nil
    } catch {
        return error
    }
}

struct GoldenCase: Sendable, CustomTestStringConvertible {
    var value: Value
    var bytes: [UInt8]
    var testDescription: String { "\(value)" }
}

struct BinaryErrorCase: Sendable, CustomTestStringConvertible {
    var label: String
    var bytes: [UInt8]
    var offset: Int
    var message: String
    var testDescription: String { label }
}

@Suite("Binary value codec")
struct BinaryCodecTests {
    @Test("every type round-trips", arguments: [
        Value.null, .bool(false), .bool(true), .int(0), .int(1), .int(-1), .int(.max), .int(.min), .int(63), .int(-64), .int(64),
        .double(0), .double(-0.0), .double(0.1), .double(.infinity), .double(-.infinity), .double(.nan), .double(Double.leastNonzeroMagnitude),
        .double(.greatestFiniteMagnitude), .timestamp(.zero), .timestamp(Timestamp(seconds: -62_135_596_800, nanos: 999_999_999)),
        .timestamp(Timestamp(seconds: .max, nanos: 0)), .timestamp(Timestamp(seconds: .min, nanos: 0)),
        .string(""), .string("hello"), .string("é😀\u{0}"), .bytes([]), .bytes([0, 255]), .reference("members/alice"),
        .geoPoint(GeoPoint(latitude: -90, longitude: 180)), .array([]), .map([:]),
        .array([.null, .int(1), .array([.map(["k": .bytes([1])])])]),
        .map(["": .null, "a": .map(["b": .map(["c": .array([.string("deep")])])]), "é": .double(1.5)]),
    ])
    func roundTrip(_ value: Value) throws {
        for canonical in [false, true] {
            let decoded = try BinaryValueCodec.decode(BinaryValueCodec.encode(value, canonical: canonical))
            #expect(decoded == value)
        }
    }

    @Test("-0.0 and NaN payloads keep their exact bits")
    func doubleBits() throws {
        let payload = Double(nan: 0x2A, signaling: false)
        for d in [-0.0, payload, -Double.nan] {
            let decoded = try BinaryValueCodec.decode(BinaryValueCodec.encode(.double(d)))
            guard case .double(let got) = decoded else {
                Issue.record("decoded \(decoded)")
                continue
            }
            #expect(got.bitPattern == d.bitPattern)
        }
    }

    @Test("the encoding is tag, zig-zag varints, little-endian doubles and length-prefixed bytes", arguments: [
        GoldenCase(value: .null, bytes: [0]),
        GoldenCase(value: .bool(false), bytes: [1]),
        GoldenCase(value: .bool(true), bytes: [2]),
        GoldenCase(value: .int(0), bytes: [3, 0]),
        GoldenCase(value: .int(-1), bytes: [3, 1]),
        GoldenCase(value: .int(1), bytes: [3, 2]),
        GoldenCase(value: .int(-64), bytes: [3, 0x7F]),
        GoldenCase(value: .int(64), bytes: [3, 0x80, 0x01]),
        GoldenCase(value: .int(.max), bytes: [3, 0xFE, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01]),
        GoldenCase(value: .int(.min), bytes: [3, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01]),
        GoldenCase(value: .double(1.0), bytes: [4, 0, 0, 0, 0, 0, 0, 0xF0, 0x3F]),
        GoldenCase(value: .timestamp(Timestamp(seconds: -1, nanos: 5)), bytes: [5, 1, 5]),
        GoldenCase(value: .string("hi"), bytes: [6, 2, 0x68, 0x69]),
        GoldenCase(value: .bytes([7, 8]), bytes: [7, 2, 7, 8]),
        GoldenCase(value: .reference("a/b"), bytes: [8, 3, 0x61, 0x2F, 0x62]),
        GoldenCase(value: .geoPoint(GeoPoint(latitude: 1, longitude: -2)), bytes: [9, 0, 0, 0, 0, 0, 0, 0xF0, 0x3F, 0, 0, 0, 0, 0, 0, 0, 0xC0]),
        GoldenCase(value: .array([.null, .bool(true)]), bytes: [10, 2, 0, 2]),
        GoldenCase(value: .map(["k": .int(1)]), bytes: [11, 1, 1, 0x6B, 3, 2]),
    ])
    func golden(_ c: GoldenCase) throws {
        #expect(BinaryValueCodec.encode(c.value) == c.bytes)
        #expect(try BinaryValueCodec.decode(c.bytes) == c.value)
    }

    @Test("big values round-trip: long strings, large bytes, wide arrays and maps")
    func bigValues() throws {
        let longString = String(repeating: "é😀abc", count: 20_000)
        let bigBytes = (0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        let wide = Value.array((0..<10_000).map { .int(Int64($0) * 1_000_003) })
        var members: [String: Value] = [:]
        for i in 0..<5_000 { members["key\(i)"] = .string(String(i)) }
        let value: Value = ["s": .string(longString), "b": .bytes(bigBytes), "a": wide, "m": .map(members)]
        #expect(try BinaryValueCodec.decode(BinaryValueCodec.encode(value)) == value)
        #expect(try BinaryValueCodec.decode(BinaryValueCodec.encode(value, canonical: true)) == value)
    }

    @Test("random values of every type round-trip")
    func randomRoundTrip() throws {
        var gen = ValueGenerator(seed: 0xB1_0001, jsonOnly: false)
        for round in 0..<3000 {
            let value = gen.value()
            #expect(try BinaryValueCodec.decode(BinaryValueCodec.encode(value)) == value, "round \(round): \(value)")
            #expect(try BinaryValueCodec.decode(BinaryValueCodec.encode(value, canonical: true)) == value, "round \(round)")
        }
    }

    @Test("canonical mode gives the same bytes for equal maps built in different orders")
    func canonicalBytes() {
        let keys = (0..<64).map { "k\($0)" } + ["", "é", "Z", "😀", "a.b"]
        var forward: [String: Value] = [:]
        for (i, k) in keys.enumerated() { forward[k] = .map(["x": .int(Int64(i)), "y": .array([.string(k)]), "z": .null]) }
        var backward: [String: Value] = [:]
        backward.reserveCapacity(1_000)
        for (i, k) in keys.enumerated().reversed() { backward[k] = .map(["z": .null, "y": .array([.string(k)]), "x": .int(Int64(i))]) }
        #expect(Value.map(forward) == Value.map(backward))
        let a = BinaryValueCodec.encode(.map(forward), canonical: true)
        let b = BinaryValueCodec.encode(.map(backward), canonical: true)
        #expect(a == b)
        // Keys in UTF-8 byte order: "" first, then "Z" before "a.b" before "k0".
        let small = BinaryValueCodec.encode(["k0": 0, "a.b": 0, "Z": 0, "": 0], canonical: true)
        #expect(small == [11, 4, 0, 3, 0, 1, 0x5A, 3, 0, 3, 0x61, 0x2E, 0x62, 3, 0, 2, 0x6B, 0x30, 3, 0])
    }

    @Test("encode(into:) appends after existing bytes")
    func encodeInto() throws {
        var out: [UInt8] = [0xAA]
        BinaryValueCodec.encode(.int(1), into: &out)
        #expect(out == [0xAA, 3, 2])
        #expect(try BinaryValueCodec.decode(Array(out.dropFirst())) == .int(1))
        let raw = try out.dropFirst().withUnsafeBytes { (p) throws(BinaryCodecError) -> Value in try BinaryValueCodec.decode(p) }
        #expect(raw == .int(1))
    }

    @Test("malformed input fails with the offset of the problem", arguments: [
        BinaryErrorCase(label: "empty", bytes: [], offset: 0, message: "truncated"),
        BinaryErrorCase(label: "unknown tag", bytes: [99], offset: 0, message: "unknown tag 99"),
        BinaryErrorCase(label: "unknown tag inside an array", bytes: [10, 2, 0, 12], offset: 3, message: "unknown tag 12"),
        BinaryErrorCase(label: "int without varint", bytes: [3], offset: 1, message: "truncated"),
        BinaryErrorCase(label: "unfinished varint", bytes: [3, 0x80, 0x80], offset: 3, message: "truncated"),
        BinaryErrorCase(label: "varint past 64 bits", bytes: [3, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x02], offset: 10, message: "varint overflows 64 bits"),
        BinaryErrorCase(label: "varint with 11 bytes", bytes: [3, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00], offset: 10, message: "varint overflows 64 bits"),
        BinaryErrorCase(label: "short double", bytes: [4, 0, 0, 0, 0, 0, 0, 0], offset: 1, message: "truncated"),
        BinaryErrorCase(label: "short geopoint", bytes: [9, 0, 0, 0, 0, 0, 0, 0, 0, 1, 2], offset: 9, message: "truncated"),
        BinaryErrorCase(label: "timestamp nanos too big", bytes: [5, 0, 0x80, 0x94, 0xEB, 0xDC, 0x03], offset: 2, message: "timestamp nanos out of range"),
        BinaryErrorCase(label: "timestamp without nanos", bytes: [5, 0], offset: 2, message: "truncated"),
        BinaryErrorCase(label: "string longer than the input", bytes: [6, 5, 0x61], offset: 2, message: "length 5 exceeds the remaining 1 bytes"),
        BinaryErrorCase(label: "huge bytes length", bytes: [7, 0xFF, 0xFF, 0xFF, 0xFF, 0x0F], offset: 6, message: "length 4294967295 exceeds the remaining 0 bytes"),
        BinaryErrorCase(label: "array count larger than the input", bytes: [10, 3, 0, 0], offset: 2, message: "length 3 exceeds the remaining 2 bytes"),
        BinaryErrorCase(label: "array missing items", bytes: [10, 2, 6, 0], offset: 4, message: "truncated"),
        BinaryErrorCase(label: "map missing a value", bytes: [11, 1, 1, 0x6B], offset: 4, message: "truncated"),
        BinaryErrorCase(label: "invalid UTF-8 in a string", bytes: [6, 2, 0xC0, 0x80], offset: 2, message: "invalid UTF-8 in string"),
        BinaryErrorCase(label: "surrogate in a reference", bytes: [8, 3, 0xED, 0xA0, 0x80], offset: 2, message: "invalid UTF-8 in string"),
        BinaryErrorCase(label: "truncated UTF-8 in a map key", bytes: [11, 1, 1, 0xE2, 0], offset: 3, message: "invalid UTF-8 in string"),
        // Past the first eight bytes, which the ASCII check reads as one word: a bad byte in the
        // word and in the tail after the last whole word still fails.
        BinaryErrorCase(label: "invalid UTF-8 inside a long ASCII string", bytes: [6, 12] + Array("abcde".utf8) + [0xFF] + Array("fghijk".utf8), offset: 2, message: "invalid UTF-8 in string"),
        BinaryErrorCase(label: "invalid UTF-8 at the end of a long string", bytes: [6, 11] + Array("abcdefghij".utf8) + [0x80], offset: 2, message: "invalid UTF-8 in string"),
        BinaryErrorCase(label: "trailing bytes", bytes: [0, 0], offset: 1, message: "trailing bytes after value"),
        BinaryErrorCase(label: "trailing bytes after an array", bytes: [10, 1, 2, 2], offset: 3, message: "trailing bytes after value"),
    ])
    func malformed(_ c: BinaryErrorCase) throws {
        let error = try #require(decodeError(c.bytes))
        #expect(error.offset == c.offset)
        #expect(error.message == c.message)
        #expect(error.description == "invalid encoded value at byte \(c.offset): \(c.message)")
    }

    @Test("strings of every length round-trip, ASCII and not, whichever byte of a word holds the non-ASCII character")
    func stringsAcrossWords() throws {
        for length in 0...40 {
            let ascii = String(repeating: "x", count: length)
            #expect(try BinaryValueCodec.decode(BinaryValueCodec.encode(.string(ascii))) == .string(ascii))
            for position in 0...length {
                var s = ascii
                s.insert(contentsOf: "é✓", at: s.index(s.startIndex, offsetBy: position))
                #expect(try BinaryValueCodec.decode(BinaryValueCodec.encode(.string(s))) == .string(s))
            }
        }
    }

    @Test("every truncation of a valid encoding fails cleanly")
    func truncations() throws {
        var gen = ValueGenerator(seed: 0xB1_0002, jsonOnly: false)
        for _ in 0..<200 {
            let bytes = BinaryValueCodec.encode(gen.value())
            for n in 0..<bytes.count {
                let error = try #require(decodeError(Array(bytes.prefix(n))))
                #expect(error.offset <= n)
            }
        }
    }

    @Test("random garbage and mutated encodings never crash the decoder")
    func garbage() {
        var rng = SplitMix64(seed: 0xB1_0003)
        var gen = ValueGenerator(seed: 0xB1_0004, jsonOnly: false)
        var decodedSome = 0
        for _ in 0..<3000 {
            let noise = (0..<Int.random(in: 0...40, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
            if let error = decodeError(noise) { #expect(error.offset <= noise.count) } else { decodedSome += 1 }
            var mutated = BinaryValueCodec.encode(gen.value())
            let at = Int.random(in: 0..<mutated.count, using: &rng)
            mutated[at] = UInt8.random(in: 0...255, using: &rng)
            if let error = decodeError(mutated) { #expect(error.offset <= mutated.count) } else { decodedSome += 1 }
        }
        #expect(decodedSome > 0)
    }

    @Test("nesting up to maxDepth decodes; one more fails at the opening tag")
    func depthLimit() throws {
        func nestedArrays(_ n: Int) -> [UInt8] { Array(repeating: [10, 1], count: n).flatMap { $0 } + [0] }
        #expect(decodeError(nestedArrays(512)) == nil)
        let error = try #require(decodeError(nestedArrays(513)))
        #expect(error.message == "nesting deeper than 512")
        #expect(error.offset == 1024)

        #expect(decodeError(nestedArrays(3), maxDepth: 3) == nil)
        let custom = try #require(decodeError(nestedArrays(4), maxDepth: 3))
        #expect(custom.offset == 6)
        #expect(custom.message == "nesting deeper than 3")
        // Maps count too: [ {"k": [ null ]} ] is three deep.
        let mixed: [UInt8] = [10, 1, 11, 1, 1, 0x6B, 10, 1, 0]
        #expect(decodeError(mixed, maxDepth: 3) == nil)
        #expect(decodeError(mixed, maxDepth: 2)?.offset == 6)
    }

    @Test("a deep value written by the encoder reads back at the same depth")
    func deepRoundTrip() throws {
        var value: Value = "bottom"
        for i in 0..<300 { value = i % 2 == 0 ? .array([value]) : .map(["k": value]) }
        #expect(try BinaryValueCodec.decode(BinaryValueCodec.encode(value)) == value)
    }

    @Test("duplicate keys in hand-made input keep the last value")
    func duplicateKeys() throws {
        let bytes: [UInt8] = [11, 2, 1, 0x6B, 3, 2, 1, 0x6B, 3, 4]
        #expect(try BinaryValueCodec.decode(bytes) == ["k": 2])
    }
}
