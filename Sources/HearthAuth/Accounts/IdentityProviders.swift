import Foundation
import HearthModel
import Synchronization

/// An OpenID Connect provider whose ID tokens `signInWithIdp` accepts: the issuers its tokens
/// name, the client ids they may be for (`aud`), and where its signing keys are.
public struct IdentityProvider: Sendable {
    /// Firebase's provider id: `google.com`, `apple.com`.
    public var id: String
    public var issuers: [String]
    /// Configured client ids (Google: the OAuth client ids; Apple: the bundle or service ids).
    public var audiences: [String]
    public var keys: JWKSCache

    public init(id: String, issuers: [String], audiences: [String], keys: JWKSCache) {
        self.id = id
        self.issuers = issuers
        self.audiences = audiences
        self.keys = keys
    }

    public static let googleKeysURL = "https://www.googleapis.com/oauth2/v3/certs"
    public static let appleKeysURL = "https://appleid.apple.com/auth/keys"

    /// Google: tokens from `https://accounts.google.com` (or the bare host, which Google also uses).
    public static func google(clientIDs: [String], keys: JWKSCache) -> IdentityProvider {
        IdentityProvider(id: "google.com", issuers: ["https://accounts.google.com", "accounts.google.com"], audiences: clientIDs, keys: keys)
    }

    /// Sign in with Apple: tokens from `https://appleid.apple.com` for the app's bundle or service id.
    public static func apple(clientIDs: [String], keys: JWKSCache) -> IdentityProvider {
        IdentityProvider(id: "apple.com", issuers: ["https://appleid.apple.com"], audiences: clientIDs, keys: keys)
    }
}

/// A provider's JSON Web Key Set, read from a file or fetched from a URL, kept until its
/// `Cache-Control: max-age` runs out (Google rotates its keys and says when in that header).
/// A token naming a key the set does not have makes one early refetch, at most once a minute, so
/// a rotation is picked up without letting made-up key ids trigger a fetch each.
public final class JWKSCache: Sendable {
    public enum Source: Sendable, Equatable {
        case file(String)
        case url(String)
    }

    /// Fetches a URL: the body and the response's Cache-Control header.
    public typealias Fetch = @Sendable (String) async throws -> (body: [UInt8], cacheControl: String?)

    struct State {
        var keys: [String: Key] = [:]
        var expires = Timestamp(seconds: 0)
        var lastFetch: Timestamp?
    }

    public let source: Source
    let fetch: Fetch
    let clock: any Clock
    let state = Mutex(State())
    /// Without a max-age (and for files): how long a read set is used.
    static let defaultLifetime: Duration = .seconds(300)
    static let refetchInterval: Duration = .seconds(60)

    public init(source: Source, clock: any Clock, fetch: @escaping Fetch) {
        self.source = source
        self.clock = clock
        self.fetch = fetch
    }

    /// The key with this id, fetching the set when it is stale or does not have it.
    public func key(id: String) async throws -> Key? {
        let now = clock.now()
        let (cached, fresh, mayRefetch) = state.withLock { s in
            (s.keys[id], now < s.expires, s.lastFetch.map { now - $0 >= JWKSCache.refetchInterval } ?? true)
        }
        if let cached, fresh { return cached }
        if !fresh || mayRefetch { try await reload(now: now) }
        return state.withLock { $0.keys[id] }
    }

    func reload(now: Timestamp) async throws {
        let body: [UInt8]
        var lifetime = JWKSCache.defaultLifetime
        switch source {
        case .file(let path):
            guard let data = FileManager.default.contents(atPath: path) else {
                throw CryptoError(operation: "reading the JWKS file \(path)", detail: "it cannot be read")
            }
            body = Array(data)
        case .url(let url):
            let response = try await fetch(url)
            body = response.body
            if let maxAge = response.cacheControl.flatMap(JWKSCache.maxAge) { lifetime = .seconds(maxAge) }
        }
        let keys = try JWKSCache.parse(body)
        state.withLock { s in
            s.keys = keys
            s.expires = now + lifetime
            s.lastFetch = now
        }
    }

    /// The keys of a JWKS document by `kid`; keys of a kind Hearth cannot use are skipped.
    static func parse(_ body: [UInt8]) throws -> [String: Key] {
        guard case .array(let items)? = try JSONParser.parse(body)["keys"] else {
            throw CryptoError(operation: "reading a JWKS", detail: "it has no \"keys\" array")
        }
        var keys: [String: Key] = [:]
        for item in items {
            guard let kid = item["kid"]?.stringValue, let key = try? Key.publicKey(jwk: item) else { continue }
            keys[kid] = key
        }
        return keys
    }

    /// `max-age` of a Cache-Control header, in seconds (at most a day; `no-store`/`no-cache`: none).
    public static func maxAge(_ header: String) -> Int64? {
        var result: Int64?
        for directive in header.split(separator: ",") {
            let parts = directive.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
            guard let name = parts.first else { continue }
            if name == "no-store" || name == "no-cache" { return 0 }
            if name == "max-age", parts.count == 2, let seconds = Int64(parts[1].trimmingCharacters(in: CharacterSet(charactersIn: "\""))) {
                result = min(max(seconds, 0), 86_400)
            }
        }
        return result
    }
}
