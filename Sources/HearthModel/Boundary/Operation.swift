extension Boundary {
    /// Every message that crosses the boundary, by the number its frames carry. The numbers are the
    /// protocol: never reuse or renumber one (add a case and bump `Boundary.version`).
    public enum Operation: UInt16, Sendable, CaseIterable, CustomStringConvertible {
        // Host → unit.
        case describe = 1
        case invoke = 2
        case cancel = 3

        // Unit → host, answered before the call returns.
        case clockNow = 16
        case log = 17
        case secretGet = 18
        case paramGet = 19

        // Unit → host, answered later (on any thread).
        case clockSleep = 32
        case streamSend = 33

        case getDocuments = 48
        case commit = 49
        case runQuery = 50
        case countQuery = 51
        case listCollections = 52
        case listDocuments = 53
        case recursiveDelete = 54

        case beginTransaction = 64
        case transactionGet = 65
        case transactionQuery = 66
        case commitTransaction = 67
        case rollbackTransaction = 68

        case enqueueTasks = 80
        case deleteTask = 81

        case createCustomToken = 96
        case getUser = 97
        case createUser = 98
        case updateUser = 99
        case deleteUser = 100
        case setCustomClaims = 101
        case revokeRefreshTokens = 102
        case listUsers = 103
        case verifyIDToken = 104
        case signJWT = 105
        // messaging
        case sendMessage = 112
        // outbound HTTP
        case httpFetch = 128

        /// The name logs and recordings show (`docs.get`).
        public var name: String {
            switch self {
            case .describe: return "describe"
            case .invoke: return "invoke"
            case .cancel: return "cancel"
            case .clockNow: return "clock.now"
            case .log: return "log"
            case .secretGet: return "secrets.get"
            case .paramGet: return "params.get"
            case .clockSleep: return "clock.sleep"
            case .streamSend: return "stream.send"
            case .getDocuments: return "docs.get"
            case .commit: return "docs.commit"
            case .runQuery: return "docs.query"
            case .countQuery: return "docs.count"
            case .listCollections: return "docs.listCollections"
            case .listDocuments: return "docs.listDocuments"
            case .recursiveDelete: return "docs.recursiveDelete"
            case .beginTransaction: return "tx.begin"
            case .transactionGet: return "tx.get"
            case .transactionQuery: return "tx.query"
            case .commitTransaction: return "tx.commit"
            case .rollbackTransaction: return "tx.rollback"
            case .enqueueTasks: return "tasks.enqueue"
            case .deleteTask: return "tasks.delete"
            case .createCustomToken: return "auth.createCustomToken"
            case .getUser: return "auth.getUser"
            case .createUser: return "auth.createUser"
            case .updateUser: return "auth.updateUser"
            case .deleteUser: return "auth.deleteUser"
            case .setCustomClaims: return "auth.setCustomClaims"
            case .revokeRefreshTokens: return "auth.revokeRefreshTokens"
            case .listUsers: return "auth.listUsers"
            case .verifyIDToken: return "auth.verifyIdToken"
            case .signJWT: return "auth.signJWT"
            case .sendMessage: return "messaging.send"
            case .httpFetch: return "http.fetch"
            }
        }

        public var description: String { name }

        /// Sent by the host to a unit (the rest are host services a unit calls).
        public var isSentByHost: Bool { rawValue < 16 }

        /// A host service answered before the unit's call returns (so the SDK can call it from
        /// synchronous code: the clock, logs, secrets).
        public var isSynchronous: Bool { (16..<32).contains(rawValue) }

        /// Host services a unit may call only while its invocation runs (everything but the clock,
        /// logs and secrets, which check that themselves).
        public var needsLiveInvocation: Bool { rawValue >= 32 }
    }

    /// A message sent as a request, with the type of its reply. Each conforming type is one
    /// operation's request; `Boundary.frame` and `Boundary.reply` carry it.
    public protocol Request: WireCodable, Sendable {
        associatedtype Reply: WireCodable & Sendable
        static var operation: Operation { get }
    }

    /// A message with no fields (the reply of an operation that returns nothing).
    public struct Empty: WireCodable, Sendable, Hashable {
        public init() {}
        public func encode(to w: inout WireWriter) {}
        public init(from r: inout WireReader) throws(WireError) {}
    }
}

extension Optional: WireEncodable where Wrapped: WireEncodable {
    public func encode(to w: inout WireWriter) {
        switch self {
        case .none: w.byte(0)
        case .some(let item):
            w.byte(1)
            item.encode(to: &w)
        }
    }
}

extension Optional: WireDecodable where Wrapped: WireDecodable {
    public init(from r: inout WireReader) throws(WireError) {
        switch try r.byte() {
        case 0: self = .none
        case 1: self = .some(try Wrapped(from: &r))
        case let b: throw r.failure("\(b) is not an optional's presence byte")
        }
    }
}

extension Array: WireEncodable where Element: WireEncodable {
    public func encode(to w: inout WireWriter) { w.list(self) }
}

extension Array: WireDecodable where Element: WireDecodable {
    public init(from r: inout WireReader) throws(WireError) { self = try r.list(Element.self) }
}
