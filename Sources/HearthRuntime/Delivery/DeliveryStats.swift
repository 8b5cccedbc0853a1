import Synchronization

/// Counters of what the engine did, by function, for metrics (readable without the actor).
public final class DeliveryStats: Sendable {
    public enum Result: Sendable { case succeeded, failed, dead }

    public struct Counters: Sendable {
        public var started = 0
        public var succeeded = 0
        /// Failed attempts that will be retried.
        public var failed = 0
        public var dead = 0
    }

    private let state = Mutex<(counters: [String: Counters], latencies: [Double])>(([:], []))

    func register(_ function: String) { state.withLock { if $0.counters[function] == nil { $0.counters[function] = Counters() } } }

    func started(_ function: String, latency: Duration?) {
        state.withLock { s in
            s.counters[function, default: Counters()].started += 1
            if let latency, s.latencies.count < 1_000_000 { s.latencies.append(latency.secondsDouble) }
        }
    }

    func finished(_ function: String, _ result: Result) {
        state.withLock { s in
            switch result {
            case .succeeded: s.counters[function, default: Counters()].succeeded += 1
            case .failed: s.counters[function, default: Counters()].failed += 1
            case .dead: s.counters[function, default: Counters()].dead += 1
            }
        }
    }

    public var counters: [String: Counters] { state.withLock { $0.counters } }

    /// Seconds from commit to the start of a trigger's first attempt, as recorded (benchmarks).
    public func takeLatencies() -> [Double] { state.withLock { s in defer { s.latencies = [] }; return s.latencies } }
}
