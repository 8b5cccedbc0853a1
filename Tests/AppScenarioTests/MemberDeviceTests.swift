import HearthModel
import HearthTesting
import Testing

@Suite("Members: the device's FCM token and time zone (SCENARIOS §2, §8)")
struct MemberDeviceTests {
    func code(_ body: () async throws -> Void) async -> FunctionsErrorCode? {
        do { try await body(); return nil } catch let e as HTTPSError { return e.code } catch { return .unknown }
    }

    @Test("the token is stored server-only, replaced when it rotates, and removed on sign-out unless another device took over")
    func fcmToken() async throws {
        let app = try await TestRuntime(units: appUnits)
        try await app.member("mia")
        _ = try await app.call("registerDevice", ["fcmToken": "token-1"], as: "mia")
        #expect(try await app.document("members/mia/profiles/secrets")?.fields["fcmToken"] == "token-1")
        _ = try await app.call("registerDevice", ["fcmToken": "token-2"], as: "mia")
        #expect(try await app.document("members/mia/profiles/secrets")?.fields["fcmToken"] == "token-2")
        _ = try await app.call("unregisterDevice", ["fcmToken": "token-1"], as: "mia")
        #expect(try await app.document("members/mia/profiles/secrets")?.fields["fcmToken"] == "token-2", "an old device signing out")
        _ = try await app.call("unregisterDevice", ["fcmToken": "token-2"], as: "mia")
        #expect(try await app.document("members/mia/profiles/secrets")?.fields["fcmToken"] == .null)
        _ = try await app.call("unregisterDevice", [:], as: "mia")
        #expect(await code { try await app.call("registerDevice", [:], as: "mia") } == .invalidArgument)
        #expect(await code { try await app.call("registerDevice", ["fcmToken": "t"]) } == .unauthenticated)
    }

    @Test("updateTimeZone takes IANA zones only, and needs an initialized member")
    func timeZone() async throws {
        let app = try await TestRuntime(units: appUnits)
        try await app.member("ned")
        _ = try await app.call("updateTimeZone", ["timeZone": "America/New_York"], as: "ned")
        #expect(try await app.document("members/ned/profiles/settings")?.fields["timeZone"] == "America/New_York")
        #expect(try await app.document("members/ned/profiles/settings")?.fields["reminderHour"] == 9, "the rest stays")
        #expect(await code { try await app.call("updateTimeZone", ["timeZone": "Mars/Olympus"], as: "ned") } == .invalidArgument)
        #expect(await code { try await app.call("updateTimeZone", ["timeZone": "Asia/Seoul"], as: "new") } == .failedPrecondition)
    }
}
