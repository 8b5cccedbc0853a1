import HearthAuth
import HearthModel
import HearthStore

/// The auth service's users, kept in the runtime's database.
struct StoreUserRepository: UserRepository {
    let table: UserTable

    func create(_ user: UserRecord, time: Timestamp) async throws { try await table.create(user, time: time) }
    func user(uid: String) async throws -> UserRecord? { try table.get(uid: uid) }
    func tokenState(uid: String) async throws -> UserTokenState? { try table.tokenState(uid: uid) }
    func user(email: String) async throws -> UserRecord? { try table.get(email: email) }
    func user(phoneNumber: String) async throws -> UserRecord? { try table.get(phoneNumber: phoneNumber) }
    func user(provider: String, providerUID: String) async throws -> UserRecord? { try table.get(provider: provider, providerUID: providerUID) }
    func update(uid: String, _ change: @escaping @Sendable (inout UserRecord) throws -> Void) async throws -> UserRecord {
        try await table.update(uid: uid, change)
    }
    func delete(uid: String, time: Timestamp) async throws -> UserRecord { try await table.delete(uid: uid, time: time) }
    func list(maxResults: Int, pageToken: String?) async throws -> (users: [UserRecord], nextPageToken: String?) {
        try table.list(maxResults: maxResults, pageToken: pageToken)
    }
    func storeRefreshToken(hash: [UInt8], uid: String, claims: [String: Value], authTime: Timestamp, createTime: Timestamp) async throws {
        try await table.storeRefreshToken(hash: hash, RefreshTokenRecord(uid: uid, claims: claims, authTime: authTime, createTime: createTime))
    }
    func refreshToken(hash: [UInt8]) async throws -> (uid: String, claims: [String: Value], authTime: Timestamp, revoked: Bool)? {
        try table.refreshToken(hash: hash).map { ($0.uid, $0.claims, $0.authTime, $0.revokedTime != nil) }
    }
    func revokeRefreshTokens(uid: String) async throws { try await table.revokeRefreshTokens(uid: uid) }
}

/// The `auth.*` host services: the Admin SDK's auth operations as units reach them.
enum AuthServices {
    static func handlers(auth: AuthService) -> [String: HostServices.AsyncHandler] {
        [
            "auth.createCustomToken": { r in
                .string(try auth.createCustomToken(uid: try r.string("uid"), claims: r.arguments["claims"]?.mapValue))
            },
            "auth.getUser": { r in
                let user: UserRecord
                if let uid = r.arguments["uid"]?.stringValue { user = try await auth.getUser(uid: uid) }
                else if let email = r.arguments["email"]?.stringValue { user = try await auth.getUser(email: email) }
                else if let phone = r.arguments["phoneNumber"]?.stringValue { user = try await auth.getUser(phoneNumber: phone) }
                else if let provider = r.arguments["provider"]?.stringValue { user = try await auth.getUser(provider: provider, providerUID: try r.string("providerUid")) }
                else { throw HTTPSError.invalidArgument("auth.getUser needs uid, email, phoneNumber or provider") }
                return try ValueEncoder().encode(user)
            },
            "auth.createUser": { r in
                try ValueEncoder().encode(try await auth.createUser(try decode(NewUser.self, r.arguments["user"])))
            },
            "auth.updateUser": { r in
                try ValueEncoder().encode(try await auth.updateUser(uid: try r.string("uid"), try decode(UserUpdate.self, r.arguments["update"])))
            },
            "auth.deleteUser": { r in
                try await auth.deleteUser(uid: try r.string("uid"))
                return .null
            },
            "auth.setCustomClaims": { r in
                try await auth.setCustomClaims(uid: try r.string("uid"), r.arguments["claims"]?.mapValue)
                return .null
            },
            "auth.revokeRefreshTokens": { r in
                try await auth.revokeRefreshTokens(uid: try r.string("uid"))
                return .null
            },
            "auth.listUsers": { r in
                let page = try await auth.listUsers(maxResults: Int(r.arguments["maxResults"]?.intValue ?? 1000), pageToken: r.arguments["pageToken"]?.stringValue)
                return ["users": try ValueEncoder().encode(page.users), "pageToken": page.nextPageToken.map { .string($0) } ?? .null]
            },
            "auth.verifyIdToken": { r in
                do {
                    let token = try await auth.verifyIDToken(try r.string("token"), checkRevoked: r.arguments["checkRevoked"]?.boolValue ?? true)
                    return ["uid": .string(token.uid), "claims": .map(token.claims)]
                } catch let rejection as TokenRejection {
                    // The reason stays in the log; the unit learns only that the token was refused.
                    auth.logRejection(rejection)
                    throw HTTPSError(.unauthenticated, "the ID token is not valid")
                }
            },
            "auth.signJWT": { r in
                let key: Key
                let pem = try r.string("privateKey")
                do { key = try Key.privateKey(pem: pem) } catch {
                    throw HTTPSError.invalidArgument("auth.signJWT: the private key is not a usable PEM key (\((error as? CryptoError)?.operation ?? "\(error)"))")
                }
                guard case .map(let claims)? = r.arguments["claims"] else { throw HTTPSError.invalidArgument("auth.signJWT: missing claims") }
                let header = r.arguments["header"]?.mapValue ?? [:]
                return .string(try JWT.sign(claims, key: key, kid: r.arguments["kid"]?.stringValue, header: header))
            },
        ]
    }

    static func decode<T: Decodable>(_ type: T.Type, _ value: Value?) throws -> T {
        do { return try ValueDecoder().decode(type, from: value ?? .emptyMap) } catch {
            throw HTTPSError.invalidArgument("malformed request: \(describeDecodingError(error))")
        }
    }
}

