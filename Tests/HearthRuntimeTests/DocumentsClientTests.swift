import HearthModel
import HearthTesting
import Testing

/// The unit-side Documents client, exercised through a real unit (Tests/Fixtures/DocsUnit).
@Suite("Documents client across the unit boundary")
struct DocumentsClientTests {
    func run(_ name: String) async throws -> Value {
        let app = try await TestRuntime(units: ["DocsUnit"])
        return try await app.call("docs", .string(name))
    }

    @Test("Codable types are stored with explicit nulls and server timestamps, and read back")
    func codable() async throws {
        let r = try await run("codable")
        #expect(r["title"] == "a")
        #expect(r["createdAtSet"] == true)
        #expect(r["dueIsNull"] == true)
        #expect(r["keys"] == ["createdAt", "due", "rank", "tags", "title"])
    }

    @Test("a stored document that does not decode is data-loss to the function, and INTERNAL to its caller when let through")
    func undecodable() async throws {
        let caught = try await run("undecodable-caught")
        #expect(caught["code"] == "data-loss")
        #expect(caught["message"]?.stringValue?.contains("does not decode as Note") == true)
        let app = try await TestRuntime(units: ["DocsUnit"])
        do {
            _ = try await app.call("docs", "undecodable")
            Issue.record("the call succeeded")
        } catch let error as HTTPSError {
            #expect(error.code == .internal)
            #expect(error.message == "INTERNAL", "the cause goes to the log only (checked over HTTP in the callable tests)")
        }
    }

    @Test("create fails with already-exists the second time; update of a missing document is not-found")
    func preconditions() async throws {
        #expect(try await run("create-twice") == "already-exists")
        #expect(try await run("update-missing") == "not-found")
    }

    @Test("merge merges nested maps; update applies increments, deletes, array transforms and server timestamps")
    func mergeAndUpdate() async throws {
        let r = try await run("merge-and-update")
        #expect(r == ["a": ["y": 20, "z": 30], "b": 6, "list": ["q"], "when": true])
    }

    @Test("batches commit together, once, and not at all when one write fails")
    func batches() async throws {
        #expect(try await run("batch") == ["results": 6, "count": 4, "refused": ["failed-precondition", "failed-precondition"]])
        #expect(try await run("batch-atomic") == true)
    }

    @Test("a batch holds any number of writes; one over Firestore's 10 MiB request size is refused, and nothing of it written")
    func batchSizes() async throws {
        let refusal: Value = ["code": "invalid-argument", "message": "Request payload size exceeds the limit: 10485760 bytes."]
        let r = try await run("batch-sizes")
        #expect(r["written"] == 600 && r["bigStored"] == false)
        #expect(r["refused"]?.arrayValue?.first == refusal)
        // Past what a worker may send, any request is refused by its size, in-process too.
        let past = r["refused"]?.arrayValue?.last
        #expect(past?["code"] == "invalid-argument")
        #expect(past?["message"]?.stringValue?.hasSuffix("bytes to the host is larger than 67108864 bytes") == true, "\(String(describing: past))")
    }

    @Test("query builders: filters, multi-field order, limits, limitToLast and cursors")
    func queries() async throws {
        let r = try await run("queries")
        #expect(r["byTitle"] == ["q3", "q1", "q0", "q2"])
        #expect(r["evens"] == ["q0", "q2"])
        #expect(r["in"] == ["q1", "q2", "q3"])
        #expect(r["notA"] == ["q0", "q2"])
        #expect(r["ranked"] == ["q1", "q2"])
        #expect(r["last"] == ["q2", "q3"])
        #expect(r["afterFirst"] == ["q1", "q2", "q3"])
        #expect(r["atValues"] == ["q2"])
        #expect(r["nullDue"] == 4)
        #expect(r["typed"] == ["c"])
    }

    @Test("collection groups, listing documents (including parent-only ones) and root collections")
    func groups() async throws {
        let r = try await run("group")
        #expect(r["group"] == ["members/b/items/2", "other/x/items/3"])
        #expect(r["members"] == [["a", false], ["b", false]])
        #expect(r["roots"] == ["members", "other"])
    }

    @Test("recursive delete removes a document's whole subtree in batches")
    func recursive() async throws {
        #expect(try await run("recursive") == ["deleted": 14, "left": 0])
    }

    @Test("transactions commit; reads after writes are refused; a thrown error rolls back")
    func transactions() async throws {
        #expect(try await run("transaction") == 1)
        #expect(try await run("read-after-write") == "transactions must do all reads before any write")
        #expect(try await run("transaction-error") == true)
    }

    @Test("bad paths, ids with '/' and non-map data are refused with a clear message")
    func badInput() async throws {
        #expect(try await run("bad-path").stringValue?.contains("even number of segments") == true)
        #expect(try await run("bad-id").stringValue?.contains("cannot contain '/'") == true)
        #expect(try await run("non-map").stringValue?.contains("must be a map") == true)
    }
}
