import HearthModel
import HearthStore

/// Housekeeping: leases of dead processes, task ids past their dedupe window, and the feeds past
/// their retention.
extension DeliveryEngine {
    /// At most this many pruning transactions per pass, so a large backlog never holds up routing
    /// and claiming for long; the rest waits for the next pass.
    static let pruneBatchesPerPass = 8

    /// Takes back deliveries whose lease ended (their process died): pending again, or dead when
    /// their function's policy allows no attempt after the one that died.
    func recoverLapsedLeases(now: Timestamp) async throws {
        guard let lease = try earliestLeaseEnd(now: now), lease <= now else { return }
        let policies = retryPolicies
        leaseRead = nil
        let n = try await deliveries.recoverLeases(owner: nil, now: now, policy: { policies[$0] })
        if n.pending + n.dead > 0 { markAllDirty() }
        if n.dead > 0 { log.warning("deliveries dead-lettered: their process died during their last attempt", ["count": .int(Int64(n.dead))]) }
    }

    /// The earliest end of a lease among running deliveries (of any process), read from the store
    /// at most once per `leaseReadInterval` of the engine's clock while the last read found none
    /// ended by `now`. Every pass asks (recovery, then the wait's deadline), and under load passes
    /// come thousands of times a second, each read a reader transaction of its own (about 1% of
    /// the CPU of write+trigger, `Scripts/bench/peers`). A claim's lease runs for at least the
    /// longest dispatch deadline (`leaseEnd(_:now:)`, 30 minutes), so a lease taken after a read
    /// ends long after the interval: only a lease shorter than the interval could lapse before
    /// the next read. One case waits longer: an engine that goes idle right after a read does not
    /// see a lease another process took in that second until it wakes, at the latest at its next
    /// poll (`Configuration.pollInterval`, a second by default), which is also when it would see
    /// that process's new deliveries.
    func earliestLeaseEnd(now: Timestamp) throws -> Timestamp? {
        if let last = leaseRead, now >= last.at, now - last.at < DeliveryEngine.leaseReadInterval,
           last.end.map({ $0 > now }) ?? true {
            return last.end
        }
        let end = try deliveries.nextLeaseEnd()
        leaseRead = (now, end)
        leaseReads += 1
        return end
    }

    /// How long a read of the earliest lease end stands (`earliestLeaseEnd(now:)`).
    static let leaseReadInterval = Duration.seconds(1)

    /// Hourly: task ids past their dedupe window, and the change feed and user event log past
    /// their retention once every cursor has passed them, a short transaction at a time with other
    /// work let in between.
    func housekeeping(now: Timestamp) async throws {
        if !pruneBacklog, let last = lastPrune, now - last < .seconds(3600) { return }
        if !pruneBacklog {
            lastPrune = now
            try await deliveries.pruneTaskIDs(enqueuedBefore: now - configuration.taskDedupeWindow)
        }
        guard let retention = configuration.feedRetention else { return }
        let batch = configuration.pruneBatch
        var pruned = 0, batches = 0
        for feedKind in [Feed.changes, .userEvents] {
            while batches < DeliveryEngine.pruneBatchesPerPass {
                let n = feedKind == .changes
                    ? try await feed.pruneChanges(committedBefore: now - retention, limit: batch)
                    : try await deliveries.pruneUserEvents(loggedBefore: now - retention, limit: batch)
                pruned += n
                batches += 1
                if n < batch { break }
            }
        }
        // Out of budget: there may be more (at worst one pass finds nothing).
        pruneBacklog = batches >= DeliveryEngine.pruneBatchesPerPass
        if pruneBacklog { work.notify() }
        if pruned > 0 { log.info("feeds pruned", ["rows": .int(Int64(pruned)), "retentionHours": .double(retention.secondsDouble / 3600)]) }
    }
}
