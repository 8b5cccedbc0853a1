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
