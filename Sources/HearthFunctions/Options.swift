import HearthModel

// The options of each kind of function, as firebase-functions v2 groups them (`HttpsOptions`,
// `ScheduleOptions`, `TaskQueueOptions`, `DocumentOptions`, `EventHandlerOptions`). Durations are
// `Duration`s; anything left out takes Firebase's default. The host checks every value when it loads
// the unit and refuses the unit, naming the function and the option, when one is out of range.

/// A time zone named by its IANA identifier (`Asia/Seoul`); schedules are computed in it, daylight
/// saving time included. Not checked here: the host refuses a unit whose zone it does not know.
public struct TimeZoneID: Sendable, Hashable, ExpressibleByStringLiteral, CustomStringConvertible {
    /// The IANA identifier (`Europe/Paris`, `UTC`).
    public let identifier: String
    /// The zone with this IANA identifier.
    public init(_ identifier: String) { self.identifier = identifier }
    /// The zone with this IANA identifier, from a literal: `timeZone: "Asia/Seoul"`.
    public init(stringLiteral value: String) { identifier = value }
    /// Coordinated Universal Time, the default of schedules.
    public static let utc = TimeZoneID("UTC")
    /// The identifier.
    public var description: String { identifier }
}

/// Whether an event function is retried after a failure.
///
/// `false` (the default, as in Firebase): one attempt; a failure goes to dead letters
/// (`hearth deliveries list --state dead`), where it can be retried or dropped.
/// `true`: retried with `RetryPolicy.eventRetryDefault` (for up to 24 hours, backoff 10 s to 600 s).
/// `.policy(p)`: retried as `p` says.
///
/// A retried event runs again after failing part-way (its writes so far stay), with the same event
/// `id` on every attempt: make retried handlers idempotent. An attempt past the `timeout` fails.
///
/// ```swift
/// fn.onDocumentWritten("sync", .init(document: "members/{uid}", retry: .policy(.exponential(maxAttempts: 10)))) { … }
/// ```
public enum RetrySetting: Sendable, Hashable, ExpressibleByBooleanLiteral {
    /// One attempt; a failure goes to dead letters (`false`).
    case disabled
    /// Retried with `RetryPolicy.eventRetryDefault` (`true`).
    case enabled
    /// Retried as the policy says.
    case policy(RetryPolicy)

    /// `true` is `.enabled`, `false` `.disabled`.
    public init(booleanLiteral value: Bool) { self = value ? .enabled : .disabled }

    /// The policy the host applies: `RetryPolicy.none`, `.eventRetryDefault` or the given one.
    public var policy: RetryPolicy {
        switch self {
        case .disabled: return .none
        case .enabled: return .eventRetryDefault
        case .policy(let p): return p
        }
    }
}

/// Options of an `onCall` function.
///
/// ```swift
/// fn.onCall("exchangeAppleCode", .init(timeout: .seconds(10), enforceAppCheck: true, secrets: ["APPLE_KEY"])) { … }
/// ```
public struct CallableOptions: Sendable, Hashable {
    /// Longest run of one call (default 60 s, at most 3600 s); past it the caller gets `deadline-exceeded`
    /// and the handler's task is cancelled.
    public var timeout: Duration?
    /// Which browser origins may call (default: any, as Firebase's callables; `.disabled` sends no
    /// CORS headers, `.origins([…])` allows only those).
    public var cors: CORSPolicy?
    /// Refuse calls without a valid App Check token (`unauthenticated`, before the handler runs).
    /// Without it a valid token still fills `req.app`, and an invalid one is ignored.
    public var enforceAppCheck: Bool
    /// For streamed responses: send an SSE comment this often, so idle proxies keep the stream open
    /// (at most 3600 s; none by default).
    public var heartbeat: Duration?
    /// Secrets the function reads with `req.secrets.value(_:)`: names of letters, digits and `_`,
    /// starting with a letter. The host refuses the unit at load when it lacks one.
    public var secrets: [String]

    /// Options; each left out takes its default.
    public init(timeout: Duration? = nil, cors: CORSPolicy? = nil, enforceAppCheck: Bool = false,
                heartbeat: Duration? = nil, secrets: [String] = []) {
        self.timeout = timeout
        self.cors = cors
        self.enforceAppCheck = enforceAppCheck
        self.heartbeat = heartbeat
        self.secrets = secrets
    }

    var manifest: FunctionOptions {
        FunctionOptions(timeout: timeout, cors: cors, enforceAppCheck: enforceAppCheck ? true : nil, heartbeat: heartbeat,
                        secrets: secrets.nonEmpty)
    }
}

/// Options of an `onRequest` function.
public struct RequestOptions: Sendable, Hashable {
    /// Longest run of one request (default 60 s, at most 3600 s); past it the client gets an error
    /// (`deadline-exceeded`) and the handler's task is cancelled.
    public var timeout: Duration?
    /// CORS headers to add (none by default: the function answers preflights itself).
    public var cors: CORSPolicy?
    /// Secrets the function reads with `req.secrets.value(_:)` (see `CallableOptions.secrets`).
    public var secrets: [String]

    /// Options; each left out takes its default.
    public init(timeout: Duration? = nil, cors: CORSPolicy? = nil, secrets: [String] = []) {
        self.timeout = timeout
        self.cors = cors
        self.secrets = secrets
    }

    var manifest: FunctionOptions { FunctionOptions(timeout: timeout, cors: cors, secrets: secrets.nonEmpty) }
}

/// Options of an `onSchedule` function: when it runs, and what happens when it fails. A string is a
/// schedule in UTC: `fn.onSchedule("cleanup", "every day 03:00") { … }`.
///
/// ```swift
/// fn.onSchedule("scheduleTodoReminder", .init(schedule: "every 5 minutes", timeZone: "Asia/Seoul")) { event in … }
/// ```
public struct ScheduleOptions: Sendable, Hashable, ExpressibleByStringLiteral {
    /// Unix cron (`*/5 * * * *`, names, lists, ranges and steps) or English: `every 5 minutes` (five
    /// minutes after the previous run), `every 5 minutes synchronized` (on the hour's 5-minute marks),
    /// `every day 09:00`, `every monday 09:00`, `1st monday of month 09:00`…
    public var schedule: String
    /// The zone the schedule is read in (default UTC).
    public var timeZone: TimeZoneID
    /// Whether a failed firing is retried (default: not; it goes to dead letters).
    public var retry: RetrySetting
    /// Longest run of one firing (default 60 s, at most 3600 s); past it the firing fails.
    public var timeout: Duration?
    /// Secrets the function reads with `event.secrets.value(_:)` (see `CallableOptions.secrets`).
    public var secrets: [String]

    /// Options; each left out takes its default.
    public init(schedule: String, timeZone: TimeZoneID = .utc, retry: RetrySetting = false, timeout: Duration? = nil,
                secrets: [String] = []) {
        self.schedule = schedule
        self.timeZone = timeZone
        self.retry = retry
        self.timeout = timeout
        self.secrets = secrets
    }

    /// A schedule in UTC, with every other option at its default: `fn.onSchedule("cleanup", "every day 03:00")`.
    public init(stringLiteral schedule: String) { self.init(schedule: schedule) }

    var manifest: FunctionOptions { FunctionOptions(timeout: timeout, retry: retry.policy, secrets: secrets.nonEmpty) }
}

/// Options of a task queue (`onTaskDispatched`), as Firebase's `TaskQueueOptions`. Unlike event
/// functions, tasks are retried by default.
///
/// ```swift
/// fn.onTaskDispatched("sendPushNotification", .init(retry: .exponential(maxAttempts: 5), rateLimits: .init(maxDispatchesPerSecond: 10))) { … }
/// ```
public struct TaskQueueOptions: Sendable, Hashable {
    /// How a failed attempt (a throw, a run past the dispatch deadline, a crash) is retried.
    /// Default: 3 attempts, backoff 0.1 s to 3600 s doubling 16 times (Firebase's); `.none` for one.
    public var retry: RetryPolicy
    /// How fast, and how many at once, tasks are dispatched. Default: 500 dispatches per second,
    /// 1000 at once (Firebase's). Limits hold across every process sharing the database.
    public var rateLimits: RateLimits
    /// How long one dispatch may run before it counts as failed (15 s to 30 min). When nil, a
    /// dispatch gets the function's `timeout`; a task's own `TaskOptions.dispatchDeadline` overrides both.
    public var dispatchDeadline: Duration?
    /// Longest run of one dispatch when no dispatch deadline is set (default 60 s, at most 3600 s),
    /// as a Firebase task function's `timeoutSeconds`.
    public var timeout: Duration?
    /// Secrets the function reads with `task.secrets.value(_:)` (see `CallableOptions.secrets`).
    public var secrets: [String]

    /// Options; each left out takes its default.
    public init(retry: RetryPolicy = .taskQueueDefault, rateLimits: RateLimits = .taskQueueDefault,
                dispatchDeadline: Duration? = nil, timeout: Duration? = nil, secrets: [String] = []) {
        self.retry = retry
        self.rateLimits = rateLimits
        self.dispatchDeadline = dispatchDeadline
        self.timeout = timeout
        self.secrets = secrets
    }

    var manifest: FunctionOptions {
        FunctionOptions(timeout: timeout, retry: retry, rateLimits: rateLimits, dispatchDeadline: dispatchDeadline, secrets: secrets.nonEmpty)
    }
}

/// Options of a document trigger: the document pattern it watches, and its retries. A string is the
/// pattern alone: `fn.onDocumentDeleted("cleanup", "members/{uid}/categories/{id}") { … }`.
///
/// ```swift
/// fn.onDocumentWritten("countItems", .init(document: "members/{uid}/items/{itemId}", retry: true, concurrency: 10)) { … }
/// ```
public struct DocumentOptions: Sendable, Hashable, ExpressibleByStringLiteral {
    /// Slash path with `{wildcard}` segments for ids (`members/{uid}`) and at most one `{name=**}`
    /// at the end for any depth below. Wildcard values reach the handler as `event.params`.
    public var document: String
    /// Whether a failed delivery is retried (default: not; it goes to dead letters). Later changes
    /// to the same document wait while a delivery is being retried.
    public var retry: RetrySetting
    /// Deliveries of this function running at once (default: the runtime's `delivery.default_concurrency`).
    /// Changes to one document are still delivered one at a time, in commit order.
    public var concurrency: Int?
    /// Longest run of one delivery (default 60 s, at most 3600 s); past it the delivery fails.
    public var timeout: Duration?
    /// Secrets the function reads with `event.secrets.value(_:)` (see `CallableOptions.secrets`).
    public var secrets: [String]

    /// Options; each left out takes its default.
    public init(document: String, retry: RetrySetting = false, concurrency: Int? = nil, timeout: Duration? = nil,
                secrets: [String] = []) {
        self.document = document
        self.retry = retry
        self.concurrency = concurrency
        self.timeout = timeout
        self.secrets = secrets
    }

    /// The document pattern alone, every other option at its default: `"members/{uid}"`.
    public init(stringLiteral document: String) { self.init(document: document) }

    var manifest: FunctionOptions {
        FunctionOptions(timeout: timeout, retry: retry.policy, rateLimits: concurrency.map { RateLimits(maxConcurrentDispatches: $0) },
                        secrets: secrets.nonEmpty)
    }
}

/// Options of an auth trigger (`onUserCreated`, `onUserDeleted`).
///
/// ```swift
/// fn.onUserDeleted("deleteUserData", .init(retry: true, timeout: .seconds(300))) { event in … }
/// ```
public struct EventOptions: Sendable, Hashable {
    /// Whether a failed delivery is retried (default: not; it goes to dead letters).
    public var retry: RetrySetting
    /// Longest run of one delivery (default 60 s, at most 3600 s); past it the delivery fails.
    public var timeout: Duration?
    /// Secrets the function reads with `event.secrets.value(_:)` (see `CallableOptions.secrets`).
    public var secrets: [String]

    /// Options; each left out takes its default.
    public init(retry: RetrySetting = false, timeout: Duration? = nil, secrets: [String] = []) {
        self.retry = retry
        self.timeout = timeout
        self.secrets = secrets
    }

    var manifest: FunctionOptions { FunctionOptions(timeout: timeout, retry: retry.policy, secrets: secrets.nonEmpty) }
}

extension Array {
    var nonEmpty: Self? { isEmpty ? nil : self }
}
