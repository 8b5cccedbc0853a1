import HearthModel
@testable import HearthRules
import Testing

/// Rules are not filters: a query is allowed only when the rule holds for every document it
/// could return, judged from its filters.
@Suite("List queries")
struct ListQueryTests {
    static func decide(_ condition: String, _ filters: [QuerySpec.Filter], limit: Int? = nil, orderBy: [QuerySpec.Order] = [],
                       auth: RulesAuth? = alice, in collectionName: String = "items") throws -> RulesDecision {
        let rules = try load(rulesFile("""
                match /\(collectionName)/{item} {
                  allow list: if \(condition);
                }
            """))
        var query = QuerySpec(collection: try collection(collectionName))
        query.filters = filters
        query.limit = limit
        query.orderBy = orderBy
        return rules.authorize(.list(query, auth: auth, time: testTime))
    }

    static func f(_ name: String, _ op: QuerySpec.Operator, _ value: Value) -> QuerySpec.Filter {
        QuerySpec.Filter(FieldPath(segments: name.split(separator: ".").map(String.init)), op, value)
    }

    @Test("owner == uid: allowed for the owner's query, denied without the filter or for another owner")
    func ownerFilter() throws {
        let rule = "resource.data.owner == request.auth.uid"
        #expect(try ListQueryTests.decide(rule, [ListQueryTests.f("owner", .equal, "alice")]).isAllowed)
        let none = try ListQueryTests.decide(rule, [])
        #expect(!none.isAllowed)
        #expect(none.description.contains("not proved for every document the query can return"))
        #expect(none.description.contains("resource.data.owner == 'alice'"))
        #expect(!(try ListQueryTests.decide(rule, [ListQueryTests.f("owner", .equal, "bob")]).isAllowed))
        #expect(!(try ListQueryTests.decide(rule, [ListQueryTests.f("owner", .equal, "alice")], auth: nil).isAllowed))
        #expect(!(try ListQueryTests.decide(rule, [ListQueryTests.f("other", .equal, "alice")]).isAllowed))
        // `in` with one value is equality; with two it does not fix the owner.
        #expect(try ListQueryTests.decide(rule, [ListQueryTests.f("owner", .in, ["alice"])]).isAllowed)
        #expect(!(try ListQueryTests.decide(rule, [ListQueryTests.f("owner", .in, ["alice", "bob"])]).isAllowed))
        // The same written the other way round.
        #expect(try ListQueryTests.decide("request.auth.uid == resource.data.owner", [ListQueryTests.f("owner", .equal, "alice")]).isAllowed)
    }

    struct Row: Sendable, CustomStringConvertible {
        var condition: String
        var filters: [QuerySpec.Filter]
        var limit: Int?
        var allowed: Bool
        var description: String { "\(condition) with \(filters.map { "\($0.field) \($0.op.rawValue) \($0.value)" }) limit \(limit.map(String.init) ?? "none")" }
    }

    static let rows: [Row] = [
        Row(condition: "true", filters: [], allowed: true),
        Row(condition: "resource.data.public == true", filters: [f("public", .equal, true)], allowed: true),
        Row(condition: "resource.data.public", filters: [f("public", .equal, true)], allowed: true),
        Row(condition: "resource.data.public", filters: [f("public", .equal, false)], allowed: false),
        Row(condition: "resource.data.public != false", filters: [f("public", .equal, true)], allowed: true),
        Row(condition: "!(resource.data.state == 'hidden')", filters: [f("state", .equal, "shown")], allowed: true),
        Row(condition: "resource.data.state != 'hidden'", filters: [f("state", .notEqual, "hidden")], allowed: true),
        Row(condition: "resource.data.state != 'hidden'", filters: [f("state", .notIn, ["hidden", "x"])], allowed: true),
        Row(condition: "resource.data.state != 'hidden'", filters: [], allowed: false),
        Row(condition: "resource.data.state in ['a', 'b', 'c']", filters: [f("state", .in, ["a", "b"])], allowed: true),
        Row(condition: "resource.data.state in ['a', 'b']", filters: [f("state", .in, ["a", "z"])], allowed: false),
        Row(condition: "resource.data.state in ['a', 'b']", filters: [f("state", .equal, "b")], allowed: true),
        Row(condition: "resource.data.score < 10", filters: [f("score", .lessThan, 5)], allowed: true),
        Row(condition: "resource.data.score < 10", filters: [f("score", .lessThanOrEqual, 10)], allowed: false),
        Row(condition: "resource.data.score < 10", filters: [f("score", .lessThan, 10)], allowed: true),
        Row(condition: "resource.data.score <= 10", filters: [f("score", .lessThanOrEqual, 10)], allowed: true),
        Row(condition: "resource.data.score < 10", filters: [f("score", .lessThan, 10.5)], allowed: false),
        Row(condition: "resource.data.score > 0", filters: [f("score", .greaterThan, 0)], allowed: true),
        Row(condition: "resource.data.score >= 0", filters: [f("score", .greaterThan, -1)], allowed: false),
        Row(condition: "resource.data.score >= 0 && resource.data.score < 100", filters: [f("score", .greaterThanOrEqual, 1), f("score", .lessThan, 50)], allowed: true),
        Row(condition: "resource.data.score < 10", filters: [f("score", .lessThan, "5")], allowed: false),
        Row(condition: "resource.data.score == 3", filters: [f("score", .equal, 3.0)], allowed: true),
        // `where score == 3` also returns 3.0: the kind is unknown (Firebase's emulator allows
        // `is int` here; Hearth denies what it cannot prove).
        Row(condition: "resource.data.score is int", filters: [f("score", .equal, 3)], allowed: false),
        Row(condition: "resource.data.score is int", filters: [f("score", .in, [1, 2])], allowed: false),
        Row(condition: "!(resource.data.score is int)", filters: [f("score", .equal, 3.0)], allowed: false),
        Row(condition: "resource.data.score is float", filters: [f("score", .equal, 3.0)], allowed: false),
        // Lists and maps compare numbers by kind, the filters by value: a number there proves nothing.
        Row(condition: "resource.data.x in [1, 2]", filters: [f("x", .equal, 1.0)], allowed: false),
        Row(condition: "resource.data.x in [1, 2]", filters: [f("x", .equal, 1)], allowed: false),
        Row(condition: "resource.data.x in [1, 2].toSet()", filters: [f("x", .equal, 1.0)], allowed: true),
        Row(condition: "!(resource.data.x in [1, 2])", filters: [f("x", .equal, 3)], allowed: true),
        Row(condition: "1 in resource.data.tags", filters: [f("tags", .arrayContains, 1.0)], allowed: false),
        Row(condition: "1 in resource.data.tags", filters: [f("tags", .equal, [1.0])], allowed: false),
        Row(condition: "!(1 in resource.data.tags)", filters: [f("tags", .equal, [2])], allowed: true),
        Row(condition: "resource.data.tags.hasAny([1])", filters: [f("tags", .arrayContains, 1)], allowed: false),
        Row(condition: "resource.data.m == {'a': 1}", filters: [f("m", .equal, ["a": 1.0])], allowed: false),
        Row(condition: "resource.data.m == {'a': 1}", filters: [f("m", .equal, ["a": 1])], allowed: false),
        Row(condition: "resource.data.m != {'a': 2}", filters: [f("m", .equal, ["a": 1])], allowed: true),
        Row(condition: "resource.data.m == {'a': 'x'}", filters: [f("m", .equal, ["a": "x"])], allowed: true),
        Row(condition: "resource.data.score is int", filters: [f("score", .greaterThan, 3)], allowed: false),
        Row(condition: "resource.data.score is number", filters: [f("score", .greaterThan, 3)], allowed: true),
        // A value outside the filters' range is not the field's.
        Row(condition: "resource.data.state != 'hidden'", filters: [f("state", .lessThan, "b")], allowed: true),
        Row(condition: "resource.data.state != 'hidden'", filters: [f("state", .greaterThan, "hidden")], allowed: true),
        Row(condition: "resource.data.state != 'hidden'", filters: [f("state", .greaterThanOrEqual, "hidden")], allowed: false),
        Row(condition: "resource.data.score != 5", filters: [f("score", .lessThan, 5)], allowed: true),
        Row(condition: "resource.data.score == 5", filters: [f("score", .lessThan, 5)], allowed: false),
        // hasAny on an array field from array-contains(-any).
        Row(condition: "resource.data.tags.hasAny(['x', 'z'])", filters: [f("tags", .arrayContains, "x")], allowed: true),
        Row(condition: "resource.data.tags.hasAny(['x', 'z'])", filters: [f("tags", .arrayContainsAny, ["z", "x"])], allowed: true),
        Row(condition: "resource.data.tags.hasAny(['x'])", filters: [f("tags", .arrayContainsAny, ["x", "z"])], allowed: false),
        Row(condition: "'x' in resource.data.tags", filters: [f("tags", .arrayContainsAny, ["x"])], allowed: true),
        Row(condition: "resource.data.tags.hasAny(['x'])", filters: [], allowed: false),
        // Filters no value satisfies: the query returns nothing, so the condition holds.
        Row(condition: "resource.data.score > 0", filters: [f("score", .greaterThan, 50), f("score", .equal, -1)], allowed: true),
        Row(condition: "resource.data.score > 0", filters: [f("score", .equal, -1), f("score", .notEqual, -1)], allowed: true),
        Row(condition: "resource.data.score > 0", filters: [f("score", .equal, -1), f("score", .lessThan, 50)], allowed: false),
        Row(condition: "resource.data.score is number", filters: [f("score", .equal, 3)], allowed: true),
        Row(condition: "resource.data.title is string", filters: [f("title", .greaterThan, "")], allowed: true),
        Row(condition: "resource.data.title is string", filters: [], allowed: false),
        Row(condition: "resource.data.m is map", filters: [f("m", .equal, ["a": 1])], allowed: true),
        Row(condition: "resource.data.m is map", filters: [f("m", .equal, .vector([1, 2]))], allowed: false),
        Row(condition: "resource.data.m is vector", filters: [f("m", .equal, .vector([1, 2]))], allowed: true),
        Row(condition: "resource.data.m is vector", filters: [f("m", .equal, ["a": 1])], allowed: false),
        Row(condition: "request.auth.uid in resource.data.members", filters: [f("members", .arrayContains, "alice")], allowed: true),
        Row(condition: "request.auth.uid in resource.data.members", filters: [f("members", .arrayContains, "bob")], allowed: false),
        Row(condition: "resource.data.a.b == 'x'", filters: [f("a.b", .equal, "x")], allowed: true),
        Row(condition: "resource.data.a.b == 'x'", filters: [f("a", .equal, ["b": "x"])], allowed: true),
        Row(condition: "resource.data.get('owner', '') == 'alice'", filters: [f("owner", .equal, "alice")], allowed: true),
        Row(condition: "resource.data.get('owner', 'alice') == 'alice'", filters: [], allowed: false),
        Row(condition: "resource.data.owner == 'alice' || resource.data.public == true", filters: [f("public", .equal, true)], allowed: true),
        Row(condition: "resource.data.owner == 'alice' || resource.data.public == true", filters: [], allowed: false),
        Row(condition: "resource.data.owner == 'alice' && resource.data.size() < 10", filters: [f("owner", .equal, "alice")], allowed: false),
        Row(condition: "resource == null || resource.data.owner == 'alice'", filters: [f("owner", .equal, "alice")], allowed: true),
        Row(condition: "resource != null", filters: [], allowed: true),
        Row(condition: "resource.id != 'x'", filters: [], allowed: false),
        Row(condition: "item != 'secret'", filters: [], allowed: false),
        Row(condition: "resource.data.owner == resource.data.editor", filters: [f("owner", .equal, "a"), f("editor", .equal, "a")], allowed: true),
        Row(condition: "resource.data.n + 1 > 0", filters: [f("n", .greaterThan, 0)], allowed: false),
        Row(condition: "request.query.limit <= 50", filters: [], limit: 20, allowed: true),
        Row(condition: "request.query.limit <= 50", filters: [], limit: 100, allowed: false),
        Row(condition: "request.query.limit <= 50", filters: [], limit: nil, allowed: false),
        Row(condition: "resource.data.owner == request.auth.uid && request.query.limit <= 50", filters: [f("owner", .equal, "alice")], limit: 10, allowed: true),
        Row(condition: "request.method == 'list'", filters: [], allowed: true),
        Row(condition: "request.query.offset == 0", filters: [], allowed: true),
        // A collection's query is a request on the collection's path.
        Row(condition: "request.path == /databases/(default)/documents/items", filters: [], allowed: true),
        Row(condition: "request.path[3] == 'items'", filters: [], allowed: true),
        Row(condition: "request.query.offset == null", filters: [], allowed: false),
    ]

    @Test("conditions proved, or not, from the query's filters", arguments: rows)
    func table(_ row: Row) throws {
        let decision = try ListQueryTests.decide(row.condition, row.filters, limit: row.limit)
        #expect(decision.isAllowed == row.allowed, "\(decision)")
    }

    @Test("a rule on one document does not allow listing its collection")
    func documentRuleDoesNotCoverQueries() throws {
        let rules = try load(rulesFile("""
                match /items/public { allow read; }
                match /items/{item} { allow get; }
            """))
        let decision = rules.authorize(.list(QuerySpec(collection: try collection("items")), auth: alice, time: testTime))
        #expect(decision.description == "denied list on items: no allow list statement matches this path (default deny)")
    }

    @Test("collection-group queries match a recursive wildcard before the collection")
    func collectionGroups() throws {
        let rules = try load(rulesFile("""
                match /{path=**}/items/{item} {
                  allow list: if resource.data.owner == request.auth.uid;
                }
                match /members/{uid}/{rest=**} {
                  allow read: if request.auth.uid == uid;
                }
            """))
        var group = QuerySpec(collectionID: "items", allDescendants: true)
        group.filters = [ListQueryTests.f("owner", .equal, "alice")]
        #expect(rules.authorize(.list(group, auth: alice, time: testTime)).isAllowed)
        group.filters = []
        #expect(!rules.authorize(.list(group, auth: alice, time: testTime)).isAllowed)
        // Under members/alice, the second block covers every document, at any depth.
        let scoped = QuerySpec(parent: try path("members/alice"), collectionID: "items", allDescendants: true)
        #expect(rules.authorize(.list(scoped, auth: alice, time: testTime)).isAllowed)
        #expect(!rules.authorize(.list(scoped, auth: bob, time: testTime)).isAllowed)
        // A plain collection query under any parent is matched by the group block too.
        var plain = QuerySpec(collection: try collection("things/t1/items"))
        plain.filters = [ListQueryTests.f("owner", .equal, "alice")]
        #expect(rules.authorize(.list(plain, auth: alice, time: testTime)).isAllowed)
        // A collection group's query has no one path: request.path is an error to use there.
        let paths = try load(rulesFile("match /{path=**}/items/{item} { allow list: if request.path[3] == 'items' || request.path[5] == 'items'; }"))
        #expect(!paths.authorize(.list(QuerySpec(collectionID: "items", allDescendants: true), auth: alice, time: testTime)).isAllowed)
        #expect(paths.authorize(.list(QuerySpec(collection: try collection("things/t1/items")), auth: alice, time: testTime)).isAllowed)
    }

    @Test("get() in a list rule reads concrete documents")
    func getInListRule() throws {
        let rules = try load(rulesFile("""
                match /teams/{team}/items/{item} {
                  allow list: if get(/databases/$(database)/documents/teams/$(team)).data.members.hasAny([request.auth.uid]);
                }
            """))
        let store = FakeStore(["teams/t1": ["members": ["alice"]]])
        let query = QuerySpec(collection: try collection("teams/t1/items"))
        #expect(rules.authorize(.list(query, auth: alice, time: testTime), documents: store.access()).isAllowed)
        #expect(!rules.authorize(.list(query, auth: bob, time: testTime), documents: store.access()).isAllowed)
        // A path built from a document field of the query's results cannot be read.
        let symbolic = try load(rulesFile("""
                match /items/{item} {
                  allow list: if get(/databases/$(database)/documents/teams/$(resource.data.team)).data.open == true;
                }
            """))
        #expect(!symbolic.authorize(.list(QuerySpec(collection: try collection("items")), auth: alice, time: testTime), documents: store.access()).isAllowed)
    }
}
