import Dispatch
import Foundation
import HearthModel
import Synchronization

/// Sessions: what every sign-in returns, and the signed-in user an ID token stands for.
extension AuthService {
    /// Starts a session for `user`: records the sign-in, mints an ID token saying how the user
    /// signed in, and stores a new refresh token (hashed) that mints more of the same.
    func startSession(_ user: UserRecord, provider: String, developerClaims: [String: Value] = [:], isNewUser: Bool) async throws -> SignInResult {
        guard !user.disabled else { throw AuthFailure.userDisabled }
        let now = secondsNow()
        // A sign-in is also the user's last activity: Firebase sets lastRefreshTime with it (the
        // Admin SDKs' tests read it right after a password sign-in).
        let signedIn = try await users.update(uid: user.uid) { record in
            record.metadata.lastSignInTime = now
            record.metadata.lastRefreshTime = now
        }
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

    /// Runs a password hash (tens of milliseconds of one core and 16 MiB, by design) off Swift's
    /// cooperative threads, which a 2-core machine has two of, on one of a fixed set of serial
    /// queues (one per core): hashes in flight, and their memory, are bounded by the core count
    /// however many sign-ins arrive at once.
    static func offloaded<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
        let queue = kdfQueues[kdfNext.wrappingAdd(1, ordering: .relaxed).oldValue % kdfQueues.count]
        return await withCheckedContinuation { continuation in
            queue.async { continuation.resume(returning: work()) }
        }
    }

    static let kdfQueues = (0..<max(1, ProcessInfo.processInfo.activeProcessorCount)).map {
        DispatchQueue(label: "hearth.password-hash.\($0)", qos: .userInitiated)
    }
    static let kdfNext = Atomic<Int>(0)

    /// A hash of nothing anyone knows, at today's cost: what a sign-in for an unknown address is
    /// checked against, so it takes as long as one for a real account.
    func decoyHash() async throws -> PasswordHash {
        if let hash = decoy.withLock({ $0 }) { return hash }
        let hash = try await hashPassword(Base64.encodeURL(random.bytes(24)))
        decoy.withLock { $0 = hash }
        return hash
    }

    func hashPassword(_ password: String) async throws -> PasswordHash {
        try checkPassword(password)
        let hasher = configuration.passwords, random = self.random
        let result: Result<PasswordHash, CryptoError> = await AuthService.offloaded { Result { () throws(CryptoError) in try hasher.hash(password, random: random) } }
        return try result.get()
    }

    /// Whether `password` may be set (the length rules), before anything is written.
    public func checkNewPassword(_ password: String) throws { try checkPassword(password) }

    func checkPassword(_ password: String) throws {
        // An empty new password is a weak one (the emulator's answer; iOS maps it to weakPassword).
        // Firebase counts characters; at most 4 KiB so that hashing cost is bounded by the KDF alone.
        guard password.count >= configuration.minimumPasswordLength else { throw AuthFailure.weakPassword(minimum: configuration.minimumPasswordLength) }
        guard password.utf8.count <= 4096 else { throw AuthFailure.invalidArgument("the password is longer than 4096 bytes") }
    }

    static func passwordMatches(_ password: String, _ stored: PasswordHash) async -> Bool {
        await offloaded { PasswordHasher.verify(password, against: stored) }
    }
}
