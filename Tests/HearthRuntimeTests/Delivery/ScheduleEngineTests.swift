import Foundation
import HearthModel
@_spi(Internals) @testable import HearthRuntime
import HearthStore
import HearthTesting
import Testing

@Suite("Schedules in the delivery engine")
struct ScheduleEngineTests {
    func firings(_ app: TestRuntime, _ function: String) async throws -> [Timestamp] {
        try await app.documents(in: "runs").filter { $0.fields["function"] == .string(function) }
            .compactMap { $0.fields["event"]?.stringValue.flatMap(Timestamp.init(rfc3339:)) }.sorted()
    }

    @Test("every 5 minutes in Asia/Seoul: 288 firings in a simulated day, each at its instant, none twice")
    func seoulDay() async throws {
        let start = Timestamp(rfc3339: "2026-01-01T00:00:00Z")!  // 09:00 in Seoul
        let app = try await TestRuntime(units: ["DeliveryUnit"], start: start)
        await app.advance(by: .seconds(86_400))
        let fired = try await firings(app, "seoulTick")
        #expect(fired.count == 288)
        #expect(fired.first == start + .seconds(300), "a new schedule first fires at its next instant after it starts")
        #expect(fired.last == start + .seconds(86_400))
        #expect(zip(fired, fired.dropFirst()).allSatisfy { $1 - $0 == .seconds(300) })
        let runs = try await app.documents(in: "runs").filter { $0.fields["function"] == "seoulTick" }
        #expect(runs.allSatisfy { $0.fields["count"] == 1 && $0.fields["at"] == .timestamp(Timestamp(rfc3339: $0.fields["event"]!.stringValue!)!) })
    }

    @Test("a plain interval counts from the previous firing in elapsed time, kept in the database across a restart")
    func intervalFromPreviousFiring() async throws {
        let dir = NSTemporaryDirectory() + "hearth-interval-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let start = Timestamp(rfc3339: "2026-01-01T00:02:30Z")!  // not on any 5-minute grid
        do {
            let app = try await TestRuntime(units: ["DeliveryUnit"], start: start, configure: { $0.dataDirectory = dir })
            await app.advance(by: .seconds(700))
            #expect(try await firings(app, "seoulTick").map(\.rfc3339) == ["2026-01-01T00:07:30Z", "2026-01-01T00:12:30Z"])
        }
        // Restarted 60 s later: the next firing is still 300 s after the last one.
        let again = try await TestRuntime(units: ["DeliveryUnit"], start: start + .seconds(760), configure: { $0.dataDirectory = dir })
        await again.advance(by: .seconds(300))
        #expect(try await firings(again, "seoulTick").map(\.rfc3339).suffix(2) == ["2026-01-01T00:12:30Z", "2026-01-01T00:17:30Z"])
    }

    @Test("30 2 * * * in New York across the spring-forward gap fires once a day, at 03:00 EDT on the day of the gap")
    func newYorkSpringForward() async throws {
        let app = try await TestRuntime(units: ["DeliveryUnit"], start: Timestamp(rfc3339: "2026-03-06T12:00:00Z")!)
        await app.advance(to: Timestamp(rfc3339: "2026-03-10T12:00:00Z")!)
        #expect(try await firings(app, "nightly").map(\.rfc3339) == [
            "2026-03-07T07:30:00Z",  // 02:30 EST
            "2026-03-08T07:00:00Z",  // 02:30 does not exist: 03:00 EDT
            "2026-03-09T06:30:00Z",  // 02:30 EDT
            "2026-03-10T06:30:00Z",
        ])
    }

    @Test("after downtime a missed interval schedule fires once, at the restart, then an interval after each firing")
    func missedRunFiresOnce() async throws {
        let dir = NSTemporaryDirectory() + "hearth-sched-\(UUID().uuidString)"
        let start = Timestamp(rfc3339: "2026-01-01T00:00:00Z")!
        do {
            let first = try await TestRuntime(units: ["DeliveryUnit"], start: start, configure: { $0.dataDirectory = dir })
            await first.advance(by: .seconds(600))  // fires at +5 and +10 minutes
            #expect(try await firings(first, "seoulTick").count == 2)
        }
        // Down for two hours: 24 instants missed.
        let second = try await TestRuntime(units: ["DeliveryUnit"], start: start + .seconds(600 + 7200 + 60), configure: { $0.dataDirectory = dir })
        await second.settle()
        let fired = try await firings(second, "seoulTick")
        #expect(fired.count == 3)
        // An interval (elapsed time after the previous firing) that missed its time fires once, at
        // once, and the next comes an interval after that; calendar schedules fire their latest
        // missed instant (latestInstantAfterDowntime).
        #expect(fired.last == start + .seconds(600 + 7200 + 60), "once, at the restart")
        await second.advance(by: .seconds(299))
        #expect(try await firings(second, "seoulTick").count == 3)
        await second.advance(by: .seconds(1))
        #expect(try await firings(second, "seoulTick").count == 4)
    }

    @Test("two runtimes sharing one database fire each instant once")
    func sharedDatabaseFiresOnce() async throws {
        let dir = NSTemporaryDirectory() + "hearth-shared-\(UUID().uuidString)"
        let start = Timestamp(rfc3339: "2026-01-01T00:00:00Z")!
        let a = try await TestRuntime(units: ["DeliveryUnit"], start: start, configure: { $0.dataDirectory = dir })
        let b = try await TestRuntime(units: ["DeliveryUnit"], start: start, configure: { $0.dataDirectory = dir })
        for _ in 0..<12 {
            await a.advance(by: .seconds(150))
            await b.advance(by: .seconds(150))
        }
        let fired = try await firings(a, "seoulTick")
        #expect(fired.count == 6)
        let runs = try await a.documents(in: "runs").filter { $0.fields["function"] == "seoulTick" }
        #expect(runs.allSatisfy { $0.fields["count"] == 1 }, "no instant ran twice")
    }

    @Test("a schedule can be run now, outside its timing; the schedule table shows next firings in their zones")
    func runNow() async throws {
        let app = try await TestRuntime(units: ["DeliveryUnit"])
        try await app.runtime.runScheduleNow("nightly")
        await app.settle()
        let fired = try await firings(app, "nightly")
        #expect(fired == [app.clock.now()])
        let table = try app.runtime.scheduleTable()
        #expect(table.map(\.function) == ["fanOutTick", "nightly", "seoulTick"])
        #expect(table[1].timeZone == "America/New_York")
        #expect(table[1].nextFire == Timestamp(rfc3339: "2026-01-01T07:30:00Z"))
        await #expect(throws: HTTPSError.self) { try await app.runtime.runScheduleNow("work") }
    }

    @Test("a unit declaring an invalid schedule or time zone is refused at load, with the position")
    func invalidScheduleRefused() throws {
        let manifest = FunctionManifest(unit: "Bad", abiVersion: 1, functions: [
            FunctionSpec(name: "a", trigger: .schedule(schedule: "*/5 * * * mon-xyz", timeZone: "Asia/Seoul")),
            FunctionSpec(name: "b", trigger: .schedule(schedule: "every day 09:00", timeZone: "Mars/Base")),
            FunctionSpec(name: "c", trigger: .schedule(schedule: "every day 9am", timeZone: "UTC")),
            FunctionSpec(name: "d", trigger: .schedule(schedule: "every monday 09:00", timeZone: "Europe/Berlin")),
        ])
        let problems = manifest.problems(validateSchedule: Runtime.scheduleProblem)
        #expect(problems.count == 3)
        #expect(problems[0] == "function 'a': schedule '*/5 * * * mon-xyz': unknown day name 'xyz' at column 15")
        #expect(problems[1].hasPrefix("function 'b': ") && problems[1].contains("unknown time zone 'Mars/Base'"))
        #expect(problems[2].hasPrefix("function 'c': ") && problems[2].contains("column"))
    }
}
