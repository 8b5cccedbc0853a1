import HearthModel

/// Verifies Firebase App Check tokens against configured keys (a JWKS): the signature with the key
/// the token's `kid` names (algorithm pinned by the key), expiry and issue time within the skew, an
/// audience that names the project (`projects/<id>`), and an App Check issuer.
public struct AppCheckVerifier: Sendable {
    public let keys: [String: Key]
    public let projectID: String
    public let issuerPrefix: String
    let clock: any Clock
    let skew: Duration

    public init(keys: [String: Key], projectID: String, issuerPrefix: String = "https://firebaseappcheck.googleapis.com/",
                clock: any Clock, skew: Duration = .seconds(300)) {
        self.keys = keys
        self.projectID = projectID
        self.issuerPrefix = issuerPrefix
        self.clock = clock
        self.skew = skew
    }

    /// Keys from a JWKS document (`{"keys": [...]}`), by `kid`.
    public static func keys(jwks: Value) throws -> [String: Key] {
        var out: [String: Key] = [:]
        for jwk in jwks["keys"]?.arrayValue ?? [] {
            guard let kid = jwk["kid"]?.stringValue else { throw CryptoError(operation: "an App Check JWK has no kid", detail: "") }
            out[kid] = try Key.publicKey(jwk: jwk)
        }
        return out
    }

    /// The app id (`sub`) and claims of a valid token.
    public func verify(_ token: String) throws(TokenRejection) -> (appID: String, claims: [String: Value]) {
        let jwt = try JWT.decode(token)
        try JWT.verifySignature(jwt, keys: keys)
        let c = jwt.claims
        guard let expClaim = c["exp"], let iatClaim = c["iat"] else { throw .invalidClaim("exp and iat must be integers") }
        let exp = try AuthService.numericDate(expClaim, "exp")
        let iat = try AuthService.numericDate(iatClaim, "iat")
        let now = clock.now()
        if exp + skew <= now { throw .expired(at: exp) }
        if iat > now + skew { throw .issuedInFuture(at: iat) }
        let audiences: [String] = c["aud"]?.arrayValue?.compactMap(\.stringValue) ?? c["aud"]?.stringValue.map { [$0] } ?? []
        guard audiences.contains("projects/\(projectID)") else { throw .wrongAudience(audiences.joined(separator: ",")) }
        guard let iss = c["iss"]?.stringValue, iss.hasPrefix(issuerPrefix) else { throw .wrongIssuer(c["iss"]?.stringValue ?? "") }
        guard let sub = c["sub"]?.stringValue, !sub.isEmpty else { throw .badSubject("missing app id") }
        return (sub, c)
    }
}
