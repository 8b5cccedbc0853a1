import Foundation
import HearthModel
import HearthRuntime

/// Invocations per second of a trivial callable through the unit ABI (encode, C call, decode,
/// handler task, reply) beside a direct Swift call of the same handler body.
func runBoundaryBenchmark() async throws {
    printHeader("Unit boundary: echo callable through the ABI vs a direct Swift call", command: "Scripts/bench/boundary")
    var config = RuntimeConfig()
    config.units = [RuntimeConfig.Unit(name: "EchoUnit")]
    config.dataDirectory = NSTemporaryDirectory() + "hearth-bench-\(getpid())"
    let runtime = try await Runtime.open(config: config, log: RuntimeLog(level: .error))
    await runtime.loadUnits()
    guard runtime.loadErrors.isEmpty, let entry = runtime.table["echo"] else {
        print("error: cannot load EchoUnit: \(runtime.loadErrors)")
        exit(1)
    }
    let data: Value = ["title": "buy milk", "count": 3, "tags": ["home", "errand"]]
    let event = Boundary.Event.callable(Boundary.CallableEvent(data: data))

    let handler: @Sendable (Boundary.Event) async throws -> Value = { request in
        guard case .callable(let call) = request else { return .null }
        return call.data
    }
    let direct = try await asyncOpsPerSecond { _ = try await handler(event) }
    let viaABI = await asyncOpsPerSecond { _ = await runtime.invoker.invoke(entry, event: event) }
    let viaCall = await asyncOpsPerSecond { _ = await runtime.call("echo", data: data) }

    // Concurrent: 64 invocations in flight at once.
    let clock = ContinuousClock()
    let total = 50_000
    let start = clock.now
    await withTaskGroup(of: Void.self) { group in
        for worker in 0..<64 {
            group.addTask {
                var i = worker
                while i < total {
                    _ = await runtime.invoker.invoke(entry, event: event)
                    i += 64
                }
            }
        }
    }
    let concurrent = Double(total) / (clock.now - start).seconds

    print("direct Swift call of the handler body      \(fmt(direct, 0).leftPad(10)) calls/s")
    print("through the ABI, sequential                \(fmt(viaABI, 0).leftPad(10)) invocations/s   (\(fmt(1e6 / viaABI, 2)) µs each)")
    print("through the ABI with timeout (Runtime.call) \(fmt(viaCall, 0).leftPad(9)) invocations/s")
    print("through the ABI, 64 concurrent              \(fmt(concurrent, 0).leftPad(9)) invocations/s")
    print("ratio ABI/direct (sequential): \(fmt(viaABI / direct, 4))")
}
