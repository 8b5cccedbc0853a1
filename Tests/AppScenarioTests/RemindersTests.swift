import Foundation
import HearthModel
import HearthTesting
import Testing

@Suite("Reminders: schedule → task queue → push (SCENARIOS §4)")
struct RemindersTests {
    /// 2026-01-01T00:00:00Z is 09:00 in Seoul (UTC+9, no DST).
    static let newYear = Timestamp(seconds: 1_767_225_600)

    /// A member with settings and the items given as (id, due instant, extra fields).
    func member(_ app: TestRuntime, _ uid: String, zone: String, hour: Int, minute: Int, token: String? = "tok-\(UUID().uuidString.prefix(8))",
                items: [(String, Timestamp?, [String: Value])]) async throws {
        try await app.member(uid, timeZone: zone)
        var docs: [String: Value] = ["members/\(uid)/profiles/settings": ["pushEnabled": true, "reminderHour": .int(Int64(hour)),
                                                                           "reminderMinute": .int(Int64(minute)), "timeZone": .string(zone)]]
        if let token { docs["members/\(uid)/profiles/secrets"] = ["fcmToken": .string(token)] }
        for (id, due, extra) in items {
            var fields: [String: Value] = ["title": .string("item \(id)"), "isDone": false, "deletedAt": .null,
                                           "targetDate": due.map { .timestamp($0) } ?? .null]
            for (k, v) in extra { fields[k] = v }
            docs["members/\(uid)/items/\(id)"] = .map(fields)
        }
        try await app.seed(docs)
    }

    func pushes(_ app: TestRuntime) throws -> [OutboxEntry] { try app.runtime.outbox(limit: 10_000) }

    @Test("Seoul at 09:10: only the open items due on the member's local tomorrow get a push, with the unread count as the badge")
    func seoulTomorrow() async throws {
        let app = try await TestRuntime(units: appUnits, start: Self.newYear)
        let hour: Duration = .seconds(3600)
        // Local tomorrow in Seoul is 2026-01-02, i.e. [2026-01-01T15:00Z, 2026-01-02T15:00Z).
        try await member(app, "sue", zone: "Asia/Seoul", hour: 9, minute: 10, token: "sue-token", items: [
            ("due", Self.newYear + hour * 15, [:]),                       // 00:00 local tomorrow: in
            ("late", Self.newYear + hour * 15 + hour * 24 - .seconds(1), [:]), // 23:59:59 tomorrow: in
            ("today", Self.newYear + hour * 14, [:]),                     // 23:00 today: out
            ("after", Self.newYear + hour * 39, [:]),                     // the day after: out
            ("done", Self.newYear + hour * 16, ["isDone": true]),
            ("deleted", Self.newYear + hour * 16, ["deletedAt": .timestamp(Self.newYear)]),
            ("undated", nil, [:]),
        ])
        try await app.seed(["members/sue/messages/old": ["isRead": false, "isDeleted": false, "itemId": "x"],
                            "members/sue/messages/read": ["isRead": true, "isDeleted": false, "itemId": "y"]])
        await app.advance(by: .seconds(300))   // 09:05: not yet
        #expect(try pushes(app).isEmpty)
        await app.advance(by: .seconds(300))   // 09:10: the window starts
        await app.advance(by: .seconds(5))     // the queue dispatches at most 10 a second
        let sent = try pushes(app)
        #expect(sent.count == 2, "\(sent.map(\.message.data))")
        #expect(Set(sent.compactMap { $0.message.data["itemId"] }) == ["due", "late"])
        #expect(sent.allSatisfy { $0.message.token == "sue-token" && $0.message.data["targetDateKey"] == "2026-01-02" && $0.outcome == "logged" })
        #expect(sent.map(\.message.badge).sorted { ($0 ?? 0) < ($1 ?? 0) } == [2, 3], "the old unread one plus each new record")
        let record = try #require(try await app.document("members/sue/deliveryRecords/due_2026-01-02"))
        #expect(record.fields["state"] == "sent")
        #expect(record.fields["sentAt"] == .timestamp(record.updateTime))
        #expect(try await app.document("members/sue/messages/due_2026-01-02")?.fields["isRead"] == false)
        await app.advance(by: .seconds(3600))  // later ticks: the window has passed
        #expect(try pushes(app).count == 2)
        #expect(try app.deliveries(function: "sendPushNotification").isEmpty)
    }

    @Test("the window's edges: a reminder at 23:58 is seen by the 00:00 tick (yesterday's date), tomorrow crossing a month end")
    func windowEdges() async throws {
        // 2026-01-31T14:55Z is 23:55 in Seoul on January 31.
        let start = Timestamp(seconds: 1_769_871_300)
        let app = try await TestRuntime(units: appUnits, start: start)
        // Local tomorrow of January 31 is February 1: [2026-01-31T15:00Z, 2026-02-01T15:00Z).
        try await member(app, "ted", zone: "Asia/Seoul", hour: 23, minute: 58, items: [
            ("feb1", start + .seconds(3600), [:]), ("feb2", start + .seconds(25 * 3600 + 600), [:])])
        await app.advance(by: .seconds(300))  // 00:00 on February 1: 23:58 was two minutes ago
        await app.advance(by: .seconds(5))
        let sent = try pushes(app)
        #expect(sent.map { $0.message.data["itemId"] } == ["feb1"], "the reminder day is January 31, so tomorrow is February 1")
        #expect(sent.first?.message.data["targetDateKey"] == "2026-02-01")
    }

    @Test("New York across the spring-forward night: 02:30 does not exist on 2026-03-08, the reminder comes once, after the gap")
    func daylightSaving() async throws {
        // 2026-03-08T06:00Z is 01:00 EST; clocks jump from 02:00 EST to 03:00 EDT at 07:00Z.
        let start = Timestamp(seconds: 1_772_949_600)
        let app = try await TestRuntime(units: appUnits, start: start)
        // Tomorrow (March 9, EDT) starts at 2026-03-09T04:00Z.
        try await member(app, "uma", zone: "America/New_York", hour: 2, minute: 30, items: [("mon", start + .seconds(23 * 3600), [:])])
        try await member(app, "val", zone: "America/New_York", hour: 4, minute: 0, items: [("mon", start + .seconds(23 * 3600), [:])])
        await app.advance(by: .seconds(4 * 3600))
        await app.advance(by: .seconds(5))
        let sent = try pushes(app)
        #expect(sent.count == 2, "one each: the skipped 02:30 comes once, after the gap")
        #expect(sent.allSatisfy { $0.message.data["targetDateKey"] == "2026-03-09" })
        #expect(try await app.document("members/uma/deliveryRecords/mon_2026-03-09")?.fields["state"] == "sent")
        #expect(try await app.document("members/val/deliveryRecords/mon_2026-03-09")?.fields["state"] == "sent")
    }

    @Test("a duplicated or retried task never sends twice; a bad payload is dropped without a retry; a stale task stops quietly")
    func atMostOnce() async throws {
        let app = try await TestRuntime(units: appUnits, start: Self.newYear)
        try await member(app, "wes", zone: "Asia/Seoul", hour: 9, minute: 0, token: "wes-token",
                         items: [("i1", Self.newYear + .seconds(20 * 3600), [:]), ("i2", Self.newYear + .seconds(20 * 3600), [:])])
        let task: Value = ["userId": "wes", "itemId": "i1", "targetDateKey": "2026-01-02", "title": "Due tomorrow", "body": "item i1"]
        _ = try await app.enqueue("sendPushNotification", task, id: "first")
        _ = try await app.enqueue("sendPushNotification", task, id: "second")
        await app.advance(by: .seconds(5))
        #expect(try pushes(app).count == 1)
        for bad: Value in [["userId": "wes", "itemId": "a/b", "targetDateKey": "2026-01-02", "title": "t", "body": "b"],
                           ["userId": "wes", "itemId": "i2", "title": "t", "body": "b"],
                           ["userId": "wes", "itemId": "i2", "targetDateKey": "tomorrow", "title": "t", "body": "b"]] {
            _ = try await app.enqueue("sendPushNotification", bad)
        }
        // Stale: the day no longer matches, the item is done, push is switched off.
        _ = try await app.enqueue("sendPushNotification", ["userId": "wes", "itemId": "i2", "targetDateKey": "2026-01-03", "title": "t", "body": "b"])
        await app.advance(by: .seconds(5))
        #expect(try pushes(app).count == 1)
        #expect(try app.deliveries(function: "sendPushNotification").isEmpty, "nothing retried, nothing dead")
        try await app.write(["members/wes/profiles/settings": ["pushEnabled": false, "reminderHour": 9, "reminderMinute": 0, "timeZone": "Asia/Seoul"]],
                            merge: true)
        _ = try await app.enqueue("sendPushNotification", ["userId": "wes", "itemId": "i2", "targetDateKey": "2026-01-02", "title": "t", "body": "b"])
        await app.advance(by: .seconds(5))
        #expect(try pushes(app).count == 1, "push switched off since the tick")
        #expect(try await app.document("members/wes/deliveryRecords/i2_2026-01-02") == nil)
    }

    @Test("the record's states: an attempt that failed before its push (claimed) is retried to a send; one caught mid-send (sending) is not sent again")
    func recordStates() async throws {
        let app = try await TestRuntime(units: appUnits, start: Self.newYear)
        try await member(app, "ivy", zone: "Asia/Seoul", hour: 9, minute: 0, token: "ivy-token",
                         items: [("a", Self.newYear + .seconds(20 * 3600), [:]), ("b", Self.newYear + .seconds(20 * 3600), [:])])
        try await app.seed(["members/ivy/deliveryRecords/a_2026-01-02": ["itemId": "a", "targetDateKey": "2026-01-02", "state": "claimed"],
                            "members/ivy/deliveryRecords/b_2026-01-02": ["itemId": "b", "targetDateKey": "2026-01-02", "state": "sending"]])
        for item in ["a", "b"] {
            _ = try await app.enqueue("sendPushNotification", ["userId": "ivy", "itemId": .string(item), "targetDateKey": "2026-01-02", "title": "t", "body": "b"])
        }
        await app.advance(by: .seconds(5))
        #expect(try pushes(app).map { $0.message.data["itemId"] } == ["a"])
        #expect(try await app.document("members/ivy/deliveryRecords/a_2026-01-02")?.fields["state"] == "sent")
        #expect(try await app.document("members/ivy/deliveryRecords/b_2026-01-02")?.fields["state"] == "sending")
    }

    @Test("a long body is cut at a character within FCM's limit, in bytes")
    func longBody() async throws {
        let app = try await TestRuntime(units: appUnits, start: Self.newYear)
        try await member(app, "jon", zone: "Asia/Seoul", hour: 9, minute: 0, items: [("i", Self.newYear + .seconds(20 * 3600), [:])])
        let long = String(repeating: "한국어", count: 400)  // 3,600 bytes
        _ = try await app.enqueue("sendPushNotification", ["userId": "jon", "itemId": "i", "targetDateKey": "2026-01-02", "title": "t", "body": .string(long)])
        await app.advance(by: .seconds(5))
        let body = try #require(try pushes(app).first?.message.body)
        #expect(body.utf8.count <= 1000)
        #expect(body.hasSuffix("…"))
        #expect(long.hasPrefix(String(body.dropLast())))
    }

    @Test("no token: the message record is kept, the push skipped; a user deleted while the task waits gets nothing")
    func noTokenAndDeletedUser() async throws {
        let app = try await TestRuntime(units: appUnits, start: Self.newYear)
        try await member(app, "xia", zone: "Asia/Seoul", hour: 9, minute: 0, token: nil, items: [("i", Self.newYear + .seconds(20 * 3600), [:])])
        try await member(app, "yan", zone: "Asia/Seoul", hour: 9, minute: 0, items: [("i", Self.newYear + .seconds(20 * 3600), [:])])
        _ = try await app.enqueue("sendPushNotification", ["userId": "xia", "itemId": "i", "targetDateKey": "2026-01-02", "title": "t", "body": "b"])
        await app.settle()
        #expect(try pushes(app).isEmpty)
        #expect(try await app.document("members/xia/messages/i_2026-01-02") != nil)
        #expect(try await app.document("members/xia/deliveryRecords/i_2026-01-02")?.fields["state"] == "noToken")

        try await app.deleteUser("yan")
        await app.settle()
        _ = try await app.enqueue("sendPushNotification", ["userId": "yan", "itemId": "i", "targetDateKey": "2026-01-02", "title": "t", "body": "b"])
        await app.settle()
        #expect(try pushes(app).isEmpty)
        #expect(try await app.countUnder("members/yan") == 0, "nothing written back for a deleted user")
    }

    @Test("changing the reminder time or zone takes effect at the next tick")
    func settingsChange() async throws {
        let app = try await TestRuntime(units: appUnits, start: Self.newYear)
        try await member(app, "zed", zone: "Asia/Seoul", hour: 9, minute: 30, items: [("i", Self.newYear + .seconds(20 * 3600), [:])])
        await app.advance(by: .seconds(600))
        _ = try await app.call("updateTimeZone", ["timeZone": "Asia/Tokyo"], as: "zed")  // same offset as Seoul
        try await app.write(["members/zed/profiles/settings": ["reminderHour": 9, "reminderMinute": 15]], merge: true)
        await app.advance(by: .seconds(300))  // 09:15 local
        await app.advance(by: .seconds(5))
        #expect(try pushes(app).count == 1)
    }
}
