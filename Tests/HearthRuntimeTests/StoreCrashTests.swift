import Foundation
import HearthModel
import HearthStore
import HearthTesting
import Testing

@Suite("Store crash safety with a real process")
struct StoreCrashTests {
    @Test("a writer killed with SIGKILL loses no reported commit: each is present with its change, and the database is sound")
    func killDuringWrites() async throws {
        let dir = NSTemporaryDirectory() + "hearth-crash-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let db = dir + "/store.sqlite"
        let writer = try Subprocess(buildDirectory + "/hearth-testkit", ["store-writer", db], stderr: .discard)

        // Wait for enough reported commits, then kill without warning. Every "committed N" line the
        // writer printed before it died is a commit it was told had succeeded.
        @Sendable func reportedCommits() -> Int {
            // The writer counts up, so the last whole line has the highest number (the line after it
            // may be cut short by the kill). Read from the end: this runs after every chunk of output,
            // and parsing all of it each time grew with the square of the commits.
            let bytes = writer.stdoutBytes
            var end = bytes.count
            while end > 0, bytes[end - 1] != UInt8(ascii: "\n") { end -= 1 }  // drop a partial last line
            guard end > 0 else { return 0 }
            var start = end - 1
            while start > 0, bytes[start - 1] != UInt8(ascii: "\n") { start -= 1 }
            let line = String(decoding: bytes[start..<(end - 1)], as: UTF8.self)
            return line.hasPrefix("committed ") ? Int(line.dropFirst(10)) ?? 0 : 0
        }
        try await writer.waitFor(seconds: 60, "1,500 reported commits") { _ in reportedCommits() >= 1500 }
        writer.signal(SIGKILL)
        #expect(try await writer.wait() == .signaled(SIGKILL))
        let reported = reportedCommits()
        #expect(reported >= 1500, "the writer reported \(reported) commits before the deadline")

        let store = try await DocumentStore.open(path: db, clock: SystemClock())
        defer { store.close() }
        #expect(try await store.engine.integrityCheck() == [])
        let items = try await store.query(QuerySpec(collection: try CollectionPath("crash/items/list")))
        let numbers = items.compactMap { $0.fields["n"]?.intValue }
        #expect(numbers.count >= reported, "every reported commit survived")
        #expect(Set(numbers) == Set(1...Int64(numbers.count)), "commits are contiguous: no hole before the last survivor")
        let counter = try #require(try await store.get(try DocumentPath("crash/counter")))
        #expect(counter.fields["n"] == .int(Int64(numbers.count)), "the batch's two writes survived together")
        let changes = try await store.engine.changes(after: 0, limit: 1_000_000)
        let created = Set(changes.filter { $0.kind == .created && $0.path.collectionID == "list" }.map(\.path.id))
        #expect(created.count == numbers.count, "every surviving write has its change-feed entry")
        #expect(changes.map(\.sequence) == Array(1...Int64(changes.count)), "sequences are contiguous")
        // The store still takes writes after the crash.
        try await store.commit([.set(try DocumentPath("crash/after"), ["ok": true])])
    }
}
