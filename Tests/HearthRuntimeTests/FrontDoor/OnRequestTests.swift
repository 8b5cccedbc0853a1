import Foundation
import HearthHTTP
import HearthModel
import HearthTOML
@_spi(Internals) @testable import HearthRuntime
import Testing

@Suite("onRequest functions and rewrites")
struct OnRequestTests {
    static func rewrites(_ config: inout RuntimeConfig) {
        config.rewrites = [
            .init(source: "/api/hello", function: "hello"),
            .init(source: "/api/me", function: "whoamiRequest"),
            .init(source: "/api/*/mirror", function: "hello"),  // listed before the ** below, so it wins
            .init(source: "/api/echo/**", function: "echoRequest"),
        ]
    }

    @Test("an HTTPSError from an onRequest function is its answer; Hearth's own internal failure let through is 500 INTERNAL")
    func errorsFromRequests() async throws {
        try await withFrontDoor(units: ["DocsUnit"], configure: { $0.rewrites = [.init(source: "/api/docs/**", function: "docsRequest")] }) { door in
            let refused = try await door.send("GET", "/api/docs/refused")
            #expect(refused.status == 403)
            #expect(refused.json?["error"]?["message"] == "not for you")
            let hidden = try await door.send("GET", "/api/docs/undecodable")
            #expect(hidden.status == 500)
            #expect(!hidden.text.contains("does not decode"), "\(hidden.text)")
            #expect(door.log.contains("does not decode as Note"))
        }
    }

    @Test("a rewrite passes method, raw path, query, headers and the exact body bytes, and returns the function's response")
    func echo() async throws {
        try await withFrontDoor(configure: Self.rewrites) { door in
            let bytes: [UInt8] = [0, 1, 2, 0xFF, 0xFE, 10, 13]
            let r = try await door.client.send(HTTPClientRequest(method: "PUT", url: door.base + "/api/echo/a/b%20c?x=1&y=two",
                                                                 headers: HTTPHeaders([("Content-Type", "application/x-thing")]), body: bytes, timeout: .seconds(120)))
            #expect(r.status == 200)
            #expect(r.body == bytes)
            #expect(r.headers["content-type"] == "application/x-thing")
            #expect(r.headers["x-echo-method"] == "PUT")
            #expect(r.headers["x-echo-path"] == "/api/echo/a/b%20c")
            #expect(r.headers["x-echo-query"] == "x=1&y=two")
            // `**` also matches the prefix itself.
            let bare = try await door.send("DELETE", "/api/echo")
            #expect(bare.status == 200)
            #expect(bare.headers["x-echo-method"] == "DELETE")
        }
    }

    @Test("rewrites match in order: exact paths, one-segment stars, and everything under **", arguments: [
        ("/api/hello?name=Ann", 200, "hello Ann via GET /api/hello"),
        ("/api/hello/", 200, "hello world via GET /api/hello/"),
        ("/api/echo/mirror", 200, "hello world via GET /api/echo/mirror"),
        ("/api/x/mirror", 200, "hello world via GET /api/x/mirror"),
        ("/api/hello/extra", 404, #"{"error":{"status":"NOT_FOUND","message":"no route for /api/hello/extra"}}"#),
        ("/api", 404, #"{"error":{"status":"NOT_FOUND","message":"no route for /api"}}"#),
    ])
    func matching(path: String, status: Int, body: String) async throws {
        try await withFrontDoor(configure: Self.rewrites) { door in
            let r = try await door.send("GET", path)
            #expect(r.status == status)
            if status == 200 {
                #expect(r.text == body)
            } else {
                #expect(r.json == (try JSONParser.parse(Array(body.utf8))))
            }
        }
    }

    @Test("an onRequest function is also reachable at its own name")
    func directRoute() async throws {
        try await withFrontDoor { door in
            let r = try await door.send("GET", "/hello?name=Bo")
            #expect(r.text == "hello Bo via GET /hello")
            #expect(try await door.send("GET", "/hearth-local/us-central1/hello").text == "hello world via GET /hearth-local/us-central1/hello")
        }
    }

    @Test("onRequest functions verify ID tokens with the same helper")
    func verifiedAuth() async throws {
        try await withFrontDoor(configure: Self.rewrites) { door in
            let none = try await door.send("GET", "/api/me")
            #expect(none.status == 401)
            #expect(none.json?["error"]?["status"] == "UNAUTHENTICATED")
            let bad = try await door.send("GET", "/api/me", headers: [("Authorization", "Bearer forged")])
            #expect(bad.status == 401)
            let token = try await door.idToken("carol")
            let ok = try await door.send("GET", "/api/me", headers: [("Authorization", "Bearer \(token)")])
            #expect(ok.status == 200)
            #expect(ok.json == ["uid": "carol"])
        }
    }

    @Test("rewrites to unknown or non-onRequest functions, shadowing callables, or with bad globs are configuration errors")
    func conflicts() async throws {
        var config = makeConfig(units: ["EchoUnit"])
        config.server.port = 0
        config.rewrites = [
            .init(source: "/api/x", function: "missing"),
            .init(source: "/api/y", function: "echo"),
            .init(source: "/echo", function: "hello"),
            .init(source: "/**", function: "hello"),
            .init(source: "/api/**/z", function: "hello"),
            .init(source: "api/w", function: "hello"),
        ]
        let runtime = try await openRuntime(config: config)
        defer { runtime.store.close() }
        await runtime.loadUnits()
        do {
            _ = try FrontDoor(runtime: runtime, secrets: Secrets())
            Issue.record("the configuration was accepted")
        } catch {
            let text = "\(error)"
            #expect(text.contains("rewrites[0] points to 'missing', which no loaded unit declares"))
            #expect(text.contains("rewrites[1] points to 'echo', a callable function; rewrites need onRequest functions"))
            #expect(text.contains("rewrites[2] '/echo' shadows the route of callable 'echo'"))
            #expect(text.contains("rewrites[3] '/**' shadows the route of callable"))
            #expect(text.contains("rewrites[4].source '/api/**/z': '**' may only end the path"))
            #expect(text.contains("rewrites[5].source 'api/w' must start with '/'"))
        }
    }

    @Test("rewrites parse from runtime.toml")
    func fromTOML() throws {
        let config = try RuntimeConfig(table: try TOML.parse("""
            project = "demo-x"
            [[rewrites]]
            source = "/api/todos"
            function = "todos"
            [[rewrites]]
            source = "/api/todos/**"
            function = "todos"
            """), baseDirectory: "/tmp")
        #expect(config.rewrites == [.init(source: "/api/todos", function: "todos"), .init(source: "/api/todos/**", function: "todos")])
        #expect(throws: ConfigError.self) { try RuntimeConfig(table: try TOML.parse("[[rewrites]]\nsource = \"/api\"\n"), baseDirectory: "/tmp") }
    }
}
