@testable import HearthCLI
import Testing

@Suite("Parsing command lines (pure)")
struct CLIParseTests {
    func command(_ args: [String]) throws -> any Command {
        guard case .run(let c) = CLI.parse(args) else { throw ParseFailure(args: args) }
        return c
    }

    struct ParseFailure: Error { var args: [String] }

    func usageError(_ args: [String]) -> String? {
        if case .usageError(let message) = CLI.parse(args) { return message }
        return nil
    }

    @Test("no arguments or --help prints the overview listing every command")
    func overview() {
        for args in [[], ["--help"], ["-h"], ["help"]] {
            guard case .help(let text) = CLI.parse(args) else { Issue.record("no help for \(args)"); continue }
            for c in CLI.commands { #expect(text.contains(c.path.joined(separator: " "))) }
        }
    }

    @Test("each command's --help prints its own usage")
    func commandHelp() {
        for c in CLI.commands {
            guard case .help(let text) = CLI.parse(c.path + ["--help"]) else { Issue.record("no help for \(c.path)"); continue }
            #expect(text.contains("usage: hearth \(c.path.joined(separator: " "))"))
        }
    }

    @Test("an unknown command is a usage error that says so")
    func unknownCommand() {
        #expect(usageError(["frobnicate"])?.contains("unknown command 'frobnicate'") == true)
        #expect(usageError(["config", "explode"])?.contains("unknown command 'hearth config explode'") == true)
    }

    @Test("a command group alone prints its subcommands")
    func groupHelp() {
        guard case .help(let text) = CLI.parse(["config"]) else { Issue.record("no group help"); return }
        #expect(text.contains("config parse"))
        #expect(text.contains("config show"))
    }

    @Test("unknown flags and missing values are usage errors naming the flag")
    func badFlags() {
        #expect(usageError(["functions", "--jsn"])?.contains("unknown option '--jsn'") == true)
        #expect(usageError(["call", "echo", "--data"])?.contains("option '--data' needs a value") == true)
        #expect(usageError(["functions", "--json=yes"])?.contains("option '--json' takes no value") == true)
        #expect(usageError(["serve", "-x"])?.contains("unknown option '-x'") == true)
        #expect(usageError(["serve", "--log-format", "xml"])?.contains("--log-format must be text or json") == true)
        #expect(usageError(["serve", "--log-level", "loud"])?.contains("--log-level must be one of") == true)
        #expect(usageError(["serve", "--port", "70000"])?.contains("--port must be between 0 and 65535") == true)
        #expect(usageError(["serve", "--port", "99999999999999999999"])?.contains("needs an integer") == true)
        #expect(usageError(["serve", "--port", "-1"])?.contains("--port must be between 0 and 65535") == true)
        #expect(usageError(["worker", "--library", "x.so"])?.contains("missing --unit") == true)
        #expect(usageError(["worker", "--unit", "U"])?.contains("missing --library") == true)
        #expect(usageError(["worker", "--unit", "U", "--library", "x", "--fd", "-1"])?.contains("--fd must be a descriptor number") == true)
        #expect(usageError(["worker", "--unit", "U", "--library", "x", "--fd", "99999999999999999999"])?.contains("needs an integer") == true)
        #expect(usageError(["worker", "--unit", "U", "--library", "x", "--write-fd", "-1"])?.contains("--write-fd must be a descriptor number") == true)
        #expect(usageError(["worker", "--unit", "U", "--library", "x", "--write-fd", "65536"])?.contains("--write-fd must be a descriptor number") == true)
        #expect(usageError(["worker", "--unit", "U", "--library", "x", "--write-fd", "99999999999999999999"])?.contains("needs an integer") == true)
        #expect(usageError(["worker", "--unit", "U", "--library", "x", "--write-fd", "four"])?.contains("needs an integer") == true)
        #expect(usageError(["worker", "--unit", "U", "--library", "x", "--memory-limit-mb", "9223372036854775807"])?.contains("--memory-limit-mb must be between") == true)
        #expect(usageError(["worker", "--unit", "U", "--library", "x", "--open-files", "-5"])?.contains("--open-files must be between") == true)
        #expect(usageError(["worker", "--unit", "U", "--library", "x", "--boundary-version", "4294967296"])?.contains("--boundary-version must be a version number") == true)
        #expect(usageError(["worker", "--unit", "U", "--library", "x", "--boundary-version", "-1"])?.contains("--boundary-version must be a version number") == true)
        #expect(usageError(["deploy"])?.contains("missing UNIT") == true)
        #expect(usageError(["deploy", "A", "B"])?.contains("unexpected argument 'B'") == true)
        #expect(usageError(["deploy", "A", "--json"])?.contains("--json goes with --list") == true)
        #expect(usageError(["deploy", "--list", "--library", "x.so"])?.contains("--library does not go with --list") == true)
        #expect(usageError(["deploy", "--list", "A", "B"])?.contains("unexpected argument 'B'") == true)
        #expect(usageError(["rollback"])?.contains("missing UNIT") == true)
        #expect(usageError(["rollback", "A", "--to", ""])?.contains("--to needs a version") == true)
        #expect(usageError(["rollback", "A", "--to"])?.contains("option '--to' needs a value") == true)
        #expect(usageError(["docs", "query", "items", "--order-by", ""])?.contains("--order-by needs a field") == true)
        #expect(usageError(["docs", "query", "items", "--order-by=:"])?.contains("--order-by needs a field") == true)
        #expect(usageError(["docs", "query", "items", "--order-by", "n:sideways"])?.contains("asc or desc") == true)
        // An empty group id is refused, not taken for a kindless query over the whole database.
        #expect(usageError(["docs", "query", "", "--group"])?.contains("invalid collection id '' for a collection group") == true)
        #expect(usageError(["docs", "query", "a/b", "--group"])?.contains("invalid collection id 'a/b'") == true)
    }

    @Test("serve takes --host and --port over the configuration's")
    func serveOverrides() throws {
        let c = try #require(try command(["serve", "--port", "8080", "--host", "0.0.0.0"]) as? ServeCommand)
        #expect(c.port == 8080)
        #expect(c.host == "0.0.0.0")
        let plain = try #require(try command(["serve"]) as? ServeCommand)
        #expect(plain.port == nil && plain.host == nil)
    }

    @Test("call takes a name, data inline or from a file, and a uid")
    func callParsing() throws {
        let c = try #require(try command(["call", "echo", "--data", "{\"a\":1}", "--as", "alice", "--config", "x.toml"]) as? CallCommand)
        #expect(c.name == "echo")
        #expect(c.data == .inline("{\"a\":1}"))
        #expect(c.uid == "alice")
        #expect(c.common.configPath == "x.toml")
        let f = try #require(try command(["call", "echo", "--data-file=in.json"]) as? CallCommand)
        #expect(f.data == .file("in.json"))
        #expect(f.uid == nil)
        #expect(f.common.configPath == "runtime.toml")
    }

    @Test("call refuses both data sources, a missing name, extra arguments and an empty uid")
    func callErrors() {
        #expect(usageError(["call", "echo", "--data", "1", "--data-file", "f"])?.contains("either --data or --data-file") == true)
        #expect(usageError(["call"])?.contains("missing a function name") == true)
        #expect(usageError(["call", "a", "b"])?.contains("unexpected argument 'b'") == true)
        #expect(usageError(["call", "a", "--as", ""])?.contains("--as needs a uid") == true)
    }

    @Test("config parse needs exactly one file")
    func configParse() throws {
        let c = try #require(try command(["config", "parse", "a.toml"]) as? ConfigParseCommand)
        #expect(c.file == "a.toml")
        #expect(usageError(["config", "parse"])?.contains("missing a TOML file") == true)
    }

    @Test("functions and config show accept the shared options")
    func sharedOptions() throws {
        let f = try #require(try command(["functions", "--json", "--config", "c.toml", "--log-format", "json"]) as? FunctionsCommand)
        #expect(f.json)
        #expect(f.common.logFormat == "json")
        let s = try #require(try command(["config", "show", "--config=c.toml"]) as? ConfigShowCommand)
        #expect(s.common.configPath == "c.toml")
    }

    @Test("-- ends options so a positional may start with a dash")
    func doubleDash() throws {
        let c = try #require(try command(["call", "--", "-weird"]) as? CallCommand)
        #expect(c.name == "-weird")
    }
}
