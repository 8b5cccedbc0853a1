import Foundation
@_exported import HearthTesting
import HearthModel
@_spi(Internals) @testable import HearthRuntime
import Synchronization
import Testing

/// Collects log lines for assertions.
final class LogCapture: Sendable {
    let lines = Mutex<[String]>([])
    /// Changes with every line written (wait for a line with `until(log.changes) { … }`).
    let changes = Changes()
    var all: [String] { lines.withLock { $0 } }
    func contains(_ text: String) -> Bool { all.contains { $0.contains(text) } }

    func makeLog(format: RuntimeLog.Format = .json, clock: any Clock = SystemClock()) -> RuntimeLog {
        RuntimeLog(format: format, level: .debug, clock: clock, output: { line in
            self.lines.withLock { $0.append(line) }
            self.changes.changed()
        })
    }
}

/// Where `swift build` puts the fixture units: next to the test binary.
let buildDirectory = RuntimeConfig.executableDirectory

func makeConfig(units: [String]) -> RuntimeConfig {
    var config = RuntimeConfig()
    config.units = units.map { RuntimeConfig.Unit(name: $0) }
    config.unitsDirectory = buildDirectory
    // Each runtime gets its own data directory, so each test has its own store.
    config.dataDirectory = NSTemporaryDirectory() + "hearth-runtime-" + UUID().uuidString
    return config
}

/// Opens a runtime for a test, starting from the process's shared signing keys (see `TestKeys`).
func openRuntime(config: RuntimeConfig, clock: any Clock = SystemClock(), log: RuntimeLog? = nil) async throws -> Runtime {
    try TestKeys.install(for: config)
    return try await Runtime.open(config: config, clock: clock, log: log)
}

func startRuntime(units: [String], clock: any Clock = SystemClock(), log: LogCapture = LogCapture()) async throws -> Runtime {
    let runtime = try await openRuntime(config: makeConfig(units: units), clock: clock, log: log.makeLog(clock: clock))
    await runtime.loadUnits()
    return runtime
}
