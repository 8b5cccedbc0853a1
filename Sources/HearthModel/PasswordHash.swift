/// A stored password hash and the parameters that verify it.
///
/// Hearth hashes the passwords it is given with scrypt (`standardScrypt`); users imported from
/// Firebase keep Firebase's own modified scrypt (`firebaseScrypt`) until they next set a password.
/// The bytes are kept as base64 strings so the record reads the same through any encoder.
public struct PasswordHash: Sendable, Hashable, Codable {
    public enum Algorithm: String, Sendable, Hashable, Codable {
        /// scrypt (RFC 7914) of the password with `salt`: `N = 2^costLog2`, `r = blockSize`, `p = parallelization`.
        case standardScrypt = "STANDARD_SCRYPT"
        /// Firebase's scrypt: the key derived from the password and `salt + saltSeparator`
        /// (`N = 2^costLog2`, `r = blockSize`, `p = 1`) encrypts `signerKey` with AES-256-CTR;
        /// the hash is that ciphertext.
        case firebaseScrypt = "SCRYPT"
    }

    public var algorithm: Algorithm
    /// base64
    public var hash: String
    /// base64
    public var salt: String
    public var costLog2: Int
    public var blockSize: Int
    public var parallelization: Int
    /// Firebase scrypt only: the project's signer key and salt separator (base64).
    public var signerKey: String?
    public var saltSeparator: String?

    public init(algorithm: Algorithm, hash: String, salt: String, costLog2: Int, blockSize: Int, parallelization: Int = 1,
                signerKey: String? = nil, saltSeparator: String? = nil) {
        self.algorithm = algorithm
        self.hash = hash
        self.salt = salt
        self.costLog2 = costLog2
        self.blockSize = blockSize
        self.parallelization = parallelization
        self.signerKey = signerKey
        self.saltSeparator = saltSeparator
    }
}
