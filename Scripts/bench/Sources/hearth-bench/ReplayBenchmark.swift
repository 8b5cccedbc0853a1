import Foundation
import HearthModel
import HearthRuntime
import HearthTesting

/// Recording and replay in this process (BenchUnit: a callable that creates a document, and its
/// onDocumentCreated trigger that writes a log document): recording 10,000 invocations
/// (HEARTH_BENCH_INVOCATIONS to change it), then handler replay and system replay of them; and the
/// in-process cost of recording, baseline and recording runs alternated in the same process.
func runReplayBenchmark() async throws {
    printHeader("Recording and replay (BenchUnit, in-process)", command: "Scripts/bench/replay")
    let invocations = Int(ProcessInfo.processInfo.environment["HEARTH_BENCH_INVOCATIONS"] ?? "") ?? 10_000
    let calls = max(1, invocations / 2)
    let clock = ContinuousClock()

    /// `count` creates, 16 at a time, then the triggers settled; the seconds taken.
    func workload(_ app: TestRuntime, _ count: Int) async throws -> Double {
        let start = clock.now
        try await withThrowingTaskGroup(of: Void.self) { group in
            for lane in 0..<16 {
                group.addTask {
                    for i in stride(from: lane, to: count, by: 16) { _ = try await app.call("benchCreate", ["title": "buy milk and eggs", "n": .int(Int64(i))]) }
                }
            }
            try await group.waitForAll()
        }
        await app.settle()
        return (clock.now - start).seconds
    }

    // The cost of recording: baseline and recording alternated, 3 rounds each.
    var plain: [Double] = [], recorded: [Double] = []
    let round = min(calls, 2_500)
    for _ in 0..<3 {
        let a = try await TestRuntime(units: ["BenchUnit"])
        plain.append(try await workload(a, round))
        let b = try await TestRuntime(units: ["BenchUnit"])
        let dir = NSTemporaryDirectory() + "hearth-bench-rec-\(getpid())-\(UUID().uuidString)"
        try await b.record(to: dir)
        recorded.append(try await workload(b, round))
        await b.stopRecording()
        try? FileManager.default.removeItem(atPath: dir)
    }
    let p = median(plain), r = median(recorded)
    print("write+trigger in-process, \(round) creates (\(round * 2) invocations), median of 3:")
    print("  without recording  \(fmt(Double(round) / p, 0)) creates/s")
    print("  recording          \(fmt(Double(round) / r, 0)) creates/s   (+\(fmt((r / p - 1) * 100, 1))% time)")

    // A recording of `invocations`, then both replays of it.
    let dir = NSTemporaryDirectory() + "hearth-bench-replay-\(getpid())"
    try? FileManager.default.removeItem(atPath: dir)
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let app = try await TestRuntime(units: ["BenchUnit"])
    try await app.record(to: dir)
    let recordSeconds = try await workload(app, calls)
    await app.stopRecording()
    let bytes = try Recording.files(at: dir).reduce(0) { $0 + ((try? FileManager.default.attributesOfItem(atPath: $1)[.size] as? Int) ?? 0) }
    var t = clock.now
    let replay = try Replay(file: dir, units: ["BenchUnit"])
    let readSeconds = (clock.now - t).seconds
    let count = replay.recording.invocations.count
    print("\nrecorded \(count) invocations in \(fmt(recordSeconds, 2)) s: \(fmt(Double(bytes) / 1_048_576, 1)) MiB in \(try Recording.files(at: dir).count) file(s); read back in \(fmt(readSeconds, 2)) s")
    t = clock.now
    let handler = try await replay.handler()
    let handlerSeconds = (clock.now - t).seconds
    print("handler replay: \(handler.replayed) invocations in \(fmt(handlerSeconds, 2)) s = \(fmt(Double(handler.replayed) / handlerSeconds, 0))/s, \(handler.divergences.count) divergences (aim: 10,000 in ≤ 10 s)")
    t = clock.now
    let system = try await replay.system()
    let systemSeconds = (clock.now - t).seconds
    print("system replay:  \(system.replayed) invocations in \(fmt(systemSeconds, 2)) s = \(fmt(Double(system.replayed) / systemSeconds, 0))/s, \(system.documents) documents compared, \(system.divergences.count) divergences")
    print("  store hash \(system.storeHash ?? "-")")
    guard handler.passed, system.passed else { throw SubprocessError("a replay diverged:\n\(handler.divergences.prefix(3))\n\(system.divergences.prefix(3))") }
}

private func median(_ xs: [Double]) -> Double { xs.sorted()[xs.count / 2] }
