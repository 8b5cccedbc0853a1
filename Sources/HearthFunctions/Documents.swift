import HearthModel

/// The document database, as a unit sees it (Firestore's server SDK shape). Reach it as
/// `req.documents` (or `event.documents`, `task.documents`…).
///
/// ```swift
/// let items = try req.documents.collection("members/\(uid)/items")
/// try await items.document(id).set(item)
/// let due = try await items.whereField("targetDate", isEqualTo: Value.null).limit(to: 20).getDocuments(Item.self)
/// ```
///
/// Reads see the latest committed state; writes return once committed, and each committed change
/// is in the change feed that runs document triggers. Reads decode into your `Decodable` types;
/// `[String: Value]` reads the fields as stored. Everything travels to the host as messages, so the
/// same code runs in-process, in a worker and under replay.
public struct Documents: Sendable {
    let channel: HostChannel

    public init(channel: HostChannel) { self.channel = channel }

    /// The collection at a slash path (`members` or `members/alice/items`); `invalid-argument` if the
    /// path is not a collection path.
    public func collection(_ path: String) throws -> CollectionReference {
        CollectionReference(path: try CollectionPath(path), channel: channel)
    }

    /// The document at a slash path (`members/alice`); `invalid-argument` if it is not a document path.
    public func document(_ path: String) throws -> DocumentReference {
        DocumentReference(path: try DocumentPath(path), channel: channel)
    }

    public func document(_ path: DocumentPath) -> DocumentReference { DocumentReference(path: path, channel: channel) }

    /// Every collection named `id`, at any depth (a collection-group query).
    public func collectionGroup(_ id: String) -> Query {
        Query(spec: QuerySpec(collectionID: id, allDescendants: true), channel: channel)
    }

    /// Writes (and task enqueues) committed together, atomically.
    public func batch() -> WriteBatch { WriteBatch(channel: channel) }

    /// Reads several documents in one round trip, in order; nil for each that does not exist.
    ///
    /// ```swift
    /// let lists = try await docs.getAll(listRefs, TodoList.self).compactMap { $0?.data }
    /// ```
    public func getAll<T: Decodable & Sendable>(_ refs: [DocumentReference], _ type: T.Type = T.self) async throws -> [DocumentSnapshot<T>?] {
        try DocumentsWire.snapshots(try await channel.call(Boundary.GetDocuments(paths: refs.map(\.path))), T.self)
    }

    /// The collections at the root.
    public func listCollections() async throws -> [CollectionReference] {
        try await channel.call(Boundary.ListCollections(parent: nil)).map { CollectionReference(path: $0, channel: channel) }
    }

    /// Runs `body` as a transaction: reads lock what they read, writes are buffered and committed
    /// together (with any tasks it enqueues) when `body` returns. On a conflict the body runs again
    /// (up to `maxAttempts` times), so it must not have effects outside the transaction. All reads
    /// must come before writes. A transaction left open by an invocation that ends is rolled back.
    ///
    /// ```swift
    /// let number = try await docs.runTransaction { tx in
    ///     let counter = try await tx.get(counterRef, Counter.self)?.data ?? Counter()
    ///     try tx.set(counterRef, Counter(next: counter.next + 1))
    ///     return counter.next
    /// }
    /// ```
    public func runTransaction<T: Sendable>(maxAttempts: Int = 5, _ body: (Transaction) async throws -> T) async throws -> T {
        var lastMessage = "conflict"
        for _ in 0..<max(1, maxAttempts) {
            let id = try await channel.call(Boundary.BeginTransaction())
            let transaction = Transaction(id: id, channel: channel)
            do {
                let value = try await body(transaction)
                let (writes, enqueues) = transaction.pending.contents
                _ = try await channel.call(Boundary.CommitTransaction(transaction: id, writes: writes, enqueues: enqueues))
                return value
            } catch let error as HTTPSError where error.code == .aborted {
                _ = try? await channel.call(Boundary.RollbackTransaction(transaction: id))
                lastMessage = error.message
            } catch {
                _ = try? await channel.call(Boundary.RollbackTransaction(transaction: id))
                throw error
            }
        }
        throw HTTPSError(.aborted, "transaction failed after \(maxAttempts) attempts: \(lastMessage)")
    }

    /// Deletes a document or collection and everything beneath it, in batches of at most
    /// `batchSize` (each an ordinary commit: document triggers see every deletion); safe to run
    /// again after a crash half-way. Returns the number of documents deleted.
    @discardableResult
    public func recursiveDelete(_ ref: DocumentReference, batchSize: Int = 500) async throws -> Int {
        try await recursiveDelete(path: ref.path.description, batchSize: batchSize)
    }

    @discardableResult
    public func recursiveDelete(_ ref: CollectionReference, batchSize: Int = 500) async throws -> Int {
        try await recursiveDelete(path: ref.path.description, batchSize: batchSize)
    }

    func recursiveDelete(path: String, batchSize: Int) async throws -> Int {
        Int(try await channel.call(Boundary.RecursiveDelete(path: path, batchSize: batchSize)))
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

    /// The subcollection `id` of this document.
    public func collection(_ id: String) throws -> CollectionReference {
        CollectionReference(path: try path.collection(id), channel: channel)
    }

    /// The document decoded as `T`, or nil when it does not exist; `data-loss` when the stored
    /// fields do not decode as `T` (the error names the document and the field).
    ///
    /// ```swift
    /// guard let settings = try await settingsRef.get(Settings.self) else { throw HTTPSError(.notFound, "no settings") }
    /// let raw = try await ref.get([String: Value].self)?.data   // the fields as stored
    /// ```
    public func get<T: Decodable & Sendable>(_ type: T.Type = T.self) async throws -> DocumentSnapshot<T>? {
        try DocumentsWire.snapshots(try await channel.call(Boundary.GetDocuments(paths: [path])), T.self).first ?? nil
    }

    /// Whether the document exists now.
    public func exists() async throws -> Bool { try await get([String: Value].self) != nil }

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
    /// only those field paths are written. A `FieldValue.delete()` in `data` removes its field.
    @discardableResult
    public func set<T: Encodable>(_ data: T, merge: Bool, mergeFields: [String]? = nil) async throws -> WriteResult {
        try await commitOne(try DocumentsWire.write(merge || mergeFields != nil ? .merge(mergeFields) : .set, path, data))
    }

    /// Updates fields by dotted path (`"meta.views"`); the document must exist (`not-found`
    /// otherwise). A map value replaces the map at its path whole.
    ///
    /// ```swift
    /// try await ref.update(["isDone": true, "updatedAt": .serverTimestamp(), "targetDate": .null])
    /// ```
    @discardableResult
    public func update(_ fields: [String: FieldValue]) async throws -> WriteResult {
        try await commitOne(try DocumentsWire.update(path, fields))
    }

    /// Deletes the document (nothing happens if it does not exist, unless a precondition says so).
    /// Its subcollections stay; see `Documents.recursiveDelete`.
    @discardableResult
    public func delete(precondition: Precondition? = nil) async throws -> WriteResult {
        try await commitOne(.delete(path, precondition: precondition))
    }

    /// The collections directly under this document.
    public func listCollections() async throws -> [CollectionReference] {
        try await channel.call(Boundary.ListCollections(parent: path)).map { CollectionReference(path: $0, channel: channel) }
    }

    func commitOne(_ write: DocumentWrite) async throws -> WriteResult {
        try await channel.call(Boundary.Commit(writes: [write])).writeResults.first ?? WriteResult(updateTime: nil)
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

    /// A document with a new random id (20 characters, as Firestore's auto ids; from the
    /// invocation's generator, so a replayed invocation makes the same ids). Throws
    /// `invalid-argument` when the collection's path leaves no room for one (paths are at most
    /// 1500 bytes).
    public func document() throws -> DocumentReference {
        DocumentReference(path: try path.document(channel.random.autoID()), channel: channel)
    }

    /// Creates a document with a new random id; returns its reference.
    public func addDocument<T: Encodable>(_ data: T) async throws -> DocumentReference {
        let ref = try document()
        try await ref.create(data)
        return ref
    }

    /// All documents of the collection, including ids that exist only as parents of subcollections.
    public func listDocuments() async throws -> [(reference: DocumentReference, exists: Bool)] {
        try await channel.call(Boundary.ListDocuments(collection: path)).map { (DocumentReference(path: $0.path, channel: channel), $0.exists) }
    }

    /// A query over every document of the collection.
    public var query: Query { Query(spec: QuerySpec(collection: path), channel: channel) }
}
