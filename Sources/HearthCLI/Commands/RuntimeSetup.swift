import Foundation
import HearthModel
import HearthRuntime

/// Loading the configuration and starting a runtime, shared by the commands that need one.
enum RuntimeSetup {
    static func loadConfig(_ options: CommonOptions, io: CommandIO) -> RuntimeConfig? {
        let path = options.configPath
        guard FileManager.default.fileExists(atPath: path) else {
            io.err("error: no configuration at \(path) (use --config PATH)")
            return nil
        }
        do {
            var config = try RuntimeConfig.load(path: path)
            if let f = options.logFormat, let format = RuntimeLog.Format(rawValue: f) { config.log.format = format }
            if let l = options.logLevel, let level = LogLevel(rawValue: l) { config.log.level = level }
            return config
        } catch {
            io.err("error: invalid configuration:\n\(error)")
            return nil
        }
    }

    /// A runtime with the configured units loaded; refused units were logged.
    /// `quietLevel` is the default log level for commands whose output is the point.
    /// `configure` applies the command's own overrides (`serve --port`); `loadUnits` says whether
    /// the command needs the units loaded.
    /// With `[record]` configured, a command's inputs (writes, calls, tasks, users) are recorded
    /// (`records: false` for `serve`, which records itself, changes included).
    static func start(_ options: CommonOptions, io: CommandIO, quietLevel: LogLevel? = nil, loadUnits: (RuntimeConfig) -> Bool = { _ in true },
                      records: Bool = true, configure: (inout RuntimeConfig) -> Void = { _ in }) async -> Runtime? {
        guard var config = loadConfig(options, io: io) else { return nil }
        if let quietLevel, options.logLevel == nil { config.log.level = quietLevel }
        configure(&config)
        do {
            let runtime = try await Runtime.open(config: config)
            if loadUnits(config) { await runtime.loadUnits() }
            if records, let recording = config.recordOptions(process: "cli") { try await runtime.startRecording(recording, changes: false) }
            return runtime
        } catch {
            io.err("error: cannot open the store at \(config.storePath): \(error)")
            return nil
        }
    }
}

/// Aligned text columns.
func formatTable(_ rows: [[String]]) -> String {
    guard let first = rows.first else { return "" }
    var widths = Array(repeating: 0, count: first.count)
    for row in rows { for (i, cell) in row.enumerated() { widths[i] = max(widths[i], cell.count) } }
    return rows.map { row in
        row.enumerated().map { i, cell in
            i == row.count - 1 ? cell : cell.padding(toLength: widths[i], withPad: " ", startingAt: 0)
        }.joined(separator: "  ")
    }.joined(separator: "\n")
}

/// Opening the configured store without loading units, for commands that only touch documents.
enum StoreSetup {
    static func open(_ options: CommonOptions, io: CommandIO) async -> (RuntimeConfig, RuntimeDocuments)? {
        guard let config = RuntimeSetup.loadConfig(options, io: io) else { return nil }
        do {
            return (config, try await RuntimeDocuments.open(config: config))
        } catch {
            io.err("error: cannot open the store at \(config.storePath): \(error)")
            return nil
        }
    }
}
