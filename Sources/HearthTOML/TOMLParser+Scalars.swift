// Numbers, dates and times (https://toml.io/en/v1.0.0#integer onwards).

extension TOMLParser {
    // MARK: - Numbers

    /// A decimal integer (`+1_000`), a prefixed integer (`0xDEAD_beef`, `0o755`, `0b1010`) or a float
    /// (`-3.14e+1_0`). Underscores must sit between two digits, decimal integer parts have no leading
    /// zero, and prefixed integers take no sign. Integers must fit in `Int64`.
    mutating func parseNumber() throws(TOMLFailure) -> TOMLValue {
        let start = i
        let sign = byte(i)
        let signed = sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-")
        if signed { i += 1 }
        guard isDigit(at: i) else {
            if signed { throw fail("expected a digit after '\(Character(Unicode.Scalar(sign)))', found \(describe(at: i))") }
            throw fail("expected a value, found \(describe(at: start))", at: start)
        }

        if byte(i) == UInt8(ascii: "0") {
            let radix: UInt64
            switch byte(i + 1) {
            case UInt8(ascii: "x"): radix = 16
            case UInt8(ascii: "o"): radix = 8
            case UInt8(ascii: "b"): radix = 2
            default: radix = 10
            }
            if radix != 10 {
                if signed { throw fail("a hexadecimal, octal or binary integer cannot have a sign", at: start) }
                return .integer(try parsePrefixedInteger(radix: radix))
            }
        }

        let integerStart = i
        try skipDigits(radix: 10)
        if byte(integerStart) == UInt8(ascii: "0") && i - integerStart > 1 {
            throw fail("leading zeros are not allowed in a decimal number", at: integerStart)
        }
        var isFloat = false
        if byte(i) == UInt8(ascii: ".") {
            i += 1
            guard isDigit(at: i) else { throw fail("expected a digit after the decimal point, found \(describe(at: i))") }
            try skipDigits(radix: 10)
            isFloat = true
        }
        if byte(i) == UInt8(ascii: "e") || byte(i) == UInt8(ascii: "E") {
            i += 1
            if byte(i) == UInt8(ascii: "+") || byte(i) == UInt8(ascii: "-") { i += 1 }
            guard isDigit(at: i) else { throw fail("expected a digit in the exponent, found \(describe(at: i))") }
            try skipDigits(radix: 10)
            isFloat = true
        }
        return isFloat ? .float(try floatValue(start, i)) : .integer(try decimalValue(start, i))
    }

    /// Past digits of `radix` with single underscores between them; the first byte is a digit.
    mutating func skipDigits(radix: UInt64) throws(TOMLFailure) {
        while true {
            let c = byte(i)
            if Self.digitValue(c, radix: radix) != nil {
                i += 1
            } else if c == UInt8(ascii: "_") {
                guard Self.digitValue(byte(i + 1), radix: radix) != nil else {
                    throw fail("an underscore in a number must sit between two digits")
                }
                i += 1
            } else {
                return
            }
        }
    }

    @inline(__always) static func digitValue(_ c: UInt8, radix: UInt64) -> UInt64? {
        switch radix {
        case 16: return hexDigitValue(c).map(UInt64.init)
        default:
            let d = UInt64(c &- UInt8(ascii: "0"))
            return d < radix ? d : nil
        }
    }

    mutating func parsePrefixedInteger(radix: UInt64) throws(TOMLFailure) -> Int64 {
        let start = i
        i += 2
        guard Self.digitValue(byte(i), radix: radix) != nil else {
            let name = radix == 16 ? "a hexadecimal" : radix == 8 ? "an octal" : "a binary"
            throw fail("expected \(name) digit after '\(describePrefix(radix))', found \(describe(at: i))")
        }
        let digitsStart = i
        try skipDigits(radix: radix)
        var value: UInt64 = 0
        for k in digitsStart..<i {
            guard let d = Self.digitValue(input[k], radix: radix) else { continue }
            let (shifted, overflow) = value.multipliedReportingOverflow(by: radix)
            guard !overflow, shifted | d <= UInt64(Int64.max) else {
                throw fail("integer does not fit in 64 bits (the largest is 0x7FFFFFFFFFFFFFFF)", at: start)
            }
            value = shifted | d
        }
        return Int64(value)
    }

    func describePrefix(_ radix: UInt64) -> String { radix == 16 ? "0x" : radix == 8 ? "0o" : "0b" }

    /// `start..<end` holds a valid decimal integer: optional sign, digits and underscores.
    func decimalValue(_ start: Int, _ end: Int) throws(TOMLFailure) -> Int64 {
        let negative = input[start] == UInt8(ascii: "-")
        var magnitude: UInt64 = 0
        for k in start..<end {
            let c = input[k]
            guard c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9") else { continue }
            let (shifted, overflow) = magnitude.multipliedReportingOverflow(by: 10)
            let (sum, carry) = shifted.addingReportingOverflow(UInt64(c - UInt8(ascii: "0")))
            guard !overflow, !carry, sum <= (negative ? UInt64(1) << 63 : UInt64(Int64.max)) else {
                throw fail("integer does not fit in 64 bits (\(Int64.min) to \(Int64.max))", at: start)
            }
            magnitude = sum
        }
        return negative ? Int64(bitPattern: 0 &- magnitude) : Int64(magnitude)
    }

    /// `start..<end` holds a valid float; the nearest `Double`, with overflow to ±infinity and
    /// underflow to zero as in `strtod` (and Python's `float`).
    func floatValue(_ start: Int, _ end: Int) throws(TOMLFailure) -> Double {
        var text = ""
        text.reserveCapacity(end - start)
        for k in start..<end where input[k] != UInt8(ascii: "_") {
            text.unicodeScalars.append(Unicode.Scalar(input[k]))
        }
        guard let value = Double(text) else { throw fail("invalid float", at: start) }
        return value
    }

    /// `inf` or `nan`, after any sign.
    mutating func parseSpecialFloat(negative: Bool) throws(TOMLFailure) -> Double {
        let start = i
        if byte(i) == UInt8(ascii: "i") {
            try expectWord("inf")
            return negative ? -.infinity : .infinity
        }
        guard byte(i) == UInt8(ascii: "n") else { throw fail("expected a value, found \(describe(at: start))") }
        try expectWord("nan")
        return negative ? -.nan : .nan
    }

    // MARK: - Dates and times

    /// `YYYY-MM-DD`, optionally followed by `T`, `t` or a space and a time, optionally followed by `Z`,
    /// `z` or `±HH:MM`. A space not followed by a digit ends the date.
    mutating func parseDateOrDateTime() throws(TOMLFailure) -> TOMLValue {
        let date = try parseDate()
        let c = byte(i)
        guard c == UInt8(ascii: "T") || c == UInt8(ascii: "t") || (c == 0x20 && isDigit(at: i + 1)) else {
            return .localDate(date)
        }
        i += 1
        guard isDigit(at: i) else { throw fail("expected a time (HH:MM:SS) after '\(Character(Unicode.Scalar(c)))'") }
        let time = try parseTime()
        let dateTime = TOMLLocalDateTime(date: date, time: time)
        switch byte(i) {
        case UInt8(ascii: "Z"), UInt8(ascii: "z"):
            i += 1
            return .offsetDateTime(TOMLOffsetDateTime(dateTime: dateTime, offsetMinutes: 0))
        case UInt8(ascii: "+"), UInt8(ascii: "-"):
            let negative = byte(i) == UInt8(ascii: "-")
            i += 1
            let hours = try fixedDigits(2, "time offset (±HH:MM)")
            try expect(UInt8(ascii: ":"), "time offset (±HH:MM)")
            let minutes = try fixedDigits(2, "time offset (±HH:MM)")
            guard hours.value <= 23 else { throw fail("offset hours must be 00 to 23", at: hours.offset) }
            guard minutes.value <= 59 else { throw fail("offset minutes must be 00 to 59", at: minutes.offset) }
            let offset = hours.value * 60 + minutes.value
            return .offsetDateTime(TOMLOffsetDateTime(dateTime: dateTime, offsetMinutes: negative ? -offset : offset))
        default:
            return .localDateTime(dateTime)
        }
    }

    /// `YYYY-MM-DD`, a real day of the Gregorian calendar in years 1 to 9999.
    mutating func parseDate() throws(TOMLFailure) -> TOMLLocalDate {
        let year = try fixedDigits(4, "date (YYYY-MM-DD)")
        try expect(UInt8(ascii: "-"), "date (YYYY-MM-DD)")
        let month = try fixedDigits(2, "date (YYYY-MM-DD)")
        try expect(UInt8(ascii: "-"), "date (YYYY-MM-DD)")
        let day = try fixedDigits(2, "date (YYYY-MM-DD)")
        guard year.value >= 1 else { throw fail("year 0000 is out of range (years start at 0001)", at: year.offset) }
        guard (1...12).contains(month.value) else { throw fail("month must be 01 to 12", at: month.offset) }
        let days = TOMLLocalDate.daysIn(month: month.value, year: year.value)
        guard (1...days).contains(day.value) else {
            let detail = month.value == 2 && day.value == 29 ? "\(year.value) is not a leap year" : "the month has \(days) days"
            throw fail("day \(day.value) is out of range: \(detail)", at: day.offset)
        }
        return TOMLLocalDate(year: year.value, month: month.value, day: day.value)
    }

    /// `HH:MM:SS` with an optional fraction of any length, kept to nanoseconds (further digits are
    /// truncated). Seconds stop at 59: like `tomllib`, no leap seconds.
    mutating func parseTime() throws(TOMLFailure) -> TOMLLocalTime {
        let hour = try fixedDigits(2, "time (HH:MM:SS)")
        try expect(UInt8(ascii: ":"), "time (HH:MM:SS)")
        let minute = try fixedDigits(2, "time (HH:MM:SS)")
        try expect(UInt8(ascii: ":"), "time (HH:MM:SS)")
        let second = try fixedDigits(2, "time (HH:MM:SS)")
        guard hour.value <= 23 else { throw fail("hour must be 00 to 23", at: hour.offset) }
        guard minute.value <= 59 else { throw fail("minute must be 00 to 59", at: minute.offset) }
        guard second.value <= 59 else { throw fail("second must be 00 to 59", at: second.offset) }
        var nanosecond = 0
        if byte(i) == UInt8(ascii: ".") {
            i += 1
            guard isDigit(at: i) else { throw fail("expected a digit after the decimal point, found \(describe(at: i))") }
            var scale = 100_000_000
            while isDigit(at: i) {
                nanosecond += Int(input[i] - UInt8(ascii: "0")) * scale
                scale /= 10
                i += 1
            }
        }
        return TOMLLocalTime(hour: hour.value, minute: minute.value, second: second.value, nanosecond: nanosecond)
    }

    mutating func fixedDigits(_ count: Int, _ what: String) throws(TOMLFailure) -> (value: Int, offset: Int) {
        let start = i
        var value = 0
        for _ in 0..<count {
            guard isDigit(at: i) else { throw fail("malformed \(what): expected a digit, found \(describe(at: i))") }
            value = value * 10 + Int(input[i] - UInt8(ascii: "0"))
            i += 1
        }
        return (value, start)
    }

    mutating func expect(_ c: UInt8, _ what: String) throws(TOMLFailure) {
        guard byte(i) == c else {
            throw fail("malformed \(what): expected '\(Character(Unicode.Scalar(c)))', found \(describe(at: i))")
        }
        i += 1
    }
}
