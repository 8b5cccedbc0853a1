import HearthModel

/// Firebase Auth's admin operations for units: users, custom tokens, ID token verification, and
/// signing JWTs with a PEM key (Apple client secrets, service-account assertions).
///
/// ```swift
/// let user = try await req.context.auth.findUser(provider: "apple.com", providerUID: sub)
///     ?? req.context.auth.createUser(NewUser(email: email, providerToLink: .init(providerId: "apple.com", uid: sub)))
/// return ["customToken": .string(try await req.context.auth.createCustomToken(uid: user.uid))]
/// ```
public struct Auth: Sendable {
    let channel: HostChannel

    /// A custom token for `uid` (valid one hour) that the app exchanges for an ID token.
    public func createCustomToken(uid: String, claims: [String: Value]? = nil) async throws -> String {
        var args: [String: Value] = ["uid": .string(uid)]
        if let claims { args["claims"] = .map(claims) }
        return try await channel.call("auth.createCustomToken", args).stringValue ?? ""
    }

    public func getUser(uid: String) async throws -> UserRecord { try await user(["uid": .string(uid)]) }
    public func getUser(email: String) async throws -> UserRecord { try await user(["email": .string(email)]) }
    public func getUser(phoneNumber: String) async throws -> UserRecord { try await user(["phoneNumber": .string(phoneNumber)]) }
    public func getUser(provider: String, providerUID: String) async throws -> UserRecord {
        try await user(["provider": .string(provider), "providerUid": .string(providerUID)])
    }

    /// The user, or nil when there is none (instead of `not-found`).
    public func findUser(uid: String) async throws -> UserRecord? { try await orNil { try await getUser(uid: uid) } }
    public func findUser(email: String) async throws -> UserRecord? { try await orNil { try await getUser(email: email) } }
    public func findUser(provider: String, providerUID: String) async throws -> UserRecord? {
        try await orNil { try await getUser(provider: provider, providerUID: providerUID) }
    }

    func orNil(_ body: () async throws -> UserRecord) async throws -> UserRecord? {
        do { return try await body() } catch let e as HTTPSError where e.code == .notFound { return nil }
    }

    func user(_ args: [String: Value]) async throws -> UserRecord {
        try ValueDecoder().decode(UserRecord.self, from: try await channel.call("auth.getUser", args))
    }

    /// Creates a user; `already-exists` when the uid, email, phone or linked account is taken.
    public func createUser(_ user: NewUser) async throws -> UserRecord {
        try ValueDecoder().decode(UserRecord.self, from: try await channel.call("auth.createUser", ["user": try ValueEncoder().encode(user)]))
    }

    public func updateUser(uid: String, _ update: UserUpdate) async throws -> UserRecord {
        try ValueDecoder().decode(UserRecord.self, from: try await channel.call("auth.updateUser", ["uid": .string(uid), "update": try ValueEncoder().encode(update)]))
    }

    /// Deletes a user (which runs `onUserDeleted` functions).
    public func deleteUser(uid: String) async throws {
        _ = try await channel.call("auth.deleteUser", ["uid": .string(uid)])
    }

    /// Sets a user's custom claims (at most 1000 bytes of JSON; reserved names refused), or clears them with nil.
    public func setCustomUserClaims(uid: String, _ claims: [String: Value]?) async throws {
        _ = try await channel.call("auth.setCustomClaims", ["uid": .string(uid), "claims": claims.map { .map($0) } ?? .null])
    }

    public func revokeRefreshTokens(uid: String) async throws {
        _ = try await channel.call("auth.revokeRefreshTokens", ["uid": .string(uid)])
    }

    public func listUsers(maxResults: Int = 1000, pageToken: String? = nil) async throws -> (users: [UserRecord], pageToken: String?) {
        var args: [String: Value] = ["maxResults": .int(Int64(maxResults))]
        if let pageToken { args["pageToken"] = .string(pageToken) }
        let reply = try await channel.call("auth.listUsers", args)
        return (try ValueDecoder().decode([UserRecord].self, from: reply["users"] ?? .array([])), reply["pageToken"]?.stringValue)
    }

    /// Verifies an ID token (from an `onRequest` function's `Authorization` header, say); throws
    /// `unauthenticated` when it is not valid.
    public func verifyIDToken(_ token: String, checkRevoked: Bool = true) async throws -> AuthData {
        let reply = try await channel.call("auth.verifyIdToken", ["token": .string(token), "checkRevoked": .bool(checkRevoked)])
        return AuthData(uid: reply["uid"]?.stringValue ?? "", token: reply["claims"]?.mapValue ?? [:], rawToken: token)
    }

    /// Signs `claims` as a JWT with a PEM private key (PKCS#8, as Apple's .p8 files and Google
    /// service-account keys are): RS256 for RSA keys, ES256 for P-256 keys.
    public func signJWT(claims: [String: Value], privateKeyPEM: String, keyID: String? = nil, header: [String: Value] = [:]) async throws -> String {
        var args: [String: Value] = ["claims": .map(claims), "privateKey": .string(privateKeyPEM), "header": .map(header)]
        if let keyID { args["kid"] = .string(keyID) }
        return try await channel.call("auth.signJWT", args).stringValue ?? ""
    }
}

extension FunctionContext {
    /// Firebase Auth's admin operations.
    public var auth: Auth { Auth(channel: host) }
}

extension HTTPRequest {
    /// Verifies the `Authorization: Bearer` ID token; `unauthenticated` when it is absent or not valid.
    public func verifiedAuth(checkRevoked: Bool = true) async throws -> AuthData {
        guard let token = bearerToken else { throw HTTPSError(.unauthenticated, "missing Authorization: Bearer token") }
        return try await context.auth.verifyIDToken(token, checkRevoked: checkRevoked)
    }
}
