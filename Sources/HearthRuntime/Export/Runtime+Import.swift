import Foundation
import HearthModel
import HearthStore
import Synchronization

/// What an import wrote.
public struct ImportSummary: Sendable, Equatable {
    /// The export directory, or the Auth emulator file the users came from.
    public var source: String
    /// Records of each kind written (every kind present, 0 when there were none).
    public var counts: [ExportFormat.Kind: Int]
    /// Deliveries that were running when exported: pending again, their attempt counted.
    public var madePending: Int
}

extension Runtime {
    /// Loads an export (`exportData`, `hearth export`) into this runtime's store, which must hold
    /// no document, user or delivery (the refusal names what it holds). Every line is checked as
    /// it is read; the first bad one refuses the whole import, with its file, line and field
    /// (`documents.jsonl:17: field 'path': …`), as does a file with fewer or more records than
    /// the manifest counts. All of it is written in one transaction, or nothing is.
    ///
    /// Imported documents and users fire no triggers (nothing reaches the change feed or the user
    /// event log) and keep their create and update times. Deliveries keep their ids, attempts and
    /// errors; those that were running are pending. The export's schedule state and reserved
    /// task ids replace the store's own: a runtime already running deliveries (which registered
    /// its schedules when it started) continues each schedule from the imported last firing, and
    /// claims imported deliveries as they come due.
    public func importData(from directory: String, progress: @escaping @Sendable (DataTransferProgress) -> Void = { _ in }) async throws -> ImportSummary {
        let manifest = try ExportReader.manifest(in: directory)
        let reader = ExportReader(directory: directory, manifest: manifest, progress: progress)
        let imported: ImportedRecords
        do {
            imported = try await store.engine.importRecords(requireEmpty: true) { try reader.next() }
        } catch {
            throw reader.locate(error)
        }
        try await engine.takeImportedState()
        return ImportSummary(source: directory, counts: imported.counts.merging(ExportFormat.Kind.noneOfEach) { n, _ in n }, madePending: imported.madePending)
    }
}

/// Reads an export's files in order, a record at a time, for the store's import transaction
/// (which calls `next` on the writer's executor; the mutex makes the reader safe to hand there).
final class ExportReader: Sendable {
    private struct State {
        var kinds = ExportFormat.Kind.allCases[...]
        var file: LineFileReader?
        var kind: ExportFormat.Kind?
        var count = 0
    }

    let directory: String
    let manifest: ExportManifest
    let progress: @Sendable (DataTransferProgress) -> Void
    private let state = Mutex(State())

    init(directory: String, manifest: ExportManifest, progress: @escaping @Sendable (DataTransferProgress) -> Void) {
        self.directory = directory
        self.manifest = manifest
        self.progress = progress
    }

    /// The directory's manifest, or why there is none to read.
    static func manifest(in directory: String) throws(ImportError) -> ExportManifest {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory) else { throw ImportError("\(directory) does not exist") }
        guard isDirectory.boolValue else { throw ImportError("\(directory) is not a directory (an export is a directory holding \(ExportFormat.manifestFile))") }
        let path = directory + "/" + ExportFormat.manifestFile
        guard FileManager.default.fileExists(atPath: path) else {
            throw ImportError("\(directory) holds no \(ExportFormat.manifestFile): it is not a finished Hearth export")
        }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ImportError(file: ExportFormat.manifestFile, "cannot read \(path): \(String(cString: strerror(errno)))")
        }
        let manifest: ExportManifest
        do { manifest = try ExportManifest(json: [UInt8](data)) } catch { throw ImportError(file: ExportFormat.manifestFile, error.description) }
        if manifest.boundaryVersion != Int(Boundary.version), manifest.counts[.deliveries, default: 0] > 0 {
            throw ImportError(file: ExportFormat.manifestFile, """
                field 'boundaryVersion': the deliveries' events are in boundary version \(manifest.boundaryVersion); \
                this hearth reads version \(Boundary.version)
                """)
        }
        return manifest
    }

    /// The next record of the export, nil after the last file's last line.
    func next() throws -> ExportRecord? {
        try state.withLock { s in
            while true {
                if let file = s.file, let kind = s.kind {
                    let expected = manifest.counts[kind]
                    guard let line = try file.next() else {
                        if let expected, s.count != expected {
                            throw ImportError(file: kind.fileName, "holds \(s.count) records but \(ExportFormat.manifestFile) counts \(expected): the file is cut short or was changed")
                        }
                        progress(DataTransferProgress(kind: kind, count: s.count, finished: true))
                        s.file = nil
                        continue
                    }
                    guard !line.isEmpty else { throw ImportError(file: kind.fileName, line: file.lineNumber, "empty line") }
                    if let expected, s.count >= expected {
                        throw ImportError(file: kind.fileName, line: file.lineNumber, "more records than the \(expected) \(ExportFormat.manifestFile) counts")
                    }
                    let record: ExportRecord
                    do {
                        record = try line.withUnsafeBufferPointer { buffer in try ExportRecord(line: buffer, kind: kind) }
                    } catch {
                        throw ImportError(file: kind.fileName, line: file.lineNumber, "\(error)")
                    }
                    s.count += 1
                    if s.count % ExportFormat.progressInterval == 0 { progress(DataTransferProgress(kind: kind, count: s.count, finished: false)) }
                    return record
                }
                guard let kind = s.kinds.popFirst() else { return nil }
                s.kind = kind
                s.count = 0
                let path = directory + "/" + kind.fileName
                guard FileManager.default.fileExists(atPath: path) else {
                    if let expected = manifest.counts[kind], expected > 0 {
                        throw ImportError(file: kind.fileName, "missing, but \(ExportFormat.manifestFile) counts \(expected) records")
                    }
                    continue
                }
                s.file = try LineFileReader(path: path, name: kind.fileName)
            }
        }
    }

    /// `error` with the position of the record being written when the store refused it (errors
    /// of the reader's own carry theirs already).
    func locate(_ error: Error) -> Error {
        if let e = error as? ImportError, e.file != nil { return e }
        let (kind, line) = state.withLock { s in (s.file != nil ? s.kind : nil, s.file?.lineNumber) }
        guard let kind, let line, line > 0 else { return error }
        let message: String
        switch error {
        case let e as ImportError: message = e.message
        case let e as HTTPSError: message = e.message
        default: message = "\(error)"
        }
        return ImportError(file: kind.fileName, line: line, message)
    }
}
