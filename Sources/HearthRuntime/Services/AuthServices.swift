import HearthAuth
import HearthModel
import HearthStore

/// The auth services: the Admin SDK's auth operations as units reach them.
enum AuthServices {
    static func register(_ services: inout HostServices.Builder, auth: AuthService) {
        services.serve(Boundary.CreateCustomToken.self) { _, r in
            try auth.createCustomToken(uid: r.uid, claims: r.claims)
        }
        services.serve(Boundary.GetUser.self) { _, r in
            switch r.lookup {
            case .uid(let uid): return try await auth.getUser(uid: uid)
            case .email(let email): return try await auth.getUser(email: email)
            case .phoneNumber(let phone): return try await auth.getUser(phoneNumber: phone)
            case .provider(let provider, let uid): return try await auth.getUser(provider: provider, providerUID: uid)
            }
        }
        services.serve(Boundary.CreateUser.self) { _, r in try await auth.createUser(r.user) }
        services.serve(Boundary.UpdateUser.self) { _, r in try await auth.updateUser(uid: r.uid, r.update) }
        services.serve(Boundary.DeleteUser.self) { _, r in
            try await auth.deleteUser(uid: r.uid)
            return Boundary.Empty()
        }
        services.serve(Boundary.SetCustomClaims.self) { _, r in
            try await auth.setCustomClaims(uid: r.uid, r.claims)
            return Boundary.Empty()
        }
        services.serve(Boundary.RevokeRefreshTokens.self) { _, r in
            try await auth.revokeRefreshTokens(uid: r.uid)
            return Boundary.Empty()
        }
        services.serve(Boundary.ListUsers.self) { _, r in
            let page = try await auth.listUsers(maxResults: r.maxResults, pageToken: r.pageToken)
            return Boundary.UserPage(users: page.users, pageToken: page.nextPageToken)
        }
        services.serve(Boundary.VerifyIDToken.self) { _, r in
            do {
                let token = try await auth.verifyIDToken(r.token, checkRevoked: r.checkRevoked)
                return CallerAuth(uid: token.uid, claims: token.claims, rawToken: r.token)
            } catch let rejection as TokenRejection {
                // The reason stays in the log; the unit learns only that the token was refused.
                auth.logRejection(rejection)
                throw HTTPSError(.unauthenticated, "the ID token is not valid")
            }
        }
        services.serve(Boundary.SignJWT.self) { _, r in
            let key: Key
            do { key = try Key.privateKey(pem: r.privateKeyPEM) } catch {
                throw HTTPSError.invalidArgument("auth.signJWT: the private key is not a usable PEM key (\((error as? CryptoError)?.operation ?? "\(error)"))")
            }
            return try JWT.sign(r.claims, key: key, kid: r.keyID, header: r.header)
        }
    }
}
