import HearthModel
import Synchronization

/// Collection paths and their row ids. Documents and index rows refer to collections by id, so a
/// path is resolved once and then served from memory. Committed rows are only ever added, which
/// makes the cache safe to share between the writer and readers without invalidation; so only
/// what a committed state shows is cached. A lookup on a connection inside a write transaction may
/// find a row that transaction inserted, which a rollback takes away and whose rowid then goes to
/// the next new collection (two paths would share one id): the writer remembers such ids itself
/// once its transaction commits (`remember`).
final class CollectionRegistry: Sendable {
    /// Keyed on the path's bytes (`UTF8Key`): with `String` keys, "café" and "cafe\u{301}" would
    /// share one collection's id, so one's documents would be written into the other.
    private let cache = Mutex<[UTF8Key: Int64]>([:])

    /// The id of `path`, looked up on `db`; nil when the collection has never held a document.
    /// Cached unless `db` has a write transaction open (see the type's comment).
    func id(of path: CollectionPath, on db: Connection) throws -> Int64? {
        try lookup(path, on: db).id
    }

    /// As `id(of:on:)`, and whether the cache answered (the writer remembers only the others).
    func lookup(_ path: CollectionPath, on db: Connection) throws -> (id: Int64?, cached: Bool) {
        let key = path.description
        if let id = cache.withLock({ $0[UTF8Key(key)] }) { return (id, true) }
        guard let id = try db.scalarInt("SELECT id FROM collections WHERE path = ?", [.text(key)]) else { return (nil, false) }
        if !db.isInWriteTransaction { cache.withLock { $0[UTF8Key(key)] = id } }
        return (id, false)
    }

    /// The id of `path`, created on the writer's connection when missing.
    func idCreating(_ path: CollectionPath, on db: Connection) throws -> Int64 {
        let key = path.description
        if let id = cache.withLock({ $0[UTF8Key(key)] }) { return id }
        // Looked up without caching: the row may have been inserted earlier in this same, still
        // uncommitted transaction, and an id cached before the commit outlives a rollback (the
        // rowid is then handed to the next new collection, and two paths share one id).
        if let id = try db.scalarInt("SELECT id FROM collections WHERE path = ?", [.text(key)]) { return id }
        let parent = path.parent?.description ?? ""
        try db.run("INSERT INTO collections(path, parent_path, collection_id) VALUES (?, ?, ?)", [.text(key), .text(parent), .text(path.id)])
        guard let id = try db.scalarInt("SELECT id FROM collections WHERE path = ?", [.text(key)]) else {
            throw HTTPSError(.internal, "collection \(key) vanished after insert")
        }
        // Cached only after the commit: a rolled-back insert must not leave a phantom id behind.
        return id
    }

    func remember(_ path: CollectionPath, id: Int64) {
        cache.withLock { $0[UTF8Key(path.description)] = id }
    }

    func forget(_ paths: [String]) {
        cache.withLock { c in for p in paths { c.removeValue(forKey: UTF8Key(p)) } }
    }
}
