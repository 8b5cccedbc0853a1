import Foundation
import HearthAuth
import HearthModel
@_spi(Internals) import HearthRuntime

/// Signatures and verifications per second, RS256 and ES256, and verification of a cached ID token.
func runAuthBenchmark() async throws {
    printHeader("Auth: JWT signing and verification (OpenSSL 3), one core", command: "Scripts/bench/auth")
    let message = Array("eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJhbGljZSIsImlhdCI6MTcwMDAwMDAwMH0".utf8)
    for (name, key) in [("RS256", try Key.generateRSA()), ("ES256", try Key.generateP256())] {
        let signature = try key.sign(message)
        let signs = try opsPerSecond { _ = try key.sign(message) }
        let verifies = opsPerSecond { precondition(key.verify(signature, for: message)) }
        let token = try JWT.sign(["sub": "alice", "n": 1], key: key, kid: "k")
        let fullVerifies = try opsPerSecond { try JWT.verifySignature(try JWT.decode(token), keys: ["k": key]) }
        print("\(name): sign \(fmt(signs, 0))/s   verify \(fmt(verifies, 0))/s   decode+verify a JWT \(fmt(fullVerifies, 0))/s")
    }
    var config = RuntimeConfig()
    config.dataDirectory = NSTemporaryDirectory() + "hearth-bench-auth-\(getpid())"
    config.project = "hearth-bench"
    defer { try? FileManager.default.removeItem(atPath: config.dataDirectory) }
    let runtime = try await Runtime.open(config: config, log: RuntimeLog(level: .error))
    let user = try await runtime.auth.createUser(NewUser(uid: "alice", email: "alice@example.com"))
    let idToken = try runtime.auth.mintIDToken(for: user, signInProvider: "custom")
    _ = try await runtime.auth.verifyIDToken(idToken)
    let cached = try await asyncOpsPerSecond { _ = try await runtime.auth.verifyIDToken(idToken, checkRevoked: false) }
    let cachedRevocation = try await asyncOpsPerSecond { _ = try await runtime.auth.verifyIDToken(idToken, checkRevoked: true) }
    // Uncached: the cache is emptied before each verification, so every one checks the signature.
    let uncached = try await asyncOpsPerSecond {
        runtime.auth.clearVerificationCache()
        _ = try await runtime.auth.verifyIDToken(idToken, checkRevoked: false)
    }
    print("ID token verification (RS256): first time \(fmt(uncached, 0))/s   cached \(fmt(cached, 0))/s   cached + revocation check (user read) \(fmt(cachedRevocation, 0))/s")
    runtime.close()
}
