import HearthModel
import HearthTesting
import Testing

@Suite("Account deletion (SCENARIOS §6)")
struct AccountDeletionTests {
    @Test("deleting the user removes members/{uid} at every depth in batches; another member is untouched")
    func deletesEverything() async throws {
        let app = try await TestRuntime(units: appUnits)
        try await app.member("ann")
        try await app.member("bob")
        var docs: [(String, Value)] = []
        for i in 0..<1200 { docs.append(("members/ann/items/i\(i)", ["title": .string("item \(i)")])) }
        for i in 0..<600 { docs.append(("members/ann/messages/m\(i)", ["itemId": .string("i\(i)")])) }
        for i in 0..<300 { docs.append(("members/ann/items/i\(i)/notes/n\(i)", ["text": "deep"])) }
        for i in 0..<200 { docs.append(("members/ann/a/x/b/y/c/z\(i)", ["depth": 6])) }
        docs.append(("members/bob/items/keep", ["title": "bob's"]))
        try await app.seedMany(docs)
        let before = try await app.countUnder("members/ann")
        #expect(before >= 2300)

        try await app.deleteUser("ann")
        await app.settle()
        #expect(try await app.countUnder("members/ann") == 0)
        #expect(try await app.document("members/ann/profiles/basic") == nil)
        #expect(try await app.document("members/bob/items/keep") != nil)
        #expect(try await app.document("members/bob/profiles/basic") != nil)
        #expect(try app.deliveries(function: "deleteMemberData").isEmpty, "done, not waiting for a retry")
    }

    @Test("a delete that stopped half-way (part of the tree gone, the root too) is finished by the trigger; a user with no data is fine")
    func resumesAndTolerates() async throws {
        let app = try await TestRuntime(units: appUnits)
        try await app.member("cy")
        try await app.seedMany((0..<700).map { ("members/cy/items/i\($0)", ["n": .int(Int64($0))]) })
        // What a crash half-way leaves: the deepest and some of the rest deleted, parents missing.
        _ = try await app.documents.recursiveDelete(["members", "cy", "profiles"])
        for i in 0..<300 { try await app.delete("members/cy/items/i\(i)") }
        try await app.deleteUser("cy")
        _ = try await app.createUser(NewUser(uid: "nobody"))
        try await app.deleteUser("nobody")
        await app.settle()
        #expect(try await app.countUnder("members/cy") == 0)
        #expect(try app.deliveries(function: "deleteMemberData").isEmpty)
    }
}
