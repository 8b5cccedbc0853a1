import Dispatch
import Foundation
import HearthModel
import Synchronization

/// A unit in process isolation: `count` worker processes running one version of its library.
///
/// Requests go to the live worker with the fewest outstanding. A worker that dies is restarted
/// after a backoff that doubles with each death in the last minute (capped); what it was running
/// failed with "worker died". Three deaths within a minute mark the unit unhealthy (`/healthz`,
/// metrics) until a minute passes without one. While no worker is up, requests wait for the
/// restart (each within its own timeout).
///
/// An invocation past its timeout is cancelled in its worker; one still running `killGrace`
/// later (a tight loop never sees cancellation) has its worker killed.
///
/// `retire()` (a newer version took over): no restarts; each worker exits once it has answered
/// everything sent to it, so invocations already running finish on this version.
final class WorkerPool: UnitTransport {
    let launch: WorkerLaunch
    let count: Int
    private let services: HostServices
    private let log: RuntimeLog
    private let killGrace: Double
    private let backoffMax: Double

    private struct Waiting {
        let frame: [UInt8]
        let function: String?
        let reply: @Sendable ([UInt8]) -> Void
    }

    private struct State {
        var workers: [WorkerProcess?]
        var waiting: [Waiting] = []
        var deaths: [ContinuousClock.Instant] = []
        var restarts = 0
        var lastCause: String?
        var retired = false
        /// Past this, a retired pool's idle workers are closed.
        var closeAfter: ContinuousClock.Instant?
    }

    private let state: Mutex<State>
    /// Resumed when every worker of a retired pool has exited.
    private let drained = Changes()

    init(_ launch: WorkerLaunch, count: Int, services: HostServices, log: RuntimeLog, killGrace: Double, backoffMax: Double) throws {
        self.launch = launch
        self.count = max(1, count)
        self.services = services
        self.log = log
        self.killGrace = killGrace
        self.backoffMax = backoffMax
        state = Mutex(State(workers: Array(repeating: nil, count: max(1, count))))
        for slot in 0..<self.count {
            let worker = try spawn(slot: slot)
            state.withLock { $0.workers[slot] = worker }
        }
    }

    private func spawn(slot: Int) throws -> WorkerProcess {
        try WorkerProcess(launch, services: services, log: log) { [weak self] worker, cause in
            self?.exited(worker, slot: slot, cause: cause)
        }
    }

    var isolation: RuntimeConfig.Isolation { .process }

    var pids: [Int32] { state.withLock { $0.workers.compactMap { $0?.pid } } }

    func send(_ frame: [UInt8], function: String?, reply: @escaping @Sendable ([UInt8]) -> Void) {
        // A retired pool closes each worker once it has answered everything.
        let answer: @Sendable ([UInt8]) -> Void = { [weak self] bytes in
            reply(bytes)
            self?.closeIdleIfRetired()
        }
        while true {
            enum Pick { case worker(WorkerProcess), wait, refuse(String) }
            let pick = state.withLock { s -> Pick in
                let live = s.workers.compactMap { $0 }.filter { !$0.isDead }
                if let best = live.min(by: { $0.outstanding < $1.outstanding }) { return .worker(best) }
                // Waits for the restart (the caller's timeout bounds it), up to a bound.
                if s.waiting.count >= WorkerPool.maxWaiting {
                    return .refuse("unit \(launch.unit) has no worker up and \(s.waiting.count) requests waiting for one (last death: \(s.lastCause ?? "unknown"))")
                }
                s.waiting.append(Waiting(frame: frame, function: function, reply: answer))
                return .wait
            }
            switch pick {
            case .worker(let worker):
                if worker.send(frame, function: function, reply: answer) { return }
                continue  // it died just now: pick again
            case .wait:
                return
            case .refuse(let message):
                let header = (try? frame.withUnsafeBytes { try Boundary.header($0) }) ?? Boundary.Header(kind: .request, operation: .invoke, invocation: 0)
                reply(Boundary.failure(header, RemoteError(code: .unavailable, message: "UNAVAILABLE", debug: message)))
                return
            }
        }
    }

    func abandon(invocation: UInt64, function: String, timeout: Duration) {
        let worker = state.withLock { s in s.workers.compactMap { $0 }.first { $0.isRunning(invocation: invocation) } }
        guard let worker else { return }
        let cancel = Boundary.frame(Boundary.Header(kind: .request, operation: .cancel, invocation: invocation), Boundary.Empty())
        _ = worker.send(cancel, function: function, reply: { [weak self] _ in self?.closeIdleIfRetired() })
        let grace = killGrace
        DispatchQueue.global().asyncAfter(deadline: .now() + grace) { [weak worker] in
            guard let worker, worker.isRunning(invocation: invocation) else { return }
            worker.kill(reason: "invocation \(Invoker.format(invocation)) (\(function)) ran past its timeout of \(timeout.secondsDouble) s and did not stop within \(grace) s of being cancelled")
        }
    }

    /// Requests that looked the old version up just before the swap still reach it within this.
    static let retireGrace = Duration.seconds(1)

    func retire() {
        state.withLock { s in
            s.retired = true
            s.closeAfter = ContinuousClock.now + WorkerPool.retireGrace
        }
        DispatchQueue.global().asyncAfter(deadline: .now() + WorkerPool.retireGrace.secondsDouble) { [self] in closeIdleIfRetired() }
    }

    /// Waits (at most `timeout`) until every worker of a retired pool has exited; true if they did.
    func waitUntilDrained(timeout: Duration) async -> Bool {
        await drained.wait(atMost: timeout) { [self] in state.withLock { s in s.workers.allSatisfy { $0 == nil } } }
    }

    /// Kills every worker now (the host is stopping, or a version was refused).
    func stop() {
        let workers = state.withLock { s -> [WorkerProcess] in
            s.retired = true
            s.closeAfter = ContinuousClock.now
            return s.workers.compactMap { $0 }
        }
        for worker in workers { worker.close() }
    }

    private func closeIdleIfRetired() {
        let idle = state.withLock { s -> [WorkerProcess] in
            guard s.retired, let after = s.closeAfter, ContinuousClock.now >= after else { return [] }
            return s.workers.compactMap { $0 }.filter { $0.outstanding == 0 }
        }
        for worker in idle { worker.close() }
    }

    private func exited(_ worker: WorkerProcess, slot: Int, cause: String) {
        let now = ContinuousClock.now
        let (retired, deaths) = state.withLock { s -> (Bool, Int) in
            if s.workers[slot] === worker { s.workers[slot] = nil }
            guard !s.retired else { return (true, 0) }
            s.deaths = s.deaths.filter { now - $0 < .seconds(60) } + [now]
            s.lastCause = cause
            return (false, s.deaths.count)
        }
        drained.changed()
        if retired {
            log.debug("worker stopped", ["unit": .string(launch.unit), "pid": .int(Int64(worker.pid)), "how": .string(cause)])
            return
        }
        log.error("worker died", ["unit": .string(launch.unit), "pid": .int(Int64(worker.pid)), "cause": .string(cause),
                                  "deathsLastMinute": .int(Int64(deaths))])
        scheduleRestart(slot: slot, deaths: deaths)
    }

    private func scheduleRestart(slot: Int, deaths: Int) {
        let delay = min(backoffMax, 0.05 * pow(2, Double(max(0, deaths - 1))))
        DispatchQueue.global().asyncAfter(deadline: .now() + delay) { [weak self] in self?.restart(slot: slot, deaths: deaths) }
    }

    private func restart(slot: Int, deaths: Int) {
        guard !state.withLock({ $0.retired }) else { return }
        let worker: WorkerProcess
        do { worker = try spawn(slot: slot) } catch {
            log.error("worker restart failed", ["unit": .string(launch.unit), "error": .string("\(error)")])
            scheduleRestart(slot: slot, deaths: deaths + 1)
            return
        }
        let waiting = state.withLock { s -> [Waiting] in
            s.workers[slot] = worker
            s.restarts += 1
            defer { s.waiting = [] }
            return s.waiting
        }
        log.info("worker restarted", ["unit": .string(launch.unit), "pid": .int(Int64(worker.pid))])
        for w in waiting { send(w.frame, function: w.function, reply: w.reply) }
    }

    /// Requests held while no worker is up; past this they fail with `unavailable`.
    static let maxWaiting = 10_000

    static func crashLooping(_ deaths: [ContinuousClock.Instant]) -> Bool {
        let now = ContinuousClock.now
        return deaths.count { now - $0 < .seconds(60) } >= 3
    }

    var health: UnitHealth {
        state.withLock { s in
            UnitHealth(isolation: .process, workers: s.workers.compactMap { $0 }.count { !$0.isDead }, configuredWorkers: count,
                       restarts: s.restarts, healthy: !WorkerPool.crashLooping(s.deaths), lastDeath: s.lastCause)
        }
    }
}
