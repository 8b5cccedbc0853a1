import Foundation
import HearthFunctions
import TodoModel

/// Sign-in exchanges (SCENARIOS §1): an Apple or GitHub authorization code in, a custom token for
/// the matching (or new) user out; and revoking a provider before an account is deleted.
///
/// Secrets (declared by the functions that read them): `APPLE_TEAM_ID`, `APPLE_KEY_ID`,
/// `APPLE_CLIENT_ID`, `APPLE_PRIVATE_KEY` (the .p8 key's PEM), `GITHUB_CLIENT_ID`,
/// `GITHUB_CLIENT_SECRET`. Base URLs from `[params]`: `APPLE_BASE_URL`, `GITHUB_BASE_URL`,
/// `GITHUB_API_URL` (they must also be in `[outbound] allow`).
public enum AuthExchange: FunctionModule {
    public static let name = "AuthExchange"

    static let appleSecrets = ProviderExchange.appleSecrets
    static let githubSecrets = ProviderExchange.githubSecrets

    public struct AppleCode: Codable, Sendable { public var authorizationCode: String? }
    public struct GitHubCode: Codable, Sendable { public var code: String? }
    public struct Provider: Codable, Sendable { public var provider: String? }
    public struct CustomTokenReply: Codable, Sendable, Equatable { public var customToken: String }

    public static func register(_ fn: inout FunctionRegistry) {
        fn.onCall("exchangeAppleCode", .init(secrets: appleSecrets)) { (req: CallableRequest<AppleCode>) -> CustomTokenReply in
            CustomTokenReply(customToken: try await ProviderExchange.apple(code: req.data.authorizationCode, req))
        }

        fn.onCall("exchangeGitHubCode", .init(secrets: githubSecrets)) { (req: CallableRequest<GitHubCode>) -> CustomTokenReply in
            CustomTokenReply(customToken: try await ProviderExchange.github(code: req.data.code, req))
        }

        fn.onCall("revokeProvider", .init(secrets: appleSecrets + githubSecrets)) { (req: CallableRequest<Provider>) -> Value in
            let auth = try req.requireAuth()
            let paths = try MemberPaths(uid: auth.uid)
            let ref = try req.documents.document(paths.secrets)
            let stored = try await ref.get(Secrets.self)?.data ?? Secrets()
            switch req.data.provider {
            case "apple.com"?, "apple"?:
                if let token = stored.appleRefreshToken { try await AppleClient(req).revoke(token) }
                if stored.appleRefreshToken != nil { _ = try await ref.update(["appleRefreshToken": FieldValue.null]) }
            case "github.com"?, "github"?:
                if let token = stored.githubAccessToken { try await GitHubClient(req).revoke(token) }
                if stored.githubAccessToken != nil { _ = try await ref.update(["githubAccessToken": FieldValue.null]) }
            default:
                throw HTTPSError(.invalidArgument, "provider must be apple.com or github.com")
            }
            return .null
        }
    }
}
