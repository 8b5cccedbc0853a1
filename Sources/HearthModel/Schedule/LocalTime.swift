import Foundation

/// A proleptic-Gregorian calendar date with day-number arithmetic
/// (days since 1970-01-01), after Howard Hinnant's `days_from_civil`.
struct CivilDate: Sendable, Hashable {
    var year: Int
    var month: Int  // 1...12
    var day: Int    // 1...31

    static func isLeapYear(_ year: Int) -> Bool {
        year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
    }

    static func daysInMonth(year: Int, month: Int) -> Int {
        switch month {
        case 2: return isLeapYear(year) ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// Days since 1970-01-01 (negative before).
    var dayNumber: Int {
        let y = month <= 2 ? year - 1 : year
        let era = floorDiv(y, 400)
        let yearOfEra = y - era * 400
        let shiftedMonth = (month + 9) % 12  // March = 0
        let dayOfYear = (153 * shiftedMonth + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    init(year: Int, month: Int, day: Int) {
        self.year = year
        self.month = month
        self.day = day
    }

    init(dayNumber: Int) {
        let z = dayNumber + 719_468
        let era = floorDiv(z, 146_097)
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let shiftedMonth = (5 * dayOfYear + 2) / 153
        day = dayOfYear - (153 * shiftedMonth + 2) / 5 + 1
        month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9
        year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
    }

    /// 0 = Sunday ... 6 = Saturday.
    var weekday: Int { Self.weekday(dayNumber: dayNumber) }

    static func weekday(dayNumber: Int) -> Int {
        floorMod(dayNumber + 4, 7)  // 1970-01-01 was a Thursday
    }
}

func floorDiv<T: BinaryInteger>(_ a: T, _ b: T) -> T {
    let q = a / b
    return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q
}

func floorMod<T: BinaryInteger>(_ a: T, _ b: T) -> T {
    a - floorDiv(a, b) * b
}

/// Converts between instants and local wall-clock time in one zone.
///
/// "Wall seconds" are local date-and-time expressed as seconds since
/// 1970-01-01T00:00 *local* (i.e. instant + UTC offset). Only
/// `TimeZone.secondsFromGMT(for:)` is taken from Foundation; resolving
/// nonexistent and repeated local times is done here explicitly, because
/// `Calendar.date(from:)` leaves that policy implementation-defined.
struct ZoneClock: Sendable {
    let zone: TimeZone

    /// UTC offset in seconds in effect at the instant.
    func offset(at instant: Int64) -> Int64 {
        Int64(zone.secondsFromGMT(for: Date(timeIntervalSince1970: Double(instant))))
    }

    /// Local wall-clock seconds at the instant.
    func wallSeconds(at instant: Int64) -> Int64 {
        instant + offset(at: instant)
    }

    /// The instant at which the wall clock shows `wall`:
    /// - if that local time occurs once, that instant;
    /// - if it occurs twice (clocks set back), the FIRST occurrence;
    /// - if it does not occur (clocks set forward), the first instant after
    ///   the gap, i.e. the transition instant itself.
    ///
    /// Non-decreasing in `wall`.
    func instant(forWall wall: Int64) -> Int64 {
        let day: Int64 = 86_400
        var offsets = [offset(at: wall - day), offset(at: wall), offset(at: wall + day)]
        offsets = Array(Set(offsets)).sorted()
        let valid = offsets.map { wall - $0 }.filter { offset(at: $0) == wall - $0 }
        if let first = valid.min() { return first }
        return gapEnd(coveringWall: wall, offsets: offsets)
    }

    /// For a wall time inside a gap: the smallest instant whose wall time is
    /// past `wall`. Binary search; the bracket is at most a few hours wide.
    private func gapEnd(coveringWall wall: Int64, offsets: [Int64]) -> Int64 {
        var low = wall - offsets.last!   // wall(low) < wall
        var high = wall - offsets.first! // wall(high) > wall
        while high - low > 1 {
            let middle = low + (high - low) / 2
            if wallSeconds(at: middle) > wall { high = middle } else { low = middle }
        }
        return high
    }
}
