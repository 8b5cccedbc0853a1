import CSQLite
import Foundation
import HearthModel
import HearthStore

/// Raw SQLite with the store's pragmas: the baseline for write throughput.
final class RawSQLite {
    var db: OpaquePointer?
    var insert: OpaquePointer?

    init(path: String) {
        // SQLite's process-wide settings as the store makes them (this may open SQLite first).
        _ = hearth_sqlite3_disable_memstatus()
        sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nil)
        exec("PRAGMA journal_mode = WAL")
        exec("PRAGMA synchronous = NORMAL")
        exec("CREATE TABLE raw (id TEXT PRIMARY KEY, data BLOB NOT NULL) WITHOUT ROWID")
        sqlite3_prepare_v2(db, "INSERT INTO raw(id, data) VALUES (?, ?)", -1, &insert, nil)
    }

    func exec(_ sql: String) { sqlite3_exec(db, sql, nil, nil, nil) }

    func insert(_ id: String, _ data: [UInt8]) {
        sqlite3_reset(insert)
        sqlite3_bind_text(insert, 1, id, -1, unsafeBitCast(-1, to: sqlite3_destructor_type.self))
        data.withUnsafeBytes { _ = sqlite3_bind_blob(insert, 2, $0.baseAddress, Int32($0.count), unsafeBitCast(-1, to: sqlite3_destructor_type.self)) }
        sqlite3_step(insert)
    }

    deinit {
        sqlite3_finalize(insert)
        sqlite3_close_v2(db)
    }
}

func benchDocument(_ i: Int) -> [String: Value] {
    ["title": .string("item \(i)"), "category": .string("c\(i % 10)"), "sequence": .int(Int64(i)),
     "isDone": .bool(i % 3 == 0), "priority": .int(Int64(i % 5))]
}

func runStoreBenchmark() async throws {
    printHeader("Document store on SQLite (WAL, synchronous=NORMAL)", command: "Scripts/bench/store")
    let dir = NSTemporaryDirectory() + "hearth-bench-store-\(getpid())"
    try? FileManager.default.removeItem(atPath: dir)
    try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let clock = ContinuousClock()
    let sample = benchDocument(1)
    let sampleBytes = BinaryValueCodec.encode(.map(sample))
    print("document: 5 fields (title, category, sequence, isDone, priority), \(sampleBytes.count) bytes encoded;")
    print("each Hearth create also appends a change-feed row with the document; index rows are written only")
    print("for fields some query has used (none in the first two rows below)\n")

    // 1. Single-document creates, one transaction each.
    let n1 = 20_000
    let raw = RawSQLite(path: dir + "/raw.sqlite")
    var t = clock.now
    for i in 0..<n1 {
        raw.exec("BEGIN")
        raw.insert("doc\(i)", BinaryValueCodec.encode(.map(benchDocument(i))))
        raw.exec("COMMIT")
    }
    let rawSingle = Double(n1) / (clock.now - t).seconds
    let store = try await DocumentStore.open(path: dir + "/store.sqlite", clock: SystemClock())
    t = clock.now
    for i in 0..<n1 {
        try await store.commit([.create(try DocumentPath("single/d\(i)"), benchDocument(i))])
    }
    let storeSingle = Double(n1) / (clock.now - t).seconds
    print("single creates, 1 per transaction:   Hearth \(fmt(storeSingle, 0))/s   raw SQLite \(fmt(rawSingle, 0))/s   ratio \(fmt(storeSingle / rawSingle, 2))")

    // 2. Batches of 500.
    let batches = 40
    t = clock.now
    for b in 0..<batches {
        raw.exec("BEGIN")
        for i in 0..<500 { raw.insert("batch\(b)-\(i)", BinaryValueCodec.encode(.map(benchDocument(i)))) }
        raw.exec("COMMIT")
    }
    let rawBatch = Double(batches * 500) / (clock.now - t).seconds
    t = clock.now
    for b in 0..<batches {
        try await store.commit(try (0..<500).map { i in .create(try DocumentPath("batch/b\(b)-\(i)"), benchDocument(i)) })
    }
    let storeBatch = Double(batches * 500) / (clock.now - t).seconds
    print("creates in batches of 500:           Hearth \(fmt(storeBatch, 0))/s   raw SQLite \(fmt(rawBatch, 0))/s   ratio \(fmt(storeBatch / rawBatch, 2))")

    // The same single creates into a collection where queries have indexed all five fields.
    for f in ["title", "category", "sequence", "isDone", "priority"] {
        var q = QuerySpec(collection: try CollectionPath("indexed"))
        q.orderBy = [.init(try FieldPath(f))]
        _ = try await store.query(q)
    }
    t = clock.now
    for i in 0..<n1 / 2 {
        try await store.commit([.create(try DocumentPath("indexed/d\(i)"), benchDocument(i))])
    }
    let indexedSingle = Double(n1 / 2) / (clock.now - t).seconds
    print("single creates, all 5 fields indexed: Hearth \(fmt(indexedSingle, 0))/s   ratio to raw \(fmt(indexedSingle / rawSingle, 2))")

    // 3. Query on a 100,000-document collection.
    let collection = try CollectionPath("big")
    for b in 0..<200 {
        try await store.commit(try (0..<500).map { i in
            let n = b * 500 + i
            return .create(try collection.document("d\(n)"), benchDocument(n))
        })
    }
    func latencies(_ spec: QuerySpec, runs: Int = 2000) async throws -> (median: Double, p99: Double, count: Int) {
        var samples: [Double] = []
        var count = 0
        for _ in 0..<runs {
            let s = clock.now
            count = try await store.query(spec).count
            samples.append((clock.now - s).seconds * 1e6)
        }
        samples.sort()
        return (percentile(samples, 50), percentile(samples, 99), count)
    }
    var q = QuerySpec(collection: collection)
    q.filters = [.init(try FieldPath("category"), .equal, "c3")]
    q.orderBy = [.init(try FieldPath("sequence"), .descending)]
    q.limit = 20
    let (m1, p1, c1) = try await latencies(q)
    print("query category == c3 (10% of docs) order by sequence desc limit 20, 100,000 docs:")
    print("                                     median \(fmt(m1)) µs   p99 \(fmt(p1)) µs   (\(c1) results; plan \(try await (store.engine as! SQLiteEngine).explain(q).plan))")
    var rare = q
    rare.filters = [.init(try FieldPath("title"), .in, ["item 5", "item 99999", "item 4242"])]
    let (m2, p2, c2) = try await latencies(rare)
    print("query title in [3 values] order by sequence desc limit 20 (rare match):")
    print("                                     median \(fmt(m2)) µs   p99 \(fmt(p2)) µs   (\(c2) results; plan \(try await (store.engine as! SQLiteEngine).explain(rare).plan))")

    // 4. Recursive delete of a 10,000-document tree (members/{m}/items/{i} and a subcollection).
    for b in 0..<20 {
        try await store.commit(try (0..<500).map { i in
            let n = b * 500 + i
            return .create(try DocumentPath("tree/root/level1/\(n / 100)/level2/\(n)"), benchDocument(n))
        })
    }
    t = clock.now
    let deleted = try await store.recursiveDelete(["tree", "root"])
    let deleteRate = Double(deleted) / (clock.now - t).seconds
    print("recursive delete of \(deleted) documents:   \(fmt(deleteRate, 0)) documents/s")

    // 4b. A tree with many small subcollections deleted as firebase-tools' `firestore:delete -r`
    // does: pages of 7,500 names from a kindless query over the collection's name range, each
    // deleted in commits of 250. 12,000 people, each with 5 items in a subcollection of its own.
    for b in 0..<144 {
        try await store.commit(try (0..<500).map { i in
            let n = b * 500 + i
            let path = n % 6 == 0 ? "people/p\(n / 6)" : "people/p\(n / 6)/items/i\(n % 6)"
            return .create(try DocumentPath(path), benchDocument(n))
        })
    }
    let minID = "__id-9223372036854775808__"
    var page = QuerySpec(collectionID: "", allDescendants: true, orderBy: [.init(.documentID)], limit: 7500)
    page.filters = [.init(.documentID, .greaterThanOrEqual, .reference("people/\(minID)")),
                    .init(.documentID, .lessThan, .reference("people\u{0}/\(minID)"))]
    var pages = 0, removed = 0
    var queryTime = Duration.zero
    t = clock.now
    while true {
        let q0 = clock.now
        let found = try await store.query(page).map(\.path)
        queryTime += clock.now - q0
        if found.isEmpty { break }
        pages += 1
        for start in stride(from: 0, to: found.count, by: 250) {
            try await store.commit(found[start..<min(start + 250, found.count)].map { .delete($0) })
        }
        removed += found.count
        page.startAt = .init(values: [.reference(found.last!.description)], before: false)
    }
    let treeSeconds = (clock.now - t).seconds
    print("firebase-tools-style delete of \(removed) documents in 12,001 collections (\(pages) pages of 7,500):")
    print("                                     \(fmt(Double(removed) / treeSeconds, 0)) documents/s; its queries \(fmt(queryTime.seconds * 1000, 0)) ms in all")

    // 5. Transaction contention: 8 writers incrementing one counter.
    let counter = try DocumentPath("contention/counter")
    try await store.commit([.set(counter, ["n": 0])])
    let perWriter = 500
    t = clock.now
    try await withThrowingTaskGroup(of: Void.self) { group in
        for _ in 0..<8 {
            group.addTask {
                for _ in 0..<perWriter {
                    _ = try await store.runTransaction { tx -> Int64 in
                        let n = try await tx.get(counter)?.fields["n"]?.intValue ?? 0
                        tx.write(.set(counter, ["n": .int(n + 1)]))
                        return n + 1
                    }
                }
            }
        }
        try await group.waitForAll()
    }
    let contention = Double(8 * perWriter) / (clock.now - t).seconds
    let final = try await store.get(counter)?.fields["n"]?.intValue ?? -1
    print("8 writers on one counter document:   \(fmt(contention, 0)) committed transactions/s (final value \(final), expected \(8 * perWriter))")
    store.close()
}

/// A short, fixed workload for profiling the write path under callgrind (not a benchmark).
func runStoreWriteProfile() async throws {
    let dir = NSTemporaryDirectory() + "hearth-profile-\(getpid())"
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let store = try await DocumentStore.open(path: dir + "/store.sqlite", clock: SystemClock())
    let batches = Int(ProcessInfo.processInfo.environment["BATCHES"] ?? "4") ?? 4
    for b in 0..<batches {
        try await store.commit(try (0..<500).map { i in .create(try DocumentPath("batch/b\(b)-\(i)"), benchDocument(i)) })
    }
    let singles = Int(ProcessInfo.processInfo.environment["SINGLES"] ?? "1000") ?? 1000
    for i in 0..<singles {
        try await store.commit([.create(try DocumentPath("single/d\(i)"), benchDocument(i))])
    }
    store.close()
}
