import Foundation
import HearthAuth
import HearthHTTP
import HearthModel
@_spi(Internals) import HearthRuntime

/// The app's own workloads through the real units (release builds, a ManualClock): the reminder
/// tick for 10,000 members × 3 items due tomorrow, the pushes it queues (log mode), and deleting
/// a member with 10,000 documents.
func runAppBenchmark() async throws {
    printHeader("The app: a reminder tick, its pushes, an account's deletion (release units, virtual time)", command: "Scripts/bench/app")
    let members = Int(ProcessInfo.processInfo.environment["HEARTH_BENCH_MEMBERS"] ?? "") ?? 10_000
    let start = Timestamp(seconds: 1_767_225_600)  // 09:00 in Seoul
    let app = try await TestRuntime(units: ["Members", "Items", "Reminders", "AccountCleanup"], start: start) { config in
        config.log.level = .error
        config.delivery.defaultConcurrency = 64
    }
    // Members in Seoul with their reminder at 09:05, each with 3 open items due tomorrow.
    let due = Value.timestamp(start + .seconds(20 * 3600))
    var docs: [(String, Value)] = []
    docs.reserveCapacity(members * 5)
    for m in 0..<members {
        let root = "members/m\(m)"
        docs.append(("\(root)/profiles/settings", ["pushEnabled": true, "reminderHour": 9, "reminderMinute": 5, "timeZone": "Asia/Seoul"]))
        docs.append(("\(root)/profiles/secrets", ["fcmToken": .string("token-\(m)")]))
        for i in 0..<3 { docs.append(("\(root)/items/i\(i)", ["title": .string("item \(i)"), "isDone": false, "deletedAt": .null, "targetDate": due])) }
    }
    let seedClock = ContinuousClock()
    let seedStart = seedClock.now
    for chunk in stride(from: 0, to: docs.count, by: 500) {
        var writes: [DocumentWrite] = []
        for (path, value) in docs[chunk..<min(chunk + 500, docs.count)] { writes.append(.set(try DocumentPath(path), value.mapValue ?? [:])) }
        _ = try await app.runtime.documents.commit(writes)
    }
    print("seeded \(members) members, \(docs.count) documents in \(fmt((seedClock.now - seedStart).seconds, 1)) s")
    await app.settle()

    // The tick at 09:05 (virtual): wall time until every task is queued.
    let cpu0 = processCPUSeconds()
    let tickStart = seedClock.now
    app.clock.advance(to: start + .seconds(300))
    await app.runtime.engine.settle()
    let tickSeconds = (seedClock.now - tickStart).seconds
    let queued = try app.deliveries(function: "sendPushNotification").count
    print("tick: \(queued) tasks queued in \(fmt(tickSeconds, 2)) s = \(fmt(Double(queued) / tickSeconds, 0)) tasks/s   CPU \(fmt((processCPUSeconds() - cpu0) / Double(max(queued, 1)) * 1e6, 0)) µs per task")

    // The pushes: at most 10 a second by the queue's limit, so virtual time moves 0.1 s a push;
    // the wall time is what the host spends sending (log mode: into the outbox).
    let pushes = min(queued, 3000)
    let cpu1 = processCPUSeconds()
    let pushStart = seedClock.now
    await app.advance(by: .seconds(Int64(pushes / 10 + 1)))
    let pushSeconds = (seedClock.now - pushStart).seconds
    let sent = try app.runtime.outbox(limit: 100_000).count
    print("pushes (log mode): \(sent) sent in \(fmt(pushSeconds, 2)) s of wall time (\(pushes / 10 + 1) s virtual) = \(fmt(Double(sent) / pushSeconds, 0)) pushes/s   CPU \(fmt((processCPUSeconds() - cpu1) / Double(max(sent, 1)) * 1e6, 0)) µs per push")

    // Deleting an account with 10,000 documents (onUserDeleted → recursive delete in batches).
    var big: [DocumentWrite] = []
    for i in 0..<10_000 { big.append(.set(try DocumentPath("members/big/items/i\(i)"), ["n": .int(Int64(i))])) }
    for chunk in stride(from: 0, to: big.count, by: 500) { _ = try await app.runtime.documents.commit(Array(big[chunk..<min(chunk + 500, big.count)])) }
    _ = try await app.createUser(NewUser(uid: "big"))
    await app.settle()
    let delStart = seedClock.now
    try await app.deleteUser("big")
    await app.settle()
    let delSeconds = (seedClock.now - delStart).seconds
    let left = try await app.runtime.documents.paths(under: ["members", "big"]).count
    print("account deletion: 10,000 documents in \(fmt(delSeconds, 2)) s = \(fmt(10_000 / delSeconds, 0)) documents/s (\(left) left)")
    try await runFakeFCMPushes(start: start)
}

/// The same pushes through the fcm mode against a local fake FCM that answers after 20 ms (and a
/// fake OAuth token endpoint), 1,002 of them.
func runFakeFCMPushes(start: Timestamp) async throws {
    let key = try Key.generateRSA()
    let fake = HTTPServer(configuration: HTTPServer.Configuration()) { request in
        if request.path == "/token" { return .json(["access_token": "bench-token", "expires_in": 3600]) }
        try? await Task.sleep(for: .milliseconds(20))
        return .json(["name": "projects/bench/messages/1"])
    }
    try fake.start()
    let base = "http://127.0.0.1:\(fake.port)"
    let file = NSTemporaryDirectory() + "hearth-bench-sa-\(getpid()).json"
    try Data(JSONWriter.encode(["project_id": "bench", "client_email": "bench@bench.iam.gserviceaccount.com", "private_key_id": "k",
                                "private_key": .string(try key.privatePEM()), "token_uri": .string(base + "/token")])).write(to: URL(fileURLWithPath: file))
    defer { try? FileManager.default.removeItem(atPath: file) }
    let app = try await TestRuntime(units: ["Members", "Items", "Reminders"], start: start) { config in
        config.log.level = .error
        config.messaging.serviceAccountFile = file
        config.messaging.fcmURL = base
    }
    let members = 334
    let due = Value.timestamp(start + .seconds(20 * 3600))
    var writes: [DocumentWrite] = []
    for m in 0..<members {
        let root = "members/m\(m)"
        writes.append(.set(try DocumentPath("\(root)/profiles/settings"), ["pushEnabled": true, "reminderHour": 9, "reminderMinute": 5, "timeZone": "Asia/Seoul"]))
        writes.append(.set(try DocumentPath("\(root)/profiles/secrets"), ["fcmToken": .string("token-\(m)")]))
        for i in 0..<3 { writes.append(.set(try DocumentPath("\(root)/items/i\(i)"), ["title": "t", "isDone": false, "deletedAt": .null, "targetDate": due])) }
    }
    for chunk in stride(from: 0, to: writes.count, by: 500) { _ = try await app.runtime.documents.commit(Array(writes[chunk..<min(chunk + 500, writes.count)])) }
    await app.settle()
    app.clock.advance(to: start + .seconds(300))
    await app.runtime.engine.settle()
    let wall = ContinuousClock()
    let cpu = processCPUSeconds()
    let t0 = wall.now
    await app.advance(by: .seconds(Int64(members * 3 / 10 + 1)))
    let seconds = (wall.now - t0).seconds
    let sent = try app.runtime.outbox(limit: 100_000).filter { $0.outcome == "sent" }.count
    print("pushes (fcm mode, fake FCM answering in 20 ms): \(sent) sent in \(fmt(seconds, 2)) s of wall time = \(fmt(Double(sent) / seconds, 0)) pushes/s   CPU \(fmt((processCPUSeconds() - cpu) / Double(max(sent, 1)) * 1e6, 0)) µs per push")
    await fake.shutdown(grace: .seconds(1))
}
