import Foundation
import HearthHTTP
import HearthModel
@_spi(Internals) @testable import HearthRuntime
import HearthTesting
import Testing

/// Clients' REST requests under security rules: the sample app's `firestore.rules` and rules
/// exercising queries and `get()`, over real HTTP with real ID tokens.
@Suite("Firestore REST under security rules")
struct FirestoreRulesRESTTests {
    static let names = FirestoreJSON(project: "demo-rest")
    static let sampleRules = (try? String(contentsOfFile: packageRoot + "/firestore.rules", encoding: .utf8)) ?? ""

    func client(_ rest: RESTClient, _ uid: String?) async throws -> RESTClient {
        var c = rest
        if let uid { c.authorization = "Bearer " + (try await rest.door.idToken(uid)) } else { c.authorization = nil }
        return c
    }

    @Test("a verify write needs read access to its document, and nothing more")
    func verifyNeedsRead() async throws {
        try await withREST(rules: Self.sampleRules) { door, rest in
            try await door.runtime.store.commit([.set(try DocumentPath("members/alice/items/a"), ["title": "milk"]),
                                                 .set(try DocumentPath("members/bob/items/b"), ["title": "bob's"])])
            let alice = try await client(rest, "alice")
            func verifyExists(_ doc: String) -> Value { ["writes": [["verify": .string(rest.name(doc)), "currentDocument": ["exists": true]]]] }
            let own = try await alice.post("commit", verifyExists("members/alice/items/a"))
            #expect(own.status == 200, "\(own.json)")
            let others = try await alice.post("commit", verifyExists("members/bob/items/b"))
            #expect(others.status == 403, "\(others.json)")
            #expect(others.json["error"]?["status"] == "PERMISSION_DENIED")
        }
    }

    @Test("the sample rules: each member reads and writes their own data; secrets and delivery records stay server-only; messages allow only isRead")
    func sampleRules() async throws {
        try await withREST(rules: Self.sampleRules) { door, rest in
            let store = door.runtime.store
            try await store.commit([
                .set(try DocumentPath("members/alice/items/a"), ["title": "milk"]),
                .set(try DocumentPath("members/alice/profiles/secrets"), ["fcmToken": "tok"]),
                .set(try DocumentPath("members/alice/messages/m"), ["title": "hi", "isRead": false, "isDeleted": false]),
                .set(try DocumentPath("members/alice/deliveryRecords/a_2024-05-01"), ["state": "sent"]),
                .set(try DocumentPath("members/bob/items/b"), ["title": "bob's"]),
            ])
            let alice = try await client(rest, "alice")
            let nobody = try await client(rest, nil)
            let cases: [(RESTClient, String, String, Value?, String, Int)] = [
                (alice, "GET", "/members/alice/items/a", nil, "", 200),
                (alice, "PATCH", "/members/alice/items/a", RESTClient.fields(["title": "eggs"], Self.names), "", 200),
                (alice, "POST", "/members/alice/items", RESTClient.fields(["title": "new"], Self.names), "documentId=n", 200),
                (alice, "DELETE", "/members/alice/items/n", nil, "", 200),
                (alice, "GET", "/members/alice/items", nil, "", 200),
                (alice, "GET", "/members/bob/items/b", nil, "", 403),
                (alice, "GET", "/members/bob/items", nil, "", 403),
                (alice, "PATCH", "/members/bob/items/b", RESTClient.fields(["title": "mine now"], Self.names), "", 403),
                (alice, "GET", "/members/alice/profiles/secrets", nil, "", 403),
                (alice, "PATCH", "/members/alice/profiles/secrets", RESTClient.fields(["fcmToken": "x"], Self.names), "", 403),
                (alice, "PATCH", "/members/alice/profiles/settings", RESTClient.fields(["pushEnabled": true], Self.names), "", 200),
                (alice, "GET", "/members/alice/deliveryRecords/a_2024-05-01", nil, "", 403),
                (alice, "GET", "/members/alice/messages/m", nil, "", 200),
                (alice, "PATCH", "/members/alice/messages/m", RESTClient.fields(["isRead": true], Self.names), "updateMask.fieldPaths=isRead", 200),
                (alice, "PATCH", "/members/alice/messages/m", RESTClient.fields(["title": "changed"], Self.names), "updateMask.fieldPaths=title", 403),
                (alice, "DELETE", "/members/alice/messages/m", nil, "", 403),
                (nobody, "GET", "/members/alice/items/a", nil, "", 403),
                (nobody, "POST", "/anything", RESTClient.fields([:], Self.names), "", 403),
            ]
            for (who, method, path, body, query, status) in cases {
                let r = try await who.send(method, path, body, query: query)
                #expect(r.status == status, "\(method) \(path) \(query): \(r.json)")
                if status == 403 {
                    #expect(r.json["error"]?["status"] == "PERMISSION_DENIED")
                    #expect(r.json["error"]?["message"] == "Missing or insufficient permissions.")
                }
            }
            // What the denied requests would have changed is unchanged.
            #expect(try await store.get(DocumentPath("members/bob/items/b"))?.fields["title"] == "bob's")
            #expect(try await store.get(DocumentPath("members/alice/profiles/secrets"))?.fields == ["fcmToken": "tok"])
            #expect(try await store.get(DocumentPath("members/alice/messages/m"))?.fields["isRead"] == true)
            #expect(try await store.get(DocumentPath("members/alice/messages/m"))?.fields["title"] == "hi")
            // A commit with one denied write writes nothing.
            let mixed = try await alice.post("commit", ["writes": [
                ["update": ["name": .string(rest.name("members/alice/items/z")), "fields": [:]]],
                ["update": ["name": .string(rest.name("members/bob/items/z")), "fields": [:]]],
            ]])
            #expect(mixed.status == 403)
            #expect(try await store.get(DocumentPath("members/alice/items/z")) == nil)
            // Admin-only and bad credentials.
            #expect(try await alice.post("listCollectionIds", [:]).status == 403)
            var forged = rest
            forged.authorization = "Bearer not.a.token"
            let bad = try await forged.get("members/alice/items/a")
            #expect(bad.status == 401)
            #expect(bad.json["error"]?["status"] == "UNAUTHENTICATED")
            #expect(door.log.contains("firestore request denied by rules"))
        }
    }

    static let queryRules = """
    rules_version = '2';
    service cloud.firestore {
      match /databases/{database}/documents {
        match /posts/{post} {
          allow get: if resource.data.owner == request.auth.uid || resource.data.public == true;
          allow list: if request.auth != null && resource.data.owner == request.auth.uid && request.query.limit <= 20;
          allow create: if request.resource.data.owner == request.auth.uid
                        && exists(/databases/$(database)/documents/users/$(request.auth.uid));
          allow update: if get(/databases/$(database)/documents/users/$(request.auth.uid)).data.role == 'editor';
        }
        match /public/{doc} {
          allow list: if request.query.limit <= 20;
        }
        match /polls/{poll} {
          allow get: if true;
          allow update: if request.resource.data.votes == resource.data.votes + 1
                        && request.resource.data.at == request.time;
        }
      }
    }
    """

    @Test("queries are allowed only when their filters prove the rule for every result; get() and exists() read other documents")
    func queriesAndLookups() async throws {
        try await withREST(rules: Self.queryRules) { door, rest in
            let store = door.runtime.store
            try await store.commit([
                .set(try DocumentPath("posts/p1"), ["owner": "alice", "public": false]),
                .set(try DocumentPath("posts/p2"), ["owner": "bob", "public": true]),
                .set(try DocumentPath("users/alice"), ["role": "editor"]),
            ])
            let alice = try await client(rest, "alice")
            let carol = try await client(rest, "carol")
            func query(_ filter: Value?, limit: Int?) -> Value {
                var q: [String: Value] = ["from": [["collectionId": "posts"]]]
                if let filter { q["where"] = filter }
                if let limit { q["limit"] = .int(Int64(limit)) }
                return ["structuredQuery": .map(q)]
            }
            func owner(_ uid: String) -> Value {
                ["fieldFilter": ["field": ["fieldPath": "owner"], "op": "EQUAL", "value": ["stringValue": .string(uid)]]]
            }
            let own = try await alice.post("runQuery", query(owner("alice"), limit: 10))
            #expect(own.status == 200, "\(own.json)")
            #expect(own.json.arrayValue?.compactMap { $0["document"]?["name"] } == [.string(rest.name("posts/p1"))])
            #expect(try await alice.post("runQuery", query(nil, limit: 10)).status == 403)
            #expect(try await alice.post("runQuery", query(owner("bob"), limit: 10)).status == 403)
            #expect(try await alice.post("runQuery", query(owner("alice"), limit: 50)).status == 403)
            #expect(try await alice.post("runQuery", query(owner("alice"), limit: nil)).status == 403)
            // A list's page size is its limit for the rules.
            #expect(try await alice.get("public", query: "pageSize=20").status == 200)
            #expect(try await alice.get("public", query: "pageSize=21").status == 403)
            #expect(try await alice.get("public").status == 403, "no page size: no limit")
            // get: another's public post is readable, a private one is not.
            #expect(try await alice.get("posts/p2").status == 200)
            #expect(try await carol.get("posts/p1").status == 403)
            // create needs users/{uid} to exist; update needs the editor role, read with get().
            let created = try await alice.send("POST", "/posts", RESTClient.fields(["owner": "alice"], Self.names), query: "documentId=p3")
            #expect(created.status == 200, "\(created.json)")
            #expect(try await carol.send("POST", "/posts", RESTClient.fields(["owner": "carol"], Self.names), query: "documentId=p4").status == 403)
            #expect(try await alice.send("PATCH", "/posts/p2", RESTClient.fields(["owner": "bob", "edited": true], Self.names)).status == 200)
            try await store.commit([.set(try DocumentPath("users/carol"), ["role": "reader"])])
            #expect(try await carol.send("PATCH", "/posts/p2", RESTClient.fields(["owner": "bob"], Self.names)).status == 403)
        }
    }

    @Test("request.query as Google's Firestore emulator shows it: offset 0 when unset, orderBy as sent, an aggregation's limit")
    func requestQuery() async throws {
        let rules = """
        rules_version = '2';
        service cloud.firestore {
          match /databases/{database}/documents {
            match /offsets/{id} { allow list: if request.query.offset == 0; }
            match /orders/{id} { allow list: if request.query.orderBy.size() == 0 || request.query.orderBy.score == 'ASC'; }
            match /limits/{id} { allow list: if request.query.limit <= 5; }
          }
        }
        """
        try await withREST(rules: rules) { door, rest in
            let alice = try await client(rest, "alice")
            func query(_ collection: String, _ q: [String: Value] = [:]) -> Value {
                ["structuredQuery": .map(["from": [["collectionId": .string(collection)]]].merging(q) { $1 })]
            }
            func count(_ collection: String, _ q: [String: Value] = [:]) -> Value {
                ["structuredAggregationQuery": ["structuredQuery": query(collection, q)["structuredQuery"]!,
                                                "aggregations": [["alias": "n", "count": .emptyMap], ["alias": "s", "sum": ["field": ["fieldPath": "score"]]]]]]
            }
            let inequalities: Value = ["compositeFilter": ["op": "OR", "filters": [
                ["fieldFilter": ["field": ["fieldPath": "score"], "op": "GREATER_THAN", "value": ["integerValue": "5"]]],
                ["fieldFilter": ["field": ["fieldPath": "rank"], "op": "LESS_THAN", "value": ["integerValue": "3"]]],
            ]]]
            // An unset offset is 0, not null.
            #expect(try await alice.post("runQuery", query("offsets")).status == 200)
            #expect(try await alice.get("offsets", query: "pageSize=3").status == 200)
            #expect(try await alice.post("runQuery", query("offsets", ["offset": 1])).status == 403)
            #expect(try await alice.post("runAggregationQuery", count("offsets")).status == 200)
            // orderBy is what the query sent: not the order its inequalities or a sum add.
            #expect(try await alice.post("runQuery", query("orders", ["where": inequalities])).status == 200)
            #expect(try await alice.post("runAggregationQuery", count("orders", ["where": inequalities])).status == 200)
            #expect(try await alice.post("runQuery", query("orders", ["orderBy": [["field": ["fieldPath": "score"]]]])).status == 200)
            #expect(try await alice.post("runQuery", query("orders", ["orderBy": [["field": ["fieldPath": "rank"]]]])).status == 403)
            // An aggregation's limit is the query's.
            #expect(try await alice.post("runAggregationQuery", count("limits", ["limit": 3])).status == 200)
            #expect(try await alice.post("runAggregationQuery", count("limits", ["limit": 10])).status == 403)
            #expect(try await alice.post("runAggregationQuery", count("limits")).status == 403)
        }
    }

    @Test("what the rules deny leaves no trace: no lock, no precondition answer, no borrowed transaction, no folded writes slipping through")
    func denialsLeaveNoTrace() async throws {
        try await withREST(rules: Self.queryRules) { door, rest in
            let store = door.runtime.store
            try await store.commit([
                .set(try DocumentPath("posts/p2"), ["owner": "bob", "public": false]),
                .set(try DocumentPath("polls/q"), ["votes": 0]),
            ])
            let alice = try await client(rest, "alice")
            let carol = try await client(rest, "carol")
            // A denied read in a transaction locks nothing: a transaction on the same document commits at once.
            let txn = try #require(try await alice.post("beginTransaction", [:]).json["transaction"])
            let denied = try await alice.send("GET", "/posts/p2", query: "transaction=\(PercentEncoding.encodeQueryValue(txn.stringValue ?? ""))")
            #expect(denied.status == 403)
            let denied2 = try await alice.post("batchGet", ["documents": [.string(rest.name("posts/p2"))], "newTransaction": [:]])
            #expect(denied2.status == 403)
            #expect(store.transactions.openCount == 1, "the denied newTransaction was never begun")
            let other = try await withTimeout(seconds: 20) {
                try await store.runTransaction { tx in
                    _ = try await tx.get(DocumentPath("posts/p2"))
                    tx.write(.set(try DocumentPath("posts/p2"), ["owner": "bob", "public": true]))
                    return true
                }
            }
            #expect(other)
            // Preconditions are the commit's: a denied create of an existing document is 403, not 409.
            let create = try await alice.send("POST", "/posts", RESTClient.fields(["owner": "bob"], Self.names), query: "documentId=p2")
            #expect(create.status == 403, "\(create.json)")
            let stale = try await alice.send("PATCH", "/posts/p2", RESTClient.fields(["owner": "bob"], Self.names),
                                             query: "currentDocument.updateTime=2020-01-01T00:00:00Z")
            #expect(stale.status == 403, "\(stale.json)")
            // Another caller's transaction is not open to carol.
            let borrowed = try await carol.post("commit", ["transaction": txn, "writes": []])
            #expect(borrowed.status == 400, "\(borrowed.json)")
            #expect(borrowed.json["error"]?["status"] == "INVALID_ARGUMENT")
            #expect(borrowed.json["error"]?["message"]?.stringValue?.contains("transaction has expired") == true, "the words Firestore's clients retry on")
            // Two writes to one document are judged as one, from before to after both: +2 is not +1.
            let poll = rest.name("polls/q")
            let one: Value = ["transform": ["document": .string(poll), "fieldTransforms": [
                ["fieldPath": "votes", "increment": ["integerValue": "1"]], ["fieldPath": "at", "setToServerValue": "REQUEST_TIME"]]]]
            #expect(try await alice.post("commit", ["writes": [one, one]]).status == 403)
            #expect(try await store.get(DocumentPath("polls/q"))?.fields["votes"] == 0)
            let single = try await alice.post("commit", ["writes": [one]])
            #expect(single.status == 200, "request.time is the server timestamp the rules saw: \(single.json)")
            #expect(try await store.get(DocumentPath("polls/q"))?.fields["votes"] == 1)
            // batchWrite refuses two writes to one document outright.
            let twice = try await rest.post("batchWrite", ["writes": [["delete": .string(poll)], ["delete": .string(poll)]]])
            #expect(twice.status == 400)
        }
    }

    @Test("a rules file that is missing or not UTF-8 stops the front door from starting, naming the path")
    func unreadableRules() async throws {
        let garbage = NSTemporaryDirectory() + "hearth-rules-bad-" + UUID().uuidString
        try Data([0xff, 0xfe, 0x00, 0xc3]).write(to: URL(fileURLWithPath: garbage))
        defer { try? FileManager.default.removeItem(atPath: garbage) }
        for path in ["/nonexistent/firestore.rules", garbage] {
            await #expect {
                try await withFrontDoor(configure: { $0.firestore.rules = path }) { _ in }
            } throws: { error in "\(error)".contains("cannot read \(path)") }
        }
    }

    @Test("rules that do not parse stop the front door from starting, naming file, line and column")
    func badRulesRefused() async throws {
        let bad = "rules_version = '2';\nservice cloud.firestore {\n  match /databases/{database}/documents {\n    allow reed: if true;\n  }\n}\n"
        await #expect {
            try await withREST(rules: bad) { _, _ in }
        } throws: { error in
            let text = "\(error)"
            return text.contains(".rules:4:") && text.contains("reed")
        }
    }
}
