import HearthModel

/// A unit: a type that declares its functions. Export it from the unit's module with
///
/// ```swift
/// @_cdecl("hearth_unit_entry")
/// public func hearthUnitEntry(_ host: UnsafeRawPointer) -> UnsafeRawPointer? {
///     exportUnit(Members.self, host: host)
/// }
/// ```
public protocol FunctionModule {
    /// The unit's name; defaults to the type's name. The host checks it against `runtime.toml`.
    static var unitName: String { get }
    /// Declares the unit's functions.
    static func register(_ fn: inout FunctionRegistry)
}

extension FunctionModule {
    public static var unitName: String { String(describing: Self.self) }
}

/// A function as the unit's dispatcher sees it: its manifest entry and a byte-level handler.
/// Typed handlers are wrapped into this shape once, at registration.
public struct RegisteredFunction: Sendable {
    public let spec: FunctionSpec
    public let invoke: @Sendable (_ event: Value, _ context: FunctionContext) async throws -> Value
}

/// A time zone named by its IANA identifier (`Asia/Seoul`); schedules are computed in it.
public struct TimeZoneID: Sendable, Hashable, ExpressibleByStringLiteral, CustomStringConvertible {
    public let identifier: String
    public init(_ identifier: String) { self.identifier = identifier }
    public init(stringLiteral value: String) { identifier = value }
    public static let utc = TimeZoneID("UTC")
    public var description: String { identifier }
}

/// Whether an event function is retried after a failure.
///
/// `false` (the default, as in Firebase): one attempt; a failure goes to dead letters.
/// `true`: retried with `RetryPolicy.eventRetryDefault` (up to 24 hours, backoff 10 s to 600 s).
public enum RetrySetting: Sendable, Hashable, ExpressibleByBooleanLiteral {
    case disabled
    case enabled
    case policy(RetryPolicy)

    public init(booleanLiteral value: Bool) { self = value ? .enabled : .disabled }

    public var policy: RetryPolicy {
        switch self {
        case .disabled: return .none
        case .enabled: return .eventRetryDefault
        case .policy(let p): return p
        }
    }
}

/// The functions a unit declares. Each `on…` call adds one function with an explicit name, unique
/// in the unit (and, checked when the host loads units, across all units). Names are what URLs,
/// cursors and stored tasks refer to: renaming a Swift type never orphans them.
///
/// A name registered twice is a programmer error: the registry records it and the unit is refused
/// at load with the duplicate named, leaving the host and other units running.
public struct FunctionRegistry {
    public let unit: String
    public private(set) var functions: [RegisteredFunction] = []
    /// Registration mistakes (duplicate names); a unit with any is refused by the host.
    public private(set) var problems: [String] = []
    private var names: Set<String> = []

    public init(unit: String) {
        self.unit = unit
    }

    /// Adds a function given its manifest entry and byte-level handler; the typed `on…` methods use this.
    public mutating func register(_ spec: FunctionSpec,
                                  _ invoke: @escaping @Sendable (_ event: Value, _ context: FunctionContext) async throws -> Value) {
        guard names.insert(spec.name).inserted else {
            problems.append("function '\(spec.name)' is registered twice")
            return
        }
        functions.append(RegisteredFunction(spec: spec, invoke: invoke))
    }

    public var manifest: FunctionManifest {
        FunctionManifest(unit: unit, abiVersion: Int(unitABIVersion), functions: functions.map(\.spec))
    }

    // MARK: onCall

    /// A Firebase callable: `POST /{name}` with `{"data": …}`; the handler's return value is sent as
    /// `{"result": …}`. Throw `HTTPSError` to answer with a code; any other error reaches the client as
    /// `internal` with its message hidden (and logged).
    ///
    /// ```swift
    /// fn.onCall("deleteItem") { (req: CallableRequest<DeleteItem>) in
    ///     let auth = try req.requireAuth()
    ///     return ["ok": true] as Value
    /// }
    /// ```
    public mutating func onCall<In: Decodable & Sendable, Out: Encodable & Sendable>(
        _ name: String, timeoutSeconds: Double? = nil, cors: CORSPolicy? = nil, enforceAppCheck: Bool? = nil,
        heartbeatSeconds: Double? = nil, secrets: [String]? = nil,
        _ handler: @escaping @Sendable (CallableRequest<In>) async throws -> Out
    ) {
        let options = FunctionOptions(timeoutSeconds: timeoutSeconds, cors: cors, enforceAppCheck: enforceAppCheck,
                                      heartbeatSeconds: heartbeatSeconds, secrets: secrets)
        register(FunctionSpec(name: name, trigger: .callable, options: options)) { event, context in
            let request = try Adapters.callableRequest(In.self, event: event, context: context)
            return try Adapters.encodeResult(try await handler(request))
        }
    }

    /// A callable that returns nothing (`{"result": null}`).
    public mutating func onCall<In: Decodable & Sendable>(
        _ name: String, timeoutSeconds: Double? = nil, cors: CORSPolicy? = nil, enforceAppCheck: Bool? = nil,
        heartbeatSeconds: Double? = nil, secrets: [String]? = nil,
        _ handler: @escaping @Sendable (CallableRequest<In>) async throws -> Void
    ) {
        let options = FunctionOptions(timeoutSeconds: timeoutSeconds, cors: cors, enforceAppCheck: enforceAppCheck,
                                      heartbeatSeconds: heartbeatSeconds, secrets: secrets)
        register(FunctionSpec(name: name, trigger: .callable, options: options)) { event, context in
            try await handler(try Adapters.callableRequest(In.self, event: event, context: context))
            return .null
        }
    }

    // MARK: onRequest

    /// A plain HTTP function, reached through `[[rewrites]]` in runtime.toml.
    public mutating func onRequest(
        _ name: String, timeoutSeconds: Double? = nil, cors: CORSPolicy? = nil, secrets: [String]? = nil,
        _ handler: @escaping @Sendable (HTTPRequest) async throws -> HTTPResponse
    ) {
        let options = FunctionOptions(timeoutSeconds: timeoutSeconds, cors: cors, secrets: secrets)
        register(FunctionSpec(name: name, trigger: .request, options: options)) { event, context in
            do {
                return try await handler(HTTPRequest(event: event, context: context)).value
            } catch let error as HTTPSError where error.isShownToClients {
                return HTTPResponse.error(error).value
            }  // anything else, Hearth's own internal failures included, is answered INTERNAL by the host
        }
    }

    // MARK: onSchedule

    /// Runs on a schedule: unix cron (`*/5 * * * *`) or English (`every 5 minutes`, `every day 09:00`),
    /// in `timeZone`. A firing missed while the host was down runs once when it comes back.
    public mutating func onSchedule(
        _ name: String, _ schedule: String, timeZone: TimeZoneID = .utc, retry: RetrySetting = false,
        timeoutSeconds: Double? = nil, secrets: [String]? = nil,
        _ handler: @escaping @Sendable (ScheduledEvent) async throws -> Void
    ) {
        let options = FunctionOptions(timeoutSeconds: timeoutSeconds, retry: retry.policy, secrets: secrets)
        register(FunctionSpec(name: name, trigger: .schedule(schedule: schedule, timeZone: timeZone.identifier), options: options)) { event, context in
            try await handler(ScheduledEvent(jobName: event["jobName"]?.stringValue ?? name,
                                             scheduleTime: event["scheduleTime"]?.timestampValue ?? context.clock.now(),
                                             context: context))
            return .null
        }
    }

    // MARK: onTaskDispatched

    /// A task queue named `name`. Enqueue with `context.tasks.queue(name).enqueue(payload)`.
    /// Defaults as Firebase: 3 attempts, backoff 0.1 s to 3600 s, 500 dispatches per second, 1000 at once.
    public mutating func onTaskDispatched<T: Decodable & Sendable>(
        _ name: String, retry: RetryPolicy = .taskQueueDefault, rateLimits: RateLimits = .taskQueueDefault,
        dispatchDeadlineSeconds: Double? = nil, timeoutSeconds: Double? = nil, secrets: [String]? = nil,
        _ handler: @escaping @Sendable (TaskRequest<T>) async throws -> Void
    ) {
        let options = FunctionOptions(timeoutSeconds: timeoutSeconds, retry: retry, rateLimits: rateLimits,
                                      dispatchDeadlineSeconds: dispatchDeadlineSeconds, secrets: secrets)
        register(FunctionSpec(name: name, trigger: .task, options: options)) { event, context in
            try await handler(try Adapters.taskRequest(T.self, event: event, context: context))
            return .null
        }
    }

    // MARK: onDocument…

    /// Runs when a document matching `pattern` is created.
    public mutating func onDocumentCreated<T: Decodable & Sendable>(
        _ name: String, _ pattern: String, retry: RetrySetting = false, concurrency: Int? = nil,
        timeoutSeconds: Double? = nil, secrets: [String]? = nil,
        _ handler: @escaping @Sendable (DocumentEvent<T>) async throws -> Void
    ) {
        onDocument(.created, name, pattern, retry, concurrency, timeoutSeconds, secrets, handler)
    }

    /// Runs when a document matching `pattern` changes (not on create or delete).
    public mutating func onDocumentUpdated<T: Decodable & Sendable>(
        _ name: String, _ pattern: String, retry: RetrySetting = false, concurrency: Int? = nil,
        timeoutSeconds: Double? = nil, secrets: [String]? = nil,
        _ handler: @escaping @Sendable (DocumentEvent<T>) async throws -> Void
    ) {
        onDocument(.updated, name, pattern, retry, concurrency, timeoutSeconds, secrets, handler)
    }

    /// Runs when a document matching `pattern` is deleted; `event.before` holds its last state.
    public mutating func onDocumentDeleted<T: Decodable & Sendable>(
        _ name: String, _ pattern: String, retry: RetrySetting = false, concurrency: Int? = nil,
        timeoutSeconds: Double? = nil, secrets: [String]? = nil,
        _ handler: @escaping @Sendable (DocumentEvent<T>) async throws -> Void
    ) {
        onDocument(.deleted, name, pattern, retry, concurrency, timeoutSeconds, secrets, handler)
    }

    /// Runs on every create, update and delete of a document matching `pattern`.
    public mutating func onDocumentWritten<T: Decodable & Sendable>(
        _ name: String, _ pattern: String, retry: RetrySetting = false, concurrency: Int? = nil,
        timeoutSeconds: Double? = nil, secrets: [String]? = nil,
        _ handler: @escaping @Sendable (DocumentEvent<T>) async throws -> Void
    ) {
        onDocument(.written, name, pattern, retry, concurrency, timeoutSeconds, secrets, handler)
    }

    private mutating func onDocument<T: Decodable & Sendable>(
        _ kind: DocumentEventKind, _ name: String, _ pattern: String, _ retry: RetrySetting, _ concurrency: Int?,
        _ timeoutSeconds: Double?, _ secrets: [String]?, _ handler: @escaping @Sendable (DocumentEvent<T>) async throws -> Void
    ) {
        let options = FunctionOptions(timeoutSeconds: timeoutSeconds, retry: retry.policy,
                                      rateLimits: concurrency.map { RateLimits(maxConcurrentDispatches: $0) }, secrets: secrets)
        register(FunctionSpec(name: name, trigger: .document(kind, pattern: pattern), options: options)) { event, context in
            try await handler(try Adapters.documentEvent(T.self, event: event, context: context))
            return .null
        }
    }

    // MARK: onUser…

    /// Runs after a user is created in auth.
    public mutating func onUserCreated(
        _ name: String, retry: RetrySetting = false, timeoutSeconds: Double? = nil, secrets: [String]? = nil,
        _ handler: @escaping @Sendable (UserEvent) async throws -> Void
    ) {
        onUser(.created, name, retry, timeoutSeconds, secrets, handler)
    }

    /// Runs after a user is deleted from auth, with the record as it was.
    public mutating func onUserDeleted(
        _ name: String, retry: RetrySetting = false, timeoutSeconds: Double? = nil, secrets: [String]? = nil,
        _ handler: @escaping @Sendable (UserEvent) async throws -> Void
    ) {
        onUser(.deleted, name, retry, timeoutSeconds, secrets, handler)
    }

    private mutating func onUser(_ kind: UserEventKind, _ name: String, _ retry: RetrySetting, _ timeoutSeconds: Double?,
                                 _ secrets: [String]?, _ handler: @escaping @Sendable (UserEvent) async throws -> Void) {
        let options = FunctionOptions(timeoutSeconds: timeoutSeconds, retry: retry.policy, secrets: secrets)
        register(FunctionSpec(name: name, trigger: .user(kind), options: options)) { event, context in
            try await handler(try Adapters.userEvent(event: event, context: context))
            return .null
        }
    }
}

/// The typed adapters: decode the wire event into the handler's types, encode its result.
enum Adapters {
    static func decode<T: Decodable>(_ type: T.Type, _ value: Value, what: String) throws -> T {
        do { return try ValueDecoder().decode(type, from: value) } catch {
            throw HTTPSError(.invalidArgument, "\(what): \(describeDecodingError(error))")
        }
    }

    static func encodeResult<T: Encodable>(_ value: T) throws -> Value {
        // An encoding failure is the handler's bug: it reaches the client as `internal`, the
        // EncodingError (with its coding path) reaches the log.
        try ValueEncoder().encode(value)
    }

    static func callableRequest<In: Decodable & Sendable>(_ type: In.Type, event: Value, context: FunctionContext) throws -> CallableRequest<In> {
        let payload = CallablePayload(event)
        let data = try decode(In.self, payload.data, what: "invalid request data")
        return CallableRequest(data: data, auth: payload.auth, app: payload.app, instanceIdToken: payload.instanceIdToken,
                               headers: payload.headers, acceptsStreaming: payload.acceptsStreaming, context: context)
    }

    static func taskRequest<T: Decodable & Sendable>(_ type: T.Type, event: Value, context: FunctionContext) throws -> TaskRequest<T> {
        let data = try decode(T.self, event["data"] ?? .null, what: "invalid task payload")
        return TaskRequest(data: data, queueName: event["queueName"]?.stringValue ?? context.functionName,
                           id: event["id"]?.stringValue ?? "", retryCount: Int(event["retryCount"]?.intValue ?? 0),
                           executionCount: Int(event["executionCount"]?.intValue ?? 0),
                           scheduledTime: event["scheduledTime"]?.timestampValue ?? .zero,
                           previousResponse: event["previousResponse"]?.intValue.map(Int.init),
                           retryReason: event["retryReason"]?.stringValue, context: context)
    }

    static func snapshot<T: Decodable & Sendable>(_ type: T.Type, _ value: Value?, what: String) throws -> DocumentSnapshot<T>? {
        guard let value, case .map = value, let pathText = value["path"]?.stringValue else { return nil }
        let path = try DocumentPath(pathText)
        let data = try decode(T.self, value["fields"] ?? .emptyMap, what: "\(what) document \(pathText)")
        return DocumentSnapshot(path: path, data: data, createTime: value["createTime"]?.timestampValue ?? .zero,
                                updateTime: value["updateTime"]?.timestampValue ?? .zero)
    }

    static func documentEvent<T: Decodable & Sendable>(_ type: T.Type, event: Value, context: FunctionContext) throws -> DocumentEvent<T> {
        let path = try DocumentPath(event["path"]?.stringValue ?? "")
        var params: [String: String] = [:]
        for (k, v) in event["params"]?.mapValue ?? [:] { params[k] = v.stringValue }
        return DocumentEvent(id: event["id"]?.stringValue ?? "", time: event["time"]?.timestampValue ?? .zero,
                             kind: ChangeKind(rawValue: event["kind"]?.stringValue ?? "") ?? .updated,
                             path: path, params: params,
                             before: try snapshot(T.self, event["before"], what: "before"),
                             after: try snapshot(T.self, event["after"], what: "after"), context: context)
    }

    static func userEvent(event: Value, context: FunctionContext) throws -> UserEvent {
        let user = try decode(UserRecord.self, event["user"] ?? .null, what: "user event")
        return UserEvent(id: event["id"]?.stringValue ?? "", time: event["time"]?.timestampValue ?? .zero,
                         kind: UserEventKind(rawValue: event["kind"]?.stringValue ?? "") ?? .created,
                         user: user, context: context)
    }
}
