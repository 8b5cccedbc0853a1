import HearthModel

/// What a list query's filters guarantee about every document it can return: rules are not
/// filters (https://firebase.google.com/docs/firestore/security/rules-query), so a query is
/// allowed only when its rule holds for all of them, whatever they hold.
///
/// A list is evaluated with `resource.data.f` symbolic (`RulesValue.field`). Each comparison of
/// such a field with a known value asks these facts, which answer yes (true for every document
/// the query can return), no (false for every one, without an error), or unknown. Anything the
/// facts do not decide is unknown, and an unknown condition denies. The facts follow the query
/// semantics of `HearthStore`'s matcher: every filter implies the field exists; `==` and range
/// filters are type-bracketed (numbers by value, ints and floats alike); ranges exclude null and
/// NaN; `!=` and `not-in` exclude null.
///
/// Approximations, all on the side of denying: a field fixed by `==` becomes the value itself
/// only when it holds no number (a query for `1` also returns `1.0`, which `is int` tells apart);
/// cursors, `__name__` filters and the document id are not used; two fields compared with
/// each other, arithmetic on a field and methods called on one are unknown.
struct QueryFacts: Sendable {
    struct Bound: Sendable {
        var value: Value
        var inclusive: Bool
    }

    struct Field: Sendable {
        var equals: [Value] = []
        /// Each `in` filter's values, null and NaN removed (they match nothing).
        var oneOf: [[Value]] = []
        var lower: [Bound] = []
        var upper: [Bound] = []
        /// `!=` values and `not-in` lists: the field also is not null.
        var notEqual: [Value] = []
        var arrayContains: [Value] = []
        /// `array-contains-any` lists of two or more: the field holds one of each.
        var arrayContainsAny: [[Value]] = []
        var isArray = false

        /// Whether no value satisfies the filters on this field (`score == -1` beside
        /// `score > 50`): the query returns no document, so anything asked of the field holds for
        /// all of them, as Firebase's rules engine answers.
        var matchesNothing: Bool {
            guard let e = equals.first, !QueryFacts.isNaN(e) else { return false }
            if equals.contains(where: { !QueryFacts.same($0, e) }) { return true }
            if notEqual.contains(where: { QueryFacts.same($0, e) }) { return true }
            if oneOf.contains(where: { list in !list.contains { QueryFacts.same($0, e) } }) { return true }
            if isArray, e.typeOrder != 8 { return true }
            for b in upper {
                let o = Value.compare(e, b.value)
                if b.value.typeOrder != e.typeOrder || o == .descending || (o == .same && !b.inclusive) { return true }
            }
            for b in lower {
                let o = Value.compare(e, b.value)
                if b.value.typeOrder != e.typeOrder || o == .ascending || (o == .same && !b.inclusive) { return true }
            }
            return false
        }
    }

    private(set) var fields: [FieldPath: Field] = [:]
    let limit: Int?

    init(_ query: QuerySpec) {
        limit = query.limit
        for filter in query.filters where !filter.field.isDocumentID {
            var f = fields[filter.field] ?? Field()
            let v = filter.value
            switch filter.op {
            case .equal: f.equals.append(v)
            case .in:
                let values = (v.arrayValue ?? []).filter { !QueryFacts.isNullOrNaN($0) }
                if values.count == 1 { f.equals.append(values[0]) } else { f.oneOf.append(values) }
            case .notEqual: f.notEqual.append(v)
            case .notIn: f.notEqual.append(contentsOf: v.arrayValue ?? [])
            case .lessThan, .lessThanOrEqual:
                if !QueryFacts.isNullOrNaN(v) { f.upper.append(Bound(value: v, inclusive: filter.op == .lessThanOrEqual)) }
            case .greaterThan, .greaterThanOrEqual:
                if !QueryFacts.isNullOrNaN(v) { f.lower.append(Bound(value: v, inclusive: filter.op == .greaterThanOrEqual)) }
            case .arrayContains:
                f.isArray = true
                if !QueryFacts.isNullOrNaN(v) { f.arrayContains.append(v) }
            case .arrayContainsAny:
                f.isArray = true
                let values = (v.arrayValue ?? []).filter { !QueryFacts.isNullOrNaN($0) }
                if values.count == 1 { f.arrayContains.append(values[0]) } else if !values.isEmpty { f.arrayContainsAny.append(values) }
            }
            fields[filter.field] = f
        }
    }

    static func isNullOrNaN(_ v: Value) -> Bool {
        switch v {
        case .null: return true
        case .double(let d): return d.isNaN
        default: return false
        }
    }

    static func isNaN(_ v: Value) -> Bool {
        if case .double(let d) = v { return d.isNaN }
        return false
    }

    static func holdsNumber(_ v: Value) -> Bool {
        switch v {
        case .int, .double: return true
        case .array(let items): return items.contains(where: holdsNumber)
        case .map(let m): return m.values.contains(where: holdsNumber)
        default: return false
        }
    }

    /// Firestore's equality of a stored value with a filter's (what `==` filters match).
    static func same(_ a: Value, _ b: Value) -> Bool {
        a.typeOrder == b.typeOrder && Value.compare(a, b) == .same
    }

    /// The value every returned document holds at `path`, when the query fixes it exactly.
    func value(at path: FieldPath, database: String) -> RulesValue? {
        guard let f = fields[path], let fixed = f.equals.first(where: { !QueryFacts.holdsNumber($0) }) else { return nil }
        return RulesValue(fixed, database: database)
    }

    /// The kinds (Firestore type orders) the field can have, when the filters say.
    private func typeOrders(_ f: Field) -> Set<Int>? {
        if let e = f.equals.first { return [e.typeOrder] }
        if let list = f.oneOf.first { return Set(list.map(\.typeOrder)) }
        if let b = f.lower.first ?? f.upper.first { return [b.value.typeOrder] }
        if f.isArray { return [8] }
        return nil
    }

    private static let comparableOrders: Set<Int> = [2, 3, 4, 5]

    private func unknown(_ path: FieldPath, _ what: String) -> Truth {
        .unknown("the query's filters do not guarantee resource.data.\(path) \(what)")
    }

    // MARK: Questions

    /// `resource.data.path == c`.
    func equal(_ path: FieldPath, _ c: Value) -> Truth {
        let what = "== \(RulesValue(c, database: "(default)").brief)"
        guard let f = fields[path] else { return unknown(path, what) }
        if f.matchesNothing { return .yes }
        // Lists and maps compare their numbers by kind in the rules (`[1] != [1.0]`), the
        // filters by value: a match there proves nothing.
        let typed = [8, 9, 10].contains(c.typeOrder) && QueryFacts.holdsNumber(c)
        if !QueryFacts.isNaN(c) {
            for e in f.equals where !QueryFacts.isNaN(e) {
                return QueryFacts.same(e, c) ? (typed ? unknown(path, what) : .yes) : .no
            }
            for list in f.oneOf {
                let matching = list.filter { QueryFacts.same($0, c) }.count
                if matching == list.count && !list.isEmpty { return typed ? unknown(path, what) : .yes }
                if matching == 0 { return .no }
            }
        }
        if c.isNull && (!f.notEqual.isEmpty || !f.lower.isEmpty || !f.upper.isEmpty || f.isArray) { return .no }
        if f.notEqual.contains(where: { QueryFacts.same($0, c) }) { return .no }
        for b in f.lower + f.upper where b.value.typeOrder != c.typeOrder { return .no }
        // A value outside the filters' range is not the field's (`state < 'b'` proves
        // `state != 'hidden'`), as Firebase's rules engine reasons.
        if QueryFacts.comparableOrders.contains(c.typeOrder), !QueryFacts.isNaN(c) {
            for b in f.upper {
                let o = Value.compare(c, b.value)
                if o == .descending || (o == .same && !b.inclusive) { return .no }
            }
            for b in f.lower {
                let o = Value.compare(c, b.value)
                if o == .ascending || (o == .same && !b.inclusive) { return .no }
            }
        }
        if f.isArray, c.typeOrder != 8 { return .no }
        return unknown(path, what)
    }

    /// `resource.data.path <op> c` for `<`, `<=`, `>`, `>=`.
    func order(_ path: FieldPath, _ op: BinaryOperator, _ c: Value) -> Truth {
        let what = "\(op.rawValue) \(RulesValue(c, database: "(default)").brief)"
        guard let f = fields[path], !QueryFacts.isNaN(c), QueryFacts.comparableOrders.contains(c.typeOrder) else { return unknown(path, what) }
        if f.matchesNothing { return .yes }
        for e in f.equals where !QueryFacts.isNaN(e) && e.typeOrder == c.typeOrder {
            return Evaluation.holds(op, Value.compare(e, c)) ? .yes : .no
        }
        for list in f.oneOf where !list.isEmpty && list.allSatisfy({ $0.typeOrder == c.typeOrder }) {
            let holding = list.filter { Evaluation.holds(op, Value.compare($0, c)) }.count
            if holding == list.count { return .yes }
            if holding == 0 { return .no }
        }
        let lower = f.lower.filter { $0.value.typeOrder == c.typeOrder }
        let upper = f.upper.filter { $0.value.typeOrder == c.typeOrder }
        func below(_ b: Bound) -> Bool {  // every value under an upper bound b is < c
            let o = Value.compare(b.value, c)
            return o == .ascending || (o == .same && !b.inclusive)
        }
        func atMost(_ b: Bound) -> Bool { Value.compare(b.value, c) != .descending }
        func above(_ b: Bound) -> Bool {
            let o = Value.compare(b.value, c)
            return o == .descending || (o == .same && !b.inclusive)
        }
        func atLeast(_ b: Bound) -> Bool { Value.compare(b.value, c) != .ascending }
        switch op {
        case .less:
            if upper.contains(where: below) { return .yes }
            if lower.contains(where: atLeast) { return .no }
        case .lessOrEqual:
            if upper.contains(where: atMost) { return .yes }
            if lower.contains(where: above) { return .no }
        case .greater:
            if lower.contains(where: above) { return .yes }
            if upper.contains(where: atMost) { return .no }
        case .greaterOrEqual:
            if lower.contains(where: atLeast) { return .yes }
            if upper.contains(where: below) { return .no }
        default:
            break
        }
        return unknown(path, what)
    }

    /// `resource.data.path in container` (a list's elements or a map's keys).
    func isIn(_ path: FieldPath, _ container: RulesValue, database: String) -> Truth {
        let what = "in \(container.brief)"
        guard let f = fields[path] else { return unknown(path, what) }
        if f.matchesNothing { return .yes }
        let matches: (Value) -> Bool
        // A list compares its elements' numbers by kind (`1.0 in [1]` is false), the filters by
        // value; a set, like the filters, by value.
        var typed = false
        switch container {
        case .list(let items), .set(let items):
            let values = items.compactMap { $0.firestoreValue(database: database) }
            matches = { v in values.contains { QueryFacts.same($0, v) } }
            if case .list = container { typed = true }
        case .map(let m):
            // A key that is not a string is an error in the rules, never a plain false: every value
            // the field can have must be a string for the facts to answer.
            let candidates = f.equals.isEmpty ? f.oneOf.flatMap { $0 } : [f.equals[0]]
            if candidates.contains(where: { $0.stringValue == nil }) { return unknown(path, what) }
            matches = { v in v.stringValue.map { m[bytes: $0] != nil } ?? false }
        default:
            return unknown(path, what)
        }
        let proved = { (values: [Value]) -> Truth in
            typed && values.contains(where: QueryFacts.holdsNumber) ? self.unknown(path, what) : .yes
        }
        if let e = f.equals.first(where: { !QueryFacts.isNaN($0) }) { return matches(e) ? proved([e]) : .no }
        for list in f.oneOf where !list.isEmpty {
            let count = list.filter(matches).count
            if count == list.count { return proved(list) }
            if count == 0 { return .no }
        }
        return unknown(path, what)
    }

    /// `c in resource.data.path`.
    func contains(_ path: FieldPath, _ c: Value) -> Truth {
        let what = "contains \(RulesValue(c, database: "(default)").brief)"
        guard let f = fields[path] else { return unknown(path, what) }
        if f.matchesNothing { return .yes }
        // An array's `in` compares numbers by kind, array-contains by value.
        if QueryFacts.holdsNumber(c) {
            if case .array(let items)? = f.equals.first, !items.contains(where: { QueryFacts.same($0, c) }) { return .no }
            return unknown(path, what)
        }
        if f.arrayContains.contains(where: { QueryFacts.same($0, c) }) { return .yes }
        if let e = f.equals.first {
            switch e {
            case .array(let items): return items.contains { QueryFacts.same($0, c) } ? .yes : .no
            case .map(let m):
                if case .string(let key) = c { return m[bytes: key] != nil ? .yes : .no }
            default: break
            }
        }
        return unknown(path, what)
    }

    /// `resource.data.path.hasAny(list)`: proved by an `array-contains` of one of the list's
    /// values, or an `array-contains-any` whose values are all in the list.
    func hasAny(_ path: FieldPath, _ list: [Value]) -> Truth {
        let what = "has any of \(RulesValue.list(list.map { RulesValue($0, database: "(default)") }).brief)"
        guard let f = fields[path] else { return unknown(path, what) }
        if f.matchesNothing { return .yes }
        // Typed like a list's `in`: only values without numbers prove anything.
        let listed = { (v: Value) in !QueryFacts.holdsNumber(v) && list.contains { QueryFacts.same($0, v) } }
        if f.arrayContains.contains(where: listed) { return .yes }
        if f.arrayContainsAny.contains(where: { $0.allSatisfy(listed) }) { return .yes }
        return unknown(path, what)
    }

    /// `resource.data.path is type`.
    func isType(_ path: FieldPath, _ type: TypeName) -> Truth {
        let what = "is \(type.rawValue)"
        guard let f = fields[path] else { return unknown(path, what) }
        if f.matchesNothing { return .yes }
        guard let orders = typeOrders(f) else { return unknown(path, what) }
        let wanted: Int?
        switch type {
        case .bool: wanted = 1
        case .number, .int, .float: wanted = 2
        case .timestamp: wanted = 3
        case .string: wanted = 4
        case .bytes: wanted = 5
        case .path: wanted = 6
        case .latlng: wanted = 7
        case .list: wanted = 8
        case .vector: wanted = 9
        case .map: wanted = 10
        case .duration, .set, .mapDiff: wanted = nil
        }
        guard let wanted, orders.contains(wanted) else { return .no }
        // `where score == 5` also returns documents holding 5.0: the kind of number is unknown.
        // (Firebase's emulator takes the filter's kind for the field's; Hearth denies instead.)
        if orders.count > 1 || type == .int || type == .float { return unknown(path, what) }
        return .yes
    }
}

extension Evaluation {
    /// An operator with a symbolic operand (list queries only).
    func symbolic(_ op: BinaryOperator, _ a: RulesValue, _ b: RulesValue) -> RulesValue {
        if case .unknown(let why) = a { return .unknown(why) }
        if case .unknown(let why) = b { return .unknown(why) }
        guard let facts else { return .unknown("a value only a list query has") }
        switch (a, b) {
        case (.field(let p), .field(let q)):
            return .unknown("resource.data.\(p) compared with resource.data.\(q)")
        case (.field(let p), let c):
            guard let v = c.firestoreValue(database: database) else {
                if op == .in { return Evaluation.value(facts.isIn(p, c, database: database)) }
                return .unknown("resource.data.\(p) \(op.rawValue) \(c.brief)")
            }
            switch op {
            case .equal: return Evaluation.value(facts.equal(p, v))
            case .notEqual: return Evaluation.value(Evaluation.negate(facts.equal(p, v)))
            case .less, .lessOrEqual, .greater, .greaterOrEqual: return Evaluation.value(facts.order(p, op, v))
            case .in: return Evaluation.value(facts.isIn(p, c, database: database))
            default: return .unknown("arithmetic on resource.data.\(p)")
            }
        case (let c, .field(let p)):
            guard let v = c.firestoreValue(database: database) else { return .unknown("\(c.brief) \(op.rawValue) resource.data.\(p)") }
            switch op {
            case .equal: return Evaluation.value(facts.equal(p, v))
            case .notEqual: return Evaluation.value(Evaluation.negate(facts.equal(p, v)))
            case .less: return Evaluation.value(facts.order(p, .greater, v))
            case .lessOrEqual: return Evaluation.value(facts.order(p, .greaterOrEqual, v))
            case .greater: return Evaluation.value(facts.order(p, .less, v))
            case .greaterOrEqual: return Evaluation.value(facts.order(p, .lessOrEqual, v))
            case .in: return Evaluation.value(facts.contains(p, v))
            default: return .unknown("arithmetic on resource.data.\(p)")
            }
        default:
            return .unknown("a value the query does not fix")
        }
    }

    static func negate(_ t: Truth) -> Truth {
        switch t {
        case .yes: return .no
        case .no: return .yes
        case .unknown: return t
        }
    }
}
