import HearthModel
import HearthStore
@_spi(Internals) @testable import HearthRuntime
import Testing

/// runAggregationQuery's count, sum and avg over HTTP, with the answers Google's Firestore
/// emulator gives for the same documents and requests (checked side by side): a sum or an average
/// reads its field's index, so the query runs as if ordered by every aggregated field, and a
/// document without one of them is left out of all the query's aggregations, count included.
@Suite("Firestore REST: aggregations")
struct FirestoreAggregationRESTTests {
    /// d1…d7: `a` an int, a string, null, absent, absent, a double, an array; `b` only on d4
    /// (5), d6 (1) and d7 (NaN).
    static func seed(_ door: DoorFixture) async throws {
        let docs: [(String, [String: Value])] = [
            ("d1", ["a": 1]), ("d2", ["a": "s"]), ("d3", ["a": .null]), ("d4", ["b": 5]), ("d5", [:]),
            ("d6", ["a": 2.5, "b": 1]), ("d7", ["a": [1], "b": .double(.nan)]),
        ]
        try await door.runtime.store.commit(try docs.map { .set(try DocumentPath("agg/\($0.0)"), $0.1) })
    }

    static func count(_ alias: String) -> Value { ["alias": .string(alias), "count": .emptyMap] }
    static func sum(_ alias: String, _ field: String) -> Value { ["alias": .string(alias), "sum": ["field": ["fieldPath": .string(field)]]] }
    static func avg(_ alias: String, _ field: String) -> Value { ["alias": .string(alias), "avg": ["field": ["fieldPath": .string(field)]]] }

    /// The aggregate fields of one request, or the refusal's status and message.
    static func run(_ rest: RESTClient, _ aggregations: [Value], query: [String: Value] = [:]) async throws -> Value {
        let structured: Value = .map(["from": [["collectionId": "agg"]]].merging(query) { $1 })
        let r = try await rest.post("runAggregationQuery", ["structuredAggregationQuery": ["structuredQuery": structured, "aggregations": .array(aggregations)]])
        guard r.status == 200 else { return ["status": .int(Int64(r.status)), "message": r.json["error"]?["message"] ?? .null] }
        return r.json.arrayValue?.first?["result"]?["aggregateFields"] ?? .null
    }

    @Test("count alone counts every document; beside a sum or an average, only those holding its field")
    func countBesideSum() async throws {
        try await withREST { door, rest in
            try await Self.seed(door)
            #expect(try await Self.run(rest, [Self.count("n")]) == ["n": ["integerValue": "7"]])
            // a is on five documents, whatever its value; 1 + 2.5 are its numbers.
            #expect(try await Self.run(rest, [Self.count("n"), Self.sum("s", "a")]) == ["n": ["integerValue": "5"], "s": ["doubleValue": 3.5]])
            #expect(try await Self.run(rest, [Self.count("n"), Self.avg("s", "a")]) == ["n": ["integerValue": "5"], "s": ["doubleValue": 1.75]])
            // a and b together: d6 and d7 only.
            #expect(try await Self.run(rest, [Self.count("n"), Self.sum("s", "a"), Self.sum("t", "b")])
                    == ["n": ["integerValue": "2"], "s": ["doubleValue": 2.5], "t": ["doubleValue": "NaN"]])
            #expect(try await Self.run(rest, [Self.sum("s", "a"), Self.avg("t", "a")]) == ["s": ["doubleValue": 3.5], "t": ["doubleValue": 1.75]])
            // Two counts together are unaffected; a capped one stops at its cap.
            #expect(try await Self.run(rest, [Self.count("n"), ["alias": "m", "count": ["upTo": "2"]]])
                    == ["n": ["integerValue": "7"], "m": ["integerValue": "2"]])
        }
    }

    @Test("offset and limit count documents in the aggregated field's order, after the query's own")
    func limitInFieldOrder() async throws {
        try await withREST { door, rest in
            try await Self.seed(door)
            // Ordered by b: d7 (NaN, first among numbers), d6 (1), d4 (5).
            #expect(try await Self.run(rest, [Self.count("n"), Self.sum("s", "b")], query: ["limit": 2])
                    == ["n": ["integerValue": "2"], "s": ["doubleValue": "NaN"]])
            #expect(try await Self.run(rest, [Self.count("n"), Self.sum("s", "b")], query: ["offset": 1])
                    == ["n": ["integerValue": "2"], "s": ["integerValue": "6"]])
            // An order by __name__ as sent, as the SDKs send it to page with a cursor, leaves the
            // aggregated field no place: refused, as Firestore refuses it.
            for order: Value in [[["field": ["fieldPath": "__name__"]]], [["field": ["fieldPath": "a"]], ["field": ["fieldPath": "__name__"]]]] {
                let refused = try await Self.run(rest, [Self.count("n"), Self.sum("s", "b")], query: ["orderBy": order, "limit": 2])
                #expect(refused["status"] == 400, "\(refused)")
                #expect(refused["message"]?.stringValue?.contains("fields [b] after __name__") == true, "\(refused)")
            }
            // Ordered by b already, or without __name__, a cursor keeps its place.
            #expect(try await Self.run(rest, [Self.count("n"), Self.sum("s", "b")], query: [
                "orderBy": [["field": ["fieldPath": "b"]], ["field": ["fieldPath": "__name__"]]],
                "startAt": ["values": [["integerValue": "1"], ["referenceValue": .string(rest.name("agg/d6"))]], "before": false]])
                    == ["n": ["integerValue": "1"], "s": ["integerValue": "5"]])
            #expect(try await Self.run(rest, [Self.count("n"), Self.sum("s", "b")], query: [
                "orderBy": [["field": ["fieldPath": "a"]]], "startAt": ["values": [["doubleValue": 2.5]], "before": true]])
                    == ["n": ["integerValue": "2"], "s": ["doubleValue": "NaN"]])
            // An explicit order by a keeps only the documents holding a too.
            #expect(try await Self.run(rest, [Self.count("n"), Self.sum("s", "b")], query: ["orderBy": [["field": ["fieldPath": "a"]]]])
                    == ["n": ["integerValue": "2"], "s": ["doubleValue": "NaN"]])
        }
    }

    @Test("a sum of integers is an integer when the total fits in 64 bits, whatever the running total did, else a double")
    func integerSums() async throws {
        try await withREST { door, rest in
            try await door.runtime.store.commit([
                .set(try DocumentPath("agg/x1"), ["v": .int(Int64.min), "w": .int(Int64.max)]),
                .set(try DocumentPath("agg/x2"), ["v": -2, "w": 1]),
                .set(try DocumentPath("agg/x3"), ["v": .int(1 << 62), "w": 2]),
            ])
            // Int64.min - 2 + 2^62 leaves the range on the way (in name order) and ends inside it.
            #expect(try await Self.run(rest, [Self.sum("s", "v")]) == ["s": ["integerValue": .string(String(Int64.min + (1 << 62) - 2))]])
            // Int64.max + 3 does not fit: a double.
            #expect(try await Self.run(rest, [Self.sum("s", "w")]) == ["s": ["doubleValue": .double(Double(Int64.max) + 3)]])
            #expect(try await Self.run(rest, [Self.sum("s", "missing")]) == ["s": ["integerValue": "0"]])
            #expect(try await Self.run(rest, [Self.avg("s", "missing")]) == ["s": ["nullValue": .null]])
        }
    }

    @Test("a sum or an average of __name__ is refused, naming the aggregation")
    func documentNames() async throws {
        try await withREST { door, rest in
            try await Self.seed(door)
            for aggregation in [Self.sum("s", "__name__"), Self.avg("s", "__name__")] {
                let refused = try await Self.run(rest, [Self.count("n"), aggregation])
                #expect(refused["status"] == 400, "\(refused)")
                #expect(refused["message"]?.stringValue?.contains("aggregations[1]") == true, "\(refused)")
                #expect(refused["message"]?.stringValue?.contains("__name__") == true, "\(refused)")
            }
        }
    }
}
