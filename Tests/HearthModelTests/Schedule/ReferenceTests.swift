import Foundation
import Testing
@testable import HearthModel

/// Cross-checks against an independent, deliberately naive model built on
/// Foundation's `Calendar`: walk UTC minute by minute, read the local wall
/// clock, and fire when a newly reached wall minute matches. Wall minutes
/// jumped over by a gap fire at the first instant past them; wall minutes
/// already seen (a repeated hour) never fire again.
@Suite("Reference model (Calendar, minute by minute)")
struct ReferenceTests {
    /// A schedule plus an independent predicate over local wall-clock fields.
    struct Reference: Sendable, CustomTestStringConvertible {
        var expression: String
        var matches: @Sendable (_ c: DateComponents) -> Bool
        var testDescription: String { expression }
    }

    static let references: [Reference] = [
        Reference(expression: "*/15 * * * *") { $0.minute! % 15 == 0 },
        Reference(expression: "30 2 * * *") { $0.hour! == 2 && $0.minute! == 30 },
        Reference(expression: "0,30 1-3 * * *") { [0, 30].contains($0.minute!) && (1...3).contains($0.hour!) },
        Reference(expression: "every 7 minutes from 00:00 to 23:59") { ($0.hour! * 60 + $0.minute!) % 7 == 0 },
        Reference(expression: "every 20 minutes from 01:10 to 03:10") {
            let m = $0.hour! * 60 + $0.minute!
            return (70...190).contains(m) && (m - 70) % 20 == 0
        },
        Reference(expression: "0 0 * * sat,sun") { $0.hour! == 0 && $0.minute! == 0 && [1, 7].contains($0.weekday!) },
    ]

    static let zones = [
        "America/New_York", "Europe/Berlin", "Australia/Lord_Howe", "America/Santiago",
        "Pacific/Chatham", "Asia/Seoul", "America/Sao_Paulo", "Europe/London",
    ]

    /// Each DST transition of 2026 (or one plain day for zones without DST).
    static func windows(for zone: TimeZone) -> [(Date, Date)] {
        var windows: [(Date, Date)] = []
        var cursor = Date(timeIntervalSince1970: 1_767_225_600)  // 2026-01-01T00:00:00Z
        let end = Date(timeIntervalSince1970: 1_798_761_600)     // 2027-01-01T00:00:00Z
        while let transition = zone.nextDaylightSavingTimeTransition(after: cursor), transition < end {
            windows.append((transition - 86_400, transition + 86_400))
            cursor = transition
        }
        if windows.isEmpty {
            let day = Date(timeIntervalSince1970: 1_777_593_600)  // 2026-05-01T00:00:00Z
            windows.append((day - 86_400, day + 86_400))
        }
        return windows
    }

    static func referenceFires(_ reference: Reference, zone: TimeZone, from: Date, to: Date) -> [Int64] {
        var local = Calendar(identifier: .gregorian)
        local.timeZone = zone
        var utc = Calendar(identifier: .gregorian)
        utc.timeZone = TimeZone(identifier: "UTC")!
        let fields: Set<Calendar.Component> = [.year, .month, .day, .hour, .minute, .weekday]

        /// Local wall time as "minutes since 1970 as if it were UTC".
        func wallMinute(_ date: Date) -> Int64 {
            var c = local.dateComponents(fields, from: date)
            c.weekday = nil
            return Int64(utc.date(from: c)!.timeIntervalSince1970) / 60
        }

        var fires: [Int64] = []
        let warmUp = from.addingTimeInterval(-6 * 3600)
        var highestSeen = wallMinute(warmUp)
        var instant = Int64(warmUp.timeIntervalSince1970) + 60
        while instant <= Int64(to.timeIntervalSince1970) {
            let wall = wallMinute(Date(timeIntervalSince1970: Double(instant)))
            if wall > highestSeen {
                // Every wall minute reached since the last step (more than one in a gap).
                let reached = (highestSeen + 1...wall).contains { minute in
                    reference.matches(utc.dateComponents(fields, from: Date(timeIntervalSince1970: Double(minute * 60))))
                }
                if reached && instant > Int64(from.timeIntervalSince1970) { fires.append(instant) }
                highestSeen = wall
            }
            instant += 60
        }
        return fires
    }

    @Test("matches the reference around every 2026 transition", arguments: references)
    func matchesReference(_ reference: Reference) throws {
        for identifier in Self.zones {
            let zone = try #require(TimeZone(identifier: identifier))
            let schedule = try Schedule(reference.expression, timeZone: identifier)
            for (from, to) in Self.windows(for: zone) {
                let expected = Self.referenceFires(reference, zone: zone, from: from, to: to)
                var actual: [Int64] = []
                var cursor = Timestamp(date: from)
                while let next = schedule.nextFire(after: cursor), next.date <= to {
                    actual.append(next.seconds)
                    cursor = next
                }
                #expect(actual == expected, "\(reference.expression) in \(identifier) around \(from)")
            }
        }
    }

    @Test func transitionWindowsAreFound() throws {
        // Guards the reference test against silently comparing plain days only.
        #expect(Self.windows(for: TimeZone(identifier: "America/New_York")!).map(\.0.timeIntervalSince1970)
            == [1_772_953_200 - 86_400, 1_793_512_800 - 86_400])  // 2026-03-08T07:00Z, 2026-11-01T06:00Z
        #expect(Self.windows(for: TimeZone(identifier: "Australia/Lord_Howe")!).count == 2)
        #expect(Self.windows(for: TimeZone(identifier: "Asia/Seoul")!).count == 1)
    }

    @Test func civilDatesAgreeWithCalendar() throws {
        var utc = Calendar(identifier: .gregorian)
        utc.timeZone = TimeZone(identifier: "UTC")!
        // Every 97th day from 1900 to 2400, plus the edges of leap centuries.
        let days = Array(stride(from: -25_567, through: 157_000, by: 97)) + [10_956, 10_957, 47_482, 47_541]
        for dayNumber in days {
            let c = utc.dateComponents([.year, .month, .day, .weekday],
                                       from: Date(timeIntervalSince1970: Double(dayNumber) * 86_400))
            let civil = CivilDate(dayNumber: dayNumber)
            let expected: [Int] = [c.year!, c.month!, c.day!]
            #expect([civil.year, civil.month, civil.day] == expected)
            #expect(civil.weekday == c.weekday! - 1)
            #expect(civil.dayNumber == dayNumber)
        }
    }

    @Test func wallClockAgreesWithCalendar() throws {
        for identifier in Self.zones {
            let zone = try #require(TimeZone(identifier: identifier))
            var local = Calendar(identifier: .gregorian)
            local.timeZone = zone
            let clock = ZoneClock(zone: zone)
            for instant in stride(from: Int64(1_767_225_600), to: 1_798_761_600, by: 3_600 * 7 + 60 * 13) {
                let c = local.dateComponents([.year, .month, .day, .hour, .minute],
                                             from: Date(timeIntervalSince1970: Double(instant)))
                let wall = clock.wallSeconds(at: instant)
                let civil = CivilDate(dayNumber: Int(floorDiv(wall, 86_400)))
                let minute = Int(floorMod(wall, 86_400) / 60)
                let expected: [Int] = [c.year!, c.month!, c.day!, c.hour!, c.minute!]
                #expect([civil.year, civil.month, civil.day, minute / 60, minute % 60] == expected,
                        "\(identifier) at \(instant)")
            }
        }
    }
}
