/// A command line the user got wrong: the message says what, and the command exits 2.
public struct UsageError: Error, Equatable, CustomStringConvertible, Sendable {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// Splits arguments into options and positionals. Options are `--name value`, `--name=value` or
/// boolean `--name`; `--` ends options. Every option must be declared by the command, so a typo is
/// an error rather than silently ignored.
public struct Arguments: Sendable, Equatable {
    public private(set) var positionals: [String] = []
    private var values: [String: [String]] = [:]
    private var flags: Set<String> = []
    public private(set) var wantsHelp = false

    /// - Parameters:
    ///   - valued: options that take a value.
    ///   - boolean: options that take none.
    public init(_ arguments: [String], valued: Set<String> = [], boolean: Set<String> = []) throws(UsageError) {
        var i = 0
        var onlyPositionals = false
        while i < arguments.count {
            let arg = arguments[i]
            i += 1
            if onlyPositionals || !arg.hasPrefix("-") || arg == "-" {
                positionals.append(arg)
                continue
            }
            if arg == "--" { onlyPositionals = true; continue }
            if arg == "--help" || arg == "-h" { wantsHelp = true; continue }
            guard arg.hasPrefix("--") else { throw UsageError("unknown option '\(arg)'") }
            var name = String(arg.dropFirst(2))
            var inlineValue: String?
            if let eq = name.firstIndex(of: "=") {
                inlineValue = String(name[name.index(after: eq)...])
                name = String(name[..<eq])
            }
            if valued.contains(name) {
                if let inlineValue {
                    values[name, default: []].append(inlineValue)
                } else {
                    guard i < arguments.count else { throw UsageError("option '--\(name)' needs a value") }
                    values[name, default: []].append(arguments[i])
                    i += 1
                }
            } else if boolean.contains(name) {
                if inlineValue != nil { throw UsageError("option '--\(name)' takes no value") }
                flags.insert(name)
            } else {
                throw UsageError("unknown option '--\(name)'")
            }
        }
    }

    /// The last value of an option.
    public func value(_ name: String) -> String? { values[name]?.last }
    public func allValues(_ name: String) -> [String] { values[name] ?? [] }
    public func flag(_ name: String) -> Bool { flags.contains(name) }

    /// An integer option, or a usage error naming it.
    public func int(_ name: String) throws(UsageError) -> Int? {
        guard let v = value(name) else { return nil }
        guard let i = Int(v) else { throw UsageError("option '--\(name)' needs an integer (got '\(v)')") }
        return i
    }

    /// Exactly `count` positionals named `names`, or a usage error.
    public func requirePositionals(_ names: [String], optional: Int = 0) throws(UsageError) -> [String] {
        if positionals.count < names.count - optional {
            throw UsageError("missing \(names[positionals.count])")
        }
        if positionals.count > names.count {
            throw UsageError("unexpected argument '\(positionals[names.count])'")
        }
        return positionals
    }
}
