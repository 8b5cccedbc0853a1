import Foundation
import HearthAuth
import HearthHTTP
import HearthModel
@_spi(Internals) @testable import HearthRuntime
import Testing

@Suite("Auth REST endpoints over HTTP")
struct AuthRESTTests {
    static let signIn = "/identitytoolkit.googleapis.com/v1/accounts:signInWithCustomToken?key=any-api-key"
    static let refresh = "/securetoken.googleapis.com/v1/token?key=any-api-key"
    static let json = [("Content-Type", "application/json")]
    static let admin = Secrets(file: ["HEARTH_ADMIN_TOKEN": "admin-secret"])

    func signIn(_ door: DoorFixture, _ token: String) async throws -> HTTPClientResponse {
        try await door.send("POST", Self.signIn, headers: Self.json, body: JSONWriter.string(["token": .string(token), "returnSecureToken": true]))
    }

    @Test("a custom token is exchanged for an ID token that callables accept, with its developer claims")
    func customTokenSignIn() async throws {
        try await withFrontDoor { door in
            let custom = try door.runtime.auth.createCustomToken(uid: "dave", claims: ["tier": "gold"])
            let r = try await signIn(door, custom)
            #expect(r.status == 200, "\(r.text)")
            let body = try #require(r.json)
            #expect(body["kind"] == "identitytoolkit#VerifyCustomTokenResponse")
            #expect(body["expiresIn"] == "3600")
            #expect(body["isNewUser"] == true)
            #expect(body["refreshToken"]?.stringValue?.isEmpty == false)
            let idToken = try #require(body["idToken"]?.stringValue)
            let who = try await door.call("whoami", .null, headers: [("Authorization", "Bearer \(idToken)")])
            #expect(who.json?["result"]?["uid"] == "dave")
            #expect(who.json?["result"]?["claims"]?["tier"] == "gold")
            #expect(try await signIn(door, custom).json?["isNewUser"] == false)
        }
    }

    @Test("bad sign-in requests get Identity Toolkit errors", arguments: [
        (#"{"token":"not-a-jwt"}"#, "INVALID_CUSTOM_TOKEN"),
        (#"{"returnSecureToken":true}"#, "MISSING_CUSTOM_TOKEN"),
        (#"{"token":"#, "INVALID_JSON"),
    ])
    func badSignIn(body: String, code: String) async throws {
        try await withFrontDoor { door in
            let r = try await door.send("POST", Self.signIn, headers: Self.json, body: body)
            #expect(r.status == 400)
            #expect(r.json?["error"]?["message"] == .string(code))
            #expect(r.json?["error"]?["code"] == 400)
        }
    }

    @Test("an unsigned custom token signs in only in emulator mode")
    func unsignedCustomToken() async throws {
        let unsigned = JWT.unsigned(["uid": "erin", "aud": "https://identitytoolkit.googleapis.com/google.identity.identitytoolkit.v1.IdentityToolkit",
                                     "iat": .int(SystemClock().now().seconds), "exp": .int(SystemClock().now().seconds + 600)])
        try await withFrontDoor { door in
            let r = try await signIn(door, unsigned)
            #expect(r.json?["error"]?["message"] == "INVALID_CUSTOM_TOKEN")
        }
        try await withFrontDoor(configure: { $0.project = "demo-todo" }) { door in
            let r = try await signIn(door, unsigned)
            #expect(r.status == 200, "\(r.text)")
        }
    }

    @Test("a refresh token gives new ID tokens (form or JSON) until the user is disabled, revoked or deleted")
    func refreshTokens() async throws {
        let clock = ManualClock(Timestamp(seconds: 1_800_000_000))
        try await withFrontDoor(clock: clock) { door in
            let first = try #require(try await signIn(door, try door.runtime.auth.createCustomToken(uid: "frank")).json)
            let refreshToken = try #require(first["refreshToken"]?.stringValue)
            clock.advance(by: .seconds(10))
            let form = try await door.send("POST", Self.refresh, headers: [("Content-Type", "application/x-www-form-urlencoded")],
                                           body: "grant_type=refresh_token&refresh_token=\(refreshToken)")
            #expect(form.status == 200, "\(form.text)")
            #expect(form.json?["token_type"] == "Bearer")
            #expect(form.json?["user_id"] == "frank")
            #expect(form.json?["refresh_token"] == .string(refreshToken))
            #expect(form.json?["expires_in"] == "3600")
            let idToken = try #require(form.json?["id_token"]?.stringValue)
            #expect(idToken != first["idToken"]?.stringValue)
            #expect(try await door.call("whoami", .null, headers: [("Authorization", "Bearer \(idToken)")]).json?["result"]?["uid"] == "frank")

            let json = try await door.send("POST", Self.refresh, headers: Self.json,
                                           body: JSONWriter.string(["grantType": "refresh_token", "refreshToken": .string(refreshToken)]))
            #expect(json.status == 200)

            func refreshError(_ body: String) async throws -> Value? {
                try await door.send("POST", Self.refresh, headers: [("Content-Type", "application/x-www-form-urlencoded")], body: body).json?["error"]?["message"]
            }
            #expect(try await refreshError("grant_type=refresh_token&refresh_token=nope") == "INVALID_REFRESH_TOKEN")
            #expect(try await refreshError("grant_type=password&refresh_token=x") == "INVALID_GRANT_TYPE")
            #expect(try await refreshError("refresh_token=x") == "MISSING_GRANT_TYPE")
            #expect(try await refreshError("grant_type=refresh_token") == "MISSING_REFRESH_TOKEN")

            _ = try await door.runtime.auth.updateUser(uid: "frank", UserUpdate(disabled: true))
            #expect(try await refreshError("grant_type=refresh_token&refresh_token=\(refreshToken)") == "USER_DISABLED")
            _ = try await door.runtime.auth.updateUser(uid: "frank", UserUpdate(disabled: false))
            // Revoked within the same second as the sign-in: the token itself is marked, so it is
            // refused even where comparing whole-second times could not tell them apart.
            try await door.runtime.auth.revokeRefreshTokens(uid: "frank")
            #expect(try await refreshError("grant_type=refresh_token&refresh_token=\(refreshToken)") == "TOKEN_EXPIRED")
            #expect(try await refreshError("grant_type=refresh_token&refresh_token=\(refreshToken)") == "TOKEN_EXPIRED")

            // A sign-in after the revocation gets a refresh token that works.
            clock.advance(by: .seconds(1))
            let again = try #require(try await signIn(door, try door.runtime.auth.createCustomToken(uid: "frank")).json)
            let second = try #require(again["refreshToken"]?.stringValue)
            #expect(try await door.send("POST", Self.refresh, headers: [("Content-Type", "application/x-www-form-urlencoded")],
                                        body: "grant_type=refresh_token&refresh_token=\(second)").status == 200)

            // The user deleted: USER_NOT_FOUND. Created again under the same uid: the old tokens stay dead.
            try await door.runtime.auth.deleteUser(uid: "frank")
            #expect(try await refreshError("grant_type=refresh_token&refresh_token=\(second)") == "USER_NOT_FOUND")
            _ = try await door.runtime.auth.createUser(NewUser(uid: "frank"))
            #expect(try await refreshError("grant_type=refresh_token&refresh_token=\(second)") == "TOKEN_EXPIRED")
            #expect(try await refreshError("grant_type=refresh_token&refresh_token=\(refreshToken)") == "TOKEN_EXPIRED")
        }
    }

    @Test("account endpoints need admin credentials; Bearer owner counts only in emulator mode")
    func accountAuthorization() async throws {
        let body = #"{"localId":["x"]}"#
        try await withFrontDoor(secrets: Self.admin) { door in
            let lookup = "/identitytoolkit.googleapis.com/v1/projects/hearth-local/accounts:lookup"
            func status(_ authorization: String?) async throws -> Int {
                let headers: [(String, String)] = Self.json + (authorization.map { [("Authorization", $0)] } ?? [])
                return try await door.send("POST", lookup, headers: headers, body: body).status
            }
            var statuses: [Int] = []
            for authorization in [nil, "Bearer owner", "Bearer wrong", "Bearer admin-secret"] { statuses.append(try await status(authorization)) }
            // Without any credentials the call reads as a client's that lacks its ID token.
            #expect(statuses == [400, 401, 401, 200])
        }
        try await withFrontDoor(configure: { $0.project = "demo-todo" }) { door in
            let lookup = "/identitytoolkit.googleapis.com/v1/projects/demo-todo/accounts:lookup"
            let owner: [(String, String)] = Self.json + [("Authorization", "Bearer owner")]
            #expect(try await door.send("POST", lookup, headers: owner, body: body).status == 200)
            let other = "/identitytoolkit.googleapis.com/v1/projects/another/accounts:lookup"
            let r = try await door.send("POST", other, headers: owner, body: body)
            #expect(r.status == 404)
            #expect(r.json?["error"]?["message"]?.stringValue?.hasPrefix("PROJECT_NOT_FOUND") == true)
        }
    }

    @Test("create, look up, update claims and profile, disable, query, delete and batch delete accounts")
    func accountLifecycle() async throws {
        try await withFrontDoor(configure: { $0.project = "demo-todo" }) { door in
            let owner: [(String, String)] = Self.json + [("Authorization", "Bearer owner")]
            func op(_ name: String, _ body: Value) async throws -> HTTPClientResponse {
                try await door.send("POST", "/identitytoolkit.googleapis.com/v1/projects/demo-todo/\(name)", headers: owner, body: JSONWriter.string(body))
            }
            let created = try await op("accounts", ["localId": "gina", "email": "gina@example.com", "displayName": "Gina", "emailVerified": true])
            #expect(created.json == ["kind": "identitytoolkit#SignupNewUserResponse", "localId": "gina"])
            let generated = try await op("accounts", ["email": "hal@example.com"])
            let hal = try #require(generated.json?["localId"]?.stringValue)
            #expect(hal.count == 28)

            let duplicate = try await op("accounts", ["email": "gina@example.com"])
            #expect(duplicate.status == 400)
            #expect(duplicate.json?["error"]?["message"] == "EMAIL_EXISTS")
            let badEmail = try await op("accounts", ["email": "not an email"])
            #expect(badEmail.json?["error"]?["message"]?.stringValue?.hasPrefix("INVALID_EMAIL") == true)

            let byUID = try await op("accounts:lookup", ["localId": ["gina"]])
            #expect(byUID.json?["users"]?.arrayValue?.first?["email"] == "gina@example.com")
            #expect(byUID.json?["users"]?.arrayValue?.first?["displayName"] == "Gina")
            #expect(byUID.json?["users"]?.arrayValue?.first?["emailVerified"] == true)
            let byEmail = try await op("accounts:lookup", ["email": ["hal@example.com"]])
            #expect(byEmail.json?["users"]?.arrayValue?.first?["localId"] == .string(hal))
            let none = try await op("accounts:lookup", ["localId": ["nobody"]])
            #expect(none.json?["users"] == nil)

            let update = try await op("accounts:update", ["localId": "gina", "customAttributes": #"{"admin":true}"#, "deleteAttribute": ["DISPLAY_NAME"]])
            #expect(update.status == 200)
            let after = try await door.runtime.auth.getUser(uid: "gina")
            #expect(after.customClaims == ["admin": true])
            #expect(after.displayName == nil)
            #expect(try await op("accounts:update", ["localId": "gina", "customAttributes": "[1]"]).json?["error"]?["message"] == "INVALID_CLAIMS")
            let reserved = try await op("accounts:update", ["localId": "gina", "customAttributes": #"{"sub":"x"}"#])
            #expect(reserved.json?["error"]?["message"]?.stringValue?.hasPrefix("INVALID_CLAIMS") == true)
            #expect(try await op("accounts:update", ["localId": "nobody", "displayName": "X"]).json?["error"]?["message"] == "USER_NOT_FOUND")

            _ = try await op("accounts:update", ["localId": "gina", "disableUser": true])
            #expect(try await door.runtime.auth.getUser(uid: "gina").disabled)
            let claims = try await op("accounts:lookup", ["localId": ["gina"]])
            #expect(claims.json?["users"]?.arrayValue?.first?["customAttributes"] == #"{"admin":true}"#)
            #expect(claims.json?["users"]?.arrayValue?.first?["disabled"] == true)

            let page = try await door.send("GET", "/identitytoolkit.googleapis.com/v1/projects/demo-todo/accounts:batchGet?maxResults=1", headers: owner)
            #expect(page.json?["users"]?.arrayValue?.count == 1)
            let next = try #require(page.json?["nextPageToken"]?.stringValue)
            let rest = try await door.send("GET", "/identitytoolkit.googleapis.com/v1/projects/demo-todo/accounts:batchGet?maxResults=10&nextPageToken=\(next)", headers: owner)
            #expect(rest.json?["users"]?.arrayValue?.count == 1)
            #expect(rest.json?["nextPageToken"] == nil)

            #expect(try await op("accounts:delete", ["localId": "gina"]).status == 200)
            #expect(try await op("accounts:delete", ["localId": "gina"]).json?["error"]?["message"] == "USER_NOT_FOUND")
            let batch = try await op("accounts:batchDelete", ["localIds": [.string(hal), "never-existed"], "force": true])
            #expect(batch.status == 200)
            #expect(batch.json == [:])
            #expect(try await door.runtime.auth.listUsers().users.isEmpty)
            #expect(try await op("accounts:nonsense", [:]).status == 404)
        }
    }
    @Test("account fields of the wrong type, too long, or with control characters are refused as Identity Toolkit refuses them, and nothing is created", arguments: [
        (#"{"localId": 5}"#, "Invalid value at 'local_id' (TYPE_STRING), 5"),
        (#"{"disabled": "yes"}"#, "Invalid value at 'disabled' (TYPE_BOOL), \"yes\""),
        (#"{"emailVerified": 1}"#, "Invalid value at 'email_verified' (TYPE_BOOL), 1"),
        (#"{"email": ["a@b.co"]}"#, "Invalid value at 'email' (TYPE_STRING), [\"a@b.co\"]"),
        (#"{"displayName": {"x": 1}}"#, "Invalid value at 'display_name' (TYPE_STRING)"),
        (#"{"email": "a\u0000b@example.com"}"#, "INVALID_EMAIL"),
        (#"{"email": "a\nb@example.com"}"#, "INVALID_EMAIL"),
        (#"{"email": "\#(String(repeating: "x", count: 250))@example.com"}"#, "INVALID_EMAIL"),
        (#"{"displayName": "\#(String(repeating: "n", count: 257))"}"#, "INVALID_DISPLAY_NAME"),
        (#"{"localId": "\#(String(repeating: "u", count: 129))"}"#, "INVALID_LOCAL_ID"),
        (#"{"photoUrl": "https://example.com/\u0000"}"#, "INVALID_PHOTO_URL"),
    ])
    func badAccountFields(body: String, message: String) async throws {
        try await withFrontDoor(configure: { $0.project = "demo-todo" }) { door in
            let owner: [(String, String)] = Self.json + [("Authorization", "Bearer owner")]
            let r = try await door.send("POST", "/identitytoolkit.googleapis.com/v1/projects/demo-todo/accounts", headers: owner, body: body)
            #expect(r.status == 400, "\(r.text)")
            #expect(r.json?["error"]?["status"] == "INVALID_ARGUMENT")
            #expect(r.json?["error"]?["message"]?.stringValue?.hasPrefix(message) == true, "\(r.text)")
            #expect(try await door.runtime.auth.listUsers().users.isEmpty, "nothing was created")
            let update = try await door.send("POST", "/identitytoolkit.googleapis.com/v1/projects/demo-todo/accounts:update", headers: owner,
                                             body: #"{"localId": "x", "disableUser": "yes"}"#)
            #expect(update.json?["error"]?["message"] == "Invalid value at 'disable_user' (TYPE_BOOL), \"yes\"")
        }
    }
}

