import Foundation
import HearthAuth
import HearthModel
@_spi(Internals) @testable import HearthRuntime
import HearthTesting
import Testing

/// The state this round added (out-of-band codes, refresh tokens' sign-in method, the messaging
/// outbox) lives in the database, so two runtimes on one data directory (`hearth serve` and a CLI
/// command) see one another's.
@Suite("Auth codes, sessions and the outbox across two runtimes on one data directory")
struct SharedAuthStateTests {
    @Test("a reset code made by one runtime is used once by the other; a session started in one refreshes in the other; the outbox is shared")
    func shared() async throws {
        let dir = NSTemporaryDirectory() + "hearth-shared-auth-" + SystemRandom().autoID()
        func open(_ seed: UInt64) async throws -> TestRuntime {
            try await TestRuntime(units: [], seed: seed) { config in
                config.dataDirectory = dir
                config.auth.passwordHashMemCost = 10
            }
        }
        let a = try await open(1)
        let b = try await open(2)
        let signUp = try await a.runtime.auth.signUp(email: "sam@example.com", password: "secret-1")
        let (_, code) = try await a.runtime.auth.sendOobCode(kind: "PASSWORD_RESET", email: "sam@example.com", idToken: nil, newEmail: nil, asAdmin: true)
        let codeText = try #require(code?.code)
        #expect(try await b.runtime.auth.pendingOobCodes().map(\.code) == [codeText])
        // The listing keeps the newest codes (oldest first), as the emulator's readers take the last.
        var later: [String] = []
        for _ in 0..<2 {
            a.clock.advance(by: .seconds(1))
            let (_, more) = try await a.runtime.auth.sendOobCode(kind: "PASSWORD_RESET", email: "sam@example.com", idToken: nil, newEmail: nil, asAdmin: true)
            later.append(try #require(more?.code))
        }
        #expect(try await b.runtime.auth.pendingOobCodes(limit: 2).map(\.code) == later)
        #expect(try await b.runtime.auth.pendingOobCodes().map(\.code) == [codeText] + later)
        _ = try await b.runtime.auth.resetPassword(oobCode: codeText, newPassword: "secret-2")
        await #expect(throws: AuthFailure.invalidOobCode) { _ = try await a.runtime.auth.resetPassword(oobCode: codeText, newPassword: "secret-3") }
        #expect(try await a.runtime.auth.signInWithPassword(email: "sam@example.com", password: "secret-2").uid == signUp.uid)

        let session = try await a.runtime.auth.signInWithPassword(email: "sam@example.com", password: "secret-2")
        let refreshed = try await b.runtime.auth.refresh(session.refreshToken)
        #expect(refreshed.signInProvider == "password")
        #expect(try JWT.decode(refreshed.idToken).claims["firebase"]?["sign_in_provider"] == "password")

        _ = try await a.runtime.store.engine.outbox.record(time: a.clock.now(), function: "f", message: PushMessage(token: "t", body: "hi"),
                                                            outcome: "logged", messageID: nil)
        #expect(try b.runtime.outbox().map(\.message.body) == ["hi"])
        _ = try await b.runtime.store.engine.outbox.record(time: b.clock.now(), function: "g", message: PushMessage(token: "u"), outcome: "logged", messageID: nil)
        #expect(try a.runtime.outbox().map(\.sequence) == [1, 2], "one sequence across both")
    }
}
