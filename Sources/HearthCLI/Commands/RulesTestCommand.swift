import Foundation
import HearthModel
import HearthRules
import HearthRuntime

/// `hearth rules test FILE`: security rules assertions, offline, in the spirit of
/// `@firebase/rules-unit-testing` (see `RulesTestFile` for the format).
struct RulesTestCommand: Command {
    static let path = ["rules", "test"]
    static let summary = "Check firestore.rules against allow/deny cases written in a JSON or TOML file"
    static let help = """
        usage: hearth rules test FILE

        Loads the rules file FILE names and evaluates each case in it: who asks (auth), what
        (method: get, list, create, update, delete), where (path), with what data, against which
        stored documents, and whether it must be allowed or denied. Prints one line per case,
        PASS or FAIL with its name (a denial with its reason), then a summary. No server, no store.

        FILE is JSON, or TOML when its name ends in .toml:
          {
            "rules": "firestore.rules",              the rules file, relative to FILE
            "time": "2024-01-01T00:00:00Z",          request.time for every case (default: now)
            "documents": {                           stored documents, for resource and get()/exists()
              "members/alice/profiles/basic": {"displayName": "Alice"}
            },
            "cases": [
              {"name": "owner reads", "auth": {"uid": "alice", "token": {"email_verified": true}},
               "method": "get", "path": "members/alice/profiles/basic", "expect": "allow"},
              {"name": "signed out", "auth": null, "method": "create", "path": "members/alice/items/a",
               "data": {"title": "x"}, "expect": "deny"},
              {"name": "own items", "auth": {"uid": "alice"}, "method": "list", "path": "members/alice/items",
               "query": {"where": [["owner", "==", "alice"]], "orderBy": [["createdAt", "desc"]], "limit": 10},
               "expect": "allow"}
            ]
          }
        Values use Hearth's tagged JSON for what JSON lacks: {"$timestamp": "RFC 3339"},
        {"$bytes": "base64"}, {"$reference": "members/alice"}, {"$geopoint": {"latitude": 1, "longitude": 2}}.
        create's data is the new document; update's data is merged over the stored document (top-level
        fields). A list's path is the collection; "collectionGroup": true in its query makes the path's
        last segment a collection group under the rest. Each case may set its own "time".

        Exits 0 when every case passes, 1 when one fails, 2 when FILE or the rules cannot be read.
        """

    var file: String

    static func parse(_ arguments: [String]) throws(UsageError) -> RulesTestCommand {
        let args = try Arguments(arguments)
        return RulesTestCommand(file: try args.requirePositionals(["a test file"])[0])
    }

    func run(_ io: CommandIO) async -> Int32 {
        let suite: RulesTestFile
        do {
            suite = try RulesTestFile.load(file, io: io, now: SystemClock().now())
        } catch {
            io.err("error: \(error.message)")
            return ExitCode.usage
        }
        var failed = 0
        for c in suite.cases {
            let decision = suite.rules.authorize(c.request, documents: suite.access())
            let passed = decision.isAllowed == c.expectAllow
            if !passed { failed += 1 }
            let outcome = decision.isAllowed ? "allowed" : "denied"
            var line = "\(passed ? "PASS" : "FAIL")  \(c.name)"
            if !passed {
                line += ": expected \(c.expectAllow ? "allow" : "deny"), \(outcome): \(decision)"
            } else if !decision.isAllowed {
                line += " (\(decision))"
            }
            io.out(line)
        }
        let total = suite.cases.count
        io.out("\(total) case\(total == 1 ? "" : "s"): \(total - failed) passed, \(failed) failed")
        return failed == 0 ? ExitCode.success : ExitCode.failure
    }
}
