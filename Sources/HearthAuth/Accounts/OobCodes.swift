import HearthModel

/// Out-of-band codes: what Firebase emails (verify an address, reset a password, verify a new
/// address before changing to it). Hearth sends no email: codes are listed by the Auth emulator's
/// endpoint, returned as links to the Admin SDK, and logged.
extension AuthService {
    /// `accounts:sendOobCode`. A client names its user with an ID token (VERIFY_EMAIL,
    /// VERIFY_AND_CHANGE_EMAIL) or an address (PASSWORD_RESET); the Admin SDK (`asAdmin`) names
    /// the address. With email enumeration protection, a client's reset for an unknown address
    /// succeeds and makes no code (nil).
    public func sendOobCode(kind requestType: String?, email: String?, idToken: String?, newEmail: String?, asAdmin: Bool) async throws -> (email: String, code: OobCode?) {
        guard let requestType, !requestType.isEmpty else { throw AuthFailure.missingRequestType }
        guard let kind = OobCode.Kind(rawValue: requestType) else { throw AuthFailure("INVALID_REQ_TYPE", "\(requestType) is not supported") }
        if kind == .emailSignIn { return try await emailSignInCode(email) }
        let user: UserRecord?
        switch kind {
        case .verifyEmail where !asAdmin, .verifyAndChangeEmail:
            // A client names its own account by its ID token, never by an address: otherwise
            // anyone could have a code made for someone else's account.
            let (signedIn, claims) = try await session(idToken: idToken)
            // Moving the account to another address is as sensitive as changing it.
            if kind == .verifyAndChangeEmail && !asAdmin { try requireRecentSignIn(claims) }
            user = signedIn
        default:
            guard let email, !email.isEmpty else { throw AuthFailure.missingEmail }
            try checkEmail(email)
            user = try await users.user(email: email)
            if user == nil {
                if kind == .passwordReset && configuration.emailEnumerationProtection && !asAdmin { return (email, nil) }
                throw AuthFailure.emailNotFound
            }
        }
        guard let user else { throw AuthFailure.userNotFound }
        var target: String? = nil
        if kind == .verifyAndChangeEmail {
            guard let newEmail, !newEmail.isEmpty else { throw AuthFailure.missingEmail }
            try checkEmail(newEmail)
            if let owner = try await users.user(email: newEmail), owner.uid != user.uid { throw AuthFailure.emailExists }
            target = newEmail
        }
        guard let address = user.email else { throw AuthFailure.missingEmail }
        let now = clock.now()
        let lifetime = kind == .passwordReset ? configuration.passwordResetLifetime : configuration.verifyEmailLifetime
        let code = OobCode(code: random.autoID(length: 48), kind: kind, uid: user.uid, email: target ?? address, newEmail: target,
                           createTime: now, expireTime: now + lifetime)
        try await users.storeOobCode(code)
        log("\(kind.rawValue) code for \(Printable.quoted(code.email, limit: 80)) (uid \(user.uid))")
        return (code.email, code)
    }

    /// A code that can still be used: `INVALID_OOB_CODE` if unknown or used, `EXPIRED_OOB_CODE`.
    func liveCode(_ code: String?) async throws -> OobCode {
        guard let code, !code.isEmpty else { throw AuthFailure.missingOobCode }
        guard code.utf8.count <= 256, let found = try await users.oobCode(code) else { throw AuthFailure.invalidOobCode }
        guard clock.now() < found.expireTime else { throw AuthFailure.expiredOobCode }
        return found
    }

    /// Uses up a code checked by `liveCode`; a concurrent use that got there first makes it invalid.
    func take(_ code: OobCode) async throws {
        guard try await users.takeOobCode(code.code) != nil else { throw AuthFailure.invalidOobCode }
    }

    /// `accounts:update {oobCode}`: applies a VERIFY_EMAIL code (the address is verified) or a
    /// VERIFY_AND_CHANGE_EMAIL one (the account moves to the verified new address, which ends its
    /// other sessions).
    public func applyOobCode(_ code: String?) async throws -> UserRecord {
        let found = try await liveCode(code)
        // Only the two kinds this applies: a password-reset or email sign-in code is not one.
        guard found.kind == .verifyEmail || found.kind == .verifyAndChangeEmail else { throw AuthFailure.invalidOobCode }
        guard let user = try await users.user(uid: found.uid) else { throw AuthFailure.userNotFound }
        guard !user.disabled else { throw AuthFailure.userDisabled }
        if found.kind == .verifyEmail {
            guard let email = user.email, EmailKey.of(email) == EmailKey.of(found.email) else { throw AuthFailure.invalidOobCode }
        }
        // Checked before the code is used up: the new address may have been taken since it was sent.
        if let newEmail = found.newEmail, let owner = try await users.user(email: newEmail), owner.uid != user.uid {
            throw AuthFailure.emailExists
        }
        try await take(found)
        let now = secondsNow()
        let updated = try await updateRecord(uid: found.uid) { record in
            record.emailVerified = true
            if let newEmail = found.newEmail {
                record.email = newEmail
                record.movePasswordProvider(to: newEmail)
                record.tokensValidAfterTime = now
            }
        }
        if found.newEmail != nil { try await users.revokeRefreshTokens(uid: found.uid) }
        return updated
    }

    /// `accounts:resetPassword`: without a new password, says what the code is for (the SDKs'
    /// `checkActionCode` and `verifyPasswordResetCode`); with one, sets it for a PASSWORD_RESET
    /// code, verifies the address the code reached, and ends the user's other sessions.
    public func resetPassword(oobCode: String?, newPassword: String?) async throws -> OobCode {
        let found = try await liveCode(oobCode)
        guard let newPassword else { return found }
        guard found.kind == .passwordReset else { throw AuthFailure.invalidOobCode }
        let hash = try await hashPassword(newPassword)
        guard let user = try await users.user(uid: found.uid) else { throw AuthFailure.userNotFound }
        // A code sent to an address the account no longer has resets nothing.
        guard let email = user.email, EmailKey.of(email) == EmailKey.of(found.email) else { throw AuthFailure.invalidOobCode }
        try await take(found)
        let now = secondsNow()
        _ = try await updateRecord(uid: found.uid) { record in
            record.passwordHash = hash
            record.passwordUpdatedAt = now
            record.tokensValidAfterTime = now
            if let email = record.email, EmailKey.of(email) == EmailKey.of(found.email) { record.emailVerified = true }
            record.linkPasswordProvider()
        }
        try await users.revokeRefreshTokens(uid: found.uid)
        return found
    }

    // MARK: email-link sign-in

    /// The method Firebase names email-link (passwordless) sign-in.
    static let emailLinkMethod = "emailLink"

    /// `sendOobCode` with `EMAIL_SIGNIN`: a code that signs `email` in, whether or not an account
    /// has it yet (https://firebase.google.com/docs/auth/ios/email-link-auth). It lasts as long as
    /// a password reset's.
    func emailSignInCode(_ email: String?) async throws -> (email: String, code: OobCode?) {
        try requireMethod(AuthService.emailLinkMethod)
        guard let email, !email.isEmpty else { throw AuthFailure.missingEmail }
        try checkEmail(email)
        let owner = try await users.user(email: email)
        let now = clock.now()
        let code = OobCode(code: random.autoID(length: 48), kind: .emailSignIn, uid: owner?.uid ?? "", email: email, newEmail: nil,
                           createTime: now, expireTime: now + configuration.passwordResetLifetime)
        try await users.storeOobCode(code)
        log("EMAIL_SIGNIN code for \(Printable.quoted(email, limit: 80))")
        return (email, code)
    }

    /// `accounts:signInWithEmailLink`: signs in the account with the code's address (made, with
    /// the address verified, when there is none), or, with `idToken`, gives that address to the
    /// signed-in user. Either way the address is verified and the session's provider is
    /// "password", as Firebase's. Refusals: `INVALID_OOB_CODE`, `EXPIRED_OOB_CODE`, `INVALID_EMAIL`
    /// (not the code's address), `USER_DISABLED`, `EMAIL_EXISTS` (linking an address another
    /// account has).
    public func signInWithEmailLink(email: String?, oobCode: String?, idToken: String? = nil) async throws -> SignInResult {
        try requireMethod(AuthService.emailLinkMethod)
        let found = try await liveCode(oobCode)
        guard found.kind == .emailSignIn else { throw AuthFailure.invalidOobCode }
        guard let email, !email.isEmpty else { throw AuthFailure.missingEmail }
        guard EmailKey.of(email) == EmailKey.of(found.email) else {
            throw AuthFailure.invalidEmail("The email provided does not match the sign-in email address.")
        }
        let owner = try await users.user(email: found.email)
        if let idToken {
            let (user, claims) = try await session(idToken: idToken)
            if let owner, owner.uid != user.uid { throw AuthFailure.emailExists }
            // Replacing an address the account already has is an email change: it needs a recent
            // sign-in and ends the other sessions, as `accounts:update` with an email does.
            let replacesAddress = user.email.map { EmailKey.of($0) != EmailKey.of(found.email) } ?? false
            if replacesAddress { try requireRecentSignIn(claims) }
            try await take(found)
            let now = secondsNow()
            let linked = try await updateRecord(uid: user.uid) { record in
                record.email = found.email
                record.emailVerified = true
                record.movePasswordProvider(to: found.email)
                record.linkPasswordProvider()
                if replacesAddress { record.tokensValidAfterTime = now }
            }
            if replacesAddress { try await users.revokeRefreshTokens(uid: user.uid) }
            return try await startSession(linked, provider: AuthService.passwordProvider, isNewUser: false)
        }
        if let owner {
            guard !owner.disabled else { throw AuthFailure.userDisabled }
            try await take(found)
            let signedIn = try await updateRecord(uid: owner.uid) { record in
                record.emailVerified = true
                record.linkPasswordProvider()
            }
            return try await startSession(signedIn, provider: AuthService.passwordProvider, isNewUser: false)
        }
        try await take(found)
        let user = try await create(NewUser(email: found.email, emailVerified: true,
                                            providerToLink: UserRecord.ProviderInfo(providerId: AuthService.passwordProvider, uid: found.email, email: found.email)))
        return try await startSession(user, provider: AuthService.passwordProvider, isNewUser: true)
    }

    /// Codes not yet used, for the Auth emulator's listing.
    public func pendingOobCodes(limit: Int = 1000) async throws -> [OobCode] {
        try await users.oobCodes(limit: limit)
    }
}
