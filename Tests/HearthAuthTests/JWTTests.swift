@testable import HearthAuth
import HearthModel
import Testing

@Suite("Keys and JWT")
struct JWTTests {
    static let rsa = try! Key.generateRSA()
    static let ec = try! Key.generateP256()

    @Test("RS256 and ES256 tokens sign and verify; ES256 signatures are raw r||s of 64 bytes", arguments: [JWTTests.rsa, JWTTests.ec])
    func roundTrip(key: Key) throws {
        let token = try JWT.sign(["sub": "alice", "n": 1], key: key, kid: "k1")
        let decoded = try JWT.decode(token)
        #expect(decoded.algorithm == key.algorithm.rawValue)
        #expect(decoded.claims == ["sub": "alice", "n": 1])
        if key.algorithm == .es256 { #expect(decoded.signature.count == 64) }
        try JWT.verifySignature(decoded, keys: ["k1": key])
    }

    @Test("DER and raw ECDSA signatures convert both ways, including components with leading zeros")
    func derConversion() throws {
        for i in 0..<200 {
            let raw = try JWTTests.ec.sign(Array("message \(i)".utf8))
            #expect(raw.count == 64)
            let der = try Key.rawToDER(raw)
            #expect(der.first == 0x30, "a DER SEQUENCE")
            #expect(try Key.derToRaw(der) == raw)
            #expect(JWTTests.ec.verify(raw, for: Array("message \(i)".utf8)))
        }
        let zeros = [UInt8](repeating: 0, count: 31) + [1] + [UInt8](repeating: 0, count: 31) + [2]
        #expect(try Key.derToRaw(try Key.rawToDER(zeros)) == zeros)
        #expect(throws: CryptoError.self) { try Key.rawToDER([1, 2, 3]) }
    }

    @Test("PKCS#8 PEM keys load (the form of Apple .p8 files and service-account keys) and sign verifiably")
    func pem() throws {
        for key in [JWTTests.rsa, JWTTests.ec] {
            let pem = try key.privatePEM()
            #expect(pem.hasPrefix("-----BEGIN PRIVATE KEY-----"))
            let loaded = try Key.privateKey(pem: pem)
            let publicKey = try Key.publicKey(pem: try key.publicPEM())
            #expect(loaded.algorithm == key.algorithm)
            #expect(publicKey.verify(try loaded.sign([1, 2, 3]), for: [1, 2, 3]))
            #expect(!publicKey.verify(try loaded.sign([1, 2, 3]), for: [1, 2, 4]))
        }
        #expect(throws: CryptoError.self) { try Key.privateKey(pem: "-----BEGIN PRIVATE KEY-----\nnope\n-----END PRIVATE KEY-----\n") }
        #expect(throws: CryptoError.self) { try Key.generateRSA(bits: 1024) }
    }

    @Test("public keys round-trip through JWK")
    func jwk() throws {
        for key in [JWTTests.rsa, JWTTests.ec] {
            let jwk = try key.publicJWK(kid: "x")
            #expect(jwk["kid"] == "x")
            let imported = try Key.publicKey(jwk: jwk)
            #expect(imported.verify(try key.sign([9]), for: [9]))
        }
    }

    func rejection(_ token: String, keys: [String: Key] = ["k1": JWTTests.rsa], allowUnsigned: Bool = false) -> TokenRejection? {
        do {
            try JWT.verifySignature(try JWT.decode(token), keys: keys, allowUnsigned: allowUnsigned)
            return nil
        } catch {
            return error
        }
    }

    func b64(_ v: Value) -> String { Base64.encodeURL(JSONWriter.encode(v)) }

    @Test("alg none is refused unless unsigned tokens are allowed (emulator mode)")
    func algNone() {
        let token = JWT.unsigned(["sub": "alice"])
        #expect(rejection(token) == .unsignedTokenRefused)
        #expect(rejection(token, allowUnsigned: true) == nil)
        let withSignature = b64(["alg": "none"]) + "." + b64(["sub": "a"]) + "." + Base64.encodeURL([1, 2])
        if case .malformed? = rejection(withSignature, allowUnsigned: true) {} else { Issue.record("a signed 'none' token must be refused") }
    }

    @Test("HS256 signed with the public key as the secret is refused: the algorithm is the key's")
    func algorithmConfusion() throws {
        let header = b64(["alg": "HS256", "typ": "JWT", "kid": "k1"])
        let payload = b64(["sub": "mallory"])
        let secret = Array(try JWTTests.rsa.publicPEM().utf8)
        let mac = Crypto.hmacSHA256(key: secret, message: Array((header + "." + payload).utf8))
        let token = header + "." + payload + "." + Base64.encodeURL(mac)
        #expect(rejection(token) == .algorithmNotAccepted(header: "HS256", keyRequires: "RS256"))
        let es = b64(["alg": "ES256", "kid": "k1"]) + "." + payload + "." + Base64.encodeURL([UInt8](repeating: 1, count: 64))
        #expect(rejection(es) == .algorithmNotAccepted(header: "ES256", keyRequires: "RS256"))
    }

    @Test("a wrong or missing kid is refused")
    func kid() throws {
        let token = try JWT.sign(["sub": "a"], key: JWTTests.rsa, kid: "other")
        #expect(rejection(token) == .unknownKey(kid: "other"))
        let noKid = try JWT.sign(["sub": "a"], key: JWTTests.rsa, kid: nil)
        #expect(rejection(noKid) == .unknownKey(kid: nil))
    }

    @Test("a tampered header, payload or signature fails the signature check")
    func tampering() throws {
        let token = try JWT.sign(["sub": "alice", "admin": false], key: JWTTests.rsa, kid: "k1")
        let parts = token.split(separator: ".").map(String.init)
        let payload = b64(["sub": "alice", "admin": true])
        #expect(rejection(parts[0] + "." + payload + "." + parts[2]) == .badSignature)
        let header = b64(["alg": "RS256", "typ": "JWT", "kid": "k1", "x": 1])
        #expect(rejection(header + "." + parts[1] + "." + parts[2]) == .badSignature)
        var sig = Base64.decodeURL(parts[2])!
        sig[10] ^= 1
        #expect(rejection(parts[0] + "." + parts[1] + "." + Base64.encodeURL(sig)) == .badSignature)
    }

    @Test("malformed tokens are refused with the reason", arguments: [
        ("a.b", "3 dot-separated parts"),
        ("a.b.c.d", "3 dot-separated parts"),
        (".e30.", "empty header"),
        ("e30=.e30.", "not base64url"),
        ("e30.e3+.", "not base64url"),
        ("bm9wZQ.e30.", "not JSON"),
        ("WzFd.e30.", "not a JSON object"),
        ("e30.e30.", "no alg"),
    ])
    func malformed(token: String, reason: String) {
        guard case .malformed(let why)? = rejection(token) else {
            Issue.record("\(token) was not refused as malformed")
            return
        }
        #expect(why.contains(reason), "\(why)")
    }

    @Test("tokens over 16 KB are refused before decoding")
    func tooLarge() throws {
        let big = try JWT.sign(["pad": .string(String(repeating: "x", count: 13_000))], key: JWTTests.rsa, kid: "k1")
        #expect(big.utf8.count > JWT.maxTokenBytes)
        #expect(rejection(big) == .tooLarge(bytes: big.utf8.count))
    }
}
