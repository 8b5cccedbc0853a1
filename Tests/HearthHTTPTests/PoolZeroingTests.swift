import CEpollBatches
import Foundation
@testable import HearthHTTP
import HearthModel
import HearthTesting
import Testing

/// libmicrohttpd no longer zeroes a connection's memory pool between the requests of a kept-alive
/// connection (Sources/CEpollBatches/pool_zeroing.c): each request's head and body then land on
/// bytes the one before left. What could go wrong is a request parsed with some of those bytes in
/// it, so these tests send, on one connection, requests that each leave more behind than the next
/// one writes over, and check that the handler sees exactly what each sent.
@Suite("Connection pools not zeroed between requests")
struct PoolZeroingTests {
    /// Answers with every header the request carried, in order, then its body.
    static let mirror: HTTPServer.Handler = { request in
        let lines = request.headers.map { "\(HTTPHeaders.lowercasedName($0.name)): \($0.value)" }
        return .text(lines.joined(separator: "\n") + "\n\n" + String(decoding: request.body, as: UTF8.self))
    }

    struct Sent {
        var head: String
        var headers: [(String, String)]
        var body: String

        /// What `mirror` answers when the request is read as sent.
        var expected: String {
            headers.map { "\($0.0.lowercased()): \($0.1)" }.joined(separator: "\n") + "\n\n" + body
        }
    }

    static func request(_ method: String, _ path: String, _ headers: [(String, String)], body: String = "", chunked: Bool = false) -> Sent {
        var all = [("Host", "127.0.0.1")] + headers
        var payload = body
        if chunked {
            all.append(("Transfer-Encoding", "chunked"))
            let half = body.utf8.count / 2
            let parts = [String(body.prefix(half)), String(body.dropFirst(half))].filter { !$0.isEmpty }
            payload = parts.map { String($0.utf8.count, radix: 16) + "\r\n" + $0 + "\r\n" }.joined() + "0\r\n\r\n"
        } else if method != "GET" {
            all.append(("Content-Length", "\(body.utf8.count)"))
        }
        let head = "\(method) \(path) HTTP/1.1\r\n" + all.map { "\($0.0): \($0.1)\r\n" }.joined() + "\r\n"
        return Sent(head: head + payload, headers: all, body: body)
    }

    @Test("requests after larger ones on a kept-alive connection are read as sent, with nothing of the ones before")
    func requestsAfterLargerOnes() async throws {
        let pad = String(repeating: "p", count: 12_000)
        let sequence: [Sent] = [
            Self.request("POST", "/large", [("X-Pad", pad), ("X-Second", "two"), ("Content-Type", "text/plain")], body: String(repeating: "b", count: 3000)),
            Self.request("GET", "/bare", []),
            // Names that are prefixes of the ones before, and an empty value.
            Self.request("POST", "/prefixes", [("X-Pa", "short"), ("X-Sec", ""), ("Content-Type", "text/plain")], body: "tiny"),
            Self.request("POST", "/chunked", [("X-Pad", String(pad.prefix(40)))], body: "in two chunks", chunked: true),
            Self.request("POST", "/empty", [], body: ""),
            Self.request("POST", "/large-again", [("X-Pad", pad)], body: String(repeating: "c", count: 2000)),
            Self.request("GET", "/bare-again", [("Accept", "*/*")]),
        ]
        let before = hearth_pool_zeroings_skipped()
        try await withServer({ $0.threads = 1 }, handler: Self.mirror) { server, _ in
            let port = server.port
            let answers = try await onOwnThread { () -> [String] in
                let c = try RawConnection(port: port, timeoutSeconds: 30)
                return try sequence.map { sent in
                    try c.send(sent.head)
                    let r = try c.readResponse()
                    return r.status == 200 ? r.text : "status \(r.status): \(r.text)"
                }
            }
            #expect(answers.count == sequence.count)
            for (answer, sent) in zip(answers, sequence) {
                #expect(answer == sent.expected, "\(sent.head.prefix(30))")
            }
        }
        // Each request but the first reset the pool; none of the resets zeroed it.
        #expect(poolZeroingSkipped == knownLibmicrohttpd)
        if poolZeroingSkipped {
            #expect(hearth_pool_zeroings_skipped() - before >= UInt(sequence.count - 1))
        }
    }

    @Test("pipelined requests after a large one are each read as sent")
    func pipelinedAfterLarge() async throws {
        let first = Self.request("POST", "/large", [("X-Pad", String(repeating: "q", count: 10_000))], body: String(repeating: "d", count: 1000))
        let rest = (0..<20).map { i in Self.request("POST", "/p\(i)", [("X-N", "\(i)")], body: "\(i)") }
        try await withServer({ $0.threads = 1 }, handler: Self.mirror) { server, _ in
            let port = server.port
            let answers = try await onOwnThread { () -> [String] in
                let c = try RawConnection(port: port, timeoutSeconds: 30)
                try c.send(first.head)
                _ = try c.readResponse()
                // All twenty at once: libmicrohttpd keeps the bytes of the next request across the
                // pool's reset, and the rest of the pool holds what the large request left.
                try c.send(rest.map(\.head).joined())
                return try rest.map { _ in try c.readResponse().text }
            }
            #expect(answers == rest.map(\.expected))
        }
    }
}
