/// The messages that cross the unit boundary (see `HearthUnitABI.h`). Each is a `Value` map encoded
/// with `BinaryValueCodec`, whose `"op"` names it.
///
/// Host → unit: `describe` → `{"result": manifest}`; `invoke {id, function, event}` →
/// `{"result": value}` or `{"error": RemoteError}`; `cancel {id}` → `{}`.
///
/// Unit → host: a service call `{op: "docs.get" | "tasks.enqueue" | …, invocation: id, …}` →
/// `{"result": value}` or `{"error": RemoteError}`.
public enum UnitProtocol {
    public static let describe = "describe"
    public static let invoke = "invoke"
    public static let cancel = "cancel"

    public static func encode(_ message: [String: Value]) -> [UInt8] {
        BinaryValueCodec.encode(.map(message))
    }

    /// Decodes a message; a malformed one becomes an `internal` error naming the problem.
    public static func decode(_ bytes: UnsafeBufferPointer<UInt8>) throws(HTTPSError) -> [String: Value] {
        let value: Value
        do { value = try BinaryValueCodec.decode(bytes) } catch {
            throw HTTPSError(.internal, "malformed message across the unit boundary: \(error)").fromHearth()
        }
        guard case .map(let members) = value else {
            throw HTTPSError(.internal, "malformed message across the unit boundary: not a map").fromHearth()
        }
        return members
    }

    public static func result(_ value: Value) -> [UInt8] { encode(["result": value]) }

    public static func failure(_ error: RemoteError) -> [UInt8] { encode(["error": error.value]) }

    /// Reads a reply: its result, or throws the error it carries.
    public static func unwrapReply(_ reply: [String: Value]) throws(RemoteError) -> Value {
        if let error = reply["error"] { throw RemoteError(value: error) }
        return reply["result"] ?? .null
    }
}

/// An error as it crosses the boundary: a Firebase code, the message the caller may see, optional
/// details, and `debug` text for the log only (the real error behind an `internal`).
public struct RemoteError: Error, Sendable, Equatable, CustomStringConvertible {
    public var code: FunctionsErrorCode
    public var message: String
    public var details: Value?
    /// For logs only; never sent to a client.
    public var debug: String?

    public init(code: FunctionsErrorCode, message: String, details: Value? = nil, debug: String? = nil) {
        self.code = code
        self.message = message
        self.details = details
        self.debug = debug
    }

    public init(_ error: HTTPSError) {
        self.init(code: error.code, message: error.message, details: error.details)
    }

    /// Any error: an `HTTPSError` or `RemoteError` keeps its code and message; anything else, and an
    /// internal failure Hearth raised itself (`HTTPSError.isShownToClients`), becomes `internal` with
    /// the message hidden from clients and kept in `debug`.
    public init(wrapping error: Error) {
        switch error {
        case let e as RemoteError: self = e
        case let e as HTTPSError where !e.isShownToClients: self.init(code: .internal, message: "INTERNAL", debug: e.description)
        case let e as HTTPSError: self.init(e)
        case is CancellationError: self.init(code: .cancelled, message: "cancelled")
        default: self.init(code: .internal, message: "INTERNAL", debug: String(describing: error))
        }
    }

    /// What a caller sees, as Firebase sends it: the code, message and details the function's
    /// `HTTPSError` had. Anything that should not be seen was already replaced by internal /
    /// "INTERNAL" where it was caught (`init(wrapping:)`); its text is in `debug`, for the log only.
    public var httpsError: HTTPSError { HTTPSError(code, message, details: details) }

    public var description: String {
        "\(code.rawValue): \(message)" + (debug.map { " (\($0))" } ?? "")
    }

    public var value: Value {
        var m: [String: Value] = ["code": .string(code.rawValue), "message": .string(message)]
        if let details { m["details"] = details }
        if let debug { m["debug"] = .string(debug) }
        return .map(m)
    }

    public init(value: Value) {
        let code = value["code"]?.stringValue.flatMap(FunctionsErrorCode.init(name:)) ?? .internal
        self.init(code: code, message: value["message"]?.stringValue ?? "INTERNAL",
                  details: value["details"], debug: value["debug"]?.stringValue)
    }
}
