import Foundation
import HearthModel
@_spi(Internals) @testable import HearthRuntime
import HearthStore
import HearthTesting
import Testing

/// Two runtimes on one data directory (two `hearth serve`s, or a server and a CLI command): each has
/// its own engine with its own in-memory view of the feeds, and the database decides who routes what.
@Suite("Delivery engines sharing a data directory", .timeLimit(.minutes(2)))
struct SharedDirectoryTests {
    /// Two runtimes on one new data directory, removed with the last of them.
    final class Pair: Sendable {
        let a: TestRuntime, b: TestRuntime
        let dir: String
        init(_ name: String) async throws {
            dir = NSTemporaryDirectory() + "hearth-\(name)-\(UUID().uuidString)"
            let dir = self.dir
            a = try await TestRuntime(units: ["DeliveryUnit"], configure: { $0.dataDirectory = dir })
            b = try await TestRuntime(units: ["DeliveryUnit"], configure: { $0.dataDirectory = dir })
        }
        deinit { try? FileManager.default.removeItem(atPath: dir) }
    }
    @Test("a change another engine already routed (and whose delivery already ran) is not routed again")
    func routedOnce() async throws {
        let pair = try await Pair("shared")
        let (a, b) = (pair.a, pair.b)
        for n in 1...5 { try await a.write(["items/x": ["n": .int(Int64(n))]]) }
        try await b.write(["items/y": ["n": 1]])
        await a.settle()  // a routes and runs all six changes; their deliveries are deleted
        #expect(try a.deliveries().isEmpty)
        await b.settle()  // b's engine still has its cursor from before: it must not route them again
        try await a.write(["items/x": ["n": 6]])
        await b.settle()
        await a.settle()
        let runs = try await a.documents(in: "runs").filter { $0.fields["function"] == "recordWrite" }
        #expect(runs.count == 7)
        #expect(runs.allSatisfy { $0.fields["count"] == 1 }, "every change ran once: \(runs.map { $0.fields["count"] ?? .null })")
        #expect(try await a.document("orderLog/x")?.fields["seen"] == [1, 2, 3, 4, 5, 6], "in commit order, no stale copy after newer changes")
    }

    @Test("a user event routed by one engine is not routed again by another")
    func userEventsRoutedOnce() async throws {
        let pair = try await Pair("shared-users")
        let (a, b) = (pair.a, pair.b)
        try await a.createUser(NewUser(uid: "u1"))
        try await b.createUser(NewUser(uid: "u2"))
        try await a.deleteUser("u1")
        await a.settle()
        try await b.deleteUser("u2")
        await b.settle()
        await a.settle()
        await b.settle()
        let runs = try await a.documents(in: "runs").filter { $0.fields["function"] == "purge" }
        #expect(runs.count == 2, "\(runs.map(\.path))")
        #expect(runs.allSatisfy { $0.fields["count"] == 1 })
    }
    @Test("a queue's concurrency limit holds across two processes: the database counts who runs what")
    func concurrencyAcrossProcesses() async throws {
        let pair = try await Pair("shared-limits")
        let (a, b) = (pair.a, pair.b)
        // slow: at most 2 at once, each sleeping 10 s on the host clock.
        for k in 0..<6 { try await a.enqueue("slow", ["sleep": 10], id: "s\(k)") }
        await a.settle()
        await b.settle()
        #expect(await a.runtime.engine.runningCount == 2)
        #expect(await b.runtime.engine.runningCount == 0, "b sees a's two running and starts none")
        #expect(try a.deliveries(function: "slow", state: .running).count == 2)
    }

    @Test("a queue's rate limit holds across two processes: one token bucket in the database")
    func rateAcrossProcesses() async throws {
        let pair = try await Pair("shared-rate")
        let (a, b) = (pair.a, pair.b)
        // paced: 200 per second, so a bucket of 20.
        _ = try await a.runtime.enqueue((0..<100).map { TaskSpec(queue: "paced", data: .int(Int64($0))) })
        await a.settle()
        await b.settle()
        #expect(try a.deliveries(function: "paced").count == 80, "20 ran in all, not 20 in each process")
        await b.advance(by: .milliseconds(100))
        await a.settle()
        #expect(try a.deliveries(function: "paced").count == 60, "the next 20 after a tenth of a second, whoever took them")
    }
}

