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
final class Checkpointer: @unchecked Sendable {  // `db` is used only by `thread`; the rest is atomics
    let path: String
    let threshold: Int32
    let limit: Int32
    private let wake = DispatchSemaphore(value: 0)
    private let requested = Atomic<Bool>(false)
    private let stopped = Atomic<Bool>(false)
    /// Checkpoints run, for tests and benchmarks.
    let completed = Atomic<Int>(0)
    let inline = Atomic<Int>(0)
    private var thread: Thread?

    init(path: String, threshold: Int32 = 1000, limit: Int32 = 16_000) {
        self.path = path
        self.threshold = threshold
        self.limit = limit
    }

    /// Installs the WAL hook on the writer's connection and starts the thread.
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
        let thread = Thread { [self] in run() }
        thread.name = "hearth-checkpointer"
        self.thread = thread
        thread.start()
    }

    private func request() {
        if requested.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged { wake.signal() }
    }

    private func run() {
        // Its own connection, opened and used on this thread only.
        guard let db = try? Connection(path: path, options: Connection.Options()) else { return }
        while true {
            wake.wait()
            if stopped.load(ordering: .acquiring) { break }
            requested.store(false, ordering: .releasing)
            var log: Int32 = 0, done: Int32 = 0
            if sqlite3_wal_checkpoint_v2(db.handle, nil, SQLITE_CHECKPOINT_PASSIVE, &log, &done) == SQLITE_OK {
                completed.wrappingAdd(1, ordering: .relaxed)
            }
        }
    }

    /// Stops the thread (the store is closing). The hook stays on the writer's connection, which
    /// closes with the store; `self` must outlive it, so the store keeps its checkpointer.
    func stop() {
        stopped.store(true, ordering: .releasing)
        wake.signal()
    }
}
