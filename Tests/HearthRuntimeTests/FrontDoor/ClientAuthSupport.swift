import Foundation
import HearthAuth
import HearthHTTP
import HearthModel
import HearthStore
@_spi(Internals) @testable import HearthRuntime
import HearthTesting
import Testing

/// The real runtime (ManualClock, the DeliveryUnit's `onUserCreated`/`onUserDeleted`) behind a real
/// front door on 127.0.0.1: what an iOS app with `Auth.auth().useEmulator(withHost:port:)` talks to.
/// Requests go where the iOS SDK sends them (`/www.googleapis.com/identitytoolkit/v3/relyingparty/…`).
struct AuthApp: Sendable {
    let app: TestRuntime
    let door: FrontDoor
    let client: HTTPClient
    var base: String { "http://127.0.0.1:\(door.port)" }
    var clock: ManualClock { app.clock }
    static let adminToken = "admin-secret"

    struct Reply: Sendable {
        let status: Int
        let json: Value
        /// Identity Toolkit's `error.message` ("CODE" or "CODE : detail").
        var error: String? { json["error"]?["message"]?.stringValue }
        /// The code before the colon, as the SDKs read it.
        var code: String? { error.map { String($0.split(separator: ":", maxSplits: 1)[0]).trimmingCharacters(in: .whitespaces) } }
    }

    func post(_ path: String, _ body: Value, headers: [(String, String)] = []) async throws -> Reply {
        let r = try await client.send(HTTPClientRequest(method: "POST", url: base + path,
                                                        headers: HTTPHeaders([(name: "Content-Type", value: "application/json")] + headers.map { (name: $0.0, value: $0.1) }),
                                                        body: JSONWriter.encode(body), timeout: .seconds(150)))
        return Reply(status: r.status, json: (try? JSONParser.parse(r.body)) ?? .null)
    }

    /// An Identity Toolkit call as the iOS SDK makes it: the v3 name, `?key=`, JSON, no credentials.
    func ios(_ name: String, _ body: Value) async throws -> Reply {
        try await post("/www.googleapis.com/identitytoolkit/v3/relyingparty/\(name)?key=fake-api-key", body)
    }

    /// A v1 call (the JS SDK's and firebase-admin's paths), optionally with admin credentials.
    func v1(_ operation: String, _ body: Value, admin: Bool = false) async throws -> Reply {
        try await post("/identitytoolkit.googleapis.com/v1/\(operation)?key=fake-api-key", body,
                       headers: admin ? [("Authorization", "Bearer \(AuthApp.adminToken)")] : [])
    }

    /// Secure Token's refresh, with the JSON body the iOS SDK sends.
    func refresh(_ refreshToken: String) async throws -> Reply {
        try await post("/securetoken.googleapis.com/v1/token?key=fake-api-key", ["grantType": "refresh_token", "refreshToken": .string(refreshToken)])
    }

    /// The Auth emulator's listing of the codes Firebase would have emailed.
    func oobCodes() async throws -> [Value] {
        let r = try await client.send(HTTPClientRequest(url: base + "/emulator/v1/projects/\(app.runtime.config.project)/oobCodes",
                                                        headers: HTTPHeaders([(name: "Authorization", value: "Bearer \(AuthApp.adminToken)")])))
        return try JSONParser.parse(r.body)["oobCodes"]?.arrayValue ?? []
    }

    func code(for email: String, _ kind: String) async throws -> String {
        let codes = try await oobCodes().filter { $0["email"]?.stringValue == email && $0["requestType"]?.stringValue == kind }
        return try #require(codes.last?["oobCode"]?.stringValue, "no \(kind) code for \(email)")
    }

    /// What the iOS SDK does after every sign-in: `getAccountInfo` with the new ID token.
    func lookup(_ idToken: String) async throws -> Reply { try await ios("getAccountInfo", ["idToken": .string(idToken)]) }

    func claims(_ idToken: String) throws -> [String: Value] { try JWT.decode(idToken).claims }

    /// The user events logged for `uid` (what `onUserCreated`/`onUserDeleted` deliveries are routed
    /// from, one delivery per event and function).
    func userEvents(_ kind: UserEventKind, uid: String) throws -> Int {
        let table = UserTable(engine: app.runtime.store.engine as! SQLiteEngine)
        return try table.events(after: 0, limit: 10_000).filter { $0.kind == kind && $0.user.uid == uid }.count
    }
}

func withAuthApp<T: Sendable>(start: Timestamp = Timestamp(seconds: 1_800_000_000), configure: @escaping (inout RuntimeConfig) -> Void = { _ in },
                              _ body: @escaping @Sendable (AuthApp) async throws -> T) async throws -> T {
    let app = try await TestRuntime(units: ["DeliveryUnit"], start: start) { config in
        config.server.port = 0
        config.project = "hearth-app"
        // Tests hash many passwords; the cost Firebase uses is measured by Scripts/bench/auth and
        // covered by one test below.
        config.auth.passwordHashMemCost = 10
        config.auth.passwordHashRounds = 8
        configure(&config)
    }
    let door = try FrontDoor(runtime: app.runtime, secrets: Secrets(file: ["HEARTH_ADMIN_TOKEN": AuthApp.adminToken]))
    try door.start()
    let fixture = AuthApp(app: app, door: door, client: HTTPClient())
    let result: Result<T, Error>
    do { result = .success(try await withTimeout(seconds: 180) { try await body(fixture) }) } catch { result = .failure(error) }
    await door.shutdown(grace: .seconds(5))
    return try result.get()
}

/// An identity provider for tests: an RSA key published as a JWKS file, and ID tokens signed with it.
struct TestProvider: Sendable {
    let key: Key
    let kid: String
    let jwksPath: String
    let issuer: String
    let audience: String

    init(issuer: String, audience: String, directory: String) throws {
        key = try Key.generateRSA()
        kid = "test-\(issuer.count)-\(SystemRandom().autoID(length: 8))"
        self.issuer = issuer
        self.audience = audience
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        jwksPath = directory + "/\(kid).json"
        try JWKSDocument.write(["keys": [try key.publicJWK(kid: kid)]], to: jwksPath)
    }

    /// A signed ID token for `sub`, valid for an hour from `now`; `changes` adjust its claims.
    func token(sub: String, email: String? = nil, verified: Bool = true, now: Timestamp, _ changes: [String: Value] = [:], signer: Key? = nil) throws -> String {
        var claims: [String: Value] = ["iss": .string(issuer), "aud": .string(audience), "sub": .string(sub),
                                       "iat": .int(now.seconds), "exp": .int(now.seconds + 3600)]
        if let email {
            claims["email"] = .string(email)
            claims["email_verified"] = .bool(verified)
        }
        for (k, v) in changes { claims[k] = v }
        return try JWT.sign(claims, key: signer ?? key, kid: kid)
    }
}

enum JWKSDocument {
    static func write(_ value: Value, to path: String) throws {
        try Data(JSONWriter.encode(value)).write(to: URL(fileURLWithPath: path))
    }
}
