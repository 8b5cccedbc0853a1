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
        guard let lease = try deliveries.nextLeaseEnd(), lease <= now else { return }
        let policies = retryPolicies
        let n = try await deliveries.recoverLeases(owner: nil, now: now, policy: { policies[$0] })
        if n.pending + n.dead > 0 { markAllDirty() }
        if n.dead > 0 { log.warning("deliveries dead-lettered: their process died during their last attempt", ["count": .int(Int64(n.dead))]) }
    }

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
