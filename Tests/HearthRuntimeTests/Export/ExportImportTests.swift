import Foundation
import HearthAuth
import HearthModel
@_spi(Internals) @testable import HearthRuntime
import HearthStore
import HearthTesting
import Synchronization
import Testing

/// A value of every type, at the edges Firestore allows: what an export must carry exactly.
let everyType: [String: Value] = [
    "null": .null, "yes": true, "no": false,
    "int": 1, "zero": 0, "max": .int(.max), "min": .int(.min),
    "one": 1.0, "tenth": 0.1, "negativeZero": .double(-0.0), "nan": .double(.nan), "inf": .double(.infinity), "negInf": .double(-.infinity),
    "tiniest": .double(.leastNonzeroMagnitude), "largest": .double(.greatestFiniteMagnitude), "bigIntegral": .double(1e300),
    "time": .timestamp(Timestamp(seconds: 1_700_000_000, nanos: 123_456_000)), "first": .timestamp(Timestamp(seconds: Timestamp.minSeconds)),
    "last": .timestamp(Timestamp(seconds: Timestamp.maxSeconds, nanos: 999_999_000)), "beforeEpoch": .timestamp(Timestamp(seconds: -1, nanos: 1000)),
    "text": "quote \" backslash \\ newline \n tab \t nul \u{0} é 👩‍👩‍👧", "empty": "",
    "bytes": .bytes([0, 1, 127, 128, 255]), "noBytes": .bytes([]),
    "ref": .reference("members/alice/items/a"), "geo": .geoPoint(GeoPoint(latitude: -33.8688, longitude: 151.2093)),
    "list": [1, 2.5, "three", ["four": 4], .null, .timestamp(Timestamp(seconds: 5))], "noList": [],
    "map": ["nested": ["deeper": ["deepest": [.bytes([9]), .double(-0.0)]]]], "noMap": [:],
    "dollar": ["$timestamp": "not a timestamp"], "dollarBytes": ["$bytes": 5],
]

/// Opens a runtime on a new data directory without units (what `hearth import` does).
func bareRuntime(clock: any Clock = ManualClock(Timestamp(seconds: 1_767_225_600))) async throws -> Runtime {
    try await openRuntime(config: makeConfig(units: []), clock: clock)
}

/// A value shared with escaping closures (progress callbacks, tasks), behind a lock.
final class Shared<T: Sendable>: Sendable {
    private let value: Mutex<T>
    init(_ value: T) { self.value = Mutex(value) }
    var get: T { value.withLock { $0 } }
    func set(_ new: T) { value.withLock { $0 = new } }
    func update(_ change: (inout T) -> Void) { value.withLock { change(&$0) } }
}

/// Queues a delivery for a function no unit declares, straight into the store (it stays as it is put).
func queueGhost(_ runtime: Runtime, id: String, at time: Timestamp) async throws {
    try await runtime.store.engine.deliveries.add([NewDelivery(function: "ghost", eventID: id,
        event: .task(Boundary.TaskEvent(queueName: "ghost", id: id, data: ["id": .string(id)], scheduledTime: time)), dueTime: time)])
}

func temporaryDirectory(_ label: String) -> String {
    NSTemporaryDirectory() + "hearth-\(label)-" + UUID().uuidString
}

/// Every document a runtime holds, by path.
func allDocuments(_ runtime: Runtime) async throws -> [String: StoredDocument] {
    var out: [String: StoredDocument] = [:]
    for collection in try await runtime.documents.listCollections(under: nil) {
        let paths = try await runtime.documents.paths(under: collection.segments)
        for doc in try await runtime.documents.getAll(paths).compactMap({ $0 }) { out[doc.path.description] = doc }
    }
    return out
}

// One test at a time: each imports thousands of documents, and the suite runs beside the others.
@Suite("Export and import", .serialized)
struct ExportImportTests {
    @Test("every record's line reads back to the same record: every value's type, timestamps to the nanosecond")
    func linesRoundTrip() throws {
        let created = Timestamp(seconds: 1_700_000_000, nanos: 1000)
        let records: [ExportRecord] = [
            .document(StoredDocument(path: try DocumentPath("types/all"), fields: everyType, createTime: created, updateTime: created + .seconds(3))),
            .user(UserRecord(uid: "u1", email: "u1@example.com", emailVerified: true, displayName: "Ü One", photoURL: "https://example.com/p.png",
                             phoneNumber: "+15555550100", disabled: true, metadata: .init(creationTime: created, lastSignInTime: created + .seconds(1)),
                             providerData: [.init(providerId: "google.com", uid: "g-1", email: "u1@gmail.com")], customClaims: ["role": "admin", "level": 3],
                             tokensValidAfterTime: created)),
            .delivery(Delivery(id: 7, function: "work", eventID: "t1", orderingKey: "members/a", payload: Boundary.Event.task(Boundary.TaskEvent(
                queueName: "work", id: "t1", data: ["n": 1.5], scheduledTime: created)).wireBytes, attempts: 2, firstAttemptTime: created,
                dueTime: created + .seconds(60), state: .dead, lastError: "unavailable: no", lastStatus: 503, dispatchDeadline: .seconds(double: 12.5),
                createTime: created, executions: 1)),
            .document(StoredDocument(path: try DocumentPath("types/nanos"), fields: ["t": .timestamp(Timestamp(seconds: -62_135_596_800, nanos: 123_456_789))],
                                     createTime: Timestamp(seconds: 1, nanos: 1), updateTime: Timestamp(seconds: 253_402_300_799, nanos: 999_999_999))),
            .schedule(function: "nightly", lastFire: created),
            .taskID(queue: "work", id: "t1", enqueueTime: created),
        ]
        var user = UserRecord(uid: "hashed", metadata: .init(creationTime: created))
        user.passwordHash = PasswordHash(algorithm: .standardScrypt, hash: Base64.encode([1, 2, 3]), salt: Base64.encode([4, 5]), costLog2: 14, blockSize: 8)
        // A photo URL a client may set (any text, as Identity Toolkit keeps it) comes back in.
        let clientPhoto = ExportRecord.user(UserRecord(uid: "photo", photoURL: "photo-url", metadata: .init(creationTime: created)))
        for record in records + [.user(user), clientPhoto] {
            let line = try record.jsonLine()
            #expect(!line.contains(UInt8(ascii: "\n")), "one record, one line")
            #expect(try ExportRecord(line: line, kind: record.kind) == record, "\(String(decoding: line, as: UTF8.self))")
        }
        let line = String(decoding: try records[0].jsonLine(), as: UTF8.self)
        #expect(line.contains(#""int":1,"#) && line.contains(#""one":1.0,"#) && line.contains(#""negativeZero":-0.0"#), "integers and doubles stay apart")
        #expect(line.contains(#""dollar":{"$map":{"$timestamp":"not a timestamp"}}"#), "a map that looks like a tag is escaped")
    }

    @Test("export then import into a fresh data directory: documents with their times, users who sign in with the same password, a pending task that still runs, a dead letter still listed, schedules' last firings; no trigger fires")
    func roundTrip() async throws {
        let start = Timestamp(seconds: 1_767_225_600)
        let configure: (inout RuntimeConfig) -> Void = { config in config.auth.passwordHashMemCost = 10 }
        let source = try await TestRuntime(units: ["DeliveryUnit"], start: start, configure: configure)
        try await source.seed(["types/all": .map(everyType), "members/alice": ["name": "Alice"], "members/alice/items/a": ["n": 1]])
        source.clock.advance(by: .seconds(90))
        try await source.runtime.documents.commit([.merge(try DocumentPath("members/alice"), ["name": "Alice B."])])
        let signUp = try await source.runtime.auth.signUp(email: "ivy@example.com", password: "ivy-secret-1")
        try await source.createUser(NewUser(uid: "gina", email: "gina@example.com", providerToLink: .init(providerId: "google.com", uid: "g-42")))
        try await source.runtime.users.setCustomClaims(uid: "gina", ["role": "editor"])
        let taskID = try await source.enqueue("work", ["label": "later"], scheduleDelay: .seconds(3600))
        try await source.write(["broken/b1": ["x": 1]])
        await source.advance(by: .seconds(600))  // seoulTick fires twice; broken/b1's delivery is dead
        // A delivery some other node is running (of a function no unit here declares).
        try await queueGhost(source.runtime, id: "g1", at: source.clock.now())
        let claimed = try await source.runtime.store.engine.deliveries.claim([ClaimRequest(function: "ghost", limit: 1)], now: source.clock.now(),
                                                                            owner: "elsewhere", leaseUntil: { _ in source.clock.now() + .seconds(3600) })
        #expect(claimed.deliveries.count == 1)
        let exported = try source.deliveries()
        #expect(exported.contains { $0.function == "broken" && $0.state == .dead })
        #expect(exported.contains { $0.function == "ghost" && $0.state == .running })
        let sourceSchedules = try source.runtime.scheduleTable()
        #expect(sourceSchedules.first { $0.function == "seoulTick" }?.lastFire != nil)
        let sourceDocs = try await allDocuments(source.runtime)
        let sourceUsers = try await source.runtime.users.list().users

        let directory = temporaryDirectory("export")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let reports = Shared<[DataTransferProgress]>([])
        let summary = try await source.runtime.exportData(to: directory) { p in reports.update { $0.append(p) } }
        #expect(summary.counts[.documents] == sourceDocs.count)
        #expect(summary.counts[.users] == 2)
        #expect(summary.counts[.deliveries] == exported.count)
        #expect(reports.get.filter(\.finished).map(\.kind) == ExportFormat.Kind.allCases, "each file reports when it is done")
        let manifest = try ExportManifest(json: [UInt8](try #require(FileManager.default.contents(atPath: directory + "/manifest.json"))))
        #expect(manifest.counts == summary.counts && manifest.boundaryVersion == Int(Boundary.version))

        let target = try await TestRuntime(units: ["DeliveryUnit"], start: start + .seconds(600), configure: configure)
        let imported = try await target.runtime.importData(from: directory)
        #expect(imported.counts == summary.counts)
        #expect(imported.madePending == 1, "the running ghost delivery is pending again")
        #expect(target.runtime.documents.lastSequence == 0, "nothing reached the change feed")

        let targetDocs = try await allDocuments(target.runtime)
        #expect(targetDocs == sourceDocs, "fields, create and update times")
        #expect(targetDocs["types/all"]?.fields == everyType)
        #expect(targetDocs["members/alice"].map { $0.createTime < $0.updateTime } == true)
        #expect(try await target.runtime.users.list().users == sourceUsers, "password hashes, provider links, claims, metadata")
        let signIn = try await target.runtime.auth.signInWithPassword(email: "ivy@example.com", password: "ivy-secret-1")
        #expect(signIn.uid == signUp.uid)
        #expect(try await target.runtime.users.get(.provider("google.com", uid: "g-42")).uid == "gina")
        #expect(try await target.runtime.users.verify(idToken: signIn.idToken).uid == signUp.uid)

        let targetSchedules = try target.runtime.scheduleTable()
        #expect(targetSchedules.map(\.lastFire) == sourceSchedules.map(\.lastFire), "the schedules' last firings replace the new runtime's registrations")
        let deliveries = try target.deliveries()
        #expect(deliveries.map(\.id) == exported.map(\.id))
        let dead = try #require(deliveries.first { $0.function == "broken" })
        #expect(dead.state == .dead && dead.lastError == exported.first { $0.function == "broken" }?.lastError)
        #expect(!deliveries.contains { $0.function == "recordWrite" || $0.function == "welcome" }, "imported documents and users fire no trigger")

        await target.advance(by: .seconds(3600))
        #expect(try await target.document("runs/work-\(taskID)")?.fields["count"] == 1, "the pending task ran after the import")
        let left = try target.deliveries()
        #expect(left.map(\.function) == ["broken", "ghost"], "the task ran; the dead letter stays")
        #expect(left.last?.state == .pending && left.last?.attempts == 1, "the running delivery is pending, its attempt counted")
    }

    @Test("a store that holds a document, a user or a delivery is refused, naming what it holds, and nothing is written")
    func refusesNonEmpty() async throws {
        let source = try await TestRuntime(units: ["DeliveryUnit"])
        try await source.seed(["members/a": ["n": 1]])
        try await source.createUser(NewUser(uid: "someone"))
        let directory = temporaryDirectory("export")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        _ = try await source.runtime.exportData(to: directory)

        for holds in ["document", "user", "delivery"] {
            let target = try await bareRuntime()
            defer { target.close() }
            let expected: String
            switch holds {
            case "document":
                try await target.documents.commit([.set(try DocumentPath("members/u1/items/x"), ["n": 1])] + (2...12).map { .set(try DocumentPath("zz/d\($0)"), [:]) })
                expected = "the store already holds 12 documents (first: members/u1/items/x)"
            case "user":
                try await target.users.create(NewUser(uid: "taken"))
                expected = "the store already holds 1 user (first: taken)"
            default:
                try await queueGhost(target, id: "t9", at: Timestamp(seconds: 1_767_225_600))
                expected = "the store already holds 1 delivery (first: ghost t9 (pending))"
            }
            let before = try await allDocuments(target).count
            let error = await #expect(throws: ImportError.self) { try await target.importData(from: directory) }
            #expect(error?.description.hasPrefix(expected) == true, "\(String(describing: error))")
            #expect(try await allDocuments(target).count == before)
            #expect(try await target.users.list().users.map(\.uid) == (holds == "user" ? ["taken"] : []))
        }
    }

    /// An export of 12,000 documents (past the first progress report) and a few users, written line by line here.
    static func writeExport(_ directory: String, documents: Int = 12_000) throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let time = Timestamp(seconds: 1_700_000_000)
        var lines: [UInt8] = []
        for i in 0..<documents {
            lines += try ExportRecord.document(StoredDocument(path: try DocumentPath("items/i\(i)"), fields: ["n": .int(Int64(i)), "t": .timestamp(time)],
                                                              createTime: time, updateTime: time)).jsonLine() + [10]
        }
        #expect(FileManager.default.createFile(atPath: directory + "/documents.jsonl", contents: Data(lines)))
        var users: [UInt8] = []
        for i in 0..<3 { users += try ExportRecord.user(UserRecord(uid: "u\(i)", email: "u\(i)@example.com", metadata: .init(creationTime: time))).jsonLine() + [10] }
        #expect(FileManager.default.createFile(atPath: directory + "/users.jsonl", contents: Data(users)))
        for kind in [ExportFormat.Kind.deliveries, .schedules, .taskIDs] { #expect(FileManager.default.createFile(atPath: directory + "/" + kind.fileName, contents: Data())) }
        let manifest = ExportManifest(exportTime: time, counts: [.documents: documents, .users: 3, .deliveries: 0, .schedules: 0, .taskIDs: 0])
        #expect(FileManager.default.createFile(atPath: directory + "/manifest.json", contents: Data(manifest.json)))
    }

    /// Replaces line `number` (1-based) of a file.
    static func replaceLine(_ path: String, _ number: Int, with text: String) throws {
        var lines = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        lines[number - 1] = text
        try lines.joined(separator: "\n").write(toFile: path, atomically: true, encoding: .utf8)
    }

    @Test("a bad line far into a file refuses the whole import with its file, line and field; nothing is written", arguments: [
        ("not JSON", "documents.jsonl", 11_000, #"{"path": "items/x", "#, "documents.jsonl:11000: not valid JSON"),
        ("a wrong type", "documents.jsonl", 11_000, #"{"path": 5, "createTime": "2024-01-01T00:00:00Z", "updateTime": "2024-01-01T00:00:00Z", "fields": {}}"#,
         "documents.jsonl:11000: field 'path': expected a string, found integer"),
        ("a bad path", "documents.jsonl", 11_000, #"{"path": "items", "createTime": "2024-01-01T00:00:00Z", "updateTime": "2024-01-01T00:00:00Z", "fields": {}}"#,
         "documents.jsonl:11000: field 'path':"),
        ("a duplicate path", "documents.jsonl", 11_000, #"{"path": "items/i3", "createTime": "2024-01-01T00:00:00Z", "updateTime": "2024-01-01T00:00:00Z", "fields": {}}"#,
         "documents.jsonl:11000: field 'path': the document items/i3 appears twice"),
        ("an unknown field", "documents.jsonl", 11_999, #"{"path": "items/z", "createTime": "2024-01-01T00:00:00Z", "updateTime": "2024-01-01T00:00:00Z", "fields": {}, "colour": 1}"#,
         "documents.jsonl:11999: field 'colour': unknown field"),
        ("a time out of range", "documents.jsonl", 11_000, #"{"path": "items/z", "createTime": "2024-13-01T00:00:00Z", "updateTime": "2024-01-01T00:00:00Z", "fields": {}}"#,
         "documents.jsonl:11000: field 'createTime':"),
        ("a field Firestore refuses", "documents.jsonl", 11_000, #"{"path": "items/z", "createTime": "2024-01-01T00:00:00Z", "updateTime": "2024-01-01T00:00:00Z", "fields": {"__x__": 1}}"#,
         "documents.jsonl:11000: document items/z: field names of the form __.*__ are reserved"),
        ("an empty line", "documents.jsonl", 11_000, "", "documents.jsonl:11000: empty line"),
        ("a bad email", "users.jsonl", 2, #"{"uid": "u9", "email": "not an address", "emailVerified": false, "disabled": false, "metadata": {"creationTime": {"$timestamp": "2024-01-01T00:00:00Z"}}, "providerData": []}"#,
         "users.jsonl:2: field 'email':"),
        ("a duplicate email", "users.jsonl", 3, #"{"uid": "u9", "email": "U0@example.com", "emailVerified": false, "disabled": false, "metadata": {"creationTime": {"$timestamp": "2024-01-01T00:00:00Z"}}, "providerData": []}"#,
         "users.jsonl:3: field 'email': U0@example.com is already the address of user 'u0'"),
        ("a misspelt user field", "users.jsonl", 1, #"{"uid": "u9", "emailVerified": false, "disabled": false, "metadata": {"creationTime": {"$timestamp": "2024-01-01T00:00:00Z"}, "lastSignIn": null}, "providerData": []}"#,
         "users.jsonl:1: field 'metadata.lastSignIn': unknown field"),
        ("a user missing a field", "users.jsonl", 3, #"{"uid": "u9", "emailVerified": false, "disabled": false, "providerData": []}"#,
         "users.jsonl:3: metadata: missing required field"),
    ])
    func badLine(label: String, file: String, line: Int, text: String, expected: String) async throws {
        let directory = temporaryDirectory("bad")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try Self.writeExport(directory)
        try Self.replaceLine(directory + "/" + file, line, with: text)
        let target = try await bareRuntime()
        defer { target.close() }
        let error = await #expect(throws: ImportError.self, "\(label)") { try await target.importData(from: directory) }
        #expect(error?.description.hasPrefix(expected) == true, "\(label): \(String(describing: error))")
        #expect(try await allDocuments(target).isEmpty, "\(label): nothing written")
        #expect(try await target.users.list().users.isEmpty)
    }

    @Test("a file cut short, mid-line or at a line's end, or longer than the manifest says, is refused; so are a missing manifest and another format")
    func truncatedAndManifest() async throws {
        let directory = temporaryDirectory("cut")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try Self.writeExport(directory)
        let documents = directory + "/documents.jsonl"
        let whole = try #require(FileManager.default.contents(atPath: documents))
        func attempt(_ expected: String) async throws {
            let target = try await bareRuntime()
            defer { target.close() }
            let error = await #expect(throws: ImportError.self) { try await target.importData(from: directory) }
            #expect(error?.description.contains(expected) == true, "\(String(describing: error))")
            #expect(try await allDocuments(target).isEmpty)
        }
        // Mid-line: the last line has no newline.
        #expect(FileManager.default.createFile(atPath: documents, contents: whole.prefix(whole.count - 20)))
        try await attempt("documents.jsonl:12000: the last line has no newline at its end: the file is cut short")
        // At a line's end: fewer records than the manifest counts.
        let lines = whole.split(separator: 10, omittingEmptySubsequences: false)
        #expect(FileManager.default.createFile(atPath: documents, contents: Data(lines.prefix(11_000).joined(separator: [10]) + [10])))
        try await attempt("documents.jsonl: holds 11000 records but manifest.json counts 12000")
        let extra = try ExportRecord.document(StoredDocument(path: try DocumentPath("items/extra"), fields: [:], createTime: .zero, updateTime: .zero)).jsonLine()
        #expect(FileManager.default.createFile(atPath: documents, contents: whole + Data(extra + [10])))
        try await attempt("documents.jsonl:12001: more records than the 12000 manifest.json counts")
        #expect(FileManager.default.createFile(atPath: documents, contents: whole))
        try FileManager.default.removeItem(atPath: directory + "/manifest.json")
        try await attempt("holds no manifest.json: it is not a finished Hearth export")
        #expect(FileManager.default.createFile(atPath: directory + "/manifest.json", contents: Data(#"{"format": "firestore", "formatVersion": 1}"#.utf8)))
        try await attempt("manifest.json: field 'format': 'firestore' is not a Hearth export")
        #expect(FileManager.default.createFile(atPath: directory + "/manifest.json", contents: Data(#"{"format": "hearth-export", "formatVersion": 9, "boundaryVersion": 2, "exportTime": "2024-01-01T00:00:00Z", "counts": {}}"#.utf8)))
        try await attempt("field 'formatVersion': 9 is newer than this hearth reads (1)")
    }

    @Test("an export is one snapshot while a second runtime on the same data directory commits documents, users and tasks in the middle of it")
    func snapshotWhileWriting() async throws {
        let clock = ManualClock(Timestamp(seconds: 1_767_225_600))
        var config = makeConfig(units: [])
        let exporter = try await openRuntime(config: config, clock: clock)
        defer { exporter.close() }
        config.log.level = .error
        let writer = try await openRuntime(config: config, clock: clock)
        defer { writer.close() }
        for batch in 0..<24 {
            try await writer.documents.commit((0..<500).map { .set(try DocumentPath("items/i\(batch * 500 + $0)"), ["batch": .int(Int64(batch))]) })
        }
        try await writer.documents.commit([.set(try DocumentPath("counter/c"), ["n": 24])])
        try await writer.users.create(NewUser(uid: "before"))

        let directory = temporaryDirectory("snapshot")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let committed = DispatchSemaphore(value: 0)
        let interleaved = Shared(false)
        let failure = Shared<String?>(nil)
        // At the first progress report the export is 10,000 documents in: the other runtime then
        // commits more documents, moves the counter, creates a user and enqueues a task.
        let summary = try await exporter.exportData(to: directory) { p in
            guard p.kind == .documents, !p.finished, p.count == ExportFormat.progressInterval else { return }
            Task {
                do {
                    try await writer.documents.commit((0..<499).map { .set(try DocumentPath("items/late\($0)"), ["batch": 99]) }
                                                      + [.set(try DocumentPath("counter/c"), ["n": 25])])
                    try await writer.users.create(NewUser(uid: "late"))
                    try await queueGhost(writer, id: "late-task", at: clock.now())
                } catch { failure.set("\(error)") }
                committed.signal()
            }
            interleaved.set(committed.wait(timeout: .now() + 60) == .success)
        }
        #expect(interleaved.get, "the other runtime committed while the export ran")
        #expect(failure.get == nil)
        #expect(try await writer.documents.get(try DocumentPath("counter/c"))?.fields["n"] == 25)
        #expect(summary.counts[.documents] == 12_001, "the 12,000 items and the counter as they were")
        #expect(summary.counts[.users] == 1 && summary.counts[.deliveries] == 0)
        let target = try await bareRuntime()
        defer { target.close() }
        _ = try await target.importData(from: directory)
        #expect(try await target.documents.get(try DocumentPath("counter/c"))?.fields["n"] == 24)
        #expect(try await target.documents.get(try DocumentPath("items/late0")) == nil)
        #expect(try await target.users.list().users.map(\.uid) == ["before"])
    }

    @Test("export refuses a path that is a file or a directory that is not empty, creates a missing one, and its files are its owner's only")
    func exportDirectory() async throws {
        let runtime = try await bareRuntime()
        defer { runtime.close() }
        let directory = temporaryDirectory("dest")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        #expect(FileManager.default.createFile(atPath: directory + "/keep.txt", contents: Data("x".utf8)))
        let notEmpty = await #expect(throws: ExportError.self) { try await runtime.exportData(to: directory) }
        #expect(notEmpty?.message.contains("is not empty (it holds keep.txt)") == true)
        let file = directory + "/keep.txt"
        let notDirectory = await #expect(throws: ExportError.self) { try await runtime.exportData(to: file) }
        #expect(notDirectory?.message.contains("exists and is not a directory") == true)
        let fresh = directory + "/new/nested"
        _ = try await runtime.exportData(to: fresh)
        #expect(Set(try FileManager.default.contentsOfDirectory(atPath: fresh)) == Set(ExportFormat.Kind.allCases.map(\.fileName) + ["manifest.json"]))
        let mode = try FileManager.default.attributesOfItem(atPath: fresh + "/users.jsonl")[.posixPermissions] as? Int
        #expect(mode == 0o600, "the files hold password hashes")
    }
}
