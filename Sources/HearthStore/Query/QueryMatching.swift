import HearthModel

/// Firestore's query semantics on one document, as the backend evaluates them (the Firestore query
/// docs, https://firebase.google.com/docs/firestore/query-data/queries, and the SDKs' integration
/// tests that run against it; the SDKs' local caches differ on null and NaN):
/// - a filter on a missing field never matches, and documents missing an ordered field are excluded;
/// - `==` is type-bracketed; `== null` matches null and `== NaN` matches NaN;
/// - `!=` and `not-in` need the field to exist and not be null ("`x != null` evaluates to
///   undefined"); `!= NaN` also excludes NaN; `not-in` with null in its list matches nothing;
/// - range filters are type-bracketed and never match null or NaN, and one whose value is null or
///   NaN matches nothing;
/// - null and NaN elements of `in` and `array-contains-any` lists match nothing (nor does
///   `array-contains` null or NaN); the other elements still do.
struct QueryMatcher {
    let filters: [QuerySpec.Filter]
    let order: [QuerySpec.Order]

    func fieldValue(_ doc: StoredDocument, _ field: FieldPath) -> Value? {
        field.isDocumentID ? .reference(doc.path.description) : Value.map(doc.fields).value(at: field)
    }

    func matches(_ doc: StoredDocument) -> Bool {
        for o in order where !o.field.isDocumentID {
            if fieldValue(doc, o.field) == nil { return false }
        }
        for f in filters where !matches(doc, f) { return false }
        return true
    }

    static func equal(_ a: Value, _ b: Value) -> Bool {
        a.typeOrder == b.typeOrder && Value.compare(a, b) == .same
    }

    /// Null and NaN take part only in `==` and `!=` (and `not-in`'s exclusions).
    static func isNullOrNaN(_ v: Value) -> Bool {
        switch v {
        case .null: return true
        case .double(let d): return d.isNaN
        default: return false
        }
    }

    /// A range filter: same type as its value, neither of them null or NaN.
    static func inRange(_ v: Value, _ bound: Value, _ accept: (ComparisonOrder) -> Bool) -> Bool {
        guard !isNullOrNaN(v), !isNullOrNaN(bound), v.typeOrder == bound.typeOrder else { return false }
        return accept(Value.compare(v, bound))
    }

    /// Whether `v` equals one of the list's elements other than null and NaN.
    static func member(_ v: Value, of list: [Value]) -> Bool {
        list.contains { !isNullOrNaN($0) && equal(v, $0) }
    }

    func matches(_ doc: StoredDocument, _ f: QuerySpec.Filter) -> Bool {
        guard let v = fieldValue(doc, f.field) else { return false }
        switch f.op {
        case .equal: return QueryMatcher.equal(v, f.value)
        case .notEqual: return !v.isNull && !QueryMatcher.equal(v, f.value)
        case .lessThan: return QueryMatcher.inRange(v, f.value) { $0 == .ascending }
        case .lessThanOrEqual: return QueryMatcher.inRange(v, f.value) { $0 != .descending }
        case .greaterThan: return QueryMatcher.inRange(v, f.value) { $0 == .descending }
        case .greaterThanOrEqual: return QueryMatcher.inRange(v, f.value) { $0 != .ascending }
        case .in: return QueryMatcher.member(v, of: f.value.arrayValue ?? [])
        case .notIn:
            let list = f.value.arrayValue ?? []
            if list.contains(where: \.isNull) || v.isNull { return false }
            return !list.contains { QueryMatcher.equal(v, $0) }
        case .arrayContains:
            guard case .array(let items) = v, !QueryMatcher.isNullOrNaN(f.value) else { return false }
            return items.contains { QueryMatcher.equal($0, f.value) }
        case .arrayContainsAny:
            guard case .array(let items) = v else { return false }
            let wanted = f.value.arrayValue ?? []
            return items.contains { QueryMatcher.member($0, of: wanted) }
        }
    }

    /// Compares two documents in the query's order.
    func compare(_ a: StoredDocument, _ b: StoredDocument) -> ComparisonOrder {
        for o in order {
            var c: ComparisonOrder
            if o.field.isDocumentID {
                c = a.path == b.path ? .same : (a.path < b.path ? .ascending : .descending)
            } else {
                c = Value.compare(fieldValue(a, o.field) ?? .null, fieldValue(b, o.field) ?? .null)
            }
            if o.direction == .descending { c = c.reversed }
            if c != .same { return c }
        }
        return .same
    }

    /// Where a document lies relative to a cursor's values (a prefix of the order), in query order.
    func compare(_ doc: StoredDocument, cursor values: [Value]) -> ComparisonOrder {
        for (o, cursorValue) in zip(order, values) {
            var c = Value.compare(fieldValue(doc, o.field) ?? .null, cursorValue)
            if o.direction == .descending { c = c.reversed }
            if c != .same { return c }
        }
        return .same
    }

    /// True when the document comes before the start cursor (and must be skipped).
    func isBeforeStart(_ doc: StoredDocument, _ cursor: QuerySpec.Cursor?) -> Bool {
        guard let cursor else { return false }
        let c = compare(doc, cursor: cursor.values)
        return cursor.before ? c == .ascending : c != .descending
    }

    /// True when the document comes after the end cursor (and so does everything after it).
    func isAfterEnd(_ doc: StoredDocument, _ cursor: QuerySpec.Cursor?) -> Bool {
        guard let cursor else { return false }
        let c = compare(doc, cursor: cursor.values)
        return cursor.before ? c != .ascending : c == .descending
    }
}

extension DocumentStore {
    /// The results of queries that ran in the same `order` (the branches of a disjunction), merged:
    /// each document once, in that order.
    public static func merged(_ results: [[StoredDocument]], order: [QuerySpec.Order]) -> [StoredDocument] {
        var seen: Set<DocumentPath> = []
        var all: [StoredDocument] = []
        for doc in results.joined() where seen.insert(doc.path).inserted { all.append(doc) }
        let matcher = QueryMatcher(filters: [], order: order)
        return all.sorted { matcher.compare($0, $1) == .ascending }
    }
}
