import Foundation
import HearthHTTP
import HearthModel
import HearthTesting
import Synchronization
import Testing

/// `hearth deploy` and `hearth rollback` against a real `hearth serve` under load.
@Suite("Deploying to a running server", .serialized)
struct DeployProcessTests {
    let client = HTTPClient()

    static func library(_ product: String) -> String { buildDirectory + "/lib\(product).so" }

    func call(_ base: String, _ function: String, _ data: String = "null", timeout: Duration = .seconds(30)) async throws -> (Int, Value) {
        try await Self.call(client, base, function, data, timeout: timeout)
    }

    static func call(_ client: HTTPClient, _ base: String, _ function: String, _ data: String = "null", timeout: Duration = .seconds(30)) async throws -> (Int, Value) {
        let response = try await client.send(HTTPClientRequest(method: "POST", url: base + "/" + function,
                                                              headers: HTTPHeaders([("Content-Type", "application/json")]),
                                                              body: Array("{\"data\":\(data)}".utf8), timeout: timeout))
        return (response.status, try JSONParser.parse(response.body))
    }

    func hearth(_ arguments: [String], in dir: TempDir) async throws -> Subprocess {
        try await Self.hearth(arguments, in: dir.path)
    }

    static func hearth(_ arguments: [String], in directory: String) async throws -> Subprocess {
        let p = try Subprocess(buildDirectory + "/hearth", arguments, directory: directory)
        _ = try await p.wait(seconds: 120)
        return p
    }

    @Test("v1 → v2 → rollback under continuous calls: no failed request, answers switch and switch back, a slow call started on v1 ends on v1")
    func deployUnderLoad() async throws {
        let dir = Self.swapDirectory(swap: "workers = 2", more: """
            [[units]]
            name = "EchoUnit"
            [log]
            level = "notice"
            """)
        let server = try ChildProcess(["serve"], directory: dir.path)
        let base = "http://127.0.0.1:\(try await server.servingPort(seconds: 120))"

        // Two callers, back to back, until told to stop; every answer is kept in order.
        let state = LoadState()
        let client = self.client
        let load = Task {
            await withTaskGroup(of: Void.self) { group in
                for _ in 0..<16 {
                    group.addTask {
                        var n = 0
                        while !state.stop.load(ordering: .relaxed) && n < 200_000 {
                            n += 1
                            do {
                                let (status, body) = try await Self.call(client, base, "swapVersion")
                                if status == 200, let v = body["result"]?.stringValue { state.answers.withLock { $0.append(v) } } else {
                                    state.failures.withLock { $0.append("\(status) \(JSONWriter.string(body))") }
                                }
                            } catch {
                                state.failures.withLock { $0.append("\(error)") }
                            }
                        }
                    }
                }
            }
        }
        func waitForAnswers(_ count: Int) async throws {
            for _ in 0..<1000 where state.answers.withLock({ $0.count }) < count { try await Task.sleep(for: .milliseconds(10)) }
        }
        try await waitForAnswers(50)

        // Deploy v1 as a recorded version (same code as the running one), then v2 with a slow call in flight.
        let first = try await hearth(["deploy", "Swap", "--library", Self.library("SwapV1")], in: dir)
        #expect(first.termination == .exited(0), "\(first.stderrText)")
        let slow = Task { try await Self.call(client, base, "swapSlow", "2", timeout: .seconds(60)) }
        try await Task.sleep(for: .milliseconds(300))
        let before = state.answers.withLock { $0.count }
        let started = ContinuousClock.now
        let second = try await hearth(["deploy", "Swap", "--library", Self.library("SwapV2")], in: dir)
        let deployElapsed = ContinuousClock.now - started
        #expect(second.termination == .exited(0), "\(second.stderrText)")
        #expect(second.stdoutText.contains("active on http://127.0.0.1"), "\(second.stdoutText)")
        try await waitForAnswers(before + 200)
        let (slowStatus, slowBody) = try await slow.value
        #expect(slowStatus == 200 && slowBody["result"] == "v1", "the slow call finished on the version it started on: \(slowBody)")

        let health = try JSONParser.parse(try await client.send(HTTPClientRequest(url: base + "/healthz")).body)
        let v2 = health["unitStatus"]?["Swap"]?["version"]?.stringValue
        #expect(v2 != nil && v2 != "build")

        let back = try await hearth(["rollback", "Swap"], in: dir)
        #expect(back.termination == .exited(0), "\(back.stderrText)")
        #expect(back.stdoutText.contains("rolled back to Swap"), "\(back.stdoutText)")
        let afterRollback = state.answers.withLock { $0.count }
        try await waitForAnswers(afterRollback + 200)
        // More flips back and forth, each under the same load.
        for library in ["SwapV2", "SwapV1", "SwapV2", "SwapV1"] {
            let flip = try await hearth(["deploy", "Swap", "--library", Self.library(library)], in: dir)
            #expect(flip.termination == .exited(0), "\(flip.stderrText)")
            try await waitForAnswers(state.answers.withLock { $0.count } + 100)
        }
        let settled = state.answers.withLock { $0.count }
        try await waitForAnswers(settled + 200)
        state.stop.store(true, ordering: .relaxed)
        await load.value

        let seen = state.answers.withLock { $0 }
        let failed = state.failures.withLock { $0 }
        #expect(failed.isEmpty, "failed requests: \(failed.prefix(5))")
        // v1 first, then v2, then v1 again: the answers switch once each way (two callers may
        // interleave around a switch, so compare runs of the sequence, not single answers).
        var runs: [String] = []
        for v in seen where runs.last != v { runs.append(v) }
        #expect(runs.first == "v1" && runs.contains("v2") && runs.last == "v1", "\(runs.prefix(10))")
        #expect(seen[(settled + 100)...].allSatisfy { $0 == "v1" })
        print("deploy under load: \(seen.count) calls, 0 failed; deploy command \(deployElapsed)")

        // The history has both deploys and the rollback, newest first, the rollback active.
        let list = try await hearth(["deploy", "--list", "Swap", "--json"], in: dir)
        let rows = try list.stdoutText.split(separator: "\n").map { try JSONParser.parse(Array($0.utf8)) }
        #expect(rows.map { $0["action"]?.stringValue ?? "" } == ["deploy", "deploy", "deploy", "deploy", "rollback", "deploy", "deploy"])
        #expect(rows.first?["active"] == true)
        #expect(rows[4]["version"] == rows.last?["version"], "rolled back to the first deploy's version")
        #expect(rows.allSatisfy { $0["hosts"] == 1 })
        let functions = try await hearth(["functions", "--json"], in: dir)
        #expect(functions.stdoutText.contains(rows.first?["version"]?.stringValue ?? "?"), "hearth functions shows the active version")

        // A bad version is refused by the running server, which keeps serving the good one.
        let bad = try await hearth(["deploy", "Swap", "--library", Self.library("SwapBroken")], in: dir)
        #expect(bad.termination == .exited(1))
        #expect(bad.stderrText.contains("registered twice"), "\(bad.stderrText)")
        #expect(try await call(base, "swapVersion").1["result"] == "v1")
        server.signal(SIGTERM)
        #expect(try await server.waitForExit(seconds: 60) == 0)
        #expect(!FileManager.default.fileExists(atPath: dir.path + "/.hearth/hosts/\(server.process.pid).json"), "the server unregisters at exit")
    }

    @Test("with no server running, a deploy applies at the next start; two deploys of one unit at once are serialized")
    func deployWithoutServer() async throws {
        let dir = Self.swapDirectory()
        // Another deploy of Swap holds its lock: this one waits, says so, and goes on once it is released.
        let lockDirectory = dir.path + "/.hearth/units/Swap"
        try FileManager.default.createDirectory(atPath: lockDirectory, withIntermediateDirectories: true)
        let held = open(lockDirectory + "/deploy.lock", O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        #expect(flock(held, LOCK_EX) == 0)
        let waiting = try Subprocess(buildDirectory + "/hearth", ["deploy", "Swap", "--library", Self.library("SwapV1")], directory: dir.path)
        try await waiting.waitFor(seconds: 60, "the deploy to wait for the lock") { $0.stderrText.contains("waiting for another deploy of Swap") }
        #expect(waiting.isRunning)
        #expect(try await Self.hearth(["deploy", "--list", "--json"], in: dir.path).stdoutText.isEmpty, "nothing recorded while it waits")
        close(held)
        #expect(try await waiting.wait(seconds: 60) == .exited(0), "\(waiting.stderrText)")
        let first = try await hearth(["deploy", "Swap", "--library", Self.library("SwapV2")], in: dir)
        #expect(first.termination == .exited(0), "\(first.stderrText)")
        #expect(first.stdoutText.contains("applies at the next start"))
        let list = try await hearth(["deploy", "--list", "--json"], in: dir)
        let rows = try list.stdoutText.split(separator: "\n").map { try JSONParser.parse(Array($0.utf8)) }
        #expect(rows.count == 2)
        #expect(rows.allSatisfy { $0["hosts"] == 0 })
        let active = try #require(rows.first)
        let server = try ChildProcess(["serve"], directory: dir.path)
        let base = "http://127.0.0.1:\(try await server.servingPort(seconds: 120))"
        #expect(active["functions"]?.arrayValue?.contains("swapAudit") == true)
        #expect(try await call(base, "swapVersion").1["result"] == "v2", "the next start runs the last deploy")
        // A server killed outright: its workers go with it, and its registry entry is known stale.
        let workers = server.workers
        #expect(!workers.isEmpty)
        server.signal(SIGKILL)
        _ = try await server.waitForExit(seconds: 60)
        for pid in workers {
            #expect(await eventually { processGone(pid) }, "worker \(pid) exited with its host")
        }
        let afterKill = try await hearth(["deploy", "Swap", "--library", Self.library("SwapV1")], in: dir)
        #expect(afterKill.termination == .exited(0), "\(afterKill.stderrText)")
        #expect(afterKill.stdoutText.contains("applies at the next start"), "the dead server's entry is not taken for a live one")

        // Usage and configuration errors name what is wrong.
        let unknown = try await hearth(["deploy", "Nope", "--library", Self.library("SwapV1")], in: dir)
        #expect(unknown.termination == .exited(1))
        #expect(unknown.stderrText.contains("unit Nope is not one of runtime.toml's units"))
        let missing = try await hearth(["deploy", "Swap", "--library", "/no/such/lib.so"], in: dir)
        #expect(missing.termination == .exited(1))
        #expect(missing.stderrText.contains("cannot read the library /no/such/lib.so"))
        let noVersion = try await hearth(["rollback", "Swap", "--to", "ffff"], in: dir)
        #expect(noVersion.termination == .exited(1))
        #expect(noVersion.stderrText.contains("no version ffff of unit Swap"))
    }

    @Test("a unit at its build version whose library is rebuilt while it serves: a worker that dies comes back running the code its functions were read from")
    func rebuiltLibraryDoesNotReachWorkers() async throws {
        let dir = TempDir()
        let library = dir.path + "/lib/libSwap.so"
        try FileManager.default.createDirectory(atPath: dir.path + "/lib", withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: Self.library("SwapV1"), toPath: library)
        Self.writeSwapConfig(dir, library: library)
        let server = try ChildProcess(["serve"], directory: dir.path)
        let base = "http://127.0.0.1:\(try await server.servingPort(seconds: 120))"
        #expect(try await call(base, "swapVersion").1["result"] == "v1")
        // `hearth deploy`'s build (or any swift build) writes the next version over the path, as a
        // linker does: a new file renamed into place.
        try FileManager.default.copyItem(atPath: Self.library("SwapV2"), toPath: library + ".new")
        #expect(rename(library + ".new", library) == 0)
        let workers = server.workers
        #expect(!workers.isEmpty)
        for pid in workers { kill(pid, SIGKILL) }
        #expect(await eventually { workers.allSatisfy { processGone($0) } })
        // Killed at once, the workers come back after the pool's backoff; calls meanwhile may be
        // refused (unavailable), so the answer is read once one gets through.
        var (status, body) = (0, Value.null)
        for _ in 0..<120 where status != 200 {
            (status, body) = try await call(base, "swapVersion", timeout: .seconds(60))
            if status != 200 { try await Task.sleep(for: .milliseconds(250)) }
        }
        #expect(status == 200 && body["result"] == "v1", "the restarted worker runs v1, whose manifest the server holds: \(status) \(body)")
        let copies = dir.path + "/.hearth/units/Swap"
        func versions() throws -> [String] { try FileManager.default.contentsOfDirectory(atPath: copies).filter { $0.count == 16 } }
        let first = try versions()
        #expect(first.count == 1)
        server.signal(SIGTERM)
        #expect(try await server.waitForExit(seconds: 60) == 0)

        // Started again on the new build: v2 runs, and the copy of v1, which nothing runs and no
        // deploy recorded, is removed.
        let again = try ChildProcess(["serve"], directory: dir.path)
        let againBase = "http://127.0.0.1:\(try await again.servingPort(seconds: 120))"
        #expect(try await call(againBase, "swapVersion").1["result"] == "v2")
        let second = try versions()
        #expect(second.count == 1 && second != first, "\(first) then \(second)")
        again.signal(SIGTERM)
        #expect(try await again.waitForExit(seconds: 60) == 0)
    }
}

extension DeployProcessTests {
    /// A directory whose runtime.toml runs unit Swap from v1's library (with `swap`'s extra keys),
    /// on any free port, then `more`.
    static func swapDirectory(swap: String = "", more: String = "") -> TempDir {
        let dir = TempDir()
        writeSwapConfig(dir, library: library("SwapV1"), swap: swap, more: more)
        return dir
    }

    /// Writes `dir`'s runtime.toml: unit Swap from `library`, with `swap`'s extra keys, then `more`.
    static func writeSwapConfig(_ dir: TempDir, library: String, swap: String = "", more: String = "") {
        _ = dir.write("runtime.toml", """
            units_dir = "\(buildDirectory)"
            [server]
            port = 0
            [[units]]
            name = "Swap"
            path = "\(library)"
            \(swap)
            \(more)
            """)
    }
}

/// What the load generator of `deployUnderLoad` shares with the test.
final class LoadState: Sendable {
    let stop = Atomic<Bool>(false)
    let answers = Mutex<[String]>([])
    let failures = Mutex<[String]>([])
}
