import Foundation
import HearthModel
@testable import HearthRules
import Testing

/// Inputs chosen to break things: none may crash, hang or recurse without bound.
@Suite("Hostile inputs")
struct HostileInputTests {
    @Test("arbitrary bytes as a rules file are refused with a location, never a crash")
    func garbageFiles() throws {
        var generator = SystemRandomNumberGenerator()
        let alphabet = Array("rules_version='2';service cloud.firestore{match/databases/{d}/documents{allow read:if $()[]\"'\\*/=**.,!&|<>?:-+%0123456789 \n\té\u{0}")
        var refused = 0
        for _ in 0..<300 {
            let length = Int.random(in: 0..<200, using: &generator)
            let text = String((0..<length).map { _ in alphabet.randomElement(using: &generator) ?? " " })
            if let error = loadError(text) {
                refused += 1
                #expect(error.location.line >= 1 && error.location.column >= 1)
                #expect(error.location.line <= text.split(separator: "\n", omittingEmptySubsequences: false).count)
            }
        }
        #expect(refused > 250)
    }

    @Test("random bytes literals and hashing calls load or are refused with a location, and evaluate without a trap")
    func bytesLiterals() throws {
        var generator = SystemRandomNumberGenerator()
        let alphabet = Array("b'\"\\x0123456789abcdefABCDEFGz€ \n")
        let functions = ["hashing.crc32", "hashing.crc32c", "hashing.md5", "hashing.sha256", "debug"]
        for _ in 0..<2000 {
            let length = Int.random(in: 0..<24, using: &generator)
            let body = String((0..<length).map { _ in alphabet.randomElement(using: &generator) ?? " " })
            let function = functions.randomElement(using: &generator) ?? "debug"
            let source = rulesFile("    match /things/{id} {\n      allow get: if \(function)(b'\(body)').size() >= 0 && b'\(body)'.toHexString().size() >= 0;\n    }")
            if let error = loadError(source) {
                #expect(error.location.line >= 1 && error.location.column >= 1)
            } else {
                _ = try load(source).authorize(.get(try path("things/t1"), existing: [:], auth: alice, time: testTime))
            }
        }
    }

    @Test("every prefix of a valid file is refused cleanly")
    func truncatedFiles() throws {
        let full = try String(contentsOf: sampleRulesURL(), encoding: .utf8)
        let scalars = Array(full.unicodeScalars)
        for cut in stride(from: 0, to: scalars.count - 1, by: 3) {
            let prefix = String(String.UnicodeScalarView(scalars[..<cut]))
            #expect(loadError(prefix) != nil, "prefix of \(cut) loaded")
        }
    }

    @Test("huge numbers in literals and data give errors, not traps")
    func hugeNumbers() throws {
        #expect(loadError(rulesFile("match /a/{b} { allow read: if 99999999999999999999999 > 1; }")) != nil)
        #expect(loadError(rulesFile("match /a/{b} { allow read: if 1e999 > 1; }"))?.message.contains("out of range") == true)
        let rules = try load(rulesFile("""
                match /a/{b} {
                  allow get: if resource.data.n * resource.data.n > 0 || resource.data.n + resource.data.n > 0
                    || int(resource.data.d) > 0 || math.ceil(resource.data.d) > 0 || -resource.data.n > 0
                    || duration.value(resource.data.n, 's') > duration.value(0, 's')
                    || timestamp.value(resource.data.n) > request.time
                    || request.time + duration.value(resource.data.n / 1000000000, 's') > request.time;
                }
            """))
        for n: Int64 in [Int64.max, Int64.min, Int64.min + 1] {
            let decision = rules.authorize(.get(try path("a/1"), existing: ["n": .int(n), "d": .double(1e300)], auth: nil, time: testTime))
            // Every overflow is an error; what is left: -n > 0 for Int64.min + 1, and request.time plus
            // about 292 years (still in range) for Int64.max.
            #expect(decision.isAllowed == (n != Int64.min), "\(decision)")
        }
        let nan = rules.authorize(.get(try path("a/1"), existing: ["n": .int(0), "d": .double(.nan)], auth: nil, time: testTime))
        #expect(!nan.isAllowed)
    }

    @Test("long strings and lists in data are handled in bounded time")
    func bigData() throws {
        let rules = try load(rulesFile("""
                match /a/{b} {
                  allow create: if request.resource.data.s.size() > 0 && request.resource.data.s.matches('(a|aa)*b')
                    || request.resource.data.l.hasAll(request.resource.data.l) && request.resource.data.l.toSet().size() > 0;
                }
            """))
        let long = String(repeating: "a", count: 200_000)
        let list = Value.array((0..<50_000).map { .int(Int64($0)) })
        let clock = ContinuousClock()
        let start = clock.now
        let decision = rules.authorize(.create(try path("a/1"), data: ["s": .string(long), "l": list], auth: nil, time: testTime))
        #expect(decision.isAllowed, "\(decision)")
        #expect(clock.now - start < .seconds(20))
    }

    @Test("catastrophic regular expressions run in linear time")
    func catastrophicRegex() throws {
        let rules = try load(rulesFile("""
                match /a/{b} {
                  allow create: if request.resource.data.s.matches('(a+)+$') || request.resource.data.s.matches('(x*)*y')
                    || request.resource.data.s.matches('^(a|a?)+z$');
                }
            """))
        let clock = ContinuousClock()
        let start = clock.now
        let decision = rules.authorize(.create(try path("a/1"), data: ["s": .string(String(repeating: "a", count: 5000) + "!")], auth: nil, time: testTime))
        #expect(!decision.isAllowed)
        #expect(clock.now - start < .seconds(20))
    }

    @Test("oversized regular expressions are errors")
    func bigRegex() throws {
        #expect(throws: RegexError.self) { try RulesRegex(String(repeating: "(", count: 500)) }
        #expect(throws: RegexError.self) { try RulesRegex("a{1000}{1000}") }
        #expect(throws: RegexError.self) { try RulesRegex("(a{1000}){1000}") }
        #expect(throws: RegexError.self) { try RulesRegex(String(repeating: "a", count: 5000)) }
        #expect(throws: RegexError.self) { try RulesRegex("a**") }
        #expect(throws: RegexError.self) { try RulesRegex("\\1") }
    }

    @Test("repetitions of what emits nothing compile at once: empty, or bounded when nested past any use")
    func emptyRepetitions() throws {
        // Once 10^12 steps of compiling nothing (each level repeats the one inside 1000 times).
        let nested = "(?:(?:(?:(?:){1000}(?:)){1000}(?:)){1000}(?:)){1000}"
        let regex = try RulesRegex(nested)
        #expect(try regex.fullMatch(""))
        #expect(try !regex.fullMatch("a"))
        #expect(try RulesRegex("x(?:){5}y").fullMatch("xy"))
        #expect(try RulesRegex("(?:(?:){3}a){2}").fullMatch("aa"))
        // A group records where it matched, so its copies are program: bounded by the size limit.
        #expect(throws: RegexError.self) { try RulesRegex("(?:(?:(?:(){1000}){1000}){1000}){1000}") }
    }

    @Test("deeply nested document data is read without trouble")
    func deepData() throws {
        var value: Value = "leaf"
        for _ in 0..<400 { value = ["m": value] }
        let rules = try load(rulesFile("""
                match /a/{b} {
                  allow get: if resource.data.v.m.m.m != null && resource.data == resource.data && resource.data.v.keys().size() == 1;
                }
            """))
        #expect(rules.authorize(.get(try path("a/1"), existing: ["v": value], auth: nil, time: testTime)).isAllowed)
    }

    @Test("evaluation stops at its step bound")
    func stepBound() throws {
        // Twenty nested calls of a function that calls the next level five times: far past the bound.
        var functions = "function f0(n) { return n == n; }\n"
        for level in 1...20 {
            let call = "f\(level - 1)(n)"
            functions += "function f\(level)(n) { return \(call) && \(call) && \(call) && \(call) && \(call); }\n"
        }
        let rules = try load(rulesFile(functions + "match /a/{b} { allow get: if f20(1); }"))
        let decision = rules.authorize(.get(try path("a/1"), existing: nil, auth: nil, time: testTime))
        #expect(!decision.isAllowed)
        #expect(decision.description.contains("evaluation took more than 100000 steps"))
    }
}

func sampleRulesURL() -> URL {
    URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("firestore.rules")
}
