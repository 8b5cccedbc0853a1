import Foundation
#if canImport(Glibc)
import Glibc
#endif
import HearthModel
import HearthTesting
@_spi(Internals) @testable import HearthRuntime
import Synchronization
import Testing

/// The host-side tasks that serve an invocation's service calls, started in a task on the pool or
/// inline on the calling thread (writes, from a worker's socket reader).
@Suite("Service tasks", .timeLimit(.minutes(1)))
struct ServiceTasksTests {
    /// A body that waits until `open` (bounded: it gives up after 10 s), noting whether it saw cancellation.
    final class Gate: Sendable {
        let opened = Atomic<Bool>(false)
        let sawCancel = Atomic<Bool>(false)
        let ran = Atomic<Int>(0)

        func body() async {
            ran.wrappingAdd(1, ordering: .relaxed)
            for _ in 0..<10_000 where !opened.load(ordering: .relaxed) {
                if Task.isCancelled { sawCancel.store(true, ordering: .relaxed); return }
                try? await Task.sleep(for: .milliseconds(1))
            }
        }
    }

    @Test("an inline task runs on the calling thread until it first suspends; one that never suspends is done and forgotten at once")
    func inlineRunsOnTheCaller() async throws {
        let tasks = ServiceTasks()
        let caller = pthread_self()
        let sameThread = Mutex<Bool?>(nil)
        tasks.start(invocation: 1, inline: true) {
            sameThread.withLock { $0 = pthread_equal(pthread_self(), caller) != 0 }
        }
        #expect(sameThread.withLock { $0 } == true, "the body ran before start returned, on this thread")
        #expect(tasks.runningCount == 0, "a body that finished inline leaves nothing registered")
        // A later task of the same invocation is still registered and cancelled with it.
        let gate = Gate()
        tasks.start(invocation: 1, inline: true) { await gate.body() }
        let ran = gate.ran.load(ordering: .relaxed)
        #expect(ran == 1)
        #expect(tasks.runningCount == 1)
        tasks.cancel(invocation: 1)
        #expect(await eventually { tasks.runningCount == 0 })
        let cancelled = gate.sawCancel.load(ordering: .relaxed)
        #expect(cancelled)
    }

    @Test("an inline task of an invocation already cancelled starts cancelled, as a pooled one does")
    func inlineAfterCancel() async throws {
        let tasks = ServiceTasks()
        tasks.cancel(invocation: 7)
        for inline in [true, false] {
            let gate = Gate()
            tasks.start(invocation: 7, inline: inline) { await gate.body() }
            #expect(await eventually { tasks.runningCount == 0 && gate.ran.load(ordering: .relaxed) == 1 })
            let cancelled = gate.sawCancel.load(ordering: .relaxed)
            #expect(cancelled, "inline: \(inline)")
        }
        // Forgotten, the invocation's id no longer cancels what starts.
        tasks.forget(invocation: 7)
        let gate = Gate()
        tasks.start(invocation: 7, inline: true) { await gate.body() }
        gate.opened.store(true, ordering: .relaxed)
        #expect(await eventually { tasks.runningCount == 0 })
        let cancelled = gate.sawCancel.load(ordering: .relaxed)
        #expect(!cancelled)
    }
}
