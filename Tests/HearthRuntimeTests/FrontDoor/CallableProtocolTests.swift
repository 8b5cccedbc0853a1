import Foundation
import HearthAuth
import HearthHTTP
import HearthModel
@_spi(Internals) @testable import HearthRuntime
import Testing

/// One request of the callable protocol table and what must come back.
struct CallableCase: Sendable, CustomTestStringConvertible {
    var name: String
    var method = "POST"
    var path: String
    var headers: [(String, String)] = [("Content-Type", "application/json")]
    var body: String
    var status: Int
    /// The whole response body, as JSON.
    var response: String

    var testDescription: String { name }

    static let badRequest = #"{"error":{"status":"INVALID_ARGUMENT","message":"Bad Request"}}"#
    static let unauthenticated = #"{"error":{"status":"UNAUTHENTICATED","message":"Unauthenticated"}}"#

    static let all: [CallableCase] = [
        CallableCase(name: "an object round-trips", path: "/echo", body: #"{"data":{"a":1,"b":[true,null,"x"],"c":1.5}}"#,
                     status: 200, response: #"{"result":{"a":1,"b":[true,null,"x"],"c":1.5}}"#),
        CallableCase(name: "the project/region route", path: "/hearth-local/us-central1/echo", body: #"{"data":"hi"}"#,
                     status: 200, response: #"{"result":"hi"}"#),
        CallableCase(name: "another region is not served", path: "/hearth-local/europe-west1/echo", body: #"{"data":"hi"}"#,
                     status: 404, response: #"{"error":{"status":"NOT_FOUND","message":"no function at /hearth-local/europe-west1/echo"}}"#),
        CallableCase(name: "another project is not served", path: "/other/us-central1/echo", body: #"{"data":"hi"}"#,
                     status: 404, response: #"{"error":{"status":"NOT_FOUND","message":"no function at /other/us-central1/echo"}}"#),
        CallableCase(name: "null data", path: "/echo", body: #"{"data":null}"#, status: 200, response: #"{"result":null}"#),
        CallableCase(name: "a percent-encoded name is decoded", path: "/ech%6F", body: #"{"data":"hi"}"#, status: 200, response: #"{"result":"hi"}"#),
        CallableCase(name: "so are the project/region route's segments", path: "/hearth%2Dlocal/us-central1/ech%6f", body: #"{"data":"hi"}"#,
                     status: 200, response: #"{"result":"hi"}"#),
        CallableCase(name: "an encoded slash stays inside its segment", path: "/ech%2Fo", body: #"{"data":"hi"}"#,
                     status: 404, response: #"{"error":{"status":"NOT_FOUND","message":"no function at /ech/o"}}"#),
        CallableCase(name: "content type case and parameters are ignored", path: "/echo", headers: [("Content-Type", "Application/JSON; charset=utf-8")],
                     body: #"{"data":[1,2]}"#, status: 200, response: #"{"result":[1,2]}"#),
        CallableCase(name: "text/plain is refused", path: "/echo", headers: [("Content-Type", "text/plain")], body: #"{"data":1}"#,
                     status: 400, response: badRequest),
        CallableCase(name: "a missing content type is refused", path: "/echo", headers: [], body: #"{"data":1}"#, status: 400, response: badRequest),
        CallableCase(name: "application/jsonx is refused", path: "/echo", headers: [("Content-Type", "application/jsonx")], body: #"{"data":1}"#,
                     status: 400, response: badRequest),
        CallableCase(name: "GET is refused", method: "GET", path: "/echo", body: "", status: 400, response: badRequest),
        CallableCase(name: "PUT is refused", method: "PUT", path: "/echo", body: #"{"data":1}"#, status: 400, response: badRequest),
        CallableCase(name: "invalid JSON", path: "/echo", body: #"{"data":"#, status: 400, response: badRequest),
        CallableCase(name: "an empty body", path: "/echo", body: "", status: 400, response: badRequest),
        CallableCase(name: "a key besides data", path: "/echo", body: #"{"data":1,"extra":2}"#, status: 400, response: badRequest),
        CallableCase(name: "no data key", path: "/echo", body: "{}", status: 400, response: badRequest),
        CallableCase(name: "an array body", path: "/echo", body: "[1]", status: 400, response: badRequest),
        CallableCase(name: "a string body", path: "/echo", body: #""data""#, status: 400, response: badRequest),
        CallableCase(name: "trailing garbage", path: "/echo", body: #"{"data":1} x"#, status: 400, response: badRequest),
        CallableCase(name: "an unknown function", path: "/nope", body: #"{"data":1}"#,
                     status: 404, response: #"{"error":{"status":"NOT_FOUND","message":"no function at /nope"}}"#),
        CallableCase(name: "a schedule function has no HTTP route", path: "/tick", body: #"{"data":1}"#,
                     status: 404, response: #"{"error":{"status":"NOT_FOUND","message":"'tick' is a schedule function and has no HTTP route"}}"#),
        CallableCase(name: "Basic credentials are refused before the function runs", path: "/echo",
                     headers: [("Content-Type", "application/json"), ("Authorization", "Basic dXNlcjpwYXNz")], body: #"{"data":1}"#,
                     status: 401, response: unauthenticated),
        CallableCase(name: "an unverifiable bearer token is refused even by a function that ignores auth", path: "/echo",
                     headers: [("Content-Type", "application/json"), ("Authorization", "Bearer not.a.token")], body: #"{"data":1}"#,
                     status: 401, response: unauthenticated),
        CallableCase(name: "an empty bearer token", path: "/echo",
                     headers: [("Content-Type", "application/json"), ("Authorization", "Bearer ")], body: #"{"data":1}"#,
                     status: 401, response: unauthenticated),
        CallableCase(name: "a lower-case scheme", path: "/echo",
                     headers: [("Content-Type", "application/json"), ("Authorization", "bearer abc")], body: #"{"data":1}"#,
                     status: 401, response: unauthenticated),
        CallableCase(name: "a body that is not a call is refused before its token is looked at (malformed Authorization)", path: "/echo",
                     headers: [("Content-Type", "application/json"), ("Authorization", "Basic dXNlcjpwYXNz")], body: #"{"data":"#,
                     status: 400, response: badRequest),
        CallableCase(name: "a body that is not a call is refused before its token is looked at (unverifiable token)", path: "/echo",
                     headers: [("Content-Type", "application/json"), ("Authorization", "Bearer not.a.token")], body: #"{"data":1,"extra":2}"#,
                     status: 400, response: badRequest),
        CallableCase(name: "a body over 64 KiB round-trips (parsed in a task, not on the server's thread)", path: "/echo",
                     body: #"{"data":""# + String(repeating: "x", count: 70_000) + #""}"#,
                     status: 200, response: #"{"result":""# + String(repeating: "x", count: 70_000) + #""}"#),
        CallableCase(name: "no Authorization: auth is null", path: "/whoami", body: #"{"data":null}"#, status: 200, response: #"{"result":null}"#),
        CallableCase(name: "an Int64Value wrapper is decoded exactly and large results are wrapped", path: "/echo",
                     body: #"{"data":{"@type":"type.googleapis.com/google.protobuf.Int64Value","value":"9007199254740993"}}"#,
                     status: 200, response: #"{"result":{"@type":"type.googleapis.com/google.protobuf.Int64Value","value":"9007199254740993"}}"#),
        CallableCase(name: "a small Int64Value comes back as a plain number", path: "/add",
                     body: #"{"data":{"a":{"@type":"type.googleapis.com/google.protobuf.Int64Value","value":"40"},"b":2}}"#,
                     status: 200, response: #"{"result":{"sum":42}}"#),
        CallableCase(name: "a UInt64Value wrapper", path: "/echo",
                     body: #"{"data":{"@type":"type.googleapis.com/google.protobuf.UInt64Value","value":"18446744073709551615"}}"#,
                     status: 200, response: #"{"result":{"@type":"type.googleapis.com/google.protobuf.UInt64Value","value":"18446744073709551615"}}"#),
        CallableCase(name: "integers keep every digit", path: "/echo", body: #"{"data":[9007199254740991,-9007199254740991,0,-0.5]}"#,
                     status: 200, response: #"{"result":[9007199254740991,-9007199254740991,0,-0.5]}"#),
        CallableCase(name: "a malformed Int64Value wrapper is a bad request", path: "/echo",
                     body: #"{"data":{"@type":"type.googleapis.com/google.protobuf.Int64Value","value":"12x"}}"#, status: 400, response: badRequest),
        CallableCase(name: "data the function cannot decode is INVALID_ARGUMENT", path: "/add", body: #"{"data":{"a":"one","b":2}}"#,
                     status: 400, response: #"{"error":{"status":"INVALID_ARGUMENT","message":"invalid request data: a: expected integer, found string"}}"#),
        CallableCase(name: "an HTTPSError keeps status, message and details", path: "/fail",
                     body: #"{"data":{"code":"not-found","message":"no such list","details":{"listId":7}}}"#,
                     status: 404, response: #"{"error":{"status":"NOT_FOUND","message":"no such list","details":{"listId":7}}}"#),
        CallableCase(name: "permission-denied is 403", path: "/fail", body: #"{"data":{"code":"permission-denied","message":"not yours"}}"#,
                     status: 403, response: #"{"error":{"status":"PERMISSION_DENIED","message":"not yours"}}"#),
        CallableCase(name: "resource-exhausted is 429", path: "/fail", body: #"{"data":{"code":"resource-exhausted","message":"slow down"}}"#,
                     status: 429, response: #"{"error":{"status":"RESOURCE_EXHAUSTED","message":"slow down"}}"#),
        CallableCase(name: "already-exists is 409", path: "/fail", body: #"{"data":{"code":"already-exists","message":"taken"}}"#,
                     status: 409, response: #"{"error":{"status":"ALREADY_EXISTS","message":"taken"}}"#),
        CallableCase(name: "failed-precondition is 400", path: "/fail", body: #"{"data":{"code":"failed-precondition","message":"not yet"}}"#,
                     status: 400, response: #"{"error":{"status":"FAILED_PRECONDITION","message":"not yet"}}"#),
        CallableCase(name: "unavailable is 503", path: "/fail", body: #"{"data":{"code":"unavailable","message":"later"}}"#,
                     status: 503, response: #"{"error":{"status":"UNAVAILABLE","message":"later"}}"#),
        CallableCase(name: "an HTTPSError with code internal keeps its message, as Firebase sends it", path: "/fail",
                     body: #"{"data":{"code":"internal","message":"the reminder service is down","details":{"retry":true}}}"#,
                     status: 500, response: #"{"error":{"status":"INTERNAL","message":"the reminder service is down","details":{"retry":true}}}"#),
        CallableCase(name: "unknown and data-loss are 500 with their own status", path: "/fail", body: #"{"data":{"code":"data-loss","message":"torn write"}}"#,
                     status: 500, response: #"{"error":{"status":"DATA_LOSS","message":"torn write"}}"#),
        CallableCase(name: "a deadline-exceeded the function throws keeps its message", path: "/fail",
                     body: #"{"data":{"code":"deadline-exceeded","message":"upstream too slow"}}"#,
                     status: 504, response: #"{"error":{"status":"DEADLINE_EXCEEDED","message":"upstream too slow"}}"#),
        CallableCase(name: "any other error is INTERNAL with nothing of the cause", path: "/opaque", body: #"{"data":1}"#,
                     status: 500, response: #"{"error":{"status":"INTERNAL","message":"INTERNAL"}}"#),
        CallableCase(name: "an /api path without a rewrite is a JSON 404", path: "/api/todos", body: #"{"data":1}"#,
                     status: 404, response: #"{"error":{"status":"NOT_FOUND","message":"no route for /api/todos"}}"#),
    ]
}

@Suite("Callable protocol over HTTP")
struct CallableProtocolTests {
    /// In a worker process (`hearth serve`'s default), calls without an ID token are answered on
    /// the server's thread (`FrontDoor.handleNow`); in-process, and with a token, in a task.
    @Test("callable requests and their exact answers", arguments: CallableCase.all, RuntimeConfig.Isolation.allCases)
    func table(_ c: CallableCase, isolation: RuntimeConfig.Isolation) async throws {
        try await withFrontDoor(configure: { $0.defaultIsolation = isolation }) { door in
            let r = try await door.send(c.method, c.path, headers: c.headers, body: c.body)
            #expect(r.status == c.status, "\(r.text)")
            #expect(r.headers["content-type"] == "application/json; charset=utf-8")
            #expect(r.json == (try JSONParser.parse(Array(c.response.utf8), options: .callable)), "\(r.text)")
            // No Origin: nothing to reflect (firebase-functions' `cors` with `origin: true`), but
            // caches are told the answer depends on it.
            #expect(r.headers["access-control-allow-origin"] == nil)
            #expect(r.headers.values("vary").contains("Origin"))
        }
    }

    @Test("calls to a unit in a worker without an ID token, or with one verified before, are answered on the server's thread; a token seen first, in-process units, bodies over 64 KiB, other methods and other routes go to a task")
    func immediateRouting() async throws {
        try await withFrontDoor(configure: { $0.defaultIsolation = .process }) { door in
            func request(_ path: String, method: String = "POST", authorization: String? = nil, body: String = #"{"data":1}"#) -> HTTPServerRequest {
                var headers = HTTPHeaders([("Content-Type", "application/json"), ("Origin", "https://app.example")])
                if let authorization { headers.add("Authorization", authorization) }
                return HTTPServerRequest(method: method, path: path, headers: headers, body: Array(body.utf8))
            }
            let now = try #require(door.door.handleNow(request("/hearth-local/us-central1/echo")))
            guard case .later(let start) = now.body else {
                Issue.record("a call is answered when its unit replies, got status \(now.status)")
                return
            }
            let answer = await withCheckedContinuation { (done: CheckedContinuation<HTTPServerResponse, Never>) in start { done.resume(returning: $0) } }
            guard case .bytes(let bytes) = answer.body else { throw HTTPSError(.internal, "not a plain answer") }
            #expect(answer.status == 200)
            #expect(String(decoding: bytes, as: UTF8.self) == #"{"result":1}"#)
            // The CORS headers of the callable's default policy (the Origin reflected) on the answer.
            #expect(answer.headers["access-control-allow-origin"] == "https://app.example")
            #expect(answer.headers["vary"] == "Origin")
            // Refused on the spot: still no task.
            #expect(door.door.handleNow(request("/echo", body: "{")).map(\.status) == 400)
            // A token seen for the first time is verified in a task; one verified before (as
            // `idToken` does) is checked here (the test below).
            let user = try await door.runtime.auth.createUser(NewUser(uid: "u2"))
            let unseen = try door.runtime.auth.mintIDToken(for: user, signInProvider: "custom")
            #expect(door.door.handleNow(request("/echo", authorization: "Bearer " + unseen)) == nil)
            let token = try await door.idToken("u1")
            let signedIn = try await CallableProtocolTests.answer(door.door.handleNow(request("/whoami", authorization: "Bearer " + token, body: #"{"data":null}"#)))
            #expect(signedIn?.status == 200)
            #expect(signedIn?.json?["result"]?["uid"] == "u1")
            #expect(door.door.handleNow(request("/echo", authorization: "Basic dXNlcjpwYXNz")).map(\.status) == 401, "refused on the spot")
            #expect(door.door.handleNow(request("/echo", body: #"{"data":""# + String(repeating: "x", count: 65_536) + #""}"#)) == nil)
            #expect(door.door.handleNow(request("/echo", method: "GET")) == nil)
            #expect(door.door.handleNow(request("/echoRequest")) == nil)
            #expect(door.door.handleNow(request("/nope")) == nil)
            #expect(door.door.handleNow(request("/v1/projects/hearth-local/databases/(default)/documents:commit", body: "{}")) == nil)
            // Every one of them answered, through the task where handleNow declined.
            let r = try await door.call("whoami", .null, headers: [("Authorization", "Bearer " + unseen)])
            #expect(r.json?["result"]?["uid"] == "u2", "\(r.text)")
        }
        // A unit loaded in-process would start its handler on the server's thread: a task.
        try await withFrontDoor(configure: { $0.defaultIsolation = .inProcess }) { door in
            let call = HTTPServerRequest(method: "POST", path: "/echo", headers: HTTPHeaders([("Content-Type", "application/json")]), body: Array(#"{"data":1}"#.utf8))
            #expect(door.door.handleNow(call) == nil)
        }
    }

    @Test("a call whose ID token was verified before is answered on the server's thread with the caller's uid and claims, the user's record read every time: disabled, revoked and deleted users are refused there at once, as in a task")
    func tokenCheckedOnTheServersThread() async throws {
        let clock = ManualClock(Timestamp(seconds: 1_800_000_000))
        try await withFrontDoor(clock: clock, configure: { $0.defaultIsolation = .process }) { door in
            func request(_ token: String) -> HTTPServerRequest {
                HTTPServerRequest(method: "POST", path: "/whoami",
                                  headers: HTTPHeaders([("Content-Type", "application/json"), ("Authorization", "Bearer " + token)]),
                                  body: Array(#"{"data":null}"#.utf8))
            }
            func now(_ token: String) async throws -> (status: Int, json: Value?)? {
                try await CallableProtocolTests.answer(door.door.handleNow(request(token)))
            }
            let token = try await door.idToken("gus", claims: ["role": "editor"])
            let first = try #require(try await now(token))
            #expect(first.status == 200)
            #expect(first.json?["result"]?["uid"] == "gus")
            #expect(first.json?["result"]?["claims"]?["role"] == "editor")

            let auth = door.runtime.auth
            _ = try await auth.updateUser(uid: "gus", UserUpdate(disabled: true))
            #expect(try await now(token)?.status == 401)
            #expect(try await now(token)?.json == (try JSONParser.parse(Array(CallableCase.unauthenticated.utf8))))
            _ = try await auth.updateUser(uid: "gus", UserUpdate(disabled: false))
            #expect(try await now(token)?.status == 200)
            clock.advance(by: .seconds(1))
            try await auth.revokeRefreshTokens(uid: "gus")
            #expect(try await now(token)?.status == 401)
            // The task's check decides the same.
            await #expect(throws: TokenRejection.revoked) { try await door.runtime.caller(idToken: token) }

            let fresh = try await door.idToken("gus")
            #expect(try await now(fresh)?.status == 200)
            try await auth.deleteUser(uid: "gus")
            #expect(try await now(fresh)?.status == 401)
            #expect(door.log.contains("invalid ID token"))
            // Past the token's expiry the cached check no longer counts: a task verifies it, and refuses it.
            let late = try await door.idToken("hal")
            #expect(try await now(late)?.status == 200)
            clock.advance(by: .seconds(3600 + 301))
            #expect(try await now(late)?.status == nil, "declined")
            #expect(try await door.call("whoami", .null, headers: [("Authorization", "Bearer \(late)")]).status == 401)
            // A token the server never verified is declined too (its signature is the task's to check).
            door.runtime.auth.clearVerificationCache()
            let unseen = try door.runtime.auth.mintIDToken(for: try await auth.createUser(NewUser(uid: "ivy")), signInProvider: "custom")
            #expect(try await now(unseen)?.status == nil)
        }
    }

    /// What `handleNow` answered, awaited when the unit answers later; nil when it declined.
    static func answer(_ response: HTTPServerResponse?) async throws -> (status: Int, json: Value?)? {
        guard let response else { return nil }
        var answer = response
        if case .later(let start) = response.body {
            answer = await withCheckedContinuation { (done: CheckedContinuation<HTTPServerResponse, Never>) in start { done.resume(returning: $0) } }
        }
        guard case .bytes(let bytes) = answer.body else { throw HTTPSError(.internal, "not a plain answer") }
        return (answer.status, try? JSONParser.parse(bytes, options: .callable))
    }

    @Test("a verified ID token gives the function the uid and every claim", arguments: RuntimeConfig.Isolation.allCases)
    func verifiedToken(isolation: RuntimeConfig.Isolation) async throws {
        try await withFrontDoor(configure: { $0.defaultIsolation = isolation }) { door in
            let token = try await door.idToken("alice", claims: ["role": "admin"])
            _ = try await door.runtime.auth.setCustomClaims(uid: "alice", ["plan": "pro"])
            let fresh = try await door.idToken("alice")
            let r = try await door.call("whoami", .null, headers: [("Authorization", "Bearer \(fresh)")])
            #expect(r.status == 200)
            #expect(r.json?["result"]?["uid"] == "alice")
            #expect(r.json?["result"]?["claims"]?["plan"] == "pro")
            #expect(r.json?["result"]?["claims"]?["sub"] == "alice")
            #expect(r.json?["result"]?["claims"]?["aud"] == "hearth-local")
            #expect(r.json?["result"]?["claims"]?["firebase"]?["sign_in_provider"] == "custom")
            let withRole = try await door.call("whoami", .null, headers: [("Authorization", "Bearer \(token)")])
            #expect(withRole.json?["result"]?["claims"]?["role"] == "admin")
            // The scheme in any case, as firebase-functions matches it (`/^Bearer (.*)$/i`).
            let lower = try await door.call("whoami", .null, headers: [("Authorization", "bearer \(fresh)")])
            #expect(lower.json?["result"]?["uid"] == "alice", "\(lower.text)")
        }
    }

    @Test("revoked, expired, tampered and foreign tokens are 401 before the function runs", arguments: RuntimeConfig.Isolation.allCases)
    func rejectedTokens(isolation: RuntimeConfig.Isolation) async throws {
        let clock = ManualClock(Timestamp(seconds: 1_800_000_000))
        try await withFrontDoor(clock: clock, configure: { $0.defaultIsolation = isolation }) { door in
            let token = try await door.idToken("bob")
            #expect(try await door.call("whoami", .null, headers: [("Authorization", "Bearer \(token)")]).status == 200)

            var parts = token.split(separator: ".").map(String.init)
            parts[1] = Base64.encodeURL(Array(#"{"sub":"mallory","aud":"hearth-local"}"#.utf8))
            let tampered = parts.joined(separator: ".")
            #expect(try await door.call("whoami", .null, headers: [("Authorization", "Bearer \(tampered)")]).json == (try JSONParser.parse(Array(CallableCase.unauthenticated.utf8))))

            let unsigned = JWT.unsigned(["sub": "bob", "aud": "hearth-local", "iss": "https://securetoken.google.com/hearth-local"])
            #expect(try await door.call("echo", 1, headers: [("Authorization", "Bearer \(unsigned)")]).status == 401)

            clock.advance(by: .seconds(3600 + 301))  // past expiry and the allowed skew
            #expect(try await door.call("whoami", .null, headers: [("Authorization", "Bearer \(token)")]).status == 401)

            let second = try await door.idToken("bob")
            #expect(try await door.call("whoami", .null, headers: [("Authorization", "Bearer \(second)")]).status == 200)
            clock.advance(by: .seconds(1))
            try await door.runtime.auth.revokeRefreshTokens(uid: "bob")
            #expect(try await door.call("whoami", .null, headers: [("Authorization", "Bearer \(second)")]).status == 401)
            #expect(door.log.contains("invalid ID token"))
        }
    }

    @Test("App Check, instance id and request headers reach the function")
    func contextHeaders() async throws {
        try await withFrontDoor { door in
            let r = try await door.call("headers", .null, headers: [("Firebase-Instance-ID-Token", "fcm-123"), ("User-Agent", "HearthTest/1.0"),
                                                                     ("x-trace", "first"), ("X-TRACE", "second")])
            // Names arrive lower-cased (as a unit built against an SDK that read them into a
            // [String: String] looks them up); a repeated header keeps every value, in order.
            #expect(r.json?["result"] == ["instanceIdToken": "fcm-123", "appId": .null, "userAgent": "HearthTest/1.0", "traces": ["first", "second"],
                                          "namesLowerCased": true])
        }
    }

    @Test("Hearth's own internal errors that a function lets through reach the caller as INTERNAL, the cause only in the log")
    func hearthInternalErrorsHidden() async throws {
        try await withFrontDoor(units: ["DocsUnit"]) { door in
            let r = try await door.call("docs", "undecodable")
            #expect(r.status == 500)
            #expect(r.json == ["error": ["status": "INTERNAL", "message": "INTERNAL"]])
            #expect(door.log.contains("does not decode as Note"))
        }
    }

    @Test("the real cause of an INTERNAL error is in the log, never in the response")
    func internalErrorsLogged() async throws {
        try await withFrontDoor { door in
            let r = try await door.call("opaque", 1)
            #expect(!r.text.contains("hunter2"))
            #expect(door.log.contains("hunter2"))
        }
    }

    @Test("a function past its timeout answers 504 DEADLINE_EXCEEDED and its handler is cancelled")
    func timeout() async throws {
        let clock = ManualClock()
        try await withFrontDoor(clock: clock) { door in
            async let response = door.call("sleep", 60)
            // The handler sleeps on the runtime clock and the invoker waits for its 5 s timeout.
            try await until(clock.changes) { clock.sleeperCount == 2 }
            clock.advance(by: .seconds(5))
            let r = try await response
            #expect(r.status == 504)
            #expect(r.json == ["error": ["status": "DEADLINE_EXCEEDED", "message": "DEADLINE_EXCEEDED"]])
            try await until(clock.changes) { clock.sleeperCount == 0 }  // the handler's sleep was cancelled
            #expect(door.log.contains("ran longer than its timeout of 5.0 s"))
        }
    }

    @Test("streaming: chunks as message frames, then the result, with status 200")
    func streaming() async throws {
        try await withFrontDoor { door in
            let r = try await door.call("stream", 3, headers: [("Accept", "text/event-stream")])
            #expect(r.status == 200)
            #expect(r.headers["content-type"] == "text/event-stream")
            #expect(r.text == #"data: {"message":{"n":0}}"# + "\n\n" + #"data: {"message":{"n":1}}"# + "\n\n"
                + #"data: {"message":{"n":2}}"# + "\n\n" + #"data: {"result":"streamed 3"}"# + "\n\n")
            #expect(!r.text.contains(": ping"))  // heartbeats are off by default

            let plain = try await door.call("stream", 3)
            #expect(plain.json == ["result": "not streamed"])
        }
    }

    @Test("streaming: an error ends the stream as an error frame")
    func streamingError() async throws {
        try await withFrontDoor { door in
            let r = try await door.call("fail", ["code": "not-found", "message": "gone"], headers: [("Accept", "text/event-stream")])
            #expect(r.status == 200)
            #expect(r.text.hasPrefix("data: ") && r.text.hasSuffix("\n\n"))
            let frame = try JSONParser.parse(Array(r.text.dropFirst(6).dropLast(2).utf8))
            #expect(frame == ["error": ["status": "NOT_FOUND", "message": "gone"]])
            let bad = try await door.send("POST", "/stream", headers: [("Content-Type", "application/json"), ("Accept", "text/event-stream")], body: "{")
            #expect(bad.status == 400)
        }
    }

    @Test("streaming: heartbeats as comment lines when the function asks for them")
    func heartbeats() async throws {
        try await withFrontDoor { door in
            let r = try await door.call("pulse", 0.3, headers: [("Accept", "text/event-stream")])
            #expect(r.status == 200)
            // Heartbeats run on their own timer, so they may come before or after the first chunk.
            #expect(r.text.contains(#"data: {"message":"started"}"# + "\n\n"))
            #expect(r.text.contains(": ping\n\n"))
            #expect(r.text.hasSuffix(#"data: {"result":"done"}"# + "\n\n"))
        }
    }

    @Test("every invocation is one structured log line with its id, and handler logs carry it")
    func invocationLog() async throws {
        try await withFrontDoor { door in
            _ = try await door.call("log", "hello from the handler")
            _ = try await door.call("fail", ["code": "not-found", "message": "gone"])
            let lines = door.log.all.compactMap { try? JSONParser.parse(Array($0.utf8)) }
            let invocations = lines.filter { $0["message"] == "invocation" }
            let ok = try #require(invocations.first { $0["function"] == "log" })
            #expect(ok["unit"] == "EchoUnit")
            #expect(ok["trigger"] == "callable")
            #expect(ok["outcome"] == "ok")
            #expect(ok["durationMs"]?.doubleValue != nil)
            #expect(ok["time"]?.stringValue != nil)
            let handlerLine = try #require(lines.first { $0["message"] == "hello from the handler" })
            #expect(handlerLine["invocation"] == ok["invocation"])
            let failed = try #require(invocations.first { $0["function"] == "fail" })
            #expect(failed["outcome"] == "error")
            #expect(failed["code"] == "not-found")
        }
    }
    @Test("one nesting limit on the whole path: data 500 deep reaches the unit and comes back; deeper is 400 with the cause hidden")
    func nestingLimit() async throws {
        @Sendable func nested(_ depth: Int) -> String { String(repeating: "[", count: depth) + String(repeating: "]", count: depth) }
        try await withFrontDoor { door in
            let json = [("Content-Type", "application/json")]
            let deepest = try await door.send("POST", "/echo", headers: json, body: #"{"data":\#(nested(ValueLimits.maxDepth))}"#)
            #expect(deepest.status == 200, "\(deepest.text.prefix(200))")
            #expect(deepest.text.hasPrefix(#"{"result":[[[["#))
            for depth in [ValueLimits.maxDepth + 1, 511, 512, 5000] {
                let r = try await door.send("POST", "/echo", headers: json, body: #"{"data":\#(nested(depth))}"#)
                #expect(r.status == 400, "depth \(depth)")
                #expect(r.json == ["error": ["status": "INVALID_ARGUMENT", "message": "Bad Request"]], "depth \(depth): \(r.text.prefix(200))")
            }
        }
    }
}

