import Foundation
import HearthHTTP
import HearthModel

/// The Cloud Tasks API's task calls, as the Admin SDKs make them for a function's task queue
/// (`getFunctions().taskQueue("sendReminder").enqueue(data, options)`, Python's
/// `functions.task_queue(...).enqueue(...)`) with `CLOUD_TASKS_EMULATOR_HOST` pointing here:
///
/// - `POST /projects/{project}/locations/{region}/queues/{function}/tasks` with `{"task": …}`:
///   `name` (`…/tasks/{id}`: the task's id, deduplicated), `scheduleTime`, `dispatchDeadline`
///   ("30s"), and `httpRequest.body`, the base64 of the task's JSON body, which must be
///   `{"data": …}` as a task queue function takes it (Node's SDK wraps the data so; Python's sends
///   what it is given, so Python code passes `{"data": …}`). The task goes to the queue of the `onTaskDispatched`
///   function of that name, as a unit's `enqueue` would put it. The answer has the task's `name`
///   both as Cloud Tasks gives it and, under `task`, as the Firebase emulator does (with a
///   leading "/", which Python's SDK strips).
/// - `DELETE …/tasks/{id}`: removes a task that has not started (404 when there is none).
///
/// Admin credentials (or `Bearer owner` in emulator mode, as the SDKs send to an emulator).
extension FrontDoor {
    func cloudTasks(_ request: HTTPServerRequest, _ segments: [Substring]) async -> HTTPServerResponse {
        guard authorizedAsAdmin(request) else {
            return .googleError(HTTPSError(.unauthenticated, "Request had invalid authentication credentials (the admin token, or Bearer owner in emulator mode)."))
        }
        // projects/{p}/locations/{l}/queues/{q}/tasks[/{id}]
        let project = String(segments[1]), location = String(segments[3]), queue = String(segments[5])
        guard project == config.project else { return .googleError(HTTPSError(.notFound, "this server serves project \(config.project), not \(project)")) }
        guard location == config.region else {
            return .googleError(HTTPSError(.notFound, "Queue projects/\(project)/locations/\(location)/queues/\(queue) does not exist (this server's functions are in \(config.region))."))
        }
        let prefix = "projects/\(project)/locations/\(location)/queues/\(queue)/tasks"
        do {
            switch (request.method, segments.count) {
            case ("POST", 7):
                let (spec, given) = try FrontDoor.taskSpec(request.body, queue: queue, prefix: prefix)
                guard let id = try await runtime.enqueue([spec]).first else { throw HTTPSError(.internal, "the task was not enqueued") }
                var task: [String: Value] = ["name": .string("/\(prefix)/\(id)")]
                for key in ["scheduleTime", "dispatchDeadline", "httpRequest"] { if let v = given[key] { task[key] = v } }
                return .restJSON(["name": .string("\(prefix)/\(id)"), "task": .map(task)])
            case ("DELETE", 8):
                try await runtime.deleteTask(queue: queue, id: String(segments[7]))
                return .restJSON(.emptyMap)
            default:
                return .googleError(HTTPSError(.notFound, "no Cloud Tasks method \(request.method) /\(segments.joined(separator: "/"))"))
            }
        } catch let error as HTTPSError {
            return .googleError(error)
        } catch {
            return .googleError(HTTPSError(.internal, "\(error)"))
        }
    }

    /// The `TaskSpec` a Cloud Tasks create request asks for, and the task object as given.
    static func taskSpec(_ body: [UInt8], queue: String, prefix: String) throws(HTTPSError) -> (TaskSpec, [String: Value]) {
        guard case .map(let outer)? = try? JSONParser.parse(body) else { throw .invalidArgument("the body must be a JSON object with a 'task'") }
        guard case .map(let task)? = outer["task"] else { throw .invalidArgument("task: is required (an object)") }
        for key in task.keys where !["name", "httpRequest", "scheduleTime", "dispatchDeadline", "createTime"].contains(key) {
            throw .invalidArgument("task: unknown field '\(key)'")
        }
        var id: String?
        switch task["name"] {
        case nil, .null?, .string("")?: break
        case .string(let name)?:
            // Its own queue's name, with or without the emulator's leading "/".
            let trimmed = name.hasPrefix("/") ? String(name.dropFirst()) : name
            guard trimmed.hasPrefix(prefix + "/"), !trimmed.dropFirst(prefix.count + 1).contains("/") else {
                throw .invalidArgument("task.name: '\(Printable.quoted(name, limit: 120))' is not a task of \(prefix)")
            }
            id = String(trimmed.dropFirst(prefix.count + 1))
        case let other?: throw .invalidArgument("task.name: must be a string (got \(other.typeName))")
        }
        var start = TaskSpec.Start.now
        switch task["scheduleTime"] {
        case nil, .null?: break
        case .string(let text)?:
            guard let time = Timestamp(rfc3339: text) else { throw .invalidArgument("task.scheduleTime: '\(Printable.quoted(text, limit: 60))' is not an RFC 3339 time") }
            start = .at(time)
        case let other?: throw .invalidArgument("task.scheduleTime: must be a string (got \(other.typeName))")
        }
        var deadline: Duration?
        switch task["dispatchDeadline"] {
        case nil, .null?: break
        case .string(let text)? where text.hasSuffix("s"):
            guard let seconds = Double(text.dropLast()), seconds.isFinite else {
                throw .invalidArgument("task.dispatchDeadline: '\(Printable.quoted(text, limit: 40))' is not a duration such as \"30s\"")
            }
            deadline = .seconds(double: seconds)
        case let other?: throw .invalidArgument("task.dispatchDeadline: must be a duration such as \"30s\" (got \(Printable.quoted(JSONWriter.string(other), limit: 40)))")
        }
        var data: Value = .null
        if let http = task["httpRequest"] {
            guard case .map(let h) = http else { throw .invalidArgument("task.httpRequest: must be an object") }
            switch h["body"] {
            case nil, .null?, .string("")?: break
            case .string(let encoded)?:
                guard let bytes = Base64.decodeProtoBytes(encoded) else { throw .invalidArgument("task.httpRequest.body: not base64") }
                // Read as a callable's body is (the same limits, Int64Value wrappers). As Firebase's
                // task queue functions answer 400 to any other body, it is refused here rather than
                // failing every attempt later.
                guard let json = try? JSONParser.parse(bytes, options: .callable) else {
                    throw .invalidArgument("task.httpRequest.body: not JSON (a task's body is {\"data\": …} as JSON)")
                }
                guard let inner = FrontDoor.envelopeData(json) else {
                    throw .invalidArgument("task.httpRequest.body: must be {\"data\": …}, as a task queue function takes it (Python's enqueue sends its argument as the body: pass {\"data\": …})")
                }
                data = inner
            case let other?: throw .invalidArgument("task.httpRequest.body: must be a base64 string (got \(other.typeName))")
            }
        }
        return (TaskSpec(queue: queue, data: data, id: id, start: start, dispatchDeadline: deadline), task)
    }
}
