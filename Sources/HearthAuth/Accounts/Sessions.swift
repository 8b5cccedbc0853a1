import Dispatch
import HearthModel

/// Sessions: what every sign-in returns, and the signed-in user an ID token stands for.
extension AuthService {
    /// Starts a session for `user`: records the sign-in, mints an ID token saying how the user
    /// signed in, and stores a new refresh token (hashed) that mints more of the same.
    func startSession(_ user: UserRecord, provider: String, developerClaims: [String: Value] = [:], isNewUser: Bool) async throws -> SignInResult {
        guard !user.disabled else { throw AuthFailure.userDisabled }
        let now = secondsNow()
        let signedIn = try await users.update(uid: user.uid) { $0.metadata.lastSignInTime = now }
        let idToken = try mintIDToken(for: signedIn, signInProvider: provider, authTime: now, developerClaims: developerClaims)
        let refresh = Base64.encodeURL(random.bytes(48))
        try await users.storeRefreshToken(hash: Crypto.sha256(Array(refresh.utf8)), RefreshTokenRecord(
            uid: user.uid, claims: developerClaims, authTime: now, createTime: now, signInProvider: provider))
        return SignInResult(idToken: idToken, refreshToken: refresh, expiresIn: Int(configuration.idTokenLifetime.components.seconds),
                            uid: user.uid, isNewUser: isNewUser, user: signedIn, signInProvider: provider)
    }

    /// The user an ID token from a client stands for, with the token's claims. Refusals are
    /// Identity Toolkit's: `INVALID_ID_TOKEN`, `TOKEN_EXPIRED` (expired, or issued before the
    /// user's sessions were revoked), `USER_DISABLED`, `USER_NOT_FOUND`.
    public func session(idToken: String?) async throws -> (user: UserRecord, claims: [String: Value]) {
        guard let idToken, !idToken.isEmpty else { throw AuthFailure.missingIDToken }
        let verified: VerifiedToken
        do {
            verified = try await verifyIDToken(idToken, checkRevoked: true)
        } catch {
            logRejection(error)
            switch error {
            case .expired, .revoked: throw AuthFailure.tokenExpired
            case .userDisabled: throw AuthFailure.userDisabled
            case .userNotFound: throw AuthFailure.userNotFound
            default: throw AuthFailure.invalidIDToken
            }
        }
        // Emulator mode accepts tokens for uids without an account; the account endpoints need one.
        guard let user = try await users.user(uid: verified.uid) else { throw AuthFailure.userNotFound }
        guard !user.disabled else { throw AuthFailure.userDisabled }
        return (user, verified.claims)
    }

    /// Deleting an account or changing its email or password needs a recent sign-in, as on
    /// Firebase: `auth_time` within `recentSignIn` (5 minutes) of now.
    func requireRecentSignIn(_ claims: [String: Value]) throws {
        guard let authTime = claims["auth_time"]?.intValue, authTime >= 0, authTime <= Timestamp.maxSeconds,
              clock.now() - Timestamp(seconds: authTime) <= configuration.recentSignIn else {
            throw AuthFailure.credentialTooOld
        }
    }

    func requireMethod(_ method: String) throws {
        guard configuration.signInMethods.contains(method) else { throw AuthFailure.operationNotAllowed(method) }
    }

    /// Runs a password hash (tens of milliseconds of one core, by design) off Swift's cooperative
    /// threads, which a 2-core machine has two of.
    static func offloaded<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            DispatchQueue.global(qos: .userInitiated).async { continuation.resume(returning: work()) }
        }
    }

    func hashPassword(_ password: String) async throws -> PasswordHash {
        try checkPassword(password)
        let hasher = configuration.passwords, random = self.random
        let result: Result<PasswordHash, CryptoError> = await AuthService.offloaded { Result { () throws(CryptoError) in try hasher.hash(password, random: random) } }
        return try result.get()
    }

    func checkPassword(_ password: String) throws {
        guard !password.isEmpty else { throw AuthFailure.missingPassword }
        // Firebase counts characters; at most 4 KiB so that hashing cost is bounded by the KDF alone.
        guard password.count >= configuration.minimumPasswordLength else { throw AuthFailure.weakPassword(minimum: configuration.minimumPasswordLength) }
        guard password.utf8.count <= 4096 else { throw AuthFailure.invalidArgument("the password is longer than 4096 bytes") }
    }

    static func passwordMatches(_ password: String, _ stored: PasswordHash) async -> Bool {
        await offloaded { PasswordHasher.verify(password, against: stored) }
    }
}
