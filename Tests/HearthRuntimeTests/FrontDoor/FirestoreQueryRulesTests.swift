import HearthModel
@_spi(Internals) @testable import HearthRuntime
import Testing

/// What Firestore accepts and refuses in a structured query, and what a filter on null matches,
/// as Google's Firestore emulator answers the same requests (run side by side with Hearth while
/// writing these: the answers below are the emulator's).
@Suite("Firestore REST: query validation as Firestore's")
struct FirestoreQueryRulesTests {
    static func seed(_ door: DoorFixture) async throws {
        try await door.runtime.store.commit([
            .set(try DocumentPath("q/a"), ["n": 1, "tags": [1, "a"]]),
            .set(try DocumentPath("q/b"), ["n": .null, "tags": [2]]),
            .set(try DocumentPath("q/c"), ["n": 3]),
        ])
    }

    static func run(_ rest: RESTClient, _ query: Value) async throws -> (status: Int, names: [String], message: String?) {
        let r = try await rest.post("runQuery", ["structuredQuery": query])
        let names = (r.json.arrayValue ?? []).compactMap { $0["document"]?["name"]?.stringValue?.split(separator: "/").last.map(String.init) }
        return (r.status, names, r.json["error"]?["message"]?.stringValue)
    }

    static func field(_ f: String, _ op: String, _ v: Value) -> Value { ["fieldFilter": ["field": ["fieldPath": .string(f)], "op": .string(op), "value": v]] }

    @Test("refused as Firestore refuses them, in its words")
    func refusals() async throws {
        try await withREST { door, rest in
            try await Self.seed(door)
            let ref: Value = ["referenceValue": .string(rest.name("q/a"))]
            let cases: [(Value, String)] = [
                (["from": [["collectionId": "q"]], "where": Self.field("__name__", "EQUAL", ["stringValue": "a"])], "__key__ filter value must be a Key"),
                (["from": [["collectionId": "q"]], "where": Self.field("__name__", "IN", ["arrayValue": ["values": [["stringValue": "a"]]]])], "__key__ filter value must be a Key"),
                (["from": [["collectionId": "q"]], "orderBy": [["field": ["fieldPath": "__name__"]]], "startAt": ["values": [["stringValue": "a"]]]],
                 "Cursor __key__ value is not a document reference."),
                (["from": [["collectionId": "q"]], "startAt": ["values": [ref]]], "Cursor has too many values."),
                (["from": [["collectionId": "q"]], "orderBy": [["field": ["fieldPath": "n"]]], "startAt": ["values": [["integerValue": "1"], ref]]],
                 "Cursor has too many values."),
                (["from": [["collectionId": "q"]], "where": ["compositeFilter": ["op": "OR", "filters": [Self.field("n", "NOT_IN", ["arrayValue": ["values": [["integerValue": "1"]]]])]]]],
                 "'NOT_IN' cannot be used in the same query with 'IN', 'ARRAY_CONTAINS_ANY' or 'OR'."),
                // One of these in the whole query, across OR branches too.
                (["from": [["collectionId": "q"]], "where": ["compositeFilter": ["op": "OR", "filters": [
                    Self.field("n", "NOT_EQUAL", ["integerValue": "1"]), ["unaryFilter": ["field": ["fieldPath": "m"], "op": "IS_NOT_NULL"]]]]]],
                 "Only a single 'NOT_EQUAL', 'NOT_IN', 'IS_NOT_NAN', or 'IS_NOT_NULL' filter allowed per query."),
            ]
            for (query, message) in cases {
                let r = try await Self.run(rest, query)
                #expect(r.status == 400 && r.message == message, "\(query): \(r)")
            }
            // The whole order sent, __name__ included, takes a reference at its position.
            let ok = try await Self.run(rest, ["from": [["collectionId": "q"]], "orderBy": [["field": ["fieldPath": "n"]], ["field": ["fieldPath": "__name__"]]],
                                               "startAt": ["values": [["integerValue": "1"], ref], "before": false]])
            #expect(ok.status == 200 && ok.names == ["c"], "\(ok)")
        }
    }

    @Test("NaN in a field filter equals nothing: == NaN matches none, != NaN and NOT_IN [NaN] every non-null; IS_NAN and IS_NOT_NAN do the NaN matching")
    func nan() async throws {
        try await withREST { door, rest in
            try await door.runtime.store.commit([
                .set(try DocumentPath("nn/nan"), ["a": .double(.nan)]), .set(try DocumentPath("nn/null"), ["a": .null]),
                .set(try DocumentPath("nn/one"), ["a": 1]), .set(try DocumentPath("nn/x"), ["a": "x"]), .set(try DocumentPath("nn/missing"), ["z": 1]),
            ])
            let nan: Value = ["doubleValue": "NaN"]
            func names(_ w: Value) async throws -> [String] { try await Self.run(rest, ["from": [["collectionId": "nn"]], "where": w]).names.sorted() }
            func list(_ v: Value...) -> Value { ["arrayValue": ["values": .array(v)]] }
            #expect(try await names(Self.field("a", "EQUAL", nan)) == [])
            #expect(try await names(Self.field("a", "NOT_EQUAL", nan)) == ["nan", "one", "x"])
            #expect(try await names(Self.field("a", "NOT_IN", list(nan))) == ["nan", "one", "x"])
            #expect(try await names(Self.field("a", "NOT_IN", list(nan, ["integerValue": "1"]))) == ["nan", "x"])
            #expect(try await names(Self.field("a", "IN", list(nan))) == [])
            #expect(try await names(Self.field("a", "IN", list(nan, ["integerValue": "1"]))) == ["one"])
            #expect(try await names(["unaryFilter": ["field": ["fieldPath": "a"], "op": "IS_NAN"]]) == ["nan"])
            #expect(try await names(["unaryFilter": ["field": ["fieldPath": "a"], "op": "IS_NOT_NAN"]]) == ["one", "x"])
            // A range on null or NaN matches nothing, and so does not order the query: beside an
            // order by __name__ (which another inequality may not follow) it is accepted.
            for bound in [nan, ["nullValue": .null]] as [Value] {
                let byName = try await Self.run(rest, ["from": [["collectionId": "nn"]], "where": Self.field("a", "LESS_THAN", bound),
                                                       "orderBy": [["field": ["fieldPath": "__name__"]]]])
                #expect(byName.status == 200 && byName.names == [], "\(byName)")
            }
            let inequality = try await Self.run(rest, ["from": [["collectionId": "nn"]], "where": Self.field("a", "GREATER_THAN", ["integerValue": "0"]),
                                                       "orderBy": [["field": ["fieldPath": "__name__"]]]])
            #expect(inequality.status == 400 && inequality.message?.hasPrefix("order by clause cannot contain more fields after the key") == true, "\(inequality)")
        }
    }

    @Test("a field filter's == or != with null matches nothing; IS_NULL and IS_NOT_NULL do the matching; arrays of arrays are values to compare")
    func nullsAndNestedArrays() async throws {
        try await withREST { door, rest in
            try await Self.seed(door)
            let null: Value = ["nullValue": .null]
            #expect(try await Self.run(rest, ["from": [["collectionId": "q"]], "where": Self.field("n", "EQUAL", null)]).names == [])
            #expect(try await Self.run(rest, ["from": [["collectionId": "q"]], "where": Self.field("n", "NOT_EQUAL", null)]).names == [])
            #expect(try await Self.run(rest, ["from": [["collectionId": "q"]], "where": ["unaryFilter": ["field": ["fieldPath": "n"], "op": "IS_NULL"]]]).names == ["b"])
            #expect(try await Self.run(rest, ["from": [["collectionId": "q"]], "where": ["unaryFilter": ["field": ["fieldPath": "n"], "op": "IS_NOT_NULL"]]]).names == ["a", "c"])
            // OR with a branch that matches nothing is the other branch.
            let or: Value = ["compositeFilter": ["op": "OR", "filters": [Self.field("n", "EQUAL", null), Self.field("n", "EQUAL", ["integerValue": "3"])]]]
            #expect(try await Self.run(rest, ["from": [["collectionId": "q"]], "where": or]).names == ["c"])
            // IN with an array element compares whole arrays; an equality with an array of arrays
            // is accepted and matches nothing.
            let pair: Value = ["arrayValue": ["values": [["integerValue": "1"], ["stringValue": "a"]]]]
            let inPair = try await Self.run(rest, ["from": [["collectionId": "q"]], "where": Self.field("tags", "IN", ["arrayValue": ["values": [pair]]])])
            #expect(inPair.status == 200 && inPair.names == ["a"], "\(inPair)")
            let nested = try await Self.run(rest, ["from": [["collectionId": "q"]], "where": Self.field("tags", "EQUAL", ["arrayValue": ["values": [pair]]])])
            #expect(nested.status == 200 && nested.names == [], "\(nested)")
            // Documents still may not hold them.
            let write = try await rest.send("POST", "/q", ["fields": ["bad": ["arrayValue": ["values": [pair]]]]], query: "documentId=bad")
            #expect(write.status == 400, "\(write.json)")
        }
    }
}
