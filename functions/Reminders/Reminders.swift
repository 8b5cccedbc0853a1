import Foundation
import HearthFunctions
import TodoModel

/// Reminders (SCENARIOS §4): a tick every 5 minutes finds the members whose reminder time has just
/// come in their own time zone and enqueues a push per item due on their local tomorrow; the task
/// sends it at most once per item and day.
public enum Reminders: FunctionModule {
    public static let name = "Reminders"

    /// The task's payload.
    public struct PushTask: Codable, Sendable, Equatable {
        public var userId: String
        public var itemId: String
        public var targetDateKey: String
        public var title: String
        public var body: String

        public init(userId: String, itemId: String, targetDateKey: String, title: String, body: String) {
            self.userId = userId
            self.itemId = itemId
            self.targetDateKey = targetDateKey
            self.title = title
            self.body = body
        }
    }

    /// The reminder window: a member whose reminder time falls in the 5 minutes before a tick (the
    /// tick included) is reminded by that tick, exactly one tick per reminder time.
    public static let window: Duration = .seconds(300)
    static let pageSize = 300

    public static func register(_ fn: inout FunctionRegistry) {
        // Retried: a tick works from its scheduleTime and makes stable task ids, so running it
        // again queues nothing twice.
        // A few quick retries only: a tick retried much later would remind at the wrong local time.
        fn.onSchedule("scheduleTodoReminder", .init(schedule: "*/5 * * * *",
                                                    retry: .policy(.exponential(maxAttempts: 3, minBackoff: .seconds(5), maxBackoff: .seconds(30))),
                                                    timeout: .seconds(240))) { event in
            let enqueued = try await tick(at: event.scheduleTime, docs: event.documents, tasks: event.tasks)
            if enqueued > 0 { event.logger.info("reminders enqueued", ["tasks": .int(Int64(enqueued))]) }
        }

        fn.onTaskDispatched("sendPushNotification", .init(retry: .exponential(maxAttempts: 3), rateLimits: .init(maxDispatchesPerSecond: 10))) {
            (req: TaskRequest<[String: Value]>) in
            try await send(req)
        }
    }

    // MARK: the tick

    /// Enqueues the pushes for every member whose reminder time came in the window ending at `now`.
    static func tick(at now: Timestamp, docs: Documents, tasks: TaskQueues) async throws -> Int {
        var enqueued = 0
        // One member's failure does not cost the members after it their reminder: the rest go on
        // and the tick fails (and is retried) at the end.
        var failure: Error?
        var page = try docs.collectionGroup("profiles").whereField("pushEnabled", isEqualTo: true).limit(to: pageSize)
        while true {
            let settings = try await page.getDocuments([String: Value].self)
            guard let last = settings.last else {
                if let failure { throw failure }
                return enqueued
            }
            for doc in settings where doc.id == "settings" {
                // members/{uid}/profiles/settings, and nothing else that is called settings.
                let segments = doc.path.segments
                guard segments.count == 4, segments[0] == "members", segments[2] == "profiles", let paths = try? MemberPaths(uid: segments[1]),
                      let due = dueReminder(doc.data, at: now) else { continue }
                do { enqueued += try await enqueue(for: paths, day: due, docs: docs, tasks: tasks) } catch { failure = error }
            }
            page = page.start(afterDocument: last)
        }
    }

    /// The local day whose reminder falls in `(now - window, now]` for these settings, with the
    /// member's time zone; nil when none does (or the settings are unusable).
    public static func dueReminder(_ settings: [String: Value], at now: Timestamp) -> LocalDay? {
        guard let zone = settings["timeZone"]?.stringValue.flatMap(TimeZone.init(identifier:)),
              let hour = settings["reminderHour"]?.intValue, (0...23).contains(hour),
              let minute = settings["reminderMinute"]?.intValue, (0...59).contains(minute) else { return nil }
        let instant = Date(timeIntervalSince1970: now.secondsSinceEpoch)
        let today = LocalDay(instant, in: zone)
        // Near midnight the window can hold yesterday's reminder time (23:58 seen at 00:00).
        for day in [today, today.adding(days: -1)] {
            guard let reminder = day.instant(hour: Int(hour), minute: Int(minute)) else { continue }
            let age = instant.timeIntervalSince(reminder)
            if age >= 0 && age < window.secondsDouble { return day }
        }
        return nil
    }

    /// Enqueues one push per item of the member that is due on `day`'s tomorrow, not done, not
    /// deleted. Task ids are made from the member, item and day: a tick run again (a retry, a
    /// second node) asks for the same tasks and the queue keeps one of each.
    static func enqueue(for paths: MemberPaths, day: LocalDay, docs: Documents, tasks: TaskQueues) async throws -> Int {
        let tomorrow = day.adding(days: 1)
        guard let start = tomorrow.start, let end = tomorrow.adding(days: 1).start else { return 0 }
        let items = try await docs.collection(paths.items)
            .whereField("targetDate", isGreaterThanOrEqualTo: start).whereField("targetDate", isLessThan: end)
            .getDocuments([String: Value].self)
        let queue = tasks.queue("sendPushNotification")
        var enqueued = 0
        for item in items where item.data["isDone"]?.boolValue != true && (item.data["deletedAt"]?.isNull ?? true) {
            let title = item.data["title"]?.stringValue ?? ""
            let task = PushTask(userId: paths.uid, itemId: item.id, targetDateKey: tomorrow.key, title: "Due tomorrow", body: title)
            do {
                _ = try await queue.enqueue(task, options: TaskOptions(id: StableID.of(paths.uid, item.id, tomorrow.key)))
                enqueued += 1
            } catch let error as HTTPSError where error.code == .alreadyExists {
                continue
            }
        }
        return enqueued
    }

    // MARK: the push

    /// One push, at most once per item and day, whatever the retries and duplicates.
    static func send(_ req: TaskRequest<[String: Value]>) async throws {
        // 1. A payload that can never work is not retried.
        guard let task = validPayload(req.data) else {
            req.logger.warning("sendPushNotification: invalid payload, dropped", ["task": .string(req.id)])
            return
        }
        let docs = req.documents
        let paths = try MemberPaths(uid: task.userId)
        // 2. The latest state must still call for it.
        guard let settings = try await docs.document(paths.settings).get([String: Value].self)?.data,
              settings["pushEnabled"]?.boolValue == true,
              let zone = settings["timeZone"]?.stringValue.flatMap(TimeZone.init(identifier:)),
              let item = try await docs.document(try paths.item(task.itemId)).get([String: Value].self)?.data,
              item["isDone"]?.boolValue != true, item["deletedAt"]?.isNull ?? true,
              case .timestamp(let due)? = item["targetDate"],
              LocalDay(Date(timeIntervalSince1970: due.secondsSinceEpoch), in: zone).key == task.targetDateKey else {
            return
        }
        // 3. Claim the delivery record with a create; one already sent ends here.
        let recordID = DeliveryRecord.id(itemId: task.itemId, targetDateKey: task.targetDateKey)
        let record = try docs.document(try paths.deliveryRecord(recordID))
        // The record goes `claimed` → `sending` (in its own transaction, just before the push) →
        // `sent`. A failure before the push leaves it `claimed`, so the retry goes on; a transient
        // failure of the push itself puts it back to `claimed`. An attempt that finds `sending`
        // (another attempt is sending, or one died or timed out mid-send) stops: a push lost at
        // that instant is the price of never sending two.
        let claimed = try await docs.runTransaction { tx -> Bool in
            if let existing = try await tx.get(record, DeliveryRecord.self)?.data { return existing.state == "claimed" }
            try tx.create(record, DeliveryRecord(itemId: task.itemId, targetDateKey: task.targetDateKey))
            return true
        }
        guard claimed else { return }
        // 4. The notification record stays even when no push can be sent (one per item and day).
        let message = try docs.document(try paths.message(recordID))
        do {
            _ = try await message.create(Message(itemId: task.itemId, title: task.title, body: task.body, targetDateKey: task.targetDateKey))
        } catch let error as HTTPSError where error.code == .alreadyExists {}
        // 5. The push, with the unread count as the badge.
        let secrets = try docs.document(paths.secrets)
        guard let token = try await secrets.get(Secrets.self)?.data.fcmToken, !token.isEmpty else {
            _ = try await record.update(["state": .value(.string("noToken"))])
            return
        }
        let unread = try await docs.collection(paths.messages).whereField("isRead", isEqualTo: false).whereField("isDeleted", isEqualTo: false).count()
        let sending = try await docs.runTransaction { tx -> Bool in
            guard try await tx.get(record, DeliveryRecord.self)?.data.state == "claimed" else { return false }
            try tx.update(record, ["state": .value(.string("sending"))])
            return true
        }
        guard sending else { return }
        do {
            // FCM takes 4 KiB: a long body is cut (at a character, within 1000 bytes) rather than
            // the push refused.
            let body = Reminders.cut(task.body, toBytes: 1000)
            try await req.messaging.send(PushMessage(token: token, title: task.title, body: body,
                                                     data: ["itemId": task.itemId, "targetDateKey": task.targetDateKey], badge: unread, sound: "default"))
        } catch let error as HTTPSError where error.code == .invalidArgument {
            // A message FCM (or the SDK's check) refuses is not the token's fault: keep the token,
            // end here (a retry would be refused the same way).
            _ = try await record.update(["state": .value(.string("refused"))])
            req.logger.warning("push refused", ["userId": .string(task.userId), "reason": .string(error.message)])
            return
        } catch let error as HTTPSError where error.code == .deadlineExceeded {
            // FCM may have taken it before the time ran out: stay `sending`, do not send again.
            req.logger.warning("push timed out; not retried, as it may have been delivered", ["userId": .string(task.userId)])
            return
        } catch let error as HTTPSError where !Messaging.isUnregistered(error) {
            // Transient (or a configuration problem): the retry may send, so the claim goes back.
            _ = try? await record.update(["state": .value(.string("claimed"))])
            throw error
        } catch let error as HTTPSError {
            // The app is gone from that device: forget the token, unless it changed meanwhile, and
            // end here; retrying cannot help.
            try await docs.runTransaction { tx in
                if try await tx.get(secrets, Secrets.self)?.data.fcmToken == token { try tx.update(secrets, ["fcmToken": FieldValue.null]) }
                try tx.update(record, ["state": .value(.string("tokenRemoved"))])
            }
            req.logger.info("push token removed", ["userId": .string(task.userId), "reason": .string(error.message)])
            return
        }
        // A transient failure was thrown on above: the queue retries, and the claim lets it through.
        _ = try await record.update(["state": .value(.string("sent")), "sentAt": .serverTimestamp()])
    }

    /// `text` cut at a character boundary so it takes at most `limit` bytes of UTF-8 (with "…").
    static func cut(_ text: String, toBytes limit: Int) -> String {
        guard text.utf8.count > limit else { return text }
        var out = ""
        for ch in text {
            if out.utf8.count + ch.utf8.count + 3 > limit { break }
            out.append(ch)
        }
        return out + "…"
    }

    /// The payload, when every field is a non-empty string and the ids hold no '/'.
    static func validPayload(_ data: [String: Value]) -> PushTask? {
        var fields: [String: String] = [:]
        for key in ["userId", "itemId", "targetDateKey", "title", "body"] {
            guard let s = data[key]?.stringValue, !s.isEmpty || key == "body" else { return nil }
            fields[key] = s
        }
        for key in ["userId", "itemId", "targetDateKey"] where (try? Validate.identifier(fields[key]!, name: key)) == nil { return nil }
        guard LocalDay(key: fields["targetDateKey"]!) != nil else { return nil }
        return PushTask(userId: fields["userId"]!, itemId: fields["itemId"]!, targetDateKey: fields["targetDateKey"]!,
                        title: fields["title"]!, body: fields["body"]!)
    }
}

/// A calendar day in a time zone (the member's "today" and "tomorrow").
public struct LocalDay: Sendable, Equatable {
    public let year: Int
    public let month: Int
    public let day: Int
    public let zone: TimeZone

    var calendar: Calendar {
        var c = Calendar(identifier: .gregorian)
        c.timeZone = zone
        return c
    }

    public init(_ instant: Date, in zone: TimeZone) {
        var c = Calendar(identifier: .gregorian)
        c.timeZone = zone
        let parts = c.dateComponents([.year, .month, .day], from: instant)
        year = parts.year ?? 1970
        month = parts.month ?? 1
        day = parts.day ?? 1
        self.zone = zone
    }

    /// A `yyyy-MM-dd` key, in UTC's calendar (only the date matters).
    public init?(key: String) {
        let parts = key.split(separator: "-")
        guard parts.count == 3, parts[0].count == 4, parts[1].count == 2, parts[2].count == 2,
              let y = Int(parts[0]), let m = Int(parts[1]), let d = Int(parts[2]), (1...12).contains(m), (1...31).contains(d) else { return nil }
        year = y
        month = m
        day = d
        zone = TimeZone(identifier: "UTC")!
    }

    /// `yyyy-MM-dd`.
    public var key: String {
        String(format: "%04d-%02d-%02d", year, month, day)
    }

    /// The day `n` days later (or earlier), across month and year ends.
    public func adding(days n: Int) -> LocalDay {
        let noon = calendar.date(from: DateComponents(year: year, month: month, day: day, hour: 12)) ?? Date(timeIntervalSince1970: 0)
        return LocalDay(calendar.date(byAdding: .day, value: n, to: noon) ?? noon, in: zone)
    }

    /// Local midnight (where a time zone skips midnight, the first instant of the day).
    public var start: Date? { calendar.startOfDay(for: calendar.date(from: DateComponents(year: year, month: month, day: day, hour: 12)) ?? Date()) }

    /// `hour:minute` on this day; a time that a DST change skips is taken as the instant after
    /// the gap (02:30 on a spring-forward day is 03:30), one that repeats as its first occurrence.
    public func instant(hour: Int, minute: Int) -> Date? {
        calendar.date(from: DateComponents(year: year, month: month, day: day, hour: hour, minute: minute))
    }
}
