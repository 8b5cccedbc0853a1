import HearthModel
import HearthStore

/// A new function table while the engine runs (a unit version activated): lanes, routes and
/// schedules follow it without a restart.
extension DeliveryEngine {
    /// Takes `table` in place of the current one:
    /// - a function kept keeps its lane (what it runs, its bucket) and its feed cursor, with the new
    ///   entry, options and pattern: deliveries started from now run the new version;
    /// - a function added starts at the feed's end (as at start), a new schedule at its next instant;
    /// - a function removed stops: its cursor is dropped (as at start), its schedule no longer fires,
    ///   and its pending deliveries and tasks stay in the database, listed, until dropped or the
    ///   function returns.
    public func update(table: FunctionTable) async throws {
        // Not started yet: `start` takes whatever table the runtime has then.
        guard started else { return }
        let now = clock.now()
        let entries = table.entries.filter { $0.trigger.isEvent }
        let names = Set(entries.map(\.name))
        // Removed functions.
        for name in Array(lanes.keys) where !names.contains(name) {
            if let lane = lanes[name], lane.running > 0 { drainingLanes[name] = lane }
            lanes[name] = nil
            retryPolicies[name] = nil
            log.log(.notice, "function stopped", ["function": .string(name), "reason": "its unit's new version does not declare it"])
        }
        // Routes that go: a removed function's, and the old kind's of a function that changed kind
        // (document ↔ user trigger). They go before the first await, so no routing pass started
        // from now routes for them; their cursors go once no pass that began before is in flight
        // (`removeGoneCursors`): such a pass, still writing its deliveries, would put them back.
        let kinds = Dictionary(entries.map { ($0.name, $0.trigger) }, uniquingKeysWith: { a, _ in a })
        func keeps(_ gone: GoneCursor) -> Bool {
            switch (gone, kinds[gone.function]) {
            case (.document, .document?), (.user, .user?): true
            default: false
            }
        }
        // A function back, with the same kind, before its cursor went keeps it (it resumes there).
        // Should this update fail before its route is registered again, the cursor is queued again.
        let rescued = goneCursors.map(\.cursor).filter(keeps)
        goneCursors.removeAll { keeps($0.cursor) }
        var registered = false
        defer { if !registered { for cursor in rescued where !hasRoute(cursor) { queueGone(cursor) } } }
        for cursor in documentRoutes.map({ GoneCursor.document(function: $0.function) }) where !keeps(cursor) { queueGone(cursor) }
        for cursor in userRoutes.map({ GoneCursor.user(function: $0.function) }) where !keeps(cursor) { queueGone(cursor) }
        documentRoutes.removeAll { !keeps(.document(function: $0.function)) }
        userRoutes.removeAll { !keeps(.user(function: $0.function)) }
        var added: [FunctionEntry] = []
        for entry in entries {
            guard let old = lanes[entry.name] ?? drainingLanes.removeValue(forKey: entry.name) else {
                added.append(entry)
                continue
            }
            var lane = Lane(entry: entry, now: now, defaultConcurrency: configuration.defaultConcurrency)
            lane.running = old.running
            lane.runningElsewhere = old.runningElsewhere
            lane.nextDue = old.nextDue
            lane.tokens = min(lane.burst, old.tokens)
            lane.refilled = old.refilled
            lanes[entry.name] = lane
            retryPolicies[entry.name] = lane.retry
            // The same cursor; the trigger may match differently now.
            switch entry.trigger {
            case .document(let kind, let pattern):
                if let i = documentRoutes.firstIndex(where: { $0.function == entry.name }) {
                    documentRoutes[i] = DocumentRoute(function: entry.name, kind: kind, pattern: try PathPattern(pattern), cursor: documentRoutes[i].cursor)
                } else {
                    added.append(entry)  // it was another kind of function before, or it returns
                }
            case .user(let kind):
                if let i = userRoutes.firstIndex(where: { $0.function == entry.name }) {
                    userRoutes[i] = UserRoute(function: entry.name, kind: kind, cursor: userRoutes[i].cursor)
                } else {
                    added.append(entry)
                }
            case .schedule(let expression, let zone):
                try await registerSchedule(entry.name, Schedule(expression, timeZone: zone), now: now)
            default:
                break
            }
        }
        // Schedules no longer declared stop firing.
        for name in Array(schedules.keys) where table[name].map({ if case .schedule = $0.trigger { false } else { true } }) ?? true {
            schedules[name] = nil
        }
        _ = try await registerRoutes(FunctionTable(entries: added), now: now)
        registered = true
        for entry in added {
            retryPolicies[entry.name] = lanes[entry.name]?.retry
            log.info("function started", ["function": .string(entry.name), "unit": .string(entry.unit.name)])
        }
        markAllDirty()
        work.notify(nil)
        // Last, so that an update that fails (and is rolled back) has deleted nothing; a failure
        // here leaves the cursors queued for the next pass.
        if !inPass {
            await removeGoneCursors(stoppingForPass: true)
            if !goneCursors.isEmpty { work.notify(nil) }  // the rest, at a pass soon
        }
    }

    /// Whether the function of `gone` has a route of that kind (it is back).
    func hasRoute(_ gone: GoneCursor) -> Bool {
        switch gone {
        case .document(let function): documentRoutes.contains { $0.function == function }
        case .user(let function): userRoutes.contains { $0.function == function }
        }
    }

    /// The feed cursor of a function's route that is gone, to delete.
    enum GoneCursor {
        case document(function: String)
        case user(function: String)

        var function: String {
            switch self {
            case .document(let function), .user(let function): function
            }
        }
    }

    /// Queues `cursor` for deletion, under an id of its own.
    func queueGone(_ cursor: GoneCursor) {
        nextGoneID += 1
        goneCursors.append((id: nextGoneID, cursor: cursor))
    }

    /// Deletes the cursors of routes `update` took out (called by it when no routing pass is in
    /// flight, else at the start of the next pass, before it routes), one at a time: each leaves
    /// the queue once deleted (by its id: the same cursor may be rescued and queued again
    /// meanwhile), and is skipped if its function got a route of that kind back. `update`'s call
    /// stops at the cursors queued after a pass began (that pass may still write them back; the
    /// next one deletes them): ids grow in queue order, and the routes of those queued before
    /// were gone when the pass began. A failure is logged, and what failed to be deleted stays
    /// queued for the next pass (the routes are gone already, so nothing else waits for it); a
    /// restart removes whatever is left (`removeCursors`). One call at a time does the work.
    func removeGoneCursors(stoppingForPass: Bool = false) async {
        guard !removingCursors else { return }
        removingCursors = true
        defer { removingCursors = false }
        while let next = goneCursors.first, !(stoppingForPass && inPass && next.id > passGoneHorizon) {
            if !hasRoute(next.cursor) {
                do {
                    switch next.cursor {
                    case .document(let function): try await feed.removeCursor(DeliveryEngine.documentCursor(function))
                    case .user(let function): try await deliveries.removeUserEventCursor(DeliveryEngine.userCursor(function))
                    }
                } catch {
                    log.error("removing feed cursors of functions gone failed; trying again at the next pass", ["error": .string("\(error)")])
                    return
                }
            }
            goneCursors.removeAll { $0.id == next.id }
        }
    }
}
