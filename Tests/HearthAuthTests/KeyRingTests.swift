import Foundation
@testable import HearthAuth
import HearthModel
import Testing

@Suite("The runtime's signing keys")
struct KeyRingTests {
    func path() -> String { NSTemporaryDirectory() + "hearth-keys-\(UUID().uuidString)/auth-keys.json" }

    @Test("the first start creates an RSA 2048 key with a kid, stored with mode 0600, and reloads it")
    func createAndReload() throws {
        let p = path()
        let ring = try KeyRing(path: p, clock: ManualClock())
        #expect(ring.active.key.algorithm == .rs256)
        #expect(ring.active.kid.count == 40)
        let attributes = try FileManager.default.attributesOfItem(atPath: p)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        let again = try KeyRing(path: p, clock: ManualClock())
        #expect(again.active.kid == ring.active.kid)
        let token = try JWT.sign(["a": 1], key: ring.active.key, kid: ring.active.kid)
        try JWT.verifySignature(try JWT.decode(token), keys: again.verificationKeys)
    }

    @Test("rotation makes a new active key and keeps the previous one valid for verification")
    func rotate() throws {
        let p = path()
        let ring = try KeyRing(path: p, clock: ManualClock())
        let old = ring.active
        let oldToken = try JWT.sign(["a": 1], key: old.key, kid: old.kid)
        try ring.rotate(clock: ManualClock())
        #expect(ring.active.kid != old.kid)
        let reloaded = try KeyRing(path: p, clock: ManualClock())
        #expect(reloaded.active.kid == ring.active.kid)
        try JWT.verifySignature(try JWT.decode(oldToken), keys: reloaded.verificationKeys)
        let jwks = try reloaded.jwks()
        #expect(Set(jwks["keys"]?.arrayValue?.compactMap { $0["kid"]?.stringValue } ?? []) == [old.kid, ring.active.kid])
        for _ in 0..<3 { try ring.rotate(clock: ManualClock()) }
        #expect(ring.entries.count == KeyRing.retained)
        #expect(ring.verificationKeys[old.kid] == nil, "keys beyond the retained count are dropped")
    }

    @Test("a corrupt key file is an error, not a silently new key")
    func corrupt() throws {
        let p = path()
        try FileManager.default.createDirectory(atPath: (p as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        _ = FileManager.default.createFile(atPath: p, contents: Data("{\"keys\": []}".utf8))
        #expect(throws: (any Error).self) { try KeyRing(path: p, clock: ManualClock()) }
    }
}
