import HearthModel

/// Why a token was refused. The reason is for logs and for `hearth auth verify`; callers of the
/// HTTP API only ever learn that the token was not accepted.
public enum TokenRejection: Error, Sendable, Equatable, CustomStringConvertible {
    case tooLarge(bytes: Int)
    case malformed(String)
    case unsignedTokenRefused
    case algorithmNotAccepted(header: String, keyRequires: String)
    case unknownKey(kid: String?)
    case badSignature
    case expired(at: Timestamp)
    case issuedInFuture(at: Timestamp)
    case wrongAudience(String)
    case wrongIssuer(String)
    case badSubject(String)
    case revoked
    case userDisabled
    case userNotFound
    case invalidClaim(String)

    public var description: String {
        switch self {
        case .tooLarge(let n): return "token is \(n) bytes, more than the 16 KB allowed"
        case .malformed(let why): return "malformed token: \(why)"
        case .unsignedTokenRefused: return "unsigned tokens (alg none) are refused outside emulator mode"
        case .algorithmNotAccepted(let header, let key): return "algorithm \(header) is not accepted; the signing key requires \(key)"
        case .unknownKey(let kid): return kid.map { "no key with kid '\($0)'" } ?? "the token names no key (kid)"
        case .badSignature: return "the signature does not match"
        case .expired(let t): return "the token expired at \(t)"
        case .issuedInFuture(let t): return "the token is issued in the future (\(t))"
        case .wrongAudience(let a): return "wrong audience '\(a)'"
        case .wrongIssuer(let i): return "wrong issuer '\(i)'"
        case .badSubject(let why): return "bad subject: \(why)"
        case .revoked: return "the token was revoked"
        case .userDisabled: return "the user is disabled"
        case .userNotFound: return "the user does not exist"
        case .invalidClaim(let why): return "invalid claim: \(why)"
        }
    }
}

/// A JSON Web Token split into its parts, not yet verified.
public struct DecodedJWT: Sendable {
    public var header: [String: Value]
    public var claims: [String: Value]
    /// `base64url(header) "." base64url(payload)`: what the signature covers.
    public var signingInput: [UInt8]
    public var signature: [UInt8]

    public var algorithm: String? { header["alg"]?.stringValue }
    public var keyID: String? { header["kid"]?.stringValue }
}

/// JWT encoding (RFC 7519, compact form) and strict decoding.
public enum JWT {
    public static let maxTokenBytes = 16 * 1024

    /// Signs `claims` with `key`; the header carries the key's algorithm and `kid`.
    public static func sign(_ claims: [String: Value], key: Key, kid: String?, header extra: [String: Value] = [:]) throws(CryptoError) -> String {
        var header = extra
        header["alg"] = .string(key.algorithm.rawValue)
        header["typ"] = "JWT"
        if let kid { header["kid"] = .string(kid) }
        let input = Base64.encodeURL(JSONWriter.encode(.map(header), options: .sorted)) + "." + Base64.encodeURL(JSONWriter.encode(.map(claims), options: .sorted))
        let signature = try key.sign(Array(input.utf8))
        return input + "." + Base64.encodeURL(signature)
    }

    /// An unsigned token (`alg: none`, empty signature), as the Firebase emulators issue.
    public static func unsigned(_ claims: [String: Value]) -> String {
        Base64.encodeURL(JSONWriter.encode(["alg": "none", "typ": "JWT"], options: .sorted)) + "."
            + Base64.encodeURL(JSONWriter.encode(.map(claims), options: .sorted)) + "."
    }

    /// Splits and decodes a token without trusting it: exactly three parts, strict base64url
    /// without padding, header and payload JSON objects, at most 16 KB.
    public static func decode(_ token: String) throws(TokenRejection) -> DecodedJWT {
        let bytes = token.utf8.count
        if bytes > maxTokenBytes { throw .tooLarge(bytes: bytes) }
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3 else { throw .malformed("expected 3 dot-separated parts, found \(parts.count)") }
        guard !parts[0].isEmpty, !parts[1].isEmpty else { throw .malformed("empty header or payload") }
        guard let headerBytes = Base64.decodeURL(parts[0]) else { throw .malformed("header is not base64url") }
        guard let payloadBytes = Base64.decodeURL(parts[1]) else { throw .malformed("payload is not base64url") }
        guard let signature = Base64.decodeURL(parts[2]) else { throw .malformed("signature is not base64url") }
        let header: Value, payload: Value
        do { header = try JSONParser.parse(headerBytes, options: JSONReadOptions(maxDepth: 16)) } catch { throw .malformed("header is not JSON (\(error.message))") }
        do { payload = try JSONParser.parse(payloadBytes, options: JSONReadOptions(maxDepth: 32)) } catch { throw .malformed("payload is not JSON (\(error.message))") }
        guard case .map(let h) = header else { throw .malformed("header is not a JSON object") }
        guard case .map(let c) = payload else { throw .malformed("payload is not a JSON object") }
        guard h["alg"]?.stringValue != nil else { throw .malformed("header has no alg") }
        return DecodedJWT(header: h, claims: c, signingInput: Array(parts[0].utf8) + [0x2E] + Array(parts[1].utf8), signature: signature)
    }

    /// Checks a decoded token's signature with the key its `kid` names. The algorithm is the key's:
    /// a header asking for another one (`none`, `HS256`…) is refused, whatever it says.
    public static func verifySignature(_ jwt: DecodedJWT, keys: [String: Key], allowUnsigned: Bool = false) throws(TokenRejection) {
        let alg = jwt.algorithm ?? ""
        if alg == "none" {
            guard allowUnsigned else { throw .unsignedTokenRefused }
            guard jwt.signature.isEmpty else { throw .malformed("an unsigned token must have an empty signature") }
            return
        }
        guard let kid = jwt.keyID, let key = keys[kid] else { throw .unknownKey(kid: jwt.keyID) }
        guard alg == key.algorithm.rawValue else { throw .algorithmNotAccepted(header: alg, keyRequires: key.algorithm.rawValue) }
        guard key.verify(jwt.signature, for: jwt.signingInput) else { throw .badSignature }
    }
}
