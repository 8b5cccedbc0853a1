import HearthAuth
import HearthHTTP
import HearthModel

/// Identity Toolkit's client endpoints: what an app's Firebase SDK sends for its own user (no admin
/// credentials; the user is named by its ID token), as the Firebase Auth emulator serves them.
/// Request and response shapes follow firebase-ios-sdk's `FirebaseAuth/Sources/Swift/Backend/RPC`.
extension FrontDoor {
    /// Answers a client call, or nil when `operation` with this body is an admin call.
    func clientAccountCall(_ operation: String, _ request: HTTPServerRequest, _ body: [String: Value], asAdmin: Bool) async -> HTTPServerResponse? {
        let auth = runtime.auth
        let fields = ToolkitBody(body)
        do {
            switch operation {
            case "accounts:signInWithCustomToken":
                guard let token = try fields.string("token") else { return FrontDoor.toolkitError(400, "MISSING_CUSTOM_TOKEN") }
                let result = try await auth.signInWithCustomToken(token)
                return .json(.map(FrontDoor.sessionFields(result, kind: "identitytoolkit#VerifyCustomTokenResponse")))

            case "accounts:signUp":
                // firebase-admin creates users with `accounts`; a signUp with admin credentials
                // and no password is still a client sign-up (anonymous), as on Firebase.
                let result = try await auth.signUp(email: try fields.string("email"), password: try fields.string("password"),
                                                   displayName: try fields.string("displayName"), idToken: try fields.string("idToken"))
                var out = FrontDoor.sessionFields(result, kind: "identitytoolkit#SignupNewUserResponse")
                if let u = result.user { FrontDoor.profileFields(u, into: &out) }
                return .json(.map(out))

            case "accounts:signInWithPassword":
                let result = try await auth.signInWithPassword(email: try fields.string("email"), password: try fields.string("password"))
                var out = FrontDoor.sessionFields(result, kind: "identitytoolkit#VerifyPasswordResponse")
                out["registered"] = true
                if let u = result.user {
                    FrontDoor.profileFields(u, into: &out)
                    if let photo = u.photoURL { out["profilePicture"] = .string(photo) }
                }
                return .json(.map(out))

            case "accounts:signInWithEmailLink":
                let result = try await auth.signInWithEmailLink(email: try fields.string("email"), oobCode: try fields.string("oobCode"),
                                                                idToken: try fields.string("idToken"))
                var out = FrontDoor.sessionFields(result, kind: "identitytoolkit#EmailLinkSigninResponse")
                if let u = result.user { FrontDoor.profileFields(u, into: &out) }
                return .json(.map(out))

            case "accounts:signInWithIdp":
                guard let requestURI = try fields.string("requestUri"), !requestURI.isEmpty else { return FrontDoor.toolkitError(400, "MISSING_REQUEST_URI") }
                guard let postBody = try fields.string("postBody") else { return FrontDoor.toolkitError(400, "INVALID_IDP_RESPONSE", "postBody is required") }
                let returnCredential = try fields.bool("returnIdpCredential") ?? false
                do {
                    let result = try await auth.signInWithIdp(postBody: postBody, idToken: try fields.string("idToken"),
                                                              autoCreate: try fields.bool("autoCreate") ?? true)
                    return .json(.map(FrontDoor.providerFields(result, postBody: postBody)))
                } catch let failure as AuthFailure where returnCredential && FrontDoor.credentialConflicts.contains(failure.code) {
                    // With returnIdpCredential (the iOS SDK always asks) these come back as a 200
                    // carrying the credential and `errorMessage`, so the app can sign in with the
                    // account that has it (the SDKs' credential-already-in-use).
                    var out: [String: Value] = ["kind": "identitytoolkit#VerifyAssertionResponse", "errorMessage": .string(failure.message)]
                    for (k, v) in PercentEncoding.formItems(postBody) {
                        if k == "id_token" { out["oauthIdToken"] = .string(v) }
                        if k == "access_token" { out["oauthAccessToken"] = .string(v) }
                        if k == "providerId" { out["providerId"] = .string(v) }
                    }
                    return .json(.map(out))
                }

            case "accounts:sendOobCode":
                if try fields.bool("returnOobLink") == true && !asAdmin { return FrontDoor.toolkitError(400, "INSUFFICIENT_PERMISSION") }
                let (email, code) = try await auth.sendOobCode(kind: try fields.string("requestType"), email: try fields.string("email"),
                                                               idToken: asAdmin ? nil : try fields.string("idToken"),
                                                               newEmail: try fields.string("newEmail"), asAdmin: asAdmin)
                var out: [String: Value] = ["kind": "identitytoolkit#GetOobConfirmationCodeResponse", "email": .string(email)]
                if asAdmin, try fields.bool("returnOobLink") == true, let code {
                    out["oobLink"] = .string(oobLink(code, request, continueURL: try fields.string("continueUrl")))
                    out["oobCode"] = .string(code.code)
                }
                return .json(.map(out))

            case "accounts:resetPassword":
                let code = try await auth.resetPassword(oobCode: try fields.string("oobCode"), newPassword: try fields.string("newPassword"))
                var out: [String: Value] = ["kind": "identitytoolkit#ResetPasswordResponse", "email": .string(code.email),
                                            "requestType": .string(code.kind.rawValue)]
                if let newEmail = code.newEmail {
                    // A change of address: `email` is the address the account has now (the SDKs'
                    // ActionCodeInfo previousEmail), `newEmail` the one it moves to.
                    out["newEmail"] = .string(newEmail)
                    if let current = try await auth.users.user(uid: code.uid)?.email { out["email"] = .string(current) }
                }
                return .json(.map(out))

            case "accounts:createAuthUri":
                // The sign-in methods of an address; the session id is the caller's, or a new one
                // (Hearth keeps no state for it: the IdP redirect flows it serves do not use it).
                let found = try await auth.signInMethods(identifier: try fields.string("identifier"), continueURI: try fields.string("continueUri"))
                let sessionID = try fields.string("sessionId").flatMap { $0.isEmpty ? nil : $0 } ?? runtime.random.autoID(length: 27)
                var out: [String: Value] = ["kind": "identitytoolkit#CreateAuthUriResponse", "sessionId": .string(sessionID)]
                // With enumeration protection the methods are an empty list, as Firebase documents;
                // the iOS SDK takes a missing list for an error it does not have.
                out["signinMethods"] = .array((found?.methods ?? []).map { .string($0) })
                if let found {
                    out["registered"] = .bool(found.registered)
                    if found.registered { out["allProviders"] = .array(found.providers.map { .string($0) }) }
                }
                return .json(.map(out))

            case "accounts:lookup" where body["idToken"] != nil:
                let user = try await auth.lookup(idToken: try fields.string("idToken"))
                return .json(["kind": "identitytoolkit#GetAccountInfoResponse", "users": [FrontDoor.toolkitUser(user)]])

            case "accounts:update" where body["oobCode"] != nil && body["idToken"] == nil:
                let user = try await auth.applyOobCode(try fields.string("oobCode"))
                var out: [String: Value] = ["kind": "identitytoolkit#SetAccountInfoResponse"]
                FrontDoor.accountFields(user, into: &out)
                return .json(.map(out))

            case "accounts:update" where body["idToken"] != nil:
                // What only the Admin SDK may change, as Identity Toolkit refuses it from a client.
                if !asAdmin, let field = FrontDoor.adminOnlyAccountFields.first(where: { body[$0] != nil }) {
                    return FrontDoor.toolkitError(400, "INSUFFICIENT_PERMISSION", "\(field) can only be set with admin credentials")
                }
                let changes = AccountChanges(displayName: try fields.string("displayName"), photoURL: try fields.string("photoUrl"),
                                             email: try fields.string("email"), password: try fields.string("password"),
                                             deleteAttributes: try fields.strings("deleteAttribute") ?? [],
                                             deleteProviders: try fields.strings("deleteProvider") ?? [])
                let (user, session) = try await auth.updateAccount(idToken: try fields.string("idToken"), changes,
                                                                   returnSecureToken: try fields.bool("returnSecureToken") ?? false)
                var out: [String: Value] = ["kind": "identitytoolkit#SetAccountInfoResponse"]
                FrontDoor.accountFields(user, into: &out)
                if let session {
                    out["idToken"] = .string(session.idToken)
                    out["refreshToken"] = .string(session.refreshToken)
                    out["expiresIn"] = .string(String(session.expiresIn))
                }
                return .json(.map(out))

            case "accounts:delete" where body["idToken"] != nil && !(asAdmin && body["localId"] != nil):
                try await auth.deleteAccount(idToken: try fields.string("idToken"))
                return .json(["kind": "identitytoolkit#DeleteAccountResponse"])

            default:
                return nil
            }
        } catch {
            return FrontDoor.toolkitError(error)
        }
    }

    /// The Auth emulator's own endpoints, served in emulator mode or to admin credentials:
    /// `GET /emulator/v1/projects/{project}/oobCodes`, the codes Firebase would have emailed, and
    /// `DELETE /emulator/v1/projects/{project}/accounts`, every user deleted (the JS SDK's test
    /// helpers reset so between tests; each deletion runs `onUserDeleted`, as any deletion does),
    /// and the Firestore emulator's `DELETE /emulator/v1/projects/{project}/databases/(default)/documents`,
    /// every document deleted (test set-ups clear so; each deletion is a change in the feed, so
    /// `onDocumentDeleted` triggers run).
    func emulatorEndpoint(_ request: HTTPServerRequest, _ segments: [Substring]) async -> HTTPServerResponse {
        if segments == ["action"] { return await emulatorAction(request) }
        guard (config.emulatorMode && isLocalRequest(request)) || authorizedAsAdmin(request) else {
            return FrontDoor.toolkitError(401, "UNAUTHORIZED", "the emulator endpoints need emulator mode (from no web page, or one on this machine) or admin credentials")
        }
        // `v1/projects/{p}/oobCodes|accounts`, `v1/projects/{p}/databases/(default)/documents`,
        // `v1/projects/{p}:securityRules`.
        enum Route { case oobCodes, accounts, documents, securityRules }
        let route: Route
        let project: Substring
        switch (segments.count, segments.count >= 3 && segments[0] == "v1" && segments[1] == "projects") {
        case (3, true) where segments[2].hasSuffix(":securityRules"): (route, project) = (.securityRules, segments[2].dropLast(":securityRules".count))
        case (4, true) where segments[3] == "oobCodes": (route, project) = (.oobCodes, segments[2])
        case (4, true) where segments[3] == "accounts": (route, project) = (.accounts, segments[2])
        case (6, true) where segments[3] == "databases" && segments[4] == "(default)" && segments[5] == "documents": (route, project) = (.documents, segments[2])
        default: return FrontDoor.toolkitError(404, "NOT_FOUND")
        }
        // The Firestore emulator's own endpoints wipe or replace what production never lets an
        // API do: emulator mode only, admin credentials or not.
        if route == .documents || route == .securityRules, !config.emulatorMode {
            return FrontDoor.toolkitError(404, "NOT_FOUND", "the Firestore emulator's endpoints are served in emulator mode only")
        }
        guard project == Substring(config.project) else { return FrontDoor.toolkitError(404, "PROJECT_NOT_FOUND", "this server serves project \(config.project)") }
        switch route {
        case .securityRules:
            return putSecurityRules(request)
        case .documents:
            guard request.method == "DELETE" else { return FrontDoor.toolkitError(405, "METHOD_NOT_ALLOWED") }
            do {
                for collection in try await runtime.documents.listCollections(under: nil) {
                    try await runtime.documents.recursiveDelete(collection.segments)
                }
                return .json([:])
            } catch { return FrontDoor.toolkitError(error) }
        case .accounts:
            guard request.method == "DELETE" else { return FrontDoor.toolkitError(405, "METHOD_NOT_ALLOWED") }
            do {
                // A page at a time from the start: each page's users are gone when the next is read.
                while true {
                    let page = try await runtime.auth.listUsers(maxResults: 1000, pageToken: nil)
                    if page.users.isEmpty { break }
                    for user in page.users {
                        do { try await runtime.auth.deleteUser(uid: user.uid) } catch let e as HTTPSError where e.code == .notFound {}  // deleted meanwhile
                    }
                }
                return .json([:])
            } catch { return FrontDoor.toolkitError(error) }
        case .oobCodes:
            break
        }
        guard request.method == "GET" else { return FrontDoor.toolkitError(405, "METHOD_NOT_ALLOWED") }
        do {
            let codes = try await runtime.auth.pendingOobCodes()
            return .json(["oobCodes": .array(codes.map { code in
                ["email": .string(code.email), "oobCode": .string(code.code), "requestType": .string(code.kind.rawValue),
                 "oobLink": .string(oobLink(code, request, continueURL: nil))]
            })])
        } catch { return FrontDoor.toolkitError(error) }
    }

    /// `GET /emulator/action?mode=…&oobCode=…`: what opening an emailed link does (the Auth
    /// emulator's page): verifies the address, or with `newPassword` resets the password. The
    /// code is the credential, as it is in Firebase's emails. With a `continueUrl`, a 303 there.
    func emulatorAction(_ request: HTTPServerRequest) async -> HTTPServerResponse {
        let query = Dictionary(request.queryItems, uniquingKeysWith: { first, _ in first })
        func answer(_ key: String, _ text: String, status: Int) -> HTTPServerResponse {
            .json(["authEmulator": .map([key: .string(text)])], status: status)
        }
        do {
            let email: String
            let message: String
            switch query["mode"] {
            case "verifyEmail"?, "verifyAndChangeEmail"?:
                email = try await runtime.auth.applyOobCode(query["oobCode"]).email ?? ""
                message = "The email has been successfully verified."
            case "resetPassword"?:
                guard let newPassword = query["newPassword"] else {
                    return answer("error", "resetPassword needs &newPassword=… (the emulator's form sends it)", status: 400)
                }
                email = try await runtime.auth.resetPassword(oobCode: query["oobCode"], newPassword: newPassword).email
                message = "The password has been successfully updated."
            case "signIn"?:
                // The link is for the app, which signs in with it (signInWithEmailLink): opening it
                // uses nothing up. With a continueUrl, on to it with the link's parameters, as the
                // app's page expects to find them.
                if let next = query["continueUrl"], next.hasPrefix("https://") || next.hasPrefix("http://") {
                    var link = next + (next.contains("?") ? "&" : "?") + "mode=signIn&lang=en"
                    if let code = query["oobCode"] { link += "&oobCode=\(PercentEncoding.encodeQueryValue(code))" }
                    link += "&apiKey=\(PercentEncoding.encodeQueryValue(query["apiKey"] ?? "fake-api-key"))"
                    var headers = HTTPHeaders()
                    headers.set("Location", link)
                    return HTTPServerResponse(status: 303, headers: headers)
                }
                return answer("success", "Open this link in the app: it signs in with signInWithEmailLink.", status: 200)
            default:
                return answer("error", "mode must be verifyEmail, verifyAndChangeEmail, resetPassword or signIn", status: 400)
            }
            if let next = query["continueUrl"], next.hasPrefix("https://") || next.hasPrefix("http://") {
                var headers = HTTPHeaders()
                headers.set("Location", next)
                return HTTPServerResponse(status: 303, headers: headers)
            }
            return .json(["authEmulator": ["success": .string(message), "email": .string(email)]])
        } catch let failure as AuthFailure {
            return answer("error", failure.message, status: 400)
        } catch {
            return answer("error", "\(error)", status: 500)
        }
    }

    /// The action link Firebase would email, pointing at this server as the emulator's do.
    func oobLink(_ code: OobCode, _ request: HTTPServerRequest, continueURL: String?) -> String {
        let mode: String
        switch code.kind {
        case .verifyEmail: mode = "verifyEmail"
        case .passwordReset: mode = "resetPassword"
        case .verifyAndChangeEmail: mode = "verifyAndChangeEmail"
        case .emailSignIn: mode = "signIn"
        }
        let host = request.headers["host"].flatMap { $0.isEmpty ? nil : $0 } ?? "\(config.server.host):\(config.server.port)"
        var link = "http://\(host)/emulator/action?mode=\(mode)&lang=en&oobCode=\(PercentEncoding.encodeQueryValue(code.code))&apiKey=fake-api-key"
        if let continueURL { link += "&continueUrl=\(PercentEncoding.encodeQueryValue(continueURL))" }
        return link
    }

    // MARK: response fields

    /// What every sign-in answers: the tokens, the uid, and whether the user is new.
    static func sessionFields(_ result: SignInResult, kind: String) -> [String: Value] {
        ["kind": .string(kind), "idToken": .string(result.idToken), "refreshToken": .string(result.refreshToken),
         "expiresIn": .string(String(result.expiresIn)), "localId": .string(result.uid), "isNewUser": .bool(result.isNewUser)]
    }

    static func profileFields(_ u: UserRecord, into out: inout [String: Value]) {
        if let v = u.email { out["email"] = .string(v) }
        if let v = u.displayName { out["displayName"] = .string(v) }
    }

    /// SetAccountInfoResponse's account fields.
    static func accountFields(_ u: UserRecord, into out: inout [String: Value]) {
        out["localId"] = .string(u.uid)
        out["emailVerified"] = .bool(u.emailVerified)
        profileFields(u, into: &out)
        if let v = u.photoURL { out["photoUrl"] = .string(v) }
        if u.passwordHash != nil { out["passwordHash"] = .string(FrontDoor.redactedHash) }
        if case .map(let user) = toolkitUser(u), let providers = user["providerUserInfo"] { out["providerUserInfo"] = providers }
    }

    /// VerifyAssertionResponse.
    static func providerFields(_ r: ProviderSignIn, postBody: String) -> [String: Value] {
        var out: [String: Value] = ["kind": "identitytoolkit#VerifyAssertionResponse", "providerId": .string(r.providerId),
                                    "federatedId": .string(r.federatedID), "emailVerified": .bool(r.emailVerified),
                                    "rawUserInfo": .string(JSONWriter.string(.map(r.rawUserInfo), options: .sorted))]
        if let v = r.email { out["email"] = .string(v) }
        if let v = r.displayName { out["displayName"] = .string(v); out["fullName"] = .string(v) }
        if let v = r.photoURL { out["photoUrl"] = .string(v) }
        // The provider's tokens, as Firebase answers them whether or not the credential was asked
        // for: the JS SDK's credentialFromResult builds the app's OAuthCredential from them.
        for (k, v) in PercentEncoding.formItems(postBody) {
            if k == "id_token" { out["oauthIdToken"] = .string(v) }
            if k == "access_token" { out["oauthAccessToken"] = .string(v) }
        }
        if r.needConfirmation {
            out["needConfirmation"] = true
            return out
        }
        if let s = r.session {
            for (k, v) in sessionFields(s, kind: "identitytoolkit#VerifyAssertionResponse") { out[k] = v }
            out["isNewUser"] = .bool(r.isNewUser)
        }
        return out
    }

    static let adminOnlyAccountFields = ["customAttributes", "disableUser", "phoneNumber", "validSince", "createdAt", "lastLoginAt"]

    /// Sign-in refusals about which account a provider credential belongs to.
    static let credentialConflicts: Set<String> = ["FEDERATED_USER_ID_ALREADY_LINKED", "EMAIL_EXISTS"]

    /// What Firebase shows a client instead of a password hash: base64 of "REDACTED".
    static let redactedHash = "UkVEQUNURUQ="
}
