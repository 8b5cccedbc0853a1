/// A calendar date without a time zone (`1979-05-27`). The parser only produces valid dates in years
/// 1–9999 (see `TOML.parse` for why year 0 is refused).
public struct TOMLLocalDate: Sendable, Hashable {
    public var year: Int
    public var month: Int
    public var day: Int

    public init(year: Int, month: Int, day: Int) {
        self.year = year
        self.month = month
        self.day = day
    }
}

/// A time of day without a date or time zone (`07:32:00.999999`). Fractional seconds are kept to the
/// nanosecond; further digits in the document are truncated.
public struct TOMLLocalTime: Sendable, Hashable {
    public var hour: Int
    public var minute: Int
    public var second: Int
    public var nanosecond: Int

    public init(hour: Int, minute: Int, second: Int, nanosecond: Int = 0) {
        self.hour = hour
        self.minute = minute
        self.second = second
        self.nanosecond = nanosecond
    }
}

/// A date and time without a time zone (`1979-05-27T07:32:00`).
public struct TOMLLocalDateTime: Sendable, Hashable {
    public var date: TOMLLocalDate
    public var time: TOMLLocalTime

    public init(date: TOMLLocalDate, time: TOMLLocalTime) {
        self.date = date
        self.time = time
    }
}

/// A date and time at a fixed offset from UTC (`1979-05-27T00:32:00-07:00`). Equality compares the
/// written fields, not the instant: `00:00Z` and `01:00+01:00` differ.
public struct TOMLOffsetDateTime: Sendable, Hashable {
    public var dateTime: TOMLLocalDateTime
    /// Minutes east of UTC; `Z` and `-00:00` are both 0.
    public var offsetMinutes: Int

    public init(dateTime: TOMLLocalDateTime, offsetMinutes: Int) {
        self.dateTime = dateTime
        self.offsetMinutes = offsetMinutes
    }
}

extension TOMLLocalDate {
    static func isLeapYear(_ year: Int) -> Bool {
        year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
    }

    static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: return isLeapYear(year) ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }
}

// MARK: - RFC 3339 text

/// The RFC 3339 forms used by `description` (nanoseconds) and `jsonValue` (microseconds): fractions are
/// truncated to `fractionDigits`, trailing zeros dropped, and the dot omitted for a zero fraction.
enum TOMLDateTimeFormat {
    static func append(_ date: TOMLLocalDate, to out: inout String) {
        appendPadded(date.year, width: 4, to: &out)
        out.append("-")
        appendPadded(date.month, width: 2, to: &out)
        out.append("-")
        appendPadded(date.day, width: 2, to: &out)
    }

    static func append(_ time: TOMLLocalTime, fractionDigits: Int, to out: inout String) {
        appendPadded(time.hour, width: 2, to: &out)
        out.append(":")
        appendPadded(time.minute, width: 2, to: &out)
        out.append(":")
        appendPadded(time.second, width: 2, to: &out)
        var digits = fractionDigits
        var fraction = time.nanosecond
        for _ in digits..<9 { fraction /= 10 }
        guard fraction > 0 else { return }
        while fraction % 10 == 0 {
            fraction /= 10
            digits -= 1
        }
        out.append(".")
        appendPadded(fraction, width: digits, to: &out)
    }

    static func append(_ dateTime: TOMLLocalDateTime, fractionDigits: Int, to out: inout String) {
        append(dateTime.date, to: &out)
        out.append("T")
        append(dateTime.time, fractionDigits: fractionDigits, to: &out)
    }

    static func append(_ dateTime: TOMLOffsetDateTime, fractionDigits: Int, to out: inout String) {
        append(dateTime.dateTime, fractionDigits: fractionDigits, to: &out)
        let offset = dateTime.offsetMinutes
        if offset == 0 {
            out.append("Z")
            return
        }
        out.append(offset < 0 ? "-" : "+")
        appendPadded(abs(offset) / 60, width: 2, to: &out)
        out.append(":")
        appendPadded(abs(offset) % 60, width: 2, to: &out)
    }

    static func appendPadded(_ n: Int, width: Int, to out: inout String) {
        let digits = String(n)
        if digits.utf8.count < width { out.append(String(repeating: "0", count: width - digits.utf8.count)) }
        out.append(digits)
    }

    static func string(_ build: (inout String) -> Void) -> String {
        var out = ""
        out.reserveCapacity(32)
        build(&out)
        return out
    }
}

extension TOMLLocalDate: CustomStringConvertible {
    /// `YYYY-MM-DD`.
    public var description: String { TOMLDateTimeFormat.string { TOMLDateTimeFormat.append(self, to: &$0) } }
}

extension TOMLLocalTime: CustomStringConvertible {
    /// `HH:MM:SS[.fffffffff]`, with trailing zeros of the fraction dropped.
    public var description: String { formatted(fractionDigits: 9) }

    /// `HH:MM:SS[.fff…]` with the fraction truncated to `fractionDigits` (0 to 9), trailing zeros dropped.
    public func formatted(fractionDigits: Int) -> String {
        TOMLDateTimeFormat.string { TOMLDateTimeFormat.append(self, fractionDigits: fractionDigits, to: &$0) }
    }
}

extension TOMLLocalDateTime: CustomStringConvertible {
    /// `YYYY-MM-DDTHH:MM:SS[.fffffffff]`.
    public var description: String { formatted(fractionDigits: 9) }

    /// RFC 3339 without an offset, the fraction truncated to `fractionDigits`.
    public func formatted(fractionDigits: Int) -> String {
        TOMLDateTimeFormat.string { TOMLDateTimeFormat.append(self, fractionDigits: fractionDigits, to: &$0) }
    }
}

extension TOMLOffsetDateTime: CustomStringConvertible {
    /// `YYYY-MM-DDTHH:MM:SS[.fffffffff]` followed by `Z` for a zero offset, else `±HH:MM`.
    public var description: String { formatted(fractionDigits: 9) }

    /// RFC 3339, the fraction truncated to `fractionDigits`.
    public func formatted(fractionDigits: Int) -> String {
        TOMLDateTimeFormat.string { TOMLDateTimeFormat.append(self, fractionDigits: fractionDigits, to: &$0) }
    }
}
