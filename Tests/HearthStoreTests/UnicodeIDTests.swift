import Foundation
import HearthModel
@testable import HearthStore
import Testing

/// Ids that Swift calls equal but Firestore keeps apart: "café" with U+00E9 (NFC) and "cafe\u{301}"
/// (NFD, e and a combining accent) are canonically equivalent, so `String ==` and `String` hashing
/// merge them, while Firestore and SQLite compare bytes. The store keys paths and ids on bytes.
@Suite("Canonically equivalent ids stay apart", .timeLimit(.minutes(1)))
struct UnicodeIDTests {
    static let nfc = "caf\u{E9}"
    static let nfd = "cafe\u{301}"

    @Test("the two spellings are equal Swift strings, and different paths")
    func premise() throws {
        #expect(Self.nfc == Self.nfd)
        #expect(try DocumentPath("c/\(Self.nfc)") != DocumentPath("c/\(Self.nfd)"))
        #expect(try Set([DocumentPath("c/\(Self.nfc)"), DocumentPath("c/\(Self.nfd)")]).count == 2)
        #expect(try CollectionPath(Self.nfc) != CollectionPath(Self.nfd))
        #expect(UTF8Key(Self.nfc) != UTF8Key(Self.nfd) && UTF8Key(Self.nfc) == UTF8Key("caf\u{E9}"))
    }

    @Test("two documents whose ids differ only in normalization are two documents, also in one commit")
    func twinDocuments() async throws {
        try await withStore { store, _ in
            try await store.commit([.create(try doc("c/\(Self.nfc)"), ["n": 1]), .create(try doc("c/\(Self.nfd)"), ["n": 2])])
            let both = try await store.getAll([try doc("c/\(Self.nfc)"), try doc("c/\(Self.nfd)")])
            #expect(both.map { $0?.fields["n"] } == [1, 2])
            #expect(try store.documentRowCount() == 2)
            #expect(try await store.query(QuerySpec(collection: try coll("c"))).count == 2)
            // A query's `in` lookup by name keeps both, and so do equality scans, whose rows
            // arrive in id order with the twins side by side.
            var byName = QuerySpec(collection: try coll("c"))
            byName.filters = [.init(.documentID, .in, [.reference("c/\(Self.nfc)"), .reference("c/\(Self.nfd)")])]
            #expect(try await store.query(byName).count == 2)
            var byValue = QuerySpec(collection: try coll("c"))
            byValue.filters = [.init(try field("n"), .in, [1, 2])]
            #expect(try await store.query(byValue).map { UTF8Key($0.path.id) } == [UTF8Key(Self.nfd), UTF8Key(Self.nfc)])
            try await store.commit([.update(try doc("c/\(Self.nfc)"), [(try field("tag"), Value.string("x"))]), .update(try doc("c/\(Self.nfd)"), [(try field("tag"), Value.string("x"))])])
            byValue.filters = [.init(try field("tag"), .equal, "x")]
            #expect(try await store.query(byValue).count == 2)
            #expect(Set(try store.sqlite.listDocuments(in: try coll("c")).map { UTF8Key($0.path.id) }) == [UTF8Key(Self.nfc), UTF8Key(Self.nfd)])
        }
    }

    @Test("collections whose ids differ only in normalization keep their own documents, their own indexes, across a reopen")
    func twinCollections() async throws {
        let path = temporaryStorePath()
        defer { try? FileManager.default.removeItem(atPath: URL(fileURLWithPath: path).deletingLastPathComponent().path) }
        var store = try await DocumentStore.open(path: path, clock: ManualClock())
        // Both collections written in one commit, which resolves each collection once.
        try await store.commit([.create(try doc("\(Self.nfc)/w"), ["n": 0]), .create(try doc("\(Self.nfd)/w"), ["n": 0])])
        try await store.commit([.delete(try doc("\(Self.nfc)/w")), .delete(try doc("\(Self.nfd)/w"))])
        #expect(try store.documentRowCount() == 0)
        // The NFC collection is created, queried (cached, and its field indexed) first.
        try await store.commit([.create(try doc("\(Self.nfc)/x"), ["n": 1])])
        var onN = QuerySpec(collection: try coll(Self.nfc))
        onN.filters = [.init(try field("n"), .greaterThan, 0)]
        #expect(try await store.paths(onN).map(UTF8Key.init) == [UTF8Key("\(Self.nfc)/x")])
        // Then the NFD one: its write must not land in the cached NFC collection, and its query
        // on the same field must build (or find) an index that holds its document.
        try await store.commit([.create(try doc("\(Self.nfd)/y"), ["n": 2])])
        var onNFD = onN
        onNFD.collectionID = Self.nfd
        for _ in 0..<2 {
            // Compared on bytes: `String ==` would take either spelling for the other.
            func keys(_ q: QuerySpec) async throws -> [UTF8Key] { try await store.paths(q).map(UTF8Key.init) }
            #expect(try await keys(QuerySpec(collection: try coll(Self.nfc))) == [UTF8Key("\(Self.nfc)/x")])
            #expect(try await keys(QuerySpec(collection: try coll(Self.nfd))) == [UTF8Key("\(Self.nfd)/y")])
            #expect(try await keys(onNFD) == [UTF8Key("\(Self.nfd)/y")])
            #expect(try await store.get(try doc("\(Self.nfd)/y"))?.fields["n"] == 2)
            #expect(try await store.get(try doc("\(Self.nfc)/y")) == nil)
            let listed = try store.sqlite.listCollections(under: nil).map { UTF8Key($0.description) }
            #expect(Set(listed) == [UTF8Key(Self.nfc), UTF8Key(Self.nfd)])
            // The same answers from a fresh cache.
            store.close()
            store = try await DocumentStore.open(path: path, clock: ManualClock())
        }
        store.close()
    }

    @Test("field names compare by their bytes, as Firestore's: a query spelled the other way finds nothing, a write spelled the other way is refused, a whole-document set may change the spelling")
    func twinFieldNames() async throws {
        try await withStore { store, _ in
            try await store.commit([.create(try doc("f/a"), [Self.nfc: 1])])
            func found(_ name: String, _ value: Value) async throws -> [String] {
                var q = QuerySpec(collection: try coll("f"))
                q.filters = [.init(FieldPath(segments: [name]), .equal, value)]
                return try await store.paths(q)
            }
            // Both spellings queried: the index of each is built; only the document's own finds it.
            #expect(try await found(Self.nfc, 1) == ["f/a"])
            #expect(try await found(Self.nfd, 1) == [])
            #expect(FieldPath(segments: [Self.nfc]) != FieldPath(segments: [Self.nfd]))
            // Firestore would add a second field; Hearth cannot hold both, and says so.
            let refused = await expectError(.invalidArgument) { try await store.commit([.update(try doc("f/a"), [(FieldPath(segments: [Self.nfd]), Value.int(2))])]) }
            #expect(refused?.message.contains("Unicode normalization") == true, "\(String(describing: refused))")
            await expectError(.invalidArgument) {
                try await store.commit([DocumentWrite(path: try doc("f/a"), operation: .update(fields: [:], mask: []),
                                                      transforms: [FieldTransformSpec(FieldPath(segments: [Self.nfd]), .increment(1))])])
            }
            #expect(try await store.get(try doc("f/a"))?.fields == [Self.nfc: 1], "nothing written")
            // The same spelling updates; a set of the whole document may use the other one.
            try await store.commit([.update(try doc("f/a"), [(FieldPath(segments: [Self.nfc]), Value.int(2))])])
            #expect(try await found(Self.nfc, 2) == ["f/a"])
            #expect(try await found(Self.nfc, 1) == [])
            try await store.commit([.set(try doc("f/a"), [Self.nfd: 3])])
            #expect(try await found(Self.nfd, 3) == ["f/a"])
            #expect(try await found(Self.nfc, 2) == [])
            // A set that changes only the spelling is a change, not a no-op.
            try await store.commit([.set(try doc("f/a"), [Self.nfc: 3])])
            #expect(try await found(Self.nfc, 3) == ["f/a"])
            #expect(try await found(Self.nfd, 3) == [])
            #expect(Value.map([Self.nfc: 1]) != Value.map([Self.nfd: 1]))
        }
    }
}
