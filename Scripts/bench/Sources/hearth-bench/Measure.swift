import Foundation
@_exported import HearthTesting

/// Runs `body` repeatedly for about `seconds` (after a warm-up) and returns operations per second,
/// the best of `rounds` rounds.
func opsPerSecond(seconds: Double = 1.0, rounds: Int = 3, _ body: () throws -> Void) rethrows -> Double {
    for _ in 0..<3 { try body() }
    var best = 0.0
    for _ in 0..<rounds {
        let clock = ContinuousClock()
        var count = 0
        let start = clock.now
        var elapsed = 0.0
        while elapsed < seconds {
            for _ in 0..<8 { try body() }
            count += 8
            elapsed = (clock.now - start).seconds
        }
        best = max(best, Double(count) / elapsed)
    }
    return best
}

/// The async version of `opsPerSecond`.
func asyncOpsPerSecond(seconds: Double = 1.0, rounds: Int = 3, _ body: () async throws -> Void) async rethrows -> Double {
    for _ in 0..<3 { try await body() }
    var best = 0.0
    for _ in 0..<rounds {
        let clock = ContinuousClock()
        var count = 0
        let start = clock.now
        var elapsed = 0.0
        while elapsed < seconds {
            for _ in 0..<8 { try await body() }
            count += 8
            elapsed = (clock.now - start).seconds
        }
        best = max(best, Double(count) / elapsed)
    }
    return best
}

extension Duration {
    var seconds: Double {
        let (s, a) = components
        return Double(s) + Double(a) / 1e18
    }
}

func fmt(_ v: Double, _ digits: Int = 1) -> String { String(format: "%.\(digits)f", v) }

/// Percentile of sorted samples.
func percentile(_ sorted: [Double], _ p: Double) -> Double {
    guard !sorted.isEmpty else { return .nan }
    let idx = min(sorted.count - 1, Int((p / 100 * Double(sorted.count - 1)).rounded()))
    return sorted[idx]
}

func printHeader(_ title: String, command: String) {
    print("== \(title)")
    print("command: \(command)")
    print("machine: \(ProcessInfo.processInfo.activeProcessorCount) cores, \(ProcessInfo.processInfo.operatingSystemVersionString)")
    print("")
}

