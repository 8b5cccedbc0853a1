import Foundation
import HearthModel
import HearthRuntime

/// `hearth deploy UNIT` and `hearth deploy --list [UNIT]`.
struct DeployCommand: Command {
    static let path = ["deploy"]
    static let summary = "Build a unit and activate it on the running host (or at the next start); --list shows history"
    static let help = """
        usage: hearth deploy UNIT [--library PATH] [options]
               hearth deploy --list [UNIT] [--json] [options]

        Builds UNIT's product in release mode (swift build -c release --product UNIT), copies
        lib<UNIT>.so to <data_dir>/units/UNIT/<version>/ (the version is its content hash),
        validates it in a throwaway worker, records it, and activates it on every `hearth serve`
        running on the data directory: new invocations go to the new version, running ones finish
        on the old. With no server running it applies at the next start. A version that fails to
        load or validate is refused with the reason and the running one keeps serving.
          --library PATH       deploy this library instead of building
          --list               print the deploy history (newest first; * marks the active version)
          --json               with --list: JSON lines
        \(CommonOptions.help)
        """

    var common: CommonOptions
    var unit: String?
    var library: String?
    var list: Bool
    var json: Bool

    static func parse(_ arguments: [String]) throws(UsageError) -> DeployCommand {
        let args = try Arguments(arguments, valued: CommonOptions.valued.union(["library"]), boolean: ["list", "json"])
        let list = args.flag("list")
        let positionals = try args.requirePositionals(["UNIT"], optional: list ? 1 : 0)
        if !list && args.flag("json") { throw UsageError("--json goes with --list") }
        if list && args.value("library") != nil { throw UsageError("--library does not go with --list") }
        return DeployCommand(common: try CommonOptions(args), unit: positionals.first, library: args.value("library"), list: list, json: args.flag("json"))
    }

    func run(_ io: CommandIO) async -> Int32 {
        // The other units are loaded (in workers, so none can take this command down) only to
        // check the new version's names against theirs when no server runs; a server checks itself.
        let list = self.list
        guard let runtime = await RuntimeSetup.start(common, io: io, quietLevel: .warning,
                                                     loadUnits: { !list && HostRegistry.live(config: $0).isEmpty },
                                                     configure: { $0.defaultIsolation = .process }) else { return ExitCode.failure }
        defer { runtime.close() }
        if list { return printHistory(runtime, io) }
        guard let unit else { return ExitCode.usage }
        let deployer = Deployer(runtime: runtime, progress: { io.err($0) })
        do {
            let library: String
            if let given = self.library { library = runtime.config.resolve(given) } else { library = try await deployer.build(unit: unit) }
            let outcome = try await deployer.deploy(unit: unit, library: library)
            DeployCommand.report(outcome, io)
            return outcome.refused.isEmpty ? ExitCode.success : ExitCode.failure
        } catch {
            io.err("error: \(DeployCommand.message(error))")
            return ExitCode.failure
        }
    }

    static func message(_ error: Error) -> String {
        (error as? HTTPSError)?.message ?? "\(error)"
    }

    static func report(_ outcome: Deployer.Outcome, _ io: CommandIO) {
        let v = outcome.version
        let verb = outcome.record.action == .deploy ? "deployed" : "rolled back to"
        if outcome.activated.isEmpty {
            io.out("\(verb) \(v.unit) \(v.version) (\(v.functions.count) functions); no server is running: it applies at the next start")
        } else {
            for host in outcome.activated {
                io.out("\(verb) \(v.unit) \(v.version) (\(v.functions.count) functions): active on \(host.url) in \(String(format: "%.3f", host.seconds)) s")
            }
        }
        for host in outcome.refused { io.err("error: \(host.url) refused \(v.unit) \(v.version): \(host.reason)") }
    }

    func printHistory(_ runtime: Runtime, _ io: CommandIO) -> Int32 {
        do {
            let history = try runtime.deploys.history(unit: unit)
            let versions = try runtime.deploys.versions(unit: unit)
            let active = try runtime.deploys.active()
            let byKey = Dictionary(versions.map { ($0.unit + "/" + $0.version, $0) }, uniquingKeysWith: { a, _ in a })
            if json {
                for r in history {
                    let v = byKey[r.unit + "/" + r.version]
                    io.out(JSONWriter.string([
                        "unit": .string(r.unit), "version": .string(r.version), "action": .string(r.action.rawValue), "time": .timestamp(r.time),
                        "who": .string(r.who), "hosts": .int(Int64(r.hosts)), "active": .bool(active[r.unit]?.sequence == r.sequence),
                        "functions": .array((v?.functions ?? []).map { .string($0) }), "path": v.map { .string($0.path) } ?? .null,
                    ]))
                }
            } else {
                var rows = [["", "UNIT", "VERSION", "ACTION", "TIME", "BY", "HOSTS", "FUNCTIONS"]]
                for r in history {
                    let functions = byKey[r.unit + "/" + r.version]?.functions ?? []
                    rows.append([active[r.unit]?.sequence == r.sequence ? "*" : "", r.unit, r.version, r.action.rawValue, r.time.rfc3339,
                                 r.who, String(r.hosts), functions.joined(separator: ",")])
                }
                io.out(history.isEmpty ? "no deploys" + (unit.map { " of \($0)" } ?? "") : formatTable(rows))
            }
            return ExitCode.success
        } catch {
            io.err("error: \(DeployCommand.message(error))")
            return ExitCode.failure
        }
    }
}

/// `hearth rollback UNIT [--to VERSION]`.
struct RollbackCommand: Command {
    static let path = ["rollback"]
    static let summary = "Activate an earlier deployed version of a unit again"
    static let help = """
        usage: hearth rollback UNIT [--to VERSION] [options]

        Activates the version of UNIT that was active before the current one (or VERSION, a
        version or a unique prefix of one from `hearth deploy --list UNIT`) on every running
        server, as a deploy does, and records it in the history.
          --to VERSION         the version to activate
        \(CommonOptions.help)
        """

    var common: CommonOptions
    var unit: String
    var target: String?

    static func parse(_ arguments: [String]) throws(UsageError) -> RollbackCommand {
        let args = try Arguments(arguments, valued: CommonOptions.valued.union(["to"]))
        let positionals = try args.requirePositionals(["UNIT"])
        if let to = args.value("to"), to.isEmpty { throw UsageError("--to needs a version") }
        return RollbackCommand(common: try CommonOptions(args), unit: positionals[0], target: args.value("to"))
    }

    func run(_ io: CommandIO) async -> Int32 {
        // A rollback activates a version that was validated when it was deployed: no units needed.
        guard let runtime = await RuntimeSetup.start(common, io: io, quietLevel: .warning, loadUnits: { _ in false }) else { return ExitCode.failure }
        defer { runtime.close() }
        do {
            let outcome = try await Deployer(runtime: runtime, progress: { io.err($0) }).rollback(unit: unit, to: target)
            DeployCommand.report(outcome, io)
            return outcome.refused.isEmpty ? ExitCode.success : ExitCode.failure
        } catch {
            io.err("error: \(DeployCommand.message(error))")
            return ExitCode.failure
        }
    }
}
