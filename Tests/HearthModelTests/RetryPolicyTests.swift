import Foundation
import HearthModel
import Testing

@Suite("Retry policy")
struct RetryPolicyTests {
    static let cloudTasksExample = RetryPolicy(maxAttempts: nil, minBackoff: .seconds(10), maxBackoff: .seconds(300), maxDoublings: 3)

    @Test("backoff follows the Cloud Tasks example: 10, 20, 40, 80, 160, 240, 300, 300 s",
          arguments: zip(1...10, [10, 20, 40, 80, 160, 240, 300, 300, 300, 300]))
    func cloudTasksTable(_ attempt: Int, _ seconds: Int) {
        #expect(Self.cloudTasksExample.backoff(afterAttempt: attempt) == .seconds(seconds))
    }

    @Test("task queue defaults: 3 attempts, 0.1 s doubling 16 times, capped at 3600 s")
    func taskQueueDefaults() {
        let policy = RetryPolicy.taskQueueDefault
        #expect(policy.maxAttempts == 3)
        #expect(policy.minBackoff == .milliseconds(100))
        #expect(policy.maxBackoff == .seconds(3600))
        #expect(policy.maxDoublings == 16)
        #expect(policy.maxRetryDuration == nil)
        #expect(policy == RetryPolicy.exponential())
        // 0.1 × 2^k for k = 0…15 stays under the cap: 0.1, 0.2, 0.4 … 3276.8 s.
        for k in 0..<16 {
            #expect(policy.backoff(afterAttempt: k + 1) == .milliseconds(100 * (1 << k)), "attempt \(k + 1)")
        }
        // 0.1 × 2^16 = 6553.6 s is capped, and so is everything after (linear growth past 16 doublings).
        for attempt in 17...40 { #expect(policy.backoff(afterAttempt: attempt) == .seconds(3600), "attempt \(attempt)") }
    }

    @Test("growth is linear by the last doubled step once the doublings are used up")
    func linearAfterDoublings() {
        let policy = RetryPolicy(maxAttempts: nil, minBackoff: .seconds(1), maxBackoff: .seconds(1000), maxDoublings: 2)
        let waits = (1...8).map { policy.backoff(afterAttempt: $0) }
        #expect(waits == [1, 2, 4, 8, 12, 16, 20, 24].map { .seconds($0) })
        let noDoubling = RetryPolicy(maxAttempts: nil, minBackoff: .seconds(5), maxBackoff: .seconds(12), maxDoublings: 0)
        #expect((1...4).map { noDoubling.backoff(afterAttempt: $0) } == [.seconds(5), .seconds(10), .seconds(12), .seconds(12)])
    }

    @Test("attempt 0 and huge attempt numbers stay within bounds")
    func edges() {
        let policy = Self.cloudTasksExample
        #expect(policy.backoff(afterAttempt: 0) == .seconds(10))
        #expect(policy.backoff(afterAttempt: 1_000_000) == .seconds(300))
        let manyDoublings = RetryPolicy(maxAttempts: nil, minBackoff: .seconds(1), maxBackoff: .seconds(60), maxDoublings: 5000)
        #expect(manyDoublings.backoff(afterAttempt: 2000) == .seconds(60))
        #expect(RetryPolicy.none.backoff(afterAttempt: 1) == .zero)
        #expect(RetryPolicy.none.backoff(afterAttempt: 50) == .zero)
    }

    @Test("a zero minimum backoff stays zero for any attempt, however many doublings are allowed")
    func zeroMinimum() {
        let policy = RetryPolicy(maxAttempts: nil, minBackoff: .zero, maxBackoff: .seconds(60), maxDoublings: 5000)
        #expect(policy.problems().isEmpty)
        for attempt in [1, 2, 1023, 1024, 1025, 2000, 6000, 100_000] {
            #expect(policy.backoff(afterAttempt: attempt) == .zero, "attempt \(attempt)")
        }
    }

    @Test("jitter scales the wait by 1 - jitter × random, from the injected generator")
    func jitter() {
        let policy = RetryPolicy(maxAttempts: nil, minBackoff: .seconds(10), maxBackoff: .seconds(300), maxDoublings: 3, jitter: 0.5)
        #expect(policy.backoff(afterAttempt: 1, random: { 0 }) == .seconds(10))
        #expect(policy.backoff(afterAttempt: 1, random: { 0.5 }) == .milliseconds(7500))
        #expect(policy.backoff(afterAttempt: 4, random: { 0.25 }) == .seconds(70))
        #expect(policy.backoff(afterAttempt: 8, random: { 0.999 }) == .seconds(double: 300 * (1 - 0.5 * 0.999)))
        // The same sequence of random numbers gives the same waits.
        var a = SplitMix64(seed: 5), b = SplitMix64(seed: 5)
        let first = (1...10).map { n in policy.backoff(afterAttempt: n, random: { Double.random(in: 0..<1, using: &a) }) }
        let second = (1...10).map { n in policy.backoff(afterAttempt: n, random: { Double.random(in: 0..<1, using: &b) }) }
        #expect(first == second)
        for (n, wait) in first.enumerated() {
            let exact = Self.cloudTasksExample.backoff(afterAttempt: n + 1)
            #expect(wait <= exact && wait >= exact / 2)
        }
        // Without jitter the generator is never asked.
        var asked = false
        _ = Self.cloudTasksExample.backoff(afterAttempt: 3, random: { asked = true; return 0.9 })
        #expect(!asked)
    }

    @Test("retries stop after maxAttempts")
    func attemptsLimit() {
        let policy = RetryPolicy.exponential(maxAttempts: 3)
        let t0 = Timestamp(seconds: 1000)
        #expect(policy.allowsRetry(afterAttempts: 1, firstAttempt: t0, next: t0 + .seconds(1)))
        #expect(policy.allowsRetry(afterAttempts: 2, firstAttempt: t0, next: t0 + .seconds(1)))
        #expect(!policy.allowsRetry(afterAttempts: 3, firstAttempt: t0, next: t0 + .seconds(1)))
        #expect(!RetryPolicy.none.allowsRetry(afterAttempts: 1, firstAttempt: t0, next: t0))
    }

    @Test("retries stop when the next attempt would start after maxRetryDuration")
    func durationLimit() {
        let policy = RetryPolicy(maxAttempts: nil, minBackoff: .seconds(10), maxBackoff: .seconds(600), maxDoublings: 16, maxRetryDuration: .seconds(3600))
        let t0 = Timestamp(seconds: 1000)
        #expect(policy.allowsRetry(afterAttempts: 100, firstAttempt: t0, next: t0 + .seconds(3600)))
        #expect(!policy.allowsRetry(afterAttempts: 2, firstAttempt: t0, next: t0 + .seconds(3600) + .nanoseconds(1)))
        #expect(policy.allowsRetry(afterAttempts: 1_000_000, firstAttempt: t0, next: t0 + .seconds(1)))
        #expect(RetryPolicy.eventRetryDefault.allowsRetry(afterAttempts: 500, firstAttempt: t0, next: t0 + .seconds(86_400)))
        #expect(!RetryPolicy.eventRetryDefault.allowsRetry(afterAttempts: 2, firstAttempt: t0, next: t0 + .seconds(86_401)))
    }

    @Test("with both limits set, retries stop only when both are used up, as Cloud Tasks does; -1 attempts and a zero window are unlimited")
    func bothLimits() {
        let t0 = Timestamp(seconds: 1000)
        let both = RetryPolicy(maxAttempts: 5, minBackoff: .seconds(1), maxBackoff: .seconds(1), maxDoublings: 0, maxRetryDuration: .seconds(10))
        #expect(both.allowsRetry(afterAttempts: 5, firstAttempt: t0, next: t0 + .seconds(1)), "attempts used up, the window is not")
        #expect(both.allowsRetry(afterAttempts: 1, firstAttempt: t0, next: t0 + .seconds(11)), "the window is used up, the attempts are not")
        #expect(!both.allowsRetry(afterAttempts: 5, firstAttempt: t0, next: t0 + .seconds(11)), "both used up")
        let unlimitedAttempts = RetryPolicy(maxAttempts: -1, minBackoff: .seconds(1), maxBackoff: .seconds(1), maxDoublings: 0, maxRetryDuration: .seconds(10))
        #expect(unlimitedAttempts.allowsRetry(afterAttempts: 1_000, firstAttempt: t0, next: t0 + .seconds(10)))
        #expect(!unlimitedAttempts.allowsRetry(afterAttempts: 2, firstAttempt: t0, next: t0 + .seconds(11)))
        let unlimitedWindow = RetryPolicy(maxAttempts: 3, minBackoff: .seconds(1), maxBackoff: .seconds(1), maxDoublings: 0, maxRetryDuration: .zero)
        #expect(!unlimitedWindow.allowsRetry(afterAttempts: 3, firstAttempt: t0, next: t0 + .seconds(1)))
        #expect(unlimitedWindow.allowsRetry(afterAttempts: 2, firstAttempt: t0, next: t0 + .seconds(1_000_000)))
        let forever = RetryPolicy(maxAttempts: -1, minBackoff: .seconds(1), maxBackoff: .seconds(1), maxDoublings: 0, maxRetryDuration: .zero)
        #expect(forever.allowsRetry(afterAttempts: 1_000_000, firstAttempt: t0, next: t0 + .seconds(100_000_000)))
        #expect(forever.problems().isEmpty)
        #expect(RetryPolicy(maxAttempts: 0, minBackoff: .zero, maxBackoff: .zero, maxDoublings: 0).problems() == ["maxAttempts must be at least 1, or -1 for unlimited (got 0)"])
    }

    @Test("policies encode their durations as seconds and read them back")
    func coding() throws {
        let policy = RetryPolicy(maxAttempts: nil, minBackoff: .milliseconds(250), maxBackoff: .seconds(90), maxDoublings: 4, maxRetryDuration: .seconds(7200), jitter: 0.1)
        let value = try ValueEncoder().encode(policy)
        #expect(value == ["maxAttempts": nil, "minBackoffSeconds": 0.25, "maxBackoffSeconds": 90.0, "maxDoublings": 4, "maxRetryDurationSeconds": 7200.0, "jitter": 0.1])
        #expect(try ValueDecoder().decode(RetryPolicy.self, from: value) == policy)
        let minimal: Value = ["minBackoffSeconds": 1, "maxBackoffSeconds": 2, "maxDoublings": 0]
        #expect(try ValueDecoder().decode(RetryPolicy.self, from: minimal) == RetryPolicy(maxAttempts: nil, minBackoff: .seconds(1), maxBackoff: .seconds(2), maxDoublings: 0))
        #expect(try JSONDecoder().decode(RetryPolicy.self, from: JSONEncoder().encode(RetryPolicy.taskQueueDefault)) == .taskQueueDefault)
    }

    @Test("valid presets have no problems")
    func presets() {
        #expect(RetryPolicy.none.problems().isEmpty)
        #expect(RetryPolicy.taskQueueDefault.problems().isEmpty)
        #expect(RetryPolicy.eventRetryDefault.problems().isEmpty)
        #expect(RetryPolicy.exponential(jitter: .nan).problems() == ["jitter must be between 0 and 1"])
    }

    @Test("durations convert to and from fractional seconds")
    func durationHelpers() {
        #expect(Duration.seconds(double: 1.5) == .milliseconds(1500))
        #expect(Duration.seconds(double: -1.5) == .milliseconds(-1500))
        #expect(Duration.seconds(double: 0.1) == .milliseconds(100))
        #expect(Duration.seconds(double: 3276.8) == .milliseconds(3_276_800))
        #expect(Duration.milliseconds(1500).secondsDouble == 1.5)
        #expect(Duration.nanoseconds(1).secondsDouble == 1e-9)
    }
}
