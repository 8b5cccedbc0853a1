/// Parses 5-field Unix cron expressions and `@daily`-style macros.
///
/// Field grammar (per crontab(5), Vixie flavour):
///   field := item ("," item)*
///   item  := base ("/" step)?
///   base  := "*" | value | value "-" value
/// `value/step` means "from value to the field maximum every step".
enum CronParser {
    /// One of the five cron fields.
    struct Field: Sendable {
        var name: String
        var bounds: ClosedRange<Int>
        var names: [String: Int] = [:]
        var nameKind: String? = nil  // "day" or "month", for error messages
    }

    static let fields: [Field] = [
        Field(name: "minute", bounds: 0...59),
        Field(name: "hour", bounds: 0...23),
        Field(name: "day-of-month", bounds: 1...31),
        Field(name: "month", bounds: 1...12, names: Names.cronMonths, nameKind: "month"),
        // 0 and 7 are both Sunday; 7 is folded into 0 after parsing.
        Field(name: "day-of-week", bounds: 0...7, names: Names.cronDays, nameKind: "day"),
    ]

    static let macros: [String: String] = [
        "@hourly": "0 * * * *",
        "@daily": "0 0 * * *",
        "@midnight": "0 0 * * *",
        "@weekly": "0 0 * * 0",
        "@monthly": "0 0 1 * *",
        "@yearly": "0 0 1 1 *",
        "@annually": "0 0 1 1 *",
    ]

    static func parseMacro(_ tokens: [Token]) throws(ParseFailure) -> ScheduleRule {
        let macro = tokens[0]
        guard let equivalent = macros[macro.lowered] else {
            throw ParseFailure("unknown macro '\(macro.text)' (expected @hourly, @daily, @midnight, "
                + "@weekly, @monthly, @yearly or @annually)", at: macro.column)
        }
        if tokens.count > 1 {
            throw ParseFailure("unexpected '\(tokens[1].text)' after '\(macro.text)'", at: tokens[1].column)
        }
        return try parse(Token.split(equivalent))
    }

    /// Parses exactly five whitespace-separated fields.
    static func parse(_ tokens: [Token]) throws(ParseFailure) -> ScheduleRule {
        guard tokens.count == fields.count else {
            throw ParseFailure(
                "expected 5 fields (minute hour day-of-month month day-of-week), found \(tokens.count)",
                at: tokens.count > fields.count ? tokens[fields.count].column : nil)
        }
        var bits: [UInt64] = []
        for (token, field) in zip(tokens, fields) {
            bits.append(try parseField(token, field))
        }
        var weekdays = bits[4]
        if weekdays & (1 << 7) != 0 { weekdays = (weekdays | 1) & ~(1 << 7) }
        let days = DayFilter(
            months: UInt16(bits[3]),
            daysOfMonth: tokens[2].text == "*" ? nil : UInt32(bits[2]),
            weekdays: tokens[4].text == "*" ? nil : UInt8(weekdays))
        return ScheduleRule(days: days, minutes: MinuteSet(hours: bits[1], minutes: bits[0]))
    }

    /// The set of values of one field, as bits.
    private static func parseField(_ token: Token, _ field: Field) throws(ParseFailure) -> UInt64 {
        var bits: UInt64 = 0
        for item in token.pieces(separatedBy: ",") {
            bits |= try parseItem(item, field)
        }
        return bits
    }

    private static func parseItem(_ item: Token, _ field: Field) throws(ParseFailure) -> UInt64 {
        guard !item.text.isEmpty else {
            throw ParseFailure("empty list item in \(field.name) field", at: item.column)
        }
        let parts = item.pieces(separatedBy: "/")
        if parts.count > 2 {
            throw ParseFailure("unexpected '/' in '\(item.text)'", at: parts[2].column - 1)
        }
        let step = parts.count == 2 ? try parseStep(parts[1], field) : nil
        let range = try parseBase(parts[0], field, stepped: step != nil)
        var bits: UInt64 = 0
        for value in stride(from: range.lowerBound, through: range.upperBound, by: step ?? 1) {
            bits |= 1 << UInt64(value)
        }
        return bits
    }

    private static func parseStep(_ token: Token, _ field: Field) throws(ParseFailure) -> Int {
        guard !token.text.isEmpty else {
            throw ParseFailure("missing step after '/' in \(field.name) field", at: token.column)
        }
        guard token.text.allSatisfy(\.isASCIIDigit), let step = Int(token.text) else {
            throw ParseFailure("invalid step '\(token.text)' in \(field.name) field", at: token.column)
        }
        guard step >= 1 else {
            throw ParseFailure("step must be at least 1, found '\(token.text)'", at: token.column)
        }
        return step
    }

    /// `*`, `a`, or `a-b`. A lone value with a step runs to the field maximum.
    private static func parseBase(_ token: Token, _ field: Field, stepped: Bool) throws(ParseFailure)
        -> ClosedRange<Int>
    {
        if token.text == "*" { return field.bounds }
        let ends = token.pieces(separatedBy: "-")
        switch ends.count {
        case 1:
            let value = try parseValue(ends[0], field)
            return stepped ? value...field.bounds.upperBound : value...value
        case 2:
            let low = try parseValue(ends[0], field)
            var high = try parseValue(ends[1], field)
            // "fri-sun": Sunday closing a day-of-week range means 7.
            if field.nameKind == "day", high == 0, low > 0, ends[1].lowered == "sun" { high = 7 }
            guard low <= high else {
                throw ParseFailure("descending range '\(token.text)' in \(field.name) field", at: token.column)
            }
            return low...high
        default:
            throw ParseFailure("invalid range '\(token.text)' in \(field.name) field", at: token.column)
        }
    }

    private static func parseValue(_ token: Token, _ field: Field) throws(ParseFailure) -> Int {
        let text = token.text
        guard !text.isEmpty else {
            throw ParseFailure("missing value in \(field.name) field", at: token.column)
        }
        if text.allSatisfy(\.isASCIIDigit) {
            guard let value = Int(text), field.bounds.contains(value) else {
                throw ParseFailure("\(field.name) value '\(text)' out of range "
                    + "\(field.bounds.lowerBound)-\(field.bounds.upperBound)", at: token.column)
            }
            return value
        }
        if let kind = field.nameKind, text.allSatisfy(\.isLetter) {
            guard let value = field.names[text.lowercased()] else {
                throw ParseFailure("unknown \(kind) name '\(text)'", at: token.column)
            }
            return value
        }
        throw ParseFailure("invalid \(field.name) value '\(text)'", at: token.column)
    }
}

extension Character {
    var isASCIIDigit: Bool { isASCII && isNumber }
}
