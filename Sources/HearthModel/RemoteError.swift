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
}
