/// When and how often a failed delivery is tried again.
///
/// Backoff follows Cloud Tasks (https://cloud.google.com/tasks/docs/reference/rest/v2/projects.locations.queues#RetryConfig):
/// the wait doubles `maxDoublings` times starting from `minBackoff`, then grows linearly by that last
/// doubled step, and never exceeds `maxBackoff`. With min 10 s, max 300 s and 3 doublings the waits are
/// 10, 20, 40, 80, 160, 240, 300, 300… seconds.
public struct RetryPolicy: Sendable, Hashable, Codable {
    /// Attempts in all, the first included; nil (or -1, Cloud Tasks' spelling) means no limit.
    public var maxAttempts: Int?
    public var minBackoff: Duration
    public var maxBackoff: Duration
    public var maxDoublings: Int
    /// How long after the first attempt retries may start; nil (or zero, Cloud Tasks' spelling)
    /// means no limit. With `maxAttempts` also set, retries stop only when both are used up.
    public var maxRetryDuration: Duration?
    /// Each wait is multiplied by a random factor in [1 - jitter, 1]; 0 (the default) keeps waits exact.
    public var jitter: Double

    public init(maxAttempts: Int?, minBackoff: Duration, maxBackoff: Duration, maxDoublings: Int,
                maxRetryDuration: Duration? = nil, jitter: Double = 0) {
        self.maxAttempts = maxAttempts
        self.minBackoff = minBackoff
        self.maxBackoff = maxBackoff
        self.maxDoublings = maxDoublings
        self.maxRetryDuration = maxRetryDuration
        self.jitter = jitter
    }

    /// Exponential backoff; every parameter defaults to the task queue defaults of Firebase.
    public static func exponential(maxAttempts: Int? = 3, minBackoff: Duration = .milliseconds(100),
                                   maxBackoff: Duration = .seconds(3600), maxDoublings: Int = 16,
                                   maxRetryDuration: Duration? = nil, jitter: Double = 0) -> RetryPolicy {
        RetryPolicy(maxAttempts: maxAttempts, minBackoff: minBackoff, maxBackoff: maxBackoff,
                    maxDoublings: maxDoublings, maxRetryDuration: maxRetryDuration, jitter: jitter)
    }

    /// One attempt; a failure is final (it goes to dead letters).
    public static let none = RetryPolicy(maxAttempts: 1, minBackoff: .zero, maxBackoff: .zero, maxDoublings: 0)

    /// Firebase's task queue defaults: 3 attempts, backoff 0.1 s to 3600 s, 16 doublings.
    public static let taskQueueDefault = RetryPolicy.exponential()

    /// Event functions with `retry: true`: retried for up to 24 hours, backoff 10 s to 600 s.
    public static let eventRetryDefault = RetryPolicy(maxAttempts: nil, minBackoff: .seconds(10), maxBackoff: .seconds(600),
                                                      maxDoublings: 16, maxRetryDuration: .seconds(86_400))

    /// The wait before attempt `attempt + 1`, after `attempt` attempts (1-based) have failed.
    /// `random` returns a value in [0, 1) and is only used when `jitter` > 0.
    public func backoff(afterAttempt attempt: Int, random: () -> Double = { 0 }) -> Duration {
        let retry = max(attempt - 1, 0)  // 0 for the first retry
        let minSeconds = minBackoff.secondsDouble
        let maxSeconds = maxBackoff.secondsDouble
        var seconds: Double
        if retry <= maxDoublings {
            seconds = minSeconds * pow2(retry)
        } else {
            let step = minSeconds * pow2(maxDoublings)
            seconds = step * Double(retry - maxDoublings + 1)
        }
        // Past 1023 doublings 2^n is infinite, and 0 × ∞ is NaN: a zero minimum stays zero.
        if seconds.isNaN { seconds = 0 }
        seconds = min(seconds, maxSeconds)
        if jitter > 0 { seconds *= 1 - jitter * random() }
        return .seconds(double: seconds)
    }

    private func pow2(_ n: Int) -> Double {
        n >= 1023 ? .infinity : Double(sign: .plus, exponent: n, significand: 1)
    }

    /// Whether another attempt may start at `next`, given `attempts` made and the first at `firstAttempt`.
    ///
    /// Cloud Tasks' rule (RetryConfig, https://cloud.google.com/tasks/docs/reference/rest/v2/projects.locations.queues#RetryConfig):
    /// "Once max_retry_duration time has passed and the task has been attempted max_attempts times,
    /// no further attempts will be made". So with both limits set, retries stop only when both are
    /// used up; with one set, when that one is; with neither, never.
    public func allowsRetry(afterAttempts attempts: Int, firstAttempt: Timestamp, next: Timestamp) -> Bool {
        let attemptsUsed = attemptLimit.map { attempts >= $0 }
        let durationUsed = durationLimit.map { next - firstAttempt > $0 }
        switch (attemptsUsed, durationUsed) {
        case (nil, nil): return true
        case (let used?, nil), (nil, let used?): return !used
        case (let a?, let d?): return !(a && d)
        }
    }

    /// The attempt limit, nil when unlimited (nil or -1).
    public var attemptLimit: Int? { maxAttempts.flatMap { $0 == -1 ? nil : $0 } }

    /// The retry window, nil when unlimited (nil or zero).
    public var durationLimit: Duration? { maxRetryDuration.flatMap { $0 == .zero ? nil : $0 } }

    /// Problems with the policy's values, empty when valid.
    public func problems() -> [String] {
        var out: [String] = []
        if let maxAttempts, maxAttempts < 1 && maxAttempts != -1 { out.append("maxAttempts must be at least 1, or -1 for unlimited (got \(maxAttempts))") }
        if minBackoff < .zero { out.append("minBackoff must not be negative") }
        if maxBackoff < minBackoff { out.append("maxBackoff must be at least minBackoff") }
        if maxDoublings < 0 { out.append("maxDoublings must not be negative") }
        if let maxRetryDuration, maxRetryDuration < .zero { out.append("maxRetryDuration must not be negative") }
        if !(0...1).contains(jitter) { out.append("jitter must be between 0 and 1") }
        return out
    }

    enum CodingKeys: String, CodingKey {
        case maxAttempts, minBackoffSeconds, maxBackoffSeconds, maxDoublings, maxRetryDurationSeconds, jitter
    }

    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        maxAttempts = try c.decodeIfPresent(Int.self, forKey: .maxAttempts)
        minBackoff = .seconds(double: try c.decode(Double.self, forKey: .minBackoffSeconds))
        maxBackoff = .seconds(double: try c.decode(Double.self, forKey: .maxBackoffSeconds))
        maxDoublings = try c.decode(Int.self, forKey: .maxDoublings)
        maxRetryDuration = try c.decodeIfPresent(Double.self, forKey: .maxRetryDurationSeconds).map { .seconds(double: $0) }
        jitter = try c.decodeIfPresent(Double.self, forKey: .jitter) ?? 0
    }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(maxAttempts, forKey: .maxAttempts)
        try c.encode(minBackoff.secondsDouble, forKey: .minBackoffSeconds)
        try c.encode(maxBackoff.secondsDouble, forKey: .maxBackoffSeconds)
        try c.encode(maxDoublings, forKey: .maxDoublings)
        try c.encode(maxRetryDuration?.secondsDouble, forKey: .maxRetryDurationSeconds)
        try c.encode(jitter, forKey: .jitter)
    }
}

/// How fast and how many at once a function's deliveries are dispatched.
public struct RateLimits: Sendable, Hashable, Codable {
    /// Token bucket rate; nil means unlimited.
    public var maxDispatchesPerSecond: Double?
    /// Deliveries running at once; nil means unlimited.
    public var maxConcurrentDispatches: Int?

    public init(maxDispatchesPerSecond: Double? = nil, maxConcurrentDispatches: Int? = nil) {
        self.maxDispatchesPerSecond = maxDispatchesPerSecond
        self.maxConcurrentDispatches = maxConcurrentDispatches
    }

    /// Firebase's task queue defaults: 500 dispatches per second, 1000 at once.
    public static let taskQueueDefault = RateLimits(maxDispatchesPerSecond: 500, maxConcurrentDispatches: 1000)

    /// Hearth's bounds (Cloud Tasks allows 500 per second and 5000 at once; a local queue may go further).
    public static let maxRate = 1_000_000.0
    public static let maxConcurrency = 1_000_000

    public func problems() -> [String] {
        var out: [String] = []
        if let r = maxDispatchesPerSecond, !(r > 0 && r <= RateLimits.maxRate) {
            out.append("maxDispatchesPerSecond must be in (0, \(Int(RateLimits.maxRate))] (got \(r))")
        }
        if let c = maxConcurrentDispatches, !(1...RateLimits.maxConcurrency).contains(c) {
            out.append("maxConcurrentDispatches must be between 1 and \(RateLimits.maxConcurrency) (got \(c))")
        }
        return out
    }
}
