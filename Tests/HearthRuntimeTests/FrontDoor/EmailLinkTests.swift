import Foundation
import HearthAuth
import HearthHTTP
import HearthModel
@_spi(Internals) @testable import HearthRuntime
import Testing

/// Email-link (passwordless) sign-in, in the requests the SDKs send
/// (https://firebase.google.com/docs/auth/ios/email-link-auth): `sendOobCode` with `EMAIL_SIGNIN`
/// (the iOS SDK's `getOobConfirmationCode`), then `accounts:signInWithEmailLink` (its
/// `emailLinkSignin`). Expected answers follow the Firebase Auth emulator's own tests of the flow
/// (firebase-tools src/emulator/auth/emailLink.spec.ts).
@Suite("Client auth: email-link sign-in")
struct EmailLinkTests {
    static func sendLink(_ a: AuthApp, _ email: String) async throws -> String {
        let sent = try await a.ios("getOobConfirmationCode", ["requestType": "EMAIL_SIGNIN", "email": .string(email),
                                                               "continueUrl": "https://app.example.com/finish", "canHandleCodeInApp": true])
        #expect(sent.status == 200, "\(sent.json)")
        return try await a.code(for: email, "EMAIL_SIGNIN")
    }

    @Test("a new address: the link makes the account, verified, and signs it in as a password user")
    func newAccount() async throws {
        try await withAuthApp { a in
            let code = try await Self.sendLink(a, "link@example.com")
            let listed = try await a.oobCodes().first { $0["oobCode"]?.stringValue == code }
            #expect(listed?["oobLink"]?.stringValue?.contains("mode=signIn") == true)
            let signedIn = try await a.v1("accounts:signInWithEmailLink", ["email": "link@example.com", "oobCode": .string(code)])
            #expect(signedIn.status == 200, "\(signedIn.json)")
            #expect(signedIn.json["isNewUser"] == true)
            #expect(signedIn.json["email"] == "link@example.com")
            let token = try #require(signedIn.json["idToken"]?.stringValue)
            let claims = try a.claims(token)
            #expect(claims["firebase"]?["sign_in_provider"] == "password")  // as Firebase names it
            #expect(claims["provider_id"] == nil)
            #expect(claims["email_verified"] == true)
            let user = try #require(try await a.lookup(token).json["users"]?.arrayValue?.first)
            #expect(user["emailVerified"] == true)
            #expect(user["providerUserInfo"]?.arrayValue?.first?["providerId"] == "password")
            // A code signs in once.
            let again = try await a.v1("accounts:signInWithEmailLink", ["email": "link@example.com", "oobCode": .string(code)])
            #expect(again.code == "INVALID_OOB_CODE", "\(again.json)")
        }
    }

    @Test("an existing account signs in with its uid and gets its address verified; over the iOS SDK's path too")
    func existingAccount() async throws {
        try await withAuthApp { a in
            let signUp = try await a.ios("signupNewUser", ["email": "old@example.com", "password": "secret-1", "returnSecureToken": true])
            let uid = try #require(signUp.json["localId"]?.stringValue)
            let code = try await Self.sendLink(a, "old@example.com")
            let signedIn = try await a.ios("emailLinkSignin", ["email": "OLD@example.com", "oobCode": .string(code), "returnSecureToken": true])
            #expect(signedIn.status == 200, "\(signedIn.json)")
            #expect(signedIn.json["localId"] == .string(uid))
            #expect(signedIn.json["isNewUser"] == false)
            let user = try await a.app.runtime.auth.getUser(uid: uid)
            #expect(user.emailVerified)
            // The password still works beside the link.
            let password = try await a.ios("verifyPassword", ["email": "old@example.com", "password": "secret-1", "returnSecureToken": true])
            #expect(password.json["localId"] == .string(uid))
        }
    }

    @Test("with an ID token the address goes to the signed-in user; an address another account has is EMAIL_EXISTS")
    func linking() async throws {
        try await withAuthApp { a in
            let anonymous = try await a.ios("signupNewUser", ["returnSecureToken": true])
            let uid = try #require(anonymous.json["localId"]?.stringValue)
            let token = try #require(anonymous.json["idToken"]?.stringValue)
            let code = try await Self.sendLink(a, "mine@example.com")
            let linked = try await a.v1("accounts:signInWithEmailLink", ["email": "mine@example.com", "oobCode": .string(code), "idToken": .string(token)])
            #expect(linked.status == 200, "\(linked.json)")
            #expect(linked.json["localId"] == .string(uid))
            let user = try await a.app.runtime.auth.getUser(uid: uid)
            #expect(user.email == "mine@example.com" && user.emailVerified)

            // Replacing an address the account has is an email change: a recent sign-in, and the
            // other sessions end (the new tokens come with the answer).
            let newToken = try #require(linked.json["idToken"]?.stringValue)
            a.clock.advance(by: .seconds(600))
            let moveCode = try await Self.sendLink(a, "moved@example.com")
            let stale = try await a.v1("accounts:signInWithEmailLink", ["email": "moved@example.com", "oobCode": .string(moveCode), "idToken": .string(newToken)])
            #expect(stale.code == "CREDENTIAL_TOO_OLD_LOGIN_AGAIN", "\(stale.json)")

            _ = try await a.ios("signupNewUser", ["email": "taken@example.com", "password": "secret-1", "returnSecureToken": true])
            let other = try #require(try await a.ios("signupNewUser", ["returnSecureToken": true]).json["idToken"]?.stringValue)
            let takenCode = try await Self.sendLink(a, "taken@example.com")
            let taken = try await a.v1("accounts:signInWithEmailLink", ["email": "taken@example.com", "oobCode": .string(takenCode), "idToken": .string(other)])
            #expect(taken.code == "EMAIL_EXISTS", "\(taken.json)")
        }
    }

    @Test("refusals: another address, an unknown, expired or other kind of code, a disabled user, the method off")
    func refusals() async throws {
        try await withAuthApp { a in
            let code = try await Self.sendLink(a, "alice@example.com")
            let mismatch = try await a.v1("accounts:signInWithEmailLink", ["email": "NOT-alice@example.com", "oobCode": .string(code)])
            #expect(mismatch.error == "INVALID_EMAIL : The email provided does not match the sign-in email address.", "\(mismatch.json)")
            let unknown = try await a.v1("accounts:signInWithEmailLink", ["email": "alice@example.com", "oobCode": "invalid"])
            #expect(unknown.code == "INVALID_OOB_CODE", "\(unknown.json)")

            // A code of another kind does not sign in.
            let signUp = try await a.ios("signupNewUser", ["email": "bob@example.com", "password": "secret-1", "returnSecureToken": true])
            _ = try await a.ios("getOobConfirmationCode", ["requestType": "PASSWORD_RESET", "email": "bob@example.com"])
            let reset = try await a.code(for: "bob@example.com", "PASSWORD_RESET")
            let wrongKind = try await a.v1("accounts:signInWithEmailLink", ["email": "bob@example.com", "oobCode": .string(reset)])
            #expect(wrongKind.code == "INVALID_OOB_CODE", "\(wrongKind.json)")

            // Nor is a sign-in code a verification code: applied as one it is refused and not used up.
            let bobCode = try await Self.sendLink(a, "bob@example.com")
            let applied = try await a.v1("accounts:update", ["oobCode": .string(bobCode)])
            #expect(applied.code == "INVALID_OOB_CODE", "\(applied.json)")
            let bobUser = try await a.app.runtime.auth.getUser(uid: try #require(signUp.json["localId"]?.stringValue))
            #expect(!bobUser.emailVerified, "an email-link code applied as verify-email verified nothing")
            _ = try await a.app.runtime.auth.updateUser(uid: try #require(signUp.json["localId"]?.stringValue), UserUpdate(disabled: true))
            let disabled = try await a.v1("accounts:signInWithEmailLink", ["email": "bob@example.com", "oobCode": .string(bobCode)])
            #expect(disabled.code == "USER_DISABLED", "\(disabled.json)")

            a.clock.advance(by: .seconds(3601))
            let expired = try await a.v1("accounts:signInWithEmailLink", ["email": "alice@example.com", "oobCode": .string(code)])
            #expect(expired.code == "EXPIRED_OOB_CODE", "\(expired.json)")
        }
        try await withAuthApp(configure: { $0.auth.providers = ["password"] }) { a in
            let sent = try await a.ios("getOobConfirmationCode", ["requestType": "EMAIL_SIGNIN", "email": "x@example.com"])
            #expect(sent.code == "OPERATION_NOT_ALLOWED", "\(sent.json)")
            let signIn = try await a.v1("accounts:signInWithEmailLink", ["email": "x@example.com", "oobCode": "whatever"])
            #expect(signIn.code == "OPERATION_NOT_ALLOWED", "\(signIn.json)")
        }
    }

    @Test("the Admin SDK's generated link, opened, leads to the app's continueUrl with the code, using nothing up")
    func adminLink() async throws {
        try await withAuthApp { a in
            let generated = try await a.v1("accounts:sendOobCode", ["requestType": "EMAIL_SIGNIN", "email": "carol@example.com", "returnOobLink": true,
                                                                    "continueUrl": "https://app.example.com/finish"], admin: true)
            let link = try #require(generated.json["oobLink"]?.stringValue, "\(generated.json)")
            #expect(link.contains("mode=signIn"))
            let code = try #require(generated.json["oobCode"]?.stringValue)
            let opened = try await a.client.send(HTTPClientRequest(url: link))
            #expect(opened.status == 303)
            let location = try #require(opened.headers["location"])
            #expect(location.hasPrefix("https://app.example.com/finish?mode=signIn&lang=en&oobCode=\(code)"), "\(location)")
            let signedIn = try await a.v1("accounts:signInWithEmailLink", ["email": "carol@example.com", "oobCode": .string(code)])
            #expect(signedIn.status == 200 && signedIn.json["isNewUser"] == true, "\(signedIn.json)")
        }
    }

    @Test("createAuthUri (fetchSignInMethodsForEmail): emailLink for a link account, password once it has one, nothing for an unknown address; an empty list under enumeration protection; bad requests named")
    func signInMethods() async throws {
        @Sendable func methods(_ a: AuthApp, _ email: String, ios: Bool = false) async throws -> AuthApp.Reply {
            let body: Value = ["identifier": .string(email), "continueUri": "http://localhost/"]
            return ios ? try await a.ios("createAuthUri", body) : try await a.v1("accounts:createAuthUri", body)
        }
        try await withAuthApp(configure: { $0.auth.emailEnumerationProtection = false }) { a in
            let unknown = try await methods(a, "nobody@example.com")
            #expect(unknown.status == 200, "\(unknown.json)")
            #expect(unknown.json["kind"] == "identitytoolkit#CreateAuthUriResponse")
            #expect(unknown.json["registered"] == false)
            #expect(unknown.json["signinMethods"] == .array([]))
            #expect(unknown.json["sessionId"]?.stringValue?.isEmpty == false)

            let code = try await Self.sendLink(a, "link@example.com")
            let signedIn = try await a.v1("accounts:signInWithEmailLink", ["email": "link@example.com", "oobCode": .string(code)])
            let token = try #require(signedIn.json["idToken"]?.stringValue, "\(signedIn.json)")
            let linkOnly = try await methods(a, "LINK@example.com", ios: true)
            #expect(linkOnly.json["registered"] == true, "\(linkOnly.json)")
            #expect(linkOnly.json["allProviders"] == ["password"])
            #expect(linkOnly.json["signinMethods"] == ["emailLink"])

            let withPassword = try await a.ios("setAccountInfo", ["idToken": .string(token), "password": "secret-1", "returnSecureToken": true])
            #expect(withPassword.status == 200, "\(withPassword.json)")
            #expect(try await methods(a, "link@example.com").json["signinMethods"] == ["password"])
            let signUp = try await a.v1("accounts:signUp", ["email": "pw@example.com", "password": "secret-1", "returnSecureToken": true])
            #expect(signUp.status == 200)
            #expect(try await methods(a, "pw@example.com").json["allProviders"] == ["password"])
            #expect(try await a.v1("accounts:createAuthUri", ["identifier": "pw@example.com", "continueUri": "http://localhost/", "sessionId": "s-1"]).json["sessionId"] == "s-1")

            for (body, code) in [(["continueUri": "http://localhost/"] as Value, "MISSING_IDENTIFIER"), (["identifier": "pw@example.com"], "MISSING_CONTINUE_URI"),
                                 (["identifier": "invalid", "continueUri": "http://localhost/"], "INVALID_IDENTIFIER"),
                                 (["identifier": "pw@example.com", "continueUri": "invalid"], "INVALID_CONTINUE_URI")] {
                let refused = try await a.v1("accounts:createAuthUri", body)
                #expect(refused.status == 400 && refused.code == code, "\(body): \(refused.json)")
            }
            // Fields of the wrong type are named, as Google's APIs name them.
            for body in [["identifier": 5, "continueUri": "http://localhost/"] as Value, ["identifier": "pw@example.com", "continueUri": ["x"]],
                         ["identifier": "pw@example.com", "continueUri": "http://localhost/", "sessionId": true]] {
                let refused = try await a.v1("accounts:createAuthUri", body)
                #expect(refused.status == 400 && refused.error?.hasPrefix("Invalid value at") == true, "\(body): \(refused.json)")
            }
            let huge = try await a.v1("accounts:createAuthUri", ["identifier": .string(String(repeating: "x", count: 100_000) + "@example.com"),
                                                                 "continueUri": "http://localhost/"])
            #expect(huge.code == "INVALID_IDENTIFIER")
        }
        // With enumeration protection (Hearth's default, as new Firebase projects'), the answer
        // tells nothing: no registered, no providers, an empty list of methods.
        try await withAuthApp { a in
            #expect(try await a.v1("accounts:signUp", ["email": "pw@example.com", "password": "secret-1"]).status == 200)
            let hidden = try await methods(a, "pw@example.com", ios: true)
            #expect(hidden.status == 200)
            #expect(hidden.json["registered"] == nil && hidden.json["allProviders"] == nil)
            #expect(hidden.json["signinMethods"] == .array([]))
        }
    }
}
