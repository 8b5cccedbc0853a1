import HearthModel
import HearthTesting
import Testing

@Suite("initializeMember (SCENARIOS §2)")
struct InitializeMemberTests {
    @Test("the first call creates the default documents with their defaults")
    func createsDefaults() async throws {
        let app = try await TestRuntime(units: ["Members"])
        let reply = try await app.call("initializeMember", ["timeZone": "Asia/Seoul", "displayName": "Alice"], as: "alice")
        #expect(reply == ["created": true])
        let settings = try #require(try await app.document("members/alice/profiles/settings"))
        #expect(settings.fields == ["pushEnabled": true, "reminderHour": 9, "reminderMinute": 0, "timeZone": "Asia/Seoul"])
        #expect(try await app.document("members/alice/profiles/preferences")?.fields == ["categories": []])
        #expect(try await app.document("members/alice/counters/item")?.fields == ["nextSequence": 1])
        let basic = try #require(try await app.document("members/alice/profiles/basic"))
        #expect(basic.fields["displayName"] == "Alice")
        #expect(basic.fields["email"] == .null, "unknown values are stored as explicit nulls")
        #expect(basic.fields["providers"] == ["custom"])
        #expect(basic.fields["createdAt"] == .timestamp(basic.createTime), "createdAt is the server's commit time")
        #expect(basic.fields["updatedAt"] == .timestamp(basic.createTime))
    }

    @Test("a repeat changes nothing: same documents, same update times, no new changes")
    func idempotent() async throws {
        let app = try await TestRuntime(units: ["Members"])
        try await app.call("initializeMember", ["timeZone": "Asia/Seoul"], as: "alice")
        let before = try await app.documents(in: "members/alice/profiles")
        let sequence = app.documents.lastSequence
        app.clock.advance(by: .seconds(60))
        let again = try await app.call("initializeMember", ["timeZone": "Europe/Berlin", "displayName": "Other"], as: "alice")
        #expect(again == ["created": false])
        #expect(try await app.documents(in: "members/alice/profiles") == before)
        #expect(app.documents.lastSequence == sequence)
    }

    @Test("two devices initializing at once create each document exactly once")
    func concurrent() async throws {
        let app = try await TestRuntime(units: ["Members"])
        let replies = try await withThrowingTaskGroup(of: Value.self) { group in
            for _ in 0..<8 { group.addTask { try await app.call("initializeMember", ["timeZone": "Asia/Seoul"], as: "alice") } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(replies.filter { $0 == ["created": true] }.count == 1)
        let changes = try await app.documents.changes(after: 0, limit: 100)
        #expect(changes.count == 4, "four documents, each created once")
        #expect(changes.allSatisfy { $0.kind == .created })
    }

    @Test("signed-out callers, unknown time zones and bad uids are refused", arguments: [
        (nil as String?, "Asia/Seoul", FunctionsErrorCode.unauthenticated),
        ("alice", "Mars/Olympus", .invalidArgument),
        ("a/b", "Asia/Seoul", .invalidArgument),
    ])
    func refusals(uid: String?, zone: String, code: FunctionsErrorCode) async throws {
        let app = try await TestRuntime(units: ["Members"])
        await #expect(throws: HTTPSError.self) { try await app.call("initializeMember", ["timeZone": .string(zone)], as: uid) }
        do { try await app.call("initializeMember", ["timeZone": .string(zone)], as: uid) } catch let e as HTTPSError {
            #expect(e.code == code)
        }
        #expect(app.documents.lastSequence == 0, "nothing is written")
    }
}
