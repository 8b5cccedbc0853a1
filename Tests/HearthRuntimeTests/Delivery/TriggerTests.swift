import Foundation
import HearthAuth
import HearthModel
@_spi(Internals) @testable import HearthRuntime
import HearthStore
import HearthTesting
import Testing

@Suite("Document and auth triggers")
struct TriggerTests {
    func app() async throws -> TestRuntime { try await TestRuntime(units: ["DeliveryUnit"]) }

    @Test("a write reaches the matching trigger with params, kind and the documents before and after")
    func documentEvent() async throws {
        let app = try await app()
        try await app.write(["items/a": ["n": 1]])
        try await app.write(["items/a": ["n": 2]])
        try await app.delete("items/a")
        try await app.write(["other/a": ["n": 1], "items/a/sub/x": ["n": 9]])  // not items/{itemId}
        await app.settle()
        let runs = try await app.documents(in: "runs").filter { $0.fields["function"] == "recordWrite" }
        #expect(runs.map { $0.fields["kind"] } == ["created", "updated", "deleted"])
        #expect(runs.allSatisfy { $0.fields["item"] == "a" && $0.fields["count"] == 1 })
        #expect(try await app.document("orderLog/a")?.fields["seen"] == [1, 2, .null])
    }

    @Test("changes to one document reach a function in commit order; other documents run in parallel")
    func perDocumentOrder() async throws {
        let app = try await app()
        for n in 1...20 {
            try await app.write(["items/x": ["n": .int(Int64(n))], "items/y": ["n": .int(Int64(100 + n))]])
        }
        await app.settle()
        #expect(try await app.document("orderLog/x")?.fields["seen"] == .array((1...20).map { .int(Int64($0)) }))
        #expect(try await app.document("orderLog/y")?.fields["seen"] == .array((101...120).map { .int(Int64($0)) }))
        let counts = try await app.documents(in: "runs").map { $0.fields["count"] }
        #expect(counts.count == 40 && counts.allSatisfy { $0 == 1 }, "each change ran exactly once")
    }

    @Test("a new trigger function starts at the end of the feed")
    func startsAtEnd() async throws {
        let dir = NSTemporaryDirectory() + "hearth-trigger-\(UUID().uuidString)"
        // First the store gets writes while no trigger function is loaded…
        do {
            let before = try await TestRuntime(units: ["EchoUnit"], configure: { $0.dataDirectory = dir })
            try await before.write(["items/old": ["n": 1]])
        }
        // …then a unit with a trigger on items/{itemId} arrives: it sees only what comes after.
        let app = try await TestRuntime(units: ["DeliveryUnit"], configure: { $0.dataDirectory = dir })
        try await app.write(["items/new": ["n": 2]])
        await app.settle()
        let items = try await app.documents(in: "runs").compactMap { $0.fields["item"]?.stringValue }
        #expect(items == ["new"])
    }

    @Test("retry: true retries a failing trigger with backoff until it succeeds")
    func triggerRetry() async throws {
        let app = try await app()
        let start = app.clock.now()
        try await app.write(["flaky/f1": ["failTimes": 2]])
        await app.settle()
        #expect(try await app.document("flakyAttempts/f1")?.fields["n"] == 1)
        let pending = try #require(try app.deliveries(function: "flaky").first)
        #expect(pending.dueTime == pending.firstAttemptTime! + .seconds(10), "event retries start at 10 s")
        await app.advance(by: .seconds(10))
        #expect(try await app.document("flakyAttempts/f1")?.fields["n"] == 2)
        await app.advance(by: .seconds(20))
        #expect(try await app.document("flakyAttempts/f1")?.fields["n"] == 3)
        let run = try #require(try await app.documents(in: "runs").first { $0.fields["function"] == "flaky" })
        #expect(run.fields["attempts"] == 3)
        #expect(try app.deliveries().isEmpty)
        #expect(app.clock.now() - start == .seconds(30))
    }

    @Test("without retry a failing trigger goes to dead letters, not silently away")
    func triggerDeadLetter() async throws {
        let app = try await app()
        try await app.write(["broken/b1": ["x": 1]])
        await app.settle()
        let dead = try #require(try app.deliveries(function: "broken", state: .dead).first)
        #expect(dead.attempts == 1)
        #expect(dead.lastError == "internal: always fails on broken/b1")
        guard case .document(let event) = try dead.event() else { Issue.record("not a document event"); return }
        #expect(event.path.description == "broken/b1")
        #expect(app.runtime.engine.stats.counters["broken"]?.dead == 1)
    }

    @Test("onDocumentDeleted sees the document as it was")
    func deletedTrigger() async throws {
        let app = try await app()
        try await app.write(["lists/l1": ["title": "groceries"]])
        try await app.delete("lists/l1")
        await app.settle()
        let run = try #require(try await app.documents(in: "runs").first { $0.fields["function"] == "cleanup" })
        #expect(run.fields["hadTitle"] == "groceries")
        #expect(run.fields["list"] == "l1")
    }

    @Test("auth triggers: a created user gets a profile; a deleted user's data is removed")
    func authTriggers() async throws {
        let app = try await app()
        try await app.createUser(NewUser(uid: "u1", email: "u1@example.com"))
        await app.settle()
        #expect(try await app.document("profiles/u1")?.fields["email"] == "u1@example.com")
        try await app.write(["members/u1": ["a": 1], "members/u1/items/i1": ["b": 2], "members/u2": ["c": 3]])
        try await app.deleteUser("u1")
        await app.settle()
        #expect(try await app.document("members/u1") == nil)
        #expect(try await app.document("members/u1/items/i1") == nil)
        #expect(try await app.document("members/u2") != nil)
        #expect(try await app.documents(in: "runs").contains { $0.fields["function"] == "purge" && $0.fields["uid"] == "u1" })
    }

    @Test("deliveries a process left running are taken back when it starts again")
    func recoveryAfterRestart() async throws {
        let dir = NSTemporaryDirectory() + "hearth-recover-\(UUID().uuidString)"
        do {
            let first = try await TestRuntime(units: ["DeliveryUnit"], configure: { $0.dataDirectory = dir })
            try await first.enqueue("slow", ["sleep": 30], id: "interrupted")
            await first.settle()
            #expect(await first.runtime.engine.runningCount == 1)
            // The process "dies": the engine stops without letting the attempt finish.
            await first.runtime.engine.stop(grace: .zero)
            #expect(try first.deliveries(function: "slow").first?.state == .running)
        }
        let second = try await TestRuntime(units: ["DeliveryUnit"], configure: { $0.dataDirectory = dir })
        #expect(try second.deliveries(function: "slow").first?.state == .pending, "same node id: taken back at start")
        await second.advance(by: .seconds(30))
        #expect(try await second.document("runs/slow-interrupted")?.fields["count"] == 1)
    }

    @Test("stopping lets running deliveries finish within the grace period and records them; no new ones start")
    func gracefulStop() async throws {
        let app = try await app()
        for i in 0..<3 { try await app.enqueue("slow", ["sleep": 5], id: "g\(i)") }
        await app.settle()
        #expect(await app.runtime.engine.runningCount == 2, "the queue runs two at once")
        let engine = app.runtime.engine
        let stopping = Task { await engine.stop(grace: .seconds(60)) }
        // The running handlers (asleep on the clock since `settle`) finish while the engine stops.
        #expect(app.clock.sleeperCount == 3, "the two handlers, and the invoker's one timer for their timeouts")
        app.clock.advance(by: .seconds(5))
        await stopping.value
        #expect(await engine.runningCount == 0)
        let left = try app.deliveries(function: "slow")
        #expect(left.map(\.eventID) == ["g2"], "the finished ones were recorded; the third never started")
        #expect(left.first?.state == .pending)
        #expect(try await app.document("runs/slow-g0")?.fields["count"] == 1)
    }
}
