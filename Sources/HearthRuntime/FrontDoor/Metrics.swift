import HearthModel
import Synchronization

/// Counters and latency histograms, rendered in Prometheus' text format at `/metrics`.
public final class Metrics: Sendable {
    /// Latency bucket bounds, seconds.
    static let buckets: [Double] = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

    /// Counts per latency bucket, each observation counted in its own bucket only (one increment
    /// per request); the exposition's cumulative counts are summed when it is rendered.
    struct Histogram {
        /// `counts[i]` observations at most `buckets[i]` and above `buckets[i - 1]`; the last, above
        /// every bound (`+Inf` only).
        var counts = [Int](repeating: 0, count: Metrics.buckets.count + 1)
        var total = 0
        var sum = 0.0

        mutating func observe(_ seconds: Double) {
            var i = 0
            // Not `seconds > bound`: a NaN is at most no bound, so it counts under `+Inf` only.
            while i < Metrics.buckets.count, !(seconds <= Metrics.buckets[i]) { i += 1 }
            counts[i] += 1
            total += 1
            sum += seconds
        }

        /// The exposition's `le` counts: observations at most each bound.
        var cumulative: [Int] {
            var running = 0
            return Metrics.buckets.indices.map { running += counts[$0]; return running }
        }
    }

    /// A route's counters: one lookup by its name per request, then its status (an integer).
    struct RouteCounters {
        var statuses: [Int: Int] = [:]
        var latency = Histogram()
    }

    /// A function's counters: one lookup by its name per invocation; successes need no other key.
    struct FunctionCounters {
        var ok = 0
        /// Failures by error code (the outcome "error").
        var errors: [String: Int] = [:]
        var latency = Histogram()
    }

    struct State {
        var routes: [String: RouteCounters] = [:]
        var functions: [String: FunctionCounters] = [:]
    }

    private let state = Mutex(State())
    let httpInFlight = Atomic<Int>(0)
    let invocationsInFlight = Atomic<Int>(0)

    public init() {}

    func request(route: String, status: Int, seconds: Double) {
        state.withLock { s in
            s.routes[route, default: RouteCounters()].count(status: status, seconds: seconds)
        }
    }

    /// An invocation of `function` that succeeded (`error` nil) or failed with `error`'s code.
    func invocation(function: String, error: FunctionsErrorCode?, seconds: Double) {
        state.withLock { s in
            s.functions[function, default: FunctionCounters()].count(error: error, seconds: seconds)
        }
    }

    /// Counts of invocations of `function` by outcome, "ok" or "error" (for tests and the admin API).
    public func invocationCount(function: String, outcome: String) -> Int {
        state.withLock { s in
            guard let f = s.functions[function] else { return 0 }
            switch outcome {
            case "ok": return f.ok
            case "error": return f.errors.values.reduce(0, +)
            default: return 0
            }
        }
    }

    static func label(_ s: String) -> String {
        s.replacingOccurrences("\\", "\\\\").replacingOccurrences("\"", "\\\"").replacingOccurrences("\n", "\\n")
    }

    /// The Prometheus text exposition (version 0.0.4).
    public func render(extra: [(name: String, help: String, type: String, samples: [(labels: String, value: Double)])] = []) -> String {
        let s = state.withLock { $0 }
        var out = ""
        func header(_ name: String, _ help: String, _ type: String) { out += "# HELP \(name) \(help)\n# TYPE \(name) \(type)\n" }
        func number(_ v: Double) -> String { v == v.rounded() && abs(v) < 1e15 ? String(Int64(v)) : String(v) }

        header("hearth_http_requests_total", "HTTP requests by route and status.", "counter")
        for (route, counters) in s.routes.sorted(by: { $0.key < $1.key }) {
            for (status, n) in counters.statuses.sorted(by: { $0.key < $1.key }) {
                out += "hearth_http_requests_total{route=\"\(Metrics.label(route))\",status=\"\(status)\"} \(n)\n"
            }
        }
        header("hearth_http_requests_in_flight", "HTTP requests being handled.", "gauge")
        out += "hearth_http_requests_in_flight \(httpInFlight.load(ordering: .relaxed))\n"
        histogram(&out, "hearth_http_request_duration_seconds", "HTTP request latency by route.", "route", s.routes.mapValues(\.latency))

        header("hearth_invocations_total", "Function invocations by function, outcome and error code.", "counter")
        for (function, counters) in s.functions.sorted(by: { $0.key < $1.key }) {
            // "error" sorts before "ok", as the outcomes were always listed.
            for (code, n) in counters.errors.sorted(by: { $0.key < $1.key }) {
                out += "hearth_invocations_total{function=\"\(Metrics.label(function))\",outcome=\"error\",code=\"\(code)\"} \(n)\n"
            }
            if counters.ok > 0 {
                out += "hearth_invocations_total{function=\"\(Metrics.label(function))\",outcome=\"ok\",code=\"ok\"} \(counters.ok)\n"
            }
        }
        header("hearth_invocations_in_flight", "Function invocations running.", "gauge")
        out += "hearth_invocations_in_flight \(invocationsInFlight.load(ordering: .relaxed))\n"
        histogram(&out, "hearth_invocation_duration_seconds", "Function invocation latency.", "function", s.functions.mapValues(\.latency))

        for metric in extra {
            header(metric.name, metric.help, metric.type)
            for sample in metric.samples { out += "\(metric.name)\(sample.labels.isEmpty ? "" : "{\(sample.labels)}") \(number(sample.value))\n" }
        }
        return out
    }

    private func histogram(_ out: inout String, _ name: String, _ help: String, _ labelName: String, _ histograms: [String: Histogram]) {
        out += "# HELP \(name) \(help)\n# TYPE \(name) histogram\n"
        for (key, h) in histograms.sorted(by: { $0.key < $1.key }) {
            let l = "\(labelName)=\"\(Metrics.label(key))\""
            for (bound, count) in zip(Metrics.buckets, h.cumulative) { out += "\(name)_bucket{\(l),le=\"\(bound)\"} \(count)\n" }
            out += "\(name)_bucket{\(l),le=\"+Inf\"} \(h.total)\n"
            out += "\(name)_sum{\(l)} \(h.sum)\n"
            out += "\(name)_count{\(l)} \(h.total)\n"
        }
    }
}

extension Metrics.RouteCounters {
    mutating func count(status: Int, seconds: Double) {
        statuses[status, default: 0] += 1
        latency.observe(seconds)
    }
}

extension Metrics.FunctionCounters {
    mutating func count(error: FunctionsErrorCode?, seconds: Double) {
        if let error { errors[error.rawValue, default: 0] += 1 } else { ok += 1 }
        latency.observe(seconds)
    }
}

extension String {
    func replacingOccurrences(_ target: String, _ replacement: String) -> String {
        guard contains(target) else { return self }
        return split(separator: target, omittingEmptySubsequences: false).joined(separator: replacement)
    }
}
