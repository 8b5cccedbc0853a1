// The host services a unit calls: one request type per operation, each naming its reply type.
// The SDK's clients send these; the host's handlers (HearthRuntime/Services) answer them.

/// A task to enqueue, as a unit (or the CLI, or the admin API) asks for it; the host checks it
/// against Firebase's rules before it becomes a delivery.
public struct TaskSpec: Sendable, Hashable {
    /// When the task may first run.
    public enum Start: Sendable, Hashable {
        case now
        case after(Duration)
        case at(Timestamp)
    }

    /// The queue: an `onTaskDispatched` function's name.
    public var queue: String
    public var data: Value
    /// A caller-chosen id (deduplicated); generated when nil.
    public var id: String?
    public var start: Start
    /// How long one attempt may run; the queue's own setting when nil.
    public var dispatchDeadline: Duration?

    public init(queue: String, data: Value, id: String? = nil, start: Start = .now, dispatchDeadline: Duration? = nil) {
        self.queue = queue
        self.data = data
        self.id = id
        self.start = start
        self.dispatchDeadline = dispatchDeadline
    }
}

/// How `auth.getUser` finds a user.
public enum UserLookup: Sendable, Hashable {
    case uid(String)
    case email(String)
    case phoneNumber(String)
    case provider(String, uid: String)
}

extension Boundary {
    // MARK: answered at once

    public struct ClockNow: Request, Hashable {
        public typealias Reply = Timestamp
        public static let operation = Operation.clockNow
        public init() {}
    }

    public struct Log: Request, Hashable {
        public typealias Reply = Empty
        public static let operation = Operation.log
        public var level: LogLevel
        public var message: String
        public var metadata: [String: Value]

        public init(level: LogLevel, message: String, metadata: [String: Value] = [:]) {
            self.level = level
            self.message = message
            self.metadata = metadata
        }
    }

    /// A secret the function declared.
    public struct SecretGet: Request, Hashable {
        public typealias Reply = String
        public static let operation = Operation.secretGet
        public var name: String
        public init(name: String) { self.name = name }
    }

    // MARK: time and streaming

    public struct ClockSleep: Request, Hashable {
        public typealias Reply = Empty
        public static let operation = Operation.clockSleep
        public var until: Timestamp
        public init(until: Timestamp) { self.until = until }
    }

    /// One chunk of a streamed callable response; the reply says whether the client is still there.
    public struct StreamSend: Request, Hashable {
        public typealias Reply = Bool
        public static let operation = Operation.streamSend
        public var chunk: Value
        public init(chunk: Value) { self.chunk = chunk }
    }

    // MARK: documents

    /// Documents by path; nil for each that does not exist.
    public struct GetDocuments: Request, Hashable {
        public typealias Reply = [StoredDocument?]
        public static let operation = Operation.getDocuments
        public var paths: [DocumentPath]
        public init(paths: [DocumentPath]) { self.paths = paths }
    }

    /// Writes (and tasks) committed together, or none of them.
    public struct Commit: Request, Hashable {
        public typealias Reply = CommitResult
        public static let operation = Operation.commit
        public var writes: [DocumentWrite]
        public var enqueues: [TaskSpec]

        public init(writes: [DocumentWrite], enqueues: [TaskSpec] = []) {
            self.writes = writes
            self.enqueues = enqueues
        }
    }

    public struct RunQuery: Request, Hashable {
        public typealias Reply = [StoredDocument]
        public static let operation = Operation.runQuery
        public var query: QuerySpec
        public init(query: QuerySpec) { self.query = query }
    }

    public struct CountQuery: Request, Hashable {
        public typealias Reply = Int64
        public static let operation = Operation.countQuery
        public var query: QuerySpec
        public init(query: QuerySpec) { self.query = query }
    }

    /// Collections under a document, or at the root when `parent` is nil.
    public struct ListCollections: Request, Hashable {
        public typealias Reply = [CollectionPath]
        public static let operation = Operation.listCollections
        public var parent: DocumentPath?
        public init(parent: DocumentPath?) { self.parent = parent }
    }

    public struct ListDocuments: Request, Hashable {
        public typealias Reply = [DocumentListing]
        public static let operation = Operation.listDocuments
        public var collection: CollectionPath
        public init(collection: CollectionPath) { self.collection = collection }
    }

    /// Deletes a document or collection (a slash path) and everything beneath it; replies with the
    /// number of documents deleted.
    public struct RecursiveDelete: Request, Hashable {
        public typealias Reply = Int64
        public static let operation = Operation.recursiveDelete
        public var path: String
        public var batchSize: Int

        public init(path: String, batchSize: Int) {
            self.path = path
            self.batchSize = batchSize
        }
    }

    // MARK: transactions

    /// Opens a transaction for the invocation; replies with its id.
    public struct BeginTransaction: Request, Hashable {
        public typealias Reply = UInt64
        public static let operation = Operation.beginTransaction
        public init() {}
    }

    public struct TransactionGet: Request, Hashable {
        public typealias Reply = [StoredDocument?]
        public static let operation = Operation.transactionGet
        public var transaction: UInt64
        public var paths: [DocumentPath]

        public init(transaction: UInt64, paths: [DocumentPath]) {
            self.transaction = transaction
            self.paths = paths
        }
    }

    public struct TransactionQuery: Request, Hashable {
        public typealias Reply = [StoredDocument]
        public static let operation = Operation.transactionQuery
        public var transaction: UInt64
        public var query: QuerySpec

        public init(transaction: UInt64, query: QuerySpec) {
            self.transaction = transaction
            self.query = query
        }
    }

    public struct CommitTransaction: Request, Hashable {
        public typealias Reply = CommitResult
        public static let operation = Operation.commitTransaction
        public var transaction: UInt64
        public var writes: [DocumentWrite]
        public var enqueues: [TaskSpec]

        public init(transaction: UInt64, writes: [DocumentWrite], enqueues: [TaskSpec] = []) {
            self.transaction = transaction
            self.writes = writes
            self.enqueues = enqueues
        }
    }

    public struct RollbackTransaction: Request, Hashable {
        public typealias Reply = Empty
        public static let operation = Operation.rollbackTransaction
        public var transaction: UInt64
        public init(transaction: UInt64) { self.transaction = transaction }
    }

    // MARK: tasks

    /// Enqueues tasks in one commit; replies with their ids in order.
    public struct EnqueueTasks: Request, Hashable {
        public typealias Reply = [String]
        public static let operation = Operation.enqueueTasks
        public var tasks: [TaskSpec]
        public init(tasks: [TaskSpec]) { self.tasks = tasks }
    }

    public struct DeleteTask: Request, Hashable {
        public typealias Reply = Empty
        public static let operation = Operation.deleteTask
        public var queue: String
        public var id: String

        public init(queue: String, id: String) {
            self.queue = queue
            self.id = id
        }
    }

    // MARK: auth

    public struct CreateCustomToken: Request, Hashable {
        public typealias Reply = String
        public static let operation = Operation.createCustomToken
        public var uid: String
        public var claims: [String: Value]?

        public init(uid: String, claims: [String: Value]?) {
            self.uid = uid
            self.claims = claims
        }
    }

    public struct GetUser: Request, Hashable {
        public typealias Reply = UserRecord
        public static let operation = Operation.getUser
        public var lookup: UserLookup
        public init(_ lookup: UserLookup) { self.lookup = lookup }
    }

    public struct CreateUser: Request, Equatable {
        public typealias Reply = UserRecord
        public static let operation = Operation.createUser
        public var user: NewUser
        public init(user: NewUser) { self.user = user }
    }

    public struct UpdateUser: Request, Equatable {
        public typealias Reply = UserRecord
        public static let operation = Operation.updateUser
        public var uid: String
        public var update: UserUpdate

        public init(uid: String, update: UserUpdate) {
            self.uid = uid
            self.update = update
        }
    }

    public struct DeleteUser: Request, Hashable {
        public typealias Reply = Empty
        public static let operation = Operation.deleteUser
        public var uid: String
        public init(uid: String) { self.uid = uid }
    }

    /// Sets a user's custom claims, or clears them (nil).
    public struct SetCustomClaims: Request, Hashable {
        public typealias Reply = Empty
        public static let operation = Operation.setCustomClaims
        public var uid: String
        public var claims: [String: Value]?

        public init(uid: String, claims: [String: Value]?) {
            self.uid = uid
            self.claims = claims
        }
    }

    public struct RevokeRefreshTokens: Request, Hashable {
        public typealias Reply = Empty
        public static let operation = Operation.revokeRefreshTokens
        public var uid: String
        public init(uid: String) { self.uid = uid }
    }

    public struct ListUsers: Request, Hashable {
        public typealias Reply = UserPage
        public static let operation = Operation.listUsers
        public var maxResults: Int
        public var pageToken: String?

        public init(maxResults: Int, pageToken: String?) {
            self.maxResults = maxResults
            self.pageToken = pageToken
        }
    }

    public struct UserPage: Sendable, Hashable {
        public var users: [UserRecord]
        public var pageToken: String?

        public init(users: [UserRecord], pageToken: String?) {
            self.users = users
            self.pageToken = pageToken
        }
    }

    public struct VerifyIDToken: Request, Hashable {
        public typealias Reply = CallerAuth
        public static let operation = Operation.verifyIDToken
        public var token: String
        public var checkRevoked: Bool

        public init(token: String, checkRevoked: Bool) {
            self.token = token
            self.checkRevoked = checkRevoked
        }
    }

    /// Signs claims as a JWT with a PEM private key (RS256 for RSA, ES256 for P-256).
    public struct SignJWT: Request, Hashable {
        public typealias Reply = String
        public static let operation = Operation.signJWT
        public var claims: [String: Value]
        public var privateKeyPEM: String
        public var keyID: String?
        public var header: [String: Value]

        public init(claims: [String: Value], privateKeyPEM: String, keyID: String?, header: [String: Value]) {
            self.claims = claims
            self.privateKeyPEM = privateKeyPEM
            self.keyID = keyID
            self.header = header
        }
    }
}

// MARK: encodings

extension TaskSpec.Start: WireCodable {
    public func encode(to w: inout WireWriter) {
        switch self {
        case .now: w.byte(0)
        case .after(let d): w.byte(1); w.write(d)
        case .at(let t): w.byte(2); w.write(t)
        }
    }

    public init(from r: inout WireReader) throws(WireError) {
        switch try r.byte() {
        case 0: self = .now
        case 1: self = .after(try r.read())
        case 2: self = .at(try r.read())
        case let tag: throw r.failure("unknown task start \(tag)")
        }
    }
}

extension TaskSpec: WireCodable {
    public func encode(to w: inout WireWriter) {
        w.string(queue)
        w.value(data)
        w.write(id)
        w.write(start)
        w.write(dispatchDeadline)
    }

    public init(from r: inout WireReader) throws(WireError) {
        self.init(queue: try r.string(), data: try r.value(), id: try r.optional(), start: try r.read(), dispatchDeadline: try r.optional())
    }
}

extension UserLookup: WireCodable {
    public func encode(to w: inout WireWriter) {
        switch self {
        case .uid(let s): w.byte(1); w.string(s)
        case .email(let s): w.byte(2); w.string(s)
        case .phoneNumber(let s): w.byte(3); w.string(s)
        case .provider(let p, let uid): w.byte(4); w.string(p); w.string(uid)
        }
    }

    public init(from r: inout WireReader) throws(WireError) {
        switch try r.byte() {
        case 1: self = .uid(try r.string())
        case 2: self = .email(try r.string())
        case 3: self = .phoneNumber(try r.string())
        case 4: self = .provider(try r.string(), uid: try r.string())
        case let tag: throw r.failure("unknown user lookup \(tag)")
        }
    }
}

extension Boundary.ClockNow {
    public func encode(to w: inout WireWriter) {}
    public init(from r: inout WireReader) throws(WireError) {}
}

extension Boundary.Log {
    public func encode(to w: inout WireWriter) {
        w.name(level)
        w.string(message)
        w.fields(metadata)
    }

    public init(from r: inout WireReader) throws(WireError) {
        self.init(level: try r.name(LogLevel.self), message: try r.string(), metadata: try r.fields())
    }
}

extension Boundary.SecretGet {
    public func encode(to w: inout WireWriter) { w.string(name) }
    public init(from r: inout WireReader) throws(WireError) { self.init(name: try r.string()) }
}

extension Boundary.ClockSleep {
    public func encode(to w: inout WireWriter) { w.write(until) }
    public init(from r: inout WireReader) throws(WireError) { self.init(until: try r.read()) }
}

extension Boundary.StreamSend {
    public func encode(to w: inout WireWriter) { w.value(chunk) }
    public init(from r: inout WireReader) throws(WireError) { self.init(chunk: try r.value()) }
}

extension Boundary.GetDocuments {
    public func encode(to w: inout WireWriter) { w.list(paths) }
    public init(from r: inout WireReader) throws(WireError) { self.init(paths: try r.list()) }
}

extension Boundary.Commit {
    public func encode(to w: inout WireWriter) {
        w.list(writes)
        w.list(enqueues)
    }

    public init(from r: inout WireReader) throws(WireError) { self.init(writes: try r.list(), enqueues: try r.list()) }
}

extension Boundary.RunQuery {
    public func encode(to w: inout WireWriter) { w.write(query) }
    public init(from r: inout WireReader) throws(WireError) { self.init(query: try r.read()) }
}

extension Boundary.CountQuery {
    public func encode(to w: inout WireWriter) { w.write(query) }
    public init(from r: inout WireReader) throws(WireError) { self.init(query: try r.read()) }
}

extension Boundary.ListCollections {
    public func encode(to w: inout WireWriter) { w.write(parent) }
    public init(from r: inout WireReader) throws(WireError) { self.init(parent: try r.optional()) }
}

extension Boundary.ListDocuments {
    public func encode(to w: inout WireWriter) { w.write(collection) }
    public init(from r: inout WireReader) throws(WireError) { self.init(collection: try r.read()) }
}

extension Boundary.RecursiveDelete {
    public func encode(to w: inout WireWriter) {
        w.string(path)
        w.int(batchSize)
    }

    public init(from r: inout WireReader) throws(WireError) { self.init(path: try r.string(), batchSize: try r.intValue()) }
}

extension Boundary.BeginTransaction {
    public func encode(to w: inout WireWriter) {}
    public init(from r: inout WireReader) throws(WireError) {}
}

extension Boundary.TransactionGet {
    public func encode(to w: inout WireWriter) {
        w.varint(transaction)
        w.list(paths)
    }

    public init(from r: inout WireReader) throws(WireError) { self.init(transaction: try r.varint(), paths: try r.list()) }
}

extension Boundary.TransactionQuery {
    public func encode(to w: inout WireWriter) {
        w.varint(transaction)
        w.write(query)
    }

    public init(from r: inout WireReader) throws(WireError) { self.init(transaction: try r.varint(), query: try r.read()) }
}

extension Boundary.CommitTransaction {
    public func encode(to w: inout WireWriter) {
        w.varint(transaction)
        w.list(writes)
        w.list(enqueues)
    }

    public init(from r: inout WireReader) throws(WireError) {
        self.init(transaction: try r.varint(), writes: try r.list(), enqueues: try r.list())
    }
}

extension Boundary.RollbackTransaction {
    public func encode(to w: inout WireWriter) { w.varint(transaction) }
    public init(from r: inout WireReader) throws(WireError) { self.init(transaction: try r.varint()) }
}

extension Boundary.EnqueueTasks {
    public func encode(to w: inout WireWriter) { w.list(tasks) }
    public init(from r: inout WireReader) throws(WireError) { self.init(tasks: try r.list()) }
}

extension Boundary.DeleteTask {
    public func encode(to w: inout WireWriter) {
        w.string(queue)
        w.string(id)
    }

    public init(from r: inout WireReader) throws(WireError) { self.init(queue: try r.string(), id: try r.string()) }
}

extension Boundary.CreateCustomToken {
    public func encode(to w: inout WireWriter) {
        w.string(uid)
        w.write(claims.map(Value.map))
    }

    public init(from r: inout WireReader) throws(WireError) { self.init(uid: try r.string(), claims: try r.optionalFields()) }
}

extension Boundary.GetUser {
    public func encode(to w: inout WireWriter) { w.write(lookup) }
    public init(from r: inout WireReader) throws(WireError) { self.init(try r.read()) }
}

extension Boundary.CreateUser {
    public func encode(to w: inout WireWriter) { w.write(user) }
    public init(from r: inout WireReader) throws(WireError) { self.init(user: try r.read()) }
}

extension Boundary.UpdateUser {
    public func encode(to w: inout WireWriter) {
        w.string(uid)
        w.write(update)
    }

    public init(from r: inout WireReader) throws(WireError) { self.init(uid: try r.string(), update: try r.read()) }
}

extension Boundary.DeleteUser {
    public func encode(to w: inout WireWriter) { w.string(uid) }
    public init(from r: inout WireReader) throws(WireError) { self.init(uid: try r.string()) }
}

extension Boundary.SetCustomClaims {
    public func encode(to w: inout WireWriter) {
        w.string(uid)
        w.write(claims.map(Value.map))
    }

    public init(from r: inout WireReader) throws(WireError) { self.init(uid: try r.string(), claims: try r.optionalFields()) }
}

extension Boundary.RevokeRefreshTokens {
    public func encode(to w: inout WireWriter) { w.string(uid) }
    public init(from r: inout WireReader) throws(WireError) { self.init(uid: try r.string()) }
}

extension Boundary.ListUsers {
    public func encode(to w: inout WireWriter) {
        w.int(maxResults)
        w.write(pageToken)
    }

    public init(from r: inout WireReader) throws(WireError) { self.init(maxResults: try r.intValue(), pageToken: try r.optional()) }
}

extension Boundary.UserPage: WireCodable {
    public func encode(to w: inout WireWriter) {
        w.list(users)
        w.write(pageToken)
    }

    public init(from r: inout WireReader) throws(WireError) { self.init(users: try r.list(), pageToken: try r.optional()) }
}

extension Boundary.VerifyIDToken {
    public func encode(to w: inout WireWriter) {
        w.string(token)
        w.bool(checkRevoked)
    }

    public init(from r: inout WireReader) throws(WireError) { self.init(token: try r.string(), checkRevoked: try r.bool()) }
}

extension Boundary.SignJWT {
    public func encode(to w: inout WireWriter) {
        w.fields(claims)
        w.string(privateKeyPEM)
        w.write(keyID)
        w.fields(header)
    }

    public init(from r: inout WireReader) throws(WireError) {
        self.init(claims: try r.fields(), privateKeyPEM: try r.string(), keyID: try r.optional(), header: try r.fields())
    }
}

// MARK: messaging

extension Boundary {
    /// Sends one push (FCM HTTP v1, or the outbox in `log` mode). Refusals: `not-found` with
    /// `UNREGISTERED` for a token FCM no longer knows (remove it), `invalid-argument` for a bad
    /// token or message, `unavailable` for a transient failure (retry), `failed-precondition`
    /// when messaging is not configured.
    public struct SendMessage: Request, Hashable {
        public typealias Reply = String
        public static let operation = Operation.sendMessage
        public var message: PushMessage

        public init(_ message: PushMessage) { self.message = message }
    }
}

extension PushMessage: WireCodable {
    public func encode(to w: inout WireWriter) {
        w.string(token)
        w.write(title)
        w.write(body)
        w.write(Value.map(data.mapValues { .string($0) }))
        w.write(badge.map { Int64($0) })
        w.write(sound)
    }

    public init(from r: inout WireReader) throws(WireError) {
        let token = try r.string(), title: String? = try r.optional(), body: String? = try r.optional()
        let data: Value = try r.read()
        var pairs: [String: String] = [:]
        for (k, v) in data.mapValue ?? [:] {
            guard let s = v.stringValue else { throw r.failure("message data values must be strings") }
            pairs[k] = s
        }
        let badge: Int64? = try r.optional()
        var small: Int?
        if let badge {
            guard let b = Int(exactly: badge) else { throw r.failure("badge out of range") }
            small = b
        }
        self.init(token: token, title: title, body: body, data: pairs, badge: small, sound: try r.optional())
    }
}

extension Boundary.SendMessage {
    public func encode(to w: inout WireWriter) { message.encode(to: &w) }
    public init(from r: inout WireReader) throws(WireError) { self.init(try PushMessage(from: &r)) }
}

// MARK: parameters and outbound HTTP

extension Boundary {
    /// A parameter from runtime.toml's `[params]` (Firebase's `defineString`): nil when unset.
    public struct ParamGet: Request, Hashable {
        public typealias Reply = String?
        public static let operation = Operation.paramGet
        public var name: String
        public init(name: String) { self.name = name }
    }

    /// An outbound HTTP request through the host's client, to a base URL runtime.toml allows.
    public struct HTTPFetch: Request, Hashable {
        public typealias Reply = HTTPFetchReply
        public static let operation = Operation.httpFetch
        public var method: String
        public var url: String
        /// Header pairs, in order.
        public var headers: [String]
        public var body: [UInt8]
        public var timeoutMillis: Int64

        public init(method: String, url: String, headers: [(String, String)], body: [UInt8], timeoutMillis: Int64) {
            self.method = method
            self.url = url
            self.headers = headers.flatMap { [$0.0, $0.1] }
            self.body = body
            self.timeoutMillis = timeoutMillis
        }

        /// The headers as pairs (an odd trailing name is dropped).
        public var headerPairs: [(String, String)] {
            stride(from: 0, to: headers.count - 1, by: 2).map { (headers[$0], headers[$0 + 1]) }
        }
    }

    public struct HTTPFetchReply: WireCodable, Sendable, Hashable {
        public var status: Int64
        /// Header pairs, names lower-cased, in order.
        public var headers: [String]
        public var body: [UInt8]

        public init(status: Int64, headers: [(String, String)], body: [UInt8]) {
            self.status = status
            self.headers = headers.flatMap { [$0.0.lowercased(), $0.1] }
            self.body = body
        }

        public func encode(to w: inout WireWriter) {
            w.write(status)
            w.list(headers)
            w.bytes(body)
        }

        public init(from r: inout WireReader) throws(WireError) {
            status = try r.read()
            headers = try r.list()
            body = try r.bytes()
        }
    }
}

extension Boundary.ParamGet {
    public func encode(to w: inout WireWriter) { w.string(name) }
    public init(from r: inout WireReader) throws(WireError) { self.init(name: try r.string()) }
}

extension Boundary.HTTPFetch {
    public func encode(to w: inout WireWriter) {
        w.string(method)
        w.string(url)
        w.list(headers)
        w.bytes(body)
        w.write(timeoutMillis)
    }

    public init(from r: inout WireReader) throws(WireError) {
        method = try r.string()
        url = try r.string()
        headers = try r.list()
        body = try r.bytes()
        timeoutMillis = try r.read()
    }
}
