import Foundation
import HearthModel
import HearthTesting
@_spi(Internals) @testable import HearthRuntime
import Synchronization
import Testing

/// Unit versions on a running runtime: activation swaps the table with running invocations
/// finishing on the old version, triggers follow, bad versions are refused, history persists.
@Suite("Deploying unit versions", .serialized)
struct DeployTests {
    static func library(_ product: String) -> String { UnitLoader.libraryPath(unit: product, directory: buildDirectory) }

    /// A runtime whose unit "Swap" starts as v1's library (in workers), beside EchoUnit. A worker
    /// gets `startTimeout` seconds to load and describe its unit: short only where a test waits it out
    /// (a worker that starts, dies or refuses on a loaded machine can take longer than 3 s).
    func swapRuntime(clock: any Clock = SystemClock(), log: LogCapture = LogCapture(), dataDirectory: String? = nil,
                     startTimeout: Double = 3) async throws -> Runtime {
        var config = makeConfig(units: [])
        config.units = [RuntimeConfig.Unit(name: "Swap", path: Self.library("SwapV1")), RuntimeConfig.Unit(name: "EchoUnit")]
        config.defaultIsolation = .process
        config.workers.startTimeoutSeconds = startTimeout
        if let dataDirectory { config.dataDirectory = dataDirectory }
        let runtime = try await openRuntime(config: config, clock: clock, log: log.makeLog(clock: clock))
        await runtime.loadUnits()
        #expect(runtime.loadErrors.isEmpty, "\(runtime.loadErrors)")
        return runtime
    }

    /// Installs and records a library as a version of Swap (what `hearth deploy` does before activating).
    func record(_ runtime: Runtime, _ product: String) async throws -> String {
        let deployer = Deployer(runtime: runtime, progress: { _ in })
        let (version, path) = try deployer.runtime.installLibrary(unit: "Swap", library: Self.library(product))
        try await runtime.deploys.record(UnitVersion(unit: "Swap", version: version, path: path, functions: [], created: runtime.clock.now(), createdBy: "test"))
        return version
    }

    @Test("activation: new calls answer from v2 at once, a call already running finishes on v1, v1's workers drain and exit")
    func activationSwaps() async throws {
        let runtime = try await swapRuntime()
        defer { runtime.close() }
        #expect(await runtime.call("swapVersion", data: .null).value == "v1")
        let oldWorkers = try #require(runtime.table["swapVersion"]?.unit.transport as? WorkerPool).pids
        let v2 = try await record(runtime, "SwapV2")
        async let slow = runtime.call("swapSlow", data: 1.5)
        try await Task.sleep(for: .milliseconds(200))  // the slow call is in v1's worker
        let activation = try await runtime.activate(unit: "Swap", version: v2)
        #expect(activation.added == ["swapAudit"])
        #expect(activation.removed == ["swapQueue", "swapTick"])
        #expect(activation.previous == "build")
        #expect(await runtime.call("swapVersion", data: .null).value == "v2")
        #expect(await slow.value == "v1", "the call that started on v1 finished there")
        #expect(runtime.table["swapVersion"]?.unit.version == v2)
        #expect(runtime.table["swapTick"] == nil)
        // The old version's workers exit once idle.
        let pool = try #require(runtime.table.units.first { $0.name == "Swap" }?.transport as? WorkerPool)
        #expect(!pool.pids.contains { oldWorkers.contains($0) })
        for pid in oldWorkers {
            #expect(await eventually { processGone(pid) }, "v1's worker \(pid) exited")
        }
        #expect(await runtime.call("echo", data: "still").value == "still")
    }

    @Test("triggers follow: a kept trigger runs the new code, an added one starts at the feed's end, removed ones stop; a removed queue keeps its tasks")
    func triggersFollow() async throws {
        let clock = ManualClock()
        let runtime = try await swapRuntime(clock: clock)
        defer { runtime.close() }
        try await runtime.startDeliveries(driving: false)
        let docs = runtime.documents
        try await docs.commit([.set(try DocumentPath("swap/a"), ["n": 1])])
        // A task for the queue v2 drops, due an hour from now.
        _ = try await runtime.enqueue([TaskSpec(queue: "swapQueue", data: "later", start: .after(.seconds(3600)))])
        await runtime.engine.settle()
        #expect(try await docs.get(try DocumentPath("swapLog/a"))?.fields["version"] == "v1")

        _ = try await runtime.activate(unit: "Swap", version: try await record(runtime, "SwapV2"))
        try await docs.commit([.set(try DocumentPath("swap/b"), ["n": 2])])
        await runtime.engine.settle()
        #expect(try await docs.get(try DocumentPath("swapLog/b"))?.fields["version"] == "v2")
        #expect(try await docs.get(try DocumentPath("swapAudit/b")) != nil)
        #expect(try await docs.get(try DocumentPath("swapAudit/a")) == nil, "an added trigger starts at the end of the feed")
        let afterV2 = try runtime.scheduleTable().map(\.function).filter { $0.hasPrefix("swap") }
        #expect(afterV2 == [], "v2 declares no schedule")
        let pending = try runtime.deliveries.list(function: "swapQueue", state: .pending, limit: 10)
        #expect(pending.count == 1, "the removed queue's task stays, listed")

        // Back to v1: the audit trigger stops, the schedule and the queue return.
        _ = try await runtime.activate(unit: "Swap", version: try await record(runtime, "SwapV1"))
        try await docs.commit([.set(try DocumentPath("swap/c"), ["n": 3])])
        await runtime.engine.settle()
        #expect(try await docs.get(try DocumentPath("swapLog/c"))?.fields["version"] == "v1")
        #expect(try await docs.get(try DocumentPath("swapAudit/c")) == nil)
        let afterV1 = try runtime.scheduleTable().map(\.function).filter { $0.hasPrefix("swap") }
        #expect(afterV1 == ["swapTick"])
        #expect(try await runtime.store.engine.cursors()["trigger:swapAudit"] == nil, "a removed trigger's cursor is dropped")
    }

    @Test("bad versions are refused with the reason and the running version keeps serving",
          arguments: [("SwapBroken", "registered twice"), ("SwapBadSchedule", "every 61 minutes or so"),
                      ("SwapTrapOnLoad", "worker died while loading"), ("OldABIUnit", "boundary version 1"),
                      ("SwapHangOnLoad", "did not load and describe the unit within 3.0 s"),
                      ("EchoUnit", "declares unit 'EchoUnit', not 'Swap'")])
    func badVersions(product: String, reason: String) async throws {
        // Only the hanging library waits the start timeout out; the others fail on their own, in
        // whatever time a loaded machine takes.
        let runtime = try await swapRuntime(startTimeout: product == "SwapHangOnLoad" ? 3 : 30)
        defer { runtime.close() }
        let version = try await record(runtime, product)
        do {
            _ = try await runtime.activate(unit: "Swap", version: version)
            Issue.record("\(product) was activated")
        } catch let error as HTTPSError {
            #expect(error.code == .failedPrecondition)
            #expect(error.message.contains(reason), "\(error.message)")
        }
        #expect(await runtime.call("swapVersion", data: .null).value == "v1")
        #expect(runtime.table["swapVersion"]?.unit.version == nil)
        // No worker of the refused version is left behind (the hung one is killed).
        // (By its path: workers of other tests' units at their build version run from copies
        // named by the same content hash, under their own data directories.)
        let copy = runtime.unitDirectory("Swap") + "/" + version
        #expect(await eventually { Self.processes(mentioning: copy).isEmpty },
                "workers of the refused version still run: \(Self.processes(mentioning: copy))")
    }

    /// Processes whose command line contains `text`.
    static func processes(mentioning text: String) -> [Int32] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap { Int32($0) }.filter { pid in
            guard let data = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline") else { return false }
            return String(decoding: data, as: UTF8.self).contains(text)
        }
    }

    @Test("a version whose function names clash with another unit's is refused, naming the clash")
    func clashRefused() async throws {
        var config = makeConfig(units: [])
        config.units = [RuntimeConfig.Unit(name: "Swap", path: Self.library("SwapV1")), RuntimeConfig.Unit(name: "SwapSecond", path: Self.library("SwapV2"))]
        config.defaultIsolation = .process
        let runtime = try await openRuntime(config: config)
        defer { runtime.close() }
        await runtime.loadUnits()
        // SwapV2's library declares unit "Swap", so the second unit is refused at load already.
        #expect(runtime.loadErrors.map(\.unit) == ["SwapSecond"])
        // A Swap version declaring EchoUnit's names clashes once EchoUnit runs beside it.
        let echo = try await swapRuntime()
        defer { echo.close() }
        do {
            _ = try await echo.validate(unit: "EchoUnit", library: Self.library("EchoUnit"))
        } catch {
            Issue.record("EchoUnit validates against itself replaced: \(error)")
        }
        await #expect(throws: HTTPSError.self) { _ = try await echo.validate(unit: "Swap", library: Self.library("SwapV1") + ".missing") }
    }

    @Test("a call whose head came before an activation and its body after is answered by the new version (the head's route is not used once replaced)")
    func activationBetweenHeadAndBody() async throws {
        try await withFrontDoor(units: [], configure: { config in
            config.units = [RuntimeConfig.Unit(name: "Swap", path: Self.library("SwapV1"))]
            config.defaultIsolation = .process
        }) { door in
            let body = JSONWriter.string(["data": .null], options: .callable)
            let port = door.door.port
            let connection = try await onOwnThread { () -> RawConnection in
                let c = try RawConnection(port: port, timeoutSeconds: 60)
                try c.send("POST /swapVersion HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n")
                return c
            }
            // The head is routed (to v1) as soon as it arrives; a head routed late would reach v2
            // all the same, and the test would then not exercise the check.
            try await Task.sleep(for: .milliseconds(200))
            let v2 = try await record(door.runtime, "SwapV2")
            _ = try await door.runtime.activate(unit: "Swap", version: v2)
            let answer = try await onOwnThread { () -> RawConnection.Response in
                try connection.send(body)
                return try connection.readResponse()
            }
            #expect(answer.status == 200)
            #expect((try? JSONParser.parse(answer.body, options: .callable))?["result"] == "v2", "\(answer.text)")
        }
    }

    @Test("a build runs with standard input, output and error only: descriptors the server opened without close-on-exec stay behind")
    func buildInheritsNoDescriptors() async throws {
        // A pipe opened the way a C library might open a descriptor: without close-on-exec.
        var ends: [Int32] = [-1, -1]
        #expect(pipe(&ends) == 0)
        defer { close(ends[0]); close(ends[1]) }
        #expect(fcntl(ends[0], F_GETFD) & FD_CLOEXEC == 0)
        let directory = NSTemporaryDirectory() + "hearth-spawn-" + SystemRandom().autoID()
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // The shell lists its own descriptors (`ls` runs in a child with only its output redirected).
        let status = try await Deployer.run("/bin/sh", ["-c", "ls /proc/$$/fd > descriptors"], in: directory)
        #expect(status == 0)
        let listed = Set(try String(contentsOfFile: directory + "/descriptors", encoding: .utf8).split(separator: "\n").compactMap { Int32($0) })
        #expect(listed.isSuperset(of: [0, 1, 2]), "\(listed.sorted())")
        #expect(!listed.contains(ends[0]) && !listed.contains(ends[1]), "the build held the pipe \(ends): \(listed.sorted())")
    }

    @Test("two activations at once run one after the other")
    func activationsSerialized() async throws {
        let runtime = try await swapRuntime()
        defer { runtime.close() }
        let v2 = try await record(runtime, "SwapV2")
        let v1 = try await record(runtime, "SwapV1")
        async let a = runtime.activate(unit: "Swap", version: v2)
        async let b = runtime.activate(unit: "Swap", version: v1)
        let (first, second) = try await (a, b)
        // Whichever ran second saw the other's version as its previous one.
        #expect([first.previous, second.previous].contains(v2) || [first.previous, second.previous].contains(v1))
        #expect(Set([first.previous, second.previous]).count == 2)
        #expect(runtime.table.units.filter { $0.name == "Swap" }.count == 1)
    }

    @Test("a recorded deploy survives a restart: the next start loads the deployed version; history lists who and when")
    func deploySurvivesRestart() async throws {
        let data = NSTemporaryDirectory() + "hearth-deploy-" + UUID().uuidString
        let version: String
        do {
            let runtime = try await swapRuntime(dataDirectory: data)
            defer { runtime.close() }
            let outcome = try await Deployer(runtime: runtime, progress: { _ in }).deploy(unit: "Swap", library: Self.library("SwapV2"), who: "ana@test")
            version = outcome.version.version
            #expect(outcome.activated.isEmpty, "no server runs on this data directory")
            #expect(outcome.record.hosts == 0)
            #expect(outcome.version.functions.sorted() == ["swapAudit", "swapLog", "swapSlow", "swapVersion"])
            let copy = outcome.version.path
            #expect(copy.hasPrefix(data + "/units/Swap/\(version)/"))
            #expect(await runtime.call("swapVersion", data: .null).value == "v1", "recorded for the next start only")
        }
        let restarted = try await swapRuntime(dataDirectory: data)
        defer { restarted.close() }
        #expect(await restarted.call("swapVersion", data: .null).value == "v2")
        #expect(restarted.table["swapVersion"]?.unit.version == version)
        let history = try restarted.deploys.history(unit: "Swap")
        #expect(history.map(\.who) == ["ana@test"])
        #expect(history.first?.action == .deploy)
        // Rolling back needs an earlier deployed version.
        await #expect(throws: HTTPSError.self) { _ = try await Deployer(runtime: restarted, progress: { _ in }).rollback(unit: "Swap", to: nil) }
    }

    @Test("the admin API's units routes: bad bodies, unknown units and versions are refused naming the problem; the control token opens only them")
    func adminUnitsRoutes() async throws {
        try await withFrontDoor(controlToken: "control-token") { door in
            let control = [("Authorization", "Bearer control-token"), ("Content-Type", "application/json")]
            let units = try await door.send("GET", "/__/admin/units", headers: control)
            #expect(units.status == 200)
            #expect(units.json?["units"]?["EchoUnit"]?["version"] == "build")
            #expect(units.json?["units"]?["EchoUnit"]?["isolation"] == "in-process")
            // The control token is for deploys only: the rest of the admin API stays closed.
            let functions = try await door.send("GET", "/__/admin/functions", headers: control)
            #expect(functions.status == 404)
            let cases: [(String, String, Int, String)] = [
                ("EchoUnit", "", 400, "needs {\"version\""),
                ("EchoUnit", #"{"version": 12}"#, 400, "needs {\"version\""),
                ("EchoUnit", #"{"version": null}"#, 400, "needs {\"version\""),
                ("EchoUnit", #"["version"]"#, 400, "needs {\"version\""),
                ("EchoUnit", #"{"version": "#, 400, "not valid JSON"),
                ("EchoUnit", #"{"version": "\#(String(repeating: "f", count: 20_000))"}"#, 404, "no version fff"),
                ("EchoUnit", #"{"version": "../../etc"}"#, 404, "no version ../../etc of unit EchoUnit"),
                ("Nope", #"{"version": "abc"}"#, 404, "unit Nope is not one of this host's units"),
                ("", #"{"version": "abc"}"#, 404, "unit  is not one of this host's units"),
            ]
            for (unit, body, status, message) in cases {
                let r = try await door.send("POST", "/__/admin/units/\(unit):activate", headers: control, body: body)
                #expect(r.status == status, "\(unit) \(body.prefix(40)): \(r.status)")
                #expect(r.json?["error"]?["message"]?.stringValue?.contains(message) == true, "\(unit) \(body.prefix(40)): \(String(describing: r.json))")
            }
            let wrong = try await door.send("POST", "/__/admin/units/EchoUnit:activate", headers: [("Authorization", "Bearer control-tokenX")], body: #"{"version":"a"}"#)
            #expect(wrong.status == 401)
            #expect(await door.runtime.call("echo", data: "still").value == "still")
        }
    }
}
