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
        operation == .secretGet ? (try? Redactor().decode(Boundary.SecretGet.self, request))?.name : nil
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

extension RecordLine {
    static func b64(_ bytes: [UInt8]) -> Value { .string(Base64.encode(bytes)) }

    static func wire<M: WireEncodable>(_ m: M) -> [UInt8] {
        var w = WireWriter(capacity: 128)
        m.encode(to: &w)
        return w.finish()
    }

    static func errorValue(_ e: RemoteError) -> Value {
        var m: [String: Value] = ["code": .string(e.code.rawValue), "message": .string(e.message)]
        if let debug = e.debug { m["debug"] = .string(debug) }
        return .map(m)
    }

    /// The line's JSON (one line, no newline).
    public var json: [UInt8] {
        let value: Value
        switch self {
        case .header(let h):
            value = ["type": "header", "format": .int(Int64(h.format)), "hearth": .string(h.hearth), "boundary": .int(Int64(h.boundary)),
                     "process": .string(h.process), "pid": .int(Int64(h.pid)), "startedAt": .string(h.startedAt.rfc3339),
                     "units": .map(h.units.mapValues { .string($0) }), "config": h.config]
        case .invocation(let i):
            var m: [String: Value] = ["type": "invocation", "n": .int(i.n), "id": .string(Invoker.format(i.id)), "function": .string(i.function),
                                      "unit": .string(i.unit), "version": .string(i.version), "kind": .string(i.kind), "external": .bool(i.external),
                                      "at": .string(i.at.rfc3339), "invoke": RecordLine.b64(RecordLine.wire(i.invoke)), "summary": i.invoke.event.summary,
                                      "micros": .int(i.micros)]
            if let d = i.delivery { m["delivery"] = .int(d) }
            if let a = i.attempt { m["attempt"] = .int(Int64(a)) }
            m["calls"] = .array(i.calls.map { call in
                var c: [String: Value] = ["op": .string(call.operation.name), "request": RecordLine.b64(call.request)]
                switch call.reply {
                case .success(let bytes)?: c["reply"] = RecordLine.b64(bytes)
                case .failure(let e)?: c["error"] = RecordLine.errorValue(e)
                case nil: c["unanswered"] = true
                }
                return .map(c)
            })
            switch i.outcome {
            case .success(let r): m["outcome"] = ["result": RecordLine.b64(RecordLine.wire(r))]
            case .failure(let e): m["outcome"] = ["error": RecordLine.errorValue(e)]
            }
            value = .map(m)
        case .input(let input):
            var m: [String: Value] = ["type": "input", "n": .int(input.n), "at": .string(input.at.rfc3339), "kind": .string(input.kindName)]
            switch input.kind {
            case .write(let commit): m["body"] = RecordLine.b64(RecordLine.wire(commit))
            case .userCreated(let user): m["body"] = RecordLine.b64(RecordLine.wire(user))
            case .userDeleted(let uid): m["uid"] = .string(uid)
            case .tasks(let tasks): m["body"] = RecordLine.b64(RecordLine.wire(Boundary.EnqueueTasks(tasks: tasks)))
            }
            value = .map(m)
        case .change(let c):
            value = ["type": "change", "n": .int(c.n), "seq": .int(c.sequence), "path": .string(c.path.description),
                     "time": .string(c.time.rfc3339), "after": c.after.map { RecordLine.b64(RecordLine.wire($0)) } ?? .null]
        case .deadLetter(let d):
            value = ["type": "deadLetter", "n": .int(d.n), "at": .string(d.at.rfc3339), "function": .string(d.function),
                     "event": RecordLine.b64(RecordLine.wire(d.event)), "summary": d.event.summary, "error": .string(d.error)]
        }
        return JSONWriter.encode(value, options: .sorted)
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
            do { return try Redactor().decode(M.self, raw) } catch { throw fail("field '\(key)': \(error)") }
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
