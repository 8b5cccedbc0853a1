import HearthModel

/// What every handler can reach besides its input: the invocation's identity and the host's services.
public struct FunctionContext: Sendable {
    /// Unique per invocation within the host process; log lines carry it.
    public let invocationID: UInt64
    /// The name of the function being run.
    public let functionName: String
    /// The raw channel to the host, for services without a typed client.
    public let host: HostChannel

    init(invocationID: UInt64, functionName: String, connection: HostConnection) {
        self.invocationID = invocationID
        self.functionName = functionName
        self.host = HostChannel(connection: connection, invocationID: invocationID)
    }

    /// The document database.
    public var documents: Documents { Documents(channel: host) }

    /// Structured logs, attributed to this invocation.
    public var logger: Logger { Logger(channel: host) }

    /// The host's clock: a `ManualClock` in tests and replay, the system clock in production.
    /// Use it instead of `Date()` so time-dependent logic can be tested.
    public var clock: HostClock { HostClock(channel: host) }

    /// The secrets this function declared (`secrets: ["APPLE_KEY"]` on its `on…` declaration), as
    /// Firebase's `defineSecret` + `secrets:` bind them: a unit declaring a secret the host does not
    /// have is refused at load, naming it, and a function can read only what it declared.
    ///
    /// ```swift
    /// fn.onCall("exchangeAppleCode", secrets: ["APPLE_KEY"]) { (req: CallableRequest<Code>) in
    ///     let key = try req.context.secrets.value("APPLE_KEY")
    /// }
    /// ```
    public var secrets: SecretValues { SecretValues(channel: host) }
}

/// A function's declared secrets, read from the host (its environment, or its 0600 secrets file).
/// Never log a value or put one in an error: the host cannot tell what a string means.
public struct SecretValues: Sendable {
    let channel: HostChannel

    /// The value of a declared secret; `permission-denied` for one the function did not declare.
    public func value(_ name: String) throws -> String {
        guard let value = try channel.callSynchronously("secrets.get", ["name": .string(name)]).stringValue else {
            throw HTTPSError(.internal, "the host answered secrets.get without a value").fromHearth()
        }
        return value
    }

    /// The value of a declared secret, or nil when it is not declared (the host logs why).
    public subscript(name: String) -> String? { try? value(name) }
}

/// Writes structured log lines through the host, which adds time, function and invocation id.
/// Never log secrets: the host does not know what a string means.
public struct Logger: Sendable {
    let channel: HostChannel

    public func log(_ level: LogLevel, _ message: String, _ metadata: [String: Value] = [:]) {
        _ = try? channel.callSynchronously("log", ["level": .string(level.rawValue), "message": .string(message), "metadata": .map(metadata)])
    }

    public func debug(_ message: String, _ metadata: [String: Value] = [:]) { log(.debug, message, metadata) }
    public func info(_ message: String, _ metadata: [String: Value] = [:]) { log(.info, message, metadata) }
    public func notice(_ message: String, _ metadata: [String: Value] = [:]) { log(.notice, message, metadata) }
    public func warning(_ message: String, _ metadata: [String: Value] = [:]) { log(.warning, message, metadata) }
    public func error(_ message: String, _ metadata: [String: Value] = [:]) { log(.error, message, metadata) }
}

/// The host's clock as seen from a unit.
public struct HostClock: Clock {
    let channel: HostChannel

    public func now() -> Timestamp {
        (try? channel.callSynchronously("clock.now"))?.timestampValue ?? SystemClock().now()
    }

    public func sleep(until deadline: Timestamp) async throws {
        _ = try await channel.call("clock.sleep", ["until": .timestamp(deadline)])
        try Task.checkCancellation()
    }
}
