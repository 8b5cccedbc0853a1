import HearthModel

/// The host's task queues (`req.tasks`, `event.tasks`): each `onTaskDispatched` function is a queue
/// of its name. An enqueue commits on its own; to commit tasks with document writes (all or none),
/// use `WriteBatch.enqueue` or `Transaction.enqueue`. Each task then runs at least once, retried by
/// its queue's `TaskQueueOptions.retry`.
///
/// ```swift
/// try await event.tasks.queue("sendPushNotification").enqueue(push, options: .init(scheduleDelay: .seconds(60)))
/// ```
public struct TaskQueues: Sendable {
    let channel: HostChannel

    /// The queue `name`; nothing is checked until an enqueue, which fails with `not-found` for a name
    /// no `onTaskDispatched` function has.
    public func queue(_ name: String) -> TaskQueue { TaskQueue(name: name, channel: channel) }
}

/// When a task runs and for how long, as Firebase's `TaskOptions`. Checked when the task is
/// enqueued (`invalid-argument` for a value out of range).
///
/// ```swift
/// let options = TaskOptions(id: "reminder-\(itemId)", scheduleTime: remindAt, dispatchDeadline: .seconds(120))
/// try await req.tasks.queue("sendReminder").enqueue(Reminder(itemId: itemId), options: options)
/// ```
public struct TaskOptions: Sendable, Hashable {
    /// A stable id makes the enqueue idempotent: the same id in the same queue, while that task is
    /// still queued or within the dedupe window after it was enqueued (24 h by default), fails with
    /// `already-exists`. `[A-Za-z0-9_-]{1,500}`, else `invalid-argument`. Generated (20 characters)
    /// when nil.
    public var id: String?
    /// Run no earlier than this long from now: zero or more, at most 30 days (give this or
    /// `scheduleTime`, not both: `invalid-argument`).
    public var scheduleDelay: Duration?
    /// Run no earlier than this instant, at most 30 days ahead (an instant in the past runs now).
    public var scheduleTime: Timestamp?
    /// How long one attempt may run (15 s to 30 min); the queue's own setting when nil.
    public var dispatchDeadline: Duration?

    /// Options; each left out takes its default (run now, generated id, the queue's deadline).
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

/// One task queue: the `onTaskDispatched` function of its name.
///
/// ```swift
/// try await req.tasks.queue("sendPushNotification")
///     .enqueue(push, options: TaskOptions(id: "\(uid)-\(itemID)-\(dateKey)"))
/// ```
public struct TaskQueue: Sendable {
    /// The queue's name: its function's name.
    public let name: String
    let channel: HostChannel

    /// Adds a task, committed before this returns; returns its id. The queue's handler receives
    /// `payload` decoded as its input type. Throws `not-found` for a queue no `onTaskDispatched`
    /// function has, `already-exists` for an id in use (see `TaskOptions.id`), `invalid-argument`
    /// for a payload over 1 MiB as JSON, a start more than 30 days ahead or an invalid option.
    @discardableResult
    public func enqueue<T: Encodable>(_ payload: T, options: TaskOptions = TaskOptions()) async throws -> String {
        try await channel.call(Boundary.EnqueueTasks(tasks: [try options.spec(queue: name, payload)])).first ?? ""
    }

    /// Adds several tasks in one commit (all or none); returns their ids in order. Each is checked
    /// as by `enqueue(_:options:)`, and the same id twice in one call is `already-exists`.
    ///
    /// ```swift
    /// try await task.tasks.queue("sendPushNotification").enqueue(contentsOf: pushes.map { ($0, TaskOptions()) })
    /// ```
    @discardableResult
    public func enqueue<T: Encodable>(contentsOf payloads: [(T, TaskOptions)]) async throws -> [String] {
        guard !payloads.isEmpty else { return [] }
        return try await channel.call(Boundary.EnqueueTasks(tasks: try payloads.map { try $0.1.spec(queue: name, $0.0) }))
    }

    /// Removes a task waiting to run (its first attempt or a retry; not one running now); throws
    /// `not-found` when the queue holds no waiting task with that id. Its id stays reserved for the
    /// rest of the dedupe window.
    public func delete(_ id: String) async throws {
        _ = try await channel.call(Boundary.DeleteTask(queue: name, id: id))
    }
}
