import HearthModel

/// One row of the field index: a field path, whether it indexes the whole value or one element of
/// an array (for array-contains), and the value's key. Equal when the rows are: the field on its
/// bytes (`UTF8Key`), as SQLite stores it, so two spellings of one field are two rows.
struct IndexEntry: Hashable {
    var field: String
    var element: Bool
    var key: [UInt8]

    static func == (a: IndexEntry, b: IndexEntry) -> Bool {
        a.element == b.element && a.key == b.key && UTF8Key.equal(a.field, b.field)
    }

    func hash(into hasher: inout Hasher) {
        UTF8Key.hash(field, into: &hasher)
        hasher.combine(element)
        hasher.combine(key)
    }
}

enum IndexEntries {
    /// Adds one index row (the writer's commits and an import's bulk insert run the same statement).
    static let insertSQL = "INSERT OR IGNORE INTO field_index(collection, field, element, value, id) VALUES (?, ?, ?, ?, ?)"

    /// Every entry of a document's fields, as Firestore's automatic single-field indexes: each field
    /// at every depth of nested maps (the map itself too), and each distinct element of each array.
    /// Values inside arrays are not indexed by path, as in Firestore. A vector is one value: its
    /// `__type__` and `value` members are not indexed apart from it.
    static func of(_ fields: [String: Value]) -> [IndexEntry] {
        var out: [IndexEntry] = []
        out.reserveCapacity(fields.count + 4)
        collect(fields, prefix: [], into: &out)
        return out
    }

    private static func collect(_ map: [String: Value], prefix: [String], into out: inout [IndexEntry]) {
        for (key, value) in map {
            let path = prefix + [key]
            let field = FieldPath(segments: path).description
            out.append(IndexEntry(field: field, element: false, key: IndexKey.encode(value)))
            switch value {
            case .map where value.isVector:
                break
            case .map(let inner):
                collect(inner, prefix: path, into: &out)
            case .array(let items):
                var seen: Set<[UInt8]> = []
                for item in items {
                    let key = IndexKey.encode(item)
                    if seen.insert(key).inserted { out.append(IndexEntry(field: field, element: true, key: key)) }
                }
            default:
                break
            }
        }
    }
}
