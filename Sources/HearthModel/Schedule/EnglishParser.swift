/// Parses App Engine cron.yaml / Cloud Scheduler style English schedules (case-insensitive), the
/// grammar of the App Engine SDK's groc parser:
///
///     every N minutes|mins|hours                       N minutes or hours after the previous firing
///     every N minutes|mins|hours from HH:MM to HH:MM   aligned to HH:MM, the end included
///     every N minutes|mins|hours synchronized          aligned to local midnight; N must divide 24 h
///     every day [of MONTHS] HH:MM
///     every DAYS [of MONTHS] HH:MM
///     ORDINALS DAYS of MONTHS HH:MM
///     MONTHDAYS of MONTHS HH:MM                        `1,15 of month 09:00`, `29 of feb 00:00`
///
/// where DAYS, MONTHS, ORDINALS (1st…5th, first…fifth) and MONTHDAYS (1…31) are comma-separated
/// lists and MONTHS may be the word `month` (every month) or `quarter` (jan, apr, jul, oct). The
/// units are plural, as groc has them: `every 1 minute` and `every hour` are refused.
struct EnglishParser {
    private let characters: [Character]
    private let tokens: [Token]
    private var index = 0

    private init(_ expression: String) {
        characters = Array(expression)
        tokens = Token.split(expression, separatingCommas: true)
    }

    static func parse(_ expression: String) throws(ParseFailure) -> Timing {
        var parser = EnglishParser(expression)
        return try parser.parseSchedule()
    }

    /// Whether a (lowercased) first word selects the English syntax:
    /// `every`, or an ordinal such as `1st`/`first` (or a malformed one like `6th`).
    static func isEnglishStart(_ word: String) -> Bool {
        word == "every" || isOrdinalLike(word)
    }

    /// The longest interval number groc reads (five digits).
    static let maxIntervalCount = 99_999

    private mutating func parseSchedule() throws(ParseFailure) -> Timing {
        if consume("every") { return try parseEvery() }
        if let first = peek(), first.text.allSatisfy(\.isASCIIDigit) { return .calendar(try parseMonthdaySchedule()) }
        return .calendar(try parseOrdinalSchedule())
    }

    // MARK: - Forms

    /// After `every`: an interval, `day`, or a day list.
    private mutating func parseEvery() throws(ParseFailure) -> Timing {
        guard let token = peek() else {
            throw expected("a number, 'day' or a day name")
        }
        if token.text.allSatisfy(\.isASCIIDigit) { return try parseInterval() }
        if Self.intervalUnit(token.lowered) != nil || Self.singularUnits.contains(token.lowered) {
            throw ParseFailure("an interval needs a number: 'every 1 minutes', 'every 2 hours'", at: token.column)
        }
        var days = DayFilter()
        if token.lowered == "day" {
            index += 1
        } else if Names.days[token.lowered] != nil {
            days.weekdays = UInt8(try parseList(of: "day", in: Names.days))
        } else {
            throw expected("a number, 'day' or a day name")
        }
        if consume("of") {
            days.months = try parseMonths()
        }
        return .calendar(try finishDaily(days))
    }

    /// `MONTHDAYS of MONTHS HH:MM`: days of the month, each of which one of the months must have
    /// (February counts 29 days; the 29th fires in leap years only, the 31st in 31-day months only).
    private mutating func parseMonthdaySchedule() throws(ParseFailure) -> ScheduleRule {
        var days = DayFilter()
        var bits: UInt32 = 0
        var listed: [(day: Int, token: Token)] = []
        repeat {
            guard let token = peek(), token.text.allSatisfy(\.isASCIIDigit), !token.text.isEmpty else { throw expected("a day of the month") }
            guard token.text.count <= 2, let day = Int(token.text), (1...31).contains(day) else {
                throw ParseFailure("day of month '\(token.text)' out of range 1-31", at: token.column)
            }
            index += 1
            bits |= 1 << UInt32(day)
            listed.append((day, token))
        } while consume(",")
        guard consume("of") else { throw expected("'of'") }
        days.months = try parseMonths()
        days.daysOfMonth = bits
        for (day, token) in listed {
            let fits = (1...12).contains { month in days.months & (1 << UInt16(month)) != 0 && day <= CivilDate.daysInMonth(year: 2000, month: month) }
            if !fits { throw ParseFailure("none of the listed months has a day \(day)", at: token.column) }
        }
        return try finishDaily(days)
    }

    /// `ORDINALS DAYS of MONTHS HH:MM`.
    private mutating func parseOrdinalSchedule() throws(ParseFailure) -> ScheduleRule {
        var days = DayFilter()
        days.ordinals = UInt8(try parseList(of: "ordinal", in: Names.ordinals))
        days.weekdays = UInt8(try parseList(of: "day", in: Names.days))
        guard consume("of") else { throw expected("'of'") }
        days.months = try parseMonths()
        return try finishDaily(days)
    }

    /// `every N minutes|hours [from A to B | synchronized]`. Plain, the interval runs from the
    /// previous firing in elapsed time (any N); with a window ticks start at A; synchronized, they
    /// are aligned to local midnight, so N must divide 24 hours.
    private mutating func parseInterval() throws(ParseFailure) -> Timing {
        guard let countToken = peek() else { throw expected("a number") }
        index += 1
        guard countToken.text.count <= 5, let count = Int(countToken.text), count <= Self.maxIntervalCount else {
            throw ParseFailure("interval '\(countToken.text)' is too large (at most \(Self.maxIntervalCount))", at: countToken.column)
        }
        guard let unitToken = peek() else { throw expected("'minutes', 'mins' or 'hours'") }
        guard let minutesPerUnit = Self.intervalUnit(unitToken.lowered) else {
            let hint = Self.singularUnits.contains(unitToken.lowered) ? " (groc's units are plural)" : ""
            throw ParseFailure("unknown interval unit '\(unitToken.text)' (expected minutes, mins or hours)\(hint)",
                               at: unitToken.column)
        }
        index += 1
        guard count >= 1 else {
            throw ParseFailure("interval must be at least 1, found '\(countToken.text)'", at: countToken.column)
        }
        let step = count * minutesPerUnit
        let windowed = peek().map { $0.lowered == "from" || $0.lowered == "synchronized" } ?? false
        if !windowed {
            try expectEnd()
            return .interval(seconds: Int64(step) * 60)
        }
        guard step <= MinuteSet.minutesPerDay else {
            throw ParseFailure("an interval with a window or synchronized must be at most 24 hours, found '\(countToken.text) \(unitToken.text)'",
                               at: countToken.column)
        }
        var minutes = MinuteSet()
        if consume("from") {
            let start = try parseTime()
            guard consume("to") else { throw expected("'to'") }
            let endToken = peek()
            let end = try parseTime()
            guard start != end else {
                throw ParseFailure("window end '\(endToken?.text ?? "")' equals its start", at: endToken?.column)
            }
            // A window ending before it starts wraps past midnight.
            let last = end > start ? end : end + MinuteSet.minutesPerDay
            for tick in stride(from: start, through: last, by: step) {
                minutes.insert(tick % MinuteSet.minutesPerDay)
            }
        } else {
            let synchronized = peek()
            _ = consume("synchronized")
            guard MinuteSet.minutesPerDay % step == 0 else {
                throw ParseFailure("synchronized needs a period that divides 24 hours evenly, found '\(countToken.text) \(unitToken.text)'",
                                   at: synchronized?.column)
            }
            for tick in stride(from: 0, to: MinuteSet.minutesPerDay, by: step) {
                minutes.insert(tick)
            }
        }
        try expectEnd()
        return .calendar(ScheduleRule(days: DayFilter(), minutes: minutes))
    }

    /// The trailing `HH:MM` of the day-based forms.
    private mutating func finishDaily(_ days: DayFilter) throws(ParseFailure) -> ScheduleRule {
        var minutes = MinuteSet()
        minutes.insert(try parseTime())
        try expectEnd()
        return ScheduleRule(days: days, minutes: minutes)
    }

    // MARK: - Pieces

    /// `month` (all months), `quarter` (each quarter's first month) or a list of month names.
    private mutating func parseMonths() throws(ParseFailure) -> UInt16 {
        if consume("month") { return DayFilter.allMonths }
        if consume("quarter") { return 1 << 1 | 1 << 4 | 1 << 7 | 1 << 10 }
        return UInt16(try parseList(of: "month", in: Names.months))
    }

    /// A comma-separated list of words from `table`, as bits of their values.
    private mutating func parseList(of kind: String, in table: [String: Int]) throws(ParseFailure) -> Int {
        var bits = 0
        repeat {
            guard let token = peek() else { throw expected("a \(kind) name") }
            guard let value = table[token.lowered] else {
                if kind == "ordinal" && Self.isOrdinalLike(token.lowered) {
                    throw ParseFailure("invalid ordinal '\(token.text)' (expected 1st to 5th or first to fifth)",
                                       at: token.column)
                }
                if token.text.allSatisfy(\.isLetter) && kind != "ordinal" {
                    throw ParseFailure("unknown \(kind) name '\(token.text)'", at: token.column)
                }
                throw expected(kind == "ordinal" ? "an ordinal" : "a \(kind) name")
            }
            index += 1
            bits |= 1 << value
        } while consume(",")
        return bits
    }

    /// `H:MM` or `HH:MM`, 00:00...23:59, as a minute of the day.
    private mutating func parseTime() throws(ParseFailure) -> Int {
        guard let token = peek(), let minute = Self.minuteOfDay(token.text) else {
            throw expected("a time HH:MM")
        }
        index += 1
        return minute
    }

    static func minuteOfDay(_ text: String) -> Int? {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2,
              (1...2).contains(parts[0].count), parts[1].count == 2,
              parts[0].allSatisfy(\.isASCIIDigit), parts[1].allSatisfy(\.isASCIIDigit),
              let hour = Int(parts[0]), let minute = Int(parts[1]),
              hour < 24, minute < 60
        else { return nil }
        return hour * 60 + minute
    }

    /// Minutes per unit: groc's `minutes`, `mins` and `hours`.
    static func intervalUnit(_ word: String) -> Int? {
        switch word {
        case "minutes", "mins": return 1
        case "hours": return 60
        default: return nil
        }
    }

    /// Spellings groc does not read (Cloud Scheduler refuses `every 1 minute`).
    static let singularUnits: Set<String> = ["minute", "min", "hour", "hr", "hrs"]

    /// A known ordinal word, or digits followed by letters ("6th").
    static func isOrdinalLike(_ word: String) -> Bool {
        if Names.ordinals[word] != nil { return true }
        guard let firstLetter = word.firstIndex(where: { !$0.isASCIIDigit }) else { return false }
        return firstLetter != word.startIndex && word[firstLetter...].allSatisfy(\.isLetter)
    }

    // MARK: - Token stream

    private func peek() -> Token? {
        index < tokens.count ? tokens[index] : nil
    }

    private mutating func consume(_ word: String) -> Bool {
        guard let token = peek(), token.lowered == word else { return false }
        index += 1
        return true
    }

    private func expectEnd() throws(ParseFailure) {
        if let token = peek() {
            throw ParseFailure("unexpected '\(token.text)' after '\(consumedText())'", at: token.column)
        }
    }

    /// "expected WHAT after 'consumed text', found 'token'" at the next token.
    private func expected(_ what: String) -> ParseFailure {
        let found = peek()
        let foundText = found.map { "'\($0.text)'" } ?? "end of expression"
        return ParseFailure("expected \(what) after '\(consumedText())', found \(foundText)", at: found?.column)
    }

    /// The expression text from the first token to the end of the last consumed one.
    private func consumedText() -> String {
        guard index > 0 else { return "" }
        let last = tokens[index - 1]
        let start = tokens[0].column - 1
        let end = last.column - 1 + last.text.count
        return String(characters[start..<end])
    }
}
