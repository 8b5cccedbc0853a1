import Foundation
import HearthModel
import HearthRuntime

/// `hearth call NAME [--data JSON | --data-file F] [--as UID]`: runs a callable in-process.
struct CallCommand: Command {
    static let path = ["call"]
    static let summary = "Run a callable function locally and print its result"
    static let help = """
        usage: hearth call NAME [--data JSON | --data-file FILE] [--as UID] [options]

        Loads the configured units, runs the callable NAME in this process with the given data, and
        prints the result as JSON. On an error prints its code and message and exits 1.

          --data JSON          the request data (default: null); Int64Value wrappers and Hearth's
                               $timestamp/$bytes tags are understood
          --data-file FILE     read the data from FILE ('-' for standard input)
          --as UID             call as this signed-in user
        \(CommonOptions.help)
        """

    /// JSON given with `--data JSON` or `--data-file FILE` ('-': standard input), or neither.
    enum DataSource: Equatable, Sendable {
        case none
        case inline(String)
        case file(String)

        static let options: Set<String> = ["data", "data-file"]

        init(_ args: Arguments) throws(UsageError) {
            switch (args.value("data"), args.value("data-file")) {
            case (let d?, nil): self = .inline(d)
            case (nil, let f?): self = .file(f)
            case (nil, nil): self = .none
            case (_?, _?): throw UsageError("use either --data or --data-file, not both")
            }
        }

        /// The JSON value (null for none; Hearth's tags and Int64Value wrappers understood), or nil
        /// after printing why it cannot be read.
        func read(_ io: CommandIO) -> Value? {
            let text: String
            switch self {
            case .none: return .null
            case .inline(let t): text = t
            case .file(let f):
                let bytes = f == "-" ? FileHandle.standardInput.readDataToEndOfFile() : io.readFile(f)
                guard let bytes else {
                    io.err("error: cannot read \(f)")
                    return nil
                }
                text = String(decoding: bytes, as: UTF8.self)
            }
            do {
                return try JSONParser.parse(text, options: .clientBody)
            } catch {
                io.err("error: --data is not valid JSON: \(error)")
                return nil
            }
        }
    }

    var common: CommonOptions
    var name: String
    var data: DataSource
    var uid: String?

    static func parse(_ arguments: [String]) throws(UsageError) -> CallCommand {
        let args = try Arguments(arguments, valued: CommonOptions.valued.union(DataSource.options).union(["as"]))
        let positionals = try args.requirePositionals(["a function name"])
        let data = try DataSource(args)
        if let uid = args.value("as"), uid.isEmpty || uid.utf8.count > 128 {
            throw UsageError("--as needs a uid of 1 to 128 characters")
        }
        return CallCommand(common: try CommonOptions(args), name: positionals[0], data: data, uid: args.value("as"))
    }

    func run(_ io: CommandIO) async -> Int32 {
        guard let value = data.read(io) else { return ExitCode.usage }
        guard let runtime = await RuntimeSetup.start(common, io: io, quietLevel: .error) else { return ExitCode.failure }
        var auth: CallerAuth?
        if let uid {
            do { auth = try await runtime.caller(asUser: uid) } catch {
                io.err("error: cannot sign in as \(uid): \(error)")
                return ExitCode.failure
            }
        }
        let outcome = await runtime.call(name, data: value, auth: auth)
        switch outcome.result {
        case .success(let result):
            io.out(JSONWriter.string(result.value, options: JSONWriteOptions(style: .tagged, sortKeys: true, pretty: true)))
            return ExitCode.success
        case .failure(let error):
            var line = "error: \(error.code.rawValue) (\(error.code.canonicalName)): \(error.message)"
            if let details = error.details { line += "\ndetails: \(JSONWriter.string(details, options: .tagged))" }
            io.err(line)
            return ExitCode.failure
        }
    }
}
