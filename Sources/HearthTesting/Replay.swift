import Foundation
import HearthModel
import HearthRuntime

/// A recording (`hearth serve --record`, or `TestRuntime.record(to:)`) replayed in-process against
/// the units under test, for `#expect`:
///
/// ```swift
/// let replay = try Replay(file: "Tests/ItemsTests/Fixtures/items", units: ["Members", "Items"])
/// let report = try await replay.handler()
/// #expect(report.divergences.isEmpty, "\(report)")
/// ```
public struct Replay: Sendable {
    public let recording: Recording
    public let units: [String]
    /// Libraries to load instead of a unit's own (`["Swap": "libSwapV2.so"]`, relative to the
    /// test binary's directory): a changed version of a unit, replayed against what the old one did.
    public let libraries: [String: String]

    /// Reads a recording file or directory; `units` are loaded from their built libraries (next
    /// to the test binary), as `TestRuntime` loads them.
    public init(file: String, units: [String], libraries: [String: String] = [:]) throws {
        recording = try Recording.read(file)
        self.units = units
        self.libraries = libraries
    }

    var config: RuntimeConfig {
        var config = RuntimeConfig()
        config.units = units.map { RuntimeConfig.Unit(name: $0, path: libraries[$0].map { RuntimeConfig.executableDirectory + "/" + $0 }) }
        config.unitsDirectory = RuntimeConfig.executableDirectory
        config.log.level = .error
        return config
    }

    /// Handler replay: each recorded invocation of these units (or only of `functions`) against
    /// the current code, with the recorded replies; the report lists every divergence. Declared
    /// secrets read as their placeholders unless `secrets` gives their values.
    public func handler(functions: Set<String>? = nil, secrets: [String: String] = [:]) async throws -> ReplayReport {
        let replayer = HandlerReplayer(secrets: secrets)
        let loaded = try await replayer.load(config)
        return await replayer.replay(recording, units: loaded, functions: functions)
    }

    /// System replay: a fresh store driven by the recording's external inputs under a manual
    /// clock; `seed` may fill the store first (e.g. import an export). The report compares the
    /// resulting documents, outbound calls and dead letters, and carries the store hash.
    /// `from` is an export (`hearth export`, `Runtime.exportData`) to start from instead of an empty store.
    public func system(from snapshot: String? = nil, timeTolerance: Duration = .seconds(5), configure: (inout RuntimeConfig) -> Void = { _ in },
                       seed: (@Sendable (Runtime) async throws -> Void)? = nil) async throws -> ReplayReport {
        var config = self.config
        configure(&config)
        var options = SystemReplayer.Options()
        options.snapshot = snapshot
        options.timeTolerance = timeTolerance
        options.prepare = { try TestKeys.install(for: $0) }
        return try await SystemReplayer.run(recording, config: config, options: options, seedStore: seed)
    }
}

extension TestRuntime {
    /// Records everything this runtime does from now on into `directory` (see `Recorder`).
    @discardableResult
    public func record(to directory: String) async throws -> Recorder {
        try await runtime.startRecording(Recorder.Options(directory: directory, process: "test"), changes: true)
    }

    /// Stops recording; what is pending (the change feed's tail) is written first.
    public func stopRecording() async {
        await runtime.stopRecording()
    }
}
