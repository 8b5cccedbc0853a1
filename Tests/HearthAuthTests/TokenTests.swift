@testable import HearthAuth
import HearthModel
@_spi(Internals) import HearthRuntime
import HearthTesting
import Testing

@Suite("Firebase-style tokens")
struct TokenTests {
    func app(project: String = "hearth-test", emulator: Bool? = nil) async throws -> TestRuntime {
        try await TestRuntime(units: []) { config in
            config.project = project
            config.auth.emulator = emulator
        }
    }

    @Test("ID tokens carry Firebase's claims: iss, aud, sub = user_id, times, email, identities, provider, custom claims")
    func idTokenShape() async throws {
        let app = try await app()
        let auth = app.runtime.auth
        var user = try await auth.createUser(NewUser(uid: "alice", email: "alice@example.com", emailVerified: true, displayName: "Alice",
                                                     providerToLink: .init(providerId: "apple.com", uid: "apple-1")))
        try await auth.setCustomClaims(uid: "alice", ["admin": true, "tier": 2])
        user = try await auth.getUser(uid: "alice")
        let token = try auth.mintIDToken(for: user, signInProvider: "apple.com")
        let claims = try JWT.decode(token).claims
        let now = app.clock.now().seconds
        #expect(claims["iss"] == "https://securetoken.google.com/hearth-test")
        #expect(claims["aud"] == "hearth-test")
        #expect(claims["sub"] == "alice")
        #expect(claims["user_id"] == "alice")
        #expect(claims["iat"] == .int(now))
        #expect(claims["auth_time"] == .int(now))
        #expect(claims["exp"] == .int(now + 3600))
        #expect(claims["email"] == "alice@example.com")
        #expect(claims["email_verified"] == true)
        #expect(claims["name"] == "Alice")
        #expect(claims["admin"] == true)
        #expect(claims["tier"] == 2)
        #expect(claims["firebase"]?["sign_in_provider"] == "apple.com")
        #expect(claims["firebase"]?["identities"] == ["apple.com": ["apple-1"], "email": ["alice@example.com"]])
        let verified = try await auth.verifyIDToken(token)
        #expect(verified.uid == "alice")
    }

    @Test("custom tokens are minted as Firebase does and exchange for an ID token and a refresh token")
    func customTokenExchange() async throws {
        let app = try await app()
        let auth = app.runtime.auth
        let custom = try auth.createCustomToken(uid: "bob", claims: ["premium": true])
        let decoded = try JWT.decode(custom)
        #expect(decoded.algorithm == "RS256")
        #expect(decoded.claims["aud"] == .string(AuthService.Configuration.customTokenAudience))
        #expect(decoded.claims["uid"] == "bob")
        #expect(decoded.claims["claims"] == ["premium": true])
        #expect(decoded.claims["iss"] == decoded.claims["sub"])
        #expect((decoded.claims["exp"]?.intValue ?? 0) - (decoded.claims["iat"]?.intValue ?? 0) == 3600)
        let signIn = try await auth.signInWithCustomToken(custom)
        #expect(signIn.uid == "bob")
        #expect(signIn.isNewUser, "the first sign-in creates the user")
        #expect(signIn.expiresIn == 3600)
        let verified = try await auth.verifyIDToken(signIn.idToken)
        #expect(verified.claims["premium"] == true)
        #expect(verified.claims["firebase"]?["sign_in_provider"] == "custom")
        #expect(try await auth.getUser(uid: "bob").metadata.lastSignInTime != nil)
        app.clock.advance(by: .seconds(1800))
        let refreshed = try await auth.refresh(signIn.refreshToken)
        #expect(refreshed.idToken != signIn.idToken)
        #expect(try await auth.verifyIDToken(refreshed.idToken).claims["premium"] == true, "developer claims survive a refresh")
        let second = try await auth.signInWithCustomToken(try auth.createCustomToken(uid: "bob"))
        #expect(!second.isNewUser)
    }

    @Test("refresh tokens are stored hashed and stop working once revoked")
    func refreshRevocation() async throws {
        let app = try await app()
        let auth = app.runtime.auth
        let signIn = try await auth.signInWithCustomToken(try auth.createCustomToken(uid: "carol"))
        let rows = try (app.runtime.store.engine as! SQLiteEngineProbe).rawRefreshTokens()
        #expect(!rows.contains(signIn.refreshToken), "the token itself is never stored")
        app.clock.advance(by: .seconds(5))
        try await auth.revokeRefreshTokens(uid: "carol")
        await #expect(throws: AuthFailure.tokenExpired) { try await auth.refresh(signIn.refreshToken) }
        do { _ = try await auth.verifyIDToken(signIn.idToken); Issue.record("a revoked ID token verified") } catch { #expect(error == .revoked) }
        let fresh = try await auth.signInWithCustomToken(try auth.createCustomToken(uid: "carol"))
        #expect(try await auth.verifyIDToken(fresh.idToken).uid == "carol", "tokens issued after the revocation work")
        await #expect(throws: AuthFailure("INVALID_REFRESH_TOKEN")) { try await auth.refresh("not-a-token") }
    }

    func rejection(_ app: TestRuntime, _ token: String) async -> TokenRejection? {
        do { _ = try await app.runtime.auth.verifyIDToken(token); return nil } catch { return error }
    }

    @Test("expiry honours the 5-minute clock skew, driven by a ManualClock")
    func expiry() async throws {
        let app = try await app()
        let auth = app.runtime.auth
        let user = try await auth.createUser(NewUser(uid: "dan"))
        let token = try auth.mintIDToken(for: user, signInProvider: "custom")
        app.clock.advance(by: .seconds(3600 + 299))
        #expect(await rejection(app, token) == nil, "within the skew after exp")
        app.clock.advance(by: .seconds(2))
        guard case .expired? = await rejection(app, token) else { Issue.record("not refused as expired"); return }
    }

    @Test("tokens issued in the future beyond the skew, for another project or issuer, or with a bad subject are refused")
    func claimChecks() async throws {
        let app = try await app()
        let auth = app.runtime.auth
        let key = auth.keys.active
        let now = app.clock.now().seconds
        func token(_ changes: [String: Value]) throws -> String {
            var c: [String: Value] = ["iss": "https://securetoken.google.com/hearth-test", "aud": "hearth-test", "sub": "eve",
                                      "iat": .int(now), "exp": .int(now + 3600), "auth_time": .int(now)]
            for (k, v) in changes { c[k] = v }
            return try JWT.sign(c, key: key.key, kid: key.kid)
        }
        _ = try await auth.createUser(NewUser(uid: "eve"))
        #expect(await rejection(app, try token([:])) == nil)
        #expect(await rejection(app, try token(["iat": .int(now + 301)])) == .issuedInFuture(at: Timestamp(seconds: now + 301)))
        #expect(await rejection(app, try token(["iat": .int(now + 299)])) == nil, "within the skew")
        #expect(await rejection(app, try token(["aud": "other"])) == .wrongAudience("other"))
        #expect(await rejection(app, try token(["iss": "https://securetoken.google.com/other"])) == .wrongIssuer("https://securetoken.google.com/other"))
        #expect(await rejection(app, try token(["sub": ""])) == .badSubject("missing or empty"))
        #expect(await rejection(app, try token(["sub": .string(String(repeating: "x", count: 129))])) == .badSubject("longer than 128 characters"))
        #expect(await rejection(app, try token(["user_id": "mallory"])) == .badSubject("user_id differs from sub"))
        #expect(await rejection(app, try token(["sub": "ghost"])) == .userNotFound)
    }

    @Test("disabled and deleted users' tokens are refused, even when the token is already cached")
    func disabledAndDeleted() async throws {
        let app = try await app()
        let auth = app.runtime.auth
        let user = try await auth.createUser(NewUser(uid: "fay"))
        let token = try auth.mintIDToken(for: user, signInProvider: "custom")
        #expect(await rejection(app, token) == nil)
        _ = try await auth.updateUser(uid: "fay", UserUpdate(disabled: true))
        #expect(await rejection(app, token) == .userDisabled)
        _ = try await auth.updateUser(uid: "fay", UserUpdate(disabled: false))
        #expect(await rejection(app, token) == nil, "re-enabling the user makes its tokens valid again, as in Firebase")
        try await auth.deleteUser(uid: "fay")
        #expect(await rejection(app, token) == .userNotFound)
    }

    /// What `verifyIDTokenNow` decided (the uid, or the rejection); nil when it left the token to
    /// `verifyIDToken`.
    func decidedNow(_ auth: AuthService, _ token: String) -> Result<String, TokenRejection>? {
        auth.verifyIDTokenNow(token).map { $0.map(\.uid) }
    }

    @Test("verifyIDTokenNow decides a token verified before as verifyIDToken does, reading the user's record every time; a token never verified, one past its expiry, or a user only a suspending repository reads is left to verifyIDToken")
    func verifyWithoutSuspending() async throws {
        let app = try await app()
        let auth = app.runtime.auth
        let user = try await auth.createUser(NewUser(uid: "gus"))
        let token = try auth.mintIDToken(for: user, signInProvider: "custom")
        #expect(decidedNow(auth, token) == nil, "never verified: its signature is verifyIDToken's to check")
        #expect(await rejection(app, token) == nil)
        #expect(decidedNow(auth, token) == .success("gus"))
        _ = try await auth.updateUser(uid: "gus", UserUpdate(disabled: true))
        #expect(decidedNow(auth, token) == .failure(.userDisabled))
        _ = try await auth.updateUser(uid: "gus", UserUpdate(disabled: false))
        #expect(decidedNow(auth, token) == .success("gus"))
        app.clock.advance(by: .seconds(5))
        try await auth.revokeRefreshTokens(uid: "gus")
        #expect(decidedNow(auth, token) == .failure(.revoked))
        #expect(await rejection(app, token) == .revoked, "as verifyIDToken decides it")
        let fresh = try auth.mintIDToken(for: try await auth.getUser(uid: "gus"), signInProvider: "custom")
        #expect(await rejection(app, fresh) == nil)
        #expect(decidedNow(auth, fresh) == .success("gus"))
        try await auth.deleteUser(uid: "gus")
        #expect(decidedNow(auth, fresh) == .failure(.userNotFound))

        // Up to its expiry plus the 5-minute skew, as verifyIDToken; from then on the cached check
        // no longer counts.
        let hal = try auth.mintIDToken(for: try await auth.createUser(NewUser(uid: "hal")), signInProvider: "custom")
        #expect(await rejection(app, hal) == nil)
        app.clock.advance(by: .seconds(3600 + 299))
        #expect(decidedNow(auth, hal) == .success("hal"))
        #expect(await rejection(app, hal) == nil)
        app.clock.advance(by: .seconds(1))
        #expect(decidedNow(auth, hal) == nil)
        let expired = await rejection(app, hal)
        #expect({ if case .expired? = expired { true } else { false } }(), "\(String(describing: expired))")

        // A repository that reads users only by suspending: verifyIDToken alone decides.
        let suspending = AuthService(configuration: auth.configuration, users: SuspendingUsers(base: auth.users), keys: auth.keys, clock: app.clock)
        let ida = try auth.mintIDToken(for: try await auth.createUser(NewUser(uid: "ida")), signInProvider: "custom")
        #expect(try await suspending.verifyIDToken(ida).uid == "ida")
        #expect(decidedNow(suspending, ida) == nil)
        #expect(decidedNow(auth, ida) == nil, "each service keeps its own verified tokens")
    }

    @Test("emulator mode accepts unsigned ID and custom tokens; it is off unless configured")
    func emulatorMode() async throws {
        let claims: [String: Value] = ["iss": "https://securetoken.google.com/demo-x", "aud": "demo-x", "sub": "gus",
                                       "iat": 1_767_225_600, "exp": 1_767_229_200]
        let off = try await app(project: "hearth-test")
        #expect(!off.runtime.auth.configuration.emulatorMode)
        #expect(await rejection(off, JWT.unsigned(claims)) == .unsignedTokenRefused)
        let demo = try await app(project: "demo-x")
        #expect(demo.runtime.auth.configuration.emulatorMode, "a demo- project turns it on, as Firebase does")
        _ = try await demo.runtime.auth.createUser(NewUser(uid: "gus"))
        #expect(await rejection(demo, JWT.unsigned(claims)) == nil)
        let custom = JWT.unsigned(["aud": .string(AuthService.Configuration.customTokenAudience), "uid": "hal",
                                   "iat": 1_767_225_600, "exp": 1_767_229_200])
        #expect(try await demo.runtime.auth.signInWithCustomToken(custom).uid == "hal")
        await #expect(throws: AuthFailure("INVALID_CUSTOM_TOKEN")) { try await off.runtime.auth.signInWithCustomToken(custom) }
        let forcedOff = try await app(project: "demo-x", emulator: false)
        #expect(!forcedOff.runtime.auth.configuration.emulatorMode)
    }

    @Test("custom tokens with the wrong audience, expired, too long-lived or with reserved claims are refused")
    func badCustomTokens() async throws {
        let app = try await app()
        let auth = app.runtime.auth
        let key = auth.keys.active
        let now = app.clock.now().seconds
        func custom(_ changes: [String: Value]) throws -> String {
            var c: [String: Value] = ["aud": .string(AuthService.Configuration.customTokenAudience), "uid": "ivy", "iat": .int(now), "exp": .int(now + 3600)]
            for (k, v) in changes { c[k] = v }
            return try JWT.sign(c, key: key.key, kid: key.kid)
        }
        _ = try await auth.signInWithCustomToken(try custom([:]))
        for changes: [String: Value] in [["aud": "x"], ["exp": .int(now - 1000)], ["exp": .int(now + 7200)], ["uid": ""], ["claims": ["sub": "x"]], ["claims": 5]] {
            await #expect(throws: AuthFailure("INVALID_CUSTOM_TOKEN"), "\(changes)") { try await auth.signInWithCustomToken(try custom(changes)) }
        }
        #expect(throws: HTTPSError.self) { try auth.createCustomToken(uid: "x", claims: ["iss": "y"]) }
        #expect(throws: HTTPSError.self) { try auth.createCustomToken(uid: String(repeating: "u", count: 129)) }
    }
    @Test("time claims at the ends of Int64 are invalid tokens, signed or unsigned, ID or custom, never an overflow", arguments: [false, true])
    func extremeTimeClaims(unsigned: Bool) async throws {
        let app = try await app(project: unsigned ? "demo-edge" : "hearth-test")
        let auth = app.runtime.auth
        let project = auth.configuration.projectID
        let key = auth.keys.active
        let now = app.clock.now().seconds
        _ = try await auth.createUser(NewUser(uid: "edge"))
        func encode(_ claims: [String: Value]) throws -> String { unsigned ? JWT.unsigned(claims) : try JWT.sign(claims, key: key.key, kid: key.kid) }
        func idToken(_ changes: [String: Value]) throws -> String {
            var c: [String: Value] = ["iss": .string("https://securetoken.google.com/\(project)"), "aud": .string(project), "sub": "edge",
                                      "iat": .int(now), "exp": .int(now + 3600), "auth_time": .int(now)]
            for (k, v) in changes { c[k] = v }
            return try encode(c)
        }
        let extremes: [Value] = [.int(Int64.max), .int(Int64.max - 1), .int(Int64.min), .int(Int64.min + 1), .int(-1), .int(253_402_300_800)]
        for extreme in extremes {
            for claim in ["exp", "iat", "auth_time"] {
                let rejection = await rejection(app, try idToken([claim: extreme]))
                guard case .invalidClaim? = rejection else { Issue.record("\(claim) = \(extreme): \(String(describing: rejection))"); continue }
            }
            for claim in ["exp", "iat"] {
                var c: [String: Value] = ["aud": .string(AuthService.Configuration.customTokenAudience), "uid": "edge", "iat": .int(now), "exp": .int(now + 3600)]
                c[claim] = extreme
                await #expect(throws: AuthFailure("INVALID_CUSTOM_TOKEN"), "custom token \(claim) = \(extreme)") { try await auth.signInWithCustomToken(try encode(c)) }
            }
        }
        // exp - iat would overflow: iat far in the past, exp far ahead.
        var c: [String: Value] = ["aud": .string(AuthService.Configuration.customTokenAudience), "uid": "edge", "iat": .int(Int64.min), "exp": .int(Int64.max)]
        await #expect(throws: AuthFailure("INVALID_CUSTOM_TOKEN")) { try await auth.signInWithCustomToken(try encode(c)) }
        c["iat"] = .int(0)
        c["exp"] = .int(253_402_300_799)
        await #expect(throws: AuthFailure("INVALID_CUSTOM_TOKEN"), "in range but far longer than an hour") { try await auth.signInWithCustomToken(try encode(c)) }
        #expect(await rejection(app, try idToken(["exp": .double(1e300)])) != nil, "a time claim must be an integer")
        #expect(await rejection(app, try idToken([:])) == nil, "the ordinary token still verifies")
    }

    @Test("a uid deleted and created again refuses the ID tokens issued to its previous owner")
    func recreatedUID() async throws {
        let app = try await app()
        let auth = app.runtime.auth
        let first = try await auth.createUser(NewUser(uid: "reborn"))
        #expect(first.tokensValidAfterTime == Timestamp(seconds: app.clock.now().seconds), "validSince is the creation time")
        let old = try auth.mintIDToken(for: first, signInProvider: "custom")
        #expect(await rejection(app, old) == nil)
        app.clock.advance(by: .seconds(60))
        try await auth.deleteUser(uid: "reborn")
        let second = try await auth.createUser(NewUser(uid: "reborn"))
        #expect(await rejection(app, old) == .revoked, "the previous owner's token, still within its hour")
        #expect(await rejection(app, try auth.mintIDToken(for: second, signInProvider: "custom")) == nil)
    }

    @Test("emulator mode accepts a well-formed token for a uid with no account, as Firebase's emulators do; production refuses it")
    func emulatorWithoutAccount() async throws {
        let demo = try await app(project: "demo-ghost")
        let claims: [String: Value] = ["iss": "https://securetoken.google.com/demo-ghost", "aud": "demo-ghost", "sub": "nobody",
                                       "iat": .int(demo.clock.now().seconds), "exp": .int(demo.clock.now().seconds + 3600)]
        let verified = try await demo.runtime.auth.verifyIDToken(JWT.unsigned(claims))
        #expect(verified.uid == "nobody")
        let prod = try await app()
        let signed = try JWT.sign(["iss": "https://securetoken.google.com/hearth-test", "aud": "hearth-test", "sub": "nobody",
                                   "iat": .int(prod.clock.now().seconds), "exp": .int(prod.clock.now().seconds + 3600)],
                                  key: prod.runtime.auth.keys.active.key, kid: prod.runtime.auth.keys.active.kid)
        #expect(await rejection(prod, signed) == .userNotFound)
    }
}

/// A user repository that reads only by suspending (`tokenStateNow` is the protocol's default):
/// as one over a remote database would.
struct SuspendingUsers: UserRepository {
    let base: any UserRepository

    func create(_ user: UserRecord, time: Timestamp) async throws { try await base.create(user, time: time) }
    func user(uid: String) async throws -> UserRecord? { try await base.user(uid: uid) }
    func user(email: String) async throws -> UserRecord? { try await base.user(email: email) }
    func user(phoneNumber: String) async throws -> UserRecord? { try await base.user(phoneNumber: phoneNumber) }
    func user(provider: String, providerUID: String) async throws -> UserRecord? { try await base.user(provider: provider, providerUID: providerUID) }
    func update(uid: String, _ change: @escaping @Sendable (inout UserRecord) throws -> Void) async throws -> UserRecord { try await base.update(uid: uid, change) }
    func delete(uid: String, time: Timestamp) async throws -> UserRecord { try await base.delete(uid: uid, time: time) }
    func list(maxResults: Int, pageToken: String?) async throws -> (users: [UserRecord], nextPageToken: String?) { try await base.list(maxResults: maxResults, pageToken: pageToken) }
    func storeRefreshToken(hash: [UInt8], _ record: RefreshTokenRecord) async throws { try await base.storeRefreshToken(hash: hash, record) }
    func refreshToken(hash: [UInt8]) async throws -> RefreshTokenRecord? { try await base.refreshToken(hash: hash) }
    func revokeRefreshTokens(uid: String) async throws { try await base.revokeRefreshTokens(uid: uid) }
    func tokenState(uid: String) async throws -> UserTokenState? { try await base.tokenState(uid: uid) }
    func storeOobCode(_ code: OobCode) async throws { try await base.storeOobCode(code) }
    func oobCode(_ code: String) async throws -> OobCode? { try await base.oobCode(code) }
    func takeOobCode(_ code: String) async throws -> OobCode? { try await base.takeOobCode(code) }
    func oobCodes(limit: Int) async throws -> [OobCode] { try await base.oobCodes(limit: limit) }
}
