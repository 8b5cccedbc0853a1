import HearthModel

extension AuthService {
    // MARK: minting

    /// A custom token as Firebase's Admin SDK mints it: RS256, `aud` the Identity Toolkit audience,
    /// `uid`, optional developer `claims`, valid for one hour. The app exchanges it for an ID token.
    public func createCustomToken(uid: String, claims: [String: Value]? = nil) throws -> String {
        try UserRules.checkUID(uid)
        if let claims { try UserRules.checkClaims(claims) }
        let now = secondsNow()
        var payload: [String: Value] = [
            "iss": .string(configuration.serviceAccount), "sub": .string(configuration.serviceAccount),
            "aud": .string(Configuration.customTokenAudience), "uid": .string(uid),
            "iat": .int(now.seconds), "exp": .int(now.seconds + 3600),
        ]
        if let claims, !claims.isEmpty { payload["claims"] = .map(claims) }
        let active = keys.active
        return try JWT.sign(payload, key: active.key, kid: active.kid)
    }

    /// An ID token for `user`, shaped like Firebase's: issuer and audience of the project, `sub` and
    /// `user_id` the uid, one hour long, the profile claims, `firebase.identities` and
    /// `firebase.sign_in_provider`, and custom claims (the user's, then the sign-in's) at the top level.
    public func mintIDToken(for user: UserRecord, signInProvider: String, authTime: Timestamp? = nil,
                            developerClaims: [String: Value] = [:]) throws -> String {
        let now = secondsNow()
        var identities: [String: Value] = [:]
        for p in user.providerData { identities[p.providerId] = .array([.string(p.uid)]) }
        if let email = user.email { identities["email"] = .array([.string(email)]) }
        if let phone = user.phoneNumber { identities["phone"] = .array([.string(phone)]) }
        var claims: [String: Value] = [:]
        for (k, v) in user.customClaims ?? [:] { claims[k] = v }
        for (k, v) in developerClaims { claims[k] = v }
        claims["iss"] = .string(configuration.issuer)
        claims["aud"] = .string(configuration.projectID)
        claims["auth_time"] = .int((authTime ?? now).seconds)
        claims["user_id"] = .string(user.uid)
        claims["sub"] = .string(user.uid)
        claims["iat"] = .int(now.seconds)
        claims["exp"] = .int(now.seconds + configuration.idTokenLifetime.components.seconds)
        if let email = user.email {
            claims["email"] = .string(email)
            claims["email_verified"] = .bool(user.emailVerified)
        }
        if let phone = user.phoneNumber { claims["phone_number"] = .string(phone) }
        if let name = user.displayName { claims["name"] = .string(name) }
        if let picture = user.photoURL { claims["picture"] = .string(picture) }
        claims["firebase"] = ["identities": .map(identities), "sign_in_provider": .string(signInProvider)]
        if signInProvider == "anonymous" { claims["provider_id"] = "anonymous" }
        let active = keys.active
        return try JWT.sign(claims, key: active.key, kid: active.kid)
    }

    // MARK: exchanges

    /// Exchanges a custom token for an ID token and a refresh token, creating the user on first
    /// sign-in (as Firebase does). Refused tokens are `invalid-argument` with the reason logged only.
    public func signInWithCustomToken(_ token: String) async throws -> SignInResult {
        let uid: String
        let developerClaims: [String: Value]
        do throws(TokenRejection) {
            if configuration.emulatorMode, token.hasPrefix("{") {
                // The Auth emulator's fake custom token: `{"uid": …, "claims": {…}}` as JSON (the
                // JS SDK's own emulator tests sign in so).
                (uid, developerClaims) = try AuthService.fakeCustomToken(token)
            } else {
                (uid, developerClaims) = try customTokenClaims(token)
            }
        } catch {
            log("custom token refused: \(error)")
            throw AuthFailure("INVALID_CUSTOM_TOKEN")
        }
        try requireMethod("custom")
        var user: UserRecord
        var isNew = false
        if let existing = try await users.user(uid: uid) {
            user = existing
        } else {
            do {
                user = try await createUser(NewUser(uid: uid))
                isNew = true
            } catch let e as HTTPSError where e.code == .alreadyExists {
                user = try await getUser(uid: uid)  // a concurrent first sign-in created it
            }
        }
        return try await startSession(user, provider: "custom", developerClaims: developerClaims, isNewUser: isNew)
    }

    /// A signed custom token's uid and developer claims, checked as Firebase checks them.
    private func customTokenClaims(_ token: String) throws(TokenRejection) -> (uid: String, claims: [String: Value]) {
        let jwt = try JWT.decode(token)
        try JWT.verifySignature(jwt, keys: keys.verificationKeys(for: jwt.keyID), allowUnsigned: configuration.emulatorMode)
        let c = jwt.claims
        guard c["aud"]?.stringValue == Configuration.customTokenAudience else { throw .wrongAudience(c["aud"]?.stringValue ?? "") }
        try checkTimes(c, maxLifetime: .seconds(3600))
        guard let uid = c["uid"]?.stringValue, !uid.isEmpty, uid.utf16.count <= 128 else { throw .invalidClaim("uid must be 1 to 128 characters") }
        return (uid, try AuthService.developerClaims(c["claims"]))
    }

    /// A custom token's `claims`: absent, or an object of developer claims as `UserRules` allows them.
    static func developerClaims(_ claims: Value?) throws(TokenRejection) -> [String: Value] {
        guard let claims else { return [:] }
        guard case .map(let m) = claims else { throw .invalidClaim("claims must be an object") }
        do { try UserRules.checkClaims(m) } catch { throw .invalidClaim(error.message) }
        return m
    }

    /// An emulator's fake custom token: a JSON object with `uid` (or `user_id`) and optional `claims`.
    static func fakeCustomToken(_ token: String) throws(TokenRejection) -> (uid: String, claims: [String: Value]) {
        guard token.utf8.count <= 16_384, case .map(let object)? = try? JSONParser.parse(token) else {
            throw .malformed("a fake custom token must be a JSON object")
        }
        guard let uid = (object["uid"] ?? object["user_id"])?.stringValue, !uid.isEmpty, uid.utf16.count <= 128 else {
            throw .invalidClaim("uid must be 1 to 128 characters")
        }
        return (uid, try developerClaims(object["claims"].flatMap { $0.isNull ? nil : $0 }))
    }

    /// Exchanges a refresh token for a new ID token (the refresh token stays the same) that says
    /// the same sign-in method and auth time as the session's first. Refusals are Secure Token's:
    /// `INVALID_REFRESH_TOKEN`, `TOKEN_EXPIRED` (revoked: the user signed out everywhere, changed
    /// password or email, or was deleted), `USER_DISABLED`, `USER_NOT_FOUND`.
    public func refresh(_ refreshToken: String) async throws -> SignInResult {
        guard refreshToken.utf8.count <= 512, let stored = try await users.refreshToken(hash: Crypto.sha256(Array(refreshToken.utf8))) else {
            throw AuthFailure("INVALID_REFRESH_TOKEN")
        }
        guard let user = try await users.user(uid: stored.uid) else { throw AuthFailure.userNotFound }
        guard !user.disabled else { throw AuthFailure.userDisabled }
        // Revoked (by revokeRefreshTokens, or with a deleted user of the same uid): Firebase's answer.
        if stored.revokedTime != nil { throw AuthFailure.tokenExpired }
        if let after = user.tokensValidAfterTime, stored.authTime < after { throw AuthFailure.tokenExpired }
        let now = secondsNow()
        _ = try await users.update(uid: user.uid) { $0.metadata.lastRefreshTime = now }
        let idToken = try mintIDToken(for: user, signInProvider: stored.signInProvider, authTime: stored.authTime, developerClaims: stored.claims)
        return SignInResult(idToken: idToken, refreshToken: refreshToken, expiresIn: Int(configuration.idTokenLifetime.components.seconds),
                            uid: user.uid, isNewUser: false, signInProvider: stored.signInProvider)
    }

    // MARK: verification

    /// Verifies an ID token: signature (algorithm pinned by the key), `exp`/`iat`/`auth_time` with
    /// the configured clock skew, audience, issuer, subject; then, with `checkRevoked`, that the user
    /// exists (not required in emulator mode, as in Firebase's emulators), is not disabled and has
    /// not revoked tokens issued before this one (nor was created after it). Signature and
    /// claim checks are cached until the token expires; the user check is a primary-key read.
    public func verifyIDToken(_ token: String, checkRevoked: Bool = true) async throws(TokenRejection) -> VerifiedToken {
        try await verify(token, issuer: configuration.issuer, checkRevoked: checkRevoked)
    }

    /// Verifies an ID token or a session cookie (they differ in issuer only).
    func verify(_ token: String, issuer: String, checkRevoked: Bool) async throws(TokenRejection) -> VerifiedToken {
        let claims: [String: Value]
        if let cached = cachedClaims(token, issuer: issuer) { claims = cached } else { claims = try verifiedClaims(token, issuer: issuer) }
        guard checkRevoked else { return VerifiedToken(uid: AuthService.subject(claims), claims: claims) }
        let user: UserTokenState?
        do { user = try await users.tokenState(uid: AuthService.subject(claims)) } catch { throw .invalidClaim("the user could not be read: \(error)") }
        return try checkUser(user, claims: claims)
    }

    /// `verifyIDToken(token, checkRevoked: true)` without suspending or waiting, for the HTTP
    /// server's own thread: nil unless the token's signature and claims were checked before (they
    /// are cached until it expires, plus the clock skew allowed), the key ring need not look at its
    /// file, and the user repository reads the user on the calling thread without waiting for a
    /// lock. Everything else is checked as `verifyIDToken` checks it, the user's record read now.
    public func verifyIDTokenNow(_ token: String) -> Result<VerifiedToken, TokenRejection>? {
        guard let claims = cachedClaims(token, issuer: configuration.issuer, refreshingKeys: false) else { return nil }
        let user: UserTokenState?
        switch users.tokenStateNow(uid: AuthService.subject(claims)) {
        case .unavailable: return nil
        case .noSuchUser: user = nil
        case .user(let state): user = state
        }
        do { return .success(try checkUser(user, claims: claims)) } catch { return .failure(error) }
    }

    /// The claims of a token verified before for `issuer`, while it has not expired and the key
    /// that signed it is still trusted; nil otherwise. (A cached verification counts only for the
    /// issuer it was made for: the same string may be offered as an ID token and as a session
    /// cookie.) Without `refreshingKeys`, also nil when the key ring would have to look at its file.
    func cachedClaims(_ token: String, issuer: String, refreshingKeys: Bool = true) -> [String: Value]? {
        guard let hit = verified.withLock({ $0[token] }), clock.now() < hit.expires + configuration.clockSkew,
              hit.claims["iss"]?.stringValue == issuer else { return nil }
        if let kid = hit.kid {
            let trusted = refreshingKeys ? keys.trusts(kid) : keys.trustsWithoutWaiting(kid)
            guard trusted == true else { return nil }
        }
        return hit.claims
    }

    /// The token's signature, times, audience, issuer and subject checked, and its claims cached
    /// until it expires.
    func verifiedClaims(_ token: String, issuer: String) throws(TokenRejection) -> [String: Value] {
        let jwt = try JWT.decode(token)
        try JWT.verifySignature(jwt, keys: keys.verificationKeys(for: jwt.keyID), allowUnsigned: configuration.emulatorMode)
        let claims = jwt.claims
        guard claims["aud"]?.stringValue == configuration.projectID else { throw .wrongAudience(claims["aud"]?.stringValue ?? "") }
        guard claims["iss"]?.stringValue == issuer else { throw .wrongIssuer(claims["iss"]?.stringValue ?? "") }
        guard let sub = claims["sub"]?.stringValue, !sub.isEmpty else { throw .badSubject("missing or empty") }
        guard sub.utf16.count <= 128 else { throw .badSubject("longer than 128 characters") }
        if let userID = claims["user_id"], userID.stringValue != sub { throw .badSubject("user_id differs from sub") }
        try checkTimes(claims, maxLifetime: nil)
        if let authTime = claims["auth_time"] {
            let at = try AuthService.numericDate(authTime, "auth_time")
            if at > clock.now() + configuration.clockSkew { throw .issuedInFuture(at: at) }
        }
        let expires = Timestamp(seconds: claims["exp"]?.intValue ?? 0)  // bounded by checkTimes
        let kid = jwt.keyID
        verified.withLock { cache in
            if cache.count >= AuthService.cacheLimit { cache.removeAll(keepingCapacity: true) }
            cache[token] = (claims, expires, kid)
        }
        return claims
    }

    /// The uid a verified token names: its `sub` (present and non-empty, checked when it was verified).
    static func subject(_ claims: [String: Value]) -> String { claims["sub"]?.stringValue ?? "" }

    /// The user's part of a check with `checkRevoked`: the account exists (not required in
    /// emulator mode), is not disabled, and has not revoked tokens since this one's session began.
    func checkUser(_ user: UserTokenState?, claims: [String: Value]) throws(TokenRejection) -> VerifiedToken {
        let uid = AuthService.subject(claims)
        // Firebase's emulators accept a well-formed token for a uid that has no account (the
        // Functions emulator and the Admin SDK pointed at the Auth emulator do not look the
        // user up); production requires the account.
        guard let user else {
            if configuration.emulatorMode { return VerifiedToken(uid: uid, claims: claims) }
            throw .userNotFound
        }
        if user.disabled { throw .userDisabled }
        // Revoked when the session began before the user's tokens were revoked: `auth_time`,
        // as firebase-admin for Node checks it (an ID token's `iat` is never earlier; a
        // session cookie's is when the cookie was made, later than its session began).
        if let after = user.tokensValidAfterTime, let iat = claims["iat"]?.intValue,
           min(iat, claims["auth_time"]?.intValue ?? iat) < after.seconds { throw .revoked }
        return VerifiedToken(uid: uid, claims: claims)
    }

    /// `exp` in the future and `iat` not in the future, each within the clock skew; with
    /// `maxLifetime`, `exp` at most that long after `iat` (custom tokens: one hour).
    func checkTimes(_ claims: [String: Value], maxLifetime: Duration?) throws(TokenRejection) {
        guard let expClaim = claims["exp"], let iatClaim = claims["iat"] else { throw .invalidClaim("exp and iat must be integers") }
        let exp = try AuthService.numericDate(expClaim, "exp")
        let iat = try AuthService.numericDate(iatClaim, "iat")
        let now = clock.now()
        if exp + configuration.clockSkew <= now { throw .expired(at: exp) }
        if iat > now + configuration.clockSkew { throw .issuedInFuture(at: iat) }
        if let maxLifetime, exp - iat > maxLifetime { throw .invalidClaim("lifetime longer than \(maxLifetime.components.seconds) s") }
    }

    /// The latest time claim a token may carry: the end of year 9999, as Firestore's timestamps.
    static let latestClaim = Timestamp.maxSeconds

    /// A time claim (RFC 7519's NumericDate, whole seconds here) bounded before any arithmetic:
    /// 0 through the end of year 9999, or the token is invalid.
    static func numericDate(_ claim: Value, _ name: String) throws(TokenRejection) -> Timestamp {
        guard let seconds = claim.intValue else { throw .invalidClaim("\(name) must be an integer") }
        guard seconds >= 0 && seconds <= latestClaim else { throw .invalidClaim("\(name) \(seconds) is outside 0...\(latestClaim)") }
        return Timestamp(seconds: seconds)
    }

    /// Logs why a token was refused (the caller is only told that it was).
    public func logRejection(_ rejection: TokenRejection) {
        log("ID token refused: \(rejection)")
    }

    /// Forgets cached verifications (benchmarks measure verification without the cache).
    public func clearVerificationCache() { verified.withLock { $0.removeAll() } }

}
