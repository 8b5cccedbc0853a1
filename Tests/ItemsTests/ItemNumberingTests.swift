import HearthModel
import HearthTesting
import Testing

@Suite("createItem and updateItem (SCENARIOS §3)")
struct ItemNumberingTests {
    func member(_ app: TestRuntime, _ uid: String = "alice") async throws {
        try await app.call("initializeMember", ["timeZone": "Asia/Seoul"], as: uid)
    }

    @Test("a new item gets the next number and the counter moves on; all 13 fields are stored")
    func numbering() async throws {
        let app = try await TestRuntime(units: ["Members", "Items"])
        try await member(app)
        let first = try await app.call("createItem", ["title": "milk", "tags": ["home"]], as: "alice")
        let second = try await app.call("createItem", ["title": "eggs"], as: "alice")
        #expect(first["sequence"] == 1)
        #expect(second["sequence"] == 2)
        #expect(try await app.document("members/alice/counters/item")?.fields["nextSequence"] == 3)
        let id = try #require(first["itemId"]?.stringValue)
        let item = try #require(try await app.document("members/alice/items/\(id)"))
        #expect(Set(item.fields.keys) == ["sequence", "title", "body", "tags", "category", "isDone", "completedAt", "targetDate",
                                          "createdAt", "updatedAt", "deletedAt", "goalId", "priority"])
        #expect(item.fields["targetDate"] == .null)
        #expect(item.fields["category"] == "default")
        #expect(item.fields["createdAt"] == .timestamp(item.createTime))
    }

    @Test("auto ids come from the runtime's seeded generator: the same seed gives the same item ids, another seed others")
    func reproducibleIDs() async throws {
        func itemIDs(seed: UInt64) async throws -> [String] {
            let app = try await TestRuntime(units: ["Members", "Items"], seed: seed)
            try await member(app)
            var ids: [String] = []
            for title in ["milk", "eggs", "bread"] {
                ids.append(try #require(try await app.call("createItem", ["title": .string(title)], as: "alice")["itemId"]?.stringValue))
            }
            return ids
        }
        let first = try await itemIDs(seed: 7)
        #expect(Set(first).count == 3)
        #expect(try await itemIDs(seed: 7) == first, "a replay with the same seed makes the same ids")
        #expect(try await itemIDs(seed: 8) != first)
    }

    @Test("updating an item keeps its number; completing it records completedAt")
    func updateKeepsNumber() async throws {
        let app = try await TestRuntime(units: ["Members", "Items"])
        try await member(app)
        let created = try await app.call("createItem", ["title": "milk"], as: "alice")
        let id = try #require(created["itemId"]?.stringValue)
        app.clock.advance(by: .seconds(10))
        let updated = try await app.call("updateItem", ["itemId": .string(id), "title": "oat milk", "isDone": true], as: "alice")
        #expect(updated == ["itemId": .string(id), "sequence": 1])
        let item = try #require(try await app.document("members/alice/items/\(id)"))
        #expect(item.fields["title"] == "oat milk")
        #expect(item.fields["sequence"] == 1)
        #expect(item.fields["isDone"] == true)
        #expect(item.fields["completedAt"] == .timestamp(item.updateTime))
        #expect(item.fields["createdAt"] == .timestamp(item.createTime))
        #expect(item.updateTime > item.createTime)
        #expect(try await app.document("members/alice/counters/item")?.fields["nextSequence"] == 2)
    }

    @Test("two writers creating 1,000 items each for one user get 2,000 items numbered 1…2000, no duplicates, no gaps")
    func concurrentWriters() async throws {
        let app = try await TestRuntime(units: ["Members", "Items"])
        try await member(app)
        let sequences = try await withThrowingTaskGroup(of: [Int64].self) { group in
            for writer in 0..<2 {
                group.addTask {
                    var mine: [Int64] = []
                    for i in 0..<1000 {
                        let reply = try await app.call("createItem", ["title": .string("w\(writer)-\(i)")], as: "alice")
                        mine.append(try #require(reply["sequence"]?.intValue))
                    }
                    return mine
                }
            }
            return try await group.reduce(into: []) { $0 += $1 }
        }
        #expect(sequences.count == 2000)
        #expect(Set(sequences) == Set(1...2000))
        let stored = try await app.documents(in: "members/alice/items").compactMap { $0.fields["sequence"]?.intValue }
        #expect(stored.count == 2000)
        #expect(Set(stored) == Set(1...2000))
        #expect(try await app.document("members/alice/counters/item")?.fields["nextSequence"] == 2001)
        #expect(app.documents.openTransactions == 0)
    }

    @Test("bad input is refused with invalid-argument and nothing is written", arguments: [
        ["title": ""] as Value,
        ["title": "x", "itemId": "a/b"],
        ["title": "x", "category": "work/x"],
        ["title": 5],
    ])
    func badCreate(data: Value) async throws {
        let app = try await TestRuntime(units: ["Members", "Items"])
        try await member(app)
        let sequence = app.documents.lastSequence
        do {
            try await app.call("createItem", data, as: "alice")
            Issue.record("accepted \(data)")
        } catch let e as HTTPSError {
            #expect(e.code == .invalidArgument)
        }
        #expect(app.documents.lastSequence == sequence)
    }

    @Test("creating before initialization is failed-precondition; updating a missing item is not-found; signed-out is unauthenticated")
    func preconditions() async throws {
        let app = try await TestRuntime(units: ["Members", "Items"])
        await #expect { try await app.call("createItem", ["title": "x"], as: "bob") } throws: { ($0 as? HTTPSError)?.code == .failedPrecondition }
        try await member(app)
        await #expect { try await app.call("updateItem", ["itemId": "nope", "title": "x"], as: "alice") } throws: { ($0 as? HTTPSError)?.code == .notFound }
        await #expect { try await app.call("createItem", ["title": "x"]) } throws: { ($0 as? HTTPSError)?.code == .unauthenticated }
    }

    @Test("an item counter at the largest integer refuses the next item instead of overflowing")
    func counterExhausted() async throws {
        let app = try await TestRuntime(units: ["Members", "Items"])
        try await member(app)
        try await app.write(["members/alice/counters/item": ["nextSequence": .int(Int64.max)]])
        await #expect { try await app.call("createItem", ["title": "x"], as: "alice") } throws: { ($0 as? HTTPSError)?.code == .resourceExhausted }
        #expect(try await app.documents(in: "members/alice/items").isEmpty)
    }

    @Test("one member's items never touch another's counter")
    func isolation() async throws {
        let app = try await TestRuntime(units: ["Members", "Items"])
        try await member(app, "alice")
        try await member(app, "bob")
        try await app.call("createItem", ["title": "a"], as: "alice")
        let bob = try await app.call("createItem", ["title": "b"], as: "bob")
        #expect(bob["sequence"] == 1)
    }
}
