import Foundation
import HearthModel
import HearthRules

/// What deciding one request under the sample app's `firestore.rules` costs, per decision, beside
/// the cheapest ruleset there is (`allow read, write: if true` on everything) as the baseline.
func runRulesBenchmark() async throws {
    printHeader("security rules: µs per decision, sample firestore.rules vs allow-all", command: "Scripts/bench/rest (hearth-bench rules)")
    let sample = try Ruleset(source: String(contentsOfFile: "firestore.rules", encoding: .utf8), fileName: "firestore.rules")
    let open = try Ruleset(source: "rules_version = '2';\nservice cloud.firestore { match /databases/{database}/documents { match /{path=**} { allow read, write: if true; } } }")
    let auth = RulesAuth(uid: "alice", token: ["sub": "alice", "firebase": ["sign_in_provider": "custom"]])
    let now = Timestamp(seconds: 1_800_000_000)
    let item: [String: Value] = ["sequence": 7, "title": "buy milk", "body": "and eggs", "tags": ["home"], "category": "default", "isDone": false,
                                 "completedAt": .null, "targetDate": .timestamp(now), "createdAt": .timestamp(now), "updatedAt": .timestamp(now),
                                 "deletedAt": .null, "goalId": .null, "priority": 2]
    var message: [String: Value] = ["itemId": "a", "title": "t", "body": "b", "targetDateKey": "2026-12-02", "isRead": false, "isDeleted": false, "createdAt": .timestamp(now)]
    let read = message
    message["isRead"] = true
    var spec = QuerySpec(collection: try CollectionPath("members/alice/items"))
    spec.limit = 20
    let cases: [(String, RulesRequest, Bool)] = [
        ("get own item", .get(try DocumentPath("members/alice/items/a"), existing: item, auth: auth, time: now), true),
        ("update own item", .update(try DocumentPath("members/alice/items/a"), existing: item, after: item, auth: auth, time: now), true),
        ("mark message read (diff)", .update(try DocumentPath("members/alice/messages/m"), existing: read, after: message, auth: auth, time: now), true),
        ("list own items", .list(spec, auth: auth, time: now), true),
        ("get another's item (denied)", .get(try DocumentPath("members/bob/items/a"), existing: item, auth: auth, time: now), false),
        ("get secrets (denied)", .get(try DocumentPath("members/alice/profiles/secrets"), existing: ["fcmToken": "t"], auth: auth, time: now), false),
    ]
    print("case                              sample µs   allow-all µs   ratio")
    for (name, request, expected) in cases {
        guard sample.authorize(request).isAllowed == expected else { print("error: \(name) decided wrongly"); exit(1) }
        let base = opsPerSecond { _ = open.authorize(request) }
        let rate = opsPerSecond { _ = sample.authorize(request) }
        print(name.padding(toLength: 32, withPad: " ", startingAt: 0), fmt(1e6 / rate, 2).leftPadded(10), fmt(1e6 / base, 2).leftPadded(14),
              fmt(base / rate, 2).leftPadded(7))
    }
}

extension String {
    func leftPadded(_ width: Int) -> String { count >= width ? self : String(repeating: " ", count: width - count) + self }
}
