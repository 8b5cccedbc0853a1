import Foundation
import HearthAuth
import HearthHTTP
import HearthModel
@_spi(Internals) @testable import HearthRuntime
import Testing

@Suite("CORS and App Check over HTTP")
struct CORSAppCheckTests {
    @Test("by default any origin is reflected with Vary: Origin")
    func defaultReflects() async throws {
        try await withFrontDoor { door in
            let r = try await door.call("echo", 1, headers: [("Origin", "https://todo.example.com")])
            #expect(r.status == 200)
            #expect(r.headers["access-control-allow-origin"] == "https://todo.example.com")
            #expect(r.headers.values("vary").contains("Origin"))
            // Errors carry the headers too, so a browser app can read them.
            let failed = try await door.call("fail", ["code": "not-found", "message": "gone"], headers: [("Origin", "https://todo.example.com")])
            #expect(failed.headers["access-control-allow-origin"] == "https://todo.example.com")
            let missing = try await door.call("nope", 1, headers: [("Origin", "https://todo.example.com")])
            #expect(missing.status == 404)
            #expect(missing.headers["access-control-allow-origin"] == "https://todo.example.com")
        }
    }

    @Test("without an Origin nothing is reflected, and every answer says it depends on the Origin: calls, 404s, Firestore REST, preflights")
    func noOrigin() async throws {
        try await withFrontDoor { door in
            func expectNoAllowOrigin(_ r: HTTPClientResponse, status: Int, _ what: String) {
                #expect(r.status == status, "\(what): \(r.text)")
                #expect(r.headers["access-control-allow-origin"] == nil, "\(what)")
                #expect(r.headers.values("vary").contains("Origin"), "\(what)")
            }
            expectNoAllowOrigin(try await door.call("echo", 1), status: 200, "a call")
            expectNoAllowOrigin(try await door.call("nope", 1), status: 404, "a call to no function")
            expectNoAllowOrigin(try await door.send("GET", "/api/none"), status: 404, "a path that routes nowhere")
            expectNoAllowOrigin(try await door.send("OPTIONS", "/echo", headers: [("Access-Control-Request-Method", "POST")]), status: 204, "a preflight")
            let documents = "/v1/projects/\(door.runtime.config.project)/databases/(default)/documents/items/x"
            let rest = try await door.send("GET", documents)
            #expect(rest.headers["access-control-allow-origin"] == nil)
            #expect(rest.headers.values("vary").contains("Origin"))
            // The same with an Origin: reflected, on Firestore REST as on calls.
            let fromSite = try await door.send("GET", documents, headers: [("Origin", "https://todo.example.com")])
            #expect(fromSite.headers["access-control-allow-origin"] == "https://todo.example.com")
            #expect(fromSite.headers.values("vary").contains("Origin"))
        }
    }

    @Test("an onRequest function's cors option: its preflights answered, its responses given the headers; none without the option")
    func onRequestCORS() async throws {
        try await withFrontDoor { door in
            let allowed = try await door.send("GET", "/corsRequest", headers: [("Origin", "https://app.example.com")])
            #expect(allowed.status == 200)
            #expect(allowed.text == "ok")
            #expect(allowed.headers["access-control-allow-origin"] == "https://app.example.com")
            #expect(allowed.headers.values("vary").contains("Origin"))
            let refused = try await door.send("GET", "/corsRequest", headers: [("Origin", "https://evil.test")])
            #expect(refused.status == 200)  // the browser enforces CORS; the request itself runs
            #expect(refused.headers["access-control-allow-origin"] == nil)
            let pre = try await door.send("OPTIONS", "/corsRequest", headers: [("Origin", "https://app.example.com"), ("Access-Control-Request-Method", "PUT")])
            #expect(pre.status == 204)
            #expect(pre.headers["access-control-allow-origin"] == "https://app.example.com")
            #expect(pre.headers["access-control-allow-methods"] == "GET, POST, PUT, PATCH, DELETE, OPTIONS")
            // Without the option the function gets the request, preflights included, and answers it.
            let plain = try await door.send("GET", "/hello", headers: [("Origin", "https://app.example.com")])
            #expect(plain.status == 200)
            #expect(plain.headers["access-control-allow-origin"] == nil)
            #expect(plain.headers.values("vary").isEmpty)
            let plainPre = try await door.send("OPTIONS", "/hello", headers: [("Origin", "https://app.example.com")])
            #expect(plainPre.text == "hello world via OPTIONS /hello")
        }
    }

    @Test("a preflight answers 204 allowing POST and the requested headers", arguments: ["/echo", "/hearth-local/us-central1/echo"])
    func preflight(path: String) async throws {
        try await withFrontDoor { door in
            let r = try await door.send("OPTIONS", path, headers: [("Origin", "https://todo.example.com"), ("Access-Control-Request-Method", "POST"),
                                                                   ("Access-Control-Request-Headers", "content-type,authorization,x-firebase-appcheck")])
            #expect(r.status == 204)
            #expect(r.headers["access-control-allow-origin"] == "https://todo.example.com")
            #expect(r.headers["access-control-allow-methods"] == "POST")
            #expect(r.headers["access-control-allow-headers"] == "content-type,authorization,x-firebase-appcheck")
            #expect(r.body.isEmpty)
        }
    }

    @Test("a cors list allows exact origins and globs, and nothing else", arguments: [
        ("https://app.example.com", true), ("https://beta.example.org", true), ("https://example.org", false),
        ("https://evil.test", false), ("http://app.example.com", false), ("https://app.example.com.evil.test", false),
    ])
    func restricted(origin: String, allowed: Bool) async throws {
        try await withFrontDoor { door in
            let r = try await door.call("restricted", 1, headers: [("Origin", origin)])
            #expect(r.status == 200)  // CORS is the browser's to enforce; the call itself runs
            #expect(r.headers["access-control-allow-origin"] == (allowed ? origin : nil))
            #expect(r.headers.values("vary").contains("Origin"))
            let pre = try await door.send("OPTIONS", "/restricted", headers: [("Origin", origin), ("Access-Control-Request-Method", "POST")])
            #expect(pre.status == 204)
            #expect(pre.headers["access-control-allow-origin"] == (allowed ? origin : nil))
            #expect(pre.headers["access-control-allow-methods"] == (allowed ? "POST" : nil))
        }
    }

    @Test("a cors regular expression", arguments: [("https://dev-12.example.net", true), ("https://dev-x.example.net", false)])
    func regex(origin: String, allowed: Bool) async throws {
        try await withFrontDoor { door in
            let r = try await door.call("regexOrigins", 1, headers: [("Origin", origin)])
            #expect(r.headers["access-control-allow-origin"] == (allowed ? origin : nil))
        }
    }

    @Test("the CORS headers for every policy, with and without an Origin, in order")
    func headersByPolicy() {
        func fields(_ policy: CORSPolicy?, _ origin: String?) -> [String] {
            CORS.headers(policy: policy, origin: origin).fields.map { "\($0.name): \($0.value)" }
        }
        let site = "https://app.example.com"
        #expect(fields(nil, site) == ["Access-Control-Allow-Origin: \(site)", "Vary: Origin"])
        // As the `cors` package does for firebase-functions' `origin: true`: nothing to reflect.
        #expect(fields(.allowAll, nil) == ["Vary: Origin"])
        #expect(fields(nil, nil) == ["Vary: Origin"])
        #expect(fields(.disabled, site).isEmpty)
        #expect(fields(.disabled, nil).isEmpty)
        #expect(fields(.origins([site]), site) == ["Access-Control-Allow-Origin: \(site)", "Vary: Origin"])
        #expect(fields(.origins([site]), "https://evil.test") == ["Vary: Origin"])
        #expect(fields(.origins([site]), nil) == ["Vary: Origin"])
    }

    @Test("cors: disabled sends no CORS headers at all")
    func disabled() async throws {
        try await withFrontDoor { door in
            let r = try await door.call("noCors", 1, headers: [("Origin", "https://todo.example.com")])
            #expect(r.status == 200)
            #expect(r.headers["access-control-allow-origin"] == nil)
            #expect(try await door.call("noCors", 1).headers["access-control-allow-origin"] == nil)
            let pre = try await door.send("OPTIONS", "/noCors", headers: [("Origin", "https://todo.example.com")])
            #expect(pre.headers["access-control-allow-origin"] == nil)
        }
    }

    /// An App Check signing key, its JWKS in a file, and a config that trusts it.
    struct AppCheckKeys {
        let key: Key
        let jwksPath: String

        init() throws {
            key = try Key.generateRSA()
            jwksPath = NSTemporaryDirectory() + "hearth-appcheck-\(UUID().uuidString).json"
            let jwks: Value = ["keys": [try key.publicJWK(kid: "ac-1")]]
            try Data(JSONWriter.encode(jwks)).write(to: URL(fileURLWithPath: jwksPath))
        }

        func token(now: Timestamp, appID: String = "1:123:ios:abc", audience: [String] = ["projects/123", "projects/hearth-local"],
                   issuer: String = "https://firebaseappcheck.googleapis.com/123", expiresIn: Int64 = 3600, key: Key? = nil) throws -> String {
            try JWT.sign(["sub": .string(appID), "aud": .array(audience.map { .string($0) }), "iss": .string(issuer),
                          "iat": .int(now.seconds), "exp": .int(now.seconds + expiresIn)], key: key ?? self.key, kid: "ac-1", header: ["typ": "JWT"])
        }
    }

    @Test("enforceAppCheck: a valid token passes and its app id reaches the function; missing or invalid ones are 401")
    func enforced() async throws {
        let keys = try AppCheckKeys()
        let clock = ManualClock()
        try await withFrontDoor(clock: clock, configure: { $0.appCheck.jwksFile = keys.jwksPath }) { door in
            let now = clock.now()
            let valid = try keys.token(now: now)
            let ok = try await door.call("guarded", .null, headers: [("X-Firebase-AppCheck", valid)])
            #expect(ok.status == 200)
            #expect(ok.json == ["result": "1:123:ios:abc"])
            #expect(try await door.call("headers", .null, headers: [("X-Firebase-AppCheck", valid)]).json?["result"]?["appId"] == "1:123:ios:abc")

            let unauthenticated: Value = ["error": ["status": "UNAUTHENTICATED", "message": "Unauthenticated"]]
            let refused: [(String, String?)] = [
                ("missing", nil),
                ("garbage", "not-a-token"),
                ("signed by another key", try keys.token(now: now, key: try Key.generateRSA())),
                ("another project", try keys.token(now: now, audience: ["projects/other"])),
                ("another issuer", try keys.token(now: now, issuer: "https://securetoken.google.com/hearth-local")),
                ("expired", try keys.token(now: now - .seconds(7200))),
                ("no app id", try keys.token(now: now, appID: "")),
            ]
            for (what, token) in refused {
                let r = try await door.call("guarded", .null, headers: token.map { [("X-Firebase-AppCheck", $0)] } ?? [])
                #expect(r.status == 401, "\(what)")
                #expect(r.json == unauthenticated, "\(what)")
            }
            // A function without enforcement runs with an invalid token, without an app.
            let lax = try await door.call("headers", .null, headers: [("X-Firebase-AppCheck", "not-a-token")])
            #expect(lax.status == 200)
            #expect(lax.json?["result"]?["appId"] == .null)
            // Tokens expire on the runtime's clock.
            clock.advance(by: .seconds(3600 + 301))
            #expect(try await door.call("guarded", .null, headers: [("X-Firebase-AppCheck", valid)]).status == 401)
        }
    }

    @Test("without configured App Check keys, enforcing functions refuse every call")
    func enforcedWithoutKeys() async throws {
        let keys = try AppCheckKeys()
        try await withFrontDoor { door in
            let r = try await door.call("guarded", .null, headers: [("X-Firebase-AppCheck", try keys.token(now: door.runtime.clock.now()))])
            #expect(r.status == 401)
        }
    }

    @Test("an unreadable or malformed App Check key file is a configuration error naming it")
    func badKeyFile() async throws {
        let missing = NSTemporaryDirectory() + "hearth-no-such-\(UUID().uuidString).json"
        var config = makeConfig(units: ["EchoUnit"])
        config.server.port = 0
        config.appCheck.jwksFile = missing
        let runtime = try await openRuntime(config: config)
        defer { runtime.store.close() }
        #expect(throws: ConfigError.self) { try FrontDoor(runtime: runtime, secrets: Secrets()) }
        do { _ = try FrontDoor(runtime: runtime, secrets: Secrets()) } catch { #expect("\(error)".contains(missing)) }

        let malformed = NSTemporaryDirectory() + "hearth-bad-jwks-\(UUID().uuidString).json"
        try Data(#"{"keys":[{"kty":"RSA","n":"xx"}]}"#.utf8).write(to: URL(fileURLWithPath: malformed))
        var second = config
        second.appCheck.jwksFile = malformed
        let other = try await openRuntime(config: second)
        defer { other.store.close() }
        #expect(throws: (any Error).self) { try FrontDoor(runtime: other, secrets: Secrets()) }
    }
}
