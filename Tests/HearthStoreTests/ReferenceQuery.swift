import HearthModel

/// A deliberately plain query evaluator to check the engine against: it looks at every document,
/// filters with Firestore's semantics as the JS SDK evaluates them (`core/filter.ts`), orders with
/// `Value.compare` and the document name, then applies cursors and the limit. It shares no code
/// with `QueryEngine` or `QueryMatcher`.
///
/// Numbers in membership tests (`in`, `not-in`, `array-contains`, `array-contains-any`) compare by
/// value (1 matches 1.0), as Firestore's backend does; the JS SDK's local cache compares them by
/// kind there.
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

    static func matches(_ d: StoredDocument, _ f: QuerySpec.Filter) -> Bool {
        guard let v = value(d, f.field) else { return false }
        let list = f.value.arrayValue ?? []
        switch f.op {
        case .equal: return same(v, f.value)
        case .notEqual: return Value.compare(v, f.value) != .same || v.typeOrder != f.value.typeOrder
        case .lessThan: return v.typeOrder == f.value.typeOrder && Value.compare(v, f.value) == .ascending
        case .lessThanOrEqual: return v.typeOrder == f.value.typeOrder && Value.compare(v, f.value) != .descending
        case .greaterThan: return v.typeOrder == f.value.typeOrder && Value.compare(v, f.value) == .descending
        case .greaterThanOrEqual: return v.typeOrder == f.value.typeOrder && Value.compare(v, f.value) != .ascending
        case .in: return list.contains { same(v, $0) }
        case .notIn: return !list.contains(where: \.isNull) && !list.contains { same(v, $0) }
        case .arrayContains: return (v.arrayValue ?? []).contains { same($0, f.value) }
        case .arrayContainsAny: return (v.arrayValue ?? []).contains { item in list.contains { same(item, $0) } }
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
