// swift-tools-version:6.0
import PackageDescription

// Units: each directory under functions/ is one handler module, built as lib<Name>.so and loaded by
// the host with dlopen. The SDK (HearthFunctions) is linked statically into each; -Bsymbolic binds a
// unit's references to its own copy so units never resolve into the host's or each other's symbols.
let units = ["Members", "Items"]
// Units used only by tests, under Tests/Fixtures/.
let fixtureUnits = ["EchoUnit", "BrokenUnit", "ClashUnit", "DocsUnit", "DeliveryUnit", "SecretUnit", "BenchUnit"]

let unitLinkerSettings: [LinkerSetting] = [.unsafeFlags(["-Xlinker", "-Bsymbolic"])]

func unitTarget(_ name: String, path: String, extra: [Target.Dependency] = []) -> Target {
    .target(name: name, dependencies: ["HearthFunctions"] + extra, path: path, linkerSettings: unitLinkerSettings)
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
        + fixtureUnits.map { .library(name: $0, type: .dynamic, targets: [$0]) },
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
        .target(name: "HearthModel"),
        .target(name: "HearthFunctions", dependencies: ["HearthModel", "HearthUnitABI"]),
        .target(name: "HearthStore", dependencies: ["HearthModel", "CSQLite"]),
        .target(name: "HearthHTTP", dependencies: ["HearthModel", "CCurl", "CMicroHTTPD"]),
        .target(name: "HearthAuth", dependencies: ["HearthModel", "COpenSSL"]),
        .target(name: "HearthRuntime", dependencies: ["HearthModel", "HearthUnitABI", "HearthStore", "HearthHTTP", "HearthAuth"]),
        .target(name: "HearthTesting", dependencies: ["HearthRuntime", "HearthModel", "HearthStore", "HearthAuth"]),
        .target(name: "HearthCLI", dependencies: ["HearthRuntime", "HearthModel", "HearthStore", "HearthAuth"]),
        .executableTarget(name: "hearth", dependencies: ["HearthCLI"]),
        .executableTarget(name: "hearth-bench", dependencies: ["HearthModel", "HearthRuntime", "HearthFunctions", "HearthStore", "HearthAuth", "CSQLite", "HearthTesting"],
                          path: "Scripts/bench/Sources/hearth-bench"),
        .executableTarget(name: "hearth-testkit", dependencies: ["HearthModel", "HearthStore", "HearthHTTP"], path: "Tests/Tools/hearth-testkit"),
        .testTarget(name: "HearthModelTests", dependencies: ["HearthModel", "HearthTesting"]),
        .testTarget(name: "HearthAuthTests", dependencies: ["HearthAuth", "HearthModel", "HearthStore", "HearthRuntime", "HearthTesting"],
                    exclude: ["Fixtures"]),
        .testTarget(name: "HearthHTTPTests", dependencies: ["HearthHTTP", "HearthModel", "HearthTesting"]),
        .testTarget(name: "HearthStoreTests", dependencies: ["HearthStore", "HearthModel", "HearthTesting"]),
        .testTarget(name: "HearthFunctionsTests", dependencies: ["HearthFunctions", "HearthModel"]),
        .testTarget(name: "HearthRuntimeTests", dependencies: ["HearthRuntime", "HearthModel", "HearthTesting", "HearthStore", "HearthHTTP", "HearthAuth"], exclude: ["Fixtures"]),
        .testTarget(name: "MembersTests", dependencies: ["HearthTesting", "HearthModel"]),
        .testTarget(name: "ItemsTests", dependencies: ["HearthTesting", "HearthModel"]),
        .testTarget(name: "HearthCLITests", dependencies: ["HearthCLI", "HearthRuntime", "HearthModel", "HearthStore", "HearthHTTP", "HearthTesting"], exclude: ["Fixtures"]),
    ]
        // The to-do app's shared model, linked (statically) into each of its units.
        + [.target(name: "TodoModel", dependencies: ["HearthFunctions"], path: "functions/TodoModel")]
        + units.map { unitTarget($0, path: "functions/\($0)", extra: ["TodoModel"]) }
        + fixtureUnits.map { unitTarget($0, path: "Tests/Fixtures/\($0)") }
)
