import HearthModel
import HearthStore

/// Claiming and running: which lanes have due work and room, claiming under a lease, running each
/// attempt through the invoker, and recording what became of it.
extension DeliveryEngine {
    func markDirty(_ function: String, due: Timestamp?) {
        guard var lane = lanes[function] else { return }
        lane.dirty = true
        if let due { lane.nextDue = lane.nextDue.map { min($0, due) } ?? due }
        lanes[function] = lane
    }

    /// Every lane looks at its queue again (and at what other processes run: that count is only
    /// refreshed by a claim, so it is cleared here, at the poll, for the next claim to read anew).
    func markAllDirty() {
        for name in Array(lanes.keys) {
            lanes[name]?.dirty = true
            lanes[name]?.runningElsewhere = 0
        }
    }

    /// Reads each dirty lane's earliest claimable due time. A read that fails leaves the lane dirty
    /// with the due time it had, so the next pass reads again: taking the failure for "nothing
    /// due" would leave its deliveries waiting until something else marks the lane.
    func refreshDirtyLanes() {
        for (name, lane) in lanes where lane.dirty {
            do {
                lanes[name]?.nextDue = try deliveries.nextClaimableDue(function: name)
                lanes[name]?.dirty = false
            } catch {
                log.error("reading a function's next due delivery failed", ["function": .string(name), "error": .string("\(error)")])
            }
        }
    }

    func claimAndStart(now: Timestamp) async throws {
        refreshDirtyLanes()
        // One delivery at a time, the earliest due first (ties by function name): a system replay's
        // order, so the same recording runs the same way every time.
        if serial, !running.isEmpty { return }
        var requests: [ClaimRequest] = []
        for (name, var lane) in lanes {
            lane.refill(at: now)
            lanes[name] = lane
            guard let due = lane.nextDue, due <= now else { continue }
            let limit = min(lane.capacity, lane.availableTokens, 500)
            if limit > 0 { requests.append(.init(function: name, limit: limit, concurrency: lane.concurrency, rate: lane.rate, burst: lane.burst)) }
        }
        if serial, let first = requests.min(by: { (lanes[$0.function]?.nextDue ?? now, $0.function) < (lanes[$1.function]?.nextDue ?? now, $1.function) }) {
            requests = [ClaimRequest(function: first.function, limit: 1, concurrency: first.concurrency, rate: first.rate, burst: first.burst)]
        }
        guard !requests.isEmpty else { return }
        let leases = Dictionary(requests.map { ($0.function, leaseEnd(lanes[$0.function], now: now)) }, uniquingKeysWith: { a, _ in a })
        let claim = try await deliveries.claim(requests, now: now, owner: node.id) { leases[$0] ?? now }
        for request in requests {
            guard var lane = lanes[request.function] else { continue }
            lane.dirty = true
            // What other processes run and took from the shared bucket, as the database says. Not
            // "all running rows less this lane's": a delivery of this node's that finished and whose
            // outcome is not recorded yet is still a running row, and counted as another process's
            // it would hold the lane below its concurrency until the next poll.
            lane.runningElsewhere = claim.runningElsewhere[request.function] ?? 0
            if let left = claim.tokens[request.function] {
                lane.tokens = left + Double(claim.deliveries.filter { $0.function == request.function }.count)
                lane.refilled = now
            }
            lanes[request.function] = lane
        }
        // As in `startClaimedInRoute`: the claim's calls to a worker leave together.
        SendBatch.run { for delivery in claim.deliveries {
            // A delivery made pending again after its process died (by a process that did not know
            // its policy) whose attempts are used up: dead, not run once more.
            if delivery.attempts > 1, let lane = lanes[delivery.function],
               !lane.retry.allowsRetry(afterAttempts: delivery.attempts - 1, firstAttempt: delivery.firstAttemptTime ?? now, next: delivery.dueTime) {
                deadLetter(delivery, reason: DeliveryErrors.died(attempt: delivery.attempts - 1))
                continue
            }
            start(delivery, now: now)
        } }
    }

    /// What routing may claim as it queues (see `RouteClaim`): the routed functions that have room
    /// here and no rate limit. None in a serial run, whose order is the claim's.
    func routeClaim(for routes: [FeedRoute], now: Timestamp) -> RouteClaim? {
        guard !serial, !stopping else { return nil }
        // A route's deliveries are all its function's.
        let routed = Set(routes.compactMap { $0.deliveries.first?.delivery.function })
        var functions: [String: (limit: Int, concurrency: Int, leaseUntil: Timestamp)] = [:]
        for name in routed {
            guard let lane = lanes[name], lane.rate == nil, lane.capacity > 0 else { continue }
            functions[name] = (min(lane.capacity, 500), lane.concurrency, leaseEnd(lane, now: now))
        }
        return functions.isEmpty ? nil : RouteClaim(owner: node.id, now: now, functions: functions)
    }

    /// Starts what routing claimed, and takes in how many of each function other processes run.
    func startClaimedInRoute(_ result: RouteResult, now: Timestamp) {
        for (function, elsewhere) in result.runningElsewhere { lanes[function]?.runningElsewhere = elsewhere }
        // The batch's calls to a unit's worker leave in one write, after the last is started.
        SendBatch.run { for (delivery, event) in result.claimed { start(delivery, event: event, now: now) } }
    }

    /// A claim's lease: long enough for the longest attempt (a task's own deadline is at most 1800 s).
    func leaseEnd(_ lane: Lane?, now: Timestamp) -> Timestamp {
        now + max(lane?.timeout(dispatchDeadline: nil) ?? .seconds(60), FunctionOptions.dispatchDeadlineRange.upperBound) + configuration.leaseMargin
    }

    /// Records a claimed delivery as dead without running it.
    private func deadLetter(_ delivery: Delivery, reason: String) {
        completions.append((delivery.function, .dead(id: delivery.id, attempt: delivery.attempts, error: reason, status: 500)))
        stats.finished(delivery.function, .dead)
        log.warning("delivery dead-lettered", ["function": .string(delivery.function), "delivery": .int(delivery.id), "error": .string(reason)])
        recordDead(delivery, reason)
    }

    /// A dead letter, for a recording.
    private func recordDead(_ delivery: Delivery, _ reason: String) {
        guard let recorder = invoker.recording.recorder, let event = try? delivery.eventForAttempt() else { return }
        recorder.deadLetter(function: delivery.function, event: event, error: reason)
    }

    /// Runs a claimed delivery; `known` is its event when the engine has it in memory (routing
    /// just queued it), else it is read from the stored payload.
    private func start(_ delivery: Delivery, event known: Boundary.Event? = nil, now: Timestamp) {
        // Its function went away, or the engine is stopping, while it was being claimed: pending
        // again (recorded with the next outcomes), not held under a lease nobody runs.
        guard var lane = lanes[delivery.function], !stopping else {
            completions.append((delivery.function, .released(id: delivery.id, attempt: delivery.attempts)))
            return
        }
        let event: Boundary.Event
        if let known {
            event = known
        } else {
            do { event = try delivery.eventForAttempt() } catch {
                // Nothing can run it: keep it, dead, with the reason, for someone to look at.
                return deadLetter(delivery, reason: "internal: the stored event cannot be read (\(error))")
            }
        }
        lane.take()
        lane.running += 1
        lanes[delivery.function] = lane
        stats.started(delivery.function, latency: triggerLatency(delivery, event))
        running.insert(delivery.id)
        // Sent to the unit from here; the outcome comes back on the thread that reads the unit's
        // answer and waits in `ended` for the engine's next pass. Every start runs inside a
        // `SendBatch` (its callers' loops), so a worker's socket that is full never holds the
        // engine up: the frames go out at the batch's end, and what does not fit then goes out in
        // the background.
        let encoded = delivery.payloadForAttempt(of: event)
        invoker.invoke(lane.entry, event: event, encodedEvent: encoded, timeout: lane.timeout(dispatchDeadline: delivery.dispatchDeadline), delivery: delivery.id,
                       logFields: ["delivery": .int(delivery.id), "attempt": .int(Int64(delivery.attempts))]) { [weak self] outcome in
            self?.attemptEnded(delivery, outcome)
        }
    }

    /// An attempt's end, from whichever thread had it: kept for the engine's next pass, which the
    /// work signal starts (and `settle`, waiting on the invoker's progress, notices).
    private nonisolated func attemptEnded(_ delivery: Delivery, _ outcome: InvocationOutcome) {
        ended.withLock { $0.append((delivery, outcome)) }
        work.notify()
        invoker.progress.notify()
    }

    /// Records the attempts that ended since the last pass (see `finished`).
    func takeEnded() {
        let batch = ended.withLock { all in
            defer { all = [] }
            return all
        }
        for (delivery, outcome) in batch { finished(delivery, outcome) }
    }

    /// Commit (or enqueue) to start of a trigger's first attempt: what the latency benchmark reads.
    private func triggerLatency(_ delivery: Delivery, _ event: Boundary.Event) -> Duration? {
        guard configuration.recordsTriggerLatency, delivery.attempts == 1, let time = event.time else { return nil }
        return clock.now() - time
    }

    /// Takes in one attempt's end: the lane's count, the outcome to record (`flushCompletions`), and
    /// the retry or dead letter it makes.
    private func finished(_ delivery: Delivery, _ outcome: InvocationOutcome) {
        running.remove(delivery.id)
        defer { invoker.progress.notify() }
        let draining = lanes[delivery.function] == nil
        guard var lane = lanes[delivery.function] ?? drainingLanes[delivery.function] else { return }
        lane.running -= 1
        lane.dirty = true
        let now = clock.now()
        switch outcome.result {
        case .success:
            completions.append((delivery.function, .succeeded(id: delivery.id, attempt: delivery.attempts)))
            stats.finished(delivery.function, .succeeded)
        case .failure(let error):
            let status = error.code.httpStatus
            // Kept with the delivery (and shown by `deliveries list`): a handler's message is bounded.
            // A worker's death is kept with its cause (the signal, the invocation), not as "INTERNAL".
            let text = error.isWorkerDeath ? (error.debug ?? error.message) : error.message
            let reason = Printable.truncated("\(error.code.rawValue): \(text)", bytes: 4096)
            let random = self.random
            let due = now + lane.retry.backoff(afterAttempt: delivery.attempts, random: { random.unit() })
            if lane.retry.allowsRetry(afterAttempts: delivery.attempts, firstAttempt: delivery.firstAttemptTime ?? now, next: due) {
                completions.append((delivery.function, .retry(id: delivery.id, attempt: delivery.attempts, due: due, error: reason, status: status)))
                lane.nextDue = lane.nextDue.map { min($0, due) } ?? due
                stats.finished(delivery.function, .failed)
            } else {
                completions.append((delivery.function, .dead(id: delivery.id, attempt: delivery.attempts, error: reason, status: status)))
                stats.finished(delivery.function, .dead)
                log.warning("delivery dead-lettered", ["function": .string(delivery.function), "delivery": .int(delivery.id),
                                                        "event": .string(delivery.eventID), "attempts": .int(Int64(delivery.attempts)), "error": .string(reason)])
                recordDead(delivery, reason)
            }
        }
        if draining {
            drainingLanes[delivery.function] = lane.running > 0 ? lane : nil
        } else {
            lanes[delivery.function] = lane
        }
    }

    func flushCompletions() async {
        let batch = takeCompletions()
        guard !batch.isEmpty else { return }
        do {
            try await deliveries.complete(batch.map(\.outcome), owner: node.id)
            completionsRecorded(batch)
        } catch {
            // Kept, ahead of what ended meanwhile, and recorded again after a pause. Dropped, the
            // rows would stay running until their lease ended, and an attempt that succeeded would
            // then be retried, or dead-lettered as if its process had died. Recording twice is
            // safe: an outcome changes its row only while that row still runs this attempt under
            // this node (after a lease taken back, it changes nothing).
            completions.insert(contentsOf: batch, at: 0)
            completionsRetryAt = clock.now() + DeliveryEngine.completionsRetryDelay
            log.error("recording delivery outcomes failed; trying again in 1 s", ["count": .int(Int64(batch.count)), "error": .string("\(error)")])
        }
    }

    /// The outcomes waiting to be recorded, now taken to record (none while a failed recording's
    /// pause lasts). A caller that fails to record them puts them back ahead of later ones.
    func takeCompletions() -> [(function: String, outcome: DeliveryOutcome)] {
        if let at = completionsRetryAt, clock.now() < at { return [] }
        defer { completions = [] }
        return completions
    }

    /// After `batch` was recorded.
    func completionsRecorded(_ batch: [(function: String, outcome: DeliveryOutcome)]) {
        guard !batch.isEmpty else { return }
        completionsRetryAt = nil
        // What the lanes read from the store before this was recorded is out of date: a retry is
        // pending again at its new due time, a success lets the next change of its document go.
        for function in Set(batch.map(\.function)) { markDirty(function, due: nil) }
    }
}
