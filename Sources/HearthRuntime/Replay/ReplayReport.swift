import HearthModel

/// One way a replay differs from its recording.
public struct Divergence: Sendable, CustomStringConvertible {
    public enum Kind: String, Sendable {
        /// The new code made a service call the recorded invocation did not.
        case unexpectedCall = "unexpected call"
        /// The same call with a different argument.
        case differentArgument = "different argument"
        /// The recorded invocation made a call the new code did not.
        case missingCall = "call not made"
        /// A different result or error.
        case differentOutcome = "different outcome"
        /// A document ends differently, exists only on one side, or an outbound call or dead
        /// letter happens on one side only (system replay).
        case differentDocument = "different document"
        case differentOutbound = "different outbound call"
        case differentDeadLetter = "different dead letter"
        /// The invocation cannot run (its function is gone, the replay timed out).
        case notReplayable = "not replayable"
    }

    public var kind: Kind
    /// The recorded invocation's id (as logs print it), or the document path.
    public var subject: String
    public var function: String
    public var message: String
    /// `-` lines as recorded, `+` lines as replayed.
    public var diff: String

    public init(kind: Kind, subject: String, function: String, message: String, diff: String = "") {
        self.kind = kind
        self.subject = subject
        self.function = function
        self.message = message
        self.diff = diff
    }

    public var description: String {
        var s = "\(kind.rawValue): \(function.isEmpty ? "" : function + " ")\(subject): \(message)"
        if !diff.isEmpty { s += "\n" + diff.split(separator: "\n", omittingEmptySubsequences: false).map { "    " + $0 }.joined(separator: "\n") }
        return s
    }
}

/// What a replay did and found.
public struct ReplayReport: Sendable, CustomStringConvertible {
    public enum Mode: String, Sendable { case handler, system }
    public var mode: Mode
    public var invocations: Int = 0
    public var replayed: Int = 0
    public var divergences: [Divergence] = []
    public var seconds: Double = 0
    /// System replay: SHA-256 of the resulting documents, dead letters and outbound calls.
    public var storeHash: String?
    /// System replay: documents compared.
    public var documents: Int = 0

    public init(mode: Mode) { self.mode = mode }

    public var passed: Bool { divergences.isEmpty }

    public var summary: String {
        var s = "\(mode.rawValue) replay: \(replayed) of \(invocations) invocations replayed"
        if mode == .system { s += ", \(documents) documents compared" }
        s += ", \(divergences.count) divergence\(divergences.count == 1 ? "" : "s"), \(String(format: "%.2f", seconds)) s"
        if let storeHash { s += "\nstore hash: \(storeHash)" }
        return s
    }

    public var description: String {
        (divergences.map(\.description) + [summary]).joined(separator: "\n")
    }

    public var value: Value {
        var m: [String: Value] = ["mode": .string(mode.rawValue), "invocations": .int(Int64(invocations)), "replayed": .int(Int64(replayed)),
                                  "seconds": .double(seconds), "passed": .bool(passed),
                                  "divergences": .array(divergences.map { d in
                                      ["kind": .string(d.kind.rawValue), "subject": .string(d.subject), "function": .string(d.function),
                                       "message": .string(d.message), "diff": .string(d.diff)]
                                  })]
        if let storeHash { m["storeHash"] = .string(storeHash) }
        if mode == .system { m["documents"] = .int(Int64(documents)) }
        return .map(m)
    }
}

/// Readable forms of boundary messages, for diffs.
enum MessageText {
    /// A message as indented lines (its fields by name).
    static func lines<M: WireDecodable>(_ type: M.Type, _ bytes: [UInt8]) -> String? {
        guard let m = try? M(wireBytes: bytes) else { return nil }
        var out = ""
        dump(m, to: &out, maxDepth: 12)
        return out
    }

    static func json(_ v: Value) -> String { JSONWriter.string(v, options: JSONWriteOptions(style: .tagged, sortKeys: true, pretty: true)) }

    static func write(_ w: DocumentWrite) -> Value {
        var m: [String: Value] = ["path": .string(w.path.description)]
        switch w.operation {
        case .delete: m["op"] = "delete"
        case .update(let fields, let mask):
            m["op"] = mask == nil ? "set" : "update"
            m["fields"] = .map(fields)
            if let mask { m["mask"] = .array(mask.map { .string($0.description) }.sorted { $0.stringValue! < $1.stringValue! }) }
        }
        if !w.transforms.isEmpty {
            m["transforms"] = .array(w.transforms.map { t -> Value in .string("\(t.field): \(t.transform)") }.sorted { $0.stringValue! < $1.stringValue! })
        }
        if let p = w.precondition { m["precondition"] = .string("\(p)") }
        return .map(m)
    }

    static func task(_ t: TaskSpec) -> Value {
        ["queue": .string(t.queue), "data": t.data, "id": t.id.map { .string($0) } ?? .null, "start": .string("\(t.start)"),
         "dispatchDeadline": t.dispatchDeadline.map { .string("\($0)") } ?? .null]
    }

    /// A service request in a canonical text (map keys sorted, transforms in order of field), so
    /// equal requests read the same and a diff shows only what differs.
    static func request(_ op: Boundary.Operation, _ bytes: [UInt8]) -> String {
        let text: String?
        switch op {
        case .commit:
            text = (try? Boundary.Commit(wireBytes: bytes)).map { json(["writes": .array($0.writes.map(write)), "enqueues": .array($0.enqueues.map(task))]) }
        case .commitTransaction:
            text = (try? Boundary.CommitTransaction(wireBytes: bytes)).map { json(["writes": .array($0.writes.map(write)), "enqueues": .array($0.enqueues.map(task))]) }
        case .enqueueTasks:
            text = (try? Boundary.EnqueueTasks(wireBytes: bytes)).map { json(.array($0.tasks.map(task))) }
        case .sendMessage:
            text = (try? Boundary.SendMessage(wireBytes: bytes)).map { m in
                let p = m.message
                return json(["token": .string(p.token), "title": p.title.map { .string($0) } ?? .null, "body": p.body.map { .string($0) } ?? .null,
                             "data": .map(p.data.mapValues { .string($0) }), "badge": p.badge.map { .int(Int64($0)) } ?? .null,
                             "sound": p.sound.map { .string($0) } ?? .null])
            }
        case .httpFetch:
            text = (try? Boundary.HTTPFetch(wireBytes: bytes)).map { m in
                "\(m.method) \(m.url)\nheaders: \(m.headerPairs.map { "\($0.0): \($0.1)" }.joined(separator: ", "))\nbody: \(String(decoding: m.body, as: UTF8.self))"
            }
        case .signJWT:
            text = (try? Boundary.SignJWT(wireBytes: bytes)).map {
                json(["claims": .map($0.claims), "header": .map($0.header), "keyID": $0.keyID.map { .string($0) } ?? .null, "privateKey": .string($0.privateKeyPEM)])
            }
        case .verifyIDToken:
            text = (try? Boundary.VerifyIDToken(wireBytes: bytes)).map { "token: \($0.token)\ncheckRevoked: \($0.checkRevoked)" }
        case .createCustomToken:
            text = (try? Boundary.CreateCustomToken(wireBytes: bytes)).map { json(["uid": .string($0.uid), "claims": $0.claims.map { .map($0) } ?? .null]) }
        case .streamSend:
            text = (try? Boundary.StreamSend(wireBytes: bytes)).map { json($0.chunk) }
        case .getDocuments: text = lines(Boundary.GetDocuments.self, bytes)
        case .runQuery: text = lines(Boundary.RunQuery.self, bytes)
        case .countQuery: text = lines(Boundary.CountQuery.self, bytes)
        case .listCollections: text = lines(Boundary.ListCollections.self, bytes)
        case .listDocuments: text = lines(Boundary.ListDocuments.self, bytes)
        case .recursiveDelete: text = lines(Boundary.RecursiveDelete.self, bytes)
        case .transactionGet: text = lines(Boundary.TransactionGet.self, bytes)
        case .transactionQuery: text = lines(Boundary.TransactionQuery.self, bytes)
        case .deleteTask: text = lines(Boundary.DeleteTask.self, bytes)
        case .getUser: text = lines(Boundary.GetUser.self, bytes)
        case .createUser: text = lines(Boundary.CreateUser.self, bytes)
        case .updateUser: text = lines(Boundary.UpdateUser.self, bytes)
        case .deleteUser: text = lines(Boundary.DeleteUser.self, bytes)
        case .secretGet: text = lines(Boundary.SecretGet.self, bytes)
        case .paramGet: text = lines(Boundary.ParamGet.self, bytes)
        case .clockSleep: text = lines(Boundary.ClockSleep.self, bytes)
        default: text = nil
        }
        return text ?? "\(op.name): \(bytes.count) bytes \(Base64.encode(bytes))"
    }

    /// Whether two requests of `op` say the same (their canonical texts agree; tokens minted at
    /// different times compare equal).
    static func same(_ op: Boundary.Operation, _ a: [UInt8], _ b: [UInt8]) -> Bool {
        a == b || Redactor.normalized(request(op, a)) == Redactor.normalized(request(op, b))
    }

    static func outcome(_ r: Result<Boundary.InvocationResult, RemoteError>) -> String {
        switch r {
        case .success(.value(let v)): return "result: " + JSONWriter.string(v, options: .tagged)
        case .success(.response(let response)):
            // A JSON body in canonical form (keys sorted), so key order never reads as a change.
            let body = (try? JSONParser.parse(response.body)).map { JSONWriter.string($0, options: .sorted) } ?? String(decoding: response.body, as: UTF8.self)
            return "response \(response.status)\nheaders: \(response.headers.fields.map { "\($0.name): \($0.value)" }.joined(separator: ", "))\nbody: \(body)"
        case .success(.none): return "ok"
        case .failure(let e): return "error \(e.code.rawValue): \(e.message)"
        }
    }

    /// Whether two texts agree once normalized (`Redactor.normalized`), their RFC 3339 times
    /// (`2026-01-01T00:00:00.123Z`, in order) each within `tolerance` of the other's.
    static func same(_ a: String, _ b: String, tolerance: Duration) -> Bool {
        let (x, xt) = splitTimes(Redactor.normalized(a)), (y, yt) = splitTimes(Redactor.normalized(b))
        guard x == y, xt.count == yt.count else { return false }
        return zip(xt, yt).allSatisfy { ($0 > $1 ? $0 - $1 : $1 - $0) <= tolerance }
    }

    /// The text with each RFC 3339 UTC time replaced by `<time>`, and the times.
    static func splitTimes(_ s: String) -> (String, [Timestamp]) {
        let u = Array(s.utf8)
        func digit(_ i: Int) -> Bool { i < u.count && u[i] >= 48 && u[i] <= 57 }
        var out: [UInt8] = [], times: [Timestamp] = []
        var i = 0
        while i < u.count {
            // yyyy-mm-ddThh:mm:ss[.fraction]Z
            if digit(i), digit(i + 3), i + 19 < u.count, u[i + 4] == 45, u[i + 7] == 45, u[i + 10] == 84, u[i + 13] == 58, u[i + 16] == 58 {
                var j = i + 19
                if j < u.count, u[j] == 46 { j += 1; while digit(j) { j += 1 } }
                if j < u.count, u[j] == 90, let t = Timestamp(rfc3339: String(decoding: u[i...j], as: UTF8.self)) {
                    times.append(t)
                    out += Array("<time>".utf8)
                    i = j + 1
                    continue
                }
            }
            out.append(u[i])
            i += 1
        }
        return (String(decoding: out, as: UTF8.self), times)
    }

    /// A line diff: lines only in `old` as `-`, only in `new` as `+`, with one line of context.
    static func diff(_ old: String, _ new: String) -> String {
        let a = old.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let b = new.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        guard a.count * b.count <= 4_000_000 else { return "- " + a.prefix(40).joined(separator: "\n- ") + "\n+ " + b.prefix(40).joined(separator: "\n+ ") }
        // Longest common subsequence table.
        var table = [[Int]](repeating: [Int](repeating: 0, count: b.count + 1), count: a.count + 1)
        for i in stride(from: a.count - 1, through: 0, by: -1) {
            for j in stride(from: b.count - 1, through: 0, by: -1) {
                table[i][j] = a[i] == b[j] ? table[i + 1][j + 1] + 1 : max(table[i + 1][j], table[i][j + 1])
            }
        }
        var out: [(Character, String)] = []
        var i = 0, j = 0
        while i < a.count || j < b.count {
            if i < a.count, j < b.count, a[i] == b[j] {
                out.append((" ", a[i])); i += 1; j += 1
            } else if j < b.count, i == a.count || table[i][j + 1] >= table[i + 1][j] {
                out.append(("+", b[j])); j += 1
            } else {
                out.append(("-", a[i])); i += 1
            }
        }
        // Changed lines with one line of context around them.
        var keep = Set<Int>()
        for (k, line) in out.enumerated() where line.0 != " " { keep.formUnion([k - 1, k, k + 1]) }
        return out.enumerated().filter { keep.contains($0.offset) }.map { "\($0.element.0) \($0.element.1)" }.joined(separator: "\n")
    }
}
