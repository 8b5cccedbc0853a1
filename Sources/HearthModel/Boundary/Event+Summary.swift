extension Boundary.Event {
    /// The event as people read it (`hearth deliveries list`, the admin API): its fields by name.
    /// For display only; the boundary and the database carry the wire encoding.
    public var summary: Value {
        switch self {
        case .callable(let e):
            var m: [String: Value] = ["kind": "callable", "data": e.data, "acceptsStreaming": .bool(e.acceptsStreaming)]
            if let auth = e.auth { m["uid"] = .string(auth.uid) }
            return .map(m)
        case .request(let e):
            return ["kind": "request", "method": .string(e.method), "path": .string(e.path), "query": .string(e.query), "bodyBytes": .int(Int64(e.body.count))]
        case .document(let e):
            var m: [String: Value] = ["kind": "document", "id": .string(e.id), "time": .timestamp(e.time), "change": .string(e.kind.rawValue),
                                      "path": .string(e.path.description), "params": .map(e.params.mapValues { .string($0) })]
            if let before = e.before { m["before"] = .map(before.fields) }
            if let after = e.after { m["after"] = .map(after.fields) }
            return .map(m)
        case .task(let e):
            return ["kind": "task", "queueName": .string(e.queueName), "id": .string(e.id), "data": e.data, "scheduledTime": .timestamp(e.scheduledTime)]
        case .schedule(let e):
            return ["kind": "schedule", "jobName": .string(e.jobName), "scheduleTime": .timestamp(e.scheduleTime)]
        case .user(let e):
            return ["kind": "user", "id": .string(e.id), "time": .timestamp(e.time), "change": .string(e.kind.rawValue), "uid": .string(e.user.uid)]
        }
    }

    /// When the event happened, for events that record it (document and user events): trigger
    /// latency is measured from it.
    public var time: Timestamp? {
        switch self {
        case .document(let e): return e.time
        case .user(let e): return e.time
        default: return nil
        }
    }
}
