import Foundation
import HearthFunctions

/// The sign-in exchanges (SCENARIOS §1) shared by the callables (AuthExchange) and the HTTP API
/// (AppAPI's `/api/auth/apple|github`).
public enum ProviderExchange {
    public static let appleSecrets = ["APPLE_TEAM_ID", "APPLE_KEY_ID", "APPLE_CLIENT_ID", "APPLE_PRIVATE_KEY"]
    public static let githubSecrets = ["GITHUB_CLIENT_ID", "GITHUB_CLIENT_SECRET"]

    /// An Apple authorization code → a custom token for the matching (or new) user.
    public static func apple<I: HandlerInput>(code: String?, _ req: I) async throws -> String {
        guard let code, !code.isEmpty else { throw HTTPSError(.invalidArgument, "authorizationCode is required") }
        let apple = try AppleClient(req)
        let tokens = try await apple.exchange(code)
        guard let idToken = tokens["id_token"]?.stringValue, let claims = AppleClient.claims(of: idToken),
              let sub = claims["sub"]?.stringValue, !sub.isEmpty else {
            throw HTTPSError(.unauthenticated, "Apple's answer has no usable id_token")
        }
        let uid = try await findOrCreate(req.context.auth, provider: "apple.com", providerUID: sub, email: claims["email"]?.stringValue, name: nil)
        if let refresh = tokens["refresh_token"]?.stringValue {
            try await storeSecret(req.documents, uid: uid, ["appleRefreshToken": .string(refresh)])
        }
        return try await req.context.auth.createCustomToken(uid: uid)
    }

    /// A GitHub OAuth code → a custom token for the matching (or new) user.
    public static func github<I: HandlerInput>(code: String?, _ req: I) async throws -> String {
        guard let code, !code.isEmpty else { throw HTTPSError(.invalidArgument, "code is required") }
        let github = try GitHubClient(req)
        let token = try await github.exchange(code)
        let user = try await github.user(token)
        let uid = try await findOrCreate(req.context.auth, provider: "github.com", providerUID: user.id, email: user.email, name: user.name)
        try await storeSecret(req.documents, uid: uid, ["githubAccessToken": .string(token)])
        return try await req.context.auth.createCustomToken(uid: uid)
    }

    /// The user linked to this provider account, or a new one linked to it (with the address when
    /// no other account has it).
    public static func findOrCreate(_ auth: Auth, provider: String, providerUID: String, email: String?, name: String?) async throws -> String {
        if let user = try await auth.findUser(provider: provider, providerUID: providerUID) { return user.uid }
        var address = email
        if let email, try await auth.findUser(email: email) != nil { address = nil }
        let link = UserRecord.ProviderInfo(providerId: provider, uid: providerUID, email: email, displayName: name)
        do {
            return try await auth.createUser(NewUser(email: address, emailVerified: address != nil, displayName: name, providerToLink: link)).uid
        } catch let error as HTTPSError where error.code == .alreadyExists {
            // A concurrent exchange for the same account created it first.
            return try await auth.getUser(provider: provider, providerUID: providerUID).uid
        }
    }

    public static func storeSecret(_ docs: Documents, uid: String, _ fields: [String: Value]) async throws {
        _ = try await docs.document(try MemberPaths(uid: uid).secrets).set(fields, merge: true)
    }

    /// A secret the function declared, or `failed-precondition` naming it (never its value).
    public static func secret(_ secrets: SecretValues, _ name: String) throws -> String {
        guard let value = secrets[name], !value.isEmpty else {
            throw HTTPSError(.failedPrecondition, "the runtime has no \(name) secret (set it in the environment or the secrets file)")
        }
        return value
    }

    /// Maps a transport failure to what the client can act on.
    public static func reach<T>(_ provider: String, _ body: () async throws -> T) async throws -> T {
        do { return try await body() } catch let error as HTTPSError where [.unavailable, .deadlineExceeded].contains(error.code) {
            throw HTTPSError(.unavailable, "\(provider) is unreachable")
        }
    }
}

/// Sign in with Apple's REST API: the client secret is an ES256 JWT signed with the team's key.
public struct AppleClient {
    let http: OutboundHTTP
    let auth: Auth
    let clock: HostClock
    let base: String
    let teamID: String
    let keyID: String
    let clientID: String
    let privateKey: String

    public init<I: HandlerInput>(_ req: I) throws {
        http = req.http
        auth = req.context.auth
        clock = req.clock
        base = req.params.string("APPLE_BASE_URL", default: "https://appleid.apple.com")
        teamID = try ProviderExchange.secret(req.secrets, "APPLE_TEAM_ID")
        keyID = try ProviderExchange.secret(req.secrets, "APPLE_KEY_ID")
        clientID = try ProviderExchange.secret(req.secrets, "APPLE_CLIENT_ID")
        privateKey = try ProviderExchange.secret(req.secrets, "APPLE_PRIVATE_KEY")
    }

    /// iss = team, sub = client, aud = Apple, five minutes long.
    func clientSecret(now: Timestamp) async throws -> String {
        do {
            return try await sign(now: now)
        } catch let error as HTTPSError where error.code == .invalidArgument {
            throw HTTPSError(.failedPrecondition, "APPLE_PRIVATE_KEY is not a usable ES256 key (the .p8 file's PEM)")
        }
    }

    func sign(now: Timestamp) async throws -> String {
        try await auth.signJWT(claims: ["iss": .string(teamID), "sub": .string(clientID), "aud": "https://appleid.apple.com",
                                        "iat": .int(now.seconds), "exp": .int(now.seconds + 300)],
                               privateKeyPEM: privateKey, keyID: keyID)
    }

    func exchange(_ code: String) async throws -> [String: Value] {
        let secret = try await clientSecret(now: clock.now())
        let r = try await ProviderExchange.reach("Apple") {
            try await http.post("\(base)/auth/token", form: [("client_id", clientID), ("client_secret", secret), ("code", code),
                                                           ("grant_type", "authorization_code")])
        }
        if r.status >= 500 { throw HTTPSError(.unavailable, "Apple answered \(r.status)") }
        if r.json?["error"]?.stringValue == "invalid_client" {
            // The team, key or client id is wrong: the runtime's configuration, not the user's code.
            throw HTTPSError(.failedPrecondition, "Apple refused the client (check APPLE_TEAM_ID, APPLE_KEY_ID, APPLE_CLIENT_ID)")
        }
        guard r.status == 200, case .map(let tokens)? = r.json else {
            throw HTTPSError(.unauthenticated, "Apple refused the authorization code (\(r.json?["error"]?.stringValue ?? "HTTP \(r.status)"))")
        }
        return tokens
    }

    public func revoke(_ refreshToken: String) async throws {
        let secret = try await clientSecret(now: clock.now())
        let r = try await ProviderExchange.reach("Apple") {
            try await http.post("\(base)/auth/revoke", form: [("client_id", clientID), ("client_secret", secret), ("token", refreshToken),
                                                            ("token_type_hint", "refresh_token")])
        }
        if r.status >= 500 { throw HTTPSError(.unavailable, "Apple answered \(r.status)") }
        guard r.status == 200 else { throw HTTPSError(.unauthenticated, "Apple refused the revocation (HTTP \(r.status))") }
    }

    /// The claims of the id_token Apple's token endpoint returned (over TLS, to this client's
    /// authenticated request, so OpenID Connect §3.1.3.7 lets its signature go unchecked).
    static func claims(of idToken: String) -> [String: Value]? {
        let parts = idToken.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let payload = Base64.decodeURL(parts[1]), case .map(let claims)? = try? JSONParser.parse(payload) else { return nil }
        return claims
    }
}

/// GitHub's OAuth app flow and REST API.
public struct GitHubClient {
    let http: OutboundHTTP
    let base: String
    let api: String
    let clientID: String
    let clientSecret: String

    struct Profile {
        let id: String
        let email: String?
        let name: String?
    }

    public init<I: HandlerInput>(_ req: I) throws {
        http = req.http
        base = req.params.string("GITHUB_BASE_URL", default: "https://github.com")
        api = req.params.string("GITHUB_API_URL", default: "https://api.github.com")
        clientID = try ProviderExchange.secret(req.secrets, "GITHUB_CLIENT_ID")
        clientSecret = try ProviderExchange.secret(req.secrets, "GITHUB_CLIENT_SECRET")
    }

    var apiHeaders: [(String, String)] { [("Accept", "application/vnd.github+json"), ("User-Agent", "hearth-authexchange")] }

    func exchange(_ code: String) async throws -> String {
        let r = try await ProviderExchange.reach("GitHub") {
            try await http.post("\(base)/login/oauth/access_token", form: [("client_id", clientID), ("client_secret", clientSecret), ("code", code)],
                                headers: [("Accept", "application/json")])
        }
        if r.status >= 500 { throw HTTPSError(.unavailable, "GitHub answered \(r.status)") }
        // GitHub answers a bad code with 200 and {"error": "bad_verification_code"}.
        guard r.status == 200, let token = r.json?["access_token"]?.stringValue, !token.isEmpty else {
            throw HTTPSError(.unauthenticated, "GitHub refused the code (\(r.json?["error"]?.stringValue ?? "HTTP \(r.status)"))")
        }
        return token
    }

    /// The user; without a public email, the primary verified one from the emails endpoint.
    func user(_ token: String) async throws -> Profile {
        let auth = [("Authorization", "Bearer \(token)")]
        let r = try await ProviderExchange.reach("GitHub") { try await http.get("\(api)/user", headers: apiHeaders + auth) }
        if r.status >= 500 { throw HTTPSError(.unavailable, "GitHub answered \(r.status)") }
        guard r.status == 200, let user = r.json, let id = user["id"]?.intValue else {
            throw HTTPSError(.unauthenticated, "GitHub refused the access token (HTTP \(r.status))")
        }
        var email = user["email"]?.stringValue
        if email == nil {
            let emails = try await ProviderExchange.reach("GitHub") { try await http.get("\(api)/user/emails", headers: apiHeaders + auth) }
            email = (emails.json?.arrayValue ?? []).first { $0["primary"]?.boolValue == true && $0["verified"]?.boolValue == true }?["email"]?.stringValue
        }
        return Profile(id: String(id), email: email, name: user["name"]?.stringValue ?? user["login"]?.stringValue)
    }

    public func revoke(_ token: String) async throws {
        let basic = Base64.encode(Array("\(clientID):\(clientSecret)".utf8))
        let r = try await ProviderExchange.reach("GitHub") {
            try await http.send("DELETE", "\(api)/applications/\(clientID)/grant", json: ["access_token": .string(token)],
                                headers: apiHeaders + [("Authorization", "Basic \(basic)")])
        }
        if r.status >= 500 { throw HTTPSError(.unavailable, "GitHub answered \(r.status)") }
        // 204 revoked; 404 already gone.
        guard r.status == 204 || r.status == 404 else { throw HTTPSError(.unauthenticated, "GitHub refused the revocation (HTTP \(r.status))") }
    }
}
