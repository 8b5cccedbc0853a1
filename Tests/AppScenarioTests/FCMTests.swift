import Foundation
import HearthAuth
import HearthHTTP
import HearthModel
import HearthRuntime
import HearthTesting
import Synchronization
import Testing

/// A fake Google: the OAuth token endpoint checks the service-account assertion Hearth signs (its
/// RS256 signature with the account's public key, issuer, audience, scope, lifetime), and the FCM
/// send endpoint answers by token as FCM does.
final class FakeGoogle: Sendable {
    let key: Key
    let email = "hearth-test@demo-fcm.iam.gserviceaccount.com"
    let state = Mutex(State())
    struct State {
        var tokensIssued = 0
        var sends: [Value] = []
        var failuresLeft: [String: Int] = [:]
        var refusedAssertions = 0
    }
    let running = Mutex<HTTPServer?>(nil)
    var server: HTTPServer { running.withLock { $0! } }

    init() throws {
        key = try Key.generateRSA()
    }

    func start() throws -> String {
        let server = HTTPServer(configuration: HTTPServer.Configuration()) { [self] request in await self.handle(request) }
        try server.start()
        running.withLock { $0 = server }
        return "http://127.0.0.1:\(server.port)"
    }

    func serviceAccountJSON(tokenURL: String) throws -> [UInt8] {
        JSONWriter.encode(["type": "service_account", "project_id": "demo-fcm", "private_key_id": "kid-1", "private_key": .string(try key.privatePEM()),
                           "client_email": .string(email), "token_uri": .string(tokenURL)])
    }

    func handle(_ request: HTTPServerRequest) async -> HTTPServerResponse {
        if request.path == "/token" {
            let form = Dictionary(PercentEncoding.formItems(String(decoding: request.body, as: UTF8.self)), uniquingKeysWith: { a, _ in a })
            guard form["grant_type"] == "urn:ietf:params:oauth:grant-type:jwt-bearer", let assertion = form["assertion"],
                  let jwt = try? JWT.decode(assertion), (try? JWT.verifySignature(jwt, keys: ["kid-1": key])) != nil,
                  jwt.claims["iss"]?.stringValue == email, jwt.claims["scope"] == "https://www.googleapis.com/auth/firebase.messaging",
                  jwt.claims["aud"]?.stringValue?.hasSuffix("/token") == true,
                  let iat = jwt.claims["iat"]?.intValue, let exp = jwt.claims["exp"]?.intValue, exp - iat <= 3600 else {
                state.withLock { $0.refusedAssertions += 1 }
                return .json(["error": "invalid_grant"], status: 400)
            }
            let n = state.withLock { s -> Int in s.tokensIssued += 1; return s.tokensIssued }
            return .json(["access_token": .string("access-\(n)"), "expires_in": 3600, "token_type": "Bearer"])
        }
        guard request.path == "/v1/projects/demo-fcm/messages:send" else { return .json(["error": ["code": 404]], status: 404) }
        let current = state.withLock { "Bearer access-\($0.tokensIssued)" }
        guard request.headers["authorization"] == current else {
            return .json(["error": ["code": 401, "status": "UNAUTHENTICATED", "message": "stale token"]], status: 401)
        }
        guard let body = try? JSONParser.parse(request.body), let token = body["message"]?["token"]?.stringValue else {
            return .json(["error": ["code": 400, "status": "INVALID_ARGUMENT"]], status: 400)
        }
        state.withLock { $0.sends.append(body) }
        let fail = state.withLock { s -> Bool in
            guard let left = s.failuresLeft[token], left > 0 else { return false }
            s.failuresLeft[token] = left - 1
            return true
        }
        if token == "misrouted" {
            return .json(["error": ["code": 404, "status": "NOT_FOUND", "message": "no such project"]], status: 404)
        }
        if token == "gone" {
            return .json(["error": ["code": 404, "status": "NOT_FOUND", "message": "Requested entity was not found.",
                                    "details": [["@type": "type.googleapis.com/google.firebase.fcm.v1.FcmError", "errorCode": "UNREGISTERED"]]]], status: 404)
        }
        if fail {
            var r = HTTPServerResponse.json(["error": ["code": 503, "status": "UNAVAILABLE", "message": "try later"]], status: 503)
            r.headers.set("Retry-After", "1")
            return r
        }
        return .json(["name": .string("projects/demo-fcm/messages/\(token)-\(state.withLock { $0.sends.count })")])
    }
}

@Suite("Pushes through FCM HTTP v1 (a fake Google on 127.0.0.1)")
struct FCMTests {
    func app(_ google: FakeGoogle, _ base: String) async throws -> TestRuntime {
        let dir = NSTemporaryDirectory() + "hearth-fcm-" + SystemRandom().autoID()
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let file = dir + "/service-account.json"
        try Data(try google.serviceAccountJSON(tokenURL: base + "/token")).write(to: URL(fileURLWithPath: file))
        return try await TestRuntime(units: appUnits, start: RemindersTests.newYear) { config in
            config.messaging.serviceAccountFile = file
            config.messaging.fcmURL = base
        }
    }

    func member(_ app: TestRuntime, _ uid: String, token: String) async throws {
        try await app.member(uid)
        try await app.seed(["members/\(uid)/profiles/secrets": ["fcmToken": .string(token)],
                            "members/\(uid)/items/i": ["title": "milk", "isDone": false, "deletedAt": .null,
                                                       "targetDate": .timestamp(RemindersTests.newYear + .seconds(20 * 3600))]])
        _ = try await app.enqueue("sendPushNotification", ["userId": .string(uid), "itemId": "i", "targetDateKey": "2026-01-02",
                                                           "title": "Due tomorrow", "body": "milk"])
    }

    @Test("a push goes out with the APNs badge; the access token is reused until it nears expiry; an unregistered token is removed, not retried")
    func sendAndUnregistered() async throws {
        let google = try FakeGoogle()
        let base = try google.start()
        let app = try await app(google, base)
        try await member(app, "amy", token: "good")
        try await member(app, "ben", token: "gone")
        await app.advance(by: .seconds(5))
        let sends = google.state.withLock { $0.sends }
        let amy = try #require(sends.first { $0["message"]?["token"] == "good" })
        #expect(amy["message"]?["notification"]?["title"] == "Due tomorrow")
        #expect(amy["message"]?["apns"]?["payload"]?["aps"]?["badge"] == 1)
        #expect(amy["message"]?["data"]?["itemId"] == "i")
        #expect(google.state.withLock { $0.tokensIssued } == 1, "one access token for both sends")
        #expect(google.state.withLock { $0.refusedAssertions } == 0)
        #expect(try await app.document("members/amy/deliveryRecords/i_2026-01-02")?.fields["state"] == "sent")
        #expect(try await app.document("members/ben/profiles/secrets")?.fields["fcmToken"] == .null, "the unregistered token is forgotten")
        #expect(try await app.document("members/ben/deliveryRecords/i_2026-01-02")?.fields["state"] == "tokenRemoved")
        #expect(try app.deliveries(function: "sendPushNotification").isEmpty, "not retried")
        let outbox = try app.runtime.outbox()
        #expect(outbox.contains { $0.outcome == "sent" && $0.messageID?.hasPrefix("projects/demo-fcm/messages/good") == true })
        #expect(outbox.contains { $0.outcome.hasPrefix("not-found: UNREGISTERED") })

        // An hour later the token has expired: a new one is fetched.
        app.clock.advance(by: .seconds(3600))
        try await app.seed(["members/amy/items/j": ["title": "eggs", "isDone": false, "deletedAt": .null,
                                                    "targetDate": .timestamp(RemindersTests.newYear + .seconds(20 * 3600))]])
        _ = try await app.enqueue("sendPushNotification", ["userId": "amy", "itemId": "j", "targetDateKey": "2026-01-02", "title": "t", "body": "eggs"])
        await app.advance(by: .seconds(5))
        #expect(google.state.withLock { $0.tokensIssued } == 2)
        await google.server.shutdown(grace: .seconds(1))
    }

    @Test("a 404 without UNREGISTERED (a wrong project or URL) keeps the token")
    func misrouted() async throws {
        let google = try FakeGoogle()
        let base = try google.start()
        let app = try await app(google, base)
        try await member(app, "dan", token: "misrouted")
        await app.advance(by: .seconds(60))
        #expect(try await app.document("members/dan/profiles/secrets")?.fields["fcmToken"] == "misrouted")
        #expect(try app.runtime.outbox().contains { $0.outcome.hasPrefix("failed-precondition: FCM answered 404 without UNREGISTERED") })
        await google.server.shutdown(grace: .seconds(1))
    }

    @Test("a transient FCM failure is retried by the queue and the push goes out once")
    func transientFailure() async throws {
        let google = try FakeGoogle()
        google.state.withLock { $0.failuresLeft["flaky"] = 1 }
        let base = try google.start()
        let app = try await app(google, base)
        try await member(app, "cal", token: "flaky")
        await app.advance(by: .seconds(60))
        let sends = google.state.withLock { $0.sends }
        #expect(sends.count == 2, "one failed attempt, one retry")
        #expect(try await app.document("members/cal/deliveryRecords/i_2026-01-02")?.fields["state"] == "sent")
        #expect(try await app.documents(in: "members/cal/messages").count == 1, "the retry wrote no second message")
        #expect(try app.runtime.outbox().filter { $0.outcome == "sent" }.count == 1)
        let outcomes = try app.runtime.outbox().map(\.outcome)
        #expect(outcomes.contains { $0.hasPrefix("unavailable: FCM answered 503; retry after") }, "\(outcomes)")
        await google.server.shutdown(grace: .seconds(1))
    }
}
