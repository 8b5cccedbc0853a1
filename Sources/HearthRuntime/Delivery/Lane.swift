import HearthModel

/// One event function's dispatch state in the engine: its policies, token bucket, running count,
/// and what the engine knows of its queue.
struct Lane: Sendable {
    let entry: FunctionEntry
    let retry: RetryPolicy
    let concurrency: Int
    /// Dispatches per second; nil means unlimited.
    let rate: Double?
    /// Tokens the bucket holds at most: a tenth of a second's worth, at least one.
    let burst: Double
    var tokens: Double
    var refilled: Timestamp
    var running = 0
    /// Deliveries of this function other processes sharing the database run, as the last claim
    /// counted them (concurrency limits hold across processes).
    var runningElsewhere = 0
    /// When the earliest pending delivery that could be claimed is due (one not waiting behind an
    /// earlier delivery of its ordering key), as last read; nil when none.
    var nextDue: Timestamp?
    /// The queue changed since `nextDue` was read.
    var dirty = true

    init(entry: FunctionEntry, now: Timestamp, defaultConcurrency: Int) {
        self.entry = entry
        let options = entry.spec.options
        switch entry.trigger {
        case .task:
            // Each limit a queue leaves out keeps Firebase's default (firebase-tools deploys a queue
            // from the defaults, overwriting only the fields the function sets).
            retry = options.retry ?? .taskQueueDefault
            let limits = options.rateLimits ?? .taskQueueDefault
            concurrency = limits.maxConcurrentDispatches ?? RateLimits.taskQueueDefault.maxConcurrentDispatches!
            rate = limits.maxDispatchesPerSecond ?? RateLimits.taskQueueDefault.maxDispatchesPerSecond!
        default:
            retry = options.retry ?? .none
            concurrency = options.rateLimits?.maxConcurrentDispatches ?? defaultConcurrency
            rate = options.rateLimits?.maxDispatchesPerSecond
        }
        burst = max(1, ((rate ?? 0) / 10).rounded(.down))
        tokens = burst
        refilled = now
    }

    var name: String { entry.name }

    /// How long one attempt may run: the task's own dispatch deadline, else the function's, else
    /// its timeout.
    func timeout(dispatchDeadline: Duration?) -> Duration {
        let options = entry.spec.options
        return dispatchDeadline ?? options.dispatchDeadline ?? options.effectiveTimeout
    }

    // MARK: token bucket

    mutating func refill(at now: Timestamp) {
        guard let rate, now > refilled else { return }
        tokens = min(burst, tokens + (now - refilled).secondsDouble * rate)
        refilled = now
    }

    /// Whole dispatches the bucket allows now (after `refill`).
    var availableTokens: Int {
        guard rate != nil else { return Int.max }
        return Int(min(tokens + 1e-9, 1e12).rounded(.down))
    }

    mutating func take() {
        if rate != nil { tokens = max(0, tokens - 1) }
    }

    /// When the next token is there (now, when one already is).
    func tokenTime(after now: Timestamp) -> Timestamp {
        guard let rate, tokens + 1e-9 < 1 else { return now }
        return now + .seconds(double: (1 - tokens) / rate)
    }

    var capacity: Int { max(0, concurrency - running - runningElsewhere) }
}
