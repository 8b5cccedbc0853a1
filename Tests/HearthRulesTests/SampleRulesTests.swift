import HearthModel
@testable import HearthRules
import Testing

/// The sample app's firestore.rules (SCENARIOS.md's data layout), case by case.
@Suite("The sample app's rules")
struct SampleRulesTests {
    enum Operation: Sendable {
        case get, create, delete
        case update([String: Value])
        case list(String)
    }

    struct Case: Sendable, CustomStringConvertible {
        var name: String
        var auth: RulesAuth?
        var path: String
        var operation: Operation
        var allowed: Bool
        var description: String { name }
    }

    static let message: [String: Value] = ["itemId": "i1", "title": "t", "body": "b", "targetDateKey": "2024-01-01",
                                           "isRead": false, "isDeleted": false, "createdAt": .timestamp(Timestamp(seconds: 1))]

    static let cases: [Case] = [
        Case(name: "owner reads their root document", auth: alice, path: "members/alice", operation: .get, allowed: true),
        Case(name: "owner writes their root document", auth: alice, path: "members/alice", operation: .create, allowed: true),
        Case(name: "another user cannot read the root", auth: bob, path: "members/alice", operation: .get, allowed: false),
        Case(name: "signed out cannot read", auth: nil, path: "members/alice/profiles/basic", operation: .get, allowed: false),
        Case(name: "owner reads profiles/basic", auth: alice, path: "members/alice/profiles/basic", operation: .get, allowed: true),
        Case(name: "owner updates settings", auth: alice, path: "members/alice/profiles/settings",
             operation: .update(["reminderHour": 8]), allowed: true),
        Case(name: "owner cannot read secrets", auth: alice, path: "members/alice/profiles/secrets", operation: .get, allowed: false),
        Case(name: "owner cannot write secrets", auth: alice, path: "members/alice/profiles/secrets", operation: .update(["fcmToken": "x"]), allowed: false),
        Case(name: "owner creates an item", auth: alice, path: "members/alice/items/i1", operation: .create, allowed: true),
        Case(name: "owner deletes an item", auth: alice, path: "members/alice/items/i1", operation: .delete, allowed: true),
        Case(name: "other user cannot create an item", auth: bob, path: "members/alice/items/i1", operation: .create, allowed: false),
        Case(name: "owner lists items", auth: alice, path: "members/alice/items", operation: .list("items"), allowed: true),
        Case(name: "other user cannot list items", auth: bob, path: "members/alice/items", operation: .list("items"), allowed: false),
        Case(name: "owner writes the counter", auth: alice, path: "members/alice/counters/item", operation: .update(["nextSequence": 2]), allowed: true),
        Case(name: "owner saves a link", auth: alice, path: "members/alice/links/l1", operation: .create, allowed: true),
        Case(name: "deeper subcollections are the owner's too", auth: alice, path: "members/alice/items/i1/notes/n1", operation: .create, allowed: true),
        Case(name: "owner cannot read delivery records", auth: alice, path: "members/alice/deliveryRecords/i1_2024-01-01", operation: .get, allowed: false),
        Case(name: "owner cannot create delivery records", auth: alice, path: "members/alice/deliveryRecords/i1_2024-01-01", operation: .create, allowed: false),
        Case(name: "owner reads a message", auth: alice, path: "members/alice/messages/m1", operation: .get, allowed: true),
        Case(name: "owner lists messages", auth: alice, path: "members/alice/messages", operation: .list("messages"), allowed: true),
        Case(name: "owner marks a message read", auth: alice, path: "members/alice/messages/m1", operation: .update(["isRead": true]), allowed: true),
        Case(name: "owner cannot change a message's title", auth: alice, path: "members/alice/messages/m1",
             operation: .update(["isRead": true, "title": "edited"]), allowed: false),
        Case(name: "isRead must stay a bool", auth: alice, path: "members/alice/messages/m1", operation: .update(["isRead": "yes"]), allowed: false),
        Case(name: "owner cannot create a message", auth: alice, path: "members/alice/messages/m2", operation: .create, allowed: false),
        Case(name: "owner cannot delete a message", auth: alice, path: "members/alice/messages/m1", operation: .delete, allowed: false),
        Case(name: "other user cannot read a message", auth: bob, path: "members/alice/messages/m1", operation: .get, allowed: false),
        Case(name: "anything outside members is denied", auth: alice, path: "config/app", operation: .get, allowed: false),
        Case(name: "a collection group query is denied", auth: alice, path: "", operation: .list("group:items"), allowed: false),
    ]

    @Test("allow and deny", arguments: cases)
    func sample(_ c: Case) throws {
        let rules = try sampleRules()
        let decision: RulesDecision
        switch c.operation {
        case .get:
            decision = rules.authorize(.get(try path(c.path), existing: SampleRulesTests.message, auth: c.auth, time: testTime))
        case .create:
            decision = rules.authorize(.create(try path(c.path), data: ["title": "x"], auth: c.auth, time: testTime))
        case .delete:
            decision = rules.authorize(.delete(try path(c.path), existing: ["title": "x"], auth: c.auth, time: testTime))
        case .update(let changes):
            let after = SampleRulesTests.message.merging(changes) { $1 }
            decision = rules.authorize(.update(try path(c.path), existing: SampleRulesTests.message, after: after, auth: c.auth, time: testTime))
        case .list(let what):
            let query: QuerySpec
            if what.hasPrefix("group:") {
                query = QuerySpec(collectionID: String(what.dropFirst(6)), allDescendants: true)
            } else {
                query = QuerySpec(collection: try collection(c.path))
            }
            decision = rules.authorize(.list(query, auth: c.auth, time: testTime))
        }
        #expect(decision.isAllowed == c.allowed, "\(decision)")
    }

    @Test("a denial names the path and why")
    func denialReasons() throws {
        let rules = try sampleRules()
        let none = rules.authorize(.get(try path("config/app"), existing: nil, auth: alice, time: testTime))
        #expect(none.description == "denied get on config/app: no allow get statement matches this path (default deny)")
        let secrets = rules.authorize(.get(try path("members/alice/profiles/secrets"), existing: nil, auth: alice, time: testTime))
        #expect(secrets.description.hasPrefix("denied get on members/alice/profiles/secrets: allow at firestore.rules:"))
        #expect(secrets.description.contains("condition is false"))
    }
}
