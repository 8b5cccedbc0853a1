import Testing
@testable import HearthModel

// Calendar facts used below (worked out by hand):
// 2026-01-01 is a Thursday; 2026-02-01 a Sunday; 2026-03-01 a Sunday;
// 2026-09-01 a Tuesday; 2026-10-01 a Thursday; 2026-11-01 a Sunday.
// 2028, 2032, 2036 are leap years; 2100 is not.

@Suite("Cron expressions (UTC)")
struct CronTests {
    static let fieldCases: [FireCase] = [
        FireCase("*/15 * * * *", after: "2026-01-01T00:00:00Z", [
            "2026-01-01T00:15:00Z", "2026-01-01T00:30:00Z", "2026-01-01T00:45:00Z",
            "2026-01-01T01:00:00Z", "2026-01-01T01:15:00Z",
        ]),
        FireCase("5,10-12,*/30 * * * *", after: "2026-01-01T00:00:00Z", [
            "2026-01-01T00:05:00Z", "2026-01-01T00:10:00Z", "2026-01-01T00:11:00Z",
            "2026-01-01T00:12:00Z", "2026-01-01T00:30:00Z", "2026-01-01T01:00:00Z",
        ]),
        FireCase("0 9-17/4 * * *", after: "2026-01-01T00:00:00Z", [
            "2026-01-01T09:00:00Z", "2026-01-01T13:00:00Z", "2026-01-01T17:00:00Z", "2026-01-02T09:00:00Z",
        ]),
        // `a/n` runs from a to the field maximum.
        FireCase("30 10/6 * * *", after: "2026-01-01T00:00:00Z", [
            "2026-01-01T10:30:00Z", "2026-01-01T16:30:00Z", "2026-01-01T22:30:00Z", "2026-01-02T10:30:00Z",
        ]),
        FireCase("0-5 0 1 1 *", after: "2026-01-01T00:00:00Z", [
            "2026-01-01T00:01:00Z", "2026-01-01T00:02:00Z", "2026-01-01T00:03:00Z",
            "2026-01-01T00:04:00Z", "2026-01-01T00:05:00Z", "2027-01-01T00:00:00Z",
        ]),
        FireCase("59 23 31 12 *", after: "2026-01-01T00:00:00Z", ["2026-12-31T23:59:00Z", "2027-12-31T23:59:00Z"]),
        // Month names, case-insensitive.
        FireCase("0 0 1 JAN,Jul *", after: "2025-12-31T12:00:00Z", [
            "2026-01-01T00:00:00Z", "2026-07-01T00:00:00Z", "2027-01-01T00:00:00Z",
        ]),
        FireCase("0 0 1 nov-dec *", after: "2026-01-01T00:00:00Z", [
            "2026-11-01T00:00:00Z", "2026-12-01T00:00:00Z", "2027-11-01T00:00:00Z",
        ]),
        // Weekday names and numbers; Friday 2026-01-02 -> the next week.
        FireCase("0 12 * * mon-fri", after: "2026-01-02T12:00:00Z", [
            "2026-01-05T12:00:00Z", "2026-01-06T12:00:00Z", "2026-01-07T12:00:00Z",
            "2026-01-08T12:00:00Z", "2026-01-09T12:00:00Z", "2026-01-12T12:00:00Z",
        ]),
        FireCase("0 0 * * 7", after: "2026-01-01T00:00:00Z", ["2026-01-04T00:00:00Z", "2026-01-11T00:00:00Z"]),
        FireCase("0 0 * * 0", after: "2026-01-01T00:00:00Z", ["2026-01-04T00:00:00Z", "2026-01-11T00:00:00Z"]),
        FireCase("0 0 * * SUN", after: "2026-01-01T00:00:00Z", ["2026-01-04T00:00:00Z", "2026-01-11T00:00:00Z"]),
        FireCase("0 0 * * fri-sun", after: "2026-01-01T00:00:00Z", [
            "2026-01-02T00:00:00Z", "2026-01-03T00:00:00Z", "2026-01-04T00:00:00Z", "2026-01-09T00:00:00Z",
        ]),
        FireCase("0 0 * * 5-7", after: "2026-01-01T00:00:00Z", [
            "2026-01-02T00:00:00Z", "2026-01-03T00:00:00Z", "2026-01-04T00:00:00Z", "2026-01-09T00:00:00Z",
        ]),
        // */2 over 0-7: Sun, Tue, Thu, Sat.
        FireCase("0 0 * * */2", after: "2026-01-01T00:00:00Z", [
            "2026-01-03T00:00:00Z", "2026-01-04T00:00:00Z", "2026-01-06T00:00:00Z", "2026-01-08T00:00:00Z",
        ]),
        // 1/2 over 1-7: Mon, Wed, Fri, Sun (7).
        FireCase("0 0 * * 1/2", after: "2026-01-01T00:00:00Z", [
            "2026-01-02T00:00:00Z", "2026-01-04T00:00:00Z", "2026-01-05T00:00:00Z", "2026-01-07T00:00:00Z",
        ]),
    ]

    static let dayRuleCases: [FireCase] = [
        // Both restricted: the 13th OR any Friday.
        FireCase("0 0 13 * fri", after: "2026-01-01T00:00:00Z", [
            "2026-01-02T00:00:00Z", "2026-01-09T00:00:00Z", "2026-01-13T00:00:00Z",
            "2026-01-16T00:00:00Z", "2026-01-23T00:00:00Z", "2026-01-30T00:00:00Z",
            "2026-02-06T00:00:00Z", "2026-02-13T00:00:00Z", "2026-02-20T00:00:00Z",
        ]),
        FireCase("0 0 1-7 * mon", after: "2026-01-01T00:00:00Z", [
            "2026-01-02T00:00:00Z", "2026-01-03T00:00:00Z", "2026-01-04T00:00:00Z",
            "2026-01-05T00:00:00Z", "2026-01-06T00:00:00Z", "2026-01-07T00:00:00Z",
            "2026-01-12T00:00:00Z", "2026-01-19T00:00:00Z",
        ]),
        // Only day of month restricted.
        FireCase("0 0 13 * *", after: "2026-01-01T00:00:00Z", [
            "2026-01-13T00:00:00Z", "2026-02-13T00:00:00Z", "2026-03-13T00:00:00Z",
        ]),
        // Only day of week restricted.
        FireCase("0 0 * * fri", after: "2026-01-01T00:00:00Z", ["2026-01-02T00:00:00Z", "2026-01-09T00:00:00Z"]),
        // The 30th of February never exists, but Mondays in February do.
        FireCase("0 0 30 2 mon", after: "2026-01-01T00:00:00Z", ["2026-02-02T00:00:00Z", "2026-02-09T00:00:00Z"]),
        // A stepped day-of-month is a restriction (only a bare `*` is not).
        FireCase("0 0 */10 * mon", after: "2026-01-01T00:00:00Z", [
            "2026-01-05T00:00:00Z", "2026-01-11T00:00:00Z", "2026-01-12T00:00:00Z", "2026-01-19T00:00:00Z",
            "2026-01-21T00:00:00Z", "2026-01-26T00:00:00Z", "2026-01-31T00:00:00Z",
        ]),
    ]

    static let monthEndCases: [FireCase] = [
        FireCase("0 0 31 * *", after: "2026-01-01T00:00:00Z", [
            "2026-01-31T00:00:00Z", "2026-03-31T00:00:00Z", "2026-05-31T00:00:00Z", "2026-07-31T00:00:00Z",
            "2026-08-31T00:00:00Z", "2026-10-31T00:00:00Z", "2026-12-31T00:00:00Z", "2027-01-31T00:00:00Z",
        ]),
        FireCase("0 0 29 2 *", after: "2026-01-01T00:00:00Z", [
            "2028-02-29T00:00:00Z", "2032-02-29T00:00:00Z", "2036-02-29T00:00:00Z",
        ]),
        // 2100 is not a leap year.
        FireCase("0 0 29 2 *", after: "2096-03-01T00:00:00Z", ["2104-02-29T00:00:00Z"]),
        FireCase("0 0 30 * *", after: "2026-01-01T00:00:00Z", [
            "2026-01-30T00:00:00Z", "2026-03-30T00:00:00Z", "2026-04-30T00:00:00Z",
        ]),
        FireCase("0 0 29 * *", after: "2027-01-30T00:00:00Z", ["2027-03-29T00:00:00Z"]),
        FireCase("0 0 29 * *", after: "2028-01-30T00:00:00Z", ["2028-02-29T00:00:00Z", "2028-03-29T00:00:00Z"]),
    ]

    static let macroCases: [FireCase] = [
        FireCase("@hourly", after: "2026-01-01T00:30:00Z", ["2026-01-01T01:00:00Z", "2026-01-01T02:00:00Z"]),
        FireCase("@daily", after: "2026-01-01T00:00:00Z", ["2026-01-02T00:00:00Z", "2026-01-03T00:00:00Z"]),
        FireCase("@midnight", after: "2026-01-01T12:00:00Z", ["2026-01-02T00:00:00Z"]),
        FireCase("@weekly", after: "2026-01-01T00:00:00Z", ["2026-01-04T00:00:00Z", "2026-01-11T00:00:00Z"]),
        FireCase("@monthly", after: "2026-01-01T00:00:00Z", ["2026-02-01T00:00:00Z", "2026-03-01T00:00:00Z"]),
        FireCase("@yearly", after: "2026-01-01T00:00:00Z", ["2027-01-01T00:00:00Z"]),
        FireCase("@ANNUALLY", after: "2025-06-01T00:00:00Z", ["2026-01-01T00:00:00Z"]),
    ]

    @Test("lists, ranges, steps and names", arguments: fieldCases)
    func fields(_ row: FireCase) throws { try row.check() }

    @Test("day-of-month / day-of-week rules", arguments: dayRuleCases)
    func dayRules(_ row: FireCase) throws { try row.check() }

    @Test("month ends and leap years", arguments: monthEndCases)
    func monthEnds(_ row: FireCase) throws { try row.check() }

    @Test("macros", arguments: macroCases)
    func macros(_ row: FireCase) throws { try row.check() }

    @Test("schedules that can never fire return nil",
          arguments: ["0 0 30 2 *", "0 0 31 4,6,9,11 *", "0 0 31 feb *"])
    func neverFires(_ expression: String) throws {
        let schedule = try Schedule(expression)
        #expect(schedule.nextFire(after: ts("2026-01-01T00:00:00Z")) == nil)
        #expect(schedule.nextFires(after: ts("2026-01-01T00:00:00Z"), count: 3).isEmpty)
    }

    @Test func searchEndsAtYear9999() throws {
        let leapDay = try Schedule("0 0 29 2 *")
        #expect(leapDay.nextFire(after: ts("9996-01-01T00:00:00Z"))?.rfc3339 == "9996-02-29T00:00:00Z")
        #expect(leapDay.nextFire(after: ts("9996-03-01T00:00:00Z")) == nil)
        let everyMinute = try Schedule("* * * * *")
        #expect(everyMinute.nextFire(after: ts("9999-12-31T23:58:00Z"))?.rfc3339 == "9999-12-31T23:59:00Z")
        #expect(everyMinute.nextFire(after: ts("9999-12-31T23:59:00Z")) == nil)
    }
}
