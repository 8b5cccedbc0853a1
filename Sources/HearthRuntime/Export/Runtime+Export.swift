import Foundation
import HearthModel
import HearthStore

/// How far an export or import has come: `count` records of `kind` so far, reported every
/// `ExportFormat.progressInterval` records of a file and once more when the file is done.
public struct DataTransferProgress: Sendable, Equatable {
    public var kind: ExportFormat.Kind
    public var count: Int
    /// The file is done: `count` is its total.
    public var finished: Bool

    public init(kind: ExportFormat.Kind, count: Int, finished: Bool) {
        self.kind = kind
        self.count = count
        self.finished = finished
    }
}

/// What an export wrote.
public struct ExportSummary: Sendable, Equatable {
    public var directory: String
    /// Records of each kind (every kind present, 0 when there were none).
    public var counts: [ExportFormat.Kind: Int]
    /// When the snapshot was taken (the runtime's clock).
    public var exportTime: Timestamp
}

extension Runtime {
    /// Writes everything the store holds that another store needs to carry on to `directory`
    /// (created if missing; an existing one must be empty), in `ExportFormat`: documents with
    /// their create and update times, users with their password hashes and provider links,
    /// deliveries (pending, running and dead, with their attempts and errors), schedules' last
    /// firings and reserved task ids. It is one snapshot, consistent even while this or another
    /// process (`hearth serve` on the same data directory) keeps writing. Not exported: the change
    /// feed and the user event log (an import starts them empty, so its records fire nothing),
    /// trigger cursors, refresh tokens and out-of-band codes (users sign in again), the outbox,
    /// deploy history. `manifest.json` is written last; on failure whatever was written is removed.
    ///
    /// Runs on a thread of its own, so the runtime's tasks go on meanwhile.
    public func exportData(to directory: String, progress: @escaping @Sendable (DataTransferProgress) -> Void = { _ in }) async throws -> ExportSummary {
        let engine = store.engine
        let exportTime = clock.now()
        return try await Runtime.onThread {
            try DataExporter(directory: directory, progress: progress).run(engine, exportTime: exportTime)
        }
    }

    /// Runs blocking work (a long read, file I/O) on a thread of its own and awaits its result:
    /// Swift's concurrency has as many threads as cores, and blocking one stalls the others' tasks.
    /// Work that cannot fail needs no `try` (its error type is `Never`).
    static func onThread<T: Sendable, E: Error>(_ work: @escaping @Sendable () throws(E) -> T) async throws(E) -> T {
        let result: Result<T, E> = await withCheckedContinuation { continuation in
            let thread = Thread { continuation.resume(returning: Result(catching: work)) }
            thread.stackSize = 4 << 20
            thread.start()
        }
        return try result.get()
    }
}

/// One export: the directory, a writer per file, the counts.
struct DataExporter {
    let directory: String
    let progress: @Sendable (DataTransferProgress) -> Void

    func run(_ engine: any StorageEngine, exportTime: Timestamp) throws -> ExportSummary {
        let created = try DataExporter.prepare(directory)
        var written: [String] = []
        do {
            var writers: [ExportFormat.Kind: LineFileWriter] = [:]
            for kind in ExportFormat.Kind.allCases {
                let path = directory + "/" + kind.fileName
                writers[kind] = try LineFileWriter(path: path)
                written.append(path)
            }
            var counts = ExportFormat.Kind.noneOfEach
            try engine.exportRecords { record in
                let kind = record.kind
                try writers[kind]!.append(try record.jsonLine())
                let n = counts[kind]! + 1
                counts[kind] = n
                if n % ExportFormat.progressInterval == 0 { progress(DataTransferProgress(kind: kind, count: n, finished: false)) }
            }
            for kind in ExportFormat.Kind.allCases {
                try writers[kind]!.finish()
                progress(DataTransferProgress(kind: kind, count: counts[kind]!, finished: true))
            }
            // The manifest appears whole (a rename), and only once every file is on disk.
            let manifest = ExportManifest(exportTime: exportTime, counts: counts)
            let temporary = directory + "/." + ExportFormat.manifestFile + ".partial"
            written.append(temporary)
            let file = try LineFileWriter(path: temporary)
            try file.write(manifest.json)
            try file.finish()
            guard rename(temporary, directory + "/" + ExportFormat.manifestFile) == 0 else {
                throw ExportError("cannot write \(directory)/\(ExportFormat.manifestFile): \(String(cString: strerror(errno)))")
            }
            DataExporter.syncDirectory(directory)
            return ExportSummary(directory: directory, counts: counts, exportTime: exportTime)
        } catch {
            for path in written { unlink(path) }
            if created { rmdir(directory) }
            throw error
        }
    }

    /// Makes sure `directory` exists and is empty; returns whether it was created here.
    static func prepare(_ directory: String) throws(ExportError) -> Bool {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory) {
            guard isDirectory.boolValue else { throw ExportError("\(directory) exists and is not a directory") }
            let entries: [String]
            do { entries = try FileManager.default.contentsOfDirectory(atPath: directory) } catch {
                throw ExportError("cannot read the directory \(directory): \(error.localizedDescription)")
            }
            if let first = entries.sorted().first {
                throw ExportError("\(directory) is not empty (it holds \(first)\(entries.count > 1 ? " and \(entries.count - 1) more" : "")): export into a new or empty directory")
            }
            return false
        }
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw ExportError("cannot create the directory \(directory): \(error.localizedDescription)")
        }
        return true
    }

    /// The directory's entries (the new files' names) on disk too.
    static func syncDirectory(_ directory: String) {
        let fd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { return }
        _ = fsync(fd)
        close(fd)
    }
}
