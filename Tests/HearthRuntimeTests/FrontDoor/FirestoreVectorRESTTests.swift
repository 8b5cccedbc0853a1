import HearthModel
import HearthStore
@_spi(Internals) @testable import HearthRuntime
import Testing

/// Vector values and vector search (`findNearest`) over Firestore's REST API. The expected answers
/// are those of Google's own integration tests for the Java server client
/// (java-firestore ITQueryFindNearestTest, run against Firestore): the same documents, queries and
/// results, sent as the REST requests the clients build.
@Suite("Firestore REST: vector values and findNearest")
struct FirestoreVectorRESTTests {
    static func vector(_ components: [Double]) -> Value { .vector(components) }

    /// Writes each document (id → fields) into `coll` through the store.
    static func seed(_ door: DoorFixture, _ docs: [String: [String: Value]], collection: String = "vectors") async throws {
        var writes: [DocumentWrite] = []
        for (id, fields) in docs { writes.append(.set(try DocumentPath("\(collection)/\(id)"), fields)) }
        try await door.runtime.store.commit(writes)
    }

    /// runQuery with a findNearest; returns the ids and the documents' fields, in order.
    static func nearest(_ rest: RESTClient, field: String = "embedding", vector: [Double], limit: Int, measure: String,
                        resultField: String? = nil, threshold: Double? = nil, fooIsBar: Bool = false, select: [String]? = nil,
                        collection: String = "vectors") async throws -> [(id: String, fields: [String: Value])] {
        var find: [String: Value] = [
            "vectorField": ["fieldPath": .string(field)],
            "queryVector": FirestoreRESTTests.names.json(.vector(vector)),
            "limit": .int(Int64(limit)),
            "distanceMeasure": .string(measure),
        ]
        if let resultField { find["distanceResultField"] = .string(resultField) }
        if let threshold { find["distanceThreshold"] = .double(threshold) }
        var query: [String: Value] = ["from": [["collectionId": .string(collection)]], "findNearest": .map(find)]
        if fooIsBar {
            query["where"] = ["fieldFilter": ["field": ["fieldPath": "foo"], "op": "EQUAL", "value": ["stringValue": "bar"]]]
        }
        if let select { query["select"] = ["fields": .array(select.map { ["fieldPath": .string($0)] })] }
        let r = try await rest.post("runQuery", ["structuredQuery": .map(query)])
        #expect(r.status == 200, "\(r.json)")
        return try (r.json.arrayValue ?? []).compactMap { item -> (String, [String: Value])? in
            guard let doc = item["document"], let name = doc["name"]?.stringValue else { return nil }
            return (String(name.split(separator: "/").last!), try FirestoreRESTTests.names.fields(doc["fields"] ?? .emptyMap, field: "fields"))
        }
    }

    static let plane: [String: [String: Value]] = [
        "a": ["foo": "bar"],
        "b": ["foo": "xxx", "embedding": vector([10, 10])],
        "c": ["foo": "bar", "embedding": vector([1, 1])],
        "d": ["foo": "bar", "embedding": vector([10, 0])],
        "e": ["foo": "bar", "embedding": vector([20, 0])],
        "f": ["foo": "bar", "embedding": vector([100, 100])],
    ]

    @Test("a vector value is written and read back in Firestore's map form; other __.*__ fields stay refused")
    func vectorValues() async throws {
        try await withREST { door, rest in
            let body: Value = ["fields": ["embedding": FirestoreRESTTests.names.json(.vector([0.5, -1, 3]))]]
            let created = try await rest.send("POST", "/vectors", body, query: "documentId=v")
            #expect(created.status == 200, "\(created.json)")
            #expect(created.json["fields"]?["embedding"] == ["mapValue": ["fields": [
                "__type__": ["stringValue": "__vector__"],
                "value": ["arrayValue": ["values": [["doubleValue": .double(0.5)], ["doubleValue": .double(-1)], ["doubleValue": .double(3)]]]],
            ]]])
            let stored = try #require(try await door.runtime.store.get(DocumentPath("vectors/v")))
            #expect(stored.fields["embedding"]?.vectorComponents == [0.5, -1, 3])
            let refused: [Value] = [
                ["__type__": "__vector__", "value": ["x"]],
                ["__type__": "__vector__", "value": [1, 2]],  // integers: the JavaScript SDKs would read them as 0
                ["__type__": "__vector__", "value": [1], "extra": 1],
                ["__type__": "__other__", "value": [1]],
                ["__type__": "__vector__"],
                ["__name__": 1],
            ]
            for value in refused {
                let r = try await rest.send("POST", "/vectors", ["fields": ["m": FirestoreRESTTests.names.json(value)]], query: "documentId=bad")
                #expect(r.status == 400, "\(value): \(r.json)")
                #expect(r.json["error"]?["message"]?.stringValue?.contains("reserved") == true, "\(r.json)")
            }
            #expect(try await door.runtime.store.get(DocumentPath("vectors/bad")) == nil)

            // A vector inside an array is a value like any other.
            let inArray = try await rest.send("POST", "/vectors", ["fields": ["list": FirestoreRESTTests.names.json([.vector([1, 2]), "x"])]], query: "documentId=list")
            #expect(inArray.status == 200, "\(inArray.json)")
            // Writes that would break a stored vector's shape are refused and change nothing.
            let mask = try await rest.send("PATCH", "/vectors/v", ["fields": ["embedding": ["mapValue": ["fields": ["__type__": ["stringValue": "other"]]]]]],
                                           query: "updateMask.fieldPaths=embedding.__type__")
            #expect(mask.status == 400, "\(mask.json)")
            let union = try await rest.post("commit", ["writes": [["transform": ["document": .string(rest.name("vectors/v")), "fieldTransforms": [
                ["fieldPath": "embedding.value", "appendMissingElements": ["values": [["stringValue": "x"]]]]]]]]])
            #expect(union.status == 400, "\(union.json)")
            #expect(try await door.runtime.store.get(DocumentPath("vectors/v"))?.fields["embedding"]?.vectorComponents == [0.5, -1, 3])
        }
    }

    @Test("vectors sort after arrays and before maps, by dimension first, in order and in equality, as Firestore orders them")
    func ordering() async throws {
        try await withREST { door, rest in
            try await Self.seed(door, [
                "map": ["v": ["a": 1]], "v123": ["v": Self.vector([1, 2, 3])], "v13": ["v": Self.vector([1, 3])],
                "v2": ["v": Self.vector([2])], "array": ["v": [1, 2]], "string": ["v": "s"], "v12": ["v": Self.vector([1, 2])],
            ], collection: "mixed")
            let ordered = try await rest.post("runQuery", ["structuredQuery": ["from": [["collectionId": "mixed"]], "orderBy": [["field": ["fieldPath": "v"]]]]])
            let names = (ordered.json.arrayValue ?? []).compactMap { $0["document"]?["name"]?.stringValue?.split(separator: "/").last.map(String.init) }
            #expect(names == ["string", "array", "v2", "v12", "v13", "v123", "map"], "\(ordered.json)")
            let equal = try await rest.post("runQuery", ["structuredQuery": ["from": [["collectionId": "mixed"]],
                "where": ["fieldFilter": ["field": ["fieldPath": "v"], "op": "EQUAL", "value": FirestoreRESTTests.names.json(.vector([1, 3]))]]]])
            #expect((equal.json.arrayValue ?? []).compactMap { $0["document"]?["name"]?.stringValue?.split(separator: "/").last.map(String.init) } == ["v13"])
            #expect(Value.compare(.vector([9]), .vector([1, 1])) == .ascending)
            #expect(Value.compare(.array([.double(1), .double(2)]), .vector([])) == .ascending)
            #expect(Value.compare(.vector([1, 2]), ["a": 1]) == .ascending)
        }
    }

    @Test("the three distance measures rank the pre-filtered documents as Firestore does")
    func measures() async throws {
        try await withREST { door, rest in
            try await Self.seed(door, Self.plane)
            let euclidean = try await Self.nearest(rest, vector: [10, 10], limit: 3, measure: "EUCLIDEAN", fooIsBar: true)
            #expect(euclidean.map(\.id) == ["d", "c", "e"])
            let cosine = try await Self.nearest(rest, vector: [10, 10], limit: 3, measure: "COSINE", fooIsBar: true).map(\.id)
            #expect(Set(cosine.prefix(2)) == ["f", "c"] && ["d", "e"].contains(cosine.last), "\(cosine)")
            let dot = try await Self.nearest(rest, vector: [10, 10], limit: 3, measure: "DOT_PRODUCT", fooIsBar: true)
            #expect(dot.map(\.id) == ["f", "e", "d"])
        }
    }

    @Test("documents without a vector of the query's dimension at the field are skipped")
    func skipsOtherValues() async throws {
        try await withREST { door, rest in
            try await Self.seed(door, [
                "a": ["foo": "bar"], "b": ["foo": "bar", "embedding": [10.0, 10.0]], "c": ["foo": "bar", "embedding": "not actually a vector"],
                "d": ["foo": "bar", "embedding": .null], "e": ["foo": "bar", "embedding": Self.vector([9, 9])],
                "f": ["foo": "bar", "embedding": Self.vector([50, 50])], "g": ["foo": "bar", "embedding": Self.vector([100, 100])],
                "h": ["foo": "bar", "embedding": Self.vector([10])],
            ])
            let found = try await Self.nearest(rest, vector: [10, 10], limit: 100, measure: "EUCLIDEAN", fooIsBar: true)
            #expect(found.map(\.id) == ["e", "f", "g"])
            #expect(try await Self.nearest(rest, field: "missing", vector: [10, 10], limit: 3, measure: "EUCLIDEAN").isEmpty)
        }
    }

    @Test("a vector nested in a map is found by its field path, and select can leave the vector out")
    func nestedAndSelect() async throws {
        try await withREST { door, rest in
            var nested: [String: [String: Value]] = [:]
            for (id, fields) in Self.plane { nested[id] = ["nested": .map(fields)] }
            try await Self.seed(door, nested, collection: "nested")
            let found = try await Self.nearest(rest, field: "nested.embedding", vector: [10, 10], limit: 3, measure: "EUCLIDEAN", collection: "nested")
            #expect(found.map(\.id) == ["b", "d", "c"])

            try await Self.seed(door, Self.plane)
            let selected = try await Self.nearest(rest, vector: [10, 10], limit: 10, measure: "EUCLIDEAN", select: ["foo"])
            #expect(selected.map(\.id) == ["b", "d", "c", "e", "f"])
            #expect(selected.allSatisfy { $0.fields["embedding"] == nil && $0.fields["foo"] != nil })
        }
    }

    static let unit: [String: [String: Value]] = [
        "1": ["foo": "bar"],
        "2": ["foo": "bar", "embedding": vector([1, 0])],
        "3": ["foo": "bar", "embedding": vector([0, 1])],
        "4": ["foo": "bar", "embedding": vector([0, -0.1])],
        "5": ["foo": "bar", "embedding": vector([-1, 0])],
    ]
    static let spread: [String: [String: Value]] = [
        "1": ["foo": "bar"],
        "2": ["foo": "bar", "embedding": vector([2, 0])],
        "3": ["foo": "bar", "embedding": vector([1, 100])],
        "4": ["foo": "bar", "embedding": vector([1, -0.1])],
        "5": ["foo": "bar", "embedding": vector([4, 4])],
    ]
    static let dots: [String: [String: Value]] = [
        "1": ["foo": "bar"],
        "2": ["foo": "bar", "embedding": vector([2, 0])],
        "3": ["foo": "bar", "embedding": vector([1, 100])],
        "4": ["foo": "bar", "embedding": vector([-20, 0])],
        "5": ["foo": "bar", "embedding": vector([0.1, 4])],
    ]

    @Test("distanceResultField carries each result's distance, written over a field of that name, and select can keep it")
    func distances() async throws {
        try await withREST { door, rest in
            try await Self.seed(door, Self.unit, collection: "unit")
            let cosine = try await Self.nearest(rest, vector: [1, 0], limit: 5, measure: "COSINE", resultField: "distance", collection: "unit")
            #expect(cosine.first?.id == "2" && cosine.last?.id == "5")
            #expect(cosine.map { $0.fields["distance"] } == [.double(0), .double(1), .double(1), .double(2)])
            let selected = try await Self.nearest(rest, vector: [1, 0], limit: 5, measure: "COSINE", resultField: "distance",
                                                  select: ["embedding", "distance"], collection: "unit")
            #expect(selected.map { $0.fields["distance"] } == [.double(0), .double(1), .double(1), .double(2)])
            #expect(selected.allSatisfy { $0.fields["foo"] == nil })

            try await Self.seed(door, Self.spread, collection: "spread")
            let euclidean = try await Self.nearest(rest, vector: [1, 0], limit: 5, measure: "EUCLIDEAN", resultField: "distance", collection: "spread")
            #expect(euclidean.map(\.id) == ["4", "2", "5", "3"])
            #expect(euclidean.map { $0.fields["distance"] } == [.double(0.1), .double(1), .double(5), .double(100)])

            try await Self.seed(door, Self.dots, collection: "dots")
            let dot = try await Self.nearest(rest, vector: [1, 0], limit: 5, measure: "DOT_PRODUCT", resultField: "distance", collection: "dots")
            #expect(dot.map(\.id) == ["2", "3", "5", "4"])
            #expect(dot.map { $0.fields["distance"] } == [.double(2), .double(1), .double(0.1), .double(-20)])

            try await Self.seed(door, ["1": ["foo": "bar", "embedding": Self.vector([0, 1]), "distance": "100 miles"]], collection: "conflict")
            let overwritten = try await Self.nearest(rest, vector: [1, 0], limit: 5, measure: "COSINE", resultField: "distance", collection: "conflict")
            #expect(overwritten.map { $0.fields["distance"] } == [.double(1)])
            // The stored document keeps its own value: the distance is only in the answer.
            #expect(try await door.runtime.store.get(DocumentPath("conflict/1"))?.fields["distance"] == "100 miles")
        }
    }

    @Test("distanceThreshold keeps what is at least that near (for DOT_PRODUCT, at least that large), within the limit")
    func thresholds() async throws {
        try await withREST { door, rest in
            try await Self.seed(door, [
                "1": ["foo": "bar"], "2": ["foo": "bar", "embedding": Self.vector([1, 0])], "3": ["foo": "bar", "embedding": Self.vector([1, 1])],
                "4": ["foo": "bar", "embedding": Self.vector([0, -0.1])], "5": ["foo": "bar", "embedding": Self.vector([-1, 0])],
            ], collection: "cos")
            #expect(try await Self.nearest(rest, vector: [1, 0], limit: 5, measure: "COSINE", threshold: 1, collection: "cos").map(\.id) == ["2", "3", "4"])
            try await Self.seed(door, Self.spread, collection: "spread")
            #expect(try await Self.nearest(rest, vector: [1, 0], limit: 5, measure: "EUCLIDEAN", threshold: 5, collection: "spread").map(\.id) == ["4", "2", "5"])
            try await Self.seed(door, Self.dots, collection: "dots")
            #expect(try await Self.nearest(rest, vector: [1, 0], limit: 5, measure: "DOT_PRODUCT", threshold: 1, collection: "dots").map(\.id) == ["2", "3"])
            let both = try await Self.nearest(rest, vector: [1, 0], limit: 5, measure: "DOT_PRODUCT", resultField: "foo", threshold: 0.11, collection: "dots")
            #expect(both.map(\.id) == ["2", "3"])
            #expect(both.map { $0.fields["foo"] } == [.double(2), .double(1)])
            #expect(try await Self.nearest(rest, vector: [1, 0], limit: 2, measure: "DOT_PRODUCT", threshold: 0, collection: "dots").map(\.id) == ["2", "3"])
        }
    }

    @Test("an OR pre-filter counts a document once; the limit's wrapper form; odd stored vectors are skipped, never ranked")
    func edges() async throws {
        try await withREST { door, rest in
            try await Self.seed(door, [
                "both": ["a": 1, "b": 1, "embedding": Self.vector([1, 0])], "a": ["a": 1, "embedding": Self.vector([2, 0])],
                "nan": ["a": 1, "embedding": Self.vector([.nan, 0])], "inf": ["a": 1, "embedding": Self.vector([.infinity, 0])],
                "zero": ["a": 1, "embedding": Self.vector([0, 0])],
            ], collection: "edges")
            func run(_ measure: String, _ extra: [String: Value] = [:]) async throws -> [String] {
                let find: Value = ["vectorField": ["fieldPath": "embedding"], "queryVector": FirestoreRESTTests.names.json(.vector([1, 0])),
                                   "limit": ["value": 10], "distanceMeasure": .string(measure)]
                let query = Value.map(["from": [["collectionId": "edges"]], "findNearest": find, "offset": 0, "where": ["compositeFilter": ["op": "OR", "filters": [
                    ["fieldFilter": ["field": ["fieldPath": "a"], "op": "EQUAL", "value": ["integerValue": "1"]]],
                    ["fieldFilter": ["field": ["fieldPath": "b"], "op": "EQUAL", "value": ["integerValue": "1"]]]]]]].merging(extra) { $1 })
                let r = try await rest.post("runQuery", ["structuredQuery": query])
                #expect(r.status == 200, "\(r.json)")
                return (r.json.arrayValue ?? []).compactMap { $0["document"]?["name"]?.stringValue?.split(separator: "/").last.map(String.init) }
            }
            // NaN distances are dropped; an infinite one ranks last; a and zero tie at 1, in name
            // order; a zero vector has no cosine distance.
            #expect(try await run("EUCLIDEAN") == ["both", "a", "zero", "inf"])
            // Both at cosine distance 0: a tie, in name order.
            #expect(try await run("COSINE") == ["a", "both"])
            // orderBy is superseded, not applied.
            #expect(try await run("EUCLIDEAN", ["orderBy": [["field": ["fieldPath": "a"], "direction": "DESCENDING"]]]) == ["both", "a", "zero", "inf"])
        }
    }

    @Test("a client's search passes the rules as a list with the search's limit")
    func rules() async throws {
        let rules = """
            rules_version = '2';
            service cloud.firestore {
              match /databases/{database}/documents {
                match /vectors/{id} { allow list: if request.auth != null && request.query.limit <= 3; }
              }
            }
            """
        try await withREST(rules: rules) { door, rest in
            try await Self.seed(door, Self.plane)
            let client = RESTClient(door: door, project: rest.project, authorization: "Bearer " + (try await door.idToken("ann")))
            #expect(try await Self.nearest(client, vector: [10, 10], limit: 3, measure: "EUCLIDEAN").map(\.id) == ["b", "d", "c"])
            let find: Value = ["vectorField": ["fieldPath": "embedding"], "queryVector": FirestoreRESTTests.names.json(.vector([10, 10])),
                               "limit": 4, "distanceMeasure": "EUCLIDEAN"]
            let denied = try await client.post("runQuery", ["structuredQuery": ["from": [["collectionId": "vectors"]], "findNearest": find]])
            #expect(denied.status == 403, "\(denied.json)")
        }
    }

    @Test("at Firestore's limits: 2048 dimensions and 1000 results")
    func limits() async throws {
        try await withREST { door, rest in
            let stored = (0..<2048).map { Double($0 + 1) }
            try await Self.seed(door, ["a": ["embedding": Self.vector(stored)]], collection: "big")
            let found = try await Self.nearest(rest, vector: (0..<2048).map { Double($0 - 1) }, limit: 1000, measure: "EUCLIDEAN", collection: "big")
            #expect(found.map(\.id) == ["a"])
            #expect(found.first?.fields["embedding"]?.vectorComponents == stored)
        }
    }

    @Test("explain plans a vector search without running it, or runs it and bills a read per hundred vectors compared")
    func explain() async throws {
        try await withREST { door, rest in
            try await Self.seed(door, Self.dots, collection: "dots")
            let find: Value = ["vectorField": ["fieldPath": "embedding"], "queryVector": FirestoreRESTTests.names.json(.vector([1, 0])),
                               "limit": 5, "distanceMeasure": "DOT_PRODUCT"]
            let query: Value = ["from": [["collectionId": "dots"]], "findNearest": find,
                                "where": ["fieldFilter": ["field": ["fieldPath": "foo"], "op": "EQUAL", "value": ["stringValue": "bar"]]]]
            let planned = try await rest.post("runQuery", ["structuredQuery": query, "explainOptions": ["analyze": false]])
            #expect(planned.json.arrayValue?.count == 1 && planned.json.arrayValue?.first?["document"] == nil, "\(planned.json)")
            let plan = planned.json.arrayValue?.first?["explainMetrics"]
            #expect(plan?["planSummary"]?["indexesUsed"]?.arrayValue?.isEmpty == false)
            #expect(plan?["executionStats"] == nil)
            let analyzed = try await rest.post("runQuery", ["structuredQuery": query, "explainOptions": ["analyze": true]])
            let responses = try #require(analyzed.json.arrayValue)
            #expect(responses.compactMap { $0["document"] }.count == 4)
            let stats = responses.last?["explainMetrics"]?["executionStats"]
            #expect(stats?["resultsReturned"] == "4")
            #expect(stats?["readOperations"] == "5")
            #expect(stats?["debugStats"]?["billing_details"]?["knn_vector_index_entries_billable"] == "4")
        }
    }

    @Test("malformed searches are refused, naming what is wrong")
    func badRequests() async throws {
        try await withREST { door, rest in
            try await Self.seed(door, Self.plane)
            let good: [String: Value] = ["vectorField": ["fieldPath": "embedding"], "queryVector": FirestoreRESTTests.names.json(.vector([1, 0])),
                                         "limit": 5, "distanceMeasure": "EUCLIDEAN"]
            func with(_ key: String, _ value: Value?) -> Value { var f = good; f[key] = value; return .map(f) }
            let cases: [(Value, [String: Value], String)] = [
                (with("limit", 0), [:], "findNearest.limit"),
                (with("limit", 1001), [:], "no more than 1000"),
                (with("distanceMeasure", nil), [:], "distanceMeasure: is required"),
                (with("distanceMeasure", "MANHATTAN"), [:], "is not EUCLIDEAN"),
                (with("queryVector", ["arrayValue": ["values": [["doubleValue": 1]]]]), [:], "queryVector: must be a vector value"),
                (with("queryVector", FirestoreRESTTests.names.json(.vector([]))), [:], "1 to 2048 dimensions"),
                (with("queryVector", FirestoreRESTTests.names.json(.vector(Array(repeating: 1, count: 2049)))), [:], "1 to 2048 dimensions"),
                (with("vectorField", nil), [:], "vectorField"),
                (with("distanceThreshold", "near"), [:], "distanceThreshold"),
                (with("distanceThreshold", "NaN"), [:], "must be a number, not NaN"),
                (with("distanceThreshold", ["value": .bool(true)]), [:], "distanceThreshold: must be a number"),
                (with("queryVector", FirestoreRESTTests.names.json(.vector([1, .nan]))), [:], "every component must be a finite number"),
                (with("queryVector", FirestoreRESTTests.names.json(.vector([.infinity, 0]))), [:], "every component must be a finite number"),
                (with("oops", 1), [:], "unknown field 'oops'"),
                (with("distanceResultField", "__name__"), [:], "are reserved"),
                (with("distanceResultField", "embedding.d"), [:], "inside the vector field"),
                (.map(good.merging(["distanceMeasure": "COSINE", "queryVector": FirestoreRESTTests.names.json(.vector([0, 0]))]) { $1 }), [:], "not all zeros"),
                (.map(good), ["offset": 1], "structuredQuery.offset: cannot be combined with findNearest"),
                (.map(good), ["limit": 2], "structuredQuery.limit: cannot be combined with findNearest"),
                (.map(good), ["startAt": ["values": [["stringValue": "x"]]]], "structuredQuery.startAt: cannot be combined"),
            ]
            for (find, extra, message) in cases {
                let query = Value.map(["from": [["collectionId": "vectors"]], "findNearest": find].merging(extra) { $1 })
                let r = try await rest.post("runQuery", ["structuredQuery": query])
                #expect(r.status == 400, "\(message): \(r.json)")
                #expect(r.json["error"]?["message"]?.stringValue?.contains(message) == true, "\(message): \(r.json)")
            }
            let aggregation = try await rest.post("runAggregationQuery", ["structuredAggregationQuery": [
                "structuredQuery": ["from": [["collectionId": "vectors"]], "findNearest": .map(good)], "aggregations": [["count": .emptyMap]]]])
            #expect(aggregation.status == 400, "\(aggregation.json)")
            #expect(aggregation.json["error"]?["message"]?.stringValue?.contains("vector search") == true)
        }
    }
}
