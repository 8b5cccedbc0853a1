import Foundation
import HearthModel
import HearthRuntime
import HearthStore

/// The delivery engine on the system clock, in-process, with DeliveryUnit's no-op functions:
/// trigger latency (commit to the start of the trigger's attempt) at a steady 1,000 writes/s and
/// at the highest rate the writers reach; no-op task throughput; rate-limit accuracy; and a
/// schedule tick that enqueues 100,000 tasks.
func runDeliveryBenchmark() async throws {
    printHeader("Delivery engine: trigger latency, task throughput, rate limits, schedule fan-out", command: "Scripts/bench/delivery")
    var config = RuntimeConfig()
    config.units = [RuntimeConfig.Unit(name: "DeliveryUnit")]
    config.delivery.recordsTriggerLatency = true
    config.dataDirectory = NSTemporaryDirectory() + "hearth-bench-delivery-\(getpid())"
    defer { try? FileManager.default.removeItem(atPath: config.dataDirectory) }
    let runtime = try await Runtime.open(config: config, log: RuntimeLog(level: .error))
    await runtime.loadUnits()
    guard runtime.loadErrors.isEmpty else {
        print("error: cannot load DeliveryUnit: \(runtime.loadErrors)")
        exit(1)
    }
    try await runtime.startDeliveries(driving: true)
    let stats = runtime.engine.stats
    let clock = ContinuousClock()

    func succeeded(_ function: String) -> Int { stats.counters[function]?.succeeded ?? 0 }
    func waitFor(_ function: String, count: Int, seconds: Double = 300) async throws -> Duration {
        let start = clock.now
        while succeeded(function) < count {
            guard clock.now - start < .seconds(seconds) else { throw HTTPSError(.deadlineExceeded, "\(function): \(succeeded(function)) of \(count) after \(seconds) s") }
            try await Task.sleep(for: .milliseconds(1))
        }
        return clock.now - start
    }
    func report(_ label: String, _ samples: [Double]) {
        let s = samples.sorted()
        print("\(label.padding(toLength: 56, withPad: " ", startingAt: 0)) n=\(s.count)  p50 \(fmt(percentile(s, 50) * 1e3, 3)) ms  p99 \(fmt(percentile(s, 99) * 1e3, 3)) ms  max \(fmt((s.last ?? .nan) * 1e3, 3)) ms")
    }
    let collection = try CollectionPath("bench")
    var nextDoc = 0
    func write() async throws {
        nextDoc += 1
        try await runtime.documents.commit([.create(try collection.document("d\(nextDoc)"), ["n": .int(Int64(nextDoc))])])
    }

    // 1. Steady 1,000 writes per second for 5 s, each on its own schedule (no catching up in bursts).
    _ = stats.takeLatencies()
    let steadyCount = 5000
    let steadyStart = clock.now
    for i in 0..<steadyCount {
        let due = steadyStart + .milliseconds(i)
        if clock.now < due { try await Task.sleep(until: due, clock: clock) }
        try await write()
    }
    let steadyElapsed = clock.now - steadyStart
    _ = try await waitFor("benchTrigger", count: steadyCount)
    report("trigger latency at \(fmt(Double(steadyCount) / steadyElapsed.seconds, 0)) writes/s (steady)", stats.takeLatencies())

    // 2. As fast as 4 writers go for 5 s; the engine must keep up (all delivered soon after).
    let before = succeeded("benchTrigger")
    let burstStart = clock.now
    var written = 0
    await withTaskGroup(of: Int.self) { group in
        for w in 0..<4 {
            group.addTask {
                var n = 0
                while clock.now - burstStart < .seconds(5) {
                    _ = try? await runtime.documents.commit([.create(try! collection.document("w\(w)-\(n)"), ["n": .int(Int64(n))])])
                    n += 1
                }
                return n
            }
        }
        for await n in group { written += n }
    }
    let writeSeconds = (clock.now - burstStart).seconds
    let drain = try await waitFor("benchTrigger", count: before + written)
    let deliverySeconds = (clock.now - burstStart).seconds
    report("trigger latency at \(fmt(Double(written) / writeSeconds, 0)) writes/s (4 writers, max)", stats.takeLatencies())
    print("  \(written) writes in \(fmt(writeSeconds, 2)) s; all triggers ran \(fmt(drain.seconds, 2)) s after the last write: \(fmt(Double(written) / deliverySeconds, 0)) deliveries/s")

    // 3. No-op task throughput: 50,000 tasks enqueued in commits of 500, then drained.
    let taskCount = 50_000
    let enqueueStart = clock.now
    for batch in stride(from: 0, to: taskCount, by: 500) {
        _ = try await runtime.enqueue((batch..<batch + 500).map { TaskSpec(queue: "noop", data: .int(Int64($0))) })
    }
    let enqueueSeconds = (clock.now - enqueueStart).seconds
    _ = try await waitFor("noop", count: taskCount)
    let taskSeconds = (clock.now - enqueueStart).seconds
    print("no-op tasks: \(taskCount) enqueued at \(fmt(Double(taskCount) / enqueueSeconds, 0))/s; all run in \(fmt(taskSeconds, 2)) s: \(fmt(Double(taskCount) / taskSeconds, 0)) tasks/s")

    // 4. Rate limit: a queue limited to 200/s with plenty waiting, counted over 10 s.
    _ = try await runtime.enqueue((0..<3000).map { TaskSpec(queue: "paced", data: .int(Int64($0))) })
    try await Task.sleep(for: .seconds(1))  // past the first burst
    let pacedStart = succeeded("paced")
    let pacedClock = clock.now
    try await Task.sleep(for: .seconds(10))
    let pacedCount = succeeded("paced") - pacedStart
    let pacedRate = Double(pacedCount) / (clock.now - pacedClock).seconds
    print("rate limit 200/s over 10 s: \(pacedCount) dispatches = \(fmt(pacedRate, 1))/s (\(fmt((pacedRate / 200 - 1) * 100, 2))% off)")

    // 5. A schedule tick that enqueues 100,000 tasks.
    let noopBefore = succeeded("noop")
    let tickStart = clock.now
    try await runtime.runScheduleNow("fanOutTick")
    let tickSeconds = try await waitFor("fanOutTick", count: 1, seconds: 900).seconds
    let drainSeconds = try await waitFor("noop", count: noopBefore + 100_000, seconds: 900).seconds + tickSeconds
    _ = tickStart
    print("schedule fan-out: one tick enqueued 100,000 tasks in \(fmt(tickSeconds, 2)) s; all 100,000 ran \(fmt(drainSeconds, 2)) s after the tick started")

    await runtime.engine.stop(grace: .seconds(5))
    runtime.close()
}
