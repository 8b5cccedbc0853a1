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
/// is in the change feed that runs document triggers (at least once, per document in commit order).
/// Reads decode into your `Decodable` types; `[String: Value]` reads the fields as stored. Writes
/// encode `Encodable` values (nil optionals become explicit nulls; `FieldValue` sentinels and nil
/// `@ServerTimestamp`s become transforms). Everything travels to the host as messages, so the same
/// code runs in-process, in a worker and under replay; a call made after the invocation ended
/// (timeout, cancel) is refused with `cancelled`.
///
/// Errors are `HTTPSError`s with Firestore's codes: `invalid-argument` for a bad path, field path,
/// query or write (a commit applies at most 500 field transforms to one document), `not-found` for
/// an update of a missing document, `already-exists` for a create of an existing one,
/// `failed-precondition` for a precondition that does not hold, `aborted` for a transaction that
/// keeps conflicting.
public struct Documents: Sendable {
    let channel: HostChannel

    /// The database over `channel`; handlers get one as `req.documents`, so units rarely need this.
    public init(channel: HostChannel) { self.channel = channel }

    /// The collection at a slash path (`members` or `members/alice/items`); throws `invalid-argument`
    /// if it is not a collection path (an odd number of segments, each a valid id: not empty, not `.`
    /// or `..`, not `__…__`; at most 1500 bytes). Builds a reference only: nothing is read.
    public func collection(_ path: String) throws -> CollectionReference {
        CollectionReference(path: try CollectionPath(path), channel: channel)
    }

    /// The document at a slash path (`members/alice`); throws `invalid-argument` if it is not a
    /// document path (an even number of valid segments). Builds a reference only: nothing is read.
    public func document(_ path: String) throws -> DocumentReference {
        DocumentReference(path: try DocumentPath(path), channel: channel)
    }

    /// The document at an already-validated path (a snapshot's `path`, an event's `path`).
    public func document(_ path: DocumentPath) -> DocumentReference { DocumentReference(path: path, channel: channel) }

    /// A query over every collection named `id`, at any depth (a collection-group query); throws
    /// `invalid-argument` when `id` is not a collection id (empty, holding a slash, or reserved).
    ///
    /// ```swift
    /// let overdue = try await docs.collectionGroup("items").whereField("targetDate", isLessThan: now).getDocuments(Item.self)
    /// ```
    public func collectionGroup(_ id: String) throws -> Query {
        Query(spec: try QuerySpec(group: id), channel: channel)
    }

    /// A new, empty `WriteBatch`: writes (and any task enqueues) committed together, atomically,
    /// with `commit()`.
    public func batch() -> WriteBatch { WriteBatch(channel: channel) }

    /// Reads several documents in one round trip, at one point in time; the result is in the order
    /// of `refs`, nil for each that does not exist. Throws `data-loss` when one does not decode as `T`.
    ///
    /// ```swift
    /// let lists = try await docs.getAll(listRefs, TodoList.self).compactMap { $0?.data }
    /// ```
    public func getAll<T: Decodable & Sendable>(_ refs: [DocumentReference], _ type: T.Type = T.self) async throws -> [DocumentSnapshot<T>?] {
        try DocumentsWire.snapshots(try await channel.call(Boundary.GetDocuments(paths: refs.map(\.path))), T.self)
    }

    /// The collections at the root (those holding at least one document, at any depth).
    public func listCollections() async throws -> [CollectionReference] {
        try await channel.call(Boundary.ListCollections(parent: nil)).map { CollectionReference(path: $0, channel: channel) }
    }

    /// Runs `body` as a serializable transaction and returns what it returns: reads lock what they
    /// read, writes are buffered and committed together (with any tasks it enqueues) when `body`
    /// returns. At commit every document read and every query run is checked again.
    ///
    /// On a conflict (`aborted`: something read changed, or a lock wait would deadlock) the body runs
    /// again in a new transaction, up to `maxAttempts` times in all; then the call throws `aborted`.
    /// So `body` must not have effects outside the transaction. Any other error `body` throws rolls
    /// the transaction back and is rethrown as is. All reads must come before writes (a read after a
    /// write is `invalid-argument`). A transaction left open when the invocation ends (it returned,
    /// timed out or was cancelled), or idle for 60 s, is rolled back and its locks released.
    ///
    /// ```swift
    /// let number = try await docs.runTransaction { tx -> Int in
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

    /// Deletes a document or collection and everything beneath it, at any depth, in batches of at
    /// most `batchSize` (1 to 500, else `invalid-argument`). Each batch is an ordinary commit, so
    /// document triggers see every deletion; the whole is not atomic, but running it again after a
    /// crash half-way finishes the job. Returns the number of documents deleted.
    ///
    /// ```swift
    /// try await event.documents.recursiveDelete(event.documents.document("members/\(event.user.uid)"))
    /// ```
    @discardableResult
    public func recursiveDelete(_ ref: DocumentReference, batchSize: Int = 500) async throws -> Int {
        try await recursiveDelete(path: ref.path.description, batchSize: batchSize)
    }

    /// Deletes every document of a collection and everything beneath them; as the document form.
    @discardableResult
    public func recursiveDelete(_ ref: CollectionReference, batchSize: Int = 500) async throws -> Int {
        try await recursiveDelete(path: ref.path.description, batchSize: batchSize)
    }

    func recursiveDelete(path: String, batchSize: Int) async throws -> Int {
        Int(try await channel.call(Boundary.RecursiveDelete(path: path, batchSize: batchSize)))
    }
}

/// A document's location; reads and writes go through it. Building one reads nothing, and the
/// document need not exist. Each write is its own commit; equal paths are equal references.
public struct DocumentReference: Sendable, Hashable {
    /// The document's path (`members/alice`).
    public let path: DocumentPath
    let channel: HostChannel

    public static func == (a: DocumentReference, b: DocumentReference) -> Bool { a.path == b.path }
    public func hash(into hasher: inout Hasher) { hasher.combine(path) }

    /// The document's id: the last segment of its path.
    public var id: String { path.id }
    /// The collection that holds the document.
    public var parent: CollectionReference { CollectionReference(path: path.collection, channel: channel) }

    /// The subcollection `id` of this document; throws `invalid-argument` for an invalid id.
    public func collection(_ id: String) throws -> CollectionReference {
        CollectionReference(path: try path.collection(id), channel: channel)
    }

    /// The document decoded as `T`, or nil when it does not exist; throws `data-loss` when the stored
    /// fields do not decode as `T` (the error names the document and the field; let through, it
    /// reaches a caller as `internal`, with the text in the host's log).
    ///
    /// ```swift
    /// guard let settings = try await settingsRef.get(Settings.self) else { throw HTTPSError(.notFound, "no settings") }
    /// let raw = try await ref.get([String: Value].self)?.data   // the fields as stored
    /// ```
    public func get<T: Decodable & Sendable>(_ type: T.Type = T.self) async throws -> DocumentSnapshot<T>? {
        try DocumentsWire.snapshots(try await channel.call(Boundary.GetDocuments(paths: [path])), T.self).first ?? nil
    }

    /// Whether the document exists now (it reads the whole document).
    public func exists() async throws -> Bool { try await get([String: Value].self) != nil }

    /// Creates the document from `data` (a struct or dictionary encoding to a map, else
    /// `invalid-argument`); throws `already-exists` if it exists.
    ///
    /// ```swift
    /// try await docs.document("members/\(uid)/items/\(id)").create(Item(sequence: 1, title: "Buy milk"))
    /// ```
    @discardableResult
    public func create<T: Encodable>(_ data: T) async throws -> WriteResult {
        try await commitOne(try DocumentsWire.write(.create, path, data))
    }

    /// Replaces the document with `data` (creating it if needed): fields `data` lacks are removed.
    /// `FieldValue.delete()` is refused here (`invalid-argument`); use `set(_:merge:)` or `update`.
    @discardableResult
    public func set<T: Encodable>(_ data: T) async throws -> WriteResult {
        try await commitOne(try DocumentsWire.write(.set, path, data))
    }

    /// Merges `data` into the document (creating it if needed): nested maps are merged field by
    /// field and fields `data` lacks stay; with `mergeFields` only those field paths are written.
    /// A `FieldValue.delete()` in `data` removes its field. `merge: false` without `mergeFields` is
    /// `set(_:)`.
    ///
    /// ```swift
    /// try await settingsRef.set(["pushEnabled": false] as [String: Value], merge: true)
    /// ```
    @discardableResult
    public func set<T: Encodable>(_ data: T, merge: Bool, mergeFields: [String]? = nil) async throws -> WriteResult {
        try await commitOne(try DocumentsWire.write(merge || mergeFields != nil ? .merge(mergeFields) : .set, path, data))
    }

    /// Updates fields by dotted path (`"meta.views"`; backticks quote a segment with dots or
    /// special characters); other fields stay. The document must exist (`not-found` otherwise).
    /// A map value replaces the map at its path whole; `.delete()` removes a field, `.null` stores null.
    ///
    /// ```swift
    /// try await ref.update(["isDone": true, "updatedAt": .serverTimestamp(), "targetDate": .null])
    /// ```
    @discardableResult
    public func update(_ fields: [String: FieldValue]) async throws -> WriteResult {
        try await commitOne(try DocumentsWire.update(path, fields))
    }

    /// Deletes the document (nothing happens if it does not exist, unless a precondition says so:
    /// `.exists(true)` makes a missing document `not-found`, `.updateTime(t)` a different update time
    /// `failed-precondition`). Its subcollections stay; see `Documents.recursiveDelete`.
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

/// A collection: a query over its documents, and where new documents go. Building one reads
/// nothing; it need not exist (a collection has no existence of its own: it is there while
/// documents are, in it or beneath it).
public struct CollectionReference: Sendable, Hashable {
    /// The collection's path (`members/alice/items`).
    public let path: CollectionPath
    let channel: HostChannel

    public static func == (a: CollectionReference, b: CollectionReference) -> Bool { a.path == b.path }
    public func hash(into hasher: inout Hasher) { hasher.combine(path) }

    /// The collection's id: the last segment of its path.
    public var id: String { path.id }

    /// The document `id` in this collection; throws `invalid-argument` for an id containing `/`, an
    /// empty one, `.`, `..` or `__…__`.
    public func document(_ id: String) throws -> DocumentReference {
        DocumentReference(path: try path.document(id), channel: channel)
    }

    /// A document with a new random id (20 characters of `[A-Za-z0-9]`, as Firestore's auto ids;
    /// from a generator the host seeds per invocation, so a replayed invocation makes the same ids).
    /// Nothing is written. Throws `invalid-argument` when the collection's path leaves no room for one
    /// (paths are at most 1500 bytes).
    public func document() throws -> DocumentReference {
        DocumentReference(path: try path.document(channel.random.autoID()), channel: channel)
    }

    /// Creates a document with a new random id (see `document()`) from `data`; returns its reference.
    ///
    /// ```swift
    /// let ref = try await req.documents.collection("members/\(uid)/items").addDocument(item)
    /// ```
    public func addDocument<T: Encodable>(_ data: T) async throws -> DocumentReference {
        let ref = try document()
        try await ref.create(data)
        return ref
    }

    /// All documents of the collection, including ids that exist only as parents of subcollections
    /// (`exists` false for those). Reads no fields.
    public func listDocuments() async throws -> [(reference: DocumentReference, exists: Bool)] {
        try await channel.call(Boundary.ListDocuments(collection: path)).map { (DocumentReference(path: $0.path, channel: channel), $0.exists) }
    }

    /// A query over every document of the collection.
    public var query: Query { Query(spec: QuerySpec(collection: path), channel: channel) }
}
