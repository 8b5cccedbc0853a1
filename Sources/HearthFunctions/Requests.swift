import HearthModel

/// The verified identity of a callable's caller.
public struct AuthData: Sendable, Hashable {
    /// The user id (the token's `sub`).
    public let uid: String
    /// Every claim of the verified ID token, custom claims included (`token["admin"]`).
    public let token: [String: Value]
    /// The ID token as sent.
    public let rawToken: String

    public init(uid: String, token: [String: Value], rawToken: String) {
        self.uid = uid
        self.token = token
        self.rawToken = rawToken
    }

    public var email: String? { token["email"]?.stringValue }
    public var emailVerified: Bool { token["email_verified"]?.boolValue ?? false }
    /// `firebase.sign_in_provider` (`custom`, `apple.com`…).
    public var signInProvider: String? { token["firebase"]?["sign_in_provider"]?.stringValue }
}

/// A verified App Check token.
public struct AppCheckData: Sendable, Hashable {
    public let appId: String
    public let token: [String: Value]
}

/// A call to an `onCall` function.
///
/// `data` is what the client sent, decoded into the handler's type; `auth` is nil when the request
/// carried no `Authorization` header (a present but invalid token never reaches the handler: the
/// caller gets `unauthenticated`).
public struct CallableRequest<T: Sendable>: Sendable {
    public let data: T
    public let auth: AuthData?
    public let app: AppCheckData?
    /// The `Firebase-Instance-ID-Token` header (FCM registration token), when sent.
    public let instanceIdToken: String?
    /// The raw request headers, names lower-cased.
    public let headers: [String: String]
    /// True when the client asked for a streamed response (`Accept: text/event-stream`).
    public let acceptsStreaming: Bool
    public let context: FunctionContext

    /// Requires a signed-in caller: the uid, or `unauthenticated`.
    public func requireAuth() throws -> AuthData {
        guard let auth else { throw HTTPSError(.unauthenticated, "The function must be called while authenticated.") }
        return auth
    }

    /// Sends one chunk of a streamed response (`data: {"message": chunk}`). Returns false when the
    /// client did not ask for streaming (nothing is sent) or has gone away.
    @discardableResult
    public func sendChunk<C: Encodable>(_ chunk: C) async throws -> Bool {
        guard acceptsStreaming else { return false }
        let value = try ValueEncoder().encode(chunk)
        let sent = try await context.host.call("stream.send", ["chunk": value])
        return sent.boolValue ?? false
    }

    public var documents: Documents { context.documents }
    public var logger: Logger { context.logger }
}

/// What the host sends for a callable invocation.
struct CallablePayload {
    var data: Value
    var auth: AuthData?
    var app: AppCheckData?
    var instanceIdToken: String?
    var headers: [String: String]
    var acceptsStreaming: Bool

    init(_ event: Value) {
        data = event["data"] ?? .null
        if case .map(let a)? = event["auth"], let uid = a["uid"]?.stringValue {
            auth = AuthData(uid: uid, token: a["token"]?.mapValue ?? [:], rawToken: a["rawToken"]?.stringValue ?? "")
        }
        if case .map(let a)? = event["app"], let appId = a["appId"]?.stringValue {
            app = AppCheckData(appId: appId, token: a["token"]?.mapValue ?? [:])
        }
        instanceIdToken = event["instanceIdToken"]?.stringValue
        var headers: [String: String] = [:]
        for (k, v) in event["headers"]?.mapValue ?? [:] { headers[k] = v.stringValue }
        self.headers = headers
        acceptsStreaming = event["acceptsStreaming"]?.boolValue ?? false
    }
}

/// A scheduled firing of an `onSchedule` function.
public struct ScheduledEvent: Sendable {
    /// The function's name.
    public let jobName: String
    /// The instant this firing was scheduled for (not when it ran, which can be later after downtime).
    public let scheduleTime: Timestamp
    public let context: FunctionContext

    public var documents: Documents { context.documents }
    public var logger: Logger { context.logger }
}

/// One dispatch of a task from a task queue (`onTaskDispatched`), like Firebase's `TaskRequest`.
public struct TaskRequest<T: Sendable>: Sendable {
    public let data: T
    public let queueName: String
    public let id: String
    /// Retries before this one (0 on the first attempt).
    public let retryCount: Int
    /// Earlier attempts the handler answered with something other than a 5xx failure, as Cloud
    /// Tasks counts them: a failure with a 4xx code (`invalid-argument`, `failed-precondition`, …)
    /// counts; `internal`, `unavailable`, timeouts and crashes do not.
    public let executionCount: Int
    /// When the task was scheduled to run first.
    public let scheduledTime: Timestamp
    /// The outcome of the previous attempt as an HTTP-style status, if any.
    public let previousResponse: Int?
    /// Why the task is being retried, if it is.
    public let retryReason: String?
    public let context: FunctionContext

    public var documents: Documents { context.documents }
    public var logger: Logger { context.logger }
}

/// A document as a trigger sees it.
public struct DocumentSnapshot<T: Sendable>: Sendable {
    public let path: DocumentPath
    public let data: T
    public let createTime: Timestamp
    public let updateTime: Timestamp

    public var id: String { path.id }
}

/// A change to a document matching an `onDocument…` pattern.
public struct DocumentEvent<T: Sendable>: Sendable {
    /// Stable across retries; use it to make handlers idempotent.
    public let id: String
    /// The commit time of the change.
    public let time: Timestamp
    public let kind: ChangeKind
    public let path: DocumentPath
    /// The pattern's wildcards: `members/{uid}` gives `params["uid"]`.
    public let params: [String: String]
    /// The document before the change (nil when it was created).
    public let before: DocumentSnapshot<T>?
    /// The document after the change (nil when it was deleted).
    public let after: DocumentSnapshot<T>?
    public let context: FunctionContext

    /// The document the event is about: `after`, or `before` for a deletion.
    public var data: DocumentSnapshot<T>? { after ?? before }

    public var documents: Documents { context.documents }
    public var logger: Logger { context.logger }
}

/// A user created in or deleted from auth (`onUserCreated`, `onUserDeleted`).
public struct UserEvent: Sendable {
    public let id: String
    public let time: Timestamp
    public let kind: UserEventKind
    /// The user; for a deletion, the record as it was before.
    public let user: UserRecord
    public let context: FunctionContext

    public var documents: Documents { context.documents }
    public var logger: Logger { context.logger }
}
