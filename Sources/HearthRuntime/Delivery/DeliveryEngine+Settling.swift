import HearthModel

/// Settling, for tests and replay with the loop off: running what is due until nothing moves
/// without time moving.
extension DeliveryEngine {
    /// Runs until nothing is due at the clock's current time and every running delivery is either
    /// finished or waiting for time (its handler sleeps on the host clock until a later instant):
    /// every delivery due now has been attempted, and retries due now too.
    ///
    /// Known from the engine's and the invoker's own state: between passes it waits for the
    /// invoker's progress signal (an invocation ended or began waiting for time), never polling.
    /// Gives up, logging, after `wallSeconds` of real time spent waiting for handlers that neither
    /// finish nor wait for time (a hung handler must fail a test, not stall it).
    public func settle(wallSeconds: Double = 60) async {
        let giveUp = ContinuousClock.now + .seconds(wallSeconds)
        while ContinuousClock.now < giveUp {
            await runDue(at: clock.now())
            // Outcomes still to record: another pass, unless recording them failed and waits for time.
            if !completions.isEmpty && completionsRetryAt == nil { continue }
            let now = clock.now()
            let dueNow = (await nextDeadline()).map { $0 <= now } ?? false
            if running.isEmpty {
                guard dueNow else { return }
                continue
            }
            if allRunningWaitForTime(now: now) {
                // Due work with room: another pass. Otherwise nothing moves until time does.
                guard dueNow, hasRoomForDueWork(now: now) else { return }
                continue
            }
            await invoker.progress.wait(atMost: giveUp - ContinuousClock.now)
        }
        log.warning("settle gave up: deliveries neither finish nor wait for time", ["running": .int(Int64(running.count))])
    }

    /// Whether every running delivery's handler sleeps on the host clock until after `now`, and
    /// is not past a timeout that is about to end the attempt.
    private func allRunningWaitForTime(now: Timestamp) -> Bool {
        let invocations = invoker.deliveryInvocations
        guard invocations.count == running.count else { return false }
        return invocations.values.allSatisfy { record in
            guard let until = record.sleepingUntil, until > now else { return false }
            return record.deadline.map { $0 > now } ?? true
        }
    }

    /// Whether some lane with due work could start more now.
    private func hasRoomForDueWork(now: Timestamp) -> Bool {
        lanes.values.contains { lane in
            guard lane.capacity > 0, let due = lane.nextDue, due <= now else { return false }
            var l = lane
            l.refill(at: now)
            return l.availableTokens > 0
        }
    }
}
