import HearthAuth
import HearthHTTP
import HearthModel

/// `accounts:batchCreate` (firebase-admin's `import_users`): Identity Toolkit's UploadAccountRequest.
extension FrontDoor {
    static func importRequest(_ fields: ToolkitBody) throws -> (users: [ImportedUser], hash: ImportHash) {
        func int(_ body: ToolkitBody, _ name: String, default value: Int) throws -> Int {
            guard let v = try body.int64(name) else { return value }
            guard let i = Int(exactly: v), (0...Int(Int32.max)).contains(i) else { throw AuthFailure.invalidArgument("\(ToolkitBody.snakeCase(name)) is out of range") }
            return i
        }
        let hash: ImportHash
        switch try fields.string("hashAlgorithm")?.uppercased() {
        case nil, "":
            hash = .none
        case "SCRYPT":
            hash = .firebaseScrypt(signerKey: try bytes(fields, "signerKey") ?? [], saltSeparator: try bytes(fields, "saltSeparator") ?? [],
                                   rounds: try int(fields, "rounds", default: 0), memoryCost: try int(fields, "memoryCost", default: 0))
        case "STANDARD_SCRYPT":
            hash = .standardScrypt(n: try int(fields, "cpuMemCost", default: 0), blockSize: try int(fields, "blockSize", default: 0),
                                   parallelization: try int(fields, "parallelization", default: 0), keyLength: try int(fields, "dkLen", default: 64))
        case let other?:
            throw AuthFailure("INVALID_HASH_ALGORITHM", "\(Printable.quoted(other, limit: 40)) is not supported here (SCRYPT, STANDARD_SCRYPT, or none with rawPassword)")
        }
        guard case .array(let items)? = fields.fields["users"] else { throw AuthFailure.invalidArgument("users must be a list") }
        var users: [ImportedUser] = []
        for item in items {
            guard case .map(let m) = item else { throw AuthFailure.invalidArgument("each user must be an object") }
            users.append(try importedUser(m))
        }
        return (users, hash)
    }

    /// One account of an UploadAccountRequest (Identity Toolkit's UserInfo shape): bytes as
    /// base64, `customAttributes` a JSON string, `createdAt`/`lastLoginAt` milliseconds.
    static func importedUser(_ m: [String: Value]) throws -> ImportedUser {
        let u = ToolkitBody(m)
        var claims: [String: Value]?
        if let attributes = try u.string("customAttributes") {
            guard case .map(let parsed)? = try? JSONParser.parse(Array(attributes.utf8)) else { throw AuthFailure("INVALID_CLAIMS") }
            claims = parsed
        }
        var providers: [UserRecord.ProviderInfo] = []
        if case .array(let list)? = m["providerUserInfo"] {
            for entry in list {
                guard case .map(let pm) = entry else { continue }
                let p = ToolkitBody(pm)
                guard let id = try p.string("providerId"), let raw = try p.string("rawId") else {
                    throw AuthFailure.invalidArgument("providerUserInfo needs providerId and rawId")
                }
                // The phone entry is the user's phoneNumber shown as a provider (answers make it
                // up): kept, it would outlive a change of number. The emulator skips it too.
                if id == "phone" { continue }
                providers.append(UserRecord.ProviderInfo(providerId: id, uid: raw, email: try p.string("email"), displayName: try p.string("displayName"),
                                                         photoURL: try p.string("photoUrl"), phoneNumber: try p.string("phoneNumber")))
            }
        }
        func millis(_ name: String) throws -> Timestamp? {
            guard let ms = try u.int64(name) else { return nil }
            guard ms >= 0, ms / 1000 <= Timestamp.maxSeconds else { throw AuthFailure.invalidArgument("\(ToolkitBody.snakeCase(name)) is out of range") }
            return Timestamp(seconds: ms / 1000, nanos: Int32(ms % 1000) * 1_000_000)
        }
        return ImportedUser(
            record: NewUser(uid: try u.string("localId"), email: try u.string("email"), emailVerified: try u.bool("emailVerified"),
                            displayName: try u.string("displayName"), photoURL: try u.string("photoUrl"), phoneNumber: try u.string("phoneNumber"),
                            disabled: try u.bool("disabled")),
            passwordHash: try bytes(u, "passwordHash"), salt: try bytes(u, "salt"), rawPassword: try u.string("rawPassword"),
            customClaims: claims, providers: providers, createdAt: try millis("createdAt"), lastSignInAt: try millis("lastLoginAt"))
    }

    /// A bytes field: base64, standard or URL-safe, as Google's JSON mapping allows.
    static func bytes(_ body: ToolkitBody, _ name: String) throws -> [UInt8]? {
        guard let text = try body.string(name) else { return nil }
        guard let decoded = Base64.decodeProtoBytes(text) else {
            throw AuthFailure.invalidArgument("\(ToolkitBody.snakeCase(name)) is not base64")
        }
        return decoded
    }
}
