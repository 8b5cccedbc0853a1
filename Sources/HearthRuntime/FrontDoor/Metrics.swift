import HearthModel
import Synchronization

/// Counters and latency histograms, rendered in Prometheus' text format at `/metrics`.
public final class Metrics: Sendable {
    /// Latency bucket bounds, seconds.
    static let buckets: [Double] = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

    struct Histogram {
        var counts = [Int](repeating: 0, count: Metrics.buckets.count)
        var total = 0
        var sum = 0.0

        mutating func observe(_ seconds: Double) {
            for (i, bound) in Metrics.buckets.enumerated() where seconds <= bound { counts[i] += 1 }
            total += 1
            sum += seconds
        }
    }

    /// Counters' keys as fields, not joined into one string: no string is built per request.
    struct RequestKey: Hashable {
        var route: String
        var status: Int
    }

    struct InvocationKey: Hashable {
        var function: String
        var outcome: String
        var code: String
    }

    struct State {
        var requests: [RequestKey: Int] = [:]
        var invocations: [InvocationKey: Int] = [:]
        var latency: [String: Histogram] = [:]     // function
        var requestLatency: [String: Histogram] = [:]  // route
    }

    private let state = Mutex(State())
    let httpInFlight = Atomic<Int>(0)
    let invocationsInFlight = Atomic<Int>(0)

    public init() {}

    func request(route: String, status: Int, seconds: Double) {
        state.withLock { s in
            s.requests[RequestKey(route: route, status: status), default: 0] += 1
            s.requestLatency[route, default: Histogram()].observe(seconds)
        }
    }

    func invocation(function: String, outcome: String, code: String, seconds: Double) {
        state.withLock { s in
            s.invocations[InvocationKey(function: function, outcome: outcome, code: code), default: 0] += 1
            s.latency[function, default: Histogram()].observe(seconds)
        }
    }

    /// Counts of invocations of `function` by outcome (for tests and the admin API).
    public func invocationCount(function: String, outcome: String) -> Int {
        state.withLock { s in s.invocations.filter { $0.key.function == function && $0.key.outcome == outcome }.values.reduce(0, +) }
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
        for (key, n) in s.requests.sorted(by: { ($0.key.route, $0.key.status) < ($1.key.route, $1.key.status) }) {
            out += "hearth_http_requests_total{route=\"\(Metrics.label(key.route))\",status=\"\(key.status)\"} \(n)\n"
        }
        header("hearth_http_requests_in_flight", "HTTP requests being handled.", "gauge")
        out += "hearth_http_requests_in_flight \(httpInFlight.load(ordering: .relaxed))\n"
        histogram(&out, "hearth_http_request_duration_seconds", "HTTP request latency by route.", "route", s.requestLatency)

        header("hearth_invocations_total", "Function invocations by function, outcome and error code.", "counter")
        for (key, n) in s.invocations.sorted(by: { ($0.key.function, $0.key.outcome, $0.key.code) < ($1.key.function, $1.key.outcome, $1.key.code) }) {
            out += "hearth_invocations_total{function=\"\(Metrics.label(key.function))\",outcome=\"\(key.outcome)\",code=\"\(key.code)\"} \(n)\n"
        }
        header("hearth_invocations_in_flight", "Function invocations running.", "gauge")
        out += "hearth_invocations_in_flight \(invocationsInFlight.load(ordering: .relaxed))\n"
        histogram(&out, "hearth_invocation_duration_seconds", "Function invocation latency.", "function", s.latency)

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
            for (bound, count) in zip(Metrics.buckets, h.counts) { out += "\(name)_bucket{\(l),le=\"\(bound)\"} \(count)\n" }
            out += "\(name)_bucket{\(l),le=\"+Inf\"} \(h.total)\n"
            out += "\(name)_sum{\(l)} \(h.sum)\n"
            out += "\(name)_count{\(l)} \(h.total)\n"
        }
    }
}

extension String {
    func replacingOccurrences(_ target: String, _ replacement: String) -> String {
        guard contains(target) else { return self }
        return split(separator: target, omittingEmptySubsequences: false).joined(separator: replacement)
    }
}
