import Testing
@testable import HearthModel

struct ErrorCase: Sendable, CustomTestStringConvertible {
    var expression: String
    var message: String
    var column: Int?
    init(_ expression: String, _ message: String, _ column: Int?) {
        self.expression = expression
        self.message = message
        self.column = column
    }
    var testDescription: String { "'\(expression)'" }
}

@Suite("Parse errors")
struct ParseErrorTests {
    static let cronCases: [ErrorCase] = [
        ErrorCase("* * * *", "expected 5 fields (minute hour day-of-month month day-of-week), found 4", nil),
        ErrorCase("* * * * * *", "expected 5 fields (minute hour day-of-month month day-of-week), found 6", 11),
        ErrorCase("0", "expected 5 fields (minute hour day-of-month month day-of-week), found 1", nil),
        ErrorCase("60 * * * *", "minute value '60' out of range 0-59", 1),
        ErrorCase("0 24 * * *", "hour value '24' out of range 0-23", 3),
        ErrorCase("0 0 0 * *", "day-of-month value '0' out of range 1-31", 5),
        ErrorCase("0 0 32 * *", "day-of-month value '32' out of range 1-31", 5),
        ErrorCase("0 0 * 13 *", "month value '13' out of range 1-12", 7),
        ErrorCase("0 0 * * 8", "day-of-week value '8' out of range 0-7", 9),
        ErrorCase("0 0 * * 1-9", "day-of-week value '9' out of range 0-7", 11),
        ErrorCase("99999999999999999999 * * * *", "minute value '99999999999999999999' out of range 0-59", 1),
        ErrorCase("5-3 * * * *", "descending range '5-3' in minute field", 1),
        ErrorCase("0 0 1,5-2 * *", "descending range '5-2' in day-of-month field", 7),
        ErrorCase("0 0 * dec-jan *", "descending range 'dec-jan' in month field", 7),
        ErrorCase("0 0 * * sat-mon", "descending range 'sat-mon' in day-of-week field", 9),
        ErrorCase("*/0 * * * *", "step must be at least 1, found '0'", 3),
        ErrorCase("0 0-23/0 * * *", "step must be at least 1, found '0'", 8),
        ErrorCase("*/x * * * *", "invalid step 'x' in minute field", 3),
        ErrorCase("*/ * * * *", "missing step after '/' in minute field", 3),
        ErrorCase("0 0 * * 1/2/3", "unexpected '/' in '1/2/3'", 12),
        ErrorCase("1-2-3 * * * *", "invalid range '1-2-3' in minute field", 1),
        ErrorCase("-5 * * * *", "missing value in minute field", 1),
        ErrorCase("*/5 * * * mon-xyz", "unknown day name 'xyz'", 15),
        ErrorCase("0 0 * foo *", "unknown month name 'foo'", 7),
        ErrorCase("0 0 * * monday", "unknown day name 'monday'", 9),
        ErrorCase("0 9am * * *", "invalid hour value '9am'", 3),
        ErrorCase("0 0 * * mon,,fri", "empty list item in day-of-week field", 13),
        ErrorCase("0 0 1, * *", "empty list item in day-of-month field", 7),
        ErrorCase("@fortnightly", "unknown macro '@fortnightly' (expected @hourly, @daily, @midnight, "
            + "@weekly, @monthly, @yearly or @annually)", 1),
        ErrorCase("@daily 5", "unexpected '5' after '@daily'", 8),
    ]

    static let englishCases: [ErrorCase] = [
        ErrorCase("every day 9am", "expected a time HH:MM after 'every day', found '9am'", 11),
        ErrorCase("  every day 9am", "expected a time HH:MM after 'every day', found '9am'", 13),
        ErrorCase("every day", "expected a time HH:MM after 'every day', found end of expression", nil),
        ErrorCase("every day 12:5", "expected a time HH:MM after 'every day', found '12:5'", 11),
        ErrorCase("every monday 25:00", "expected a time HH:MM after 'every monday', found '25:00'", 14),
        ErrorCase("every day 09:60", "expected a time HH:MM after 'every day', found '09:60'", 11),
        ErrorCase("every", "expected a number, 'day' or a day name after 'every', found end of expression", nil),
        ErrorCase("every funday 10:00", "expected a number, 'day' or a day name after 'every', found 'funday'", 7),
        ErrorCase("every monday,funday 10:00", "unknown day name 'funday'", 14),
        ErrorCase("every monday, 10:00", "expected a day name after 'every monday,', found '10:00'", 15),
        ErrorCase("every 0 minutes", "interval must be at least 1, found '0'", 7),
        ErrorCase("every 5 seconds", "unknown interval unit 'seconds' (expected minutes, mins or hours)", 9),
        ErrorCase("every 5", "expected 'minutes', 'mins' or 'hours' after 'every 5', found end of expression", nil),
        ErrorCase("every 1 minute", "unknown interval unit 'minute' (expected minutes, mins or hours) (groc's units are plural)", 9),
        ErrorCase("every 1 hour", "unknown interval unit 'hour' (expected minutes, mins or hours) (groc's units are plural)", 9),
        ErrorCase("every 5 min", "unknown interval unit 'min' (expected minutes, mins or hours) (groc's units are plural)", 9),
        ErrorCase("every minute", "an interval needs a number: 'every 1 minutes', 'every 2 hours'", 7),
        ErrorCase("every hours", "an interval needs a number: 'every 1 minutes', 'every 2 hours'", 7),
        ErrorCase("every 100000 minutes", "interval '100000' is too large (at most 99999)", 7),
        ErrorCase("every 25 hours synchronized", "an interval with a window or synchronized must be at most 24 hours, found '25 hours'", 7),
        ErrorCase("every 2000 minutes from 10:00 to 11:00", "an interval with a window or synchronized must be at most 24 hours, found '2000 minutes'", 7),
        ErrorCase("every 7 minutes synchronized", "synchronized needs a period that divides 24 hours evenly, found '7 minutes'", 17),
        ErrorCase("every 5 hours synchronized", "synchronized needs a period that divides 24 hours evenly, found '5 hours'", 15),
        ErrorCase("30 of feb 09:00", "none of the listed months has a day 30", 1),
        ErrorCase("31 of apr,jun 09:00", "none of the listed months has a day 31", 1),
        ErrorCase("1,30 of feb 09:00", "none of the listed months has a day 30", 3),
        ErrorCase("32 of month 09:00", "day of month '32' out of range 1-31", 1),
        ErrorCase("0 of month 09:00", "day of month '0' out of range 1-31", 1),
        ErrorCase("15 of month", "expected a time HH:MM after '15 of month', found end of expression", nil),
        ErrorCase("every 5 minutes from 10:00",
                  "expected 'to' after 'every 5 minutes from 10:00', found end of expression", nil),
        ErrorCase("every 5 minutes from 10 to 11",
                  "expected a time HH:MM after 'every 5 minutes from', found '10'", 22),
        ErrorCase("every 5 minutes from 10:00 to 10:00", "window end '10:00' equals its start", 31),
        ErrorCase("every 5 minutes from 9:00 to 10:00 daily",
                  "unexpected 'daily' after 'every 5 minutes from 9:00 to 10:00'", 36),
        ErrorCase("every day 09:00 daily", "unexpected 'daily' after 'every day 09:00'", 17),
        ErrorCase("1st monday of sep,oct",
                  "expected a time HH:MM after '1st monday of sep,oct', found end of expression", nil),
        ErrorCase("6th monday of month 10:00", "invalid ordinal '6th' (expected 1st to 5th or first to fifth)", 1),
        ErrorCase("1st,sixth monday of month 10:00", "expected an ordinal after '1st,', found 'sixth'", 5),
        ErrorCase("first monday of octember 10:00", "unknown month name 'octember'", 17),
        ErrorCase("first monday sep 10:00", "expected 'of' after 'first monday', found 'sep'", 14),
        ErrorCase("first day of month 10:00", "unknown day name 'day'", 7),
        ErrorCase("hello world",
                  "expected 5 cron fields, an @macro, 'every ...' or an ordinal such as '1st', found 'hello'", 1),
    ]

    @Test("cron syntax errors", arguments: cronCases)
    func cronError(_ row: ErrorCase) {
        expectError(row)
    }

    @Test("English syntax errors", arguments: englishCases)
    func englishError(_ row: ErrorCase) {
        expectError(row)
    }

    private func expectError(_ row: ErrorCase) {
        #expect(throws: ScheduleError(expression: row.expression, message: row.message, column: row.column)) {
            try Schedule(row.expression)
        }
    }

    @Test("empty and blank expressions", arguments: ["", "   ", " \t "])
    func empty(_ expression: String) {
        #expect(throws: ScheduleError(expression: expression, message: "empty schedule expression")) {
            try Schedule(expression)
        }
    }

    @Test func tooLong() throws {
        let long = String(repeating: "*", count: 501)
        #expect(throws: ScheduleError(expression: long, message: "expression is longer than 500 characters")) {
            try Schedule(long)
        }
        // Exactly 500 characters is fine.
        let padded = "0 0 * * *" + String(repeating: " ", count: 491)
        #expect(padded.count == 500)
        _ = try Schedule(padded)
    }

    @Test("unknown time zones, and offsets that are not IANA names", arguments: ["Mars/Base", "", "America/Nowhere", "UTC+9", "GMT+0900", "+09:00", "KST", "../etc/passwd"])
    func unknownZone(_ zone: String) {
        #expect(throws: ScheduleError(expression: "* * * * *", message: "unknown time zone '\(zone)' (expected an IANA tz database name, such as Asia/Seoul or UTC)")) {
            try Schedule("* * * * *", timeZone: zone)
        }
    }

    @Test("IANA names, with or without a slash, and Cloud Scheduler's 'utc'", arguments: ["UTC", "utc", "Asia/Seoul", "Etc/GMT-9", "US/Eastern", "PST8PDT", "America/Argentina/Buenos_Aires"])
    func knownZone(_ zone: String) throws {
        _ = try Schedule("every day 09:00", timeZone: zone)
    }

    @Test func descriptions() {
        #expect(ScheduleError(expression: "*/5 * * * mon-xyz", message: "unknown day name 'xyz'", column: 15)
            .description == "schedule '*/5 * * * mon-xyz': unknown day name 'xyz' at column 15")
        do {
            _ = try Schedule("every day 9am")
            Issue.record("expected an error")
        } catch {
            #expect(error.description
                == "schedule 'every day 9am': expected a time HH:MM after 'every day', found '9am' at column 11")
        }
        do {
            _ = try Schedule("0 0 * * *", timeZone: "Mars/Base")
            Issue.record("expected an error")
        } catch {
            #expect(error.description == "schedule '0 0 * * *': unknown time zone 'Mars/Base' (expected an IANA tz database name, such as Asia/Seoul or UTC)")
            #expect(error.column == nil)
        }
    }

    @Test("valid expressions parse", arguments: [
        "* * * * *", "0 0 1 1 *", "*/5 1-5/2 1,15 JAN-Mar Mon-Fri", "0 0 * * 7", "0 0 * * fri-sun",
        "@hourly", "@DAILY", "@midnight", "@weekly", "@monthly", "@yearly", "@annually",
        "every 5 minutes", "every 1 minutes", "every 5 mins", "every 2 hours", "every 25 hours", "every 99999 minutes",
        "every 2 hours synchronized", "every 24 hours", "every 1440 minutes", "every 1440 minutes synchronized",
        "1 of jan,april,july,oct 00:00", "1,15 of month 09:00", "31 of month 00:00", "29 of feb 12:00", "1 of quarter 09:00",
        "every 5 minutes from 10:00 to 12:00", "every 2 hours from 22:00 to 02:00",
        "every day 9:05", "every mon,wed 09:00", "every monday, friday 17:30", "EVERY SUNDAY 00:00",
        "1st monday of sep,oct 17:00", "2nd,third mon,wed,thu of march 17:00",
        "first sunday of month 09:00", "every monday of jan,feb 09:00", "every day of feb 06:00",
        "  0  0 *\t* *  ",
    ])
    func valid(_ expression: String) throws {
        let schedule = try Schedule(expression, timeZone: "Europe/Berlin")
        #expect(schedule.expression == expression)
        #expect(schedule.timeZone == "Europe/Berlin")
    }
}
