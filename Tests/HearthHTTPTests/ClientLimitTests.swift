import HearthHTTP
import HearthModel
import Synchronization
import Testing

@Suite("HTTP client limits")
struct ClientLimitTests {
    @Test("a response longer than the request's limit ends the transfer with responseTooLarge; one within it arrives whole")
    func responseCap() async throws {
        let big = [UInt8](repeating: 65, count: 2 << 20)
        let server = HTTPServer(configuration: HTTPServer.Configuration()) { _ in HTTPServerResponse(status: 200, body: .bytes(big)) }
        try server.start()
        let client = HTTPClient()
        let url = "http://127.0.0.1:\(server.port)/big"
        do {
            _ = try await client.send(HTTPClientRequest(url: url, maxResponseBytes: 1 << 20))
            Issue.record("a 2 MiB body passed a 1 MiB limit")
        } catch {
            #expect(error.kind == .responseTooLarge)
            #expect(error.message.contains("larger than 1048576 bytes"))
        }
        let whole = try await client.send(HTTPClientRequest(url: url, maxResponseBytes: 3 << 20))
        #expect(whole.body.count == big.count)
        await server.shutdown(grace: .seconds(1))
    }
}

@Suite("A server dropped without shutdown")
struct DroppedServerTests {
    @Test("its daemon stops: a request in flight gets an answer or a closed connection, new ones are refused, nothing calls into freed state")
    func dropped() async throws {
        let started = Changes()
        let count = Mutex(0)
        var server: HTTPServer? = HTTPServer(configuration: HTTPServer.Configuration()) { _ in
            count.withLock { $0 += 1 }
            started.changed()
            try? await Task.sleep(for: .seconds(2))
            return .text("late")
        }
        try server?.start()
        let port = try #require(server?.port)
        let client = HTTPClient()
        let inFlight = Task { try? await client.send(HTTPClientRequest(url: "http://127.0.0.1:\(port)/slow", timeout: .seconds(30))) }
        _ = await started.wait(atMost: .seconds(30)) { count.withLock { $0 } > 0 }
        server = nil
        let answer = await inFlight.value
        #expect(answer == nil || answer?.status == 503)
        do {
            _ = try await client.send(HTTPClientRequest(url: "http://127.0.0.1:\(port)/again", timeout: .seconds(5)))
            Issue.record("a dropped server still answered")
        } catch {
            #expect(error.kind == .connection || error.kind == .timeout)
        }
        try await Task.sleep(for: .seconds(3))  // the abandoned handler finishes; the process must still be alive
    }
}
