import Foundation
@testable import HearthCLI
import HearthModel
import Testing

@Suite("hearth deliveries, tasks and schedule")
struct DeliveryCommandTests {
    func config(_ dir: TempDir) -> String {
        dir.write("runtime.toml", "data_dir = \"data\"\nunits_dir = \"\(buildDirectory)\"\nunits = [\"DeliveryUnit\"]\n")
    }

    @Test("tasks enqueue prints the id; a repeated id, an unknown queue and bad options fail clearly")
    func enqueue() async throws {
        let dir = TempDir()
        let c = config(dir)
        let (code, out) = await run(["tasks", "enqueue", "work", "--data", #"{"label": "cli"}"#, "--id", "cli-1", "--delay", "60", "--config", c])
        #expect(code == 0, "\(out.stderr)")
        #expect(out.stdout == "cli-1")
        let (again, againOut) = await run(["tasks", "enqueue", "work", "--id", "cli-1", "--config", c])
        #expect(again == 1)
        #expect(againOut.stderr.contains("already-exists"))
        let (unknown, unknownOut) = await run(["tasks", "enqueue", "nope", "--config", c])
        #expect(unknown == 1)
        #expect(unknownOut.stderr.contains("no task queue named 'nope'"))
        let (both, bothOut) = await run(["tasks", "enqueue", "work", "--delay", "1", "--at", "2026-01-01T00:00:00Z", "--config", c])
        #expect(both == 2)
        #expect(bothOut.stderr.contains("either --delay or --at"))
        let (badAt, badAtOut) = await run(["tasks", "enqueue", "work", "--at", "tomorrow", "--config", c])
        #expect(badAt == 2)
        #expect(badAtOut.stderr.contains("RFC 3339"))
        let (far, farOut) = await run(["tasks", "enqueue", "work", "--delay", "3000000", "--config", c])
        #expect(far == 1)
        #expect(farOut.stderr.contains("30 days"))

        let (_, list) = await run(["deliveries", "list", "--function", "work", "--config", c])
        let rows = try list.stdout.split(separator: "\n").map { try JSONParser.parse(String($0), options: .tagged) }
        #expect(rows.count == 1)
        #expect(rows.first?["eventId"] == "cli-1")
        #expect(rows.first?["state"] == "pending")
        #expect(rows.first?["payload"]?["data"] == ["label": "cli"])

        let (deleted, _) = await run(["tasks", "delete", "work", "cli-1", "--config", c])
        #expect(deleted == 0)
        let (missing, missingOut) = await run(["tasks", "delete", "work", "cli-1", "--config", c])
        #expect(missing == 1)
        #expect(missingOut.stderr.contains("not-found"))
    }

    @Test("deliveries retry and drop act on ids; unknown ids and bad arguments fail")
    func retryDrop() async throws {
        let dir = TempDir()
        let c = config(dir)
        let (_, id) = await run(["tasks", "enqueue", "work", "--config", c])
        let (_, list) = await run(["deliveries", "list", "--config", c])
        let delivery = try JSONParser.parse(list.stdout, options: .tagged)["id"]?.intValue
        #expect(delivery != nil, "\(id.stdout)")
        let (retry, retryOut) = await run(["deliveries", "retry", String(delivery ?? 0), "--config", c])
        #expect(retry == 1, "only dead letters can be retried")
        #expect(retryOut.stderr.contains("no dead delivery"))
        let (drop, _) = await run(["deliveries", "drop", String(delivery ?? 0), "--config", c])
        #expect(drop == 0)
        let (_, empty) = await run(["deliveries", "list", "--config", c])
        #expect(empty.stdout.isEmpty)
        #expect(await run(["deliveries", "drop", "x", "--config", c]).0 == 2)
        #expect(await run(["deliveries", "list", "--state", "sleeping", "--config", c]).0 == 2)
        #expect(await run(["deliveries", "list", "--dead", "--state", "pending", "--config", c]).0 == 2)
        #expect(await run(["deliveries", "frobnicate", "--config", c]).0 == 2)
    }

    @Test("schedule list shows the next firing in its zone; schedule run queues a firing now")
    func schedules() async throws {
        let dir = TempDir()
        let c = config(dir)
        let (code, out) = await run(["schedule", "list", "--json", "--config", c])
        #expect(code == 0, "\(out.stderr)")
        let table = try JSONParser.parse(out.stdout, options: .tagged)
        #expect(table.arrayValue?.compactMap { $0["function"]?.stringValue } == ["fanOutTick", "nightly", "seoulTick"])
        #expect(table.arrayValue?[1]["timeZone"] == "America/New_York")
        #expect(table.arrayValue?[1]["nextFireLocal"]?.stringValue?.contains("02:30") == true)
        let (text, textOut) = await run(["schedule", "list", "--config", c])
        #expect(text == 0)
        #expect(textOut.stdout.contains("seoulTick  \"every 5 minutes\" (Asia/Seoul)"))
        let (fired, _) = await run(["schedule", "run", "nightly", "--config", c])
        #expect(fired == 0)
        let (_, list) = await run(["deliveries", "list", "--function", "nightly", "--config", c])
        #expect(try JSONParser.parse(list.stdout, options: .tagged)["payload"]?["jobName"] == "nightly")
        let (notSchedule, err) = await run(["schedule", "run", "work", "--config", c])
        #expect(notSchedule == 1)
        #expect(err.stderr.contains("no schedule function named 'work'"))
    }
}
