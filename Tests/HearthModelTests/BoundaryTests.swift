import HearthModel
import Testing

/// One sample of every message the boundary carries, for the round trips below.
enum BoundarySamples {
    static let t = Timestamp(seconds: 1_767_225_600, nanos: 123_000)
    static let doc = StoredDocument(path: try! DocumentPath("members/alice/items/i1"), fields: ["title": "milk", "n": 3, "tags": ["a"]],
                                    createTime: t, updateTime: t + .seconds(5))
    static let user = UserRecord(uid: "alice", email: "a@example.com", emailVerified: true, displayName: "Alice", phoneNumber: "+15550100",
                                 metadata: .init(creationTime: t, lastSignInTime: t), providerData: [.init(providerId: "apple.com", uid: "001")],
                                 customClaims: ["admin": true], tokensValidAfterTime: t)
    static let query = QuerySpec(parent: try! DocumentPath("members/alice"), collectionID: "items",
                                 filters: [.init(try! FieldPath("meta.rank"), .greaterThan, 2), .init(.documentID, .notIn, [.reference("x/y")])],
                                 orderBy: [.init(try! FieldPath("meta.rank"), .descending)], startAt: .init(values: [5], before: true),
                                 endAt: nil, limit: 10, limitToLast: false)
    static let writes: [DocumentWrite] = [
        .create(doc.path, ["a": 1], transforms: [FieldTransformSpec(try! FieldPath("at"), .serverTimestamp)]),
        .update(try! DocumentPath("c/d"), [(try! FieldPath("x.y"), .null)], transforms: [FieldTransformSpec(try! FieldPath("n"), .increment(.double(0.5)))]),
        .merge(try! DocumentPath("c/e"), ["m": ["k": "v"]], transforms: [FieldTransformSpec(try! FieldPath("l"), .arrayUnion([1, "two"]))]),
        DocumentWrite(path: try! DocumentPath("c/f"), operation: .delete, transforms: [], precondition: .updateTime(t)),
        .delete(try! DocumentPath("c/g"), precondition: .exists(true)),
    ]
    static let task = TaskSpec(queue: "send", data: ["to": "alice"], id: "t-1", start: .after(.milliseconds(1500)), dispatchDeadline: .seconds(30))

    static let events: [Boundary.Event] = [
        .callable(.init(data: ["x": 1], auth: CallerAuth(uid: "alice", claims: ["sub": "alice"], rawToken: "tok"),
                        app: AppCheckClaims(appID: "1:ios", claims: ["sub": "1:ios"]), instanceIDToken: "fcm", headers: ["accept": "*/*"],
                        acceptsStreaming: true)),
        .callable(.init(data: .null)),
        .request(.init(method: "PUT", path: "/api/x", query: "a=1", headers: HTTPHeaders([("X-A", "1"), ("x-a", "2")]), body: [0, 255, 10])),
        .document(.init(id: "42", time: t, kind: .updated, path: doc.path, params: ["uid": "alice", "itemId": "i1"], before: doc, after: nil)),
        .task(.init(queueName: "send", id: "t-1", data: ["k": [1, 2]], scheduledTime: t, retryCount: 2, executionCount: 1,
                    previousResponse: 503, retryReason: "unavailable: try later")),
        .schedule(.init(jobName: "tick", scheduleTime: t)),
        .user(.init(id: "user-9", time: t, kind: .deleted, user: user)),
    ]

    /// Every request type, once, as a frame of its own operation.
    static let requests: [(Boundary.Operation, [UInt8])] = [
        frame(Boundary.Describe()),
        frame(Boundary.Invoke(function: "createItem", event: events[0], now: t, seed: RandomSeed(high: 1, low: .max))),
        frame(Boundary.Cancel()),
        frame(Boundary.ClockNow()),
        frame(Boundary.Log(level: .warning, message: "hello", metadata: ["k": [1]])),
        frame(Boundary.SecretGet(name: "API_KEY")),
        frame(Boundary.ClockSleep(until: t)),
        frame(Boundary.StreamSend(chunk: ["n": 1])),
        frame(Boundary.GetDocuments(paths: [doc.path, try! DocumentPath("a/b")])),
        frame(Boundary.Commit(writes: writes, enqueues: [task, TaskSpec(queue: "q", data: 1, start: .at(t))])),
        frame(Boundary.RunQuery(query: query)),
        frame(Boundary.CountQuery(query: QuerySpec(collectionID: "items", allDescendants: true))),
        frame(Boundary.ListCollections(parent: nil)),
        frame(Boundary.ListDocuments(collection: try! CollectionPath("members/alice/items"))),
        frame(Boundary.RecursiveDelete(path: "members/alice", batchSize: 100)),
        frame(Boundary.BeginTransaction()),
        frame(Boundary.TransactionGet(transaction: .max, paths: [doc.path])),
        frame(Boundary.TransactionQuery(transaction: 7, query: query)),
        frame(Boundary.CommitTransaction(transaction: 7, writes: writes, enqueues: [task])),
        frame(Boundary.RollbackTransaction(transaction: 7)),
        frame(Boundary.EnqueueTasks(tasks: [task])),
        frame(Boundary.DeleteTask(queue: "send", id: "t-1")),
        frame(Boundary.CreateCustomToken(uid: "alice", claims: ["premium": true])),
        frame(Boundary.GetUser(.provider("apple.com", uid: "001"))),
        frame(Boundary.CreateUser(user: NewUser(uid: "bob", email: "b@example.com", providerToLink: .init(providerId: "github.com", uid: "7")))),
        frame(Boundary.UpdateUser(uid: "bob", update: UserUpdate(displayName: "Bob", customClaims: ["x": 1], providersToUnlink: ["github.com"]))),
        frame(Boundary.DeleteUser(uid: "bob")),
        frame(Boundary.SetCustomClaims(uid: "bob", claims: nil)),
        frame(Boundary.RevokeRefreshTokens(uid: "bob")),
        frame(Boundary.ListUsers(maxResults: 10, pageToken: "p")),
        frame(Boundary.VerifyIDToken(token: "eyJ", checkRevoked: true)),
        frame(Boundary.SignJWT(claims: ["iss": "team"], privateKeyPEM: "-----BEGIN", keyID: "K", header: ["typ": "JWT"])),
        frame(Boundary.SendMessage(PushMessage(token: "fcm-token", title: "Due", body: "milk", data: ["itemId": "i1"], badge: 3, sound: "default"))),
        frame(Boundary.ParamGet(name: "APPLE_BASE_URL")),
        frame(Boundary.HTTPFetch(method: "POST", url: "https://appleid.apple.com/auth/token", headers: [("Accept", "application/json")],
                                 body: Array("code=x".utf8), timeoutMillis: 30_000)),
    ]

    static func frame<R: Boundary.Request>(_ request: R) -> (Boundary.Operation, [UInt8]) {
        (R.operation, Boundary.frame(Boundary.Header(kind: .request, operation: R.operation, invocation: 0xDEAD_BEEF, call: 9), request))
    }
}

@Suite("The unit boundary: frames and messages")
struct BoundaryTests {
    func roundTrip<M: WireCodable & Equatable>(_ message: M, _ operation: Boundary.Operation) throws {
        let bytes = Boundary.frame(Boundary.Header(kind: .request, operation: operation, invocation: 42, call: 3), message)
        let header = try bytes.withUnsafeBytes { p in Result { () throws(WireError) in try Boundary.header(p) } }.get()
        let decoded = try bytes.withUnsafeBytes { p in Result { () throws(WireError) in try Boundary.body(M.self, of: p) } }.get()
        #expect(header == Boundary.Header(kind: .request, operation: operation, invocation: 42, call: 3))
        #expect(decoded == message)
    }

    @Test("every event kind round-trips through a frame unchanged")
    func events() throws {
        for event in BoundarySamples.events {
            try roundTrip(Boundary.Invoke(function: "f", event: event, now: BoundarySamples.t, seed: RandomSeed(high: 3, low: 4)), .invoke)
        }
    }

    @Test("a callable event's headers keep their order, case and repeats, and read the string-map layout they had before (older recordings)")
    func callableHeaders() throws {
        let headers: HTTPHeaders = ["User-Agent": "app/1", "X-Trace": "a", "x-trace": "b"]
        let event = try Boundary.Event(wireBytes: Boundary.Event.callable(.init(data: 1, headers: headers)).wireBytes)
        guard case .callable(let decoded) = event else { Issue.record("not a callable: \(event)"); return }
        #expect(decoded.headers == headers)
        #expect(decoded.headers["user-agent"] == "app/1")
        #expect(decoded.headers.values("X-TRACE") == ["a", "b"])

        // Written as a [String: String] map was: a count, then names and values.
        var w = WireWriter()
        w.value(1)
        w.write(Optional<CallerAuth>.none)
        w.write(Optional<AppCheckClaims>.none)
        w.write(Optional<String>.none)
        w.stringMap(["accept": "*/*"])
        w.bool(true)
        let old = try Boundary.CallableEvent(wireBytes: w.finish())
        #expect(old == Boundary.CallableEvent(data: 1, headers: ["accept": "*/*"], acceptsStreaming: true))
        #expect(old.headers["Accept"] == "*/*")

        // And the other way: a unit built against an SDK that read them into a string map reads
        // the new encoding (repeats: the last wins there).
        let bytes = Boundary.CallableEvent(data: 1, headers: ["user-agent": "app/1", "x-trace": "a", "x-trace": "b"], acceptsStreaming: true).wireBytes
        let read = bytes.withUnsafeBytes { p -> Result<([String: String], Bool), WireError> in
            var r = WireReader(p)
            return Result { () throws(WireError) in
                _ = try r.value()
                let _: CallerAuth? = try r.optional()
                let _: AppCheckClaims? = try r.optional()
                let _: String? = try r.optional()
                let map = try r.stringMap()
                let streaming = try r.bool()
                try r.end()
                return (map, streaming)
            }
        }
        let (map, streaming) = try read.get()
        #expect(map == ["user-agent": "app/1", "x-trace": "b"])
        #expect(streaming)

        // A count of headers the bytes cannot hold is refused, not reserved for.
        for claim: UInt64 in [2, 1 << 40, .max] {
            var bad = WireWriter()
            bad.value(1)
            bad.write(Optional<CallerAuth>.none)
            bad.write(Optional<AppCheckClaims>.none)
            bad.write(Optional<String>.none)
            bad.varint(claim)
            bad.string("accept")
            bad.string("*/*")
            bad.bool(false)
            #expect(throws: WireError.self, "a count of \(claim)") { try Boundary.CallableEvent(wireBytes: bad.finish()) }
        }
    }

    @Test("an invocation carrying its event's stored encoding frames those bytes, decodes to the same message, and drops them when its event is replaced")
    func invokeWithEncodedEvent() throws {
        let seed = RandomSeed(high: 3, low: 4)
        for event in BoundarySamples.events {
            // A stored payload: the event decoded from it and the payload travel together.
            let payload = event.wireBytes
            let carried = Boundary.Invoke(function: "f", event: try Boundary.Event(wireBytes: payload), now: BoundarySamples.t, seed: seed,
                                          encodedEvent: payload)
            let plain = Boundary.Invoke(function: "f", event: event, now: BoundarySamples.t, seed: seed)
            #expect(carried == plain)
            #expect(carried.hashValue == plain.hashValue)
            #expect(carried.wireBytes == plain.wireBytes)
            try roundTrip(carried, .invoke)
        }
        // What goes out is the stored bytes, not a fresh encoding of `event`: carrying another
        // event's bytes (which the engine never does) shows which one the frame holds.
        let other = BoundarySamples.events[3]
        let mismatched = Boundary.Invoke(function: "f", event: BoundarySamples.events[0], now: BoundarySamples.t, seed: seed, encodedEvent: other.wireBytes)
        #expect(try Boundary.Invoke(wireBytes: mismatched.wireBytes).event == other)
        // A delivery offers its payload for the frame unless its attempt rebuilds the event (a
        // task's attempt counts come from the row).
        for event in BoundarySamples.events {
            let delivery = Delivery(id: 1, function: "f", eventID: "e", orderingKey: nil, payload: event.wireBytes, attempts: 3,
                                    firstAttemptTime: BoundarySamples.t, dueTime: BoundarySamples.t, state: .running, lastError: "503",
                                    lastStatus: 503, dispatchDeadline: nil, createTime: BoundarySamples.t, executions: 1)
            let attempt = try delivery.eventForAttempt()
            if case .task = event {
                #expect(delivery.payloadForAttempt(of: attempt) == nil)
                #expect(attempt != event, "a task's attempt has its counts from the row")
            } else {
                #expect(delivery.payloadForAttempt(of: attempt) == delivery.payload)
                #expect(attempt == event)
            }
        }
        // The bytes are what is framed, so they must go when the event changes (a recording's
        // redaction replaces it): the frame then holds the new event, not the stored one.
        let stored = BoundarySamples.events[0]
        var invoke = Boundary.Invoke(function: "f", event: stored, now: BoundarySamples.t, seed: seed, encodedEvent: stored.wireBytes)
        let replacement = Boundary.Event.callable(.init(data: "[redacted]"))
        invoke.event = replacement
        #expect(invoke.encodedEvent == nil)
        let decoded = try Boundary.Invoke(wireBytes: invoke.wireBytes)
        #expect(decoded.event == replacement)
    }

    @Test("document events with random documents come back unchanged from their stored payload (a trigger's first attempt runs on the event in memory, its retries on the payload)")
    func documentEventPayloads() throws {
        var gen = ValueGenerator(seed: 0xE7_0015, jsonOnly: false)
        let t = BoundarySamples.t
        for round in 0..<500 {
            func fields() -> [String: Value] {
                if case .map(let m) = gen.value() { return m }
                return ["v": gen.value()]
            }
            let path = try DocumentPath("members/m\(round)/items/i\(round)")
            let before = round % 3 == 0 ? nil : StoredDocument(path: path, fields: fields(), createTime: t, updateTime: t + .microseconds(Int64(round)))
            let after = round % 3 == 1 ? nil : StoredDocument(path: path, fields: fields(), createTime: t, updateTime: t + .seconds(Int64(round)))
            let kind: ChangeKind = before == nil ? .created : after == nil ? .deleted : .updated
            let event = Boundary.Event.document(.init(id: String(round), time: t, kind: kind, path: path,
                                                      params: ["memberId": "m\(round)", "itemId": "i\(round)"], before: before, after: after))
            #expect(try Boundary.Event(wireBytes: event.wireBytes) == event, "round \(round)")
        }
    }

    @Test("every host-service request round-trips through a frame unchanged")
    func requests() throws {
        try roundTrip(Boundary.Log(level: .error, message: "m", metadata: ["a": ["b": [1, 2.5, "c"]]]), .log)
        try roundTrip(Boundary.Commit(writes: BoundarySamples.writes, enqueues: [BoundarySamples.task]), .commit)
        try roundTrip(Boundary.RunQuery(query: BoundarySamples.query), .runQuery)
        try roundTrip(Boundary.CommitTransaction(transaction: .max, writes: BoundarySamples.writes, enqueues: []), .commitTransaction)
        try roundTrip(Boundary.GetUser(.email("a@example.com")), .getUser)
        try roundTrip(Boundary.CreateUser(user: NewUser(uid: "u", disabled: true)), .createUser)
        var update = UserUpdate(email: "n@example.com", disabled: false)
        update.deleteDisplayName = true
        update.deletePhoneNumber = true
        try roundTrip(Boundary.UpdateUser(uid: "u", update: update), .updateUser)
        try roundTrip(Boundary.SignJWT(claims: ["a": 1], privateKeyPEM: "pem", keyID: nil, header: [:]), .signJWT)
        try roundTrip(Boundary.SendMessage(PushMessage(token: "t", title: nil, body: "b", data: [:], badge: nil, sound: nil)), .sendMessage)
        try roundTrip(Boundary.ParamGet(name: "X"), .paramGet)
        try roundTrip(Boundary.HTTPFetch(method: "GET", url: "https://a.example/x?y=1", headers: [("A", "1"), ("B", "")], body: [], timeoutMillis: 1), .httpFetch)
        try roundTrip(Boundary.HTTPFetchReply(status: 204, headers: [("Retry-After", "1")], body: [0, 255]), .httpFetch)
        try roundTrip(Boundary.SendMessage(PushMessage(token: "t", title: "T", body: nil, data: ["k": "v", "é": "ü"], badge: 0, sound: "default")), .sendMessage)
        // Every request sample decodes as a frame of its own operation with the header it was sent with.
        for (operation, bytes) in BoundarySamples.requests {
            let header = try bytes.withUnsafeBytes { p in Result { () throws(WireError) in try Boundary.header(p) } }.get()
            #expect(header == Boundary.Header(kind: .request, operation: operation, invocation: 0xDEAD_BEEF, call: 9))
        }
        #expect(Set(BoundarySamples.requests.map(\.0)) == Set(Boundary.Operation.allCases), "a sample for every operation")
    }

    @Test("replies: results, the manifest, and errors with their code, details and debug text")
    func replies() throws {
        let request = Boundary.Header(kind: .request, operation: .getDocuments, invocation: 5, call: 1)
        let docs: [StoredDocument?] = [BoundarySamples.doc, nil]
        #expect(try Boundary.reply([StoredDocument?].self, from: Boundary.frame(request.answer(.reply), docs)).get() == docs)
        let manifest = FunctionManifest(unit: "U", abiVersion: Int(Boundary.version), functions: [
            FunctionSpec(name: "a", trigger: .schedule(schedule: "every day 09:00", timeZone: "Asia/Seoul"),
                         options: FunctionOptions(timeout: .seconds(30), retry: .eventRetryDefault, secrets: ["K"])),
            FunctionSpec(name: "b", trigger: .document(.written, pattern: "x/{id}"),
                         options: FunctionOptions(rateLimits: RateLimits(maxConcurrentDispatches: 4))),
            FunctionSpec(name: "c", trigger: .callable, options: FunctionOptions(cors: .origins(["https://a"]), enforceAppCheck: true, heartbeat: .milliseconds(50))),
            FunctionSpec(name: "d", trigger: .task, options: FunctionOptions(retry: .taskQueueDefault, rateLimits: .taskQueueDefault, dispatchDeadline: .seconds(60))),
            FunctionSpec(name: "e", trigger: .user(.deleted)),
            FunctionSpec(name: "f", trigger: .request, options: FunctionOptions(cors: .disabled, region: "eu")),
        ])
        #expect(try Boundary.reply(FunctionManifest.self, from: Boundary.frame(request.answer(.reply), manifest)).get() == manifest)
        let error = RemoteError(code: .failedPrecondition, message: "no", details: ["why": "because"], debug: "trace")
        #expect(Boundary.reply(Int64.self, from: Boundary.failure(request, error)) == .failure(error))
        // A request frame where a reply belongs, or a reply of the wrong shape, is an internal error, not a crash.
        let misplaced = Boundary.reply(Int64.self, from: Boundary.frame(request, Boundary.Empty()))
        #expect(misplaced.failureCode == .internal)
        #expect(Boundary.reply(Int64.self, from: Boundary.frame(request.answer(.reply), "text")).failureCode == .internal)
    }

    @Test("operation numbers and names are unique; the synchronous ones are the clock, logs, secrets and params")
    func operations() {
        let all = Boundary.Operation.allCases
        #expect(Set(all.map(\.rawValue)).count == all.count)
        #expect(Set(all.map(\.name)).count == all.count)
        #expect(all.filter(\.isSynchronous) == [.clockNow, .log, .secretGet, .paramGet])
        #expect(all.filter(\.isSentByHost) == [.describe, .invoke, .cancel])
        #expect(Boundary.Operation.getDocuments.name == "docs.get")
    }

    static let zeros = [UInt8](repeating: 0, count: 16)
    static let malformed: [([UInt8], String)] = [
        ([], "at least 23 bytes"),
        ([5, 0, 0, 0, 1, 2, 0], "at least 23 bytes"),
        ([200, 0, 0, 0] + [UInt8](repeating: 1, count: 19), "the frame says 200 bytes follow"),
        ([19, 0, 0, 0, 9, 1, 0] + zeros, "unknown frame kind 9"),
        ([19, 0, 0, 0, 1, 0xFF, 0x7F] + zeros, "unknown operation 32767"),
    ]

    @Test("malformed frames are refused with what is wrong, never read past their end", arguments: malformed)
    func malformedHeaders(_ bytes: [UInt8], _ problem: String) {
        let result = bytes.withUnsafeBytes { p in Result { () throws(WireError) in try Boundary.header(p) } }
        guard case .failure(let error) = result else { Issue.record("accepted \(bytes)"); return }
        #expect(error.description.contains(problem), "\(error)")
    }

    @Test("bodies that are truncated, padded, or claim more items than they hold are refused")
    func malformedBodies() throws {
        let header = Boundary.Header(kind: .request, operation: .getDocuments, invocation: 1)
        let good = Boundary.frame(header, Boundary.GetDocuments(paths: [try DocumentPath("a/b")]))
        func decode(_ bytes: [UInt8]) -> WireError? {
            let result = bytes.withUnsafeBytes { p in Result { () throws(WireError) in try Boundary.read(Boundary.GetDocuments.self, from: p) } }
            if case .failure(let error) = result { return error }
            return nil
        }
        #expect(decode(good) == nil)
        var truncated = Array(good.dropLast())
        truncated[0] -= 1
        #expect(decode(truncated)?.description.contains("length 3 exceeds the remaining 2 bytes") == true, "\(String(describing: decode(truncated)))")
        var padded = good + [0]
        padded[0] += 1
        #expect(decode(padded)?.description.contains("1 bytes left over") == true)
        // A list that claims 2^62 paths in a 24-byte frame: refused before anything is allocated.
        var huge = WireWriter()
        huge.varint(1 << 62)
        let claim = Boundary.frame(header, RawBody(bytes: huge.finish()))
        #expect(decode(claim)?.description.contains("exceeds the remaining") == true)
    }

    @Test("a well-formed field that is not valid keeps its own error: a bad path is invalid-argument, naming it")
    func invalidField() throws {
        var w = WireWriter()
        w.varint(1)
        w.string("members")  // a collection, not a document
        let frame = Boundary.frame(Boundary.Header(kind: .request, operation: .getDocuments, invocation: 1), RawBody(bytes: w.finish()))
        let result = frame.withUnsafeBytes { p in Result { () throws(WireError) in try Boundary.read(Boundary.GetDocuments.self, from: p) } }
        guard case .failure(.invalid(let e)) = result else { Issue.record("\(result)"); return }
        #expect(e.code == .invalidArgument)
        #expect(e.message.contains("members"))
    }

    @Test("random damage to valid frames is refused or read, never a trap", arguments: [UInt64(1), 2, 3])
    func fuzz(_ seed: UInt64) {
        var rng = SplitMix64(seed: seed)
        let frames = BoundarySamples.requests.map(\.1)
        for _ in 0..<3000 {
            var bytes = frames[Int(rng.next() % UInt64(frames.count))]
            switch rng.next() % 3 {
            case 0: bytes = Array(bytes.prefix(Int(rng.next() % UInt64(bytes.count + 1))))
            case 1: for _ in 0...(rng.next() % 4) { bytes[Int(rng.next() % UInt64(bytes.count))] = UInt8(truncatingIfNeeded: rng.next()) }
            default: bytes += (0..<(rng.next() % 8)).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
            }
            _ = bytes.withUnsafeBytes { p -> Bool in
                guard let header = try? Boundary.header(p) else { return false }
                switch header.operation {
                case .invoke: return (try? Boundary.body(Boundary.Invoke.self, of: p)) != nil
                case .commit: return (try? Boundary.body(Boundary.Commit.self, of: p)) != nil
                case .runQuery: return (try? Boundary.body(Boundary.RunQuery.self, of: p)) != nil
                case .updateUser: return (try? Boundary.body(Boundary.UpdateUser.self, of: p)) != nil
                case .log: return (try? Boundary.body(Boundary.Log.self, of: p)) != nil
                default: return (try? Boundary.body(Boundary.SignJWT.self, of: p)) != nil
                }
            }
        }
    }

    @Test("a stream of frames splits at frame boundaries, waits for a partial one, and refuses an absurd length")
    func streams() throws {
        let a = BoundarySamples.requests[1].1, b = BoundarySamples.requests[4].1
        let stream = a + b + Array(a.prefix(10))
        let first = try #require(try Boundary.splitFrame(stream))
        #expect(first == a)
        let second = try #require(try Boundary.splitFrame(Array(stream.dropFirst(a.count))))
        #expect(second == b)
        #expect(try Boundary.splitFrame(Array(stream.dropFirst(a.count + b.count))) == nil, "a partial frame waits for the rest")
        #expect(try Boundary.splitFrame([1, 2]) == nil)
        #expect(throws: WireError.self) { _ = try Boundary.splitFrame([0xFF, 0xFF, 0xFF, 0x7F, 1]) }
        #expect(throws: WireError.self) { _ = try Boundary.splitFrame([3, 0, 0, 0, 1, 2, 3]) }
    }
}

/// Bytes written as a message body as they are (for frames a correct sender would never make).
struct RawBody: WireEncodable {
    var bytes: [UInt8]
    func encode(to w: inout WireWriter) { for b in bytes { w.byte(b) } }
}

extension Result where Failure == RemoteError {
    var failureCode: FunctionsErrorCode? {
        if case .failure(let e) = self { return e.code }
        return nil
    }
}
