import Foundation
import HearthModel
@testable import HearthStore
import Testing

/// Firestore's rules for names and values
/// (https://firebase.google.com/docs/firestore/quotas#collections_documents_and_fields): every
/// broken rule is an `invalid-argument` error naming the rule, and nothing is stored.
@Suite("Paths and values are validated", .timeLimit(.minutes(1)))
struct ValidationTests {
    /// A path of `count` segments, each `segment`.
    static func path(segments count: Int, _ segment: String = "a") -> String {
        Array(repeating: segment, count: count).joined(separator: "/")
    }

    /// A two-segment path of exactly `bytes` UTF-8 bytes.
    static func path(bytes: Int) -> String { "c/" + String(repeating: "d", count: bytes - 2) }

    /// A document path of `bytes` bytes whose ids are 1,500 bytes or less.
    static func longName(bytes: Int) -> String {
        var segments: [String] = []
        var left = bytes
        while left > 0 {
            let n = min(1400, left - (segments.isEmpty ? 0 : 1))
            segments.append(String(repeating: "s", count: max(n, 1)))
            left -= n + (segments.count > 1 ? 1 : 0)
        }
        if segments.count % 2 == 1 { segments[segments.count - 1].removeLast(2); segments.append("z") }
        return segments.joined(separator: "/")
    }

    static let invalidDocumentPaths: [(String, String)] = [
        ("", "empty"),
        ("members", "even number of segments"),
        ("members/alice/items", "even number of segments"),
        ("members//alice/x", "empty segment"),
        ("/members/alice", "empty segment"),
        ("members/alice/", "empty segment"),
        ("members/.", "'.' is not a valid id"),
        ("members/..", "'..' is not a valid id"),
        ("./alice", "'.' is not a valid id"),
        ("members/__x__", "reserved"),
        ("__x__/alice", "reserved"),
        ("members/alice/__items__/i1", "reserved"),
        ("members/____", "reserved"),
        ("c/" + String(repeating: "d", count: 1501), "an id longer than 1500 bytes"),
        (longName(bytes: 6145), "longer than 6144 bytes"),
        (path(segments: 102), "more than 100 segments"),
    ]

    @Test("invalid document paths are refused with invalid-argument naming the rule", arguments: invalidDocumentPaths)
    func invalidDocumentPath(path: String, rule: String) async throws {
        await expectError(.invalidArgument, rule) { _ = try DocumentPath(path) }
    }

    static let invalidCollectionPaths: [(String, String)] = [
        ("", "empty"),
        ("members/alice", "odd number of segments"),
        ("members//items", "empty segment"),
        ("members/alice/", "empty segment"),
        ("..", "'..' is not a valid id"),
        ("members/./items", "'.' is not a valid id"),
        ("__members__", "reserved"),
        ("members/__a__/items", "reserved"),
        (String(repeating: "c", count: 1501), "an id longer than 1500 bytes"),
        (path(segments: 101), "more than 100 segments"),
    ]

    @Test("invalid collection paths are refused with invalid-argument naming the rule", arguments: invalidCollectionPaths)
    func invalidCollectionPath(path: String, rule: String) async throws {
        await expectError(.invalidArgument, rule) { _ = try CollectionPath(path) }
    }

    @Test("paths at the limits are accepted and stored: ids of 1500 bytes, names of 6 KiB, 100 segments, ids like _x_ and __x")
    func pathsAtTheLimits() async throws {
        try await withStore { store, _ in
            let paths = [Self.path(bytes: 1502), String(repeating: "c", count: 1500) + "/d", Self.longName(bytes: 6144), Self.path(segments: 100),
                         "c/_x_", "c/__x", "c/x__", "c/___", "c/...", "c/.x"]
            for text in paths {
                let path = try doc(text)
                try await store.commit([.create(path, ["ok": true])])
                #expect(try await store.get(path)?.fields["ok"] == true, "\(text.prefix(40))")
            }
            #expect(try store.documentRowCount() == paths.count)
        }
    }

    @Test("a document id containing a slash is refused")
    func idWithSlash() async throws {
        let items = try coll("members/alice/items")
        await expectError(.invalidArgument, "cannot contain '/'") { _ = try items.document("a/b") }
        await expectError(.invalidArgument, "an id longer than 1500 bytes") { _ = try items.document(String(repeating: "x", count: 1501)) }
        #expect(Self.longName(bytes: 6144).utf8.count == 6144)
        await expectError(.invalidArgument, "reserved") { _ = try items.document("__id__") }
    }

    @Test("a path decoded from a write message is validated like a typed one")
    func decodedWritePath() async throws {
        let json = #"{"path": "members/__x__", "fields": {}}"#
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(DocumentWrite.self, from: Data(json.utf8)) }
    }

    static let invalidReferences = ["members", "members//a", "members/..", "members/__x__", path(segments: 102)]

    @Test("a reference value holding an invalid path is refused when writing, and nothing is stored", arguments: invalidReferences)
    func invalidReferenceValue(reference: String) async throws {
        try await withStore { store, _ in
            let path = try doc("c/d")
            await expectError(.invalidArgument, "reference") {
                try await store.commit([.set(path, ["r": .reference(reference)])])
            }
            #expect(try await store.get(path) == nil)
            #expect(try store.documentRowCount() == 0)
            #expect(try await store.allChanges().isEmpty)
        }
    }

    @Test("recursive delete validates its path segments", arguments: [
        [String](), ["members", ""], ["members", ".."], ["__x__"], ["members", "a/b"], ["members/a", "items"],
    ])
    func recursiveDeletePath(segments: [String]) async throws {
        try await withStore { store, _ in
            try await store.commit([.create(try doc("members/a/items/b"), [:])])
            await expectError(.invalidArgument) { try await store.recursiveDelete(segments) }
            #expect(try store.documentRowCount() == 1)
        }
    }

    /// The empty id is not among them: it is a kindless query (QueryKindlessTests).
    @Test("a query on an invalid collection id is refused", arguments: ["a/b", "__x__", ".."])
    func queryCollectionID(id: String) async throws {
        try await withStore { store, _ in
            await expectError(.invalidArgument) { _ = try await store.query(QuerySpec(collectionID: id)) }
        }
    }

    // MARK: values

    static let invalidValues: [(String, [String: Value], String)] = [
        ("a document over 1 MiB", ["big": .string(String(repeating: "x", count: 1_100_000))], "bytes"),
        ("maps nested 21 deep", ["f": nestedValue(levels: 21)], "deeper than 20"),
        ("maps and arrays nested 21 deep", ["f": nestedValue(levels: 21, alternating: true)], "deeper than 20"),
        ("an array directly inside an array", ["a": [1, [2]]], "array directly inside an array"),
        ("an array inside an array inside a map", ["m": ["a": [[]]]], "array directly inside an array"),
        ("a reserved field name", ["__x__": 1], "reserved"),
        ("the reserved name __name__", ["__name__": 1], "__name__"),
        ("a reserved nested field name", ["m": ["__meta__": 1]], "reserved"),
        ("a reserved field name inside an array's map", ["a": [["__x__": 1]]], "reserved"),
        ("an empty field name", ["": 1], "empty field"),
        ("an empty nested field name", ["m": ["": 1]], "empty field"),
        ("a field name longer than 1500 bytes", [String(repeating: "f", count: 1501): 1], "longer than 1500"),
        ("a timestamp before year 1", ["t": .timestamp(Timestamp(seconds: Timestamp.minSeconds - 1))], "outside years"),
    ]

    @Test("invalid values are refused with invalid-argument, by create, set and merge, and nothing is stored", arguments: invalidValues)
    func invalidValue(name: String, fields: [String: Value], rule: String) async throws {
        try await withStore { store, _ in
            let path = try doc("c/d")
            for write in [DocumentWrite.create(path, fields), .set(path, fields), .merge(path, fields)] {
                await expectError(.invalidArgument, rule) { try await store.commit([write]) }
            }
            // Also when the bad document rides in a batch with good ones.
            await expectError(.invalidArgument, rule) {
                try await store.commit([.create(try doc("c/ok"), ["n": 1]), .set(path, fields), .create(try doc("other/ok"), [:])])
            }
            #expect(try await store.get(path) == nil, "\(name)")
            #expect(try store.documentRowCount() == 0)
            #expect(try store.indexRowCount() == 0)
            #expect(try await store.allChanges().isEmpty)
            #expect(store.engine.lastSequence == 0)
            #expect(try await store.listCollections(under: nil).isEmpty)
        }
    }

    @Test("an update that would make an existing document invalid is refused and leaves it unchanged")
    func invalidUpdate() async throws {
        try await withStore { store, _ in
            let path = try doc("c/d")
            try await store.commit([.create(path, ["m": ["a": 1]])])
            let before = try await store.get(path)
            await expectError(.invalidArgument, "reserved") {
                try await store.commit([.update(path, [try upd("m.__x__", 1)])])
            }
            await expectError(.invalidArgument, "deeper than 20") {
                try await store.commit([.update(path, [try upd("m.deep", nestedValue(levels: 20))])])
            }
            await expectError(.invalidArgument, "bytes") {
                try await store.commit([.update(path, [try upd("big", .string(String(repeating: "y", count: 1 << 20)))])])
            }
            await expectError(.invalidArgument, "'__name__' cannot be written") {
                try await store.commit([.update(path, [(FieldPath.documentID, Value.int(1))])])
            }
            await expectError(.invalidArgument, "empty field path") {
                try await store.commit([.update(path, [(FieldPath(segments: ["m", ""]), Value.int(1))])])
            }
            #expect(try await store.get(path) == before)
            #expect(try await store.allChanges().count == 1)
        }
    }

    @Test("values at the limits are stored: 20 levels deep, just under 1 MiB, a 1500-byte field name")
    func valuesAtTheLimits() async throws {
        try await withStore { store, _ in
            let fields: [String: Value] = [
                "maps": nestedValue(levels: 20),
                "mixed": nestedValue(levels: 20, alternating: true),
                String(repeating: "f", count: 1500): 1,
                "_x_": 1, "__x": 2, "x__": 3, "___": 4,
                "array of maps of arrays": [["a": [1, 2]], ["b": []]],
            ]
            let path = try doc("c/d")
            try await store.commit([.create(path, fields)])
            #expect(try await store.get(path)?.fields == fields)
            let big = try doc("c/big")
            try await store.commit([.create(big, ["s": .string(String(repeating: "x", count: 1_000_000))])])
            #expect(try await store.get(big)?.fields["s"]?.stringValue?.utf8.count == 1_000_000)
        }
    }
}
