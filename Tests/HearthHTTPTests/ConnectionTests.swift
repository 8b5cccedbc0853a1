import Foundation
@testable import HearthHTTP
import HearthModel
import HearthTesting
import Synchronization
import Testing

/// Connection-level behaviour with raw sockets: many keep-alive connections, slow clients,
/// oversized heads, the connection limit. Socket reads block, so they run on threads of their own
/// (`onOwnThread`), never on the executor the server's handlers need.
@Suite("HTTP server connections")
struct ConnectionTests {
    let client = HTTPClient()

    static func request(_ path: String, body: String = "") -> String {
        "POST \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: text/plain\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)"
    }

    @Test("300 keep-alive connections each carry three requests and get their own answers")
    func manyKeepAliveConnections() async throws {
        try await withServer({ $0.threads = 2 }, handler: echo) { server, _ in
            let port = server.port
            let wrong = try await onOwnThread { () -> [String] in
                var wrong: [String] = []
                let connections = try (0..<300).map { _ in try RawConnection(port: port) }
                for round in 0..<3 {
                    // Every connection sends before any is read, so the server holds 300 requests at once.
                    for (i, c) in connections.enumerated() { try c.send(Self.request("/c\(i)", body: "\(i)-\(round)")) }
                    for (i, c) in connections.enumerated() {
                        let r = try c.readResponse()
                        let json = try JSONParser.parse(r.body)
                        if r.status != 200 || json["path"] != .string("/c\(i)") || json["body"] != .string("\(i)-\(round)")
                            || r.headers["connection"]?.lowercased() == "close" {
                            wrong.append("connection \(i) round \(round): \(r.status) \(r.text)")
                        }
                    }
                }
                return wrong
            }
            #expect(wrong == [])
            #expect(server.inFlight == 0)
        }
    }

    @Test("clients stalled mid-head or mid-body do not hold up others, and are cut off after the connection timeout")
    func slowClientsDoNotBlock() async throws {
        try await withServer({ $0.threads = 1; $0.connectionTimeoutSeconds = 1 }, handler: echo) { server, base in
            let port = server.port
            let stalled = try await onOwnThread {
                try (0..<40).map { i in
                    let c = try RawConnection(port: port)
                    if i.isMultiple(of: 2) {
                        try c.send("POST /slow HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")  // never finishes its head
                    } else {
                        try c.send("POST /slow HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 1000\r\n\r\nonly a little")  // nor its body
                    }
                    return c
                }
            }
            // With a single server thread, the stalled connections are still open while these are served.
            let answers = try await withThrowingTaskGroup(of: Int.self) { group in
                for i in 0..<20 {
                    group.addTask {
                        try await client.send(HTTPClientRequest(method: "POST", url: base + "/fast", body: Array("\(i)".utf8), timeout: .seconds(90))).status
                    }
                }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
            #expect(answers == Array(repeating: 200, count: 20))
            // The idle timeout (1 s here) then closes each stalled connection; reads give up after 90 s.
            let closed = try await onOwnThread { try stalled.map { try $0.waitForClose() } }
            #expect(closed == Array(repeating: true, count: 40))
        }
    }

    @Test("a head over the header limit is refused with 431 and nothing reaches the handler")
    func oversizedHead() async throws {
        let seen = Mutex<[String]>([])
        try await withServer({ $0.maxHeaderBytes = 4096 }, handler: { request in
            seen.withLock { $0.append(request.path) }
            return await echo(request)
        }) { server, _ in
            let port = server.port
            let (big, small) = try await onOwnThread { () -> (Int, Int) in
                let c = try RawConnection(port: port)
                try c.send("GET /big HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: \(String(repeating: "x", count: 8000))\r\n\r\n")
                let big = try c.readResponse().status
                let ok = try RawConnection(port: port)
                try ok.send("GET /small HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Small: \(String(repeating: "x", count: 1000))\r\n\r\n")
                return (big, try ok.readResponse().status)
            }
            #expect(big == 431)
            #expect(small == 200)
            #expect(seen.withLock { $0 } == ["/small"])
        }
    }

    @Test("past the connection limit a new connection is not served; once a slot frees, clients are served again")
    func connectionLimit() async throws {
        try await withServer({ $0.maxConnections = 8; $0.threads = 1 }, handler: echo) { server, _ in
            let port = server.port
            let (statuses, answeredWhileFull, afterFreeing) = try await onOwnThread { () -> ([Int], Bool, Int) in
                var held = try (0..<8).map { _ in try RawConnection(port: port) }
                var statuses: [Int] = []
                for c in held {
                    try c.send(Self.request("/held"))
                    statuses.append(try c.readResponse().status)
                }
                // libmicrohttpd either leaves the extra connection in the kernel's backlog until a
                // slot frees, or accepts and closes it at once: either way it is not served now.
                let extra = try RawConnection(port: port)
                try? extra.send(Self.request("/extra"))
                extra.setReadTimeout(milliseconds: 500)
                let answeredWhileFull = (try? extra.readResponse()) != nil
                held.removeLast()  // closes one
                extra.setReadTimeout(milliseconds: 90_000)
                if let r = try? extra.readResponse() { return (statuses, answeredWhileFull, r.status) }
                // It was closed: a new connection gets the freed slot, once the server has seen the
                // close (a connection arriving before that is refused like the extra one was).
                for _ in 0..<200 {
                    let fresh = try RawConnection(port: port)
                    fresh.setReadTimeout(milliseconds: 90_000)
                    if (try? fresh.send(Self.request("/fresh"))) != nil, let r = try? fresh.readResponse() {
                        return (statuses, answeredWhileFull, r.status)
                    }
                    usleep(50_000)
                }
                return (statuses, answeredWhileFull, 0)
            }
            #expect(statuses == Array(repeating: 200, count: 8))
            #expect(!answeredWhileFull)
            #expect(afterFreeing == 200)
        }
    }

    @Test("a request with Expect: 100-continue gets the interim response, then its answer")
    func expectContinue() async throws {
        try await withServer(handler: echo) { server, _ in
            let port = server.port
            let (interim, final) = try await onOwnThread { () -> (Int, RawConnection.Response) in
                let c = try RawConnection(port: port)
                try c.send("POST /e HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n")
                let interim = try c.readResponse().status
                try c.send("hello")
                return (interim, try c.readResponse())
            }
            #expect(interim == 100)
            #expect(final.status == 200)
            #expect(try JSONParser.parse(final.body)["body"] == "hello")
        }
    }
}
