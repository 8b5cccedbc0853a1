import Foundation
import HearthModel
import HearthTesting
@_spi(Internals) @testable import HearthRuntime
import Synchronization
import Testing

@Suite("Shared deadlines")
struct DeadlinesTests {
    let start = Timestamp(seconds: 1_800_000_000)

    @Test("actions run at their deadlines in order, on one timer; cancelled ones never run")
    func order() async throws {
        let clock = ManualClock(start)
        let deadlines = Deadlines(clock: clock)
        let fired = Mutex<[Int]>([])
        let changed = Changes()
        for (i, seconds) in [30, 10, 20, 40].enumerated() {
            _ = deadlines.schedule(at: start + .seconds(seconds)) { fired.withLock { $0.append(i) }; changed.changed() }
        }
        let cancelled = deadlines.schedule(at: start + .seconds(15)) { fired.withLock { $0.append(99) } }
        deadlines.cancel(cancelled)
        try await until(clock.changes) { clock.sleeperCount == 1 }  // one timer, however many deadlines
        #expect(clock.nextDeadline == start + .seconds(10))
        clock.advance(by: .seconds(25))
        try await until(changed) { fired.withLock { $0 } == [1, 2] }
        try await until(clock.changes) { clock.nextDeadline == start + .seconds(30) }
        clock.advance(by: .seconds(100))
        try await until(changed) { fired.withLock { $0 } == [1, 2, 0, 3] }
        try await until(clock.changes) { clock.sleeperCount == 0 }
        #expect(deadlines.pendingCount == 0)
    }

    @Test("an earlier deadline re-arms the timer")
    func rearm() async throws {
        let clock = ManualClock(start)
        let deadlines = Deadlines(clock: clock)
        let fired = Mutex<[String]>([])
        let changed = Changes()
        _ = deadlines.schedule(at: start + .seconds(60)) { fired.withLock { $0.append("late") }; changed.changed() }
        try await until(clock.changes) { clock.nextDeadline == start + .seconds(60) }
        _ = deadlines.schedule(at: start + .seconds(5)) { fired.withLock { $0.append("early") }; changed.changed() }
        try await until(clock.changes) { clock.nextDeadline == start + .seconds(5) && clock.sleeperCount == 1 }
        clock.advance(by: .seconds(5))
        try await until(changed) { fired.withLock { $0 } == ["early"] }
        clock.advance(by: .seconds(55))
        try await until(changed) { fired.withLock { $0 } == ["early", "late"] }
    }

    @Test("on a virtual clock the timer stops as soon as nothing is pending")
    func stopsWhenIdle() async throws {
        let clock = ManualClock(start)
        let deadlines = Deadlines(clock: clock)
        let tokens = (0..<3).map { i in deadlines.schedule(at: start + .seconds(10 + i)) {} }
        try await until(clock.changes) { clock.sleeperCount == 1 }
        for t in tokens { deadlines.cancel(t) }
        try await until(clock.changes) { clock.sleeperCount == 0 }
        deadlines.cancel(tokens[0])  // cancelling twice is harmless
        let ran = Atomic<Bool>(false)
        let changed = Changes()
        _ = deadlines.schedule(at: start + .seconds(1)) { ran.store(true, ordering: .relaxed); changed.changed() }
        clock.advance(by: .seconds(1))
        try await until(changed) { ran.load(ordering: .relaxed) }
    }

    @Test("many cancelled deadlines on a real clock do not pile up")
    func staleEntriesAreDropped() async throws {
        let deadlines = Deadlines(clock: SystemClock())
        let now = SystemClock().now()
        for _ in 0..<10_000 { deadlines.cancel(deadlines.schedule(at: now + .seconds(3600)) {}) }
        #expect(deadlines.pendingCount == 0)
        #expect(deadlines.heapCount <= 1025)
    }
}
