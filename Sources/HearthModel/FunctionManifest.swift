/// Which browser origins may call an HTTP function.
public enum CORSPolicy: Sendable, Hashable, Codable {
    /// Reflect any origin (Firebase's default for `onCall`).
    case allowAll
    /// Send no CORS headers; browsers refuse cross-origin calls.
    case disabled
    /// Only these origins: exact strings, `*` globs (`https://*.example.com`), or regular expressions
    /// written between slashes (`/^https:\/\/.*\.example\.com$/`).
    case origins([String])

    enum CodingKeys: String, CodingKey { case allowAll, disabled, origins }

    public init(from decoder: Decoder) throws {
        let c = try decoder.singleValueContainer()
        if let b = try? c.decode(Bool.self) {
            self = b ? .allowAll : .disabled
        } else if let list = try? c.decode([String].self) {
            self = .origins(list)
        } else if let one = try? c.decode(String.self) {
            self = .origins([one])
        } else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "cors must be true, false, an origin or a list of origins"))
        }
    }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.singleValueContainer()
        switch self {
        case .allowAll: try c.encode(true)
        case .disabled: try c.encode(false)
        case .origins(let list): try c.encode(list)
        }
    }
}

/// Options of one function. Which apply depends on its trigger; `problems(for:)` says what does not fit.
/// As JSON (`hearth functions --json`, the admin API) durations are seconds, as in Firebase's manifest.
public struct FunctionOptions: Sendable, Hashable, Codable {
    /// Longest run of one invocation (default 60 s, at most 3600 s).
    public var timeout: Duration?
    /// HTTP functions: which origins may call.
    public var cors: CORSPolicy?
    /// Callables: refuse calls without a valid App Check token.
    public var enforceAppCheck: Bool?
    /// Streaming callables: time between SSE heartbeats (off when nil).
    public var heartbeat: Duration?
    /// Event functions: when to retry a failure. Document and user triggers default to none
    /// (a failure goes to dead letters), task queues to `RetryPolicy.taskQueueDefault`.
    public var retry: RetryPolicy?
    /// Event functions: dispatch rate and concurrency limits.
    public var rateLimits: RateLimits?
    /// Tasks: how long one dispatch may run before it counts as failed (default 600 s, 15 s to 1800 s).
    public var dispatchDeadline: Duration?
    /// Secrets (names) the function reads; deploying without them fails.
    public var secrets: [String]?
    /// Informational: the region in callable URLs (`/{project}/{region}/{name}`).
    public var region: String?

    public init(timeout: Duration? = nil, cors: CORSPolicy? = nil, enforceAppCheck: Bool? = nil,
                heartbeat: Duration? = nil, retry: RetryPolicy? = nil, rateLimits: RateLimits? = nil,
                dispatchDeadline: Duration? = nil, secrets: [String]? = nil, region: String? = nil) {
        self.timeout = timeout
        self.cors = cors
        self.enforceAppCheck = enforceAppCheck
        self.heartbeat = heartbeat
        self.retry = retry
        self.rateLimits = rateLimits
        self.dispatchDeadline = dispatchDeadline
        self.secrets = secrets
        self.region = region
    }

    enum CodingKeys: String, CodingKey {
        case timeoutSeconds, cors, enforceAppCheck, heartbeatSeconds, retry, rateLimits, dispatchDeadlineSeconds, secrets, region
    }

    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        timeout = try c.decodeIfPresent(Double.self, forKey: .timeoutSeconds).map(Duration.seconds(double:))
        cors = try c.decodeIfPresent(CORSPolicy.self, forKey: .cors)
        enforceAppCheck = try c.decodeIfPresent(Bool.self, forKey: .enforceAppCheck)
        heartbeat = try c.decodeIfPresent(Double.self, forKey: .heartbeatSeconds).map(Duration.seconds(double:))
        retry = try c.decodeIfPresent(RetryPolicy.self, forKey: .retry)
        rateLimits = try c.decodeIfPresent(RateLimits.self, forKey: .rateLimits)
        dispatchDeadline = try c.decodeIfPresent(Double.self, forKey: .dispatchDeadlineSeconds).map(Duration.seconds(double:))
        secrets = try c.decodeIfPresent([String].self, forKey: .secrets)
        region = try c.decodeIfPresent(String.self, forKey: .region)
    }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encodeIfPresent(timeout?.secondsDouble, forKey: .timeoutSeconds)
        try c.encodeIfPresent(cors, forKey: .cors)
        try c.encodeIfPresent(enforceAppCheck, forKey: .enforceAppCheck)
        try c.encodeIfPresent(heartbeat?.secondsDouble, forKey: .heartbeatSeconds)
        try c.encodeIfPresent(retry, forKey: .retry)
        try c.encodeIfPresent(rateLimits, forKey: .rateLimits)
        try c.encodeIfPresent(dispatchDeadline?.secondsDouble, forKey: .dispatchDeadlineSeconds)
        try c.encodeIfPresent(secrets, forKey: .secrets)
        try c.encodeIfPresent(region, forKey: .region)
    }

    public static let maxTimeout: Duration = .seconds(3600)
    public static let defaultTimeout: Duration = .seconds(60)
    public static let dispatchDeadlineRange: ClosedRange<Duration> = .seconds(15)...(.seconds(1800))

    /// How long one invocation may run: `timeout`, or the default.
    public var effectiveTimeout: Duration { timeout ?? FunctionOptions.defaultTimeout }

    /// What is wrong with these options for a function with `trigger`; empty when valid.
    public func problems(for trigger: Trigger) -> [String] {
        var out: [String] = []
        if let t = timeout, !(t > .zero && t <= FunctionOptions.maxTimeout) {
            out.append("timeout must be in (0, 3600] seconds (got \(t.secondsDouble) s)")
        }
        let http = trigger == .callable || trigger == .request
        if !http {
            if cors != nil { out.append("cors applies only to callable and request functions") }
            if enforceAppCheck != nil { out.append("enforceAppCheck applies only to callable and request functions") }
        }
        if trigger != .callable && heartbeat != nil { out.append("heartbeat applies only to callable functions") }
        if let h = heartbeat, !(h > .zero && h <= FunctionOptions.maxTimeout) {
            out.append("heartbeat must be in (0, 3600] seconds (got \(h.secondsDouble) s)")
        }
        if http {
            if retry != nil { out.append("retry applies only to event functions (schedules, tasks, document and user triggers)") }
            if rateLimits != nil { out.append("rateLimits applies only to event functions") }
        }
        if trigger != .task && dispatchDeadline != nil { out.append("dispatchDeadline applies only to task queues") }
        if let d = dispatchDeadline, !FunctionOptions.dispatchDeadlineRange.contains(d) {
            out.append("dispatchDeadline must be in [15, 1800] seconds (got \(d.secondsDouble) s)")
        }
        if let retry { out += retry.problems().map { "retry: " + $0 } }
        if let rateLimits { out += rateLimits.problems().map { "rateLimits: " + $0 } }
        if case .origins(let list)? = cors, list.isEmpty { out.append("cors: an empty origin list; use false to disable CORS") }
        for secret in secrets ?? [] where !FunctionManifest.isValidSecretName(secret) {
            out.append("secret name '\(secret)' must be letters, digits and '_', starting with a letter")
        }
        return out
    }
}

/// One function of a unit: its unique name, trigger and options.
public struct FunctionSpec: Sendable, Hashable, Codable {
    public var name: String
    public var trigger: Trigger
    public var options: FunctionOptions

    public init(name: String, trigger: Trigger, options: FunctionOptions = FunctionOptions()) {
        self.name = name
        self.trigger = trigger
        self.options = options
    }
}

/// Everything a unit declares, as it crosses the unit boundary and as `hearth functions --json` prints it.
public struct FunctionManifest: Sendable, Hashable, Codable {
    public var unit: String
    public var abiVersion: Int
    public var functions: [FunctionSpec]

    public init(unit: String, abiVersion: Int, functions: [FunctionSpec]) {
        self.unit = unit
        self.abiVersion = abiVersion
        self.functions = functions
    }

    /// Function names are what URLs, cursors and task rows use: 1–63 characters, letters, digits,
    /// `_` and `-`, starting with a letter (as Cloud Functions requires).
    public static func isValidFunctionName(_ name: String) -> Bool {
        let u = Array(name.utf8)
        guard (1...63).contains(u.count), let first = u.first, first | 0x20 >= 97 && first | 0x20 <= 122 else { return false }
        return u.allSatisfy { c in c == 95 || c == 45 || (c >= 48 && c <= 57) || (c | 0x20 >= 97 && c | 0x20 <= 122) }
    }

    public static func isValidSecretName(_ name: String) -> Bool {
        let u = Array(name.utf8)
        guard (1...128).contains(u.count), let first = u.first, first | 0x20 >= 97 && first | 0x20 <= 122 else { return false }
        return u.allSatisfy { c in c == 95 || (c >= 48 && c <= 57) || (c | 0x20 >= 97 && c | 0x20 <= 122) }
    }

    /// Checks names, patterns and options; `validateSchedule` checks schedule expressions and zones.
    /// Returns every problem found, each naming the function.
    public func problems(validateSchedule: (String, String) -> String? = { _, _ in nil }) -> [String] {
        var out: [String] = []
        var seen: Set<String> = []
        for fn in functions {
            if !FunctionManifest.isValidFunctionName(fn.name) {
                out.append("function name '\(fn.name)' must be 1-63 letters, digits, '_' or '-', starting with a letter")
            }
            if !seen.insert(fn.name).inserted { out.append("function '\(fn.name)' is declared twice") }
            switch fn.trigger {
            case .document(_, let pattern):
                do { _ = try PathPattern(pattern) } catch { out.append("function '\(fn.name)': \(error.message)") }
            case .schedule(let schedule, let zone):
                if let problem = validateSchedule(schedule, zone) { out.append("function '\(fn.name)': \(problem)") }
            default:
                break
            }
            out += fn.options.problems(for: fn.trigger).map { "function '\(fn.name)': \($0)" }
        }
        return out
    }
}
