import Foundation

/// A parsed schedule in a time zone.
///
/// Accepts Unix cron (`"*/5 * * * mon-fri"`, `"@daily"`) and App Engine style
/// English (`"every 5 minutes"`, `"every monday 09:00"`,
/// `"1st monday of sep,oct 17:00"`). Matching happens on local wall-clock
/// minutes in `timeZone`; firings are always at second 0. Local times skipped
/// by a DST gap fire once at the end of the gap; local times repeated by a DST
/// overlap fire only at their first occurrence.
public struct Schedule: Sendable, Hashable, CustomStringConvertible {
    /// The expression exactly as given.
    public let expression: String
    /// IANA time zone identifier as given, e.g. "Asia/Seoul".
    public let timeZone: String

    private let rule: ScheduleRule
    private let clock: ZoneClock

    /// The longest accepted expression, in characters.
    public static let maximumLength = 500

    /// Parses `expression` for `timeZone`.
    /// - Throws: `ScheduleError` for an empty, over-long or malformed
    ///   expression, or an unknown time zone.
    public init(_ expression: String, timeZone: String = "UTC") throws(ScheduleError) {
        self.expression = expression
        self.timeZone = timeZone
        do {
            rule = try Self.parse(expression)
        } catch {
            throw ScheduleError(expression: expression, message: error.message, column: error.column)
        }
        guard let zone = TimeZone(identifier: timeZone) else {
            throw ScheduleError(expression: expression, message: "unknown time zone '\(timeZone)'")
        }
        clock = ZoneClock(zone: zone)
    }

    private static func parse(_ expression: String) throws(ParseFailure) -> ScheduleRule {
        if expression.count > maximumLength {
            throw ParseFailure("expression is longer than \(maximumLength) characters", at: nil)
        }
        let tokens = Token.split(expression)
        guard let first = tokens.first else {
            throw ParseFailure("empty schedule expression", at: nil)
        }
        if first.text.hasPrefix("@") { return try CronParser.parseMacro(tokens) }
        let firstWord = String(first.lowered.prefix { $0 != "," })  // "2nd,third ..."
        if EnglishParser.isEnglishStart(firstWord) { return try EnglishParser.parse(expression) }
        if first.text.first!.isLetter {
            throw ParseFailure("expected 5 cron fields, an @macro, 'every ...' or an ordinal such as '1st', "
                + "found '\(first.text)'", at: first.column)
        }
        return try CronParser.parse(tokens)
    }

    public var description: String { "'\(expression)' in \(timeZone)" }

    public static func == (lhs: Schedule, rhs: Schedule) -> Bool {
        lhs.expression == rhs.expression && lhs.timeZone == rhs.timeZone
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(expression)
        hasher.combine(timeZone)
    }

    // MARK: - Next fire time

    /// Searches start no earlier than two days before 0001-01-01 and end with year 9999.
    private static let earliestSeconds = Int64(CivilDate(year: 1, month: 1, day: 1).dayNumber - 2) * 86_400
    private static let lastYear = 9999

    /// The first firing instant strictly after `instant`
    /// (nil only if none exists up to the end of year 9999).
    public func nextFire(after instant: Timestamp) -> Timestamp? {
        guard !rule.neverFires else { return nil }
        // Firings are whole seconds, so "after s.nnn" is the same as "after s".
        let after = max(instant.seconds, Self.earliestSeconds)
        guard after < Int64(CivilDate(year: Self.lastYear + 1, month: 1, day: 1).dayNumber) * 86_400
        else { return nil }

        // Every wall time at or before the wall clock reading at `after` maps
        // to an instant <= `after` (the wall->instant map is monotone), so the
        // search starts at the next whole local minute.
        let wall = clock.wallSeconds(at: after)
        var cursor = LocalMinute(wallSeconds: (floorDiv(wall, 60) + 1) * 60)
        while let candidate = nextMatch(atOrAfter: cursor) {
            let fire = clock.instant(forWall: candidate.wallSeconds)
            // Only a repeated (second-occurrence) hour can make this fail.
            if fire > after { return Timestamp(seconds: fire, nanos: 0) }
            cursor = candidate.advanced()
        }
        return nil
    }

    /// The next `count` firings after `instant`, in order (fewer if the
    /// schedule runs out before year 10000).
    public func nextFires(after instant: Timestamp, count: Int) -> [Timestamp] {
        var fires: [Timestamp] = []
        var current = instant
        while fires.count < count, let next = nextFire(after: current) {
            fires.append(next)
            current = next
        }
        return fires
    }

    /// The first local minute `>= start` matching the rule, searching month
    /// by month, then day by day within matching days of the month, then the
    /// minute set of a matching day. Never iterates over minutes of the day.
    private func nextMatch(atOrAfter start: LocalMinute) -> LocalMinute? {
        let startDate = CivilDate(dayNumber: start.dayNumber)
        var (year, month) = (startDate.year, startDate.month)
        var firstDay = startDate.day
        while year <= Self.lastYear {
            var days = rule.days.matchingDays(year: year, month: month) & ~UInt32((1 << firstDay) - 1)
            while days != 0 {
                let day = days.trailingZeroBitCount
                days &= days - 1
                let date = CivilDate(year: year, month: month, day: day)
                let fromMinute = date.dayNumber == start.dayNumber ? start.minuteOfDay : 0
                if let minute = rule.minutes.first(atOrAfter: fromMinute) {
                    return LocalMinute(dayNumber: date.dayNumber, minuteOfDay: minute)
                }
            }
            (year, month) = month == 12 ? (year + 1, 1) : (year, month + 1)
            firstDay = 1
        }
        return nil
    }
}

/// A local wall-clock minute: a civil day plus a minute of that day.
struct LocalMinute: Sendable, Hashable {
    var dayNumber: Int
    var minuteOfDay: Int

    init(dayNumber: Int, minuteOfDay: Int) {
        self.dayNumber = dayNumber
        self.minuteOfDay = minuteOfDay
    }

    init(wallSeconds: Int64) {
        dayNumber = Int(floorDiv(wallSeconds, 86_400))
        minuteOfDay = Int(floorMod(wallSeconds, 86_400) / 60)
    }

    var wallSeconds: Int64 { Int64(dayNumber) * 86_400 + Int64(minuteOfDay) * 60 }

    func advanced() -> LocalMinute {
        minuteOfDay + 1 < MinuteSet.minutesPerDay
            ? LocalMinute(dayNumber: dayNumber, minuteOfDay: minuteOfDay + 1)
            : LocalMinute(dayNumber: dayNumber + 1, minuteOfDay: 0)
    }
}
