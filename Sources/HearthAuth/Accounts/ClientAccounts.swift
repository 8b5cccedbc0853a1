import Foundation
import HearthModel

/// Changes a signed-in user asks for with `accounts:update` (Identity Toolkit's SetAccountInfo).
public struct AccountChanges: Sendable, Equatable {
    public var displayName: String?
    public var photoURL: String?
    public var email: String?
    public var password: String?
    /// `DISPLAY_NAME`, `PHOTO_URL`.
    public var deleteAttributes: [String] = []
    /// Provider ids to unlink (`password`, `phone`, `google.com`…).
    public var deleteProviders: [String] = []

    public init(displayName: String? = nil, photoURL: String? = nil, email: String? = nil, password: String? = nil,
                deleteAttributes: [String] = [], deleteProviders: [String] = []) {
        self.displayName = displayName
        self.photoURL = photoURL
        self.email = email
        self.password = password
        self.deleteAttributes = deleteAttributes
        self.deleteProviders = deleteProviders
    }

    public static let deletableAttributes: Set<String> = ["DISPLAY_NAME", "PHOTO_URL", "PASSWORD", "EMAIL"]

    /// Changing these needs a recent sign-in. Removing the password or the address counts too:
    /// it is half of replacing them.
    public var isSensitive: Bool {
        replacesCredentials || deleteProviders.contains("password") || deleteAttributes.contains("PASSWORD")
            || deleteAttributes.contains("EMAIL")
    }

    /// A new address or password ends every other session (Firebase's answer carries new tokens);
    /// only removing one does not, as in the Auth emulator (the JS SDK's unlink asks for none).
    public var replacesCredentials: Bool { email != nil || password != nil }
}

/// The client side of Identity Toolkit: what an app's Firebase SDK does for its own user.
extension AuthService {
    static let passwordProvider = "password"

    // MARK: sign-up and sign-in

    /// `accounts:signUp`: with nothing, a new anonymous user; with an email and a password, a new
    /// password user; with the ID token of a signed-in user as well, that password linked to the
    /// user (an anonymous user becomes permanent, keeping its uid).
    public func signUp(email: String?, password: String?, displayName: String? = nil, idToken: String? = nil) async throws -> SignInResult {
        if let idToken {
            return try await linkPassword(idToken: idToken, email: email, password: password)
        }
        if email == nil && password == nil {
            // Firebase's answer when anonymous sign-in is switched off.
            guard configuration.signInMethods.contains("anonymous") else { throw AuthFailure("ADMIN_ONLY_OPERATION") }
            let user = try await create(NewUser(displayName: displayName))
            return try await startSession(user, provider: "anonymous", isNewUser: true)
        }
        try requireMethod(AuthService.passwordProvider)
        guard let email, !email.isEmpty else { throw AuthFailure.missingEmail }
        guard let password, !password.isEmpty else { throw AuthFailure.missingPassword }
        try checkEmail(email)
        // A taken address is the answer before the password's strength (as Identity Toolkit
        // answers), and spares a hash; the insert still checks it, against a concurrent sign-up.
        if try await users.user(email: email) != nil { throw AuthFailure.emailExists }
        let hash = try await hashPassword(password)
        let now = secondsNow()
        var request = NewUser(email: email, displayName: displayName,
                              providerToLink: UserRecord.ProviderInfo(providerId: AuthService.passwordProvider, uid: email, email: email))
        request.uid = nil
        let user = try await create(request) { record in
            record.passwordHash = hash
            record.passwordUpdatedAt = now
        }
        return try await startSession(user, provider: AuthService.passwordProvider, isNewUser: true)
    }

    func linkPassword(idToken: String, email: String?, password: String?) async throws -> SignInResult {
        try requireMethod(AuthService.passwordProvider)
        let (user, claims) = try await session(idToken: idToken)
        guard let email, !email.isEmpty else { throw AuthFailure.missingEmail }
        guard let password, !password.isEmpty else { throw AuthFailure.missingPassword }
        try checkEmail(email)
        if user.passwordHash != nil || user.hasPasswordProvider {
            throw AuthFailure("PROVIDER_ALREADY_LINKED")
        }
        // An anonymous user becomes permanent freely; giving a password to an account that has
        // another way in is as sensitive as changing its password.
        let anonymous = user.email == nil && user.providerData.isEmpty
        if !anonymous { try requireRecentSignIn(claims) }
        let newAddress = user.email.map { EmailKey.of($0) != EmailKey.of(email) } ?? false
        let hash = try await hashPassword(password)
        let now = secondsNow()
        let linked = try await updateRecord(uid: user.uid) { record in
            if record.email.map({ EmailKey.of($0) != EmailKey.of(email) }) ?? true { record.emailVerified = false }
            record.email = email
            record.passwordHash = hash
            record.passwordUpdatedAt = now
            record.linkPasswordProvider()
            if newAddress { record.tokensValidAfterTime = now }
        }
        if newAddress { try await users.revokeRefreshTokens(uid: user.uid) }
        return try await startSession(linked, provider: AuthService.passwordProvider, isNewUser: false)
    }

    /// `accounts:signInWithPassword`. Failed attempts for one address are limited (a token bucket:
    /// `TOO_MANY_ATTEMPTS_TRY_LATER` once spent); with email enumeration protection a wrong
    /// password and an unknown address are both `INVALID_LOGIN_CREDENTIALS`.
    public func signInWithPassword(email: String?, password: String?) async throws -> SignInResult {
        try requireMethod(AuthService.passwordProvider)
        guard let email else { throw AuthFailure.missingEmail }
        guard let password, !password.isEmpty else { throw AuthFailure.missingPassword }
        try checkEmail(email)
        let key = EmailKey.of(email)
        let now = clock.now()
        // The attempt takes a token before the (slow) check, so parallel guesses cannot all pass
        // a full bucket; a right password gives it back.
        guard attempts.acquire(key, now: now) else { throw AuthFailure.tooManyAttempts }
        let protected = configuration.emailEnumerationProtection
        let user = try await users.user(email: email)
        // An unknown address or a user without a password costs the same scrypt as a wrong
        // password, so timing does not tell which addresses have accounts.
        var matches = false
        if password.utf8.count <= 4096 {
            let checked: PasswordHash
            if let hash = user?.passwordHash { checked = hash } else { checked = try await decoyHash() }
            matches = await AuthService.passwordMatches(password, checked)
        }
        guard let user else { throw protected ? AuthFailure.invalidLoginCredentials : AuthFailure.emailNotFound }
        guard user.passwordHash != nil, matches, let stored = user.passwordHash else {
            throw protected ? AuthFailure.invalidLoginCredentials : AuthFailure.invalidPassword
        }
        attempts.refund(key)
        var signedIn = user
        // A hash of another algorithm or cost (imported from Firebase, or made before the cost was
        // raised) is replaced by one of today's settings while the password is at hand.
        if stored.algorithm != .standardScrypt || stored.costLog2 != configuration.passwords.costLog2 || stored.blockSize != configuration.passwords.blockSize,
           let rehashed = try? await hashPassword(password) {
            signedIn = try await updateRecord(uid: user.uid) { $0.passwordHash = rehashed }
        }
        return try await startSession(signedIn, provider: AuthService.passwordProvider, isNewUser: false)
    }

    // MARK: the signed-in user

    /// `accounts:lookup {idToken}`: the signed-in user.
    public func lookup(idToken: String?) async throws -> UserRecord {
        try await session(idToken: idToken).user
    }

    /// `accounts:update {idToken, …}`. A new email or password needs a recent sign-in, ends the
    /// user's other sessions (their ID and refresh tokens stop working, as on Firebase) and, when
    /// asked, returns a new session; a new email is unverified.
    public func updateAccount(idToken: String?, _ changes: AccountChanges, returnSecureToken: Bool) async throws -> (user: UserRecord, session: SignInResult?) {
        let (user, claims) = try await session(idToken: idToken)
        if changes.isSensitive { try requireRecentSignIn(claims) }
        if let email = changes.email {
            // With email enumeration protection, an address is changed only through a verified
            // change-of-address code (verifyBeforeUpdateEmail), as Firebase documents.
            if configuration.emailEnumerationProtection {
                throw AuthFailure("OPERATION_NOT_ALLOWED", "Please verify the new email before changing email.")
            }
            try checkEmail(email)
        }
        if let name = changes.displayName { try check { try UserRules.checkDisplayName(name) } }
        if let url = changes.photoURL, !url.isEmpty { try check { try UserRules.checkPhotoURL(url) } }
        for attribute in changes.deleteAttributes where !AccountChanges.deletableAttributes.contains(attribute) {
            throw AuthFailure.invalidArgument("deleteAttribute \(Printable.quoted(attribute, limit: 40)) is not one of DISPLAY_NAME, PHOTO_URL, PASSWORD, EMAIL")
        }
        let hash: PasswordHash? = if let password = changes.password { try await hashPassword(password) } else { nil }
        let now = secondsNow()
        let updated = try await updateRecord(uid: user.uid) { record in
            if let name = changes.displayName { record.displayName = name.isEmpty ? nil : name }
            if let url = changes.photoURL { record.photoURL = url.isEmpty ? nil : url }
            if changes.deleteAttributes.contains("DISPLAY_NAME") { record.displayName = nil }
            if changes.deleteAttributes.contains("PHOTO_URL") { record.photoURL = nil }
            // The password provider is the address and the password together: without either it goes.
            if changes.deleteAttributes.contains("PASSWORD") || changes.deleteAttributes.contains("EMAIL") { record.unlinkPassword() }
            if changes.deleteAttributes.contains("EMAIL") {
                record.email = nil
                record.emailVerified = false
            }
            for provider in changes.deleteProviders {
                record.providerData.removeAll { $0.providerId == provider }
                if provider == AuthService.passwordProvider {
                    // Unlinking the password takes the address with it, as the Auth emulator does.
                    record.unlinkPassword()
                    record.email = nil
                    record.emailVerified = false
                }
                if provider == "phone" { record.phoneNumber = nil }
            }
            if let email = changes.email {
                record.email = email
                record.emailVerified = false
                record.movePasswordProvider(to: email)
            }
            if let hash {
                record.passwordHash = hash
                record.passwordUpdatedAt = now
                record.linkPasswordProvider()
            }
            if changes.replacesCredentials { record.tokensValidAfterTime = now }
        }
        guard changes.replacesCredentials else { return (updated, nil) }
        try await users.revokeRefreshTokens(uid: user.uid)
        // The new session signed in with what was just set: a password makes it a password session.
        let provider = changes.password != nil ? AuthService.passwordProvider
            : claims["firebase"]?["sign_in_provider"]?.stringValue ?? AuthService.passwordProvider
        return (updated, returnSecureToken ? try await startSession(updated, provider: provider, isNewUser: false) : nil)
    }

    /// `accounts:delete {idToken}`: the user deletes itself (a recent sign-in needed); its
    /// `onUserDeleted` triggers run.
    public func deleteAccount(idToken: String?) async throws {
        let (user, claims) = try await session(idToken: idToken)
        try requireRecentSignIn(claims)
        _ = try await users.delete(uid: user.uid, time: clock.now())
    }

    // MARK: helpers

    /// Creates a user (uid from the generator unless given), letting `adjust` set what `NewUser`
    /// does not carry (the password hash), in the same write: the created event sees all of it.
    func create(_ request: NewUser, adjust: (inout UserRecord) -> Void = { _ in }) async throws -> UserRecord {
        do {
            return try await createUser(request, adjust: adjust)
        } catch let error as HTTPSError {
            throw AuthFailure.from(error)
        }
    }

    func updateRecord(uid: String, _ change: @escaping @Sendable (inout UserRecord) -> Void) async throws -> UserRecord {
        do {
            return try await users.update(uid: uid, change)
        } catch let error as HTTPSError {
            throw AuthFailure.from(error)
        }
    }

    /// What `accounts:createAuthUri` answers for an address (the SDKs' fetchSignInMethodsForEmail):
    /// whether it has an account, its providers (`password` for an address account, as Firebase
    /// lists it) and its sign-in methods (`password` with a password, `emailLink` without one,
    /// then each linked identity provider). With email enumeration protection, nothing: nil.
    /// Refusals: `MISSING_IDENTIFIER`, `INVALID_IDENTIFIER`, `MISSING_CONTINUE_URI`,
    /// `INVALID_CONTINUE_URI`.
    public func signInMethods(identifier: String?, continueURI: String?) async throws -> (registered: Bool, providers: [String], methods: [String])? {
        guard let identifier, !identifier.isEmpty else { throw AuthFailure("MISSING_IDENTIFIER") }
        guard let continueURI, !continueURI.isEmpty else { throw AuthFailure("MISSING_CONTINUE_URI") }
        do { try UserRules.checkEmail(identifier) } catch { throw AuthFailure("INVALID_IDENTIFIER") }
        guard let url = URLComponents(string: continueURI), url.scheme != nil, url.host?.isEmpty == false else {
            throw AuthFailure("INVALID_CONTINUE_URI")
        }
        if configuration.emailEnumerationProtection { return nil }
        guard let user = try await users.user(email: identifier) else { return (false, [], []) }
        var providers: [String] = [], methods: [String] = []
        if user.providerData.contains(where: { $0.providerId == AuthService.passwordProvider }) || user.passwordHash != nil {
            providers.append(AuthService.passwordProvider)
            methods.append(user.passwordHash != nil ? AuthService.passwordProvider : "emailLink")
        }
        for provider in user.providerData.map(\.providerId) where provider != AuthService.passwordProvider && provider != "phone" && !providers.contains(provider) {
            providers.append(provider)
            methods.append(provider)
        }
        return (true, providers, methods)
    }

    func checkEmail(_ email: String) throws {
        do { try UserRules.checkEmail(email) } catch { throw AuthFailure.invalidEmail() }
    }

    /// Runs a `UserRules` check, its refusal in Identity Toolkit's words.
    func check(_ rule: () throws -> Void) throws {
        do { try rule() } catch let error as HTTPSError { throw AuthFailure.from(error) }
    }
}
