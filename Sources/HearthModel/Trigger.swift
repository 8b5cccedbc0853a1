/// What makes a function run. Every function has exactly one trigger.
public enum Trigger: Sendable, Hashable {
    /// A Firebase callable (`onCall`), reached at `POST /{name}`.
    case callable
    /// A plain HTTP function (`onRequest`), reached through rewrites or `/{name}`.
    case request
    /// A schedule (`onSchedule`): unix cron or the English forms, in an IANA time zone.
    case schedule(schedule: String, timeZone: String)
    /// A task queue named like the function (`onTaskDispatched`).
    case task
    /// A document change matching a pattern (`onDocumentCreated/Updated/Deleted/Written`).
    case document(DocumentEventKind, pattern: String)
    /// A user created in or deleted from auth (`onUserCreated/onUserDeleted`).
    case user(UserEventKind)

    /// Short name for tables and logs: `callable`, `document.created`, `schedule`…
    public var kindName: String {
        switch self {
        case .callable: return "callable"
        case .request: return "request"
        case .schedule: return "schedule"
        case .task: return "task"
        case .document(let kind, _): return "document.\(kind.rawValue)"
        case .user(let kind): return "user.\(kind.rawValue)"
        }
    }

    /// Whether the function runs from the delivery engine (retries, dead letters) rather than HTTP.
    public var isEvent: Bool {
        switch self {
        case .callable, .request: return false
        default: return true
        }
    }

    /// A one-line human description: `document.created members/{uid}`.
    public var summary: String {
        switch self {
        case .schedule(let s, let tz): return "schedule \"\(s)\" (\(tz))"
        case .document(let k, let p): return "document.\(k.rawValue) \(p)"
        default: return kindName
        }
    }
}

public enum DocumentEventKind: String, Sendable, Hashable, Codable, CaseIterable {
    case created, updated, deleted, written

    /// Whether a change of this kind reaches a function declared for `self`.
    public func accepts(_ change: ChangeKind) -> Bool {
        switch self {
        case .written: return true
        case .created: return change == .created
        case .updated: return change == .updated
        case .deleted: return change == .deleted
        }
    }
}

/// What happened to a document in one committed write.
public enum ChangeKind: String, Sendable, Hashable, Codable {
    case created, updated, deleted
}

public enum UserEventKind: String, Sendable, Hashable, Codable, CaseIterable {
    case created, deleted
}

extension Trigger: Codable {
    // Encoded as an object with exactly one key naming the kind:
    // {"callable": {}}, {"schedule": {"schedule": "...", "timeZone": "..."}}, {"document": {"event": "created", "pattern": "..."}}
    enum Kind: String, CodingKey, CaseIterable { case callable, request, schedule, task, document, user }
    enum Fields: String, CodingKey { case schedule, timeZone, event, pattern }

    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: Kind.self)
        let present = Kind.allCases.filter { c.contains($0) }
        guard present.count == 1, let kind = present.first else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath,
                debugDescription: "a trigger has exactly one of \(Kind.allCases.map(\.rawValue).joined(separator: ", ")); found \(present.isEmpty ? "none" : present.map(\.rawValue).joined(separator: ", "))"))
        }
        switch kind {
        case .callable: self = .callable
        case .request: self = .request
        case .task: self = .task
        case .schedule:
            let f = try c.nestedContainer(keyedBy: Fields.self, forKey: .schedule)
            self = .schedule(schedule: try f.decode(String.self, forKey: .schedule), timeZone: try f.decodeIfPresent(String.self, forKey: .timeZone) ?? "UTC")
        case .document:
            let f = try c.nestedContainer(keyedBy: Fields.self, forKey: .document)
            self = .document(try f.decode(DocumentEventKind.self, forKey: .event), pattern: try f.decode(String.self, forKey: .pattern))
        case .user:
            let f = try c.nestedContainer(keyedBy: Fields.self, forKey: .user)
            self = .user(try f.decode(UserEventKind.self, forKey: .event))
        }
    }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: Kind.self)
        switch self {
        case .callable: _ = c.nestedContainer(keyedBy: Fields.self, forKey: .callable)
        case .request: _ = c.nestedContainer(keyedBy: Fields.self, forKey: .request)
        case .task: _ = c.nestedContainer(keyedBy: Fields.self, forKey: .task)
        case .schedule(let s, let tz):
            var f = c.nestedContainer(keyedBy: Fields.self, forKey: .schedule)
            try f.encode(s, forKey: .schedule)
            try f.encode(tz, forKey: .timeZone)
        case .document(let k, let p):
            var f = c.nestedContainer(keyedBy: Fields.self, forKey: .document)
            try f.encode(k, forKey: .event)
            try f.encode(p, forKey: .pattern)
        case .user(let k):
            var f = c.nestedContainer(keyedBy: Fields.self, forKey: .user)
            try f.encode(k, forKey: .event)
        }
    }
}
