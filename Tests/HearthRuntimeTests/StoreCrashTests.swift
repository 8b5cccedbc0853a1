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
        let process = Process()
        process.executableURL = URL(fileURLWithPath: buildDirectory + "/hearth-testkit")
        process.arguments = ["store-writer", db]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()

        // Read progress lines until enough commits are reported, then kill without warning. The
        // reads block, so they run on a thread of their own.
        let handle = pipe.fileHandleForReading
        let pid = process.processIdentifier
        let reported = try await onOwnThread { () -> Int in
            var reported = 0
            var buffer = Data()
            let deadline = Date().addingTimeInterval(60)
            while reported < 1500 && Date() < deadline {
                let chunk = handle.availableData
                if chunk.isEmpty { break }
                buffer.append(chunk)
                while let newline = buffer.firstIndex(of: 0x0A) {
                    let line = String(decoding: buffer[buffer.startIndex..<newline], as: UTF8.self)
                    buffer.removeSubrange(buffer.startIndex...newline)
                    if line.hasPrefix("committed "), let n = Int(line.dropFirst(10)) { reported = n }
                }
            }
            kill(pid, SIGKILL)
            return reported
        }
        try await onOwnThread { process.waitUntilExit() }
        #expect(process.terminationReason == .uncaughtSignal)
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
