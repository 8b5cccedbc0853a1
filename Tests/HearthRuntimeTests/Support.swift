import Foundation
@_exported import HearthTesting
import HearthModel
@testable import HearthRuntime
import Synchronization
import Testing

/// Collects log lines for assertions.
final class LogCapture: Sendable {
    let lines = Mutex<[String]>([])
    var all: [String] { lines.withLock { $0 } }
    func contains(_ text: String) -> Bool { all.contains { $0.contains(text) } }

    func makeLog(format: RuntimeLog.Format = .json, clock: any Clock = SystemClock()) -> RuntimeLog {
        RuntimeLog(format: format, level: .debug, clock: clock, output: { line in self.lines.withLock { $0.append(line) } })
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

func startRuntime(units: [String], clock: any Clock = SystemClock(), log: LogCapture = LogCapture()) async throws -> Runtime {
    let runtime = try await Runtime.open(config: makeConfig(units: units), clock: clock, log: log.makeLog(clock: clock))
    await runtime.loadUnits()
    return runtime
}
