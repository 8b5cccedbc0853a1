import Foundation
@testable import HearthAuth
import HearthModel
import Synchronization
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

    @Test("two rings on one file, as two processes hold it: each follows the other's rotations")
    func followsTheFile() throws {
        let p = path()
        let server = try KeyRing(path: p, clock: ManualClock(), recheckInterval: .seconds(3600))
        let cli = try KeyRing(path: p, clock: ManualClock(), recheckInterval: .seconds(3600))
        #expect(cli.active.kid == server.active.kid, "the second opens the first's file")
        let first = server.active
        let rotated = try cli.rotate(clock: ManualClock())
        // Signing and the JWKS look at the file every time.
        #expect(server.active.kid == rotated.kid)
        #expect(server.entries.map(\.kid) == [rotated.kid, first.kid])
        // A token the other process signed with its new key verifies here at once, though the
        // recheck interval has not passed: an unknown key id sends the ring to the file.
        let other = try KeyRing(path: p, clock: ManualClock(), recheckInterval: .seconds(3600))
        _ = other.trusts(first.kid)  // the check of the interval is spent
        let newer = try cli.rotate(clock: ManualClock())
        let token = try JWT.decode(try JWT.sign(["a": 1], key: newer.key, kid: newer.kid))
        try JWT.verifySignature(token, keys: other.verificationKeys(for: token.keyID))
        // An unknown key id that is nowhere stays refused.
        #expect(throws: TokenRejection.self) {
            try JWT.verifySignature(try JWT.decode(try JWT.sign(["a": 1], key: newer.key, kid: "nobody")), keys: other.verificationKeys(for: "nobody"))
        }
    }

    @Test("rotations in two processes keep both keys; a dropped key stops verifying within the recheck interval")
    func rotationsDoNotLoseKeys() throws {
        let p = path()
        let a = try KeyRing(path: p, clock: ManualClock(), recheckInterval: .zero)
        let b = try KeyRing(path: p, clock: ManualClock(), recheckInterval: .zero)
        let first = a.active
        let fromA = try a.rotate(clock: ManualClock())
        let fromB = try b.rotate(clock: ManualClock())  // b has not looked at the file since a rotated
        #expect(b.entries.map(\.kid) == [fromB.kid, fromA.kid, first.kid], "b's rotation started from the file, not from its memory")
        #expect(try KeyRing(path: p, clock: ManualClock()).entries.map(\.kid) == [fromB.kid, fromA.kid, first.kid])
        #expect(a.trusts(first.kid))
        try b.rotate(clock: ManualClock())
        #expect(!a.trusts(first.kid), "b's rotation dropped the oldest key, and a follows")
        #expect(a.verificationKeys(for: first.kid)[first.kid] == nil)
    }

    @Test("first starts racing on a missing file agree on one key")
    func concurrentFirstStarts() async throws {
        let p = path()
        let kids = try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<4 { group.addTask { try KeyRing(path: p, clock: ManualClock()).active.kid } }
            return try await group.reduce(into: Set<String>()) { $0.insert($1) }
        }
        #expect(kids.count == 1)
        #expect(try KeyRing(path: p, clock: ManualClock()).active.kid == kids.first)
    }

    @Test("a key file broken while a ring runs leaves its keys in use, reported once; a rotation does not overwrite it")
    func brokenWhileRunning() throws {
        let p = path()
        let ring = try KeyRing(path: p, clock: ManualClock(), recheckInterval: .zero)
        let reports = Mutex<[String]>([])
        ring.reportProblems { message in reports.withLock { $0.append(message) } }
        let kid = ring.active.kid
        _ = FileManager.default.createFile(atPath: p + ".new", contents: Data("{\"keys\": [".utf8))
        #expect(rename(p + ".new", p) == 0)
        for _ in 0..<3 {
            #expect(ring.active.kid == kid)
            #expect(ring.trusts(kid))
        }
        #expect(reports.withLock { $0.count } == 1, "\(reports.withLock { $0 })")
        #expect(reports.withLock { $0.first?.contains("cannot be read") } == true)
        #expect(throws: (any Error).self, "a rotation does not overwrite a file it cannot read") { try ring.rotate(clock: ManualClock()) }
        #expect((try? String(contentsOfFile: p, encoding: .utf8)) == "{\"keys\": [")
    }

    @Test("a key file removed while a ring runs is written again with the ring's keys, so another process does not start new ones")
    func removedWhileRunning() throws {
        let p = path()
        let ring = try KeyRing(path: p, clock: ManualClock(), recheckInterval: .zero)
        let first = ring.active
        let second = try ring.rotate(clock: ManualClock())
        try FileManager.default.removeItem(atPath: p)
        #expect(ring.trusts(first.kid))
        #expect(FileManager.default.fileExists(atPath: p))
        let other = try KeyRing(path: p, clock: ManualClock())
        #expect(other.entries.map(\.kid) == [second.kid, first.kid])
        let attributes = try FileManager.default.attributesOfItem(atPath: p)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
    }

    @Test("verification looks at the file at most once per recheck interval, unless a token names an unknown key")
    func recheckInterval() throws {
        let p = path()
        let server = try KeyRing(path: p, clock: ManualClock(), recheckInterval: .seconds(3600))
        let cli = try KeyRing(path: p, clock: ManualClock(), recheckInterval: .zero)
        let first = server.active
        #expect(server.trusts(first.kid))  // spends the check of this interval
        for _ in 0..<3 { try cli.rotate(clock: ManualClock()) }
        #expect(!cli.trusts(first.kid))
        #expect(server.trusts(first.kid), "within the interval, verification keeps what it read")
        #expect(server.verificationKeys(for: first.kid)[first.kid] != nil)
        // Signing looks every time, and then verification knows too.
        #expect(server.active.kid == cli.active.kid)
        #expect(!server.trusts(first.kid))
    }
}
