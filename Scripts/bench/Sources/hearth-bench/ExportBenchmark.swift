import Foundation
import HearthModel
import HearthRuntime
import HearthStore

/// `hearth export` and `hearth import` of 100,000 documents (HEARTH_BENCH_DOCUMENTS to change it),
/// as a user runs them: the release `hearth` beside this binary, in processes of their own, timed
/// from start to exit (opening the store and, for the import into a new data directory, creating
/// its signing key included). Then the same through `Runtime.exportData`/`importData` in this
/// process, without the start-up.
func runExportBenchmark() async throws {
    printHeader("Export and import of documents (release hearth)", command: "Scripts/bench/export-import")
    let count = Int(ProcessInfo.processInfo.environment["HEARTH_BENCH_DOCUMENTS"] ?? "") ?? 100_000
    let hearth = RuntimeConfig.executableDirectory + "/hearth"
    guard FileManager.default.isExecutableFile(atPath: hearth) else { throw SubprocessError("no hearth at \(hearth): build it in release mode first") }
    let dir = NSTemporaryDirectory() + "hearth-bench-export-\(getpid())"
    try? FileManager.default.removeItem(atPath: dir)
    try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: dir) }
    for (name, data) in [("source.toml", "source"), ("target.toml", "target"), ("inprocess.toml", "inprocess")] {
        try Data("data_dir = \"\(data)\"\nunits = []\n[log]\nlevel = \"warning\"\n".utf8).write(to: URL(fileURLWithPath: dir + "/" + name))
    }

    // The documents, through the store's batch commits (500 a commit).
    let source = try RuntimeConfig.load(path: dir + "/source.toml")
    let clock = ContinuousClock()
    var t = clock.now
    let store = try await DocumentStore.open(path: source.storePath, options: source.storeOptions, clock: SystemClock())
    for chunk in stride(from: 0, to: count, by: 500) {
        try await store.commit(try (chunk..<min(chunk + 500, count)).map { .set(try DocumentPath("items/i\($0)"), benchDocument($0)) })
    }
    store.close()
    print("seeded \(count) documents (\(BinaryValueCodec.encode(.map(benchDocument(1))).count) bytes each, encoded) in \(fmt((clock.now - t).seconds, 1)) s\n")

    func timed(_ arguments: [String]) async throws -> Double {
        let start = clock.now
        let process = try Subprocess(hearth, arguments, directory: dir, stdout: .discard, stderr: .capture)
        let ended = try await process.wait(seconds: 1800)
        guard ended == .exited(0) else { throw SubprocessError("hearth \(arguments.joined(separator: " ")) \(ended):\n\(process.stderrText)") }
        return (clock.now - start).seconds
    }
    let exportSeconds = try await timed(["export", "out", "--config", "source.toml"])
    print("hearth export out --config source.toml: \(count) documents in \(fmt(exportSeconds, 2)) s = \(fmt(Double(count) / exportSeconds, 0)) docs/s")
    let bytes = (try? FileManager.default.attributesOfItem(atPath: dir + "/out/documents.jsonl")[.size] as? Int) ?? 0
    print("  documents.jsonl: \(fmt(Double(bytes) / 1_048_576, 1)) MiB")
    let importSeconds = try await timed(["import", "out", "--config", "target.toml"])
    print("hearth import out --config target.toml: \(count) documents in \(fmt(importSeconds, 2)) s = \(fmt(Double(count) / importSeconds, 0)) docs/s")

    // In this process: the snapshot and the transaction alone.
    let exporter = try await Runtime.open(config: source)
    t = clock.now
    let exported = try await exporter.exportData(to: dir + "/out2")
    let inExport = (clock.now - t).seconds
    exporter.close()
    let importer = try await Runtime.open(config: try RuntimeConfig.load(path: dir + "/inprocess.toml"))
    t = clock.now
    let imported = try await importer.importData(from: dir + "/out2")
    let inImport = (clock.now - t).seconds
    importer.close()
    guard exported.counts[.documents] == count, imported.counts[.documents] == count else {
        throw SubprocessError("exported \(exported.counts), imported \(imported.counts), expected \(count) documents")
    }
    print("Runtime.exportData: \(fmt(Double(count) / inExport, 0)) docs/s (\(fmt(inExport, 2)) s); Runtime.importData: \(fmt(Double(count) / inImport, 0)) docs/s (\(fmt(inImport, 2)) s)")
}
