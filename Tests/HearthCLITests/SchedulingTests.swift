import Foundation
import HearthRuntime
import HearthTesting
import Testing

/// `[server] scheduling`: `hearth serve` sets every one of its threads, and its workers' threads,
/// to the configured Linux scheduling policy (`ThreadScheduling`). Read from outside, as any
/// process may (`sched_getscheduler` on each thread id in /proc/<pid>/task).
@Suite("hearth serve's scheduling policy")
struct SchedulingTests {
    /// The policy of every thread of `pid`, by thread id (a thread that ended between the listing
    /// and the reading is left out; one under another policy is there as nil).
    func policies(of pid: pid_t) -> [Int32: ThreadScheduling?] {
        var found: [Int32: ThreadScheduling?] = [:]
        for tid in threadIDs(of: pid) {
            let policy = ThreadScheduling.current(thread: tid)
            if policy == nil, !FileManager.default.fileExists(atPath: "/proc/\(pid)/task/\(tid)") { continue }
            found[tid] = policy
        }
        return found
    }

    func serve(_ dir: TempDir, scheduling: String?) async throws -> ChildProcess {
        let line = scheduling.map { "scheduling = \"\($0)\"\n" } ?? ""
        _ = dir.write("runtime.toml", "units_dir = \"\(buildDirectory)\"\nunits = [\"EchoUnit\"]\n[server]\nport = 0\n\(line)")
        let child = try ChildProcess(["serve"], directory: dir.path)
        _ = try await child.servingPort()
        return child
    }

    @Test("by default every thread of the host and of its worker runs under SCHED_BATCH, those started after the policy was set too",
          arguments: [nil, "batch"])
    func batchByDefault(setting: String?) async throws {
        // The test process itself runs under the normal policy: whatever the server's threads have
        // is the server's doing, not inherited from here.
        #expect(ThreadScheduling.current() == .normal)
        let dir = TempDir()
        let child = try await serve(dir, scheduling: setting)
        let host = policies(of: child.process.pid)
        // libmicrohttpd's polling threads, the store's writer and readers, the worker's socket
        // readers: more than a handful, all started after `serve` set the policy.
        #expect(host.count >= 5, "threads: \(host.count)")
        #expect(host.values.allSatisfy { $0 == .batch }, "host threads: \(host)")
        let workers = child.workers
        #expect(workers.count == 1, "the echo unit's worker")
        for worker in workers {
            let threads = policies(of: worker)
            #expect(!threads.isEmpty)
            #expect(threads.values.allSatisfy { $0 == .batch }, "worker \(worker)'s threads: \(threads)")
        }
        child.signal(SIGTERM)
        #expect(try await child.waitForExit() == 0)
    }

    @Test("scheduling = \"normal\" leaves every thread of the host and of its worker under SCHED_OTHER")
    func normalWhenConfigured() async throws {
        let dir = TempDir()
        let child = try await serve(dir, scheduling: "normal")
        let host = policies(of: child.process.pid)
        #expect(host.count >= 5)
        #expect(host.values.allSatisfy { $0 == .normal }, "host threads: \(host)")
        for worker in child.workers {
            #expect(policies(of: worker).values.allSatisfy { $0 == .normal })
        }
        child.signal(SIGTERM)
        #expect(try await child.waitForExit() == 0)
    }
}
