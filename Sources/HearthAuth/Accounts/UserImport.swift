import HearthModel

/// How imported password hashes were made (`accounts:batchCreate`'s `hashAlgorithm` and its
/// parameters, as firebase-admin's `UserImportHash` sends them).
public enum ImportHash: Sendable, Equatable {
    /// No hashes: users come without passwords, or with `rawPassword`, hashed here on import.
    case none
    /// Firebase's modified scrypt, with the source project's hash parameters.
    case firebaseScrypt(signerKey: [UInt8], saltSeparator: [UInt8], rounds: Int, memoryCost: Int)
    /// RFC 7914 scrypt: `N` (`cpuMemCost`), `r` (`blockSize`), `p` (`parallelization`).
    case standardScrypt(n: Int, blockSize: Int, parallelization: Int, keyLength: Int)
}

/// One account to import, in Identity Toolkit's UserInfo shape.
public struct ImportedUser: Sendable {
    public var record: NewUser
    public var passwordHash: [UInt8]?
    public var salt: [UInt8]?
    public var rawPassword: String?
    public var customClaims: [String: Value]?
    public var providers: [UserRecord.ProviderInfo]
    public var createdAt: Timestamp?
    public var lastSignInAt: Timestamp?

    public init(record: NewUser, passwordHash: [UInt8]? = nil, salt: [UInt8]? = nil, rawPassword: String? = nil,
                customClaims: [String: Value]? = nil, providers: [UserRecord.ProviderInfo] = [], createdAt: Timestamp? = nil, lastSignInAt: Timestamp? = nil) {
        self.record = record
        self.passwordHash = passwordHash
        self.salt = salt
        self.rawPassword = rawPassword
        self.customClaims = customClaims
        self.providers = providers
        self.createdAt = createdAt
        self.lastSignInAt = lastSignInAt
    }
}

extension AuthService {
    /// At most this many users per `batchCreate`, as Firebase allows.
    public static let maxImportBatch = 1000

    /// Checks the hash parameters of a whole import before any user is written.
    public static func checkImportHash(_ hash: ImportHash) throws {
        switch hash {
        case .none: return
        case .firebaseScrypt(let signerKey, _, let rounds, let memoryCost):
            guard !signerKey.isEmpty else { throw AuthFailure("MISSING_SIGNER_KEY") }
            guard (1...8).contains(rounds) else { throw AuthFailure("INVALID_ROUNDS", "rounds must be 1 to 8") }
            guard (1...14).contains(memoryCost) else { throw AuthFailure("INVALID_MEMORY_COST", "memoryCost must be 1 to 14") }
        case .standardScrypt(let n, let r, let p, let length):
            guard n > 1, n & (n - 1) == 0, n <= 1 << 20 else { throw AuthFailure("INVALID_MEMORY_COST", "cpuMemCost must be a power of two up to 2^20") }
            guard (1...32).contains(r), (1...16).contains(p), (16...1024).contains(length) else {
                throw AuthFailure("INVALID_ARGUMENT", "blockSize, parallelization or dkLen out of range")
            }
            guard PasswordHasher.memory(costLog2: n.trailingZeroBitCount, blockSize: r, parallelization: p) <= PasswordHasher.maxMemory else {
                throw AuthFailure("INVALID_MEMORY_COST", "cpuMemCost × blockSize needs more than 1 GiB a hash")
            }
        }
    }

    /// `accounts:batchCreate`: creates each user (each an `onUserCreated` event), keeping imported
    /// hashes as they are; users that cannot be imported are reported by index, the rest go in.
    public func importUsers(_ imported: [ImportedUser], hash: ImportHash) async throws -> [(index: Int, message: String)] {
        try AuthService.checkImportHash(hash)
        guard imported.count <= AuthService.maxImportBatch else {
            throw AuthFailure.invalidArgument("at most \(AuthService.maxImportBatch) users can be imported at once")
        }
        var errors: [(Int, String)] = []
        for (index, user) in imported.enumerated() {
            do {
                let record = try await importedRecord(user, hash: hash)
                do { try await users.create(record, time: clock.now()) } catch let error as HTTPSError { throw AuthFailure.from(error) }
            } catch let failure as AuthFailure {
                errors.append((index, failure.message))
            } catch let failure as CryptoError {
                errors.append((index, "INVALID_PASSWORD_HASH : \(failure)"))
            }
        }
        return errors
    }

    /// The record an imported user becomes, not yet stored: its fields checked as a creation's
    /// are, its raw password hashed at today's cost, an imported hash kept with the parameters
    /// that verify it (replaced by a new one at the user's first sign-in). Refusals are
    /// `AuthFailure`s; a hash that cannot be used is a `CryptoError`.
    public func importedRecord(_ user: ImportedUser, hash: ImportHash) async throws -> UserRecord {
        guard user.record.uid != nil else { throw AuthFailure("MISSING_LOCAL_ID") }
        let stored = try await storedHash(user, hash)
        if let claims = user.customClaims { try check { try UserRules.checkClaims(claims) } }
        let now = secondsNow()
        do {
            return try newRecord(user.record) { record in
                record.passwordHash = stored
                if stored != nil { record.passwordUpdatedAt = now }
                record.customClaims = (user.customClaims?.isEmpty ?? true) ? nil : user.customClaims
                for p in user.providers where !record.providerData.contains(where: { $0.providerId == p.providerId }) { record.providerData.append(p) }
                if stored != nil { record.linkPasswordProvider() }
                if let created = user.createdAt { record.metadata.creationTime = created }
                if let last = user.lastSignInAt { record.metadata.lastSignInTime = last }
            }
        } catch let error as HTTPSError {
            throw AuthFailure.from(error)
        }
    }

    func storedHash(_ user: ImportedUser, _ hash: ImportHash) async throws -> PasswordHash? {
        if let raw = user.rawPassword { return try await hashPassword(raw) }
        guard let bytes = user.passwordHash, !bytes.isEmpty else { return nil }
        let salt = Base64.encode(user.salt ?? [])
        switch hash {
        case .none:
            throw AuthFailure("MISSING_HASH_ALGORITHM", "a passwordHash needs the hashAlgorithm it was made with")
        case .firebaseScrypt(let signerKey, let separator, let rounds, let memoryCost):
            return PasswordHash(algorithm: .firebaseScrypt, hash: Base64.encode(bytes), salt: salt, costLog2: memoryCost, blockSize: rounds,
                                parallelization: 1, signerKey: Base64.encode(signerKey), saltSeparator: Base64.encode(separator))
        case .standardScrypt(let n, let r, let p, _):
            return PasswordHash(algorithm: .standardScrypt, hash: Base64.encode(bytes), salt: salt, costLog2: n.trailingZeroBitCount,
                                blockSize: r, parallelization: p)
        }
    }
}
