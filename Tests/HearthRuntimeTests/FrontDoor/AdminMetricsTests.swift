import Foundation
import HearthAuth
import HearthHTTP
import HearthModel
@_spi(Internals) @testable import HearthRuntime
import Testing

@Suite("Admin API, health and metrics over HTTP")
struct AdminMetricsTests {
    static let secrets = Secrets(file: ["HEARTH_ADMIN_TOKEN": "admin-secret"])
    static let bearer = [("Authorization", "Bearer admin-secret"), ("Content-Type", "application/json")]

    @Test("with no admin token configured the admin API is off")
    func off() async throws {
        try await withFrontDoor { door in
            let r = try await door.send("GET", "/__/admin/functions", headers: [("Authorization", "Bearer anything")])
            #expect(r.status == 404)
            #expect(r.json?["error"]?["message"] == "the admin API is off: no admin token is configured")
        }
    }

    @Test("a missing or wrong admin token is 401", arguments: [nil, "Bearer wrong", "Bearer admin-secretX", "admin-secret", "Bearer "])
    func refused(header: String?) async throws {
        try await withFrontDoor(secrets: Self.secrets) { door in
            let r = try await door.send("GET", "/__/admin/functions", headers: header.map { [("Authorization", $0)] } ?? [])
            #expect(r.status == 401)
            #expect(r.json?["error"]?["status"] == "UNAUTHENTICATED")
        }
    }

    @Test("the admin token can come from the secrets file")
    func secretsFile() throws {
        let path = NSTemporaryDirectory() + "hearth-secrets-\(UUID().uuidString).toml"
        try Data("HEARTH_TEST_ADMIN = \"from-file\"\n".utf8).write(to: URL(fileURLWithPath: path))
        chmod(path, 0o644)
        #expect(throws: ConfigError.self) { try Secrets.load(path: path) }  // readable by others: refused
        chmod(path, 0o600)
        #expect(try Secrets.load(path: path).value("HEARTH_TEST_ADMIN") == "from-file")
        #expect(try Secrets.load(path: path + ".missing").value("HEARTH_TEST_ADMIN") == nil)
        try Data("HEARTH_TEST_ADMIN = 12\n".utf8).write(to: URL(fileURLWithPath: path))
        #expect(throws: ConfigError.self) { try Secrets.load(path: path) }
    }

    @Test("functions, invoke (as a user or not) and user management")
    func adminAPI() async throws {
        try await withFrontDoor(secrets: Self.secrets) { door in
            let functions = try await door.send("GET", "/__/admin/functions", headers: Self.bearer)
            #expect(functions.status == 200)
            let names = functions.json?["functions"]?.arrayValue?.compactMap { $0["name"]?.stringValue } ?? []
            #expect(names.contains("echo") && names.contains("tick") && names.contains("hello"))

            let invoked = try await door.send("POST", "/__/admin/functions/add:invoke", headers: Self.bearer, body: #"{"data":{"a":2,"b":3}}"#)
            #expect(invoked.json == ["result": ["sum": 5]])
            let asUser = try await door.send("POST", "/__/admin/functions/whoami:invoke", headers: Self.bearer, body: #"{"data":null,"uid":"ivy"}"#)
            #expect(asUser.json?["result"]?["uid"] == "ivy")
            let failing = try await door.send("POST", "/__/admin/functions/fail:invoke", headers: Self.bearer,
                                              body: #"{"data":{"code":"already-exists","message":"dup"}}"#)
            #expect(failing.status == 409)
            let unknown = try await door.send("POST", "/__/admin/functions/nope:invoke", headers: Self.bearer, body: #"{"data":1}"#)
            #expect(unknown.status == 404)

            let created = try await door.send("POST", "/__/admin/users", headers: Self.bearer, body: #"{"uid":"jay","email":"jay@example.com"}"#)
            #expect(created.status == 201)
            #expect(created.json?["uid"] == "jay")
            let claims = try await door.send("PUT", "/__/admin/users/jay/claims", headers: Self.bearer, body: #"{"role":"editor"}"#)
            #expect(claims.json?["customClaims"] == ["role": "editor"])
            let patched = try await door.send("PATCH", "/__/admin/users/jay", headers: Self.bearer, body: #"{"displayName":"Jay"}"#)
            #expect(patched.json?["displayName"] == "Jay")
            let fetched = try await door.send("GET", "/__/admin/users/jay", headers: Self.bearer)
            #expect(fetched.json?["email"] == "jay@example.com")
            let list = try await door.send("GET", "/__/admin/users?maxResults=10", headers: Self.bearer)
            #expect(list.json?["users"]?.arrayValue?.compactMap { $0["uid"]?.stringValue }.sorted() == ["ivy", "jay"])

            let bad = try await door.send("POST", "/__/admin/users", headers: Self.bearer, body: #"{"email":"nope"}"#)
            #expect(bad.status == 400)
            let badJSON = try await door.send("POST", "/__/admin/users", headers: Self.bearer, body: "{")
            #expect(badJSON.status == 400)
            #expect(badJSON.json?["error"]?["message"]?.stringValue?.hasPrefix("the body is not valid JSON") == true)
            let badClaims = try await door.send("PUT", "/__/admin/users/jay/claims", headers: Self.bearer, body: "[1]")
            #expect(badClaims.status == 400)

            #expect(try await door.send("DELETE", "/__/admin/users/jay", headers: Self.bearer).json == ["deleted": "jay"])
            #expect(try await door.send("GET", "/__/admin/users/jay", headers: Self.bearer).status == 404)
            #expect(try await door.send("GET", "/__/admin/nothing", headers: Self.bearer).status == 404)
        }
    }

    @Test("/healthz reports the loaded units and refused ones")
    func health() async throws {
        try await withFrontDoor(units: ["EchoUnit", "BrokenUnit"]) { door in
            let r = try await door.send("GET", "/healthz")
            #expect(r.status == 200)
            #expect(r.json?["status"] == "ok")
            #expect(r.json?["units"] == ["EchoUnit"])
            #expect(r.json?["refusedUnits"] == ["BrokenUnit"])
        }
    }

    // In a worker, a callable's answer is counted where the reply is read (`FrontDoor.invoke`), a
    // refusal where it is made (`handleNow`); in-process, both by `counted` in the request's task.
    @Test("/metrics counts requests and invocations by outcome, with latency histograms, in Prometheus text",
          arguments: [RuntimeConfig.Isolation.inProcess, .process])
    func metrics(isolation: RuntimeConfig.Isolation) async throws {
        try await withFrontDoor(configure: { $0.defaultIsolation = isolation }) { door in
            for _ in 0..<3 { _ = try await door.call("echo", 1) }
            _ = try await door.call("fail", ["code": "not-found", "message": "gone"])
            _ = try await door.send("POST", "/echo", body: "junk")
            let r = try await door.send("GET", "/metrics")
            #expect(r.status == 200)
            #expect(r.headers["content-type"]?.hasPrefix("text/plain; version=0.0.4") == true)
            let text = r.text
            #expect(text.contains("hearth_http_requests_total{route=\"callable\",status=\"200\"} 3\n"))
            #expect(text.contains("hearth_http_requests_total{route=\"callable\",status=\"404\"} 1\n"))
            #expect(text.contains("hearth_http_requests_total{route=\"callable\",status=\"400\"} 1\n"))
            #expect(text.contains("hearth_invocations_total{function=\"echo\",outcome=\"ok\",code=\"ok\"} 3\n"))
            #expect(text.contains("hearth_invocations_total{function=\"fail\",outcome=\"error\",code=\"not-found\"} 1\n"))
            #expect(text.contains("hearth_invocation_duration_seconds_count{function=\"echo\"} 3\n"))
            #expect(text.contains("hearth_invocation_duration_seconds_bucket{function=\"echo\",le=\"+Inf\"} 3\n"))
            #expect(text.contains("# TYPE hearth_http_request_duration_seconds histogram\n"))
            #expect(text.contains("hearth_http_requests_in_flight 1\n"))  // this request
            #expect(text.contains("hearth_invocations_in_flight 0\n"))
            #expect(text.contains("hearth_units_loaded 1\n"))
            // Every sample line is `name{labels} number`.
            for line in text.split(separator: "\n") where !line.hasPrefix("#") {
                let parts = line.split(separator: " ")
                #expect(parts.count == 2 && Double(parts[1]) != nil, "\(line)")
            }
        }
    }

    @Test("admin API: enqueue tasks, list deliveries, drop and retry them, list and run schedules; delivery metrics")
    func adminDeliveries() async throws {
        try await withFrontDoor(units: ["DeliveryUnit"], secrets: Self.secrets) { door in
            let one = try await door.send("POST", "/__/admin/tasks", headers: Self.bearer, body: #"{"queue":"work","data":{"label":"a"},"id":"adm-1","scheduleDelaySeconds":60}"#)
            #expect(one.status == 201)
            #expect(one.json == ["ids": ["adm-1"]])
            let many = try await door.send("POST", "/__/admin/tasks", headers: Self.bearer, body: #"{"tasks":[{"queue":"work"},{"queue":"work","id":"adm-2"}]}"#)
            #expect(many.json?["ids"]?.arrayValue?.count == 2)
            let dup = try await door.send("POST", "/__/admin/tasks", headers: Self.bearer, body: #"{"queue":"work","id":"adm-1"}"#)
            #expect(dup.status == 409)
            let bad = try await door.send("POST", "/__/admin/tasks", headers: Self.bearer, body: #"{"queue":"work","surprise":1}"#)
            #expect(bad.status == 400)
            #expect(bad.json?["error"]?["message"] == "unknown task option 'surprise'")

            let list = try await door.send("GET", "/__/admin/deliveries?function=work&state=pending", headers: Self.bearer)
            let rows = try #require(list.json?["deliveries"]?.arrayValue)
            #expect(rows.count == 3)
            let first = try #require(rows.first?["id"]?.intValue)
            #expect(try await door.send("DELETE", "/__/admin/deliveries/\(first)", headers: Self.bearer).json == ["dropped": .int(first)])
            #expect(try await door.send("DELETE", "/__/admin/deliveries/\(first)", headers: Self.bearer).status == 404)
            #expect(try await door.send("POST", "/__/admin/deliveries/\(rows[1]["id"]!.intValue!):retry", headers: Self.bearer).status == 404,
                    "only dead letters can be retried")
            #expect(try await door.send("GET", "/__/admin/deliveries?state=asleep", headers: Self.bearer).status == 400)
            #expect(try await door.send("DELETE", "/__/admin/tasks/work/adm-2", headers: Self.bearer).json == ["deleted": "adm-2"])

            let schedules = try await door.send("GET", "/__/admin/schedules", headers: Self.bearer)
            #expect(schedules.json?["schedules"]?.arrayValue?.compactMap { $0["function"]?.stringValue } == ["fanOutTick", "nightly", "seoulTick"])
            #expect(try await door.send("POST", "/__/admin/schedules/nightly:run", headers: Self.bearer).json == ["fired": "nightly"])
            #expect(try await door.send("POST", "/__/admin/schedules/work:run", headers: Self.bearer).status == 404)

            let metrics = try await door.send("GET", "/metrics").text
            #expect(metrics.contains("hearth_deliveries_pending{function=\"work\"} 1\n"))
            #expect(metrics.contains("hearth_deliveries_pending{function=\"nightly\"} 1\n"))
            #expect(metrics.contains("hearth_deliveries_dead{function=\"work\"} 0\n"))
            #expect(metrics.contains("# TYPE hearth_deliveries_oldest_pending_age_seconds gauge\n"))
            #expect(metrics.contains("hearth_deliveries_succeeded_total{function=\"recordWrite\"} 0\n"))
        }
    }
}
