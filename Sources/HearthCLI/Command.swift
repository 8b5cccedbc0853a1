import Foundation
import HearthModel

/// Where a command writes. Tests pass closures that capture the output.
public struct CommandIO: Sendable {
    public var out: @Sendable (String) -> Void
    public var err: @Sendable (String) -> Void
    /// Reads a file (for `--data-file`), or nil with the failure.
    public var readFile: @Sendable (String) -> Data?

    public init(out: @escaping @Sendable (String) -> Void, err: @escaping @Sendable (String) -> Void,
                readFile: @escaping @Sendable (String) -> Data? = { FileManager.default.contents(atPath: $0) }) {
        self.out = out
        self.err = err
        self.readFile = readFile
    }

    /// Standard output and error.
    public static let standard = CommandIO(
        out: { text in FileHandle.standardOutput.write(Data((text + "\n").utf8)) },
        err: { text in FileHandle.standardError.write(Data((text + "\n").utf8)) })
}

/// One `hearth` command. Parsing is a pure function of the arguments; running does the work.
public protocol Command: Sendable {
    /// The words that select the command (`["config", "parse"]`).
    static var path: [String] { get }
    static var summary: String { get }
    /// The usage text `--help` prints, options included.
    static var help: String { get }
    static func parse(_ arguments: [String]) throws(UsageError) -> Self
    func run(_ io: CommandIO) async -> Int32
}

/// Exit statuses.
public enum ExitCode {
    public static let success: Int32 = 0
    public static let failure: Int32 = 1
    public static let usage: Int32 = 2
}

/// Options most commands share.
struct CommonOptions: Sendable, Equatable {
    static let valued: Set<String> = ["config", "log-format", "log-level"]

    var configPath = "runtime.toml"
    var logFormat: String?
    var logLevel: String?

    init(_ args: Arguments) throws(UsageError) {
        if let c = args.value("config") { configPath = c }
        if let f = args.value("log-format") {
            guard ["text", "json"].contains(f) else { throw UsageError("--log-format must be text or json (got '\(f)')") }
            logFormat = f
        }
        if let l = args.value("log-level") {
            guard LogLevel(rawValue: l) != nil else { throw UsageError("--log-level must be one of \(LogLevel.allCases.map(\.rawValue).joined(separator: ", ")) (got '\(l)')") }
            logLevel = l
        }
    }

    static let help = """
          --config PATH        runtime configuration (default: runtime.toml)
          --log-format FORMAT  text or json (default: the configuration's, text)
          --log-level LEVEL    debug, info, notice, warning or error
        """
}
