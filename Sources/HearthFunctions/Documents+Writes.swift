import HearthModel

/// Writes committed together, atomically (at most 500).
public final class WriteBatch: Sendable {
    let channel: HostChannel
    private let pending = Mutex<[DocumentWrite]>([])
    private let tasks = Mutex<[Value]>([])

    init(channel: HostChannel) { self.channel = channel }

    public var count: Int { pending.withLock { $0.count } }

    public func create<T: Encodable>(_ ref: DocumentReference, _ data: T) throws { try add(DocumentsWire.write(.create, ref.path, data)) }
    public func set<T: Encodable>(_ ref: DocumentReference, _ data: T) throws { try add(DocumentsWire.write(.set, ref.path, data)) }
    public func set<T: Encodable>(_ ref: DocumentReference, _ data: T, merge: Bool, mergeFields: [String]? = nil) throws {
        try add(DocumentsWire.write(merge || mergeFields != nil ? .merge(mergeFields) : .set, ref.path, data))
    }
    public func update(_ ref: DocumentReference, _ fields: [String: FieldUpdate]) throws { try add(DocumentsWire.update(ref.path, fields)) }
    public func delete(_ ref: DocumentReference, precondition: Precondition? = nil) { pending.withLock { $0.append(.delete(ref.path, precondition: precondition)) } }

    func add(_ write: DocumentWrite) { pending.withLock { $0.append(write) } }

    /// Adds a task to `queue` when the batch commits (and not if it fails).
    public func enqueue<T: Encodable>(_ queue: String, _ payload: T, options: TaskOptions = TaskOptions()) throws {
        let task = try options.wire(queue: queue, payload)
        tasks.withLock { $0.append(task) }
    }

    /// Commits every write and enqueue, or none of them.
    @discardableResult
    public func commit() async throws -> [WriteResult] {
        let writes = pending.withLock { $0 }
        let enqueues = tasks.withLock { $0 }
        guard !writes.isEmpty || !enqueues.isEmpty else { return [] }
        var arguments: [String: Value] = ["writes": try DocumentsWire.encode(writes)]
        if !enqueues.isEmpty { arguments["enqueues"] = .array(enqueues) }
        let reply = try await channel.call("docs.commit", arguments)
        return try DocumentsWire.commitResult(reply).writeResults
    }
}

/// A transaction in `Documents.runTransaction`: read with `get`, then write; writes are buffered
/// until the body returns.
public final class Transaction: Sendable {
    let id: Value
    let channel: HostChannel
    private let state = Mutex<[DocumentWrite]>([])
    private let tasks = Mutex<[Value]>([])

    init(id: Value, channel: HostChannel) {
        self.id = id
        self.channel = channel
    }

    var writes: [DocumentWrite] { state.withLock { $0 } }
    var enqueues: [Value] { tasks.withLock { $0 } }

    /// Adds a task to `queue` if the transaction commits (a retried transaction enqueues once).
    public func enqueue<T: Encodable>(_ queue: String, _ payload: T, options: TaskOptions = TaskOptions()) throws {
        let task = try options.wire(queue: queue, payload)
        tasks.withLock { $0.append(task) }
    }

    private func ensureNoWrites() throws {
        if !state.withLock({ $0.isEmpty }) { throw HTTPSError(.invalidArgument, "transactions must do all reads before any write") }
    }

    /// Reads a document, locking it until the transaction ends.
    public func get(_ ref: DocumentReference) async throws -> DocumentSnapshot<[String: Value]>? {
        try ensureNoWrites()
        let reply = try await channel.call("tx.get", ["txn": id, "paths": [.string(ref.path.description)]])
        return try DocumentsWire.snapshots(reply).first ?? nil
    }

    public func get<T: Decodable & Sendable>(_ ref: DocumentReference, as type: T.Type) async throws -> T? {
        guard let s = try await get(ref) else { return nil }
        return try DocumentsWire.decode(type, s.data, path: ref.path)
    }

    /// Runs a query in the transaction; a change to its results before commit aborts the transaction.
    public func getDocuments(_ query: Query) async throws -> [DocumentSnapshot<[String: Value]>] {
        try ensureNoWrites()
        let reply = try await channel.call("tx.query", ["txn": id, "query": try ValueEncoder().encode(query.spec)])
        return try DocumentsWire.snapshots(reply).compactMap { $0 }
    }

    public func create<T: Encodable>(_ ref: DocumentReference, _ data: T) throws { try add(DocumentsWire.write(.create, ref.path, data)) }
    public func set<T: Encodable>(_ ref: DocumentReference, _ data: T) throws { try add(DocumentsWire.write(.set, ref.path, data)) }
    public func set<T: Encodable>(_ ref: DocumentReference, _ data: T, merge: Bool, mergeFields: [String]? = nil) throws {
        try add(DocumentsWire.write(merge || mergeFields != nil ? .merge(mergeFields) : .set, ref.path, data))
    }
    public func update(_ ref: DocumentReference, _ fields: [String: FieldUpdate]) throws { try add(DocumentsWire.update(ref.path, fields)) }
    public func delete(_ ref: DocumentReference, precondition: Precondition? = nil) { add(.delete(ref.path, precondition: precondition)) }

    func add(_ write: DocumentWrite) { state.withLock { $0.append(write) } }
}

import Synchronization

/// Conversions between the client's types and the messages the host understands.
enum DocumentsWire {
    enum SetKind {
        case create, set
        case merge([String]?)
    }

    static func write<T: Encodable>(_ kind: SetKind, _ path: DocumentPath, _ data: T) throws -> DocumentWrite {
        let (value, transforms) = try ValueEncoder().encodeWithTransforms(data)
        guard case .map(let fields) = value else {
            throw HTTPSError(.invalidArgument, "document data for \(path) must be a map (a struct or dictionary), not \(value.typeName)")
        }
        let specs = transforms.map { FieldTransformSpec($0.path, $0.transform) }
        switch kind {
        case .create: return .create(path, fields, transforms: specs)
        case .set: return .set(path, fields, transforms: specs)
        case .merge(let list):
            let mergeFields = try list?.map { try FieldPath($0) }
            var write = DocumentWrite.merge(path, fields, mergeFields: mergeFields, transforms: specs.filter { $0.transform != .delete })
            // A FieldValue.delete() in a merge removes the field: put its path in the mask with no value.
            if case .update(let f, var mask?) = write.operation {
                mask += specs.filter { $0.transform == .delete }.map(\.field)
                write.operation = .update(fields: f, mask: mask)
            }
            return write
        }
    }

    static func update(_ path: DocumentPath, _ fields: [String: FieldUpdate]) throws -> DocumentWrite {
        var values: [(FieldPath, Value)] = []
        var transforms: [FieldTransformSpec] = []
        var deletes: [FieldPath] = []
        for (key, update) in fields {
            let fieldPath = try FieldPath(key)
            switch update.kind {
            case .value(let v): values.append((fieldPath, v))
            case .transform(.delete): deletes.append(fieldPath)
            case .transform(let t): transforms.append(FieldTransformSpec(fieldPath, t))
            }
        }
        var write = DocumentWrite.update(path, values, transforms: transforms)
        if case .update(let f, let mask?) = write.operation { write.operation = .update(fields: f, mask: mask + deletes) }
        return write
    }

    static func encode(_ writes: [DocumentWrite]) throws -> Value {
        .array(try writes.map { try ValueEncoder().encode($0) })
    }

    static func snapshots(_ reply: Value) throws -> [DocumentSnapshot<[String: Value]>?] {
        try (reply.arrayValue ?? []).map { item in
            guard case .map = item else { return nil }
            let doc = try StoredDocument(value: item)
            return DocumentSnapshot(path: doc.path, data: doc.fields, createTime: doc.createTime, updateTime: doc.updateTime)
        }
    }

    static func commitResult(_ reply: Value) throws -> CommitResult {
        try ValueDecoder().decode(CommitResult.self, from: reply)
    }

    static func decode<T: Decodable>(_ type: T.Type, _ fields: [String: Value], path: DocumentPath) throws -> T {
        do { return try ValueDecoder().decode(type, from: .map(fields)) } catch {
            throw HTTPSError(.dataLoss, "document \(path) does not decode as \(T.self): \(describeDecodingError(error))").fromHearth()
        }
    }
}
