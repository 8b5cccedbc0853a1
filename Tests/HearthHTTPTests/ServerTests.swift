import Foundation
@testable import HearthHTTP
import HearthModel
import Synchronization
import Testing

/// A server on an ephemeral port for one test, stopped at the end.
func withServer<T>(_ configure: (inout HTTPServer.Configuration) -> Void = { _ in }, head: HTTPServer.HeadHandler? = nil,
                   immediate: HTTPServer.ImmediateHandler? = nil,
                   handler: @escaping HTTPServer.Handler, _ body: (HTTPServer, String) async throws -> T) async throws -> T {
    var config = HTTPServer.Configuration()
    configure(&config)
    let server = HTTPServer(configuration: config, head: head, immediate: immediate, handler: handler)
    try server.start()
    do {
        let result = try await body(server, "http://127.0.0.1:\(server.port)")
        await server.shutdown(grace: .seconds(5))
        return result
    } catch {
        await server.shutdown(grace: .seconds(5))
        throw error
    }
}

/// Waits (bounded) until no request is in flight: a request leaves `inFlight` when libmicrohttpd
/// reports it complete, which can be just after its client has the answer. The count at the end.
func settledInFlight(_ server: HTTPServer) async throws -> Int {
    for _ in 0..<3000 where server.inFlight != 0 { try await Task.sleep(for: .milliseconds(5)) }
    return server.inFlight
}

let echo: HTTPServer.Handler = { request in
    HTTPServerResponse.json([
        "method": .string(request.method), "path": .string(request.path), "query": .string(request.query),
        "body": .string(String(decoding: request.body, as: UTF8.self)), "contentType": .string(request.headers["content-type"] ?? ""),
    ])
}

@Suite("HTTP server and client over loopback")
struct ServerTests {
    let client = HTTPClient()

    @Test("a request reaches the handler with method, raw path, raw query, headers and body")
    func roundTrip() async throws {
        try await withServer(handler: echo) { _, base in
            let r = try await client.send(HTTPClientRequest(method: "POST", url: base + "/a/b%20c?x=1&y=%2F", headers: HTTPHeaders([("Content-Type", "text/plain")]), body: Array("hello".utf8), timeout: .seconds(120)))
            #expect(r.status == 200)
            #expect(r.headers["content-type"]?.hasPrefix("application/json") == true)
            let json = try JSONParser.parse(r.body)
            #expect(json == ["method": "POST", "path": "/a/b%20c", "query": "x=1&y=%2F", "body": "hello", "contentType": "text/plain"])
        }
    }

    @Test("a handler's own framing headers (any case) are dropped, so libmicrohttpd frames the body; its other headers are sent")
    func framingHeadersDropped() async throws {
        let body = Array("twelve bytes".utf8)
        try await withServer(handler: { _ in
            HTTPServerResponse(status: 200, headers: HTTPHeaders([("CONTENT-LENGTH", "999"), ("Transfer-Encoding", "chunked"), ("connection", "close"), ("X-Kept", "yes")]), body: .bytes(body))
        }) { _, base in
            for _ in 0..<2 {
                let r = try await client.send(HTTPClientRequest(url: base + "/", timeout: .seconds(120)))
                #expect(r.status == 200)
                #expect(r.body == body)
                #expect(r.headers["content-length"] == "12")
                #expect(r.headers["transfer-encoding"] == nil)
                #expect(r.headers["connection"] != "close")
                #expect(r.headers["x-kept"] == "yes")
            }
        }
    }

    @Test("response header names and values of every size reach the client whole: inline (up to 15 bytes), just past it, long")
    func responseHeaderSizes() async throws {
        // Names and values of up to 15 bytes are stored inside the String itself, longer ones on
        // the heap; both are handed to libmicrohttpd as C strings copied to a temporary buffer.
        // (libmicrohttpd 0.9.75 refuses a header with an empty value, so none is tried.)
        let fields = [("X-A", "v"), ("X-Fifteen-Bytes", "fifteen-bytes-x"), ("X-Sixteen-Bytes!", "sixteen-bytes-xy"),
                      ("X-" + String(repeating: "n", count: 200), String(repeating: "v", count: 3000))]
        try await withServer(handler: { _ in
            HTTPServerResponse(status: 200, headers: HTTPHeaders(fields), body: .bytes(Array("ok".utf8)))
        }) { _, base in
            for _ in 0..<2 {
                let r = try await client.send(HTTPClientRequest(url: base + "/", timeout: .seconds(120)))
                #expect(r.status == 200)
                for (name, value) in fields {
                    #expect(r.headers[name] == value, "header \(name.prefix(20))")
                }
                #expect(r.body == Array("ok".utf8))
            }
        }
    }

    @Test("a request's headers arrive whole and in order however many there are")
    func manyRequestHeaders() async throws {
        // Values of 1 to 40 bytes (libcurl leaves out a header whose value is empty).
        let sent = (1...40).map { ("X-Field-\($0)", String(repeating: "v", count: $0)) }
        try await withServer(handler: { request in
            let names = request.headers.fields.filter { $0.name.hasPrefix("X-Field-") }
            return HTTPServerResponse.json(.array(names.map { .string("\($0.name)=\($0.value)") }))
        }) { _, base in
            let r = try await client.send(HTTPClientRequest(url: base + "/", headers: HTTPHeaders(sent), timeout: .seconds(120)))
            #expect(r.status == 200)
            #expect(try JSONParser.parse(r.body) == .array(sent.map { .string("\($0.0)=\($0.1)") }))
        }
    }

    @Test("bodies over the limit get 413 with a JSON error, and the connection still works")
    func bodyLimit() async throws {
        try await withServer({ $0.maxBodyBytes = 1000 }, handler: echo) { _, base in
            let big = try await client.send(HTTPClientRequest(method: "POST", url: base + "/", body: [UInt8](repeating: 65, count: 5000), timeout: .seconds(120)))
            #expect(big.status == 413)
            #expect(try JSONParser.parse(big.body)["error"]?["status"] == "INVALID_ARGUMENT")
            let ok = try await client.send(HTTPClientRequest(method: "POST", url: base + "/", body: [UInt8](repeating: 65, count: 1000), timeout: .seconds(120)))
            #expect(ok.status == 200)
        }
    }

    @Test("a handler past the request timeout gets 504 and its task is cancelled")
    func requestTimeout() async throws {
        let cancelled = Atomic<Bool>(false)
        try await withServer({ $0.requestTimeout = .milliseconds(200) }, handler: { _ in
            do { try await Task.sleep(for: .seconds(30)) } catch { cancelled.store(true, ordering: .relaxed) }
            return .text("late")
        }) { _, base in
            let r = try await client.send(HTTPClientRequest(url: base + "/slow", timeout: .seconds(120)))
            #expect(r.status == 504)
            #expect(try JSONParser.parse(r.body)["error"]?["status"] == "DEADLINE_EXCEEDED")
            for _ in 0..<3000 where !cancelled.load(ordering: .relaxed) { try await Task.sleep(for: .milliseconds(10)) }
            let wasCancelled = cancelled.load(ordering: .relaxed)
            #expect(wasCancelled)
        }
    }

    @Test("streamed responses arrive chunk by chunk and end")
    func streaming() async throws {
        try await withServer(handler: { _ in
            HTTPServerResponse(status: 200, headers: HTTPHeaders([("Content-Type", "text/event-stream")]), body: .stream { writer in
                for i in 0..<5 {
                    _ = await writer.write(Array("data: \(i)\n\n".utf8))
                    try? await Task.sleep(for: .milliseconds(5))
                }
            })
        }) { _, base in
            let r = try await client.send(HTTPClientRequest(url: base + "/events", timeout: .seconds(120)))
            #expect(r.status == 200)
            #expect(r.text == (0..<5).map { "data: \($0)\n\n" }.joined())
        }
    }

    @Test("a later response is sent when another thread answers it, with what map added; answering it with another later one is a 500")
    func laterResponses() async throws {
        let handler: HTTPServer.Handler = { request in
            let body = request.body
            let later = HTTPServerResponse.later { answer in
                let thread = Thread {
                    switch request.path {
                    case "/nested": answer(.later { inner in inner(.text("never sent")) })
                    default: answer(HTTPServerResponse(status: 201, headers: HTTPHeaders([("X-Inner", "1")]), body: .bytes(body)))
                    }
                }
                thread.start()
            }
            return later.map { r in
                var r = r
                r.headers.add("X-Mapped", "yes")
                return r
            }
        }
        try await withServer(handler: handler) { server, base in
            let results = try await withThrowingTaskGroup(of: Bool.self) { group in
                for i in 0..<200 {
                    group.addTask {
                        let r = try await client.send(HTTPClientRequest(method: "POST", url: base + "/n", body: Array("\(i)".utf8), timeout: .seconds(120)))
                        return r.status == 201 && r.text == "\(i)" && r.headers["x-inner"] == "1" && r.headers["x-mapped"] == "yes"
                    }
                }
                return try await group.reduce(into: [Bool]()) { $0.append($1) }
            }
            #expect(results.count == 200)
            #expect(results.allSatisfy { $0 })
            let nested = try await client.send(HTTPClientRequest(url: base + "/nested", timeout: .seconds(120)))
            #expect(nested.status == 500)
            #expect(try JSONParser.parse(nested.body)["error"]?["status"] == "INTERNAL")
            #expect(nested.text.contains("deferred"))
            #expect(try await settledInFlight(server) == 0)
        }
    }

    @Test("a later response not answered within the request timeout is a 504; its answer afterwards is dropped and the server goes on")
    func laterTimeout() async throws {
        let pending = Mutex<[@Sendable (HTTPServerResponse) -> Void]>([])
        try await withServer({ $0.requestTimeout = .milliseconds(200) }, handler: { request in
            if request.path == "/quick" { return .text("quick") }
            return .later { answer in pending.withLock { $0.append(answer) } }
        }) { server, base in
            let r = try await client.send(HTTPClientRequest(url: base + "/slow", timeout: .seconds(120)))
            #expect(r.status == 504)
            #expect(try JSONParser.parse(r.body)["error"]?["status"] == "DEADLINE_EXCEEDED")
            let answers = pending.withLock { $0 }
            #expect(answers.count == 1)
            for answer in answers { answer(.text("too late")) }
            // The server still serves. A loaded machine can hold even a quick handler's task past
            // 200 ms, which is a 504 too: ask again (bounded) until one arrives in time.
            var next = try await client.send(HTTPClientRequest(url: base + "/quick", timeout: .seconds(120)))
            for _ in 0..<50 where next.status == 504 {
                next = try await client.send(HTTPClientRequest(url: base + "/quick", timeout: .seconds(120)))
            }
            #expect(next.status == 200)
            #expect(next.text == "quick")
            #expect(try await settledInFlight(server) == 0)
        }
    }

    /// What a head handler notes (a route found once) reaches the immediate handler and the task's.
    final class Route: Sendable {
        let name: String
        init(_ name: String) { self.name = name }
    }

    @Test("what the head handler leaves in the head's note reaches the immediate handler and the handler's task as the request's; nothing when it leaves none")
    func headNote() async throws {
        let head: HTTPServer.HeadHandler = { head in
            if head.path != "/plain" { head.note = Route("routed " + head.path) }
            return nil
        }
        let seen: @Sendable (HTTPServerRequest, String) -> HTTPServerResponse = { request, by in
            .text("\(by) \((request.note as? Route)?.name ?? "no note")")
        }
        let immediate: HTTPServer.ImmediateHandler = { request in request.path == "/now" ? seen(request, "immediate") : nil }
        try await withServer(head: head, immediate: immediate, handler: { request in seen(request, "task") }) { _, base in
            var answers: [String] = []
            for path in ["/now", "/later", "/plain"] {
                answers.append(try await client.send(HTTPClientRequest(method: "POST", url: base + path, body: Array("x".utf8), timeout: .seconds(60))).text)
            }
            #expect(answers == ["immediate routed /now", "task routed /later", "task no note"])
        }
    }

    @Test("an immediate handler answers on the server's thread with no task; nil passes the request to the handler's task; its later answers come from any thread, and time out as a handler's do")
    func immediateHandler() async throws {
        let pending = Mutex<[@Sendable (HTTPServerResponse) -> Void]>([])
        let immediate: HTTPServer.ImmediateHandler = { request in
            let inTask = withUnsafeCurrentTask { $0 != nil }
            switch request.path {
            case "/now": return .text("now \(String(decoding: request.body, as: UTF8.self)) in task: \(inTask)")
            case "/later":
                let body = request.body
                return .later { answer in Thread { answer(HTTPServerResponse(status: 201, body: .bytes(body))) }.start() }
            case "/never": return .later { answer in pending.withLock { $0.append(answer) } }
            default: return nil
            }
        }
        let handler: HTTPServer.Handler = { request in
            .text("task \(String(decoding: request.body, as: UTF8.self)) in task: \(withUnsafeCurrentTask { $0 != nil })")
        }
        try await withServer(immediate: immediate, handler: handler) { server, base in
            let results = try await withThrowingTaskGroup(of: Bool.self) { group in
                for i in 0..<300 {
                    group.addTask {
                        let path = ["/now", "/later", "/other"][i % 3]
                        let r = try await client.send(HTTPClientRequest(method: "POST", url: base + path, body: Array("\(i)".utf8), timeout: .seconds(120)))
                        switch path {
                        case "/now": return r.status == 200 && r.text == "now \(i) in task: false"
                        case "/later": return r.status == 201 && r.text == "\(i)"
                        default: return r.status == 200 && r.text == "task \(i) in task: true"
                        }
                    }
                }
                return try await group.reduce(into: [Bool]()) { $0.append($1) }
            }
            #expect(results.count == 300)
            #expect(results.allSatisfy { $0 })
            for _ in 0..<3000 where server.inFlight != 0 { try await Task.sleep(for: .milliseconds(5)) }
            #expect(server.inFlight == 0)
        }
        try await withServer({ $0.requestTimeout = .milliseconds(200) }, immediate: immediate, handler: handler) { server, base in
            let never = try await client.send(HTTPClientRequest(url: base + "/never", timeout: .seconds(120)))
            #expect(never.status == 504)
            #expect(try JSONParser.parse(never.body)["error"]?["status"] == "DEADLINE_EXCEEDED")
            for answer in pending.withLock({ $0 }) { answer(.text("too late")) }
            // Answered on the spot, so never past the timeout, however loaded the machine.
            let after = try await client.send(HTTPClientRequest(method: "POST", url: base + "/now", body: Array("x".utf8), timeout: .seconds(120)))
            #expect(after.text == "now x in task: false")
            for _ in 0..<3000 where server.inFlight != 0 { try await Task.sleep(for: .milliseconds(5)) }
            #expect(server.inFlight == 0)
        }
    }

    @Test("many concurrent keep-alive requests all get their own answers")
    func concurrency() async throws {
        try await withServer(handler: echo) { server, base in
            let results = try await withThrowingTaskGroup(of: Bool.self) { group in
                for i in 0..<400 {
                    group.addTask {
                        let r = try await client.send(HTTPClientRequest(method: "POST", url: base + "/n", body: Array("\(i)".utf8), timeout: .seconds(120)))
                        return try JSONParser.parse(r.body)["body"] == .string("\(i)")
                    }
                }
                return try await group.reduce(into: [Bool]()) { $0.append($1) }
            }
            #expect(results.count == 400)
            #expect(results.allSatisfy { $0 })
            #expect(try await settledInFlight(server) == 0)
        }
    }

    @Test("shutdown lets an in-flight request finish within the grace period, then refuses connections")
    func gracefulShutdown() async throws {
        var config = HTTPServer.Configuration()
        config.requestTimeout = .seconds(30)
        let server = HTTPServer(configuration: config) { _ in
            try? await Task.sleep(for: .milliseconds(300))
            return .text("done")
        }
        try server.start()
        let base = "http://127.0.0.1:\(server.port)"
        let inFlight = Task { try await client.send(HTTPClientRequest(url: base + "/slow", timeout: .seconds(120))) }
        for _ in 0..<6000 where server.inFlight == 0 { try await Task.sleep(for: .milliseconds(5)) }
        #expect(server.inFlight == 1)
        await server.shutdown(grace: .seconds(30))  // generous: a loaded machine may run the handler late
        let r = try await inFlight.value
        #expect(r.status == 200)
        #expect(r.text == "done")
        await #expect(throws: HTTPClientError.self) { try await client.send(HTTPClientRequest(url: base + "/", timeout: .seconds(2))) }
    }

    @Test("shutdown past the grace period answers 503 to unfinished requests and cancels their handlers")
    func shutdownAbandons() async throws {
        let cancelled = Atomic<Bool>(false)
        var config = HTTPServer.Configuration()
        config.requestTimeout = .seconds(60)
        let server = HTTPServer(configuration: config) { _ in
            do { try await Task.sleep(for: .seconds(30)) } catch { cancelled.store(true, ordering: .relaxed) }
            return .text("too late")
        }
        try server.start()
        let base = "http://127.0.0.1:\(server.port)"
        let inFlight = Task { try await client.send(HTTPClientRequest(url: base + "/slow", timeout: .seconds(120))) }
        for _ in 0..<6000 where server.inFlight == 0 { try await Task.sleep(for: .milliseconds(5)) }
        await server.shutdown(grace: .milliseconds(100))
        let r = try await inFlight.value
        #expect(r.status == 503)
        #expect(try JSONParser.parse(r.body)["error"]?["status"] == "UNAVAILABLE")
        let wasCancelled = cancelled.load(ordering: .relaxed)
        #expect(wasCancelled)
        #expect(server.inFlight == 0)
    }

    @Test("the client reports unreachable hosts and timeouts as errors, not responses")
    func clientErrors() async throws {
        do {
            _ = try await client.send(HTTPClientRequest(url: "http://127.0.0.1:1/", timeout: .seconds(2)))
            Issue.record("no error")
        } catch {
            #expect(error.kind == .connection)
        }
        try await withServer({ $0.requestTimeout = .seconds(10) }, handler: { _ in
            try? await Task.sleep(for: .seconds(2))
            return .text("late")
        }) { _, base in
            do {
                _ = try await client.send(HTTPClientRequest(url: base + "/", timeout: .milliseconds(200)))
                Issue.record("no timeout")
            } catch let error as HTTPClientError {
                #expect(error.kind == .timeout)
            }
        }
    }
}
