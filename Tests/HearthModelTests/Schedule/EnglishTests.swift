import Testing
@testable import HearthModel

// 2026-01-01 is a Thursday. See CronTests for the other calendar facts.

@Suite("English expressions (UTC)")
struct EnglishTests {
    /// Plain intervals are App Engine's "end-time interval": each firing comes N minutes or
    /// hours (elapsed) after the previous one, not aligned to the clock, any N.
    static let intervalCases: [FireCase] = [
        FireCase("every 7 minutes", after: "2026-01-01T23:50:00Z", [
            "2026-01-01T23:57:00Z", "2026-01-02T00:04:00Z", "2026-01-02T00:11:00Z",
        ]),
        FireCase("every 90 minutes", after: "2026-01-01T22:00:00Z", [
            "2026-01-01T23:30:00Z", "2026-01-02T01:00:00Z", "2026-01-02T02:30:00Z",
        ]),
        FireCase("every 1 minutes", after: "2026-01-01T00:00:00Z", ["2026-01-01T00:01:00Z", "2026-01-01T00:02:00Z"]),
        FireCase("every 5 mins", after: "2026-01-01T00:03:00Z", ["2026-01-01T00:08:00Z", "2026-01-01T00:13:00Z"]),
        FireCase("every 5 minutes", after: "2026-01-01T00:00:30Z", ["2026-01-01T00:05:30Z", "2026-01-01T00:10:30Z"]),
        FireCase("EVERY 2 HOURS", after: "2026-01-01T00:00:00Z", ["2026-01-01T02:00:00Z", "2026-01-01T04:00:00Z"]),
        FireCase("every 5 hours", after: "2026-01-01T16:00:00Z", [
            "2026-01-01T21:00:00Z", "2026-01-02T02:00:00Z", "2026-01-02T07:00:00Z",
        ]),
        FireCase("every 24 hours", after: "2026-01-01T00:00:00Z", ["2026-01-02T00:00:00Z", "2026-01-03T00:00:00Z"]),
        FireCase("every 25 hours", after: "2026-01-01T00:00:00Z", ["2026-01-02T01:00:00Z", "2026-01-03T02:00:00Z"]),
        FireCase("every 48 hours", after: "2026-01-01T06:00:00Z", ["2026-01-03T06:00:00Z"]),
        // Elapsed time: a DST change does not move the interval (New York springs forward on
        // 2026-03-08 at 02:00 local, 07:00Z).
        FireCase("every 1 hours", in: "America/New_York", after: "2026-03-08T06:30:00Z", [
            "2026-03-08T07:30:00Z", "2026-03-08T08:30:00Z",
        ]),
        // Synchronized: aligned to local midnight.
        FireCase("every 2 hours synchronized", after: "2026-01-01T00:00:00Z", [
            "2026-01-01T02:00:00Z", "2026-01-01T04:00:00Z",
        ]),
        FireCase("every 5 minutes synchronized", after: "2026-01-01T00:03:00Z", ["2026-01-01T00:05:00Z", "2026-01-01T00:10:00Z"]),
        FireCase("every 90 minutes synchronized", after: "2026-01-01T22:00:00Z", [
            "2026-01-01T22:30:00Z", "2026-01-02T00:00:00Z", "2026-01-02T01:30:00Z",
        ]),
        FireCase("every 5 hours from 00:00 to 23:59", after: "2026-01-01T16:00:00Z", [
            "2026-01-01T20:00:00Z", "2026-01-02T00:00:00Z", "2026-01-02T05:00:00Z",
        ]),
    ]

    /// `MONTHDAYS of MONTHS HH:MM`: a month without the day is skipped; the 29th of February
    /// fires in leap years only.
    static let monthdayCases: [FireCase] = [
        FireCase("1 of jan,april,july,oct 00:00", after: "2026-01-01T00:00:00Z", [
            "2026-04-01T00:00:00Z", "2026-07-01T00:00:00Z", "2026-10-01T00:00:00Z", "2027-01-01T00:00:00Z",
        ]),
        FireCase("1,15 of month 09:00", after: "2026-01-10T00:00:00Z", [
            "2026-01-15T09:00:00Z", "2026-02-01T09:00:00Z", "2026-02-15T09:00:00Z",
        ]),
        FireCase("31 of month 12:00", after: "2026-01-31T12:00:00Z", [
            "2026-03-31T12:00:00Z", "2026-05-31T12:00:00Z", "2026-07-31T12:00:00Z", "2026-08-31T12:00:00Z",
        ]),
        FireCase("29 of feb 00:00", after: "2026-01-01T00:00:00Z", ["2028-02-29T00:00:00Z", "2032-02-29T00:00:00Z"]),
        FireCase("03 of month 12:34", after: "2026-01-01T00:00:00Z", ["2026-01-03T12:34:00Z", "2026-02-03T12:34:00Z"]),
        FireCase("1 of quarter 06:00", after: "2026-02-01T00:00:00Z", ["2026-04-01T06:00:00Z", "2026-07-01T06:00:00Z"]),
        FireCase("15 of month 09:00", in: "Asia/Seoul", after: "2026-01-01T00:00:00Z", ["2026-01-15T00:00:00Z"]),
    ]

    static let windowCases: [FireCase] = [
        FireCase("every 5 minutes from 10:00 to 10:20", after: "2026-01-01T00:00:00Z", [
            "2026-01-01T10:00:00Z", "2026-01-01T10:05:00Z", "2026-01-01T10:10:00Z",
            "2026-01-01T10:15:00Z", "2026-01-01T10:20:00Z", "2026-01-02T10:00:00Z",
        ]),
        // 10:21 would pass the end, so 10:14 is the last tick.
        FireCase("every 7 minutes from 10:00 to 10:20", after: "2026-01-01T00:00:00Z", [
            "2026-01-01T10:00:00Z", "2026-01-01T10:07:00Z", "2026-01-01T10:14:00Z", "2026-01-02T10:00:00Z",
        ]),
        FireCase("every 2 hours from 9:30 to 17:00", after: "2026-01-01T00:00:00Z", [
            "2026-01-01T09:30:00Z", "2026-01-01T11:30:00Z", "2026-01-01T13:30:00Z",
            "2026-01-01T15:30:00Z", "2026-01-02T09:30:00Z",
        ]),
        // Windows wrapping past midnight.
        FireCase("every 2 hours from 22:00 to 02:00", after: "2026-01-01T12:00:00Z", [
            "2026-01-01T22:00:00Z", "2026-01-02T00:00:00Z", "2026-01-02T02:00:00Z", "2026-01-02T22:00:00Z",
        ]),
        FireCase("every 2 hours from 22:00 to 02:00", after: "2026-01-01T00:00:00Z", [
            "2026-01-01T02:00:00Z", "2026-01-01T22:00:00Z",
        ]),
        FireCase("every 3 hours from 22:00 to 02:00", after: "2026-01-01T12:00:00Z", [
            "2026-01-01T22:00:00Z", "2026-01-02T01:00:00Z", "2026-01-02T22:00:00Z",
        ]),
    ]

    static let dayCases: [FireCase] = [
        FireCase("every day 09:00", after: "2026-01-01T09:00:00Z", ["2026-01-02T09:00:00Z", "2026-01-03T09:00:00Z"]),
        FireCase("every day 9:05", after: "2026-01-01T00:00:00Z", ["2026-01-01T09:05:00Z", "2026-01-02T09:05:00Z"]),
        FireCase("Every Day 00:00", after: "2026-01-01T00:00:00Z", ["2026-01-02T00:00:00Z"]),
        FireCase("every mon,wed 09:00", after: "2026-01-01T00:00:00Z", [
            "2026-01-05T09:00:00Z", "2026-01-07T09:00:00Z", "2026-01-12T09:00:00Z",
        ]),
        FireCase("every monday, friday 17:30", after: "2026-01-01T00:00:00Z", [
            "2026-01-02T17:30:00Z", "2026-01-05T17:30:00Z", "2026-01-09T17:30:00Z",
        ]),
        FireCase("every sunday 23:59", after: "2026-01-01T00:00:00Z", ["2026-01-04T23:59:00Z", "2026-01-11T23:59:00Z"]),
        FireCase("every monday of jan,feb 09:00", after: "2026-02-20T00:00:00Z", [
            "2026-02-23T09:00:00Z", "2027-01-04T09:00:00Z",
        ]),
        FireCase("every day of feb 06:00", after: "2026-02-27T12:00:00Z", [
            "2026-02-28T06:00:00Z", "2027-02-01T06:00:00Z",
        ]),
        FireCase("every day of month 06:00", after: "2026-02-27T12:00:00Z", [
            "2026-02-28T06:00:00Z", "2026-03-01T06:00:00Z",
        ]),
    ]

    static let ordinalCases: [FireCase] = [
        // Sep 1 2026 is a Tuesday, Oct 1 a Thursday, Sep 1 2027 a Wednesday.
        FireCase("1st monday of sep,oct 17:00", after: "2026-01-01T00:00:00Z", [
            "2026-09-07T17:00:00Z", "2026-10-05T17:00:00Z", "2027-09-06T17:00:00Z",
        ]),
        FireCase("first monday of september 00:00", after: "2026-01-01T00:00:00Z", ["2026-09-07T00:00:00Z"]),
        // March 2026 starts on a Sunday: Mondays 2,9,16; Wednesdays 4,11,18;
        // Thursdays 5,12,19. March 2027 starts on a Monday: 8, 10, 11 are 2nd.
        FireCase("2nd,third mon,wed,thu of march 17:00", after: "2026-01-01T00:00:00Z", [
            "2026-03-09T17:00:00Z", "2026-03-11T17:00:00Z", "2026-03-12T17:00:00Z",
            "2026-03-16T17:00:00Z", "2026-03-18T17:00:00Z", "2026-03-19T17:00:00Z",
            "2027-03-08T17:00:00Z",
        ]),
        FireCase("first sunday of month 09:00", after: "2026-01-01T00:00:00Z", [
            "2026-01-04T09:00:00Z", "2026-02-01T09:00:00Z", "2026-03-01T09:00:00Z", "2026-04-05T09:00:00Z",
        ]),
        // Only January, May and July 2026 have five Fridays (in the first seven months).
        FireCase("5th friday of month 12:00", after: "2026-01-01T00:00:00Z", [
            "2026-01-30T12:00:00Z", "2026-05-29T12:00:00Z", "2026-07-31T12:00:00Z",
        ]),
        FireCase("4th thursday of nov 12:00", after: "2026-01-01T00:00:00Z", ["2026-11-26T12:00:00Z"]),
        FireCase("First Monday Of Sep 17:00", after: "2026-09-07T17:00:00Z", ["2027-09-06T17:00:00Z"]),
    ]

    @Test("every N minutes/hours", arguments: intervalCases)
    func intervals(_ row: FireCase) throws { try row.check() }

    @Test("days of the month", arguments: monthdayCases)
    func monthdays(_ row: FireCase) throws { try row.check() }

    @Test("interval windows", arguments: windowCases)
    func windows(_ row: FireCase) throws { try row.check() }

    @Test("every day / every DAYS", arguments: dayCases)
    func days(_ row: FireCase) throws { try row.check() }

    @Test("ordinal weekdays", arguments: ordinalCases)
    func ordinals(_ row: FireCase) throws { try row.check() }

    @Test func everySevenMinutesSynchronizedIsRefused() throws {
        // 7 does not divide 1440: synchronized needs a period that divides the day.
        #expect(throws: ScheduleError.self) { try Schedule("every 7 minutes synchronized") }
    }

    @Test func everySevenMinutesInAWindowFillsTheDay() throws {
        // 0, 7, ..., 1435: 206 firings per day.
        let day = try Schedule("every 7 minutes from 00:00 to 23:59").nextFires(after: ts("2025-12-31T23:59:00Z"), count: 207)
        #expect(day.first?.rfc3339 == "2026-01-01T00:00:00Z")
        #expect(day[205].rfc3339 == "2026-01-01T23:55:00Z")
        #expect(day[206].rfc3339 == "2026-01-02T00:00:00Z")
    }

    @Test("cron and English spellings agree", arguments: [
        ("every day 09:00", "0 9 * * *"),
        ("every 2 hours synchronized", "0 */2 * * *"),
        ("every 15 minutes synchronized", "*/15 * * * *"),
        ("1,15 of month 09:00", "0 9 1,15 * *"),
        ("every mon,fri 07:45", "45 7 * * 1,5"),
        ("every day of jan 00:00", "0 0 * 1 *"),
    ])
    func equivalents(_ english: String, _ cron: String) throws {
        let start = ts("2026-03-01T00:00:00Z")
        for zone in ["UTC", "America/New_York", "Australia/Lord_Howe"] {
            #expect(try Schedule(english, timeZone: zone).nextFires(after: start, count: 50)
                == Schedule(cron, timeZone: zone).nextFires(after: start, count: 50))
        }
    }
}
