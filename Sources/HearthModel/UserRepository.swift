/// Where user records, refresh tokens, out-of-band codes and user events are kept (the runtime's
/// database). Creating and deleting a user must log a user event in the same transaction.
public protocol UserRepository: Sendable {
    func create(_ user: UserRecord, time: Timestamp) async throws
    func user(uid: String) async throws -> UserRecord?
    func user(email: String) async throws -> UserRecord?
    func user(phoneNumber: String) async throws -> UserRecord?
    func user(provider: String, providerUID: String) async throws -> UserRecord?
    func update(uid: String, _ change: @escaping @Sendable (inout UserRecord) throws -> Void) async throws -> UserRecord
    /// Deletes the user with its refresh tokens and out-of-band codes, logging the deletion.
    func delete(uid: String, time: Timestamp) async throws -> UserRecord
    func list(maxResults: Int, pageToken: String?) async throws -> (users: [UserRecord], nextPageToken: String?)
    func storeRefreshToken(hash: [UInt8], _ record: RefreshTokenRecord) async throws
    /// A stored refresh token, revoked ones included (`revokedTime` set).
    func refreshToken(hash: [UInt8]) async throws -> RefreshTokenRecord?
    /// Revokes every refresh token of the user (they stay stored, marked revoked).
    func revokeRefreshTokens(uid: String) async throws
    /// What token verification checks of a user; nil when there is no such user.
    func tokenState(uid: String) async throws -> UserTokenState?
    /// `tokenState` on the calling thread, without suspending, where the repository can (the
    /// embedded store: what it read before, or a primary-key read): a callable's ID token is then
    /// checked on the HTTP server's own thread. `.unavailable` where it cannot, or when the read
    /// fails: ask `tokenState`.
    func tokenStateNow(uid: String) -> ImmediateTokenState

    func storeOobCode(_ code: OobCode) async throws
    /// The code, without using it up; nil when unknown.
    func oobCode(_ code: String) async throws -> OobCode?
    /// Removes and returns the code, so of two concurrent uses exactly one gets it.
    func takeOobCode(_ code: String) async throws -> OobCode?
    /// Codes not yet used, oldest first (what the Auth emulator's `oobCodes` endpoint lists).
    func oobCodes(limit: Int) async throws -> [OobCode]
}

extension UserRepository {
    public func tokenState(uid: String) async throws -> UserTokenState? {
        try await user(uid: uid).map { UserTokenState(disabled: $0.disabled, tokensValidAfterTime: $0.tokensValidAfterTime) }
    }

    public func tokenStateNow(uid: String) -> ImmediateTokenState { .unavailable }
}

/// What `UserRepository.tokenStateNow` found.
public enum ImmediateTokenState: Sendable, Equatable {
    case user(UserTokenState)
    case noSuchUser
    /// Not read here: the repository cannot without suspending, or the read failed.
    case unavailable
}

/// A stored refresh token: who it signs in, since when, how, the developer claims it carries, and
/// when it was revoked (revoked tokens are kept so that using one can be told apart from a made-up one).
public struct RefreshTokenRecord: Sendable, Equatable {
    public var uid: String
    public var claims: [String: Value]
    public var authTime: Timestamp
    public var createTime: Timestamp
    /// `custom`, `password`, `anonymous`, `google.com`…: the ID tokens it mints say so.
    public var signInProvider: String
    public var revokedTime: Timestamp?

    public init(uid: String, claims: [String: Value], authTime: Timestamp, createTime: Timestamp,
                signInProvider: String = "custom", revokedTime: Timestamp? = nil) {
        self.uid = uid
        self.claims = claims
        self.authTime = authTime
        self.createTime = createTime
        self.signInProvider = signInProvider
        self.revokedTime = revokedTime
    }
}

/// A single-use code sent out of band (by email in Firebase) to verify an address or reset a password.
public struct OobCode: Sendable, Equatable {
    public enum Kind: String, Sendable, CaseIterable {
        case verifyEmail = "VERIFY_EMAIL"
        case passwordReset = "PASSWORD_RESET"
        case verifyAndChangeEmail = "VERIFY_AND_CHANGE_EMAIL"
        /// Email-link (passwordless) sign-in: the code signs its address in, making the account
        /// when there is none (its `uid` is then empty).
        case emailSignIn = "EMAIL_SIGNIN"
    }

    public var code: String
    public var kind: Kind
    public var uid: String
    /// The address the code was sent to.
    public var email: String
    /// For `verifyAndChangeEmail`: the address the account changes to.
    public var newEmail: String?
    public var createTime: Timestamp
    public var expireTime: Timestamp

    public init(code: String, kind: Kind, uid: String, email: String, newEmail: String? = nil, createTime: Timestamp, expireTime: Timestamp) {
        self.code = code
        self.kind = kind
        self.uid = uid
        self.email = email
        self.newEmail = newEmail
        self.createTime = createTime
        self.expireTime = expireTime
    }
}
