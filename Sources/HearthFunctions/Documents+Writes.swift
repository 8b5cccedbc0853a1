import HearthModel
import Synchronization

/// Writes and task enqueues buffered by a batch or a transaction until they commit.
/// Once committed (`seal`), they take nothing more: a batch is committed once, as Firestore's.
final class PendingWrites: Sendable {
    private let state = Mutex<(writes: [DocumentWrite], enqueues: [TaskSpec], sealed: Bool)>(([], [], false))

    var contents: (writes: [DocumentWrite], enqueues: [TaskSpec]) { state.withLock { ($0.writes, $0.enqueues) } }
    var writeCount: Int { state.withLock { $0.writes.count } }
    var isEmpty: Bool { state.withLock { $0.writes.isEmpty } }

    func add(_ write: DocumentWrite) throws { try change { $0.writes.append(write) } }
    func add(_ task: TaskSpec) throws { try change { $0.enqueues.append(task) } }

    private func change(_ body: (inout (writes: [DocumentWrite], enqueues: [TaskSpec], sealed: Bool)) -> Void) throws {
        try state.withLock { s in
            guard !s.sealed else { throw PendingWrites.committed }
            body(&s)
        }
    }

    /// Takes the contents to commit, and refuses any later change or commit.
    func seal() throws -> (writes: [DocumentWrite], enqueues: [TaskSpec]) {
        try state.withLock { s in
            guard !s.sealed else { throw PendingWrites.committed }
            s.sealed = true
            return (s.writes, s.enqueues)
        }
    }

    static let committed = HTTPSError(.failedPrecondition, "a write batch can no longer be used after commit() has been called")
}

/// Writes committed together, atomically (any number, as Firestore now allows; more than 500 field
/// transforms on one document is `invalid-argument` at commit), with any tasks enqueued on it: all of them or none. Adding a write only encodes it (a non-map `data`
/// or an invalid field path throws `invalid-argument` at once); preconditions (`already-exists`,
/// `not-found`, `failed-precondition`) and task checks are met or refused at `commit()`, failing
/// the whole batch. Writes apply in the order added, as `DocumentReference`'s methods of the same
/// names would. Unlike a transaction, a batch reads nothing and is never retried.
///
/// ```swift
/// let batch = req.documents.batch()
/// try batch.create(itemRef, item)
/// try batch.update(counterRef, ["next": .increment(1)])
/// try batch.enqueue("sendPushNotification", push)
/// try await batch.commit()
/// ```
public final class WriteBatch: Sendable {
    let channel: HostChannel
    let pending = PendingWrites()

    init(channel: HostChannel) { self.channel = channel }

    /// The writes added so far (task enqueues not counted).
    public var count: Int { pending.writeCount }

    /// Creates the document at commit; the commit fails with `already-exists` if it exists.
    public func create<T: Encodable>(_ ref: DocumentReference, _ data: T) throws { try pending.add(try DocumentsWire.write(.create, ref.path, data)) }
    /// Replaces the document with `data` at commit (creating it if needed).
    public func set<T: Encodable>(_ ref: DocumentReference, _ data: T) throws { try pending.add(try DocumentsWire.write(.set, ref.path, data)) }
    /// Merges `data` into the document at commit (see `DocumentReference.set(_:merge:mergeFields:)`).
    public func set<T: Encodable>(_ ref: DocumentReference, _ data: T, merge: Bool, mergeFields: [String]? = nil) throws {
        try pending.add(try DocumentsWire.write(merge || mergeFields != nil ? .merge(mergeFields) : .set, ref.path, data))
    }
    /// Updates fields by dotted path at commit; the commit fails with `not-found` if the document does not exist.
    public func update(_ ref: DocumentReference, _ fields: [String: FieldValue]) throws { try pending.add(try DocumentsWire.update(ref.path, fields)) }
    /// Deletes the document at commit (nothing happens if it does not exist, unless `precondition` says so).
    public func delete(_ ref: DocumentReference, precondition: Precondition? = nil) throws { try pending.add(.delete(ref.path, precondition: precondition)) }

    /// Adds a task to `queue` when the batch commits (and not if it fails). The task is checked at
    /// commit, failing the batch: `not-found` for a queue no `onTaskDispatched` function has,
    /// `already-exists` for an id already used within the dedupe window, `invalid-argument` for a
    /// payload over 1 MiB as JSON or a start more than 30 days ahead. Throws at once only when the
    /// payload does not encode or `options` give both `scheduleDelay` and `scheduleTime`.
    public func enqueue<T: Encodable>(_ queue: String, _ payload: T, options: TaskOptions = TaskOptions()) throws {
        try pending.add(try options.spec(queue: queue, payload))
    }

    /// Commits every write and enqueue, or none of them, and returns one `WriteResult` per write, in
    /// order (an empty batch commits nothing and returns `[]`). The commit's changes then reach
    /// document triggers. A batch commits once: a second `commit()`, or a write added after the
    /// first, is `failed-precondition`.
    @discardableResult
    public func commit() async throws -> [WriteResult] {
        let (writes, enqueues) = try pending.seal()
        guard !writes.isEmpty || !enqueues.isEmpty else { return [] }
        return try await channel.call(Boundary.Commit(writes: writes, enqueues: enqueues)).writeResults
    }
}

/// A transaction in `Documents.runTransaction`: read with `get`, `exists` and `getDocuments`, then
/// write; writes and enqueues are buffered until the body returns, then committed
/// together, or not at all. Every read must come before the first write (`invalid-argument`
/// otherwise). A write whose precondition fails at commit (`already-exists` for `create`,
/// `not-found` for `update`) fails `runTransaction` without a retry. Do not keep a transaction
/// past its body: it ends when the body returns.
public final class Transaction: Sendable {
    let id: UInt64
    let channel: HostChannel
    let pending = PendingWrites()

    init(id: UInt64, channel: HostChannel) {
        self.id = id
        self.channel = channel
    }

    /// Adds a task to `queue` if the transaction commits (a retried transaction enqueues once: only
    /// the attempt that commits does). The task is checked at commit as in `WriteBatch.enqueue`.
    public func enqueue<T: Encodable>(_ queue: String, _ payload: T, options: TaskOptions = TaskOptions()) throws {
        try pending.add(try options.spec(queue: queue, payload))
    }

    private func ensureNoWrites() throws {
        if !pending.isEmpty { throw HTTPSError(.invalidArgument, "transactions must do all reads before any write") }
    }

    /// Reads a document decoded as `T`, locking it until the transaction ends (another transaction
    /// reading it waits); nil when it does not exist. A change to it by anyone else before the commit
    /// aborts the commit (and `runTransaction` runs the body again). Throws `data-loss` when the
    /// stored fields do not decode as `T`, `invalid-argument` after a write in this transaction.
    public func get<T: Decodable & Sendable>(_ ref: DocumentReference, _ type: T.Type = T.self) async throws -> DocumentSnapshot<T>? {
        try ensureNoWrites()
        let reply = try await channel.call(Boundary.TransactionGet(transaction: id, paths: [ref.path]))
        return try DocumentsWire.snapshots(reply, T.self).first ?? nil
    }

    /// Whether the document exists, locking it until the transaction ends (so it cannot appear or
    /// vanish before the commit).
    public func exists(_ ref: DocumentReference) async throws -> Bool {
        try await get(ref, [String: Value].self) != nil
    }

    /// Runs a query in the transaction, locking every document it returns; a change to its results
    /// (a document added, changed or removed) before commit aborts the transaction. Throws
    /// `invalid-argument` after a write in this transaction, or for a query Firestore would refuse.
    public func getDocuments<T: Decodable & Sendable>(_ query: Query, _ type: T.Type = T.self) async throws -> [DocumentSnapshot<T>] {
        try ensureNoWrites()
        return try DocumentsWire.snapshots(try await channel.call(Boundary.TransactionQuery(transaction: id, query: query.spec)), T.self)
    }

    /// Creates the document at commit; the commit fails with `already-exists` if it exists.
    public func create<T: Encodable>(_ ref: DocumentReference, _ data: T) throws { try pending.add(try DocumentsWire.write(.create, ref.path, data)) }
    /// Replaces the document with `data` at commit (creating it if needed).
    public func set<T: Encodable>(_ ref: DocumentReference, _ data: T) throws { try pending.add(try DocumentsWire.write(.set, ref.path, data)) }
    /// Merges `data` into the document at commit (see `DocumentReference.set(_:merge:mergeFields:)`).
    public func set<T: Encodable>(_ ref: DocumentReference, _ data: T, merge: Bool, mergeFields: [String]? = nil) throws {
        try pending.add(try DocumentsWire.write(merge || mergeFields != nil ? .merge(mergeFields) : .set, ref.path, data))
    }
    /// Updates fields by dotted path at commit; the commit fails with `not-found` if the document does not exist.
    public func update(_ ref: DocumentReference, _ fields: [String: FieldValue]) throws { try pending.add(try DocumentsWire.update(ref.path, fields)) }
    /// Deletes the document at commit (nothing happens if it does not exist, unless `precondition` says so).
    public func delete(_ ref: DocumentReference, precondition: Precondition? = nil) throws { try pending.add(.delete(ref.path, precondition: precondition)) }
}

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

    static func update(_ path: DocumentPath, _ fields: [String: FieldValue]) throws -> DocumentWrite {
        var values: [(FieldPath, Value)] = []
        var transforms: [FieldTransformSpec] = []
        var deletes: [FieldPath] = []
        for (key, field) in fields {
            let fieldPath = try FieldPath(key)
            switch field.kind {
            case .value(let v): values.append((fieldPath, v))
            case .transform(.delete): deletes.append(fieldPath)
            case .transform(let t): transforms.append(FieldTransformSpec(fieldPath, t))
            }
        }
        // Each field gets its own value here, so a field and one inside it (or one field spelled
        // twice) would leave which value wins to chance: refused, as the Admin SDKs refuse it.
        if let (outer, inner) = FieldPath.firstNested(in: values.map(\.0) + deletes + transforms.map(\.field), equalToo: true) {
            if outer == inner { throw HTTPSError(.invalidArgument, "update: field '\(outer)' is given twice") }
            throw HTTPSError(.invalidArgument, "update: field '\(outer)' is a prefix of '\(inner)'; give one or the other")
        }
        var write = DocumentWrite.update(path, values, transforms: transforms)
        if case .update(let f, let mask?) = write.operation { write.operation = .update(fields: f, mask: mask + deletes) }
        return write
    }

    static func snapshots<T: Decodable & Sendable>(_ documents: [StoredDocument?], _ type: T.Type) throws -> [DocumentSnapshot<T>?] {
        try documents.map { document in try document.map { try snapshot($0, type) } }
    }

    static func snapshots<T: Decodable & Sendable>(_ documents: [StoredDocument], _ type: T.Type) throws -> [DocumentSnapshot<T>] {
        try documents.map { try snapshot($0, type) }
    }

    static func snapshot<T: Decodable & Sendable>(_ document: StoredDocument, _ type: T.Type) throws -> DocumentSnapshot<T> {
        DocumentSnapshot(path: document.path, data: try decode(type, document.fields, path: document.path),
                         createTime: document.createTime, updateTime: document.updateTime)
    }

    static func decode<T: Decodable>(_ type: T.Type, _ fields: [String: Value], path: DocumentPath) throws -> T {
        if let fields = fields as? T { return fields }  // `[String: Value]`: the fields as stored
        do { return try ValueDecoder().decode(type, from: .map(fields)) } catch {
            throw HTTPSError(.dataLoss, "document \(path) does not decode as \(T.self): \(describeDecodingError(error))").fromHearth()
        }
    }
}
