import Foundation
@testable import HearthAuth
import HearthModel
@_spi(Internals) import HearthRuntime
import HearthTesting
import Testing

/// Runs the PyJWT script (Fixtures/pyjwt_check.py) and returns its stdout.
func pyjwt(_ arguments: [String]) async throws -> String {
    let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/pyjwt_check.py").path
    let python = try Subprocess("python3", [script] + arguments)
    let ended = try await python.wait(seconds: 60)
    guard ended == .exited(0) else { throw CrossCheckError("python \(ended): " + python.stderrText) }
    return python.stdoutText.trimmingCharacters(in: .whitespacesAndNewlines)
}

struct CrossCheckError: Error, CustomStringConvertible {
    var description: String
    init(_ d: String) { description = d }
}

@Suite("Cross-check with PyJWT")
struct PyJWTCrossCheckTests {
    @Test("PyJWT verifies Hearth's ID tokens against Hearth's JWKS")
    func pyjwtVerifiesHearth() async throws {
        let app = try await TestRuntime(units: [], start: SystemClock().now()) { $0.project = "hearth-xcheck" }
        let auth = app.runtime.auth
        let user = try await auth.createUser(NewUser(uid: "py", email: "py@example.com"))
        try await auth.setCustomClaims(uid: "py", ["big": .int(9_007_199_254_740_993)])
        let token = try auth.mintIDToken(for: try await auth.getUser(uid: user.uid), signInProvider: "custom")
        let jwks = JSONWriter.string(try auth.keys.jwks())
        let claims = try JSONParser.parse(try await pyjwt(["verify", token, jwks, "hearth-xcheck"]))
        #expect(claims["sub"] == "py")
        #expect(claims["email"] == "py@example.com")
        #expect(claims["big"] == .int(9_007_199_254_740_993), "64-bit claims stay exact")
        // A token from a rotated-out key still verifies while the key is retained.
        try auth.keys.rotate(clock: app.clock)
        let jwksAfter = JSONWriter.string(try auth.keys.jwks())
        #expect(try JSONParser.parse(try await pyjwt(["verify", token, jwksAfter, "hearth-xcheck"]))["sub"] == "py")
    }

    @Test("a cached verification counts only while its signing key is trusted: dropped by rotations, the token is refused")
    func cacheFollowsTheKeys() async throws {
        let app = try await TestRuntime(units: [], start: SystemClock().now()) { $0.project = "hearth-xcheck" }
        let auth = app.runtime.auth
        let user = try await auth.createUser(NewUser(uid: "k", email: "k@example.com"))
        let token = try auth.mintIDToken(for: try await auth.getUser(uid: user.uid), signInProvider: "custom")
        #expect(try await auth.verifyIDToken(token).uid == "k")  // now cached
        try auth.keys.rotate(clock: app.clock)
        #expect(try await auth.verifyIDToken(token).uid == "k", "a retained key still verifies")
        for _ in 1..<KeyRing.retained { try auth.keys.rotate(clock: app.clock) }
        await #expect(throws: TokenRejection.self) { try await auth.verifyIDToken(token) }
    }

    @Test("Hearth verifies tokens PyJWT signed with RS256 and ES256 test keys, and refuses them tampered", arguments: [JWTAlgorithm.rs256, .es256])
    func hearthVerifiesPyJWT(algorithm: JWTAlgorithm) async throws {
        let key = algorithm == .rs256 ? try Key.generateRSA() : try Key.generateP256()
        let token = try await pyjwt(["sign", algorithm.rawValue, try key.privatePEM(), #"{"sub": "from-python", "n": 12345678901234567}"#])
        let decoded = try JWT.decode(token)
        let publicKey = try Key.publicKey(pem: try key.publicPEM())
        try JWT.verifySignature(decoded, keys: ["pyjwt-test": publicKey])
        #expect(decoded.claims["sub"] == "from-python")
        #expect(decoded.claims["n"] == .int(12_345_678_901_234_567))
        let parts = token.split(separator: ".")
        let tampered = parts[0] + "." + Base64.encodeURL(JSONWriter.encode(["sub": "evil"])) + "." + parts[2]
        #expect(throws: TokenRejection.badSignature) { try JWT.verifySignature(try JWT.decode(String(tampered)), keys: ["pyjwt-test": publicKey]) }
    }
}
