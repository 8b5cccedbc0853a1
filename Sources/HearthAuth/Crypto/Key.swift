import COpenSSL
import HearthModel

/// The JWT algorithms Hearth signs and verifies with. A key has exactly one: the algorithm is
/// pinned by the key, never taken from a token's header.
public enum JWTAlgorithm: String, Sendable, Hashable, Codable {
    /// RSASSA-PKCS1-v1_5 with SHA-256.
    case rs256 = "RS256"
    /// ECDSA on P-256 with SHA-256, signatures as raw r||s (64 bytes).
    case es256 = "ES256"
}

/// An asymmetric key held by OpenSSL: a private key (signs and verifies) or a public key (verifies).
/// Owns its `EVP_PKEY`, freed in `deinit`. OpenSSL 3 allows concurrent use of one EVP_PKEY by many
/// threads for signing and verifying, each with its own digest context, which is what `sign` and
/// `verify` create; the key itself is never mutated after init.
public final class Key: @unchecked Sendable {
    let pkey: OpaquePointer
    public let algorithm: JWTAlgorithm
    public let isPrivate: Bool

    init(pkey: OpaquePointer, isPrivate: Bool) throws(CryptoError) {
        self.pkey = pkey
        self.isPrivate = isPrivate
        if EVP_PKEY_is_a(pkey, "RSA") == 1 {
            guard EVP_PKEY_get_bits(pkey) >= 2048 else {
                EVP_PKEY_free(pkey)
                throw CryptoError(operation: "RSA keys must have at least 2048 bits", detail: "")
            }
            algorithm = .rs256
        } else if EVP_PKEY_is_a(pkey, "EC") == 1 {
            var name = [CChar](repeating: 0, count: 64)
            var length = 0
            guard EVP_PKEY_get_utf8_string_param(pkey, "group", &name, name.count, &length) == 1, cString(name) == "prime256v1" else {
                EVP_PKEY_free(pkey)
                throw CryptoError(operation: "only P-256 elliptic-curve keys are supported (ES256)", detail: "")
            }
            algorithm = .es256
        } else {
            EVP_PKEY_free(pkey)
            throw CryptoError(operation: "unsupported key type (use RSA or P-256)", detail: "")
        }
    }

    deinit { EVP_PKEY_free(pkey) }

    // MARK: creating keys

    /// A new RSA 2048 key.
    public static func generateRSA(bits: Int32 = 2048) throws(CryptoError) -> Key {
        try generate("RSA") { ctx in EVP_PKEY_CTX_set_rsa_keygen_bits(ctx, bits) }
    }

    /// A new P-256 key.
    public static func generateP256() throws(CryptoError) -> Key {
        try generate("EC") { ctx in EVP_PKEY_CTX_set_group_name(ctx, "P-256") }
    }

    private static func generate(_ type: String, _ configure: (OpaquePointer) -> Int32) throws(CryptoError) -> Key {
        guard let ctx = EVP_PKEY_CTX_new_from_name(nil, type, nil) else { throw .openssl("creating a \(type) key context") }
        defer { EVP_PKEY_CTX_free(ctx) }
        var pkey: OpaquePointer?
        guard EVP_PKEY_keygen_init(ctx) == 1, configure(ctx) == 1, EVP_PKEY_generate(ctx, &pkey) == 1, let pkey else {
            throw .openssl("generating a \(type) key")
        }
        return try Key(pkey: pkey, isPrivate: true)
    }

    /// A private key from PEM: PKCS#8 (`BEGIN PRIVATE KEY`, the form of Apple's .p8 files and
    /// Google service-account keys) or the traditional RSA and EC forms.
    public static func privateKey(pem: String) throws(CryptoError) -> Key {
        let pkey: OpaquePointer? = withMemoryBIO(pem) { bio in PEM_read_bio_PrivateKey(bio, nil, nil, nil) }
        guard let pkey else { throw .openssl("reading a PEM private key") }
        return try Key(pkey: pkey, isPrivate: true)
    }

    /// A public key from PEM (`BEGIN PUBLIC KEY`, SubjectPublicKeyInfo).
    public static func publicKey(pem: String) throws(CryptoError) -> Key {
        let pkey: OpaquePointer? = withMemoryBIO(pem) { bio in PEM_read_bio_PUBKEY(bio, nil, nil, nil) }
        guard let pkey else { throw .openssl("reading a PEM public key") }
        return try Key(pkey: pkey, isPrivate: false)
    }

    /// A public key from a JWK (`kty` RSA with `n`/`e`, or EC P-256 with `x`/`y`).
    public static func publicKey(jwk: Value) throws(CryptoError) -> Key {
        guard let kty = jwk["kty"]?.stringValue else { throw CryptoError(operation: "JWK without kty", detail: "") }
        guard let bld = OSSL_PARAM_BLD_new() else { throw .openssl("building key parameters") }
        defer { OSSL_PARAM_BLD_free(bld) }
        var bignums: [OpaquePointer] = []
        defer { for bn in bignums { BN_free(bn) } }
        func bytes(_ name: String) throws(CryptoError) -> [UInt8] {
            guard let s = jwk[name]?.stringValue, let b = Base64.decodeURL(s), !b.isEmpty else {
                throw CryptoError(operation: "JWK member '\(name)' is missing or not base64url", detail: "")
            }
            return b
        }
        // The builder keeps pointers to parameter names (and strings) without copying them until
        // OSSL_PARAM_BLD_to_param, so they must be static: StaticString storage lives for the process.
        func c(_ s: StaticString) -> UnsafePointer<CChar> { UnsafeRawPointer(s.utf8Start).assumingMemoryBound(to: CChar.self) }
        let type: String
        switch kty {
        case "RSA":
            type = "RSA"
            for (member, param) in [("n", c("n")), ("e", c("e"))] {
                let b = try bytes(member)
                guard let bn = BN_bin2bn(b, Int32(b.count), nil) else { throw .openssl("reading JWK '\(member)'") }
                bignums.append(bn)
                guard OSSL_PARAM_BLD_push_BN(bld, param, bn) == 1 else { throw .openssl("building RSA parameters") }
            }
        case "EC":
            guard jwk["crv"]?.stringValue == "P-256" else { throw CryptoError(operation: "only P-256 EC JWKs are supported", detail: "") }
            type = "EC"
            let x = try bytes("x"), y = try bytes("y")
            guard x.count == 32, y.count == 32 else { throw CryptoError(operation: "P-256 JWK coordinates must be 32 bytes", detail: "") }
            let point = [0x04] + x + y
            // The octet string is copied when the builder makes its parameters, below, while `point` lives.
            guard OSSL_PARAM_BLD_push_utf8_string(bld, c("group"), c("prime256v1"), 0) == 1,
                  point.withUnsafeBytes({ OSSL_PARAM_BLD_push_octet_string(bld, c("pub"), $0.baseAddress, $0.count) }) == 1 else {
                throw .openssl("building EC parameters")
            }
            guard let params = OSSL_PARAM_BLD_to_param(bld) else { throw .openssl("building key parameters") }
            defer { OSSL_PARAM_free(params) }
            return try Key.fromData(type, params)
        default:
            throw CryptoError(operation: "unsupported JWK kty '\(kty)'", detail: "")
        }
        guard let params = OSSL_PARAM_BLD_to_param(bld) else { throw .openssl("building key parameters") }
        defer { OSSL_PARAM_free(params) }
        return try Key.fromData(type, params)
    }

    private static func fromData(_ type: String, _ params: UnsafeMutablePointer<OSSL_PARAM>) throws(CryptoError) -> Key {
        guard let ctx = EVP_PKEY_CTX_new_from_name(nil, type, nil) else { throw .openssl("creating a key context") }
        defer { EVP_PKEY_CTX_free(ctx) }
        var pkey: OpaquePointer?
        guard EVP_PKEY_fromdata_init(ctx) == 1, EVP_PKEY_fromdata(ctx, &pkey, HEARTH_EVP_PKEY_PUBLIC_KEY, params) == 1, let pkey else {
            throw .openssl("importing a JWK")
        }
        return try Key(pkey: pkey, isPrivate: false)
    }

    // MARK: exporting

    /// The private key as PKCS#8 PEM.
    public func privatePEM() throws(CryptoError) -> String {
        guard isPrivate else { throw CryptoError(operation: "not a private key", detail: "") }
        return try Key.writeBIO { bio in PEM_write_bio_PrivateKey(bio, pkey, nil, nil, 0, nil, nil) }
    }

    /// The public key as SubjectPublicKeyInfo PEM.
    public func publicPEM() throws(CryptoError) -> String {
        try Key.writeBIO { bio in PEM_write_bio_PUBKEY(bio, pkey) }
    }

    /// The public key as a JWK (with `kid`, `alg` and `use` when given).
    public func publicJWK(kid: String? = nil) throws(CryptoError) -> Value {
        var jwk: [String: Value] = ["alg": .string(algorithm.rawValue), "use": "sig"]
        if let kid { jwk["kid"] = .string(kid) }
        switch algorithm {
        case .rs256:
            jwk["kty"] = "RSA"
            jwk["n"] = .string(Base64.encodeURL(try bignum("n")))
            jwk["e"] = .string(Base64.encodeURL(try bignum("e")))
        case .es256:
            var point = [UInt8](repeating: 0, count: 65)
            var length = 0
            guard EVP_PKEY_get_octet_string_param(pkey, "encoded-pub-key", &point, point.count, &length) == 1, length == 65 else {
                throw .openssl("reading the EC public point")
            }
            jwk["kty"] = "EC"
            jwk["crv"] = "P-256"
            jwk["x"] = .string(Base64.encodeURL(point[1..<33]))
            jwk["y"] = .string(Base64.encodeURL(point[33..<65]))
        }
        return .map(jwk)
    }

    private func bignum(_ name: String) throws(CryptoError) -> [UInt8] {
        var bn: OpaquePointer?
        guard EVP_PKEY_get_bn_param(pkey, name, &bn) == 1, let bn else { throw .openssl("reading RSA parameter \(name)") }
        defer { BN_free(bn) }
        var out = [UInt8](repeating: 0, count: Int((BN_num_bits(bn) + 7) / 8))
        BN_bn2bin(bn, &out)
        return out
    }

    // MARK: BIO helpers

    /// Runs `body` with a read-only memory BIO over `text`'s bytes, which must outlive the BIO
    /// (BIO_new_mem_buf does not copy), hence the closure.
    static func withMemoryBIO<T>(_ text: String, _ body: (OpaquePointer) -> T?) -> T? {
        var bytes = Array(text.utf8)
        return bytes.withUnsafeMutableBytes { p in
            guard let bio = BIO_new_mem_buf(p.baseAddress, Int32(p.count)) else { return nil }
            defer { BIO_free(bio) }
            return body(bio)
        }
    }

    static func writeBIO(_ write: (OpaquePointer) -> Int32) throws(CryptoError) -> String {
        guard let bio = BIO_new(BIO_s_mem()) else { throw .openssl("creating a memory BIO") }
        defer { BIO_free(bio) }
        guard write(bio) == 1 else { throw .openssl("writing PEM") }
        var data: UnsafeMutableRawPointer?
        let length = BIO_ctrl(bio, BIO_CTRL_INFO, 0, &data)
        guard length > 0, let data else { throw .openssl("reading PEM") }
        return String(decoding: UnsafeRawBufferPointer(start: data, count: length), as: UTF8.self)
    }
}
