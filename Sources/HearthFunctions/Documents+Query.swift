import HearthModel

/// A query, built like Firestore's Swift SDK (`whereField`, `order(by:)`, `limit(to:)`, cursors)
/// and run with `getDocuments(_:)` or `count()`. Each builder returns a new query and reads nothing;
/// builders throw `invalid-argument` for a field path that is not one (dotted, with backticks
/// around segments holding special characters; `__name__` is the document id), and running a query
/// Firestore would refuse (two `!=` filters, `limitToLast` without an order, more than 30 `in`
/// values…) fails with `invalid-argument` naming the rule.
///
/// Filters follow Firestore's backend: a filter on a missing field never matches, and a document
/// lacking an ordered field is left out; `==` and ranges compare within one type (numbers, ints and
/// doubles alike, are one type), and ranges never match null or NaN; `!=` and `not-in` need the
/// field to exist and not be null. Results come in the query's order: the `order(by:)` fields,
/// then inequality fields, then the document id.
///
/// ```swift
/// let page = try await items.whereField("category", isEqualTo: "work").order(by: "priority", descending: true)
///     .limit(to: 20).start(afterDocument: last).getDocuments(Item.self)
/// ```
public struct Query: Sendable {
    /// The query as it travels to the host, in Firestore's `StructuredQuery` model.
    public private(set) var spec: QuerySpec
    let channel: HostChannel

    init(spec: QuerySpec, channel: HostChannel) {
        self.spec = spec
        self.channel = channel
    }

    func adding(_ field: String, _ op: QuerySpec.Operator, _ value: Value) throws -> Query {
        var q = self
        q.spec.filters.append(QuerySpec.Filter(field == "__name__" ? .documentID : try FieldPath(field), op, value))
        return q
    }

    static func encode<T: Encodable>(_ value: T) throws -> Value { try ValueEncoder().encode(value) }

    /// Documents whose `field` equals `value` (`==`; `Value.null` matches explicit nulls).
    public func whereField<T: Encodable>(_ field: String, isEqualTo value: T) throws -> Query { try adding(field, .equal, Query.encode(value)) }
    /// Documents whose `field` exists, is not null and differs from `value` (`!=`; at most one per query).
    public func whereField<T: Encodable>(_ field: String, isNotEqualTo value: T) throws -> Query { try adding(field, .notEqual, Query.encode(value)) }
    /// Documents whose `field` is of `value`'s type and below it (`<`; a null or NaN `value` matches nothing).
    public func whereField<T: Encodable>(_ field: String, isLessThan value: T) throws -> Query { try adding(field, .lessThan, Query.encode(value)) }
    /// Documents whose `field` is of `value`'s type and at most `value` (`<=`).
    public func whereField<T: Encodable>(_ field: String, isLessThanOrEqualTo value: T) throws -> Query { try adding(field, .lessThanOrEqual, Query.encode(value)) }
    /// Documents whose `field` is of `value`'s type and above it (`>`).
    public func whereField<T: Encodable>(_ field: String, isGreaterThan value: T) throws -> Query { try adding(field, .greaterThan, Query.encode(value)) }
    /// Documents whose `field` is of `value`'s type and at least `value` (`>=`).
    public func whereField<T: Encodable>(_ field: String, isGreaterThanOrEqualTo value: T) throws -> Query { try adding(field, .greaterThanOrEqual, Query.encode(value)) }
    /// Documents whose `field` equals one of `values` (1 to 30 of them).
    public func whereField<T: Encodable>(_ field: String, in values: [T]) throws -> Query { try adding(field, .in, Query.encode(values)) }
    /// Documents whose `field` exists, is not null and equals none of `values` (1 to 10; not with `in`).
    public func whereField<T: Encodable>(_ field: String, notIn values: [T]) throws -> Query { try adding(field, .notIn, Query.encode(values)) }
    /// Documents whose array `field` holds an element equal to `value` (one array filter per query).
    public func whereField<T: Encodable>(_ field: String, arrayContains value: T) throws -> Query { try adding(field, .arrayContains, Query.encode(value)) }
    /// Documents whose array `field` holds an element equal to one of `values` (1 to 30).
    public func whereField<T: Encodable>(_ field: String, arrayContainsAny values: [T]) throws -> Query { try adding(field, .arrayContainsAny, Query.encode(values)) }

    /// `field == null`: nil optionals are stored as explicit nulls, so this finds them (but not
    /// documents that lack the field).
    public func whereFieldIsNull(_ field: String) throws -> Query { try adding(field, .equal, .null) }

    /// Orders results by `field` (after any earlier `order(by:)`), ascending unless `descending`;
    /// documents lacking the field are left out. Values of different types sort in Firestore's type
    /// order (null, booleans, numbers, timestamps, strings, bytes, references, geopoints, arrays, maps).
    public func order(by field: String, descending: Bool = false) throws -> Query {
        var q = self
        q.spec.orderBy.append(QuerySpec.Order(field == "__name__" ? .documentID : try FieldPath(field), descending ? .descending : .ascending))
        return q
    }

    /// At most the first `n` results (a negative `n` is `invalid-argument` when the query runs).
    /// Replaces an earlier `limit(to:)` or `limit(toLast:)`.
    public func limit(to n: Int) -> Query {
        var q = self
        q.spec.limit = n
        q.spec.limitToLast = false
        return q
    }

    /// The last `n` results, still returned in the query's order (not reversed); needs an
    /// `order(by:)` (`invalid-argument` when the query runs otherwise). Replaces an earlier limit.
    public func limit(toLast n: Int) -> Query {
        var q = self
        q.spec.limit = n
        q.spec.limitToLast = true
        return q
    }

    /// Results from the position of `values` on, inclusive (Firestore's `startAt`). As for every
    /// cursor, `values` go one per ordered field, a prefix of the query's order (the `order(by:)`
    /// fields, then inequality fields, then the document id as a `.reference`); more values than that
    /// is `invalid-argument` when the query runs. A later start (or end) cursor replaces an earlier one.
    public func start(at values: [Value]) -> Query { cursor(start: true, values, before: true) }
    /// Results after the position of `values` (Firestore's `startAfter`).
    public func start(after values: [Value]) -> Query { cursor(start: true, values, before: false) }
    /// Results up to the position of `values`, inclusive (Firestore's `endAt`).
    public func end(at values: [Value]) -> Query { cursor(start: false, values, before: false) }
    /// Results before the position of `values` (Firestore's `endBefore`).
    public func end(before values: [Value]) -> Query { cursor(start: false, values, before: true) }

    /// Cursors at a document: its values of every ordered field, then its name, so pages never skip
    /// or repeat documents with equal values. The position uses the order the query has when the
    /// cursor is added: call these after `order(by:)` and the filters.
    ///
    /// ```swift
    /// let first = try await items.order(by: "sequence").limit(to: 20).getDocuments(Item.self)
    /// if let last = first.last {
    ///     let next = try await items.order(by: "sequence").start(afterDocument: last).limit(to: 20).getDocuments(Item.self)
    /// }
    /// ```
    public func start<T>(atDocument doc: DocumentSnapshot<T>) -> Query { start(at: position(of: doc)) }
    public func start<T>(afterDocument doc: DocumentSnapshot<T>) -> Query { start(after: position(of: doc)) }
    public func end<T>(atDocument doc: DocumentSnapshot<T>) -> Query { end(at: position(of: doc)) }
    public func end<T>(beforeDocument doc: DocumentSnapshot<T>) -> Query { end(before: position(of: doc)) }

    func position<T>(of doc: DocumentSnapshot<T>) -> [Value] {
        let fields = (doc.data as? [String: Value]) ?? (try? ValueEncoder().encode(AnyEncodableBox(doc.data)))?.mapValue ?? [:]
        return spec.normalizedOrder.map { o in
            o.field.isDocumentID ? .reference(doc.path.description) : (Value.map(fields).value(at: o.field) ?? .null)
        }
    }

    func cursor(start: Bool, _ values: [Value], before: Bool) -> Query {
        var q = self
        let c = QuerySpec.Cursor(values: values, before: before)
        if start { q.spec.startAt = c } else { q.spec.endAt = c }
        return q
    }

    /// Runs the query and decodes every document as `T` (`[String: Value]` for the fields as stored),
    /// in the query's order, as of the latest commit. Throws `invalid-argument` for a query Firestore
    /// would refuse, `data-loss` when a document does not decode as `T`.
    ///
    /// ```swift
    /// let open = try await items.whereField("isDone", isEqualTo: false).order(by: "targetDate").getDocuments(Item.self)
    /// ```
    public func getDocuments<T: Decodable & Sendable>(_ type: T.Type = T.self) async throws -> [DocumentSnapshot<T>] {
        try DocumentsWire.snapshots(try await channel.call(Boundary.RunQuery(query: spec)), T.self)
    }

    /// How many documents match (honouring the limit and cursors, if any), without decoding them;
    /// `invalid-argument` for a query Firestore would refuse.
    ///
    /// ```swift
    /// let open = try await items.whereField("isDone", isEqualTo: false).count()
    /// ```
    public func count() async throws -> Int {
        Int(try await channel.call(Boundary.CountQuery(query: spec)))
    }
}

// A collection is a query over all its documents: these start one, as `Query`'s methods of the
// same names do (`items.whereField(…)` is `items.query.whereField(…)`).
extension CollectionReference {
    public func whereField<T: Encodable>(_ field: String, isEqualTo value: T) throws -> Query { try query.whereField(field, isEqualTo: value) }
    public func whereField<T: Encodable>(_ field: String, isNotEqualTo value: T) throws -> Query { try query.whereField(field, isNotEqualTo: value) }
    public func whereField<T: Encodable>(_ field: String, isLessThan value: T) throws -> Query { try query.whereField(field, isLessThan: value) }
    public func whereField<T: Encodable>(_ field: String, isLessThanOrEqualTo value: T) throws -> Query { try query.whereField(field, isLessThanOrEqualTo: value) }
    public func whereField<T: Encodable>(_ field: String, isGreaterThan value: T) throws -> Query { try query.whereField(field, isGreaterThan: value) }
    public func whereField<T: Encodable>(_ field: String, isGreaterThanOrEqualTo value: T) throws -> Query { try query.whereField(field, isGreaterThanOrEqualTo: value) }
    public func whereField<T: Encodable>(_ field: String, in values: [T]) throws -> Query { try query.whereField(field, in: values) }
    public func whereField<T: Encodable>(_ field: String, notIn values: [T]) throws -> Query { try query.whereField(field, notIn: values) }
    public func whereField<T: Encodable>(_ field: String, arrayContains value: T) throws -> Query { try query.whereField(field, arrayContains: value) }
    public func whereField<T: Encodable>(_ field: String, arrayContainsAny values: [T]) throws -> Query { try query.whereField(field, arrayContainsAny: values) }
    public func whereFieldIsNull(_ field: String) throws -> Query { try query.whereFieldIsNull(field) }
    public func order(by field: String, descending: Bool = false) throws -> Query { try query.order(by: field, descending: descending) }
    public func limit(to n: Int) -> Query { query.limit(to: n) }
    public func getDocuments<T: Decodable & Sendable>(_ type: T.Type = T.self) async throws -> [DocumentSnapshot<T>] { try await query.getDocuments(type) }
    public func count() async throws -> Int { try await query.count() }
}

struct AnyEncodableBox: Encodable {
    let value: Any
    init(_ value: Any) { self.value = value }
    func encode(to encoder: Encoder) throws {
        guard let e = value as? Encodable else { throw EncodingError.invalidValue(value, .init(codingPath: [], debugDescription: "not Encodable")) }
        try e.encode(to: encoder)
    }
}
