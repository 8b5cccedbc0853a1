import Foundation
import HearthHTTP
import HearthModel
import HearthRuntime
import HearthTesting
import Testing

/// `hearth serve --record`, the admin API's record switch and `hearth replay`, with the real binary.
@Suite("hearth replay and recording switches, with the real binary")
struct ReplayCommandTests {
    static let adminToken = "replay-admin-token-123456"
    let client = HTTPClient()

    func config(_ dir: TempDir, units: String = "[\"EchoUnit\"]", extra: String = "") {
        _ = dir.write("runtime.toml", """
            project = "hearth-replay"
            units_dir = "\(buildDirectory)"
            units = \(units)
            [server]
            port = 0
            [delivery]
            poll_interval_seconds = 0.05
            \(extra)
            """)
    }

    /// `hearth serve` on `dir` (with `config`), its admin token set; the server and its base URL.
    func serve(_ dir: TempDir) async throws -> (ChildProcess, String) {
        config(dir)
        let server = try ChildProcess(["serve"], directory: dir.path, environment: ["HEARTH_ADMIN_TOKEN": Self.adminToken])
        return (server, "http://127.0.0.1:\(try await server.servingPort())")
    }

    func admin(_ base: String, _ method: String, _ path: String, _ body: Value? = nil) async throws -> (Int, Value) {
        let r = try await client.send(HTTPClientRequest(method: method, url: base + "/__/admin/" + path,
                                                        headers: HTTPHeaders([("Authorization", "Bearer \(Self.adminToken)"), ("Content-Type", "application/json")]),
                                                        body: body.map { JSONWriter.encode($0) } ?? []))
        return (r.status, (try? JSONParser.parse(r.body)) ?? .null)
    }

    func call(_ base: String, _ name: String, _ data: Value) async throws -> Value {
        let r = try await client.send(HTTPClientRequest(method: "POST", url: base + "/" + name, headers: HTTPHeaders([("Content-Type", "application/json")]),
                                                        body: JSONWriter.encode(["data": data])))
        return try JSONParser.parse(r.body)
    }

    @Test("serve --record, then hearth replay (handler and system) passes with exit 0 and a JSON report; a bad recording exits 1 naming the line")
    func recordThenReplay() async throws {
        let dir = TempDir()
        config(dir)
        let server = try ChildProcess(["serve", "--record", "rec"], directory: dir.path)
        let base = "http://127.0.0.1:\(try await server.servingPort())"
        for i in 0..<5 { #expect(try await call(base, "echo", ["i": .int(Int64(i))])["result"]?["i"] == .int(Int64(i))) }
        server.signal(SIGTERM)
        #expect(try await server.waitForExit() == 0)

        let handler = try await hearthProcess(["replay", "rec", "--json"], in: dir)
        #expect(handler.status == 0, "\(handler.out) \(handler.err)")
        let report = try JSONParser.parse(Array(handler.out.utf8))
        #expect(report["mode"] == "handler" && report["replayed"] == 5 && report["passed"] == true, "\(report)")
        let system = try await hearthProcess(["replay", "rec", "--empty"], in: dir)
        #expect(system.status == 0, "\(system.out) \(system.err)")
        #expect(system.out.contains("store hash: "), "\(system.out)")
        #expect(system.err.contains("replaying 5 invocations"), "\(system.err)")

        // A recording spoiled at its third line.
        let files = try Recording.files(at: dir.path + "/rec")
        var lines = try String(contentsOfFile: files[0], encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        lines[2] = "{\"type\": \"invocation\", \"id\": \"zz\""
        _ = dir.write("bad.jsonl", lines.joined(separator: "\n"))
        let bad = try await hearthProcess(["replay", "bad.jsonl"], in: dir)
        #expect(bad.status == 1)
        #expect(bad.err.contains("bad.jsonl:3: not JSON"), "\(bad.err)")
    }

    @Test("hearth replay refuses bad arguments with a clear message and exit 2")
    func badArguments() async throws {
        let dir = TempDir()
        config(dir)
        for (args, message) in [
            (["replay"], "FILE"),
            (["replay", "r", "--empty", "--from", "x"], "--empty and --from exclude each other"),
            (["replay", "r", "--empty", "--units", "EchoUnit"], "--units and --functions go with handler replay"),
            (["replay", "r", "--time-tolerance", "5"], "--time-tolerance goes with --empty or --from"),
            (["replay", "r", "--empty", "--time-tolerance", "-1"], "--time-tolerance must be a number of seconds"),
            (["replay", "r", "--empty", "--time-tolerance", "1e999"], "--time-tolerance must be a number of seconds"),
            (["replay", "r", "--units", ","], "--units needs a comma-separated list"),
        ] {
            let r = try await hearthProcess(args, in: dir)
            #expect(r.status == 2, "\(args): \(r.status) \(r.err)")
            #expect(r.err.contains(message), "\(args): \(r.err)")
        }
        let missing = try await hearthProcess(["replay", "nowhere"], in: dir)
        #expect(missing.status == 1 && missing.err.contains("nowhere: no such file or directory"), "\(missing.err)")
    }

    @Test("the admin API switches recording on into a directory and off; bad bodies are refused; recording again appends new files")
    func adminSwitch() async throws {
        let dir = TempDir()
        let (server, base) = try await serve(dir)
        #expect(try await admin(base, "GET", "record").1["recording"] == false)
        let (noDir, noDirBody) = try await admin(base, "POST", "record", ["enabled": true])
        #expect(noDir == 400 && noDirBody["error"]?["message"]?.stringValue?.contains("name a \"directory\"") == true, "\(noDirBody)")
        #expect(try await admin(base, "POST", "record", ["directory": "x"]).0 == 400)
        #expect(try await admin(base, "POST", "record", ["enabled": "yes"]).0 == 400)
        #expect(try await admin(base, "POST", "record", ["enabled": true, "directory": ""]).0 == 400)
        let (on, status) = try await admin(base, "POST", "record", ["enabled": true, "directory": "switched"])
        #expect(on == 200 && status["recording"] == true, "\(status)")
        _ = try await call(base, "echo", "recorded")
        let (off, stopped) = try await admin(base, "POST", "record", ["enabled": false])
        #expect(off == 200 && stopped["recording"] == false)
        _ = try await call(base, "echo", "not recorded")
        server.signal(SIGTERM)
        #expect(try await server.waitForExit() == 0)
        let recording = try Recording.read(dir.path + "/switched")
        #expect(recording.invocations.map { $0.invoke.event.summary["data"] } == ["recorded"])
        let unauthorized = try await hearthProcess(["replay", "switched"], in: dir)
        #expect(unauthorized.status == 0, "\(unauthorized.err)")
    }

    @Test("recording switched on while CLI commands write to the server's data directory: the feed is recorded from its end then, not from the server's own last commit")
    func recordingStartsAtTheFeedsEnd() async throws {
        let dir = TempDir()
        let (server, base) = try await serve(dir)
        for k in 0..<3 {
            let set = try await hearthProcess(["docs", "set", "before/b\(k)", "--data", "{}"], in: dir)
            #expect(set.status == 0, "\(set.err)")
        }
        #expect(try await admin(base, "POST", "record", ["enabled": true, "directory": "rec"]).0 == 200)
        let set = try await hearthProcess(["docs", "set", "during/d", "--data", "{}"], in: dir)
        #expect(set.status == 0, "\(set.err)")
        // The server reads the feed on its poll; stopping records it up to its end.
        #expect(try await admin(base, "POST", "record", ["enabled": false]).0 == 200)
        server.signal(SIGTERM)
        #expect(try await server.waitForExit() == 0)
        let recording = try Recording.read(dir.path + "/rec")
        #expect(recording.changes.map(\.path.description) == ["during/d"])
        #expect(recording.changes.map(\.sequence) == [4])
    }

    @Test("[record] in runtime.toml: CLI writes are recorded by the CLI process as inputs, read-only commands leave no file")
    func cliInputs() async throws {
        let dir = TempDir()
        config(dir, extra: "[record]\ndirectory = \"rec\"")
        #expect(try await hearthProcess(["docs", "get", "a/b"], in: dir).status != 0)
        #expect((try? Recording.files(at: dir.path + "/rec")) == nil, "a read leaves no file")
        let set = try await hearthProcess(["docs", "set", "notes/n1", "--data", "{\"password\": \"pw-123456\", \"text\": \"hi\"}"], in: dir)
        #expect(set.status == 0, "\(set.err)")
        let recording = try Recording.read(dir.path + "/rec")
        #expect(recording.headers.map(\.process) == ["cli"])
        guard case .write(let commit)? = recording.inputs.first?.kind else { Issue.record("no write input: \(recording.inputs)"); return }
        #expect(commit.writes.first?.path.description == "notes/n1")
        let text = try String(contentsOfFile: try Recording.files(at: dir.path + "/rec")[0], encoding: .utf8)
        #expect(!text.contains("pw-123456"))
    }
}
