// swift-tools-version:6.0
import Foundation
import PackageDescription

// Units: each directory under functions/ is one handler module (its FunctionModule and nothing
// else), built as lib<Name>.so and loaded by the host with dlopen. Adding a directory adds the unit:
// it is found here and by the runtime (runtime.toml lists units only to choose some). The
// HearthUnitEntry plugin generates each unit's entry point. The SDK (HearthFunctions) is linked
// statically into each; -Bsymbolic binds a unit's references to its own copy so units never
// resolve into the host's or each other's symbols. Code several units share lives in
// functions/Shared/<Library>, linked into every unit.
let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().path

/// The subdirectories of `path` (relative to the package), sorted.
func directories(_ path: String) -> [String] {
    let full = packageRoot + "/" + path
    let names = (try? FileManager.default.contentsOfDirectory(atPath: full)) ?? []
    return names.filter { name in
        var isDirectory: ObjCBool = false
        return !name.hasPrefix(".") && FileManager.default.fileExists(atPath: full + "/" + name, isDirectory: &isDirectory) && isDirectory.boolValue
    }.sorted()
}

let sharedLibraries = directories("functions/Shared")
let units = directories("functions").filter { $0 != "Shared" }
// Units used only by tests, under Tests/Fixtures/.
let fixtureUnits = directories("Tests/Fixtures")

let unitLinkerSettings: [LinkerSetting] = [.unsafeFlags(["-Xlinker", "-Bsymbolic"])]

// jemalloc (Debian's libjemalloc-dev) is the process's allocator, for the host and its workers (the
// same binary) and the units they load: ahead of libc among the binary's libraries, its malloc and
// free are the ones every library calls. Objects made on one thread and freed on another are the
// rule here (a request read by libmicrohttpd's thread, answered from a socket reader's); glibc's
// allocator spent 14% of write + trigger's CPU on them, jemalloc 5% (README, Performance).
// hearth-bench links it too, so its figures measure the allocator hearth runs with.
let allocatorLinkerSettings: [LinkerSetting] = [.linkedLibrary("jemalloc")]

func unitTarget(_ name: String, path: String, extra: [Target.Dependency] = []) -> Target {
    .target(name: name, dependencies: ["HearthFunctions"] + extra, path: path, linkerSettings: unitLinkerSettings,
            plugins: ["HearthUnitEntry"])
}

let package = Package(
    name: "Hearth",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "hearth", targets: ["hearth"]),
        .library(name: "HearthFunctions", targets: ["HearthFunctions"]),
        .library(name: "HearthTesting", targets: ["HearthTesting"]),
    ]
        + units.map { .library(name: $0, type: .dynamic, targets: [$0]) }
        + fixtureUnits.map { .library(name: $0, type: .dynamic, targets: [$0]) }
        + [.library(name: "OldABIUnit", type: .dynamic, targets: ["OldABIUnit"])],
    targets: [
        .systemLibrary(name: "CSQLite", path: "Sources/CSQLite", pkgConfig: "sqlite3",
                       providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(name: "CCurl", path: "Sources/CCurl", pkgConfig: "libcurl",
                       providers: [.apt(["libcurl4-openssl-dev"])]),
        .systemLibrary(name: "COpenSSL", path: "Sources/COpenSSL", pkgConfig: "openssl",
                       providers: [.apt(["libssl-dev"])]),
        .systemLibrary(name: "CMicroHTTPD", path: "Sources/CMicroHTTPD", pkgConfig: "libmicrohttpd",
                       providers: [.apt(["libmicrohttpd-dev"])]),
        .target(name: "HearthUnitABI"),
        // GNU extensions of glibc the worker supervisor uses (pipe2, closefrom for posix_spawn).
        .target(name: "CHearthSystem"),
        .executableTarget(name: "hearth-unit-entry", path: "Plugins/Tools/hearth-unit-entry"),
        .plugin(name: "HearthUnitEntry", capability: .buildTool(), dependencies: ["hearth-unit-entry"]),
        // A unit as one built against boundary version 1 looks to the host (tests of the version check).
        .target(name: "OldABIUnit", path: "Tests/LegacyFixtures/OldABIUnit"),
        .target(name: "HearthModel"),
        .target(name: "HearthFunctions", dependencies: ["HearthModel", "HearthUnitABI"]),
        // A VFS over SQLite's unix one that writes the writer's WAL frames once per transaction.
        .target(name: "CSQLiteWAL", dependencies: ["CSQLite"]),
        .target(name: "HearthStore", dependencies: ["HearthModel", "CSQLite", "CSQLiteWAL"]),
        // epoll_wait for libmicrohttpd's polling threads (a correction for 0.9.75; see the file).
        .target(name: "CEpollBatches"),
        .target(name: "HearthHTTP", dependencies: ["HearthModel", "CCurl", "CMicroHTTPD", "CEpollBatches"]),
        .target(name: "HearthAuth", dependencies: ["HearthModel", "COpenSSL"]),
        // A TOML 1.0 parser knowing nothing of Hearth; the runtime's config reader uses it.
        .target(name: "HearthTOML"),
        // Firebase's security rules language for Firestore: parser, evaluator, decisions. Pure: the
        // caller reads the documents that rules' get() and exists() ask for.
        .target(name: "HearthRules", dependencies: ["HearthModel", "COpenSSL"]),
        .target(name: "HearthRuntime", dependencies: ["HearthModel", "HearthUnitABI", "CHearthSystem", "HearthStore", "HearthHTTP", "HearthAuth", "HearthTOML", "HearthRules"]),
        // The CLI and the testing library use the runtime's facade only: nothing below it.
        .target(name: "HearthTesting", dependencies: ["HearthRuntime", "HearthModel", "CHearthSystem"]),
        .target(name: "HearthCLI", dependencies: ["HearthRuntime", "HearthModel", "HearthRules"]),
        .executableTarget(name: "hearth", dependencies: ["HearthCLI"], linkerSettings: allocatorLinkerSettings),
        .executableTarget(name: "hearth-bench", dependencies: ["HearthModel", "HearthRuntime", "HearthFunctions", "HearthStore", "HearthAuth", "HearthHTTP", "CSQLite", "HearthTesting", "HearthRules"],
                          path: "Scripts/bench/Sources/hearth-bench", linkerSettings: allocatorLinkerSettings),
        .executableTarget(name: "hearth-testkit", dependencies: ["HearthModel", "HearthStore", "HearthHTTP"], path: "Tests/Tools/hearth-testkit"),
        .testTarget(name: "HearthModelTests", dependencies: ["HearthModel", "HearthTesting"]),
        .testTarget(name: "HearthAuthTests", dependencies: ["HearthAuth", "HearthModel", "HearthStore", "HearthRuntime", "HearthTesting"],
                    exclude: ["Fixtures"]),
        .testTarget(name: "HearthRulesTests", dependencies: ["HearthRules", "HearthModel"]),
        .testTarget(name: "HearthTOMLTests", dependencies: ["HearthTOML", "HearthRuntime", "HearthModel", "HearthTesting"], exclude: ["Fixtures"]),
        .testTarget(name: "HearthHTTPTests", dependencies: ["HearthHTTP", "HearthModel", "HearthTesting", "CEpollBatches"]),
        .testTarget(name: "HearthStoreTests", dependencies: ["HearthStore", "HearthModel", "HearthTesting"]),
        .testTarget(name: "HearthFunctionsTests", dependencies: ["HearthFunctions", "HearthModel"]),
        .testTarget(name: "HearthRuntimeTests", dependencies: ["HearthRuntime", "HearthModel", "HearthTesting", "HearthStore", "HearthHTTP", "HearthAuth", "HearthTOML", "CEpollBatches"]),
        .testTarget(name: "MembersTests", dependencies: ["HearthTesting", "HearthModel"]),
        .testTarget(name: "ItemsTests", dependencies: ["HearthTesting", "HearthModel"]),
        // SCENARIOS.md, one file per scenario, through the real units.
        .testTarget(name: "AppScenarioTests", dependencies: ["HearthTesting", "HearthModel", "HearthRuntime", "HearthAuth", "HearthHTTP"], exclude: ["Fixtures"]),
        .testTarget(name: "HearthCLITests", dependencies: ["HearthCLI", "HearthRuntime", "HearthModel", "HearthStore", "HearthHTTP", "HearthAuth", "HearthTesting"], exclude: ["Fixtures"]),
    ]
        // Libraries the app's units share, linked (statically) into each of them.
        + sharedLibraries.map { .target(name: $0, dependencies: ["HearthFunctions"], path: "functions/Shared/\($0)") }
        + units.map { unitTarget($0, path: "functions/\($0)", extra: sharedLibraries.map { .target(name: $0) }) }
        + fixtureUnits.map { unitTarget($0, path: "Tests/Fixtures/\($0)") }
)
