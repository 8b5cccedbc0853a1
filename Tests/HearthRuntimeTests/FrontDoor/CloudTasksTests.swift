import Foundation
import HearthHTTP
import HearthModel
@_spi(Internals) @testable import HearthRuntime
import Testing

/// The Cloud Tasks calls the Admin SDKs make for a function's task queue with
/// `CLOUD_TASKS_EMULATOR_HOST` set, in their shapes (firebase-admin-node's
/// functions-api-client-internal.ts, firebase-admin-python's functions.py): the task lands on the
/// `onTaskDispatched` queue of that name and runs there (DeliveryUnit's "work" records its runs).
@Suite("Cloud Tasks API for the Admin SDKs' task queues")
struct CloudTasksTests {
    static func tasksPath(_ a: AuthApp, queue: String = "work", location: String = "us-central1", project: String? = nil) -> String {
        "/projects/\(project ?? a.app.runtime.config.project)/locations/\(location)/queues/\(queue)/tasks"
    }

    static func body(_ json: Value) -> String { Base64.encode(JSONWriter.encode(json)) }

    static func enqueue(_ a: AuthApp, _ task: Value, queue: String = "work", admin: Bool = true) async throws -> AuthApp.Reply {
        try await a.post(tasksPath(a, queue: queue), ["task": task], headers: admin ? [("Authorization", "Bearer \(AuthApp.adminToken)")] : [])
    }

    static func run(_ a: AuthApp, _ id: String) async throws -> [String: Value]? {
        try await a.app.runtime.store.get(DocumentPath("runs/work-\(id)"))?.fields
    }

    @Test("Node's request: {data} in the body, a task id, a dispatch deadline; the task runs on its queue")
    func nodeShape() async throws {
        try await withAuthApp { a in
            let name = String(Self.tasksPath(a).dropFirst()) + "/node-1"
            let reply = try await Self.enqueue(a, ["name": .string(name), "dispatchDeadline": "30s", "httpRequest": [
                "url": "", "oidcToken": ["serviceAccountEmail": "emulated-service-acct@email.com"],
                "body": .string(Self.body(["data": ["label": "from node"]])), "headers": ["Content-Type": "application/json"],
            ]])
            #expect(reply.status == 200, "\(reply.json)")
            #expect(reply.json["name"] == .string(name))
            #expect(reply.json["task"]?["name"] == .string("/" + name))  // the emulator's form, which Python strips
            await a.app.settle()
            let run = try #require(try await Self.run(a, "node-1"))
            #expect(run["label"] == "from node")
            #expect(run["queue"] == "work")
            // The same id again is Cloud Tasks' 409, which the SDKs turn into task-already-exists.
            let again = try await Self.enqueue(a, ["name": .string(name), "httpRequest": ["body": .string(Self.body(["data": 1]))]])
            #expect(again.status == 409 && again.json["error"]?["status"] == "ALREADY_EXISTS", "\(again.json)")
        }
    }

    @Test("Python's request: no id, a schedule time (its body wrapped by the caller); deleted before it runs, it never runs")
    func pythonShapeScheduleAndDelete() async throws {
        try await withAuthApp { a in
            let later = a.clock.now() + .seconds(3600)
            let first = try await Self.enqueue(a, ["scheduleTime": .string(later.rfc3339), "httpRequest": ["body": .string(Self.body(["data": ["label": "from python"]]))]])
            #expect(first.status == 200, "\(first.json)")
            let taskName = try #require(first.json["task"]?["name"]?.stringValue)
            let id = String(taskName.split(separator: "/").last!)
            // Python's SDK strips the first character and parses the rest.
            #expect(taskName.dropFirst().hasPrefix("projects/\(a.app.runtime.config.project)/locations/us-central1/queues/work/tasks/"))
            let second = try await Self.enqueue(a, ["name": .string(String(Self.tasksPath(a).dropFirst()) + "/doomed"), "scheduleTime": .string(later.rfc3339),
                                                    "httpRequest": ["body": .string(Self.body(["data": ["label": "never"]]))]])
            #expect(second.status == 200, "\(second.json)")
            await a.app.settle()
            #expect(try await Self.run(a, id) == nil)  // not due yet

            let deleted = try await a.send("DELETE", Self.tasksPath(a) + "/doomed")
            #expect(deleted.status == 200, "\(deleted.json)")
            let missing = try await a.send("DELETE", Self.tasksPath(a) + "/doomed")
            #expect(missing.status == 404 && missing.json["error"]?["status"] == "NOT_FOUND", "\(missing.json)")

            a.clock.advance(by: .seconds(3601))
            await a.app.settle()
            #expect(try await Self.run(a, id)?["label"] == "from python")
            #expect(try await Self.run(a, "doomed") == nil)
        }
    }

    @Test("refusals: credentials, another project, region or queue, and malformed tasks, each named")
    func refusals() async throws {
        try await withAuthApp { a in
            let good: Value = ["httpRequest": ["body": .string(Self.body(["data": 1]))]]
            let unauthorized = try await Self.enqueue(a, good, admin: false)
            #expect(unauthorized.status == 401, "\(unauthorized.json)")
            for path in [Self.tasksPath(a, project: "another"), Self.tasksPath(a, location: "europe-west1"), Self.tasksPath(a, queue: "nope"),
                         Self.tasksPath(a, queue: "whoami")] {
                let r = try await a.post(path, ["task": good], headers: [("Authorization", "Bearer \(AuthApp.adminToken)")])
                #expect(r.status == 404, "\(path): \(r.json)")
            }
            let cases: [(Value, String)] = [
                (["httpRequest": ["body": "%%%"]], "not base64"),
                (["httpRequest": ["body": .string(Base64.encode(Array("not json".utf8)))]], "not JSON"),
                // What Python's SDK sends for enqueue(data) without the envelope, and extra keys.
                (["httpRequest": ["body": .string(Self.body(["label": "x"]))]], "must be {\"data\": …}"),
                (["httpRequest": ["body": .string(Self.body(["data": 1, "extra": 2]))]], "must be {\"data\": …}"),
                (["httpRequest": ["body": .string(Self.body(.emptyMap))]], "must be {\"data\": …}"),
                (["name": "projects/x/locations/us-central1/queues/other/tasks/a", "httpRequest": good["httpRequest"]!], "is not a task of"),
                (["name": .string(String(Self.tasksPath(a).dropFirst()) + "/bad id"), "httpRequest": good["httpRequest"]!], "task id must be"),
                (["scheduleTime": "tomorrow", "httpRequest": good["httpRequest"]!], "task.scheduleTime"),
                (["dispatchDeadline": "5s", "httpRequest": good["httpRequest"]!], "dispatch deadline must be between 15 and 1800"),
                (["dispatchDeadline": 30, "httpRequest": good["httpRequest"]!], "task.dispatchDeadline"),
                (["oops": 1], "unknown field 'oops'"),
            ]
            for (task, message) in cases {
                let r = try await Self.enqueue(a, task)
                #expect(r.status == 400, "\(message): \(r.json)")
                #expect(r.json["error"]?["message"]?.stringValue?.contains(message) == true, "\(message): \(r.json)")
            }
            let notObject = try await a.post(Self.tasksPath(a), ["task": 5], headers: [("Authorization", "Bearer \(AuthApp.adminToken)")])
            #expect(notObject.status == 400, "\(notObject.json)")
        }
    }
}

extension AuthApp {
    /// A body-less request with the admin token.
    func send(_ method: String, _ path: String) async throws -> Reply {
        let r = try await client.send(HTTPClientRequest(method: method, url: base + path,
                                                        headers: HTTPHeaders([(name: "Authorization", value: "Bearer \(AuthApp.adminToken)")])))
        return Reply(status: r.status, json: (try? JSONParser.parse(r.body)) ?? .null)
    }
}
