/// The closed set of error codes Firebase functions use, with their HTTP statuses
/// (https://firebase.google.com/docs/reference/functions/firebase-functions.https#functionserrorcode).
public enum FunctionsErrorCode: String, Sendable, CaseIterable, Codable {
    case ok
    case cancelled
    case unknown
    case invalidArgument = "invalid-argument"
    case deadlineExceeded = "deadline-exceeded"
    case notFound = "not-found"
    case alreadyExists = "already-exists"
    case permissionDenied = "permission-denied"
    case resourceExhausted = "resource-exhausted"
    case failedPrecondition = "failed-precondition"
    case aborted
    case outOfRange = "out-of-range"
    case unimplemented
    case `internal`
    case unavailable
    case dataLoss = "data-loss"
    case unauthenticated

    /// The canonical gRPC-style name used in callable error bodies (`INVALID_ARGUMENT`).
    public var canonicalName: String {
        switch self {
        case .ok: return "OK"
        case .cancelled: return "CANCELLED"
        case .unknown: return "UNKNOWN"
        case .invalidArgument: return "INVALID_ARGUMENT"
        case .deadlineExceeded: return "DEADLINE_EXCEEDED"
        case .notFound: return "NOT_FOUND"
        case .alreadyExists: return "ALREADY_EXISTS"
        case .permissionDenied: return "PERMISSION_DENIED"
        case .resourceExhausted: return "RESOURCE_EXHAUSTED"
        case .failedPrecondition: return "FAILED_PRECONDITION"
        case .aborted: return "ABORTED"
        case .outOfRange: return "OUT_OF_RANGE"
        case .unimplemented: return "UNIMPLEMENTED"
        case .internal: return "INTERNAL"
        case .unavailable: return "UNAVAILABLE"
        case .dataLoss: return "DATA_LOSS"
        case .unauthenticated: return "UNAUTHENTICATED"
        }
    }

    /// The number google.rpc.Code gives this code (a `google.rpc.Status`'s `code`).
    public var rpcCode: Int {
        switch self {
        case .ok: return 0
        case .cancelled: return 1
        case .unknown: return 2
        case .invalidArgument: return 3
        case .deadlineExceeded: return 4
        case .notFound: return 5
        case .alreadyExists: return 6
        case .permissionDenied: return 7
        case .resourceExhausted: return 8
        case .failedPrecondition: return 9
        case .aborted: return 10
        case .outOfRange: return 11
        case .unimplemented: return 12
        case .internal: return 13
        case .unavailable: return 14
        case .dataLoss: return 15
        case .unauthenticated: return 16
        }
    }

    /// The HTTP status a callable answers with for this code.
    public var httpStatus: Int {
        switch self {
        case .ok: return 200
        case .cancelled: return 499
        case .unknown: return 500
        case .invalidArgument: return 400
        case .deadlineExceeded: return 504
        case .notFound: return 404
        case .alreadyExists: return 409
        case .permissionDenied: return 403
        case .resourceExhausted: return 429
        case .failedPrecondition: return 400
        case .aborted: return 409
        case .outOfRange: return 400
        case .unimplemented: return 501
        case .internal: return 500
        case .unavailable: return 503
        case .dataLoss: return 500
        case .unauthenticated: return 401
        }
    }

    /// The code for a canonical name (`INVALID_ARGUMENT`) or a lower-case one (`invalid-argument`).
    public init?(name: String) {
        if let code = FunctionsErrorCode(rawValue: name) {
            self = code
        } else if let code = FunctionsErrorCode.allCases.first(where: { $0.canonicalName == name }) {
            self = code
        } else {
            return nil
        }
    }
}

/// An error with a Firebase code that reaches the caller as is: its message and details are sent to
/// the client. Throw it from a handler to answer, for example, `not-found`; any other error reaches
/// the client as `internal` with its message hidden.
public struct HTTPSError: Error, Sendable, Equatable, CustomStringConvertible {
    public var code: FunctionsErrorCode
    public var message: String
    public var details: Value?
    /// Set on errors Hearth raises on its own account (a host service's failure reaching a unit, a
    /// stored document that does not decode, a broken message) rather than ones a function creates.
    /// When such an error with a server-side code (`internal`, `unknown`, `data-loss`) leaves a
    /// function uncaught, callers see `INTERNAL` and its text goes only to the log, as Firebase
    /// shows a Firestore or Admin SDK error a function lets through. Not part of equality.
    public var raisedByHearth = false

    public init(_ code: FunctionsErrorCode, _ message: String, details: Value? = nil) {
        self.code = code
        self.message = message
        self.details = details
    }

    public var description: String { "\(code.rawValue): \(message)" }

    public static func == (a: HTTPSError, b: HTTPSError) -> Bool {
        a.code == b.code && a.message == b.message && a.details == b.details
    }

    /// This error, marked as raised by Hearth (see `raisedByHearth`).
    public func fromHearth() -> HTTPSError {
        var marked = self
        marked.raisedByHearth = true
        return marked
    }

    /// Whether clients see this error's text when a function lets it through: always for errors a
    /// function creates; for Hearth's own, only when the code is about the caller's request (4xx).
    public var isShownToClients: Bool {
        !(raisedByHearth && [.internal, .unknown, .dataLoss].contains(code))
    }

    /// The callable protocol's error body `{"status", "message", "details"?}`.
    public var callableBody: Value {
        var body: [String: Value] = ["status": .string(code.canonicalName), "message": .string(message)]
        if let details { body["details"] = details }
        return .map(body)
    }

    public static func invalidArgument(_ message: String) -> HTTPSError { HTTPSError(.invalidArgument, message) }
    public static func notFound(_ message: String) -> HTTPSError { HTTPSError(.notFound, message) }
    public static func alreadyExists(_ message: String) -> HTTPSError { HTTPSError(.alreadyExists, message) }
    public static func failedPrecondition(_ message: String) -> HTTPSError { HTTPSError(.failedPrecondition, message) }
    public static func permissionDenied(_ message: String) -> HTTPSError { HTTPSError(.permissionDenied, message) }
    public static func unauthenticated(_ message: String) -> HTTPSError { HTTPSError(.unauthenticated, message) }
    public static func aborted(_ message: String) -> HTTPSError { HTTPSError(.aborted, message) }
    public static func `internal`(_ message: String) -> HTTPSError { HTTPSError(.internal, message) }
    public static func unavailable(_ message: String) -> HTTPSError { HTTPSError(.unavailable, message) }
}
