import HearthModel

/// Firestore's query semantics on one document, as the client SDKs evaluate them: filters are
/// type-bracketed (`x > 5` matches only numbers), a filter on a missing field never matches,
/// `!=` and `not-in` need the field to exist, `not-in` with null in its list matches nothing, and
/// documents missing an ordered field are excluded.
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

    func matches(_ doc: StoredDocument, _ f: QuerySpec.Filter) -> Bool {
        guard let v = fieldValue(doc, f.field) else { return false }
        switch f.op {
        case .equal: return QueryMatcher.equal(v, f.value)
        case .notEqual: return !QueryMatcher.equal(v, f.value)
        case .lessThan: return v.typeOrder == f.value.typeOrder && Value.compare(v, f.value) == .ascending
        case .lessThanOrEqual: return v.typeOrder == f.value.typeOrder && Value.compare(v, f.value) != .descending
        case .greaterThan: return v.typeOrder == f.value.typeOrder && Value.compare(v, f.value) == .descending
        case .greaterThanOrEqual: return v.typeOrder == f.value.typeOrder && Value.compare(v, f.value) != .ascending
        case .in: return (f.value.arrayValue ?? []).contains { QueryMatcher.equal(v, $0) }
        case .notIn:
            let list = f.value.arrayValue ?? []
            if list.contains(where: \.isNull) { return false }
            return !list.contains { QueryMatcher.equal(v, $0) }
        case .arrayContains:
            guard case .array(let items) = v else { return false }
            return items.contains { QueryMatcher.equal($0, f.value) }
        case .arrayContainsAny:
            guard case .array(let items) = v else { return false }
            let wanted = f.value.arrayValue ?? []
            return items.contains { item in wanted.contains { QueryMatcher.equal(item, $0) } }
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
