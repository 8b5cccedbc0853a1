import Foundation
import HearthModel
@testable import HearthStore
import Testing

/// Kindless queries (no collection id) and the numeric-id bounds recursive deletes send with them.
///
/// The requests are the ones real tools send, written from their sources:
/// - firebase-tools' `firestore:delete -r` (src/firestore/delete.ts): on a collection, the parent
///   document's kindless all-descendants query with `__name__ >= coll/__id-9223372036854775808__`
///   and `__name__ < coll\0/__id-9223372036854775808__`, ordered by name, paged with a
///   start-after cursor; on a document, the same query under the document, unfiltered;
/// - google-cloud-firestore's `Query.recursive()` (base_query.py): the root's kindless
///   all-descendants query with those two names as startAt/endAt cursors;
/// - `--shallow`: the same with `allDescendants` false.
@Suite("Kindless queries", .timeLimit(.minutes(1)))
struct QueryKindlessTests {
    static let minID = "__id-9223372036854775808__"

    /// A tree with neighbours that sort on both sides of `users` bytewise and by segment.
    static let paths = [
        "users/alice", "users/alice/items/i1", "users/alice/items/i1/notes/n1", "users/alice/tags/t1",
        "users/bob", "users/bob/items/i2", "users/123", "users/Zed", "users/_x",
        "users-old/u1", "users0/u2", "user/u3", "usersa/u4", "a/b", "zeta/z/users/deep",
        "users/ghost/items/orphan",  // under a document that does not exist
    ]

    static func seed(_ store: DocumentStore) async throws -> [StoredDocument] {
        try await store.commit(try paths.map { .create(try doc($0), ["n": 1]) })
        return try await store.getAll(try paths.map(doc)).compactMap { $0 }
    }

    /// Documents whose names lie in the range firebase-tools asks for: `collection` and beneath it.
    static func under(_ collection: String) -> [String] {
        paths.filter { $0.hasPrefix(collection + "/") }.sorted { try! DocumentPath($0) < DocumentPath($1) }
    }

    static func collectionRange(_ collection: String, parent: DocumentPath?) -> QuerySpec {
        var q = QuerySpec(parent: parent, collectionID: "", allDescendants: true)
        q.filters = [.init(.documentID, .greaterThanOrEqual, .reference("\(collection)/\(minID)")),
                     .init(.documentID, .lessThan, .reference("\(collection)\u{0}/\(minID)"))]
        q.orderBy = [.init(.documentID)]
        return q
    }

    @Test("a kindless all-descendants query from the root reads every document, in name order")
    func everything() async throws {
        try await withStore { store, _ in
            let all = try await Self.seed(store)
            let q = QuerySpec(collectionID: "", allDescendants: true)
            #expect(try await store.paths(q) == all.map(\.path).sorted().map(\.description))
            #expect(try await store.count(q) == Self.paths.count)
        }
    }

    @Test("under a document, a kindless query reads its subcollections: all beneath it, or its own only")
    func underDocument() async throws {
        try await withStore { store, _ in
            _ = try await Self.seed(store)
            var q = QuerySpec(parent: try doc("users/alice"), collectionID: "", allDescendants: true)
            #expect(try await store.paths(q) == ["users/alice/items/i1", "users/alice/items/i1/notes/n1", "users/alice/tags/t1"])
            q.allDescendants = false
            #expect(try await store.paths(q) == ["users/alice/items/i1", "users/alice/tags/t1"])
            // The root's own collections, without what lies beneath them.
            q.parent = nil
            #expect(try await store.paths(q) == Self.paths.filter { $0.split(separator: "/").count == 2 }
                .sorted { try! DocumentPath($0) < DocumentPath($1) })
        }
    }

    @Test("firebase-tools' range on a collection holds it and everything beneath it, nothing beside it")
    func collectionRange() async throws {
        try await withStore { store, _ in
            _ = try await Self.seed(store)
            // Numeric ids sort first, so users/123, users/Zed and users/_x are inside the range.
            #expect(try await store.paths(Self.collectionRange("users", parent: nil)) == Self.under("users"))
            #expect(try await store.paths(Self.collectionRange("users/alice/items", parent: try doc("users/alice")))
                    == ["users/alice/items/i1", "users/alice/items/i1/notes/n1"])
            #expect(try await store.paths(Self.collectionRange("nothing", parent: nil)) == [])
            // Shallow (--shallow): the collection's own documents.
            var shallow = Self.collectionRange("users", parent: nil)
            shallow.allDescendants = false
            #expect(try await store.paths(shallow) == Self.under("users").filter { $0.split(separator: "/").count == 2 })
        }
    }

    @Test("the same range as startAt/endAt cursors (google-cloud-firestore's recursive()), descending too")
    func cursorRange() async throws {
        try await withStore { store, _ in
            _ = try await Self.seed(store)
            var q = QuerySpec(collectionID: "", allDescendants: true, orderBy: [.init(.documentID)])
            q.startAt = .init(values: [.reference("users/\(Self.minID)")], before: true)
            q.endAt = .init(values: [.reference("users\u{0}/\(Self.minID)")], before: false)
            #expect(try await store.paths(q) == Self.under("users"))
            q.orderBy = [.init(.documentID, .descending)]
            q.startAt = .init(values: [.reference("users\u{0}/\(Self.minID)")], before: true)
            q.endAt = .init(values: [.reference("users/\(Self.minID)")], before: false)
            #expect(try await store.paths(q) == Self.under("users").reversed())
        }
    }

    @Test("paging with a limit and a start-after cursor visits every document once")
    func paging() async throws {
        try await withStore { store, _ in
            _ = try await Self.seed(store)
            var seen: [String] = []
            var q = Self.collectionRange("users", parent: nil)
            q.limit = 3
            for _ in 0..<10 {
                let page = try await store.paths(q)
                if page.isEmpty { break }
                seen += page
                q.startAt = .init(values: [.reference(page.last!)], before: false)
            }
            #expect(seen == Self.under("users"))
        }
    }

    @Test("deleting page by page, as firebase-tools does, removes the collection and its subcollections")
    func deleteInPages() async throws {
        try await withStore { store, _ in
            _ = try await Self.seed(store)
            var q = Self.collectionRange("users", parent: nil)
            q.limit = 4
            for _ in 0..<10 {
                let page = try await store.query(q)
                if page.isEmpty { break }
                try await store.commit(page.map { .delete($0.path) })
            }
            let rest = try await store.paths(QuerySpec(collectionID: "", allDescendants: true))
            #expect(rest == Self.paths.filter { !$0.hasPrefix("users/") }.sorted { try! DocumentPath($0) < DocumentPath($1) })
        }
    }

    @Test("collections no name in the range can hold are not read")
    func pruned() async throws {
        try await withStore { store, _ in
            _ = try await Self.seed(store)
            let engine = store.sqlite
            func targets(_ q: QuerySpec) throws -> [String] {
                try engine.readers.withSnapshot { db in
                    let query = QueryEngine(db: db, collections: engine.collections)
                    return try query.targetCollections(query.prepare(q).spec).map(\.path).sorted()
                }
            }
            #expect(try targets(Self.collectionRange("users", parent: nil))
                    == ["users", "users/alice/items", "users/alice/items/i1/notes", "users/alice/tags", "users/bob/items", "users/ghost/items"])
            #expect(try targets(Self.collectionRange("users/alice/items", parent: try doc("users/alice")))
                    == ["users/alice/items", "users/alice/items/i1/notes"])
            // A collection group's name range prunes the same way.
            var group = QuerySpec(collectionID: "items", allDescendants: true)
            group.filters = [.init(.documentID, .greaterThan, .reference("users/bob"))]
            #expect(try targets(group) == ["users/bob/items", "users/ghost/items"])
            group.filters = [.init(.documentID, .equal, .reference("users/alice/items/i1"))]
            #expect(try targets(group) == ["users/alice/items"])
        }
    }

    @Test("the engine agrees with a plain evaluation on random name ranges over random trees", arguments: [1 as UInt64, 2, 3])
    func randomRanges(seed: UInt64) async throws {
        try await withStore { store, _ in
            var rng = SplitMix64(seed: seed)
            let ids = ["a", "b", "ab", "a-", "A", "_z", "9", "é"]
            var unique: Set<String> = []
            for _ in 0..<60 {
                var segments: [String] = []
                for _ in 0..<Int.random(in: 1...3, using: &rng) { segments += [ids.randomElement(using: &rng)!, ids.randomElement(using: &rng)!] }
                unique.insert(segments.joined(separator: "/"))
            }
            let made = unique.sorted()  // a Set's order changes from run to run; the seed should not
            try await store.commit(try made.map { .create(try doc($0), [:]) })
            let all = made.map { try! DocumentPath($0) }
            let bounds = ids.map { "\($0)/\(Self.minID)" } + ids + made.shuffled(using: &rng).prefix(10)
            let ops: [QuerySpec.Operator] = [.greaterThan, .greaterThanOrEqual, .lessThan, .lessThanOrEqual, .equal]
            for _ in 0..<80 {
                let parent: DocumentPath? = Bool.random(using: &rng) ? nil : all.randomElement(using: &rng)!.prefixDocument(using: &rng)
                var q = QuerySpec(parent: parent, collectionID: "", allDescendants: Bool.random(using: &rng))
                var bound = bounds.randomElement(using: &rng)!
                if bound.split(separator: "/").count % 2 == 1 { bound += "\u{0}/\(Self.minID)" }
                let op = ops.randomElement(using: &rng)!
                q.filters = [.init(.documentID, op, .reference(bound))]
                let expected = all.filter { path in
                    let depth = parent.map { $0.segments.count } ?? 0
                    if let parent, !parent.isAncestor(of: path) { return false }
                    if !q.allDescendants && path.segments.count != depth + 2 { return false }
                    let c = Value.compare(.reference(path.description), .reference(bound))
                    switch op {
                    case .greaterThan: return c == .descending
                    case .greaterThanOrEqual: return c != .ascending
                    case .lessThan: return c == .ascending
                    case .lessThanOrEqual: return c != .descending
                    default: return c == .same
                    }
                }.sorted().map(\.description)
                #expect(try await store.paths(q) == expected, "\(q)")
                // Pages of it: the first n (several collections merged by name), then after a cursor.
                q.limit = Int.random(in: 0...6, using: &rng)
                #expect(try await store.paths(q) == Array(expected.prefix(q.limit!)), "\(q)")
                // Descending, merged by name from the highest down.
                q.orderBy = [.init(.documentID, .descending)]
                #expect(try await store.paths(q) == Array(expected.reversed().prefix(q.limit!)), "\(q)")
                q.orderBy = []
                if let cursor = expected.randomElement(using: &rng) {
                    q.startAt = .init(values: [.reference(cursor)], before: false)
                    let rest = expected.drop { $0 != cursor }.dropFirst()
                    #expect(try await store.paths(q) == Array(rest.prefix(q.limit!)), "\(q)")
                    q.limitToLast = true
                    q.orderBy = [.init(.documentID)]
                    q.startAt = nil
                    q.endAt = .init(values: [.reference(cursor)], before: true)
                    let before = expected.prefix { $0 != cursor }
                    #expect(try await store.paths(q) == Array(before.suffix(q.limit!)), "\(q)")
                    // Descending with limitToLast runs ascending (the merge by name), then reverses.
                    q.orderBy = [.init(.documentID, .descending)]
                    q.endAt = nil
                    #expect(try await store.paths(q) == Array(expected.prefix(q.limit!).reversed()), "\(q)")
                }
            }
        }
    }

    @Test("index keys of references with numeric ids sort as Value.compare does")
    func numericIDKeys() {
        let ordered: [String] = [
            "a/\(Self.minID)", "a/__id-1__", "a/__id0__", "a/__id7__", "a/__id7__/b/c", "a/__id12__",
            "a/\u{0}", "a/9", "a/A", "a/_", "a/__x__", "a/b", "a/b/__id1__/x", "a/b/c/d",
            "a\u{0}/\(Self.minID)", "a-x/b", "b/a",
        ]
        for (i, x) in ordered.enumerated() {
            for (j, y) in ordered.enumerated() {
                let expected = ComparisonOrder(i, j)
                #expect(Value.compare(.reference(x), .reference(y)) == expected, "\(x) vs \(y)")
                let kx = IndexKey.encode(.reference(x)), ky = IndexKey.encode(.reference(y))
                #expect(kx == ky ? i == j : kx.lexicographicallyPrecedes(ky) == (i < j), "keys of \(x) vs \(y)")
            }
        }
    }

    @Test("a reference field's ordered scan is bounded correctly by numeric-id references")
    func numericBoundsOnAField() async throws {
        try await withStore { store, _ in
            let refs = ["a/b", "a/b/c/d", "a/Z", "a/_q", "a-x/b", "b/a", "a/1"]
            try await store.commit(try refs.enumerated().map { i, r in .create(try doc("c/d\(i)"), ["r": .reference(r)]) })
            var q = QuerySpec(collection: try coll("c"))
            q.orderBy = [.init(try field("r"))]
            q.filters = [.init(try field("r"), .greaterThanOrEqual, .reference("a/\(Self.minID)")),
                         .init(try field("r"), .lessThan, .reference("a\u{0}/\(Self.minID)"))]
            let found = try await store.query(q).map { $0.fields["r"]! }
            #expect(found == ["a/1", "a/Z", "a/_q", "a/b", "a/b/c/d"].map(Value.reference))
            q.orderBy = [.init(try field("r"), .descending)]
            #expect(try await store.query(q).map { $0.fields["r"]! } == found.reversed())
        }
    }

    @Test("ids that start with a combining mark (which joins the slash before it) are split on the byte everywhere")
    func combiningMarkIDs() async throws {
        try await withStore { store, _ in
            // "/\u{301}" is one Character: before the store split paths on bytes, querying this
            // collection built a three-segment document path and trapped.
            let paths = ["c/d/\u{301}e/x", "c/d/\u{301}e/y", "c/\u{301}d", "c/d"]
            try await store.commit(try paths.map { .create(try doc($0), ["n": 1]) })
            #expect(try await store.paths(QuerySpec(collection: try coll("c/d/\u{301}e"))) == ["c/d/\u{301}e/x", "c/d/\u{301}e/y"])
            #expect(try await store.paths(try QuerySpec(group: "\u{301}e")) == ["c/d/\u{301}e/x", "c/d/\u{301}e/y"])
            #expect(try await store.paths(QuerySpec(parent: try doc("c/d"), collectionID: "", allDescendants: true)) == ["c/d/\u{301}e/x", "c/d/\u{301}e/y"])
            // In name order: "d" (64) before "\u{301}d" (CC 81 64); c/d's subcollection in between.
            #expect(try await store.paths(QuerySpec(collectionID: "", allDescendants: true))
                    == ["c/d", "c/d/\u{301}e/x", "c/d/\u{301}e/y", "c/\u{301}d"])
            var paged = QuerySpec(collection: try coll("c/d/\u{301}e"))
            paged.startAt = .init(values: [.reference("c/d/\u{301}e/x")], before: false)
            #expect(try await store.paths(paged) == ["c/d/\u{301}e/y"])
            #expect(try store.sqlite.listCollections(under: try doc("c/d")).map(\.description) == ["c/d/\u{301}e"])
            #expect(Set(try store.sqlite.listDocuments(in: try coll("c")).map(\.path.description)) == ["c/d", "c/\u{301}d"])
            #expect(try await store.recursiveDelete(["c"]) == 4)
            #expect(try store.documentRowCount() == 0)
        }
    }

    @Test("a start cursor beneath a collection bounds its ids, and pages still cover every document once")
    func cursorBeneathCollection() async throws {
        try await withStore { store, _ in
            _ = try await Self.seed(store)
            // The cursor users/alice/items/i1 lies beneath users: users' ids before "alice" are
            // skipped in SQLite (the bound), users/alice itself comes before the cursor (a prefix).
            var q = QuerySpec(collectionID: "", allDescendants: true, orderBy: [.init(.documentID)])
            q.startAt = .init(values: [.reference("users/alice/items/i1")], before: false)
            let after = Self.paths.map { try! DocumentPath($0) }.sorted().filter { $0 > (try! DocumentPath("users/alice/items/i1")) }
            #expect(try await store.paths(q) == after.map(\.description))
            let engine = store.sqlite
            let sql = try engine.readers.withSnapshot { db in
                let query = QueryEngine(db: db, collections: engine.collections)
                let prepared = try query.prepare(q)
                let users = try #require(try query.targetCollections(prepared.spec).first { $0.path == "users" })
                return query.statement(for: .nameScan, prepared, collection: users.id, path: users.path)
            }
            #expect(sql.sql.contains("d.id >= ?") && sql.bindings.last == .text("alice"), "\(sql)")
            // Descending from the same cursor: users' ids after "alice" are skipped.
            q.orderBy = [.init(.documentID, .descending)]
            #expect(try await store.paths(q) == Self.paths.map { try! DocumentPath($0) }.sorted()
                .filter { $0 < (try! DocumentPath("users/alice/items/i1")) }.reversed().map(\.description))
        }
    }

    @Test("a kindless query filters and orders only on __name__, and needs full names")
    func validation() async throws {
        try await withStore { store, _ in
            _ = try await Self.seed(store)
            var q = QuerySpec(collectionID: "", allDescendants: true)
            q.filters = [.init(try field("n"), .equal, 1)]
            await expectError(.invalidArgument, "a kindless query (one without a collection id) can only filter and order on __name__, not 'n'") {
                _ = try await store.query(q)
            }
            q.filters = []
            q.orderBy = [.init(try field("n"))]
            await expectError(.invalidArgument, "not 'n'") { _ = try await store.query(q) }
            q.orderBy = []
            q.filters = [.init(.documentID, .greaterThan, "alice")]
            await expectError(.invalidArgument, "a collection group or kindless query needs full document references, not the id 'alice'") {
                _ = try await store.query(q)
            }
        }
    }
}

extension DocumentPath {
    /// This document or one of its ancestor documents, at random.
    func prefixDocument(using rng: inout SplitMix64) -> DocumentPath {
        let keep = 2 * Int.random(in: 1...(segments.count / 2), using: &rng)
        return DocumentPath(trustedSegments: Array(segments.prefix(keep)))
    }
}
