import Foundation

// hearth-bench <suite>: Hearth's benchmarks. Build in release mode (the Scripts/bench/<suite>
// wrappers do) and compare figures within one run: machines here are shared and noisy, so each
// suite measures its baseline in the same process.
let suites: [String: () async throws -> Void] = [
    "json": runJSONBenchmark,
    "boundary": runBoundaryBenchmark,
    "store": runStoreBenchmark,
    "auth": runAuthBenchmark,
    "delivery": runDeliveryBenchmark,
    "app": runAppBenchmark,
    "store-write-profile": runStoreWriteProfile,
    "export": runExportBenchmark,
    "replay": runReplayBenchmark,
    "rules": runRulesBenchmark,
]

let arguments = Array(CommandLine.arguments.dropFirst())
guard let name = arguments.first, let suite = suites[name] else {
    print("usage: hearth-bench <\(suites.keys.sorted().joined(separator: "|"))>")
    exit(2)
}
try await suite()
