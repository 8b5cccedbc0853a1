import Foundation
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

/// Fails the test instead of hanging when `body` does not finish within `seconds` (wall time).
/// The body runs in its own task, so even a body that ignores cancellation cannot hold the test.
func withTimeout<T: Sendable>(_ seconds: Double = 30, _ body: @escaping @Sendable () async throws -> T) async throws -> T {
    let race = Race<Result<T, Error>>()
    let outcome: Result<T, Error>? = await withCheckedContinuation { continuation in
        race.install(continuation)
        let work = Task {
            do { race.finish(.success(try await body())) } catch { race.finish(.failure(error)) }
        }
        Task {
            try? await Task.sleep(for: .seconds(seconds))
            work.cancel()
            race.finish(nil)
        }
    }
    guard let outcome else { throw TimeoutError(seconds: seconds) }
    return try outcome.get()
}

/// Waits, yielding, until `condition` holds; fails after `seconds`.
func eventually(_ seconds: Double = 30, _ condition: @escaping @Sendable () -> Bool) async throws {
    try await withTimeout(seconds) {
        while !condition() {
            try Task.checkCancellation()
            await Task.yield()
        }
    }
}

struct TimeoutError: Error, CustomStringConvertible {
    var seconds: Double
    var description: String { "timed out after \(seconds) s" }
}
