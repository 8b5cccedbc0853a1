import HearthModel

/// Firestore's REST v1 JSON: values in their typed form (`{"integerValue": "1"}`), documents with
/// full resource names, and the resource names themselves
/// (https://firebase.google.com/docs/firestore/reference/rest/v1/Value).
///
/// Decoding is strict about what it accepts and names the offending field in every error: a
/// value must have exactly one kind, an `integerValue` must fit 64 bits, a timestamp must be RFC
/// 3339 inside Firestore's range, a reference must name a document of this database.
struct FirestoreJSON: Sendable {
    /// `projects/{project}/databases/(default)/documents`.
    let documentsRoot: String

    /// Whether references may name numeric ids (`__id7__`): in a query's filters and cursors,
    /// not in documents (`PathRules.numericID`).
    private(set) var numericIDs = false
    /// Whether an array may hold an array: a query's values may (an `IN` list of arrays, an
    /// equality with one, which no document can match), as Firestore's queries accept them;
    /// documents' may not.
    private(set) var nestedArrays = false

    init(project: String) {
        documentsRoot = "projects/\(project)/databases/(default)/documents"
    }

    /// This decoder for a query's values.
    var forQueries: FirestoreJSON {
        var copy = self
        copy.numericIDs = true
        copy.nestedArrays = true
        return copy
    }

    /// How deeply typed values may nest here: well past Firestore's 20 (so the store's own error
    /// names the field), and shallow enough that decoding, which recurses, stays far from the
    /// end of a task's stack.
    static let maxValueDepth = 100

    /// The parser's bound for request bodies: each level of a value is three JSON levels in the
    /// typed form (value, `mapValue`, `fields`), plus the request's own envelope.
    static let readOptions = JSONReadOptions(maxDepth: 3 * maxValueDepth + 16)

    // MARK: names

    /// The resource name of a document (`projects/p/databases/(default)/documents/members/alice`).
    func name(_ path: DocumentPath) -> String { documentsRoot + "/" + path.description }

    /// The slash path a resource name under this database's documents names ("" for the root).
    func relativePath(_ name: String, field: String) throws(HTTPSError) -> String {
        if name == documentsRoot { return "" }
        // On bytes: a first id starting with a combining mark joins the "/" into one Character.
        let prefix = documentsRoot.utf8.count + 1
        guard name.utf8.count >= prefix, name.utf8.starts(with: documentsRoot.utf8), name.utf8.dropFirst(prefix - 1).first == UInt8(ascii: "/") else {
            throw .invalidArgument("\(field): '\(name)' is not a resource name under \(documentsRoot)")
        }
        return String(Substring(name.utf8.dropFirst(prefix)))
    }

    /// The document a resource name names.
    func documentPath(_ name: String, field: String, numericIDs: Bool = false) throws(HTTPSError) -> DocumentPath {
        let relative = try relativePath(name, field: field)
        do { return try numericIDs ? DocumentPath(queryBound: relative) : DocumentPath(relative) } catch {
            throw .invalidArgument("\(field): '\(name)' does not name a document (\(error.message))")
        }
    }

    // MARK: values

    /// A value from its typed JSON form.
    func value(_ json: Value, field: String, depth: Int = 0) throws(HTTPSError) -> Value {
        guard depth <= FirestoreJSON.maxValueDepth else {
            throw .invalidArgument("\(field.prefix(200)): values nest deeper than \(FirestoreJSON.maxValueDepth) levels")
        }
        guard case .map(let object) = json else { throw .invalidArgument("\(field): a Value must be a JSON object (got \(json.typeName))") }
        guard object.count == 1, let (kind, payload) = object.first else {
            if object.isEmpty { throw .invalidArgument("\(field): a Value must set one of nullValue, booleanValue, integerValue, doubleValue, timestampValue, stringValue, bytesValue, referenceValue, geoPointValue, arrayValue, mapValue") }
            throw .invalidArgument("\(field): a Value sets more than one kind (\(object.keys.sorted().joined(separator: ", ")))")
        }
        switch kind {
        case "nullValue":
            switch payload {
            case .null, .string("NULL_VALUE"), .int(0): return .null
            default: throw .invalidArgument("\(field).nullValue: must be null or \"NULL_VALUE\"")
            }
        case "booleanValue":
            guard case .bool(let b) = payload else { throw .invalidArgument("\(field).booleanValue: must be true or false (got \(payload.typeName))") }
            return .bool(b)
        case "integerValue":
            return .int(try FirestoreJSON.int64(payload, field: field + ".integerValue"))
        case "doubleValue":
            switch payload {
            case .double(let d): return .double(d)
            case .int(let i): return .double(Double(i))
            case .string("NaN"): return .double(.nan)
            case .string("Infinity"): return .double(.infinity)
            case .string("-Infinity"): return .double(-.infinity)
            case .string(let s):
                guard let d = Double(s) else { throw .invalidArgument("\(field).doubleValue: '\(s.prefix(40))' is not a number") }
                return .double(d)
            default: throw .invalidArgument("\(field).doubleValue: must be a number (got \(payload.typeName))")
            }
        case "timestampValue":
            return .timestamp(try FirestoreJSON.timestamp(payload, field: field + ".timestampValue"))
        case "stringValue":
            guard case .string(let s) = payload else { throw .invalidArgument("\(field).stringValue: must be a string (got \(payload.typeName))") }
            return .string(s)
        case "bytesValue":
            guard case .string(let s) = payload, let bytes = Base64.decodeProtoBytes(s) else {
                throw .invalidArgument("\(field).bytesValue: must be base64")
            }
            return .bytes(bytes)
        case "referenceValue":
            guard case .string(let s) = payload else { throw .invalidArgument("\(field).referenceValue: must be a string (got \(payload.typeName))") }
            return .reference(try documentPath(s, field: field + ".referenceValue", numericIDs: numericIDs).description)
        case "geoPointValue":
            guard case .map(let point) = payload else { throw .invalidArgument("\(field).geoPointValue: must be an object") }
            let latitude = point["latitude"]?.doubleValue ?? 0, longitude = point["longitude"]?.doubleValue ?? 0
            if let extra = point.keys.first(where: { $0 != "latitude" && $0 != "longitude" }) {
                throw .invalidArgument("\(field).geoPointValue: unknown field '\(extra)'")
            }
            guard (-90...90).contains(latitude), (-180...180).contains(longitude) else {
                throw .invalidArgument("\(field).geoPointValue: latitude must be within [-90, 90] and longitude within [-180, 180]")
            }
            return .geoPoint(GeoPoint(latitude: latitude, longitude: longitude))
        case "arrayValue":
            guard case .map(let array) = payload else { throw .invalidArgument("\(field).arrayValue: must be an object") }
            guard let values = array["values"] else { return .array([]) }
            guard case .array(let items) = values else { throw .invalidArgument("\(field).arrayValue.values: must be an array") }
            var out: [Value] = []
            out.reserveCapacity(items.count)
            for (i, item) in items.enumerated() {
                let v = try value(item, field: "\(field).arrayValue.values[\(i)]", depth: depth + 1)
                if case .array = v, !nestedArrays { throw .invalidArgument("\(field).arrayValue.values[\(i)]: an array cannot directly contain another array") }
                out.append(v)
            }
            return .array(out)
        case "mapValue":
            guard case .map(let map) = payload else { throw .invalidArgument("\(field).mapValue: must be an object") }
            return .map(try fields(map["fields"], field: field + ".mapValue.fields", depth: depth + 1))
        default:
            throw .invalidArgument("\(field): unknown Value kind '\(kind)'")
        }
    }

    /// A `fields` map (absent: empty).
    func fields(_ json: Value?, field: String, depth: Int = 0) throws(HTTPSError) -> [String: Value] {
        guard let json else { return [:] }
        guard case .map(let object) = json else { throw .invalidArgument("\(field): must be an object of Values") }
        var out: [String: Value] = [:]
        out.reserveCapacity(object.count)
        for (key, item) in object { out[key] = try value(item, field: "\(field).\(key)", depth: depth) }
        return out
    }

    /// An int64 in Google's JSON mapping: a decimal string or a JSON integer.
    static func int64(_ json: Value, field: String) throws(HTTPSError) -> Int64 {
        switch json {
        case .int(let i): return i
        case .string(let s):
            guard let i = Int64(s) else { throw .invalidArgument("\(field): '\(s.prefix(40))' is not a 64-bit integer") }
            return i
        case .double(let d):
            guard d.rounded() == d, let i = Int64(exactly: d) else { throw .invalidArgument("\(field): \(d) is not a 64-bit integer") }
            return i
        default: throw .invalidArgument("\(field): must be an integer (got \(json.typeName))")
        }
    }

    /// An int32 field (page sizes, limits, offsets), which must also be at least `minimum`.
    static func int32(_ json: Value, field: String, minimum: Int = 0) throws(HTTPSError) -> Int {
        let v = try int64(json, field: field)
        guard v >= Int64(minimum), v <= Int64(Int32.max) else { throw .invalidArgument("\(field): \(v) is out of range (\(minimum)...\(Int32.max))") }
        return Int(v)
    }

    static func timestamp(_ json: Value, field: String) throws(HTTPSError) -> Timestamp {
        guard case .string(let s) = json, let t = Timestamp(rfc3339: s) else {
            throw .invalidArgument("\(field): must be an RFC 3339 timestamp such as 2024-05-01T09:00:00.000000Z")
        }
        guard t.isInFirestoreRange else { throw .invalidArgument("\(field): '\(s)' is outside 0001-01-01 ..< 10000-01-01") }
        return t
    }

    /// A value in its typed JSON form.
    func json(_ value: Value) -> Value {
        switch value {
        case .null: return ["nullValue": .null]
        case .bool(let b): return ["booleanValue": .bool(b)]
        case .int(let i): return ["integerValue": .string(String(i))]
        case .double(let d):
            if d.isNaN { return ["doubleValue": "NaN"] }
            if d.isInfinite { return ["doubleValue": .string(d < 0 ? "-Infinity" : "Infinity")] }
            return ["doubleValue": .double(d)]
        case .timestamp(let t): return ["timestampValue": .string(t.rfc3339)]
        case .string(let s): return ["stringValue": .string(s)]
        case .bytes(let b): return ["bytesValue": .string(Base64.encode(b))]
        case .reference(let path): return ["referenceValue": .string(documentsRoot + "/" + path)]
        case .geoPoint(let g): return ["geoPointValue": ["latitude": .double(g.latitude), "longitude": .double(g.longitude)]]
        case .array(let items): return items.isEmpty ? ["arrayValue": .emptyMap] : ["arrayValue": ["values": .array(items.map(json))]]
        case .map(let m): return m.isEmpty ? ["mapValue": .emptyMap] : ["mapValue": ["fields": fieldsJSON(m)]]
        }
    }

    func fieldsJSON(_ fields: [String: Value]) -> Value {
        .map(fields.mapValues(json))
    }

    /// A document resource; `mask` keeps only the named fields (and what is beneath them).
    func document(_ doc: StoredDocument, mask: [FieldPath]? = nil) -> Value {
        var out: [String: Value] = ["name": .string(name(doc.path)), "createTime": .string(doc.createTime.rfc3339),
                                    "updateTime": .string(doc.updateTime.rfc3339)]
        let fields = mask.map { FirestoreJSON.project(doc.fields, $0) } ?? doc.fields
        if !fields.isEmpty { out["fields"] = fieldsJSON(fields) }
        return .map(out)
    }

    /// The fields of `fields` that `mask` names.
    static func project(_ fields: [String: Value], _ mask: [FieldPath]) -> [String: Value] {
        var out: [String: Value] = [:]
        let whole = Value.map(fields)
        for path in mask where !path.isDocumentID {
            if let v = whole.value(at: path) { Value.set(v, at: path.segments[...], in: &out) }
        }
        return out
    }

    // MARK: field paths

    /// A `DocumentMask` (`{"fieldPaths": [...]}`), nil when absent.
    static func mask(_ json: Value?, field: String) throws(HTTPSError) -> [FieldPath]? {
        guard let json else { return nil }
        guard case .map(let object) = json else { throw .invalidArgument("\(field): must be an object with fieldPaths") }
        guard let paths = object["fieldPaths"] else { return [] }
        guard case .array(let items) = paths else { throw .invalidArgument("\(field).fieldPaths: must be an array of strings") }
        var out: [FieldPath] = []
        for (i, item) in items.enumerated() {
            guard case .string(let s) = item else { throw .invalidArgument("\(field).fieldPaths[\(i)]: must be a string") }
            out.append(try fieldPath(s, field: "\(field).fieldPaths[\(i)]"))
        }
        return out
    }

    /// A field path as Firestore's API reads it: a segment that is not a simple name is quoted.
    static func fieldPath(_ text: String, field: String) throws(HTTPSError) -> FieldPath {
        do { return try FieldPath(text, requiringQuotes: true) } catch { throw .invalidArgument("\(field): \(error.message)") }
    }

    /// A `FieldReference` (`{"fieldPath": "a.b"}`).
    static func fieldReference(_ json: Value?, field: String) throws(HTTPSError) -> FieldPath {
        guard case .string(let s)? = json?["fieldPath"] else { throw .invalidArgument("\(field).fieldPath: is required") }
        return try fieldPath(s, field: field + ".fieldPath")
    }
}
