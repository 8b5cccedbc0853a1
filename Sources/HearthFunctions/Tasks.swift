import HearthModel

/// The host's task queues (`req.tasks`, `event.tasks`): each `onTaskDispatched` function is a queue
/// of its name.
///
/// ```swift
/// try await event.tasks.queue("sendPushNotification").enqueue(push, options: .init(scheduleDelay: .seconds(60)))
/// ```
public struct TaskQueues: Sendable {
    let channel: HostChannel

    /// The queue `name`. Enqueueing to a name no `onTaskDispatched` function has fails with `not-found`.
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

    /// The request for one task with `payload` for `queue`.
    func spec<T: Encodable>(queue: String, _ payload: T) throws -> TaskSpec {
        let start: TaskSpec.Start
        switch (scheduleDelay, scheduleTime) {
        case (.some, .some): throw HTTPSError(.invalidArgument, "give scheduleDelay or scheduleTime, not both")
        case (let delay?, nil): start = .after(delay)
        case (nil, let time?): start = .at(time)
        case (nil, nil): start = .now
        }
        return TaskSpec(queue: queue, data: try ValueEncoder().encode(payload), id: id, start: start, dispatchDeadline: dispatchDeadline)
    }
}

/// One task queue.
///
/// ```swift
/// try await req.tasks.queue("sendPushNotification")
///     .enqueue(push, options: TaskOptions(id: "\(uid)-\(itemID)-\(dateKey)"))
/// ```
public struct TaskQueue: Sendable {
    public let name: String
    let channel: HostChannel

    /// Adds a task; returns its id. The queue's handler receives `payload` decoded as its input type.
    /// Payloads are at most 1 MiB as JSON; a task can be scheduled at most 30 days ahead.
    @discardableResult
    public func enqueue<T: Encodable>(_ payload: T, options: TaskOptions = TaskOptions()) async throws -> String {
        try await channel.call(Boundary.EnqueueTasks(tasks: [try options.spec(queue: name, payload)])).first ?? ""
    }

    /// Adds several tasks in one commit (all or none); returns their ids in order.
    @discardableResult
    public func enqueue<T: Encodable>(contentsOf payloads: [(T, TaskOptions)]) async throws -> [String] {
        guard !payloads.isEmpty else { return [] }
        return try await channel.call(Boundary.EnqueueTasks(tasks: try payloads.map { try $0.1.spec(queue: name, $0.0) }))
    }

    /// Removes a task that has not started; `not-found` when there is none with that id.
    public func delete(_ id: String) async throws {
        _ = try await channel.call(Boundary.DeleteTask(queue: name, id: id))
    }
}
