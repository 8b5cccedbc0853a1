import Foundation
import HearthModel
import HearthRuntime
import HearthTesting
@testable import HearthTOML
import Testing

@Suite("TOML parser")
struct TOMLTests {
    @Test("reads every scalar kind with its exact value")
    func scalars() throws {
        let table = try TOML.parse(#"""
            str = "tab\there \"q\" \u00E9 \U0001F600"
            lit = 'C:\path\'
            ints = [0, -17, +5, 0xDEAD_beef, 0o755, 0b1010, 9_223_372_036_854_775_807, -9223372036854775808]
            floats = [3.14, -0.0, 5e+22, 1_000.5, 1E-2]
            special = [inf, -inf, +inf]
            nan = -nan
            bools = [true, false]
            odt = 1979-05-27T00:32:00.999999999-07:00
            zulu = 1979-05-27t07:32:00z
            ldt = 1979-05-27 07:32:00
            ld = 1979-05-27
            lt = 07:32:00.5
            """#)
        let date = TOMLLocalDate(year: 1979, month: 5, day: 27)
        let expected = TOMLTable([
            "str": "tab\there \"q\" é 😀",
            "lit": #"C:\path\"#,
            "ints": [0, -17, 5, 0xDEAD_BEEF, 0o755, 0b1010, .integer(.max), .integer(.min)],
            "floats": [3.14, -0.0, 5e22, 1000.5, 0.01],
            "special": [.float(.infinity), .float(-.infinity), .float(.infinity)],
            "nan": .float(.nan),
            "bools": [true, false],
            "odt": .offsetDateTime(TOMLOffsetDateTime(
                dateTime: TOMLLocalDateTime(date: date, time: TOMLLocalTime(hour: 0, minute: 32, second: 0, nanosecond: 999_999_999)),
                offsetMinutes: -420)),
            "zulu": .offsetDateTime(TOMLOffsetDateTime(
                dateTime: TOMLLocalDateTime(date: date, time: TOMLLocalTime(hour: 7, minute: 32, second: 0)), offsetMinutes: 0)),
            "ldt": .localDateTime(TOMLLocalDateTime(date: date, time: TOMLLocalTime(hour: 7, minute: 32, second: 0))),
            "ld": .localDate(date),
            "lt": .localTime(TOMLLocalTime(hour: 7, minute: 32, second: 0, nanosecond: 500_000_000)),
        ])
        #expect(table == expected)
        #expect(table["floats"]?.arrayValue?[1].floatValue?.sign == .minus)
    }

    @Test("reads the four string forms, trimming and joining lines as the specification says")
    func strings() throws {
        let table = try TOML.parse(
            "a = \"\"\"\nRoses\\\n    are red\"\"\"\n"
                + "b = \"\"\"\"quoted\"\"\"\"\"\n"
                + "c = '''\r\nraw \\n\r\nlines'''\n"
                + "d = '''it's'''''\n"
                + "e = \"\"\"one \\   \n\n   two\"\"\"\n"
                + "f = \"\"\"\"\"\"\n")
        #expect(table["a"] == "Rosesare red")
        #expect(table["b"] == "\"quoted\"\"")
        #expect(table["c"] == "raw \\n\nlines")
        #expect(table["d"] == "it's''")
        #expect(table["e"] == "one two")
        #expect(table["f"] == "")
    }

    @Test("keeps keys in the order the document first defines them")
    func keyOrder() throws {
        let table = try TOML.parse("z = 1\na = 2\n[m.inner]\nx = 1\n[b]\n[m]\ny = 2\n")
        #expect(table.keys == ["z", "a", "m", "b"])
        #expect(table["m"]?.tableValue?.keys == ["inner", "y"])
        #expect(table.entries.map(\.key) == table.keys)
        #expect(table.entries.first?.value == 1)
    }

    @Test("edits tables in place, keeping order through the switch from scanning to a hash index")
    func tableEditing() throws {
        var table = TOMLTable(["b": 1, "a": 2])
        for n in 0..<40 { table["k\(n)"] = .integer(Int64(n)) }
        table["a"] = "replaced"
        table["b"] = nil
        table["missing"] = nil
        #expect(table.count == 41)
        #expect(table.keys.prefix(3) == ["a", "k0", "k1"])
        #expect(table["a"] == "replaced")
        #expect(table["b"] == nil)
        #expect(table["k39"] == 39)

        let document = (0..<40).map { "k\($0) = \($0)" }.joined(separator: "\n") + "\nk7.x = 1"
        #expect(throws: TOMLError(line: 41, column: 1, message: "cannot use k7 as a table: it holds an integer value")) {
            try TOML.parse(document)
        }
        #expect(try TOML.parse(String(document.dropLast(9)))["k38"] == 38)
    }

    @Test("builds nested tables from headers, arrays of tables, dotted keys and inline tables")
    func tableStructure() throws {
        let table = try TOML.parse("""
            top.level = true
            [server]
            tls.enabled = false
            [[units]]
            name = "Members"
            [units.limits]
            memory = 256
            [[units]]
            name = "Items"
            env = { LOG = "debug", nested.deep = 1 }
            [server.cors]
            origins = ["a", "b",]
            """)
        let expected = TOMLTable([
            "top": .table(TOMLTable(["level": true])),
            "server": .table(TOMLTable([
                "tls": .table(TOMLTable(["enabled": false])),
                "cors": .table(TOMLTable(["origins": ["a", "b"]])),
            ])),
            "units": [
                .table(TOMLTable(["name": "Members", "limits": .table(TOMLTable(["memory": 256]))])),
                .table(TOMLTable([
                    "name": "Items",
                    "env": .table(TOMLTable(["LOG": "debug", "nested": .table(TOMLTable(["deep": 1]))])),
                ])),
            ],
        ])
        #expect(table == expected)
    }

    @Test("converts to JSON: inf and nan as strings, dates as RFC 3339 truncated to microseconds")
    func jsonConversion() throws {
        let table = try TOML.parse("""
            n = 42
            f = 1.5
            whole = 2.0
            inf = [inf, -inf, nan, -nan]
            odt = [1979-05-27T07:32:00.1234567Z, 1979-05-27T07:32:00+00:00, 1979-05-27T07:32:00-00:00, 1979-05-27T07:32:00.5+05:30]
            ldt = 1979-05-27t07:32:00.000000999
            ld = 0001-01-01
            lt = [07:32:00.100, 07:32:00.0000001, 23:59:59.999999999]
            t = { ok = true }
            """)
        let expected: Value = [
            "n": 42, "f": 1.5, "whole": .double(2), "inf": ["inf", "-inf", "nan", "nan"],
            "odt": ["1979-05-27T07:32:00.123456Z", "1979-05-27T07:32:00Z", "1979-05-27T07:32:00Z",
                    "1979-05-27T07:32:00.5+05:30"],
            "ldt": "1979-05-27T07:32:00", "ld": "0001-01-01",
            "lt": ["07:32:00.1", "07:32:00", "23:59:59.999999"],
            "t": ["ok": true],
        ]
        #expect(table.jsonValue == expected)
        #expect(table["lt"]?.arrayValue?[2] == .localTime(TOMLLocalTime(hour: 23, minute: 59, second: 59, nanosecond: 999_999_999)))
        #expect(table["lt"]?.arrayValue?[2].jsonValue == "23:59:59.999999")
    }

    @Test("prints date-times in RFC 3339 form with nanoseconds")
    func dateTimeDescriptions() throws {
        let table = try TOML.parse("a = 1979-05-27 07:32:00.123456789-08:30\nb = 2000-02-29\nc = 00:00:01.000000001")
        guard case .offsetDateTime(let a)? = table["a"] else { Issue.record("a is not an offset date-time"); return }
        #expect(a.description == "1979-05-27T07:32:00.123456789-08:30")
        #expect(a.offsetMinutes == -510)
        guard case .localTime(let c)? = table["c"] else { Issue.record("c is not a local time"); return }
        #expect(c.description == "00:00:01.000000001")
        #expect(TOMLLocalDate(year: 2000, month: 2, day: 29).description == "2000-02-29")
    }

    struct ErrorCase: Sendable, CustomTestStringConvertible {
        var text: String
        var line: Int
        var column: Int
        var message: String
        var testDescription: String { message }
    }

    static let errorCases: [ErrorCase] = [
        ErrorCase(text: "a = 1\na = 2\n", line: 2, column: 1, message: "duplicate key a: it already holds an integer value"),
        ErrorCase(text: "[a]\nx = 1\n[a]\n", line: 3, column: 1, message: "table [a] is defined more than once"),
        ErrorCase(text: "a = 1\nb = \"open\nc = 2\n", line: 2, column: 10,
                  message: "unterminated string: a basic string must end on the line where it starts"),
        ErrorCase(text: "x = \"日本\" y\n", line: 1, column: 10, message: "expected the end of the line, found 'y'"),
        ErrorCase(text: "\r\n\r\nkey = 0x\r\n", line: 3, column: 9,
                  message: "expected a hexadecimal digit after '0x', found end of line"),
        ErrorCase(text: "d = 2023-02-29\n", line: 1, column: 13, message: "day 29 is out of range: 2023 is not a leap year"),
        ErrorCase(text: "a = [1,\n  2\n", line: 3, column: 1, message: "unterminated array: expected ',' or ']', found end of input"),
        ErrorCase(text: "a = { b = 1 }\na.c = 2\n", line: 2, column: 1, message: "cannot extend a: it is an inline table, complete as written"),
        ErrorCase(text: "s = \"\\uD800\"\n", line: 1, column: 6, message: "invalid Unicode escape: U+D800 is not a Unicode scalar value"),
        ErrorCase(text: "[fruit]\napple.color = 1\n[fruit.apple]\n", line: 3, column: 1,
                  message: "table [fruit.apple] was already defined by dotted keys"),
        ErrorCase(text: "a = [1]\n[[a]]\n", line: 2, column: 1,
                  message: "cannot append to a with [[ ]]: it is a static array, written as a value"),
        ErrorCase(text: "t = { a = 1, }\n", line: 1, column: 14, message: "an inline table cannot have a trailing comma"),
        ErrorCase(text: "# fine\n# bad \u{7}\n", line: 2, column: 7, message: "control character U+0007 is not allowed in a comment"),
        ErrorCase(text: "\u{FEFF}a = 1\n", line: 1, column: 1,
                  message: "expected a key, a [table] header or a comment, found '\u{FEFF}' (U+FEFF)"),
    ]

    @Test("reports the line and column of the problem", arguments: errorCases)
    func errorPositions(_ testCase: ErrorCase) {
        #expect(throws: TOMLError(line: testCase.line, column: testCase.column, message: testCase.message)) {
            try TOML.parse(testCase.text)
        }
    }

    @Test("describes errors as 'line L, column C: message'")
    func errorDescription() {
        let error = TOMLError(line: 3, column: 7, message: "bad")
        #expect(error.description == "line 3, column 7: bad")
    }

    /// The specification requires an error for an integer that cannot be represented losslessly;
    /// `tomllib` returns Python's unbounded ints instead, so these cases live here, not in the corpus.
    @Test("refuses integers outside the 64-bit range, which tomllib accepts", arguments: [
        "9223372036854775808", "-9223372036854775809", "99999999999999999999",
        "0x8000000000000000", "0xFFFFFFFFFFFFFFFF", "0o1000000000000000000000", "0b1" + String(repeating: "0", count: 63),
    ])
    func integerOverflow(_ literal: String) {
        #expect(throws: TOMLError.self) { try TOML.parse("n = \(literal)") }
    }

    @Test("refuses nesting deeper than 128 levels, so recursion cannot exhaust the stack")
    func nestingLimit() throws {
        let deepest = String(repeating: "[", count: 128) + String(repeating: "]", count: 128)
        _ = try TOML.parse("a = \(deepest)")
        #expect(throws: TOMLError.self) { try TOML.parse("a = [\(deepest)]") }
        #expect(throws: TOMLError.self) { try TOML.parse("a = " + String(repeating: "{b=", count: 129) + String(repeating: "}", count: 129)) }
        let longKey = Array(repeating: "k", count: 129).joined(separator: ".")
        #expect(throws: TOMLError.self) { try TOML.parse("[\(longKey)]") }
        #expect(throws: TOMLError.self) { try TOML.parse("\(longKey) = [1]") }
        _ = try TOML.parse("\(longKey) = 1")
    }

    @Test("treats canonically equivalent keys as distinct, as TOML compares keys by code point")
    func keysCompareByScalars() throws {
        let table = try TOML.parse("\"\u{E9}\" = 1\n\"e\u{301}\" = 2\n")
        #expect(table.count == 2)
        #expect(table["\u{E9}"] == 1)
        #expect(table["e\u{301}"] == 2)
        #expect(TOMLValue.string("\u{E9}") != .string("e\u{301}"))
    }

    @Test("compares NaN equal to NaN, for tests")
    func nanEquality() {
        #expect(TOMLValue.float(.nan) == .float(-.nan))
        #expect(TOMLValue.float(0) == .float(-0.0))
        #expect(TOMLValue.integer(1) != .float(1))
    }

    @Test("parses a 10 KB configuration")
    func largeDocument() throws {
        var text = "[server]\nhost = \"0.0.0.0\"\nport = 8080\n"
        for n in 0..<100 {
            text += "\n[[units]]\nname = \"Unit\(n)\"\npath = 'functions/Unit\(n)/libUnit\(n).so'\n"
            text += "memory_mb = \(128 * (n % 4 + 1))\nenv = { LEVEL = \"debug\", N = \(n) }\n"
        }
        #expect(text.utf8.count > 10_000)
        let table = try TOML.parse(text)
        #expect(table["units"]?.arrayValue?.count == 100)
        #expect(table["units"]?.arrayValue?.last?["env"]?["N"] == 99)
    }
}

/// Runs every document under `Fixtures/toml/valid` and `Fixtures/toml/invalid` through both this parser
/// and Python's `tomllib` (via `reference.py`), and requires the same verdict and the same JSON value.
@Suite("TOML corpus agrees with Python's tomllib")
struct TOMLCorpusTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Fixtures/toml")

    @Test("accepts the valid documents and rejects the invalid ones exactly as tomllib does",
          arguments: ["valid", "invalid"])
    func agreesWithTomllib(kind: String) async throws {
        let folder = Self.fixtures.appendingPathComponent(kind)
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.path)
            .filter { $0.hasSuffix(".toml") }.sorted()
        #expect(names.count >= 120)
        let reference = try await Self.runReference(on: folder)
        let expectValid = kind == "valid"
        var problems: [String] = []
        for name in names {
            let bytes = try [UInt8](Data(contentsOf: folder.appendingPathComponent(name)))
            let ours = Self.parse(bytes)
            guard let theirs = reference[name] else {
                problems.append("\(name): missing from the reference output")
                continue
            }
            if let ok = theirs["ok"] {
                if !expectValid { problems.append("\(name): tomllib accepts a document in invalid/") }
                switch ours {
                case .success(let value) where value != ok:
                    problems.append("\(name): values differ\n    tomllib: \(JSONWriter.string(ok))\n    parser:  \(JSONWriter.string(value))")
                case .failure(let reason):
                    problems.append("\(name): tomllib accepts, the parser rejects: \(reason)")
                case .success:
                    break
                }
            } else {
                let message = theirs["error"]?.stringValue ?? "?"
                if expectValid { problems.append("\(name): tomllib rejects a document in valid/: \(message)") }
                switch ours {
                case .success:
                    problems.append("\(name): tomllib rejects (\(message)), the parser accepts")
                case .failure(.toml(let error)):
                    let lines = bytes.count { $0 == 0x0A } + 1
                    if !(1...lines + 1).contains(error.line) || error.column < 1 {
                        problems.append("\(name): implausible error position \(error)")
                    }
                case .failure(.notUTF8):
                    break
                }
            }
        }
        for problem in problems { Issue.record(Comment(rawValue: problem)) }
        #expect(problems.isEmpty, "\(problems.count) of \(names.count) documents in \(kind)/ disagree with tomllib")
    }

    enum Rejection: Error, CustomStringConvertible {
        case notUTF8
        case toml(TOMLError)

        var description: String {
            switch self {
            case .notUTF8: return "not valid UTF-8"
            case .toml(let error): return error.description
            }
        }
    }

    /// The file as `reference.py` reads it: strict UTF-8, then TOML.
    static func parse(_ bytes: [UInt8]) -> Result<Value, Rejection> {
        guard let text = String(validating: bytes, as: UTF8.self) else { return .failure(.notUTF8) }
        do throws(TOMLError) {
            return .success(try TOML.parse(text).jsonValue)
        } catch {
            return .failure(.toml(error))
        }
    }

    struct ReferenceFailure: Error, CustomStringConvertible {
        var description: String
    }

    /// `python3 reference.py folder`, parsed: file name → `{"ok": value}` or `{"error": message}`.
    /// Output goes to temporary files (not pipes, which would block a large write); the process is
    /// terminated if it has not finished within `timeout`.
    static func runReference(on folder: URL, seconds: Double = 60) async throws -> [String: Value] {
        let python = try Subprocess("python3", [fixtures.appendingPathComponent("reference.py").path, folder.path])
        let ended = try await python.wait(seconds: seconds)
        guard ended == .exited(0) else {
            throw ReferenceFailure(description: "reference.py \(ended): \(python.stderrText)")
        }
        let output = try JSONParser.parse(python.stdoutBytes)
        guard let results = output.mapValue else { throw ReferenceFailure(description: "reference.py printed no JSON object") }
        return results
    }
}
