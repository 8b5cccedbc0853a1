import HearthModel
import HearthTesting
import Testing

@Suite("Items: soft delete, undo, the triggers after an item, the daily purge (SCENARIOS §3)")
struct ItemLifecycleTests {
    func code(_ body: () async throws -> Void) async -> FunctionsErrorCode? {
        do { try await body(); return nil } catch let e as HTTPSError { return e.code } catch { return .unknown }
    }

    @Test("deleteItem marks the item and its messages, all or nothing; twice is failed-precondition; restoreItem undoes both")
    func softDelete() async throws {
        let app = try await TestRuntime(units: appUnits)
        try await app.member("hana")
        let created = try await app.call("createItem", ["title": "milk"], as: "hana")
        let id = try #require(created["itemId"]?.stringValue)
        try await app.seed(["members/hana/messages/m1": ["itemId": .string(id), "isDeleted": false, "isRead": false],
                            "members/hana/messages/m2": ["itemId": .string(id), "isDeleted": false, "isRead": true],
                            "members/hana/messages/other": ["itemId": "else", "isDeleted": false, "isRead": false]])
        let deleted = try await app.call("deleteItem", ["itemId": .string(id)], as: "hana")
        #expect(deleted["messages"] == 2)
        let item = try #require(try await app.document("members/hana/items/\(id)"))
        #expect(item.fields["deletedAt"] == .timestamp(item.updateTime))
        #expect(try await app.document("members/hana/messages/m1")?.fields["isDeleted"] == true)
        #expect(try await app.document("members/hana/messages/other")?.fields["isDeleted"] == false)
        #expect(await code { try await app.call("deleteItem", ["itemId": .string(id)], as: "hana") } == .failedPrecondition)
        #expect(await code { try await app.call("deleteItem", ["itemId": "nope"], as: "hana") } == .notFound)
        #expect(await code { try await app.call("deleteItem", ["itemId": "a/b"], as: "hana") } == .invalidArgument)
        #expect(await code { try await app.call("deleteItem", ["itemId": .string(id)]) } == .unauthenticated)
        #expect(await code { try await app.call("deleteItem", ["itemId": .string(id)], as: "intruder") } == .notFound, "another member's item is not there")

        _ = try await app.call("restoreItem", ["itemId": .string(id)], as: "hana")
        #expect(try await app.document("members/hana/items/\(id)")?.fields["deletedAt"] == .null)
        #expect(try await app.document("members/hana/messages/m2")?.fields["isDeleted"] == false)
        #expect(await code { try await app.call("restoreItem", ["itemId": .string(id)], as: "hana") } == .failedPrecondition)
    }

    @Test("messages and links have the same pair with isDeleted")
    func messageAndLinkPairs() async throws {
        let app = try await TestRuntime(units: appUnits)
        try await app.member("ivo")
        try await app.seed(["members/ivo/messages/m": ["itemId": "x", "isDeleted": false], "members/ivo/links/l": ["url": "https://a.example", "isDeleted": false]])
        for (kind, field, id) in [("Message", "messageId", "m"), ("Link", "linkId", "l")] {
            let path = "members/ivo/\(kind.lowercased())s/\(id)"
            _ = try await app.call("delete\(kind)", [field: .string(id)], as: "ivo")
            #expect(try await app.document(path)?.fields["isDeleted"] == true)
            #expect(await code { try await app.call("delete\(kind)", [field: .string(id)], as: "ivo") } == .failedPrecondition)
            _ = try await app.call("restore\(kind)", [field: .string(id)], as: "ivo")
            #expect(try await app.document(path)?.fields["isDeleted"] == false)
            #expect(await code { try await app.call("restore\(kind)", [field: "missing"], as: "ivo") } == .notFound)
        }
    }

    @Test("an item really deleted takes its messages and delivery records with it; completing an overdue item drops its records")
    func itemTriggers() async throws {
        let app = try await TestRuntime(units: appUnits)
        try await app.member("jun")
        let past = Value.timestamp(app.clock.now() - .seconds(86_400))
        let future = Value.timestamp(app.clock.now() + .seconds(86_400))
        try await app.seed([
            "members/jun/items/gone": ["title": "g", "isDone": false, "targetDate": past],
            "members/jun/items/late": ["title": "l", "isDone": false, "targetDate": past],
            "members/jun/items/early": ["title": "e", "isDone": false, "targetDate": future],
            "members/jun/messages/m1": ["itemId": "gone"], "members/jun/messages/m2": ["itemId": "late"],
            "members/jun/deliveryRecords/gone_2025-12-31": ["itemId": "gone", "state": "sent"],
            "members/jun/deliveryRecords/late_2025-12-31": ["itemId": "late", "state": "sent"],
            "members/jun/deliveryRecords/early_2026-01-02": ["itemId": "early", "state": "claimed"],
        ])
        await app.settle()
        try await app.delete("members/jun/items/gone")
        try await app.write(["members/jun/items/late": ["title": "l", "isDone": true, "targetDate": past]])
        try await app.write(["members/jun/items/early": ["title": "e", "isDone": true, "targetDate": future]])
        await app.settle()
        #expect(try await app.document("members/jun/messages/m1") == nil)
        #expect(try await app.document("members/jun/deliveryRecords/gone_2025-12-31") == nil)
        #expect(try await app.document("members/jun/messages/m2") != nil, "completing keeps the messages")
        #expect(try await app.document("members/jun/deliveryRecords/late_2025-12-31") == nil, "completed after its due date")
        #expect(try await app.document("members/jun/deliveryRecords/early_2026-01-02") != nil, "not yet due")
    }

    @Test("at 09:00 Asia/Seoul: deleted messages and links are gone, items deleted over 24 h ago keep 8 fields, the rest is untouched")
    func dailyPurge() async throws {
        // TestRuntime starts at 2026-01-01T00:00:00Z, which is 09:00 in Seoul: the next run is a day later.
        let app = try await TestRuntime(units: appUnits)
        let now = app.clock.now()
        let full: [String: Value] = ["sequence": 1, "title": "t", "body": "b", "tags": ["x"], "category": "default", "isDone": false,
                                     "completedAt": .null, "targetDate": .null, "createdAt": .timestamp(now), "updatedAt": .timestamp(now),
                                     "goalId": .null, "priority": 2]
        var old = full, recent = full, live = full
        old["deletedAt"] = .timestamp(now - .seconds(3600))            // 25 h old at the purge
        recent["deletedAt"] = .timestamp(now + .seconds(20 * 3600))    // 4 h old at the purge
        live["deletedAt"] = .null
        try await app.seed([
            "members/kai/items/old": .map(old), "members/kai/items/recent": .map(recent), "members/kai/items/live": .map(live),
            "members/kai/messages/gone": ["isDeleted": true], "members/kai/messages/kept": ["isDeleted": false],
            "members/lee/links/gone": ["isDeleted": true], "members/lee/links/kept": ["isDeleted": false],
        ])
        await app.advance(by: .seconds(23 * 3600))
        #expect(try await app.document("members/kai/messages/gone") != nil, "not yet 09:00")
        await app.advance(by: .seconds(3600))
        #expect(try await app.document("members/kai/messages/gone") == nil)
        #expect(try await app.document("members/lee/links/gone") == nil)
        #expect(try await app.document("members/kai/messages/kept") != nil)
        #expect(try await app.document("members/lee/links/kept") != nil)
        let compacted = try #require(try await app.document("members/kai/items/old"))
        #expect(Set(compacted.fields.keys) == ["sequence", "title", "category", "isDone", "targetDate", "createdAt", "deletedAt", "goalId"])
        #expect(compacted.fields["createdAt"] == .timestamp(now), "the kept fields keep their values")
        #expect(try await app.document("members/kai/items/recent")?.fields.count == 13)
        #expect(try await app.document("members/kai/items/live")?.fields.count == 13)

        // A compacted item can be restored (its dropped fields come back at their defaults) and updated.
        _ = try await app.call("restoreItem", ["itemId": "old"], as: "kai")
        _ = try await app.call("updateItem", ["itemId": "old", "title": "back"], as: "kai")
        let restored = try #require(try await app.document("members/kai/items/old"))
        #expect(restored.fields["title"] == "back")
        #expect(restored.fields["body"] == "" && restored.fields["priority"] == 0 && restored.fields["deletedAt"] == .null, "\(restored.fields)")
        _ = try await app.call("deleteItem", ["itemId": "old"], as: "kai")
        await app.advance(by: .seconds(1))
        try await app.write(["members/kai/items/old": .map(compacted.fields)])  // compacted again, as before

        // The next day's run finds them compact and writes nothing.
        let stamp = try #require(try await app.document("members/kai/items/old")).updateTime
        await app.advance(by: .seconds(24 * 3600))
        #expect(try await app.document("members/kai/items/old")?.updateTime == stamp)
        #expect(try await app.document("members/kai/items/recent")?.fields.count == 8)
    }
}
