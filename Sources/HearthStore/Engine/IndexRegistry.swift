import HearthModel
import Synchronization

/// Which fields have an index, per collection id (so `members/a/items` and `members/b/items` share
/// one set, and collection-group queries find the same indexes).
///
/// Every field of every document is queryable, as in Firestore, but an index is built only when a
/// query first needs it (like `CREATE INDEX`, it reads the documents once); from then on every write
/// keeps it current. Writes pay only for the fields the application actually queries. The set only
/// grows, and an entry is added after its index is committed, so a reader that sees a field here
/// finds its index complete.
final class IndexRegistry: Sendable {
    /// Collection id → indexed field (its canonical text) → its parsed path, both keyed on bytes
    /// (`UTF8Key`): index rows hold the field's bytes, so a query on a field spelled in another
    /// normalization needs its own index, which it finds by document lookups that merge the two.
    private let fields = Mutex<[UTF8Key: [UTF8Key: FieldPath]]>([:])

    func load(_ db: Connection) throws {
        let rows = try db.query("SELECT collection_id, field FROM indexed_fields") { ($0.text(0), $0.text(1)) }
        for (c, f) in rows { add([f], to: c) }
    }

    func indexed(_ collectionID: String) -> [UTF8Key: FieldPath] { fields.withLock { $0[UTF8Key(collectionID)] ?? [:] } }

    func missing(_ wanted: Set<String>, in collectionID: String) -> Set<String> {
        let have = indexed(collectionID)
        return wanted.filter { have[UTF8Key($0)] == nil }
    }

    func add(_ new: Set<String>, to collectionID: String) {
        let parsed = new.compactMap { f in (try? FieldPath(f)).map { (f, $0) } }
        fields.withLock { map in for (f, path) in parsed { map[UTF8Key(collectionID), default: [:]][UTF8Key(f)] = path } }
    }

    /// The fields a query's plans may read from the index: every filtered and ordered field.
    static func fields(of spec: QuerySpec) -> Set<String> {
        var out: Set<String> = []
        for f in spec.filters where !f.field.isDocumentID { out.insert(f.field.description) }
        for o in spec.orderBy where !o.field.isDocumentID { out.insert(o.field.description) }
        return out
    }
}

extension IndexEntries {
    /// The entries of the indexed fields only: each field's value and, for arrays, its distinct elements.
    static func of(_ fields: [String: Value], indexed: [UTF8Key: FieldPath]) -> [IndexEntry] {
        guard !indexed.isEmpty else { return [] }
        var out: [IndexEntry] = []
        out.reserveCapacity(indexed.count)
        let document = Value.map(fields)
        for (key, path) in indexed {
            let field = key.string
            guard let value = document.value(at: path) else { continue }
            out.append(IndexEntry(field: field, element: false, key: IndexKey.encode(value)))
            if case .array(let items) = value {
                var seen: Set<[UInt8]> = []
                for item in items {
                    let key = IndexKey.encode(item)
                    if seen.insert(key).inserted { out.append(IndexEntry(field: field, element: true, key: key)) }
                }
            }
        }
        return out
    }
}
