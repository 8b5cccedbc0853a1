import HearthModel

/// Firebase Auth's admin operations for units, as the Admin SDK's `getAuth()` offers them: users
/// (look up, create, update, delete, list), custom claims, custom tokens, refresh-token revocation,
/// ID token verification, and signing JWTs with a PEM key (Apple client secrets, service-account
/// assertions). Reach it as `req.context.auth` (or `event.context.auth`, `task.context.auth`).
///
/// Every method is one message to the host, answered from the runtime's user table. Failures are
/// `HTTPSError`s with Firebase's codes: `not-found` for a uid (email, phone, linked account) with no
/// user, `already-exists` for a uid, email, phone or linked account that is taken, `invalid-argument`
/// for a malformed uid (empty, or over 128 characters), email, E.164 phone number, photo URL or
/// claims; a call made after the invocation ended (timeout, cancel) is refused with `cancelled`.
///
/// ```swift
/// let auth = req.context.auth
/// let user: UserRecord
/// if let linked = try await auth.findUser(provider: "apple.com", providerUID: sub) { user = linked } else {
///     user = try await auth.createUser(NewUser(email: email, providerToLink: .init(providerId: "apple.com", uid: sub)))
/// }
/// return ["customToken": .string(try await auth.createCustomToken(uid: user.uid))]
/// ```
public struct Auth: Sendable {
    let channel: HostChannel

    /// A custom token for `uid` (RS256, signed with the runtime's key, valid one hour) that the app
    /// exchanges for an ID token with `Auth.auth().signIn(withCustomToken:)`. `claims` become custom
    /// claims of the ID tokens it yields. Throws `invalid-argument` for an empty uid or one over 128
    /// characters, and for claims over 1000 bytes of JSON or with a reserved name (`sub`, `iat`…).
    public func createCustomToken(uid: String, claims: [String: Value]? = nil) async throws -> String {
        try await channel.call(Boundary.CreateCustomToken(uid: uid, claims: claims))
    }

    /// The user with this uid, email or phone number (E.164, `+15551234567`); throws `not-found`
    /// when there is none (see `findUser` for nil instead).
    public func getUser(uid: String) async throws -> UserRecord { try await user(.uid(uid)) }
    public func getUser(email: String) async throws -> UserRecord { try await user(.email(email)) }
    public func getUser(phoneNumber: String) async throws -> UserRecord { try await user(.phoneNumber(phoneNumber)) }
    /// The user linked to an identity provider's account (`apple.com` and Apple's `sub`); throws
    /// `not-found` when no user is linked to it.
    public func getUser(provider: String, providerUID: String) async throws -> UserRecord { try await user(.provider(provider, uid: providerUID)) }

    /// The user, or nil when there is none (instead of `not-found`); other errors still throw.
    public func findUser(uid: String) async throws -> UserRecord? { try await orNil { try await getUser(uid: uid) } }
    public func findUser(email: String) async throws -> UserRecord? { try await orNil { try await getUser(email: email) } }
    public func findUser(provider: String, providerUID: String) async throws -> UserRecord? {
        try await orNil { try await getUser(provider: provider, providerUID: providerUID) }
    }

    func orNil(_ body: () async throws -> UserRecord) async throws -> UserRecord? {
        do { return try await body() } catch let e as HTTPSError where e.code == .notFound { return nil }
    }

    func user(_ lookup: UserLookup) async throws -> UserRecord { try await channel.call(Boundary.GetUser(lookup)) }

    /// Creates a user and returns its record; a nil `uid` gets a random 28-character one. Once it
    /// commits, `onUserCreated` functions run (at least once each). Throws `already-exists` when the
    /// uid, email, phone number or linked provider account is taken, `invalid-argument` for a
    /// malformed field.
    ///
    /// ```swift
    /// let user = try await req.context.auth.createUser(NewUser(email: "ada@example.com", displayName: "Ada"))
    /// ```
    public func createUser(_ user: NewUser) async throws -> UserRecord {
        try await channel.call(Boundary.CreateUser(user: user))
    }

    /// Changes a user's fields and returns the updated record; see `UserUpdate` for what can change
    /// and how fields are removed. Throws `not-found` for an unknown uid, `already-exists` when a new
    /// email, phone number or linked account belongs to another user, `invalid-argument` for a
    /// malformed field.
    public func updateUser(uid: String, _ update: UserUpdate) async throws -> UserRecord {
        try await channel.call(Boundary.UpdateUser(uid: uid, update: update))
    }

    /// Deletes a user and revokes its refresh tokens; `onUserDeleted` functions then run (at least
    /// once each) with the record as it was. Throws `not-found` for an unknown uid. The user's
    /// documents stay: delete them in an `onUserDeleted` function.
    public func deleteUser(uid: String) async throws {
        _ = try await channel.call(Boundary.DeleteUser(uid: uid))
    }

    /// Replaces a user's custom claims (at most 1000 bytes of JSON; reserved names such as `sub` or
    /// `firebase` are `invalid-argument`), or clears them with nil or an empty map. They appear in
    /// the user's next ID token, not in ones already issued. Throws `not-found` for an unknown uid.
    ///
    /// ```swift
    /// try await req.context.auth.setCustomUserClaims(uid: uid, ["admin": true])
    /// ```
    public func setCustomUserClaims(uid: String, _ claims: [String: Value]?) async throws {
        _ = try await channel.call(Boundary.SetCustomClaims(uid: uid, claims: claims))
    }

    /// Revokes the user's refresh tokens; ID tokens issued before now stop verifying with
    /// `checkRevoked` (the default). Throws `not-found` for an unknown uid.
    public func revokeRefreshTokens(uid: String) async throws {
        _ = try await channel.call(Boundary.RevokeRefreshTokens(uid: uid))
    }

    /// One page of at most `maxResults` users (1 to 1000, else `invalid-argument`), in uid order;
    /// pass the returned token to get the next page (nil at the end).
    ///
    /// ```swift
    /// var token: String? = nil
    /// repeat {
    ///     let page = try await auth.listUsers(pageToken: token)
    ///     for user in page.users { … }
    ///     token = page.pageToken
    /// } while token != nil
    /// ```
    public func listUsers(maxResults: Int = 1000, pageToken: String? = nil) async throws -> (users: [UserRecord], pageToken: String?) {
        let page = try await channel.call(Boundary.ListUsers(maxResults: maxResults, pageToken: pageToken))
        return (page.users, page.pageToken)
    }

    /// Verifies an ID token (from an `onRequest` function's `Authorization` header, say): signature,
    /// issuer, audience, expiry; with `checkRevoked`, also that the user exists, is not disabled and
    /// has not had its tokens revoked since it was issued. Throws `unauthenticated` when it is not
    /// valid (the reason goes to the host's log, not to the unit). Callables need not call it:
    /// `CallableRequest.auth` is already verified.
    public func verifyIDToken(_ token: String, checkRevoked: Bool = true) async throws -> AuthData {
        AuthData(try await channel.call(Boundary.VerifyIDToken(token: token, checkRevoked: checkRevoked)))
    }

    /// Signs `claims` as a JWT with a PEM private key (PKCS#8, as Apple's .p8 files and Google
    /// service-account keys are): RS256 for RSA keys, ES256 for P-256 keys. `keyID` becomes the
    /// header's `kid`; `header` adds fields (`alg` and `typ` are always set). Claims are signed as
    /// given: add `iat` and `exp` yourself. Throws `invalid-argument` when the key is not a usable PEM.
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
    /// Verifies the `Authorization: Bearer` ID token (see `Auth.verifyIDToken`); throws
    /// `unauthenticated` when it is absent or not valid.
    ///
    /// ```swift
    /// fn.onRequest("me") { req in try .json(["uid": try await req.verifiedAuth().uid]) }
    /// ```
    public func verifiedAuth(checkRevoked: Bool = true) async throws -> AuthData {
        guard let token = bearerToken else { throw HTTPSError(.unauthenticated, "missing Authorization: Bearer token") }
        return try await context.auth.verifyIDToken(token, checkRevoked: checkRevoked)
    }
}
