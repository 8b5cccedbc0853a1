import Foundation
import HearthModel
@_spi(Internals) @testable import HearthRuntime
import HearthStore
import HearthTesting
import Testing

/// Task queues driven by a ManualClock: nothing here waits on the wall clock for time to pass.
@Suite("Task queues")
struct TaskQueueTests {
    func app() async throws -> TestRuntime { try await TestRuntime(units: ["DeliveryUnit"]) }

    func run(_ app: TestRuntime, _ function: String, _ event: String) async throws -> [String: Value]? {
        try await app.document("runs/\(function)-\(event)")?.fields
    }

    @Test("a task runs once it is due, with Firebase's request fields")
    func runsWhenDue() async throws {
        let app = try await app()
        let start = app.clock.now()
        let id = try await app.call("enqueue", ["queue": "work", "data": ["label": "hello"], "delaySeconds": 30]).stringValue!
        #expect(id.count == 20)
        await app.settle()
        #expect(try await run(app, "work", id) == nil, "not due yet")
        await app.advance(by: .seconds(29))
        #expect(try await run(app, "work", id) == nil)
        await app.advance(by: .seconds(1))
        let fields = try #require(try await run(app, "work", id))
        #expect(fields["count"] == 1)
        #expect(fields["label"] == "hello")
        #expect(fields["queue"] == "work")
        #expect(fields["retryCount"] == 0)
        #expect(fields["executionCount"] == 0)
        #expect(fields["scheduledTime"] == .timestamp(start + .seconds(30)))
        #expect(fields["ranAt"] == .timestamp(start + .seconds(30)))
        #expect(fields["previousResponse"] == .null)
        #expect(try app.deliveries().isEmpty, "a success leaves nothing queued")
    }

    @Test("failures are retried with the queue's backoff, then dead-lettered with the last error")
    func retriesThenDeadLetter() async throws {
        let app = try await app()
        let start = app.clock.now()
        // work: 3 attempts, backoff 1 s doubling to 10 s. failUntil 5: every attempt fails.
        let id = try await app.enqueue("work", ["failUntil": 5])
        await app.settle()
        #expect(try await run(app, "work", id)?["count"] == 1)
        let pending = try #require(try app.deliveries(function: "work").first)
        #expect(pending.state == .pending)
        #expect(pending.dueTime == start + .seconds(1))
        #expect(pending.lastStatus == 503)
        #expect(pending.lastError == "unavailable: failing attempt 1")
        await app.advance(by: .seconds(1))
        let second = try #require(try await run(app, "work", id))
        #expect(second["count"] == 2)
        #expect(second["retryCount"] == 1)
        #expect(second["previousResponse"] == 503)
        #expect(second["retryReason"] == "unavailable: failing attempt 1")
        #expect(second["ranAt"] == .timestamp(start + .seconds(1)))
        await app.advance(by: .seconds(1.5))
        #expect(try await run(app, "work", id)?["count"] == 2, "the second retry waits 2 s")
        await app.advance(by: .seconds(0.5))
        #expect(try await run(app, "work", id)?["count"] == 3)
        #expect(try await run(app, "work", id)?["ranAt"] == .timestamp(start + .seconds(3)))
        let dead = try #require(try app.deliveries(function: "work").first)
        #expect(dead.state == .dead)
        #expect(dead.attempts == 3)
        #expect(dead.lastError == "unavailable: failing attempt 3")
        await app.advance(by: .seconds(3600))
        #expect(try await run(app, "work", id)?["count"] == 3, "a dead letter is not run again by itself")

        // Retrying the dead letter starts it over; dropping removes it.
        try await app.runtime.retryDelivery(dead.id)
        await app.settle()
        #expect(try await run(app, "work", id)?["count"] == 4)
        #expect(try app.deliveries(function: "work").first?.state == .pending)
        await app.advance(by: .seconds(10))
        let again = try #require(try app.deliveries(function: "work").first)
        #expect(again.state == .dead)
        try await app.runtime.dropDelivery(again.id)
        #expect(try app.deliveries().isEmpty)
        await #expect(throws: HTTPSError.self) { try await app.runtime.dropDelivery(again.id) }
    }

    @Test("executionCount counts earlier attempts the handler answered, leaving out 5xx failures, as Cloud Tasks does")
    func executionCount() async throws {
        let app = try await app()
        // Attempt 1 fails with 400, attempt 2 with 503, attempt 3 succeeds.
        let id = try await app.enqueue("work", ["failCodes": ["failed-precondition", "unavailable"]])
        await app.settle()
        let first = try #require(try app.deliveries(function: "work").first)
        #expect(first.lastStatus == 400)
        #expect(first.executions == 1)
        await app.advance(by: .seconds(1))
        let second = try #require(try await run(app, "work", id))
        #expect(second["retryCount"] == 1)
        #expect(second["executionCount"] == 1)
        #expect(second["previousResponse"] == 400)
        #expect(try app.deliveries(function: "work").first?.executions == 1, "a 503 is not an execution")
        await app.advance(by: .seconds(2))
        let third = try #require(try await run(app, "work", id))
        #expect(third["count"] == 3)
        #expect(third["retryCount"] == 2)
        #expect(third["executionCount"] == 1)
        #expect(third["previousResponse"] == 503)
        #expect(try app.deliveries().isEmpty)
    }

    @Test("a task that succeeds on a retry stops there")
    func succeedsOnRetry() async throws {
        let app = try await app()
        let id = try await app.enqueue("work", ["failUntil": 1])
        await app.advance(by: .seconds(5))
        #expect(try await run(app, "work", id)?["count"] == 2)
        #expect(try app.deliveries().isEmpty)
        #expect(app.runtime.engine.stats.counters["work"]?.succeeded == 1)
        #expect(app.runtime.engine.stats.counters["work"]?.failed == 1)
    }

    @Test("100 tasks at 10 per second finish at t = 10 s, within one token")
    func rateLimit() async throws {
        let app = try await app()
        let start = app.clock.now()
        for i in 0..<100 { try await app.enqueue("work", ["label": .string("t\(i)")]) }
        await app.advance(by: .seconds(5))
        let halfway = try await app.documents(in: "runs").count
        #expect((50...51).contains(halfway), "5 s at 10/s: \(halfway)")
        await app.advance(by: .seconds(10))
        let runs = try await app.documents(in: "runs")
        #expect(runs.count == 100)
        let times = runs.compactMap { $0.fields["ranAt"]?.timestampValue }.sorted()
        let last = try #require(times.last)
        #expect(last - start >= .seconds(9.89) && last - start <= .seconds(10.1), "last ran at +\((last - start).secondsDouble) s")
        // No two dispatches closer than one token (0.1 s).
        for (a, b) in zip(times, times.dropFirst()) { #expect(b - a >= .seconds(0.0999)) }
    }

    @Test("a concurrency cap holds: two at once, the rest wait their turn")
    func concurrencyCap() async throws {
        let app = try await app()
        for i in 0..<5 { try await app.enqueue("slow", ["sleep": 10], id: "s\(i)") }
        await app.settle()
        #expect(await app.runtime.engine.runningCount == 2)
        await app.advance(by: .seconds(10))
        #expect(try await app.documents(in: "runs").count == 2)
        #expect(await app.runtime.engine.runningCount == 2)
        await app.advance(by: .seconds(20))
        #expect(try await app.documents(in: "runs").count == 5)
        let finished = try await app.documents(in: "runs").compactMap { $0.fields["ranAt"]?.timestampValue }.sorted()
        let start = finished[0] - .seconds(10)
        #expect(finished.map { ($0 - start).secondsDouble } == [10, 10, 20, 20, 30])
    }

    @Test("an attempt past its dispatch deadline fails as DEADLINE_EXCEEDED and is retried")
    func dispatchDeadline() async throws {
        let app = try await app()
        let id = try await app.enqueue("timeboxed", ["sleep": 120])
        await app.advance(by: .seconds(30))
        let d = try #require(try app.deliveries(function: "timeboxed").first)
        #expect(d.state == .pending)
        #expect(d.lastStatus == 504)
        #expect(d.lastError?.hasPrefix("deadline-exceeded") == true)
        #expect(d.eventID == id)
    }

    @Test("task ids dedupe within the window; enqueue options are checked")
    func enqueueRules() async throws {
        let app = try await app()
        _ = try await app.call("enqueue", ["queue": "work", "id": "fixed-1", "data": [:]])
        do {
            _ = try await app.call("enqueue", ["queue": "work", "id": "fixed-1", "data": [:]])
            Issue.record("a duplicate id was accepted")
        } catch let e as HTTPSError {
            #expect(e.code == .alreadyExists)
        }
        await app.settle()
        // Still reserved after it ran, until the window (24 h) passes.
        await #expect(throws: HTTPSError.self) { try await app.call("enqueue", ["queue": "work", "id": "fixed-1"]) }
        await app.advance(by: .seconds(86_401))
        _ = try await app.call("enqueue", ["queue": "work", "id": "fixed-1"])

        let bad: [(Value, FunctionsErrorCode, String)] = [
            (["queue": "work", "delaySeconds": 5, "scheduleTime": .timestamp(app.clock.now())], .invalidArgument, "not both"),
            (["queue": "work", "delaySeconds": 2_678_400], .invalidArgument, "30 days"),
            (["queue": "work", "id": "has space"], .invalidArgument, "task id"),
            (["queue": "work", "id": .string(String(repeating: "a", count: 501))], .invalidArgument, "task id"),
            (["queue": "nope"], .notFound, "no task queue"),
            (["queue": "recordWrite"], .notFound, "no task queue"),
            (["queue": "work", "deadlineSeconds": 5], .invalidArgument, "dispatch deadline must be between 15 and 1800 seconds"),
            (["queue": "work", "data": .string(String(repeating: "x", count: 1_100_000))], .invalidArgument, "1 MiB"),
        ]
        for (request, code, text) in bad {
            do {
                _ = try await app.call("enqueue", request)
                Issue.record("accepted: \(request)")
            } catch let e as HTTPSError {
                #expect(e.code == code, "\(request)")
                #expect(e.message.contains(text), "\(e.message)")
            }
        }
    }

    @Test("deleting a pending task removes it; deleting an unknown one is not-found")
    func deleteTask() async throws {
        let app = try await app()
        _ = try await app.call("enqueue", ["queue": "work", "id": "later", "delaySeconds": 60])
        _ = try await app.call("deleteTask", ["queue": "work", "id": "later"])
        await app.advance(by: .seconds(120))
        #expect(try await run(app, "work", "later") == nil)
        await #expect(throws: HTTPSError.self) { try await app.call("deleteTask", ["queue": "work", "id": "later"]) }
    }

    @Test("a task enqueued in a transaction or batch commits with it, and not when it rolls back")
    func transactionalEnqueue() async throws {
        let app = try await app()
        await #expect(throws: HTTPSError.self) { try await app.call("transactional", ["taskID": "tx-fail", "doc": "a", "fail": true]) }
        #expect(try await app.document("txDocs/a") == nil)
        #expect(try app.deliveries(function: "work").isEmpty)
        _ = try await app.call("transactional", ["taskID": "tx-ok", "doc": "b", "fail": false])
        _ = try await app.call("batch", ["taskID": "batch-ok", "doc": "c", "fail": false])
        #expect(try await app.document("txDocs/b") != nil)
        await app.advance(by: .seconds(1))  // the queue dispatches 10 per second
        #expect(try await run(app, "work", "tx-ok")?["label"] == "from-transaction")
        #expect(try await run(app, "work", "batch-ok")?["label"] == "from-batch")
        // A duplicate task id fails the whole batch: the document is not written either.
        await #expect(throws: HTTPSError.self) { try await app.call("batch", ["taskID": "batch-ok", "doc": "d", "fail": false]) }
        #expect(try await app.document("txDocs/d") == nil)
    }
    @Test("a queue that sets only maxConcurrentDispatches keeps Firebase's default rate of 500 per second")
    func concurrencyOnlyKeepsDefaultRate() async throws {
        let app = try await app()
        _ = try await app.runtime.enqueue((0..<120).map { TaskSpec(queue: "bounded", data: .int(Int64($0))) })
        await app.settle()
        func ran() async throws -> Int { try await app.documents(in: "runs").filter { $0.fields["function"] == "bounded" }.count }
        #expect(try await ran() == 50, "the bucket holds a tenth of a second's worth")
        await app.advance(by: .milliseconds(100))
        #expect(try await ran() == 100)
        await app.advance(by: .milliseconds(100))
        #expect(try await ran() == 120)
    }
}

