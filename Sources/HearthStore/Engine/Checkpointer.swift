import CSQLite
import Foundation
import Synchronization

/// WAL checkpoints off the writer's path. SQLite's automatic checkpoint runs inside the commit
/// that crosses `wal_autocheckpoint` pages, so the writer stalls for it (~10 ms, ~18 times a
/// second under load: NOTES.md). Here the writer's connection reports the WAL's size after every
/// commit (`sqlite3_wal_hook`, which replaces the automatic checkpoint) and a thread of its own
/// runs a PASSIVE checkpoint on its own connection once the WAL holds `threshold` pages: it never
/// blocks the writer or readers, and a checkpoint that completes lets the next commit start the
/// WAL over from its beginning, so its size stays bounded (with one writer; two writing back to
/// back on one file can keep each other's checkpoints from completing, below).
///
/// The WAL starts over from its beginning only at a commit that finds every frame in it already
/// copied, and under load the writer commits again before the thread's checkpoint ends: there are
/// always new frames. So the WAL would stay past the threshold, every commit would ask again, and
/// the thread would checkpoint hundreds of times a second, each time syncing twice and copying the
/// same hot pages. Instead the thread is asked once per cycle (again only after `retryStep` more
/// pages, when a reader kept it from copying everything); it checkpoints again while the last pass
/// found much that was new, and once it has copied all it found, the writer copies the few frames
/// committed since at the end of its next commit (the tail): then the WAL holds nothing uncopied,
/// and the commit after starts it over.
/// Measured under write+trigger (`Scripts/bench/writetrigger`), with cycles of 4,000 pages: ~7
/// cycles a second, ~40 passes, instead of ~350 checkpoints a second and a WAL that never started
/// over (with 16,000, about 3 cycles a second). The price is the tail: the writer stalls for it
/// once a cycle (median 3–5 ms: two fdatasyncs, the WAL's and the database file's, plus up to
/// `tailWaitMilliseconds` for readers still in the WAL), and so does another writer on the same
/// file, which waits for the tail's write lock (`copyTail`). The thread flushes the database file
/// before it leaves the writer the tail, so the tail's sync writes only the tail's pages: without
/// that flush the median tail was 6–7 ms (counted with uprobes on `sqlite3_wal_checkpoint_v2`
/// under write+trigger).
///
/// Past `limit` pages (the checkpointer cannot keep up, or a long reader pins old pages) the
/// writer runs a PASSIVE checkpoint itself at the end of its commit, as SQLite would, so the WAL
/// never grows without bound while this writer is the only one (while a tail waits to be retried,
/// the tail's copy takes its place). No checkpoint can start the WAL over while another
/// connection always has a transaction in it: two writers committing back to back on one file
/// (each transaction reads the WAL) let it grow until one pauses (SQLite's checkpoint
/// starvation; `CheckpointTests.twoWriters`).
/// Durability is unchanged: checkpoints only copy committed pages from the WAL into the database
/// file.
///
/// One thread serves every store of the process (`CheckpointThread`); a store that never fills
/// its WAL that far never opens the checkpoint connection.
final class Checkpointer: @unchecked Sendable {  // `db` is touched only on the checkpoint thread; the rest is atomics
    let path: String
    let threshold: Int32
    let limit: Int32
    /// WAL pages past the last request after which a checkpoint that could not copy everything is
    /// asked for again.
    let retryStep: Int32
    private let requested = Atomic<Bool>(false)
    private let stopped = Atomic<Bool>(false)
    /// The WAL's size when the thread was last asked (0: not in this cycle, the WAL started over).
    private let askedAt = Atomic<Int32>(0)
    /// Set by the thread when its checkpoint copied every frame it found: the writer copies the tail.
    private let copiedAll = Atomic<Bool>(false)
    /// For tests and benchmarks: the times the thread was asked, the checkpoints it ran (its
    /// passes), the writer's checkpoints past `limit`, the tails the writer copied, and those of
    /// them that left the WAL to start over at the next commit (the others found a reader or
    /// another writer in the way past `tailWaitMilliseconds`, and copied what they could).
    let asked = Atomic<Int>(0)
    let completed = Atomic<Int>(0)
    let inline = Atomic<Int>(0)
    let tails = Atomic<Int>(0)
    let restarts = Atomic<Int>(0)
    /// The times the thread flushed the database file to disk before leaving the writer the tail.
    let synced = Atomic<Int>(0)
    /// The frames in the WAL since it last started over, after the writer's last commit (the
    /// `-wal` file itself keeps its largest size). For tests: it falls below `threshold` once the
    /// WAL has started over, whichever checkpoint made that possible.
    let lastPages = Atomic<Int32>(0)
    /// The writer connection's own busy timeout, which `copyTail` shortens for the copy.
    private let writerBusyTimeout = Atomic<Int32>(5000)
    /// Its own connection, opened on the checkpoint thread when first needed.
    private var db: Connection?

    /// 16,000 pages (64 MiB at SQLite's default page of 4 KiB): under write load a store's hot
    /// pages (the feed's and the indexes' last leaves, the delivery rows) are written again in
    /// commit after commit, and a checkpoint copies each distinct page once and syncs twice, so
    /// fewer, larger checkpoints copy and sync less for the same commits, and the writer copies
    /// fewer tails. 4,000 pages against 1,000 gave +7% write+trigger creates/s and 7% less CPU per
    /// create (`Scripts/bench/writetrigger 6 16`, two alternated rounds). Once the thread flushed
    /// the database file before the tail, 16,000 against 4,000 gave +4.7% (four alternated rounds
    /// under write+trigger, 14,343 against 13,697 creates/s on average, each round to 16,000):
    /// about 3 tails a second instead of 10, the writer's time in them 38–74 ms in 3 s against
    /// 87–121, the thread's checkpoints 629–723 ms against 918–1,081. The price is disk space (the
    /// WAL file keeps its largest size: 106 MB after 8 s of write+trigger, against about 21 MB
    /// with 4,000 pages) and, after a crash, a longer WAL to read back at the next open.
    static let defaultThreshold: Int32 = 16_000

    /// The writer's inline fallback by default: under write+trigger the WAL peaks about 10,000
    /// pages past the default threshold before a cycle's tail, and the fallback, which stalls the
    /// writer, is for a thread that cannot keep up at all.
    static let defaultLimit: Int32 = 64_000

    /// `limit` defaults to `defaultLimit`, or four times a larger threshold; it is never below the
    /// threshold.
    init(path: String, threshold: Int32 = Checkpointer.defaultThreshold, limit: Int32? = nil) {
        self.path = path
        self.threshold = threshold
        let (fourTimes, overflow) = threshold.multipliedReportingOverflow(by: 4)
        self.limit = max(limit ?? max(Self.defaultLimit, overflow ? .max : fourTimes), threshold)
        retryStep = max(1, threshold / 4)
    }

    /// Installs the WAL hook on the writer's connection.
    func attach(to writer: Connection) {
        writerBusyTimeout.store(writer.busyTimeoutMilliseconds, ordering: .relaxed)
        let context = Unmanaged.passUnretained(self).toOpaque()
        sqlite3_wal_hook(writer.handle, { context, db, _, pages in
            guard let context else { return SQLITE_OK }
            let checkpointer = Unmanaged<Checkpointer>.fromOpaque(context).takeUnretainedValue()
            checkpointer.committed(pages: pages, db: db)
            return SQLITE_OK
        }, context)
    }

    /// After each of the writer's commits, with the WAL's size in pages (its frames, including
    /// those just committed): what the WAL needs now.
    private func committed(pages: Int32, db: OpaquePointer?) {
        lastPages.store(pages, ordering: .relaxed)
        if pages < threshold {
            // Below the threshold: the WAL started over (or is young). A new cycle.
            askedAt.store(0, ordering: .relaxed)
            copiedAll.store(false, ordering: .relaxed)
            return
        }
        // The thread copied all it found: the tail is the few frames committed since.
        if copiedAll.exchange(false, ordering: .acquiringAndReleasing) {
            copyTail(db)
            return
        }
        // Behind: checkpoint here, as the automatic checkpoint would.
        if pages >= limit {
            inline.wrappingAdd(1, ordering: .relaxed)
            sqlite3_wal_checkpoint_v2(db, "main", SQLITE_CHECKPOINT_PASSIVE, nil, nil)
            return
        }
        let asked = askedAt.load(ordering: .relaxed)
        guard asked == 0 || pages - asked >= retryStep else { return }  // a difference of two counts: no overflow
        askedAt.store(pages, ordering: .relaxed)
        request()
    }

    /// The writer copies the tail with a RESTART checkpoint, not a PASSIVE one. The commit hook
    /// runs after the write lock is released, so another connection's writer on the same file
    /// (`hearth serve` and a CLI command, or two stores of one process) can start its transaction
    /// while a PASSIVE copy runs: its frames land after the copied ones, the commit after finds
    /// frames not yet copied, and the WAL grows on (measured: to 14,000 frames of 22,000 with the
    /// disk busy, against 2,000 to 6,000 with RESTART; with the whole test suite beside them,
    /// even RESTART tails let it reach all 23,900 once). RESTART takes the write lock, waiting for
    /// another writer's transaction to end, and readers on older snapshots; copies; and then
    /// waits for readers still in the WAL (https://www.sqlite.org/c3ref/wal_checkpoint_v2.html),
    /// so the next commit, by either, starts the WAL over. The waits share `tailWaitMilliseconds`
    /// (the copy and its syncs are not bounded by it, and the write lock is held through them).
    /// Past that wait SQLite copies what it can without waiting more, as a PASSIVE checkpoint
    /// would (keeping the write lock if it has it), and the thread is asked again once the WAL has
    /// grown `retryStep` pages past its last request.
    ///
    /// Only one checkpoint runs at a time on a file: when another is running (this process's
    /// thread copying another store of the same file, another process's checkpoint), SQLite
    /// answers SQLITE_BUSY at once, having copied nothing (the log size -1), and the writer tries
    /// again at its next commit.
    private func copyTail(_ db: OpaquePointer?) {
        var log: Int32 = 0, done: Int32 = 0
        sqlite3_busy_timeout(db, Self.tailWaitMilliseconds)
        let rc = sqlite3_wal_checkpoint_v2(db, "main", SQLITE_CHECKPOINT_RESTART, &log, &done)
        sqlite3_busy_timeout(db, writerBusyTimeout.load(ordering: .relaxed))
        switch rc {
        case SQLITE_OK:
            tails.wrappingAdd(1, ordering: .relaxed)
            restarts.wrappingAdd(1, ordering: .relaxed)
        case SQLITE_BUSY where log >= 0:
            tails.wrappingAdd(1, ordering: .relaxed)
        case SQLITE_BUSY:
            copiedAll.store(true, ordering: .relaxed)
        default:
            break  // an error: nothing copied; the thread is asked again `retryStep` pages on
        }
    }

    static let tailWaitMilliseconds: Int32 = 20

    private func request() {
        guard !stopped.load(ordering: .relaxed),
              requested.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged else { return }
        CheckpointThread.shared.enqueue(self)
    }

    /// On the checkpoint thread: PASSIVE checkpoints until little is left to copy (or, once stopped,
    /// closing the connection).
    fileprivate func run() {
        requested.store(false, ordering: .releasing)
        guard !stopped.load(ordering: .acquiring) else {
            db = nil
            return
        }
        if db == nil { db = try? Connection(path: path, options: Connection.Options()) }
        guard let db else { return }
        asked.wrappingAdd(1, ordering: .relaxed)
        // Each pass copies what the writer committed during the one before, a fraction of it (the
        // thread copies several times faster than the writer fills the WAL): a few passes leave the
        // writer a tail of a few dozen frames, not the hundreds committed during the first pass.
        var copied: Int32 = 0
        for _ in 0..<Self.passes {
            var log: Int32 = 0, done: Int32 = 0
            guard sqlite3_wal_checkpoint_v2(db.handle, "main", SQLITE_CHECKPOINT_PASSIVE, &log, &done) == SQLITE_OK else { return }
            completed.wrappingAdd(1, ordering: .relaxed)
            // A reader kept some frames from being copied (or the WAL just started over): the
            // writer asks again later.
            guard log > 0, done == log, log >= copied else { return }
            let fresh = log - copied
            copied = log
            if fresh <= Self.tailFrames || stopped.load(ordering: .relaxed) { break }
        }
        // A PASSIVE pass syncs the database file only when it copied every frame, which under load
        // it never does: the pages of the whole cycle would wait in the page cache for the tail's
        // sync, on the writer's path (measured: 3 to 18 ms a tail, 8% of the writer's time under
        // write+trigger). Flushed here, they leave the tail's sync only the tail's own pages.
        if db.syncDatabaseFile() { synced.wrappingAdd(1, ordering: .relaxed) }
        copiedAll.store(true, ordering: .releasing)
    }

    /// At most this many checkpoints per request, and the thread stops once a pass copied no more
    /// than `tailFrames`.
    static let passes = 10
    static let tailFrames: Int32 = 16

    /// No more checkpoints (the store is closing); the checkpoint connection closes on its thread.
    /// The hook stays on the writer's connection, which closes with the store; the store keeps
    /// its checkpointer for that long.
    func stop() {
        stopped.store(true, ordering: .releasing)
        CheckpointThread.shared.enqueue(self)
    }
}

/// The thread that runs every store's checkpoints, in the order they were asked for.
final class CheckpointThread: @unchecked Sendable {  // `queue` under its lock; the thread starts once
    static let shared = CheckpointThread()
    private let queue = Mutex<[Checkpointer]>([])
    private let wake = DispatchSemaphore(value: 0)
    private let started = Atomic<Bool>(false)

    func enqueue(_ checkpointer: Checkpointer) {
        queue.withLock { $0.append(checkpointer) }
        if started.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged {
            let thread = Thread { [self] in loop() }
            thread.name = "hearth-checkpoints"
            thread.start()
        }
        wake.signal()
    }

    private func loop() {
        while true {
            wake.wait()
            let work = queue.withLock { q -> [Checkpointer] in defer { q = [] }; return q }
            for checkpointer in work { checkpointer.run() }
        }
    }
}
