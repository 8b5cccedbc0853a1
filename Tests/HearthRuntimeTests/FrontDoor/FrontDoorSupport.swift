import Foundation
import HearthHTTP
import HearthModel
@_spi(Internals) @testable import HearthRuntime
import Testing

/// A runtime with the EchoUnit behind a real front door on an ephemeral 127.0.0.1 port.
struct DoorFixture: Sendable {
    let runtime: Runtime
    let door: FrontDoor
    let log: LogCapture
    let client: HTTPClient
    var base: String { "http://127.0.0.1:\(door.port)" }

    /// Sends a raw request; `body` is sent as is.
    func send(_ method: String = "POST", _ path: String, headers: [(String, String)] = [], body: String = "",
              timeout: Duration = .seconds(90)) async throws -> HTTPClientResponse {
        try await client.send(HTTPClientRequest(method: method, url: base + path, headers: HTTPHeaders(headers.map { (name: $0.0, value: $0.1) }),
                                                body: Array(body.utf8), timeout: timeout))
    }

    /// Calls a callable as the Firebase SDKs do: `{"data": …}` as JSON.
    func call(_ function: String, _ data: Value, headers: [(String, String)] = []) async throws -> HTTPClientResponse {
        try await send("POST", "/" + function, headers: [("Content-Type", "application/json")] + headers,
                       body: JSONWriter.string(["data": data], options: .callable))
    }

    /// A signed-in user's ID token (the user is created if missing).
    func idToken(_ uid: String, claims: [String: Value] = [:]) async throws -> String {
        try await runtime.caller(asUser: uid, claims: claims).rawToken
    }
}

func withFrontDoor<T: Sendable>(units: [String] = ["EchoUnit"], clock: any Clock = SystemClock(),
                                configure: (inout RuntimeConfig) -> Void = { _ in }, secrets: Secrets = Secrets(), controlToken: String? = nil,
                                _ body: @escaping @Sendable (DoorFixture) async throws -> T) async throws -> T {
    var config = makeConfig(units: units)
    config.server.port = 0
    configure(&config)
    let log = LogCapture()
    let runtime = try await openRuntime(config: config, clock: clock, log: log.makeLog(clock: clock))
    await runtime.loadUnits()
    let door = try FrontDoor(runtime: runtime, secrets: secrets, controlToken: controlToken)
    try door.start()
    let fixture = DoorFixture(runtime: runtime, door: door, log: log, client: HTTPClient())
    let result: Result<T, Error>
    do { result = .success(try await withTimeout(seconds: 180) { try await body(fixture) }) } catch { result = .failure(error) }
    await door.shutdown(grace: .seconds(5))
    runtime.store.close()
    return try result.get()
}

extension HTTPClientResponse {
    var json: Value? { try? JSONParser.parse(body, options: .callable) }
}
