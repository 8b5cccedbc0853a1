import HearthModel

/// The task queues of the host (`context.tasks`): each `onTaskDispatched` function is a queue of its name.
public struct TaskQueues: Sendable {
    let channel: HostChannel

    public func queue(_ name: String) -> TaskQueue { TaskQueue(name: name, channel: channel) }
}

/// When a task runs and for how long, as Firebase's `TaskOptions`.
public struct TaskOptions: Sendable, Hashable {
    /// A stable id makes the enqueue idempotent: the same id within the dedupe window (24 h by
    /// default) fails with `already-exists`. Letters, digits, `_` and `-`, at most 500. Generated when nil.
    public var id: String?
    /// Run no earlier than this long from now (give this or `scheduleTime`, not both).
    public var scheduleDelay: Duration?
    /// Run no earlier than this instant, at most 30 days ahead.
    public var scheduleTime: Timestamp?
    /// How long one attempt may run (15 s to 30 min); the queue's own setting when nil.
    public var dispatchDeadline: Duration?

    public init(id: String? = nil, scheduleDelay: Duration? = nil, scheduleTime: Timestamp? = nil, dispatchDeadline: Duration? = nil) {
        self.id = id
        self.scheduleDelay = scheduleDelay
        self.scheduleTime = scheduleTime
        self.dispatchDeadline = dispatchDeadline
    }

    /// The wire form of one task with `payload` for `queue`.
    func wire<T: Encodable>(queue: String, _ payload: T) throws -> Value {
        var m: [String: Value] = ["queue": .string(queue), "data": try ValueEncoder().encode(payload)]
        if let id { m["id"] = .string(id) }
        if let scheduleDelay { m["scheduleDelaySeconds"] = .double(scheduleDelay.secondsDouble) }
        if let scheduleTime { m["scheduleTime"] = .timestamp(scheduleTime) }
        if let dispatchDeadline { m["dispatchDeadlineSeconds"] = .double(dispatchDeadline.secondsDouble) }
        return .map(m)
    }
}

/// One task queue.
///
/// ```swift
/// try await req.context.tasks.queue("sendPushNotification")
///     .enqueue(push, options: TaskOptions(id: "\(uid)-\(itemID)-\(dateKey)"))
/// ```
public struct TaskQueue: Sendable {
    public let name: String
    let channel: HostChannel

    /// Adds a task; returns its id. The task's handler receives `payload` decoded as its input type.
    @discardableResult
    public func enqueue<T: Encodable>(_ payload: T, options: TaskOptions = TaskOptions()) async throws -> String {
        let reply = try await channel.call("tasks.enqueue", ["tasks": [try options.wire(queue: name, payload)]])
        return reply.arrayValue?.first?.stringValue ?? ""
    }

    /// Adds several tasks in one commit (all or none); returns their ids in order.
    @discardableResult
    public func enqueue<T: Encodable>(contentsOf payloads: [(T, TaskOptions)]) async throws -> [String] {
        guard !payloads.isEmpty else { return [] }
        let tasks = try payloads.map { try $0.1.wire(queue: name, $0.0) }
        let reply = try await channel.call("tasks.enqueue", ["tasks": .array(tasks)])
        return (reply.arrayValue ?? []).compactMap(\.stringValue)
    }

    /// Removes a task that has not started; `not-found` when there is none with that id.
    public func delete(_ id: String) async throws {
        _ = try await channel.call("tasks.delete", ["queue": .string(name), "id": .string(id)])
    }
}

extension FunctionContext {
    /// The host's task queues.
    public var tasks: TaskQueues { TaskQueues(channel: host) }
}
