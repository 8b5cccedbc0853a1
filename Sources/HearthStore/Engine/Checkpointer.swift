import CSQLite
import Foundation
import Synchronization

/// WAL checkpoints off the writer's path. SQLite's automatic checkpoint runs inside the commit
/// that crosses `wal_autocheckpoint` pages, so the writer stalls for it (~10 ms, ~18 times a
/// second under load: NOTES.md). Here the writer's connection reports the WAL's size after every
/// commit (`sqlite3_wal_hook`, which replaces the automatic checkpoint) and a thread of its own
/// runs a PASSIVE checkpoint on its own connection once the WAL holds `threshold` pages: it never
/// blocks the writer or readers, and a checkpoint that completes lets the next commit start the
/// WAL over from its beginning, so its size stays bounded.
///
/// Past `limit` pages (the checkpointer cannot keep up, or a long reader pins old pages) the
/// writer runs a PASSIVE checkpoint itself at the end of its commit, as SQLite would, so the WAL
/// never grows without bound. Durability is unchanged: checkpoints only copy committed pages
/// from the WAL into the database file.
///
/// One thread serves every store of the process (`CheckpointThread`); a store that never fills
/// its WAL that far never opens the checkpoint connection.
final class Checkpointer: @unchecked Sendable {  // `db` is touched only on the checkpoint thread; the rest is atomics
    let path: String
    let threshold: Int32
    let limit: Int32
    private let requested = Atomic<Bool>(false)
    private let stopped = Atomic<Bool>(false)
    /// Checkpoints run, for tests and benchmarks.
    let completed = Atomic<Int>(0)
    let inline = Atomic<Int>(0)
    /// Its own connection, opened on the checkpoint thread when first needed.
    private var db: Connection?

    /// 4,000 pages (16 MiB): under write load a store's hot pages (the feed's and the indexes'
    /// last leaves, the delivery rows) are written again in commit after commit, and a checkpoint
    /// copies each distinct page once and syncs twice, so fewer, larger checkpoints copy and sync
    /// less for the same commits. Against 1,000 pages: +7% write+trigger creates/s and 7% less CPU
    /// per create (`Scripts/bench/writetrigger 6 16`, two alternated rounds); 16,000 measured the same as 4,000.
    init(path: String, threshold: Int32 = 4000, limit: Int32 = 32_000) {
        self.path = path
        self.threshold = threshold
        self.limit = limit
    }

    /// Installs the WAL hook on the writer's connection.
    func attach(to writer: Connection) {
        let context = Unmanaged.passUnretained(self).toOpaque()
        sqlite3_wal_hook(writer.handle, { context, db, _, pages in
            guard let context else { return SQLITE_OK }
            let checkpointer = Unmanaged<Checkpointer>.fromOpaque(context).takeUnretainedValue()
            if pages >= checkpointer.limit {
                // Behind: checkpoint here, as the automatic checkpoint would.
                checkpointer.inline.wrappingAdd(1, ordering: .relaxed)
                sqlite3_wal_checkpoint_v2(db, nil, SQLITE_CHECKPOINT_PASSIVE, nil, nil)
            } else if pages >= checkpointer.threshold {
                checkpointer.request()
            }
            return SQLITE_OK
        }, context)
    }

    private func request() {
        guard !stopped.load(ordering: .relaxed),
              requested.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged else { return }
        CheckpointThread.shared.enqueue(self)
    }

    /// On the checkpoint thread: one PASSIVE checkpoint (or, once stopped, closing the connection).
    fileprivate func run() {
        requested.store(false, ordering: .releasing)
        guard !stopped.load(ordering: .acquiring) else {
            db = nil
            return
        }
        if db == nil { db = try? Connection(path: path, options: Connection.Options()) }
        guard let db else { return }
        var log: Int32 = 0, done: Int32 = 0
        if sqlite3_wal_checkpoint_v2(db.handle, nil, SQLITE_CHECKPOINT_PASSIVE, &log, &done) == SQLITE_OK {
            completed.wrappingAdd(1, ordering: .relaxed)
        }
    }

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
