import HearthModel
import Synchronization
import Testing

/// Waits here return only when the signal behaves: the limit ends a broken one.
@Suite(.timeLimit(.minutes(1))) struct WorkSignalTests {
    @Test("a notify before the wait is kept: the wait returns at once, and only once")
    func notifyBeforeWait() async {
        let signal = WorkSignal()
        signal.notify(["a"])
        let clock = ManualClock()
        // Returns without the clock moving (a deadline an hour ahead that nothing advances to).
        await signal.wait(until: clock.now() + .seconds(3600), clock: clock)
        #expect(signal.take().names == ["a"])
        #expect(!signal.takePending())
    }

    @Test("takePending says whether a notify came since the last wait and clears it, so the next wait waits")
    func takePending() async {
        let signal = WorkSignal()
        #expect(!signal.takePending())
        signal.notify()
        #expect(signal.takePending())
        #expect(!signal.takePending())
        // Cleared: a wait now sleeps until its deadline on the clock (or a notify).
        let clock = ManualClock()
        let returned = Atomic<Bool>(false)
        let waiter = Task {
            await signal.wait(until: clock.now() + .seconds(10), clock: clock)
            returned.store(true, ordering: .releasing)
        }
        _ = await clock.changes.wait(atMost: .seconds(30)) { clock.sleeperCount == 1 }
        #expect(clock.sleeperCount == 1)
        let early = returned.load(ordering: .acquiring)
        #expect(!early)
        clock.advance(by: .seconds(10))
        await waiter.value
        let late = returned.load(ordering: .acquiring)
        #expect(late)
        // A notify while nobody waits is pending again; a wait consumes it.
        signal.notify()
        await signal.wait(until: nil, clock: clock)
        #expect(!signal.takePending())
    }
}
