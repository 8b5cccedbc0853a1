import Foundation
import HearthFunctions

/// A unit for tests: one function of every trigger kind, and callables that exercise errors,
/// auth, logs and the host clock.
public enum EchoUnit: FunctionModule {
    public static let name = "EchoUnit"

    struct Sum: Codable, Sendable { var a: Int; var b: Int }
    struct SumResult: Codable, Sendable { var sum: Int }
    struct FailRequest: Codable, Sendable { var code: String; var message: String; var details: Value? }
    struct Opaque: Error { var secret: String }

    public static func register(_ fn: inout FunctionRegistry) {
        fn.onCall("echo") { (req: CallableRequest<Value>) in req.data }

        fn.onCall("add") { (req: CallableRequest<Sum>) in SumResult(sum: req.data.a + req.data.b) }

        fn.onCall("whoami") { (req: CallableRequest<Value>) -> Value in
            guard let auth = req.auth else { return .null }
            return ["uid": .string(auth.uid), "claims": .map(auth.token)]
        }

        fn.onCall("fail") { (req: CallableRequest<FailRequest>) -> Value in
            let code = FunctionsErrorCode(name: req.data.code) ?? .unknown
            throw HTTPSError(code, req.data.message, details: req.data.details)
        }

        fn.onCall("opaque") { (_: CallableRequest<Value>) -> Value in
            throw Opaque(secret: "database password is hunter2")
        }

        fn.onCall("sleep", .init(timeout: .seconds(5))) { (req: CallableRequest<Double>) -> String in
            try await req.context.clock.sleep(for: .seconds(double: req.data))
            return "woke"
        }

        // Outlives its timeout (it ignores the cancellation of its sleep), then tries to write.
        fn.onCall("lateWrite", .init(timeout: .seconds(5))) { (req: CallableRequest<Value>) -> String in
            try? await req.context.clock.sleep(for: .seconds(60))
            do {
                try await req.documents.collection("late").document("a").set(["written": true] as [String: Value])
                req.logger.info("late write: committed")
            } catch let error as HTTPSError {
                req.logger.info("late write: \(error.code.rawValue)")
            }
            return "done"
        }

        // Holds until the file named by its argument exists (a test's gate: in flight for as long as the
        // test needs, whatever the machine's load), then answers "opened".
        fn.onCall("gate", .init(timeout: .seconds(300))) { (req: CallableRequest<String>) -> String in
            while !FileManager.default.fileExists(atPath: req.data) {
                try await req.context.clock.sleep(for: .milliseconds(20))
            }
            return "opened"
        }

        // Ignores its cancellation: answers only once the file named by its argument exists, looked
        // for by a detached task (not cancelled with the handler) every 5 ms of real time. A reply
        // that comes only when the test lets it, whatever the function's deadline.
        fn.onCall("stubborn", .init(timeout: .seconds(5))) { (req: CallableRequest<String>) -> String in
            let path = req.data
            await Task.detached {
                while !FileManager.default.fileExists(atPath: path) { try? await Task.sleep(for: .milliseconds(5)) }
            }.value
            return "released"
        }

        // A long sleep on the host clock, for tests that need a request to stay in flight.
        fn.onCall("nap", .init(timeout: .seconds(300))) { (req: CallableRequest<Double>) -> String in
            try await req.context.clock.sleep(for: .seconds(double: req.data))
            return "woke"
        }

        fn.onCall("now") { (req: CallableRequest<Value>) in req.context.clock.now() }

        // The thread the handler runs on before and after a service call, then the host clock read
        // synchronously from where it went on: where a handler continues once a reply arrives.
        fn.onCall("threads") { (req: CallableRequest<Value>) -> Value in
            func thread() -> Value { .int(Int64(bitPattern: UInt64(pthread_self()))) }
            let before = thread()
            _ = try await req.documents.collection("threads").document("probe").get([String: Value].self)
            let after = thread()
            return ["before": before, "after": after, "now": .timestamp(req.context.clock.now())]
        }

        fn.onCall("log") { (req: CallableRequest<String>) in
            req.logger.info(req.data, ["source": "EchoUnit"])
        }

        fn.onCall("stream") { (req: CallableRequest<Int>) -> String in
            for i in 0..<req.data {
                let delivered = try await req.sendChunk(["n": Value.int(Int64(i))] as Value)
                if !delivered && req.acceptsStreaming { return "client gone" }
            }
            return req.acceptsStreaming ? "streamed \(req.data)" : "not streamed"
        }

        fn.onCall("headers") { (req: CallableRequest<Value>) -> Value in
            ["instanceIdToken": req.instanceIdToken.map { .string($0) } ?? .null, "appId": req.app.map { .string($0.appId) } ?? .null,
             "userAgent": req.headers["user-agent"].map { .string($0) } ?? .null,
             "traces": .array(req.headers.values("X-Trace").map { .string($0) }),
             "namesLowerCased": .bool(req.headers.allSatisfy { $0.name == $0.name.lowercased() })]
        }

        fn.onCall("restricted", .init(cors: .origins(["https://app.example.com", "https://*.example.org"]))) { (_: CallableRequest<Value>) in "ok" }

        fn.onCall("regexOrigins", .init(cors: .origins(["/^https:\\/\\/dev-[0-9]+\\.example\\.net$/"]))) { (_: CallableRequest<Value>) in "ok" }

        fn.onCall("noCors", .init(cors: .disabled)) { (_: CallableRequest<Value>) in "ok" }

        // Streams one chunk, then works for `data` seconds of wall time (heartbeats every 50 ms).
        fn.onCall("pulse", .init(heartbeat: .milliseconds(50))) { (req: CallableRequest<Double>) -> String in
            _ = try await req.sendChunk("started" as Value)
            try await Task.sleep(for: .seconds(req.data))
            return "done"
        }

        fn.onCall("guarded", .init(enforceAppCheck: true)) { (req: CallableRequest<Value>) in req.app?.appId ?? "none" }

        fn.onRequest("echoRequest") { req in
            var headers = HTTPHeaders([("Content-Type", req.headers["content-type"] ?? "application/octet-stream")])
            headers.add("X-Echo-Method", req.method)
            headers.add("X-Echo-Path", req.path)
            headers.add("X-Echo-Query", req.query)
            return HTTPResponse(status: 200, headers: headers, body: req.body)
        }

        fn.onRequest("whoamiRequest") { req in
            do {
                let auth = try await req.verifiedAuth()
                return try .json(["uid": auth.uid])
            } catch let e as HTTPSError {
                return .error(e)
            }
        }

        // CORS from the function's options: answered preflights and the headers on its responses.
        fn.onRequest("corsRequest", .init(cors: .origins(["https://app.example.com"]))) { _ in HTTPResponse.text("ok") }

        fn.onRequest("hello") { req in
            HTTPResponse.text("hello \(req.queryValue("name") ?? "world") via \(req.method) \(req.path)")
        }

        fn.onSchedule("tick", .init(schedule: "every 5 minutes", timeZone: "Asia/Seoul")) { _ in }

        fn.onTaskDispatched("work", .init(rateLimits: RateLimits(maxDispatchesPerSecond: 10, maxConcurrentDispatches: 5))) { (_: TaskRequest<Value>) in }

        fn.onDocumentCreated("itemCreated", .init(document: "members/{uid}/items/{itemId}", retry: true)) { (_: DocumentEvent<Value>) in }

        fn.onUserCreated("userCreated") { _ in }
    }
}
