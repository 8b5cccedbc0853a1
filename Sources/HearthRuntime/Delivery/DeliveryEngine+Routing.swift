import HearthModel
import HearthStore

/// Routing: reading the change feed and the user event log, and queueing one delivery per
/// matching trigger function and event, with the function's cursor moved in the same transaction.
extension DeliveryEngine {
    static func documentCursor(_ function: String) -> String { "trigger:" + function }
    static func userCursor(_ function: String) -> String { "user-trigger:" + function }

    /// Places each trigger function's cursor and registers schedules; returns the cursor names in use.
    func registerRoutes(_ table: FunctionTable, now: Timestamp) async throws -> Set<String> {
        var wantedCursors: Set<String> = []
        for entry in table.entries where entry.trigger.isEvent {
            var lane = Lane(entry: entry, now: now, defaultConcurrency: configuration.defaultConcurrency)
            if let existing = lanes[entry.name] {
                // A function a new unit version brings back while deliveries it started still run
                // (see `update`): their count stays, and their outcomes land here.
                lane.running = existing.running
                lane.runningElsewhere = existing.runningElsewhere
                lane.nextDue = existing.nextDue
            }
            lanes[entry.name] = lane
            stats.register(entry.name)
            switch entry.trigger {
            case .document(let kind, let pattern):
                let name = DeliveryEngine.documentCursor(entry.name)
                wantedCursors.insert(name)
                let cursor = try await deliveries.cursor(name, in: .changes)
                documentRoutes.append(DocumentRoute(function: entry.name, kind: kind, pattern: try PathPattern(pattern), cursor: cursor))
            case .user(let kind):
                let name = DeliveryEngine.userCursor(entry.name)
                wantedCursors.insert(name)
                userRoutes.append(UserRoute(function: entry.name, kind: kind, cursor: try await deliveries.cursor(name, in: .userEvents)))
            case .schedule(let expression, let zone):
                try await registerSchedule(entry.name, Schedule(expression, timeZone: zone), now: now)
            default:
                break
            }
        }
        return wantedCursors
    }

    /// Removes feed cursors no declared function uses.
    func removeCursors(except wanted: Set<String>) async throws {
        for (name, _) in try await feed.cursors() where name.hasPrefix("trigger:") && !wanted.contains(name) {
            try await feed.removeCursor(name)
            log.log(.notice, "feed cursor removed", ["cursor": .string(name), "reason": "its function is not declared by any unit"])
        }
        for (name, _) in try deliveries.userEventCursors() where !wanted.contains(name) {
            try await deliveries.removeUserEventCursor(name)
        }
    }

    /// Queues deliveries for one batch of document changes, recording the outcomes that wait in
    /// the same transaction; true when there may be more. Sets `routed` when it ran a routing
    /// transaction.
    func routeDocuments(now: Timestamp, routed: inout Bool) async throws -> Bool {
        guard let floor = documentRoutes.map(\.cursor).min() else { return false }
        let changes = try await feed.changesToRoute(after: floor, limit: configuration.routeBatch)
        guard let last = changes.last else { return false }
        var routes: [FeedRoute] = []
        for route in documentRoutes where route.cursor < last.sequence {
            var deliveries: [(sequence: Int64, delivery: NewDelivery)] = []
            for change in changes where change.sequence > route.cursor && route.kind.accepts(change.kind) {
                guard let params = route.pattern.match(change.path) else { continue }
                deliveries.append((change.sequence, NewDelivery(function: route.function, eventID: String(change.sequence), orderingKey: change.path.description,
                                                                event: .document(DeliveryEngine.documentEvent(change, params: params)),
                                                                dueTime: min(change.commitTime, now))))
            }
            routes.append(FeedRoute(feed: .changes, cursor: DeliveryEngine.documentCursor(route.function), through: last.sequence, deliveries: deliveries))
        }
        // The outcomes waiting to be recorded go in the same transaction (fewer transactions under
        // load; a finished delivery then holds back no routed delivery of its ordering key).
        let outcomes = takeCompletions()
        let result: RouteResult
        do {
            result = try await deliveries.route(routes, claiming: routeClaim(for: routes, now: now), completing: outcomes.map(\.outcome), owner: node.id)
        } catch {
            // Back ahead of what ended meanwhile, for `runDue` to record alone: a routing that
            // fails holds up no outcome.
            completions.insert(contentsOf: outcomes, at: 0)
            throw error
        }
        completionsRecorded(outcomes)
        routed = true
        // Only now that the deliveries and cursors are committed do the cursors move here: to where
        // the database has them, which another process may have taken further.
        for i in documentRoutes.indices {
            if let position = result.cursors[DeliveryEngine.documentCursor(documentRoutes[i].function)] { documentRoutes[i].cursor = position }
        }
        for d in result.added { markDirty(d.function, due: d.dueTime) }
        startClaimedInRoute(result, now: now)
        return changes.count == configuration.routeBatch
    }

    static func documentEvent(_ change: DocumentChange, params: [String: String]) -> Boundary.DocumentEvent {
        Boundary.DocumentEvent(id: String(change.sequence), time: change.commitTime, kind: change.kind, path: change.path,
                               params: params, before: change.before, after: change.after)
    }

    /// Queues deliveries for one batch of user events; true when there may be more.
    func routeUserEvents(now: Timestamp) async throws -> Bool {
        guard let floor = userRoutes.map(\.cursor).min() else { return false }
        let events = try await users.events(after: floor, limit: configuration.routeBatch)
        guard let last = events.last else { return false }
        var routes: [FeedRoute] = []
        for route in userRoutes where route.cursor < last.sequence {
            var deliveries: [(sequence: Int64, delivery: NewDelivery)] = []
            for event in events where event.sequence > route.cursor && event.kind == route.kind {
                let id = "user-\(event.sequence)"
                let message = Boundary.UserEvent(id: id, time: event.time, kind: event.kind, user: event.user)
                deliveries.append((event.sequence, NewDelivery(function: route.function, eventID: id, orderingKey: event.user.uid,
                                                               event: .user(message), dueTime: min(event.time, now))))
            }
            routes.append(FeedRoute(feed: .userEvents, cursor: DeliveryEngine.userCursor(route.function), through: last.sequence, deliveries: deliveries))
        }
        let (added, cursors) = try await deliveries.route(routes)
        for i in userRoutes.indices {
            if let position = cursors[DeliveryEngine.userCursor(userRoutes[i].function)] { userRoutes[i].cursor = position }
        }
        for d in added { markDirty(d.function, due: d.dueTime) }
        return events.count == configuration.routeBatch
    }
}
