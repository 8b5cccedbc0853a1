@testable import HearthFunctions
import Testing

@Suite("FunctionRegistry declarations")
struct RegistryTests {
    struct Payload: Codable, Sendable { var id: String }

    func sample() -> FunctionRegistry {
        var fn = FunctionRegistry(unit: "Sample")
        fn.onCall("call", .init(timeout: .seconds(30), cors: .origins(["https://app.example.com"]), enforceAppCheck: true)) { (req: CallableRequest<Value>) in req.data }
        fn.onRequest("http") { _ in .text("ok") }
        fn.onSchedule("nightly", .init(schedule: "every day 09:00", timeZone: "Asia/Seoul", retry: true)) { _ in }
        fn.onTaskDispatched("send", .init(retry: .exponential(maxAttempts: 3), rateLimits: RateLimits(maxDispatchesPerSecond: 10))) { (_: TaskRequest<Payload>) in }
        fn.onDocumentCreated("created", "members/{uid}") { (_: DocumentEvent<Value>) in }
        fn.onDocumentUpdated("updated", .init(document: "members/{uid}", concurrency: 4)) { (_: DocumentEvent<Value>) in }
        fn.onDocumentDeleted("deleted", "members/{uid}/items/{itemId}") { (_: DocumentEvent<Value>) in }
        fn.onDocumentWritten("written", .init(document: "members/{path=**}", retry: .policy(.exponential(maxAttempts: 5)))) { (_: DocumentEvent<Value>) in }
        fn.onUserCreated("userCreated") { _ in }
        fn.onUserDeleted("userDeleted", .init(retry: true)) { _ in }
        return fn
    }

    @Test("each on… call declares exactly one function with its trigger")
    func triggers() {
        let manifest = sample().manifest
        let triggers = Dictionary(uniqueKeysWithValues: manifest.functions.map { ($0.name, $0.trigger) })
        #expect(manifest.unit == "Sample")
        #expect(manifest.abiVersion == Int(unitABIVersion))
        #expect(triggers["call"] == .callable)
        #expect(triggers["http"] == .request)
        #expect(triggers["nightly"] == .schedule(schedule: "every day 09:00", timeZone: "Asia/Seoul"))
        #expect(triggers["send"] == .task)
        #expect(triggers["created"] == .document(.created, pattern: "members/{uid}"))
        #expect(triggers["updated"] == .document(.updated, pattern: "members/{uid}"))
        #expect(triggers["deleted"] == .document(.deleted, pattern: "members/{uid}/items/{itemId}"))
        #expect(triggers["written"] == .document(.written, pattern: "members/{path=**}"))
        #expect(triggers["userCreated"] == .user(.created))
        #expect(triggers["userDeleted"] == .user(.deleted))
        #expect(manifest.problems().isEmpty)
    }

    @Test("typed options land in the manifest; event retry is off by default and on with retry: true")
    func options() {
        let specs = Dictionary(uniqueKeysWithValues: sample().manifest.functions.map { ($0.name, $0.options) })
        #expect(specs["call"]?.timeout == .seconds(30))
        #expect(specs["call"]?.cors == .origins(["https://app.example.com"]))
        #expect(specs["call"]?.enforceAppCheck == true)
        #expect(specs["nightly"]?.retry == .eventRetryDefault)
        #expect(specs["created"]?.retry == RetryPolicy.none)
        #expect(specs["updated"]?.rateLimits?.maxConcurrentDispatches == 4)
        #expect(specs["written"]?.retry?.maxAttempts == 5)
        #expect(specs["send"]?.rateLimits == RateLimits(maxDispatchesPerSecond: 10))
        #expect(specs["userDeleted"]?.retry == .eventRetryDefault)
    }

    @Test("each on… call returns its manifest entry, so a unit's declarations can be checked without loading it")
    func returnsSpec() {
        var fn = FunctionRegistry(unit: "S")
        let schedule = fn.onSchedule("tick", "every 5 minutes") { _ in }
        #expect(schedule == FunctionSpec(name: "tick", trigger: .schedule(schedule: "every 5 minutes", timeZone: "UTC"),
                                         options: FunctionOptions(retry: RetryPolicy.none)))
        let queue = fn.onTaskDispatched("send", .init(dispatchDeadline: .seconds(30), secrets: ["FCM_KEY"])) { (_: TaskRequest<Payload>) in }
        #expect(queue.options.dispatchDeadline == .seconds(30))
        #expect(queue.options.secrets == ["FCM_KEY"])
        let call = fn.onCall("plain") { (_: CallableRequest<Value>) in }
        #expect(call.options == FunctionOptions(), "nothing set, nothing in the manifest: the host's defaults apply")
        #expect(fn.manifest.functions == [schedule, queue, call])
    }

    @Test("task queues default to Firebase's: 3 attempts, 0.1 s to 3600 s backoff, 500/s, 1000 at once")
    func taskDefaults() {
        var fn = FunctionRegistry(unit: "T")
        fn.onTaskDispatched("q") { (_: TaskRequest<Value>) in }
        let options = fn.manifest.functions[0].options
        #expect(options.retry == RetryPolicy(maxAttempts: 3, minBackoff: .milliseconds(100), maxBackoff: .seconds(3600), maxDoublings: 16))
        #expect(options.rateLimits == RateLimits(maxDispatchesPerSecond: 500, maxConcurrentDispatches: 1000))
    }

    @Test("registering a name twice is recorded as a problem and keeps the first declaration")
    func duplicate() {
        var fn = FunctionRegistry(unit: "D")
        fn.onCall("same") { (_: CallableRequest<Value>) in 1 }
        fn.onRequest("same") { _ in .text("x") }
        #expect(fn.problems == ["function 'same' is registered twice"])
        #expect(fn.functions.count == 1)
        #expect(fn.functions[0].spec.trigger == .callable)
    }

    @Test("invalid declarations are caught by manifest validation, naming the function")
    func invalidDeclarations() {
        var fn = FunctionRegistry(unit: "Bad")
        fn.onDocumentCreated("coll", "members") { (_: DocumentEvent<Value>) in }
        fn.onCall("9lives") { (_: CallableRequest<Value>) in 1 }
        fn.onCall("slow", .init(timeout: .seconds(7200))) { (_: CallableRequest<Value>) in 1 }
        let problems = fn.manifest.problems()
        #expect(problems.contains { $0.contains("function 'coll'") && $0.contains("names a collection") })
        #expect(problems.contains { $0.contains("function name '9lives'") })
        #expect(problems.contains { $0.contains("function 'slow'") && $0.contains("timeout must be in (0, 3600] seconds") })
    }
}

@Suite("HTTP message helpers for onRequest")
struct HTTPMessageTests {
    @Test("headers are looked up without case and keep order and repeats")
    func headers() {
        var h = HTTPHeaders([("Content-Type", "text/plain"), ("Set-Cookie", "a=1"), ("set-cookie", "b=2")])
        #expect(h["content-type"] == "text/plain")
        #expect(h.values("SET-COOKIE") == ["a=1", "b=2"])
        h.set("CONTENT-TYPE", "application/json")
        #expect(h.values("content-type") == ["application/json"])
    }

    @Test("query strings are split and percent-decoded, + as space")
    func query() {
        #expect(PercentEncoding.decode("a%20b+c%2Fd%zz", plusAsSpace: true) == "a b c/d%zz")
        #expect(PercentEncoding.decode("%E2%9C%93", plusAsSpace: true) == "✓")
        #expect(PercentEncoding.decode("plain-segment_1.json", plusAsSpace: false) == "plain-segment_1.json", "nothing to decode")
        #expect(PercentEncoding.decode("a+b", plusAsSpace: false) == "a+b", "+ stays in a path")
        #expect(PercentEncoding.decode("a+b", plusAsSpace: true) == "a b")
        #expect(PercentEncoding.decode("✓é", plusAsSpace: true) == "✓é")
        #expect(PercentEncoding.decode("x/y"[...], plusAsSpace: false) == "x/y")
        #expect(PercentEncoding.decode("", plusAsSpace: true) == "")
        #expect("/a//b/c/".slashSeparated == ["a", "b", "c"], "empty pieces dropped, as a path's split")
        #expect("".slashSeparated.isEmpty && "///".slashSeparated.isEmpty)
        #expect("x".slashSeparated == ["x"])
        #expect("v1/projects/p/databases/(default)/documents/café/✓".slashSeparated
                == ["v1", "projects", "p", "databases", "(default)", "documents", "café", "✓"])
        #expect("/é́/x".slashSeparated == ["é́", "x"], "split on bytes: a combining mark does not join a slash")
        #expect(PercentEncoding.pathSegments("/a/b%20c//d%2Fe/%zz+") == ["a", "b c", "d/e", "%zz+"], "decoded after the split; a bad escape and + stay")
        #expect(PercentEncoding.pathSegments("").isEmpty && PercentEncoding.pathSegments("/%E2%9C%93") == ["✓"])
    }

    @Test("JSON and error responses have the right status, type and body")
    func responses() throws {
        struct Out: Encodable { var ok: Bool; var missing: String? }
        let json = try HTTPResponse.json(Out(ok: true, missing: nil), status: 201)
        #expect(json.status == 201)
        #expect(json.headers["content-type"] == "application/json")
        #expect(try JSONParser.parse(json.body) == ["ok": true, "missing": nil])
        let error = HTTPResponse.error(HTTPSError(.permissionDenied, "nope"))
        #expect(error.status == 403)
        #expect(try JSONParser.parse(error.body) == ["error": ["status": "PERMISSION_DENIED", "message": "nope"]])
    }
}

@Suite("The SDK's side of the boundary")
struct SDKBoundaryTests {
    @Test("the SDK speaks the schema version HearthModel defines, which is the C header's")
    func version() {
        #expect(unitABIVersion == Boundary.version)
    }

    @Test("update fields: values, explicit null, transforms and deletes become one write with the right mask")
    func updateFields() throws {
        let path = try DocumentPath("items/a")
        let write = try DocumentsWire.update(path, ["title": "new", "note": .null, "views": .increment(1), "draft": .delete(),
                                                    "meta.rank": .value(.int(2))])
        guard case .update(let fields, let mask?) = write.operation else { Issue.record("not an update with a mask"); return }
        #expect(fields == ["title": "new", "note": .null, "meta": ["rank": 2]])
        #expect(Set(mask.map(\.description)) == ["title", "note", "meta.rank", "draft"], "a delete is in the mask with no value")
        #expect(write.transforms == [FieldTransformSpec(try FieldPath("views"), .increment(.int(1)))])
        #expect(write.precondition == .exists(true))
    }

    @Test("FieldValue in an Encodable: a transform is a sentinel, a plain value (null too) is stored as it is")
    func fieldValueInData() throws {
        struct Touch: Encodable { var at = FieldValue.serverTimestamp(); var label: FieldValue = "x"; var gone = FieldValue.null }
        let write = try DocumentsWire.write(.set, try DocumentPath("t/1"), Touch())
        guard case .update(let fields, nil) = write.operation else { Issue.record("not a set"); return }
        #expect(fields == ["label": "x", "gone": .null])
        #expect(write.transforms == [FieldTransformSpec(try FieldPath("at"), .serverTimestamp)])
    }

    @Test("task options become one task spec; a delay and a time together are refused before anything is sent")
    func taskSpec() throws {
        let spec = try TaskOptions(id: "a", scheduleDelay: .seconds(5), dispatchDeadline: .seconds(60)).spec(queue: "q", ["n": 1] as [String: Int])
        #expect(spec == TaskSpec(queue: "q", data: ["n": 1], id: "a", start: .after(.seconds(5)), dispatchDeadline: .seconds(60)))
        #expect(throws: HTTPSError.self) {
            _ = try TaskOptions(scheduleDelay: .seconds(1), scheduleTime: Timestamp(seconds: 1)).spec(queue: "q", 1)
        }
    }
}

/// A unit's `update(_:)` gives each field its own value, so overlapping fields are refused before
/// anything is sent, as the Admin SDKs refuse them.
@Suite("Document updates in the unit SDK")
struct UnitUpdateTests {
    @Test("a field and one inside it, or one field spelled twice, are refused; fields sharing only a name prefix are not")
    func overlapping() throws {
        let path = try DocumentPath("c/d")
        #expect(throws: HTTPSError.self) { try DocumentsWire.update(path, ["m": .value(["x": 2]), "m.x": .value(3)]) }
        #expect(throws: HTTPSError.self) { try DocumentsWire.update(path, ["a.b": .value(1), "`a`.b": .value(2)]) }
        #expect(throws: HTTPSError.self) { try DocumentsWire.update(path, ["m": .value(1), "m.y.z": .increment(1)]) }
        #expect(throws: HTTPSError.self) { try DocumentsWire.update(path, ["m": .delete(), "m.x": .value(1)]) }
        let fine = try DocumentsWire.update(path, ["m.x": .value(5), "mm": .value(1), "m.xy": .value(2)])
        guard case .update(_, let mask?) = fine.operation else { Issue.record("not an update"); return }
        #expect(Set(mask.map(\.description)) == ["m.x", "mm", "m.xy"])
    }
}
