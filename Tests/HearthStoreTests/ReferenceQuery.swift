import HearthModel

/// A deliberately plain query evaluator to check the engine against: it looks at every document,
/// filters with Firestore's backend semantics, orders with `Value.compare` and the document name,
/// then applies cursors and the limit. It shares no code with `QueryEngine` or `QueryMatcher`.
///
/// The filter semantics are written from Firestore's query documentation
/// (https://firebase.google.com/docs/firestore/query-data/queries) and the SDKs' integration tests
/// that run against the backend (firebase-js-sdk `test/integration/api/query.test.ts`: "can use !=
/// filters", "can use NOT_IN filters", "can use IN filters", "can use array-contains-any filters";
/// `composite_index_query.test.ts` "can use on special values"), not from the SDKs' local matchers,
/// which differ on null and NaN:
/// - `== null` is IS_NULL and `== NaN` is IS_NAN; `!= null` is IS_NOT_NULL, `!= NaN` is
///   IS_NOT_NAN (which excludes null too); any other `!=` matches every existing non-null value
///   not equal to it.
/// - `not-in` matches existing, non-null values not in the list; a list holding null matches nothing.
/// - `in` and `array-contains-any` ignore null and NaN list elements.
/// - Ranges compare within one type and leave out null and NaN on either side.
/// Numbers in membership tests compare by value (1 matches 1.0), as the backend's indexes do.
enum ReferenceQuery {
    static func run(_ spec: QuerySpec, over all: [StoredDocument]) -> [DocumentPath] {
        let order = normalizedOrder(spec)
        let base = spec.allDescendants ? nil : ((spec.parent?.segments ?? []) + [spec.collectionID]).joined(separator: "/")
        func name(_ v: Value) -> Value {
            if case .string(let id) = v, let base { return .reference(base + "/" + id) }
            if case .array(let items) = v { return .array(items.map(name)) }
            return v
        }
        let filters = spec.filters.map { f in
            f.field.isDocumentID ? QuerySpec.Filter(f.field, f.op, name(f.value)) : f
        }
        func cursor(_ c: QuerySpec.Cursor?) -> QuerySpec.Cursor? {
            guard var c else { return nil }
            for i in c.values.indices where i < order.count && order[i].field.isDocumentID { c.values[i] = name(c.values[i]) }
            return c
        }
        let start = cursor(spec.startAt), end = cursor(spec.endAt)

        var docs = all.filter { d in
            guard d.path.collectionID == spec.collectionID else { return false }
            if spec.allDescendants {
                if let parent = spec.parent, !parent.isAncestor(of: d.path) { return false }
            } else if d.path.segments.dropLast().joined(separator: "/") != base {
                return false
            }
            for o in order where !o.field.isDocumentID {
                if value(d, o.field) == nil { return false }
            }
            return filters.allSatisfy { matches(d, $0) }
        }
        docs.sort { compare($0, $1, order) == .ascending }
        if let start {
            docs = docs.filter { d in
                let c = compare(d, start.values, order)
                return start.before ? c != .ascending : c == .descending
            }
        }
        if let end {
            docs = docs.filter { d in
                let c = compare(d, end.values, order)
                return end.before ? c == .ascending : c != .descending
            }
        }
        if let limit = spec.limit {
            docs = spec.limitToLast ? Array(docs.suffix(limit)) : Array(docs.prefix(limit))
        }
        return docs.map(\.path)
    }

    static func normalizedOrder(_ spec: QuerySpec) -> [QuerySpec.Order] {
        var order = spec.orderBy
        let direction = spec.orderBy.last?.direction ?? .ascending
        var inequality: [FieldPath] = []
        for f in spec.filters where [.notEqual, .lessThan, .lessThanOrEqual, .greaterThan, .greaterThanOrEqual, .notIn].contains(f.op) {
            if !f.field.isDocumentID && !order.contains(where: { $0.field == f.field }) && !inequality.contains(f.field) {
                inequality.append(f.field)
            }
        }
        inequality.sort { a, b in
            for (x, y) in zip(a.segments, b.segments) where x != y { return Array(x.utf8).lexicographicallyPrecedes(Array(y.utf8)) }
            return a.segments.count < b.segments.count
        }
        order += inequality.map { QuerySpec.Order($0, direction) }
        if !order.contains(where: { $0.field.isDocumentID }) { order.append(QuerySpec.Order(.documentID, direction)) }
        return order
    }

    static func value(_ d: StoredDocument, _ field: FieldPath) -> Value? {
        if field.isDocumentID { return .reference(d.path.description) }
        var current: Value = .map(d.fields)
        for segment in field.segments {
            guard case .map(let m) = current, let next = m[segment] else { return nil }
            current = next
        }
        return current
    }

    static func same(_ a: Value, _ b: Value) -> Bool { a.typeOrder == b.typeOrder && Value.compare(a, b) == .same }

    static func isNull(_ v: Value) -> Bool { v == .null }
    static func isNaN(_ v: Value) -> Bool { v.doubleValue?.isNaN == true && v.intValue == nil }

    /// The list's elements that can match anything: not null, not NaN.
    static func matchable(_ list: [Value]) -> [Value] { list.filter { !isNull($0) && !isNaN($0) } }

    static func range(_ v: Value, _ bound: Value, _ holds: (ComparisonOrder) -> Bool) -> Bool {
        if isNull(v) || isNaN(v) || isNull(bound) || isNaN(bound) { return false }
        if v.typeOrder != bound.typeOrder { return false }
        return holds(Value.compare(v, bound))
    }

    static func matches(_ d: StoredDocument, _ f: QuerySpec.Filter) -> Bool {
        guard let v = value(d, f.field) else { return false }
        let list = f.value.arrayValue ?? []
        switch f.op {
        case .equal:
            if isNull(f.value) { return isNull(v) }
            if isNaN(f.value) { return isNaN(v) }
            return same(v, f.value)
        case .notEqual:
            if isNull(f.value) { return !isNull(v) }
            if isNaN(f.value) { return !isNull(v) && !isNaN(v) }
            return !isNull(v) && !same(v, f.value)
        case .lessThan: return range(v, f.value) { $0 == .ascending }
        case .lessThanOrEqual: return range(v, f.value) { $0 == .ascending || $0 == .same }
        case .greaterThan: return range(v, f.value) { $0 == .descending }
        case .greaterThanOrEqual: return range(v, f.value) { $0 == .descending || $0 == .same }
        case .in: return matchable(list).contains { same(v, $0) }
        case .notIn:
            if list.contains(where: isNull) || isNull(v) { return false }
            if isNaN(v) && list.contains(where: isNaN) { return false }
            return !matchable(list).contains { same(v, $0) }
        case .arrayContains:
            if isNull(f.value) || isNaN(f.value) { return false }
            return (v.arrayValue ?? []).contains { same($0, f.value) }
        case .arrayContainsAny:
            let wanted = matchable(list)
            return (v.arrayValue ?? []).contains { item in wanted.contains { same(item, $0) } }
        }
    }

    static func compare(_ a: StoredDocument, _ b: StoredDocument, _ order: [QuerySpec.Order]) -> ComparisonOrder {
        for o in order {
            var c: ComparisonOrder
            if o.field.isDocumentID {
                c = a.path == b.path ? .same : (a.path < b.path ? .ascending : .descending)
            } else {
                c = Value.compare(value(a, o.field)!, value(b, o.field)!)
            }
            if o.direction == .descending { c = c.reversed }
            if c != .same { return c }
        }
        return .same
    }

    static func compare(_ d: StoredDocument, _ values: [Value], _ order: [QuerySpec.Order]) -> ComparisonOrder {
        for (o, v) in zip(order, values) {
            var c = Value.compare(value(d, o.field)!, v)
            if o.direction == .descending { c = c.reversed }
            if c != .same { return c }
        }
        return .same
    }
}
