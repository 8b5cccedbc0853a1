import Foundation
import Testing
@testable import HearthModel

@Suite("nextFire contract")
struct NextFireTests {
    @Test func equalInstantIsExcluded() throws {
        let schedule = try Schedule("0 9 * * *")
        #expect(schedule.nextFire(after: ts("2026-01-01T09:00:00Z"))?.rfc3339 == "2026-01-02T09:00:00Z")
        #expect(schedule.nextFire(after: ts("2026-01-01T08:59:59Z"))?.rfc3339 == "2026-01-01T09:00:00Z")
    }

    @Test func nanosAreRespected() throws {
        let schedule = try Schedule("0 9 * * *")
        let justBefore = ts("2026-01-01T08:59:59Z", nanos: 999_999_999)
        #expect(schedule.nextFire(after: justBefore)?.rfc3339 == "2026-01-01T09:00:00Z")
        let justAfter = ts("2026-01-01T09:00:00Z", nanos: 500_000_000)
        #expect(schedule.nextFire(after: justAfter)?.rfc3339 == "2026-01-02T09:00:00Z")
        let everyMinute = try Schedule("* * * * *")
        #expect(everyMinute.nextFire(after: ts("2026-01-01T12:00:30Z"))?.rfc3339 == "2026-01-01T12:01:00Z")
    }

    @Test func firingsAreWholeMinutes() throws {
        let fires = try Schedule("every 7 minutes from 00:00 to 23:59", timeZone: "Asia/Kolkata")
            .nextFires(after: ts("2026-01-01T00:00:17Z", nanos: 3), count: 100)
        #expect(fires.allSatisfy { $0.nanos == 0 && $0.seconds % 60 == 0 })
    }

    @Test func nextFiresCount() throws {
        let schedule = try Schedule("0 * * * *")
        let start = ts("2026-01-01T00:00:00Z")
        #expect(schedule.nextFires(after: start, count: 0).isEmpty)
        #expect(schedule.nextFires(after: start, count: -3).isEmpty)
        let three = schedule.nextFires(after: start, count: 3)
        #expect(three.map(\.rfc3339) == ["2026-01-01T01:00:00Z", "2026-01-01T02:00:00Z", "2026-01-01T03:00:00Z"])
        // Chaining nextFire gives the same sequence.
        var chained: [Timestamp] = []
        var current = start
        for _ in 0..<3 {
            current = try #require(schedule.nextFire(after: current))
            chained.append(current)
        }
        #expect(chained == three)
    }

    @Test func farPastInstants() throws {
        let schedule = try Schedule("0 0 1 1 *")
        // 0001-01-01T00:00:00Z (proleptic Gregorian) is -62_135_596_800.
        #expect(schedule.nextFire(after: Timestamp(seconds: .min))?.seconds == -62_135_596_800)
        #expect(schedule.nextFire(after: Timestamp(seconds: .max)) == nil)
        #expect(schedule.nextFire(after: ts("1969-12-31T00:00:00Z"))?.rfc3339 == "1970-01-01T00:00:00Z")
    }

    @Test func schedulesAreValues() throws {
        let a = try Schedule("*/5 * * * *", timeZone: "Asia/Seoul")
        let b = try Schedule("*/5 * * * *", timeZone: "Asia/Seoul")
        let c = try Schedule("*/5 * * * *")
        #expect(a == b)
        #expect(a != c)
        #expect(Set([a, b, c]).count == 2)
        #expect(c.timeZone == "UTC")
        #expect(a.description == "'*/5 * * * *' in Asia/Seoul")
    }

    // MARK: Sparse and long runs
    //
    // No wall-clock bounds (the machines are shared): a search that stepped minute by minute
    // through the years between two February 29ths (about 2 million minutes each, 200 times)
    // would run for many minutes and hit the time limit; one that skips by field answers at once.

    @Test("sparse schedules answer without stepping through every minute", .timeLimit(.minutes(1)),
          arguments: ["0 0 29 2 *", "0 0 31 * *", "5th friday of feb 12:00"])
    func sparseIsFast(_ expression: String) throws {
        let schedule = try Schedule(expression, timeZone: "America/New_York")
        let fires = schedule.nextFires(after: ts("2026-01-01T00:00:00Z"), count: 200)
        #expect(fires.count == 200)
        #expect(zip(fires, fires.dropFirst()).allSatisfy { $0 < $1 })
    }

    @Test("1000 successive calls", .timeLimit(.minutes(1)), arguments: [
        ("* * * * *", "America/New_York"), ("every 7 minutes from 00:00 to 23:59", "Europe/Berlin"),
        ("0 0 29 2 *", "UTC"), ("30 2 * * *", "America/New_York"), ("*/5 * 13 * fri", "Asia/Seoul"),
    ])
    func thousandCalls(_ expression: String, _ zone: String) throws {
        let schedule = try Schedule(expression, timeZone: zone)
        let fires = schedule.nextFires(after: ts("2026-01-01T00:00:00Z"), count: 1000)
        #expect(fires.count == 1000)
        #expect(zip(fires, fires.dropFirst()).allSatisfy { $0 < $1 })
    }
}
