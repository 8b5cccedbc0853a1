import HearthModel

/// Delivery payloads as schema versions before 12 stored them: `Value` maps in `BinaryValueCodec`'s
/// encoding, keyed by name. Read here only, once, to rewrite them as `Boundary.Event`s; nothing
/// else reads or writes this format.
enum LegacyPayload {
    /// Rewrites every stored payload. One that cannot be read as any event kind is kept as it was,
    /// its delivery dead-lettered with the reason (so nothing is lost, and `hearth deliveries list`
    /// shows why).
    static func convertAll(_ db: Connection) throws {
        let rows = try db.query("SELECT id, function, event_id, payload FROM deliveries") { ($0.int64(0), $0.text(1), $0.text(2), $0.blob(3)) }
        for (id, function, eventID, bytes) in rows {
            if let event = try? event(BinaryValueCodec.decode(bytes), function: function, eventID: eventID) {
                try db.run("UPDATE deliveries SET payload = ? WHERE id = ?", [.blob(event.wireBytes), .integer(id)])
            } else {
                try db.run("UPDATE deliveries SET state = ?, last_error = ?, lease_owner = NULL, lease_until = NULL WHERE id = ?",
                           [.integer(DeliveryState.dead.rawValue), .text("internal: the payload stored by an older version could not be read"), .integer(id)])
            }
        }
    }

    struct Unreadable: Error {}

    static func event(_ value: Value, function: String, eventID: String) throws -> Boundary.Event {
        func string(_ key: String) throws -> String { guard let s = value[key]?.stringValue else { throw Unreadable() }; return s }
        func time(_ key: String) throws -> Timestamp { guard let t = value[key]?.timestampValue else { throw Unreadable() }; return t }
        if value["path"] != nil {
            func document(_ key: String) throws -> StoredDocument? {
                guard let d = value[key] else { return nil }
                guard let p = d["path"]?.stringValue, case .map(let fields)? = d["fields"],
                      let c = d["createTime"]?.timestampValue, let u = d["updateTime"]?.timestampValue else { throw Unreadable() }
                return StoredDocument(path: try DocumentPath(p), fields: fields, createTime: c, updateTime: u)
            }
            var params: [String: String] = [:]
            for (k, v) in value["params"]?.mapValue ?? [:] { params[k] = v.stringValue }
            guard let kind = ChangeKind(rawValue: try string("kind")) else { throw Unreadable() }
            return .document(Boundary.DocumentEvent(id: try string("id"), time: try time("time"), kind: kind, path: try DocumentPath(try string("path")),
                                                    params: params, before: try document("before"), after: try document("after")))
        }
        if let user = value["user"] {
            guard let kind = UserEventKind(rawValue: try string("kind")) else { throw Unreadable() }
            return .user(Boundary.UserEvent(id: try string("id"), time: try time("time"), kind: kind, user: try ValueDecoder().decode(UserRecord.self, from: user)))
        }
        if value["jobName"] != nil {
            return .schedule(Boundary.ScheduleEvent(jobName: try string("jobName"), scheduleTime: try time("scheduleTime")))
        }
        if value["scheduledTime"] != nil {
            return .task(Boundary.TaskEvent(queueName: function, id: eventID, data: value["data"] ?? .null, scheduledTime: try time("scheduledTime")))
        }
        throw Unreadable()
    }
}
