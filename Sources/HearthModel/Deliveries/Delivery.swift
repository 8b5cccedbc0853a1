/// Where a delivery stands. One that succeeds is deleted.
public enum DeliveryState: Int64, Sendable, Codable, CaseIterable {
    case pending = 0
    /// Claimed by a runner until its lease ends.
    case running = 1
    /// Failed for good (retries exhausted or none allowed); kept until retried or dropped.
    case dead = 2

    public var name: String {
        switch self {
        case .pending: return "pending"
        case .running: return "running"
        case .dead: return "dead"
        }
    }

    public init?(name: String) {
        guard let state = DeliveryState.allCases.first(where: { $0.name == name }) else { return nil }
        self = state
    }
}

/// An event to queue for a function: a document change, a user event, a schedule firing or a task.
public struct NewDelivery: Sendable, Hashable {
    public var function: String
    /// Stable across attempts; `(function, eventID)` is queued at most once.
    public var eventID: String
    /// Deliveries with the same key run one at a time, in the order they were queued (a document path).
    public var orderingKey: String?
    /// What the function will receive (a task's attempt fields are filled in per attempt).
    public var event: Boundary.Event
    public var dueTime: Timestamp
    /// Tasks: how long one attempt may run.
    public var dispatchDeadline: Duration?

    public init(function: String, eventID: String, orderingKey: String? = nil, event: Boundary.Event, dueTime: Timestamp,
                dispatchDeadline: Duration? = nil) {
        self.function = function
        self.eventID = eventID
        self.orderingKey = orderingKey
        self.event = event
        self.dueTime = dueTime
        self.dispatchDeadline = dispatchDeadline
    }
}

/// A queued delivery as stored.
public struct Delivery: Sendable, Hashable {
    public var id: Int64
    public var function: String
    public var eventID: String
    public var orderingKey: String?
    /// The event's boundary encoding, as stored; `event()` reads it.
    public var payload: [UInt8]
    /// Attempts started so far (a claim starts one).
    public var attempts: Int
    public var firstAttemptTime: Timestamp?
    public var dueTime: Timestamp
    public var state: DeliveryState
    public var lastError: String?
    /// The previous attempt's outcome as an HTTP status (Firebase's `previousResponse`).
    public var lastStatus: Int?
    public var dispatchDeadline: Duration?
    public var createTime: Timestamp
    /// Attempts the handler answered with something other than a 5xx failure: Cloud Tasks'
    /// execution count (a failure with a 4xx code counts; internal errors, timeouts and crashes do not).
    public var executions: Int = 0

    public init(id: Int64, function: String, eventID: String, orderingKey: String?, payload: [UInt8], attempts: Int,
                firstAttemptTime: Timestamp?, dueTime: Timestamp, state: DeliveryState, lastError: String?, lastStatus: Int?,
                dispatchDeadline: Duration?, createTime: Timestamp, executions: Int) {
        self.id = id
        self.function = function
        self.eventID = eventID
        self.orderingKey = orderingKey
        self.payload = payload
        self.attempts = attempts
        self.firstAttemptTime = firstAttemptTime
        self.dueTime = dueTime
        self.state = state
        self.lastError = lastError
        self.lastStatus = lastStatus
        self.dispatchDeadline = dispatchDeadline
        self.createTime = createTime
        self.executions = executions
    }

    /// The stored event; a payload that cannot be read (written by another version, or damaged)
    /// is an error naming the delivery.
    public func event() throws(WireError) -> Boundary.Event { try Boundary.Event(wireBytes: payload) }

    /// The event for this attempt: a task's gets its attempt fields (Cloud Tasks' retry count,
    /// execution count, previous response and retry reason).
    public func eventForAttempt() throws(WireError) -> Boundary.Event {
        let event = try event()
        guard case .task(var task) = event else { return event }
        task.retryCount = max(0, attempts - 1)
        task.executionCount = executions
        task.previousResponse = lastStatus
        task.retryReason = lastError
        return .task(task)
    }

    /// The stored payload when it is this attempt's event as it is (`eventForAttempt` leaves it
    /// unchanged), for a frame to carry instead of encoding the event again; nil for a task, whose
    /// attempt fields come from the row. `event` is this delivery's event (known or decoded).
    public func payloadForAttempt(of event: Boundary.Event) -> [UInt8]? {
        if case .task = event { return nil }
        return payload
    }

    /// As the admin API and `hearth deliveries list` show it.
    public var summary: Value {
        var m: [String: Value] = [
            "id": .int(id), "function": .string(function), "eventId": .string(eventID), "state": .string(state.name),
            "attempts": .int(Int64(attempts)), "dueTime": .timestamp(dueTime), "createTime": .timestamp(createTime),
        ]
        do { m["payload"] = try event().summary } catch { m["payload"] = .string("unreadable: \(error)") }
        if let orderingKey { m["orderingKey"] = .string(orderingKey) }
        if let firstAttemptTime { m["firstAttemptTime"] = .timestamp(firstAttemptTime) }
        if let lastError { m["lastError"] = .string(lastError) }
        if let lastStatus { m["lastStatus"] = .int(Int64(lastStatus)) }
        if executions > 0 { m["executions"] = .int(Int64(executions)) }
        return .map(m)
    }
}

/// What became of one attempt (`attempt`: the delivery's attempt count when it was claimed).
public enum DeliveryOutcome: Sendable, Hashable {
    case succeeded(id: Int64, attempt: Int)
    /// Failed; try again at `due`.
    case retry(id: Int64, attempt: Int, due: Timestamp, error: String, status: Int)
    /// Failed for good.
    case dead(id: Int64, attempt: Int, error: String, status: Int)
    /// Claimed but not started (its function went away, or the engine is stopping): pending again,
    /// the attempt not counted.
    case released(id: Int64, attempt: Int)
}

/// A checked task to add to a queue (which is a function's name).
public struct TaskEnqueue: Sendable, Hashable {
    public var queue: String
    public var id: String
    public var data: Value
    public var scheduleTime: Timestamp
    public var dispatchDeadline: Duration?
    /// How long the id stays reserved after this enqueue.
    public var dedupeWindow: Duration

    public init(queue: String, id: String, data: Value, scheduleTime: Timestamp, dispatchDeadline: Duration? = nil,
                dedupeWindow: Duration = .seconds(86_400)) {
        self.queue = queue
        self.id = id
        self.data = data
        self.scheduleTime = scheduleTime
        self.dispatchDeadline = dispatchDeadline
        self.dedupeWindow = dedupeWindow
    }

    /// The delivery the task becomes.
    public var delivery: NewDelivery {
        NewDelivery(function: queue, eventID: id, event: .task(Boundary.TaskEvent(queueName: queue, id: id, data: data, scheduledTime: scheduleTime)),
                    dueTime: scheduleTime, dispatchDeadline: dispatchDeadline)
    }
}

/// Counts of one function's deliveries.
public struct DeliveryCounts: Sendable, Hashable {
    public var pending = 0
    public var running = 0
    public var dead = 0
    /// The earliest due time among pending deliveries.
    public var oldestPendingDue: Timestamp?

    public init() {}
}

/// The error a delivery keeps when the process running its attempt died.
public enum DeliveryErrors {
    public static func died(attempt: Int) -> String { "internal: process died during attempt \(attempt)" }
}
