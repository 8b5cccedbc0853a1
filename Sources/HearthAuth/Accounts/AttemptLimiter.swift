import HearthModel
import Synchronization

/// A token bucket per key (an email address) counting failed attempts: `burst` failures are
/// allowed at once, then one more per `refill`. A success does not refund (Firebase's limit is on
/// attempts, not on outcomes); the state is this process's, bounded to `maxKeys` addresses.
public final class AttemptLimiter: Sendable {
    public struct Policy: Sendable, Equatable {
        public var burst: Int
        public var refill: Duration

        public init(burst: Int = 10, refill: Duration = .seconds(60)) {
            self.burst = burst
            self.refill = refill
        }
    }

    struct Bucket {
        var tokens: Double
        var updated: Timestamp
    }

    let policy: Policy
    let buckets = Mutex<[String: Bucket]>([:])
    static let maxKeys = 100_000

    public init(policy: Policy) { self.policy = policy }

    /// Takes one attempt for `key` if its bucket has one (false: too many attempts). Taken before
    /// the attempt is checked, so concurrent attempts cannot all pass a bucket with one left.
    public func acquire(_ key: String, now: Timestamp) -> Bool {
        buckets.withLock { all in
            if all[key] == nil && all.count >= AttemptLimiter.maxKeys { evict(&all, now: now) }
            var bucket = all[key].map { refilled($0, now: now) } ?? Bucket(tokens: Double(policy.burst), updated: now)
            guard bucket.tokens >= 1 else {
                all[key] = bucket
                return false
            }
            bucket.tokens -= 1
            all[key] = bucket
            return true
        }
    }

    /// Gives back the attempt `acquire` took: it succeeded (the limit counts failures).
    public func refund(_ key: String) {
        buckets.withLock { all in
            guard var bucket = all[key] else { return }
            bucket.tokens = min(Double(policy.burst), bucket.tokens + 1)
            all[key] = bucket
        }
    }

    /// Whether an attempt for `key` would be allowed now (takes nothing).
    public func allows(_ key: String, now: Timestamp) -> Bool {
        buckets.withLock { all in all[key].map { refilled($0, now: now).tokens >= 1 } ?? true }
    }

    /// Counts a failed attempt for `key` (one not taken with `acquire`).
    public func recordFailure(_ key: String, now: Timestamp) {
        _ = acquire(key, now: now)
    }

    /// Makes room: forgets buckets that are full again, then the least recently touched half.
    /// A bucket in debt is forgotten only once it is among the oldest touched, when it has
    /// mostly refilled anyway.
    func evict(_ all: inout [String: Bucket], now: Timestamp) {
        all = all.filter { refilled($0.value, now: now).tokens < Double(policy.burst) }
        guard all.count >= AttemptLimiter.maxKeys else { return }
        let oldest = all.sorted { $0.value.updated < $1.value.updated }.prefix(all.count / 2).map(\.key)
        for key in oldest { all[key] = nil }
    }

    func refilled(_ bucket: Bucket, now: Timestamp) -> Bucket {
        let seconds = policy.refill.secondsDouble
        guard seconds > 0 else { return Bucket(tokens: Double(policy.burst), updated: now) }
        let elapsed = max(0, (now - bucket.updated).secondsDouble)
        return Bucket(tokens: min(Double(policy.burst), bucket.tokens + elapsed / seconds), updated: now)
    }
}
