import Foundation
import HearthModel
import HearthRuntime

/// `hearth replay FILE`: handler replay, or system replay with `--from` / `--empty`.
struct ReplayCommand: Command {
    static let path = ["replay"]
    static let summary = "Replay a recording (hearth serve --record) against the current units and report divergences"
    static let help = """
        usage: hearth replay FILE|DIR [--units A,B] [--functions F,G] [--json] [options]
               hearth replay FILE|DIR --empty | --from EXPORT_DIR [--time-tolerance SECONDS] [--json] [options]

        Handler replay (the default): every recorded invocation of the configured units runs again
        against their current code (loaded in this process) with the recorded service replies fed
        back in order. Each call the new code makes that the old did not, each different argument,
        each call no longer made and each different outcome is reported with the invocation id and
        a diff (- recorded, + replayed).

        System replay (--empty, or --from an export of `hearth export`): a fresh store is driven by
        the recording's external inputs (requests, schedule instants, CLI and admin writes, users,
        tasks) at their recorded times under a manual clock; triggers, tasks and schedules run for
        real; outbound HTTP and pushes are answered from the recording. The documents, outbound
        calls and dead letters that result are compared with the recorded ones, and the store
        hash is printed (the same file gives the same hash).

        Exits 0 when nothing diverged, 1 when something did (or the recording cannot be read).
          --units A,B          only these units' invocations (handler replay)
          --functions F,G      only these functions' invocations (handler replay)
          --empty              system replay from an empty store
          --from DIR           system replay from an export
          --time-tolerance S   system replay: timestamps in documents may differ by S seconds (default 5)
          --json               the report as one JSON object
        \(CommonOptions.help)
        """

    var common: CommonOptions
    var file: String
    var units: Set<String>?
    var functions: Set<String>?
    var system: Bool
    var snapshot: String?
    var tolerance: Double
    var json: Bool

    static func parse(_ arguments: [String]) throws(UsageError) -> ReplayCommand {
        let args = try Arguments(arguments, valued: CommonOptions.valued.union(["units", "functions", "from", "time-tolerance"]), boolean: ["empty", "json"])
        let positionals = try args.requirePositionals(["FILE"])
        func names(_ option: String) throws(UsageError) -> Set<String>? {
            guard let v = args.value(option) else { return nil }
            let list = v.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
            guard !list.isEmpty else { throw UsageError("--\(option) needs a comma-separated list of names") }
            return Set(list)
        }
        let snapshot = args.value("from")
        if args.flag("empty") && snapshot != nil { throw UsageError("--empty and --from exclude each other") }
        let system = args.flag("empty") || snapshot != nil
        if system && (args.value("units") != nil || args.value("functions") != nil) {
            throw UsageError("--units and --functions go with handler replay (a system replay runs every unit)")
        }
        var tolerance = 5.0
        if let t = args.value("time-tolerance") {
            guard let v = Double(t), v.isFinite, v >= 0, v <= 86_400 else { throw UsageError("--time-tolerance must be a number of seconds from 0 to 86400 (got \(t))") }
            guard system else { throw UsageError("--time-tolerance goes with --empty or --from") }
            tolerance = v
        }
        if let snapshot, snapshot.isEmpty { throw UsageError("--from needs an export directory") }
        return ReplayCommand(common: try CommonOptions(args), file: positionals[0], units: try names("units"), functions: try names("functions"),
                             system: system, snapshot: snapshot, tolerance: tolerance, json: args.flag("json"))
    }

    func run(_ io: CommandIO) async -> Int32 {
        guard var config = RuntimeSetup.loadConfig(common, io: io) else { return ExitCode.failure }
        if common.logLevel == nil { config.log.level = .error }
        // Handler replay runs the units in worker processes, as hearth serve does: a unit that
        // traps fails its invocation (a divergence) instead of ending the replay.
        config.defaultIsolation = .process
        let recording: Recording
        do { recording = try Recording.read(file) } catch {
            io.err("error: \(error)")
            return ExitCode.failure
        }
        if let unknown = units?.subtracting(config.units.map(\.name)).sorted(), !unknown.isEmpty {
            io.err("error: --units names units runtime.toml does not list: \(unknown.joined(separator: ", "))")
            return ExitCode.usage
        }
        io.err("replaying \(recording.invocations.count) invocations, \(recording.inputs.count) inputs from \(recording.files.count) file(s)")
        let progress: @Sendable (Int, Int) -> Void = { done, total in io.err("  \(done) / \(total)") }
        let report: ReplayReport
        do {
            if system {
                var options = SystemReplayer.Options()
                options.timeTolerance = .seconds(tolerance)
                options.snapshot = snapshot.map { URL(fileURLWithPath: $0).standardizedFileURL.path }
                report = try await SystemReplayer.run(recording, config: config, options: options, progress: progress)
            } else {
                // Declared secrets this machine has are read as they were (see HandlerReplayer).
                let secrets = try Secrets.load(path: config.secretsFile.map(config.resolve))
                let names = Set(recording.invocations.flatMap { $0.calls.filter { $0.operation == .secretGet }.compactMap(\.secretName) })
                let replayer = HandlerReplayer(secrets: secrets.declaredValues(Array(names)))
                let loaded = try await replayer.load(config, only: units)
                report = await replayer.replay(recording, units: loaded, functions: functions, progress: progress)
                replayer.stop(loaded)
            }
        } catch {
            io.err("error: \(error)")
            return ExitCode.failure
        }
        if json {
            io.out(JSONWriter.string(report.value, options: .sorted))
        } else {
            io.out(report.description)
        }
        return report.passed ? ExitCode.success : ExitCode.failure
    }
}
