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

    /// Whether another attempt for `key` may be made now.
    public func allows(_ key: String, now: Timestamp) -> Bool {
        buckets.withLock { all in
            guard let bucket = all[key] else { return true }
            return refilled(bucket, now: now).tokens >= 1
        }
    }

    /// Counts a failed attempt for `key`.
    public func recordFailure(_ key: String, now: Timestamp) {
        buckets.withLock { all in
            if all.count >= AttemptLimiter.maxKeys && all[key] == nil {
                // Forget buckets that have refilled completely; if none has, start over.
                all = all.filter { refilled($0.value, now: now).tokens < Double(policy.burst) }
                if all.count >= AttemptLimiter.maxKeys { all.removeAll(keepingCapacity: true) }
            }
            var bucket = all[key].map { refilled($0, now: now) } ?? Bucket(tokens: Double(policy.burst), updated: now)
            bucket.tokens = max(0, bucket.tokens - 1)
            all[key] = bucket
        }
    }

    func refilled(_ bucket: Bucket, now: Timestamp) -> Bucket {
        let seconds = policy.refill.secondsDouble
        guard seconds > 0 else { return Bucket(tokens: Double(policy.burst), updated: now) }
        let elapsed = max(0, (now - bucket.updated).secondsDouble)
        return Bucket(tokens: min(Double(policy.burst), bucket.tokens + elapsed / seconds), updated: now)
    }
}
