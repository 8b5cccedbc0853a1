/// The caller of a callable, as the host verified it: the uid and every claim of its ID token.
public struct CallerAuth: Sendable, Hashable {
    public var uid: String
    public var claims: [String: Value]
    public var rawToken: String

    public init(uid: String, claims: [String: Value], rawToken: String = "") {
        self.uid = uid
        self.claims = claims
        self.rawToken = rawToken
    }
}

/// A verified App Check token: the app it names and its claims.
public struct AppCheckClaims: Sendable, Hashable {
    public var appID: String
    public var claims: [String: Value]

    public init(appID: String, claims: [String: Value]) {
        self.appID = appID
        self.claims = claims
    }
}

extension Boundary {
    /// What an invocation is about: one type per trigger kind. The host builds these (the front door
    /// from HTTP requests, the delivery engine from stored deliveries); the SDK's typed adapters read
    /// them into what handlers receive.
    public enum Event: Sendable, Hashable {
        case callable(CallableEvent)
        case request(RequestEvent)
        case document(DocumentEvent)
        case task(TaskEvent)
        case schedule(ScheduleEvent)
        case user(UserEvent)

        /// The trigger kind's name, for messages (`callable`, `document`…).
        public var kind: String {
            switch self {
            case .callable: return "callable"
            case .request: return "request"
            case .document: return "document"
            case .task: return "task"
            case .schedule: return "schedule"
            case .user: return "user"
            }
        }
    }

    /// A call of an `onCall` function.
    public struct CallableEvent: Sendable, Hashable {
        /// The request's `data`.
        public var data: Value
        /// Set when the request carried a valid ID token (an invalid one never reaches a function).
        public var auth: CallerAuth?
        public var app: AppCheckClaims?
        /// The `Firebase-Instance-ID-Token` header.
        public var instanceIDToken: String?
        /// The request's headers: names lower-cased (units built against an SDK that reads them
        /// into a `[String: String]` look them up so), in order, repeats kept; lookups ignore case.
        public var headers: HTTPHeaders
        /// The client asked for a streamed response (`Accept: text/event-stream`).
        public var acceptsStreaming: Bool

        public init(data: Value, auth: CallerAuth? = nil, app: AppCheckClaims? = nil, instanceIDToken: String? = nil,
                    headers: HTTPHeaders = HTTPHeaders(), acceptsStreaming: Bool = false) {
            self.data = data
            self.auth = auth
            self.app = app
            self.instanceIDToken = instanceIDToken
            self.headers = headers
            self.acceptsStreaming = acceptsStreaming
        }
    }

    /// A request to an `onRequest` function.
    public struct RequestEvent: Sendable, Hashable {
        public var method: String
        /// As requested, without the query.
        public var path: String
        /// The raw query string, without `?`.
        public var query: String
        public var headers: HTTPHeaders
        public var body: [UInt8]

        public init(method: String, path: String, query: String = "", headers: HTTPHeaders = HTTPHeaders(), body: [UInt8] = []) {
            self.method = method
            self.path = path
            self.query = query
            self.headers = headers
            self.body = body
        }
    }

    /// What an `onRequest` function answers.
    public struct Response: Sendable, Hashable {
        public var status: Int
        public var headers: HTTPHeaders
        public var body: [UInt8]

        public init(status: Int, headers: HTTPHeaders, body: [UInt8]) {
            self.status = status
            self.headers = headers
            self.body = body
        }
    }

    /// A committed change to a document matching a trigger's pattern.
    public struct DocumentEvent: Sendable, Hashable {
        /// Stable across retries: the change's feed sequence.
        public var id: String
        /// The commit time.
        public var time: Timestamp
        public var kind: ChangeKind
        public var path: DocumentPath
        /// The pattern's wildcards and what they matched.
        public var params: [String: String]
        public var before: StoredDocument?
        public var after: StoredDocument?

        public init(id: String, time: Timestamp, kind: ChangeKind, path: DocumentPath, params: [String: String],
                    before: StoredDocument?, after: StoredDocument?) {
            self.id = id
            self.time = time
            self.kind = kind
            self.path = path
            self.params = params
            self.before = before
            self.after = after
        }
    }

    /// One dispatch of a task. As stored, the attempt fields are zero; the engine fills them in
    /// (`dispatched`) for each attempt.
    public struct TaskEvent: Sendable, Hashable {
        public var queueName: String
        public var id: String
        public var data: Value
        /// When the task was scheduled to run first.
        public var scheduledTime: Timestamp
        /// Retries before this attempt.
        public var retryCount: Int
        /// Earlier attempts that ended with a status below 500 (Cloud Tasks' execution count).
        public var executionCount: Int
        /// The previous attempt's outcome as an HTTP status.
        public var previousResponse: Int?
        public var retryReason: String?

        public init(queueName: String, id: String, data: Value, scheduledTime: Timestamp, retryCount: Int = 0,
                    executionCount: Int = 0, previousResponse: Int? = nil, retryReason: String? = nil) {
            self.queueName = queueName
            self.id = id
            self.data = data
            self.scheduledTime = scheduledTime
            self.retryCount = retryCount
            self.executionCount = executionCount
            self.previousResponse = previousResponse
            self.retryReason = retryReason
        }
    }

    /// A firing of an `onSchedule` function.
    public struct ScheduleEvent: Sendable, Hashable {
        public var jobName: String
        /// The instant the firing was scheduled for.
        public var scheduleTime: Timestamp

        public init(jobName: String, scheduleTime: Timestamp) {
            self.jobName = jobName
            self.scheduleTime = scheduleTime
        }
    }

    /// A user created in or deleted from auth.
    public struct UserEvent: Sendable, Hashable {
        /// Stable across retries.
        public var id: String
        public var time: Timestamp
        public var kind: UserEventKind
        /// For a deletion, the record as it was.
        public var user: UserRecord

        public init(id: String, time: Timestamp, kind: UserEventKind, user: UserRecord) {
            self.id = id
            self.time = time
            self.kind = kind
            self.user = user
        }
    }

    /// Runs a function. The invocation id is the frame's. `now` is the host clock's reading when the
    /// invocation started (what a unit's clock falls back to), `seed` seeds the invocation's random
    /// generator (auto ids), so a replayed invocation makes the same ids.
    public struct Invoke: Request, Hashable {
        public typealias Reply = InvocationResult
        public static let operation = Operation.invoke
        public var function: String
        /// Setting it drops `encodedEvent`, which no longer says the same.
        public var event: Event { didSet { encodedEvent = nil } }
        public var now: Timestamp
        public var seed: RandomSeed
        /// `event` already in the wire encoding (a delivery's stored payload), written into the
        /// frame as it is instead of encoding the event again. Not part of the message's identity:
        /// it decodes to `event`.
        public private(set) var encodedEvent: [UInt8]?

        public init(function: String, event: Event, now: Timestamp, seed: RandomSeed, encodedEvent: [UInt8]? = nil) {
            self.function = function
            self.event = event
            self.now = now
            self.seed = seed
            self.encodedEvent = encodedEvent
        }

        public static func == (a: Invoke, b: Invoke) -> Bool {
            a.function == b.function && a.event == b.event && a.now == b.now && a.seed == b.seed
        }

        public func hash(into hasher: inout Hasher) {
            hasher.combine(function)
            hasher.combine(event)
            hasher.combine(now)
            hasher.combine(seed)
        }
    }

    /// What a function returned: a callable's value, an `onRequest` function's response, or nothing
    /// (event functions).
    public enum InvocationResult: Sendable, Hashable {
        case none
        case value(Value)
        case response(Response)

        /// The callable's value (null for the other kinds).
        public var value: Value {
            if case .value(let v) = self { return v }
            return .null
        }
    }

    /// Asks a unit for its manifest.
    public struct Describe: Request, Hashable {
        public typealias Reply = FunctionManifest
        public static let operation = Operation.describe
        public init() {}
    }

    /// Asks a unit to cancel the invocation the frame names (its timeout passed).
    public struct Cancel: Request, Hashable {
        public typealias Reply = Empty
        public static let operation = Operation.cancel
        public init() {}
    }
}

/// 128 bits that seed an invocation's random generator.
public struct RandomSeed: Sendable, Hashable {
    public var high: UInt64
    public var low: UInt64

    public init(high: UInt64, low: UInt64) {
        self.high = high
        self.low = low
    }
}

// MARK: encodings

extension CallerAuth: WireCodable {
    public func encode(to w: inout WireWriter) {
        w.string(uid)
        w.fields(claims)
        w.string(rawToken)
    }

    public init(from r: inout WireReader) throws(WireError) {
        self.init(uid: try r.string(), claims: try r.fields(), rawToken: try r.string())
    }
}

extension AppCheckClaims: WireCodable {
    public func encode(to w: inout WireWriter) {
        w.string(appID)
        w.fields(claims)
    }

    public init(from r: inout WireReader) throws(WireError) { self.init(appID: try r.string(), claims: try r.fields()) }
}

extension RandomSeed: WireCodable {
    public func encode(to w: inout WireWriter) {
        w.fixed64(high)
        w.fixed64(low)
    }

    public init(from r: inout WireReader) throws(WireError) {
        self.init(high: try r.fixed64(), low: try r.fixed64())
    }
}

extension Boundary.CallableEvent: WireCodable {
    public func encode(to w: inout WireWriter) {
        w.value(data)
        w.write(auth)
        w.write(app)
        w.write(instanceIDToken)
        w.write(headers)  // the layout of a string map, which it was before: older recordings still read
        w.bool(acceptsStreaming)
    }

    public init(from r: inout WireReader) throws(WireError) {
        self.init(data: try r.value(), auth: try r.optional(), app: try r.optional(), instanceIDToken: try r.optional(),
                  headers: try r.read(), acceptsStreaming: try r.bool())
    }
}

extension Boundary.RequestEvent: WireCodable {
    public func encode(to w: inout WireWriter) {
        w.string(method)
        w.string(path)
        w.string(query)
        w.write(headers)
        w.bytes(body)
    }

    public init(from r: inout WireReader) throws(WireError) {
        self.init(method: try r.string(), path: try r.string(), query: try r.string(), headers: try r.read(), body: try r.bytes())
    }
}

extension Boundary.Response: WireCodable {
    public func encode(to w: inout WireWriter) {
        w.int(status)
        w.write(headers)
        w.bytes(body)
    }

    public init(from r: inout WireReader) throws(WireError) {
        self.init(status: try r.intValue(), headers: try r.read(), body: try r.bytes())
    }
}

extension Boundary.DocumentEvent: WireCodable {
    public func encode(to w: inout WireWriter) {
        w.string(id)
        w.write(time)
        w.name(kind)
        w.write(path)
        w.stringMap(params)
        w.write(before)
        w.write(after)
    }

    public init(from r: inout WireReader) throws(WireError) {
        self.init(id: try r.string(), time: try r.read(), kind: try r.name(ChangeKind.self), path: try r.read(),
                  params: try r.stringMap(), before: try r.optional(), after: try r.optional())
    }
}

extension Boundary.TaskEvent: WireCodable {
    public func encode(to w: inout WireWriter) {
        w.string(queueName)
        w.string(id)
        w.value(data)
        w.write(scheduledTime)
        w.int(retryCount)
        w.int(executionCount)
        w.write(previousResponse)
        w.write(retryReason)
    }

    public init(from r: inout WireReader) throws(WireError) {
        self.init(queueName: try r.string(), id: try r.string(), data: try r.value(), scheduledTime: try r.read(),
                  retryCount: try r.intValue(), executionCount: try r.intValue(), previousResponse: try r.optional(),
                  retryReason: try r.optional())
    }
}

extension Boundary.ScheduleEvent: WireCodable {
    public func encode(to w: inout WireWriter) {
        w.string(jobName)
        w.write(scheduleTime)
    }

    public init(from r: inout WireReader) throws(WireError) { self.init(jobName: try r.string(), scheduleTime: try r.read()) }
}

extension Boundary.UserEvent: WireCodable {
    public func encode(to w: inout WireWriter) {
        w.string(id)
        w.write(time)
        w.name(kind)
        w.write(user)
    }

    public init(from r: inout WireReader) throws(WireError) {
        self.init(id: try r.string(), time: try r.read(), kind: try r.name(UserEventKind.self), user: try r.read())
    }
}

extension Boundary.Event: WireCodable {
    public func encode(to w: inout WireWriter) {
        switch self {
        case .callable(let e): w.byte(1); w.write(e)
        case .request(let e): w.byte(2); w.write(e)
        case .document(let e): w.byte(3); w.write(e)
        case .task(let e): w.byte(4); w.write(e)
        case .schedule(let e): w.byte(5); w.write(e)
        case .user(let e): w.byte(6); w.write(e)
        }
    }

    public init(from r: inout WireReader) throws(WireError) {
        switch try r.byte() {
        case 1: self = .callable(try r.read())
        case 2: self = .request(try r.read())
        case 3: self = .document(try r.read())
        case 4: self = .task(try r.read())
        case 5: self = .schedule(try r.read())
        case 6: self = .user(try r.read())
        case let tag: throw r.failure("unknown event kind \(tag)")
        }
    }
}

extension Boundary.Invoke {
    public func encode(to w: inout WireWriter) {
        w.string(function)
        if let encodedEvent { w.raw(encodedEvent) } else { w.write(event) }
        w.write(now)
        w.write(seed)
    }

    public init(from r: inout WireReader) throws(WireError) {
        self.init(function: try r.string(), event: try r.read(), now: try r.read(), seed: try r.read())
    }
}

extension Boundary.InvocationResult: WireCodable {
    public func encode(to w: inout WireWriter) {
        switch self {
        case .none: w.byte(0)
        case .value(let v): w.byte(1); w.value(v)
        case .response(let r): w.byte(2); w.write(r)
        }
    }

    public init(from r: inout WireReader) throws(WireError) {
        switch try r.byte() {
        case 0: self = .none
        case 1: self = .value(try r.value())
        case 2: self = .response(try r.read())
        case let tag: throw r.failure("unknown invocation result \(tag)")
        }
    }
}

extension Boundary.Describe {
    public func encode(to w: inout WireWriter) {}
    public init(from r: inout WireReader) throws(WireError) {}
}

extension Boundary.Cancel {
    public func encode(to w: inout WireWriter) {}
    public init(from r: inout WireReader) throws(WireError) {}
}
