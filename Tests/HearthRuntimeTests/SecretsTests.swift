import Foundation
import HearthModel
@_spi(Internals) @testable import HearthRuntime
import HearthTesting
import Testing

/// Secrets declared by functions: required at load, readable only by the functions that declare
/// them, and never in a log line or an error.
@Suite("Declared secrets")
struct SecretsTests {
    /// A runtime with SecretUnit whose secrets file holds `entries`.
    func runtime(_ entries: [String: String], log: LogCapture = LogCapture(), isolation: RuntimeConfig.Isolation = .inProcess) async throws -> Runtime {
        var config = makeConfig(units: ["SecretUnit"])
        config.defaultIsolation = isolation
        try FileManager.default.createDirectory(atPath: config.dataDirectory, withIntermediateDirectories: true)
        let file = config.dataDirectory + "/secrets.toml"
        let text = entries.map { "\($0.key) = \"\($0.value)\"" }.joined(separator: "\n")
        #expect(FileManager.default.createFile(atPath: file, contents: Data(text.utf8), attributes: [.posixPermissions: 0o600]))
        config.secretsFile = file
        let runtime = try await openRuntime(config: config, clock: ManualClock(), log: log.makeLog())
        await runtime.loadUnits()
        return runtime
    }

    @Test("a declared secret that is not set is named at load (never a value); the unit loads and reading it is failed-precondition naming it")
    func missingSecretNamed() async throws {
        let log = LogCapture()
        let runtime = try await runtime(["SOMETHING_ELSE": "unrelated-value"], log: log)
        defer { runtime.close() }
        #expect(runtime.loadErrors.isEmpty, "\(runtime.loadErrors)")
        #expect(log.all.contains { $0.contains("declared secret not set") && $0.contains("HEARTH_TEST_SECRET") && $0.contains("readSecret") })
        let read = await runtime.call("readSecret", data: nil)
        #expect(read.error?.code == .failedPrecondition)
        #expect(read.error?.message.contains("HEARTH_TEST_SECRET") == true)
        #expect(!log.all.contains { $0.contains("unrelated-value") })
    }

    @Test("the declaring function reads its secret; another function of the same unit is refused, and nothing logs the value",
          arguments: RuntimeConfig.Isolation.allCases)
    func onlyDeclaredSecrets(isolation: RuntimeConfig.Isolation) async throws {
        let log = LogCapture()
        let runtime = try await runtime(["HEARTH_TEST_SECRET": "s3cret-value", "HEARTH_OTHER_SECRET": "other-value"], log: log, isolation: isolation)
        defer { runtime.close() }
        #expect(runtime.loadErrors.isEmpty, "\(runtime.loadErrors)")
        let read = await runtime.call("readSecret", data: nil)
        #expect(read.value == ["length": 12, "matches": true, "other": nil], "an undeclared secret reads as nil")
        let sneak = await runtime.call("sneakSecret", data: nil)
        #expect(sneak.error?.code == .permissionDenied)
        #expect(sneak.error?.message.contains("did not declare the secret 'HEARTH_TEST_SECRET'") == true)
        #expect(log.all.contains { $0.contains("secret refused") })
        #expect(!log.all.contains { $0.contains("s3cret-value") || $0.contains("other-value") })
    }
}
