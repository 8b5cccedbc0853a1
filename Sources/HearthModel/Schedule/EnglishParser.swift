/// Parses App Engine cron.yaml style English schedules (case-insensitive):
///
///     every N minutes|mins|hours [from HH:MM to HH:MM | synchronized]
///     every day [of MONTHS] HH:MM
///     every DAYS [of MONTHS] HH:MM
///     ORDINALS DAYS of MONTHS HH:MM
///
/// where DAYS, MONTHS and ORDINALS are comma-separated lists and MONTHS may be
/// the word `month` (every month).
struct EnglishParser {
    private let characters: [Character]
    private let tokens: [Token]
    private var index = 0

    private init(_ expression: String) {
        characters = Array(expression)
        tokens = Token.split(expression, separatingCommas: true)
    }

    static func parse(_ expression: String) throws(ParseFailure) -> ScheduleRule {
        var parser = EnglishParser(expression)
        return try parser.parseSchedule()
    }

    /// Whether a (lowercased) first word selects the English syntax:
    /// `every`, or an ordinal such as `1st`/`first` (or a malformed one like `6th`).
    static func isEnglishStart(_ word: String) -> Bool {
        word == "every" || isOrdinalLike(word)
    }

    private mutating func parseSchedule() throws(ParseFailure) -> ScheduleRule {
        if consume("every") { return try parseEvery() }
        return try parseOrdinalSchedule()
    }

    // MARK: - Forms

    /// After `every`: an interval, `day`, or a day list.
    private mutating func parseEvery() throws(ParseFailure) -> ScheduleRule {
        guard let token = peek() else {
            throw expected("a number, 'day' or a day name")
        }
        if token.text.allSatisfy(\.isASCIIDigit) || Self.intervalUnit(token.lowered) != nil {
            return try parseInterval()
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

    /// `every [N] minutes|hours [from A to B | synchronized]`. Without a
    /// window ticks are aligned to local midnight; with one they start at A.
    private mutating func parseInterval() throws(ParseFailure) -> ScheduleRule {
        var count = 1
        var countToken: Token?
        if let token = peek(), token.text.allSatisfy(\.isASCIIDigit) {
            countToken = token
            index += 1
            guard let value = Int(token.text) else {
                throw ParseFailure("interval '\(token.text)' is too large", at: token.column)
            }
            count = value
        }
        guard let unitToken = peek() else { throw expected("'minutes' or 'hours'") }
        guard let minutesPerUnit = Self.intervalUnit(unitToken.lowered) else {
            throw ParseFailure("unknown interval unit '\(unitToken.text)' (expected minutes or hours)",
                               at: unitToken.column)
        }
        index += 1
        let anchor = countToken ?? unitToken
        guard count >= 1 else {
            throw ParseFailure("interval must be at least 1, found '\(anchor.text)'", at: anchor.column)
        }
        guard count <= MinuteSet.minutesPerDay / minutesPerUnit else {
            throw ParseFailure("interval must be at most 24 hours, found '\(anchor.text) \(unitToken.text)'",
                               at: anchor.column)
        }
        let step = count * minutesPerUnit
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
            _ = consume("synchronized")
            for tick in stride(from: 0, to: MinuteSet.minutesPerDay, by: step) {
                minutes.insert(tick)
            }
        }
        try expectEnd()
        return ScheduleRule(days: DayFilter(), minutes: minutes)
    }

    /// The trailing `HH:MM` of the day-based forms.
    private mutating func finishDaily(_ days: DayFilter) throws(ParseFailure) -> ScheduleRule {
        var minutes = MinuteSet()
        minutes.insert(try parseTime())
        try expectEnd()
        return ScheduleRule(days: days, minutes: minutes)
    }

    // MARK: - Pieces

    /// `month` (all months) or a list of month names.
    private mutating func parseMonths() throws(ParseFailure) -> UInt16 {
        if consume("month") { return DayFilter.allMonths }
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

    /// Minutes per unit for `minute(s)`, `min(s)`, `hour(s)`.
    static func intervalUnit(_ word: String) -> Int? {
        switch word {
        case "minute", "minutes", "min", "mins": return 1
        case "hour", "hours": return 60
        default: return nil
        }
    }

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
