import Dispatch
import Foundation
import HearthModel
import HearthRuntime
import Synchronization

/// `hearth serve`: runs the runtime until SIGINT or SIGTERM.
struct ServeCommand: Command {
    static let path = ["serve"]
    static let summary = "Run the runtime with the configured units"
    static let help = """
        usage: hearth serve [options]

        Loads the configured units and serves them over HTTP (server.host:server.port) until SIGINT
        or SIGTERM; then stops accepting, lets in-flight requests finish within
        server.shutdown_grace_seconds, and exits 0.
          --host ADDRESS       listen on this IPv4 address (overrides server.host)
          --port N             listen on this port, 0 for any free one (overrides server.port)
          --record DIR         record every invocation, input and change into DIR (JSON lines;
                               see `hearth replay`; overrides [record] directory)
        \(CommonOptions.help)
        """

    var common: CommonOptions
    var host: String?
    var port: Int?
    var record: String?

    static func parse(_ arguments: [String]) throws(UsageError) -> ServeCommand {
        let args = try Arguments(arguments, valued: CommonOptions.valued.union(["host", "port", "record"]))
        _ = try args.requirePositionals([])
        let port = try args.int("port")
        if let port, !(0...65535).contains(port) { throw UsageError("--port must be between 0 and 65535 (got \(port))") }
        let host = args.value("host")
        if let host, host.isEmpty { throw UsageError("--host needs an address") }
        let record = args.value("record")
        if let record, record.isEmpty { throw UsageError("--record needs a directory") }
        return ServeCommand(common: try CommonOptions(args), host: host, port: port, record: record)
    }

    func run(_ io: CommandIO) async -> Int32 {
        let signals = SignalWaiter([SIGINT, SIGTERM])
        guard let runtime = await RuntimeSetup.start(common, io: io, records: false, configure: { config in
            if let record { config.record.directory = URL(fileURLWithPath: record).standardizedFileURL.path }
            // A server runs units in worker processes unless runtime.toml says otherwise.
            config.defaultIsolation = .process
            if let host { config.server.host = host }
            if let port { config.server.port = port }
            // Before the store's threads and the workers start: they inherit it.
            do { try config.server.scheduling.applyToProcess() } catch { io.err("warning: \(error)") }
        }) else { return ExitCode.failure }
        // Recording starts before the first request or delivery, so it holds the whole run.
        if let options = runtime.config.recordOptions(process: "serve") {
            do { try await runtime.startRecording(options, changes: true) } catch {
                io.err("error: cannot record: \(error)")
                runtime.close()
                return ExitCode.failure
            }
        }
        let door: FrontDoor
        let registration: HostRegistry.Registration
        do {
            // `hearth deploy` reaches this server's admin API with this token (see HostRegistry).
            let control = runtime.random.autoID(length: 40)
            door = try FrontDoor(runtime: runtime, secrets: runtime.secrets, controlToken: control)
            // The port first: a second server on a port already taken must stop before it claims
            // (and holds under its lease) any delivery.
            try door.start()
            registration = try HostRegistry.register(config: runtime.config, port: door.port, token: control)
        } catch {
            io.err("error: cannot serve: \(error)")
            runtime.close()
            return ExitCode.failure
        }
        defer { registration.remove() }
        do {
            try await runtime.startDeliveries(driving: true)
        } catch {
            io.err("error: cannot start deliveries: \(error)")
            await door.shutdown(grace: .zero)
            runtime.close()
            return ExitCode.failure
        }
        for entry in runtime.table.entries {
            runtime.log.info("function", ["name": .string(entry.name), "unit": .string(entry.unit.name), "trigger": .string(entry.trigger.summary),
                                          "version": .string(entry.unit.version ?? "build")])
        }
        runtime.log.log(.notice, "ready", ["functions": .int(Int64(runtime.table.entries.count)), "refusedUnits": .int(Int64(runtime.loadErrors.count)),
                                   "port": .int(Int64(door.port))])
        let signal = await signals.wait()
        runtime.log.info("shutting down", ["signal": .string(signal == SIGINT ? "SIGINT" : "SIGTERM"),
                                           "inFlight": .int(Int64(door.runtime.invoker.inFlightCount))])
        let grace = Duration.seconds(double: runtime.config.server.shutdownGraceSeconds)
        async let http: Void = door.shutdown(grace: grace)
        async let deliveries: Void = runtime.engine.stop(grace: grace)
        _ = await (http, deliveries)
        await runtime.stopRecording()
        runtime.close()
        runtime.log.info("stopped")
        return ExitCode.success
    }
}

/// Turns the first of some signals into an awaitable event. Installing it ignores the signals'
/// default action (termination) so the process can shut down in order.
final class SignalWaiter: Sendable {
    /// Only touched in init; kept so the sources stay alive.
    nonisolated(unsafe) private let sources: [any DispatchSourceSignal]
    private let state = Mutex<(received: Int32?, waiter: CheckedContinuation<Int32, Never>?)>((nil, nil))

    init(_ signals: [Int32]) {
        var sources: [any DispatchSourceSignal] = []
        for sig in signals {
            signal(sig, SIG_IGN)
            sources.append(DispatchSource.makeSignalSource(signal: sig, queue: .global()))
        }
        self.sources = sources
        for (source, sig) in zip(sources, signals) {
            source.setEventHandler { [weak self] in self?.deliver(sig) }
            source.resume()
        }
    }

    private func deliver(_ sig: Int32) {
        let waiter = state.withLock { s -> CheckedContinuation<Int32, Never>? in
            if s.received == nil { s.received = sig }
            return s.waiter.take()
        }
        waiter?.resume(returning: sig)
    }

    /// The first signal received (at once if one already was).
    func wait() async -> Int32 {
        await withCheckedContinuation { c in
            let now = state.withLock { s -> Int32? in
                if let r = s.received { return r }
                s.waiter = c
                return nil
            }
            if let now { c.resume(returning: now) }
        }
    }
}
