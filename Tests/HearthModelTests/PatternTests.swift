import Foundation
import HearthModel
import Testing

struct MatchCase: Sendable, CustomTestStringConvertible {
    var pattern: String
    var path: String
    var captures: [String: String]?
    var testDescription: String { "\(pattern) ~ \(path)" }
}

@Suite("Path patterns")
struct PatternTests {
    @Test("patterns match documents and capture their wildcards", arguments: [
        MatchCase(pattern: "users/{uid}", path: "users/alice", captures: ["uid": "alice"]),
        MatchCase(pattern: "users/{uid=*}", path: "users/alice", captures: ["uid": "alice"]),
        MatchCase(pattern: "users/{uid}", path: "users/alice/items/i1", captures: nil),
        MatchCase(pattern: "users/{uid}", path: "teams/alice", captures: nil),
        MatchCase(pattern: "users/{uid}/items/{itemId}", path: "users/alice/items/i1", captures: ["uid": "alice", "itemId": "i1"]),
        MatchCase(pattern: "users/{uid}/items/{itemId}", path: "users/alice/notes/i1", captures: nil),
        MatchCase(pattern: "users/{uid}/items/{itemId}", path: "users/alice", captures: nil),
        MatchCase(pattern: "{coll}/{doc}", path: "anything/x", captures: ["coll": "anything", "doc": "x"]),
        MatchCase(pattern: "users/alice", path: "users/alice", captures: [:]),
        MatchCase(pattern: "users/alice", path: "users/bob", captures: nil),
        MatchCase(pattern: "users/{rest=**}", path: "users/alice", captures: ["rest": "alice"]),
        MatchCase(pattern: "users/{rest=**}", path: "users/alice/items/i1", captures: ["rest": "alice/items/i1"]),
        MatchCase(pattern: "users/{rest=**}", path: "teams/alice", captures: nil),
        MatchCase(pattern: "{all=**}", path: "a/b/c/d", captures: ["all": "a/b/c/d"]),
        MatchCase(pattern: "users/{uid}/{rest=**}", path: "users/alice/items/i1", captures: ["uid": "alice", "rest": "items/i1"]),
        MatchCase(pattern: "users/{uid}/{rest=**}", path: "users/alice", captures: nil),
        MatchCase(pattern: "{rest=**}/items/{id}", path: "users/alice/items/i1", captures: ["rest": "users/alice", "id": "i1"]),
        MatchCase(pattern: "{rest=**}/items/{id}", path: "a/b/c/d/items/i1", captures: ["rest": "a/b/c/d", "id": "i1"]),
        MatchCase(pattern: "{rest=**}/items/{id}", path: "users/alice/notes/i1", captures: nil),
        MatchCase(pattern: "users/{p=**}/items/{id}", path: "users/a/items/i", captures: ["p": "a", "id": "i"]),
        MatchCase(pattern: "users/{p=**}/items/{id}", path: "users/a/b/c/items/i", captures: ["p": "a/b/c", "id": "i"]),
    ])
    func matching(_ c: MatchCase) throws {
        let pattern = try PathPattern(c.pattern)
        #expect(pattern.match(try DocumentPath(c.path)) == c.captures)
    }

    @Test("{x=**} needs at least one segment")
    func restNeedsOneSegment() throws {
        let pattern = try PathPattern("users/{rest=**}")
        #expect(pattern.match(segments: ["users"]) == nil)
        #expect(pattern.match(segments: ["users", "a"]) == ["rest": "a"])
        let middle = try PathPattern("a/{m=**}/z")
        #expect(middle.match(segments: ["a", "z"]) == nil)
        #expect(middle.match(segments: ["a", "b", "z"]) == ["m": "b"])
    }

    @Test("pattern properties: exactness, names in order, literal prefix, text")
    func properties() throws {
        let exact = try PathPattern("users/alice")
        #expect(exact.isExact)
        #expect(exact.parameterNames.isEmpty)
        #expect(exact.literalPrefix == ["users", "alice"])
        let p = try PathPattern("users/{uid}/items/{rest=**}")
        #expect(!p.isExact)
        #expect(p.parameterNames == ["uid", "rest"])
        #expect(p.literalPrefix == ["users"])
        #expect(p.segments == [.literal("users"), .capture("uid"), .literal("items"), .captureRest("rest")])
        #expect(p.description == "users/{uid}/items/{rest=**}")
        #expect(try PathPattern("{a}/b").literalPrefix == [])
        #expect(try PathPattern("users/{uid=*}").segments == [.literal("users"), .capture("uid")])
    }

    @Test("invalid patterns are refused with the reason", arguments: [
        PathErrorCase(path: "", message: "invalid path pattern: empty"),
        PathErrorCase(path: "users", message: "invalid path pattern 'users': it names a collection; a trigger pattern must name documents (an even number of segments)"),
        PathErrorCase(path: "users/{uid}/items", message: "invalid path pattern 'users/{uid}/items': it names a collection; a trigger pattern must name documents (an even number of segments)"),
        PathErrorCase(path: "{a=**}/x/{b=**}", message: "invalid path pattern '{a=**}/x/{b=**}': at most one {name=**} wildcard"),
        PathErrorCase(path: "{a}/{a}", message: "invalid path pattern '{a}/{a}': wildcard 'a' appears twice"),
        PathErrorCase(path: "{a}/x/{a=**}", message: "invalid path pattern '{a}/x/{a=**}': wildcard 'a' appears twice"),
        PathErrorCase(path: "users/a{b}", message: "invalid path pattern 'users/a{b}': braces must enclose a whole segment ('a{b}')"),
        PathErrorCase(path: "users/a}", message: "invalid path pattern 'users/a}': braces must enclose a whole segment ('a}')"),
        PathErrorCase(path: "users/{b}c", message: "invalid path pattern 'users/{b}c': malformed wildcard '{b}c'"),
        PathErrorCase(path: "users/{}", message: "invalid path pattern 'users/{}': malformed wildcard '{}'"),
        PathErrorCase(path: "users/{uid", message: "invalid path pattern 'users/{uid': malformed wildcard '{uid'"),
        PathErrorCase(path: "users/{1abc}", message: "invalid path pattern 'users/{1abc}': wildcard name '1abc' must be letters, digits and '_'"),
        PathErrorCase(path: "users/{a-b}", message: "invalid path pattern 'users/{a-b}': wildcard name 'a-b' must be letters, digits and '_'"),
        PathErrorCase(path: "users/{=*}", message: "invalid path pattern 'users/{=*}': wildcard name '' must be letters, digits and '_'"),
        PathErrorCase(path: "users/{a=***}", message: "invalid path pattern 'users/{a=***}': wildcard '{a=***}' must be {name}, {name=*} or {name=**}"),
        PathErrorCase(path: "users/{a=}", message: "invalid path pattern 'users/{a=}': wildcard '{a=}' must be {name}, {name=*} or {name=**}"),
        PathErrorCase(path: "/users/{uid}", message: "invalid path '/users/{uid}': empty segment"),
        PathErrorCase(path: "users//{uid}/x", message: "invalid path 'users//{uid}/x': empty segment"),
        PathErrorCase(path: "users/__x__", message: "invalid path 'users/__x__': ids of the form __.*__ are reserved ('__x__')"),
        PathErrorCase(path: "users/..", message: "invalid path 'users/..': '..' is not a valid id"),
    ])
    func invalid(_ c: PathErrorCase) throws {
        let error = try #require(pathError { _ = try PathPattern(c.path) })
        #expect(error.code == .invalidArgument)
        #expect(error.message == c.message)
    }

    @Test("a ** pattern may name documents at any depth, so its segment count is free")
    func restParity() throws {
        #expect(try PathPattern("users/{rest=**}/items").match(try DocumentPath("users/a/b/items")) == ["rest": "a/b"])
        #expect(try PathPattern("{all=**}").parameterNames == ["all"])
    }

    @Test("patterns encode as their text and refuse invalid text when decoded")
    func codable() throws {
        let pattern = try PathPattern("users/{uid}")
        let data = try JSONEncoder().encode([pattern])
        #expect(try JSONDecoder().decode([PathPattern].self, from: data) == [pattern])
        #expect(throws: DecodingError.self) { try JSONDecoder().decode([PathPattern].self, from: Data(#"["users"]"#.utf8)) }
    }

    @Test("random document paths match only patterns of their own shape")
    func randomMatching() throws {
        var rng = SplitMix64(seed: 11)
        let ids = ["a", "b", "users", "items", "x"]
        for _ in 0..<500 {
            let depth = Int.random(in: 1...4, using: &rng)
            let segments = (0..<(depth * 2)).map { _ in ids.randomElement(using: &rng)! }
            let path = DocumentPath(trustedSegments: segments)
            // The all-wildcard pattern of the same length matches and captures every segment.
            let names = segments.indices.map { "p\($0)" }
            let pattern = try PathPattern(names.map { "{\($0)}" }.joined(separator: "/"))
            let captures = try #require(pattern.match(path))
            #expect(names.map { captures[$0] } == segments)
            // The exact pattern matches itself only.
            #expect(try PathPattern(path.description).match(path) == [:])
            // One level deeper never matches a single-segment wildcard pattern.
            let deeper = DocumentPath(trustedSegments: segments + ["sub", "doc"])
            #expect(pattern.match(deeper) == nil)
            // A leading ** wildcard captures everything before the last document id.
            let tail = try PathPattern("{rest=**}/{id}")
            #expect(tail.match(path) == ["rest": segments.dropLast().joined(separator: "/"), "id": segments.last!])
        }
    }
}
