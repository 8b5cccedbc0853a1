import Foundation
import HearthModel
@_spi(Internals) @testable import HearthRuntime
import Testing

@Suite("Loading units through dlopen")
struct UnitLoadingTests {
    @Test("a unit loads from its .so and its functions enter the table with trigger and options")
    func loadsEchoUnit() async throws {
        let runtime = try await startRuntime(units: ["EchoUnit"])
        #expect(runtime.loadErrors.isEmpty)
        let table = runtime.table
        let echo = try #require(table["echo"])
        #expect(echo.unit.name == "EchoUnit")
        #expect(echo.trigger == .callable)
        #expect(table["tick"]?.trigger == .schedule(schedule: "every 5 minutes", timeZone: "Asia/Seoul"))
        #expect(table["itemCreated"]?.trigger == .document(.created, pattern: "members/{uid}/items/{itemId}"))
        #expect(table["itemCreated"]?.spec.options.retry == .eventRetryDefault)
        #expect(table["work"]?.spec.options.rateLimits == RateLimits(maxDispatchesPerSecond: 10, maxConcurrentDispatches: 5))
        #expect(table["work"]?.spec.options.retry == .taskQueueDefault)
        #expect(table["userCreated"]?.trigger == .user(.created))
        #expect(table["hello"]?.trigger == .request)
        #expect(table["sleep"]?.spec.options.timeout == .seconds(5))
    }

    @Test("a unit that registers a name twice is refused with the name, and the others still load")
    func duplicateNameRefused() async throws {
        let runtime = try await startRuntime(units: ["BrokenUnit", "EchoUnit"])
        let error = try #require(runtime.loadErrors.first)
        #expect(runtime.loadErrors.count == 1)
        #expect(error.unit == "BrokenUnit")
        #expect(error.path.hasSuffix("libBrokenUnit.so"))
        #expect(error.reason.contains("'twice' is registered twice"))
        #expect(runtime.table["echo"] != nil)
    }

    @Test("a unit whose function names clash with an earlier unit's is refused naming both")
    func clashRefused() async throws {
        let runtime = try await startRuntime(units: ["EchoUnit", "ClashUnit"])
        let error = try #require(runtime.loadErrors.first)
        #expect(error.unit == "ClashUnit")
        #expect(error.reason.contains("'echo' is already declared by unit EchoUnit"))
        #expect(runtime.table["clashOnly"] == nil, "a refused unit contributes no function")
        #expect(runtime.table["echo"]?.unit.name == "EchoUnit")
    }

    @Test("a missing library is refused with its path and how to build it")
    func missingLibrary() async throws {
        let runtime = try await startRuntime(units: ["NoSuchUnit", "EchoUnit"])
        let error = try #require(runtime.loadErrors.first)
        #expect(error.unit == "NoSuchUnit")
        #expect(error.reason.contains("library not found"))
        #expect(error.reason.contains("swift build --product NoSuchUnit"))
        #expect(runtime.table["echo"] != nil)
    }

    @Test("a shared library that is not a unit is refused: no entry point")
    func notAUnit() async throws {
        let runtime = try await startRuntime(units: [])
        let loader = UnitLoader(services: runtime.services)
        let sqlite = ["/usr/lib/x86_64-linux-gnu/libsqlite3.so.0", "/lib/x86_64-linux-gnu/libsqlite3.so.0"].first { FileManager.default.fileExists(atPath: $0) }
        let path = try #require(sqlite)
        await #expect(throws: UnitLoadError.self) { try await loader.load(unit: "Sqlite", path: path) }
        do {
            _ = try await loader.load(unit: "Sqlite", path: path)
        } catch {
            #expect(error.reason.contains("is not a Hearth unit: it does not export hearth_unit_abi_version or hearth_unit_entry"), "\(error.reason)")
        }
    }

    @Test("a unit built against an older boundary version is refused at load, naming both versions, and never called")
    func olderBoundaryVersion() async throws {
        let runtime = try await startRuntime(units: [])
        let loader = UnitLoader(services: runtime.services)
        do {
            _ = try await loader.load(unit: "OldABIUnit", path: UnitLoader.libraryPath(unit: "OldABIUnit", directory: buildDirectory))
            Issue.record("an old unit loaded")
        } catch {
            #expect(error.reason == "the unit was built against boundary version 1; this host speaks version \(Boundary.version) (rebuild the unit with this SDK)")
        }
    }

    @Test("a library configured under another name is refused: the unit names itself")
    func nameMismatch() async throws {
        var config = makeConfig(units: [])
        config.units = [RuntimeConfig.Unit(name: "Renamed", path: UnitLoader.libraryPath(unit: "EchoUnit", directory: buildDirectory))]
        let runtime = try await openRuntime(config: config, log: .discarding())
        await runtime.loadUnits()
        #expect(runtime.loadErrors.first?.reason.contains("declares unit 'EchoUnit', not 'Renamed'") == true)
    }

    @Test("loading the same unit library twice in one process reuses the image and still works")
    func loadTwice() async throws {
        let first = try await startRuntime(units: ["EchoUnit"])
        let second = try await startRuntime(units: ["EchoUnit"])
        #expect(await first.call("echo", data: 1).value == 1)
        #expect(await second.call("echo", data: 2).value == 2)
    }
}
