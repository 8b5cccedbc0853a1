/// A query over one collection or a collection group, in Firestore's model
/// (https://firebase.google.com/docs/firestore/reference/rest/v1/StructuredQuery).
public struct QuerySpec: Sendable, Hashable, Codable {
    public enum Operator: String, Sendable, Hashable, Codable, CaseIterable {
        case equal = "=="
        case notEqual = "!="
        case lessThan = "<"
        case lessThanOrEqual = "<="
        case greaterThan = ">"
        case greaterThanOrEqual = ">="
        case `in` = "in"
        case notIn = "not-in"
        case arrayContains = "array-contains"
        case arrayContainsAny = "array-contains-any"

        /// Range and not-equal operators: their fields join the implicit order.
        public var isInequality: Bool {
            switch self {
            case .notEqual, .lessThan, .lessThanOrEqual, .greaterThan, .greaterThanOrEqual, .notIn: return true
            default: return false
            }
        }
    }

    public struct Filter: Sendable, Hashable, Codable {
        public var field: FieldPath
        public var op: Operator
        public var value: Value

        public init(_ field: FieldPath, _ op: Operator, _ value: Value) {
            self.field = field
            self.op = op
            self.value = value
        }
    }

    public enum Direction: String, Sendable, Hashable, Codable {
        case ascending = "asc"
        case descending = "desc"

        public var reversed: Direction { self == .ascending ? .descending : .ascending }
    }

    public struct Order: Sendable, Hashable, Codable {
        public var field: FieldPath
        public var direction: Direction

        public init(_ field: FieldPath, _ direction: Direction = .ascending) {
            self.field = field
            self.direction = direction
        }
    }

    /// A position in the ordered results: values for a prefix of the (normalized) order.
    /// `before` is true for startAt and endBefore (the position just before the values).
    public struct Cursor: Sendable, Hashable, Codable {
        public var values: [Value]
        public var before: Bool

        public init(values: [Value], before: Bool) {
            self.values = values
            self.before = before
        }
    }

    /// The document whose subcollections are queried; nil for the root.
    public var parent: DocumentPath?
    /// The collections' id; empty for a kindless query, which reads collections of every id
    /// (`isKindless`).
    public var collectionID: String
    /// A collection group: every collection named `collectionID` under `parent`, at any depth.
    public var allDescendants: Bool
    public var filters: [Filter]
    public var orderBy: [Order]
    public var startAt: Cursor?
    public var endAt: Cursor?
    public var limit: Int?
    /// Keep the last `limit` results instead of the first (the order is not reversed).
    public var limitToLast: Bool

    public init(parent: DocumentPath? = nil, collectionID: String, allDescendants: Bool = false, filters: [Filter] = [],
                orderBy: [Order] = [], startAt: Cursor? = nil, endAt: Cursor? = nil, limit: Int? = nil, limitToLast: Bool = false) {
        self.parent = parent
        self.collectionID = collectionID
        self.allDescendants = allDescendants
        self.filters = filters
        self.orderBy = orderBy
        self.startAt = startAt
        self.endAt = endAt
        self.limit = limit
        self.limitToLast = limitToLast
    }

    /// A query on the collection at `path`.
    public init(collection path: CollectionPath) {
        self.init(parent: path.parent, collectionID: path.id)
    }

    /// A collection-group query on every collection named `id`; an empty `id` is refused here
    /// rather than taken for a kindless query.
    public init(group id: String) throws(HTTPSError) {
        if id.isEmpty || id.utf8.contains(UInt8(ascii: "/")) { throw .invalidArgument("invalid collection id '\(id)' for a collection group") }
        try PathRules.validateID(Substring(id), in: id)
        self.init(collectionID: id, allDescendants: true)
    }

    /// A kindless query: no collection id, so every collection under `parent` (its own with
    /// `allDescendants` false, all beneath it at any depth with true). Firestore's REST API takes
    /// one as a `from` without `collectionId`; firebase-tools' and the Admin SDKs' recursive
    /// deletes send them. Like Datastore's kindless queries, it filters and orders only on
    /// `__name__`.
    public var isKindless: Bool { collectionID.isEmpty }

    /// What the query reads, for messages: `members/alice/items`, `collection group 'items' under
    /// lists/a`, `every collection under members/alice`.
    public var scopeDescription: String {
        let under = parent.map { " under \($0)" }
        if isKindless { return (allDescendants ? "every collection at any depth" : "every collection") + (under ?? " at the root") }
        if allDescendants { return "collection group '\(collectionID)'" + (under ?? "") }
        return collectionPath?.description ?? collectionID
    }

    /// The collection path of a query on one collection (neither a group nor kindless).
    public var collectionPath: CollectionPath? {
        guard !allDescendants, !isKindless else { return nil }
        return CollectionPath(trustedSegments: (parent?.segments ?? []) + [collectionID])
    }

    /// The full order Firestore applies: the explicit order, then every inequality field not in it
    /// (in field path order), then the document name; added fields take the direction of the last
    /// explicit order, or ascending.
    public var normalizedOrder: [Order] {
        var order = orderBy
        let lastDirection = orderBy.last?.direction ?? .ascending
        let ordered = Set(order.map(\.field))
        let inequalityFields = Set(filters.filter { $0.op.isInequality }.map(\.field)).subtracting(ordered).sorted()
        for field in inequalityFields where !field.isDocumentID { order.append(Order(field, lastDirection)) }
        if !order.contains(where: { $0.field.isDocumentID }) { order.append(Order(.documentID, lastDirection)) }
        return order
    }

    public static let maxDisjunctionValues = 30
    public static let maxNotInValues = 10
    public static let maxInequalityFields = 10

    /// Checks the rules Firestore enforces on a query; the error names the rule.
    public func validate() throws(HTTPSError) {
        if isKindless {
            for field in filters.map(\.field) + orderBy.map(\.field) where !field.isDocumentID {
                throw .invalidArgument("a kindless query (one without a collection id) can only filter and order on __name__, not '\(field)'")
            }
        } else {
            if collectionID.utf8.contains(UInt8(ascii: "/")) { throw .invalidArgument("invalid collection id '\(collectionID)'") }
            try PathRules.validateID(Substring(collectionID), in: collectionID)
        }
        if let limit, limit < 0 { throw .invalidArgument("limit must not be negative (got \(limit))") }
        if limitToLast && orderBy.isEmpty {
            throw .invalidArgument("limitToLast requires at least one orderBy clause")
        }
        if limitToLast && limit == nil { throw .invalidArgument("limitToLast requires a limit") }
        // Disjunctions in disjunctive normal form: each 'in' or 'array-contains-any' multiplies them
        // by its number of values (saturating, so any number of filters is safe to count).
        var arrayContains = 0, disjunctions = 1, inLike = 0, notIns = 0, notEquals = 0
        for f in filters {
            switch f.op {
            case .in, .notIn, .arrayContainsAny:
                guard case .array(let list) = f.value, !list.isEmpty else {
                    throw .invalidArgument("'\(f.op.rawValue)' on '\(f.field)' needs a non-empty array of values")
                }
                let max = f.op == .notIn ? QuerySpec.maxNotInValues : QuerySpec.maxDisjunctionValues
                if list.count > max {
                    throw .invalidArgument("'\(f.op.rawValue)' on '\(f.field)' allows at most \(max) values (got \(list.count))")
                }
            default:
                break
            }
            switch f.op {
            case .arrayContains: arrayContains += 1
            case .arrayContainsAny, .in:
                if f.op == .arrayContainsAny { arrayContains += 1 }
                inLike += 1
                disjunctions = min(disjunctions * max(1, f.value.arrayValue?.count ?? 1), QuerySpec.maxDisjunctionValues + 1)
            case .notIn: notEquals += 1; notIns += 1
            case .notEqual: notEquals += 1
            default: break
            }
            if f.field.isDocumentID {
                switch f.value {
                case .reference, .array: break
                case .string(let s) where !s.utf8.contains(UInt8(ascii: "/")): break
                default:
                    throw .invalidArgument("filters on the document id need a document id or reference (got \(f.value.typeName))")
                }
                if f.op == .arrayContains || f.op == .arrayContainsAny {
                    throw .invalidArgument("'\(f.op.rawValue)' cannot filter on the document id")
                }
            }
        }
        if arrayContains > 1 { throw .invalidArgument("a query can have at most one array-contains or array-contains-any filter") }
        if notIns > 0 && inLike > 0 { throw .invalidArgument("'not-in' cannot be combined with 'in' or 'array-contains-any' in one query") }
        if disjunctions > QuerySpec.maxDisjunctionValues {
            throw .invalidArgument("a query can have at most \(QuerySpec.maxDisjunctionValues) disjunctions: the values of its 'in' and 'array-contains-any' filters multiply to more")
        }
        if notEquals > 1 { throw .invalidArgument("a query can have at most one '!=' or 'not-in' filter") }
        // Firestore's rules for inequalities on several fields
        // (https://firebase.google.com/docs/firestore/query-data/multiple-range-fields#limitations).
        let inequalityFields = Set(filters.filter { $0.op.isInequality }.map(\.field))
        if inequalityFields.count > QuerySpec.maxInequalityFields {
            throw .invalidArgument("a query can have range or inequality filters (<, <=, >, >=, !=, not-in) on at most \(QuerySpec.maxInequalityFields) fields (got \(inequalityFields.count))")
        }
        if !inequalityFields.isEmpty, !inequalityFields.contains(.documentID),
           filters.contains(where: { $0.field.isDocumentID && ($0.op == .equal || $0.op == .in) }) {
            throw .invalidArgument("Equality on key is not allowed if there are other inequality fields and key does not appear in inequalities.")
        }
        let order = normalizedOrder
        if let key = order.firstIndex(where: { $0.field.isDocumentID }), key != order.count - 1 {
            throw .invalidArgument("order by clause cannot contain more fields after the key (__name__ is ordered before '\(order[key + 1].field)')")
        }
        for cursor in [startAt, endAt].compactMap({ $0 }) where cursor.values.count > order.count {
            throw .invalidArgument("a cursor has \(cursor.values.count) values but the query orders by only \(order.count) fields")
        }
        var seen: Set<FieldPath> = []
        for o in orderBy where !seen.insert(o.field).inserted {
            throw .invalidArgument("orderBy '\(o.field)' appears twice")
        }
    }
}
