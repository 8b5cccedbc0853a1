import Foundation
import HearthModel
import Testing

struct PathErrorCase: Sendable, CustomTestStringConvertible {
    var path: String
    var message: String
    var testDescription: String { "'\(path.prefix(40))' → \(message.prefix(70))" }
}

/// The `HTTPSError` that `body` throws, nil when it succeeds (any other error is recorded as an issue).
func pathError(_ body: () throws -> Void) -> HTTPSError? {
    do {
        try body()
        return nil
    } catch let error as HTTPSError {
        return error
    } catch {
        Issue.record("unexpected error \(error)")
        return nil
    }
}

let longPath1500 = "c/" + String(repeating: "x", count: 1498)  // exactly 1500 bytes
let longID1501 = "c/" + String(repeating: "x", count: 1501)
/// 6,145 bytes of ids of 1,500 bytes or less.
let longPath6145 = [1228, 1228, 1228, 1228, 1227].map { String(repeating: "x", count: $0) }.joined(separator: "/") + "/y"
let segments100 = (0..<100).map { "s\($0)" }.joined(separator: "/")
let segments102 = (0..<102).map { "s\($0)" }.joined(separator: "/")

@Suite("Document and collection paths")
struct PathTests {
    @Test("invalid paths are refused with invalid-argument naming the rule", arguments: [
        PathErrorCase(path: "", message: "invalid path: empty"),
        PathErrorCase(path: "a//b", message: "invalid path 'a//b': empty segment"),
        PathErrorCase(path: "/a/b", message: "invalid path '/a/b': empty segment"),
        PathErrorCase(path: "a/b/", message: "invalid path 'a/b/': empty segment"),
        PathErrorCase(path: "/", message: "invalid path '/': empty segment"),
        PathErrorCase(path: "a/.", message: "invalid path 'a/.': '.' is not a valid id"),
        PathErrorCase(path: "../b", message: "invalid path '../b': '..' is not a valid id"),
        PathErrorCase(path: "a/__x__", message: "invalid path 'a/__x__': ids of the form __.*__ are reserved ('__x__')"),
        PathErrorCase(path: "__a__/b", message: "invalid path '__a__/b': ids of the form __.*__ are reserved ('__a__')"),
        PathErrorCase(path: "a/____", message: "invalid path 'a/____': ids of the form __.*__ are reserved ('____')"),
        PathErrorCase(path: longID1501, message: "invalid path 'c/\(String(repeating: "x", count: 78))…': an id longer than 1500 bytes (1501)"),
        PathErrorCase(path: "c/" + String(repeating: "é", count: 751), message: "invalid path 'c/\(String(repeating: "é", count: 78))…': an id longer than 1500 bytes (1502)"),
        PathErrorCase(path: longPath6145, message: "invalid path: longer than 6144 bytes (6145)"),
        PathErrorCase(path: segments102, message: "invalid path '\(segments102.prefix(80))…': more than 100 segments"),
        PathErrorCase(path: "a", message: "invalid document path 'a': a document path has an even number of segments (collection/document/…)"),
        PathErrorCase(path: "a/b/c", message: "invalid document path 'a/b/c': a document path has an even number of segments (collection/document/…)"),
    ])
    func invalidDocumentPaths(_ c: PathErrorCase) throws {
        let error = try #require(pathError { _ = try DocumentPath(c.path) })
        #expect(error.code == .invalidArgument)
        #expect(error.message == c.message)
    }

    @Test("valid edge cases are accepted", arguments: [
        "a/b", "a/__", "a/___", "a/__x", "a/x__", "a/_x_", "a/...", "a/.x", "é/😀", "a b/c d", longPath1500, segments100,
        // Ids of 1,500 bytes, and a name of 6 KiB (Firestore's limits).
        "c/" + String(repeating: "x", count: 1500), String(repeating: "c", count: 1500) + "/d",
        [1228, 1228, 1228, 1228, 1226].map { String(repeating: "x", count: $0) }.joined(separator: "/") + "/z",
    ])
    func validDocumentPaths(_ path: String) throws {
        let doc = try DocumentPath(path)
        #expect(doc.description == path)
        #expect(doc.segments.joined(separator: "/") == path)
    }

    @Test("collection paths need an odd number of segments")
    func collectionPaths() throws {
        #expect(try CollectionPath("members").segments == ["members"])
        #expect(try CollectionPath("members/alice/items").description == "members/alice/items")
        let error = try #require(pathError { _ = try CollectionPath("a/b") })
        #expect(error.message == "invalid collection path 'a/b': a collection path has an odd number of segments")
        #expect(pathError { _ = try CollectionPath("a//c") }?.message == "invalid path 'a//c': empty segment")
        #expect(try PathRules.segments("a/b", document: nil) == ["a", "b"])
        #expect(try PathRules.segments("a", document: nil) == ["a"])
    }

    @Test("document paths navigate to their collection, parent and subcollections")
    func navigation() throws {
        let doc = try DocumentPath("members/alice/items/i1")
        #expect(doc.id == "i1")
        #expect(doc.collectionID == "items")
        #expect(doc.collection.description == "members/alice/items")
        #expect(doc.collectionDescription == doc.collection.description)
        #expect(try DocumentPath("items/i1").collectionDescription == "items")
        #expect(doc.collection.id == "items")
        #expect(doc.parentDocument == (try DocumentPath("members/alice")))
        #expect(doc.parentDocument?.parentDocument == nil)
        #expect(doc.depth == 2)
        #expect(try doc.collection("notes").description == "members/alice/items/i1/notes")
        #expect(try doc.collection("notes").document("n1") == DocumentPath("members/alice/items/i1/notes/n1"))
        #expect(doc.collection.parent == (try DocumentPath("members/alice")))
        #expect(try CollectionPath("members").parent == nil)
        #expect(pathError { _ = try doc.collection("") }?.code == .invalidArgument)
        #expect(pathError { _ = try doc.collection("__x__") }?.code == .invalidArgument)
    }

    @Test("a document id cannot contain a slash or break a rule")
    func documentIDs() throws {
        let members = try CollectionPath("members")
        #expect(try members.document("bob").description == "members/bob")
        #expect(pathError { _ = try members.document("a/b") }?.message == "invalid document id 'a/b': ids cannot contain '/'")
        #expect(pathError { _ = try members.document("..") }?.message == "invalid path 'members/..': '..' is not a valid id")
        #expect(pathError { _ = try members.document("") }?.message == "invalid path 'members/': empty segment")
    }

    @Test("ancestry follows whole segments")
    func ancestry() throws {
        let alice = try DocumentPath("members/alice")
        #expect(alice.isAncestor(of: try DocumentPath("members/alice/items/i1")))
        #expect(alice.isAncestor(of: try DocumentPath("members/alice/items/i1/notes/n")))
        #expect(!alice.isAncestor(of: alice))
        #expect(!alice.isAncestor(of: try DocumentPath("members/alicex/items/i1")))
        #expect(!alice.isAncestor(of: try DocumentPath("members/bob/items/i1")))
    }

    @Test("document paths order segment by segment, each by UTF-8 bytes")
    func ordering() throws {
        let ordered = try ["a/b", "a/b/c/d", "a/c", "a-x/b", "b/a", "b/é", "b/😀"].map { try DocumentPath($0) }
        for (x, y) in zip(ordered, ordered.dropFirst()) {
            #expect(x < y, "\(x) < \(y)")
            #expect(!(y < x), "\(y) !< \(x)")
        }
        var rng = SplitMix64(seed: 3)
        #expect(ordered.shuffled(using: &rng).sorted() == ordered)
        // The same order as references in values.
        for x in ordered {
            for y in ordered {
                #expect((x < y) == (Value.compare(.reference(x.description), .reference(y.description)) == .ascending))
            }
        }
    }

    @Test("numeric ids (__id7__) are read as 64-bit numbers, and nothing else is one")
    func numericIDs() {
        #expect(PathRules.numericID("__id7__") == 7)
        #expect(PathRules.numericID("__id-9223372036854775808__") == Int64.min)
        #expect(PathRules.numericID("__id9223372036854775807__") == Int64.max)
        #expect(PathRules.numericID("__id0__") == 0)
        // Only the canonical spelling: one number, one id. Read on bytes: U+0600 joins the "_"
        // after it into one grapheme, which must not hide the body's non-digit.
        for other in ["__id__", "__id-__", "__id+1__", "__idx__", "__id1x__", "__id9223372036854775808__", "_id1__", "__id1_", "id1", "__ID1__",
                      "__id07__", "__id-0__", "__id-07__", "__id 7__", "__id7\u{600}__", "__id\u{661}__"] {
            #expect(PathRules.numericID(other) == nil, "\(other)")
        }
    }

    @Test("numeric ids sort before other ids, by number, in names and references alike")
    func numericIDOrder() throws {
        let ordered = try ["a/__id-9223372036854775808__", "a/__id-3__", "a/__id2__", "a/__id10__", "a/\u{0}", "a/A", "a/__x",
                           "a/b", "a\u{0}/__id-9223372036854775808__", "a-x/b"].map { try DocumentPath(queryBound: $0) }
        for (i, x) in ordered.enumerated() {
            for (j, y) in ordered.enumerated() {
                #expect((x < y) == (i < j), "\(x) < \(y)")
                #expect(Value.compare(.reference(x.description), .reference(y.description)) == ComparisonOrder(i, j))
            }
        }
    }

    @Test("only a query's bounds may name numeric ids; other reserved ids stay refused there too")
    func queryBounds() throws {
        #expect(try DocumentPath(queryBound: "users\u{0}/__id-9223372036854775808__").segments == ["users\u{0}", "__id-9223372036854775808__"])
        #expect(pathError { _ = try DocumentPath("users/__id7__") }?.message == "invalid path 'users/__id7__': ids of the form __.*__ are reserved ('__id7__')")
        #expect(pathError { _ = try DocumentPath(queryBound: "users/__x__") }?.message == "invalid path 'users/__x__': ids of the form __.*__ are reserved ('__x__')")
        #expect(pathError { _ = try DocumentPath(queryBound: "users") } != nil)
        // Numeric ids name documents, never collections.
        #expect(pathError { _ = try DocumentPath(queryBound: "__id5__/x") }?.message.contains("reserved ('__id5__')") == true)
        #expect(pathError { _ = try DocumentPath(queryBound: "a/b/__id1__/x") }?.message.contains("reserved ('__id1__')") == true)
        #expect(try DocumentPath(queryBound: "a/b/c/__id1__").id == "__id1__")
    }

    @Test("the reserved form __.*__ is checked on bytes, so a joining mark cannot hide the final underscores")
    func reservedOnBytes() {
        // U+0600 (a prepended concatenation mark) joins the "_" after it into one grapheme.
        #expect(pathError { _ = try DocumentPath("a/__x\u{600}__") }?.message.contains("reserved") == true)
        #expect(pathError { _ = try DocumentPath("a/__id7\u{600}__") }?.message.contains("reserved") == true)
        #expect(pathError { _ = try DocumentPath("a/__x\u{600}_") } == nil)
    }

    @Test("paths split on the slash byte, also where an id starts with a combining mark that joins the slash")
    func combiningMarkAfterSlash() throws {
        // "/\u{301}" is one Character: a split on Characters would see no slash there.
        let path = try DocumentPath("c/d/\u{301}e/x")
        #expect(path.segments == ["c", "d", "\u{301}e", "x"])
        #expect(PathRules.split("c/d/\u{301}e").map(String.init) == ["c", "d", "\u{301}e"])
        #expect(PathRules.lastSegment("c/d/\u{301}e").map { [String($0.parent), String($0.id)] } == ["c/d", "\u{301}e"])
        // References compare the same segments: "\u{301}b" (CC 81 62) after "c" (63).
        #expect(Value.compare(.reference("a/\u{301}b"), .reference("a/c")) == .descending)
        #expect(Value.compare(.reference("a/\u{301}b/x/y"), .reference("a/\u{301}b")) == .descending)
        #expect((try DocumentPath("a/c")) < (try DocumentPath("a/\u{301}b")))
        let pattern = try PathPattern("c/{doc}/\u{301}e/{id}")
        #expect(pattern.match(path) != nil)
        // Literals match on bytes: U+212A KELVIN SIGN is canonically K, but another collection.
        let kudos = try PathPattern("Kudos/{id}")
        #expect(kudos.match(try DocumentPath("Kudos/x")) == ["id": "x"])
        #expect(kudos.match(try DocumentPath("\u{212A}udos/x")) == nil)
        #expect(try DocumentPath("c/caf\u{E9}").isAncestor(of: try DocumentPath("c/caf\u{E9}/x/y")))
        #expect(!(try DocumentPath("c/caf\u{E9}").isAncestor(of: try DocumentPath("c/cafe\u{301}/x/y"))))
    }

    @Test("a collection group needs a collection id; an empty one is not taken for a kindless query")
    func groupIDs() throws {
        let group = try QuerySpec(group: "items")
        #expect(group.collectionID == "items" && group.allDescendants && !group.isKindless)
        #expect(pathError { _ = try QuerySpec(group: "") }?.message == "invalid collection id '' for a collection group")
        #expect(pathError { _ = try QuerySpec(group: "a/b") }?.message == "invalid collection id 'a/b' for a collection group")
        #expect(pathError { _ = try QuerySpec(group: "__x__") }?.message.contains("reserved") == true)
        // The empty id is how Firestore's REST API spells a kindless query.
        #expect(QuerySpec(collectionID: "", allDescendants: true).isKindless)
        #expect(QuerySpec(collectionID: "", allDescendants: true).collectionPath == nil)
        #expect(QuerySpec(collectionID: "").collectionPath == nil)
    }

    @Test("trusted segments skip validation but not the shape")
    func trusted() {
        #expect(DocumentPath(trustedSegments: ["a", "b"]).description == "a/b")
        #expect(CollectionPath(trustedSegments: ["a"]).description == "a")
    }

    @Test("document paths encode as their slash string and refuse invalid ones when decoded")
    func codable() throws {
        let doc = try DocumentPath("members/alice")
        let data = try JSONEncoder().encode([doc])
        #expect(String(decoding: data, as: UTF8.self) == #"["members\/alice"]"# || String(decoding: data, as: UTF8.self) == #"["members/alice"]"#)
        #expect(try JSONDecoder().decode([DocumentPath].self, from: data) == [doc])
        #expect(throws: DecodingError.self) { try JSONDecoder().decode([DocumentPath].self, from: Data(#"["members"]"#.utf8)) }
    }

    @Test("HTTPSError describes itself and builds the callable error body")
    func httpsError() {
        let error = HTTPSError.invalidArgument("bad path")
        #expect(error.description == "invalid-argument: bad path")
        #expect(error.callableBody == ["status": "INVALID_ARGUMENT", "message": "bad path"])
        let detailed = HTTPSError(.notFound, "gone", details: ["id": "x"])
        #expect(detailed.callableBody == ["status": "NOT_FOUND", "message": "gone", "details": ["id": "x"]])
    }
}
