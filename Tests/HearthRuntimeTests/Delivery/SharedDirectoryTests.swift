import Foundation
import HearthModel
@testable import HearthRuntime
import HearthStore
import HearthTesting
import Testing

/// Two runtimes on one data directory (two `hearth serve`s, or a server and a CLI command): each has
/// its own engine with its own in-memory view of the feeds, and the database decides who routes what.
@Suite("Delivery engines sharing a data directory", .timeLimit(.minutes(2)))
struct SharedDirectoryTests {
    @Test("a change another engine already routed (and whose delivery already ran) is not routed again")
    func routedOnce() async throws {
        let dir = NSTemporaryDirectory() + "hearth-shared-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let a = try await TestRuntime(units: ["DeliveryUnit"], configure: { $0.dataDirectory = dir })
        let b = try await TestRuntime(units: ["DeliveryUnit"], configure: { $0.dataDirectory = dir })
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
        let dir = NSTemporaryDirectory() + "hearth-shared-users-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let a = try await TestRuntime(units: ["DeliveryUnit"], configure: { $0.dataDirectory = dir })
        let b = try await TestRuntime(units: ["DeliveryUnit"], configure: { $0.dataDirectory = dir })
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
}
