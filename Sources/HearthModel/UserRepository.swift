/// Where user records, refresh tokens and user events are kept (the runtime's database).
/// Creating and deleting a user must log a user event in the same transaction.
public protocol UserRepository: Sendable {
    func create(_ user: UserRecord, time: Timestamp) async throws
    func user(uid: String) async throws -> UserRecord?
    func user(email: String) async throws -> UserRecord?
    func user(phoneNumber: String) async throws -> UserRecord?
    func user(provider: String, providerUID: String) async throws -> UserRecord?
    func update(uid: String, _ change: @escaping @Sendable (inout UserRecord) throws -> Void) async throws -> UserRecord
    func delete(uid: String, time: Timestamp) async throws -> UserRecord
    func list(maxResults: Int, pageToken: String?) async throws -> (users: [UserRecord], nextPageToken: String?)
    func storeRefreshToken(hash: [UInt8], uid: String, claims: [String: Value], authTime: Timestamp, createTime: Timestamp) async throws
    /// A stored refresh token; `revoked` once the user's tokens were revoked or the user deleted.
    func refreshToken(hash: [UInt8]) async throws -> (uid: String, claims: [String: Value], authTime: Timestamp, revoked: Bool)?
    /// Revokes every refresh token of the user (they stay stored, marked revoked).
    func revokeRefreshTokens(uid: String) async throws
    /// What token verification checks of a user; nil when there is no such user.
    func tokenState(uid: String) async throws -> UserTokenState?
}

extension UserRepository {
    public func tokenState(uid: String) async throws -> UserTokenState? {
        try await user(uid: uid).map { UserTokenState(disabled: $0.disabled, tokensValidAfterTime: $0.tokensValidAfterTime) }
    }
}
