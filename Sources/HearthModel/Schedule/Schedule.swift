import Foundation

/// A parsed schedule in a time zone.
///
/// Accepts Unix cron (`"*/5 * * * mon-fri"`, `"@daily"`) and App Engine style
/// English (`"every 5 minutes"`, `"every monday 09:00"`, `"1st monday of sep,oct 17:00"`,
/// `"1,15 of month 09:00"`), as Cloud Scheduler does for Firebase's `onSchedule`, in an IANA time
/// zone (`timeZone`, default UTC).
///
/// Calendar schedules (cron, and English forms naming days, times, windows or `synchronized`)
/// match local wall-clock minutes; firings are at second 0. One DST policy for both syntaxes: a
/// local time skipped by a DST gap fires once, at the first valid instant after it (the end of the
/// gap); a local time that happens twice in an overlap fires once, at its first occurrence.
/// A plain English interval (`every 5 minutes`, `every 25 hours`) is elapsed time instead: each
/// firing comes that long after the previous one, whatever the wall clock does.
public struct Schedule: Sendable, Hashable, CustomStringConvertible {
    /// The expression exactly as given.
    public let expression: String
    /// IANA time zone identifier as given, e.g. "Asia/Seoul".
    public let timeZone: String

    private let timing: Timing
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
            timing = try Self.parse(expression)
        } catch {
            throw ScheduleError(expression: expression, message: error.message, column: error.column)
        }
        guard let zone = Self.zone(named: timeZone) else {
            throw ScheduleError(expression: expression, message: "unknown time zone '\(timeZone)' (expected an IANA tz database name, such as Asia/Seoul or UTC)")
        }
        clock = ZoneClock(zone: zone)
    }

    /// IANA names without a slash (legacy and backward-compatible zones). Foundation on Linux also
    /// takes offset strings such as `UTC+9` and `GMT+0900` as identifiers; Cloud Scheduler wants a
    /// tz database name, so those are refused.
    static let slashlessZones: Set<String> = [
        "UTC", "UCT", "GMT", "GMT0", "GMT+0", "GMT-0", "Greenwich", "Universal", "Zulu", "EST", "MST", "HST", "EST5EDT", "CST6CDT",
        "MST7MDT", "PST8PDT", "CET", "EET", "WET", "MET", "Cuba", "Egypt", "Eire", "GB", "GB-Eire", "Hongkong", "Iceland",
        "Iran", "Israel", "Jamaica", "Japan", "Kwajalein", "Libya", "NZ", "NZ-CHAT", "Navajo", "PRC", "Poland", "Portugal",
        "ROC", "ROK", "Singapore", "Turkey", "W-SU",
    ]

    /// The zone an IANA name (or Cloud Scheduler's `utc`) names, nil for anything else.
    static func zone(named name: String) -> TimeZone? {
        if name == "utc" { return TimeZone(identifier: "UTC") }
        guard name.utf8.allSatisfy({ b in (b | 0x20 >= 97 && b | 0x20 <= 122) || (b >= 48 && b <= 57) || "/_+-".utf8.contains(b) }),
              name.contains("/") || slashlessZones.contains(name) else { return nil }
        return TimeZone(identifier: name)
    }

    private static func parse(_ expression: String) throws(ParseFailure) -> Timing {
        if expression.count > maximumLength {
            throw ParseFailure("expression is longer than \(maximumLength) characters", at: nil)
        }
        let tokens = Token.split(expression)
        guard let first = tokens.first else {
            throw ParseFailure("empty schedule expression", at: nil)
        }
        if first.text.hasPrefix("@") { return .calendar(try CronParser.parseMacro(tokens)) }
        let firstWord = String(first.lowered.prefix { $0 != "," })  // "2nd,third ..."
        if EnglishParser.isEnglishStart(firstWord) { return try EnglishParser.parse(expression) }
        // "1,15 of month 09:00": cron never has the word `of`.
        if first.text.first!.isASCIIDigit && tokens.contains(where: { $0.lowered == "of" }) { return try EnglishParser.parse(expression) }
        if first.text.first!.isLetter {
            throw ParseFailure("expected 5 cron fields, an @macro, 'every ...' or an ordinal such as '1st', "
                + "found '\(first.text)'", at: first.column)
        }
        return .calendar(try CronParser.parse(tokens))
    }

    /// The elapsed time between firings of a plain interval schedule; nil for calendar schedules.
    public var interval: Duration? {
        if case .interval(let seconds) = timing { return .seconds(seconds) }
        return nil
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
    /// For a plain interval, `instant` is the previous firing and the next is `interval` later.
    public func nextFire(after instant: Timestamp) -> Timestamp? {
        let rule: ScheduleRule
        switch timing {
        case .interval(let seconds): return instant + .seconds(seconds)
        case .calendar(let r): rule = r
        }
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
        while let candidate = nextMatch(rule, atOrAfter: cursor) {
            let fire = clock.instant(forWall: candidate.wallSeconds)
            // Only a repeated (second-occurrence) hour can make this fail.
            if fire > after { return Timestamp(seconds: fire, nanos: 0) }
            cursor = candidate.advanced()
        }
        return nil
    }

    /// The latest firing at or before `now`, given that `first` (at or before `now`) is one: what
    /// fires, once, after downtime. An interval steps from `first` by arithmetic; a calendar
    /// schedule looks back from `now` over a doubling window instead of stepping through every
    /// instant since `first` (a minute schedule after a month of downtime has 40,000 of them).
    public func latestFire(from first: Timestamp, upTo now: Timestamp) -> Timestamp {
        guard first < now else { return first }
        if case .interval(let seconds) = timing {
            // On time (less than a whole interval late): the instant itself. Later than that, a
            // firing was missed: fire now, and the next one an interval after it.
            return now - first < .seconds(seconds) ? first : now
        }
        var lookback = Duration.seconds(3600)
        while true {
            let from = max(first, now - lookback)
            if var instant = from == first ? first : nextFire(after: from), instant <= now {
                while let following = nextFire(after: instant), following <= now { instant = following }
                return instant
            }
            if from == first { return first }
            lookback = lookback * 2
        }
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
    private func nextMatch(_ rule: ScheduleRule, atOrAfter start: LocalMinute) -> LocalMinute? {
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
