import Dispatch
import Foundation
@testable import HearthHTTP
import Synchronization
import Testing

/// The guard's deadlines, with made-up instants (the end-to-end behaviour is in ConnectionTests).
@Suite("Connection guard deadlines")
struct ConnectionGuardTests {
    let limits = ConnectionGuard.Limits(headTimeout: .seconds(20), idleTimeout: .seconds(30), readTimeout: .seconds(60),
                                        pressureHeadTimeout: .seconds(1), softLimit: 2)

    @Test("each phase has its deadline; a handler running has none")
    func phases() {
        let guardian = ConnectionGuard(limits: limits)
        let record = guardian.opened(fd: -1)
        #expect(guardian.deadline(record, underPressure: false) == .seconds(20), "a new connection's head")
        #expect(guardian.deadline(record, underPressure: true) == .seconds(1), "past the limit")
        guardian.move(record, to: .readingBody)
        #expect(guardian.deadline(record, underPressure: true) == .seconds(60))
        guardian.move(record, to: .handling)
        #expect(guardian.deadline(record, underPressure: false) == nil)
        guardian.requestCompleted(record, proves: true)
        #expect(guardian.deadline(record, underPressure: true) == .seconds(50), "a proven client keeps its idle time under pressure")
    }

    @Test("a request to a reserved path (/healthz) does not make a connection a proven client")
    func reservedPathsProveNothing() {
        let guardian = ConnectionGuard(limits: limits)
        let record = guardian.opened(fd: -1)
        guardian.requestCompleted(record, proves: false)
        #expect(guardian.deadline(record, underPressure: true) == .seconds(1))
        #expect(guardian.served(record) == 0)
    }

    @Test("pressure is more open connections than the soft limit; closed ones leave the count")
    func pressure() {
        let guardian = ConnectionGuard(limits: limits)
        let records = (0..<3).map { _ in guardian.opened(fd: -1) }
        #expect(guardian.underPressure)
        guardian.closed(records[0])
        guardian.closed(records[0])  // twice: counted once
        #expect(guardian.openCount == 2 && !guardian.underPressure)
        // Past its deadline, but its socket is not a live peer: nothing is shut down.
        #expect(guardian.sweep(now: .now + .seconds(3600)) == 0)
    }
}

@Suite("Repeating timer")
struct RepeatingTimerTests {
    @Test("cancel returns only once a tick already running has finished")
    func cancelWaitsForTheTickInProgress() throws {
        let entered = DispatchSemaphore(value: 0), gate = DispatchSemaphore(value: 0)
        let ticks = Atomic<Int>(0), ended = Atomic<Bool>(false)
        let timer = RepeatingTimer(every: .milliseconds(1)) {
            if ticks.wrappingAdd(1, ordering: .relaxed).oldValue == 0 {
                entered.signal()
                gate.wait()
                ended.store(true, ordering: .relaxed)
            }
        }
        #expect(entered.wait(timeout: .now() + 30) == .success, "the first tick ran")
        // Cancelled from another thread while the first tick is held at the gate.
        let returned = DispatchSemaphore(value: 0)
        let endedWhenCancelReturned = Atomic<Bool>(false)
        Thread.detachNewThread {
            timer.cancel()
            endedWhenCancelReturned.store(ended.load(ordering: .relaxed), ordering: .relaxed)
            returned.signal()
        }
        // A cancel that did not wait would return now, with the tick still held.
        #expect(returned.wait(timeout: .now() + 0.2) == .timedOut, "cancel waits for the tick")
        gate.signal()
        #expect(returned.wait(timeout: .now() + 30) == .success)
        let finished = endedWhenCancelReturned.load(ordering: .relaxed)
        #expect(finished, "the tick had finished when cancel returned")
    }

    @Test("a tick may cancel its own timer without waiting for itself")
    func cancelFromItsOwnTick() {
        let done = DispatchSemaphore(value: 0)
        let slot = Mutex<RepeatingTimer?>(nil)
        let timer = RepeatingTimer(every: .milliseconds(1)) {
            guard let own = slot.withLock({ $0 }) else { return }  // a tick before the slot is filled
            own.cancel()
            done.signal()
        }
        slot.withLock { $0 = timer }
        #expect(done.wait(timeout: .now() + 30) == .success, "the tick returned from cancel")
        slot.withLock { $0 = nil }
    }
}
