import HearthModel
import HearthRuntime

/// `hearth functions [--json]`: the function table.
struct FunctionsCommand: Command {
    static let path = ["functions"]
    static let summary = "List the loaded functions: name, unit, trigger, options"
    static let help = """
        usage: hearth functions [--json] [options]

        Loads the configured units and prints every function with its unit, the unit's version (its
        deployed version, or "build" for the library in units_dir), trigger and options.
        Units that fail to load are reported on stderr and the exit status is 1.

          --json               print JSON instead of a table
        \(CommonOptions.help)
        """

    var common: CommonOptions
    var json: Bool

    static func parse(_ arguments: [String]) throws(UsageError) -> FunctionsCommand {
        let args = try Arguments(arguments, valued: CommonOptions.valued, boolean: ["json"])
        _ = try args.requirePositionals([])
        return FunctionsCommand(common: try CommonOptions(args), json: args.flag("json"))
    }

    func run(_ io: CommandIO) async -> Int32 {
        guard let runtime = await RuntimeSetup.start(common, io: io, quietLevel: .warning) else { return ExitCode.failure }
        let table = runtime.table
        if json {
            io.out(JSONWriter.string(.array(table.descriptions), options: .pretty))
        } else {
            var rows = [["NAME", "UNIT", "VERSION", "TRIGGER", "OPTIONS"]]
            for entry in table.entries {
                let options = FunctionTable.dropNulls((try? ValueEncoder().encode(entry.spec.options)) ?? .emptyMap)
                let optionText = options.mapValue?.isEmpty == false ? JSONWriter.string(options) : "-"
                rows.append([entry.name, entry.unit.name, entry.unit.version ?? "build", entry.trigger.summary, optionText])
            }
            io.out(formatTable(rows))
        }
        for error in runtime.loadErrors { io.err("error: \(error)") }
        return runtime.loadErrors.isEmpty ? ExitCode.success : ExitCode.failure
    }
}
