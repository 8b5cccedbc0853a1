import Testing
@testable import HearthModel

// Offsets used (by hand):
// Asia/Seoul: UTC+9 all year.
// America/New_York: EST = UTC-5, EDT = UTC-4. 2026-03-08 02:00 EST -> 03:00 EDT
//   (transition instant 07:00Z); 2026-11-01 02:00 EDT -> 01:00 EST (06:00Z).
// Europe/Berlin: CET = UTC+1, CEST = UTC+2. 2026-03-29 02:00 CET -> 03:00 CEST
//   (01:00Z); 2026-10-25 03:00 CEST -> 02:00 CET (01:00Z).

@Suite("Time zones and DST")
struct TimeZoneTests {
    // MARK: Seoul (no DST)

    @Test func seoulEveryFiveMinutesForOneLocalDay() throws {
        // Local day 2026-05-01 in Seoul = 2026-04-30T15:00Z ..< 2026-05-01T15:00Z.
        let schedule = try Schedule("every 5 minutes synchronized", timeZone: "Asia/Seoul")
        let start = ts("2026-04-30T15:00:00Z")
        let end = ts("2026-05-01T15:00:00Z")
        let day = schedule.nextFires(after: Timestamp(seconds: start.seconds - 1), count: 289)
        let inDay = day.filter { $0 < end }
        #expect(inDay.count == 288)
        #expect(inDay.first?.rfc3339 == "2026-04-30T15:00:00Z")
        #expect(inDay.last?.rfc3339 == "2026-05-01T14:55:00Z")
        #expect(zip(inDay, inDay.dropFirst()).allSatisfy { $1.seconds - $0.seconds == 300 })
        #expect(day.last?.rfc3339 == "2026-05-01T15:00:00Z")
    }

    static let seoulCases: [FireCase] = [
        FireCase("every day 09:00", in: "Asia/Seoul", after: "2026-05-01T00:00:00Z", [
            "2026-05-02T00:00:00Z", "2026-05-03T00:00:00Z",
        ]),
        FireCase("0 9 * * *", in: "Asia/Seoul", after: "2026-04-30T23:59:59Z", [
            "2026-05-01T00:00:00Z", "2026-05-02T00:00:00Z",
        ]),
        // Midnight local is 15:00Z the previous UTC day: weekday/month are local.
        FireCase("0 0 1 * *", in: "Asia/Seoul", after: "2026-01-01T00:00:00Z", ["2026-01-31T15:00:00Z"]),
        FireCase("every monday 00:30", in: "Asia/Seoul", after: "2026-01-01T00:00:00Z", ["2026-01-04T15:30:00Z"]),
    ]

    @Test("Seoul local days", arguments: seoulCases)
    func seoul(_ row: FireCase) throws { try row.check() }

    // MARK: New York

    static let newYorkSpringCases: [FireCase] = [
        // 02:30 EST = 07:30Z on 03-07; nonexistent on 03-08 -> 03:00 EDT = 07:00Z;
        // 02:30 EDT = 06:30Z on 03-09.
        FireCase("30 2 * * *", in: "America/New_York", after: "2026-03-06T12:00:00Z", [
            "2026-03-07T07:30:00Z", "2026-03-08T07:00:00Z", "2026-03-09T06:30:00Z",
        ]),
        // 02:00, 02:30 (gap) and 03:00 collapse into the transition instant.
        FireCase("every 30 minutes synchronized", in: "America/New_York", after: "2026-03-08T06:00:00Z", [
            "2026-03-08T06:30:00Z", "2026-03-08T07:00:00Z", "2026-03-08T07:30:00Z", "2026-03-08T08:00:00Z",
        ]),
        // Four gap minutes -> one firing.
        FireCase("*/15 2 * * *", in: "America/New_York", after: "2026-03-07T12:00:00Z", [
            "2026-03-08T07:00:00Z", "2026-03-09T06:00:00Z", "2026-03-09T06:15:00Z",
        ]),
        FireCase("0 3 * * *", in: "America/New_York", after: "2026-03-07T12:00:00Z", [
            "2026-03-08T07:00:00Z", "2026-03-09T07:00:00Z",
        ]),
        FireCase("every day 09:00", in: "America/New_York", after: "2026-03-07T00:00:00Z", [
            "2026-03-07T14:00:00Z", "2026-03-08T13:00:00Z",
        ]),
        // After the transition instant itself, the collapsed gap is spent.
        FireCase("every 30 minutes synchronized", in: "America/New_York", after: "2026-03-08T07:00:00Z", [
            "2026-03-08T07:30:00Z",
        ]),
    ]

    static let newYorkFallCases: [FireCase] = [
        // 01:30 occurs at 05:30Z (EDT) and 06:30Z (EST): only the first fires.
        FireCase("30 1 * * *", in: "America/New_York", after: "2026-10-31T12:00:00Z", [
            "2026-11-01T05:30:00Z", "2026-11-02T06:30:00Z",
        ]),
        FireCase("30 1 * * *", in: "America/New_York", after: "2026-11-01T05:30:00Z", ["2026-11-02T06:30:00Z"]),
        // Asked from inside the repeated hour (01:10 EST).
        FireCase("30 1 * * *", in: "America/New_York", after: "2026-11-01T06:10:00Z", ["2026-11-02T06:30:00Z"]),
        // 01:45 EDT, then nothing in the repeated hour, then 02:00 EST.
        FireCase("every 15 minutes synchronized", in: "America/New_York", after: "2026-11-01T05:30:00Z", [
            "2026-11-01T05:45:00Z", "2026-11-01T07:00:00Z", "2026-11-01T07:15:00Z",
        ]),
        FireCase("every 15 minutes synchronized", in: "America/New_York", after: "2026-11-01T06:20:00Z", [
            "2026-11-01T07:00:00Z",
        ]),
        FireCase("0 2 * * *", in: "America/New_York", after: "2026-10-31T12:00:00Z", [
            "2026-11-01T07:00:00Z", "2026-11-02T07:00:00Z",
        ]),
        FireCase("0 1 * * *", in: "America/New_York", after: "2026-10-31T12:00:00Z", [
            "2026-11-01T05:00:00Z", "2026-11-02T06:00:00Z",
        ]),
    ]

    @Test("New York spring forward", arguments: newYorkSpringCases)
    func newYorkSpring(_ row: FireCase) throws { try row.check() }

    @Test("New York fall back", arguments: newYorkFallCases)
    func newYorkFall(_ row: FireCase) throws { try row.check() }

    @Test func newYorkRepeatedHourIsSilent() throws {
        let schedule = try Schedule("every 15 minutes synchronized", timeZone: "America/New_York")
        let day = schedule.nextFires(after: ts("2026-11-01T04:00:00Z"), count: 200)
        let repeated = day.filter { $0 >= ts("2026-11-01T06:00:00Z") && $0 < ts("2026-11-01T07:00:00Z") }
        #expect(repeated.isEmpty)
        // 00:00-01:45 EDT (8) + 02:00-23:45 EST (88) on the 25-hour day = 96 firings.
        let localDay = day.filter { $0 >= ts("2026-11-01T04:00:00Z") && $0 < ts("2026-11-02T05:00:00Z") }
        #expect(localDay.count + 1 == 96)  // +1: 00:00 EDT (04:00Z) is not strictly after the start
    }

    @Test func newYorkSpringDayHasOneCollapsedFiring() throws {
        // Local 2026-03-08 is 05:00Z ..< 2026-03-09T04:00Z (23 hours).
        // Matching wall minutes: 96, of which 02:00-02:45 (4) + 03:00 collapse into one: 92.
        let schedule = try Schedule("every 15 minutes synchronized", timeZone: "America/New_York")
        let fires = schedule.nextFires(after: ts("2026-03-08T04:59:59Z"), count: 100)
            .filter { $0 < ts("2026-03-09T04:00:00Z") }
        #expect(fires.count == 92)
        #expect(fires.filter { $0.rfc3339 == "2026-03-08T07:00:00Z" }.count == 1)
    }

    // MARK: Berlin

    static let berlinCases: [FireCase] = [
        // Spring: 02:30 CET = 01:30Z; gap -> 03:00 CEST = 01:00Z; 02:30 CEST = 00:30Z.
        FireCase("30 2 * * *", in: "Europe/Berlin", after: "2026-03-27T12:00:00Z", [
            "2026-03-28T01:30:00Z", "2026-03-29T01:00:00Z", "2026-03-30T00:30:00Z",
        ]),
        FireCase("every 30 minutes synchronized", in: "Europe/Berlin", after: "2026-03-29T00:00:00Z", [
            "2026-03-29T00:30:00Z", "2026-03-29T01:00:00Z", "2026-03-29T01:30:00Z",
        ]),
        // Autumn: 02:30 CEST = 00:30Z (first occurrence); 02:30 CET = 01:30Z next day.
        FireCase("30 2 * * *", in: "Europe/Berlin", after: "2026-10-23T12:00:00Z", [
            "2026-10-24T00:30:00Z", "2026-10-25T00:30:00Z", "2026-10-26T01:30:00Z",
        ]),
        // 02:30 CEST, then the repeated 02:00-02:59 is skipped, then 03:00 CET.
        FireCase("every 30 minutes synchronized", in: "Europe/Berlin", after: "2026-10-25T00:00:00Z", [
            "2026-10-25T00:30:00Z", "2026-10-25T02:00:00Z", "2026-10-25T02:30:00Z",
        ]),
        FireCase("0 3 * * *", in: "Europe/Berlin", after: "2026-10-24T12:00:00Z", [
            "2026-10-25T02:00:00Z", "2026-10-26T02:00:00Z",
        ]),
    ]

    @Test("Berlin transitions", arguments: berlinCases)
    func berlin(_ row: FireCase) throws { try row.check() }

    // MARK: Other offsets

    static let otherCases: [FireCase] = [
        // Asia/Kolkata is UTC+5:30.
        FireCase("0 9 * * *", in: "Asia/Kolkata", after: "2026-01-01T00:00:00Z", ["2026-01-01T03:30:00Z"]),
        // Australia/Lord_Howe moves only 30 minutes: +10:30 -> +11 on 2026-10-04 at 02:00.
        // 02:00 and 02:15 local are skipped and fire at the transition (15:30Z on 10-03).
        FireCase("*/15 2 * * *", in: "Australia/Lord_Howe", after: "2026-10-03T15:00:00Z", [
            "2026-10-03T15:30:00Z", "2026-10-03T15:45:00Z",
        ]),
    ]

    @Test("unusual offsets", arguments: otherCases)
    func others(_ row: FireCase) throws { try row.check() }
}
