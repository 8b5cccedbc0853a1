import HearthModel
@testable import HearthRules
import Testing

/// Which match blocks and allows apply to a request.
@Suite("Matching paths and methods")
struct MatchingTests {
    @Test("read is get and list, write is create, update and delete; each alone is only itself")
    func methodGroups() throws {
        let rules = try load(rulesFile("""
                match /r/{id} { allow read; }
                match /w/{id} { allow write; }
                match /g/{id} { allow get; }
                match /c/{id} { allow create, delete; }
            """))
        func allowed(_ method: RulesMethod, _ collectionID: String) throws -> Bool {
            let doc = try path("\(collectionID)/x")
            let request: RulesRequest
            switch method {
            case .get: request = .get(doc, existing: nil, auth: nil, time: testTime)
            case .list: request = .list(QuerySpec(collection: try collection(collectionID)), auth: nil, time: testTime)
            case .create: request = .create(doc, data: [:], auth: nil, time: testTime)
            case .update: request = .update(doc, existing: [:], after: [:], auth: nil, time: testTime)
            case .delete: request = .delete(doc, existing: [:], auth: nil, time: testTime)
            }
            return rules.authorize(request).isAllowed
        }
        #expect(try RulesMethod.allCases.map { try allowed($0, "r") } == [true, true, false, false, false])
        #expect(try RulesMethod.allCases.map { try allowed($0, "w") } == [false, false, true, true, true])
        #expect(try RulesMethod.allCases.map { try allowed($0, "g") } == [true, false, false, false, false])
        #expect(try RulesMethod.allCases.map { try allowed($0, "c") } == [false, false, true, false, true])
        #expect(try RulesMethod.allCases.map { try allowed($0, "other") } == [false, false, false, false, false])
    }

    @Test("nested blocks concatenate their paths and do not inherit their parent's allows")
    func nesting() throws {
        let rules = try load(rulesFile("""
                match /a/{x} {
                  allow get: if x == '1';
                  match /b/{y} {
                    allow get: if x == '1' && y == '2';
                  }
                }
            """))
        #expect(rules.authorize(.get(try path("a/1"), existing: nil, auth: nil, time: testTime)).isAllowed)
        #expect(rules.authorize(.get(try path("a/1/b/2"), existing: nil, auth: nil, time: testTime)).isAllowed)
        #expect(!rules.authorize(.get(try path("a/1/b/3"), existing: nil, auth: nil, time: testTime)).isAllowed)
        #expect(!rules.authorize(.get(try path("a/1/c/2"), existing: nil, auth: nil, time: testTime)).isAllowed)
    }

    @Test("a recursive wildcard matches zero or more segments and binds them as a path")
    func recursiveWildcard() throws {
        let rules = try load(rulesFile("""
                match /members/{uid}/{rest=**} {
                  allow get: if rest == /items/x || rest == /items/x/notes/n || (uid == 'root' && rest.size() == 0);
                }
                match /{anything=**}/tags/{tag} {
                  allow get: if tag == 'public';
                }
            """))
        func allowed(_ p: String) throws -> Bool { rules.authorize(.get(try path(p), existing: nil, auth: nil, time: testTime)).isAllowed }
        #expect(try allowed("members/alice/items/x"))
        #expect(try allowed("members/alice/items/x/notes/n"))
        #expect(try allowed("members/root"))
        #expect(!(try allowed("members/alice")))
        #expect(!(try allowed("members/alice/items/y")))
        #expect(try allowed("tags/public"))
        #expect(try allowed("a/b/c/d/tags/public"))
        #expect(!(try allowed("a/b/tags/private")))
    }

    @Test("path literals match on bytes: a canonically equivalent spelling is another path, in matches and in path equality")
    func literalsOnBytes() throws {
        // U+212A KELVIN SIGN is canonically equivalent to K; Swift's == calls them equal.
        let rules = try load(rulesFile("""
                match /Kudos/{id} {
                  allow get: if true;
                }
                match /refs/{id} {
                  allow get: if /databases/$(database)/documents/Kudos/a == /databases/$(database)/documents/$(id)/a;
                }
            """))
        func allowed(_ p: String) throws -> Bool { rules.authorize(.get(try path(p), existing: nil, auth: nil, time: testTime)).isAllowed }
        #expect("\u{212A}udos" == "Kudos")
        #expect(try allowed("Kudos/x"))
        #expect(!(try allowed("\u{212A}udos/x")))
        #expect(try allowed("refs/Kudos"))
        #expect(!(try allowed("refs/\u{212A}udos")))
    }

    @Test("any matching block's allow permits; allows are tried in file order")
    func anyAllowPermits() throws {
        let rules = try load(rulesFile("""
                match /docs/{id} {
                  allow get: if false;
                }
                match /{collection}/{id} {
                  allow get: if collection == 'docs';
                }
            """))
        let decision = rules.authorize(.get(try path("docs/1"), existing: nil, auth: nil, time: testTime))
        #expect(decision == .allowed(by: SourceLocation(fileName: "test.rules", line: 8, column: 7)))
    }

    @Test("functions are scoped lexically: a function sees the wildcards where it is declared")
    func lexicalScope() throws {
        let rules = try load(rulesFile("""
                function top() { return request.auth != null; }
                match /a/{x} {
                  function isX(v) { let expected = x; return v == expected; }
                  match /b/{x} {
                    // This x shadows the outer one; isX still compares with the outer x.
                    allow get: if top() && isX('outer') && x == 'inner';
                  }
                }
            """))
        #expect(rules.authorize(.get(try path("a/outer/b/inner"), existing: nil, auth: alice, time: testTime)).isAllowed)
        #expect(!rules.authorize(.get(try path("a/inner/b/inner"), existing: nil, auth: alice, time: testTime)).isAllowed)
        #expect(!rules.authorize(.get(try path("a/outer/b/inner"), existing: nil, auth: nil, time: testTime)).isAllowed)
        // A function declared in one block is not visible in a sibling.
        let sibling = loadError(rulesFile("""
                match /a/{x} { function f() { return true; } }
                match /b/{x} { allow get: if f(); }
            """))
        #expect(sibling?.message == "unknown function 'f'")
    }

    @Test("a let that fails denies only where it is used; calls nest at most 20 deep; recursion is refused at load")
    func functionsAndLets() throws {
        // f0 calls f1 … calls f<n>: a chain of distinct functions, since none may recurse.
        func chain(_ prefix: String, _ n: Int) -> String {
            (0..<n).map { "function \(prefix)\($0)() { return \(prefix)\($0 + 1)(); }" }.joined(separator: "\n")
                + "\nfunction \(prefix)\(n)() { return true; }"
        }
        let rules = try load(rulesFile("""
                function lazy() { let bad = 1 / 0; return true; }
                function eager() { let bad = 1 / 0; return bad == 1; }
                function double(n) { return n * 2; }
                \(chain("ok", 19))
                \(chain("deep", 20))
                match /lazy/{id} { allow get: if lazy(); }
                match /eager/{id} { allow get: if eager(); }
                match /ok/{id} { allow get: if ok0(); }
                match /deep/{id} { allow get: if deep0(); }
                match /double/{id} { allow get: if double(double(1)) == 4; }
            """))
        func allowed(_ p: String) throws -> RulesDecision { rules.authorize(.get(try path(p), existing: nil, auth: nil, time: testTime)) }
        #expect(try allowed("lazy/1").isAllowed)
        let eager = try allowed("eager/1")
        #expect(!eager.isAllowed)
        #expect(eager.description.contains("division by zero"))
        #expect(try allowed("ok/1").isAllowed, "20 nested calls")
        let deep = try allowed("deep/1")
        #expect(!deep.isAllowed)
        #expect(deep.description.contains("function calls nested deeper than 20"))
        #expect(try allowed("double/1").isAllowed)
        // Firebase refuses recursion at load, direct or through another function.
        for source in ["function forever(n) { return forever(n + 1); }",
                       "function ping(n) { return pong(n); }\nfunction pong(n) { let x = ping(n); return x; }"] {
            let refused = loadError(rulesFile(source + "\nmatch /a/{id} { allow get: if true; }"))
            #expect(refused?.message.contains("Recursive call is not allowed") == true, "\(String(describing: refused))")
        }
    }

    @Test("create and update see the incoming document; update compares it with the stored one")
    func writes() throws {
        let rules = try load(rulesFile("""
                match /posts/{id} {
                  allow create: if request.resource.data.title is string && request.resource.data.title.size() <= 10
                    && request.resource.id == id && request.method == 'create' && resource == null;
                  allow update: if request.resource.data.diff(resource.data).affectedKeys().hasOnly(['title'])
                    && request.resource.__name__ == resource.__name__;
                  allow delete: if resource.data.owner == request.auth.uid;
                }
            """))
        let doc = try path("posts/p1")
        #expect(rules.authorize(.create(doc, data: ["title": "short"], auth: nil, time: testTime)).isAllowed)
        #expect(!rules.authorize(.create(doc, data: ["title": "much too long"], auth: nil, time: testTime)).isAllowed)
        #expect(!rules.authorize(.create(doc, data: ["body": "no title"], auth: nil, time: testTime)).isAllowed)
        let stored: [String: Value] = ["title": "a", "owner": "alice"]
        #expect(rules.authorize(.update(doc, existing: stored, after: ["title": "b", "owner": "alice"], auth: nil, time: testTime)).isAllowed)
        #expect(!rules.authorize(.update(doc, existing: stored, after: ["title": "b", "owner": "bob"], auth: nil, time: testTime)).isAllowed)
        #expect(!rules.authorize(.update(doc, existing: stored, after: ["title": "b"], auth: nil, time: testTime)).isAllowed)
        #expect(rules.authorize(.delete(doc, existing: stored, auth: alice, time: testTime)).isAllowed)
        #expect(!rules.authorize(.delete(doc, existing: stored, auth: bob, time: testTime)).isAllowed)
        #expect(!rules.authorize(.delete(doc, existing: nil, auth: alice, time: testTime)).isAllowed)
    }
}
