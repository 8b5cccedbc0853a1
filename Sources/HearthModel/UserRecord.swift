/// A user account, with the fields of Firebase Auth's `UserRecord`.
public struct UserRecord: Sendable, Hashable, Codable {
    public struct Metadata: Sendable, Hashable, Codable {
        public var creationTime: Timestamp
        public var lastSignInTime: Timestamp?
        public var lastRefreshTime: Timestamp?

        public init(creationTime: Timestamp, lastSignInTime: Timestamp? = nil, lastRefreshTime: Timestamp? = nil) {
            self.creationTime = creationTime
            self.lastSignInTime = lastSignInTime
            self.lastRefreshTime = lastRefreshTime
        }
    }

    /// A linked sign-in provider (`apple.com`, `github.com`, `google.com`, `password`…).
    public struct ProviderInfo: Sendable, Hashable, Codable {
        public var providerId: String
        public var uid: String
        public var email: String?
        public var displayName: String?
        public var photoURL: String?
        public var phoneNumber: String?

        public init(providerId: String, uid: String, email: String? = nil, displayName: String? = nil,
                    photoURL: String? = nil, phoneNumber: String? = nil) {
            self.providerId = providerId
            self.uid = uid
            self.email = email
            self.displayName = displayName
            self.photoURL = photoURL
            self.phoneNumber = phoneNumber
        }
    }

    public var uid: String
    public var email: String?
    public var emailVerified: Bool
    public var displayName: String?
    public var photoURL: String?
    public var phoneNumber: String?
    public var disabled: Bool
    public var metadata: Metadata
    public var providerData: [ProviderInfo]
    public var customClaims: [String: Value]?
    /// ID tokens issued before this time are refused (set by revoking refresh tokens).
    public var tokensValidAfterTime: Timestamp?
    /// The password, hashed (never the password itself); nil for a user without one. Kept in the
    /// database only: it does not cross the unit boundary.
    public var passwordHash: PasswordHash?
    public var passwordUpdatedAt: Timestamp?

    public init(uid: String, email: String? = nil, emailVerified: Bool = false, displayName: String? = nil,
                photoURL: String? = nil, phoneNumber: String? = nil, disabled: Bool = false,
                metadata: Metadata, providerData: [ProviderInfo] = [], customClaims: [String: Value]? = nil,
                tokensValidAfterTime: Timestamp? = nil) {
        self.uid = uid
        self.email = email
        self.emailVerified = emailVerified
        self.displayName = displayName
        self.photoURL = photoURL
        self.phoneNumber = phoneNumber
        self.disabled = disabled
        self.metadata = metadata
        self.providerData = providerData
        self.customClaims = customClaims
        self.tokensValidAfterTime = tokensValidAfterTime
    }
}

extension UserRecord {
    /// The record without its password hash, for everything that leaves the database's user
    /// table: the user event log, the CLI's output, the unit boundary.
    public var redacted: UserRecord {
        var copy = self
        copy.passwordHash = nil
        return copy
    }
}

/// The fields of a new user; anything nil takes Firebase's default.
public struct NewUser: Sendable, Equatable, Codable {
    public var uid: String?
    public var email: String?
    public var emailVerified: Bool?
    public var displayName: String?
    public var photoURL: String?
    public var phoneNumber: String?
    public var disabled: Bool?
    public var providerToLink: UserRecord.ProviderInfo?

    public init(uid: String? = nil, email: String? = nil, emailVerified: Bool? = nil, displayName: String? = nil,
                photoURL: String? = nil, phoneNumber: String? = nil, disabled: Bool? = nil, providerToLink: UserRecord.ProviderInfo? = nil) {
        self.uid = uid
        self.email = email
        self.emailVerified = emailVerified
        self.displayName = displayName
        self.photoURL = photoURL
        self.phoneNumber = phoneNumber
        self.disabled = disabled
        self.providerToLink = providerToLink
    }
}

/// Changes to a user: a field that is nil is left alone; `.some(nil)` (via the `delete…` flags)
/// removes it, as Firebase's `updateUser` with null does.
public struct UserUpdate: Sendable, Equatable, Codable {
    public var email: String?
    public var emailVerified: Bool?
    public var displayName: String?
    public var photoURL: String?
    public var phoneNumber: String?
    public var disabled: Bool?
    public var customClaims: [String: Value]?
    public var providerToLink: UserRecord.ProviderInfo?
    public var providersToUnlink: [String]?
    public var deleteDisplayName: Bool?
    public var deletePhotoURL: Bool?
    public var deletePhoneNumber: Bool?
    public var deleteEmail: Bool?

    public init(email: String? = nil, emailVerified: Bool? = nil, displayName: String? = nil, photoURL: String? = nil,
                phoneNumber: String? = nil, disabled: Bool? = nil, customClaims: [String: Value]? = nil,
                providerToLink: UserRecord.ProviderInfo? = nil, providersToUnlink: [String]? = nil) {
        self.email = email
        self.emailVerified = emailVerified
        self.displayName = displayName
        self.photoURL = photoURL
        self.phoneNumber = phoneNumber
        self.disabled = disabled
        self.customClaims = customClaims
        self.providerToLink = providerToLink
        self.providersToUnlink = providersToUnlink
    }
}


/// The part of a user that token verification checks.
public struct UserTokenState: Sendable, Equatable {
    public var disabled: Bool
    public var tokensValidAfterTime: Timestamp?

    public init(disabled: Bool, tokensValidAfterTime: Timestamp?) {
        self.disabled = disabled
        self.tokensValidAfterTime = tokensValidAfterTime
    }
}
