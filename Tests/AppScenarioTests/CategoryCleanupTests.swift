import HearthModel
import HearthTesting
import Testing

@Suite("Category clean-up (SCENARIOS §5)")
struct CategoryCleanupTests {
    func items(_ app: TestRuntime, _ uid: String, category: String) async throws -> Int {
        try await app.documents(in: "members/\(uid)/items").filter { $0.fields["category"] == .string(category) }.count
    }

    @Test("removing a category moves its items to default in batches through one task; other categories and members are untouched")
    func removedCategory() async throws {
        let app = try await TestRuntime(units: appUnits)
        try await app.member("dee")
        try await app.member("eli")
        try await app.write(["members/dee/profiles/preferences": ["categories": [["id": "work", "name": "Work"], ["id": "home", "name": "Home"]]]])
        var docs: [(String, Value)] = []
        for i in 0..<450 { docs.append(("members/dee/items/w\(i)", ["title": "w", "category": "work"])) }
        for i in 0..<20 { docs.append(("members/dee/items/h\(i)", ["title": "h", "category": "home"])) }
        for i in 0..<10 { docs.append(("members/eli/items/w\(i)", ["title": "w", "category": "work"])) }
        try await app.seedMany(docs)
        await app.settle()

        try await app.write(["members/dee/profiles/preferences": ["categories": [["id": "home", "name": "Home"]]]])
        await app.settle()
        #expect(try await items(app, "dee", category: "work") == 0)
        #expect(try await items(app, "dee", category: "default") == 450)
        #expect(try await items(app, "dee", category: "home") == 20)
        #expect(try await items(app, "eli", category: "work") == 10, "another member's items are theirs")
        let moved = try #require(try await app.document("members/dee/items/w0"))
        #expect(moved.fields["updatedAt"] == .timestamp(moved.updateTime))
        #expect(try app.deliveries(function: "cleanupCategory").isEmpty)
    }

    @Test("the task is idempotent and resumable: run again it changes nothing; with items left over it moves only those")
    func idempotent() async throws {
        let app = try await TestRuntime(units: appUnits)
        try await app.member("fin")
        try await app.seedMany((0..<30).map { ("members/fin/items/i\($0)", ["title": "t", "category": "old"]) })
        _ = try await app.enqueue("cleanupCategory", ["userId": "fin", "categoryId": "old"])
        await app.settle()
        #expect(try await items(app, "fin", category: "default") == 30)
        let stamp = try #require(try await app.document("members/fin/items/i0")).updateTime
        _ = try await app.enqueue("cleanupCategory", ["userId": "fin", "categoryId": "old"])
        await app.settle()
        #expect(try #require(try await app.document("members/fin/items/i0")).updateTime == stamp, "a second run writes nothing")
        // What an attempt that failed after some batches leaves: some moved, some not.
        try await app.seed(["members/fin/items/late": ["title": "t", "category": "old"]])
        _ = try await app.enqueue("cleanupCategory", ["userId": "fin", "categoryId": "old"])
        await app.settle()
        #expect(try await app.document("members/fin/items/late")?.fields["category"] == "default")
    }

    @Test("a category removed and added back before its task runs keeps its items")
    func removedAndRestored() async throws {
        let app = try await TestRuntime(units: appUnits)
        try await app.member("hal")
        try await app.seed(["members/hal/profiles/preferences": ["categories": [["id": "work", "name": "Work"]]],
                            "members/hal/items/w": ["title": "w", "category": "work"]])
        _ = try await app.enqueue("cleanupCategory", ["userId": "hal", "categoryId": "work"])
        await app.settle()
        #expect(try await app.document("members/hal/items/w")?.fields["category"] == "work")
    }

    @Test("a payload that can never work ends quietly, not retried; adding a category or renaming one enqueues nothing")
    func badPayloadsAndNoOps() async throws {
        let app = try await TestRuntime(units: appUnits)
        try await app.member("gil")
        _ = try await app.enqueue("cleanupCategory", ["userId": "gil", "categoryId": "a/b"])
        _ = try await app.enqueue("cleanupCategory", ["userId": "../x", "categoryId": "c"])
        await app.settle()
        #expect(try app.deliveries(function: "cleanupCategory").isEmpty, "no retry waiting, nothing dead")
        try await app.write(["members/gil/profiles/preferences": ["categories": [["id": "a", "name": "A"]]]])
        try await app.write(["members/gil/profiles/preferences": ["categories": [["id": "a", "name": "Renamed"], ["id": "b", "name": "B"]]]])
        await app.settle()
        #expect(try app.deliveries(function: "cleanupCategory").isEmpty)
    }
}
