import HearthModel
@testable import HearthRuntime
import Testing

@Suite("Metrics' Prometheus exposition")
struct MetricsTests {
    /// The sample lines of `text` named `name`, as label set → value.
    static func samples(_ text: String, _ name: String) -> [String: String] {
        var found: [String: String] = [:]
        for line in text.split(separator: "\n") where line.hasPrefix(name + "{") {
            let parts = line.split(separator: " ")
            found[String(parts[0].dropFirst(name.count))] = String(parts[1])
        }
        return found
    }

    @Test("latency buckets count every observation at most their bound, on the bound included")
    func cumulativeBuckets() {
        let metrics = Metrics()
        // 0.0005 lies on the first bound, 0.003 between the third and fourth, 11 above the last.
        for seconds in [0.0001, 0.0005, 0.003, 0.003, 7.0, 11.0] {
            metrics.invocation(function: "f", error: nil, seconds: seconds)
        }
        let buckets = Self.samples(metrics.render(), "hearth_invocation_duration_seconds_bucket")
        let expected: [String: String] = [
            "0.0005": "2", "0.001": "2", "0.0025": "2", "0.005": "4", "0.01": "4", "0.025": "4", "0.05": "4",
            "0.1": "4", "0.25": "4", "0.5": "4", "1.0": "4", "2.5": "4", "5.0": "4", "10.0": "5", "+Inf": "6",
        ]
        #expect(buckets.count == expected.count)
        for (bound, count) in expected {
            #expect(buckets["{function=\"f\",le=\"\(bound)\"}"] == count, "le=\(bound)")
        }
        let text = metrics.render()
        #expect(text.contains("hearth_invocation_duration_seconds_count{function=\"f\"} 6\n"))
        // A negative duration is at most every bound; a NaN at most none (`+Inf` only), as when
        // each bucket was counted by comparing with `<=`.
        let odd = Metrics()
        for seconds in [-1.0, .nan] { odd.invocation(function: "g", error: nil, seconds: seconds) }
        let oddBuckets = Self.samples(odd.render(), "hearth_invocation_duration_seconds_bucket")
        #expect(oddBuckets["{function=\"g\",le=\"0.0005\"}"] == "1")
        #expect(oddBuckets["{function=\"g\",le=\"10.0\"}"] == "1")
        #expect(oddBuckets["{function=\"g\",le=\"+Inf\"}"] == "2")
        #expect(text.contains("hearth_invocation_duration_seconds_sum{function=\"f\"} 18.0066\n"))
    }

    @Test("invocations by function, outcome and code; requests by route and status; in a stable order")
    func counters() {
        let metrics = Metrics()
        metrics.invocation(function: "b", error: nil, seconds: 0.001)
        metrics.invocation(function: "c", error: .unavailable, seconds: 0.001)  // only ever failed: no ok line
        metrics.invocation(function: "a", error: .notFound, seconds: 0.001)
        metrics.invocation(function: "a", error: nil, seconds: 0.001)
        metrics.invocation(function: "a", error: .internal, seconds: 0.001)
        metrics.invocation(function: "a", error: .notFound, seconds: 0.001)
        metrics.request(route: "callable", status: 404, seconds: 0.001)
        metrics.request(route: "callable", status: 200, seconds: 0.001)
        metrics.request(route: "admin", status: 200, seconds: 0.001)
        let lines = metrics.render().split(separator: "\n").filter {
            $0.hasPrefix("hearth_invocations_total{") || $0.hasPrefix("hearth_http_requests_total{")
        }
        #expect(lines == [
            #"hearth_http_requests_total{route="admin",status="200"} 1"#,
            #"hearth_http_requests_total{route="callable",status="200"} 1"#,
            #"hearth_http_requests_total{route="callable",status="404"} 1"#,
            #"hearth_invocations_total{function="a",outcome="error",code="internal"} 1"#,
            #"hearth_invocations_total{function="a",outcome="error",code="not-found"} 2"#,
            #"hearth_invocations_total{function="a",outcome="ok",code="ok"} 1"#,
            #"hearth_invocations_total{function="b",outcome="ok",code="ok"} 1"#,
            #"hearth_invocations_total{function="c",outcome="error",code="unavailable"} 1"#,
        ])
        #expect(metrics.invocationCount(function: "a", outcome: "ok") == 1)
        #expect(metrics.invocationCount(function: "a", outcome: "error") == 3)
        #expect(metrics.invocationCount(function: "b", outcome: "error") == 0)
        #expect(metrics.invocationCount(function: "nobody", outcome: "ok") == 0)
        #expect(metrics.invocationCount(function: "c", outcome: "ok") == 0)
        #expect(metrics.invocationCount(function: "a", outcome: "surprise") == 0)
    }
}
