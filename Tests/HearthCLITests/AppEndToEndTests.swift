import Foundation
import HearthAuth
import HearthHTTP
import HearthModel
import HearthRuntime
import HearthTesting
import Testing

/// The whole journey of SCENARIOS.md against a real `hearth serve` and the real CLI, as a user
/// would run it: sign in with an Apple code (a fake Apple on 127.0.0.1), initialize, register the
/// device, create an item due tomorrow, fire the reminder schedule with `hearth schedule run`, see
/// the push in `hearth messages list`, delete the account, see the data gone. The server (units in
/// worker processes) and the CLI record everything (`[record]`); the recording is then replayed
/// both ways against the same code, and kept as the app's replay fixture (SCENARIOS, every section)
/// when `HEARTH_RECORD_FIXTURES=1`.
@Suite("The app end to end against hearth serve")
struct AppEndToEndTests {
    let client = HTTPClient()

    func hearth(_ args: [String], in dir: TempDir) async throws -> (status: Int32, out: String, err: String) {
        try await hearthProcess(args, in: dir)
    }

    func post(_ url: String, _ body: Value, token: String? = nil) async throws -> Value {
        var headers = HTTPHeaders([("Content-Type", "application/json")])
        if let token { headers.set("Authorization", "Bearer \(token)") }
        let r = try await client.send(HTTPClientRequest(method: "POST", url: url, headers: headers, body: JSONWriter.encode(body)))
        return try JSONParser.parse(r.body)
    }

    /// Tries `condition` every 100 ms for at most `seconds` (a real server runs on the real clock).
    func eventually(_ what: String, seconds: Int = 60, _ condition: () async throws -> Bool) async throws {
        for _ in 0..<(seconds * 10) {
            if try await condition() { return }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw Failure("never: \(what)")
    }

    @Test("sign in with Apple, initialize, a reminder tick, the push in the outbox, delete the account, the data gone")
    func journey() async throws {
        let apple = HTTPServer(configuration: HTTPServer.Configuration()) { request in
            let form = Dictionary(PercentEncoding.formItems(String(decoding: request.body, as: UTF8.self)), uniquingKeysWith: { a, _ in a })
            guard request.path == "/auth/token", form["code"] == "apple-code", form["client_secret"]?.split(separator: ".").count == 3 else {
                return .json(["error": "invalid_grant"], status: 400)
            }
            return .json(["access_token": .string(Self.appleAccess), "refresh_token": .string(Self.appleRefresh),
                          "id_token": .string(JWT.unsigned(["sub": "apple-e2e", "email": "e2e@example.com"]))])
        }
        try apple.start()
        let appleBase = "http://127.0.0.1:\(apple.port)"

        let dir = TempDir()
        let key = try Key.generateP256().privatePEM()
        _ = dir.write("secrets.toml", "APPLE_TEAM_ID = \"T\"\nAPPLE_KEY_ID = \"K\"\nAPPLE_CLIENT_ID = \"com.example.todo\"\nAPPLE_PRIVATE_KEY = \"\"\"\n\(key)\"\"\"\n")
        chmod(dir.path + "/secrets.toml", 0o600)
        _ = dir.write("runtime.toml", """
            project = "hearth-e2e"
            units_dir = "\(buildDirectory)"
            units = ["AuthExchange", "Members", "Items", "Reminders", "AccountCleanup", "CategoryCleanup", "AppAPI"]
            [[rewrites]]
            source = "/api/todos"
            function = "todosApi"
            [record]
            directory = "rec"
            [server]
            port = 0
            shutdown_grace_seconds = 5
            [delivery]
            poll_interval_seconds = 0.1
            [secrets]
            file = "secrets.toml"
            [outbound]
            allow = ["\(appleBase)/"]
            [params]
            APPLE_BASE_URL = "\(appleBase)"
            """)
        let server = try ChildProcess(["serve"], directory: dir.path)
        let base = "http://127.0.0.1:\(try await server.servingPort())"

        let exchanged = try await post(base + "/exchangeAppleCode", ["data": ["authorizationCode": "apple-code"]])
        let custom = try #require(exchanged["result"]?["customToken"]?.stringValue, "\(exchanged)")
        let signIn = try await post(base + "/www.googleapis.com/identitytoolkit/v3/relyingparty/verifyCustomToken?key=k", ["token": .string(custom), "returnSecureToken": true])
        let idToken = try #require(signIn["idToken"]?.stringValue, "\(signIn)")
        let uid = try #require(try JWT.decode(idToken).claims["sub"]?.stringValue)
        _ = try await post(base + "/initializeMember", ["data": ["timeZone": "UTC"]], token: idToken)
        _ = try await post(base + "/registerDevice", ["data": ["fcmToken": .string(Self.deviceToken)]], token: idToken)

        // Reminder time: a minute ago (UTC), so the tick fired now finds it in its window; an item due tomorrow.
        let now = Date()
        var utc = Calendar(identifier: .gregorian)
        utc.timeZone = TimeZone(identifier: "UTC")!
        let minuteAgo = utc.dateComponents([.hour, .minute], from: now.addingTimeInterval(-60))
        let set = try await hearth(["docs", "set", "members/\(uid)/profiles/settings", "--data",
                                    "{\"pushEnabled\": true, \"timeZone\": \"UTC\", \"reminderHour\": \(minuteAgo.hour!), \"reminderMinute\": \(minuteAgo.minute!)}"], in: dir)
        #expect(set.status == 0, "\(set.err)")
        // Due the day after the reminder's own day, which is yesterday's in the first minute after
        // midnight (UTC): the day of `now` would then put the item a day too late for the tick.
        let tomorrowNoon = utc.date(byAdding: .day, value: 1, to: utc.startOfDay(for: now.addingTimeInterval(-60)))!.addingTimeInterval(12 * 3600)
        let created = try await post(base + "/createItem", ["data": ["title": "water the plants", "targetDate": .timestamp(Timestamp(seconds: Int64(tomorrowNoon.timeIntervalSince1970)))]],
                                     token: idToken)
        #expect(created["result"]?["sequence"] == 1, "\(created)")

        let fired = try await hearth(["schedule", "run", "scheduleTodoReminder"], in: dir)
        #expect(fired.status == 0, "\(fired.err)")
        var pushes: [Value] = []
        try await eventually("the push in the outbox") {
            let listed = try await hearth(["messages", "list"], in: dir)
            pushes = listed.out.split(separator: "\n").compactMap { try? JSONParser.parse(Array($0.utf8)) }
            return !pushes.isEmpty
        }
        #expect(pushes.count == 1)
        #expect(pushes.first?["token"] == .string(Self.deviceToken))
        #expect(pushes.first?["body"] == "water the plants")
        #expect(pushes.first?["outcome"] == "logged")

        // §3: numbering, soft delete and undo, a real delete and its trigger; §5: a category
        // removed; §7: the HTTP API behind its rewrite.
        let bread = try await post(base + "/createItem", ["data": ["title": "bread", "category": "shop"]], token: idToken)
        #expect(bread["result"]?["sequence"] == 2, "\(bread)")
        let breadID = try #require(bread["result"]?["itemId"]?.stringValue)
        _ = try await post(base + "/deleteItem", ["data": ["itemId": .string(breadID)]], token: idToken)
        _ = try await post(base + "/restoreItem", ["data": ["itemId": .string(breadID)]], token: idToken)
        for categories in ["[{\"id\": \"shop\", \"name\": \"Shop\"}]", "[]"] {
            let prefs = try await hearth(["docs", "set", "members/\(uid)/profiles/preferences", "--data", "{\"categories\": \(categories)}"], in: dir)
            #expect(prefs.status == 0, "\(prefs.err)")
        }
        try await eventually("bread moved to the default category") {
            let got = try await hearth(["docs", "get", "members/\(uid)/items/\(breadID)"], in: dir)
            return got.out.contains("\"default\"")
        }
        let todos = try await client.send(HTTPClientRequest(method: "GET", url: base + "/api/todos", headers: HTTPHeaders([("Authorization", "Bearer \(idToken)")])))
        #expect(todos.status == 200, "\(String(decoding: todos.body, as: UTF8.self))")
        let removed = try await hearth(["docs", "delete", "members/\(uid)/items/\(breadID)"], in: dir)
        #expect(removed.status == 0, "\(removed.err)")

        let deleted = try await post(base + "/www.googleapis.com/identitytoolkit/v3/relyingparty/deleteAccount?key=k", ["idToken": .string(idToken), "localId": .string(uid)])
        #expect(deleted["kind"] == "identitytoolkit#DeleteAccountResponse", "\(deleted)")
        try await eventually("the member's data deleted") {
            let listed = try await hearth(["docs", "query", "members/\(uid)/items", "--count"], in: dir)
            return listed.status == 0 && (try? JSONParser.parse(Array(listed.out.utf8)))?["count"] == 0
        }
        for path in ["profiles/basic", "profiles/settings", "profiles/secrets", "counters/item"] {
            let got = try await hearth(["docs", "get", "members/\(uid)/\(path)"], in: dir)
            #expect(got.status != 0 && got.err.contains("no document"), "\(path): \(got.status) \(got.out) \(got.err)")
        }
        server.signal(SIGTERM)
        #expect(try await server.waitForExit() == 0)
        await apple.shutdown(grace: .seconds(1))
        try await checkRecording(dir.path + "/rec", secrets: [key, idToken, custom, Self.appleAccess, Self.appleRefresh, Self.deviceToken, "apple-code"],
                                 units: ["AuthExchange", "Members", "Items", "Reminders", "AccountCleanup", "CategoryCleanup", "AppAPI"], appleBase: appleBase)
    }

    static let appleAccess = "apple-access-6f1c0e"
    static let appleRefresh = "apple-refresh-93ab7d"
    static let deviceToken = "fcm-device-token-e2e-51d2"

    /// The journey's recording: every kind of invocation, no secret anywhere in it (raw or inside
    /// its base64 messages), and it replays against the same code with no divergence, both ways.
    func checkRecording(_ directory: String, secrets: [String], units: [String], appleBase: String) async throws {
        let recording = try Recording.read(directory)
        #expect(Set(recording.invocations.map(\.kind)).isSuperset(of: ["callable", "request", "document", "task", "schedule", "user"]),
                "\(Set(recording.invocations.map(\.kind)))")
        #expect(Set(recording.headers.map(\.process)) == ["serve", "cli"])
        #expect(recording.inputs.contains { if case .write = $0.kind { return true } else { return false } }, "the CLI's writes are inputs")
        // Every byte of every file, and every base64 field decoded.
        var haystack = ""
        for file in try Recording.files(at: directory) {
            let text = try String(contentsOfFile: file, encoding: .utf8)
            haystack += text
            for line in text.split(separator: "\n") {
                guard let value = try? JSONParser.parse(Array(line.utf8)) else { continue }
                func walk(_ v: Value) {
                    switch v {
                    case .string(let s): if let bytes = Base64.decode(s) { haystack += String(decoding: bytes, as: UTF8.self) }
                    case .map(let m): m.values.forEach(walk)
                    case .array(let a): a.forEach(walk)
                    default: break
                    }
                }
                walk(value)
            }
        }
        let keyBody = secrets[0].split(separator: "\n").filter { !$0.hasPrefix("-----") }.joined()
        #expect(!haystack.contains(String(keyBody.prefix(40))), "the Apple private key")
        for secret in secrets.dropFirst() { #expect(!haystack.contains(secret), "\(secret.prefix(12))… is in the recording") }

        var config = RuntimeConfig()
        config.units = units.map { RuntimeConfig.Unit(name: $0) }
        config.unitsDirectory = buildDirectory
        config.log.level = .error
        config.params = ["APPLE_BASE_URL": appleBase]
        config.outbound.allow = [appleBase + "/"]
        config.rewrites = [.init(source: "/api/todos", function: "todosApi")]
        config.secretsFile = URL(fileURLWithPath: directory).deletingLastPathComponent().path + "/secrets.toml"
        let secrets = try Secrets.load(path: config.secretsFile)
        let replayer = HandlerReplayer(secrets: secrets.declaredValues([]))
        let handler = await replayer.replay(recording, units: try await replayer.load(config))
        #expect(handler.divergences.isEmpty, "\(handler)")
        #expect(handler.replayed == recording.invocations.count)
        var options = SystemReplayer.Options()
        options.prepare = { try TestKeys.install(for: $0) }
        let once = try await SystemReplayer.run(recording, config: config, options: options)
        #expect(once.divergences.isEmpty, "\(once)")
        let twice = try await SystemReplayer.run(recording, config: config, options: options)
        #expect(once.storeHash == twice.storeHash)

        // `HEARTH_RECORD_FIXTURES=1 Scripts/test --filter AppEndToEndTests` refreshes the fixture.
        if ProcessInfo.processInfo.environment["HEARTH_RECORD_FIXTURES"] == "1" {
            let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().path + "/AppScenarioTests/Fixtures/journey"
            try? FileManager.default.removeItem(atPath: fixture)
            try FileManager.default.createDirectory(atPath: fixture, withIntermediateDirectories: true)
            for (k, file) in try Recording.files(at: directory).enumerated() {
                try FileManager.default.copyItem(atPath: file, toPath: fixture + "/" + String(format: "%02d", k) + "-" + URL(fileURLWithPath: file).lastPathComponent)
            }
        }
    }
}
