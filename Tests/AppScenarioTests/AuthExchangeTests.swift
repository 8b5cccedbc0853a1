import Foundation
import HearthAuth
import HearthHTTP
import HearthModel
@_spi(Internals) import HearthRuntime
import HearthTesting
import Synchronization
import Testing

/// Fake Apple and GitHub on 127.0.0.1. Apple checks the client secret Hearth signs: its ES256
/// signature with the team's public key, issuer, subject, audience, and that it is unexpired at
/// the runtime's (manual) time.
final class FakeProviders: Sendable {
    let teamKey: Key
    let now: Timestamp
    let state = Mutex(State())
    let running = Mutex<HTTPServer?>(nil)
    struct State {
        var appleRevoked: [String] = []
        var githubRevoked: [String] = []
        var refusedSecrets = 0
    }

    init(now: Timestamp) throws {
        teamKey = try Key.generateP256()
        self.now = now
    }

    func start() throws -> String {
        let server = HTTPServer(configuration: HTTPServer.Configuration()) { [self] request in self.handle(request) }
        try server.start()
        running.withLock { $0 = server }
        return "http://127.0.0.1:\(server.port)"
    }

    func stop() async { await running.withLock { $0 }?.shutdown(grace: .seconds(1)) }

    func form(_ request: HTTPServerRequest) -> [String: String] {
        Dictionary(PercentEncoding.formItems(String(decoding: request.body, as: UTF8.self)), uniquingKeysWith: { a, _ in a })
    }

    func validClientSecret(_ secret: String?) -> Bool {
        guard let secret, let jwt = try? JWT.decode(secret), jwt.keyID == "KEY123",
              (try? JWT.verifySignature(jwt, keys: ["KEY123": teamKey])) != nil,
              jwt.claims["iss"] == "TEAM123", jwt.claims["sub"] == "com.example.todo", jwt.claims["aud"] == "https://appleid.apple.com",
              let exp = jwt.claims["exp"]?.intValue, exp > now.seconds, let iat = jwt.claims["iat"]?.intValue, exp - iat <= 15_777_000 else {
            state.withLock { $0.refusedSecrets += 1 }
            return false
        }
        return true
    }

    func handle(_ request: HTTPServerRequest) -> HTTPServerResponse {
        switch request.path {
        case "/apple/auth/token":
            let f = form(request)
            guard f["client_id"] == "com.example.todo", f["grant_type"] == "authorization_code", validClientSecret(f["client_secret"]) else {
                return .json(["error": "invalid_client"], status: 400)
            }
            switch f["code"] {
            case "good-code":
                let idToken = JWT.unsigned(["iss": "https://appleid.apple.com", "aud": "com.example.todo", "sub": "apple-001",
                                            "email": "kim@privaterelay.appleid.com", "iat": .int(now.seconds), "exp": .int(now.seconds + 600)])
                return .json(["access_token": "a-at", "refresh_token": "apple-refresh", "id_token": .string(idToken), "token_type": "Bearer"])
            case "down": return .json(["error": "server"], status: 503)
            default: return .json(["error": "invalid_grant"], status: 400)
            }
        case "/apple/auth/revoke":
            let f = form(request)
            guard validClientSecret(f["client_secret"]), let token = f["token"] else { return .json(["error": "invalid_client"], status: 400) }
            state.withLock { $0.appleRevoked.append(token) }
            return .text("")
        case "/gh/login/oauth/access_token":
            let f = form(request)
            guard f["client_id"] == "gh-client", f["client_secret"] == "gh-secret" else { return .json(["error": "incorrect_client_credentials"]) }
            return f["code"] == "gh-code" ? .json(["access_token": "gho_token", "token_type": "bearer", "scope": "user:email"])
                                          : .json(["error": "bad_verification_code"])
        case "/ghapi/user":
            guard request.headers["authorization"] == "Bearer gho_token", request.headers["user-agent"] != nil else { return .json(["message": "Bad credentials"], status: 401) }
            return .json(["id": 4242, "login": "octo", "name": .null, "email": .null])
        case "/ghapi/user/emails":
            guard request.headers["authorization"] == "Bearer gho_token" else { return .json(["message": "Bad credentials"], status: 401) }
            return .json([["email": "old@example.com", "primary": false, "verified": true],
                          ["email": "octo@example.com", "primary": true, "verified": true]])
        case "/ghapi/applications/gh-client/grant" where request.method == "DELETE":
            guard request.headers["authorization"] == "Basic " + Base64.encode(Array("gh-client:gh-secret".utf8)),
                  let token = (try? JSONParser.parse(request.body))?["access_token"]?.stringValue else { return .json(["message": "no"], status: 401) }
            state.withLock { $0.githubRevoked.append(token) }
            return HTTPServerResponse(status: 204)
        default:
            return .json(["error": "not found"], status: 404)
        }
    }
}

@Suite("Sign-in exchanges (SCENARIOS §1) against fake Apple and GitHub")
struct AuthExchangeTests {
    static let start = Timestamp(seconds: 1_767_225_600)

    func app(_ fake: FakeProviders, _ base: String, secrets: [String: String]? = nil, allow: [String]? = nil) async throws -> TestRuntime {
        let dir = NSTemporaryDirectory() + "hearth-exchange-" + SystemRandom().autoID()
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let file = dir + "/secrets.toml"
        let values = try secrets ?? ["APPLE_TEAM_ID": "TEAM123", "APPLE_KEY_ID": "KEY123", "APPLE_CLIENT_ID": "com.example.todo",
                                 "APPLE_PRIVATE_KEY": try fake.teamKey.privatePEM(), "GITHUB_CLIENT_ID": "gh-client", "GITHUB_CLIENT_SECRET": "gh-secret"]
        let toml = values.map { "\($0.key) = \"\"\"\n\($0.value)\"\"\"" }.joined(separator: "\n")
        #expect(FileManager.default.createFile(atPath: file, contents: Data(toml.utf8), attributes: [.posixPermissions: 0o600]))
        return try await TestRuntime(units: appUnits + ["AuthExchange", "AppAPI"], start: Self.start) { config in
            config.secretsFile = file
            config.server.port = 0
            config.rewrites = APIClient.rewrites + [.init(source: "/api/auth/*", function: "authApi")]
            config.outbound.allow = allow ?? [base + "/apple/", base + "/gh/", base + "/ghapi/"]
            // Generous: on 2 cores the heaviest tests (child processes, 10,000 writes) can stall
            // this process for tens of seconds.
            config.outbound.timeoutSeconds = 120
            config.params = ["APPLE_BASE_URL": base + "/apple", "GITHUB_BASE_URL": base + "/gh", "GITHUB_API_URL": base + "/ghapi"]
        }
    }

    func code(_ body: () async throws -> Void) async -> HTTPSError? {
        do { try await body(); return nil } catch let e as HTTPSError { return e } catch { return HTTPSError(.unknown, "\(error)") }
    }

    @Test("Apple: the code becomes a custom token for a new user linked to apple.com; the same Apple account signs in to the same user")
    func apple() async throws {
        let fake = try FakeProviders(now: Self.start)
        let base = try fake.start()
        let app = try await app(fake, base)
        let reply = try await app.call("exchangeAppleCode", ["authorizationCode": "good-code"])
        let custom = try #require(reply["customToken"]?.stringValue)
        let session = try await app.runtime.auth.signInWithCustomToken(custom)
        let user = try await app.runtime.users.get(.uid(session.uid))
        #expect(user.providerData.contains { $0.providerId == "apple.com" && $0.uid == "apple-001" })
        #expect(user.email == "kim@privaterelay.appleid.com")
        #expect(try await app.document("members/\(session.uid)/profiles/secrets")?.fields["appleRefreshToken"] == "apple-refresh")
        let again = try await app.call("exchangeAppleCode", ["authorizationCode": "good-code"])
        #expect(try await app.runtime.auth.signInWithCustomToken(try #require(again["customToken"]?.stringValue)).uid == session.uid)
        #expect(fake.state.withLock { $0.refusedSecrets } == 0, "Apple accepted every client secret")

        #expect(await code { try await app.call("exchangeAppleCode", [:]) }?.code == .invalidArgument)
        #expect(await code { try await app.call("exchangeAppleCode", ["authorizationCode": "stale"]) }?.code == .unauthenticated)
        #expect(await code { try await app.call("exchangeAppleCode", ["authorizationCode": "down"]) }?.code == .unavailable)

        // Revoking before the account is deleted.
        _ = try await app.call("revokeProvider", ["provider": "apple.com"], as: session.uid)
        #expect(fake.state.withLock { $0.appleRevoked } == ["apple-refresh"])
        #expect(try await app.document("members/\(session.uid)/profiles/secrets")?.fields["appleRefreshToken"] == .null)
        #expect(await code { try await app.call("revokeProvider", ["provider": "apple.com"]) }?.code == .unauthenticated)
        #expect(await code { try await app.call("revokeProvider", ["provider": "myspace"], as: session.uid) }?.code == .invalidArgument)
        await fake.stop()
    }

    @Test("GitHub: no public email, so the primary verified one; the token is stored, and revoked with the app's credentials")
    func github() async throws {
        let fake = try FakeProviders(now: Self.start)
        let base = try fake.start()
        let app = try await app(fake, base)
        let reply = try await app.call("exchangeGitHubCode", ["code": "gh-code"])
        let uid = try await app.runtime.auth.signInWithCustomToken(try #require(reply["customToken"]?.stringValue)).uid
        let user = try await app.runtime.users.get(.uid(uid))
        #expect(user.email == "octo@example.com")
        #expect(user.displayName == "octo")
        #expect(user.providerData.contains { $0.providerId == "github.com" && $0.uid == "4242" })
        #expect(try await app.document("members/\(uid)/profiles/secrets")?.fields["githubAccessToken"] == "gho_token")
        #expect(await code { try await app.call("exchangeGitHubCode", ["code": "nope"]) }?.code == .unauthenticated)
        _ = try await app.call("revokeProvider", ["provider": "github.com"], as: uid)
        #expect(fake.state.withLock { $0.githubRevoked } == ["gho_token"])
        #expect(try await app.document("members/\(uid)/profiles/secrets")?.fields["githubAccessToken"] == .null)
        await fake.stop()
    }

    @Test("the same exchanges over HTTP: /api/auth/apple and /api/auth/github answer {customToken}; /api/auth/google the verified user")
    func overHTTP() async throws {
        let fake = try FakeProviders(now: Self.start)
        let base = try fake.start()
        let app = try await app(fake, base)
        let api = APIClient(app: app, door: try FrontDoor(runtime: app.runtime, secrets: Secrets()))
        try api.door.start()
        let apple = try await api.send("POST", "/api/auth/apple", as: nil, json: ["authorizationCode": "good-code"])
        #expect(apple.status == 200, "\(apple.body)")
        let uid = try await app.runtime.auth.signInWithCustomToken(try #require(apple.body["customToken"]?.stringValue)).uid
        let github = try await api.send("POST", "/api/auth/github", as: nil, json: ["code": "gh-code"])
        #expect(github.status == 200, "\(github.body)")
        #expect(try await api.send("POST", "/api/auth/github", as: nil, json: ["code": "nope"]).status == 401)
        #expect(try await api.send("POST", "/api/auth/apple", as: nil, json: [:]).status == 400)
        let google = try await api.send("POST", "/api/auth/google", as: uid)
        #expect(google.body["uid"] == .string(uid))
        #expect(google.body["providers"] == ["apple.com"])
        #expect(try await api.send("POST", "/api/auth/google", as: nil).status == 401)
        #expect(try await api.send("GET", "/api/auth/apple", as: nil).status == 405)
        await api.door.shutdown(grace: .seconds(2))
        await fake.stop()
    }

    @Test("a missing secret is failed-precondition naming it, never its value; a base URL outside [outbound] allow is refused")
    func configurationErrors() async throws {
        let fake = try FakeProviders(now: Self.start)
        let base = try fake.start()
        let noKey = try await app(fake, base, secrets: ["APPLE_TEAM_ID": "TEAM123", "APPLE_CLIENT_ID": "com.example.todo", "APPLE_PRIVATE_KEY": "-----SECRET-PEM-----"])
        let missing = await code { try await noKey.call("exchangeAppleCode", ["authorizationCode": "good-code"]) }
        #expect(missing?.code == .failedPrecondition)
        #expect(missing?.message.contains("APPLE_KEY_ID") == true)
        #expect(missing?.message.contains("SECRET-PEM") == false)

        let fenced = try await app(fake, base, allow: ["https://appleid.apple.com"])
        let refused = await code { try await fenced.call("exchangeGitHubCode", ["code": "gh-code"]) }
        #expect(refused?.code == .permissionDenied, "\(String(describing: refused))")
        await fake.stop()
    }
}

@Suite("Outbound HTTP: the allow list")
struct OutboundAllowTests {
    @Test("a URL is allowed only under a listed base URL: same scheme, host, port, and path prefix at a segment boundary")
    func allows() {
        var o = RuntimeConfig.Outbound()
        o.allow = ["https://appleid.apple.com", "https://api.github.com/", "http://127.0.0.1:8080/fake"]
        #expect(o.allows("https://appleid.apple.com/auth/token"))
        #expect(o.allows("https://appleid.apple.com"))
        #expect(o.allows("https://api.github.com/user/emails"))
        #expect(o.allows("http://127.0.0.1:8080/fake/token"))
        #expect(!o.allows("https://appleid.apple.com.evil.example/auth"), "a longer host is another host")
        #expect(!o.allows("http://appleid.apple.com/auth/token"), "another scheme")
        #expect(!o.allows("http://127.0.0.1:8081/fake/token"), "another port")
        #expect(!o.allows("http://127.0.0.1:8080/fakery"), "a path prefix stops at a segment")
        #expect(!o.allows("https://api.github.com@evil.example/"))
        #expect(!o.allows("http://127.0.0.1:8080/fake/../admin"), "dot segments curl would normalize past the prefix")
        #expect(!o.allows("http://127.0.0.1:8080/fake/%2E%2E/admin"))
        #expect(!o.allows("http://127.0.0.1:8080/fake/./x"))
        #expect(o.allows("HTTPS://AppleID.Apple.com/auth/token"), "scheme and host compare case-insensitively")
        #expect(!o.allows("http://127.0.0.1:8080/FAKE/token"), "paths exactly")
        #expect(RuntimeConfig.Outbound.origin("https://user:pw@api.github.com:8443/x?access_token=s") == "https://api.github.com:8443",
                "logs name the origin, never userinfo or query")
    }
}
