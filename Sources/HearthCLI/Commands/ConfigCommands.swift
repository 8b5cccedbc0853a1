import Foundation
import HearthModel
import HearthRuntime

/// `hearth config parse FILE`: any TOML document as JSON, no schema applied.
struct ConfigParseCommand: Command {
    static let path = ["config", "parse"]
    static let summary = "Print a TOML document as JSON"
    static let help = """
        usage: hearth config parse FILE

        Parses FILE as TOML 1.0 and prints it as JSON: tables as objects, integers exact, inf and nan
        as the strings "inf", "-inf", "nan", and dates and times as RFC 3339 strings. An invalid
        document prints the error with its line and column to stderr and exits 1.
        """

    var file: String

    static func parse(_ arguments: [String]) throws(UsageError) -> ConfigParseCommand {
        let args = try Arguments(arguments)
        return ConfigParseCommand(file: try args.requirePositionals(["a TOML file"])[0])
    }

    func run(_ io: CommandIO) async -> Int32 {
        guard let data = file == "-" ? FileHandle.standardInput.readDataToEndOfFile() : io.readFile(file) else {
            io.err("error: cannot read \(file)")
            return ExitCode.failure
        }
        // Not String(data:encoding:), which drops a byte order mark that TOML does not allow.
        guard let text = String(validating: [UInt8](data), as: UTF8.self) else {
            io.err("\(file): not valid UTF-8")
            return ExitCode.failure
        }
        do {
            io.out(JSONWriter.string(try RuntimeConfig.json(parsingTOML: text), options: .pretty))
            return ExitCode.success
        } catch {
            io.err("\(file): \(error)")
            return ExitCode.failure
        }
    }
}

/// `hearth config show`: the effective configuration with defaults filled in.
struct ConfigShowCommand: Command {
    static let path = ["config", "show"]
    static let summary = "Print the effective configuration with defaults"
    static let help = """
        usage: hearth config show [--config PATH]

        Validates the configuration and prints it as JSON with every default filled in. Problems
        (unknown keys, wrong types) are printed with their key paths and the exit status is 1.
        \(CommonOptions.help)
        """

    var common: CommonOptions

    static func parse(_ arguments: [String]) throws(UsageError) -> ConfigShowCommand {
        let args = try Arguments(arguments, valued: CommonOptions.valued)
        _ = try args.requirePositionals([])
        return ConfigShowCommand(common: try CommonOptions(args))
    }

    func run(_ io: CommandIO) async -> Int32 {
        guard let config = RuntimeSetup.loadConfig(common, io: io) else { return ExitCode.failure }
        io.out(JSONWriter.string(config.value, options: .pretty))
        return ExitCode.success
    }
}
