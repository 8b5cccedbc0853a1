import Foundation
@testable import HearthCLI
import HearthModel
@_spi(Internals) import HearthRuntime
import HearthTesting
import Synchronization
import Testing

/// Captures what a command prints.
final class Output: Sendable {
    let out = Mutex<[String]>([])
    let err = Mutex<[String]>([])
    var stdout: String { out.withLock { $0.joined(separator: "\n") } }
    var stderr: String { err.withLock { $0.joined(separator: "\n") } }
    var io: CommandIO {
        CommandIO(out: { s in self.out.withLock { $0.append(s) } }, err: { s in self.err.withLock { $0.append(s) } })
    }
}

/// A temporary directory removed at the end of the test.
final class TempDir {
    let path: String
    init() {
        path = NSTemporaryDirectory() + "hearth-cli-" + UUID().uuidString
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }
    deinit { try? FileManager.default.removeItem(atPath: path) }
    func write(_ name: String, _ text: String) -> String {
        let p = path + "/" + name
        _ = FileManager.default.createFile(atPath: p, contents: Data(text.utf8))
        // Commands run against this configuration start from the shared test keys (see `TestKeys`).
        if name == "runtime.toml" { TestKeys.install(forConfigFile: p) }
        return p
    }
}

let buildDirectory = RuntimeConfig.executableDirectory

/// Runs the built `hearth` with `args` in `dir` to its end; returns its status and output.
func hearthProcess(_ args: [String], in dir: TempDir) async throws -> (status: Int32, out: String, err: String) {
    let process = try Subprocess(buildDirectory + "/hearth", args, directory: dir.path)
    guard case .exited(let status) = try await process.wait(seconds: 120) else { throw Failure("hearth \(args) did not exit normally") }
    return (status, process.stdoutText, process.stderrText)
}

func run(_ args: [String]) async -> (Int32, Output) {
    let output = Output()
    let code = await CLI.main(args, io: output.io)
    return (code, output)
}

@Suite("Running commands")
struct CLIRunTests {
    @Test("config parse prints any TOML document as JSON with exact integers, inf/nan strings and RFC 3339 dates")
    func configParse() async throws {
        let dir = TempDir()
        let file = dir.write("doc.toml", """
            big = 9223372036854775807
            ratio = inf
            none = nan
            when = 1979-05-27T07:32:00-08:00
            day = 1979-05-27
            [server]
            ports = [8000, 8001]
            [[fruit]]
            name = "apple"
            """)
        let (code, out) = await run(["config", "parse", file])
        #expect(code == 0)
        let json = try JSONParser.parse(out.stdout)
        #expect(json["big"] == .int(Int64.max))
        #expect(json["ratio"] == "inf")
        #expect(json["none"] == "nan")
        #expect(json["when"] == "1979-05-27T07:32:00-08:00")
        #expect(json["day"] == "1979-05-27")
        #expect(json["server"]?["ports"] == [8000, 8001])
        #expect(json["fruit"] == [["name": "apple"]])
    }

    @Test("config parse of an invalid document prints line and column to stderr and exits 1")
    func configParseInvalid() async throws {
        let dir = TempDir()
        let file = dir.write("bad.toml", "a = 1\nb = [1, 2\n")
        let (code, out) = await run(["config", "parse", file])
        #expect(code == 1)
        #expect(out.stdout.isEmpty)
        #expect(out.stderr.contains("line 3") || out.stderr.contains("line 2"))
        #expect(out.stderr.contains("column"))
        let (missingCode, missing) = await run(["config", "parse", dir.path + "/nope.toml"])
        #expect(missingCode == 1)
        #expect(missing.stderr.contains("cannot read"))
    }

    @Test("config show fills in every default")
    func configShowDefaults() async throws {
        let dir = TempDir()
        let file = dir.write("runtime.toml", "units = [\"EchoUnit\"]\n")
        let (code, out) = await run(["config", "show", "--config", file])
        #expect(code == 0)
        let json = try JSONParser.parse(out.stdout)
        #expect(json["project"] == "hearth-local")
        #expect(json["auth"]?["emulator"] == false, "emulator mode is never on by default")
        #expect(json["server"]?["port"] == 5001)
        #expect(json["server"]?["max_body_bytes"] == .int(32 * 1024 * 1024))
        #expect(json["store"]?["synchronous"] == "normal")
        #expect(json["units"]?.arrayValue?.first?["name"] == "EchoUnit")
    }

    @Test("config show names every unknown key and wrong type by its key path")
    func configShowErrors() async throws {
        let dir = TempDir()
        let file = dir.write("runtime.toml", """
            projekt = "x"
            [server]
            port = "5001"
            colour = "blue"
            max_body_bytes = 2048
            max_buffered_bytes = 1024
            head_timeout_seconds = 0
            scheduling = "fifo"
            [store]
            synchronous = "sometimes"
            [[rewrites]]
            source = "/api/**"
            """)
        let (code, out) = await run(["config", "show", "--config", file])
        #expect(code == 1)
        #expect(out.stderr.contains("projekt: unknown key"))
        #expect(out.stderr.contains("server.port: expected an integer, found string"))
        #expect(out.stderr.contains("server.colour: unknown key"))
        #expect(out.stderr.contains("server.max_buffered_bytes: must be at least max_body_bytes (2048)"))
        #expect(out.stderr.contains("server.head_timeout_seconds"))
        #expect(out.stderr.contains("store.synchronous: must be one of"))
        #expect(out.stderr.contains(#"server.scheduling: must be one of "batch", "normal" (got "fifo")"#))
        #expect(out.stderr.contains("rewrites[0].function: missing"))
    }

    func echoConfig(_ dir: TempDir, units: String = "[\"EchoUnit\"]") -> String {
        dir.write("runtime.toml", "units_dir = \"\(buildDirectory)\"\nunits = \(units)\n[log]\nformat = \"json\"\n")
    }

    @Test("functions lists the table; --json gives name, unit, trigger and options")
    func functions() async throws {
        let dir = TempDir()
        let config = echoConfig(dir)
        let (code, out) = await run(["functions", "--config", config])
        #expect(code == 0)
        #expect(out.stdout.contains("NAME"))
        #expect(out.stdout.contains("itemCreated"))
        #expect(out.stdout.contains("document.created members/{uid}/items/{itemId}"))
        let (jsonCode, jsonOut) = await run(["functions", "--json", "--config", config])
        #expect(jsonCode == 0)
        let list = try #require(try JSONParser.parse(jsonOut.stdout).arrayValue)
        let work = try #require(list.first { $0["name"] == "work" })
        #expect(work["unit"] == "EchoUnit")
        #expect(work["trigger"] == ["task": .emptyMap])
        #expect(work["options"]?["rateLimits"]?["maxDispatchesPerSecond"] == 10.0)
    }

    @Test("functions exits 1 and names the unit when one is refused")
    func functionsRefused() async throws {
        let dir = TempDir()
        let (code, out) = await run(["functions", "--config", echoConfig(dir, units: "[\"EchoUnit\", \"BrokenUnit\"]")])
        #expect(code == 1)
        #expect(out.stdout.contains("echo"))
        #expect(out.stderr.contains("unit BrokenUnit"))
        #expect(out.stderr.contains("registered twice"))
    }

    @Test("call prints the result; --as makes the caller signed in")
    func call() async throws {
        let dir = TempDir()
        let config = echoConfig(dir)
        let (code, out) = await run(["call", "add", "--data", "{\"a\": 40, \"b\": 2}", "--config", config])
        #expect(code == 0)
        #expect(try JSONParser.parse(out.stdout) == ["sum": 42])
        let (_, who) = await run(["call", "whoami", "--as", "alice", "--config", config])
        #expect(try JSONParser.parse(who.stdout)["uid"] == "alice")
        let (_, anonymous) = await run(["call", "whoami", "--config", config])
        #expect(anonymous.stdout == "null")
    }

    @Test("call reads data from a file and keeps exact 64-bit integers")
    func callDataFile() async throws {
        let dir = TempDir()
        let data = dir.write("data.json", "{\"n\": 9223372036854775807, \"w\": {\"@type\": \"type.googleapis.com/google.protobuf.Int64Value\", \"value\": \"-9223372036854775808\"}}")
        let (code, out) = await run(["call", "echo", "--data-file", data, "--config", echoConfig(dir)])
        #expect(code == 0)
        let json = try JSONParser.parse(out.stdout)
        #expect(json["n"] == .int(Int64.max))
        #expect(json["w"] == .int(Int64.min))
    }

    @Test("call prints an error's code and message and exits 1; bad data JSON exits 2")
    func callErrors() async throws {
        let dir = TempDir()
        let config = echoConfig(dir)
        let (code, out) = await run(["call", "fail", "--data", "{\"code\": \"not-found\", \"message\": \"no such item\"}", "--config", config])
        #expect(code == 1)
        #expect(out.stderr.contains("not-found (NOT_FOUND): no such item"))
        let (badCode, bad) = await run(["call", "echo", "--data", "{nope", "--config", config])
        #expect(badCode == 2)
        #expect(bad.stderr.contains("not valid JSON"))
        #expect(bad.stderr.contains("byte 1"))
        let (missingCode, missing) = await run(["call", "nothing", "--config", config])
        #expect(missingCode == 1)
        #expect(missing.stderr.contains("not-found"))
    }

    @Test("a missing configuration file is reported, exit 1")
    func missingConfig() async throws {
        let (code, out) = await run(["functions", "--config", "/nonexistent/runtime.toml"])
        #expect(code == 1)
        #expect(out.stderr.contains("no configuration at /nonexistent/runtime.toml"))
    }
}
