/// Hearth's export format, version 1: a directory holding one JSON-lines file per kind of record
/// and `manifest.json`, which is written last (a directory without it holds no finished export).
///
/// ```
/// manifest.json     {"format": "hearth-export", "formatVersion": 1, "boundaryVersion": 2,
///                    "exportTime": "…Z", "counts": {"documents": 3, …}, "files": {"documents": "documents.jsonl", …}}
/// documents.jsonl   {"path": "members/alice", "createTime": "…Z", "updateTime": "…Z", "fields": {…}}
/// users.jsonl       a UserRecord as `ValueEncoder` writes it, password hash and provider links included
/// deliveries.jsonl  {"id": 7, "function": "work", "eventId": "…", "state": "pending", "attempts": 0, …,
///                    "event": {"$bytes": "…"}}   (the event in the unit boundary's encoding)
/// schedules.jsonl   {"function": "nightly", "lastFire": "…Z"}
/// taskIds.jsonl     {"queue": "work", "id": "t1", "enqueueTime": "…Z"}   (ids reserved for deduplication)
/// ```
///
/// Values are tagged JSON (`JSONWriteOptions.tagged`: `{"$timestamp": "…"}`, `{"$bytes": "…"}`,
/// `{"$reference": "…"}`, `{"$geopoint": {…}}`, `{"$double": "NaN"}`), which reads back to the same
/// `Value`: integers stay integers, integral doubles keep their `.0`, -0.0 its sign, timestamps
/// their nanoseconds. Times outside values are RFC 3339 strings. Keys are sorted, so one store
/// gives the same bytes every time.
public enum ExportFormat {
    public static let name = "hearth-export"
    public static let version = 1
    public static let manifestFile = "manifest.json"
    /// Progress is reported after every this many lines of a file (and when it is done).
    public static let progressInterval = 10_000

    /// How record lines are written and read.
    public static let writeOptions = JSONWriteOptions(style: .tagged, sortKeys: true)
    public static let readOptions = JSONReadOptions.tagged

    /// The kinds of record, in the order an export writes them and an import reads them.
    public enum Kind: String, Sendable, Hashable, CaseIterable, Comparable {
        case documents, users, deliveries, schedules
        case taskIDs = "taskIds"

        public var fileName: String { rawValue + ".jsonl" }

        /// Every kind, counted 0.
        public static var noneOfEach: [Kind: Int] { Dictionary(uniqueKeysWithValues: allCases.map { ($0, 0) }) }

        public static func < (a: Kind, b: Kind) -> Bool {
            allCases.firstIndex(of: a)! < allCases.firstIndex(of: b)!
        }
    }
}

/// One record of an export.
public enum ExportRecord: Sendable, Hashable {
    /// A document with its create and update times.
    case document(StoredDocument)
    /// A user as stored: password hash, provider links, claims, metadata.
    case user(UserRecord)
    /// A queued delivery (a trigger's, a task, a schedule firing), pending, running or dead.
    case delivery(Delivery)
    /// A schedule's last firing.
    case schedule(function: String, lastFire: Timestamp)
    /// A task id reserved in its queue (so it is refused again within its dedupe window).
    case taskID(queue: String, id: String, enqueueTime: Timestamp)

    public var kind: ExportFormat.Kind {
        switch self {
        case .document: return .documents
        case .user: return .users
        case .delivery: return .deliveries
        case .schedule: return .schedules
        case .taskID: return .taskIDs
        }
    }
}

/// What is wrong with one line of an export, or with its manifest: the field, and why.
public struct ExportLineError: Error, Sendable, Equatable, CustomStringConvertible {
    public var field: String?
    public var message: String

    public init(field: String? = nil, _ message: String) {
        self.field = field
        self.message = message
    }

    public var description: String { field.map { "field '\($0)': \(message)" } ?? message }
}

// MARK: writing

extension ExportRecord {
    /// The record as its line holds it (without the newline).
    public func jsonLine() throws -> [UInt8] {
        JSONWriter.encode(try value(), options: ExportFormat.writeOptions)
    }

    func value() throws -> Value {
        switch self {
        case .document(let d):
            return ["path": .string(d.path.description), "createTime": .string(d.createTime.rfc3339),
                    "updateTime": .string(d.updateTime.rfc3339), "fields": .map(d.fields)]
        case .user(let u):
            return try ValueEncoder().encode(u)
        case .delivery(let d):
            var m: [String: Value] = [
                "id": .int(d.id), "function": .string(d.function), "eventId": .string(d.eventID), "event": .bytes(d.payload),
                "state": .string(d.state.name), "attempts": .int(Int64(d.attempts)), "executions": .int(Int64(d.executions)),
                "dueTime": .string(d.dueTime.rfc3339), "createTime": .string(d.createTime.rfc3339),
            ]
            if let key = d.orderingKey { m["orderingKey"] = .string(key) }
            if let t = d.firstAttemptTime { m["firstAttemptTime"] = .string(t.rfc3339) }
            if let e = d.lastError { m["lastError"] = .string(e) }
            if let s = d.lastStatus { m["lastStatus"] = .int(Int64(s)) }
            if let deadline = d.dispatchDeadline { m["dispatchDeadlineSeconds"] = .double(deadline.secondsDouble) }
            return .map(m)
        case .schedule(let function, let lastFire):
            return ["function": .string(function), "lastFire": .string(lastFire.rfc3339)]
        case .taskID(let queue, let id, let time):
            return ["queue": .string(queue), "id": .string(id), "enqueueTime": .string(time.rfc3339)]
        }
    }
}

// MARK: reading

extension ExportRecord {
    /// Reads one line of a file of `kind`, checking every field: its type, its range, and the
    /// rules the store holds it to (paths, user fields, a delivery's event).
    public init(line: UnsafeBufferPointer<UInt8>, kind: ExportFormat.Kind) throws(ExportLineError) {
        let value: Value
        do { value = try JSONParser.parse(line, options: ExportFormat.readOptions) } catch {
            throw ExportLineError("not valid JSON: \(error.message) (at byte \(error.offset + 1) of the line)")
        }
        guard case .map(let members) = value else { throw ExportLineError("a line must hold a JSON object, not \(value.typeName)") }
        var m = LineFields(members)
        switch kind {
        case .documents:
            let path: DocumentPath
            do { path = try DocumentPath(try m.string("path")) } catch let e as ExportLineError { throw e } catch {
                throw ExportLineError(field: "path", (error as? HTTPSError)?.message ?? "\(error)")
            }
            let created = try m.time("createTime"), updated = try m.time("updateTime")
            guard created <= updated else { throw ExportLineError(field: "updateTime", "\(updated.rfc3339) is before the createTime \(created.rfc3339)") }
            guard case .map(let fields)? = m.take("fields") else { throw ExportLineError(field: "fields", "missing, or not a map") }
            try m.noneLeft()
            self = .document(StoredDocument(path: path, fields: fields, createTime: created, updateTime: updated))
        case .users:
            try ExportRecord.checkKeys(value, against: ExportRecord.userShape, at: "")
            let user: UserRecord
            do { user = try ValueDecoder().decode(UserRecord.self, from: value) } catch {
                throw ExportLineError(describeDecodingError(error))
            }
            try ExportRecord.check(user)
            self = .user(user)
        case .deliveries:
            self = .delivery(try ExportRecord.delivery(&m))
        case .schedules:
            let function = try m.name("function")
            let lastFire = try m.time("lastFire")
            try m.noneLeft()
            self = .schedule(function: function, lastFire: lastFire)
        case .taskIDs:
            let queue = try m.name("queue"), id = try m.name("id")
            let time = try m.time("enqueueTime")
            try m.noneLeft()
            self = .taskID(queue: queue, id: id, enqueueTime: time)
        }
    }

    public init(line: [UInt8], kind: ExportFormat.Kind) throws(ExportLineError) {
        var outcome: Result<ExportRecord, ExportLineError>!
        line.withUnsafeBufferPointer { buffer in
            outcome = Result { () throws(ExportLineError) -> ExportRecord in try ExportRecord(line: buffer, kind: kind) }
        }
        self = try outcome.get()
    }

    static func delivery(_ m: inout LineFields) throws(ExportLineError) -> Delivery {
        let id = try m.int("id", in: 1...Int64.max)
        let function = try m.name("function")
        let eventID = try m.string("eventId")
        guard case .bytes(let payload)? = m.take("event") else { throw ExportLineError(field: "event", "missing, or not {\"$bytes\": …}") }
        do { _ = try Boundary.Event(wireBytes: payload) } catch {
            throw ExportLineError(field: "event", "not an event in this Hearth's boundary encoding (version \(Boundary.version)): \(error)")
        }
        let stateName = try m.string("state")
        guard let state = DeliveryState(name: stateName) else {
            throw ExportLineError(field: "state", "'\(Printable.quoted(stateName, limit: 40))' is not pending, running or dead")
        }
        let attempts = try m.int("attempts", in: 0...Int64(Int32.max))
        let executions = try m.int("executions", in: 0...Int64(Int32.max))
        let due = try m.time("dueTime"), created = try m.time("createTime")
        let key = try m.optionalString("orderingKey")
        let first = try m.optionalTime("firstAttemptTime")
        let error = try m.optionalString("lastError")
        let status = try m.optionalInt("lastStatus", in: 0...999)
        var deadline: Duration?
        if let v = m.take("dispatchDeadlineSeconds"), !v.isNull {
            guard let seconds = v.doubleValue, seconds.isFinite, seconds >= 0, seconds <= 86_400 * 366 else {
                throw ExportLineError(field: "dispatchDeadlineSeconds", "must be a number of seconds from 0 to a year")
            }
            deadline = .seconds(double: seconds)
        }
        try m.noneLeft()
        return Delivery(id: id, function: function, eventID: eventID, orderingKey: key, payload: payload, attempts: Int(attempts),
                        firstAttemptTime: first, dueTime: due, state: state, lastError: error, lastStatus: status.map { Int($0) },
                        dispatchDeadline: deadline, createTime: created, executions: Int(executions))
    }

    /// The keys a user's line may have at each level: what `ValueEncoder` writes for a
    /// `UserRecord` with every field set (`null` where anything goes: the custom claims).
    static let userShape: Value = {
        let t = Timestamp.zero
        var user = UserRecord(uid: "u", email: "e", displayName: "n", photoURL: "p", phoneNumber: "+1",
                              metadata: .init(creationTime: t, lastSignInTime: t, lastRefreshTime: t),
                              providerData: [.init(providerId: "p", uid: "u", email: "e", displayName: "n", photoURL: "p", phoneNumber: "+1")],
                              customClaims: [:], tokensValidAfterTime: t)
        user.passwordHash = PasswordHash(algorithm: .standardScrypt, hash: "", salt: "", costLog2: 1, blockSize: 1, signerKey: "", saltSeparator: "")
        user.passwordUpdatedAt = t
        guard case .map(var shape)? = try? ValueEncoder().encode(user) else { return .null }
        shape["customClaims"] = .null
        return .map(shape)
    }()

    /// Refuses a key `shape` does not have, naming its path (`metadata.lastLogin`).
    static func checkKeys(_ value: Value, against shape: Value, at path: String) throws(ExportLineError) {
        switch (value, shape) {
        case (.map(let members), .map(let known)):
            for (key, member) in members.sorted(by: { $0.key < $1.key }) {
                let here = path.isEmpty ? key : path + "." + key
                guard let inner = known[key] else { throw ExportLineError(field: here, "unknown field") }
                try checkKeys(member, against: inner, at: here)
            }
        case (.array(let items), .array(let known)) where !known.isEmpty:
            for (i, item) in items.enumerated() { try checkKeys(item, against: known[0], at: path + "[\(i)]") }
        default:
            return
        }
    }

    /// The rules a user's fields are held to when it is created (`UserRules`).
    static func check(_ user: UserRecord) throws(ExportLineError) {
        func rule(_ field: String, _ body: () throws -> Void) throws(ExportLineError) {
            do { try body() } catch { throw ExportLineError(field: field, (error as? HTTPSError)?.message ?? "\(error)") }
        }
        try rule("uid") { try UserRules.checkUID(user.uid) }
        if let email = user.email { try rule("email") { try UserRules.checkEmail(email) } }
        if let phone = user.phoneNumber { try rule("phoneNumber") { try UserRules.checkPhone(phone) } }
        if let url = user.photoURL { try rule("photoURL") { try UserRules.checkPhotoURL(url) } }
        if let name = user.displayName { try rule("displayName") { try UserRules.checkDisplayName(name) } }
        if let claims = user.customClaims { try rule("customClaims") { try UserRules.checkClaims(claims) } }
        for (i, p) in user.providerData.enumerated() where p.providerId.isEmpty || p.uid.isEmpty {
            throw ExportLineError(field: "providerData[\(i)]", "a linked provider needs a providerId and a uid")
        }
        if let hash = user.passwordHash {
            guard Base64.decode(hash.hash)?.isEmpty == false else { throw ExportLineError(field: "passwordHash.hash", "not base64, or empty") }
            guard Base64.decode(hash.salt) != nil else { throw ExportLineError(field: "passwordHash.salt", "not base64") }
        }
    }
}

/// The members of one line's object, taken one at a time so that whatever is left over (a
/// misspelt or unknown key) is refused by name.
struct LineFields {
    private var members: [String: Value]

    init(_ members: [String: Value]) { self.members = members }

    mutating func take(_ key: String) -> Value? { members.removeValue(forKey: key) }

    mutating func string(_ key: String) throws(ExportLineError) -> String {
        guard let v = take(key) else { throw ExportLineError(field: key, "missing") }
        guard case .string(let s) = v else { throw ExportLineError(field: key, "expected a string, found \(v.typeName)") }
        return s
    }

    /// A non-empty string (a function, queue or task name).
    mutating func name(_ key: String) throws(ExportLineError) -> String {
        let s = try string(key)
        guard !s.isEmpty else { throw ExportLineError(field: key, "must not be empty") }
        return s
    }

    mutating func optionalString(_ key: String) throws(ExportLineError) -> String? {
        guard let v = take(key), !v.isNull else { return nil }
        guard case .string(let s) = v else { throw ExportLineError(field: key, "expected a string, found \(v.typeName)") }
        return s
    }

    mutating func int(_ key: String, in range: ClosedRange<Int64>) throws(ExportLineError) -> Int64 {
        guard let i = try optionalInt(key, in: range) else { throw ExportLineError(field: key, "missing") }
        return i
    }

    mutating func optionalInt(_ key: String, in range: ClosedRange<Int64>) throws(ExportLineError) -> Int64? {
        guard let v = take(key), !v.isNull else { return nil }
        guard case .int(let i) = v else { throw ExportLineError(field: key, "expected an integer, found \(v.typeName)") }
        guard range.contains(i) else { throw ExportLineError(field: key, "\(i) is out of range (\(range.lowerBound) to \(range.upperBound))") }
        return i
    }

    mutating func time(_ key: String) throws(ExportLineError) -> Timestamp {
        guard let t = try optionalTime(key) else { throw ExportLineError(field: key, "missing") }
        return t
    }

    /// An RFC 3339 string (or a tagged timestamp) within Firestore's years 1 to 9999.
    mutating func optionalTime(_ key: String) throws(ExportLineError) -> Timestamp? {
        guard let v = take(key), !v.isNull else { return nil }
        let time: Timestamp
        switch v {
        case .timestamp(let t): time = t
        case .string(let s):
            guard let t = Timestamp(rfc3339: s) else { throw ExportLineError(field: key, "'\(Printable.quoted(s, limit: 60))' is not an RFC 3339 time") }
            time = t
        default: throw ExportLineError(field: key, "expected an RFC 3339 time, found \(v.typeName)")
        }
        guard time.isInFirestoreRange else { throw ExportLineError(field: key, "\(time.rfc3339) is outside years 1 to 9999") }
        return time
    }

    /// Refuses keys no reader took.
    func noneLeft() throws(ExportLineError) {
        if let extra = members.keys.sorted().first { throw ExportLineError(field: extra, "unknown field") }
    }
}
