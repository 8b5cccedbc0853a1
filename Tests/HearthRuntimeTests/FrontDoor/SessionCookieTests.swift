import HearthAuth
import HearthModel
@_spi(Internals) @testable import HearthRuntime
import Testing

/// Session cookies over the Identity Toolkit API, as firebase-admin's `create_session_cookie` calls
/// it (`POST /v1/projects/{project}:createSessionCookie`, admin credentials, `idToken` and
/// `validDuration` in seconds), and their verification (`AuthService.verifySessionCookie`), against
/// https://firebase.google.com/docs/auth/admin/manage-cookies: 5 minutes to 2 weeks, the ID token's
/// claims under the issuer `https://session.firebase.google.com/<project>`.
@Suite("Auth: session cookies")
struct SessionCookieTests {
    static func createCookie(_ a: AuthApp, _ body: Value, admin: Bool = true) async throws -> AuthApp.Reply {
        try await a.v1("projects/\(a.app.runtime.config.project):createSessionCookie", body, admin: admin)
    }

    @Test("an ID token becomes a session cookie with its claims, the session issuer and the asked lifetime")
    func create() async throws {
        try await withAuthApp { a in
            let signUp = try await a.ios("signupNewUser", ["email": "cookie@example.com", "password": "secret-1", "returnSecureToken": true])
            let idToken = try #require(signUp.json["idToken"]?.stringValue, "\(signUp.json)")
            let uid = try #require(signUp.json["localId"]?.stringValue)
            a.clock.advance(by: .seconds(30))
            let reply = try await Self.createCookie(a, ["idToken": .string(idToken), "validDuration": "3600"])
            #expect(reply.status == 200, "\(reply.json)")
            let cookie = try #require(reply.json["sessionCookie"]?.stringValue)
            let claims = try a.claims(cookie)
            let tokenClaims = try a.claims(idToken)
            #expect(claims["iss"] == .string("https://session.firebase.google.com/\(a.app.runtime.config.project)"))
            #expect(claims["aud"] == .string(a.app.runtime.config.project))
            #expect(claims["sub"] == .string(uid) && claims["user_id"] == .string(uid))
            #expect(claims["auth_time"] == tokenClaims["auth_time"])
            #expect(claims["email"] == "cookie@example.com")
            #expect(claims["firebase"]?["sign_in_provider"] == "password")
            #expect(claims["iat"] == .int(a.clock.now().seconds))
            #expect(claims["exp"] == .int(a.clock.now().seconds + 3600))

            let verified = try await a.app.runtime.auth.verifySessionCookie(cookie)
            #expect(verified.uid == uid)
            // Each is refused where the other is expected: the issuers differ.
            await #expect(throws: TokenRejection.self) { try await a.app.runtime.auth.verifyIDToken(cookie) }
            await #expect(throws: TokenRejection.self) { try await a.app.runtime.auth.verifySessionCookie(idToken) }

            // Without validDuration: the longest, two weeks.
            let longest = try await Self.createCookie(a, ["idToken": .string(idToken)])
            let longClaims = try a.claims(try #require(longest.json["sessionCookie"]?.stringValue))
            #expect(longClaims["exp"]?.intValue.map { $0 - (longClaims["iat"]?.intValue ?? 0) } == 1_209_600)

            // A cookie lasts its own lifetime: the two-week one outlives the ID token's hour, and
            // the one-hour one expires with its (and the clock skew allowed).
            let longCookie = try #require(longest.json["sessionCookie"]?.stringValue)
            a.clock.advance(by: .seconds(3600) + a.app.runtime.auth.configuration.clockSkew)
            await #expect(throws: TokenRejection.self) { try await a.app.runtime.auth.verifyIDToken(idToken) }
            #expect(try await a.app.runtime.auth.verifySessionCookie(longCookie).uid == uid)
            do {
                _ = try await a.app.runtime.auth.verifySessionCookie(cookie)
                Issue.record("an expired session cookie was accepted")
            } catch {
                guard case TokenRejection.expired? = error as? TokenRejection else { Issue.record("expected .expired, got \(error)"); return }
            }
            // A cookie is not an ID token to exchange for another.
            let fromCookie = try await Self.createCookie(a, ["idToken": .string(longCookie)])
            #expect(fromCookie.code == "INVALID_ID_TOKEN", "\(fromCookie.json)")
        }
    }

    @Test("a cookie made before the user's tokens were revoked, or of a disabled user, is refused when revocation is checked")
    func revocation() async throws {
        try await withAuthApp { a in
            let signUp = try await a.ios("signupNewUser", ["email": "revoke@example.com", "password": "secret-1", "returnSecureToken": true])
            let idToken = try #require(signUp.json["idToken"]?.stringValue)
            let uid = try #require(signUp.json["localId"]?.stringValue)
            let cookie = try #require(try await Self.createCookie(a, ["idToken": .string(idToken), "validDuration": 86_400]).json["sessionCookie"]?.stringValue)
            a.clock.advance(by: .seconds(10))
            try await a.app.runtime.auth.revokeRefreshTokens(uid: uid)
            await #expect(throws: TokenRejection.revoked) { try await a.app.runtime.auth.verifySessionCookie(cookie) }
            #expect(try await a.app.runtime.auth.verifySessionCookie(cookie, checkRevoked: false).uid == uid)
            // The ID token it came from is revoked too, so no new cookie from it.
            let again = try await Self.createCookie(a, ["idToken": .string(idToken)])
            #expect(again.code == "TOKEN_EXPIRED", "\(again.json)")

            let fresh = try await a.ios("verifyPassword", ["email": "revoke@example.com", "password": "secret-1", "returnSecureToken": true])
            let freshToken = try #require(fresh.json["idToken"]?.stringValue)
            let freshCookie = try #require(try await Self.createCookie(a, ["idToken": .string(freshToken)]).json["sessionCookie"]?.stringValue)
            _ = try await a.app.runtime.auth.updateUser(uid: uid, UserUpdate(disabled: true))
            let disabled = try await Self.createCookie(a, ["idToken": .string(freshToken)])
            #expect(disabled.code == "USER_DISABLED", "\(disabled.json)")
            await #expect(throws: TokenRejection.userDisabled) { try await a.app.runtime.auth.verifySessionCookie(freshCookie) }

            // An ID token past its expiry, even within the clock skew verification allows, is
            // not exchanged: the cookie would outlive it by weeks.
            let other = try await a.ios("signupNewUser", ["returnSecureToken": true])
            let otherToken = try #require(other.json["idToken"]?.stringValue)
            a.clock.advance(by: .seconds(3601))
            #expect(try await a.app.runtime.auth.verifyIDToken(otherToken).uid.isEmpty == false)  // within the skew
            let late = try await Self.createCookie(a, ["idToken": .string(otherToken)])
            #expect(late.code == "TOKEN_EXPIRED", "\(late.json)")
        }
    }

    @Test("refusals: lifetimes outside 5 minutes to 2 weeks, a missing or invalid ID token, no admin credentials, another project")
    func refusals() async throws {
        try await withAuthApp { a in
            let signUp = try await a.ios("signupNewUser", ["returnSecureToken": true])
            let idToken = try #require(signUp.json["idToken"]?.stringValue)
            let cases: [(Value, String)] = [
                (["idToken": .string(idToken), "validDuration": 299], "INVALID_DURATION"),
                (["idToken": .string(idToken), "validDuration": "1209601"], "INVALID_DURATION"),
                (["idToken": .string(idToken), "validDuration": -5], "INVALID_DURATION"),
                (["idToken": .string(idToken), "validDuration": "9223372036854775808"], "Invalid value at 'valid_duration' (TYPE_INT64)"),
                (["idToken": .string(idToken), "validDuration": 3600.5], "Invalid value at 'valid_duration' (TYPE_INT64)"),
                (["idToken": .string(idToken), "validDuration": true], "Invalid value at 'valid_duration' (TYPE_INT64)"),
                (["validDuration": 3600], "MISSING_ID_TOKEN"),
                (["idToken": "not.a.token", "validDuration": 3600], "INVALID_ID_TOKEN"),
            ]
            for (body, code) in cases {
                let r = try await Self.createCookie(a, body)
                #expect(r.status == 400 && r.error?.hasPrefix(code) == true, "\(body): \(r.json)")
            }
            #expect(try await Self.createCookie(a, ["idToken": .string(idToken), "validDuration": 300]).status == 200)
            // 0 is proto3's "not set": the default, two weeks.
            let zero = try await Self.createCookie(a, ["idToken": .string(idToken), "validDuration": 0])
            let zeroClaims = try a.claims(try #require(zero.json["sessionCookie"]?.stringValue, "\(zero.json)"))
            #expect(zeroClaims["exp"]?.intValue.map { $0 - (zeroClaims["iat"]?.intValue ?? 0) } == 1_209_600)
            #expect(try await Self.createCookie(a, ["idToken": .string(idToken), "validDuration": 1_209_600]).status == 200)
            let unauthorized = try await Self.createCookie(a, ["idToken": .string(idToken)], admin: false)
            #expect(unauthorized.status == 401, "\(unauthorized.json)")
            let other = try await a.v1("projects/another:createSessionCookie", ["idToken": .string(idToken)], admin: true)
            #expect(other.status == 404 && other.code == "PROJECT_NOT_FOUND", "\(other.json)")
            // Only at its own path.
            let project = a.app.runtime.config.project
            for path in ["createSessionCookie", "projects:createSessionCookie", "projects/\(project)/createSessionCookie", "projects/\(project):accounts"] {
                let r = try await a.v1(path, ["idToken": .string(idToken)], admin: true)
                #expect(r.status == 404, "\(path): \(r.json)")
            }
        }
    }
}
