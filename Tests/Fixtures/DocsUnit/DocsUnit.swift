import Foundation
import HearthFunctions

/// A unit for tests that drives every part of the Documents client across the unit boundary.
/// Each callable takes a `case` name and returns what the client saw.
public enum DocsUnit: FunctionModule {
    public static let name = "DocsUnit"

    struct Note: Codable, Sendable, Equatable {
        var title: String
        var rank: Int
        var tags: [String]
        var due: Date?
        @ServerTimestamp var createdAt: Date?
    }

    public static func register(_ fn: inout FunctionRegistry) {
        fn.onCall("docs") { (req: CallableRequest<String>) -> Value in
            try await run(req.data, req.documents)
        }
        // The same cases over plain HTTP: GET /…/<case> answers the case's result as JSON.
        fn.onRequest("docsRequest") { req in
            let name = String(req.path.split(separator: "/").last ?? "")
            if name == "refused" { throw HTTPSError(.permissionDenied, "not for you") }
            return try HTTPResponse.json(try await run(name, req.context.documents))
        }
    }

    static func snapshot(_ s: DocumentSnapshot<[String: Value]>?) -> Value {
        guard let s else { return .null }
        return ["id": .string(s.id), "fields": .map(s.data)]
    }

    static func run(_ name: String, _ docs: Documents) async throws -> Value {
        let notes = try docs.collection("notes")
        switch name {
        case "codable":
            // Codable in and out; nil optionals become explicit nulls; @ServerTimestamp filled in.
            let ref = try notes.document("a")
            try await ref.set(Note(title: "a", rank: 1, tags: ["x"], due: nil))
            guard let read = try await ref.get(Note.self)?.data else { return "missing" }
            let raw = try await ref.get([String: Value].self)
            return ["title": .string(read.title), "createdAtSet": .bool(read.createdAt != nil),
                    "dueIsNull": .bool(raw?.data["due"] == .null), "keys": .array((raw?.data.keys.sorted() ?? []).map { .string($0) })]
        case "create-twice":
            let ref = try notes.document("once")
            try await ref.create(["n": 1] as [String: Value])
            do {
                try await ref.create(["n": 2] as [String: Value])
                return "second create succeeded"
            } catch let e as HTTPSError {
                return .string(e.code.rawValue)
            }
        case "merge-and-update":
            let ref = try notes.document("m")
            try await ref.set(["a": ["x": 1, "y": 2], "b": 1, "gone": true] as [String: Value])
            try await ref.set(["a": ["y": 20, "z": 30]] as [String: Value], merge: true)
            try await ref.update(["b": .increment(5), "a.x": .delete(), "gone": .delete(), "list": .arrayUnion(["p", "q"]), "when": .serverTimestamp()])
            try await ref.update(["list": .arrayRemove(["p"])])
            let s = try await ref.get([String: Value].self)
            var fields = s?.data ?? [:]
            fields["when"] = .bool(fields["when"]?.timestampValue != nil)
            return .map(fields)
        case "update-missing":
            do {
                try await notes.document("missing").update(["a": 1])
                return "updated"
            } catch let e as HTTPSError { return .string(e.code.rawValue) }
        case "batch":
            let batch = docs.batch()
            for i in 0..<5 { try batch.set(try notes.document("b\(i)"), ["i": .int(Int64(i))] as [String: Value]) }
            try batch.delete(try notes.document("b4"))
            let results = try await batch.commit()
            // A batch commits once: neither a second commit nor a later write goes anywhere.
            var refused: [Value] = []
            do { try await batch.commit() } catch let e as HTTPSError { refused.append(.string(e.code.rawValue)) }
            do { try batch.delete(try notes.document("b0")) } catch let e as HTTPSError { refused.append(.string(e.code.rawValue)) }
            return ["results": .int(Int64(results.count)), "count": .int(Int64(try await notes.count())), "refused": .array(refused)]
        case "batch-atomic":
            try await notes.document("exists").set(["v": 1] as [String: Value])
            let batch = docs.batch()
            try batch.set(try notes.document("new"), ["v": 1] as [String: Value])
            try batch.create(try notes.document("exists"), ["v": 2] as [String: Value])
            do { try await batch.commit() } catch {}
            return .bool(try await notes.document("new").get([String: Value].self) == nil)
        case "batch-sizes":
            // Firestore's limits: any number of writes in one commit; a request over 10 MiB is
            // refused, and so is one far past what a worker's host reads (nothing is written).
            let many = docs.batch()
            for i in 0..<600 { try many.set(try notes.document("m\(i)"), ["i": .int(Int64(i))] as [String: Value]) }
            let written = try await many.commit().count
            let blob = String(repeating: "x", count: 1_000_000)
            var refused: [Value] = []
            for count in [11, 70] {
                let big = docs.batch()
                for i in 0..<count { try big.set(try notes.document("big\(i)"), ["s": .string(blob)] as [String: Value]) }
                do { _ = try await big.commit(); refused.append("committed") } catch let e as HTTPSError {
                    refused.append(["code": .string(e.code.rawValue), "message": .string(e.message)])
                }
            }
            return ["written": .int(Int64(written)), "refused": .array(refused),
                    "bigStored": .bool(try await notes.document("big0").get([String: Value].self) != nil)]
        case "queries":
            for (i, t) in ["b", "a", "c", "a"].enumerated() {
                try await notes.document("q\(i)").set(Note(title: t, rank: i, tags: i % 2 == 0 ? ["even"] : ["odd"], due: nil))
            }
            let byTitle = try await notes.order(by: "title").order(by: "rank", descending: true).getDocuments([String: Value].self).map { Value.string($0.id) }
            let evens = try await notes.whereField("tags", arrayContains: "even").getDocuments([String: Value].self).map { Value.string($0.id) }
            let inList = try await notes.whereField("title", in: ["a", "c"]).getDocuments([String: Value].self).map { Value.string($0.id) }
            let notA = try await notes.whereField("title", isNotEqualTo: "a").getDocuments([String: Value].self).map { Value.string($0.id) }
            let ranked = try await notes.whereField("rank", isGreaterThanOrEqualTo: 1).order(by: "rank").limit(to: 2).getDocuments([String: Value].self).map { Value.string($0.id) }
            let last = try await notes.order(by: "rank").limit(toLast: 2).getDocuments([String: Value].self).map { Value.string($0.id) }
            let all = try await notes.order(by: "rank").getDocuments([String: Value].self)
            let afterFirst = try await notes.order(by: "rank").start(afterDocument: all[0]).getDocuments([String: Value].self).map { Value.string($0.id) }
            let atValues = try await notes.order(by: "rank").start(at: [2]).end(before: [3]).getDocuments([String: Value].self).map { Value.string($0.id) }
            let nullDue = try await notes.whereFieldIsNull("due").count()
            let typed = try await notes.whereField("rank", isEqualTo: 2).getDocuments(Note.self).map { Value.string($0.data.title) }
            return ["byTitle": .array(byTitle), "evens": .array(evens), "in": .array(inList), "notA": .array(notA),
                    "ranked": .array(ranked), "last": .array(last), "afterFirst": .array(afterFirst), "atValues": .array(atValues),
                    "nullDue": .int(Int64(nullDue)), "typed": .array(typed)]
        case "group":
            try await docs.document("members/a/items/1").set(["k": 1] as [String: Value])
            try await docs.document("members/b/items/2").set(["k": 2] as [String: Value])
            try await docs.document("other/x/items/3").set(["k": 3] as [String: Value])
            let all = try await docs.collectionGroup("items").whereField("k", isGreaterThan: 1).getDocuments([String: Value].self).map { Value.string($0.path.description) }
            let members = try await docs.collection("members").listDocuments().map { Value.array([.string($0.reference.id), .bool($0.exists)]) }
            let roots = try await docs.listCollections().map { Value.string($0.id) }
            return ["group": .array(all), "members": .array(members), "roots": .array(roots)]
        case "recursive":
            for i in 0..<7 {
                try await docs.document("trees/t/a/\(i)").set(["i": .int(Int64(i))] as [String: Value])
                try await docs.document("trees/t/a/\(i)/b/c").set(["deep": true] as [String: Value])
            }
            let n = try await docs.recursiveDelete(try docs.document("trees/t"), batchSize: 3)
            return ["deleted": .int(Int64(n)), "left": .int(Int64(try await docs.collection("trees/t/a").count()))]
        case "transaction":
            let counter = try docs.document("counters/c")
            try await counter.set(["n": 0] as [String: Value])
            let n = try await docs.runTransaction { tx -> Int64 in
                let current = try await tx.get(counter, [String: Value].self)?.data["n"]?.intValue ?? 0
                try tx.update(counter, ["n": .value(.int(current + 1))])
                return current + 1
            }
            return .int(n)
        case "read-after-write":
            let ref = try docs.document("counters/c")
            do {
                _ = try await docs.runTransaction { tx -> Bool in
                    try tx.set(ref, ["n": 1] as [String: Value])
                    _ = try await tx.exists(ref)
                    return true
                }
                return "allowed"
            } catch let e as HTTPSError { return .string(e.message) }
        case "transaction-error":
            let ref = try docs.document("counters/e")
            do {
                _ = try await docs.runTransaction { tx -> Bool in
                    _ = try await tx.exists(ref)
                    try tx.set(ref, ["n": 1] as [String: Value])
                    throw HTTPSError(.failedPrecondition, "changed my mind")
                }
            } catch let e as HTTPSError where e.code == .failedPrecondition {
                return .bool(try await ref.get([String: Value].self) == nil)
            }
            return "no error"
        case "undecodable":
            // A stored document that does not fit the type, let through: Hearth's data-loss error.
            let ref = try notes.document("odd")
            try await ref.set(["title": 5, "rank": "first", "tags": []] as [String: Value])
            return .bool(try await ref.get(Note.self)?.data != nil)
        case "undecodable-caught":
            let ref = try notes.document("odd")
            try await ref.set(["title": 5, "rank": "first", "tags": []] as [String: Value])
            do { _ = try await ref.get(Note.self)?.data; return "decoded" } catch let e as HTTPSError {
                return ["code": .string(e.code.rawValue), "message": .string(e.message)]
            }
        case "bad-path":
            do { _ = try docs.document("notes"); return "accepted" } catch let e as HTTPSError { return .string(e.message) }
        case "bad-id":
            do { _ = try notes.document("a/b"); return "accepted" } catch let e as HTTPSError { return .string(e.message) }
        case "non-map":
            do { try await notes.document("x").set([1, 2]); return "accepted" } catch let e as HTTPSError { return .string(e.message) }
        default:
            throw HTTPSError(.invalidArgument, "unknown case \(name)")
        }
    }
}
