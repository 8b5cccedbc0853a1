import HearthModel

/// A query, built like Firestore's Swift SDK (`whereField`, `order(by:)`, `limit(to:)`, cursors)
/// and run with `getDocuments(_:)` or `count()`. Each builder returns a new query; builders throw
/// `invalid-argument` for a field path that is not one, and running a query Firestore would refuse
/// (two `!=` filters, `limitToLast` without an order…) fails with `invalid-argument` naming the rule.
///
/// ```swift
/// let page = try await items.whereField("category", isEqualTo: "work").order(by: "priority", descending: true)
///     .limit(to: 20).start(afterDocument: last).getDocuments(Item.self)
/// ```
public struct Query: Sendable {
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

    public func whereField<T: Encodable>(_ field: String, isEqualTo value: T) throws -> Query { try adding(field, .equal, Query.encode(value)) }
    public func whereField<T: Encodable>(_ field: String, isNotEqualTo value: T) throws -> Query { try adding(field, .notEqual, Query.encode(value)) }
    public func whereField<T: Encodable>(_ field: String, isLessThan value: T) throws -> Query { try adding(field, .lessThan, Query.encode(value)) }
    public func whereField<T: Encodable>(_ field: String, isLessThanOrEqualTo value: T) throws -> Query { try adding(field, .lessThanOrEqual, Query.encode(value)) }
    public func whereField<T: Encodable>(_ field: String, isGreaterThan value: T) throws -> Query { try adding(field, .greaterThan, Query.encode(value)) }
    public func whereField<T: Encodable>(_ field: String, isGreaterThanOrEqualTo value: T) throws -> Query { try adding(field, .greaterThanOrEqual, Query.encode(value)) }
    public func whereField<T: Encodable>(_ field: String, in values: [T]) throws -> Query { try adding(field, .in, Query.encode(values)) }
    public func whereField<T: Encodable>(_ field: String, notIn values: [T]) throws -> Query { try adding(field, .notIn, Query.encode(values)) }
    public func whereField<T: Encodable>(_ field: String, arrayContains value: T) throws -> Query { try adding(field, .arrayContains, Query.encode(value)) }
    public func whereField<T: Encodable>(_ field: String, arrayContainsAny values: [T]) throws -> Query { try adding(field, .arrayContainsAny, Query.encode(values)) }

    /// `field == null`: nil optionals are stored as explicit nulls, so this finds them.
    public func whereFieldIsNull(_ field: String) throws -> Query { try adding(field, .equal, .null) }

    public func order(by field: String, descending: Bool = false) throws -> Query {
        var q = self
        q.spec.orderBy.append(QuerySpec.Order(field == "__name__" ? .documentID : try FieldPath(field), descending ? .descending : .ascending))
        return q
    }

    public func limit(to n: Int) -> Query {
        var q = self
        q.spec.limit = n
        q.spec.limitToLast = false
        return q
    }

    /// The last `n` results (in the query's order); needs an `order(by:)`.
    public func limit(toLast n: Int) -> Query {
        var q = self
        q.spec.limit = n
        q.spec.limitToLast = true
        return q
    }

    public func start(at values: [Value]) -> Query { cursor(start: true, values, before: true) }
    public func start(after values: [Value]) -> Query { cursor(start: true, values, before: false) }
    public func end(at values: [Value]) -> Query { cursor(start: false, values, before: false) }
    public func end(before values: [Value]) -> Query { cursor(start: false, values, before: true) }

    /// Cursors at a document: its values of every ordered field, then its name.
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

    /// Runs the query and decodes every document as `T` (`[String: Value]` for the fields as stored).
    ///
    /// ```swift
    /// let open = try await items.whereField("isDone", isEqualTo: false).order(by: "targetDate").getDocuments(Item.self)
    /// ```
    public func getDocuments<T: Decodable & Sendable>(_ type: T.Type = T.self) async throws -> [DocumentSnapshot<T>] {
        try DocumentsWire.snapshots(try await channel.call(Boundary.RunQuery(query: spec)), T.self)
    }

    /// How many documents match (honouring the limit, if any), without reading them.
    public func count() async throws -> Int {
        Int(try await channel.call(Boundary.CountQuery(query: spec)))
    }
}

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
