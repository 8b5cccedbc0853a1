import Foundation
import HearthAuth
import HearthHTTP
import HearthModel
import HearthStore
@_spi(Internals) @testable import HearthRuntime
import HearthTesting
import Testing

/// The request sequences the Firebase iOS SDK sends when it signs in, refreshes, updates and
/// deletes its user (firebase-ios-sdk `FirebaseAuth/Sources/Swift/Backend/RPC`), over real HTTP,
/// with Identity Toolkit's answers and errors.
@Suite("Client auth: the iOS SDK's sign-in flows")
struct ClientAuthTests {
    @Test("custom-token sign-in, then getAccountInfo, a refresh and a callable with the refreshed token")
    func customTokenFlow() async throws {
        try await withAuthApp { a in
            let custom = try a.app.runtime.auth.createCustomToken(uid: "dana", claims: ["plan": "pro"])
            let signIn = try await a.ios("verifyCustomToken", ["token": .string(custom), "returnSecureToken": true])
            #expect(signIn.status == 200, "\(signIn.json)")
            #expect(signIn.json["expiresIn"] == "3600", "a string, as the SDK parses it")
            let idToken = try #require(signIn.json["idToken"]?.stringValue)
            let refreshToken = try #require(signIn.json["refreshToken"]?.stringValue)

            let lookup = try await a.lookup(idToken)
            #expect(lookup.status == 200, "\(lookup.json)")
            let users = try #require(lookup.json["users"]?.arrayValue)
            #expect(users.count == 1, "the SDK requires exactly one user")
            #expect(users[0]["localId"] == "dana")
            #expect(users[0]["createdAt"]?.stringValue.flatMap(Int64.init) == 1_800_000_000_000, "epoch milliseconds, as a string")
            #expect(users[0]["lastLoginAt"]?.stringValue != nil)
            #expect(users[0]["passwordHash"] == nil, "no password, no hash")

            a.clock.advance(by: .seconds(1800))
            let refreshed = try await a.refresh(refreshToken)
            #expect(refreshed.status == 200, "\(refreshed.json)")
            let access = try #require(refreshed.json["access_token"]?.stringValue)
            #expect(access == refreshed.json["id_token"]?.stringValue)
            #expect(access != idToken, "a new token each refresh")
            #expect(refreshed.json["expires_in"] == "3600")
            let claims = try a.claims(access)
            #expect(claims["firebase"]?["sign_in_provider"] == "custom")
            #expect(claims["plan"] == "pro")
            #expect(claims["auth_time"]?.intValue == 1_800_000_000, "the session's sign-in time")

            let who = try await a.post("/caller", ["data": .null], headers: [("Authorization", "Bearer \(access)")])
            #expect(who.json["result"]?["uid"] == "dana")
            #expect(who.json["result"]?["claims"]?["plan"] == "pro")
        }
    }

    @Test("anonymous sign-in, then linking an email and password keeps the uid; onUserCreated runs once")
    func anonymousThenLink() async throws {
        try await withAuthApp { a in
            let anonymous = try await a.ios("signupNewUser", ["returnSecureToken": true, "clientType": "CLIENT_TYPE_IOS"])
            #expect(anonymous.status == 200, "\(anonymous.json)")
            #expect(anonymous.json["kind"] == "identitytoolkit#SignupNewUserResponse")
            let uid = try #require(anonymous.json["localId"]?.stringValue)
            #expect(uid.count == 28)
            let anonToken = try #require(anonymous.json["idToken"]?.stringValue)
            #expect(try a.claims(anonToken)["firebase"]?["sign_in_provider"] == "anonymous")
            #expect(try a.claims(anonToken)["provider_id"] == "anonymous")
            #expect(try await a.lookup(anonToken).json["users"]?.arrayValue?.first?["email"] == nil)

            let weak = try await a.ios("signupNewUser", ["idToken": .string(anonToken), "email": "ann@example.com", "password": "12345"])
            #expect(weak.error == "WEAK_PASSWORD : Password should be at least 6 characters")

            let linked = try await a.ios("signupNewUser", ["idToken": .string(anonToken), "email": "ann@example.com", "password": "correct horse",
                                                           "returnSecureToken": true])
            #expect(linked.status == 200, "\(linked.json)")
            #expect(linked.json["localId"] == .string(uid), "the anonymous account becomes permanent")
            let linkedToken = try #require(linked.json["idToken"]?.stringValue)
            #expect(try a.claims(linkedToken)["firebase"]?["sign_in_provider"] == "password")
            let user = try #require(try await a.lookup(linkedToken).json["users"]?.arrayValue?.first)
            #expect(user["email"] == "ann@example.com")
            #expect(user["emailVerified"] == false)
            #expect(user["passwordHash"] == "UkVEQUNURUQ=", "present (the SDK reads it as 'has a password'), never the hash")
            let password = try #require(user["providerUserInfo"]?.arrayValue?.first { $0["providerId"] == "password" })
            #expect(password["federatedId"] == "ann@example.com")

            let again = try await a.ios("signupNewUser", ["idToken": .string(linkedToken), "email": "ann@example.com", "password": "another one"])
            #expect(again.code == "PROVIDER_ALREADY_LINKED")
            let signIn = try await a.ios("verifyPassword", ["email": "ann@example.com", "password": "correct horse", "returnSecureToken": true])
            #expect(signIn.json["localId"] == .string(uid))

            await a.app.settle()
            #expect(try a.userEvents(.created, uid: uid) == 1, "created once, not again when linked")
            #expect(try await a.app.document("profiles/\(uid)") != nil, "onUserCreated ran")
        }
    }

    @Test("email sign-up, verifying the address with the emailed code, password sign-in and its refusals")
    func emailPasswordFlow() async throws {
        try await withAuthApp { a in
            #expect(try await a.ios("signupNewUser", ["email": "not-an-address", "password": "secret-1"]).code == "INVALID_EMAIL")
            #expect(try await a.ios("signupNewUser", ["email": "bo@example.com"]).code == "MISSING_PASSWORD")
            #expect(try await a.ios("signupNewUser", ["password": "secret-1"]).code == "MISSING_EMAIL")
            let signUp = try await a.ios("signupNewUser", ["email": "bo@example.com", "password": "secret-1", "returnSecureToken": true])
            #expect(signUp.status == 200, "\(signUp.json)")
            let uid = try #require(signUp.json["localId"]?.stringValue)
            let idToken = try #require(signUp.json["idToken"]?.stringValue)
            #expect(try await a.ios("signupNewUser", ["email": "BO@example.com", "password": "secret-2"]).code == "EMAIL_EXISTS")
            #expect(try await a.ios("signupNewUser", ["email": "bo@example.com", "password": "123"]).code == "EMAIL_EXISTS", "before the password's strength")

            let send = try await a.ios("getOobConfirmationCode", ["requestType": "VERIFY_EMAIL", "idToken": .string(idToken)])
            #expect(send.status == 200, "\(send.json)")
            #expect(send.json["email"] == "bo@example.com")
            let listed = try await a.oobCodes()
            #expect(listed.first?["oobLink"]?.stringValue?.contains("/emulator/action?mode=verifyEmail&lang=en&oobCode=") == true)
            let code = try await a.code(for: "bo@example.com", "VERIFY_EMAIL")
            let applied = try await a.ios("setAccountInfo", ["oobCode": .string(code), "returnSecureToken": true])
            #expect(applied.status == 200, "\(applied.json)")
            #expect(applied.json["emailVerified"] == true)
            #expect(applied.json["idToken"] == nil, "verifying an address ends no session")
            #expect(try await a.lookup(idToken).json["users"]?.arrayValue?.first?["emailVerified"] == true)
            #expect(try await a.ios("setAccountInfo", ["oobCode": .string(code)]).code == "INVALID_OOB_CODE", "a code works once")

            let signIn = try await a.ios("verifyPassword", ["email": "bo@example.com", "password": "secret-1", "returnSecureToken": true])
            #expect(signIn.status == 200, "\(signIn.json)")
            #expect(signIn.json["localId"] == .string(uid))
            #expect(signIn.json["registered"] == true)
            #expect(try a.claims(try #require(signIn.json["idToken"]?.stringValue))["email_verified"] == true)

            // Email enumeration protection (on by default): a wrong password and an unknown address look alike.
            #expect(try await a.ios("verifyPassword", ["email": "bo@example.com", "password": "wrong-1"]).code == "INVALID_LOGIN_CREDENTIALS")
            #expect(try await a.ios("verifyPassword", ["email": "nobody@example.com", "password": "wrong-1"]).code == "INVALID_LOGIN_CREDENTIALS")
            #expect(try await a.ios("verifyPassword", ["email": "bo@example.com"]).code == "MISSING_PASSWORD")
            #expect(try await a.ios("verifyPassword", ["password": "x"]).code == "MISSING_EMAIL")
        }
        try await withAuthApp(configure: { $0.auth.emailEnumerationProtection = false }) { a in
            _ = try await a.ios("signupNewUser", ["email": "cy@example.com", "password": "secret-1"])
            #expect(try await a.ios("verifyPassword", ["email": "cy@example.com", "password": "wrong-1"]).error == "INVALID_PASSWORD")
            #expect(try await a.ios("verifyPassword", ["email": "nobody@example.com", "password": "wrong-1"]).error == "EMAIL_NOT_FOUND")
        }
    }

    @Test("repeated failed password sign-ins for one address answer TOO_MANY_ATTEMPTS_TRY_LATER until the bucket refills")
    func tooManyAttempts() async throws {
        try await withAuthApp(configure: { $0.auth.failedSignInBurst = 3; $0.auth.failedSignInRefillSeconds = 60 }) { a in
            _ = try await a.ios("signupNewUser", ["email": "di@example.com", "password": "secret-1"])
            for _ in 0..<3 {
                #expect(try await a.ios("verifyPassword", ["email": "di@example.com", "password": "guess"]).code == "INVALID_LOGIN_CREDENTIALS")
            }
            let limited = try await a.ios("verifyPassword", ["email": "di@example.com", "password": "secret-1"])
            #expect(limited.code == "TOO_MANY_ATTEMPTS_TRY_LATER", "even the right password, while the bucket is empty")
            #expect(limited.status == 400)
            #expect(try await a.ios("verifyPassword", ["email": "DI@example.com", "password": "secret-1"]).code == "TOO_MANY_ATTEMPTS_TRY_LATER",
                    "the address as Firebase compares it")
            // Unknown addresses are limited too (guessing which exist is what the limit is for).
            for _ in 0..<3 { _ = try await a.ios("verifyPassword", ["email": "ghost@example.com", "password": "guess"]) }
            #expect(try await a.ios("verifyPassword", ["email": "ghost@example.com", "password": "guess"]).code == "TOO_MANY_ATTEMPTS_TRY_LATER")
            #expect(try await a.ios("verifyPassword", ["email": "other@example.com", "password": "guess"]).code == "INVALID_LOGIN_CREDENTIALS",
                    "another address has its own bucket")

            a.clock.advance(by: .seconds(60))
            #expect(try await a.ios("verifyPassword", ["email": "di@example.com", "password": "secret-1"]).status == 200, "one attempt refilled")
        }
    }

    @Test("password reset: the code says what it is for, sets a new password once, ends old sessions, and expires")
    func passwordReset() async throws {
        try await withAuthApp { a in
            let signUp = try await a.ios("signupNewUser", ["email": "ed@example.com", "password": "old-secret", "returnSecureToken": true])
            let oldRefresh = try #require(signUp.json["refreshToken"]?.stringValue)
            let oldToken = try #require(signUp.json["idToken"]?.stringValue)
            #expect(try await a.ios("getOobConfirmationCode", ["requestType": "PASSWORD_RESET", "email": "ed@example.com"]).status == 200)
            let unknown = try await a.ios("getOobConfirmationCode", ["requestType": "PASSWORD_RESET", "email": "nobody@example.com"])
            #expect(unknown.status == 200, "with enumeration protection an unknown address is not revealed")
            #expect(try await a.oobCodes().allSatisfy { $0["email"] != "nobody@example.com" })
            #expect(try await a.ios("getOobConfirmationCode", ["email": "ed@example.com"]).code == "MISSING_REQ_TYPE")

            let code = try await a.code(for: "ed@example.com", "PASSWORD_RESET")
            let check = try await a.ios("resetPassword", ["oobCode": .string(code)])
            #expect(check.json["requestType"] == "PASSWORD_RESET")
            #expect(check.json["email"] == "ed@example.com")
            #expect(try await a.ios("resetPassword", ["oobCode": .string(code), "newPassword": "short"]).code == "WEAK_PASSWORD")
            a.clock.advance(by: .seconds(2))
            let reset = try await a.ios("resetPassword", ["oobCode": .string(code), "newPassword": "new-secret"])
            #expect(reset.status == 200, "\(reset.json)")
            #expect(try await a.ios("resetPassword", ["oobCode": .string(code), "newPassword": "newer-secret"]).code == "INVALID_OOB_CODE")

            #expect(try await a.ios("verifyPassword", ["email": "ed@example.com", "password": "old-secret"]).code == "INVALID_LOGIN_CREDENTIALS")
            #expect(try await a.ios("verifyPassword", ["email": "ed@example.com", "password": "new-secret"]).status == 200)
            #expect(try await a.refresh(oldRefresh).error == "TOKEN_EXPIRED", "the sessions before the reset end")
            #expect(try await a.lookup(oldToken).error == "TOKEN_EXPIRED")

            _ = try await a.ios("getOobConfirmationCode", ["requestType": "PASSWORD_RESET", "email": "ed@example.com"])
            let late = try await a.code(for: "ed@example.com", "PASSWORD_RESET")
            a.clock.advance(by: .seconds(3601))
            #expect(try await a.ios("resetPassword", ["oobCode": .string(late), "newPassword": "late-secret"]).code == "EXPIRED_OOB_CODE")
            #expect(try await a.ios("resetPassword", ["oobCode": "made-up"]).code == "INVALID_OOB_CODE")
            #expect(try await a.ios("resetPassword", [:]).code == "MISSING_OOB_CODE")
        }
    }

    @Test("profile updates: name and photo set and removed, no new session; a bad field is refused and nothing changes")
    func profileUpdate() async throws {
        try await withAuthApp { a in
            let signUp = try await a.ios("signupNewUser", ["email": "fay@example.com", "password": "secret-1", "returnSecureToken": true])
            let idToken = try #require(signUp.json["idToken"]?.stringValue)
            let update = try await a.ios("setAccountInfo", ["idToken": .string(idToken), "displayName": "Fay", "photoUrl": "https://example.com/fay.png",
                                                            "returnSecureToken": true])
            #expect(update.status == 200, "\(update.json)")
            #expect(update.json["displayName"] == "Fay")
            #expect(update.json["idToken"] == nil, "a profile change ends no session")
            #expect(update.json["providerUserInfo"]?.arrayValue?.first?["providerId"] == "password")
            let user = try #require(try await a.lookup(idToken).json["users"]?.arrayValue?.first)
            #expect(user["displayName"] == "Fay")
            #expect(user["photoUrl"] == "https://example.com/fay.png")

            #expect(try await a.ios("setAccountInfo", ["idToken": .string(idToken), "displayName": .int(5)]).error?.hasPrefix("Invalid value at 'display_name'") == true)
            let tooLong = try await a.ios("setAccountInfo", ["idToken": .string(idToken), "displayName": "Gus",
                                                             "photoUrl": .string("https://example.com/" + String(repeating: "p", count: 2048))])
            #expect(tooLong.status == 400 && tooLong.error?.contains("photo URL") == true, "\(tooLong.json)")
            #expect(try await a.lookup(idToken).json["users"]?.arrayValue?.first?["displayName"] == "Fay", "nothing changed")
            // Any other string is kept as given, as Identity Toolkit and its emulator keep it (the
            // JS SDK's own tests set 'photo-url').
            #expect(try await a.ios("setAccountInfo", ["idToken": .string(idToken), "photoUrl": "photo-url"]).status == 200)
            #expect(try await a.lookup(idToken).json["users"]?.arrayValue?.first?["photoUrl"] == "photo-url")

            let removed = try await a.ios("setAccountInfo", ["idToken": .string(idToken), "deleteAttribute": ["DISPLAY_NAME", "PHOTO_URL"]])
            #expect(removed.status == 200, "\(removed.json)")
            let after = try #require(try await a.lookup(idToken).json["users"]?.arrayValue?.first)
            #expect(after["displayName"] == nil)
            #expect(after["photoUrl"] == nil)
            #expect(try await a.ios("setAccountInfo", ["idToken": "garbage", "displayName": "x"]).code == "INVALID_ID_TOKEN")
            for field: (String, Value) in [("customAttributes", #"{"role":"admin"}"#), ("disableUser", false), ("validSince", "0")] {
                let r = try await a.ios("setAccountInfo", .map(["idToken": .string(idToken), field.0: field.1]))
                #expect(r.code == "INSUFFICIENT_PERMISSION", "a client may not set \(field.0)")
            }
            #expect(try a.claims(try #require(try await a.ios("verifyPassword", ["email": "fay@example.com", "password": "secret-1"]).json["idToken"]?.stringValue))["role"] == nil)
            #expect(try await a.ios("setAccountInfo", ["displayName": "x"]).code == "MISSING_ID_TOKEN", "no user and no admin credentials")
            #expect(try await a.ios("getAccountInfo", [:]).code == "MISSING_ID_TOKEN")
            #expect(try await a.ios("deleteAccount", [:]).code == "MISSING_ID_TOKEN")
        }
    }

    @Test("a password change needs a recent sign-in, ends other sessions and returns new tokens")
    func passwordChange() async throws {
        try await withAuthApp { a in
            let signUp = try await a.ios("signupNewUser", ["email": "gus@example.com", "password": "secret-1", "returnSecureToken": true])
            let idToken = try #require(signUp.json["idToken"]?.stringValue)
            let refresh = try #require(signUp.json["refreshToken"]?.stringValue)
            a.clock.advance(by: .seconds(2))
            let changed = try await a.ios("setAccountInfo", ["idToken": .string(idToken), "password": "secret-2", "returnSecureToken": true])
            #expect(changed.status == 200, "\(changed.json)")
            let fresh = try #require(changed.json["idToken"]?.stringValue)
            #expect(changed.json["refreshToken"]?.stringValue != nil)
            #expect(try await a.lookup(fresh).status == 200)
            #expect(try await a.lookup(idToken).error == "TOKEN_EXPIRED", "the old session ended")
            #expect(try await a.refresh(refresh).error == "TOKEN_EXPIRED")
            #expect(try await a.ios("verifyPassword", ["email": "gus@example.com", "password": "secret-2"]).status == 200)

            a.clock.advance(by: .seconds(301))
            #expect(try await a.ios("setAccountInfo", ["idToken": .string(fresh), "password": "secret-3"]).error == "CREDENTIAL_TOO_OLD_LOGIN_AGAIN")
            #expect(try await a.ios("setAccountInfo", ["idToken": .string(fresh), "email": "gus2@example.com"]).error == "CREDENTIAL_TOO_OLD_LOGIN_AGAIN")
            #expect(try await a.ios("verifyPassword", ["email": "gus@example.com", "password": "secret-3"]).code == "INVALID_LOGIN_CREDENTIALS",
                    "nothing changed")
        }
    }

    @Test("re-authenticate, then delete: refused with an old auth_time, then the user is gone, lookup and refresh refuse, onUserDeleted ran")
    func reauthenticateThenDelete() async throws {
        try await withAuthApp { a in
            let signUp = try await a.ios("signupNewUser", ["email": "hal@example.com", "password": "secret-1", "returnSecureToken": true])
            let uid = try #require(signUp.json["localId"]?.stringValue)
            let oldToken = try #require(signUp.json["idToken"]?.stringValue)
            a.clock.advance(by: .seconds(600))
            // The app's ID token is refreshed by then, but the sign-in is still ten minutes old.
            let refreshed = try await a.refresh(try #require(signUp.json["refreshToken"]?.stringValue))
            let staleToken = try #require(refreshed.json["access_token"]?.stringValue)
            let refused = try await a.ios("deleteAccount", ["idToken": .string(staleToken), "localId": .string(uid)])
            #expect(refused.error == "CREDENTIAL_TOO_OLD_LOGIN_AGAIN")
            #expect(refused.status == 400)
            #expect(try await a.lookup(staleToken).status == 200, "still there")
            _ = oldToken

            let again = try await a.ios("verifyPassword", ["email": "hal@example.com", "password": "secret-1", "returnSecureToken": true])
            let recent = try #require(again.json["idToken"]?.stringValue)
            let deleted = try await a.ios("deleteAccount", ["idToken": .string(recent), "localId": .string(uid)])
            #expect(deleted.status == 200, "\(deleted.json)")
            #expect(deleted.json["kind"] == "identitytoolkit#DeleteAccountResponse")
            #expect(try await a.lookup(recent).error == "USER_NOT_FOUND")
            #expect(try await a.refresh(try #require(again.json["refreshToken"]?.stringValue)).error == "USER_NOT_FOUND")
            #expect(try await a.ios("verifyPassword", ["email": "hal@example.com", "password": "secret-1"]).code == "INVALID_LOGIN_CREDENTIALS")

            await a.app.settle()
            #expect(try await a.app.documents(in: "runs").contains { $0.fields["function"] == "purge" && $0.fields["uid"] == .string(uid) })
            #expect(try a.userEvents(.deleted, uid: uid) == 1)
        }
    }

    @Test("sign-in methods switched off in runtime.toml are refused as the console's switches refuse them")
    func disabledMethods() async throws {
        try await withAuthApp(configure: { $0.auth.providers = ["custom"] }) { a in
            #expect(try await a.ios("signupNewUser", ["returnSecureToken": true]).code == "ADMIN_ONLY_OPERATION")
            #expect(try await a.ios("signupNewUser", ["email": "x@example.com", "password": "secret-1"]).code == "OPERATION_NOT_ALLOWED")
            #expect(try await a.ios("verifyPassword", ["email": "x@example.com", "password": "secret-1"]).code == "OPERATION_NOT_ALLOWED")
            #expect(try await a.ios("verifyAssertion", ["requestUri": "http://localhost", "postBody": "providerId=google.com&id_token=x",
                                                        "returnSecureToken": true]).code == "OPERATION_NOT_ALLOWED")
            let custom = try a.app.runtime.auth.createCustomToken(uid: "still-works")
            #expect(try await a.ios("verifyCustomToken", ["token": .string(custom)]).status == 200)
        }
        try await withAuthApp(configure: { $0.auth.providers = ["password"] }) { a in
            let custom = try a.app.runtime.auth.createCustomToken(uid: "nope")
            #expect(try await a.ios("verifyCustomToken", ["token": .string(custom)]).code == "OPERATION_NOT_ALLOWED")
        }
    }

    @Test("hostile bodies: wrong types, a huge password, made-up tokens and unknown operations get errors, the server stays up")
    func hostileBodies() async throws {
        try await withAuthApp { a in
            let wrongType = try await a.ios("signupNewUser", ["email": .array(["a"]), "password": "secret-1"])
            #expect(wrongType.error?.hasPrefix("Invalid value at 'email'") == true, "\(wrongType.json)")
            #expect(try await a.ios("signupNewUser", ["email": "big@example.com", "password": .string(String(repeating: "p", count: 5000))]).code == "INVALID_ARGUMENT")
            #expect(try await a.ios("verifyPassword", ["email": "big@example.com", "password": .string(String(repeating: "p", count: 100_000))]).code
                    == "INVALID_LOGIN_CREDENTIALS")
            #expect(try await a.lookup("a.b.c").code == "INVALID_ID_TOKEN")
            #expect(try await a.ios("getAccountInfo", ["idToken": ""]).code == "MISSING_ID_TOKEN")
            #expect(try await a.ios("getOobConfirmationCode", ["requestType": "NUKE", "email": "x@example.com"]).code == "INVALID_REQ_TYPE")
            #expect(try await a.ios("getOobConfirmationCode", ["requestType": "PASSWORD_RESET", "email": "x@example.com", "returnOobLink": true]).code
                    == "INSUFFICIENT_PERMISSION")
            #expect(try await a.ios("noSuchThing", [:]).status == 404)
            #expect(try await a.ios("verifyAssertion", ["postBody": "providerId=google.com&id_token=x"]).code == "MISSING_REQUEST_URI")
            #expect(try await a.ios("verifyAssertion", ["requestUri": "http://localhost", "postBody": "providerId=google.com&id_token=%%%"]).code
                    == "INVALID_IDP_RESPONSE")
            #expect(try await a.ios("signupNewUser", ["returnSecureToken": true]).status == 200, "still serving")
        }
    }

    @Test("passwords are stored with scrypt at Firebase's cost (N = 2^14, r = 8) and checked in constant time")
    func firebaseCost() async throws {
        try await withAuthApp(configure: { $0.auth.passwordHashMemCost = 14; $0.auth.passwordHashRounds = 8 }) { a in
            let signUp = try await a.ios("signupNewUser", ["email": "ivy@example.com", "password": "secret-1"])
            let uid = try #require(signUp.json["localId"]?.stringValue)
            let stored = try #require(try await a.app.runtime.users.get(.uid(uid)).passwordHash)
            #expect(stored.algorithm == .standardScrypt)
            #expect(stored.costLog2 == 14)
            #expect(stored.blockSize == 8)
            #expect(Base64.decode(stored.salt)?.count == 16)
            #expect(!stored.hash.contains("secret"), "never the password")
            #expect(try await a.ios("verifyPassword", ["email": "ivy@example.com", "password": "secret-1"]).status == 200)
        }
    }
}

@Suite("Client auth: importing users")
struct UserImportTests {
    static let signerKey = "jxspr8Ki0RYycVU8zykbdLGjFQ3McFUH0uiiTvC8pVMXAn210wjLNmdZJzxUECKbm0QsEmYUSDzZvpjeJ9WmXA=="

    @Test("batchCreate keeps Firebase scrypt hashes (then signs in with them), hashes raw passwords, reports bad users by index; onUserCreated per user")
    func batchCreate() async throws {
        try await withAuthApp { a in
            let body: Value = [
                "hashAlgorithm": "SCRYPT", "signerKey": .string(Self.signerKey), "saltSeparator": "Bw==", "rounds": 8, "memoryCost": 14,
                "users": [
                    ["localId": "imported-1", "email": "one@example.com", "emailVerified": true,
                     // firebase-admin sends bytes as URL-safe base64.
                     "passwordHash": "lSrfV15cpx95_sZS2W9c9Kp6i_LVgQNDNC_qzrCnh1SAyZvqmZqAjTdn3aoItz-VHjoZilo78198JAdRuid5lQ==", "salt": "42xEC-ixf3L2lw==",
                     "customAttributes": #"{"role":"admin"}"#, "createdAt": "1700000000000"],
                    ["localId": "imported-2", "email": "two@example.com", "rawPassword": "plain-secret"],
                    ["email": "three@example.com"],
                    ["localId": "imported-4", "email": "one@example.com"],
                    ["localId": "imported-5", "customAttributes": #"{"sub":"x"}"#],
                ],
            ]
            let r = try await a.v1("accounts:batchCreate", body, admin: true)
            #expect(r.status == 200, "\(r.json)")
            let errors = try #require(r.json["error"]?.arrayValue)
            #expect(errors.compactMap { $0["index"]?.intValue } == [2, 3, 4])
            #expect(errors.first?["message"] == "MISSING_LOCAL_ID")
            #expect(errors.dropFirst().first?["message"] == "EMAIL_EXISTS")

            let one = try await a.ios("verifyPassword", ["email": "one@example.com", "password": "user1password", "returnSecureToken": true])
            #expect(one.status == 200, "\(one.json)")
            #expect(try a.claims(try #require(one.json["idToken"]?.stringValue))["role"] == "admin")
            let rehashed = try #require(try await a.app.runtime.users.get(.uid("imported-1")).passwordHash)
            #expect(rehashed.algorithm == .standardScrypt, "an imported hash is replaced at the first sign-in")
            #expect(try await a.ios("verifyPassword", ["email": "one@example.com", "password": "user1password"]).status == 200)
            #expect(try await a.ios("verifyPassword", ["email": "two@example.com", "password": "plain-secret"]).status == 200)
            #expect(try await a.app.runtime.users.get(.uid("imported-1")).metadata.creationTime == Timestamp(seconds: 1_700_000_000))

            #expect(try await a.v1("accounts:batchCreate", body).status == 401, "admin only")
            let bad = try await a.v1("accounts:batchCreate", ["hashAlgorithm": "MD5", "users": [["localId": "x"]]], admin: true)
            #expect(bad.code == "INVALID_HASH_ALGORITHM")
            let noKey = try await a.v1("accounts:batchCreate", ["hashAlgorithm": "SCRYPT", "rounds": 8, "memoryCost": 14, "users": [["localId": "x"]]], admin: true)
            #expect(noKey.code == "MISSING_SIGNER_KEY")
            #expect(try await a.app.runtime.users.list().users.count == 2, "refused requests import nobody")

            await a.app.settle()
            #expect(try a.userEvents(.created, uid: "imported-1") == 1)
            #expect(try a.userEvents(.created, uid: "imported-2") == 1)

            // A listed user's phone entry (made up from its number) is not taken in as a provider:
            // after a change of number, its answer names the new one only.
            let phone: Value = ["users": [["localId": "imported-phone", "phoneNumber": "+15555550101",
                                           "providerUserInfo": [["providerId": "phone", "rawId": "+15555550101", "phoneNumber": "+15555550101"]]]]]
            let imported = try await a.v1("accounts:batchCreate", phone, admin: true)
            #expect(imported.status == 200 && (imported.json["error"]?.arrayValue ?? []).isEmpty, "\(imported.json)")
            _ = try await a.v1("accounts:update", ["localId": "imported-phone", "phoneNumber": "+15555550102"], admin: true)
            let looked = try await a.v1("accounts:lookup", ["localId": ["imported-phone"]], admin: true)
            let providers = looked.json["users"]?.arrayValue?.first?["providerUserInfo"]?.arrayValue ?? []
            #expect(providers.map { $0["rawId"] } == ["+15555550102"], "\(looked.json)")
        }
    }

    @Test("firebase-admin's generate_*_link: sendOobCode with admin credentials returns the link, and the code in it works")
    func generatedLinks() async throws {
        try await withAuthApp { a in
            _ = try await a.ios("signupNewUser", ["email": "link@example.com", "password": "secret-1"])
            let r = try await a.v1("accounts:sendOobCode", ["requestType": "PASSWORD_RESET", "email": "link@example.com", "returnOobLink": true,
                                                           "continueUrl": "https://app.example.com/done?x=1"], admin: true)
            #expect(r.status == 200, "\(r.json)")
            let link = try #require(r.json["oobLink"]?.stringValue)
            #expect(link.contains("mode=resetPassword"))
            #expect(link.contains("continueUrl=https%3A%2F%2Fapp.example.com%2Fdone%3Fx%3D1"))
            let code = try #require(r.json["oobCode"]?.stringValue)
            #expect(link.contains("oobCode=\(code)"))
            #expect(try await a.ios("resetPassword", ["oobCode": .string(code), "newPassword": "secret-2"]).status == 200)
            let unknown = try await a.v1("accounts:sendOobCode", ["requestType": "VERIFY_EMAIL", "email": "nobody@example.com", "returnOobLink": true], admin: true)
            #expect(unknown.code == "EMAIL_NOT_FOUND", "the Admin SDK is told")
        }
    }
}

/// What a stolen or stale ID token, a guessing script, or a made-up request must not get.
@Suite("Client auth: what an attacker must not get")
struct ClientAuthAttackTests {
    @Test("an old session cannot swap the password out by unlinking and relinking it, nor give a password to an account with another way in")
    func unlinkRelink() async throws {
        try await withAuthApp { a in
            let signUp = try await a.ios("signupNewUser", ["email": "jay@example.com", "password": "secret-1", "returnSecureToken": true])
            let token = try #require(signUp.json["idToken"]?.stringValue)
            a.clock.advance(by: .seconds(600))
            for body: [String: Value] in [["deleteProvider": ["password"]], ["deleteAttribute": ["PASSWORD"]], ["deleteAttribute": ["EMAIL"]]] {
                var request = body
                request["idToken"] = .string(token)
                #expect(try await a.ios("setAccountInfo", .map(request)).error == "CREDENTIAL_TOO_OLD_LOGIN_AGAIN", "\(body)")
            }
            #expect(try await a.ios("verifyPassword", ["email": "jay@example.com", "password": "secret-1"]).status == 200, "the password is still there")

            let custom = try a.app.runtime.auth.createCustomToken(uid: "kay")
            let kay = try #require(try await a.ios("verifyCustomToken", ["token": .string(custom)]).json["idToken"]?.stringValue)
            _ = try await a.v1("accounts:update", ["localId": "kay", "email": "kay@example.com"], admin: true)
            a.clock.advance(by: .seconds(600))
            let link = try await a.ios("signupNewUser", ["idToken": .string(kay), "email": "kay@example.com", "password": "secret-1"])
            #expect(link.error == "CREDENTIAL_TOO_OLD_LOGIN_AGAIN", "only an anonymous user links a password without a recent sign-in")
        }
    }

    @Test("unlinking the password (a recent sign-in) keeps the user's sessions; setting one makes the new session a password session")
    func unlinkKeepsSessions() async throws {
        // Setting an address by accounts:update is refused under enumeration protection (below).
        try await withAuthApp(configure: { $0.auth.emailEnumerationProtection = false }) { a in
            let custom = try a.app.runtime.auth.createCustomToken(uid: "uma")
            let signedIn = try await a.ios("verifyCustomToken", ["token": .string(custom), "returnSecureToken": true])
            let token = try #require(signedIn.json["idToken"]?.stringValue)
            let refreshToken = try #require(signedIn.json["refreshToken"]?.stringValue)
            let withPassword = try await a.ios("setAccountInfo", ["idToken": .string(token), "email": "uma@example.com", "password": "secret-1",
                                                                  "returnSecureToken": true])
            let passwordToken = try #require(withPassword.json["idToken"]?.stringValue, "\(withPassword.json)")
            #expect(try a.claims(passwordToken)["firebase"]?["sign_in_provider"] == "password")
            #expect(try await a.refresh(refreshToken).status == 400, "a new password ends the other sessions")
            let passwordRefresh = try #require(withPassword.json["refreshToken"]?.stringValue)
            // The JS SDK's unlink: deleteProvider, no returnSecureToken.
            let unlinked = try await a.v1("accounts:update", ["idToken": .string(passwordToken), "deleteProvider": ["password"]])
            #expect(unlinked.status == 200 && unlinked.json["idToken"] == nil, "\(unlinked.json)")
            #expect(try await a.refresh(passwordRefresh).status == 200, "unlinking ends no session")
            #expect(try await a.lookup(passwordToken).status == 200)
        }
    }

    @Test("the Auth emulator's reset (DELETE …/accounts) deletes every user, each with its user event; only in emulator mode or for admin credentials")
    func emulatorReset() async throws {
        try await withAuthApp(configure: { $0.auth.emulator = true }) { a in
            var uids: [String] = []
            for k in 0..<3 {
                let r = try await a.v1("accounts:signUp", ["email": .string("r\(k)@example.com"), "password": "secret-1", "returnSecureToken": true])
                uids.append(try #require(r.json["localId"]?.stringValue))
            }
            let reset = try await a.client.send(HTTPClientRequest(method: "DELETE", url: a.base + "/emulator/v1/projects/hearth-app/accounts"))
            #expect(reset.status == 200, "\(reset.text)")
            #expect(try await a.app.runtime.auth.listUsers().users.isEmpty)
            for uid in uids { #expect(try a.userEvents(.deleted, uid: uid) == 1) }
            #expect(try await a.v1("accounts:signInWithPassword", ["email": "r0@example.com", "password": "secret-1"]).code == "EMAIL_NOT_FOUND")
        }
        try await withAuthApp { a in
            _ = try await a.v1("accounts:signUp", ["email": "kept@example.com", "password": "secret-1"])
            let refused = try await a.client.send(HTTPClientRequest(method: "DELETE", url: a.base + "/emulator/v1/projects/hearth-app/accounts"))
            #expect(refused.status == 401)
            #expect(try await a.app.runtime.auth.listUsers().users.count == 1)
        }
    }

    @Test("the Firestore emulator's clear (DELETE …/databases/(default)/documents) deletes every document, nested ones too; not from other sites")
    func emulatorClearDocuments() async throws {
        try await withAuthApp(configure: { $0.auth.emulator = true }) { a in
            try await a.app.runtime.documents.commit([.set(try DocumentPath("a/1"), ["n": 1]), .set(try DocumentPath("a/1/b/2"), ["n": 2]),
                                                      .set(try DocumentPath("c/3"), ["n": 3])])
            let clear = "/emulator/v1/projects/hearth-app/databases/(default)/documents"
            let foreign = try await a.client.send(HTTPClientRequest(method: "DELETE", url: a.base + clear, headers: HTTPHeaders([("Origin", "https://evil.example")])))
            #expect(foreign.status == 401)
            #expect(try await a.app.runtime.documents.paths(under: ["a"]).count == 2)
            let cleared = try await a.client.send(HTTPClientRequest(method: "DELETE", url: a.base + clear))
            #expect(cleared.status == 200, "\(cleared.text)")
            #expect(try await a.app.runtime.documents.listCollections(under: nil).isEmpty)
            #expect(try await a.app.runtime.documents.paths(under: ["a"]).isEmpty)
            #expect(try await a.client.send(HTTPClientRequest(url: a.base + clear)).status == 405)
        }
        // Outside emulator mode not even the admin token clears or replaces anything.
        try await withAuthApp { a in
            try await a.app.runtime.documents.commit([.set(try DocumentPath("a/1"), ["n": 1])])
            let admin = HTTPHeaders([("Authorization", "Bearer \(AuthApp.adminToken)")])
            let clear = try await a.client.send(HTTPClientRequest(method: "DELETE", url: a.base + "/emulator/v1/projects/hearth-app/databases/(default)/documents", headers: admin))
            #expect(clear.status == 404)
            let rules = try await a.client.send(HTTPClientRequest(method: "PUT", url: a.base + "/emulator/v1/projects/hearth-app:securityRules", headers: admin,
                                                                  body: Array(#"{"rules": {"files": [{"content": "service cloud.firestore {}"}]}}"#.utf8)))
            #expect(rules.status == 404)
            #expect(try await a.app.runtime.documents.paths(under: ["a"]).count == 1)
        }
    }

    @Test("the Firestore emulator's PUT …:securityRules replaces the rules in force; a file that does not load is refused and the rules stay")
    func emulatorSecurityRules() async throws {
        try await withAuthApp(configure: { $0.auth.emulator = true }) { a in
            try await a.app.runtime.documents.commit([.set(try DocumentPath("things/t1"), ["n": 1])])
            let doc = a.base + "/v1/projects/hearth-app/databases/(default)/documents/things/t1"
            func read() async throws -> Int { try await a.client.send(HTTPClientRequest(url: doc)).status }
            func put(_ rules: String, origin: String? = nil) async throws -> HTTPClientResponse {
                let body: Value = ["rules": ["files": [["name": "test.rules", "content": .string(rules)]]]]
                return try await a.client.send(HTTPClientRequest(method: "PUT", url: a.base + "/emulator/v1/projects/hearth-app:securityRules",
                                                                 headers: HTTPHeaders(origin.map { [("Origin", $0)] } ?? []), body: JSONWriter.encode(body)))
            }
            #expect(try await read() == 403, "no rules: clients may not read")
            let open = "rules_version = '2';\nservice cloud.firestore {\n  match /databases/{database}/documents {\n    match /things/{id} { allow read: if true; }\n  }\n}\n"
            #expect(try await put(open, origin: "https://evil.example").status == 401)
            #expect(try await read() == 403)
            let loaded = try await put(open)
            #expect(loaded.status == 200, "\(loaded.text)")
            #expect(try await read() == 200)
            let broken = try await put("service cloud.firestore { match /x { allow read: if ; } }")
            #expect(broken.status == 400 && broken.text.contains("test.rules:"), "\(broken.text)")
            #expect(try await read() == 200, "the rules in force stay")
            // Bodies that are not one rules file are refused, and the rules stay.
            let url = a.base + "/emulator/v1/projects/hearth-app:securityRules"
            for body in ["not json", "{}", #"{"rules": {"files": []}}"#, #"{"rules": {"files": [{"content": 5}]}}"#,
                         #"{"rules": {"files": [{"content": "a"}, {"content": "b"}]}}"#, #"{"rules": "x"}"#] {
                let refused = try await a.client.send(HTTPClientRequest(method: "PUT", url: url, body: Array(body.utf8)))
                #expect(refused.status == 400 && refused.text.contains("one file"), "\(body): \(refused.text)")
            }
            #expect(try await a.client.send(HTTPClientRequest(url: url)).status == 405)
            #expect(try await read() == 200)
        }
    }

    @Test("a browser app's SDK: preflights of the auth endpoints are answered for its origin, and every answer carries it back")
    func browserCORS() async throws {
        try await withAuthApp { a in
            let origin = "http://localhost:5173"
            for path in ["/identitytoolkit.googleapis.com/v1/accounts:signUp?key=k", "/securetoken.googleapis.com/v1/token?key=k",
                         "/www.googleapis.com/identitytoolkit/v3/relyingparty/signupNewUser?key=k", "/emulator/v1/projects/hearth-app/oobCodes"] {
                let pre = try await a.client.send(HTTPClientRequest(method: "OPTIONS", url: a.base + path, headers: HTTPHeaders([
                    ("Origin", origin), ("Access-Control-Request-Method", "POST"), ("Access-Control-Request-Headers", "content-type,x-client-version")])))
                #expect(pre.status == 204, "\(path)")
                #expect(pre.headers["access-control-allow-origin"] == origin, "\(path)")
                #expect(pre.headers["access-control-allow-headers"] == "content-type,x-client-version", "\(path)")
            }
            let signUp = try await a.client.send(HTTPClientRequest(method: "POST", url: a.base + "/identitytoolkit.googleapis.com/v1/accounts:signUp?key=k",
                                                                   headers: HTTPHeaders([("Origin", origin), ("Content-Type", "application/json")]),
                                                                   body: Array(#"{"returnSecureToken": true}"#.utf8)))
            #expect(signUp.status == 200)
            #expect(signUp.headers["access-control-allow-origin"] == origin)
            let refused = try await a.client.send(HTTPClientRequest(method: "POST", url: a.base + "/identitytoolkit.googleapis.com/v1/accounts:signInWithPassword?key=k",
                                                                    headers: HTTPHeaders([("Origin", origin), ("Content-Type", "application/json")]),
                                                                    body: Array(#"{"email": "nobody@example.com", "password": "x-123456"}"#.utf8)))
            #expect(refused.status == 400 && refused.headers["access-control-allow-origin"] == origin, "errors too, so the app can read them")
        }
    }

    @Test("emulator mode's public credentials are not for web pages served elsewhere: Bearer owner and the emulator's endpoints refuse another site's origin")
    func emulatorCredentialsFromOtherSites() async throws {
        try await withAuthApp(configure: { $0.auth.emulator = true }) { a in
            _ = try await a.v1("accounts:signUp", ["email": "site@example.com", "password": "secret-1"])
            func send(_ method: String, _ path: String, origin: String?, owner: Bool) async throws -> HTTPClientResponse {
                var headers: [(String, String)] = [("Content-Type", "application/json")]
                if let origin { headers.append(("Origin", origin)) }
                if owner { headers.append(("Authorization", "Bearer owner")) }
                return try await a.client.send(HTTPClientRequest(method: method, url: a.base + path, headers: HTTPHeaders(headers),
                                                                 body: method == "POST" ? Array("{}".utf8) : []))
            }
            let list = "/identitytoolkit.googleapis.com/v1/projects/hearth-app/accounts:batchGet"
            let codes = "/emulator/v1/projects/hearth-app/oobCodes"
            for origin in [nil, "http://localhost:9876", "http://127.0.0.1:3000"] {
                #expect(try await send("POST", list, origin: origin, owner: true).status == 200, "\(origin ?? "no origin")")
                #expect(try await send("GET", codes, origin: origin, owner: false).status == 200, "\(origin ?? "no origin")")
            }
            let elsewhere = "https://evil.example"
            #expect(try await send("POST", list, origin: elsewhere, owner: true).status == 401)
            let listed = try await send("GET", codes, origin: elsewhere, owner: false)
            #expect(listed.status == 401 && listed.headers["access-control-allow-origin"] == nil)
            let preflight = try await a.client.send(HTTPClientRequest(method: "OPTIONS", url: a.base + "/emulator/v1/projects/hearth-app/accounts",
                                                                      headers: HTTPHeaders([("Origin", elsewhere), ("Access-Control-Request-Method", "DELETE")])))
            #expect(preflight.headers["access-control-allow-origin"] == nil, "a browser never sends the reset")
            #expect(try await send("DELETE", "/emulator/v1/projects/hearth-app/accounts", origin: elsewhere, owner: false).status == 401)
            #expect(try await a.app.runtime.auth.listUsers().users.count == 1)
            // A page whose name was rebound to this machine sends no Origin on a same-origin GET,
            // but the Host it addressed gives it away.
            let rebound = try await a.client.send(HTTPClientRequest(url: a.base + codes, headers: HTTPHeaders([("Host", "attacker.example:9099")])))
            #expect(rebound.status == 401)
            let reboundOwner = try await a.client.send(HTTPClientRequest(method: "POST", url: a.base + list,
                                                                         headers: HTTPHeaders([("Host", "attacker.example"), ("Authorization", "Bearer owner")]),
                                                                         body: Array("{}".utf8)))
            #expect(reboundOwner.status == 401)
            // Local pages get the emulator endpoints' CORS headers.
            let local = try await send("GET", codes, origin: "http://localhost:9876", owner: false)
            #expect(local.headers["access-control-allow-origin"] == "http://localhost:9876")
            // The client endpoints stay open to any site, as Firebase's are.
            #expect(try await send("POST", "/identitytoolkit.googleapis.com/v1/accounts:signUp?key=k", origin: elsewhere, owner: false).status == 200)
        }
    }

    @Test("emulator mode takes the Auth emulator's fake custom tokens (JSON with uid and claims); elsewhere they are refused")
    func fakeCustomTokens() async throws {
        let fake: Value = ["token": .string(#"{"uid": "fake-uid", "claims": {"customClaim": "some-claim"}}"#), "returnSecureToken": true]
        try await withAuthApp(configure: { $0.auth.emulator = true }) { a in
            let signedIn = try await a.v1("accounts:signInWithCustomToken", fake)
            #expect(signedIn.status == 200, "\(signedIn.json)")
            #expect(signedIn.json["isNewUser"] == true && signedIn.json["localId"] == "fake-uid")
            let claims = try a.claims(try #require(signedIn.json["idToken"]?.stringValue))
            #expect(claims["customClaim"] == "some-claim")
            #expect(claims["firebase"]?["sign_in_provider"] == "custom")
            #expect(try await a.v1("accounts:signInWithCustomToken", ["token": #"{"user_id": "other"}"#]).json["localId"] == "other")
            for bad in [#"{"claims": {}}"#, #"{"uid": ""}"#, #"{"uid": "u", "claims": 5}"#, #"{"uid": "u", "claims": {"sub": "x"}}"#, "{not json"] {
                #expect(try await a.v1("accounts:signInWithCustomToken", ["token": .string(bad)]).code == "INVALID_CUSTOM_TOKEN", "\(bad)")
            }
        }
        try await withAuthApp { a in
            let refused = try await a.v1("accounts:signInWithCustomToken", fake)
            #expect(refused.code == "INVALID_CUSTOM_TOKEN", "\(refused.json)")
        }
    }

    @Test("with email enumeration protection an address changes only through a verified code: updateEmail is OPERATION_NOT_ALLOWED, as Firebase documents")
    func protectedEmailChange() async throws {
        try await withAuthApp { a in
            let signedUp = try await a.ios("signupNewUser", ["email": "pat@example.com", "password": "secret-1", "returnSecureToken": true])
            let token = try #require(signedUp.json["idToken"]?.stringValue)
            let refused = try await a.ios("setAccountInfo", ["idToken": .string(token), "email": "pat2@example.com", "returnSecureToken": true])
            #expect(refused.code == "OPERATION_NOT_ALLOWED" && refused.error?.contains("verify the new email") == true, "\(refused.json)")
            #expect(try await a.lookup(token).json["users"]?.arrayValue?.first?["email"] == "pat@example.com", "nothing changed")
            #expect(try await a.ios("setAccountInfo", ["idToken": .string(token), "displayName": "Pat"]).status == 200, "other changes are fine")
        }
    }

    @Test("verifyBeforeUpdateEmail: the code goes to the new address; checking it says both addresses; applying it moves the account and ends its sessions")
    func changeOfAddress() async throws {
        try await withAuthApp { a in
            let signedUp = try await a.ios("signupNewUser", ["email": "old@example.com", "password": "secret-1", "returnSecureToken": true])
            let token = try #require(signedUp.json["idToken"]?.stringValue)
            let refreshToken = try #require(signedUp.json["refreshToken"]?.stringValue)
            let sent = try await a.ios("getOobConfirmationCode", ["requestType": "VERIFY_AND_CHANGE_EMAIL", "idToken": .string(token),
                                                                 "newEmail": "new@example.com"])
            #expect(sent.status == 200, "\(sent.json)")
            let code = try await a.code(for: "new@example.com", "VERIFY_AND_CHANGE_EMAIL")
            // checkActionCode: the SDKs read `email` as the previous address, `newEmail` as the next.
            let checked = try await a.ios("resetPassword", ["oobCode": .string(code)])
            #expect(checked.json["requestType"] == "VERIFY_AND_CHANGE_EMAIL", "\(checked.json)")
            #expect(checked.json["email"] == "old@example.com")
            #expect(checked.json["newEmail"] == "new@example.com")
            let applied = try await a.ios("setAccountInfo", ["oobCode": .string(code)])
            #expect(applied.status == 200 && applied.json["email"] == "new@example.com", "\(applied.json)")
            #expect(try await a.refresh(refreshToken).status == 400, "the account's sessions ended")
            let signedIn = try await a.ios("verifyPassword", ["email": "new@example.com", "password": "secret-1", "returnSecureToken": true])
            let newToken = try #require(signedIn.json["idToken"]?.stringValue, "\(signedIn.json)")
            let user = try #require(try await a.lookup(newToken).json["users"]?.arrayValue?.first)
            #expect(user["email"] == "new@example.com" && user["emailVerified"] == true)
            #expect(try await a.ios("resetPassword", ["oobCode": .string(code)]).code == "INVALID_OOB_CODE", "a code is used once")
        }
    }

    @Test("a client cannot have a verification or change-of-address code made for someone else's account")
    func codesForOthers() async throws {
        try await withAuthApp { a in
            _ = try await a.ios("signupNewUser", ["email": "lea@example.com", "password": "secret-1"])
            #expect(try await a.ios("getOobConfirmationCode", ["requestType": "VERIFY_AND_CHANGE_EMAIL", "email": "lea@example.com",
                                                               "newEmail": "thief@example.com"]).code == "MISSING_ID_TOKEN")
            #expect(try await a.ios("getOobConfirmationCode", ["requestType": "VERIFY_EMAIL", "email": "lea@example.com"]).code == "MISSING_ID_TOKEN")
            #expect(try await a.oobCodes().isEmpty)
        }
    }

    @Test("parallel guesses cannot get past the failed-attempt limit")
    func parallelGuesses() async throws {
        try await withAuthApp(configure: { $0.auth.failedSignInBurst = 3 }) { a in
            _ = try await a.ios("signupNewUser", ["email": "max@example.com", "password": "secret-1"])
            let codes = try await withThrowingTaskGroup(of: String?.self) { group in
                for i in 0..<12 { group.addTask { try await a.ios("verifyPassword", ["email": "max@example.com", "password": .string("guess-\(i)")]).code } }
                var all: [String?] = []
                for try await code in group { all.append(code) }
                return all
            }
            #expect(codes.filter { $0 == "INVALID_LOGIN_CREDENTIALS" }.count == 3, "\(codes)")
            #expect(codes.filter { $0 == "TOO_MANY_ATTEMPTS_TRY_LATER" }.count == 9)
        }
    }

    @Test("a reset code sent to an address the account no longer has resets nothing")
    func resetAfterEmailChange() async throws {
        try await withAuthApp(configure: { $0.auth.emailEnumerationProtection = false }) { a in
            let signUp = try await a.ios("signupNewUser", ["email": "ned@example.com", "password": "secret-1", "returnSecureToken": true])
            _ = try await a.ios("getOobConfirmationCode", ["requestType": "PASSWORD_RESET", "email": "ned@example.com"])
            let code = try await a.code(for: "ned@example.com", "PASSWORD_RESET")
            let changed = try await a.ios("setAccountInfo", ["idToken": signUp.json["idToken"] ?? .null, "email": "ned2@example.com", "returnSecureToken": true])
            #expect(changed.status == 200, "\(changed.json)")
            #expect(try await a.ios("resetPassword", ["oobCode": .string(code), "newPassword": "taken-over"]).code == "INVALID_OOB_CODE")
            #expect(try await a.ios("verifyPassword", ["email": "ned2@example.com", "password": "secret-1"]).status == 200)
        }
    }

    @Test("password hashes stay in the user table: not in the user event log, not in lookups")
    func hashesStayPut() async throws {
        try await withAuthApp { a in
            let signUp = try await a.ios("signupNewUser", ["email": "ola@example.com", "password": "secret-1", "returnSecureToken": true])
            let uid = try #require(signUp.json["localId"]?.stringValue)
            let table = UserTable(engine: a.app.runtime.store.engine as! SQLiteEngine)
            let events = try table.events(after: 0, limit: 100).filter { $0.user.uid == uid }
            #expect(events.count == 1)
            #expect(events.allSatisfy { $0.user.passwordHash == nil })
            let admin = try await a.v1("accounts:lookup", ["localId": [.string(uid)]], admin: true)
            #expect(admin.json["users"]?.arrayValue?.first?["passwordHash"] == "UkVEQUNURUQ=")
            #expect(admin.json["users"]?.arrayValue?.first?["salt"] == nil)
            // Listing users with admin credentials is the one answer with the hash and its salt
            // (firebase-admin's listUsers: passwordHash and passwordSalt), as Firebase gives them.
            let stored = try #require(try await a.app.runtime.auth.users.user(uid: uid)?.passwordHash)
            let listed = try await a.v1("accounts:batchGet", [:], admin: true)
            let row = try #require(listed.json["users"]?.arrayValue?.first { $0["localId"]?.stringValue == uid })
            #expect(row["passwordHash"]?.stringValue == stored.hash && row["salt"]?.stringValue == stored.salt)
            #expect(try await a.v1("accounts:batchGet", [:]).status == 401, "not without them")
            #expect(try await a.app.runtime.users.get(.uid(uid)).redacted.passwordHash == nil)
        }
    }

    @Test("the emailed link itself works: opening it verifies the address, or with a new password resets it")
    func actionLinks() async throws {
        try await withAuthApp { a in
            _ = try await a.ios("signupNewUser", ["email": "pia@example.com", "password": "secret-1"])
            let r = try await a.v1("accounts:sendOobCode", ["requestType": "PASSWORD_RESET", "email": "pia@example.com", "returnOobLink": true], admin: true)
            let link = try #require(r.json["oobLink"]?.stringValue)
            let path = String(link.drop(while: { $0 != "/" }).dropFirst(2).drop(while: { $0 != "/" }))
            let opened = try await a.client.send(HTTPClientRequest(url: a.base + path + "&newPassword=secret-2"))
            #expect(opened.status == 200, "\(opened.text)")
            #expect(try await a.ios("verifyPassword", ["email": "pia@example.com", "password": "secret-2"]).status == 200)
            let again = try await a.client.send(HTTPClientRequest(url: a.base + path + "&newPassword=secret-3"))
            #expect(again.status == 400)
            #expect(again.text.contains("INVALID_OOB_CODE"))
        }
    }

    @Test("the Admin SDK's create and update with a password: checked first, then hashed, and the user signs in with it")
    func adminPasswords() async throws {
        try await withAuthApp { a in
            let weak = try await a.v1("accounts", ["localId": "quin", "email": "quin@example.com", "password": "short"], admin: true)
            #expect(weak.code == "WEAK_PASSWORD")
            #expect(try await a.app.runtime.users.list().users.isEmpty, "nothing half-made")
            let made = try await a.v1("accounts", ["localId": "quin", "email": "quin@example.com", "password": "secret-1"], admin: true)
            #expect(made.status == 200, "\(made.json)")
            #expect(try await a.ios("verifyPassword", ["email": "quin@example.com", "password": "secret-1"]).status == 200)
            let updated = try await a.v1("accounts:update", ["localId": "quin", "password": "secret-2"], admin: true)
            #expect(updated.status == 200, "\(updated.json)")
            #expect(try await a.ios("verifyPassword", ["email": "quin@example.com", "password": "secret-2"]).status == 200)
        }
    }
}

@Suite("Where emulator mode's public credentials may come from")
struct LocalRequestTests {
    @Test("web page origins on this machine", arguments: [
        (nil, true), ("http://localhost:5173", true), ("https://localhost", true), ("http://app.localhost:3000", true),
        ("http://127.0.0.1:8080", true), ("http://127.1.2.3", true), ("http://[::1]:9099", true),
        ("null", false), ("https://evil.example", false), ("http://localhost.evil.com", false), ("http://127.0.0.1.evil.com", false),
        ("http://[::ffff:127.0.0.1]", false), ("file://", false), ("http://127.0.0.256", false), ("http://10.0.0.5", false),
    ] as [(String?, Bool)])
    func origins(_ origin: String?, _ local: Bool) {
        #expect(CORS.isLocalPage(origin) == local)
    }

    @Test("Host headers no DNS rebinding can produce", arguments: [
        (nil, true), ("127.0.0.1:9099", true), ("localhost:9099", true), ("LOCALHOST", true), ("[::1]:9099", true), ("192.168.1.5:9099", true),
        ("devbox.lan:9099", true), ("attacker.example:9099", false), ("attacker.example", false), ("localhost.attacker.example", false), ("[evil]", false),
        ("[::1].evil", false), ("[::1]:x", false), ("localhost:80@evil", false), ("+1.+2.+3.+4", false), ("1.2.3.999", false), ("", false),
        ("localhost.", false), ("127.0.0.1:", false),
    ] as [(String?, Bool)])
    func hosts(_ host: String?, _ direct: Bool) {
        #expect(CORS.isDirectHost(host, allowed: ["devbox.lan"]) == direct)
    }
}

@Suite("Emulator mode on the network")
struct EmulatorBindingTests {
    @Test("emulator mode listening beyond this machine warns at start; on 127.0.0.1, or outside emulator mode, it does not", arguments: [
        ("0.0.0.0", true, true), ("127.0.0.1", true, false), ("0.0.0.0", false, false),
    ])
    func warnsOnTheNetwork(host: String, emulator: Bool, warns: Bool) async throws {
        try await withFrontDoor(configure: { config in
            config.server.host = host
            config.auth.emulator = emulator
        }) { door in
            #expect(door.log.contains("emulator mode listening on \(host)") == warns, "\(door.log.all.suffix(3))")
        }
    }
}
