import HearthModel

/// The `hearth` command line: finds the command its arguments name, parses, runs.
public enum CLI {
    /// Every command, in the order `hearth --help` lists them.
    static let commands: [any Command.Type] = [
        ServeCommand.self,
        CallCommand.self,
        FunctionsCommand.self,
        ConfigParseCommand.self,
        ConfigShowCommand.self,
        DocsGetCommand.self,
        DocsSetCommand.self,
        DocsDeleteCommand.self,
        DocsQueryCommand.self,
        DocsExportCommand.self,
        ExportCommand.self,
        ImportCommand.self,
        UsersCommand.self,
        TokenCommand.self,
        AuthCommand.self,
        DeliveriesCommand.self,
        TasksCommand.self,
        ScheduleCommand.self,
        MessagesCommand.self,
        DeployCommand.self,
        RollbackCommand.self,
        ReplayCommand.self,
        RulesTestCommand.self,
        WorkerCommand.self,
    ]

    /// The result of parsing a command line, without running anything.
    public enum Parsed: Sendable {
        case run(any Command)
        case help(String)
        case usageError(String)
    }

    /// Parses `arguments` (without the program name). Pure: no I/O.
    public static func parse(_ arguments: [String]) -> Parsed {
        if arguments.isEmpty || arguments == ["--help"] || arguments == ["-h"] || arguments == ["help"] {
            return .help(overview)
        }
        // The longest command path that prefixes the arguments wins.
        let match = commands
            .filter { arguments.starts(with: $0.path) }
            .max { $0.path.count < $1.path.count }
        guard let command = match else {
            let groupMembers = commands.filter { $0.path.count > 1 && $0.path[0] == arguments[0] }
            if !groupMembers.isEmpty {
                let rest = arguments.dropFirst()
                if rest.isEmpty || rest.first == "--help" || rest.first == "-h" { return .help(groupHelp(arguments[0], groupMembers)) }
                return .usageError("unknown command 'hearth \(arguments[0]) \(rest.first!)'\n\n" + groupHelp(arguments[0], groupMembers))
            }
            return .usageError("unknown command '\(arguments[0])'; run 'hearth --help' for the list")
        }
        let rest = Array(arguments.dropFirst(command.path.count))
        if rest.contains("--help") || rest.contains("-h") { return .help(command.help) }
        do {
            return .run(try command.parse(rest))
        } catch {
            return .usageError("hearth \(command.path.joined(separator: " ")): \(error.message)\n\n\(command.help)")
        }
    }

    /// Parses and runs; returns the exit status.
    public static func main(_ arguments: [String], io: CommandIO = .standard) async -> Int32 {
        switch parse(arguments) {
        case .help(let text):
            io.out(text)
            return ExitCode.success
        case .usageError(let message):
            io.err(message)
            return ExitCode.usage
        case .run(let command):
            return await command.run(io)
        }
    }

    static var overview: String {
        let width = commands.map { $0.path.joined(separator: " ").count }.max() ?? 0
        let lines = commands.map { c in
            "  " + c.path.joined(separator: " ").padding(toLength: width, withPad: " ", startingAt: 0) + "  " + c.summary
        }
        return """
            hearth: run Firebase-style functions written in Swift

            usage: hearth <command> [options]

            commands:
            \(lines.joined(separator: "\n"))

            Run 'hearth <command> --help' for a command's options.
            """
    }

    static func groupHelp(_ group: String, _ members: [any Command.Type]) -> String {
        "usage: hearth \(group) <command>\n\ncommands:\n" + members.map { "  \($0.path.joined(separator: " "))  \($0.summary)" }.joined(separator: "\n")
    }
}
