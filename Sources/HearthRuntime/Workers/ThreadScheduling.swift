import CHearthSystem
#if canImport(Glibc)
import Glibc
#endif

/// The Linux scheduling policy of a server's threads (`[server] scheduling`), set for the whole
/// process by `hearth serve` before its store and workers start.
///
/// A request crosses several of Hearth's threads: libmicrohttpd's polling thread hands it to the
/// unit's worker, whose socket reader runs the handler and hands the answer to the host's socket
/// reader, which resumes the connection (and, for a write, through the writer's thread and back).
/// Under the normal policy, each hand-off wakes the next thread and, when both cores are busy,
/// the woken thread preempts the one that woke it: the waker is switched out in the middle of its
/// pass over ready connections or frames, and switched back in later, two context switches for
/// nothing. A SCHED_BATCH thread does not preempt on wake-up ("for workloads that want a
/// deterministic scheduling policy without interactivity causing extra preemptions (between the
/// workload's tasks)": sched(7)): it runs on an idle core at once, else when the running thread
/// blocks or its slice ends. Measured under `Scripts/bench/peers`' loads (alternated runs,
/// README's Performance): about a tenth less CPU per request, latency percentiles unchanged.
public enum ThreadScheduling: String, Sendable, CaseIterable {
    /// SCHED_BATCH at the normal static priority (0), the nice value unchanged.
    case batch
    /// SCHED_OTHER, every process's default.
    case normal

    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    /// Puts every thread of this process under this policy. Threads started later inherit it from
    /// the thread that starts them, and child processes from the thread that spawns them (the
    /// units' workers: `WorkerProcess` spawns without POSIX_SPAWN_SETSCHEDULER). A thread started
    /// by a thread not yet set could be missed by one pass over the threads, so passes repeat
    /// until one finds every thread already set (at most `passes`). A thread that cannot be set
    /// (one under a real-time policy, say) does not stop the others; the first such refusal is
    /// thrown once every thread was tried. Returns how many threads were changed.
    @discardableResult
    public func applyToProcess() throws(Failure) -> Int {
        var changed = 0
        var refused: [Int32: Int32] = [:]  // thread id: errno
        for _ in 0..<Self.passes {
            var changedThisPass = 0
            for tid in Self.threadIDs() where refused[tid] == nil && Self.current(thread: tid) != self {
                if hearth_set_thread_policy(tid, self == .batch ? 1 : 0) == 0 {
                    changedThisPass += 1
                } else {
                    let error = errno
                    if error != ESRCH { refused[tid] = error }  // a thread that ended meanwhile needs nothing
                }
            }
            changed += changedThisPass
            if changedThisPass == 0 { break }
        }
        if let (tid, error) = refused.min(by: { $0.key < $1.key }) {
            throw Failure(description: "cannot set thread \(tid) (and \(refused.count - 1) more) to the \(rawValue) scheduling policy: \(String(cString: strerror(error)))")
        }
        return changed
    }

    static let passes = 5

    /// The policy of thread `tid` of this process (0: the calling thread); nil for another policy
    /// (a real-time one) or a thread that has ended.
    public static func current(thread tid: Int32 = 0) -> ThreadScheduling? {
        switch hearth_thread_policy(tid) {
        case 1: .batch
        case 0: .normal
        default: nil
        }
    }

    /// The ids of this process's threads now (`/proc/self/task`).
    public static func threadIDs() -> [Int32] {
        guard let directory = opendir("/proc/self/task") else { return [] }
        defer { closedir(directory) }
        var ids: [Int32] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if let id = Int32(name) { ids.append(id) }
        }
        return ids
    }
}
