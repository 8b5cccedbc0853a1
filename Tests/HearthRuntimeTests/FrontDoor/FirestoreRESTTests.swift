import Foundation
import HearthHTTP
import HearthModel
@_spi(Internals) @testable import HearthRuntime
import HearthTesting
import Testing

/// A REST client for one front door: paths under the database's documents, as the admin or as a
/// signed-in client.
struct RESTClient: Sendable {
    let door: DoorFixture
    let project: String
    /// `Authorization` value; nil sends none.
    var authorization: String?

    var root: String { "projects/\(project)/databases/(default)/documents" }
    func name(_ path: String) -> String { root + "/" + path }

    func send(_ method: String, _ suffix: String, _ body: Value? = nil, query: String = "") async throws -> (status: Int, json: Value) {
        var headers = [("Content-Type", "application/json")]
        if let authorization { headers.append(("Authorization", authorization)) }
        let url = "/v1/" + root + suffix + (query.isEmpty ? "" : "?" + query)
        let r = try await door.send(method, url, headers: headers, body: body.map { JSONWriter.string($0) } ?? "")
        let json = (try? JSONParser.parse(r.body)) ?? .string(r.text)
        return (r.status, json)
    }

    func get(_ path: String, query: String = "") async throws -> (status: Int, json: Value) { try await send("GET", "/" + path, query: query) }
    func post(_ verb: String, _ body: Value) async throws -> (status: Int, json: Value) { try await send("POST", ":" + verb, body) }

    /// The names a collection's listing returns, page after page (at most 10 pages).
    func listNames(_ collection: String, query: String) async throws -> [String] {
        var names: [String] = []
        var token = ""
        for _ in 0..<10 {
            let page = try await get(collection, query: query + (token.isEmpty ? "" : "&pageToken=\(token)"))
            #expect(page.status == 200, "\(page.json)")
            names += (page.json["documents"]?.arrayValue ?? []).compactMap { $0["name"]?.stringValue }
            guard let next = page.json["nextPageToken"]?.stringValue else { break }
            token = next
        }
        return names
    }

    /// A document's fields, typed, for create and patch bodies.
    static func fields(_ fields: [String: Value], _ names: FirestoreJSON) -> Value { ["fields": names.fieldsJSON(fields)] }
}

let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path

func withREST<T: Sendable>(units: [String] = ["EchoUnit"], rules: String? = nil, project: String = "demo-rest",
                           _ body: @escaping @Sendable (DoorFixture, RESTClient) async throws -> T) async throws -> T {
    var rulesFile: String?
    if let rules {
        rulesFile = NSTemporaryDirectory() + "hearth-rules-" + UUID().uuidString + ".rules"
        try rules.write(toFile: rulesFile!, atomically: true, encoding: .utf8)
    }
    defer { if let rulesFile { try? FileManager.default.removeItem(atPath: rulesFile) } }
    return try await withFrontDoor(units: units, configure: { config in
        config.project = project
        config.firestore.rules = rulesFile
    }) { door in
        try await body(door, RESTClient(door: door, project: project, authorization: "Bearer owner"))
    }
}

@Suite("Firestore REST v1 over HTTP")
struct FirestoreRESTTests {
    static let names = FirestoreJSON(project: "demo-rest")

    /// Every value type, including the awkward ones (NaN, infinities, the int64 bounds, nanos).
    static let everyType: [String: Value] = [
        "null": .null, "yes": true, "no": false,
        "int": .int(42), "min": .int(Int64.min), "max": .int(Int64.max), "negative": .int(-7),
        "double": .double(2.5), "nan": .double(.nan), "inf": .double(.infinity), "ninf": .double(-.infinity), "zero": .double(-0.0),
        "time": .timestamp(Timestamp(seconds: 1_714_554_000, nanos: 123_456_000)), "epoch": .timestamp(.zero),
        "string": "héllo ✓ \"quoted\"\n", "empty": "",
        "bytes": .bytes([0, 1, 2, 250, 255]), "ref": .reference("members/alice/items/a"),
        "geo": .geoPoint(GeoPoint(latitude: 37.5, longitude: -122.25)),
        "array": [1, "two", .null, ["nested": true]], "emptyArray": .array([]),
        "map": ["a": ["b": ["c": 1]], "list": [.timestamp(.zero)]], "emptyMap": .emptyMap,
    ]

    @Test("every value type round-trips through createDocument and get in the typed JSON form")
    func valueRoundTrip() async throws {
        try await withREST { _, rest in
            let created = try await rest.send("POST", "/things", RESTClient.fields(Self.everyType, Self.names), query: "documentId=all")
            #expect(created.status == 200, "\(created.json)")
            #expect(created.json["name"] == .string(rest.name("things/all")))
            let got = try await rest.get("things/all")
            #expect(got.status == 200)
            let fields = try Self.names.fields(got.json["fields"], field: "fields")
            #expect(fields == Self.everyType)
            // The wire forms Google's clients expect.
            #expect(got.json["fields"]?["int"] == ["integerValue": "42"])
            #expect(got.json["fields"]?["max"] == ["integerValue": "9223372036854775807"])
            #expect(got.json["fields"]?["nan"] == ["doubleValue": "NaN"])
            #expect(got.json["fields"]?["ninf"] == ["doubleValue": "-Infinity"])
            #expect(got.json["fields"]?["time"] == ["timestampValue": "2024-05-01T09:00:00.123456Z"])
            #expect(got.json["fields"]?["bytes"] == ["bytesValue": "AAEC+v8="])
            #expect(got.json["fields"]?["ref"] == ["referenceValue": .string(rest.name("members/alice/items/a"))])
            #expect(got.json["fields"]?["emptyArray"] == ["arrayValue": .emptyMap])
            #expect(got.json["createTime"] == got.json["updateTime"])
            #expect(created.json["fields"] == got.json["fields"])
        }
    }

    @Test("values are accepted in every form Google's JSON mapping allows")
    func valueForms() async throws {
        try await withREST { _, rest in
            let body: Value = ["fields": [
                "i": ["integerValue": 5], "s": ["integerValue": "-6"], "d": ["doubleValue": "1.5"], "di": ["doubleValue": 3],
                "n": ["nullValue": "NULL_VALUE"], "b": ["bytesValue": "-_8"], "t": ["timestampValue": "2024-05-01T18:00:00+09:00"],
                "a": ["arrayValue": [:]], "m": ["mapValue": [:]],
            ]]
            let r = try await rest.send("POST", "/forms", body, query: "documentId=f")
            #expect(r.status == 200, "\(r.json)")
            let doc = try #require(try await rest.door.runtime.store.get(DocumentPath("forms/f")))
            #expect(doc.fields == ["i": 5, "s": -6, "d": 1.5, "di": .double(3), "n": .null, "b": .bytes([251, 255]),
                                   "t": .timestamp(Timestamp(seconds: 1_714_554_000)), "a": .array([]), "m": .emptyMap])
        }
    }

    @Test("bad values and bad requests get INVALID_ARGUMENT naming the field; nothing is written", arguments: [
        (#"{"fields":{"x":{"integerValue":"99999999999999999999"}}}"#, "document.fields.x.integerValue"),
        (#"{"fields":{"x":{"integerValue":"1.5"}}}"#, "document.fields.x.integerValue"),
        (#"{"fields":{"x":{}}}"#, "document.fields.x"),
        (#"{"fields":{"x":{"stringValue":"a","integerValue":"1"}}}"#, "more than one kind"),
        (#"{"fields":{"x":{"fancyValue":1}}}"#, "unknown Value kind 'fancyValue'"),
        (#"{"fields":{"x":{"timestampValue":"yesterday"}}}"#, "document.fields.x.timestampValue"),
        (#"{"fields":{"x":{"timestampValue":"10000-01-01T00:00:00Z"}}}"#, "timestampValue"),
        (#"{"fields":{"x":{"bytesValue":"***"}}}"#, "bytesValue: must be base64"),
        (#"{"fields":{"x":{"referenceValue":"projects/other/databases/(default)/documents/a/b"}}}"#, "referenceValue"),
        (#"{"fields":{"x":{"referenceValue":"projects/demo-rest/databases/(default)/documents/a"}}}"#, "does not name a document"),
        (#"{"fields":{"x":{"geoPointValue":{"latitude":91,"longitude":0}}}}"#, "latitude"),
        (#"{"fields":{"x":{"arrayValue":{"values":[{"arrayValue":{}}]}}}}"#, "cannot directly contain another array"),
        (#"{"fields":{"x":{"mapValue":{"fields":5}}}}"#, "mapValue.fields"),
        (#"{"fields":"#, "Invalid JSON payload"),
        (#"[1,2]"#, "must be a JSON object"),
        (#"{"fields":{"x":{"doubleValue":"lots"}}}"#, "doubleValue"),
    ])
    func badValues(body: String, mentions: String) async throws {
        try await withREST { door, rest in
            let r = try await door.send("POST", "/v1/\(rest.root)/bad?documentId=one", headers: [("Authorization", "Bearer owner")], body: body)
            #expect(r.status == 400, "\(r.text)")
            let json = try JSONParser.parse(r.body)
            #expect(json["error"]?["status"] == "INVALID_ARGUMENT")
            #expect(json["error"]?["code"] == 400)
            #expect(json["error"]?["message"]?.stringValue?.contains(mentions) == true, "\(r.text)")
            #expect(try await door.runtime.store.get(DocumentPath("bad/one")) == nil)
        }
    }

    @Test("get: masks, 404 in Firestore's words, a bad database, readTime refused, unknown routes")
    func getAndErrors() async throws {
        try await withREST { door, rest in
            _ = try await rest.send("POST", "/members", RESTClient.fields(["a": 1, "b": ["c": 2, "d": 3]], Self.names), query: "documentId=alice")
            let masked = try await rest.get("members/alice", query: "mask.fieldPaths=a&mask.fieldPaths=b.c")
            #expect(try Self.names.fields(masked.json["fields"], field: "") == ["a": 1, "b": ["c": 2]])
            let missing = try await rest.get("members/nobody")
            #expect(missing.status == 404)
            #expect(missing.json["error"]?["message"] == .string("Document \"\(rest.name("members/nobody"))\" not found."))
            #expect(missing.json["error"]?["status"] == "NOT_FOUND")
            let otherDB = try await door.send("GET", "/v1/projects/demo-rest/databases/other/documents/members/alice", headers: [("Authorization", "Bearer owner")])
            #expect(otherDB.status == 404)
            let readTime = try await rest.get("members/alice", query: "readTime=2024-01-01T00:00:00Z")
            #expect(readTime.status == 400)
            #expect(readTime.json["error"]?["message"]?.stringValue?.contains("readTime") == true)
            let listen = try await rest.post("listen", [:])
            #expect(listen.status == 501)
            let badVerb = try await rest.send("GET", ":commit")
            #expect(badVerb.status == 404)
            let badPath = try await rest.get("members/alice/x/y/z")
            #expect(badPath.status == 200 || badPath.status == 400)
        }
    }

    @Test("list pages through a collection in name order or orderBy, and showMissing lists parents of subcollections")
    func listing() async throws {
        try await withREST { door, rest in
            let store = door.runtime.store
            for i in 0..<7 { try await store.commit([.set(try DocumentPath("items/i\(i)"), ["n": .int(Int64(i % 3)), "i": .int(Int64(i))])]) }
            try await store.commit([.set(try DocumentPath("items/ghost/sub/x"), ["deep": true])])
            #expect(try await rest.listNames("items", query: "pageSize=3") == (0..<7).map { rest.name("items/i\($0)") })
            let ordered = try await rest.get("items", query: "orderBy=n%20desc,i&mask.fieldPaths=i")
            let order = (ordered.json["documents"]?.arrayValue ?? []).compactMap { $0["fields"]?["i"]?["integerValue"]?.stringValue }
            #expect(order == ["2", "5", "1", "4", "0", "3", "6"])
            let withMissing = try await rest.get("items", query: "showMissing=true")
            let all = (withMissing.json["documents"]?.arrayValue ?? [])
            #expect(all.count == 8)
            #expect(all.contains { $0["name"] == .string(rest.name("items/ghost")) && $0["fields"] == nil && $0["createTime"] == nil })
            let badToken = try await rest.get("items", query: "pageToken=garbage!")
            #expect(badToken.status == 400)
            let badSize = try await rest.get("items", query: "pageSize=-1")
            #expect(badSize.status == 400)
        }
    }

    @Test("ids that are equal Swift strings but different bytes (NFC and NFD) are separate documents: listed, paged and merged apart")
    func canonicallyEquivalentIDs() async throws {
        try await withREST { door, rest in
            let nfc = "caf\u{E9}", nfd = "cafe\u{301}"
            try await door.runtime.store.commit([.set(try DocumentPath("u/\(nfc)"), ["n": 1]), .set(try DocumentPath("u/\(nfd)"), ["n": 2]),
                                                 .set(try DocumentPath("u/e\u{301}/sub/x"), [:]), .set(try DocumentPath("u/f"), ["n": 3])])
            // Pages of one with showMissing, in byte order: cafe\u{301} (…65 CC 81) < caf\u{E9} (…C3 A9)
            // < e\u{301} (65 CC 81) < f (66). Swift's `<=`, which puts é after f, skipped f after
            // e\u{301}'s page token, and took the two spellings of café for one.
            let names = try await rest.listNames("u", query: "showMissing=true&pageSize=1")
            #expect(names.map(UTF8Key.init) == ["u/\(nfd)", "u/\(nfc)", "u/e\u{301}", "u/f"].map { UTF8Key(rest.name($0)) })
            // An OR query matching both keeps both: its branches merge by name, on bytes.
            let either = try await rest.post("runQuery", ["structuredQuery": ["from": [["collectionId": "u"]], "where": ["compositeFilter": ["op": "OR", "filters": [
                ["fieldFilter": ["field": ["fieldPath": "n"], "op": "EQUAL", "value": ["integerValue": "1"]]],
                ["fieldFilter": ["field": ["fieldPath": "n"], "op": "EQUAL", "value": ["integerValue": "2"]]],
            ]]]]])
            #expect(either.json.arrayValue?.compactMap { $0["document"]?["fields"]?["n"]?["integerValue"]?.stringValue } == ["2", "1"], "\(either.json)")
        }
    }

    @Test("patch with updateMask removes masked fields the body leaves out; preconditions hold or fail as Firestore's do")
    func patchAndPreconditions() async throws {
        try await withREST { door, rest in
            let first = try await rest.send("PATCH", "/notes/n", RESTClient.fields(["a": 1, "b": 2, "c": 3], Self.names))
            #expect(first.status == 200, "\(first.json)")
            let masked = try await rest.send("PATCH", "/notes/n", RESTClient.fields(["a": 10], Self.names),
                                             query: "updateMask.fieldPaths=a&updateMask.fieldPaths=b")
            #expect(try Self.names.fields(masked.json["fields"], field: "") == ["a": 10, "c": 3])
            let created = try await rest.send("PATCH", "/notes/n", RESTClient.fields([:], Self.names), query: "currentDocument.exists=false")
            #expect(created.status == 409)
            #expect(created.json["error"]?["message"] == .string("Document already exists: \(rest.name("notes/n"))"))
            let missing = try await rest.send("PATCH", "/notes/none", RESTClient.fields(["x": 1], Self.names), query: "currentDocument.exists=true")
            #expect(missing.status == 404)
            #expect(missing.json["error"]?["message"] == .string("No document to update: \(rest.name("notes/none"))"))
            let stale = try await rest.send("PATCH", "/notes/n", RESTClient.fields(["x": 1], Self.names), query: "currentDocument.updateTime=2020-01-01T00:00:00Z")
            #expect(stale.status == 400)
            #expect(stale.json["error"]?["status"] == "FAILED_PRECONDITION")
            let current = try #require(masked.json["updateTime"]?.stringValue)
            let fresh = try await rest.send("PATCH", "/notes/n", RESTClient.fields(["x": 1], Self.names), query: "currentDocument.updateTime=\(current)")
            #expect(fresh.status == 200, "\(fresh.json)")
            let deleteMissing = try await rest.send("DELETE", "/notes/none", query: "currentDocument.exists=true")
            #expect(deleteMissing.status == 404)
            let deleted = try await rest.send("DELETE", "/notes/n")
            #expect(deleted.status == 200)
            #expect(deleted.json == .emptyMap)
            #expect(try await door.runtime.store.get(DocumentPath("notes/n")) == nil)
            let auto = try await rest.send("POST", "/notes", RESTClient.fields(["auto": true], Self.names))
            #expect(auto.json["name"]?.stringValue?.hasPrefix(rest.name("notes/")) == true)
            #expect(auto.json["name"]?.stringValue?.count == rest.name("notes/").count + 20)
        }
    }

    @Test("commit applies writes atomically with every field transform and reports their results")
    func commitTransforms() async throws {
        try await withREST { door, rest in
            let doc = rest.name("counters/c")
            try await door.runtime.store.commit([.set(try DocumentPath("counters/c"), ["n": 5, "big": 10, "small": 1.5, "tags": ["a", "b"], "mixed": 3])])
            let r = try await rest.post("commit", ["writes": [
                ["transform": ["document": .string(doc), "fieldTransforms": [
                    ["fieldPath": "n", "increment": ["integerValue": "2"]],
                    ["fieldPath": "big", "maximum": ["integerValue": "7"]],
                    ["fieldPath": "small", "minimum": ["integerValue": "1"]],
                    ["fieldPath": "mixed", "maximum": ["doubleValue": 3.0]],
                    ["fieldPath": "tags", "appendMissingElements": ["values": [["stringValue": "b"], ["stringValue": "c"]]]],
                    ["fieldPath": "gone", "removeAllFromArray": ["values": [["stringValue": "x"]]]],
                    ["fieldPath": "at", "setToServerValue": "REQUEST_TIME"],
                    ["fieldPath": "fresh", "maximum": ["doubleValue": 2.5]],
                ]]],
                ["update": ["name": .string(rest.name("counters/d")), "fields": ["v": ["integerValue": "1"]]],
                 "updateTransforms": [["fieldPath": "t", "setToServerValue": 1]], "currentDocument": ["exists": false]],
            ]])
            #expect(r.status == 200, "\(r.json)")
            let results = try #require(r.json["writeResults"]?.arrayValue)
            #expect(results.count == 2)
            let commitTime = try #require(r.json["commitTime"]?.stringValue)
            let transformResults = try #require(results[0]["transformResults"]?.arrayValue)
            #expect(transformResults.map { try? Self.names.value($0, field: "") } ==
                    [7, 10, 1, 3, .null, .null, .timestamp(Timestamp(rfc3339: commitTime)!), 2.5], "array transforms answer null, as Firestore's")
            #expect(try await door.runtime.store.get(DocumentPath("counters/c"))?.fields["tags"] == ["a", "b", "c"])
            let stored = try #require(try await door.runtime.store.get(DocumentPath("counters/c")))
            #expect(stored.fields["small"] == 1)
            #expect(stored.fields["mixed"] == 3)
            #expect(try await door.runtime.store.get(DocumentPath("counters/d"))?.fields["t"]?.timestampValue != nil)
            // One failing write fails them all: nothing of this commit lands.
            let failed = try await rest.post("commit", ["writes": [
                ["update": ["name": .string(rest.name("counters/e")), "fields": [:]]],
                ["update": ["name": .string(rest.name("counters/d")), "fields": [:]], "currentDocument": ["exists": false]],
            ]])
            #expect(failed.status == 409)
            #expect(try await door.runtime.store.get(DocumentPath("counters/e")) == nil)
            let badTransform = try await rest.post("commit", ["writes": [["transform": ["document": .string(doc), "fieldTransforms": [
                ["fieldPath": "n", "increment": ["stringValue": "1"]]]]]]])
            #expect(badTransform.status == 400)
            #expect(badTransform.json["error"]?["message"]?.stringValue?.contains("writes[0].transform.fieldTransforms[0].increment") == true)
        }
    }

    @Test("commit checks verify writes (firebase-js-sdk's transactions: a document read and not written) and writes nothing when one fails")
    func verifyWrites() async throws {
        try await withREST { _, rest in
            let read = try await rest.send("PATCH", "/notes/read", RESTClient.fields(["n": 1], Self.names))
            let readTime = try #require(read.json["updateTime"]?.stringValue)
            func verify(_ doc: String, _ pre: Value) -> Value { ["verify": .string(rest.name(doc)), "currentDocument": pre] }
            let written: Value = ["update": ["name": .string(rest.name("notes/written")), "fields": ["n": ["integerValue": "2"]]]]
            // As read: the write goes through; each write has its result in its place, the verify an empty one.
            let ok = try await rest.post("commit", ["writes": [verify("notes/read", ["updateTime": .string(readTime)]),
                                                               verify("notes/absent", ["exists": false]), written]])
            #expect(ok.status == 200, "\(ok.json)")
            let results = ok.json["writeResults"]?.arrayValue ?? []
            #expect(results.count == 3)
            #expect(results.prefix(2).allSatisfy { $0 == [:] }, "\(results)")
            #expect(results.last?["updateTime"] != nil)
            #expect(try await rest.get("notes/read").json["updateTime"]?.stringValue == readTime, "a verify changes nothing")
            #expect(try await rest.get("notes/absent").status == 404)
            // Changed since it was read, or there when it was read as missing: FAILED_PRECONDITION, nothing written.
            _ = try await rest.send("PATCH", "/notes/read", RESTClient.fields(["n": 3], Self.names))
            let later: Value = ["update": ["name": .string(rest.name("notes/later")), "fields": [:]]]
            for stale in [verify("notes/read", ["updateTime": .string(readTime)]), verify("notes/written", ["exists": false])] {
                let failed = try await rest.post("commit", ["writes": [stale, later]])
                #expect(failed.status == 400, "\(failed.json)")
                #expect(failed.json["error"]?["status"] == "FAILED_PRECONDITION")
                #expect(try await rest.get("notes/later").status == 404)
            }
            // In a transaction: a verify that fails ends it (its locks go with it), read-write or read-only.
            for options: Value in [["readWrite": [:]], ["readOnly": [:]]] {
                let begun = try await rest.post("beginTransaction", ["options": options])
                let txn = try #require(begun.json["transaction"])
                let stale = try await rest.post("commit", ["transaction": txn, "writes": [verify("notes/read", ["updateTime": .string(readTime)])]])
                #expect(stale.json["error"]?["status"] == "FAILED_PRECONDITION", "\(options): \(stale.json)")
                let after = try await rest.post("commit", ["transaction": txn, "writes": []])
                #expect(after.json["error"]?["status"] == "INVALID_ARGUMENT", "\(options): the transaction ended: \(after.json)")
            }
            // A verify alone, and badly formed ones.
            let alone = try await rest.post("commit", ["writes": [verify("notes/written", ["exists": true])]])
            #expect(alone.status == 200 && alone.json["writeResults"]?.arrayValue?.count == 1, "\(alone.json)")
            for bad: Value in [["verify": .string(rest.name("notes/read"))], ["verify": 7, "currentDocument": ["exists": true]],
                               ["verify": .string(rest.name("notes/read")), "currentDocument": ["exists": true], "delete": .string(rest.name("notes/read"))],
                               ["verify": .string(rest.name("notes/read")), "currentDocument": ["updateTime": "not a time"]],
                               ["verify": .string(rest.name("notes/read")), "currentDocument": ["updateTime": 99999999999999]],
                               ["verify": .string(rest.name("notes/read")), "currentDocument": ["exists": "yes"]],
                               ["verify": .string(rest.name("../../x")), "currentDocument": ["exists": true]]] {
                let refused = try await rest.post("commit", ["writes": [bad]])
                #expect(refused.status == 400 && refused.json["error"]?["status"] == "INVALID_ARGUMENT", "\(bad): \(refused.json)")
            }
        }
    }

    @Test("batchWrite reports a status per write; batchGet answers found and missing, beginning a transaction when asked")
    func batchWriteAndGet() async throws {
        try await withREST { door, rest in
            try await door.runtime.store.commit([.set(try DocumentPath("b/3"), [:])])
            let w = try await rest.post("batchWrite", ["writes": [
                ["update": ["name": .string(rest.name("b/1")), "fields": ["x": ["integerValue": "1"]]]],
                ["update": ["name": .string(rest.name("b/3")), "fields": [:]], "currentDocument": ["exists": false]],
                ["delete": .string(rest.name("b/2"))],
            ]])
            #expect(w.status == 200, "\(w.json)")
            let statuses = try #require(w.json["status"]?.arrayValue)
            #expect(statuses.count == 3)
            #expect(statuses[0] == .emptyMap && statuses[2] == .emptyMap)
            #expect(statuses[1]["code"] == 6)
            #expect(w.json["writeResults"]?.arrayValue?[0]["updateTime"] != nil)
            let g = try await rest.post("batchGet", ["documents": [.string(rest.name("b/1")), .string(rest.name("b/2"))], "newTransaction": ["readWrite": [:]]])
            let items = try #require(g.json.arrayValue)
            #expect(items.count == 2)
            #expect(items[0]["found"]?["name"] == .string(rest.name("b/1")))
            #expect(items[1]["missing"] == .string(rest.name("b/2")))
            let txn = try #require(items[0]["transaction"])
            #expect(door.runtime.store.transactions.openCount == 1)
            let rolled = try await rest.post("rollback", ["transaction": txn])
            #expect(rolled.status == 200)
            #expect(door.runtime.store.transactions.openCount == 0)
            // Duplicate names are elided, as Firestore's reference says: one answer per document.
            let twice = try await rest.post("batchGet", ["documents": [.string(rest.name("b/1")), .string(rest.name("b/2")),
                                                                       .string(rest.name("b/1")), .string(rest.name("b/2"))]])
            #expect(twice.json.arrayValue?.map { $0["found"]?["name"] ?? $0["missing"] ?? .null } == [.string(rest.name("b/1")), .string(rest.name("b/2"))])
            let ids = try await rest.post("listCollectionIds", [:])
            #expect(ids.json["collectionIds"] == ["b"])
            #expect(door.runtime.store.transactions.openCount == 0)
        }
    }

    @Test("a commit and a batchWrite hold any number of writes; a body over 10 MiB is refused in Firestore's words")
    func writeCountsAndRequestSize() async throws {
        try await withREST { door, rest in
            let commit = try await rest.post("commit", ["writes": .array((0..<600).map { i in
                ["update": ["name": .string(rest.name("many/d\(i)")), "fields": ["i": ["integerValue": .string("\(i)")]]]]
            })])
            #expect(commit.status == 200, "\(commit.json)")
            #expect(commit.json["writeResults"]?.arrayValue?.count == 600)
            let batch = try await rest.post("batchWrite", ["writes": .array((0..<600).map { i in ["delete": .string(rest.name("many/d\(i)"))] })])
            #expect(batch.status == 200 && batch.json["status"]?.arrayValue?.count == 600, "\(batch.json)")
            #expect(try await door.runtime.store.count(QuerySpec(collection: try CollectionPath("many"))) == 0)
            // Firestore's maximum API request size is 10 MiB.
            let padding = String(repeating: "x", count: 10 << 20)
            let big = try await door.send("POST", "/v1/\(rest.root):commit", headers: [("Content-Type", "application/json"), ("Authorization", "Bearer owner")],
                                          body: "{\"writes\": [{\"update\": {\"name\": \"\(rest.name("big/d"))\", \"fields\": {\"s\": {\"stringValue\": \"\(padding)\"}}}}]}")
            #expect(big.status == 400)
            #expect(big.text.contains("Request payload size exceeds the limit: 10485760 bytes."), "\(big.text.prefix(300))")
            #expect(try await door.runtime.store.get(try DocumentPath("big/d")) == nil)
        }
    }

    @Test("writes over REST are ordinary commits: they fire document triggers and reach the change feed")
    func restWritesFireTriggers() async throws {
        try await withREST(units: ["BenchUnit"]) { door, rest in
            try await door.runtime.startDeliveries(driving: true)
            let before = door.runtime.store.engine.lastSequence
            let r = try await rest.send("POST", "/bench", RESTClient.fields(["title": "from REST", "n": 3], Self.names), query: "documentId=r1")
            #expect(r.status == 200, "\(r.json)")
            let store = door.runtime.store
            let logged = await eventually(seconds: 60) { store.engine.lastSequence >= before + 2 }
            #expect(logged)
            let log = try await store.get(DocumentPath("benchLog/r1"))
            #expect(log?.fields["n"] == 3)
            let changes = try await store.engine.changes(after: before, limit: 10)
            #expect(changes.first?.path.description == "bench/r1")
        }
    }

    @Test("a REST transaction that read a document a unit's transaction then changed fails with ABORTED and writes nothing")
    func transactionConflictsWithUnit() async throws {
        try await withREST(units: ["DocsUnit"]) { door, rest in
            let store = door.runtime.store
            try await store.commit([.set(try DocumentPath("counters/c"), ["n": 0])])
            let begun = try await rest.post("beginTransaction", [:])
            let txn = try #require(begun.json["transaction"])
            let read = try await rest.send("GET", "/counters/c", query: "transaction=\(PercentEncoding.encodeQueryValue(txn.stringValue ?? ""))")
            #expect(read.status == 200, "\(read.json)")
            // The unit's transaction waits for the REST transaction's lock; roll the latter back
            // after the unit started, through a concurrent commit that must conflict.
            async let unit = door.call("docs", "transaction")
            let commit = try await rest.post("commit", ["transaction": txn, "writes": [
                ["update": ["name": .string(rest.name("counters/c")), "fields": ["n": ["integerValue": "100"]]]]]])
            let unitResult = try await unit
            #expect(unitResult.status == 200, "\(unitResult.text)")
            if commit.status == 200 {
                // The REST transaction committed first; the unit's ran after it, on its result.
                #expect(try await store.get(DocumentPath("counters/c"))?.fields["n"] == 1)
            } else {
                #expect(commit.status == 409, "\(commit.json)")
                #expect(commit.json["error"]?["status"] == "ABORTED")
                #expect(try await store.get(DocumentPath("counters/c"))?.fields["n"] == 1)
            }
            // A plain write slipped between a transaction's read and its commit aborts it.
            let second = try #require(try await rest.post("beginTransaction", [:]).json["transaction"])
            _ = try await rest.post("batchGet", ["documents": [.string(rest.name("counters/c"))], "transaction": second])
            try await store.commit([.set(try DocumentPath("counters/c"), ["n": 50])])
            let conflicted = try await rest.post("commit", ["transaction": second, "writes": [
                ["update": ["name": .string(rest.name("counters/c")), "fields": ["n": ["integerValue": "7"]]]]]])
            #expect(conflicted.status == 409, "\(conflicted.json)")
            #expect(conflicted.json["error"]?["status"] == "ABORTED")
            #expect(try await store.get(DocumentPath("counters/c"))?.fields["n"] == 50)
            // Read-only transactions refuse writes.
            let readOnly = try #require(try await rest.post("beginTransaction", ["options": ["readOnly": [:]]]).json["transaction"])
            let refused = try await rest.post("commit", ["transaction": readOnly, "writes": [["delete": .string(rest.name("counters/c"))]]])
            #expect(refused.status == 400)
            #expect(try await store.get(DocumentPath("counters/c")) != nil)
        }
    }
}

@Suite("Firestore REST queries against the store's")
struct FirestoreRESTQueryDifferentialTests {
    static let names = FirestoreJSON(project: "demo-rest")

    /// The filter as the SDKs send it: `== null` and `!= null` as the unary IS_NULL and
    /// IS_NOT_NULL (a field filter's == or != with null matches nothing, as in Firestore).
    static func fieldFilter(_ f: QuerySpec.Filter) -> Value {
        if f.value == .null && (f.op == .equal || f.op == .notEqual) {
            return ["unaryFilter": ["field": ["fieldPath": .string(f.field.description)], "op": f.op == .equal ? "IS_NULL" : "IS_NOT_NULL"]]
        }
        let op: String
        switch f.op {
        case .equal: op = "EQUAL"
        case .notEqual: op = "NOT_EQUAL"
        case .lessThan: op = "LESS_THAN"
        case .lessThanOrEqual: op = "LESS_THAN_OR_EQUAL"
        case .greaterThan: op = "GREATER_THAN"
        case .greaterThanOrEqual: op = "GREATER_THAN_OR_EQUAL"
        case .in: op = "IN"
        case .notIn: op = "NOT_IN"
        case .arrayContains: op = "ARRAY_CONTAINS"
        case .arrayContainsAny: op = "ARRAY_CONTAINS_ANY"
        }
        return ["fieldFilter": ["field": ["fieldPath": .string(f.field.description)], "op": .string(op), "value": names.json(f.value)]]
    }

    static func randomFilter(_ g: inout SplitMix64) -> QuerySpec.Filter {
        let values: [Value] = [.int(0), .int(1), .int(2), .int(3), .double(1.5), .string("b"), .null, .bool(true)]
        let v = values[Int(g.next() % UInt64(values.count))]
        let w = values[Int(g.next() % UInt64(values.count))]
        switch g.next() % 9 {
        case 0: return QuerySpec.Filter(FieldPath(segments: ["a"]), .equal, v)
        case 1: return QuerySpec.Filter(FieldPath(segments: ["a"]), .lessThan, v)
        case 2: return QuerySpec.Filter(FieldPath(segments: ["b"]), .greaterThanOrEqual, v)
        case 3: return QuerySpec.Filter(FieldPath(segments: ["a"]), .in, [v, w])
        case 4: return QuerySpec.Filter(FieldPath(segments: ["tags"]), .arrayContains, v)
        case 5: return QuerySpec.Filter(FieldPath(segments: ["tags"]), .arrayContainsAny, [v, w])
        case 6: return QuerySpec.Filter(FieldPath(segments: ["a"]), .notEqual, v)
        case 7: return QuerySpec.Filter(FieldPath(segments: ["m", "k"]), .lessThanOrEqual, v)
        default: return QuerySpec.Filter(FieldPath(segments: ["b"]), .notIn, [v, w])
        }
    }

    @Test("randomized: runQuery over REST returns what the store's own query returns, in order; OR returns the union of its branches")
    func differential() async throws {
        try await withREST { door, rest in
            let store = door.runtime.store
            var g = SplitMix64(seed: 20261201)
            let values: [Value] = [.int(0), .int(1), .int(2), .int(3), .double(1.5), .double(.nan), .string("b"), .null, .bool(true)]
            var writes: [DocumentWrite] = []
            for i in 0..<80 {
                var fields: [String: Value] = [:]
                if g.next() % 5 != 0 { fields["a"] = values[Int(g.next() % UInt64(values.count))] }
                if g.next() % 4 != 0 { fields["b"] = values[Int(g.next() % UInt64(values.count))] }
                if g.next() % 3 != 0 { fields["tags"] = .array((0..<Int(g.next() % 3)).map { _ in values[Int(g.next() % UInt64(values.count))] }) }
                if g.next() % 2 == 0 { fields["m"] = ["k": values[Int(g.next() % UInt64(values.count))]] }
                writes.append(.set(try DocumentPath("d/doc\(String(format: "%03d", i))"), fields))
            }
            try await store.commit(writes)
            var compared = 0, refusedAlike = 0
            for _ in 0..<150 {
                var spec = QuerySpec(collection: try CollectionPath("d"))
                spec.filters = (0..<Int(1 + g.next() % 2)).map { _ in Self.randomFilter(&g) }
                if g.next() % 2 == 0 { spec.orderBy = [QuerySpec.Order(FieldPath(segments: [["a", "b"][Int(g.next() % 2)]]), g.next() % 2 == 0 ? .ascending : .descending)] }
                if g.next() % 3 == 0 { spec.limit = Int(1 + g.next() % 10) }
                let offset = g.next() % 4 == 0 ? Int(g.next() % 5) : 0
                var q: [String: Value] = ["from": [["collectionId": "d"]]]
                q["where"] = spec.filters.count == 1 ? Self.fieldFilter(spec.filters[0])
                    : ["compositeFilter": ["op": "AND", "filters": .array(spec.filters.map(Self.fieldFilter))]]
                if !spec.orderBy.isEmpty {
                    q["orderBy"] = .array(spec.orderBy.map { ["field": ["fieldPath": .string($0.field.description)], "direction": $0.direction == .ascending ? "ASCENDING" : "DESCENDING"] })
                }
                if let limit = spec.limit { q["limit"] = .int(Int64(limit)) }
                if offset > 0 { q["offset"] = .int(Int64(offset)) }
                let r = try await rest.post("runQuery", ["structuredQuery": .map(q)])
                var expected = spec
                expected.limit = spec.limit.map { $0 + offset }
                let direct: [StoredDocument]
                do { direct = try await store.query(expected) } catch let e as HTTPSError {
                    #expect(r.status == 400, "store refused (\(e.message)) but REST answered \(r.status): \(q)")
                    refusedAlike += 1
                    continue
                }
                #expect(r.status == 200, "\(r.json) for \(q)")
                let got = (r.json.arrayValue ?? []).compactMap { $0["document"]?["name"]?.stringValue }
                #expect(got == direct.dropFirst(offset).map { rest.name($0.path.description) }, "\(q)")
                compared += 1

                // The OR of the two filters: the union of each alone.
                guard spec.filters.count == 2 else { continue }
                let or: Value = ["compositeFilter": ["op": "OR", "filters": .array(spec.filters.map(Self.fieldFilter))]]
                let orResult = try await rest.post("runQuery", ["structuredQuery": ["from": [["collectionId": "d"]], "where": or]])
                var union: Set<String> = []
                var valid = true
                for f in spec.filters {
                    var one = QuerySpec(collection: try CollectionPath("d"))
                    one.filters = [f]
                    do { union.formUnion(try await store.query(one).map { rest.name($0.path.description) }) } catch { valid = false }
                }
                guard valid, orResult.status == 200 else { continue }
                let orNames = (orResult.json.arrayValue ?? []).compactMap { $0["document"]?["name"]?.stringValue }
                #expect(Set(orNames) == union || spec.filters.contains { $0.op.isInequality }, "\(or)")
                #expect(orNames.count == Set(orNames).count, "an OR returned a document twice: \(or)")
            }
            #expect(compared > 60, "compared \(compared), refused alike \(refusedAlike)")
        }
    }
}

@Suite("Firestore REST: hostile requests and recording")
struct FirestoreRESTHostileTests {
    @Test("hostile requests get clear 4xx errors and the server keeps serving", arguments: [
        ("GET", "/d?pageSize=99999999999", "", "pageSize"),
        ("GET", "/d?orderBy=a%20sideways", "", "orderBy"),
        ("GET", "/d?orderBy=%60unclosed", "", "orderBy"),
        ("GET", "/d/x?mask.fieldPaths=", "", "mask.fieldPaths"),
        // A segment that is not a simple name must be quoted, as Firestore requires (and the SDKs do).
        ("GET", "/d/x?mask.fieldPaths=x%20y", "", "Invalid property path \"x y\""),
        ("GET", "/d/x?mask.fieldPaths=a.1n", "", "Unquoted property paths must match"),
        ("GET", "/d/x?mask.fieldPaths=%C3%A9", "", "Invalid property path"),
        ("POST", ":runQuery", #"{"structuredQuery":{"from":[{"collectionId":"d"}],"select":{"fields":[{"fieldPath":"`x y`.`é`._n1"}]}}}"#, ""),
        ("POST", ":runQuery", #"{"structuredQuery":{"from":[{"collectionId":"d"}],"where":{"fieldFilter":{"field":{"fieldPath":"a-b"},"op":"EQUAL","value":{"integerValue":"1"}}}}}"#, "Invalid property path"),
        ("GET", "/d/x?transaction=AAAA", "", "transaction"),
        ("POST", ":runQuery", #"{"structuredQuery":{"from":[{"collectionId":"d"}],"limit":-1}}"#, "limit"),
        ("POST", ":runQuery", #"{"structuredQuery":{"from":[{"collectionId":"d"}],"offset":2147483648}}"#, "offset"),
        ("POST", ":runQuery", #"{"structuredQuery":{"from":[{"collectionId":"d"}],"offset":2147483647,"limit":2147483647}}"#, ""),
        ("POST", ":runQuery", #"{"structuredQuery":{"from":[{"collectionId":"d"}],"startAt":{"values":[{"integerValue":"1"},{"integerValue":"2"}]}}}"#, "Cursor has too many values"),
        ("POST", ":runQuery", #"{"structuredQuery":{"from":[]}}"#, "from"),
        ("POST", ":runQuery", #"{"structuredQuery":{"from":[{"collectionId":"a/b"}]}}"#, "collection"),
        ("POST", ":runQuery", #"{"structuredQuery":{"from":[{"collectionId":"d"}],"where":{"fieldFilter":{"field":{"fieldPath":"a"},"op":"IN","value":{"integerValue":"1"}}}}}"#, "needs a non-empty array"),
        ("POST", ":runQuery", #"{"structuredQuery":{"from":[{"collectionId":"d"}],"where":{"compositeFilter":{"op":"XOR","filters":[]}}}}"#, "op"),
        ("POST", ":runQuery", #"{"structuredQuery":{"from":[{"collectionId":"d"}],"findNearest":{}}}"#, "findNearest"),
        ("POST", ":runQuery", #"{"structuredQuery":{"from":[{"collectionId":"d"}],"bogus":1}}"#, "bogus"),
        ("POST", ":runAggregationQuery", #"{"structuredAggregationQuery":{"structuredQuery":{"from":[{"collectionId":"d"}]},"aggregations":[]}}"#, "aggregation"),
        ("POST", ":commit", #"{"writes":[{"update":{"name":"projects/demo-rest/databases/(default)/documents/d/x"},"delete":"projects/demo-rest/databases/(default)/documents/d/x"}]}"#, "exactly one"),
        ("POST", ":commit", #"{"writes":[{"update":{"name":"projects/demo-rest/databases/(default)/documents/d/x"},"currentDocument":{"exists":"yes"}}]}"#, "currentDocument.exists"),
        ("POST", ":commit", #"{"writes":[{"transform":{"document":"projects/demo-rest/databases/(default)/documents/d/x","fieldTransforms":[{"fieldPath":"n","setToServerValue":"TOMORROW"}]}}]}"#, "setToServerValue"),
        ("POST", ":commit", #"{"transaction":"bm90IGFuIGlk"}"#, "transaction"),
        ("POST", ":batchGet", #"{"documents":["projects/demo-rest/databases/(default)/documents/d"]}"#, "does not name a document"),
        ("POST", ":beginTransaction", #"{"options":{"readOnly":{},"readWrite":{}}}"#, "not both"),
    ])
    func hostile(method: String, suffix: String, body: String, mentions: String) async throws {
        try await withREST { door, rest in
            let r = try await door.send(method, "/v1/\(rest.root)\(suffix)", headers: [("Authorization", "Bearer owner")], body: body)
            let json = (try? JSONParser.parse(r.body)) ?? .null
            if mentions.isEmpty {
                #expect(r.status == 200, "\(r.text)")
            } else {
                #expect((400..<500).contains(r.status) || r.status == 501, "\(r.status) \(r.text)")
                #expect(json["error"]?["message"]?.stringValue?.contains(mentions) == true, "\(r.text)")
            }
            #expect(try await rest.get("d/missing").status == 404, "the server still answers")
        }
    }

    @Test("a document nested past the depth limit, or a body past the size limit, is refused without harm")
    func deepAndLarge() async throws {
        try await withREST { door, rest in
            var value = #"{"integerValue":"1"}"#
            for _ in 0..<800 { value = #"{"mapValue":{"fields":{"a":"# + value + "}}}" }
            let deep = try await door.send("POST", "/v1/\(rest.root)/d?documentId=deep", headers: [("Authorization", "Bearer owner")],
                                           body: #"{"fields":{"x":"# + value + "}}")
            #expect(deep.status == 400, "\(deep.status)")
            var fine = #"{"integerValue":"1"}"#
            for _ in 0..<10 { fine = #"{"mapValue":{"fields":{"a":"# + fine + "}}}" }
            let ok = try await door.send("POST", "/v1/\(rest.root)/d?documentId=ok", headers: [("Authorization", "Bearer owner")],
                                         body: #"{"fields":{"x":"# + fine + "}}")
            #expect(ok.status == 200, "\(ok.text)")
            #expect(try await door.runtime.store.get(DocumentPath("d/deep")) == nil)
        }
    }

    @Test("REST writes are recorded as external inputs while recording")
    func recorded() async throws {
        let dir = NSTemporaryDirectory() + "hearth-rest-record-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try await withREST { door, rest in
            try await door.runtime.startRecording(Recorder.Options(directory: dir, maxFileBytes: 1 << 20, process: "test"), changes: false)
            let r = try await rest.send("PATCH", "/notes/n", ["fields": ["t": ["stringValue": "hello"]]])
            #expect(r.status == 200)
            _ = await door.runtime.stopRecording()
            let recording = try Recording.read(dir)
            let writes = recording.inputs.compactMap { input -> [DocumentWrite]? in
                if case .write(let commit) = input.kind { return commit.writes } else { return nil }
            }
            #expect(writes.flatMap { $0 }.map(\.path.description) == ["notes/n"])
        }
    }
}
