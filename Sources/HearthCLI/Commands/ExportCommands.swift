import Foundation
import HearthModel
import HearthRuntime

/// Progress and summaries of `hearth export` and `hearth import`: progress on stderr, the summary
/// on stdout as one JSON object.
enum TransferOutput {
    static func progress(_ verb: String, _ io: CommandIO) -> @Sendable (DataTransferProgress) -> Void {
        { p in
            guard !p.finished || p.count >= ExportFormat.progressInterval else { return }
            io.err("\(verb) \(p.kind.fileName): \(p.count) records\(p.finished ? ", done" : "")")
        }
    }

    static func counts(_ counts: [ExportFormat.Kind: Int]) -> String {
        ExportFormat.Kind.allCases.map { "\(counts[$0] ?? 0) \(label($0))" }.joined(separator: ", ")
    }

    static func label(_ kind: ExportFormat.Kind) -> String {
        kind == .taskIDs ? "task ids" : kind.rawValue
    }

    static func countsValue(_ counts: [ExportFormat.Kind: Int]) -> Value {
        .map(Dictionary(uniqueKeysWithValues: ExportFormat.Kind.allCases.map { ($0.rawValue, Value.int(Int64(counts[$0] ?? 0))) }))
    }

    static func seconds(since start: ContinuousClock.Instant) -> String {
        let (s, attos) = (ContinuousClock.now - start).components
        return String(format: "%.2f s", Double(s) + Double(attos) / 1e18)
    }

    static func fail(_ error: Error, _ io: CommandIO) -> Int32 {
        switch error {
        case let e as ImportError: io.err("error: \(e)")
        case let e as ExportError: io.err("error: \(e)")
        default: return DocsJSON.fail(error, io)
        }
        return ExitCode.failure
    }
}

/// `hearth export DIR`
struct ExportCommand: Command {
    static let path = ["export"]
    static let summary = "Export the store (documents, users, deliveries, schedules) to a directory"
    static let help = """
        usage: hearth export DIR [--config PATH]

        Writes a consistent snapshot of the data directory's store to DIR (created; an existing DIR
        must be empty), safe while hearth serve runs on it: documents with their create and update
        times (documents.jsonl), users with password hashes and provider links (users.jsonl),
        pending, running and dead deliveries (deliveries.jsonl), schedules' last firings
        (schedules.jsonl), reserved task ids (taskIds.jsonl), and manifest.json, written last.
        Progress goes to stderr every \(ExportFormat.progressInterval) records; a JSON summary to stdout.
        The files hold password hashes: they are created readable by their owner only.
        \(CommonOptions.help)
        """

    var common: CommonOptions
    var directory: String

    static func parse(_ arguments: [String]) throws(UsageError) -> ExportCommand {
        let args = try Arguments(arguments, valued: CommonOptions.valued)
        let p = try args.requirePositionals(["the directory to export to"])
        guard !p[0].isEmpty else { throw UsageError("the directory to export to is empty") }
        return ExportCommand(common: try CommonOptions(args), directory: p[0])
    }

    func run(_ io: CommandIO) async -> Int32 {
        guard let runtime = await RuntimeSetup.start(common, io: io, quietLevel: .warning, loadUnits: { _ in false }) else { return ExitCode.failure }
        defer { runtime.close() }
        let start = ContinuousClock.now
        do {
            let summary = try await runtime.exportData(to: directory, progress: TransferOutput.progress("export", io))
            io.err("exported \(TransferOutput.counts(summary.counts)) to \(directory) in \(TransferOutput.seconds(since: start))")
            io.out(JSONWriter.string(["directory": .string(directory), "exportTime": .string(summary.exportTime.rfc3339),
                                      "counts": TransferOutput.countsValue(summary.counts)], options: .sorted))
            return ExitCode.success
        } catch { return TransferOutput.fail(error, io) }
    }
}

/// `hearth import DIR`, `hearth import --firebase-auth PATH`
struct ImportCommand: Command {
    static let path = ["import"]
    static let summary = "Import an export into an empty store, or the Firebase Auth emulator's users"
    static let help = """
        usage: hearth import DIR [--config PATH]
               hearth import --firebase-auth PATH [--hash-key B64 --salt-separator B64 --rounds N --mem-cost N] [--config PATH]

        hearth import DIR loads what hearth export wrote into the data directory's store, which must
        hold no document, user or delivery. Every line is checked; the first bad one (named by file,
        line and field) or a file shorter than the manifest says refuses the import, and nothing is
        written: it is one transaction. Imported documents and users fire no triggers and keep
        their create and update times; running deliveries become pending.

        --firebase-auth PATH creates the users of a Firebase Auth emulator export (PATH: the
        directory firebase emulators:export wrote, its auth_export, or accounts.json). The
        emulator's passwords are hashed with Hearth's scrypt, so users sign in with the same
        password; provider links, custom claims, disabled flags and creation times are kept. The
        store may hold other users, but a uid, email, phone number or provider account taken
        already refuses the import, naming it. Hashes from a production project's
        firebase auth:export are kept (and checked at sign-in) only with the project's password
        hash parameters: --hash-key, --salt-separator (base64), --rounds, --mem-cost.
        Progress goes to stderr; a JSON summary to stdout.
        \(CommonOptions.help)
        """

    enum Source: Equatable, Sendable {
        case export(String)
        case firebaseAuth(String, FirebaseScryptParameters?)
    }

    var common: CommonOptions
    var source: Source

    static let hashOptions = ["hash-key", "salt-separator", "rounds", "mem-cost"]

    static func parse(_ arguments: [String]) throws(UsageError) -> ImportCommand {
        let args = try Arguments(arguments, valued: CommonOptions.valued.union(["firebase-auth"]).union(hashOptions))
        let given = hashOptions.filter { args.value($0) != nil }
        guard let auth = args.value("firebase-auth") else {
            if let first = given.first { throw UsageError("--\(first) goes with --firebase-auth") }
            let p = try args.requirePositionals(["the export directory to import"])
            guard !p[0].isEmpty else { throw UsageError("the export directory to import is empty") }
            return ImportCommand(common: try CommonOptions(args), source: .export(p[0]))
        }
        if let extra = args.positionals.first { throw UsageError("--firebase-auth imports PATH only; unexpected argument '\(extra)'") }
        guard !auth.isEmpty else { throw UsageError("--firebase-auth needs a path") }
        var scrypt: FirebaseScryptParameters?
        if !given.isEmpty {
            guard given.count == hashOptions.count else {
                throw UsageError("the hash parameters go together: missing --\(hashOptions.first { args.value($0) == nil } ?? "")")
            }
            func base64(_ name: String) throws(UsageError) -> [UInt8] {
                guard let bytes = Base64.decodeProtoBytes(args.value(name)!) else { throw UsageError("--\(name) must be base64") }
                return bytes
            }
            scrypt = FirebaseScryptParameters(signerKey: try base64("hash-key"), saltSeparator: try base64("salt-separator"),
                                              rounds: try args.int("rounds") ?? 0, memoryCost: try args.int("mem-cost") ?? 0)
        }
        return ImportCommand(common: try CommonOptions(args), source: .firebaseAuth(auth, scrypt))
    }

    func run(_ io: CommandIO) async -> Int32 {
        guard let runtime = await RuntimeSetup.start(common, io: io, quietLevel: .warning, loadUnits: { _ in false }) else { return ExitCode.failure }
        defer { runtime.close() }
        let start = ContinuousClock.now
        do {
            let summary: ImportSummary
            switch source {
            case .export(let directory):
                summary = try await runtime.importData(from: directory, progress: TransferOutput.progress("import", io))
            case .firebaseAuth(let path, let scrypt):
                summary = try await runtime.importFirebaseAuth(from: path, scrypt: scrypt) { p in
                    if !p.finished { io.err("import: \(p.count) users prepared") }
                }
            }
            var line = "imported \(TransferOutput.counts(summary.counts)) from \(summary.source) in \(TransferOutput.seconds(since: start))"
            if summary.madePending > 0 { line += " (\(summary.madePending) running deliveries are pending again)" }
            io.err(line)
            io.out(JSONWriter.string(["source": .string(summary.source), "counts": TransferOutput.countsValue(summary.counts),
                                      "madePending": .int(Int64(summary.madePending))], options: .sorted))
            return ExitCode.success
        } catch { return TransferOutput.fail(error, io) }
    }
}
