import Foundation
import HearthHTTP
import HearthModel
import HearthTesting
import Synchronization
import Testing

/// `hearth serve` as a real process over real HTTP: draining on SIGTERM, and the firebase-admin SDK.
@Suite("hearth serve over HTTP")
struct ServeHTTPTests {
    let client = HTTPClient()

    /// Starts `hearth serve` on an ephemeral port; `extra` lines go in its [server] table.
    func serve(_ dir: TempDir, extra: String = "", project: String = "hearth-local") async throws -> (ChildProcess, String) {
        _ = dir.write("runtime.toml", """
            project = "\(project)"
            units_dir = "\(buildDirectory)"
            units = ["EchoUnit"]
            [server]
            port = 0
            \(extra.isEmpty ? "shutdown_grace_seconds = 10" : extra)
            """)
        let child = try ChildProcess(["serve"], directory: dir.path)
        let port = try await child.servingPort()
        return (child, "http://127.0.0.1:\(port)")
    }

    func call(_ base: String, _ function: String, _ data: Value, timeout: Duration = .seconds(90)) async throws -> HTTPClientResponse {
        try await client.send(HTTPClientRequest(method: "POST", url: base + "/" + function, headers: HTTPHeaders([("Content-Type", "application/json")]),
                                                body: JSONWriter.encode(["data": data]), timeout: timeout))
    }

    /// Waits until the server reports `count` invocations in flight.
    func waitForInFlight(_ base: String, _ count: Int) async throws {
        for _ in 0..<3000 {
            let metrics = try await client.send(HTTPClientRequest(url: base + "/metrics", timeout: .seconds(60))).text
            if metrics.contains("hearth_invocations_in_flight \(count)\n") { return }
            try await Task.sleep(for: .milliseconds(10))
        }
        throw Failure("never saw \(count) invocations in flight")
    }

    @Test("libmicrohttpd's epoll_wait, and every other library's, binds to hearth's correction (CEpollBatches)")
    func epollCorrectionBinds() async throws {
        // Bound at load (LD_BIND_NOW), so `--help` shows every library's binding without serving.
        let probe = try Subprocess(buildDirectory + "/hearth", ["--help"], environment: ["LD_DEBUG": "bindings", "LD_BIND_NOW": "1"],
                                   stdout: .discard, stderr: .capture)
        _ = try await probe.wait()
        let bindings = probe.stderrText.split(separator: "\n").filter { $0.contains("symbol `epoll_wait'") }
        let fromMicroHTTPD = bindings.filter { $0.contains("libmicrohttpd") }
        #expect(!fromMicroHTTPD.isEmpty, "no binding of libmicrohttpd's epoll_wait reported")
        #expect(fromMicroHTTPD.allSatisfy { $0.contains("/hearth [0]: normal symbol") }, "\(fromMicroHTTPD)")
        let toElsewhere = bindings.filter { !$0.contains("/hearth [0]: normal symbol") && !$0.contains("binding file \(buildDirectory)/hearth") }
        #expect(toElsewhere.isEmpty, "libraries whose epoll_wait is not hearth's: \(toElsewhere.prefix(3))")
    }

    @Test("the server and its unit workers allocate with jemalloc (linked ahead of libc), and a callable answers through a worker")
    func jemallocIsTheAllocator() async throws {
        // The dynamic linker binds `malloc` and `free` to jemalloc's, never to libc's.
        let probe = try Subprocess(buildDirectory + "/hearth", ["--help"], environment: ["LD_DEBUG": "bindings"], stdout: .discard, stderr: .capture)
        _ = try await probe.wait()
        let bindings = probe.stderrText.split(separator: "\n").filter { $0.contains("symbol `malloc'") || $0.contains("symbol `free'") }
        #expect(!bindings.isEmpty, "no bindings of malloc or free reported")
        #expect(bindings.allSatisfy { $0.contains("libjemalloc") }, "\(bindings.filter { !$0.contains("libjemalloc") }.prefix(3))")
        let dir = TempDir()
        let (child, base) = try await serve(dir)
        let answer = try await call(base, "echo", "through a worker")
        #expect(answer.status == 200 && answer.text.contains("through a worker"), "\(answer.text)")
        let workers = child.workers
        #expect(!workers.isEmpty, "hearth serve runs its units in worker processes")
        for pid in [child.process.pid] + workers {
            // Read to its end: /proc files report no size, and a sized read stops at the first page.
            let maps = String(decoding: (try? FileHandle(forReadingAtPath: "/proc/\(pid)/maps")?.readToEnd()) ?? Data(), as: UTF8.self)
            #expect(maps.contains("libjemalloc"), "process \(pid) has no jemalloc mapped")
        }
        child.signal(SIGTERM)
        #expect(try await child.waitForExit() == 0)
    }

    @Test("SIGTERM: stop accepting, finish the in-flight request, exit 0")
    func drainsOnSIGTERM() async throws {
        let dir = TempDir()
        // The grace period is long so that only the gate decides when the in-flight request ends.
        let (child, base) = try await serve(dir, extra: "shutdown_grace_seconds = 120")
        let health = try await client.send(HTTPClientRequest(url: base + "/healthz", timeout: .seconds(120)))
        #expect(health.status == 200)
        // In flight until the test opens the gate, so the signal always finds it running.
        let gate = dir.path + "/gate-open"
        let inFlight = Task { try await call(base, "gate", .string(gate), timeout: .seconds(150)) }
        try await waitForInFlight(base, 1)
        child.signal(SIGTERM)
        try await child.waitFor("shutting down")
        // New requests are turned away while the in-flight one finishes: refused on a new connection,
        // 503 on a kept-alive one.
        do {
            let late = try await HTTPClient().send(HTTPClientRequest(url: base + "/healthz", timeout: .seconds(30)))
            #expect(late.status == 503)
        } catch {
            #expect(error.kind == .connection)
        }
        #expect(FileManager.default.createFile(atPath: gate, contents: Data()))
        let r = try await inFlight.value
        #expect(r.status == 200)
        #expect(try JSONParser.parse(r.body) == ["result": "opened"])
        #expect(try await child.waitForExit() == 0)
        #expect(child.stderrText.contains("inFlight=1"))
    }

    @Test("past the grace period an unfinished request gets 503 and the process still exits 0")
    func graceExpires() async throws {
        let dir = TempDir()
        let (child, base) = try await serve(dir, extra: "shutdown_grace_seconds = 0.2")
        let inFlight = Task { try await call(base, "nap", 120) }
        try await waitForInFlight(base, 1)
        child.signal(SIGTERM)
        let r = try await inFlight.value
        #expect(r.status == 503)
        #expect(try JSONParser.parse(r.body)["error"]?["status"] == "UNAVAILABLE")
        #expect(try await child.waitForExit(seconds: 60) == 0)
    }

    @Test("the real firebase-admin SDK manages users, mints a custom token that signs in, and the ID token reaches a callable")
    func firebaseAdmin() async throws {
        let dir = TempDir()
        let (child, base) = try await serve(dir, project: "demo-todo")
        let host = String(base.dropFirst("http://".count))
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/firebase_admin_check.py").path
        let output = try await runPython([script, host, "demo-todo"])
        let results = try JSONParser.parse(Array(output.utf8))
        #expect(results["lookup"] == "ok")
        #expect(results["duplicate"] == "EmailAlreadyExistsError")
        #expect(results["callable_claims"] == ["role": "editor", "level": 3, "plan": "pro"])
        #expect(results["verify_id_token"] == "ok")
        #expect(results["session_cookie"] == "ok")
        #expect(results["task_queue"] == "ok")
        #expect(results["email_link"] == "ok")
        #expect(results["deleted"] == "UserNotFoundError")
        #expect(results["import_scrypt"] == "ok")
        #expect(results["links"] == "ok")
        #expect(results["lookups"] == "ok")
        child.signal(SIGTERM)
        #expect(try await child.waitForExit() == 0)
    }

    @Test("an iOS app's sign-in against hearth serve: anonymous, link a password, sign in, account info, refresh, a callable, delete")
    func iOSSignInSequence() async throws {
        let dir = TempDir()
        let (child, base) = try await serve(dir)
        func ios(_ name: String, _ body: Value) async throws -> Value {
            let r = try await client.send(HTTPClientRequest(method: "POST", url: base + "/www.googleapis.com/identitytoolkit/v3/relyingparty/\(name)?key=fake-api-key",
                                                            headers: HTTPHeaders([("Content-Type", "application/json")]), body: JSONWriter.encode(body)))
            return try JSONParser.parse(r.body)
        }
        let anonymous = try await ios("signupNewUser", ["returnSecureToken": true, "clientType": "CLIENT_TYPE_IOS"])
        let uid = try #require(anonymous["localId"]?.stringValue, "\(anonymous)")
        let anonToken = try #require(anonymous["idToken"]?.stringValue)
        #expect(try await ios("getAccountInfo", ["idToken": .string(anonToken)])["users"]?.arrayValue?.first?["localId"] == .string(uid))
        let linked = try await ios("signupNewUser", ["idToken": .string(anonToken), "email": "serve@example.com", "password": "secret-1", "returnSecureToken": true])
        #expect(linked["localId"] == .string(uid), "\(linked)")
        let signIn = try await ios("verifyPassword", ["email": "serve@example.com", "password": "secret-1", "returnSecureToken": true])
        let idToken = try #require(signIn["idToken"]?.stringValue, "\(signIn)")
        let info = try await ios("getAccountInfo", ["idToken": .string(idToken)])
        #expect(info["users"]?.arrayValue?.first?["email"] == "serve@example.com")
        #expect(info["users"]?.arrayValue?.first?["passwordHash"] == "UkVEQUNURUQ=")
        let refreshed = try await client.send(HTTPClientRequest(method: "POST", url: base + "/securetoken.googleapis.com/v1/token?key=fake-api-key",
                                                                headers: HTTPHeaders([("Content-Type", "application/json")]),
                                                                body: JSONWriter.encode(["grantType": "refresh_token", "refreshToken": signIn["refreshToken"] ?? .null])))
        let access = try #require(try JSONParser.parse(refreshed.body)["access_token"]?.stringValue, "\(refreshed.text)")
        let who = try await client.send(HTTPClientRequest(method: "POST", url: base + "/whoami", headers: HTTPHeaders([("Content-Type", "application/json"), ("Authorization", "Bearer \(access)")]),
                                                          body: JSONWriter.encode(["data": .null])))
        #expect(try JSONParser.parse(who.body)["result"]?["uid"] == .string(uid), "\(who.text)")
        #expect(try await ios("deleteAccount", ["idToken": .string(idToken), "localId": .string(uid)])["kind"] == "identitytoolkit#DeleteAccountResponse")
        #expect(try await ios("getAccountInfo", ["idToken": .string(idToken)])["error"]?["message"] == "USER_NOT_FOUND")
        child.signal(SIGTERM)
        #expect(try await child.waitForExit() == 0)
    }

    @Test("1,030 connections trickling their heads past the connection limit: /healthz is still answered and the flood is closed")
    func slowlorisFlood() async throws {
        // As reported: default limits (1024 connections and a reserve of 64) against 1,030 tricklers.
        // Where the process may not open that many sockets, the same shape at a smaller scale.
        var limit = rlimit()
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        let flood = limit.rlim_cur >= 4096 ? 1030 : 200
        let extra = flood == 1030 ? "" : "max_connections = 190\nreserved_connections = 16\nshutdown_grace_seconds = 5"
        let dir = TempDir()
        let (child, base) = try await serve(dir, extra: extra)
        let port = Int(base.split(separator: ":").last!)!
        let (health, floodClosed) = try await onOwnThread { () -> (Int, Int) in
            let tricklers = try (0..<flood).map { _ -> RawConnection in
                let c = try RawConnection(port: port, timeoutSeconds: 60)
                try c.send("POST /echo HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
                return c
            }
            // One more header byte each, as a slowloris client sends them.
            for c in tricklers { try? c.send("x") }
            let healthz = try RawConnection(port: port, timeoutSeconds: 60)
            try healthz.send("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            let status = try healthz.readResponse().status
            // The tricklers that were admitted are closed for not sending a head.
            var closed = 0
            for c in tricklers {
                c.setReadTimeout(milliseconds: 100)
                if (try? c.waitForClose()) == true { closed += 1 }
            }
            return (status, closed)
        }
        #expect(health == 200)
        #expect(floodClosed > flood / 2, "\(floodClosed) of \(flood) closed by the server")
        let after = try await client.send(HTTPClientRequest(url: base + "/healthz", timeout: .seconds(60)))
        #expect(after.status == 200)
        child.signal(SIGTERM)
        #expect(try await child.waitForExit() == 0)
    }

    /// The resident memory of a process, in bytes (`VmRSS` in /proc).
    static func residentBytes(_ pid: pid_t) -> Int {
        let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
        guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
              let kb = Int(line.split(separator: " ").dropFirst().first ?? "") else { return 0 }
        return kb * 1024
    }

    @Test("20 clients sending 30 MiB bodies (to no function, and to a callable) leave the server's memory within its buffering budget")
    func bodiesCannotExhaustMemory() async throws {
        let dir = TempDir()
        let (child, base) = try await serve(dir, extra: "max_buffered_bytes = 33554432\nshutdown_grace_seconds = 5")
        let port = Int(base.split(separator: ":").last!)!
        let pid = child.process.pid
        let before = Self.residentBytes(pid)
        let body = [UInt8](repeating: UInt8(ascii: " "), count: 30 << 20)
        let peak = MutexBox(0)
        let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
            for k in 0..<20 {
                group.addTask {
                    try await onOwnThread {
                        let c = try RawConnection(port: port, timeoutSeconds: 120)
                        let path = k.isMultiple(of: 2) ? "/nowhere" : "/echo"
                        try c.send("POST \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: \(body.count)\r\n\r\n")
                        try? c.send(body)  // a refusal closes the connection while this is sent
                        peak.update { $0 = max($0, ServeHTTPTests.residentBytes(pid)) }
                        return (try? c.readResponse().status) ?? -1
                    }
                }
            }
            return try await group.reduce(into: [Int]()) { $0.append($1) }
        }
        let growth = peak.value - before
        print("memory test: RSS before \(before >> 20) MiB, peak \(peak.value >> 20) MiB; statuses \(statuses.sorted())")
        #expect(statuses.allSatisfy { [400, 404, 503].contains($0) || $0 == -1 }, "\(statuses.sorted())")
        #expect(statuses.filter { $0 == 404 }.count >= 5, "\(statuses.sorted())")
        #expect(growth < 150 << 20, "RSS grew by \(growth >> 20) MiB (budget 32 MiB of bodies)")
        let health = try await client.send(HTTPClientRequest(url: base + "/healthz", timeout: .seconds(60)))
        #expect(health.status == 200)
        child.signal(SIGTERM)
        #expect(try await child.waitForExit() == 0)
    }
}

/// Runs python3 with `arguments`, waiting (without blocking a thread) for at most `seconds`; the
/// script's stdout, or a failure with its stderr.
func runPython(_ arguments: [String], seconds: Double = 120) async throws -> String {
    let python = try Subprocess("python3", arguments)
    let ended = try await python.wait(seconds: seconds)
    guard ended == .exited(0) else { throw Failure("python \(ended):\n\(python.stderrText)") }
    return python.stdoutText.trimmingCharacters(in: .whitespacesAndNewlines)
}

/// A value several threads update under a lock.
final class MutexBox<T: Sendable>: Sendable {
    private let state: Mutex<T>
    init(_ value: T) { state = Mutex(value) }
    func update(_ change: (inout T) -> Void) { state.withLock { change(&$0) } }
    var value: T { state.withLock { $0 } }
}
