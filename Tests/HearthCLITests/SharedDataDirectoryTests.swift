import Foundation
import HearthAuth
import HearthHTTP
import HearthModel
import HearthStore
import HearthTesting
import Synchronization
import Testing

/// `hearth serve` and CLI commands on one data directory, all real processes: what the README
/// invites (`hearth docs set`, `hearth tasks enqueue`, `hearth deliveries list` while a server runs).
@Suite("One data directory, several processes")
struct SharedDataDirectoryTests {
    let client = HTTPClient()

    func hearth(_ args: [String], in dir: TempDir) async throws -> (status: Int32, out: String, err: String) {
        try await hearthProcess(args, in: dir)
    }

    func config(_ dir: TempDir, port: Int = 0) {
        _ = dir.write("runtime.toml", """
            units_dir = "\(buildDirectory)"
            units = ["DeliveryUnit"]
            [server]
            port = \(port)
            [delivery]
            poll_interval_seconds = 0.2
            [log]
            level = "notice"
            """)
    }

    /// Starts `hearth serve` on the data directory of `dir` (with `config`); its base URL.
    func serve(_ dir: TempDir) async throws -> (ChildProcess, String) {
        config(dir)
        let server = try ChildProcess(["serve"], directory: dir.path)
        return (server, "http://127.0.0.1:\(try await server.servingPort(seconds: 120))")
    }

    /// POSTs a call to DeliveryUnit's `caller` (which answers with its caller's uid) with `token`.
    func callCaller(_ base: String, _ token: String) async throws -> HTTPClientResponse {
        try await client.send(HTTPClientRequest(method: "POST", url: base + "/caller",
                                                headers: HTTPHeaders([("Content-Type", "application/json"), ("Authorization", "Bearer \(token)")]),
                                                body: Array(#"{"data":null}"#.utf8), timeout: .seconds(60)))
    }

    /// Waits until nothing is pending or running for `functions` (as the server's metrics say).
    func drain(_ base: String, _ functions: [String], seconds: Double = 180) async throws {
        let deadline = Date().addingTimeInterval(seconds)
        var quietRounds = 0
        while Date() < deadline {
            let text = (try? await client.send(HTTPClientRequest(url: base + "/metrics", timeout: .seconds(30))).text) ?? ""
            let busy = functions.contains { f in
                ["pending", "in_flight"].contains { m in !text.contains("hearth_deliveries_\(m){function=\"\(f)\"} 0\n") }
            }
            quietRounds = busy ? 0 : quietRounds + 1
            if quietRounds >= 5 { return }  // stable across a second of polls: other processes' work is routed too
            try await Task.sleep(for: .milliseconds(200))
        }
        throw Failure("deliveries did not drain within \(seconds) s")
    }

    @Test("while hearth serve takes load, CLI commands write, index, enqueue and list: every write commits, queries agree with a scan, every trigger runs once in order")
    func serveAndCLI() async throws {
        let dir = TempDir()
        let (server, base) = try await serve(dir)
        let total = 600
        let client = self.client
        // The server's load: `produce` writes crash/c{i} (trigger crashWrite) and, for even i, a task.
        let load = Task { () -> [String] in
            await withTaskGroup(of: [String].self) { group in
                for worker in 0..<8 {
                    group.addTask {
                        var failures: [String] = []
                        for i in stride(from: worker, to: total, by: 8) {
                            let request = HTTPClientRequest(method: "POST", url: base + "/produce", headers: HTTPHeaders([("Content-Type", "application/json")]),
                                                            body: Array("{\"data\":\(i)}".utf8), timeout: .seconds(60))
                            do {
                                let r = try await client.send(request)
                                if r.status != 200 { failures.append("produce \(i): \(r.status) \(r.text)") }
                            } catch {
                                failures.append("produce \(i): \(error)")
                            }
                        }
                        return failures
                    }
                }
                return await group.reduce(into: []) { $0 += $1 }
            }
        }
        // Meanwhile, the CLI in processes of its own.
        var cliFailures: [String] = []
        func cli(_ args: [String]) async throws -> String {
            let (status, out, err) = try await hearth(args, in: dir)
            if status != 0 { cliFailures.append("hearth \(args.joined(separator: " ")): \(status) \(err)") }
            return out
        }
        for k in 0..<12 {
            _ = try await cli(["docs", "set", "crash/cli\(k)", "--data", "{\"i\": \(1000 + k), \"tag\": \"cli\"}"])
            _ = try await cli(["docs", "set", "items/x", "--data", "{\"n\": \(k)}"])
            if k == 3 { _ = try await cli(["docs", "query", "crash", "--where", "i >= 0", "--count"]) }  // builds the index of i here
            if k % 3 == 0 { _ = try await cli(["tasks", "enqueue", "crashTask", "--data", "{\"i\": \(k)}", "--id", "cli-task-\(k)"]) }
        }
        let listed = try await cli(["deliveries", "list", "--limit", "5"])
        #expect(listed.split(separator: "\n").allSatisfy { (try? JSONParser.parse(Array($0.utf8))) != nil }, "JSON lines: \(listed)")
        let failures = await load.value
        #expect(failures.isEmpty, "\(failures.prefix(5))")
        #expect(cliFailures.isEmpty, "\(cliFailures)")

        try await drain(base, ["crashWrite", "crashTask", "recordWrite"])
        // The index of i, built by the CLI while the server wrote, has every document the server wrote after.
        let counted = try await cli(["docs", "query", "crash", "--where", "i >= 0", "--count"])
        #expect(try JSONParser.parse(Array(counted.utf8)) == ["count": .int(Int64(total + 12))])
        let metrics = try await client.send(HTTPClientRequest(url: base + "/metrics", timeout: .seconds(30))).text
        let feedGauge = metrics.split(separator: "\n").first { $0.hasPrefix("hearth_change_feed_sequence ") }.flatMap { Double($0.split(separator: " ")[1]) }
        server.signal(SIGTERM)
        #expect(try await server.waitForExit(seconds: 60) == 0)

        let store = try await DocumentStore.open(path: dir.path + "/.hearth/store.sqlite", clock: SystemClock())
        defer { store.close() }
        #expect(feedGauge == Double(try store.engine.feedEnd()), "the server's feed gauge counts the CLI's commits too")
        let written = try await store.query(QuerySpec(collection: try CollectionPath("crash")))
        #expect(written.count == total + 12)
        var filtered = QuerySpec(collection: try CollectionPath("crash"))
        filtered.filters = [.init(try FieldPath("i"), .greaterThanOrEqual, 500)]
        #expect(try await store.query(filtered).map(\.path.id).sorted() == written.filter { ($0.fields["i"]?.intValue ?? 0) >= 500 }.map(\.path.id).sorted(),
                "an index query agrees with a full scan")
        var runs: [String: [String: Int64]] = [:]
        for run in try await store.query(QuerySpec(collection: try CollectionPath("runs"))) {
            runs[run.fields["function"]?.stringValue ?? "", default: [:]][run.fields["event"]?.stringValue ?? "", default: 0] += run.fields["count"]?.intValue ?? 0
        }
        let triggerRuns = runs["crashWrite"] ?? [:]
        #expect(Set(triggerRuns.keys) == Set(written.map(\.path.id)), "every write's trigger ran")
        #expect(triggerRuns.values.allSatisfy { $0 == 1 }, "and ran once: \(triggerRuns.filter { $0.value != 1 }.prefix(5))")
        let tasks = Set(stride(from: 0, to: total, by: 2).map { "task-\($0)" } + [0, 3, 6, 9].map { "cli-task-\($0)" })
        #expect(Set((runs["crashTask"] ?? [:]).keys) == tasks)
        #expect((runs["crashTask"] ?? [:]).values.allSatisfy { $0 == 1 })
        #expect((runs["recordWrite"] ?? [:]).count == 12 && (runs["recordWrite"] ?? [:]).values.allSatisfy { $0 == 1 })
        #expect(try await store.get(try DocumentPath("orderLog/x"))?.fields["seen"] == .array((0..<12).map { .int(Int64($0)) }),
                "the CLI's writes to one document reached its trigger in commit order")
    }

    @Test("a second hearth serve whose port is taken exits with an error and has claimed no delivery")
    func portTakenClaimsNothing() async throws {
        let dir = TempDir()
        // Something else holds the port.
        let squatter = HTTPServer(configuration: HTTPServer.Configuration()) { _ in HTTPServerResponse(status: 200, headers: HTTPHeaders(), body: .bytes([])) }
        try squatter.start()
        defer { Task { await squatter.shutdown(grace: .zero) } }
        config(dir, port: squatter.port)
        for k in 0..<3 {
            let (status, _, err) = try await hearth(["tasks", "enqueue", "work", "--data", "{\"label\": \"t\(k)\"}", "--id", "t\(k)"], in: dir)
            #expect(status == 0, "\(err)")
        }
        let (status, _, err) = try await hearth(["serve"], in: dir)
        #expect(status == 1)
        #expect(err.contains("cannot serve") && err.contains("\(squatter.port)"), "\(err)")
        let (_, listed, _) = try await hearth(["deliveries", "list", "--function", "work"], in: dir)
        let rows = try listed.split(separator: "\n").map { try JSONParser.parse(Array($0.utf8)) }
        #expect(rows.count == 3)
        #expect(rows.allSatisfy { $0["state"] == "pending" && $0["attempts"] == 0 }, "\(rows)")
        // --port overrides the configuration.
        let server = try ChildProcess(["serve", "--port", "0"], directory: dir.path)
        let port = try await server.servingPort()
        #expect(port != squatter.port)
        server.signal(SIGTERM)
        #expect(try await server.waitForExit(seconds: 60) == 0)
    }

    @Test("hearth auth rotate-key while hearth serve runs: the server signs with the new key, and tokens the CLI mints with it are accepted without a restart")
    func keyRotationReachesTheServer() async throws {
        let dir = TempDir()
        let (server, base) = try await serve(dir)
        func caller(_ token: String) async throws -> HTTPClientResponse { try await callCaller(base, token) }
        func cli(_ args: [String]) async throws -> String {
            let (status, out, err) = try await hearth(args, in: dir)
            guard status == 0 else { throw Failure("hearth \(args.joined(separator: " ")): \(status) \(err)") }
            return out.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        func kid(_ token: String) throws -> String? { try JWT.decode(token).keyID }

        let before = try await cli(["token", "--uid", "dan"])
        #expect(try JSONParser.parse(try await caller(before).body)["result"]?["uid"] == "dan")
        let rotated = try JSONParser.parse(try await cli(["auth", "rotate-key"]))
        let newKid = try #require(rotated["activeKid"]?.stringValue)
        #expect(rotated["keys"] == 2)

        // A token the CLI mints with the new key: the server has not read it yet, and accepts it.
        let after = try await cli(["token", "--uid", "erin"])
        #expect(try kid(after) == newKid)
        let erin = try await caller(after)
        #expect(erin.status == 200, "\(erin.text)")
        #expect(try JSONParser.parse(erin.body)["result"]?["uid"] == "erin")
        // The server's own sign-ins now sign with the new key, and the CLI verifies what it signs.
        let signUp = try await client.send(HTTPClientRequest(method: "POST", url: base + "/identitytoolkit.googleapis.com/v1/accounts:signUp?key=fake-api-key",
                                                             headers: HTTPHeaders([("Content-Type", "application/json")]),
                                                             body: Array(#"{"returnSecureToken": true}"#.utf8)))
        let serverToken = try #require(try JSONParser.parse(signUp.body)["idToken"]?.stringValue, "\(signUp.text)")
        #expect(try kid(serverToken) == newKid)
        _ = try await cli(["auth", "verify", serverToken])
        // The token signed before the rotation still verifies (its key is kept).
        #expect(try await caller(before).status == 200)

        // Three more rotations drop the first key: within the recheck interval (a second), the
        // server refuses the token it had verified and cached.
        for _ in 0..<3 { _ = try await cli(["auth", "rotate-key"]) }
        var refused = false
        for _ in 0..<100 where !refused {
            refused = try await caller(before).status == 401
            if !refused { try await Task.sleep(for: .milliseconds(100)) }
        }
        #expect(refused, "a token of a dropped key is refused")
        server.signal(SIGTERM)
        #expect(try await server.waitForExit(seconds: 60) == 0)
    }

    @Test("hearth users update --disabled and hearth users delete while hearth serve runs: the next call with the user's ID token, verified and cached by the server, is refused at once")
    func userChangesReachTheServer() async throws {
        let dir = TempDir()
        let (server, base) = try await serve(dir)
        func caller(_ token: String) async throws -> HTTPClientResponse { try await callCaller(base, token) }
        func cli(_ args: [String]) async throws {
            let (status, _, err) = try await hearth(args, in: dir)
            guard status == 0 else { throw Failure("hearth \(args.joined(separator: " ")): \(status) \(err)") }
        }
        let (status, out, err) = try await hearth(["token", "--uid", "kim"], in: dir)
        #expect(status == 0, "\(err)")
        let token = out.trimmingCharacters(in: .whitespacesAndNewlines)
        // The first call verifies the token's signature (in a task); the next are checked on the
        // server's thread from the cache, the user's record read each time.
        for _ in 0..<3 { #expect(try await caller(token).status == 200) }
        try await cli(["users", "update", "kim", "--disabled", "true"])
        #expect(try await caller(token).status == 401, "disabled by another process")
        try await cli(["users", "update", "kim", "--disabled", "false"])
        #expect(try await caller(token).status == 200, "enabled again")
        try await cli(["users", "delete", "kim"])
        #expect(try await caller(token).status == 401, "deleted by another process")
        server.signal(SIGTERM)
        #expect(try await server.waitForExit(seconds: 60) == 0)
    }

    @Test("hearth import into the data directory of a running hearth serve: the server takes the imported schedule state, and a missed instant fires at once")
    func importReachesTheServersSchedules() async throws {
        let dir = TempDir()
        let (server, _) = try await serve(dir)
        // An export whose seoulTick (every 5 minutes) last fired two hours ago.
        let export = dir.path + "/export"
        try FileManager.default.createDirectory(atPath: export, withIntermediateDirectories: true)
        let lastFire = Timestamp(seconds: Int64(Date().timeIntervalSince1970) - 7200)
        #expect(FileManager.default.createFile(atPath: export + "/" + ExportFormat.Kind.schedules.fileName,
                                               contents: Data(try ExportRecord.schedule(function: "seoulTick", lastFire: lastFire).jsonLine() + [10])))
        for kind in [ExportFormat.Kind.documents, .users, .deliveries, .taskIDs] {
            #expect(FileManager.default.createFile(atPath: export + "/" + kind.fileName, contents: Data()))
        }
        let manifest = ExportManifest(exportTime: lastFire, counts: [.documents: 0, .users: 0, .deliveries: 0, .schedules: 1, .taskIDs: 0])
        #expect(FileManager.default.createFile(atPath: export + "/manifest.json", contents: Data(manifest.json)))
        let imported = try await hearth(["import", "export"], in: dir)
        #expect(imported.status == 0, "\(imported.err)")

        // Registered at the server's start, seoulTick would next fire five minutes after it; the
        // import says an instant was missed, so it fires now (the server looks again each second).
        let store = try await DocumentStore.open(path: dir.path + "/.hearth/store.sqlite", clock: SystemClock())
        defer { store.close() }
        var fired: [StoredDocument] = []
        for _ in 0..<150 where fired.isEmpty {
            fired = try await store.query(QuerySpec(collection: try CollectionPath("runs"))).filter { $0.fields["function"] == "seoulTick" }
            if fired.isEmpty { try await Task.sleep(for: .milliseconds(100)) }
        }
        #expect(fired.count == 1, "the missed instant fired once")
        server.signal(SIGTERM)
        #expect(try await server.waitForExit(seconds: 60) == 0)
    }
}
