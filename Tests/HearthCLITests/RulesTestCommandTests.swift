import Foundation
@testable import HearthCLI
import HearthModel
import Testing

/// `hearth rules test` as a user runs it: the built binary on real files.
@Suite("hearth rules test")
struct RulesTestCommandTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/rules").path
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().path

    @Test("the sample app's firestore.rules.test.json passes, one PASS line per case")
    func sampleApp() async throws {
        let dir = TempDir()
        let result = try await hearthProcess(["rules", "test", RulesTestCommandTests.packageRoot + "/firestore.rules.test.json"], in: dir)
        #expect(result.status == 0, "\(result.out)\n\(result.err)")
        let lines = result.out.split(separator: "\n").map(String.init)
        let passes = lines.filter { $0.hasPrefix("PASS  ") }
        #expect(passes.count >= 20)
        #expect(!lines.contains { $0.hasPrefix("FAIL") })
        #expect(lines.last == "\(passes.count) cases: \(passes.count) passed, 0 failed")
        // A denial shows its reason.
        #expect(lines.contains { $0.hasPrefix("PASS  owner cannot read profiles/secrets (denied get on members/alice/profiles/secrets: allow at firestore.rules:") })
        #expect(lines.contains { $0 == "PASS  nothing outside members/{uid} (denied get on config/app: no allow get statement matches this path (default deny))" })
    }

    @Test("a failing case prints FAIL with what happened and exits 1")
    func failingCase() async throws {
        let dir = TempDir()
        let result = try await hearthProcess(["rules", "test", RulesTestCommandTests.fixtures + "/failing.json"], in: dir)
        #expect(result.status == 1)
        let lines = result.out.split(separator: "\n").map(String.init)
        #expect(lines.count == 4)
        #expect(lines[0] == "PASS  author reads a draft")
        #expect(lines[1] == "FAIL  this expectation is wrong: expected allow, denied: denied get on posts/p1: allow at app.rules:5:7: condition is false")
        #expect(lines[2] == "PASS  create stamped with request.time")
        #expect(lines[3] == "3 cases: 2 passed, 1 failed")
    }

    @Test("TOML test files read like JSON ones")
    func toml() async throws {
        let dir = TempDir()
        let result = try await hearthProcess(["rules", "test", RulesTestCommandTests.fixtures + "/app.toml"], in: dir)
        #expect(result.status == 0, "\(result.out)\n\(result.err)")
        let lines = result.out.split(separator: "\n").map(String.init)
        #expect(lines == [
            "PASS  anyone reads a published post",
            "PASS  signed out cannot create (denied create on posts/p3: allow at app.rules:6:7: condition is false)",
            "PASS  author with a profile updates",
            "3 cases: 3 passed, 0 failed",
        ])
    }

    @Test("bad input exits 2 with the problem: rules that do not load, a typo'd key, a missing file, no file")
    func badInput() async throws {
        let dir = TempDir()
        let badRules = try await hearthProcess(["rules", "test", RulesTestCommandTests.fixtures + "/bad-rules.json"], in: dir)
        #expect(badRules.status == 2)
        #expect(badRules.err.contains("bad.rules:4:26: unknown method 'reed'"), "\(badRules.err)")
        let typo = try await hearthProcess(["rules", "test", RulesTestCommandTests.fixtures + "/typo.json"], in: dir)
        #expect(typo.status == 2)
        #expect(typo.err.contains("case \"typo\": unknown key \"exepct\""), "\(typo.err)")
        let missing = try await hearthProcess(["rules", "test", dir.path + "/nope.json"], in: dir)
        #expect(missing.status == 2)
        #expect(missing.err.contains("cannot read"))
        let none = try await hearthProcess(["rules", "test"], in: dir)
        #expect(none.status == 2)
        #expect(none.err.contains("missing a test file"))
    }

    @Test("the command is listed in hearth --help and parses its one argument")
    func parsing() {
        guard case .run(let command) = CLI.parse(["rules", "test", "x.json"]), let rules = command as? RulesTestCommand else {
            Issue.record("hearth rules test x.json did not parse")
            return
        }
        #expect(rules.file == "x.json")
        guard case .help(let overview) = CLI.parse(["--help"]) else {
            Issue.record("no overview")
            return
        }
        #expect(overview.contains("rules test"))
        guard case .usageError(let message) = CLI.parse(["rules", "test", "a", "b"]) else {
            Issue.record("two files accepted")
            return
        }
        #expect(message.contains("unexpected argument 'b'"))
    }
}
