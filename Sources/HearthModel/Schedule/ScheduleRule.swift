/// When a schedule fires: on local calendar days and minutes (cron, and the English forms tied to
/// the clock), or a fixed elapsed time after its previous firing (English `every N minutes` /
/// `every N hours` without `from…to` or `synchronized`: App Engine's "end-time interval").
enum Timing: Sendable, Hashable {
    case calendar(ScheduleRule)
    case interval(seconds: Int64)
}

/// The compiled form of a calendar schedule expression: which local calendar days
/// fire, and at which local minutes of such a day.
///
/// Both the cron and the English syntax compile to this, so the next-fire
/// search (in Schedule.swift) is written once.
struct ScheduleRule: Sendable, Hashable {
    var days: DayFilter
    var minutes: MinuteSet

    /// True when no (month, day) combination can ever match, e.g. `0 0 30 2 *`.
    var neverFires: Bool { !days.canEverMatch || minutes.isEmpty }
}

/// A set of local minutes of the day, `0..<1440`.
struct MinuteSet: Sendable, Hashable {
    static let minutesPerDay = 1440
    private var words = [UInt64](repeating: 0, count: (minutesPerDay + 63) / 64)

    init() {}

    /// Every combination of `hours` (bits 0...23) and `minutes` (bits 0...59).
    init(hours: UInt64, minutes: UInt64) {
        for hour in 0..<24 where hours & (1 << hour) != 0 {
            for minute in 0..<60 where minutes & (1 << minute) != 0 {
                insert(hour * 60 + minute)
            }
        }
    }

    mutating func insert(_ minuteOfDay: Int) {
        precondition((0..<Self.minutesPerDay).contains(minuteOfDay))
        words[minuteOfDay >> 6] |= 1 << UInt64(minuteOfDay & 63)
    }

    func contains(_ minuteOfDay: Int) -> Bool {
        words[minuteOfDay >> 6] & (1 << UInt64(minuteOfDay & 63)) != 0
    }

    var isEmpty: Bool { words.allSatisfy { $0 == 0 } }

    /// The smallest member `>= minuteOfDay`, or nil.
    func first(atOrAfter minuteOfDay: Int) -> Int? {
        guard minuteOfDay < Self.minutesPerDay else { return nil }
        var index = max(minuteOfDay, 0) >> 6
        var word = words[index] & (~0 << UInt64(max(minuteOfDay, 0) & 63))
        while true {
            if word != 0 { return index << 6 + word.trailingZeroBitCount }
            index += 1
            guard index < words.count else { return nil }
            word = words[index]
        }
    }
}

/// Which local calendar days fire.
///
/// - `daysOfMonth` nil means "any day of month" (cron `*`); likewise `weekdays`.
/// - When both are set, a day matches if EITHER matches (Vixie cron rule).
/// - `ordinals` (bits 1...5) narrows `weekdays` to the Nth occurrences of that
///   weekday in the month ("2nd monday").
struct DayFilter: Sendable, Hashable {
    /// Bits 1...12.
    var months: UInt16 = DayFilter.allMonths
    /// Bits 1...31, or nil for unrestricted.
    var daysOfMonth: UInt32? = nil
    /// Bits 0...6 (0 = Sunday), or nil for unrestricted.
    var weekdays: UInt8? = nil
    /// Bits 1...5, or nil for "every occurrence". Only meaningful with `weekdays`.
    var ordinals: UInt8? = nil

    static let allMonths: UInt16 = 0b1_1111_1111_1110

    /// The matching days of one month as a bit mask (bit d = day d).
    func matchingDays(year: Int, month: Int) -> UInt32 {
        guard months & (1 << UInt16(month)) != 0 else { return 0 }
        let length = CivilDate.daysInMonth(year: year, month: month)
        let wholeMonth = UInt32((1 << (length + 1)) - 2)  // bits 1...length
        let byDay = daysOfMonth.map { $0 & wholeMonth }
        let byWeekday = weekdays.map { weekdayDays($0, year: year, month: month, length: length) }
        switch (byDay, byWeekday) {
        case (nil, nil): return wholeMonth
        case (let days?, nil): return days
        case (nil, let days?): return days
        case (let a?, let b?): return a | b
        }
    }

    /// Days of the month falling on one of `weekdays` (and, if set, being
    /// the requested occurrence of that weekday).
    private func weekdayDays(_ weekdays: UInt8, year: Int, month: Int, length: Int) -> UInt32 {
        let firstWeekday = CivilDate(year: year, month: month, day: 1).weekday
        var mask: UInt32 = 0
        for weekday in 0..<7 where weekdays & (1 << UInt8(weekday)) != 0 {
            let firstDay = 1 + (weekday - firstWeekday + 7) % 7
            for occurrence in 1...5 {
                let day = firstDay + 7 * (occurrence - 1)
                guard day <= length else { break }
                if let ordinals, ordinals & (1 << UInt8(occurrence)) == 0 { continue }
                mask |= 1 << UInt32(day)
            }
        }
        return mask
    }

    /// False only for a day-of-month restriction that no selected month can
    /// ever satisfy (and no weekday alternative), e.g. the 30th of February.
    var canEverMatch: Bool {
        guard months != 0 else { return false }
        guard weekdays == nil, let daysOfMonth else { return true }
        // Leap year 2000 gives every month its maximum length.
        for month in 1...12 where months & (1 << UInt16(month)) != 0 {
            let length = CivilDate.daysInMonth(year: 2000, month: month)
            if daysOfMonth & UInt32((1 << (length + 1)) - 2) != 0 { return true }
        }
        return false
    }
}
