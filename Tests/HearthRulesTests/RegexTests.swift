@testable import HearthRules
import Testing

@Suite("Regular expressions")
struct RegexTests {
    struct Row: Sendable, CustomStringConvertible {
        var pattern: String
        var text: String
        var matches: Bool
        var description: String { "\(pattern) ~ \(text)" }
    }

    static let rows: [Row] = [
        Row(pattern: "abc", text: "abc", matches: true), Row(pattern: "abc", text: "abcd", matches: false),
        Row(pattern: "a.c", text: "a\nc", matches: false), Row(pattern: "a*", text: "", matches: true),
        Row(pattern: "a+", text: "", matches: false), Row(pattern: "colou?r", text: "color", matches: true),
        Row(pattern: "[a-c]+", text: "abcabc", matches: true), Row(pattern: "[^a-c]+", text: "xyz", matches: true),
        Row(pattern: "[^a-c]+", text: "xaz", matches: false), Row(pattern: "\\d{3}-\\d{4}", text: "555-1234", matches: true),
        Row(pattern: "\\w+@\\w+\\.com", text: "me@host.com", matches: true), Row(pattern: "\\s*x\\s*", text: " \tx ", matches: true),
        Row(pattern: "a{2,3}", text: "aaaa", matches: false), Row(pattern: "a{2,}", text: "aaaa", matches: true),
        Row(pattern: "a{2}", text: "aa", matches: true), Row(pattern: "(ab|cd)+", text: "abcdab", matches: true),
        Row(pattern: "(?:ab)*c", text: "ababc", matches: true), Row(pattern: "^ab$", text: "ab", matches: true),
        Row(pattern: "a|b|c", text: "b", matches: true), Row(pattern: "[.]", text: "x", matches: false),
        Row(pattern: "\\.", text: ".", matches: true), Row(pattern: "é+", text: "ééé", matches: true),
        Row(pattern: "[\\d\\-]+", text: "1-2", matches: true), Row(pattern: "x{", text: "x{", matches: true),
        Row(pattern: "a*?b", text: "aab", matches: true), Row(pattern: "\\D\\W\\S", text: "a!b", matches: true),
        Row(pattern: "[a-z0-9_]{1,20}", text: "user_01", matches: true), Row(pattern: "", text: "", matches: true),
    ]

    @Test("full matches", arguments: rows)
    func fullMatch(_ row: Row) throws {
        #expect(try RulesRegex(row.pattern).fullMatch(row.text) == row.matches)
    }

    @Test("searching finds the leftmost-longest match")
    func search() throws {
        let input = Array("xxabab-ab".unicodeScalars)
        #expect(try RulesRegex("(ab)+").firstMatch(input, from: 0) == 2..<6)
        #expect(try RulesRegex("(ab)+").firstMatch(input, from: 6) == 7..<9)
        #expect(try RulesRegex("z").firstMatch(input, from: 0) == nil)
        #expect(try RulesRegex("a|ab").firstMatch(input, from: 0) == 2..<4)
    }
}
