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

    /// A custom token for `uid` (valid one hour) that the app exchanges for an ID token with
    /// `Auth.auth().signIn(withCustomToken:)`. `claims` become custom claims of the ID tokens it yields.
    public func createCustomToken(uid: String, claims: [String: Value]? = nil) async throws -> String {
        try await channel.call(Boundary.CreateCustomToken(uid: uid, claims: claims))
    }

    /// The user; `not-found` when there is none (see `findUser` for nil instead).
    public func getUser(uid: String) async throws -> UserRecord { try await user(.uid(uid)) }
    public func getUser(email: String) async throws -> UserRecord { try await user(.email(email)) }
    public func getUser(phoneNumber: String) async throws -> UserRecord { try await user(.phoneNumber(phoneNumber)) }
    /// The user linked to an identity provider's account (`apple.com` and Apple's `sub`).
    public func getUser(provider: String, providerUID: String) async throws -> UserRecord { try await user(.provider(provider, uid: providerUID)) }

    /// The user, or nil when there is none (instead of `not-found`).
    public func findUser(uid: String) async throws -> UserRecord? { try await orNil { try await getUser(uid: uid) } }
    public func findUser(email: String) async throws -> UserRecord? { try await orNil { try await getUser(email: email) } }
    public func findUser(provider: String, providerUID: String) async throws -> UserRecord? {
        try await orNil { try await getUser(provider: provider, providerUID: providerUID) }
    }

    func orNil(_ body: () async throws -> UserRecord) async throws -> UserRecord? {
        do { return try await body() } catch let e as HTTPSError where e.code == .notFound { return nil }
    }

    func user(_ lookup: UserLookup) async throws -> UserRecord { try await channel.call(Boundary.GetUser(lookup)) }

    /// Creates a user (which runs `onUserCreated` functions); `already-exists` when the uid, email,
    /// phone or linked account is taken.
    public func createUser(_ user: NewUser) async throws -> UserRecord {
        try await channel.call(Boundary.CreateUser(user: user))
    }

    /// Changes a user's fields; see `UserUpdate` for what can change and how fields are removed.
    public func updateUser(uid: String, _ update: UserUpdate) async throws -> UserRecord {
        try await channel.call(Boundary.UpdateUser(uid: uid, update: update))
    }

    /// Deletes a user (which runs `onUserDeleted` functions).
    public func deleteUser(uid: String) async throws {
        _ = try await channel.call(Boundary.DeleteUser(uid: uid))
    }

    /// Sets a user's custom claims (at most 1000 bytes of JSON; reserved names refused), or clears
    /// them with nil. They appear in the user's next ID token.
    public func setCustomUserClaims(uid: String, _ claims: [String: Value]?) async throws {
        _ = try await channel.call(Boundary.SetCustomClaims(uid: uid, claims: claims))
    }

    /// Revokes the user's refresh tokens; ID tokens issued before now stop verifying with `checkRevoked`.
    public func revokeRefreshTokens(uid: String) async throws {
        _ = try await channel.call(Boundary.RevokeRefreshTokens(uid: uid))
    }

    /// One page of users, in uid order; pass the returned token to get the next page (nil at the end).
    public func listUsers(maxResults: Int = 1000, pageToken: String? = nil) async throws -> (users: [UserRecord], pageToken: String?) {
        let page = try await channel.call(Boundary.ListUsers(maxResults: maxResults, pageToken: pageToken))
        return (page.users, page.pageToken)
    }

    /// Verifies an ID token (from an `onRequest` function's `Authorization` header, say); throws
    /// `unauthenticated` when it is not valid (the reason goes to the host's log, not to the unit).
    public func verifyIDToken(_ token: String, checkRevoked: Bool = true) async throws -> AuthData {
        AuthData(try await channel.call(Boundary.VerifyIDToken(token: token, checkRevoked: checkRevoked)))
    }

    /// Signs `claims` as a JWT with a PEM private key (PKCS#8, as Apple's .p8 files and Google
    /// service-account keys are): RS256 for RSA keys, ES256 for P-256 keys.
    ///
    /// ```swift
    /// let secret = try await req.context.auth.signJWT(claims: ["iss": .string(teamID), "aud": "https://appleid.apple.com"],
    ///                                                 privateKeyPEM: try req.secrets.value("APPLE_KEY"), keyID: keyID)
    /// ```
    public func signJWT(claims: [String: Value], privateKeyPEM: String, keyID: String? = nil, header: [String: Value] = [:]) async throws -> String {
        try await channel.call(Boundary.SignJWT(claims: claims, privateKeyPEM: privateKeyPEM, keyID: keyID, header: header))
    }
}

extension HTTPRequest {
    /// Verifies the `Authorization: Bearer` ID token; `unauthenticated` when it is absent or not valid.
    public func verifiedAuth(checkRevoked: Bool = true) async throws -> AuthData {
        guard let token = bearerToken else { throw HTTPSError(.unauthenticated, "missing Authorization: Bearer token") }
        return try await context.auth.verifyIDToken(token, checkRevoked: checkRevoked)
    }
}
