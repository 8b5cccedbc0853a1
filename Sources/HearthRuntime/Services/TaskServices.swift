import HearthModel
import HearthStore

/// Turns task requests (from units, the CLI and the admin API) into checked `TaskEnqueue`s, with
/// Firebase's rules: the queue is an `onTaskDispatched` function; a start at most 30 days ahead
/// (a delay zero or more); ids `[A-Za-z0-9_-]{1,500}` (generated when absent); a dispatch deadline
/// in [15 s, 1800 s]; payloads up to 1 MiB as JSON.
struct TaskRequests: Sendable {
    let clock: any Clock
    let random: any RandomSource
    let dedupeWindow: Duration
    /// Whether `name` is a task queue of the current function table.
    let isQueue: @Sendable (String) -> Bool

    static let maxPayloadBytes = 1 << 20
    static let maxScheduleAhead: Duration = .seconds(30 * 86_400)

    func check(_ task: TaskSpec) throws(HTTPSError) -> TaskEnqueue {
        guard !task.queue.isEmpty else { throw .invalidArgument("a task needs a queue (the name of an onTaskDispatched function)") }
        guard isQueue(task.queue) else { throw HTTPSError(.notFound, "no task queue named '\(task.queue)' (no onTaskDispatched function has that name)") }
        if let id = task.id, !TaskRequests.isValidID(id) {
            throw .invalidArgument("task id must be 1-500 characters of letters, digits, '_' and '-' (got '\(Printable.quoted(id, limit: 80))')")
        }
        let now = clock.now()
        var scheduleTime = now
        switch task.start {
        case .now: break
        case .after(let delay):
            guard delay >= .zero else { throw .invalidArgument("a task's schedule delay must be zero or more (got \(delay.secondsDouble) s)") }
            scheduleTime = now + delay
        case .at(let time):
            scheduleTime = max(time, now)
        }
        if scheduleTime - now > TaskRequests.maxScheduleAhead {
            throw .invalidArgument("a task can be scheduled at most 30 days ahead (got \(scheduleTime.rfc3339))")
        }
        if let deadline = task.dispatchDeadline, !FunctionOptions.dispatchDeadlineRange.contains(deadline) {
            throw .invalidArgument("a task's dispatch deadline must be between 15 and 1800 seconds (got \(deadline.secondsDouble))")
        }
        let size = JSONWriter.encode(task.data, options: .tagged).count
        guard size <= TaskRequests.maxPayloadBytes else {
            throw .invalidArgument("a task payload is at most 1 MiB as JSON (this one is \(size) bytes)")
        }
        return TaskEnqueue(queue: task.queue, id: task.id ?? random.autoID(), data: task.data, scheduleTime: scheduleTime,
                           dispatchDeadline: task.dispatchDeadline, dedupeWindow: dedupeWindow)
    }

    /// Every task of one request, checked together: the same id twice in one request is `already-exists`.
    func check(_ tasks: [TaskSpec]) throws(HTTPSError) -> [TaskEnqueue] {
        var out: [TaskEnqueue] = []
        out.reserveCapacity(tasks.count)
        for task in tasks { out.append(try check(task)) }
        let ids = out.map { $0.queue + "/" + $0.id }
        if Set(ids).count != ids.count { throw HTTPSError(.alreadyExists, "the same task id is enqueued twice in one request") }
        return out
    }

    static func isValidID(_ id: String) -> Bool {
        let u = id.utf8
        return (1...500).contains(u.count) && u.allSatisfy { c in
            c == 95 || c == 45 || (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122)
        }
    }
}

extension TaskSpec {
    /// A task as the CLI and the admin API take it, in JSON:
    /// `{queue, data, id?, scheduleDelaySeconds? | scheduleTime?, dispatchDeadlineSeconds?}`
    /// (a time as RFC 3339 text). The keys are the admin protocol's, named here only.
    public init(json value: Value) throws(HTTPSError) {
        guard case .map(let m) = value else { throw .invalidArgument("a task must be an object") }
        let known: Set<String> = ["queue", "data", "id", "scheduleDelaySeconds", "scheduleTime", "dispatchDeadlineSeconds"]
        if let unknown = m.keys.sorted().first(where: { !known.contains($0) }) { throw .invalidArgument("unknown task option '\(unknown)'") }
        guard let queue = m["queue"]?.stringValue else { throw .invalidArgument("a task needs a 'queue' (the name of an onTaskDispatched function)") }
        var id: String?
        if let given = m["id"] {
            guard let text = given.stringValue else { throw .invalidArgument("task id must be a string (got \(given.typeName))") }
            id = text
        }
        let start: Start
        switch (m["scheduleDelaySeconds"], m["scheduleTime"]) {
        case (.some, .some):
            throw .invalidArgument("give scheduleDelaySeconds or scheduleTime, not both")
        case (let delay?, nil):
            guard let seconds = delay.doubleValue, seconds >= 0, seconds.isFinite else {
                throw .invalidArgument("scheduleDelaySeconds must be a number of seconds, zero or more (got \(delay))")
            }
            start = .after(.seconds(double: seconds))
        case (nil, let time?):
            guard let t = time.timestampValue ?? time.stringValue.flatMap(Timestamp.init(rfc3339:)) else {
                throw .invalidArgument("scheduleTime must be a timestamp (got \(time))")
            }
            start = .at(t)
        case (nil, nil):
            start = .now
        }
        var deadline: Duration?
        if let d = m["dispatchDeadlineSeconds"] {
            guard let seconds = d.doubleValue, seconds >= 15, seconds <= 1800 else {
                throw .invalidArgument("dispatchDeadlineSeconds must be between 15 and 1800 (got \(d))")
            }
            deadline = .seconds(double: seconds)
        }
        self.init(queue: queue, data: m["data"] ?? .null, id: id, start: start, dispatchDeadline: deadline)
    }
}

enum TaskServices {
    static func register(_ services: inout HostServices.Builder, requests: TaskRequests, deliveries: any DeliveryStorage) {
        services.serve(Boundary.EnqueueTasks.self) { _, request in
            let tasks = try requests.check(request.tasks)
            try await deliveries.enqueue(tasks)
            return tasks.map(\.id)
        }
        services.serve(Boundary.DeleteTask.self) { _, request in
            guard try await deliveries.deleteTask(queue: request.queue, id: request.id) else {
                throw HTTPSError(.notFound, "no pending task '\(request.id)' in queue '\(request.queue)'")
            }
            return Boundary.Empty()
        }
    }
}
