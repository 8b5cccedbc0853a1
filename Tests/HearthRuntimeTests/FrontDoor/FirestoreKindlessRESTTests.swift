import Foundation
import HearthHTTP
import HearthModel
import HearthStore
@_spi(Internals) @testable import HearthRuntime
import HearthTesting
import Testing

/// Recursive deletes over Firestore's REST API, in the requests real tools send (written from
/// their sources): firebase-tools' `firestore:delete` (src/firestore/delete.ts) and
/// google-cloud-firestore's `Query.recursive()` (base_query.py). Both find what to delete with a
/// kindless query (a `from` without `collectionId`) bounded by numeric-id names such as
/// `users/__id-9223372036854775808__`, then delete it with commits.
@Suite("Firestore REST: kindless queries and recursive deletes")
struct FirestoreKindlessRESTTests {
    static let minID = "__id-9223372036854775808__"
    static let tree = [
        "users/alice", "users/alice/items/i1", "users/alice/items/i1/notes/n1", "users/bob", "users/bob/tags/t",
        "users/123", "users/_x", "users-old/u", "users0/u", "usersa/u", "other/doc", "other/doc/sub/s1", "other/doc/sub/s1/deeper/d",
    ]

    static func seed(_ door: DoorFixture) async throws {
        try await door.runtime.store.commit(try tree.map { .set(try DocumentPath($0), ["n": 1]) })
    }

    static func remaining(_ door: DoorFixture) async throws -> Set<String> {
        Set(try await door.runtime.store.query(QuerySpec(collectionID: "", allDescendants: true)).map(\.path.description))
    }

    /// The names in a runQuery answer (which holds one element with only a readTime when empty).
    static func names(_ answer: (status: Int, json: Value), _ rest: RESTClient) throws -> [String] {
        #expect(answer.status == 200, "\(answer.json)")
        return try #require(answer.json.arrayValue).compactMap { $0["document"]?["name"]?.stringValue }
            .map { String(Substring($0.utf8.dropFirst(rest.root.utf8.count + 1))) }  // bytes: see combiningMarkRootCollection
    }

    /// firebase-tools' delete of a path: query a page of descendants, delete them in a commit,
    /// go on after the last name until a page comes back empty. Returns every name it deleted.
    static func firebaseToolsDelete(_ path: String, recursive: Bool, rest: RESTClient, version: String = "v1", page: Int = 3) async throws -> [String] {
        var segments = path.split(separator: "/").map(String.init)
        let isDocument = segments.count % 2 == 0
        if !isDocument { segments.removeLast() }
        let parent = ([rest.root] + segments).joined(separator: "/")
        var deleted: [String] = []
        if isDocument {
            let r = try await rest.post("commit", ["writes": [["delete": .string(rest.name(path))]]])
            #expect(r.status == 200, "\(r.json)")
        }
        var startAfter: String?
        for _ in 0..<50 {
            var query: [String: Value] = [
                "limit": .int(Int64(page)),
                "from": [["allDescendants": .bool(recursive)]],
                "select": ["fields": [["fieldPath": "__name__"]]],
                "orderBy": [["field": ["fieldPath": "__name__"]]],
            ]
            if !isDocument {
                func bound(_ op: String, _ name: String) -> Value {
                    ["fieldFilter": ["field": ["fieldPath": "__name__"], "op": .string(op), "value": ["referenceValue": .string(name)]]]
                }
                query["where"] = ["compositeFilter": ["op": "AND", "filters": [
                    bound("GREATER_THAN_OR_EQUAL", "\(rest.root)/\(path)/\(minID)"),
                    bound("LESS_THAN", "\(rest.root)/\(path)\u{0}/\(minID)"),
                ]]]
            }
            if let startAfter { query["startAt"] = ["values": [["referenceValue": .string(startAfter)]], "before": false] }
            let body = JSONWriter.string(["structuredQuery": .map(query)])
            let r = try await rest.door.send("POST", "/\(version)/\(parent):runQuery",
                                             headers: [("Content-Type", "application/json"), ("Authorization", rest.authorization ?? "")], body: body)
            let found = try names((r.status, (try? JSONParser.parse(r.body)) ?? .string(r.text)), rest)
            if found.isEmpty { break }
            // select __name__ answers names with no fields.
            let commit = try await rest.post("commit", ["writes": .array(found.map { ["delete": .string(rest.name($0))] })])
            #expect(commit.status == 200, "\(commit.json)")
            deleted += found
            startAfter = rest.name(found.last!)
        }
        return deleted
    }

    @Test("firebase-tools' `firestore:delete -r` on a collection removes it and everything beneath it, and nothing beside it")
    func deleteCollectionRecursively() async throws {
        try await withREST { door, rest in
            try await Self.seed(door)
            let deleted = try await Self.firebaseToolsDelete("users", recursive: true, rest: rest)
            let expected = Self.tree.filter { $0.hasPrefix("users/") }
            // Numeric ids sort first, so users/123 and users/_x fall inside the range too.
            #expect(deleted == expected.sorted { try! DocumentPath($0) < DocumentPath($1) })
            #expect(try await Self.remaining(door) == Set(Self.tree).subtracting(expected))
        }
    }

    @Test("firebase-tools' `firestore:delete -r` on a document, over /v1beta1 as older releases call it")
    func deleteDocumentRecursively() async throws {
        try await withREST { door, rest in
            try await Self.seed(door)
            let deleted = try await Self.firebaseToolsDelete("other/doc", recursive: true, rest: rest, version: "v1beta1")
            #expect(deleted == ["other/doc/sub/s1", "other/doc/sub/s1/deeper/d"])
            #expect(try await Self.remaining(door) == Set(Self.tree).subtracting(["other/doc", "other/doc/sub/s1", "other/doc/sub/s1/deeper/d"]))
        }
    }

    @Test("`firestore:delete --shallow` on a collection removes only its own documents")
    func deleteShallow() async throws {
        try await withREST { door, rest in
            try await Self.seed(door)
            let deleted = try await Self.firebaseToolsDelete("users", recursive: false, rest: rest, page: 100)
            #expect(Set(deleted) == ["users/alice", "users/bob", "users/123", "users/_x"])
            #expect(try await Self.remaining(door).contains("users/alice/items/i1"))
        }
    }

    @Test("google-cloud-firestore's recursive(): the root's kindless query between startAt and endAt cursors")
    func pythonRecursive() async throws {
        try await withREST { door, rest in
            try await Self.seed(door)
            // What the generated client sends: proto3 JSON leaves out the empty collectionId; the
            // explicit empty string means the same.
            for selector: Value in [["allDescendants": true], ["collectionId": "", "allDescendants": true]] {
                let r = try await rest.post("runQuery", ["structuredQuery": [
                    "from": [selector],
                    "select": ["fields": [["fieldPath": "__name__"]]],
                    "orderBy": [["field": ["fieldPath": "__name__"], "direction": "ASCENDING"]],
                    "startAt": ["values": [["referenceValue": .string(rest.name("users/\(Self.minID)"))]], "before": true],
                    "endAt": ["values": [["referenceValue": .string(rest.name("users\u{0}/\(Self.minID)"))]]],
                    "limit": 5000,
                ]])
                #expect(try Self.names(r, rest) == Self.tree.filter { $0.hasPrefix("users/") }.sorted { try! DocumentPath($0) < DocumentPath($1) })
            }
            // Its count, as runAggregationQuery.
            let count = try await rest.post("runAggregationQuery", ["structuredAggregationQuery": [
                "structuredQuery": ["from": [["allDescendants": true]]], "aggregations": [["alias": "n", "count": [:]]]]])
            #expect(count.json.arrayValue?.first?["result"]?["aggregateFields"]?["n"]?["integerValue"] == .string("\(Self.tree.count)"), "\(count.json)")
        }
    }

    @Test("GET with an empty collection id lists the documents of every collection directly under the parent, paged, as listDocuments does")
    func listAcrossCollections() async throws {
        try await withREST { door, rest in
            try await Self.seed(door)
            func names(_ r: (status: Int, json: Value)) -> [String] {
                (r.json["documents"]?.arrayValue ?? []).compactMap { $0["name"]?.stringValue.map { String($0.dropFirst(rest.root.count + 1)) } }
            }
            // Directly under users/alice: items/i1, not items/i1/notes/n1.
            #expect(names(try await rest.send("GET", "/users/alice/")) == ["users/alice/items/i1"])
            // Under other/doc/sub/s1: its deeper collection; under a document with none, nothing.
            #expect(names(try await rest.send("GET", "/other/doc/sub/s1/")) == ["other/doc/sub/s1/deeper/d"])
            #expect(try await rest.send("GET", "/users/bob/tags/t/").json == .emptyMap)
            // At the root: every root collection's documents, in name order, a page at a time.
            let all = ["other/doc", "users/_x", "users/123", "users/alice", "users/bob", "users-old/u", "users0/u", "usersa/u"]
            var seen: [String] = []
            var token = ""
            for _ in 0..<10 {
                let page = try await rest.send("GET", "/", query: "pageSize=3" + (token.isEmpty ? "" : "&pageToken=" + PercentEncoding.encodeQueryValue(token)))
                #expect(page.status == 200, "\(page.json)")
                seen += names(page)
                guard let next = page.json["nextPageToken"]?.stringValue else { break }
                token = next
            }
            #expect(seen == all.sorted { try! DocumentPath($0) < DocumentPath($1) })
            // Without a collection id there is nothing to show missing, and only __name__ orders.
            let missing = try await rest.send("GET", "/users/alice/", query: "showMissing=true")
            #expect(missing.status == 400 && missing.json["error"]?["message"] == "collection id must be set when show_missing is true", "\(missing.json)")
            #expect(try await rest.send("GET", "/users/alice/", query: "orderBy=n").status == 400)
            // The document itself is still read without the slash.
            #expect(try await rest.send("GET", "/users/alice").json["name"] == .string(rest.name("users/alice")))
        }
    }

    @Test("clients run kindless queries only where the rules allow every collection beneath the parent")
    func underRules() async throws {
        let rules = (try? String(contentsOfFile: packageRoot + "/firestore.rules", encoding: .utf8)) ?? ""
        try await withREST(rules: rules) { door, rest in
            try await door.runtime.store.commit([.set(try DocumentPath("members/alice/items/a"), ["n": 1]),
                                                 .set(try DocumentPath("members/alice/items/a/notes/x"), ["n": 2]),
                                                 .set(try DocumentPath("members/alice/profiles/secrets"), ["fcmToken": "t"])])
            var alice = rest
            alice.authorization = "Bearer " + (try await door.idToken("alice"))
            func kindless(under parent: String, descendants: Bool) async throws -> (status: Int, json: Value) {
                try await alice.send("POST", (parent.isEmpty ? "" : "/" + parent) + ":runQuery",
                                     ["structuredQuery": ["from": [["allDescendants": .bool(descendants)]]]])
            }
            // Under an item every collection is covered by the catch-all rule.
            let own = try await kindless(under: "members/alice/items/a", descendants: true)
            #expect(try Self.names(own, rest) == ["members/alice/items/a/notes/x"])
            // Under the member, the collections include profiles, whose secrets document no client
            // may read, so no rule covers the whole query; the root, no rule at all.
            for (parent, descendants) in [("members/alice", true), ("members/alice", false), ("", true)] {
                let denied = try await kindless(under: parent, descendants: descendants)
                #expect(denied.status == 403, "\(parent): \(denied.json)")
                #expect(denied.json["error"]?["status"] == "PERMISSION_DENIED")
            }
        }
    }

    @Test("a root collection whose id starts with a combining mark is reachable by name, listed and queried")
    func combiningMarkRootCollection() async throws {
        try await withREST { door, rest in
            // "/\u{301}" is one Character: names are split and compared on bytes.
            let create = try await rest.send("POST", "/%CC%81x", ["fields": ["n": ["integerValue": "1"]]], query: "documentId=d")
            #expect(create.status == 200, "\(create.json)")
            #expect(create.json["name"] == .string(rest.name("\u{301}x/d")))
            let batch = try await rest.post("batchGet", ["documents": [.string(rest.name("\u{301}x/d"))]])
            #expect(batch.json.arrayValue?.first?["found"]?["name"] == .string(rest.name("\u{301}x/d")), "\(batch.json)")
            let listed = try await rest.get("%CC%81x")
            #expect(listed.json["documents"]?.arrayValue?.count == 1, "\(listed.json)")
            let query = try await rest.post("runQuery", ["structuredQuery": ["from": [["collectionId": "\u{301}x"]]]])
            #expect(try Self.names(query, rest) == ["\u{301}x/d"])
        }
    }

    @Test("partitionQuery splits a collection group into ranges that cover every document once, paged, as getPartitions asks")
    func partitions() async throws {
        try await withREST { door, rest in
            let paths = (0..<10).map { "g/p\($0 % 3)/items/i\($0)" } + ["items/top", "other/x"]
            try await door.runtime.store.commit(try paths.map { .set(try DocumentPath($0), ["n": 1]) })
            let group: Value = ["from": [["collectionId": "items", "allDescendants": true]], "orderBy": [["field": ["fieldPath": "__name__"], "direction": "ASCENDING"]]]
            func cursors(_ body: [String: Value]) async throws -> (names: [String], token: String?) {
                let r = try await rest.post("partitionQuery", .map(body))
                #expect(r.status == 200, "\(r.json)")
                let names = (r.json["partitions"]?.arrayValue ?? []).compactMap { $0["values"]?.arrayValue?.first?["referenceValue"]?.stringValue }
                return (names, r.json["nextPageToken"]?.stringValue)
            }
            let (split, token) = try await cursors(["structuredQuery": group, "partitionCount": "3"])
            #expect(split.count == 3 && token == nil, "\(split)")
            // Up to the first, between each two, from the last: every item once, in order.
            var covered: [String] = []
            for (i, bound) in ([nil] + split.map(Optional.some)).enumerated() {
                var q = group
                if case .map(var m) = q {
                    if let bound { m["startAt"] = ["values": [["referenceValue": .string(bound)]], "before": true] }
                    if i < split.count { m["endAt"] = ["values": [["referenceValue": .string(split[i])]], "before": true] }
                    q = .map(m)
                }
                let page = try Self.names(try await rest.post("runQuery", ["structuredQuery": q]), rest)
                #expect(!page.isEmpty, "partition \(i) is empty")
                covered += page
            }
            let items = paths.filter { $0.contains("items/") }.sorted { try! DocumentPath($0) < DocumentPath($1) }
            #expect(covered == items)
            // Paged: two, then the rest after the token; more asked than documents allow: n - 1.
            let first = try await cursors(["structuredQuery": group, "partitionCount": 3, "pageSize": 2])
            #expect(first.names == Array(split.prefix(2)) && first.token != nil)
            let second = try await cursors(["structuredQuery": group, "partitionCount": 3, "pageSize": 2, "pageToken": .string(first.token ?? "")])
            #expect(second.names == [split[2]] && second.token == nil)
            #expect(try await cursors(["structuredQuery": group, "partitionCount": 1000]).names.count == items.count - 1)
            // Documents added between pages: the next page's cursors still come after the last one.
            try await door.runtime.store.commit(try (0..<6).map { .set(try DocumentPath("a/x\($0)/items/early"), [:]) })
            let later = try await cursors(["structuredQuery": group, "partitionCount": 3, "pageSize": 2, "pageToken": .string(first.token ?? "")])
            let byName = { (name: String) in try DocumentPath(String(Substring(name.utf8.dropFirst(rest.root.utf8.count + 1)))) }
            #expect(try later.names.allSatisfy { try byName(first.names.last!) < byName($0) } && later.names.count <= 1, "\(later.names)")
            let lone: Value = ["from": [["collectionId": "other", "allDescendants": true]]]
            #expect(try await cursors(["structuredQuery": lone, "partitionCount": 5]).names.isEmpty)
            // What Firestore refuses, and who may ask.
            let bad: [([String: Value], String)] = [
                (["structuredQuery": group, "partitionCount": 0], "partitionCount: must be positive"),
                (["structuredQuery": group], "partitionCount: is required"),
                (["structuredQuery": ["from": [["collectionId": "items"]]], "partitionCount": 2], "a partition query reads a collection group"),
                (["structuredQuery": ["from": [["collectionId": "items", "allDescendants": true]], "limit": 3], "partitionCount": 2], "structuredQuery.limit"),
                (["structuredQuery": ["from": [["collectionId": "items", "allDescendants": true]], "orderBy": [["field": ["fieldPath": "n"]]]], "partitionCount": 2],
                 "ordered by __name__ ascending only"),
                (["structuredQuery": group, "partitionCount": 2, "pageToken": "garbage!"], "pageToken"),
                // A count past Int.max in a crafted token once overflowed; it is refused.
                (["structuredQuery": group, "partitionCount": 2, "pageToken": .string(Base64.encodeURL(Array("9223372036854775807\nitems/top".utf8)))], "pageToken"),
                (["structuredQuery": group, "partitionCount": 2, "pageToken": 5], "pageToken: must be a string"),
                (["structuredQuery": group, "partitionCount": 2, "pageSize": -1], "pageSize"),
                (["structuredQuery": ["from": [["collectionId": "items", "allDescendants": true]], "startAt": ["values": [["referenceValue": .string(rest.name("items/top"))]]]],
                  "partitionCount": 2], "structuredQuery.startAt"),
                (["structuredQuery": group, "partitionCount": 2, "readTime": "2024-01-01T00:00:00Z"], "readTime"),
            ]
            for (body, message) in bad {
                let r = try await rest.post("partitionQuery", .map(body))
                #expect(r.status == 400 && r.json["error"]?["message"]?.stringValue?.contains(message) == true, "\(body): \(r.json)")
            }
            var client = rest
            client.authorization = "Bearer " + (try await door.idToken("alice"))
            #expect(try await client.post("partitionQuery", ["structuredQuery": group, "partitionCount": 2]).status == 403)
        }
    }

    @Test("units' queries name a collection: the boundary refuses an empty collection id instead of reading everything")
    func unitsNameACollection() throws {
        #expect(throws: HTTPSError.invalidArgument("a query needs a collection id (got an empty one)")) {
            _ = try DocumentServices.unitQuery(QuerySpec(collectionID: "", allDescendants: true))
        }
        #expect(try DocumentServices.unitQuery(QuerySpec(group: "items")).collectionID == "items")
    }

    @Test("bad kindless queries and misplaced numeric ids get INVALID_ARGUMENT naming the problem; nothing is written")
    func badRequests() async throws {
        try await withREST { door, rest in
            try await Self.seed(door)
            let cases: [(Value, String)] = [
                (["from": [["allDescendants": true]], "where": ["fieldFilter": ["field": ["fieldPath": "n"], "op": "EQUAL", "value": ["integerValue": "1"]]]],
                 "a kindless query (one without a collection id) can only filter and order on __name__, not 'n'"),
                (["from": [["allDescendants": true]], "orderBy": [["field": ["fieldPath": "n"]]]], "not 'n'"),
                (["from": [["collectionId": 5]]], "structuredQuery.from[0].collectionId: must be a string (got integer)"),
                (["from": [["allDescendants": "yes"]]], "structuredQuery.from[0].allDescendants: must be a boolean (got string)"),
                (["from": [["collectionId": "users", "kind": "x"]]], "structuredQuery.from[0]: unknown field 'kind'"),
                (["from": [["allDescendants": true]], "where": ["fieldFilter": ["field": ["fieldPath": "__name__"], "op": "GREATER_THAN",
                                                                              "value": ["referenceValue": .string(rest.name("users/__x__"))]]]],
                 "ids of the form __.*__ are reserved ('__x__')"),
            ]
            for (query, message) in cases {
                let r = try await rest.post("runQuery", ["structuredQuery": query])
                #expect(r.status == 400, "\(query): \(r.json)")
                #expect(r.json["error"]?["message"]?.stringValue?.contains(message) == true, "\(r.json)")
            }
            // A numeric id bounds queries; documents and stored references cannot have one.
            let create = try await rest.send("POST", "/users", ["fields": [:]], query: "documentId=__id7__")
            #expect(create.status == 400, "\(create.json)")
            let reference = try await rest.post("commit", ["writes": [["update": ["name": .string(rest.name("users/alice")),
                "fields": ["r": ["referenceValue": .string(rest.name("users/__id7__"))]]]]]])
            #expect(reference.status == 400, "\(reference.json)")
            #expect(try await Self.remaining(door) == Set(Self.tree))
            let alice = try await door.runtime.store.get(try DocumentPath("users/alice"))
            #expect(alice?.fields == ["n": 1])
        }
    }
}

/// A unit's requests bounded by size as Firestore bounds the Admin SDKs' (HostServices.sizeRefusal).
@Suite("Unit request sizes")
struct UnitRequestSizeTests {
    static func frame<M: WireEncodable>(_ operation: Boundary.Operation, _ message: M) -> [UInt8] {
        Boundary.frame(Boundary.Header(kind: .request, operation: operation, invocation: 1), message)
    }

    static func refusal(_ frame: [UInt8]) -> String? {
        frame.withUnsafeBytes { bytes in
            HostServices.sizeRefusal(try! Boundary.header(bytes), bytes)
        }
    }

    @Test("a commit's writes past 10 MiB are refused in Firestore's words; its tasks' payloads do not count")
    func commitWrites() throws {
        let blob = Value.string(String(repeating: "x", count: 1_000_000))
        let writes = try (0..<11).map { DocumentWrite.set(try DocumentPath("c/d\($0)"), ["s": blob]) }
        #expect(Self.refusal(Self.frame(.commit, Boundary.Commit(writes: writes))) == DocumentLimits.requestTooLarge)
        #expect(Self.refusal(Self.frame(.commitTransaction, Boundary.CommitTransaction(transaction: 7, writes: writes))) == DocumentLimits.requestTooLarge)
        // Two documents and eleven 1 MB task payloads: a 13 MB frame whose writes are 2 MB.
        let tasks = (0..<11).map { _ in TaskSpec(queue: "q", data: blob) }
        let mixed = Self.frame(.commit, Boundary.Commit(writes: Array(writes.prefix(2)), enqueues: tasks))
        #expect(mixed.count > DocumentLimits.maxRequestBytes)
        #expect(Self.refusal(mixed) == nil)
        #expect(Self.refusal(Self.frame(.commit, Boundary.Commit(writes: Array(writes.prefix(10))))) == nil)
    }

    @Test("any request past what a host reads from a worker is refused, in-process too, naming its size")
    func pastTheFrame() throws {
        let blob = Value.string(String(repeating: "y", count: 1_000_000))
        let tasks = (0..<70).map { _ in TaskSpec(queue: "q", data: blob) }
        let frame = Self.frame(.commit, Boundary.Commit(writes: [], enqueues: tasks))
        #expect(Self.refusal(frame) == HostServices.largeRequest(frame.count))
        #expect(HostServices.largeRequest(frame.count).contains("larger than \(WorkerProcess.maxWorkerFrame) bytes"))
    }
}
