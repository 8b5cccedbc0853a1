import HearthModel
import HearthStore

/// Schedules: each `onSchedule` function's next instant, and firing it once across every process
/// sharing the database.
extension DeliveryEngine {
    /// Starts tracking a schedule: a new one first fires at its next instant after now; a known one
    /// continues from its last firing (so an instant missed while the host was down fires at once).
    func registerSchedule(_ function: String, _ schedule: Schedule, now: Timestamp) async throws {
        try await deliveries.registerSchedule(function, at: now)
        let last = try deliveries.lastFire(schedule: function) ?? now
        schedules[function] = ScheduleState(function: function, schedule: schedule, next: schedule.nextFire(after: last))
    }

    /// How often the next instants are worked out again from the database.
    static let scheduleRereadInterval = Duration.seconds(1)

    /// Fires each schedule whose next instant has come: once, for the latest instant that has
    /// passed (after downtime, missed instants do not fire one by one).
    func fireSchedules(now: Timestamp) async throws {
        if schedulesReadAt.map({ now - $0 >= DeliveryEngine.scheduleRereadInterval || now < $0 }) ?? true {
            // A failed read (the database busy past its timeout) keeps what the engine knew and
            // does not hold up the rest of the pass; the next one reads again.
            do { try readSchedules(now: now) } catch { log.warning("schedules could not be read again", ["error": .string("\(error)")]) }
        }
        for (name, state) in schedules {
            guard let next = state.next, next <= now else { continue }
            let instant = state.schedule.latestFire(from: next, upTo: now)
            try await fire(name, instant: instant)
            schedules[name]?.next = state.schedule.nextFire(after: instant)
        }
    }

    /// Works out each schedule's next instant again from its stored last firing: another process
    /// may have fired it, or `hearth import` replaced it (an instant the import says was missed
    /// then fires at once, as after downtime).
    func readSchedules(now: Timestamp) throws {
        schedulesReadAt = now
        let stored = try deliveries.lastFires()
        for (name, state) in schedules {
            guard let last = stored[name] else { continue }
            schedules[name]?.next = state.schedule.nextFire(after: last)
        }
    }

    /// Fires schedule `name` for a recorded `instant` (a system replay's input).
    public func fireRecorded(_ name: String, instant: Timestamp) async throws {
        try await fire(name, instant: instant)
    }

    /// Queues the firing of schedule `name` for `instant` (unless some process already did).
    private func fire(_ name: String, instant: Timestamp) async throws {
        let event = Boundary.ScheduleEvent(jobName: name, scheduleTime: instant)
        let fired = try await deliveries.fire(schedule: name, instant: instant,
                                              delivery: NewDelivery(function: name, eventID: instant.rfc3339, event: .schedule(event), dueTime: instant))
        if fired { markDirty(name, due: instant) }
    }
}
