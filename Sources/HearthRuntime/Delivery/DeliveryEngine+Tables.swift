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
        // Their routes go before the first await, so a routing pass that runs meanwhile (the engine
        // is an actor: it may, while this waits for the store) routes nothing more for them and
        // cannot write their cursors back after they are removed.
        let removedDocumentRoutes = documentRoutes.filter { !names.contains($0.function) }
        let removedUserRoutes = userRoutes.filter { !names.contains($0.function) }
        documentRoutes.removeAll { !names.contains($0.function) }
        userRoutes.removeAll { !names.contains($0.function) }
        for route in removedDocumentRoutes { try await feed.removeCursor(DeliveryEngine.documentCursor(route.function)) }
        for route in removedUserRoutes { try await deliveries.removeUserEventCursor(DeliveryEngine.userCursor(route.function)) }
        var added: [FunctionEntry] = []
        for entry in entries {
            // A function that changed kind (document ↔ user trigger) keeps no route of the old kind.
            if case .document = entry.trigger {} else { documentRoutes.removeAll { $0.function == entry.name } }
            if case .user = entry.trigger {} else { userRoutes.removeAll { $0.function == entry.name } }
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
        for entry in added {
            retryPolicies[entry.name] = lanes[entry.name]?.retry
            log.info("function started", ["function": .string(entry.name), "unit": .string(entry.unit.name)])
        }
        markAllDirty()
        work.notify(nil)
    }
}
