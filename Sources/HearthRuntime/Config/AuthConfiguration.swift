import Foundation
import HearthAuth
import HearthHTTP
import HearthModel
import Synchronization

extension Runtime {
    /// The auth service's settings from runtime.toml's `[auth]`.
    static func authConfiguration(_ config: RuntimeConfig, clock: any Clock) -> AuthService.Configuration {
        let a = config.auth
        let fetch = JWKSFetcher()
        func keys(_ value: String) -> JWKSCache {
            let source: JWKSCache.Source = value.hasPrefix("https://") || value.hasPrefix("http://") ? .url(value) : .file(config.resolve(value))
            return JWKSCache(source: source, clock: clock, fetch: { url in try await fetch.get(url) })
        }
        return AuthService.Configuration(
            projectID: config.project, emulatorMode: config.emulatorMode, clockSkew: .seconds(double: a.clockSkewSeconds),
            signInMethods: Set(a.providers), emailEnumerationProtection: config.emailEnumerationProtection,
            passwords: PasswordHasher(costLog2: a.passwordHashMemCost, blockSize: a.passwordHashRounds),
            failedSignIns: .init(burst: a.failedSignInBurst, refill: .seconds(double: a.failedSignInRefillSeconds)),
            identityProviders: [.google(clientIDs: a.googleClientIDs, keys: keys(a.googleJWKS)),
                                .apple(clientIDs: a.appleClientIDs, keys: keys(a.appleJWKS))])
    }
}

/// Fetches providers' key sets over HTTP with one client, made on first use (most runtimes never
/// fetch one).
final class JWKSFetcher: Sendable {
    let client = LazyClient()

    func get(_ url: String) async throws -> (body: [UInt8], cacheControl: String?) {
        let response = try await client.get().send(HTTPClientRequest(url: url, timeout: .seconds(10)))
        guard response.status == 200 else { throw HTTPSError(.unavailable, "fetching the key set \(url) answered HTTP \(response.status)") }
        return (response.body, response.headers["cache-control"])
    }
}
