import Foundation
import Synchronization
import HearthAuth
import HearthHTTP
import HearthModel
@_spi(Internals) @testable import HearthRuntime
import HearthTesting
import HearthTOML
import Testing

/// `verifyAssertion` (accounts:signInWithIdp) with Google and Apple ID tokens signed by a test key
/// set, as the iOS SDK sends them after GoogleSignIn or Sign in with Apple.
@Suite("Client auth: Google and Apple sign-in")
struct ProviderSignInTests {
    static let googleClient = "1234-test.apps.googleusercontent.com"
    static let appleClient = "com.example.todo"

    func providers(_ dir: String) throws -> (google: TestProvider, apple: TestProvider) {
        (try TestProvider(issuer: "https://accounts.google.com", audience: Self.googleClient, directory: dir),
         try TestProvider(issuer: "https://appleid.apple.com", audience: Self.appleClient, directory: dir))
    }

    func configure(_ config: inout RuntimeConfig, _ p: (google: TestProvider, apple: TestProvider)) {
        config.auth.googleClientIDs = [Self.googleClient]
        config.auth.googleJWKS = p.google.jwksPath
        config.auth.appleClientIDs = [Self.appleClient]
        config.auth.appleJWKS = p.apple.jwksPath
    }

    func assertion(_ a: AuthApp, _ postBody: String, idToken: String? = nil) async throws -> AuthApp.Reply {
        var body: [String: Value] = ["requestUri": "http://localhost", "postBody": .string(postBody), "returnSecureToken": true, "returnIdpCredential": true]
        if let idToken { body["idToken"] = .string(idToken) }
        return try await a.ios("verifyAssertion", .map(body))
    }

    @Test("Google: the first sign-in creates the user (onUserCreated once), the next finds it; refused tokens say why")
    func google() async throws {
        let dir = NSTemporaryDirectory() + "hearth-idp-" + SystemRandom().autoID()
        let p = try providers(dir)
        try await withAuthApp(configure: { configure(&$0, p) }) { a in
            let now = a.clock.now()
            let token = try p.google.token(sub: "g-100", email: "jo@gmail.com", now: now, ["name": "Jo", "picture": "https://example.com/jo.png"])
            let first = try await assertion(a, "id_token=\(token)&access_token=ya29.x&providerId=google.com")
            #expect(first.status == 200, "\(first.json)")
            #expect(first.json["providerId"] == "google.com")
            #expect(first.json["federatedId"] == "https://accounts.google.com/g-100")
            #expect(first.json["isNewUser"] == true)
            #expect(first.json["email"] == "jo@gmail.com")
            #expect(first.json["emailVerified"] == true)
            #expect(first.json["displayName"] == "Jo")
            #expect(first.json["oauthIdToken"] == .string(token), "returnIdpCredential")
            #expect(first.json["rawUserInfo"]?.stringValue?.contains("\"sub\":\"g-100\"") == true)
            let uid = try #require(first.json["localId"]?.stringValue)
            let idToken = try #require(first.json["idToken"]?.stringValue)
            #expect(try a.claims(idToken)["firebase"]?["sign_in_provider"] == "google.com")
            #expect(try a.claims(idToken)["firebase"]?["identities"]?["google.com"] == ["g-100"])
            let user = try #require(try await a.lookup(idToken).json["users"]?.arrayValue?.first)
            #expect(user["providerUserInfo"]?.arrayValue?.first?["federatedId"] == "g-100")

            // Re-authenticating (autoCreate false) with an account nobody has linked makes nobody.
            var reauth: [String: Value] = ["requestUri": "http://localhost", "returnSecureToken": true, "autoCreate": false]
            reauth["postBody"] = .string("id_token=\(try p.google.token(sub: "g-stranger", email: "stranger@gmail.com", now: now))&providerId=google.com")
            #expect(try await a.ios("verifyAssertion", .map(reauth)).code == "USER_NOT_FOUND")
            let second = try await assertion(a, "id_token=\(try p.google.token(sub: "g-100", email: "jo@gmail.com", now: now))&providerId=google.com")
            #expect(second.json["localId"] == .string(uid))
            #expect(second.json["isNewUser"] == false)
            await a.app.settle()
            #expect(try a.userEvents(.created, uid: uid) == 1)

            let wrongAudience = try p.google.token(sub: "g-1", now: now, ["aud": "someone-else.apps.googleusercontent.com"])
            let expired = try p.google.token(sub: "g-1", now: now - .seconds(7200))
            let wrongIssuer = try p.google.token(sub: "g-1", now: now, ["iss": "https://evil.example.com"])
            let otherKey = try Key.generateRSA()
            let forged = try p.google.token(sub: "g-1", now: now, signer: otherKey)
            let unknownKey = try JWT.sign(["iss": "https://accounts.google.com", "aud": .string(Self.googleClient), "sub": "g-1",
                                           "iat": .int(now.seconds), "exp": .int(now.seconds + 60)], key: otherKey, kid: "no-such-kid")
            let unsigned = JWT.unsigned(["iss": "https://accounts.google.com", "aud": .string(Self.googleClient), "sub": "g-1",
                                         "iat": .int(now.seconds), "exp": .int(now.seconds + 60)])
            for (name, bad) in [("wrong audience", wrongAudience), ("expired", expired), ("wrong issuer", wrongIssuer), ("forged", forged),
                                ("unknown key", unknownKey), ("unsigned", unsigned)] {
                let r = try await assertion(a, "id_token=\(bad)&providerId=google.com")
                #expect(r.code == "INVALID_IDP_RESPONSE", "\(name): \(r.json)")
                #expect(r.status == 400)
            }
            #expect(try await a.app.runtime.users.list().users.count == 1, "no refused token made a user")
        }
    }

    @Test("Apple: the nonce must be the SHA-256 of the raw nonce the app sends; the name comes from the postBody's user")
    func apple() async throws {
        let dir = NSTemporaryDirectory() + "hearth-idp-" + SystemRandom().autoID()
        let p = try providers(dir)
        try await withAuthApp(configure: { configure(&$0, p) }) { a in
            let now = a.clock.now()
            let raw = "x9Tq-raw.nonce_42"
            let hashed = Hex.encode(Crypto.sha256(Array(raw.utf8)))
            let token = try p.apple.token(sub: "001234.abcd", email: "kim@privaterelay.appleid.com", now: now,
                                          ["nonce": .string(hashed), "email_verified": "true"])
            let user = #"{"name":{"firstName":"Kim","lastName":"Lee"}}"#
            let ok = try await assertion(a, "providerId=apple.com&id_token=\(token)&nonce=\(raw)&user=\(PercentEncoding.encodeQueryValue(user))")
            #expect(ok.status == 200, "\(ok.json)")
            #expect(ok.json["federatedId"] == "001234.abcd")
            #expect(ok.json["emailVerified"] == true, "Apple sends email_verified as a string")
            #expect(ok.json["displayName"] == "Kim Lee")

            #expect(try await assertion(a, "providerId=apple.com&id_token=\(token)&nonce=another-nonce").code == "MISSING_OR_INVALID_NONCE")
            #expect(try await assertion(a, "providerId=apple.com&id_token=\(token)").code == "MISSING_OR_INVALID_NONCE")
            let replay = try await assertion(a, "providerId=apple.com&id_token=\(token)&nonce=\(hashed)")
            #expect(replay.code == "MISSING_OR_INVALID_NONCE", "the claim itself is not the raw nonce")
            let wrongAudience = try p.apple.token(sub: "001234.abcd", now: now, ["aud": "com.other.app", "nonce": .string(hashed)])
            #expect(try await assertion(a, "providerId=apple.com&id_token=\(wrongAudience)&nonce=\(raw)").code == "INVALID_IDP_RESPONSE")
            // A Google token is not an Apple one.
            let google = try p.google.token(sub: "g-7", now: now)
            #expect(try await assertion(a, "providerId=apple.com&id_token=\(google)").code == "INVALID_IDP_RESPONSE")
        }
    }

    @Test("one account per email: a verified provider address links to the existing account; an unverified one needs confirmation")
    func linkingByEmail() async throws {
        let dir = NSTemporaryDirectory() + "hearth-idp-" + SystemRandom().autoID()
        let p = try providers(dir)
        try await withAuthApp(configure: { configure(&$0, p) }) { a in
            let now = a.clock.now()
            // A password account whose address nobody verified: a verified Google sign-in takes it over.
            let squatter = try await a.ios("signupNewUser", ["email": "lu@gmail.com", "password": "squatted", "returnSecureToken": true])
            let uid = try #require(squatter.json["localId"]?.stringValue)
            let google = try await assertion(a, "id_token=\(try p.google.token(sub: "g-lu", email: "lu@gmail.com", now: now))&providerId=google.com")
            #expect(google.json["localId"] == .string(uid), "\(google.json)")
            #expect(google.json["isNewUser"] == false)
            #expect(try await a.ios("verifyPassword", ["email": "lu@gmail.com", "password": "squatted"]).code == "INVALID_LOGIN_CREDENTIALS",
                    "the unverified password is gone")
            #expect(try await a.refresh(try #require(squatter.json["refreshToken"]?.stringValue)).error == "TOKEN_EXPIRED")

            // A verified account and an unverified provider address: the app must sign in and link.
            let unverified = try p.apple.token(sub: "a-lu", email: "lu@gmail.com", verified: false, now: now)
            let confirm = try await assertion(a, "providerId=apple.com&id_token=\(unverified)")
            #expect(confirm.status == 200)
            #expect(confirm.json["needConfirmation"] == true)
            #expect(confirm.json["idToken"] == nil)
            #expect(confirm.json["email"] == "lu@gmail.com")

            // Linking Apple to the signed-in user, then the same Apple account for someone else.
            let session = try #require(google.json["idToken"]?.stringValue)
            let linked = try await assertion(a, "providerId=apple.com&id_token=\(unverified)", idToken: session)
            #expect(linked.json["localId"] == .string(uid), "\(linked.json)")
            #expect(linked.json["idToken"]?.stringValue != nil, "the iOS SDK needs the tokens when it links")
            let other = try await a.ios("signupNewUser", ["returnSecureToken": true])
            let taken = try await assertion(a, "providerId=apple.com&id_token=\(unverified)", idToken: try #require(other.json["idToken"]?.stringValue))
            #expect(taken.status == 200, "returnIdpCredential: the conflict comes back as a 200")
            #expect(taken.json["errorMessage"] == "FEDERATED_USER_ID_ALREADY_LINKED")
            #expect(taken.json["oauthIdToken"] == .string(unverified))
        }
    }

    @Test("emulator mode takes provider tokens on trust, as the Auth emulator does")
    func emulatorTokens() async throws {
        try await withAuthApp(configure: { $0.project = "demo-app" }) { a in
            let fake = JWT.unsigned(["sub": "fake-google-user", "email": "fake@example.com", "email_verified": true])
            let r = try await assertion(a, "id_token=\(fake)&providerId=google.com")
            #expect(r.status == 200, "\(r.json)")
            #expect(r.json["isNewUser"] == true)
            #expect(try await assertion(a, "id_token=\(JWT.unsigned(["email": "x@example.com"]))&providerId=google.com").code == "INVALID_IDP_RESPONSE",
                    "a subject is still required")
            let json = PercentEncoding.encodeQueryValue(#"{"sub":"json-user","email":"json@example.com"}"#)
            let fromJSON = try await assertion(a, "id_token=\(json)&providerId=google.com")
            #expect(fromJSON.status == 200, "the emulator's JSON fake tokens: \(fromJSON.json)")
            // Any provider, its fake claims in an access_token too (the JS SDK's GitHub and Facebook
            // credentials send one).
            for provider in ["github.com", "facebook.com"] {
                let claims = PercentEncoding.encodeQueryValue(#"{"sub":"\#(provider)-user","email":"\#(provider)@example.com"}"#)
                let r = try await assertion(a, "access_token=\(claims)&providerId=\(provider)")
                #expect(r.status == 200 && r.json["providerId"]?.stringValue == provider, "\(r.json)")
                #expect(r.json["oauthAccessToken"]?.stringValue == #"{"sub":"\#(provider)-user","email":"\#(provider)@example.com"}"#)
                let token = try #require(r.json["idToken"]?.stringValue)
                #expect(try a.claims(token)["firebase"]?["sign_in_provider"]?.stringValue == provider)
            }
            #expect(try await assertion(a, "access_token=not-json&providerId=github.com").code == "INVALID_IDP_RESPONSE")
            // The JS SDK does not ask for the credential and still reads it (credentialFromResult).
            let plain = try await a.v1("accounts:signInWithIdp", ["requestUri": "http://localhost", "returnSecureToken": true,
                                                                  "postBody": .string("id_token=\(json)&providerId=google.com")])
            #expect(plain.json["oauthIdToken"]?.stringValue == #"{"sub":"json-user","email":"json@example.com"}"#, "\(plain.json)")
        }
        try await withAuthApp { a in
            let claims = PercentEncoding.encodeQueryValue(#"{"sub":"gh-user"}"#)
            #expect(try await assertion(a, "access_token=\(claims)&providerId=github.com").code == "OPERATION_NOT_ALLOWED",
                    "outside emulator mode, only the configured providers")
            let fake = JWT.unsigned(["sub": "fake-google-user"])
            let refused = try await assertion(a, "id_token=\(fake)&providerId=google.com")
            #expect(refused.code == "INVALID_IDP_RESPONSE", "not outside emulator mode (no client ids configured either)")
        }
    }

    @Test("a key set fetched over HTTP is kept for its Cache-Control max-age, and fetched again early for a key it lacks")
    func keySetOverHTTP() async throws {
        let key = try Key.generateRSA()
        let rotated = try Key.generateRSA()
        let state = KeyServerState()
        let first: Value = ["keys": [try key.publicJWK(kid: "k1")]]
        state.keys.withLock { $0 = first }
        let server = HTTPServer(configuration: HTTPServer.Configuration()) { _ in
            state.fetches.withLock { $0 += 1 }
            var response = HTTPServerResponse.json(state.keys.withLock { $0 })
            response.headers.set("Cache-Control", "public, max-age=600, must-revalidate, no-transform")
            return response
        }
        try server.start()
        let clock = ManualClock(Timestamp(seconds: 1_800_000_000))
        let client = HTTPClient()
        let cache = JWKSCache(source: .url("http://127.0.0.1:\(server.port)/certs"), clock: clock) { url in
            let r = try await client.send(HTTPClientRequest(url: url))
            return (r.body, r.headers["cache-control"])
        }
        #expect(try await cache.key(id: "k1") != nil)
        #expect(try await cache.key(id: "k1") != nil)
        #expect(state.fetches.withLock { $0 } == 1, "cached")
        clock.advance(by: .seconds(599))
        _ = try await cache.key(id: "k1")
        #expect(state.fetches.withLock { $0 } == 1, "still fresh")
        clock.advance(by: .seconds(2))
        _ = try await cache.key(id: "k1")
        #expect(state.fetches.withLock { $0 } == 2, "max-age ran out")

        // A rotation: a token names a key the cached set (fresh for ten more minutes) does not
        // have. Within a minute of the last fetch that is not enough to fetch again.
        let both: Value = ["keys": [try key.publicJWK(kid: "k1"), try rotated.publicJWK(kid: "k2")]]
        state.keys.withLock { $0 = both }
        #expect(try await cache.key(id: "k2") == nil)
        #expect(state.fetches.withLock { $0 } == 2)
        clock.advance(by: .seconds(61))
        #expect(try await cache.key(id: "k2") != nil, "fetched again early")
        #expect(state.fetches.withLock { $0 } == 3)
        #expect(try await cache.key(id: "made-up") == nil)
        #expect(try await cache.key(id: "made-up-too") == nil)
        #expect(state.fetches.withLock { $0 } == 3, "unknown key ids do not make a fetch each (at most one a minute)")
        await server.shutdown(grace: .seconds(1))
    }

    @Test("Cache-Control max-age is read as Google sends it; no-cache and nonsense give no lifetime")
    func maxAge() {
        #expect(JWKSCache.maxAge("public, max-age=19353, must-revalidate, no-transform") == 19353)
        #expect(JWKSCache.maxAge("max-age=\"60\"") == 60)
        #expect(JWKSCache.maxAge("no-cache") == 0)
        #expect(JWKSCache.maxAge("max-age=99999999999") == 86_400)
        #expect(JWKSCache.maxAge("max-age=-5") == 0)
        #expect(JWKSCache.maxAge("max-age=abc") == nil)
        #expect(JWKSCache.maxAge("") == nil)
    }
}

final class KeyServerState: Sendable {
    let keys = Mutex<Value>(.null)
    let fetches = Mutex(0)
}

@Suite("Client auth: runtime.toml")
struct ClientAuthConfigTests {
    @Test("[auth] keys parse into the auth service's settings; unknown sign-in methods and out-of-range costs are refused, naming the key")
    func parse() throws {
        let config = try RuntimeConfig(table: try TOML.parse("""
            [auth]
            providers = ["password", "google.com"]
            email_enumeration_protection = false
            password_hash_mem_cost = 12
            google_client_ids = ["a.apps.googleusercontent.com"]
            google_jwks = "google-keys.json"
            apple_client_ids = ["com.example.app"]
            """), baseDirectory: "/srv/app")
        let auth = Runtime.authConfiguration(config, clock: ManualClock(Timestamp(seconds: 0)))
        #expect(auth.signInMethods == ["password", "google.com"])
        #expect(!auth.emailEnumerationProtection)
        // Unset: on, as for new Firebase projects, but off in emulator mode, as in the Auth emulator.
        for (toml, protected) in [("project = \"my-app\"", true), ("project = \"demo-app\"", false),
                                  ("project = \"demo-app\"\n[auth]\nemail_enumeration_protection = true", true),
                                  ("project = \"my-app\"\n[auth]\nemulator = true", false)] {
            let parsed = try RuntimeConfig(table: try TOML.parse(toml), baseDirectory: "/srv/app")
            #expect(Runtime.authConfiguration(parsed, clock: ManualClock(Timestamp(seconds: 0))).emailEnumerationProtection == protected, "\(toml)")
        }
        #expect(auth.passwords.costLog2 == 12)
        #expect(auth.passwords.blockSize == 8)
        #expect(auth.identityProviders.first { $0.id == "google.com" }?.keys.source == .file("/srv/app/google-keys.json"))
        #expect(auth.identityProviders.first { $0.id == "apple.com" }?.keys.source == .url("https://appleid.apple.com/auth/keys"))
        #expect(auth.identityProviders.first { $0.id == "apple.com" }?.audiences == ["com.example.app"])
        for (toml, names) in [("providers = [\"facebook.com\"]", "facebook.com"), ("password_hash_mem_cost = 40", "password_hash_mem_cost"),
                              ("providers = \"password\"", "providers")] {
            do {
                _ = try RuntimeConfig(table: try TOML.parse("[auth]\n" + toml), baseDirectory: "/tmp")
                Issue.record("accepted \(toml)")
            } catch let error as ConfigError {
                #expect(error.problems.joined().contains(names), "\(error.problems)")
            }
        }
    }
}
