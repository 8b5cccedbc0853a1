/// Where something is in a rules file: 1-based line and column (columns count Unicode scalars).
public struct SourceLocation: Sendable, Hashable, CustomStringConvertible {
    public var fileName: String
    public var line: Int
    public var column: Int

    public init(fileName: String, line: Int, column: Int) {
        self.fileName = fileName
        self.line = line
        self.column = column
    }

    /// `file:line:column`, the form compilers and editors understand.
    public var description: String { "\(fileName):\(line):\(column)" }
}

/// A rules file Hearth refuses at load: a syntax error, a construct outside the supported subset,
/// or a name that resolves to nothing. The message says what and, where it helps, what would work.
public struct RulesError: Error, Sendable, Equatable, CustomStringConvertible {
    public var location: SourceLocation
    public var message: String

    public init(_ message: String, at location: SourceLocation) {
        self.message = message
        self.location = location
    }

    /// `file:line:column: message`.
    public var description: String { "\(location): \(message)" }
}
