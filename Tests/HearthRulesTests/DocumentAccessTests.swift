import HearthModel
@testable import HearthRules
import Testing

/// get(), exists(), getAfter(), existsAfter() through the caller's reader, with Firebase's limits.
@Suite("Reading other documents")
struct DocumentAccessTests {
    /// `n` documents read one after another (no function may recurse, as on Firebase).
    static let readUpTo = (0..<20).map { "(int(n) <= \($0) || exists(/databases/$(database)/documents/d/\($0)))" }.joined(separator: " && ")

    static let rules = rulesFile("""
            function member(team) {
              return exists(/databases/$(database)/documents/teams/$(team)/members/$(request.auth.uid));
            }
            match /teams/{team}/docs/{doc} {
              allow get: if member(team)
                && get(/databases/$(database)/documents/teams/$(team)/members/$(request.auth.uid)).data.role == 'editor';
              allow create: if getAfter(/databases/$(database)/documents/teams/$(team)/docs/$(doc)).data.title is string
                && !existsAfter(/databases/$(database)/documents/teams/$(team)/locks/$(doc));
            }
            match /many/{n} {
              allow get: if exists(/databases/$(database)/documents/d/$(n)) || true == false;
            }
            match /loop/{n} {
              // Reads d/0 … d/(n-1) (up to 20): counts distinct documents.
              allow get: if \(DocumentAccessTests.readUpTo);
            }
            match /wide/{n} {
              allow get: if (exists(/databases/$(database)/documents/d/0) && exists(/databases/$(database)/documents/d/1) &&
                exists(/databases/$(database)/documents/d/2) && exists(/databases/$(database)/documents/d/3) &&
                exists(/databases/$(database)/documents/d/4) && exists(/databases/$(database)/documents/d/5) &&
                exists(/databases/$(database)/documents/d/6) && exists(/databases/$(database)/documents/d/7) &&
                exists(/databases/$(database)/documents/d/8) && exists(/databases/$(database)/documents/d/9) &&
                exists(/databases/$(database)/documents/d/10)) || true;
            }
        """)

    @Test("get() and exists() read through the closure; repeated reads of one document count once")
    func readsAndCaching() throws {
        let rules = try load(DocumentAccessTests.rules)
        let store = FakeStore(["teams/t1/members/alice": ["role": "editor"], "teams/t1/members/bob": ["role": "viewer"]])
        let access = store.access()
        let doc = try path("teams/t1/docs/d1")
        #expect(rules.authorize(.get(doc, existing: ["x": 1], auth: alice, time: testTime), documents: access).isAllowed)
        #expect(store.reads == ["teams/t1/members/alice"])
        #expect(access.count == 1)
        #expect(!rules.authorize(.get(doc, existing: ["x": 1], auth: bob, time: testTime), documents: store.access()).isAllowed)
        // get() of a missing document is an error; exists() says false.
        let missing = rules.authorize(.get(try path("teams/t2/docs/d1"), existing: nil, auth: alice, time: testTime), documents: store.access())
        #expect(!missing.isAllowed)
    }

    @Test("getAfter() of the written document is the incoming data; existsAfter() of others reads the store")
    func afterReads() throws {
        let rules = try load(DocumentAccessTests.rules)
        let store = FakeStore()
        let doc = try path("teams/t1/docs/d1")
        #expect(rules.authorize(.create(doc, data: ["title": "T"], auth: alice, time: testTime), documents: store.access()).isAllowed)
        #expect(!rules.authorize(.create(doc, data: ["title": 1], auth: alice, time: testTime), documents: store.access()).isAllowed)
        store.documents["teams/t1/locks/d1"] = [:]
        #expect(!rules.authorize(.create(doc, data: ["title": "T"], auth: alice, time: testTime), documents: store.access()).isAllowed)
        // A batch supplies its own view of the state after all its writes.
        let batch = DocumentAccess(limit: DocumentAccess.multiDocumentLimit, read: { _ in nil }, readAfter: { p in
            p.description == "teams/t1/docs/d1" ? ["title": "from the batch"] : nil
        })
        #expect(rules.authorize(.create(doc, data: ["title": 1], auth: alice, time: testTime), documents: batch).isAllowed)
    }

    @Test("ten distinct documents may be read; the eleventh denies the whole request")
    func limit() throws {
        let rules = try load(DocumentAccessTests.rules)
        let store = FakeStore(Dictionary(uniqueKeysWithValues: (0..<30).map { ("d/\($0)", [String: Value]()) }))
        #expect(rules.authorize(.get(try path("loop/10"), existing: nil, auth: alice, time: testTime), documents: store.access()).isAllowed)
        let eleven = rules.authorize(.get(try path("loop/11"), existing: nil, auth: alice, time: testTime), documents: store.access())
        #expect(!eleven.isAllowed)
        guard case .aborted(let why)? = eleven.denial?.reason else {
            Issue.record("expected an aborted denial, got \(eleven)")
            return
        }
        #expect(why.hasPrefix("more than 10 documents read with get()/exists()"))
        // The limit wins even where || would otherwise decide.
        #expect(!rules.authorize(.get(try path("wide/x"), existing: nil, auth: alice, time: testTime), documents: store.access()).isAllowed)
        // Twenty for batches and transactions, shared by all their checks.
        let shared = store.access(limit: DocumentAccess.multiDocumentLimit)
        #expect(rules.authorize(.get(try path("loop/11"), existing: nil, auth: alice, time: testTime), documents: shared).isAllowed)
        // d/0 … d/18, with d/0 … d/10 already cached.
        #expect(rules.authorize(.get(try path("loop/19"), existing: nil, auth: alice, time: testTime), documents: shared).isAllowed)
        #expect(rules.authorize(.get(try path("many/19"), existing: nil, auth: alice, time: testTime), documents: shared).isAllowed)
        #expect(shared.count == 20)
        #expect(!rules.authorize(.get(try path("many/25"), existing: nil, auth: alice, time: testTime), documents: shared).isAllowed)
    }

    @Test("without a reader, get() denies with a reason")
    func unavailable() throws {
        let rules = try load(DocumentAccessTests.rules)
        let decision = rules.authorize(.get(try path("many/1"), existing: nil, auth: alice, time: testTime))
        #expect(decision.description.contains("get() and exists() cannot read documents in this evaluation"))
    }

    @Test("a failing reader denies, naming the document")
    func failingReader() throws {
        struct Broken: Error {}
        let rules = try load(DocumentAccessTests.rules)
        let access = DocumentAccess(read: { _ in throw Broken() })
        let decision = rules.authorize(.get(try path("many/1"), existing: nil, auth: alice, time: testTime), documents: access)
        #expect(!decision.isAllowed)
        #expect(decision.description.contains("reading d/1 failed"))
    }

    @Test("paths outside this database or not naming a document are errors")
    func badPaths() throws {
        let rules = try load(rulesFile("""
                match /a/{x} {
                  allow get: if exists(/databases/other/documents/a/b) || exists(/databases/$(database)/documents/a) || exists('/nope');
                }
            """))
        let decision = rules.authorize(.get(try path("a/1"), existing: nil, auth: alice, time: testTime), documents: FakeStore().access())
        #expect(!decision.isAllowed)
        #expect(decision.description.contains("is not a document of this database"))
    }
}
