import Foundation
import HearthModel
import HearthRuntime
import HearthTesting
import Testing

/// The app's recorded fixture: the whole client journey of SCENARIOS.md, recorded over HTTP
/// against `hearth serve --record` with its units in worker processes and the CLI writing as the
/// client does (`HEARTH_RECORD_FIXTURES=1 Scripts/test --filter AppEndToEndTests` records it
/// again). Each scenario's invocations replay against today's units with no divergence; a change
/// to a unit that alters what it does fails here with the invocation and a diff.
@Suite("The recorded journey replays against the app's units (SCENARIOS §1–§8)")
struct ReplayFixtureTests {
    static let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent().path + "/Fixtures/journey"
    static let units = ["AuthExchange", "Members", "Items", "Reminders", "AccountCleanup", "CategoryCleanup", "AppAPI"]
    /// The fixture's provider settings (the test's, not real ones): what the units read as secrets.
    static let secrets = ["APPLE_TEAM_ID": "T", "APPLE_KEY_ID": "K", "APPLE_CLIENT_ID": "com.example.todo", "APPLE_PRIVATE_KEY": "unused: signing is answered from the recording"]

    func replay(_ functions: Set<String>) async throws -> ReplayReport {
        let recording = try Recording.read(Self.fixture)
        var config = RuntimeConfig()
        config.units = Self.units.map { RuntimeConfig.Unit(name: $0) }
        config.unitsDirectory = RuntimeConfig.executableDirectory
        let replayer = HandlerReplayer(secrets: Self.secrets)
        let report = await replayer.replay(recording, units: try await replayer.load(config), functions: functions)
        #expect(report.invocations > 0, "the fixture holds invocations of \(functions.sorted())")
        return report
    }

    @Test("each scenario's invocations (§1 exchange, §2 setup, §3 items, §4 reminders, §5 categories, §6 account deletion, §7 HTTP API, §8 device)",
          arguments: [["exchangeAppleCode"], ["initializeMember"], ["createItem", "deleteItem", "restoreItem", "onItemDeleted", "onItemCompleted"],
                      ["scheduleTodoReminder", "sendPushNotification"], ["onPreferencesUpdated", "cleanupCategory"], ["deleteMemberData"],
                      ["todosApi"], ["registerDevice"]] as [Set<String>])
    func scenario(_ functions: Set<String>) async throws {
        let report = try await replay(functions)
        #expect(report.divergences.isEmpty, "\(report)")
    }

    @Test("the whole journey, system replay from an empty store: the recorded documents, pushes and token requests, the same hash twice")
    func system() async throws {
        let dir = NSTemporaryDirectory() + "hearth-fixture-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let secrets = Self.secrets.sorted { $0.key < $1.key }.map { "\($0.key) = \"\($0.value)\"" }.joined(separator: "\n")
        #expect(FileManager.default.createFile(atPath: dir + "/secrets.toml", contents: Data(secrets.utf8), attributes: [.posixPermissions: 0o600]))
        let replay = try Replay(file: Self.fixture, units: Self.units)
        let configure: (inout RuntimeConfig) -> Void = { $0.secretsFile = dir + "/secrets.toml" }
        let once = try await replay.system(configure: configure)
        #expect(once.divergences.isEmpty, "\(once)")
        #expect(once.documents > 5)
        let twice = try await replay.system(configure: configure)
        #expect(once.storeHash == twice.storeHash)
    }
}
