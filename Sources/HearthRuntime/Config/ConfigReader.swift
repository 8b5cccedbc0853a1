import HearthModel
import HearthTOML

/// A configuration problem: the key path and what is wrong with it.
public struct ConfigError: Error, Sendable, CustomStringConvertible, Equatable {
    public var problems: [String]
    public var description: String { problems.joined(separator: "\n") }

    public init(_ problems: [String]) { self.problems = problems }
    public init(_ problem: String) { problems = [problem] }
}

/// Reads typed values out of a TOML table, collecting every problem (wrong types, unknown keys,
/// out-of-range values) with its key path instead of stopping at the first.
struct ConfigReader {
    let table: TOMLTable
    let path: String
    private var used: Set<String> = []
    private(set) var problems: [String] = []

    init(_ table: TOMLTable, path: String = "") {
        self.table = table
        self.path = path
    }

    func keyPath(_ key: String) -> String { path.isEmpty ? key : "\(path).\(key)" }

    mutating func problem(_ key: String, _ message: String) { problems.append("\(keyPath(key)): \(message)") }

    static func typeName(_ v: TOMLValue) -> String {
        switch v {
        case .string: return "string"
        case .integer: return "integer"
        case .float: return "float"
        case .boolean: return "boolean"
        case .offsetDateTime, .localDateTime, .localDate, .localTime: return "date-time"
        case .array: return "array"
        case .table: return "table"
        }
    }

    mutating func raw(_ key: String) -> TOMLValue? {
        used.insert(key)
        return table[key]
    }

    mutating func string(_ key: String) -> String? {
        guard let v = raw(key) else { return nil }
        if case .string(let s) = v { return s }
        problem(key, "expected a string, found \(ConfigReader.typeName(v))")
        return nil
    }

    mutating func bool(_ key: String) -> Bool? {
        guard let v = raw(key) else { return nil }
        if case .boolean(let b) = v { return b }
        problem(key, "expected a boolean, found \(ConfigReader.typeName(v))")
        return nil
    }

    mutating func int(_ key: String, range: ClosedRange<Int64>? = nil) -> Int? {
        guard let v = raw(key) else { return nil }
        guard case .integer(let i) = v else {
            problem(key, "expected an integer, found \(ConfigReader.typeName(v))")
            return nil
        }
        if let range, !range.contains(i) {
            problem(key, "must be between \(range.lowerBound) and \(range.upperBound) (got \(i))")
            return nil
        }
        return Int(i)
    }

    /// A number of seconds: integer or float.
    mutating func seconds(_ key: String, range: ClosedRange<Double>? = nil) -> Double? {
        guard let v = raw(key) else { return nil }
        let d: Double
        switch v {
        case .integer(let i): d = Double(i)
        case .float(let f): d = f
        default:
            problem(key, "expected a number of seconds, found \(ConfigReader.typeName(v))")
            return nil
        }
        if let range, !(range.contains(d)) {
            problem(key, "must be between \(range.lowerBound) and \(range.upperBound) (got \(d))")
            return nil
        }
        return d
    }

    mutating func oneOf<T: RawRepresentable>(_ key: String, _ type: T.Type) -> T? where T.RawValue == String, T: CaseIterable {
        guard let s = string(key) else { return nil }
        if let v = T(rawValue: s.lowercased()) { return v }
        problem(key, "must be one of \(T.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: ", ")) (got \"\(s)\")")
        return nil
    }

    mutating func stringArray(_ key: String) -> [String]? {
        guard let v = raw(key) else { return nil }
        guard case .array(let items) = v else {
            problem(key, "expected an array of strings, found \(ConfigReader.typeName(v))")
            return nil
        }
        var out: [String] = []
        for (i, item) in items.enumerated() {
            if case .string(let s) = item { out.append(s) } else { problems.append("\(keyPath(key))[\(i)]: expected a string, found \(ConfigReader.typeName(item))") }
        }
        return out
    }

    /// A sub-table, read with `body`; its problems join this reader's.
    mutating func section(_ key: String, _ body: (inout ConfigReader) -> Void) {
        guard let v = raw(key) else {
            var empty = ConfigReader(TOMLTable(), path: keyPath(key))
            body(&empty)
            problems += empty.problems
            return
        }
        guard case .table(let t) = v else {
            problem(key, "expected a table, found \(ConfigReader.typeName(v))")
            return
        }
        var sub = ConfigReader(t, path: keyPath(key))
        body(&sub)
        sub.finish()
        problems += sub.problems
    }

    /// An array of tables (`[[key]]`), each read with `body`.
    mutating func tables(_ key: String, _ body: (inout ConfigReader, Int) -> Void) {
        guard let v = raw(key) else { return }
        guard case .array(let items) = v else {
            problem(key, "expected an array of tables ([[\(key)]]), found \(ConfigReader.typeName(v))")
            return
        }
        for (i, item) in items.enumerated() {
            guard case .table(let t) = item else {
                problems.append("\(keyPath(key))[\(i)]: expected a table, found \(ConfigReader.typeName(item))")
                continue
            }
            var sub = ConfigReader(t, path: "\(keyPath(key))[\(i)]")
            body(&sub, i)
            sub.finish()
            problems += sub.problems
        }
    }

    mutating func problems(_ more: [String]) { problems += more }

    /// Reports keys that no reader asked for.
    mutating func finish() {
        for key in table.keys where !used.contains(key) {
            problem(key, "unknown key")
        }
    }
}
