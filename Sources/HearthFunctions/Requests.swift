import HearthModel

/// The verified identity of a caller: a callable's `req.auth`, or what `Auth.verifyIDToken` and
/// `HTTPRequest.verifiedAuth()` return. The token's signature, issuer, audience and expiry were checked.
public struct AuthData: Sendable, Hashable {
    /// The user id (the token's `sub`).
    public let uid: String
    /// Every claim of the verified ID token, custom claims included (`token["admin"]`).
    public let token: [String: Value]
    /// The ID token as sent.
    public let rawToken: String

    /// An identity with these parts, for tests; handlers receive verified ones.
    public init(uid: String, token: [String: Value], rawToken: String) {
        self.uid = uid
        self.token = token
        self.rawToken = rawToken
    }

    init(_ caller: CallerAuth) { self.init(uid: caller.uid, token: caller.claims, rawToken: caller.rawToken) }

    /// The token's `email` claim, if it has one.
    public var email: String? { token["email"]?.stringValue }
    /// The token's `email_verified` claim (false when absent).
    public var emailVerified: Bool { token["email_verified"]?.boolValue ?? false }
    /// `firebase.sign_in_provider` (`custom`, `apple.com`…).
    public var signInProvider: String? { token["firebase"]?["sign_in_provider"]?.stringValue }
}

/// A verified App Check token (`X-Firebase-AppCheck`).
public struct AppCheckData: Sendable, Hashable {
    /// The Firebase app id the token was issued to.
    public let appId: String
    /// Every claim of the verified token.
    public let token: [String: Value]
}

/// A call to an `onCall` function.
///
/// `data` is what the client sent, decoded into the handler's type (a body that does not decode is
/// answered `invalid-argument` before the handler runs); `auth` is nil when the request carried no
/// `Authorization` header (a present but invalid token never reaches the handler: the caller gets
/// `unauthenticated`).
///
/// ```swift
/// fn.onCall("deleteItem") { (req: CallableRequest<DeleteItem>) in
///     let uid = try req.requireAuth().uid
///     try await req.documents.document("members/\(uid)/items/\(req.data.itemId)").delete()
/// }
/// ```
public struct CallableRequest<T: Sendable>: HandlerInput {
    /// What the client sent as `data`, decoded as `T` (`Value` or `[String: Value]` to take any shape).
    public let data: T
    /// The caller's verified identity; nil when the request carried no `Authorization` header.
    public let auth: AuthData?
    /// The verified App Check token; nil when there was none or it was not valid (which only
    /// `enforceAppCheck` refuses).
    public let app: AppCheckData?
    /// The `Firebase-Instance-ID-Token` header (FCM registration token), when sent.
    public let instanceIdToken: String?
    /// The request's headers, names lower-cased: in order, repeats kept; lookups ignore case
    /// (`headers["User-Agent"]`, `headers.values("accept")`), as for `HTTPRequest.headers`.
    public let headers: HTTPHeaders
    /// True when the client asked for a streamed response (`Accept: text/event-stream`).
    public let acceptsStreaming: Bool
    /// The invocation's context; see `FunctionContext`.
    public let context: FunctionContext

    /// Requires a signed-in caller: the caller's identity, or `unauthenticated` (the message
    /// Firebase's own callables answer with).
    public func requireAuth() throws -> AuthData {
        guard let auth else { throw HTTPSError(.unauthenticated, "The function must be called while authenticated.") }
        return auth
    }

    /// Sends one chunk of a streamed response (`data: {"message": chunk}`, as Firebase's
    /// `response.sendChunk`). Returns false when the client did not ask for streaming (nothing is
    /// sent) or has gone away; the handler's return value still ends the stream as `result`.
    /// Chunks arrive in the order sent. Throws `cancelled` after the invocation ended.
    ///
    /// ```swift
    /// for item in items { try await req.sendChunk(item) }
    /// return ["count": .int(Int64(items.count))] as Value
    /// ```
    @discardableResult
    public func sendChunk<C: Encodable>(_ chunk: C) async throws -> Bool {
        guard acceptsStreaming else { return false }
        return try await context.host.call(Boundary.StreamSend(chunk: try ValueEncoder().encode(chunk)))
    }
}

/// A firing of an `onSchedule` function.
///
/// Each instant is queued once across every process sharing the database (with `retry`, a failed
/// firing of it runs again); a firing missed while the host was down runs once when it comes back
/// (never a burst), for the latest instant that passed.
public struct ScheduledEvent: HandlerInput {
    /// The function's name.
    public let jobName: String
    /// The instant this firing was scheduled for (not when it ran, which can be later after downtime).
    public let scheduleTime: Timestamp
    /// The invocation's context; see `FunctionContext`.
    public let context: FunctionContext
}

/// One dispatch of a task from a task queue (`onTaskDispatched`), like Firebase's `TaskRequest`.
///
/// Delivery is at least once: a task whose handler throws (or times out, or dies with its process)
/// is retried by the queue's `RetryPolicy`; use `id` to make the handler idempotent.
public struct TaskRequest<T: Sendable>: HandlerInput {
    /// The payload given at enqueue, decoded as `T` (one that does not decode fails the attempt with
    /// `invalid-argument`).
    public let data: T
    /// The queue: the function's name.
    public let queueName: String
    /// The task's id: the one given at enqueue, or a generated one. Stable across retries.
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
    /// The invocation's context; see `FunctionContext`.
    public let context: FunctionContext
}

/// A document: its path, its data decoded as `T`, and the times the store gave it. Use
/// `[String: Value]` as `T` for the fields as stored.
public struct DocumentSnapshot<T: Sendable>: Sendable {
    /// Where the document is (`members/alice/items/i1`).
    public let path: DocumentPath
    /// The fields, decoded as `T`.
    public let data: T
    /// The commit time of the write that created the document.
    public let createTime: Timestamp
    /// The commit time of the last write that changed it (the precondition `.updateTime` compares this).
    public let updateTime: Timestamp

    /// A snapshot with these parts, for tests; reads and events make them.
    public init(path: DocumentPath, data: T, createTime: Timestamp, updateTime: Timestamp) {
        self.path = path
        self.data = data
        self.createTime = createTime
        self.updateTime = updateTime
    }

    /// The document's id (the last segment of its path).
    public var id: String { path.id }
}

/// A committed change to a document matching an `onDocument…` pattern.
///
/// Deliveries are at least once and, for one document, in commit order: a retry of a failed
/// delivery runs before any later change to the same document. `id` is the same on every retry.
public struct DocumentEvent<T: Sendable>: HandlerInput {
    /// Stable across retries; use it to make handlers idempotent.
    public let id: String
    /// The commit time of the change.
    public let time: Timestamp
    /// What happened: `.created`, `.updated` or `.deleted` (one `onDocumentWritten` sees all three).
    public let kind: ChangeKind
    /// The changed document's path.
    public let path: DocumentPath
    /// The pattern's wildcards: `members/{uid}` gives `params["uid"]`.
    public let params: [String: String]
    /// The document before the change (nil when it was created).
    public let before: DocumentSnapshot<T>?
    /// The document after the change (nil when it was deleted).
    public let after: DocumentSnapshot<T>?
    /// The invocation's context; see `FunctionContext`.
    public let context: FunctionContext

    /// The document the event is about: `after`, or `before` for a deletion.
    public var data: DocumentSnapshot<T>? { after ?? before }
}

/// A user created in or deleted from auth (`onUserCreated`, `onUserDeleted`). Delivered at least
/// once, after the change committed; `id` is the same on every retry.
public struct UserEvent: HandlerInput {
    /// Stable across retries; use it to make handlers idempotent.
    public let id: String
    /// When the user was created or deleted.
    public let time: Timestamp
    /// `.created` or `.deleted`.
    public let kind: UserEventKind
    /// The user; for a deletion, the record as it was before.
    public let user: UserRecord
    /// The invocation's context; see `FunctionContext`.
    public let context: FunctionContext
}
