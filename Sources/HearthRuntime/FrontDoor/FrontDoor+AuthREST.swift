import Foundation
import HearthAuth
import HearthHTTP
import HearthModel

/// The Auth REST API in Identity Toolkit's shapes: the client endpoints an app uses (custom-token
/// sign-in, token refresh) and the account endpoints firebase-admin calls when
/// `FIREBASE_AUTH_EMULATOR_HOST` points here.
extension FrontDoor {
    /// Identity Toolkit's error body: `{"error": {"code", "message": "CODE : detail", "status"}}`;
    /// client SDKs read the code before the colon.
    static func toolkitError(_ status: Int, _ code: String, _ detail: String? = nil) -> HTTPServerResponse {
        let message = detail.map { "\(code) : \($0)" } ?? code
        let grpc: String
        switch status {
        case 400: grpc = "INVALID_ARGUMENT"
        case 401: grpc = "UNAUTHENTICATED"
        case 403: grpc = "PERMISSION_DENIED"
        case 404: grpc = "NOT_FOUND"
        default: grpc = "INTERNAL"
        }
        return .json(["error": ["code": .int(Int64(status)), "message": .string(message), "status": .string(grpc),
                                "errors": [["message": .string(message), "domain": "global", "reason": "invalid"]]]], status: status)
    }

    static func toolkitError(_ error: Error) -> HTTPServerResponse {
        if let e = error as? ToolkitBody.FieldError {
            return .json(["error": ["code": 400, "message": .string(e.message), "status": "INVALID_ARGUMENT",
                                    "errors": [["message": .string(e.message), "domain": "global", "reason": "invalid"]]]], status: 400)
        }
        if let failure = error as? AuthFailure { return toolkitError(failure.status, failure.code, failure.detail) }
        guard let e = error as? HTTPSError else { return toolkitError(500, "INTERNAL_ERROR") }
        switch e.code {
        case .permissionDenied: return toolkitError(400, e.message == "USER_DISABLED" ? "USER_DISABLED" : "PERMISSION_DENIED")
        case .invalidArgument where e.message.hasPrefix("INVALID_") || e.message == "TOKEN_EXPIRED": return toolkitError(400, e.message)
        case .invalidArgument where e.message.contains("claim"): return toolkitError(400, "INVALID_CLAIMS", e.message)
        case .invalidArgument where e.message.contains("uid"): return toolkitError(400, "INVALID_LOCAL_ID", e.message)
        default:
            let failure = AuthFailure.from(e)
            return toolkitError(failure.status, failure.code, failure.detail)
        }
    }

    /// A JSON object body (Identity Toolkit takes JSON; the token endpoint also takes a form).
    static func jsonBody(_ request: HTTPServerRequest) -> [String: Value]? {
        if HTTPText.isMediaType(request.headers["content-type"], "application/x-www-form-urlencoded") {
            var out: [String: Value] = [:]
            for (k, v) in PercentEncoding.formItems(String(decoding: request.body, as: UTF8.self)) { out[k] = .string(v) }
            return out
        }
        if request.body.isEmpty { return [:] }
        return (try? JSONParser.parse(request.body))?.mapValue
    }

    func identityToolkit(_ request: HTTPServerRequest, _ segments: [Substring]) async -> HTTPServerResponse {
        guard segments.first == "v1" else { return FrontDoor.toolkitError(404, "NOT_FOUND") }
        var rest = Array(segments.dropFirst())
        // firebase-admin scopes account calls to a project: /v1/projects/{project}/accounts…
        if rest.count >= 3 && rest[0] == "projects" {
            guard rest[1] == Substring(config.project) else { return FrontDoor.toolkitError(404, "PROJECT_NOT_FOUND", "this server serves project \(config.project)") }
            rest = Array(rest.dropFirst(2))
        } else if rest.count == 2 && rest[0] == "projects", let colon = rest[1].lastIndex(of: ":") {
            // The one project-level operation: /v1/projects/{project}:createSessionCookie.
            guard rest[1][..<colon] == Substring(config.project) else { return FrontDoor.toolkitError(404, "PROJECT_NOT_FOUND", "this server serves project \(config.project)") }
            guard rest[1][rest[1].index(after: colon)...] == "createSessionCookie" else { return FrontDoor.toolkitError(404, "NOT_FOUND") }
            return await toolkitOperation(request, "projects:createSessionCookie")
        }
        guard rest.count == 1, rest[0] != "projects:createSessionCookie" else { return FrontDoor.toolkitError(404, "NOT_FOUND") }
        return await toolkitOperation(request, String(rest[0]))
    }

    /// The legacy paths the iOS SDK calls (`/www.googleapis.com/identitytoolkit/v3/relyingparty/…`),
    /// each the v1 operation the Auth emulator rewrites it to.
    static let legacyOperations: [String: String] = [
        "signupNewUser": "accounts:signUp", "verifyPassword": "accounts:signInWithPassword", "getAccountInfo": "accounts:lookup",
        "setAccountInfo": "accounts:update", "deleteAccount": "accounts:delete", "getOobConfirmationCode": "accounts:sendOobCode",
        "resetPassword": "accounts:resetPassword", "verifyAssertion": "accounts:signInWithIdp", "verifyCustomToken": "accounts:signInWithCustomToken",
        "uploadAccount": "accounts:batchCreate", "downloadAccount": "accounts:batchGet", "emailLinkSignin": "accounts:signInWithEmailLink",
        "createAuthUri": "accounts:createAuthUri",
    ]

    func legacyToolkit(_ request: HTTPServerRequest, _ segments: [Substring]) async -> HTTPServerResponse {
        guard segments.count == 4, segments[0] == "identitytoolkit", segments[1] == "v3", segments[2] == "relyingparty",
              let operation = FrontDoor.legacyOperations[String(segments[3])] else {
            return FrontDoor.toolkitError(404, "NOT_FOUND")
        }
        return await toolkitOperation(request, operation)
    }

    func toolkitOperation(_ request: HTTPServerRequest, _ operation: String) async -> HTTPServerResponse {
        guard let body = FrontDoor.jsonBody(request) else { return FrontDoor.toolkitError(400, "INVALID_JSON") }

        // Client endpoints: no admin rights needed (as with an API key); the user is named by its
        // ID token.
        let admin = authorizedAsAdmin(request)
        if request.method == "POST", let answer = await clientAccountCall(operation, request, body, asAdmin: admin) { return answer }

        guard admin else {
            // A client's account call names its user by ID token: without one (and without any
            // credentials), Identity Toolkit's and its emulator's answer is that it is missing.
            if request.method == "POST", request.headers["authorization"] == nil,
               ["accounts:lookup", "accounts:update", "accounts:delete"].contains(operation) {
                return FrontDoor.toolkitError(400, "MISSING_ID_TOKEN")
            }
            return FrontDoor.toolkitError(401, "UNAUTHORIZED", "admin credentials required")
        }
        let auth = runtime.auth
        let fields = ToolkitBody(body)
        do {
            switch (request.method, operation) {
            case ("POST", "accounts"):
                if let password = try fields.string("password") { try auth.checkNewPassword(password) }
                let user = try await auth.createUser(NewUser(uid: try fields.string("localId"), email: try fields.string("email"),
                                                             emailVerified: try fields.bool("emailVerified"), displayName: try fields.string("displayName"),
                                                             photoURL: try fields.string("photoUrl"), phoneNumber: try fields.string("phoneNumber"),
                                                             disabled: try fields.bool("disabled")))
                if let password = try fields.string("password") {
                    do { try await auth.setPassword(uid: user.uid, password) } catch {
                        // A user made without the password it was asked for would be half-written.
                        try? await auth.deleteUser(uid: user.uid)
                        throw error
                    }
                }
                return .json(["kind": "identitytoolkit#SignupNewUserResponse", "localId": .string(user.uid)])
            case ("POST", "projects:createSessionCookie"):
                guard let idToken = try fields.string("idToken"), !idToken.isEmpty else { return FrontDoor.toolkitError(400, "MISSING_ID_TOKEN") }
                // Google's reference gives no default, only 5 minutes to 2 weeks, and the Admin SDKs
                // always send one; without one (or 0, proto3's "not set") Hearth takes the longest,
                // two weeks, its own choice.
                var seconds = try fields.int64("validDuration") ?? 0
                if seconds == 0 { seconds = AuthService.sessionCookieLifetimes.upperBound }
                return .json(["sessionCookie": .string(try await auth.createSessionCookie(idToken: idToken, validSeconds: seconds))])
            case ("POST", "accounts:lookup"):
                var users: [UserRecord] = []
                for uid in try fields.strings("localId") ?? [] { if let u = try await auth.users.user(uid: uid) { users.append(u) } }
                for email in try fields.strings("email") ?? [] { if let u = try await auth.users.user(email: email) { users.append(u) } }
                for phone in try fields.strings("phoneNumber") ?? [] { if let u = try await auth.users.user(phoneNumber: phone) { users.append(u) } }
                for id in body["federatedUserId"]?.arrayValue ?? [] {
                    if let u = try await auth.users.user(provider: id["providerId"]?.stringValue ?? "", providerUID: id["rawId"]?.stringValue ?? "") { users.append(u) }
                }
                // One answer per user, however often or in however many ways it was asked for.
                var seen = Set<UTF8Key>()  // uids compare by their bytes, as everywhere in the store
                users = users.filter { seen.insert(UTF8Key($0.uid)).inserted }
                var out: [String: Value] = ["kind": "identitytoolkit#GetAccountInfoResponse"]
                if !users.isEmpty { out["users"] = .array(users.map { FrontDoor.toolkitUser($0) }) }
                return .json(.map(out))
            case ("POST", "accounts:update"):
                guard let uid = try fields.string("localId") else { return FrontDoor.toolkitError(400, "MISSING_LOCAL_ID") }
                var update = UserUpdate(email: try fields.string("email"), emailVerified: try fields.bool("emailVerified"),
                                        displayName: try fields.string("displayName"), photoURL: try fields.string("photoUrl"),
                                        phoneNumber: try fields.string("phoneNumber"), disabled: try fields.bool("disableUser"))
                if let attributes = try fields.string("customAttributes") {
                    guard case .map(let claims)? = try? JSONParser.parse(attributes) else { return FrontDoor.toolkitError(400, "INVALID_CLAIMS") }
                    update.customClaims = claims
                }
                let deleteAttributes = try fields.strings("deleteAttribute") ?? []
                update.deleteDisplayName = deleteAttributes.contains("DISPLAY_NAME")
                update.deletePhotoURL = deleteAttributes.contains("PHOTO_URL")
                var providers = try fields.strings("deleteProvider") ?? []
                if let i = providers.firstIndex(of: "phone") {
                    providers.remove(at: i)
                    update.deletePhoneNumber = true
                }
                if !providers.isEmpty { update.providersToUnlink = providers }
                let validSince = try fields.int64("validSince")
                if let since = validSince, !(0...Timestamp.maxSeconds).contains(since) {
                    return FrontDoor.toolkitError(400, "INVALID_ARGUMENT", "validSince must be seconds between 0 and \(Timestamp.maxSeconds)")
                }
                if let password = try fields.string("password") { try auth.checkNewPassword(password) }
                _ = try await auth.updateUser(uid: uid, update)
                if let password = try fields.string("password") { try await auth.setPassword(uid: uid, password) }
                if let since = validSince {
                    _ = try await auth.users.update(uid: uid) { $0.tokensValidAfterTime = Timestamp(seconds: since) }
                }
                return .json(["kind": "identitytoolkit#SetAccountInfoResponse", "localId": .string(uid)])
            case ("POST", "accounts:delete"):
                guard let uid = try fields.string("localId") else { return FrontDoor.toolkitError(400, "MISSING_LOCAL_ID") }
                try await auth.deleteUser(uid: uid)
                return .json(["kind": "identitytoolkit#DeleteAccountResponse"])
            case ("POST", "accounts:batchDelete"):
                var errors: [Value] = []
                for (i, uid) in (try fields.strings("localIds") ?? []).enumerated() {
                    do { try await auth.deleteUser(uid: uid) } catch let e as HTTPSError where e.code == .notFound {
                        continue  // deleting a missing user is not an error, as in Firebase
                    } catch {
                        errors.append(["index": .int(Int64(i)), "localId": .string(uid), "message": .string("\(error)")])
                    }
                }
                return .json(errors.isEmpty ? [:] : ["errors": .array(errors)])
            case ("POST", "accounts:batchCreate"):
                let (users, hash) = try FrontDoor.importRequest(fields)
                let errors = try await auth.importUsers(users, hash: hash)
                return .json(["kind": "identitytoolkit#UploadAccountResponse",
                              "error": .array(errors.map { ["index": .int(Int64($0.index)), "message": .string($0.message)] })])
            case ("GET", "accounts:batchGet"), ("POST", "accounts:batchGet"), ("POST", "accounts:query"):
                let query = Dictionary(request.queryItems, uniquingKeysWith: { _, b in b })
                let bodyMax = try fields.int64("maxResults").map { Int(clamping: $0) }
                let max = Int(query["maxResults"] ?? "") ?? bodyMax ?? 1000
                let page = try await auth.listUsers(maxResults: Swift.max(1, Swift.min(max, 1000)), pageToken: query["nextPageToken"])
                var out: [String: Value] = ["kind": "identitytoolkit#DownloadAccountResponse", "users": .array(page.users.map { FrontDoor.toolkitUser($0, withHash: true) })]
                if let next = page.nextPageToken { out["nextPageToken"] = .string(next) }
                return .json(.map(out))
            default:
                return FrontDoor.toolkitError(404, "UNSUPPORTED_OPERATION", "\(request.method) \(operation)")
            }
        } catch {
            return FrontDoor.toolkitError(error)
        }
    }

    /// `POST /securetoken.googleapis.com/v1/token` with `grant_type=refresh_token`.
    func secureToken(_ request: HTTPServerRequest, _ segments: [Substring]) async -> HTTPServerResponse {
        guard request.method == "POST", segments == ["v1", "token"] else { return FrontDoor.toolkitError(404, "NOT_FOUND") }
        guard let body = FrontDoor.jsonBody(request) else { return FrontDoor.toolkitError(400, "INVALID_JSON") }
        let grant = body["grant_type"]?.stringValue ?? body["grantType"]?.stringValue
        guard let grant, !grant.isEmpty else { return FrontDoor.toolkitError(400, "MISSING_GRANT_TYPE") }
        guard grant == "refresh_token" else { return FrontDoor.toolkitError(400, "INVALID_GRANT_TYPE") }
        guard let token = body["refresh_token"]?.stringValue ?? body["refreshToken"]?.stringValue else {
            return FrontDoor.toolkitError(400, "MISSING_REFRESH_TOKEN")
        }
        do {
            let result = try await runtime.auth.refresh(token)
            return .json(["access_token": .string(result.idToken), "expires_in": .string(String(result.expiresIn)), "token_type": "Bearer",
                          "refresh_token": .string(result.refreshToken), "id_token": .string(result.idToken),
                          "user_id": .string(result.uid), "project_id": .string(config.project)])
        } catch { return FrontDoor.toolkitError(error) }
    }

    /// Admin calls carry the admin token, or, in emulator mode, `Bearer owner` as firebase-admin sends.
    func authorizedAsAdmin(_ request: HTTPServerRequest) -> Bool {
        guard let header = request.headers["authorization"], let bearer = BearerCredential.token(in: header) else { return false }
        let token = String(bearer)
        // The emulator's well-known owner credential, but not from a web page served elsewhere:
        // any site the developer visits could send it (firebase-admin sends no Origin).
        if config.emulatorMode && token == "owner" { return isLocalRequest(request) }
        guard let admin = adminToken else { return false }
        return Crypto.constantTimeEqual(Array(token.utf8), Array(admin.utf8))
    }

    var adminToken: String? { secrets.value(config.server.adminTokenEnv) }

    /// Whether a request may use emulator mode's public credentials: from no web page or one on
    /// this machine, addressed to this server by IP address, `localhost` or `[server]
    /// allowed_hosts` (not through a name rebound to it).
    func isLocalRequest(_ request: HTTPServerRequest) -> Bool {
        CORS.isLocalPage(request.headers["origin"]) && CORS.isDirectHost(request.headers["host"], allowed: config.server.allowedHosts)
    }

    /// A user in Identity Toolkit's account shape (what firebase-admin's UserRecord reads).
    /// A phone number is a provider of its own in Firebase's answers (`providerId` "phone", after
    /// the others), whether or not it was linked as one.
    static func phoneProvider(_ u: UserRecord) -> [Value] {
        guard let phone = u.phoneNumber, !u.providerData.contains(where: { $0.providerId == "phone" }) else { return [] }
        return [["providerId": "phone", "rawId": .string(phone), "phoneNumber": .string(phone)]]
    }

    /// A user as Identity Toolkit answers it. `withHash` (listing users with admin credentials:
    /// firebase-admin's listUsers, the one call whose answer has them) gives the password's hash
    /// and salt in base64; everywhere else the hash is Firebase's "REDACTED".
    static func toolkitUser(_ u: UserRecord, withHash: Bool = false) -> Value {
        var m: [String: Value] = [
            "localId": .string(u.uid), "emailVerified": .bool(u.emailVerified), "disabled": .bool(u.disabled),
            "createdAt": .string(String(u.metadata.creationTime.seconds * 1000)),
            "providerUserInfo": .array(u.providerData.map { p in
                var info: [String: Value] = ["providerId": .string(p.providerId), "rawId": .string(p.uid), "federatedId": .string(p.uid)]
                if let v = p.email { info["email"] = .string(v) }
                if let v = p.displayName { info["displayName"] = .string(v) }
                if let v = p.photoURL { info["photoUrl"] = .string(v) }
                if let v = p.phoneNumber { info["phoneNumber"] = .string(v) }
                return .map(info)
            } + FrontDoor.phoneProvider(u)),
        ]
        if let v = u.email { m["email"] = .string(v) }
        if let v = u.displayName { m["displayName"] = .string(v) }
        if let v = u.photoURL { m["photoUrl"] = .string(v) }
        if let v = u.phoneNumber { m["phoneNumber"] = .string(v) }
        if let v = u.metadata.lastSignInTime { m["lastLoginAt"] = .string(String(v.seconds * 1000)) }
        if let v = u.metadata.lastRefreshTime { m["lastRefreshAt"] = .string(v.rfc3339) }
        if let v = u.tokensValidAfterTime { m["validSince"] = .string(String(v.seconds)) }
        if let claims = u.customClaims { m["customAttributes"] = .string(JSONWriter.string(.map(claims), options: .sorted)) }
        if let hash = u.passwordHash {
            if withHash {
                m["passwordHash"] = .string(hash.hash)
                m["salt"] = .string(hash.salt)
            } else {
                m["passwordHash"] = .string(FrontDoor.redactedHash)
            }
            if let t = u.passwordUpdatedAt { m["passwordUpdatedAt"] = .double(Double(t.seconds) * 1000) }
        }
        return .map(m)
    }
}

/// An Identity Toolkit request body read with the types its API declares. A field of another type
/// is refused as Google's APIs refuse it (`Invalid value at 'local_id' (TYPE_STRING), 5`), never
/// silently taken as absent: `{"disabled": "yes"}` must not create an enabled user.
struct ToolkitBody {
    struct FieldError: Error, Sendable {
        let message: String
    }

    let fields: [String: Value]

    init(_ fields: [String: Value]) { self.fields = fields }

    func string(_ name: String) throws(FieldError) -> String? {
        guard let v = fields[name], !v.isNull else { return nil }
        guard let s = v.stringValue else { throw refusal(name, "TYPE_STRING", v) }
        return s
    }

    func bool(_ name: String) throws(FieldError) -> Bool? {
        guard let v = fields[name], !v.isNull else { return nil }
        guard case .bool(let b) = v else { throw refusal(name, "TYPE_BOOL", v) }
        return b
    }

    /// An int64 field, which Google's JSON mapping also accepts as a decimal string.
    func int64(_ name: String) throws(FieldError) -> Int64? {
        guard let v = fields[name], !v.isNull else { return nil }
        if let i = v.intValue { return i }
        if let s = v.stringValue, let i = Int64(s) { return i }
        throw refusal(name, "TYPE_INT64", v)
    }

    /// A repeated string field (a single string is taken as a list of one, as the API does).
    func strings(_ name: String) throws(FieldError) -> [String]? {
        guard let v = fields[name], !v.isNull else { return nil }
        if let s = v.stringValue { return [s] }
        guard case .array(let items) = v else { throw refusal(name, "TYPE_STRING", v) }
        var out: [String] = []
        for item in items {
            guard let s = item.stringValue else { throw refusal(name, "TYPE_STRING", item) }
            out.append(s)
        }
        return out
    }

    private func refusal(_ name: String, _ type: String, _ value: Value) -> FieldError {
        FieldError(message: "Invalid value at '\(ToolkitBody.snakeCase(name))' (\(type)), \(Printable.quoted(JSONWriter.string(value), limit: 100))")
    }

    /// Google's error messages name fields as the protos do: `localId` is `local_id`.
    static func snakeCase(_ name: String) -> String {
        var out = ""
        for ch in name {
            if ch.isUppercase { out += "_" + ch.lowercased() } else { out.append(ch) }
        }
        return out
    }
}
