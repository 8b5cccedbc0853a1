import HearthModel

/// Session cookies, as the Admin SDKs' `createSessionCookie` and `verifySessionCookie` use them
/// (https://firebase.google.com/docs/auth/admin/manage-cookies): a server exchanges a fresh ID
/// token for a cookie that lasts from 5 minutes to 2 weeks. The cookie is a JWT like the ID token,
/// with the same claims (uid, auth_time, sign-in provider, profile, custom claims), its own issuer
/// (`https://session.firebase.google.com/<project>`) and its own lifetime, signed by the same keys.
extension AuthService {
    /// The shortest and longest lifetime a session cookie may have, in seconds (Firebase's bounds).
    public static let sessionCookieLifetimes: ClosedRange<Int64> = 300...1_209_600

    public var sessionCookieIssuer: String { "https://session.firebase.google.com/\(configuration.projectID)" }

    /// A session cookie for the user `idToken` stands for, valid for `validSeconds`. Refusals are
    /// Identity Toolkit's: `INVALID_DURATION`, `MISSING_ID_TOKEN`, `INVALID_ID_TOKEN`,
    /// `TOKEN_EXPIRED` (expired or revoked), `USER_DISABLED`, `USER_NOT_FOUND`.
    public func createSessionCookie(idToken: String, validSeconds: Int64) async throws -> String {
        guard AuthService.sessionCookieLifetimes.contains(validSeconds) else {
            throw AuthFailure("INVALID_DURATION", "the valid duration must be between 5 minutes (300 s) and 2 weeks (1209600 s), not \(validSeconds) s")
        }
        let (_, claims) = try await session(idToken: idToken)
        let now = secondsNow()
        // Exchanged only while it is valid, with no clock skew: a cookie lasts far longer than
        // the token it comes from.
        guard let exp = claims["exp"]?.intValue, exp > now.seconds else { throw AuthFailure.tokenExpired }
        // An unsigned token (accepted in emulator mode) does not become a signed cookie: the
        // keys would vouch for claims Hearth never issued.
        if (try? JWT.decode(idToken))?.algorithm == "none" {
            throw AuthFailure("INVALID_ID_TOKEN", "an unsigned ID token cannot be exchanged for a session cookie")
        }
        var cookie = claims
        cookie["iss"] = .string(sessionCookieIssuer)
        cookie["iat"] = .int(now.seconds)
        cookie["exp"] = .int(now.seconds + validSeconds)
        let active = keys.active
        return try JWT.sign(cookie, key: active.key, kid: active.kid)
    }

    /// Verifies a session cookie as `verifyIDToken` verifies an ID token: signature, times,
    /// audience, the session issuer, subject; with `checkRevoked`, the user's state (disabled,
    /// tokens revoked after the cookie was made).
    public func verifySessionCookie(_ cookie: String, checkRevoked: Bool = true) async throws(TokenRejection) -> VerifiedToken {
        try await verify(cookie, issuer: sessionCookieIssuer, checkRevoked: checkRevoked)
    }
}
