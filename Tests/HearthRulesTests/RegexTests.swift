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

    static let flagRows: [Row] = [
        Row(pattern: "(?i)abc", text: "ABC", matches: true), Row(pattern: "(?i)ABC", text: "abc", matches: true),
        Row(pattern: "(?i:a)b", text: "Ab", matches: true), Row(pattern: "(?i:a)b", text: "AB", matches: false),
        Row(pattern: "a(?i)b", text: "aB", matches: true), Row(pattern: "(a(?i)b)c", text: "aBc", matches: true),
        Row(pattern: "(a(?i)b)c", text: "aBC", matches: false), Row(pattern: "(?i)(?-i)x", text: "X", matches: false),
        Row(pattern: "(?i)é", text: "É", matches: true), Row(pattern: "(?i)ǆ", text: "ǅ", matches: true),
        Row(pattern: "(?i)\u{212A}", text: "K", matches: true), Row(pattern: "(?i)k", text: "\u{212A}", matches: true),
        Row(pattern: "(?i)ss", text: "ß", matches: false), Row(pattern: "(?i)[a-z]+", text: "AbC", matches: true),
        Row(pattern: "(?i)[^a-z]", text: "A", matches: false), Row(pattern: "(?s).", text: "\n", matches: true),
        Row(pattern: ".", text: "\n", matches: false), Row(pattern: "(?m)a$\nb", text: "a\nb", matches: true),
        Row(pattern: "a$\nb", text: "a\nb", matches: false), Row(pattern: "(?U)a+?b", text: "ab", matches: true),
        Row(pattern: "(?P<x>a)(?<y>b)", text: "ab", matches: true),
    ]

    @Test("flags (?i) (?m) (?s) (?U), scoped to their group", arguments: flagRows)
    func flags(_ row: Row) throws {
        #expect(try RulesRegex(row.pattern).fullMatch(row.text) == row.matches)
    }

    @Test("malformed flags and groups are refused with a message")
    func badGroups() {
        for pattern in ["(?)", "(?-)", "(?x)", "(?i-:a)", "(?P<>a)", "(?P<a>x)(?P<a>y)", "(?<a", "(?=a)"] {
            #expect(throws: RegexError.self, "\(pattern)") { try RulesRegex(pattern) }
        }
    }

    @Test("searching finds the leftmost-first match, as RE2 does, with its groups")
    func search() throws {
        let input = Array("xxabab-ab".unicodeScalars)
        func range(_ pattern: String, from: Int) throws -> Range<Int>? {
            var budget = RulesRegex.maxWork
            return try RulesRegex(pattern).firstMatch(input, from: from, budget: &budget).map(RulesRegex.range)
        }
        #expect(try range("(ab)+", from: 0) == 2..<6)
        #expect(try range("(ab)+", from: 6) == 7..<9)
        #expect(try range("z", from: 0) == nil)
        // The first alternative that matches wins, not the longest.
        #expect(try range("a|ab", from: 0) == 2..<3)
        #expect(try range("ab|a", from: 0) == 2..<4)
        // Lazy repetition takes as little as it can.
        #expect(try range("a.*b", from: 0) == 2..<9)
        #expect(try range("a.*?b", from: 0) == 2..<4)
        #expect(try range("(?U)a.*b", from: 0) == 2..<4)
        var budget = RulesRegex.maxWork
        let groups = try #require(try RulesRegex("(a)(x)?(b)").firstMatch(input, from: 0, budget: &budget))
        #expect(groups == [2, 4, 2, 3, -1, -1, 3, 4])
    }

    @Test("case folding is symmetric and leaves the Turkish dotless i alone, in classes wide and negated")
    func caseFolding() throws {
        for (pattern, text, matches) in [("(?i)β", "ϐ", true), ("(?i)ϐ", "β", true), ("(?i)k", "\u{212A}", true),
                                          ("(?i)ı", "i", false), ("(?i)i", "ı", false), ("(?i)[^Ā-￿]", "k", false),
                                          ("(?i)[Ā-￿]", "k", true), ("(?i)\\w", "\u{212A}", true), ("(?i)[\\w]", "\u{212A}", true),
                                          ("(?i)\\W", "\u{212A}", false), ("(?i)[\\W]", "k", false), ("(?i)[\\W]", "!", true)] {
            #expect(try RulesRegex(pattern).fullMatch(text) == matches, "\(pattern) ~ \(text)")
        }
    }

    @Test("the work of a search counts its capture slots and is shared by all the searches of one call")
    func searchBudget() throws {
        let many = try RulesRegex(Array(repeating: "(x)", count: 500).joined(separator: "|"))
        let input = Array(String(repeating: "y", count: 4_000).unicodeScalars)
        var budget = RulesRegex.maxWork
        #expect(throws: RegexError.self) { try many.firstMatch(input, from: 0, budget: &budget) }
        // A small pattern over a long input: each search is cheap, but a budget runs out across them.
        let small = try RulesRegex("a")
        let long = Array(String(repeating: "b", count: 10_000).unicodeScalars)
        var shared = RulesRegex.maxWork / 10
        var searches = 0
        do {
            while true {
                _ = try small.firstMatch(long, from: 0, budget: &shared)
                searches += 1
            }
        } catch {
            #expect(searches > 0 && searches < 100, "\(searches)")
        }
    }

    @Test("replace() fills $n and ${name}, takes \\$ as a dollar, refuses a group the pattern lacks")
    func replacements() throws {
        func parts(_ replacement: String, _ pattern: String) throws -> [String] {
            try ReplacementPart.parse(replacement, for: try RulesRegex(pattern)).map {
                switch $0 {
                case .text(let t): return t
                case .group(let n): return "<\(n)>"
                }
            }
        }
        #expect(try parts("[$1]", "(x)") == ["[", "<1>", "]"])
        #expect(try parts("$2$1", "(x)(y)") == ["<2>", "<1>"])
        #expect(try parts("$12", "(x)") == ["<1>", "2"], "digits only while they name a group")
        #expect(try parts("${n}-$0", "(?P<n>x)") == ["<1>", "-", "<0>"])
        #expect(try parts("\\$\\\\", "x") == ["$\\"])
        for bad in ["$1", "$", "$x", "${nope}", "${n", "\\"] {
            #expect(throws: RegexError.self, "\(bad)") { try ReplacementPart.parse(bad, for: try RulesRegex("x")) }
        }
    }
}
