import Foundation
import HearthModel
import HearthRuntime
import HearthTesting
import Testing

/// Recording and replay of the app (SCENARIOS §2–§6 in one session): a recorded session replays
/// with no divergence both ways, system replay is deterministic, and a changed unit diverges.
@Suite("Recording and replay of the app's units")
struct ReplayTests {
    static let newYear = Timestamp(seconds: 1_767_225_600)  // 09:00 in Seoul

    /// A session touching every scenario: first sign-in, items with numbering and soft delete, a
    /// category removed (trigger → task), a reminder tick (schedule → task → push), an account deleted.
    static func session(_ app: TestRuntime) async throws {
        try await app.member("ann")
        try await app.seed(["members/ann/profiles/settings": ["pushEnabled": true, "reminderHour": 9, "reminderMinute": 5, "timeZone": "Asia/Seoul"],
                            "members/ann/profiles/secrets": ["fcmToken": "ann-device-token"]])
        let first = try await app.call("createItem", ["title": "milk", "category": "work",
                                                      "targetDate": .timestamp(newYear + .seconds(20 * 3600))], as: "ann")
        _ = try await app.call("createItem", ["title": "bread", "category": "work"], as: "ann")
        let id = try #require(first["itemId"]?.stringValue)
        _ = try await app.call("deleteItem", ["itemId": .string(id)], as: "ann")
        _ = try await app.call("restoreItem", ["itemId": .string(id)], as: "ann")
        try await app.write(["members/ann/profiles/preferences": ["categories": [["id": "work", "name": "Work"]]]])
        await app.settle()
        try await app.write(["members/ann/profiles/preferences": ["categories": []]])
        await app.advance(by: .seconds(600))  // the 09:05 tick, its task, the push
        try await app.member("bo")
        await app.settle()
        try await app.deleteUser("bo")
        await app.settle()
    }

    /// Runs `body` on a recording runtime; returns the recording's directory.
    func recorded(_ body: (TestRuntime) async throws -> Void, units: [String] = appUnits, configure: (inout RuntimeConfig) -> Void = { _ in }) async throws -> String {
        let dir = NSTemporaryDirectory() + "hearth-recording-" + UUID().uuidString
        let app = try await TestRuntime(units: units, start: Self.newYear, configure: configure)
        try await app.record(to: dir)
        try await body(app)
        await app.stopRecording()
        return dir
    }

    @Test("a recorded session holds every kind of invocation, and replays against the same code with no divergence")
    func handlerReplay() async throws {
        let dir = try await recorded(Self.session)
        let recording = try Recording.read(dir)
        let kinds = Set(recording.invocations.map(\.kind))
        #expect(kinds == ["callable", "document", "task", "schedule", "user"], "\(kinds)")
        #expect(recording.invocations.contains { $0.function == "sendPushNotification" && $0.calls.contains { $0.operation == .sendMessage } })
        #expect(recording.inputs.contains { if case .write = $0.kind { return true } else { return false } })
        #expect(recording.inputs.contains { if case .userDeleted("bo") = $0.kind { return true } else { return false } })
        #expect(!recording.changes.isEmpty)
        let report = try await Replay(file: dir, units: appUnits).handler()
        #expect(report.divergences.isEmpty, "\(report)")
        #expect(report.replayed == recording.invocations.count)
    }

    @Test("system replay from an empty store ends with the recorded documents and pushes, twice with the same store hash")
    func systemReplay() async throws {
        let dir = try await recorded(Self.session)
        let replay = try Replay(file: dir, units: appUnits)
        let once = try await replay.system()
        #expect(once.divergences.isEmpty, "\(once)")
        #expect(once.documents > 10)
        let twice = try await replay.system()
        #expect(twice.divergences.isEmpty, "\(twice)")
        #expect(once.storeHash != nil && once.storeHash == twice.storeHash)
    }

    @Test("a changed unit diverges: a different result and a different write, each with a readable diff")
    func changedUnit() async throws {
        let dir = try await recorded({ app in
            _ = try await app.call("swapVersion")
            try await app.write(["swap/a": ["n": 1]])
            await app.settle()
        }, units: [], configure: { $0.units = [RuntimeConfig.Unit(name: "Swap", path: RuntimeConfig.executableDirectory + "/libSwapV1.so")] })
        let report = try await Replay(file: dir, units: ["Swap"], libraries: ["Swap": "libSwapV2.so"]).handler()
        let outcome = try #require(report.divergences.first { $0.kind == .differentOutcome && $0.function == "swapVersion" }, "\(report)")
        #expect(outcome.diff.contains("- result: \"v1\"") && outcome.diff.contains("+ result: \"v2\""), "\(outcome.diff)")
        let write = try #require(report.divergences.first { $0.kind == .differentArgument && $0.function == "swapLog" }, "\(report)")
        #expect(write.diff.contains("v1") && write.diff.contains("v2"), "\(write.diff)")
        #expect(!report.passed)
    }

    @Test("system replay from an export taken when the recording began reproduces a session that worked on existing data; from an empty store it diverges")
    func systemReplayFromExport() async throws {
        let dir = NSTemporaryDirectory() + "hearth-recording-" + UUID().uuidString
        let snapshot = dir + "-export"
        defer { for d in [dir, snapshot] { try? FileManager.default.removeItem(atPath: d) } }
        let app = try await TestRuntime(units: appUnits, start: Self.newYear)
        try await app.member("cy")
        let made = try await app.call("createItem", ["title": "before the recording", "category": "work"], as: "cy")
        let id = try #require(made["itemId"]?.stringValue)
        await app.settle()
        _ = try await app.runtime.exportData(to: snapshot)
        try await app.record(to: dir)
        _ = try await app.call("deleteItem", ["itemId": .string(id)], as: "cy")
        _ = try await app.call("createItem", ["title": "during the recording"], as: "cy")
        await app.settle()
        await app.stopRecording()

        let replay = try Replay(file: dir, units: appUnits)
        let seeded = try await replay.system(from: snapshot)
        #expect(seeded.divergences.isEmpty, "\(seeded)")
        let empty = try await replay.system()
        #expect(empty.divergences.contains { $0.kind == .differentOutcome && $0.function == "deleteItem" }, "the item is not there to delete: \(empty)")
    }
}
