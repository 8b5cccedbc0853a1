import HearthModel

/// What `accounts:signInWithIdp` answers (Identity Toolkit's VerifyAssertionResponse).
public struct ProviderSignIn: Sendable {
    public var providerId: String
    /// The provider's id for the account (`sub`).
    public var providerUID: String
    public var email: String?
    public var emailVerified: Bool
    public var displayName: String?
    public var photoURL: String?
    /// The provider token's claims (the response's `rawUserInfo`).
    public var rawUserInfo: [String: Value]
    /// The session; nil when `needConfirmation` (the address belongs to another account).
    public var session: SignInResult?
    /// An account with this address exists and the provider did not verify it: the user must sign
    /// in to that account and link the provider (the SDKs' account-exists-with-different-credential).
    public var needConfirmation: Bool
    public var isNewUser: Bool

    /// Identity Toolkit's `federatedId`: Google's is its issuer and the account id; others the id.
    public var federatedID: String {
        providerId == "google.com" ? "https://accounts.google.com/\(providerUID)" : providerUID
    }
}

extension AuthService {
    /// `accounts:signInWithIdp` with a provider's OpenID Connect ID token (the `postBody` the
    /// SDKs send: `id_token=…&providerId=google.com`, and for Apple `&nonce=<raw nonce>`).
    ///
    /// The token is verified against the provider's keys, issuers and the configured client ids
    /// (emulator mode: not verified, as the Auth emulator accepts any token). Then, with Firebase's
    /// "one account per email": the account linked to that provider account signs in; else, with
    /// `idToken`, the provider is linked to that signed-in user; else an account with the same
    /// address gets the provider linked when the provider verified the address (an unverified
    /// password on it is dropped, as Firebase does for a trusted provider), or answers
    /// `needConfirmation`; else a new account is created (`onUserCreated` runs).
    public func signInWithIdp(postBody: String, idToken: String?, autoCreate: Bool = true) async throws -> ProviderSignIn {
        var form: [String: String] = [:]
        for (k, v) in PercentEncoding.formItems(postBody) { form[k] = v }
        guard let providerId = form["providerId"]?.lowercased(), !providerId.isEmpty else { throw AuthFailure("INVALID_IDP_RESPONSE", "the postBody names no providerId") }
        // Emulator mode, as the Auth emulator: any provider (github.com, facebook.com… have no
        // switch here), its fake claims in an access_token as well as in an id_token.
        if !configuration.emulatorMode || Configuration.allSignInMethods.contains(providerId) { try requireMethod(providerId) }
        let fakeAccessToken = configuration.emulatorMode ? form["access_token"] : nil
        guard let token = form["id_token"] ?? fakeAccessToken, !token.isEmpty else {
            throw AuthFailure.invalidIDPResponse("an id_token is required for \(providerId) (access tokens alone are not accepted)")
        }
        let claims = try await verifyProviderToken(token, providerId: providerId, rawNonce: form["nonce"])
        let sub = claims["sub"]?.stringValue ?? ""
        let email = claims["email"]?.stringValue
        let emailVerified = claims["email_verified"]?.boolValue ?? (claims["email_verified"]?.stringValue == "true")
        var result = ProviderSignIn(providerId: providerId, providerUID: sub, email: email, emailVerified: email != nil && emailVerified,
                                    displayName: claims["name"]?.stringValue ?? AuthService.appleName(form["user"]), photoURL: claims["picture"]?.stringValue,
                                    rawUserInfo: claims, session: nil, needConfirmation: false, isNewUser: false)
        let info = UserRecord.ProviderInfo(providerId: providerId, uid: sub, email: email, displayName: result.displayName, photoURL: result.photoURL)

        if let idToken {
            // Linking to the signed-in user.
            let (user, _) = try await session(idToken: idToken)
            if let owner = try await users.user(provider: providerId, providerUID: sub), owner.uid != user.uid {
                throw AuthFailure.federatedUserIDAlreadyLinked
            }
            if let email, let owner = try await users.user(email: email), owner.uid != user.uid { throw AuthFailure.emailExists }
            let verified = result.emailVerified
            let linked = try await updateRecord(uid: user.uid) { record in
                record.providerData.removeAll { $0.providerId == providerId }
                record.providerData.append(info)
                if record.email == nil, let email {
                    record.email = email
                    record.emailVerified = verified
                }
            }
            result.session = try await startSession(linked, provider: providerId, isNewUser: false)
            return result
        }
        if let existing = try await users.user(provider: providerId, providerUID: sub) {
            result.session = try await startSession(existing, provider: providerId, isNewUser: false)
            return result
        }
        // Re-authentication (`autoCreate: false`) signs in to an account this provider already
        // has; it never makes or changes one.
        guard autoCreate else { throw AuthFailure.userNotFound }
        if let email, let owner = try await users.user(email: email) {
            guard result.emailVerified else {
                result.needConfirmation = true
                return result
            }
            guard !owner.disabled else { throw AuthFailure.userDisabled }
            let takenOver = !owner.emailVerified
            let now = secondsNow()
            let linked = try await updateRecord(uid: owner.uid) { record in
                if takenOver {
                    // Whoever set up the account with an unverified address may not own it: its
                    // password, phone and providers go, and so do its sessions.
                    record.passwordHash = nil
                    record.passwordUpdatedAt = nil
                    record.phoneNumber = nil
                    record.providerData.removeAll()
                    record.tokensValidAfterTime = now
                }
                record.emailVerified = true
                if let name = info.displayName { record.displayName = name }
                if let photo = info.photoURL, (try? UserRules.checkPhotoURL(photo)) != nil { record.photoURL = photo }
                // The address may have had another account at this provider before (recycled).
                record.providerData.removeAll { $0.providerId == providerId }
                record.providerData.append(info)
            }
            if takenOver { try await users.revokeRefreshTokens(uid: owner.uid) }
            result.session = try await startSession(linked, provider: providerId, isNewUser: false)
            return result
        }
        let user = try await create(NewUser(email: email, emailVerified: result.emailVerified, displayName: result.displayName,
                                            photoURL: result.photoURL.flatMap { (try? UserRules.checkPhotoURL($0)) != nil ? $0 : nil },
                                            providerToLink: info))
        result.isNewUser = true
        result.session = try await startSession(user, provider: providerId, isNewUser: true)
        return result
    }

    /// The name Sign in with Apple gives the app once, which the iOS SDK passes in the postBody's
    /// `user` (`{"name":{"firstName":…,"lastName":…}}`): Apple's ID token has none.
    static func appleName(_ user: String?) -> String? {
        guard let user, let parsed = try? JSONParser.parse(Array(user.utf8)), let name = parsed["name"] else { return nil }
        let parts = [name["firstName"]?.stringValue, name["lastName"]?.stringValue].compactMap { $0 }.filter { !$0.isEmpty }
        return parts.isEmpty ? nil : parts.joined(separator: " ")
    }

    /// A provider ID token's claims once its signature, issuer, audience, times and nonce check
    /// out; `INVALID_IDP_RESPONSE` (or `MISSING_OR_INVALID_NONCE`) naming what did not.
    func verifyProviderToken(_ token: String, providerId: String, rawNonce: String?) async throws -> [String: Value] {
        // The Auth emulator also takes a fake id_token written as a JSON object.
        if configuration.emulatorMode, token.hasPrefix("{") {
            guard case .map(let claims)? = try? JSONParser.parse(Array(token.utf8)), let sub = claims["sub"]?.stringValue, !sub.isEmpty, sub.utf8.count <= 255 else {
                throw AuthFailure.invalidIDPResponse("the fake id_token must be a JSON object with a \"sub\"")
            }
            return claims
        }
        let jwt: DecodedJWT
        do { jwt = try JWT.decode(token) } catch { throw AuthFailure.invalidIDPResponse("the id_token is not a JWT: \(error)") }
        let claims = jwt.claims
        guard let sub = claims["sub"]?.stringValue, !sub.isEmpty, sub.utf8.count <= 255 else {
            throw AuthFailure.invalidIDPResponse("the id_token has no subject")
        }
        if let tokenNonce = claims["nonce"]?.stringValue {
            guard let rawNonce, !rawNonce.isEmpty else { throw AuthFailure("MISSING_OR_INVALID_NONCE", "the id_token carries a nonce; the request must send the raw nonce") }
            let hashed = Hex.encode(Crypto.sha256(Array(rawNonce.utf8)))
            guard tokenNonce == hashed else { throw AuthFailure("MISSING_OR_INVALID_NONCE", "the nonce does not match the id_token's") }
        } else if rawNonce?.isEmpty == false {
            throw AuthFailure("MISSING_OR_INVALID_NONCE", "the request sends a nonce the id_token does not carry")
        }
        // The Auth emulator takes provider tokens on trust: the Emulator UI and tests make them up.
        if configuration.emulatorMode { return claims }
        guard let provider = configuration.identityProviders.first(where: { $0.id == providerId }), !provider.audiences.isEmpty else {
            throw AuthFailure.invalidIDPResponse("\(providerId) has no client ids configured (runtime.toml [auth] \(providerId.split(separator: ".")[0])_client_ids)")
        }
        guard let kid = jwt.keyID else { throw AuthFailure.invalidIDPResponse("the id_token names no key (kid)") }
        let key: Key?
        do { key = try await provider.keys.key(id: kid) } catch {
            log("\(providerId) keys could not be read: \(error)")
            throw AuthFailure.invalidIDPResponse("the \(providerId) signing keys could not be read")
        }
        guard let key else { throw AuthFailure.invalidIDPResponse("the id_token is signed with an unknown key '\(Printable.quoted(kid, limit: 64))'") }
        do {
            try JWT.verifySignature(jwt, keys: [kid: key])
            try checkTimes(claims, maxLifetime: nil)
        } catch {
            throw AuthFailure.invalidIDPResponse("the id_token is not valid: \(error)")
        }
        guard let issuer = claims["iss"]?.stringValue, provider.issuers.contains(issuer) else {
            throw AuthFailure.invalidIDPResponse("the id_token's issuer is not \(provider.issuers[0])")
        }
        let audiences: [String]
        switch claims["aud"] {
        case .string(let a)?: audiences = [a]
        case .array(let items)?: audiences = items.compactMap(\.stringValue)
        default: audiences = []
        }
        guard audiences.contains(where: provider.audiences.contains) else {
            throw AuthFailure.invalidIDPResponse("the id_token is for another client (aud \(Printable.quoted(audiences.joined(separator: ","), limit: 120)))")
        }
        return claims
    }
}
