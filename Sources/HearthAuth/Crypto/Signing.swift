import COpenSSL

extension Key {
    /// Signs `message` with SHA-256: RS256 gives PKCS#1 v1.5, ES256 the raw 64-byte r||s form JWTs use.
    public func sign<C: Collection>(_ message: C) throws(CryptoError) -> [UInt8] where C.Element == UInt8 {
        guard isPrivate else { throw CryptoError(operation: "signing needs a private key", detail: "") }
        let bytes = Array(message)
        guard let ctx = EVP_MD_CTX_new() else { throw .openssl("creating a digest context") }
        defer { EVP_MD_CTX_free(ctx) }
        guard EVP_DigestSignInit(ctx, nil, EVP_sha256(), nil, pkey) == 1 else { throw .openssl("starting a signature") }
        var length = 0
        guard EVP_DigestSign(ctx, nil, &length, bytes, bytes.count) == 1 else { throw .openssl("sizing a signature") }
        var signature = [UInt8](repeating: 0, count: length)
        guard EVP_DigestSign(ctx, &signature, &length, bytes, bytes.count) == 1 else { throw .openssl("signing") }
        signature.removeLast(signature.count - length)
        return algorithm == .es256 ? try Key.derToRaw(signature) : signature
    }

    /// Checks a signature over `message`; false for a wrong or malformed signature.
    public func verify<M: Collection, S: Collection>(_ signature: S, for message: M) -> Bool where M.Element == UInt8, S.Element == UInt8 {
        var sig = Array(signature)
        if algorithm == .es256 {
            guard sig.count == 64, let der = try? Key.rawToDER(sig) else { return false }
            sig = der
        } else if sig.count != Int(EVP_PKEY_get_size(pkey)) {
            return false
        }
        let bytes = Array(message)
        guard let ctx = EVP_MD_CTX_new() else { return false }
        defer { EVP_MD_CTX_free(ctx) }
        guard EVP_DigestVerifyInit(ctx, nil, EVP_sha256(), nil, pkey) == 1 else {
            ERR_clear_error()
            return false
        }
        let ok = EVP_DigestVerify(ctx, sig, sig.count, bytes, bytes.count) == 1
        if !ok { ERR_clear_error() }
        return ok
    }

    /// DER `ECDSA-Sig-Value` → raw r||s, each left-padded to 32 bytes.
    static func derToRaw(_ der: [UInt8]) throws(CryptoError) -> [UInt8] {
        let sig: OpaquePointer? = der.withUnsafeBufferPointer { p in
            var cursor: UnsafePointer<UInt8>? = p.baseAddress
            return d2i_ECDSA_SIG(nil, &cursor, p.count)
        }
        guard let sig else { throw .openssl("decoding an ECDSA signature") }
        defer { ECDSA_SIG_free(sig) }
        var r: OpaquePointer?, s: OpaquePointer?
        ECDSA_SIG_get0(sig, &r, &s)
        var raw = [UInt8](repeating: 0, count: 64)
        let ok = raw.withUnsafeMutableBufferPointer { p in
            BN_bn2binpad(r, p.baseAddress, 32) == 32 && BN_bn2binpad(s, p.baseAddress! + 32, 32) == 32
        }
        guard ok else { throw CryptoError(operation: "ECDSA signature component longer than 32 bytes", detail: "") }
        return raw
    }

    /// Raw r||s → DER `ECDSA-Sig-Value`.
    static func rawToDER(_ raw: [UInt8]) throws(CryptoError) -> [UInt8] {
        guard raw.count == 64 else { throw CryptoError(operation: "an ES256 signature has 64 bytes", detail: "got \(raw.count)") }
        guard let sig = ECDSA_SIG_new() else { throw .openssl("creating an ECDSA signature") }
        defer { ECDSA_SIG_free(sig) }
        let r = raw.withUnsafeBufferPointer { BN_bin2bn($0.baseAddress, 32, nil) }
        let s = raw.withUnsafeBufferPointer { BN_bin2bn($0.baseAddress! + 32, 32, nil) }
        guard let r, let s, ECDSA_SIG_set0(sig, r, s) == 1 else {  // set0 takes ownership of r and s
            throw .openssl("building an ECDSA signature")
        }
        let length = i2d_ECDSA_SIG(sig, nil)
        guard length > 0 else { throw .openssl("encoding an ECDSA signature") }
        var der = [UInt8](repeating: 0, count: Int(length))
        der.withUnsafeMutableBufferPointer { p in
            var cursor: UnsafeMutablePointer<UInt8>? = p.baseAddress
            _ = i2d_ECDSA_SIG(sig, &cursor)
        }
        return der
    }
}
