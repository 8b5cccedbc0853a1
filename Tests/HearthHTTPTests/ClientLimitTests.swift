import HearthHTTP
import HearthModel
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
