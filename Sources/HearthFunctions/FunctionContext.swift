import HearthModel

/// What every handler can reach besides its input: the invocation's identity and the host's
/// services. Every request and event a handler receives carries one as `context`, and offers its
/// clients directly (`req.documents`, `event.tasks`, `task.logger`).
///
/// Everything here is a message to the host: the same code runs in-process, in a worker process and
/// under replay, and a call made after the invocation ended (it timed out, or was cancelled) is
/// refused with `cancelled` rather than acting late.
public struct FunctionContext: Sendable {
    /// The name of the function being run.
    public let functionName: String
    /// The raw channel to the host, for sending a `Boundary.Request` no typed client covers (see
    /// `HostChannel.call`).
    public let host: HostChannel

    init(functionName: String, channel: HostChannel) {
        self.functionName = functionName
        self.host = channel
    }

    /// Unique per invocation within the host process (a retry is a new invocation); the host's log
    /// lines carry it as `invocation`. Not stable across retries: use an event's or task's `id` for that.
    public var invocationID: UInt64 { host.invocationID }

    /// The document database (Firestore's server SDK shape); see `Documents`.
    public var documents: Documents { Documents(channel: host) }

    /// The task queues: every `onTaskDispatched` function is a queue of its name; see `TaskQueues`.
    public var tasks: TaskQueues { TaskQueues(channel: host) }
    /// Pushes to devices (FCM); see `Messaging`.
    public var messaging: Messaging { Messaging(channel: host) }
    /// Outbound HTTP to allowed base URLs; see `OutboundHTTP`.
    public var http: OutboundHTTP { OutboundHTTP(channel: host) }
    /// runtime.toml's `[params]`; see `Params`.
    public var params: Params { Params(channel: host) }

    /// Firebase Auth's admin operations: users, custom tokens, ID token verification; see `Auth`.
    public var auth: Auth { Auth(channel: host) }

    /// Structured logs, attributed by the host to this function and invocation; see `Logger`.
    public var logger: Logger { Logger(channel: host) }

    /// The host's clock: a `ManualClock` in tests and replay, the system clock in production. Use it
    /// instead of `Date()` so time-dependent logic can be tested and replayed.
    ///
    /// ```swift
    /// let due = try await items.whereField("remindAt", isLessThanOrEqualTo: req.context.clock.now()).getDocuments(Item.self)
    /// ```
    public var clock: HostClock { HostClock(channel: host) }

    /// The secrets this function declared (`secrets: ["APPLE_KEY"]` in its options), as Firebase's
    /// `defineSecret` + `secrets:` bind them: a unit declaring a secret the host does not have is
    /// refused at load, naming it, and a function can read only what it declared.
    ///
    /// ```swift
    /// fn.onCall("exchangeAppleCode", .init(secrets: ["APPLE_KEY"])) { (req: CallableRequest<Code>) in
    ///     let key = try req.secrets.value("APPLE_KEY")
    /// }
    /// ```
    public var secrets: SecretValues { SecretValues(channel: host) }
}

/// What handlers receive: each carries its invocation's `FunctionContext`, and through it the host's
/// clients.
public protocol HandlerInput: Sendable {
    /// The invocation's context: its identity and the host's clients.
    var context: FunctionContext { get }
}

extension HandlerInput {
    /// The document database; see `Documents`.
    public var documents: Documents { context.documents }
    /// The task queues; see `TaskQueues`.
    public var tasks: TaskQueues { context.tasks }
    /// Pushes to devices; see `Messaging`.
    public var messaging: Messaging { context.messaging }
    /// Outbound HTTP; see `OutboundHTTP`.
    public var http: OutboundHTTP { context.http }
    /// runtime.toml's `[params]`; see `Params`.
    public var params: Params { context.params }
    /// Structured logs for this invocation; see `Logger`.
    public var logger: Logger { context.logger }
    /// The host's clock; see `FunctionContext.clock`.
    public var clock: HostClock { context.clock }
    /// The function's declared secrets; see `FunctionContext.secrets`.
    public var secrets: SecretValues { context.secrets }
}

/// A function's declared secrets, read from the host (its environment, or its 0600 secrets file).
/// Never log a value or put one in an error: the host cannot tell what a string means.
public struct SecretValues: Sendable {
    let channel: HostChannel

    /// The value of a declared secret, answered by the host before the call returns. Throws
    /// `permission-denied` for one the function did not declare (and the host logs the refusal),
    /// `failed-precondition` when the host does not have it, `cancelled` after the invocation ended.
    ///
    /// ```swift
    /// let key = try task.secrets.value("FCM_KEY")
    /// ```
    public func value(_ name: String) throws -> String {
        try channel.callSynchronously(Boundary.SecretGet(name: name))
    }

    /// The value of a declared secret, or nil when `value(_:)` would throw (not declared, not set,
    /// or the invocation ended).
    public subscript(name: String) -> String? { try? value(name) }
}

/// Writes structured log lines through the host, which adds the time, the function, the unit and the
/// invocation id, and formats them as the runtime's log is configured (text or JSON). Metadata values
/// are `Value`s; never log secrets: the host does not know what a string means.
///
/// Each call is answered before it returns and never throws. The host drops lines below its log
/// level (`info` by default), cuts a message or metadata value at 1024 bytes, and sets the metadata
/// keys `unit`, `invocation` and `function` itself (a unit's own values for them are replaced).
///
/// ```swift
/// req.logger.info("item created", ["itemId": .string(id), "sequence": .int(n)])
/// ```
public struct Logger: Sendable {
    let channel: HostChannel

    /// Writes one line at `level`. Logging never fails a handler: a line the host cannot take is dropped.
    public func log(_ level: LogLevel, _ message: String, _ metadata: [String: Value] = [:]) {
        _ = try? channel.callSynchronously(Boundary.Log(level: level, message: message, metadata: metadata))
    }

    /// Writes one line at `debug`: detail for development, dropped at the runtime's default level.
    public func debug(_ message: String, _ metadata: [String: Value] = [:]) { log(.debug, message, metadata) }
    /// Writes one line at `info`: what the function did.
    public func info(_ message: String, _ metadata: [String: Value] = [:]) { log(.info, message, metadata) }
    /// Writes one line at `notice`: normal but significant, worth seeing among `info` lines.
    public func notice(_ message: String, _ metadata: [String: Value] = [:]) { log(.notice, message, metadata) }
    /// Writes one line at `warning`: something unexpected the function handled.
    public func warning(_ message: String, _ metadata: [String: Value] = [:]) { log(.warning, message, metadata) }
    /// Writes one line at `error`: a failure someone should look at.
    public func error(_ message: String, _ metadata: [String: Value] = [:]) { log(.error, message, metadata) }
}

/// The host's clock as a unit sees it. `now()` asks the host (a `ManualClock` under test); should the
/// host not answer, it is the time the invocation started, never the unit's own system clock.
/// `sleep(until:)` waits on the host's clock, so a test advancing a `ManualClock` wakes it, and it
/// throws when the invocation is cancelled or its timeout passes (`cancelled` from the host, or
/// `CancellationError`).
///
/// ```swift
/// try await req.clock.sleep(until: req.clock.now() + .seconds(2))
/// ```
public struct HostClock: Clock {
    let channel: HostChannel

    /// The host's current time (answered before the call returns).
    public func now() -> Timestamp {
        (try? channel.callSynchronously(Boundary.ClockNow())) ?? channel.startTime
    }

    /// Waits until the host's clock reaches `deadline`; the wait counts toward the function's timeout.
    public func sleep(until deadline: Timestamp) async throws {
        _ = try await channel.call(Boundary.ClockSleep(until: deadline))
        try Task.checkCancellation()
    }
}
