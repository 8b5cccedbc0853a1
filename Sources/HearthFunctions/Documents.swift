import HearthModel

/// The document database, as a unit sees it (Firestore's server SDK shape).
///
/// ```swift
/// let items = try req.documents.collection("members/\(uid)/items")
/// try await items.document(id).set(item)
/// let due = try await items.whereField("targetDate", isEqualTo: Value.null).limit(to: 20).getDocuments()
/// ```
///
/// Writes return when committed. Reads see the latest committed state. Everything travels to the
/// host as messages, so the same code runs in-process and in a worker.
public struct Documents: Sendable {
    let channel: HostChannel

    public init(channel: HostChannel) { self.channel = channel }

    /// The collection at a slash path (`members` or `members/alice/items`); `invalid-argument` if the
    /// path is not a collection path.
    public func collection(_ path: String) throws -> CollectionReference {
        CollectionReference(path: try CollectionPath(path), channel: channel)
    }

    /// The document at a slash path (`members/alice`).
    public func document(_ path: String) throws -> DocumentReference {
        DocumentReference(path: try DocumentPath(path), channel: channel)
    }

    public func document(_ path: DocumentPath) -> DocumentReference { DocumentReference(path: path, channel: channel) }

    /// Every collection named `id`, at any depth.
    public func collectionGroup(_ id: String) -> Query {
        Query(spec: QuerySpec(collectionID: id, allDescendants: true), channel: channel)
    }

    public func batch() -> WriteBatch { WriteBatch(channel: channel) }

    /// Reads several documents at once; nil for each that does not exist.
    public func getAll(_ refs: [DocumentReference]) async throws -> [DocumentSnapshot<[String: Value]>?] {
        let reply = try await channel.call("docs.get", ["paths": .array(refs.map { .string($0.path.description) })])
        return try DocumentsWire.snapshots(reply)
    }

    /// The collections at the root.
    public func listCollections() async throws -> [CollectionReference] {
        let reply = try await channel.call("docs.listCollections", [:])
        return try (reply.arrayValue ?? []).map { CollectionReference(path: try CollectionPath($0.stringValue ?? ""), channel: channel) }
    }

    /// Runs `body` as a transaction: reads lock what they read, writes are buffered and committed
    /// together when `body` returns. On a conflict the body runs again (up to `maxAttempts` times),
    /// so it must not have effects outside the transaction. All reads must come before writes.
    public func runTransaction<T: Sendable>(maxAttempts: Int = 5, _ body: (Transaction) async throws -> T) async throws -> T {
        var lastMessage = "conflict"
        for _ in 0..<max(1, maxAttempts) {
            let id = try await channel.call("tx.begin", [:])
            let transaction = Transaction(id: id, channel: channel)
            do {
                let value = try await body(transaction)
                var arguments: [String: Value] = ["txn": id, "writes": try DocumentsWire.encode(transaction.writes)]
                if !transaction.enqueues.isEmpty { arguments["enqueues"] = .array(transaction.enqueues) }
                _ = try await channel.call("tx.commit", arguments)
                return value
            } catch let error as HTTPSError where error.code == .aborted {
                _ = try? await channel.call("tx.rollback", ["txn": id])
                lastMessage = error.message
            } catch {
                _ = try? await channel.call("tx.rollback", ["txn": id])
                throw error
            }
        }
        throw HTTPSError(.aborted, "transaction failed after \(maxAttempts) attempts: \(lastMessage)")
    }

    /// Deletes a document or collection and everything beneath it, in batches; safe to run again
    /// after a crash half-way. Returns the number of documents deleted.
    @discardableResult
    public func recursiveDelete(_ ref: DocumentReference, batchSize: Int = 500) async throws -> Int {
        try await recursiveDelete(path: ref.path.description, batchSize: batchSize)
    }

    @discardableResult
    public func recursiveDelete(_ ref: CollectionReference, batchSize: Int = 500) async throws -> Int {
        try await recursiveDelete(path: ref.path.description, batchSize: batchSize)
    }

    func recursiveDelete(path: String, batchSize: Int) async throws -> Int {
        let reply = try await channel.call("docs.recursiveDelete", ["path": .string(path), "batchSize": .int(Int64(batchSize))])
        return Int(reply.intValue ?? 0)
    }
}

/// A document's location; reads and writes go through it.
public struct DocumentReference: Sendable, Hashable {
    public let path: DocumentPath
    let channel: HostChannel

    public static func == (a: DocumentReference, b: DocumentReference) -> Bool { a.path == b.path }
    public func hash(into hasher: inout Hasher) { hasher.combine(path) }

    public var id: String { path.id }
    public var parent: CollectionReference { CollectionReference(path: path.collection, channel: channel) }

    public func collection(_ id: String) throws -> CollectionReference {
        CollectionReference(path: try path.collection(id), channel: channel)
    }

    /// The document, or nil when it does not exist.
    public func get() async throws -> DocumentSnapshot<[String: Value]>? {
        let reply = try await channel.call("docs.get", ["paths": [.string(path.description)]])
        return try DocumentsWire.snapshots(reply).first ?? nil
    }

    /// The document decoded into `T`, or nil when it does not exist.
    public func get<T: Decodable & Sendable>(as type: T.Type) async throws -> T? {
        guard let snapshot = try await get() else { return nil }
        return try DocumentsWire.decode(type, snapshot.data, path: path)
    }

    /// Creates the document; fails with `already-exists` if it exists.
    @discardableResult
    public func create<T: Encodable>(_ data: T) async throws -> WriteResult {
        try await commitOne(try DocumentsWire.write(.create, path, data))
    }

    /// Replaces the document with `data` (creating it if needed).
    @discardableResult
    public func set<T: Encodable>(_ data: T) async throws -> WriteResult {
        try await commitOne(try DocumentsWire.write(.set, path, data))
    }

    /// Merges `data` into the document: nested maps are merged field by field; with `mergeFields`
    /// only those field paths are written.
    @discardableResult
    public func set<T: Encodable>(_ data: T, merge: Bool, mergeFields: [String]? = nil) async throws -> WriteResult {
        try await commitOne(try DocumentsWire.write(merge || mergeFields != nil ? .merge(mergeFields) : .set, path, data))
    }

    /// Updates fields by dotted path (`"meta.views"`); the document must exist (`not-found` otherwise).
    @discardableResult
    public func update(_ fields: [String: FieldUpdate]) async throws -> WriteResult {
        try await commitOne(try DocumentsWire.update(path, fields))
    }

    /// Deletes the document (nothing happens if it does not exist, unless a precondition says so).
    @discardableResult
    public func delete(precondition: Precondition? = nil) async throws -> WriteResult {
        try await commitOne(.delete(path, precondition: precondition))
    }

    public func listCollections() async throws -> [CollectionReference] {
        let reply = try await channel.call("docs.listCollections", ["parent": .string(path.description)])
        return try (reply.arrayValue ?? []).map { CollectionReference(path: try CollectionPath($0.stringValue ?? ""), channel: channel) }
    }

    func commitOne(_ write: DocumentWrite) async throws -> WriteResult {
        let reply = try await channel.call("docs.commit", ["writes": try DocumentsWire.encode([write])])
        return try DocumentsWire.commitResult(reply).writeResults.first ?? WriteResult(updateTime: nil)
    }
}

/// A collection: a query over its documents, and where new documents go.
public struct CollectionReference: Sendable, Hashable {
    public let path: CollectionPath
    let channel: HostChannel

    public static func == (a: CollectionReference, b: CollectionReference) -> Bool { a.path == b.path }
    public func hash(into hasher: inout Hasher) { hasher.combine(path) }

    public var id: String { path.id }

    /// The document `id` in this collection; ids containing `/` are refused.
    public func document(_ id: String) throws -> DocumentReference {
        DocumentReference(path: try path.document(id), channel: channel)
    }

    /// A document with a new random id (20 characters, as Firestore's auto ids). Throws
    /// `invalid-argument` when the collection's path leaves no room for one (paths are at most
    /// 1500 bytes).
    public func document() throws -> DocumentReference {
        DocumentReference(path: try path.document(AutoID.make()), channel: channel)
    }

    /// Creates a document with a new random id.
    public func addDocument<T: Encodable>(_ data: T) async throws -> DocumentReference {
        let ref = try document()
        try await ref.create(data)
        return ref
    }

    /// All documents of the collection, including ids that exist only as parents of subcollections.
    public func listDocuments() async throws -> [(reference: DocumentReference, exists: Bool)] {
        let reply = try await channel.call("docs.listDocuments", ["collection": .string(path.description)])
        return try (reply.arrayValue ?? []).map { item in
            (DocumentReference(path: try DocumentPath(item["path"]?.stringValue ?? ""), channel: channel), item["exists"]?.boolValue ?? false)
        }
    }

    public var query: Query { Query(spec: QuerySpec(collection: path), channel: channel) }
}

/// A value for `update` and `WriteBatch.update`: a value, or a transform of the field.
public struct FieldUpdate: Sendable, ExpressibleByNilLiteral, ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral, ExpressibleByStringLiteral
{
    enum Kind: Sendable {
        case value(Value)
        case transform(FieldTransform)
    }

    let kind: Kind

    init(kind: Kind) { self.kind = kind }

    public init(nilLiteral: ()) { kind = .value(.null) }
    public init(booleanLiteral value: Bool) { kind = .value(.bool(value)) }
    public init(integerLiteral value: Int64) { kind = .value(.int(value)) }
    public init(floatLiteral value: Double) { kind = .value(.double(value)) }
    public init(stringLiteral value: String) { kind = .value(.string(value)) }

    /// Any Codable value (a nil optional becomes null).
    public static func value<T: Encodable>(_ value: T) throws -> FieldUpdate {
        FieldUpdate(kind: .value(try ValueEncoder().encode(value)))
    }

    public static func value(_ value: Value) -> FieldUpdate { FieldUpdate(kind: .value(value)) }
    public static func serverTimestamp() -> FieldUpdate { FieldUpdate(kind: .transform(.serverTimestamp)) }
    public static func increment(_ by: Int) -> FieldUpdate { FieldUpdate(kind: .transform(.increment(.int(Int64(by))))) }
    public static func increment(_ by: Int64) -> FieldUpdate { FieldUpdate(kind: .transform(.increment(.int(by)))) }
    public static func increment(_ by: Double) -> FieldUpdate { FieldUpdate(kind: .transform(.increment(.double(by)))) }
    public static func arrayUnion(_ elements: [Value]) -> FieldUpdate { FieldUpdate(kind: .transform(.arrayUnion(elements))) }
    public static func arrayRemove(_ elements: [Value]) -> FieldUpdate { FieldUpdate(kind: .transform(.arrayRemove(elements))) }
    public static func delete() -> FieldUpdate { FieldUpdate(kind: .transform(.delete)) }
}
