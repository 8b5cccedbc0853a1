import HearthModel
@testable import HearthRules
import Synchronization
import Testing

/// The parts of the rules library reference beyond expressions' basics: bytes literals
/// (https://firebase.google.com/docs/reference/rules/rules.Bytes, whose examples are rows here),
/// the `hashing` namespace (https://firebase.google.com/docs/reference/rules/rules.hashing; digests
/// checked against the algorithms' published test vectors), `Timestamp.time()` and `debug()`.
@Suite("Rules library: bytes, hashing, time(), debug()")
struct RulesLibraryTests {
    typealias Row = ExpressionTests.Row

    static let rows: [Row] = [
        // The reference's bytes literal examples: all 42, and all the euro sign's UTF-8.
        Row(#"b'*' == b'\x2A' && b'\x2A' == b'\052'"#, true),
        Row(#"b'€' == b'\342\202\254' && b'€' == b'\xE2\x82\xAC'"#, true),
        Row(#"b"€" == b'€'"#, true), Row(#"b'\x2A' == b'\x2B'"#, false), Row(#"b'' == b''"#, true),
        Row(#"b'a' is bytes"#, true), Row(#"resource.data.blob == b'\x01\x02\x03'"#, true),
        // Its method examples.
        Row(#"b'\xFF\xFF'.size() == 2 && b'a'.size() == 1 && b'€'.size() == 3"#, true),
        Row(#"b'\xFB\xEF\xBE'.toBase64() == '----'"#, true),
        Row(#"b'\x2A'.toHexString() == '2A' && b'**'.toHexString() == '2A2A' && b'€'.toHexString() == 'E282AC'"#, true),
        Row(#"b'\x01'.toBase64() == 'AQ=='"#, true),
        Row(#"'€'.toUtf8() == b'€'"#, true),
        // Digests of the standard test inputs (CRC check value of "123456789"; MD5 of "";
        // SHA-256 of "abc" from FIPS 180-2), over a string's UTF-8 and over bytes alike. A CRC's
        // bytes come least significant first, as Firebase's rules runtime gives them (the check
        // values 0xCBF43926 and 0xE3069283).
        Row("hashing.crc32('123456789').toHexString() == '2639F4CB'", true),
        Row("hashing.crc32c('123456789').toHexString() == '839206E3'", true),
        Row("hashing.md5('').toHexString() == 'D41D8CD98F00B204E9800998ECF8427E'", true),
        Row("hashing.sha256('abc').toHexString() == 'BA7816BF8F01CFEA414140DE5DAE2223B00361A396177A9CB410FF61F20015AD'", true),
        Row("hashing.sha256(b'abc') == hashing.sha256('abc') && hashing.md5('abc') is bytes", true),
        Row("hashing.crc32('abc').size() == 4 && hashing.md5('abc').size() == 16 && hashing.sha256('abc').size() == 32", true),
        Row("hashing.sha256(resource.data.owner) == hashing.sha256('alice')", true),
        Row("hashing.crc32(1) is bytes", false),  // an error: denies
        // time(): the time of day as a duration. 90061001 ms is a day, 1 h, 1 min, 1.001 s.
        Row("timestamp.value(90061001).time() == duration.time(1, 1, 1, 1000000)", true),
        Row("request.time.time() < duration.value(1, 'd')", true),
        // debug() is its argument.
        Row("debug(1) + 1 == 2 && debug('x') == 'x'", true),
        Row("debug(false)", false),
    ]

    @Test("each row decides as the reference says", arguments: rows)
    func row(_ row: Row) throws {
        let decision = try ExpressionTests.decide(row.expression)
        #expect(decision.isAllowed == row.allowed, "\(decision)")
    }

    @Test("malformed bytes literals are load errors naming what is wrong")
    func badLiterals() {
        let cases: [(String, String)] = [
            (#"b'\x2' == b''"#, "2 hexadecimal digits"),
            (#"b'\x2G' == b''"#, "2 hexadecimal digits"),
            (#"b'\08' == b''"#, "3 octal digits"),
            (#"b'\400' == b''"#, "unknown escape"),
            ("b'abc", "unterminated bytes literal"),
        ]
        for (expression, message) in cases {
            let error = loadError(rulesFile("    match /a/{b} {\n      allow read: if \(expression);\n    }"))
            #expect(error?.message.contains(message) == true, "\(expression): \(String(describing: error))")
        }
    }

    @Test("debug() hands what it was given to the ruleset's debug log")
    func debugLog() throws {
        let lines = LockedLines()
        var rules = try load(rulesFile("""
                match /things/{id} {
                  allow get: if debug(resource.data.count) == 3;
                }
            """))
        rules.debugLog = { lines.append($0) }
        let decision = rules.authorize(.get(try path("things/t1"), existing: ExpressionTests.stored, auth: alice, time: testTime))
        #expect(decision.isAllowed)
        #expect(lines.all.count == 1 && lines.all[0].hasPrefix("debug(3) at test.rules:5:"), "\(lines.all)")
    }

    @Test("debug() is transparent in a list query too: the reference's own example allows the query it should")
    func debugInListQueries() throws {
        let rules = try load(rulesFile("""
                match /things/{id} {
                  allow list: if debug(debug(request.auth.uid) == debug(resource.data.ownerUID));
                }
            """))
        var spec = QuerySpec(collection: try collection("things"))
        spec.filters = [QuerySpec.Filter(try field("ownerUID"), .equal, .string("alice"))]
        #expect(rules.authorize(.list(spec, auth: alice, time: testTime)).isAllowed)
        var other = spec
        other.filters = [QuerySpec.Filter(try field("ownerUID"), .equal, .string("bob"))]
        #expect(!rules.authorize(.list(other, auth: alice, time: testTime)).isAllowed)
    }
}

/// Lines gathered from a @Sendable closure.
final class LockedLines: Sendable {
    private let lines = Mutex<[String]>([])
    func append(_ line: String) { lines.withLock { $0.append(line) } }
    var all: [String] { lines.withLock { $0 } }
}
