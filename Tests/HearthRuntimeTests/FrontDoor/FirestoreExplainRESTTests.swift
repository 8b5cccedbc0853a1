import HearthModel
import HearthStore
@_spi(Internals) @testable import HearthRuntime
import Testing

/// Query Explain over Firestore's REST API: `explainOptions` on runQuery and runAggregationQuery,
/// answered with `explainMetrics` in the shapes of Firestore's reference
/// (https://firebase.google.com/docs/firestore/reference/rest/v1/ExplainMetrics, and the report's
/// keys from https://firebase.google.com/docs/firestore/reference/query-explain-report-reference).
/// Without `analyze` the query is planned, not run: one response with the plan and no documents.
/// With it, the results come as without explain and the last response adds the statistics.
@Suite("Firestore REST: Query Explain")
struct FirestoreExplainRESTTests {
    /// Ten tasks t0…t9: `n` = i, `done` for t0 and t5, `tags` ["even"] or ["odd"].
    static func seed(_ door: DoorFixture) async throws {
        var writes: [DocumentWrite] = []
        for i in 0..<10 {
            let tag: Value = .string(i % 2 == 0 ? "even" : "odd")
            let fields: [String: Value] = ["n": .int(Int64(i)), "done": .bool(i % 5 == 0), "tags": .array([tag])]
            writes.append(.set(try DocumentPath("tasks/t\(i)"), fields))
        }
        try await door.runtime.store.commit(writes)
    }

    static func query(_ q: [String: Value]) -> Value { .map(["from": [["collectionId": "tasks"]]].merging(q) { $1 }) }

    static func field(_ name: String, _ op: String, _ value: Value) -> Value {
        ["fieldFilter": ["field": ["fieldPath": .string(name)], "op": .string(op), "value": value]]
    }

    /// The indexes a plan reports, as "scope properties" strings.
    static func indexes(_ metrics: Value?) -> [String] {
        (metrics?["planSummary"]?["indexesUsed"]?.arrayValue ?? []).map {
            ($0["query_scope"]?.stringValue ?? "?") + " " + ($0["properties"]?.stringValue ?? "?")
        }
    }

    @Test("without analyze a query is planned, not run: one response with the indexes its plan reads")
    func planOnly() async throws {
        try await withREST { door, rest in
            try await Self.seed(door)
            let cases: [(query: Value, expected: [String])] = [
                (Self.query([:]), ["Collection (__name__ ASC)"]),
                (Self.query(["where": Self.field("done", "EQUAL", ["booleanValue": true])]), ["Collection (done ASC, __name__ ASC)"]),
                (Self.query(["orderBy": [["field": ["fieldPath": "n"], "direction": "DESCENDING"]]]), ["Collection (n DESC, __name__ DESC)"]),
                (Self.query(["where": Self.field("tags", "ARRAY_CONTAINS", ["stringValue": "odd"])]), ["Collection (tags ARRAY_CONTAINS, __name__ ASC)"]),
                (Self.query(["where": Self.field("n", "GREATER_THAN", ["integerValue": "3"])]), ["Collection (n ASC, __name__ ASC)"]),
                (["from": [["collectionId": "tasks", "allDescendants": true]]], ["Collection group (__name__ ASC)"]),
                // Each branch of an OR query has its own plan.
                (Self.query(["where": ["compositeFilter": ["op": "OR", "filters": [
                    Self.field("done", "EQUAL", ["booleanValue": true]), Self.field("tags", "ARRAY_CONTAINS", ["stringValue": "odd"])]]]]),
                 ["Collection (done ASC, __name__ ASC)", "Collection (tags ARRAY_CONTAINS, __name__ ASC)"]),
                // A collection with no documents yet is planned all the same.
                (["from": [["collectionId": "none"]], "where": Self.field("done", "EQUAL", ["booleanValue": true])], ["Collection (done ASC, __name__ ASC)"]),
            ]
            for (query, expected) in cases {
                let r = try await rest.post("runQuery", ["structuredQuery": query, "explainOptions": .emptyMap])
                #expect(r.status == 200, "\(r.json)")
                let responses = r.json.arrayValue ?? []
                #expect(responses.count == 1, "\(r.json)")
                #expect(responses.first?["document"] == nil)
                #expect(responses.first?["explainMetrics"]?["executionStats"] == nil)
                #expect(Self.indexes(responses.first?["explainMetrics"]) == expected, "\(query)")
                // `analyze: false` is the default spelled out.
                let spelled = try await rest.post("runQuery", ["structuredQuery": query, "explainOptions": ["analyze": false]])
                #expect(spelled.json == r.json)
            }
        }
    }

    @Test("with analyze the results come as without explain, and the last response carries the plan and the run's statistics")
    func analyze() async throws {
        try await withREST { door, rest in
            try await Self.seed(door)
            let query = Self.query(["where": Self.field("done", "EQUAL", ["booleanValue": true])])
            let plain = try await rest.post("runQuery", ["structuredQuery": query])
            let explained = try await rest.post("runQuery", ["structuredQuery": query, "explainOptions": ["analyze": true]])
            #expect(explained.status == 200, "\(explained.json)")
            let responses = try #require(explained.json.arrayValue)
            let names = { (list: [Value]) in list.compactMap { $0["document"]?["name"]?.stringValue } }
            #expect(names(responses) == names(plain.json.arrayValue ?? []))
            #expect(names(responses) == [rest.name("tasks/t0"), rest.name("tasks/t5")])
            #expect(responses.dropLast().allSatisfy { $0["explainMetrics"] == nil })
            let metrics = responses.last?["explainMetrics"]
            #expect(Self.indexes(metrics) == ["Collection (done ASC, __name__ ASC)"])
            let stats = try #require(metrics?["executionStats"])
            #expect(stats["resultsReturned"] == "2")
            #expect(stats["readOperations"] == "2")
            let duration = try #require(stats["executionDuration"]?.stringValue)
            #expect(duration.hasSuffix("s") && duration.dropLast().split(separator: ".").map(\.count).last == 9, "\(duration)")
            // The plan read the two entries of done == true in its index, and only their documents.
            #expect(stats["debugStats"]?["index_entries_scanned"] == "2")
            #expect(stats["debugStats"]?["documents_scanned"] == "2")
            #expect(stats["debugStats"]?["billing_details"]?["documents_billable"] == "2")
            #expect(stats["debugStats"]?["billing_details"]?["min_query_cost"] == "0")

            // A filter the index cannot apply: every entry and document of n's index is read, one
            // fewer comes back.
            let wider = try await rest.post("runQuery", ["structuredQuery": Self.query(["where": Self.field("n", "NOT_EQUAL", ["integerValue": "4"])]),
                                                         "explainOptions": ["analyze": true]])
            let widerStats = wider.json.arrayValue?.last?["explainMetrics"]?["executionStats"]
            #expect(Self.indexes(wider.json.arrayValue?.last?["explainMetrics"]) == ["Collection (n ASC, __name__ ASC)"])
            #expect(widerStats?["resultsReturned"] == "9")
            #expect(widerStats?["debugStats"]?["index_entries_scanned"] == "10")
            #expect(widerStats?["debugStats"]?["documents_scanned"] == "10")
        }
    }

    @Test("an OR query's branches add up, a collection group counts every collection it reads, and a plan is never empty")
    func branchesGroupsAndEmptyPlans() async throws {
        try await withREST { door, rest in
            try await Self.seed(door)
            try await door.runtime.store.commit([.set(try DocumentPath("lists/l1/tasks/x"), ["done": true]),
                                                 .set(try DocumentPath("lists/l2/tasks/y"), ["done": false])])
            let or = try await rest.post("runQuery", ["explainOptions": ["analyze": true], "structuredQuery": Self.query(["where": ["compositeFilter": ["op": "OR", "filters": [
                Self.field("done", "EQUAL", ["booleanValue": true]), Self.field("tags", "ARRAY_CONTAINS", ["stringValue": "odd"])]]]])])
            let orMetrics = or.json.arrayValue?.last?["explainMetrics"]
            #expect(Self.indexes(orMetrics) == ["Collection (done ASC, __name__ ASC)", "Collection (tags ARRAY_CONTAINS, __name__ ASC)"])
            #expect(orMetrics?["executionStats"]?["resultsReturned"] == "6")  // t0, t5 and the five odd ones, t5 in both
            #expect(orMetrics?["executionStats"]?["debugStats"]?["documents_scanned"] == "7")
            let group = try await rest.post("runQuery", ["explainOptions": ["analyze": true], "structuredQuery": [
                "from": [["collectionId": "tasks", "allDescendants": true]], "where": Self.field("done", "EQUAL", ["booleanValue": true])]])
            let groupMetrics = group.json.arrayValue?.last?["explainMetrics"]
            #expect(Self.indexes(groupMetrics) == ["Collection group (done ASC, __name__ ASC)"])
            #expect(groupMetrics?["executionStats"]?["resultsReturned"] == "3")
            #expect(groupMetrics?["executionStats"]?["debugStats"]?["index_entries_scanned"] == "3")
            // Limit 0, and a collection with no documents: still a plan, as Google's clients need one.
            for (query, analyze) in [(Self.query(["limit": 0]), false), (Self.query(["limit": 0]), true),
                                     (["from": [["collectionId": "none"]]], true)] as [(Value, Bool)] {
                let r = try await rest.post("runQuery", ["structuredQuery": query, "explainOptions": ["analyze": .bool(analyze)]])
                #expect(r.json.arrayValue?.compactMap { $0["document"] }.isEmpty == true)
                #expect(Self.indexes(r.json.arrayValue?.last?["explainMetrics"]) == ["Collection (__name__ ASC)"], "\(query) \(analyze): \(r.json)")
            }
        }
    }

    @Test("analyze bills documents skipped by an offset, and one read for a query with no results")
    func billing() async throws {
        try await withREST { door, rest in
            try await Self.seed(door)
            let paged = try await rest.post("runQuery", ["structuredQuery": Self.query(["offset": 3, "limit": 2]), "explainOptions": ["analyze": true]])
            let pagedStats = paged.json.arrayValue?.last?["explainMetrics"]?["executionStats"]
            #expect(paged.json.arrayValue?.compactMap { $0["document"] }.count == 2)
            #expect(pagedStats?["resultsReturned"] == "2")
            #expect(pagedStats?["readOperations"] == "5", "\(paged.json)")
            let none = try await rest.post("runQuery", ["structuredQuery": Self.query(["where": Self.field("n", "GREATER_THAN", ["integerValue": "100"])]),
                                                        "explainOptions": ["analyze": true]])
            let responses = try #require(none.json.arrayValue)
            #expect(responses.count == 1 && responses[0]["document"] == nil && responses[0]["readTime"] != nil, "\(none.json)")
            let stats = responses[0]["explainMetrics"]?["executionStats"]
            #expect(stats?["resultsReturned"] == "0")
            #expect(stats?["readOperations"] == "1")
            #expect(stats?["debugStats"]?["billing_details"]?["min_query_cost"] == "1")
        }
    }

    @Test("runAggregationQuery explains too: planned only, or run with one result billed per thousand entries")
    func aggregation() async throws {
        try await withREST { door, rest in
            try await Self.seed(door)
            let aggregation: Value = ["structuredQuery": Self.query(["where": Self.field("tags", "ARRAY_CONTAINS", ["stringValue": "odd"])]),
                                      "aggregations": [["alias": "c", "count": .emptyMap]]]
            let planned = try await rest.post("runAggregationQuery", ["structuredAggregationQuery": aggregation, "explainOptions": .emptyMap])
            #expect(planned.status == 200, "\(planned.json)")
            #expect(planned.json.arrayValue?.count == 1 && planned.json.arrayValue?.first?["result"] == nil, "\(planned.json)")
            #expect(Self.indexes(planned.json.arrayValue?.first?["explainMetrics"]) == ["Collection (tags ARRAY_CONTAINS, __name__ ASC)"])
            let run = try await rest.post("runAggregationQuery", ["structuredAggregationQuery": aggregation, "explainOptions": ["analyze": true]])
            let only = try #require(run.json.arrayValue?.first)
            #expect(only["result"]?["aggregateFields"]?["c"] == ["integerValue": "5"], "\(run.json)")
            let stats = only["explainMetrics"]?["executionStats"]
            #expect(stats?["resultsReturned"] == "1")
            #expect(stats?["readOperations"] == "1")
            #expect(stats?["debugStats"]?["billing_details"]?["index_entries_billable"] == "5")
            #expect(stats?["debugStats"]?["billing_details"]?["documents_billable"] == "0")
            // A count that stops at upTo bills only what it counted.
            let capped: Value = ["structuredQuery": Self.query([:]), "aggregations": [["alias": "c", "count": ["upTo": 3]]]]
            let cappedRun = try await rest.post("runAggregationQuery", ["structuredAggregationQuery": capped, "explainOptions": ["analyze": true]])
            #expect(cappedRun.json.arrayValue?.first?["result"]?["aggregateFields"]?["c"] == ["integerValue": "3"], "\(cappedRun.json)")
            #expect(cappedRun.json.arrayValue?.first?["explainMetrics"]?["executionStats"]?["debugStats"]?["billing_details"]?["index_entries_billable"] == "3")
        }
    }

    @Test("in a transaction begun by the query, the transaction comes back with the explanation")
    func transactions() async throws {
        try await withREST { door, rest in
            try await Self.seed(door)
            for analyze in [false, true] {
                let r = try await rest.post("runQuery", ["structuredQuery": Self.query(["limit": 1]), "explainOptions": ["analyze": .bool(analyze)],
                                                         "newTransaction": ["readWrite": .emptyMap]])
                #expect(r.status == 200, "\(r.json)")
                let first = try #require(r.json.arrayValue?.first)
                let txn = try #require(first["transaction"]?.stringValue, "\(r.json)")
                #expect(Self.indexes(first["explainMetrics"]) == ["Collection (__name__ ASC)"])
                #expect((first["document"] != nil) == analyze)
                if analyze {
                    let stats = first["explainMetrics"]?["executionStats"]
                    #expect(stats?["resultsReturned"] == "1")
                    #expect(stats?["debugStats"]?["documents_scanned"] == "1", "\(r.json)")
                }
                // A query only planned through an open transaction keeps it open.
                let planned = try await rest.post("runQuery", ["structuredQuery": Self.query([:]), "explainOptions": .emptyMap, "transaction": .string(txn)])
                #expect(planned.status == 200, "\(planned.json)")
                let rollback = try await rest.post("rollback", ["transaction": .string(txn)])
                #expect(rollback.status == 200, "\(rollback.json)")
                // ...and through one that ended it is refused, as a read would be.
                let stale = try await rest.post("runQuery", ["structuredQuery": Self.query([:]), "explainOptions": .emptyMap, "transaction": .string(txn)])
                #expect(stale.status == 400, "\(stale.json)")
                #expect(stale.json["error"]?["message"]?.stringValue?.contains("expired") == true, "\(stale.json)")
            }
        }
    }

    @Test("malformed explainOptions are refused, naming what is wrong")
    func badOptions() async throws {
        try await withREST { door, rest in
            try await Self.seed(door)
            let cases: [(Value, String)] = [
                (5, "explainOptions: must be an object"),
                (["analyze": "yes"], "explainOptions.analyze: must be a boolean"),
                (["analyse": true], "explainOptions: unknown field 'analyse'"),
            ]
            for (options, message) in cases {
                for verb in ["runQuery", "runAggregationQuery"] {
                    let body: Value = verb == "runQuery"
                        ? ["structuredQuery": Self.query([:]), "explainOptions": options]
                        : ["structuredAggregationQuery": ["structuredQuery": Self.query([:]), "aggregations": [["count": .emptyMap]]], "explainOptions": options]
                    let r = try await rest.post(verb, body)
                    #expect(r.status == 400, "\(r.json)")
                    #expect(r.json["error"]?["message"]?.stringValue?.contains(message) == true, "\(r.json)")
                }
            }
        }
    }

    @Test("Query Explain is for the admin token: a client is refused, even for a query its rules allow, since plans and counts describe documents it may not read")
    func rules() async throws {
        let rules = """
            rules_version = '2';
            service cloud.firestore {
              match /databases/{database}/documents {
                match /tasks/{id} { allow read: if request.auth != null && resource.data.done == true; }
              }
            }
            """
        try await withREST(rules: rules) { door, rest in
            try await Self.seed(door)
            let client = RESTClient(door: door, project: rest.project, authorization: "Bearer " + (try await door.idToken("ann")))
            let denied = try await client.post("runQuery", ["structuredQuery": Self.query([:]), "explainOptions": .emptyMap])
            #expect(denied.status == 403, "\(denied.json)")
            #expect(denied.json.arrayValue == nil)
            let allowedQuery = Self.query(["where": Self.field("done", "EQUAL", ["booleanValue": true])])
            let plain = try await client.post("runQuery", ["structuredQuery": allowedQuery])
            #expect(plain.status == 200, "\(plain.json)")
            for options: Value in [.emptyMap, ["analyze": true]] {
                let explained = try await client.post("runQuery", ["structuredQuery": allowedQuery, "explainOptions": options])
                #expect(explained.status == 403, "\(explained.json)")
                #expect(explained.json["error"]?["message"]?.stringValue?.contains("admin") == true)
                let aggregated = try await client.post("runAggregationQuery", ["explainOptions": options, "structuredAggregationQuery": [
                    "structuredQuery": allowedQuery, "aggregations": [["count": .emptyMap]]]])
                #expect(aggregated.status == 403, "\(aggregated.json)")
            }
        }
    }
}
