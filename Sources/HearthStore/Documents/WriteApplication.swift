import HearthModel

/// Firestore's limits on document contents (https://firebase.google.com/docs/firestore/quotas).
public enum DocumentLimits {
    /// Encoded size of one document.
    public static let maxDocumentBytes = 1 << 20
    /// Maps and arrays nested inside one another.
    public static let maxDepth = 20
    public static let maxFieldNameBytes = 1500
    /// Firestore's maximum API request size, and its answer past it: a REST request's body, and a
    /// unit's commit's writes (https://cloud.google.com/firestore/quotas).
    public static let maxRequestBytes = 10 << 20
    public static let requestTooLarge = "Request payload size exceeds the limit: \(maxRequestBytes) bytes."
}

/// Applies one write to a document's current state: precondition, then the update or delete, then
/// the transforms, as Firestore does within a commit.
enum WriteApplication {
    struct Outcome {
        /// The fields after the write; nil when the document is deleted (or stays absent).
        var fields: [String: Value]?
        var transformResults: [Value]
    }

    static func apply(_ write: DocumentWrite, to current: [String: Value]?, updateTime: Timestamp?,
                      commitTime: Timestamp) throws(HTTPSError) -> Outcome {
        let path = write.path.description
        switch write.precondition {
        case .exists(true)? where current == nil:
            throw HTTPSError(.notFound, "No document to update: \(path)")
        case .exists(false)? where current != nil:
            throw HTTPSError(.alreadyExists, "Document already exists: \(path)")
        case .updateTime(let t)? where updateTime != t:
            throw HTTPSError(.failedPrecondition, "the document \(path) was updated at \(updateTime?.description ?? "never"), not \(t)")
        default:
            break
        }
        var fields: [String: Value]?
        switch write.operation {
        case .delete:
            guard write.transforms.isEmpty else { throw .invalidArgument("a delete cannot carry field transforms (\(path))") }
            return Outcome(fields: nil, transformResults: [])
        case .update(let data, nil):
            if write.transforms.contains(where: { $0.transform == .delete }) {
                throw .invalidArgument("FieldValue.delete() is only allowed in update() and set() with merge (\(path))")
            }
            fields = data
        case .update(let data, let mask?):
            // Paths may repeat or contain one another, as Firestore allows: each takes its value
            // from the same data, so the order they are applied in does not matter.
            var merged = current ?? [:]
            for fieldPath in mask {
                try checkFieldPath(fieldPath, in: path)
                try checkSpelling(fieldPath, in: merged)
                if let v = Value.map(data).value(at: fieldPath) {
                    Value.set(v, at: fieldPath.segments[...], in: &merged)
                } else {
                    Value.remove(at: fieldPath.segments[...], in: &merged)
                }
            }
            fields = merged
        }
        var results: [Value] = []
        if !write.transforms.isEmpty {
            var doc = fields ?? [:]
            for spec in write.transforms { try checkFieldPath(spec.field, in: path) }
            // A field may be transformed more than once (in order: two increments add both), as
            // Firestore does; a field and one inside it may not.
            try checkNotNested(write.transforms.map(\.field))
            for spec in write.transforms {
                try checkSpelling(spec.field, in: doc)
                let old = Value.map(doc).value(at: spec.field)
                let new: Value?
                switch spec.transform {
                case .serverTimestamp: new = .timestamp(commitTime)
                case .increment(let operand): new = try increment(old, by: operand, field: spec.field)
                case .arrayUnion(let elements): new = arrayUnion(old, elements)
                case .arrayRemove(let elements): new = arrayRemove(old, elements)
                case .delete: new = nil
                case .maximum(let operand): new = try extreme(old, operand, field: spec.field, larger: true)
                case .minimum(let operand): new = try extreme(old, operand, field: spec.field, larger: false)
                }
                if let new { Value.set(new, at: spec.field.segments[...], in: &doc) } else { Value.remove(at: spec.field.segments[...], in: &doc) }
                results.append(new ?? .null)
            }
            fields = doc
        }
        return Outcome(fields: fields, transformResults: results)
    }

    /// Refuses a field path one of whose names the document already has in another Unicode
    /// normalization (`e\u{301}` where it has `é`): Firestore would keep both fields, and Hearth's
    /// maps can hold only one, so writing it would change the other field instead.
    static func checkSpelling(_ fieldPath: FieldPath, in map: [String: Value]) throws(HTTPSError) {
        var current = map
        for segment in fieldPath.segments {
            guard let i = current.index(forKey: segment) else { return }
            let (stored, value) = current[i]
            guard UTF8Key.equal(stored, segment) else {
                throw .invalidArgument("the field name \(Printable.quoted(segment, limit: 60)) differs from the document's \(Printable.quoted(stored, limit: 60)) only in Unicode normalization; Hearth cannot keep both (use the document's form)")
            }
            guard case .map(let inner) = value else { return }
            current = inner
        }
    }

    /// Refuses transforms of a field and of one inside it (`a` and `a.b`), in Firestore's words.
    static func checkNotNested(_ fields: [FieldPath]) throws(HTTPSError) {
        if let (outer, _) = FieldPath.firstNested(in: fields, equalToo: false) {
            throw .invalidArgument("Cannot transform property \(outer) and its nested property at the same time.")
        }
    }

    static func checkFieldPath(_ field: FieldPath, in path: String) throws(HTTPSError) {
        if field.segments.isEmpty || field.segments.contains(where: \.isEmpty) {
            throw .invalidArgument("empty field path in a write to \(path)")
        }
        if field.isDocumentID { throw .invalidArgument("'__name__' cannot be written (\(path))") }
    }

    /// Integer + integer stays an integer, saturating at the 64-bit bounds; a double makes a double.
    /// A missing or non-numeric field takes the operand's value.
    static func increment(_ old: Value?, by operand: Value, field: FieldPath) throws(HTTPSError) -> Value {
        switch (old, operand) {
        case (.int(let a)?, .int(let b)):
            let (sum, overflow) = a.addingReportingOverflow(b)
            return overflow ? .int(b > 0 ? Int64.max : Int64.min) : .int(sum)
        case (.int(let a)?, .double(let b)): return .double(Double(a) + b)
        case (.double(let a)?, .int(let b)): return .double(a + Double(b))
        case (.double(let a)?, .double(let b)): return .double(a + b)
        case (_, .int), (_, .double): return operand
        default: throw .invalidArgument("increment of '\(field)' needs a number (got \(operand.typeName))")
        }
    }

    /// `maximum` (larger) or `minimum`, as Firestore defines them: a missing or non-numeric field
    /// takes the operand; NaN on either side wins; of two equal numbers (3 and 3.0, 0 and -0.0) the
    /// stored one stays; otherwise the winning operand keeps its own type.
    static func extreme(_ old: Value?, _ operand: Value, field: FieldPath, larger: Bool) throws(HTTPSError) -> Value {
        guard let b = operand.doubleValue else {
            throw .invalidArgument("\(larger ? "maximum" : "minimum") of '\(field)' needs a number (got \(operand.typeName))")
        }
        guard let old, let a = old.doubleValue else { return operand }
        if a.isNaN { return old }
        if b.isNaN { return operand }
        // By numeric value alone (the store's order puts an integer before an equal double).
        let oldIsLess: Bool
        if case .int(let x) = old, case .int(let y) = operand {
            if x == y { return old }
            oldIsLess = x < y
        } else {
            if a == b { return old }
            oldIsLess = a < b
        }
        return oldIsLess == larger ? operand : old
    }

    static func contains(_ list: [Value], _ v: Value) -> Bool {
        list.contains { Value.compare($0, v) == .same && $0.typeOrder == v.typeOrder }
    }

    static func arrayUnion(_ old: Value?, _ elements: [Value]) -> Value {
        var items = old?.arrayValue ?? []
        for e in elements where !contains(items, e) { items.append(e) }
        return .array(items)
    }

    static func arrayRemove(_ old: Value?, _ elements: [Value]) -> Value {
        guard let items = old?.arrayValue else { return .array([]) }
        return .array(items.filter { !contains(elements, $0) })
    }

    // MARK: validation

    /// Checks field names and nesting, and truncates timestamps to microseconds (Firestore's
    /// precision). Returns the fields to store.
    static func validate(_ fields: [String: Value], path: DocumentPath) throws(HTTPSError) -> [String: Value] {
        var needsTruncation = false
        var fieldPath: [String] = []  // a stack of the keys above the value being checked
        fieldPath.reserveCapacity(8)
        try check(.map(fields), depth: 0, path: path, fieldPath: &fieldPath, truncate: &needsTruncation)
        return needsTruncation ? truncateTimestamps(fields) : fields
    }

    private static func check(_ value: Value, depth: Int, path: DocumentPath, fieldPath: inout [String], truncate: inout Bool) throws(HTTPSError) {
        func here() -> String { FieldPath(segments: fieldPath).description }
        switch value {
        case .map(let m):
            if depth > DocumentLimits.maxDepth {
                throw .invalidArgument("document \(path): field '\(here())' nests maps and arrays deeper than \(DocumentLimits.maxDepth)")
            }
            for (key, member) in m {
                let bytes = key.utf8.count
                if bytes == 0 { throw .invalidArgument("document \(path): empty field name in '\(here())'") }
                if bytes > DocumentLimits.maxFieldNameBytes {
                    throw .invalidArgument("document \(path): a field name is longer than \(DocumentLimits.maxFieldNameBytes) bytes")
                }
                if key.utf8.first == 95 && PathRules.isReserved(Substring(key))
                    && !(key.utf8.elementsEqual(Value.vectorTypeKey.utf8) && value.isVector) {
                    throw .invalidArgument("document \(path): field names of the form __.*__ are reserved ('\(key)'; a vector value is the one exception: {\"__type__\": \"__vector__\", \"value\": [doubles]})")
                }
                switch member {
                case .map, .array, .timestamp, .reference:
                    fieldPath.append(key)
                    try check(member, depth: depth + 1, path: path, fieldPath: &fieldPath, truncate: &truncate)
                    fieldPath.removeLast()
                default:
                    break  // scalars need no check
                }
            }
        case .array(let items):
            if depth > DocumentLimits.maxDepth {
                throw .invalidArgument("document \(path): field '\(here())' nests maps and arrays deeper than \(DocumentLimits.maxDepth)")
            }
            for item in items {
                if case .array = item {
                    throw .invalidArgument("document \(path): field '\(here())' holds an array directly inside an array, which Firestore does not allow")
                }
                try check(item, depth: depth + 1, path: path, fieldPath: &fieldPath, truncate: &truncate)
            }
        case .timestamp(let t):
            if !t.isInFirestoreRange { throw .invalidArgument("document \(path): timestamp \(t) in '\(here())' is outside years 1 to 9999") }
            if t.nanos % 1000 != 0 { truncate = true }
        case .reference(let r):
            do { _ = try DocumentPath(r) } catch { throw .invalidArgument("document \(path): reference in '\(here())': \(error.message)") }
        default:
            break
        }
    }

    static func truncateTimestamps(_ fields: [String: Value]) -> [String: Value] {
        func walk(_ v: Value) -> Value {
            switch v {
            case .timestamp(let t): return .timestamp(Timestamp(seconds: t.seconds, nanos: t.nanos - t.nanos % 1000))
            case .map(let m): return .map(m.mapValues(walk))
            case .array(let a): return .array(a.map(walk))
            default: return v
            }
        }
        return fields.mapValues(walk)
    }
}

extension DocumentStore {
    /// The fields `write` would leave at its path if it committed at `time` over `current` (nil:
    /// the document would not exist), computed as the commit computes them, preconditions and
    /// transforms included. Security rules read this as `request.resource`.
    public static func preview(_ write: DocumentWrite, over current: StoredDocument?, at time: Timestamp) throws(HTTPSError) -> [String: Value]? {
        try WriteApplication.apply(write, to: current?.fields, updateTime: current?.updateTime, commitTime: time).fields
    }
}
