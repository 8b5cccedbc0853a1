import Foundation
import HearthModel
import HearthStore

/// Turns task requests (from units, the CLI and the admin API) into checked `TaskEnqueue`s, with
/// Firebase's rules: the queue is an `onTaskDispatched` function; at most one of `scheduleDelaySeconds`
/// and `scheduleTime`, at most 30 days ahead; ids `[A-Za-z0-9_-]{1,500}` (generated when absent);
/// `dispatchDeadlineSeconds` in [15, 1800]; payloads up to 1 MiB as JSON.
struct TaskRequests: Sendable {
    let clock: any Clock
    let dedupeWindow: Duration
    /// Whether `name` is a task queue of the current function table.
    let isQueue: @Sendable (String) -> Bool

    static let maxPayloadBytes = 1 << 20
    static let maxScheduleAhead: Duration = .seconds(30 * 86_400)

    /// One task from `{queue, data, id?, scheduleDelaySeconds?, scheduleTime?, dispatchDeadlineSeconds?}`.
    func parse(_ value: Value) throws(HTTPSError) -> TaskEnqueue {
        guard case .map(let m) = value else { throw .invalidArgument("a task must be an object") }
        let known: Set<String> = ["queue", "data", "id", "scheduleDelaySeconds", "scheduleTime", "dispatchDeadlineSeconds"]
        if let unknown = m.keys.sorted().first(where: { !known.contains($0) }) { throw .invalidArgument("unknown task option '\(unknown)'") }
        guard let queue = m["queue"]?.stringValue, !queue.isEmpty else { throw .invalidArgument("a task needs a 'queue' (the name of an onTaskDispatched function)") }
        guard isQueue(queue) else { throw HTTPSError(.notFound, "no task queue named '\(queue)' (no onTaskDispatched function has that name)") }
        let id: String
        if let given = m["id"] {
            guard let text = given.stringValue, TaskRequests.isValidID(text) else {
                throw .invalidArgument("task id must be 1-500 characters of letters, digits, '_' and '-' (got \(given))")
            }
            id = text
        } else {
            id = AutoID.make()
        }
        let now = clock.now()
        var scheduleTime = now
        switch (m["scheduleDelaySeconds"], m["scheduleTime"]) {
        case (.some, .some):
            throw .invalidArgument("give scheduleDelaySeconds or scheduleTime, not both")
        case (let delay?, nil):
            guard let seconds = delay.doubleValue, seconds >= 0, seconds.isFinite else {
                throw .invalidArgument("scheduleDelaySeconds must be a number of seconds, zero or more (got \(delay))")
            }
            scheduleTime = now + .seconds(double: seconds)
        case (nil, let time?):
            guard let t = time.timestampValue ?? time.stringValue.flatMap(Timestamp.init(rfc3339:)) else {
                throw .invalidArgument("scheduleTime must be a timestamp (got \(time))")
            }
            scheduleTime = max(t, now)
        case (nil, nil):
            break
        }
        if scheduleTime - now > TaskRequests.maxScheduleAhead {
            throw .invalidArgument("a task can be scheduled at most 30 days ahead (got \(scheduleTime.rfc3339))")
        }
        var deadline: Double?
        if let d = m["dispatchDeadlineSeconds"] {
            guard let seconds = d.doubleValue, seconds >= 15, seconds <= 1800 else {
                throw .invalidArgument("dispatchDeadlineSeconds must be between 15 and 1800 (got \(d))")
            }
            deadline = seconds
        }
        let data = m["data"] ?? .null
        let size = JSONWriter.encode(data, options: .tagged).count
        guard size <= TaskRequests.maxPayloadBytes else {
            throw .invalidArgument("a task payload is at most 1 MiB as JSON (this one is \(size) bytes)")
        }
        return TaskEnqueue(queue: queue, id: id, payload: ["data": data, "scheduledTime": .timestamp(scheduleTime)],
                           scheduleTime: scheduleTime, dispatchDeadlineSeconds: deadline, dedupeWindow: dedupeWindow)
    }

    /// Every task of a request's `enqueues` (or `tasks`) list.
    func parseList(_ value: Value?) throws(HTTPSError) -> [TaskEnqueue] {
        guard let value else { return [] }
        guard case .array(let items) = value else { throw .invalidArgument("enqueues must be a list of tasks") }
        var out: [TaskEnqueue] = []
        for item in items { out.append(try parse(item)) }
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

enum TaskServices {
    static func handlers(requests: TaskRequests, deliveries: DeliveryStore) -> [String: HostServices.AsyncHandler] {
        [
            "tasks.enqueue": { request in
                let tasks = try requests.parseList(request.arguments["tasks"])
                try await deliveries.enqueue(tasks)
                return .array(tasks.map { .string($0.id) })
            },
            "tasks.delete": { request in
                let queue = try request.string("queue")
                let id = try request.string("id")
                guard try await deliveries.deleteTask(queue: queue, id: id) else {
                    throw HTTPSError(.notFound, "no pending task '\(id)' in queue '\(queue)'")
                }
                return .null
            },
        ]
    }
}
