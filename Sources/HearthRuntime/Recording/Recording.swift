import Foundation
import HearthModel

/// Hearth's release, as recordings and `hearth --version` name it.
public enum HearthVersion {
    public static let string = "0.14.0"
}

/// What one recording file line holds. A recording is a directory of JSON-lines files (one series
/// per process that recorded, rotated by size); every file starts with a header line.
///
/// Messages are kept as the boundary carries them (their wire encoding, base64), redacted, with a
/// readable `summary` beside the event; the same bytes feed a replay.
public enum RecordLine: Sendable {
    case header(RecordingHeader)
    case invocation(RecordedInvocation)
    case input(RecordedInput)
    case change(RecordedChange)
    case deadLetter(RecordedDeadLetter)
}

/// The first line of every file.
public struct RecordingHeader: Sendable, Hashable {
    public var format: Int
    public var hearth: String
    public var boundary: Int
    /// `serve`, `cli`, `test`.
    public var process: String
    public var pid: Int
    public var startedAt: Timestamp
    /// Each unit's version (its deployed content hash, or `build`).
    public var units: [String: String]
    /// runtime.toml as loaded, without secrets.
    public var config: Value

    public static let currentFormat = 1
}

/// A host-service call an invocation made, with its reply.
public struct RecordedCall: Sendable {
    public var operation: Boundary.Operation
    /// The request message (redacted), without its frame header.
    public var request: [UInt8]
    public var reply: Result<[UInt8], RemoteError>?

    /// The secret a `secrets.get` call asked for.
    public var secretName: String? {
        operation == .secretGet ? (try? Boundary.SecretGet(wireBytes: request))?.name : nil
    }

    public init(operation: Boundary.Operation, request: [UInt8], reply: Result<[UInt8], RemoteError>?) {
        self.operation = operation
        self.request = request
        self.reply = reply
    }
}

/// One invocation: its event (the `Invoke` message: function, event, clock reading, random seed),
/// every service call in the order the unit made them, and its outcome.
public struct RecordedInvocation: Sendable {
    /// Order within the recording process.
    public var n: Int64
    public var id: UInt64
    public var function: String
    public var unit: String
    public var version: String
    /// An input from outside (a callable or HTTP request, a schedule's instant); else caused by
    /// other work (a trigger of a write, a task a unit enqueued…).
    public var external: Bool
    public var delivery: Int64?
    public var attempt: Int?
    public var at: Timestamp
    public var invoke: Boundary.Invoke
    public var calls: [RecordedCall]
    public var outcome: Result<Boundary.InvocationResult, RemoteError>
    public var micros: Int64
    /// `invoke`'s encoding, when already at hand (the recorder has it).
    var invokeBytes: [UInt8]? = nil
    /// The successful outcome's encoding, when already at hand.
    var resultBytes: [UInt8]? = nil

    public var kind: String { invoke.event.kind }
}

/// An input that is not an invocation: a document write from the CLI or the admin API, an auth
/// user created or deleted from outside a unit, tasks enqueued from outside.
public struct RecordedInput: Sendable {
    public enum Kind: Sendable {
        case write(Boundary.Commit)
        case userCreated(UserRecord)
        case userDeleted(uid: String)
        case tasks([TaskSpec])
        /// `hearth docs delete --recursive`: a document or collection and everything beneath.
        case recursiveDelete(path: [String])
    }

    public var n: Int64
    public var at: Timestamp
    public var kind: Kind

    public var kindName: String {
        switch kind {
        case .write: return "write"
        case .userCreated: return "userCreated"
        case .userDeleted: return "userDeleted"
        case .tasks: return "tasks"
        case .recursiveDelete: return "recursiveDelete"
        }
    }
}

/// A committed document change (from the change feed), so a replay can compare the documents it
/// ends with against the recorded ones.
public struct RecordedChange: Sendable {
    public var n: Int64
    public var sequence: Int64
    public var path: DocumentPath
    public var after: StoredDocument?
    public var time: Timestamp
    /// `after`'s encoding, when already at hand.
    var afterBytes: [UInt8]? = nil
}

/// A delivery that failed for good.
public struct RecordedDeadLetter: Sendable, Hashable {
    public var n: Int64
    public var at: Timestamp
    public var function: String
    public var event: Boundary.Event
    public var error: String
}

/// A recording file's problem, with where it is.
public struct RecordingError: Error, CustomStringConvertible, Sendable {
    public var file: String
    public var line: Int
    public var message: String

    public init(file: String, line: Int, message: String) {
        self.file = file
        self.line = line
        self.message = message
    }

    public var description: String { line > 0 ? "\(file):\(line): \(message)" : "\(file): \(message)" }
}

// MARK: JSON lines

extension Boundary.Event {
    /// What a recording line shows of its event, for people reading the file (the event itself
    /// is in the `invoke` message): the kind and what it is about, never its data.
    var recordSummary: Value {
        switch self {
        case .callable(let e): return ["kind": "callable", "uid": e.auth.map { .string($0.uid) } ?? .null]
        case .request(let e): return ["kind": "request", "method": .string(e.method), "path": .string(e.path)]
        case .document(let e): return ["kind": "document", "change": .string(e.kind.rawValue), "path": .string(e.path.description)]
        case .task(let e): return ["kind": "task", "queue": .string(e.queueName), "id": .string(e.id)]
        case .schedule(let e): return ["kind": "schedule", "jobName": .string(e.jobName), "scheduleTime": .timestamp(e.scheduleTime)]
        case .user(let e): return ["kind": "user", "change": .string(e.kind.rawValue), "uid": .string(e.user.uid)]
        }
    }
}

extension RecordLine {
    static func b64(_ bytes: [UInt8]) -> Value { .string(Base64.encode(bytes)) }

    static func errorValue(_ e: RemoteError) -> Value {
        var m: [String: Value] = ["code": .string(e.code.rawValue), "message": .string(e.message)]
        if let debug = e.debug { m["debug"] = .string(debug) }
        return .map(m)
    }

    /// The line's JSON (one line, no newline). Written by hand, keys in a fixed order: a
    /// recording costs its process little (`Scripts/bench/replay`).
    public var json: [UInt8] {
        var w = JSONWriter(options: .plain, capacity: 512)
        func b64(_ bytes: [UInt8]) {
            w.writeRaw("\"")
            w.writeRaw(Base64.encodeBytes(bytes))
            w.writeRaw("\"")
        }
        func int(_ v: Int64) { w.write(.int(v)) }
        func error(_ e: RemoteError) { w.write(RecordLine.errorValue(e)) }
        switch self {
        case .header(let h):
            w.write(["type": "header", "format": .int(Int64(h.format)), "hearth": .string(h.hearth), "boundary": .int(Int64(h.boundary)),
                     "process": .string(h.process), "pid": .int(Int64(h.pid)), "startedAt": .string(h.startedAt.rfc3339),
                     "units": .map(h.units.mapValues { .string($0) }), "config": h.config])
        case .invocation(let i):
            w.writeRaw("{\"type\":\"invocation\",")
            w.writeKey("n"); int(i.n)
            w.writeRaw(","); w.writeKey("id"); w.writeString(Invoker.format(i.id))
            w.writeRaw(","); w.writeKey("function"); w.writeString(i.function)
            w.writeRaw(","); w.writeKey("unit"); w.writeString(i.unit)
            w.writeRaw(","); w.writeKey("version"); w.writeString(i.version)
            w.writeRaw(","); w.writeKey("kind"); w.writeString(i.kind)
            w.writeRaw(","); w.writeKey("external"); w.write(.bool(i.external))
            if let d = i.delivery { w.writeRaw(","); w.writeKey("delivery"); int(d) }
            if let a = i.attempt { w.writeRaw(","); w.writeKey("attempt"); int(Int64(a)) }
            w.writeRaw(","); w.writeKey("at"); w.writeString(i.at.rfc3339)
            w.writeRaw(","); w.writeKey("micros"); int(i.micros)
            w.writeRaw(","); w.writeKey("summary"); w.write(i.invoke.event.recordSummary)
            w.writeRaw(","); w.writeKey("invoke"); b64(i.invokeBytes ?? i.invoke.wireBytes)
            w.writeRaw(","); w.writeKey("calls"); w.writeRaw("[")
            for (k, call) in i.calls.enumerated() {
                if k > 0 { w.writeRaw(",") }
                w.writeRaw("{"); w.writeKey("op"); w.writeString(call.operation.name)
                w.writeRaw(","); w.writeKey("request"); b64(call.request)
                switch call.reply {
                case .success(let bytes)?: w.writeRaw(","); w.writeKey("reply"); b64(bytes)
                case .failure(let e)?: w.writeRaw(","); w.writeKey("error"); error(e)
                case nil: w.writeRaw(",\"unanswered\":true")
                }
                w.writeRaw("}")
            }
            w.writeRaw("],"); w.writeKey("outcome")
            switch i.outcome {
            case .success(let r): w.writeRaw("{"); w.writeKey("result"); b64(i.resultBytes ?? r.wireBytes); w.writeRaw("}")
            case .failure(let e): w.writeRaw("{"); w.writeKey("error"); error(e); w.writeRaw("}")
            }
            w.writeRaw("}")
        case .input(let input):
            w.writeRaw("{\"type\":\"input\",")
            w.writeKey("n"); int(input.n)
            w.writeRaw(","); w.writeKey("at"); w.writeString(input.at.rfc3339)
            w.writeRaw(","); w.writeKey("kind"); w.writeString(input.kindName)
            switch input.kind {
            case .write(let commit): w.writeRaw(","); w.writeKey("body"); b64(commit.wireBytes)
            case .userCreated(let user): w.writeRaw(","); w.writeKey("body"); b64(user.wireBytes)
            case .userDeleted(let uid): w.writeRaw(","); w.writeKey("uid"); w.writeString(uid)
            case .tasks(let tasks): w.writeRaw(","); w.writeKey("body"); b64((Boundary.EnqueueTasks(tasks: tasks)).wireBytes)
            case .recursiveDelete(let path): w.writeRaw(","); w.writeKey("path"); w.write(.array(path.map { .string($0) }))
            }
            w.writeRaw("}")
        case .change(let c):
            w.writeRaw("{\"type\":\"change\",")
            w.writeKey("n"); int(c.n)
            w.writeRaw(","); w.writeKey("seq"); int(c.sequence)
            w.writeRaw(","); w.writeKey("path"); w.writeString(c.path.description)
            w.writeRaw(","); w.writeKey("time"); w.writeString(c.time.rfc3339)
            w.writeRaw(","); w.writeKey("after")
            if let after = c.after { b64(c.afterBytes ?? after.wireBytes) } else { w.writeRaw("null") }
            w.writeRaw("}")
        case .deadLetter(let d):
            w.write(["type": "deadLetter", "n": .int(d.n), "at": .string(d.at.rfc3339), "function": .string(d.function),
                     "event": RecordLine.b64(d.event.wireBytes), "summary": d.event.recordSummary, "error": .string(d.error)])
        }
        return w.bytes
    }

    /// Reads one line; `fail` names what is wrong.
    public init(json line: ArraySlice<UInt8>, fail: (String) -> RecordingError) throws(RecordingError) {
        let root: Value
        do { root = try JSONParser.parse([UInt8](line)) } catch { throw fail("not JSON: \(error)") }
        guard case .map(let m) = root else { throw fail("a line must be a JSON object") }
        func string(_ key: String) throws(RecordingError) -> String {
            guard let s = m[key]?.stringValue else { throw fail("field '\(key)' must be a string") }
            return s
        }
        func int(_ key: String) throws(RecordingError) -> Int64 {
            guard let i = m[key]?.intValue else { throw fail("field '\(key)' must be an integer") }
            return i
        }
        func time(_ key: String) throws(RecordingError) -> Timestamp {
            guard let t = Timestamp(rfc3339: try string(key)) else { throw fail("field '\(key)' must be an RFC 3339 time") }
            return t
        }
        func bytes(_ text: String, _ key: String) throws(RecordingError) -> [UInt8] {
            guard let b = Base64.decode(text) else { throw fail("field '\(key)' must be base64") }
            return b
        }
        func message<M: WireDecodable>(_ type: M.Type, _ key: String, from value: Value? = nil) throws(RecordingError) -> M {
            guard let text = (value ?? m[key])?.stringValue else { throw fail("field '\(key)' must be a base64 string") }
            let raw = try bytes(text, key)
            do { return try M(wireBytes: raw) } catch { throw fail("field '\(key)': \(error)") }
        }
        func remote(_ v: Value?, _ key: String) throws(RecordingError) -> RemoteError {
            guard case .map(let e)? = v, let code = e["code"]?.stringValue, let message = e["message"]?.stringValue else {
                throw fail("field '\(key)' must be {code, message}")
            }
            return RemoteError(code: FunctionsErrorCode(name: code) ?? .internal, message: message, debug: e["debug"]?.stringValue)
        }
        switch try string("type") {
        case "header":
            guard let format = m["format"]?.intValue, format == RecordingHeader.currentFormat else {
                throw fail("recording format \(m["format"].map { JSONWriter.string($0) } ?? "missing") is not supported (this Hearth reads format \(RecordingHeader.currentFormat))")
            }
            var units: [String: String] = [:]
            for (k, v) in m["units"]?.mapValue ?? [:] { units[k] = v.stringValue ?? "" }
            self = .header(RecordingHeader(format: Int(format), hearth: try string("hearth"), boundary: Int(try int("boundary")),
                                           process: try string("process"), pid: Int(clamping: try int("pid")), startedAt: try time("startedAt"),
                                           units: units, config: m["config"] ?? .null))
        case "invocation":
            guard let id = UInt64(try string("id"), radix: 16) else { throw fail("field 'id' must be a hex invocation id") }
            guard case .array(let rawCalls)? = m["calls"] else { throw fail("field 'calls' must be an array") }
            var calls: [RecordedCall] = []
            for (k, raw) in rawCalls.enumerated() {
                guard case .map(let c) = raw, let opName = c["op"]?.stringValue else { throw fail("calls[\(k)] must be an object with 'op'") }
                guard let op = Boundary.Operation.allCases.first(where: { $0.name == opName }) else { throw fail("calls[\(k)]: unknown operation '\(opName)'") }
                guard let requestText = c["request"]?.stringValue else { throw fail("calls[\(k)].request must be base64") }
                let reply: Result<[UInt8], RemoteError>?
                if let r = c["reply"]?.stringValue {
                    reply = .success(try bytes(r, "calls[\(k)].reply"))
                } else if c["error"] != nil {
                    reply = .failure(try remote(c["error"], "calls[\(k)].error"))
                } else {
                    reply = nil
                }
                calls.append(RecordedCall(operation: op, request: try bytes(requestText, "calls[\(k)].request"), reply: reply))
            }
            guard case .map(let outcome)? = m["outcome"] else { throw fail("field 'outcome' must be an object") }
            let result: Result<Boundary.InvocationResult, RemoteError>
            if let r = outcome["result"] {
                result = .success(try message(Boundary.InvocationResult.self, "outcome.result", from: r))
            } else {
                result = .failure(try remote(outcome["error"], "outcome.error"))
            }
            let invoke = try message(Boundary.Invoke.self, "invoke")
            guard invoke.function == (try string("function")) else { throw fail("field 'function' differs from the invoke message's") }
            self = .invocation(RecordedInvocation(n: try int("n"), id: id, function: invoke.function, unit: try string("unit"),
                                                  version: m["version"]?.stringValue ?? "build", external: m["external"]?.boolValue ?? false,
                                                  delivery: m["delivery"]?.intValue, attempt: m["attempt"]?.intValue.map { Int(clamping: $0) },
                                                  at: try time("at"), invoke: invoke, calls: calls, outcome: result, micros: m["micros"]?.intValue ?? 0))
        case "input":
            let kind: RecordedInput.Kind
            switch try string("kind") {
            case "write": kind = .write(try message(Boundary.Commit.self, "body"))
            case "userCreated": kind = .userCreated(try message(UserRecord.self, "body"))
            case "userDeleted": kind = .userDeleted(uid: try string("uid"))
            case "tasks": kind = .tasks(try message(Boundary.EnqueueTasks.self, "body").tasks)
            case "recursiveDelete":
                guard case .array(let parts)? = m["path"], !parts.isEmpty, parts.count <= 200, parts.allSatisfy({ ($0.stringValue?.isEmpty == false) }) else {
                    throw fail("field 'path' must be a non-empty array of path segments")
                }
                kind = .recursiveDelete(path: parts.map { $0.stringValue! })
            case let other: throw fail("unknown input kind '\(other)'")
            }
            self = .input(RecordedInput(n: try int("n"), at: try time("at"), kind: kind))
        case "change":
            let path: DocumentPath
            do { path = try DocumentPath(try string("path")) } catch { throw fail("field 'path': \(error)") }
            var after: StoredDocument?
            if let a = m["after"], a != .null { after = try message(StoredDocument.self, "after") }
            self = .change(RecordedChange(n: try int("n"), sequence: try int("seq"), path: path, after: after, time: try time("time")))
        case "deadLetter":
            self = .deadLetter(RecordedDeadLetter(n: try int("n"), at: try time("at"), function: try string("function"),
                                                  event: try message(Boundary.Event.self, "event"), error: try string("error")))
        case let other:
            throw fail("unknown line type '\(other)'")
        }
    }
}

/// A recording read whole: every file of a directory (or one file), lines in recorded order.
public struct Recording: Sendable {
    public var headers: [RecordingHeader] = []
    public var invocations: [RecordedInvocation] = []
    public var inputs: [RecordedInput] = []
    public var changes: [RecordedChange] = []
    public var deadLetters: [RecordedDeadLetter] = []
    /// Files read, in order.
    public var files: [String] = []

    public init() {}

    /// The recording files at `path`: the file itself, or a directory's `*.jsonl` files in name
    /// order (their names start with the time they were opened).
    public static func files(at path: String) throws(RecordingError) -> [String] {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw RecordingError(file: path, line: 0, message: "no such file or directory")
        }
        guard isDirectory.boolValue else { return [path] }
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).filter { $0.hasSuffix(".jsonl") }.sorted()
        guard !names.isEmpty else { throw RecordingError(file: path, line: 0, message: "the directory holds no recording (*.jsonl) files") }
        return names.map { path + "/" + $0 }
    }

    /// Reads a recording file or directory. A last line without its newline (a file still being
    /// written) is left out; anything else that cannot be read is an error naming file and line.
    public static func read(_ path: String) throws(RecordingError) -> Recording {
        var recording = Recording()
        for file in try files(at: path) {
            guard let data = FileManager.default.contents(atPath: file) else {
                throw RecordingError(file: file, line: 0, message: "cannot be read")
            }
            let bytes = [UInt8](data)
            var lineNumber = 0
            var start = 0
            var sawHeader = false
            while start < bytes.count {
                guard let end = bytes[start...].firstIndex(of: 0x0A) else { break }  // unfinished last line
                lineNumber += 1
                let slice = bytes[start..<end]
                start = end + 1
                if slice.allSatisfy({ $0 == 0x20 || $0 == 0x0D }) { continue }
                let line = try RecordLine(json: slice) { RecordingError(file: file, line: lineNumber, message: $0) }
                switch line {
                case .header(let h):
                    guard h.boundary == Int(Boundary.version) else {
                        throw RecordingError(file: file, line: lineNumber, message: "recorded with boundary version \(h.boundary); this Hearth speaks \(Boundary.version)")
                    }
                    recording.headers.append(h)
                    sawHeader = true
                case .invocation(let i): recording.invocations.append(i)
                case .input(let i): recording.inputs.append(i)
                case .change(let c): recording.changes.append(c)
                case .deadLetter(let d): recording.deadLetters.append(d)
                }
                if !sawHeader { throw RecordingError(file: file, line: lineNumber, message: "a recording file starts with a header line") }
            }
            recording.files.append(file)
        }
        recording.invocations.sort { ($0.at, $0.n) < ($1.at, $1.n) }
        recording.inputs.sort { ($0.at, $0.n) < ($1.at, $1.n) }
        recording.changes.sort { $0.sequence < $1.sequence }
        return recording
    }
}
