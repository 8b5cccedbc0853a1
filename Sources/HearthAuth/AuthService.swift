import HearthModel
import Synchronization

/// A verified ID token: whose it is and every claim it carries.
public struct VerifiedToken: Sendable, Equatable {
    public var uid: String
    public var claims: [String: Value]
}

/// What a sign-in or a refresh returns, in the shape of Firebase's REST API.
public struct SignInResult: Sendable, Equatable {
    public var idToken: String
    public var refreshToken: String
    public var expiresIn: Int
    public var uid: String
    public var isNewUser: Bool
    /// The user as the sign-in left it (nil for a refresh).
    public var user: UserRecord?
    public var signInProvider: String

    public init(idToken: String, refreshToken: String, expiresIn: Int, uid: String, isNewUser: Bool, user: UserRecord? = nil, signInProvider: String) {
        self.idToken = idToken
        self.refreshToken = refreshToken
        self.expiresIn = expiresIn
        self.uid = uid
        self.isNewUser = isNewUser
        self.user = user
        self.signInProvider = signInProvider
    }
}

/// Hearth's auth: user records, Firebase-style tokens (custom, ID, refresh), their verification.
///
/// Tokens are signed RS256 by the runtime's `KeyRing`; the algorithm is pinned by the key. With
/// `emulatorMode` (never on by default) unsigned tokens are accepted where Firebase's Auth emulator
/// accepts them: ID tokens and custom tokens with `alg: none` and an empty signature.
public final class AuthService: Sendable {
    public struct Configuration: Sendable {
        public var projectID: String { didSet { issuer = Configuration.issuer(of: projectID) } }
        /// `iss` of the project's ID tokens (kept, not built again for every token checked).
        public private(set) var issuer: String
        public var emulatorMode: Bool
        public var clockSkew: Duration
        public var idTokenLifetime: Duration
        /// The sign-in methods turned on, as the console's switches: `password`, `anonymous`,
        /// `custom`, and the identity providers (`google.com`, `apple.com`). Others are refused
        /// with `OPERATION_NOT_ALLOWED`.
        public var signInMethods: Set<String>
        /// Firebase's email enumeration protection (on for new projects): a wrong password and an
        /// unknown address both answer `INVALID_LOGIN_CREDENTIALS`, and a reset for an unknown
        /// address succeeds without sending anything.
        public var emailEnumerationProtection: Bool
        public var passwords: PasswordHasher
        public var minimumPasswordLength: Int
        /// Deleting the account or changing its email or password needs a sign-in this recent.
        public var recentSignIn: Duration
        /// Failed password sign-ins allowed per address before `TOO_MANY_ATTEMPTS_TRY_LATER`,
        /// and how often one more is allowed after that.
        public var failedSignIns: AttemptLimiter.Policy
        /// Identity providers whose ID tokens `signInWithIdp` accepts.
        public var identityProviders: [IdentityProvider]
        public var verifyEmailLifetime: Duration
        public var passwordResetLifetime: Duration

        public static let allSignInMethods: Set<String> = ["password", "emailLink", "anonymous", "custom", "google.com", "apple.com"]

        public init(projectID: String, emulatorMode: Bool = false, clockSkew: Duration = .seconds(300), idTokenLifetime: Duration = .seconds(3600),
                    signInMethods: Set<String> = Configuration.allSignInMethods, emailEnumerationProtection: Bool = true,
                    passwords: PasswordHasher = PasswordHasher(), minimumPasswordLength: Int = 6, recentSignIn: Duration = .seconds(300),
                    failedSignIns: AttemptLimiter.Policy = .init(), identityProviders: [IdentityProvider] = [],
                    verifyEmailLifetime: Duration = .seconds(3 * 86400), passwordResetLifetime: Duration = .seconds(3600)) {
            self.projectID = projectID
            issuer = Configuration.issuer(of: projectID)
            self.emulatorMode = emulatorMode
            self.clockSkew = clockSkew
            self.idTokenLifetime = idTokenLifetime
            self.signInMethods = signInMethods
            self.emailEnumerationProtection = emailEnumerationProtection
            self.passwords = passwords
            self.minimumPasswordLength = minimumPasswordLength
            self.recentSignIn = recentSignIn
            self.failedSignIns = failedSignIns
            self.identityProviders = identityProviders
            self.verifyEmailLifetime = verifyEmailLifetime
            self.passwordResetLifetime = passwordResetLifetime
        }

        static func issuer(of projectID: String) -> String { "https://securetoken.google.com/\(projectID)" }
        /// The service account that "signs" custom tokens (their `iss` and `sub`).
        public var serviceAccount: String { "firebase-adminsdk-hearth@\(projectID).iam.gserviceaccount.com" }
        public static let customTokenAudience = "https://identitytoolkit.googleapis.com/google.identity.identitytoolkit.v1.IdentityToolkit"
    }

    public let configuration: Configuration
    public let users: any UserRepository
    public let keys: KeyRing
    let clock: any Clock
    /// Uids and refresh tokens come from here: the system's generator in production.
    let random: any RandomSource
    let log: @Sendable (String) -> Void
    /// Tokens whose signature and claims were checked, until they expire.
    /// Verified tokens until they expire, with the key that signed each (nil: unsigned, in
    /// emulator mode): a hit counts only while the ring still trusts that key.
    let verified = Mutex<[String: (claims: [String: Value], expires: Timestamp, kid: String?)]>([:])
    static let cacheLimit = 10_000
    /// Failed password sign-ins, per address.
    let attempts: AttemptLimiter
    let decoy = Mutex<PasswordHash?>(nil)

    public init(configuration: Configuration, users: any UserRepository, keys: KeyRing, clock: any Clock,
                random: any RandomSource = SystemRandom(), log: @escaping @Sendable (String) -> Void = { _ in }) {
        self.configuration = configuration
        self.users = users
        self.keys = keys
        self.clock = clock
        self.random = random
        self.log = log
        self.attempts = AttemptLimiter(policy: configuration.failedSignIns)
    }

    // MARK: users

    public func createUser(_ request: NewUser) async throws -> UserRecord {
        try await createUser(request, adjust: { _ in })
    }

    /// Creates a user; `adjust` sets what `NewUser` does not carry (a password hash) before the
    /// one write that stores the user and logs its creation event.
    func createUser(_ request: NewUser, adjust: (inout UserRecord) -> Void) async throws -> UserRecord {
        let record = try newRecord(request, adjust: adjust)
        try await users.create(record, time: clock.now())
        return record
    }

    /// The record a new user gets, its fields checked, not yet stored.
    func newRecord(_ request: NewUser, adjust: (inout UserRecord) -> Void) throws -> UserRecord {
        let uid = request.uid ?? newUID()
        try UserRules.checkUID(uid)
        if let email = request.email { try UserRules.checkEmail(email) }
        if let phone = request.phoneNumber { try UserRules.checkPhone(phone) }
        if let photo = request.photoURL { try UserRules.checkPhotoURL(photo) }
        if let name = request.displayName { try UserRules.checkDisplayName(name) }
        // Tokens valid from the creation on (Firebase's `validSince`): a uid deleted and created
        // again does not accept the ID tokens its previous owner was issued.
        let now = secondsNow()
        var record = UserRecord(uid: uid, email: request.email, emailVerified: request.emailVerified ?? false,
                                displayName: request.displayName, photoURL: request.photoURL, phoneNumber: request.phoneNumber,
                                disabled: request.disabled ?? false, metadata: .init(creationTime: now), tokensValidAfterTime: now)
        if let provider = request.providerToLink { record.providerData = [provider] }
        adjust(&record)
        return record
    }

    public func getUser(uid: String) async throws -> UserRecord {
        guard let user = try await users.user(uid: uid) else { throw HTTPSError(.notFound, "no user record for uid \(uid)") }
        return user
    }

    public func getUser(email: String) async throws -> UserRecord {
        guard let user = try await users.user(email: email) else { throw HTTPSError(.notFound, "no user record for email \(email)") }
        return user
    }

    public func getUser(phoneNumber: String) async throws -> UserRecord {
        guard let user = try await users.user(phoneNumber: phoneNumber) else { throw HTTPSError(.notFound, "no user record for phone number \(phoneNumber)") }
        return user
    }

    public func getUser(provider: String, providerUID: String) async throws -> UserRecord {
        guard let user = try await users.user(provider: provider, providerUID: providerUID) else {
            throw HTTPSError(.notFound, "no user record for \(provider) account \(providerUID)")
        }
        return user
    }

    public func updateUser(uid: String, _ update: UserUpdate) async throws -> UserRecord {
        if let email = update.email { try UserRules.checkEmail(email) }
        if let phone = update.phoneNumber { try UserRules.checkPhone(phone) }
        if let photo = update.photoURL { try UserRules.checkPhotoURL(photo) }
        if let name = update.displayName { try UserRules.checkDisplayName(name) }
        if let claims = update.customClaims { try UserRules.checkClaims(claims) }
        let user = try await users.update(uid: uid) { user in
            if let v = update.email {
                user.email = v
                user.movePasswordProvider(to: v)
            }
            if update.deleteEmail == true {
                user.email = nil
                user.unlinkPassword()
            }
            if let v = update.emailVerified { user.emailVerified = v }
            if let v = update.displayName { user.displayName = v }
            if update.deleteDisplayName == true { user.displayName = nil }
            if let v = update.photoURL { user.photoURL = v }
            if update.deletePhotoURL == true { user.photoURL = nil }
            if let v = update.phoneNumber { user.phoneNumber = v }
            if update.deletePhoneNumber == true { user.phoneNumber = nil }
            if let v = update.disabled { user.disabled = v }
            if let v = update.customClaims { user.customClaims = v }
            if let unlink = update.providersToUnlink { user.providerData.removeAll { unlink.contains($0.providerId) } }
            if let link = update.providerToLink {
                user.providerData.removeAll { $0.providerId == link.providerId }
                user.providerData.append(link)
            }
        }
        return user
    }

    /// Sets a user's password (the Admin SDK's `password` on create and update): hashed as a
    /// sign-up's is, linked as the `password` provider when the user has an address; the user's
    /// sessions end, as on Firebase.
    public func setPassword(uid: String, _ password: String) async throws {
        let hash = try await hashPassword(password)
        let now = secondsNow()
        _ = try await updateRecord(uid: uid) { record in
            record.passwordHash = hash
            record.passwordUpdatedAt = now
            record.tokensValidAfterTime = now
            record.linkPasswordProvider()
        }
        try await users.revokeRefreshTokens(uid: uid)
    }

    /// Sets (or, with nil or an empty map, clears) a user's custom claims: at most 1000 bytes of
    /// JSON, no reserved names. They appear in the user's next ID token. Cleared claims are an
    /// empty map, as Firebase keeps them (`customAttributes` "{}": the Admin SDKs read `{}`).
    public func setCustomClaims(uid: String, _ claims: [String: Value]?) async throws {
        if let claims { try UserRules.checkClaims(claims) }
        _ = try await users.update(uid: uid) { $0.customClaims = claims ?? [:] }
    }

    public func deleteUser(uid: String) async throws {
        _ = try await users.delete(uid: uid, time: clock.now())
    }

    public func listUsers(maxResults: Int = 1000, pageToken: String? = nil) async throws -> (users: [UserRecord], nextPageToken: String?) {
        guard (1...1000).contains(maxResults) else { throw HTTPSError(.invalidArgument, "maxResults must be between 1 and 1000") }
        return try await users.list(maxResults: maxResults, pageToken: pageToken)
    }

    /// Revokes a user's refresh tokens and every ID token issued before now.
    public func revokeRefreshTokens(uid: String) async throws {
        let now = clock.now()
        _ = try await users.update(uid: uid) { $0.tokensValidAfterTime = AuthService.seconds(now) }
        try await users.revokeRefreshTokens(uid: uid)
    }

    /// A uid of 28 characters from [A-Za-z0-9], as Firebase Auth makes them.
    func newUID() -> String { random.autoID(length: 28) }

    /// Token times are whole seconds.
    static func seconds(_ t: Timestamp) -> Timestamp { Timestamp(seconds: t.seconds) }
    func secondsNow() -> Timestamp { AuthService.seconds(clock.now()) }
}
