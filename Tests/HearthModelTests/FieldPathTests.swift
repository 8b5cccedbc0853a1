import Foundation
import HearthModel
import Testing

struct FieldPathCase: Sendable, CustomTestStringConvertible {
    var text: String
    var segments: [String]
    var testDescription: String { "\(text) → \(segments)" }
}

@Suite("Field paths")
struct FieldPathTests {
    @Test("dotted paths parse into segments; backticks quote a segment and backslash escapes inside them", arguments: [
        FieldPathCase(text: "title", segments: ["title"]),
        FieldPathCase(text: "address.city", segments: ["address", "city"]),
        FieldPathCase(text: "a.b.c.d", segments: ["a", "b", "c", "d"]),
        FieldPathCase(text: "`a.b`.c", segments: ["a.b", "c"]),
        FieldPathCase(text: "c.`a.b`", segments: ["c", "a.b"]),
        FieldPathCase(text: "`x`.y.`z`", segments: ["x", "y", "z"]),
        FieldPathCase(text: #"`a\`b`"#, segments: ["a`b"]),
        FieldPathCase(text: #"`a\\b`"#, segments: [#"a\b"#]),
        FieldPathCase(text: #"`\a\.`"#, segments: ["a."]),
        FieldPathCase(text: "`~*/[]`", segments: ["~*/[]"]),
        FieldPathCase(text: "``", segments: [""]),
        FieldPathCase(text: "a.``.b", segments: ["a", "", "b"]),
        FieldPathCase(text: "é.😀", segments: ["é", "😀"]),
        FieldPathCase(text: "a b.1x", segments: ["a b", "1x"]),
        FieldPathCase(text: "__name__", segments: ["__name__"]),
        FieldPathCase(text: #"a\b"#, segments: [#"a\b"#]),
    ])
    func parse(_ c: FieldPathCase) throws {
        #expect(try FieldPath(c.text).segments == c.segments)
    }

    @Test("malformed field paths are refused with the reason", arguments: [
        PathErrorCase(path: "", message: "invalid field path: empty"),
        PathErrorCase(path: "a..b", message: "invalid field path 'a..b': empty segment"),
        PathErrorCase(path: ".a", message: "invalid field path '.a': empty segment"),
        PathErrorCase(path: "a.", message: "invalid field path 'a.': empty segment"),
        PathErrorCase(path: "a`b`", message: "invalid field path 'a`b`': a backtick must open a whole segment"),
        PathErrorCase(path: "`a``b`", message: "invalid field path '`a``b`': a backtick must open a whole segment"),
        PathErrorCase(path: "`a`b", message: "invalid field path '`a`b': text after a quoted segment"),
        PathErrorCase(path: "`abc", message: "invalid field path '`abc': unterminated backtick"),
        PathErrorCase(path: #"`abc\`"#, message: #"invalid field path '`abc\`': unterminated backtick"#),
        PathErrorCase(path: "a~b", message: "invalid field path 'a~b': '~' must be quoted with backticks"),
        PathErrorCase(path: "a*", message: "invalid field path 'a*': '*' must be quoted with backticks"),
        PathErrorCase(path: "a/b", message: "invalid field path 'a/b': '/' must be quoted with backticks"),
        PathErrorCase(path: "a[0]", message: "invalid field path 'a[0]': '[' must be quoted with backticks"),
        PathErrorCase(path: "a]", message: "invalid field path 'a]': ']' must be quoted with backticks"),
    ])
    func malformed(_ c: PathErrorCase) throws {
        let error = try #require(pathError { _ = try FieldPath(c.path) })
        #expect(error.code == .invalidArgument)
        #expect(error.message == c.message)
    }

    @Test("field paths are at most 1500 bytes and 100 segments, so nothing walks an unbounded path")
    func bounded() throws {
        #expect(try FieldPath(Array(repeating: "a", count: 100).joined(separator: ".")).segments.count == 100)
        let deep = try #require(pathError { _ = try FieldPath(Array(repeating: "a", count: 101).joined(separator: ".")) })
        #expect(deep.message.hasSuffix("more than 100 segments"))
        let huge = try #require(pathError { _ = try FieldPath(Array(repeating: "a", count: 300_000).joined(separator: ".")) })
        #expect(huge.message.hasSuffix("longer than 1500 bytes"))
        #expect(try FieldPath(String(repeating: "x", count: 1500)).segments.count == 1)
        #expect(pathError { _ = try FieldPath(String(repeating: "x", count: 1501)) } != nil)
    }

    @Test("requiring quotes, as Firestore's API reads paths: an unquoted segment must be a simple name")
    func requiringQuotes() throws {
        for text in ["a", "_x.A1_", "`x y`.`é`", "`1n`", "__name__", "a.`b.c`"] {
            #expect(try FieldPath(text, requiringQuotes: true) == FieldPath(text), "\(text)")
        }
        for text in ["x y", "é", "1n", "a-b", "a.1", "a$", "ok.with space", "`q`.9"] {
            let error = try #require(pathError { _ = try FieldPath(text, requiringQuotes: true) }, "\(text)")
            #expect(error.message.hasPrefix("Invalid property path \"\(text)\". Unquoted property paths must match"), "\(error.message)")
            #expect(try FieldPath(text).segments.count >= 1, "the lenient parse still takes \(text)")
        }
    }

    @Test("the description quotes only segments that are not simple identifiers")
    func canonicalDescription() throws {
        let segments = ["a", "b.c", "d`e", #"f\g"#, "1x", "", "é", "_ok9", "with space", "A_Z"]
        let path = FieldPath(segments: segments)
        #expect(path.description == #"a.`b.c`.`d\`e`.`f\\g`.`1x`.``.`é`._ok9.`with space`.A_Z"#)
        #expect(try FieldPath(path.description).segments == segments)
    }

    @Test("random segments survive description and parse")
    func randomRoundTrip() throws {
        var gen = ValueGenerator(seed: 0xF1E1D, jsonOnly: true)
        for round in 0..<2000 {
            let segments = (0..<gen.int(1...4)).map { _ in
                switch gen.int(0...3) {
                case 0: return ["`", "\\", ".", "``", "\\`", "a.b"][gen.int(0...5)]
                case 1: return "\u{301}" + gen.string()  // starts with a combining mark
                default: return gen.string()
                }
            }
            let path = FieldPath(segments: segments)
            let parsed = try FieldPath(path.description)
            #expect(parsed.segments == segments, "round \(round): \(path.description.debugDescription)")
            #expect(parsed.segments.map { Array($0.utf8) } == segments.map { Array($0.utf8) }, "round \(round)")
        }
    }

    @Test("segments with combining marks next to quotes keep their exact scalars")
    func combiningMarks() throws {
        for segment in ["\u{301}", "`\u{301}", "\\\u{301}", "a`\u{301}b", "\u{301}`", "x\\"] {
            let path = FieldPath(segments: [segment, "k"])
            let parsed = try FieldPath(path.description)
            #expect(parsed.segments.map { Array($0.unicodeScalars) } == [Array(segment.unicodeScalars), ["k"]], "\(path.description.debugDescription)")
        }
    }

    @Test("field paths order segment by segment, and a prefix comes first")
    func ordering() throws {
        let ordered = try ["a", "a.b", "a.b.c", "a.c", "`a-b`", "b", "é"].map { try FieldPath($0) }
        for (x, y) in zip(ordered, ordered.dropFirst()) {
            #expect(x < y, "\(x) < \(y)")
            #expect(!(y < x))
        }
    }

    @Test("prefixes, appending and the document id path")
    func helpers() throws {
        let a = try FieldPath("a")
        let ab = try FieldPath("a.b")
        #expect(a.isPrefix(of: ab))
        #expect(a.isPrefix(of: a))
        #expect(!ab.isPrefix(of: a))
        #expect(!(try FieldPath("ab")).isPrefix(of: try FieldPath("abc")))
        #expect(a.appending("b") == ab)
        #expect(a.appending("x.y").description == "a.`x.y`")
        #expect(FieldPath.documentID.isDocumentID)
        #expect(try FieldPath("__name__").isDocumentID)
        #expect(!(try FieldPath("a.__name__")).isDocumentID)
    }

    @Test("value(at:) follows maps and stops at anything else")
    func valueAt() throws {
        let doc: Value = ["a": ["b.c": ["d": 1]], "list": [1, 2], "n": nil]
        #expect(doc.value(at: try FieldPath("a.`b.c`.d")) == 1)
        #expect(doc.value(at: try FieldPath("a")) == ["b.c": ["d": 1]])
        #expect(doc.value(at: try FieldPath("a.b")) == nil)
        #expect(doc.value(at: try FieldPath("list.0")) == nil)
        #expect(doc.value(at: try FieldPath("n")) == .null)
        #expect(doc.value(at: try FieldPath("n.x")) == nil)
        #expect(doc.value(at: FieldPath(segments: [])) == doc)
    }

    @Test("field paths encode as their canonical string")
    func codable() throws {
        let path = FieldPath(segments: ["a.b", "c"])
        let data = try JSONEncoder().encode([path])
        #expect(try JSONDecoder().decode([FieldPath].self, from: data) == [path])
        #expect(try ValueEncoder().encode(path) == "`a.b`.c")
        #expect(throws: DecodingError.self) { try JSONDecoder().decode([FieldPath].self, from: Data(#"["a..b"]"#.utf8)) }
    }
}
