import HearthModel

/// Why evaluating an expression stopped. An `error` is a value in Firebase's sense: it denies the
/// allow it reaches unless `&&` or `||` decides without it. An `abort` (a limit, a failed read)
/// denies the whole request.
struct EvalFailure: Error, Sendable {
    enum Kind: Sendable { case error, abort }
    var kind: Kind
    var message: String
    var offset: Int
}

/// The three answers a condition can have: for a list query, `unknown` means the condition is
/// not the same for every document the query could return (or Hearth cannot tell).
enum Truth {
    case yes, no
    case unknown(String)
}

/// A parameter or let: its value, or the error computing it, raised only if the body uses it.
enum Local {
    case value(RulesValue)
    case failed(EvalFailure)
}

struct Frame {
    var locals: [String: Local] = [:]
}

/// A wildcard bound by the match being evaluated.
struct Binding {
    var depth: Int
    var name: String
    var value: RulesValue
}

/// One request's evaluation (one thread, never shared): the values `request` and `resource` stand for, the wildcards of
/// the match block being tried, the document reads, and the bounds that keep any file and any
/// data from running long (steps, call depth, recursion).
final class Evaluation {
    static let maxSteps = 100_000
    /// Firebase's limit on nested function calls.
    static let maxCallDepth = 20
    /// Recursion through nested expressions and calls together: far inside the stack of any thread.
    static let maxDepth = 400

    let functions: [CompiledFunction]
    let request: RulesValue
    let resource: RulesValue
    let database: String
    let access: DocumentAccess
    /// The document being written and its incoming data, for `getAfter` of it.
    let own: (path: DocumentPath, data: [String: Value]?)?
    /// Set for a list query: what its filters say about `resource.data`.
    let facts: QueryFacts?
    var bindings: [Binding] = []

    private var steps = 0
    private var callDepth = 0
    private var depth = 0

    /// `debug()`'s output (with where the call is), if anyone listens.
    let debugLog: (@Sendable (String, Int) -> Void)?

    init(functions: [CompiledFunction], request: RulesValue, resource: RulesValue, database: String, access: DocumentAccess,
         own: (path: DocumentPath, data: [String: Value]?)?, facts: QueryFacts?, debugLog: (@Sendable (String, Int) -> Void)? = nil) {
        self.debugLog = debugLog
        self.functions = functions
        self.request = request
        self.resource = resource
        self.database = database
        self.access = access
        self.own = own
        self.facts = facts
    }

    func fail(_ message: String, _ at: Expr) -> EvalFailure {
        EvalFailure(kind: .error, message: message, offset: at.offset)
    }

    // MARK: Conditions

    func truth(_ expr: Expr, _ frame: Frame) throws(EvalFailure) -> Truth {
        try truth(of: eval(expr, frame), expr)
    }

    func truth(of value: RulesValue, _ expr: Expr) throws(EvalFailure) -> Truth {
        switch value {
        case .bool(let b): return b ? .yes : .no
        case .unknown(let why): return .unknown(why)
        case .field(let p): return .unknown("resource.data.\(p) is not fixed to true by the query")
        default: throw fail("expected a bool, got \(value.typeName) \(value.brief)", expr)
        }
    }

    static func value(_ t: Truth) -> RulesValue {
        switch t {
        case .yes: return .bool(true)
        case .no: return .bool(false)
        case .unknown(let why): return .unknown(why)
        }
    }

    /// `&&` (decisive: false) or `||` (decisive: true) over terms, left to right, stopping at the
    /// first decisive term. An error is kept and raised only if no later term decides, so
    /// `error && false` is false and `error || true` is true, as Firebase documents; with no
    /// decisive term, the first error wins over an unknown.
    func logical(_ terms: [Expr], decisive: Bool, _ frame: Frame) throws(EvalFailure) -> RulesValue {
        var firstError: EvalFailure?
        var unknown: String?
        for term in terms {
            do {
                switch try truth(term, frame) {
                case .yes: if decisive { return .bool(true) }
                case .no: if !decisive { return .bool(false) }
                case .unknown(let why): if unknown == nil { unknown = why }
                }
            } catch {
                if error.kind == .abort { throw error }
                if firstError == nil { firstError = error }
            }
        }
        if let firstError { throw firstError }
        if let unknown { return .unknown(unknown) }
        return .bool(!decisive)
    }

    // MARK: Expressions

    func eval(_ expr: Expr, _ frame: Frame) throws(EvalFailure) -> RulesValue {
        steps += 1
        if steps > Evaluation.maxSteps {
            throw EvalFailure(kind: .abort, message: "evaluation took more than \(Evaluation.maxSteps) steps", offset: expr.offset)
        }
        depth += 1
        defer { depth -= 1 }
        if depth > Evaluation.maxDepth { throw fail("evaluation nested deeper than \(Evaluation.maxDepth) levels", expr) }

        switch expr.kind {
        case .null: return .null
        case .bool(let b): return .bool(b)
        case .int(let i): return .int(i)
        case .float(let d): return .float(d)
        case .string(let s): return .string(s)
        case .bytes(let b): return .bytes(b)
        case .request: return request
        case .resource: return resource
        case .list(let items):
            var out: [RulesValue] = []
            out.reserveCapacity(items.count)
            for item in items {
                let v = try eval(item, frame)
                if v.isSymbolic { return .unknown("a list holding a value the query does not fix") }
                out.append(v)
            }
            return .list(out)
        case .map(let entries):
            var out: [String: RulesValue] = [:]
            for entry in entries {
                let v = try eval(entry.value, frame)
                if v.isSymbolic { return .unknown("a map holding a value the query does not fix") }
                out[entry.key] = v
            }
            return .map(out)
        case .path(let parts):
            return try evalPath(parts, frame, expr)
        case .local(let name):
            switch frame.locals[name] {
            case .value(let v)?: return v
            case .failed(let failure)?: throw failure
            case nil: throw fail("'\(name)' is not defined here", expr)
            }
        case .wildcard(let name, let depth):
            guard let b = bindings.last(where: { $0.depth == depth && $0.name == name }) else {
                throw fail("wildcard '\(name)' is not bound", expr)
            }
            return b.value
        case .identifier(let name), .call(let name, _):
            throw fail("'\(name)' was not resolved", expr)
        case .unary(let op, let operand):
            let v = try eval(operand, frame)
            switch op {
            case .not:
                switch try truth(of: v, operand) {
                case .yes: return .bool(false)
                case .no: return .bool(true)
                case .unknown(let why): return .unknown(why)
                }
            case .negate:
                switch v {
                case .int(let i):
                    let (r, overflow) = Int64(0).subtractingReportingOverflow(i)
                    if overflow { throw fail("integer overflow negating \(i)", expr) }
                    return .int(r)
                case .float(let d): return .float(-d)
                case .duration(let n):
                    let (r, overflow) = Int64(0).subtractingReportingOverflow(n)
                    if overflow { throw fail("duration overflow", expr) }
                    return .duration(r)
                case .unknown, .field: return .unknown("arithmetic on a value the query does not fix")
                default: throw fail("cannot negate \(v.typeName)", expr)
                }
            }
        case .and(let terms):
            return try logical(terms, decisive: false, frame)
        case .or(let terms):
            return try logical(terms, decisive: true, frame)
        case .conditional(let c, let t, let f):
            switch try truth(c, frame) {
            case .yes: return try eval(t, frame)
            case .no: return try eval(f, frame)
            case .unknown(let why): return .unknown(why)
            }
        case .isType(let operand, let type):
            let v = try eval(operand, frame)
            if case .field(let p) = v, let facts { return Evaluation.value(facts.isType(p, type)) }
            if case .unknown(let why) = v { return .unknown(why) }
            return .bool(Evaluation.isType(v, type))
        case .binary(let op, let l, let r):
            let a = try eval(l, frame)
            let b = try eval(r, frame)
            if a.isSymbolic || b.isSymbolic { return symbolic(op, a, b) }
            return try binary(op, a, b, expr)
        case .member(let receiver, let name):
            return try member(try eval(receiver, frame), name, expr)
        case .index(let receiver, let index):
            let container = try eval(receiver, frame)
            let key = try eval(index, frame)
            return try subscriptValue(container, key, expr)
        case .slice(let receiver, let start, let end):
            let container = try eval(receiver, frame)
            let from = try start.map { e throws(EvalFailure) in try eval(e, frame) }
            let to = try end.map { e throws(EvalFailure) in try eval(e, frame) }
            return try slice(container, from, to, expr)
        case .method(let receiver, let name, let args):
            let r = try eval(receiver, frame)
            var values: [RulesValue] = []
            for a in args { values.append(try eval(a, frame)) }
            return try method(r, name, values, expr)
        case .builtin(let builtin, let args):
            var values: [RulesValue] = []
            for a in args { values.append(try eval(a, frame)) }
            return try call(builtin, values, expr)
        case .userCall(let index, let args):
            return try callFunction(index, args, frame, expr)
        }
    }

    private func callFunction(_ index: Int, _ args: [Expr], _ frame: Frame, _ expr: Expr) throws(EvalFailure) -> RulesValue {
        guard functions.indices.contains(index) else { throw fail("internal: no function \(index)", expr) }
        let function = functions[index]
        callDepth += 1
        defer { callDepth -= 1 }
        if callDepth > Evaluation.maxCallDepth {
            throw fail("function calls nested deeper than \(Evaluation.maxCallDepth) (calling \(function.name))", expr)
        }
        var callee = Frame()
        for (param, arg) in zip(function.params, args) {
            do { callee.locals[param] = .value(try eval(arg, frame)) } catch {
                if error.kind == .abort { throw error }
                callee.locals[param] = .failed(error)
            }
        }
        for binding in function.lets {
            do { callee.locals[binding.name] = .value(try eval(binding.value, callee)) } catch {
                if error.kind == .abort { throw error }
                callee.locals[binding.name] = .failed(error)
            }
        }
        return try eval(function.body, callee)
    }

    private func evalPath(_ parts: [PathPart], _ frame: Frame, _ expr: Expr) throws(EvalFailure) -> RulesValue {
        var segments: [String] = []
        for part in parts {
            switch part {
            case .literal(let s): segments.append(s)
            case .interpolated(let e):
                let v = try eval(e, frame)
                switch v {
                case .string(let s):
                    if s.isEmpty { throw fail("empty path segment from $(…)", e) }
                    if s.utf8.contains(UInt8(ascii: "/")) { throw fail("path segment from $(…) contains '/': \(v.brief)", e) }
                    segments.append(s)
                case .int(let i): segments.append(String(i))
                case .path(let p): segments.append(contentsOf: p)
                case .unknown(let why): return .unknown(why)
                case .field(let p): return .unknown("a path built from resource.data.\(p)")
                default: throw fail("cannot put \(v.typeName) in a path", e)
                }
            }
        }
        if segments.count > PathRules.maxSegments + 3 { throw fail("path longer than \(PathRules.maxSegments) segments", expr) }
        return .path(segments)
    }

    static func isType(_ v: RulesValue, _ type: TypeName) -> Bool {
        switch (type, v) {
        case (.bool, .bool), (.bytes, .bytes), (.duration, .duration), (.float, .float), (.int, .int),
             (.latlng, .latlng), (.list, .list), (.map, .map), (.path, .path), (.set, .set), (.string, .string),
             (.timestamp, .timestamp), (.vector, .vector), (.mapDiff, .mapDiff), (.number, .int), (.number, .float):
            return true
        default:
            return false
        }
    }

    // MARK: Member access

    func member(_ value: RulesValue, _ name: String, _ expr: Expr) throws(EvalFailure) -> RulesValue {
        switch value {
        case .map(let m):
            guard let v = m[bytes: name] else { throw fail("no field '\(name)' in the map (keys: \(Evaluation.keyList(m)))", expr) }
            return v
        case .field(let p):
            return facts?.value(at: p.appending(name), database: database) ?? .field(p.appending(name))
        case .unknown(let why): return .unknown(why)
        case .null: throw fail("cannot read '\(name)' of null", expr)
        default: throw fail("cannot read '\(name)' of \(value.typeName)", expr)
        }
    }

    static func keyList(_ m: [String: RulesValue]) -> String {
        let keys = m.keys.sorted()
        return keys.isEmpty ? "none" : keys.prefix(10).joined(separator: ", ") + (keys.count > 10 ? ", …" : "")
    }

    func subscriptValue(_ container: RulesValue, _ key: RulesValue, _ expr: Expr) throws(EvalFailure) -> RulesValue {
        switch (container, key) {
        case (.map, .string(let k)), (.field, .string(let k)), (.unknown, .string(let k)): return try member(container, k, expr)
        case (.list(let items), .int(let i)):
            guard i >= 0, i < items.count else { throw fail("index \(i) out of range (list of \(items.count))", expr) }
            return items[Int(i)]
        case (.path(let segments), .int(let i)):
            guard i >= 0, i < segments.count else { throw fail("index \(i) out of range (path of \(segments.count) segments)", expr) }
            return .string(segments[Int(i)])
        case (.string(let s), .int(let i)):
            // Strings count UTF-16 code units, as Firebase's size() does.
            let units = s.utf16
            guard i >= 0, i < units.count else { throw fail("index \(i) out of range (string of \(units.count))", expr) }
            return .string(String(decoding: CollectionOfOne(units[units.index(units.startIndex, offsetBy: Int(i))]), as: UTF16.self))
        case (.unknown(let why), _), (_, .unknown(let why)): return .unknown(why)
        case (.field, _), (_, .field): return .unknown("an index the query does not fix")
        default: throw fail("cannot index \(container.typeName) with \(key.typeName)", expr)
        }
    }

    /// `x[start:end]` on a list, a string (UTF-16 code units) or a path. As in Firebase, a slice
    /// with either end written must be non-empty and inside: 0 <= start < end <= size; `x[:]` is
    /// the whole.
    func slice(_ container: RulesValue, _ start: RulesValue?, _ end: RulesValue?, _ expr: Expr) throws(EvalFailure) -> RulesValue {
        if case .unknown(let why) = container { return .unknown(why) }
        for bound in [start, end] {
            if case .unknown(let why)? = bound { return .unknown(why) }
            if case .field? = bound { return .unknown("a slice the query does not fix") }
        }
        if case .field = container { return .unknown("a slice of a value the query does not fix") }
        let size: Int
        switch container {
        case .list(let items): size = items.count
        case .string(let s): size = s.utf16.count
        case .path(let segments): size = segments.count
        default: throw fail("cannot slice \(container.typeName)", expr)
        }
        func bound(_ v: RulesValue?, _ missing: Int) throws(EvalFailure) -> Int {
            guard let v else { return missing }
            guard case .int(let i) = v else { throw fail("a slice bound must be an int, not \(v.typeName)", expr) }
            guard i >= 0, i <= Int64(size) else { throw fail("slice bound \(i) out of range (\(container.typeName) of \(size))", expr) }
            return Int(i)
        }
        let from = try bound(start, 0), to = try bound(end, size)
        if start != nil || end != nil, from >= to {
            throw fail("empty slice [\(from):\(to)] of a \(container.typeName) of \(size)", expr)
        }
        switch container {
        case .list(let items): return .list(Array(items[from..<to]))
        case .path(let segments): return .path(Array(segments[from..<to]))
        case .string(let s):
            let units = s.utf16
            let lower = units.index(units.startIndex, offsetBy: from), upper = units.index(units.startIndex, offsetBy: to)
            return .string(String(decoding: units[lower..<upper], as: UTF16.self))
        default: throw fail("cannot slice \(container.typeName)", expr)
        }
    }

    // MARK: Operators

    /// Whether a value holds a symbolic one inside (only possible in list queries, where
    /// `resource` is a map holding them).
    static func containsSymbolic(_ v: RulesValue) -> Bool {
        switch v {
        case .field, .unknown: return true
        case .list(let items), .set(let items): return items.contains(where: containsSymbolic)
        case .map(let m): return m.values.contains(where: containsSymbolic)
        default: return false
        }
    }

    func binary(_ op: BinaryOperator, _ a: RulesValue, _ b: RulesValue, _ expr: Expr) throws(EvalFailure) -> RulesValue {
        if facts != nil, Evaluation.containsSymbolic(a) || Evaluation.containsSymbolic(b) {
            // Values of different kinds are unequal whatever they hold (`resource != null`).
            if op == .equal || op == .notEqual, Evaluation.kindsDiffer(a, b) { return .bool(op == .notEqual) }
            return .unknown("an operation on a value the query does not fix")
        }
        switch op {
        case .equal: return .bool(RulesValue.equal(a, b))
        case .notEqual: return .bool(!RulesValue.equal(a, b))
        case .less, .lessOrEqual, .greater, .greaterOrEqual:
            guard let order = RulesValue.order(a, b) else { throw fail("cannot compare \(a.typeName) \(a.brief) with \(b.typeName) \(b.brief)", expr) }
            return .bool(Evaluation.holds(op, order))
        case .in:
            return .bool(try contains(b, a, expr))
        case .add, .subtract, .multiply, .divide, .remainder:
            return try arithmetic(op, a, b, expr)
        }
    }

    static func kindsDiffer(_ a: RulesValue, _ b: RulesValue) -> Bool {
        switch (a, b) {
        case (.int, .float), (.float, .int): return false
        default: return a.typeName != b.typeName
        }
    }

    static func holds(_ op: BinaryOperator, _ order: ComparisonOrder) -> Bool {
        switch op {
        case .less: return order == .ascending
        case .lessOrEqual: return order != .descending
        case .greater: return order == .descending
        case .greaterOrEqual: return order != .ascending
        case .equal: return order == .same
        case .notEqual: return order != .same
        default: return false
        }
    }

    /// `element in container`: list and set membership, map keys.
    func contains(_ container: RulesValue, _ element: RulesValue, _ expr: Expr) throws(EvalFailure) -> Bool {
        switch container {
        case .list(let items): return items.contains { RulesValue.same($0, element) }
        case .set(let items): return items.contains { RulesValue.alike($0, element) }
        case .map(let m):
            guard case .string(let key) = element else { throw fail("map keys are strings; \(element.typeName) cannot be in a map", expr) }
            return m[bytes: key] != nil
        default: throw fail("'in' needs a list, set or map on its right, not \(container.typeName)", expr)
        }
    }

    func arithmetic(_ op: BinaryOperator, _ a: RulesValue, _ b: RulesValue, _ expr: Expr) throws(EvalFailure) -> RulesValue {
        switch (a, b) {
        case let (.int(x), .int(y)):
            let result: (Int64, Bool)
            switch op {
            case .add: result = x.addingReportingOverflow(y)
            case .subtract: result = x.subtractingReportingOverflow(y)
            case .multiply: result = x.multipliedReportingOverflow(by: y)
            case .divide:
                if y == 0 { throw fail("division by zero", expr) }
                result = x.dividedReportingOverflow(by: y)
            default:
                if y == 0 { throw fail("modulo by zero", expr) }
                result = x.remainderReportingOverflow(dividingBy: y)
            }
            if result.1 { throw fail("integer overflow in \(x) \(op.rawValue) \(y)", expr) }
            return .int(result.0)
        case (.int, .float), (.float, .int), (.float, .float):
            let x = Evaluation.double(a), y = Evaluation.double(b)
            switch op {
            case .add: return .float(x + y)
            case .subtract: return .float(x - y)
            case .multiply: return .float(x * y)
            case .divide: return .float(x / y)
            default: return .float(x.truncatingRemainder(dividingBy: y))
            }
        case let (.string(x), .string(y)) where op == .add:
            return .string(x + y)
        case let (.list(x), .list(y)) where op == .add:
            return .list(x + y)
        case let (.duration(x), .duration(y)) where op == .add || op == .subtract:
            let (r, overflow) = op == .add ? x.addingReportingOverflow(y) : x.subtractingReportingOverflow(y)
            if overflow { throw fail("duration overflow", expr) }
            return .duration(r)
        case let (.timestamp(t), .duration(d)) where op == .add || op == .subtract:
            return try Evaluation.shift(t, by: d, negate: op == .subtract, self, expr)
        case let (.duration(d), .timestamp(t)) where op == .add:
            return try Evaluation.shift(t, by: d, negate: false, self, expr)
        case let (.timestamp(x), .timestamp(y)) where op == .subtract:
            let difference = x - y
            let (seconds, attos) = difference.components
            let (ns, o1) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
            let (total, o2) = ns.addingReportingOverflow(attos / 1_000_000_000)
            if o1 || o2 { throw fail("duration overflow", expr) }
            return .duration(total)
        default:
            throw fail("cannot apply '\(op.rawValue)' to \(a.typeName) and \(b.typeName)", expr)
        }
    }

    static func double(_ v: RulesValue) -> Double {
        switch v {
        case .int(let i): return Double(i)
        case .float(let d): return d
        default: return .nan
        }
    }

    static func shift(_ t: Timestamp, by nanos: Int64, negate: Bool, _ e: Evaluation, _ expr: Expr) throws(EvalFailure) -> RulesValue {
        let d = Duration.nanoseconds(nanos)
        let moved = negate ? t - d : t + d
        guard moved.isInFirestoreRange else { throw e.fail("timestamp out of range (years 1 to 9999)", expr) }
        return .timestamp(moved)
    }
}

@available(*, unavailable)
extension Evaluation: Sendable {}
