import COpenSSL
import HearthModel

extension Crypto {
    /// scrypt (RFC 7914) through OpenSSL's `EVP_PBE_scrypt`: `N = 2^costLog2`, `r`, `p`, `length`
    /// bytes of key. Parameters are checked before OpenSSL sees them (a stored or imported record
    /// is outside input): `costLog2` 1...20, `r` 1...32, `p` 1...16, at most 1 GiB of memory.
    public static func scrypt(password: [UInt8], salt: [UInt8], costLog2: Int, blockSize r: Int, parallelization p: Int,
                              length: Int) throws(CryptoError) -> [UInt8] {
        guard (1...20).contains(costLog2), (1...32).contains(r), (1...16).contains(p), (1...1024).contains(length) else {
            throw CryptoError(operation: "scrypt", detail: "parameters out of range (log2 N \(costLog2), r \(r), p \(p), \(length) bytes)")
        }
        let n = UInt64(1) << UInt64(costLog2)
        let memory = PasswordHasher.memory(costLog2: costLog2, blockSize: r, parallelization: p)
        guard memory <= PasswordHasher.maxMemory else { throw CryptoError(operation: "scrypt", detail: "needs \(memory) bytes, more than 1 GiB") }
        var key = [UInt8](repeating: 0, count: length)
        // A C string of the password bytes (NUL-terminated so an empty one is still a valid pointer;
        // the length passed excludes the terminator).
        let pass = password.map { CChar(bitPattern: $0) } + [0]
        let ok = pass.withUnsafeBufferPointer { pw in
            salt.withUnsafeBufferPointer { s in
                EVP_PBE_scrypt(pw.baseAddress, password.count, s.baseAddress, s.count, n, UInt64(r), UInt64(p), memory, &key, length)
            }
        }
        guard ok == 1 else { throw .openssl("scrypt") }
        return key
    }

    /// AES-256 in counter mode with a zero IV (Firebase's scrypt encrypts its signer key so).
    public static func aes256CTR(key: [UInt8], _ data: [UInt8]) throws(CryptoError) -> [UInt8] {
        guard key.count == 32 else { throw CryptoError(operation: "AES-256-CTR", detail: "the key is \(key.count) bytes, not 32") }
        guard let ctx = EVP_CIPHER_CTX_new() else { throw .openssl("creating a cipher context") }
        defer { EVP_CIPHER_CTX_free(ctx) }
        let iv = [UInt8](repeating: 0, count: 16)
        guard EVP_EncryptInit_ex(ctx, EVP_aes_256_ctr(), nil, key, iv) == 1 else { throw .openssl("starting AES-256-CTR") }
        var out = [UInt8](repeating: 0, count: data.count + 16)
        var written: Int32 = 0
        var total = 0
        guard data.count <= Int(Int32.max), EVP_EncryptUpdate(ctx, &out, &written, data, Int32(data.count)) == 1 else { throw .openssl("AES-256-CTR") }
        total = Int(written)
        let ok = out.withUnsafeMutableBufferPointer { p in EVP_EncryptFinal_ex(ctx, p.baseAddress! + total, &written) }
        guard ok == 1 else { throw .openssl("finishing AES-256-CTR") }
        total += Int(written)
        return Array(out.prefix(total))
    }
}

/// Hashes new passwords and checks given ones against stored hashes.
///
/// New passwords get scrypt with a 16-byte random salt and the configured cost; Firebase's own
/// projects use `N = 2^14, r = 8, p = 1` (the default here). Checking a password costs one scrypt
/// of the cost the hash was made with, whatever the configured cost is now.
public struct PasswordHasher: Sendable {
    public var costLog2: Int
    public var blockSize: Int
    public var parallelization: Int
    static let keyLength = 64
    /// The most memory one hash may take.
    public static let maxMemory: UInt64 = 1 << 30

    /// What one scrypt takes: 128·N·r bytes for V, 128·r·p for B, and a margin for OpenSSL
    /// (parameters within `Crypto.scrypt`'s ranges: no overflow).
    public static func memory(costLog2: Int, blockSize r: Int, parallelization p: Int) -> UInt64 {
        let n = UInt64(1) << UInt64(min(max(costLog2, 0), 40))
        let r = UInt64(min(max(r, 0), 1024)), p = UInt64(min(max(p, 0), 1024))
        return 128 * n * r + 128 * r * p + 1 << 20
    }

    public init(costLog2: Int = 14, blockSize: Int = 8, parallelization: Int = 1) {
        self.costLog2 = costLog2
        self.blockSize = blockSize
        self.parallelization = parallelization
    }

    public func hash(_ password: String, random: any RandomSource) throws(CryptoError) -> PasswordHash {
        let salt = random.bytes(16)
        let key = try Crypto.scrypt(password: Array(password.utf8), salt: salt, costLog2: costLog2, blockSize: blockSize,
                                    parallelization: parallelization, length: PasswordHasher.keyLength)
        return PasswordHash(algorithm: .standardScrypt, hash: Base64.encode(key), salt: Base64.encode(salt),
                            costLog2: costLog2, blockSize: blockSize, parallelization: parallelization)
    }

    /// Whether `password` is the one `stored` was made from; false for a record that cannot be read.
    public static func verify(_ password: String, against stored: PasswordHash) -> Bool {
        guard let expected = Base64.decode(stored.hash), let salt = Base64.decode(stored.salt), !expected.isEmpty else { return false }
        let pw = Array(password.utf8)
        switch stored.algorithm {
        case .standardScrypt:
            guard let key = try? Crypto.scrypt(password: pw, salt: salt, costLog2: stored.costLog2, blockSize: stored.blockSize,
                                               parallelization: stored.parallelization, length: expected.count) else { return false }
            return Crypto.constantTimeEqual(key, expected)
        case .firebaseScrypt:
            guard let signer = stored.signerKey.flatMap({ Base64.decode($0) }), let separator = Base64.decode(stored.saltSeparator ?? ""),
                  let key = try? Crypto.scrypt(password: pw, salt: salt + separator, costLog2: stored.costLog2, blockSize: stored.blockSize,
                                               parallelization: 1, length: 64),
                  let cipher = try? Crypto.aes256CTR(key: Array(key.prefix(32)), signer) else { return false }
            return Crypto.constantTimeEqual(cipher, expected)
        }
    }
}
