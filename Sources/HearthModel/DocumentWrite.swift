/// A stored document: its path, fields, and the times the store gave it.
public struct StoredDocument: Sendable, Hashable, Codable {
    public var path: DocumentPath
    public var fields: [String: Value]
    public var createTime: Timestamp
    public var updateTime: Timestamp

    public init(path: DocumentPath, fields: [String: Value], createTime: Timestamp, updateTime: Timestamp) {
        self.path = path
        self.fields = fields
        self.createTime = createTime
        self.updateTime = updateTime
    }
}

/// A document in a listing: present, or only the parent of documents in its subcollections.
public struct DocumentListing: Sendable, Hashable {
    public var path: DocumentPath
    public var exists: Bool

    public init(path: DocumentPath, exists: Bool) {
        self.path = path
        self.exists = exists
    }
}

/// A condition a write needs the document to meet, checked at commit.
public enum Precondition: Sendable, Hashable, Codable {
    /// The document must exist (true) or must not (false).
    case exists(Bool)
    /// The document must exist with exactly this update time.
    case updateTime(Timestamp)
}

/// One write of a commit, in Firestore's model: replace or patch a document's fields (with an
/// optional mask), or delete it; then apply field transforms; all under an optional precondition.
///
/// - `create` = update without mask, precondition `exists(false)`
/// - `set` = update without mask
/// - `set(merge:)` = update with the mask of every leaf of the data (or the given fields)
/// - `update` = update with the mask of the given field paths, precondition `exists(true)`
public struct DocumentWrite: Sendable, Hashable {
    public enum Operation: Sendable, Hashable {
        /// Without a mask the document becomes `fields`; with one, each masked path is set from
        /// `fields` when present there and removed from the document when not.
        case update(fields: [String: Value], mask: [FieldPath]?)
        case delete
    }

    public var path: DocumentPath
    public var operation: Operation
    public var transforms: [FieldTransformSpec]
    public var precondition: Precondition?

    public init(path: DocumentPath, operation: Operation, transforms: [FieldTransformSpec] = [], precondition: Precondition? = nil) {
        self.path = path
        self.operation = operation
        self.transforms = transforms
        self.precondition = precondition
    }

    public static func create(_ path: DocumentPath, _ fields: [String: Value], transforms: [FieldTransformSpec] = []) -> DocumentWrite {
        DocumentWrite(path: path, operation: .update(fields: fields, mask: nil), transforms: transforms, precondition: .exists(false))
    }

    public static func set(_ path: DocumentPath, _ fields: [String: Value], transforms: [FieldTransformSpec] = []) -> DocumentWrite {
        DocumentWrite(path: path, operation: .update(fields: fields, mask: nil), transforms: transforms)
    }

    /// Merges `fields` into the document: every leaf field path of `fields` (maps are merged deeply),
    /// or only `mergeFields` when given.
    public static func merge(_ path: DocumentPath, _ fields: [String: Value], mergeFields: [FieldPath]? = nil,
                             transforms: [FieldTransformSpec] = []) -> DocumentWrite {
        let mask = mergeFields ?? FieldPath.leafPaths(of: fields)
        return DocumentWrite(path: path, operation: .update(fields: fields, mask: mask), transforms: transforms)
    }

    /// Sets the given field paths (dotted paths reach into maps; a map value replaces the map whole);
    /// the document must exist.
    public static func update(_ path: DocumentPath, _ updates: [(FieldPath, Value)], transforms: [FieldTransformSpec] = []) -> DocumentWrite {
        var fields: [String: Value] = [:]
        for (fieldPath, value) in updates { Value.set(value, at: fieldPath.segments[...], in: &fields) }
        return DocumentWrite(path: path, operation: .update(fields: fields, mask: updates.map(\.0)), transforms: transforms,
                             precondition: .exists(true))
    }

    public static func delete(_ path: DocumentPath, precondition: Precondition? = nil) -> DocumentWrite {
        DocumentWrite(path: path, operation: .delete, precondition: precondition)
    }
}

/// A transform on one field.
public struct FieldTransformSpec: Sendable, Hashable, Codable {
    public var field: FieldPath
    public var transform: FieldTransform

    public init(_ field: FieldPath, _ transform: FieldTransform) {
        self.field = field
        self.transform = transform
    }
}

/// What one write produced.
public struct WriteResult: Sendable, Hashable, Codable {
    /// The document's update time after the write (the commit time, or the old update time when the
    /// write changed nothing; nil for a deletion).
    public var updateTime: Timestamp?
    /// The value each transform produced, in order.
    public var transformResults: [Value]

    public init(updateTime: Timestamp?, transformResults: [Value] = []) {
        self.updateTime = updateTime
        self.transformResults = transformResults
    }
}

/// What a commit produced: its time and one result per write.
public struct CommitResult: Sendable, Hashable, Codable {
    public var commitTime: Timestamp
    public var writeResults: [WriteResult]

    public init(commitTime: Timestamp, writeResults: [WriteResult]) {
        self.commitTime = commitTime
        self.writeResults = writeResults
    }
}

extension FieldTransform: Codable {
    enum CodingKeys: String, CodingKey { case serverTimestamp, increment, arrayUnion, arrayRemove, delete, maximum, minimum }

    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        if c.contains(.serverTimestamp) { self = .serverTimestamp }
        else if let v = try c.decodeIfPresent(Value.self, forKey: .increment) { self = .increment(v) }
        else if let v = try c.decodeIfPresent([Value].self, forKey: .arrayUnion) { self = .arrayUnion(v) }
        else if let v = try c.decodeIfPresent([Value].self, forKey: .arrayRemove) { self = .arrayRemove(v) }
        else if c.contains(.delete) { self = .delete }
        else if let v = try c.decodeIfPresent(Value.self, forKey: .maximum) { self = .maximum(v) }
        else if let v = try c.decodeIfPresent(Value.self, forKey: .minimum) { self = .minimum(v) }
        else { throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "unknown field transform")) }
    }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        switch self {
        case .serverTimestamp: try c.encode(true, forKey: .serverTimestamp)
        case .increment(let v): try c.encode(v, forKey: .increment)
        case .arrayUnion(let v): try c.encode(v, forKey: .arrayUnion)
        case .arrayRemove(let v): try c.encode(v, forKey: .arrayRemove)
        case .delete: try c.encode(true, forKey: .delete)
        case .maximum(let v): try c.encode(v, forKey: .maximum)
        case .minimum(let v): try c.encode(v, forKey: .minimum)
        }
    }
}

extension DocumentWrite: Codable {
    enum CodingKeys: String, CodingKey { case path, fields, mask, delete, transforms, precondition }

    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        path = try c.decode(DocumentPath.self, forKey: .path)
        if try c.decodeIfPresent(Bool.self, forKey: .delete) == true {
            operation = .delete
        } else {
            operation = .update(fields: try c.decodeIfPresent([String: Value].self, forKey: .fields) ?? [:],
                                mask: try c.decodeIfPresent([FieldPath].self, forKey: .mask))
        }
        transforms = try c.decodeIfPresent([FieldTransformSpec].self, forKey: .transforms) ?? []
        precondition = try c.decodeIfPresent(Precondition.self, forKey: .precondition)
    }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(path, forKey: .path)
        switch operation {
        case .delete: try c.encode(true, forKey: .delete)
        case .update(let fields, let mask):
            try c.encode(fields, forKey: .fields)
            try c.encodeIfPresent(mask, forKey: .mask)
        }
        if !transforms.isEmpty { try c.encode(transforms, forKey: .transforms) }
        try c.encodeIfPresent(precondition, forKey: .precondition)
    }
}

extension FieldPath {
    /// Every leaf path of a map: nested maps are descended (an empty map is a leaf), other values
    /// are leaves. This is the mask of `set(…, merge: true)`.
    public static func leafPaths(of fields: [String: Value]) -> [FieldPath] {
        var out: [FieldPath] = []
        func walk(_ m: [String: Value], _ prefix: [String]) {
            for (k, v) in m {
                if case .map(let inner) = v, !inner.isEmpty { walk(inner, prefix + [k]) } else { out.append(FieldPath(segments: prefix + [k])) }
            }
        }
        walk(fields, [])
        return out
    }
}

extension Value {
    /// Sets `value` at a field path inside a map, creating (or replacing non-map) intermediates.
    public static func set(_ value: Value, at path: ArraySlice<String>, in map: inout [String: Value]) {
        guard let first = path.first else { return }
        if path.count == 1 {
            map[first] = value
            return
        }
        var inner = map[first]?.mapValue ?? [:]
        map[first] = nil  // drop the reference so `inner` is uniquely owned while we mutate it
        set(value, at: path.dropFirst(), in: &inner)
        map[first] = .map(inner)
    }

    /// Removes the field at a path inside a map; returns whether something was removed.
    @discardableResult
    public static func remove(at path: ArraySlice<String>, in map: inout [String: Value]) -> Bool {
        guard let first = path.first else { return false }
        if path.count == 1 { return map.removeValue(forKey: first) != nil }
        guard case .map(var inner)? = map[first] else { return false }
        map[first] = nil
        let removed = remove(at: path.dropFirst(), in: &inner)
        map[first] = .map(inner)
        return removed
    }
}

/// A change the feed recorded: one per document per commit.
public struct DocumentChange: Sendable, Hashable {
    public var sequence: Int64
    public var commitTime: Timestamp
    public var path: DocumentPath
    public var kind: ChangeKind
    public var before: StoredDocument?
    public var after: StoredDocument?

    public init(sequence: Int64, commitTime: Timestamp, path: DocumentPath, kind: ChangeKind, before: StoredDocument?, after: StoredDocument?) {
        self.sequence = sequence
        self.commitTime = commitTime
        self.path = path
        self.kind = kind
        self.before = before
        self.after = after
    }
}
