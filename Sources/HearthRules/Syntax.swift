/// The rules file as parsed, then resolved: every name bound to what it means, so evaluation never
/// looks a name up by spelling in a wrong scope and a typo is an error at load, not a silent deny.

/// The operations an `allow` names. `read` and `write` are shorthands the parser expands.
public enum RulesMethod: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    case get, list, create, update, delete

    public var description: String { rawValue }

    /// `read` = get + list, `write` = create + update + delete (Firebase's grouping).
    static func parse(_ word: String) -> [RulesMethod]? {
        switch word {
        case "read": return [.get, .list]
        case "write": return [.create, .update, .delete]
        default: return RulesMethod(rawValue: word).map { [$0] }
        }
    }
}

/// An expression with where it starts in the file.
struct Expr: Sendable {
    indirect enum Kind: Sendable {
        case null
        case bool(Bool)
        case int(Int64)
        case float(Double)
        case string(String)
        case bytes([UInt8])
        case list([Expr])
        case map([MapEntry])
        case path([PathPart])
        case unary(UnaryOperator, Expr)
        case binary(BinaryOperator, Expr, Expr)
        /// `a && b && …`, flattened so a long chain does not deepen the tree.
        case and([Expr])
        /// `a || b || …`, flattened likewise.
        case or([Expr])
        case conditional(Expr, Expr, Expr)
        case isType(Expr, TypeName)
        case member(Expr, String)
        case index(Expr, Expr)
        /// `x[start:end]` on a list, string or path; a missing end is the whole way.
        case slice(Expr, Expr?, Expr?)
        case method(Expr, String, [Expr])

        // As parsed, before resolution.
        case identifier(String)
        case call(String, [Expr])

        // As resolved.
        case local(String)
        /// The wildcard `name` of the match block at nesting `depth` (0: `/databases/{database}/documents`).
        case wildcard(String, depth: Int)
        case request
        case resource
        case userCall(Int, [Expr])
        case builtin(Builtin, [Expr])
    }

    var kind: Kind

    /// The expressions directly inside this one.
    var children: [Expr] {
        switch kind {
        case .null, .bool, .int, .float, .string, .bytes, .identifier, .local, .wildcard, .request, .resource: return []
        case .list(let items), .and(let items), .or(let items): return items
        case .map(let entries): return entries.map(\.value)
        case .path(let parts): return parts.compactMap { if case .interpolated(let e) = $0 { e } else { nil } }
        case .unary(_, let e), .isType(let e, _), .member(let e, _): return [e]
        case .binary(_, let a, let b), .index(let a, let b): return [a, b]
        case .conditional(let a, let b, let c): return [a, b, c]
        case .slice(let e, let start, let end): return [e] + [start, end].compactMap { $0 }
        case .method(let receiver, _, let args): return [receiver] + args
        case .call(_, let args), .userCall(_, let args), .builtin(_, let args): return args
        }
    }

    /// The user functions this expression calls, by index, however deep.
    func calledFunctions(into out: inout Set<Int>) {
        if case .userCall(let index, _) = kind { out.insert(index) }
        for child in children { child.calledFunctions(into: &out) }
    }
    /// Where the expression starts in the source (a scalar offset; `SourceMap` turns it into a line and column).
    var offset: Int
    /// Nodes on the longest path down from here: bounded at parse, so evaluation's recursion is.
    var height: Int

    init(_ kind: Kind, offset: Int, height: Int) {
        self.kind = kind
        self.offset = offset
        self.height = height
    }

    /// A node built from another (resolution), keeping its position.
    func with(_ kind: Kind, height: Int? = nil) -> Expr {
        Expr(kind, offset: offset, height: height ?? self.height)
    }
}

struct MapEntry: Sendable {
    var key: String
    var value: Expr
}

enum PathPart: Sendable {
    case literal(String)
    case interpolated(Expr)
}

enum UnaryOperator: String, Sendable { case not = "!", negate = "-" }

enum BinaryOperator: String, Sendable {
    case equal = "==", notEqual = "!=", less = "<", lessOrEqual = "<=", greater = ">", greaterOrEqual = ">="
    case `in` = "in"
    case add = "+", subtract = "-", multiply = "*", divide = "/", remainder = "%"
}

/// The types `x is T` can test.
enum TypeName: String, Sendable, CaseIterable {
    case bool, bytes, duration, float, int, latlng, list, map, number, path, set, string, timestamp, vector
    case mapDiff = "map_diff"
}

/// The functions Hearth provides: global ones and those in the `math`, `duration`, `timestamp`,
/// `latlng` and `hashing` namespaces.
enum Builtin: String, Sendable, CaseIterable {
    case get, exists, getAfter, existsAfter
    case int, float, string, bool, path
    case mathAbs = "math.abs", mathCeil = "math.ceil", mathFloor = "math.floor", mathRound = "math.round"
    case mathSqrt = "math.sqrt", mathPow = "math.pow", mathIsNaN = "math.isNaN", mathIsInfinite = "math.isInfinite"
    case durationValue = "duration.value", durationTime = "duration.time", durationAbs = "duration.abs"
    case timestampDate = "timestamp.date", timestampValue = "timestamp.value"
    case latlngValue = "latlng.value"
    case hashingCRC32 = "hashing.crc32", hashingCRC32C = "hashing.crc32c", hashingMD5 = "hashing.md5", hashingSHA256 = "hashing.sha256"
    case debug

    /// How many arguments it takes.
    var arity: ClosedRange<Int> {
        switch self {
        case .get, .exists, .getAfter, .existsAfter, .int, .float, .string, .bool, .path: return 1...1
        case .mathAbs, .mathCeil, .mathFloor, .mathRound, .mathSqrt, .mathIsNaN, .mathIsInfinite: return 1...1
        case .mathPow: return 2...2
        case .durationValue: return 2...2
        case .durationTime: return 4...4
        case .durationAbs: return 1...1
        case .timestampDate: return 3...3
        case .timestampValue: return 1...1
        case .latlngValue: return 2...2
        case .hashingCRC32, .hashingCRC32C, .hashingMD5, .hashingSHA256, .debug: return 1...1
        }
    }

    static let namespaces: Set<String> = ["math", "duration", "timestamp", "latlng", "hashing"]
}

/// Methods some value type has; a call of any other name is refused at load.
let knownMethods: Set<String> = [
    // maps
    "keys", "values", "size", "get", "diff",
    // map diffs
    "affectedKeys", "addedKeys", "removedKeys", "changedKeys", "unchangedKeys",
    // lists and sets
    "hasAll", "hasAny", "hasOnly", "toSet", "join", "concat", "union", "intersection", "difference", "removeAll",
    // strings
    "matches", "lower", "upper", "trim", "split", "replace", "toUtf8",
    // timestamps and durations
    "toMillis", "year", "month", "day", "hours", "minutes", "seconds", "nanos", "dayOfWeek", "dayOfYear", "date", "time",
    // latlng
    "latitude", "longitude", "distance",
    // bytes
    "toBase64", "toHexString",
    // vectors
    "toList",
]

/// One segment of a `match` path.
enum PatternSegment: Sendable {
    case literal(String)
    /// `{name}`: exactly one segment, bound as a string.
    case single(String)
    /// `{name=**}`: zero or more segments (rules version 2), bound as a path.
    case recursive(String)

    var wildcardName: String? {
        switch self {
        case .literal: return nil
        case .single(let n), .recursive(let n): return n
        }
    }
}

struct AllowRule: Sendable {
    var methods: Set<RulesMethod>
    /// nil for `allow read;` (always).
    var condition: Expr?
    var offset: Int
}

struct FunctionDecl: Sendable {
    var name: String
    var params: [String]
    var lets: [LetBinding]
    var body: Expr
    var offset: Int
}

struct LetBinding: Sendable {
    var name: String
    var value: Expr
}

/// A `match` block as written: its path relative to the enclosing block.
struct MatchBlock: Sendable {
    var pattern: [PatternSegment]
    var offset: Int
    var allows: [AllowRule] = []
    var functions: [FunctionDecl] = []
    var children: [MatchBlock] = []
}

/// The parsed file: functions declared at service level and the `/databases/{database}/documents`
/// block (depth 0).
struct RulesFile: Sendable {
    var serviceFunctions: [FunctionDecl]
    var root: MatchBlock
    var databaseWildcard: String
}
