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
        /// Workers told to exit: nothing more is sent to them.
        var closing: Set<ObjectIdentifier> = []
        /// Where requests go once this pool is retired and has no worker to take them (the version
        /// that replaced it); nil after `stop`.
        var successor: (any UnitTransport)?
    }

    private let state: Mutex<State>
    /// `state.retired`, readable without the lock (every reply asks).
    private let isRetired = Atomic<Bool>(false)

    init(_ launch: WorkerLaunch, count: Int, services: HostServices, log: RuntimeLog, killGrace: Double, backoffMax: Double) throws {
        self.launch = launch
        self.count = max(1, count)
        self.services = services
        self.log = log
        self.killGrace = killGrace
        self.backoffMax = backoffMax
        state = Mutex(State(workers: Array(repeating: nil, count: max(1, count))))
        for slot in 0..<self.count {
            do {
                let worker = try spawn(slot: slot)
                state.withLock { $0.workers[slot] = worker }
            } catch {
                stop()
                throw error
            }
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
        guard let header = try? frame.withUnsafeBytes({ try Boundary.header($0) }) else {
            reply(Boundary.failure(Boundary.Header(kind: .request, operation: .invoke, invocation: 0),
                                   RemoteError(code: .internal, message: "INTERNAL", debug: "a request frame without a readable header")))
            return
        }
        // A retired pool closes each worker once it has answered everything.
        // Held strongly: a retired pool lives until its last worker has answered and been closed.
        let answer: @Sendable ([UInt8]) -> Void = { [self] bytes in
            reply(bytes)
            closeIdleIfRetired()
        }
        enum Pick { case worker(WorkerProcess, UInt64), forward(any UnitTransport), wait, refuse(String) }
        // The worker is chosen and the request registered with it under the pool's lock, so a
        // retiring pool never closes a worker a request was just given to.
        let pick = state.withLock { s -> Pick in
            // The open worker with the fewest requests outstanding (a dead one refuses to register).
            var tried = 0
            while tried < s.workers.count {
                tried += 1
                var best: WorkerProcess?
                var fewest = Int.max
                for case let worker? in s.workers where !s.closing.contains(ObjectIdentifier(worker)) {
                    let n = worker.outstanding
                    if n < fewest && !worker.isDead { (best, fewest) = (worker, n) }
                }
                guard let best else { break }
                if let call = best.register(header, function: function, reply: answer) { return .worker(best, call) }
            }
            if s.retired {
                if let successor = s.successor { return .forward(successor) }
                return .refuse("unit \(launch.unit) (this version) is stopped")
            }
            // Waits for the restart (the caller's timeout bounds it), up to a bound.
            if s.waiting.count >= WorkerPool.maxWaiting {
                return .refuse("unit \(launch.unit) has no worker up and \(s.waiting.count) requests waiting for one (last death: \(s.lastCause ?? "unknown"))")
            }
            s.waiting.append(Waiting(frame: frame, function: function, reply: reply))
            return .wait
        }
        switch pick {
        case .worker(let worker, let call): worker.write(frame, call: call)
        case .forward(let successor): successor.send(frame, function: function, reply: reply)
        case .wait: break
        case .refuse(let message): reply(Boundary.failure(header, RemoteError(code: .unavailable, message: "UNAVAILABLE", debug: message)))
        }
    }

    func abandon(invocation: UInt64, function: String, timeout: Duration) {
        let (worker, successor) = state.withLock { s in
            (s.workers.compactMap { $0 }.first { $0.isRunning(invocation: invocation) }, s.successor)
        }
        guard let worker else {
            // Sent on to the version that replaced this one: it runs there.
            successor?.abandon(invocation: invocation, function: function, timeout: timeout)
            return
        }
        let cancel = Boundary.frame(Boundary.Header(kind: .request, operation: .cancel, invocation: invocation), Boundary.Cancel())
        _ = worker.send(cancel, function: function, reply: { [self] _ in closeIdleIfRetired() })
        let grace = killGrace
        DispatchQueue.global().asyncAfter(deadline: .now() + grace) { [weak worker] in
            guard let worker, worker.isRunning(invocation: invocation) else { return }
            worker.kill(reason: "invocation \(Invoker.format(invocation)) (\(function)) ran past its timeout of \(timeout.secondsDouble) s and did not stop within \(grace) s of being cancelled")
        }
    }

    /// Requests that looked the old version up just before the swap still reach it within this.
    static let retireGrace = Duration.seconds(1)

    func retire(successor: (any UnitTransport)?) {
        isRetired.store(true, ordering: .relaxed)
        let waiting = state.withLock { s -> [Waiting] in
            s.retired = true
            s.successor = successor
            s.closeAfter = ContinuousClock.now + WorkerPool.retireGrace
            defer { s.waiting = [] }
            return s.waiting
        }
        // Requests waiting for a restart that will not come go to the new version.
        for w in waiting { send(w.frame, function: w.function, reply: w.reply) }
        DispatchQueue.global().asyncAfter(deadline: .now() + WorkerPool.retireGrace.secondsDouble) { [self] in closeIdleIfRetired(timer: true) }
    }

    /// Kills every worker now (the host is stopping, or a version was refused).
    func stop() {
        isRetired.store(true, ordering: .relaxed)
        let (workers, waiting) = state.withLock { s -> ([WorkerProcess], [Waiting]) in
            s.retired = true
            s.successor = nil
            s.closeAfter = ContinuousClock.now
            let all = s.workers.compactMap { $0 }
            for w in all { s.closing.insert(ObjectIdentifier(w)) }
            defer { s.waiting = [] }
            return (all, s.waiting)
        }
        for w in waiting {
            let header = (try? w.frame.withUnsafeBytes { try Boundary.header($0) }) ?? Boundary.Header(kind: .request, operation: .invoke, invocation: 0)
            w.reply(Boundary.failure(header, RemoteError(code: .unavailable, message: "UNAVAILABLE", debug: "unit \(launch.unit) stopped")))
        }
        for worker in workers { worker.close() }
        // A worker that does not exit at the end of its input (stuck loading, or in a handler
        // that never returns) is killed.
        DispatchQueue.global().asyncAfter(deadline: .now() + 2) {
            for worker in workers where !worker.isDead { worker.kill(reason: "it did not exit within 2 s of being stopped") }
        }
    }

    /// `timer`: called by the retirement's timer, which looks again if it woke a hair early.
    private func closeIdleIfRetired(timer: Bool = false) {
        guard isRetired.load(ordering: .relaxed) else { return }
        var early: Duration?
        let idle = state.withLock { s -> [WorkerProcess] in
            guard s.retired, let after = s.closeAfter else { return [] }
            let now = ContinuousClock.now
            guard now >= after else {
                early = after - now
                return []
            }
            let idle = s.workers.compactMap { $0 }.filter { $0.outstanding == 0 && !s.closing.contains(ObjectIdentifier($0)) }
            for w in idle { s.closing.insert(ObjectIdentifier(w)) }
            return idle
        }
        for worker in idle { worker.close() }
        // Woken before the grace ended (timers and clocks differ by a hair): look again then.
        if timer, let early {
            DispatchQueue.global().asyncAfter(deadline: .now() + early.secondsDouble + 0.01) { [weak self] in self?.closeIdleIfRetired(timer: true) }
        }
    }

    private func exited(_ worker: WorkerProcess, slot: Int, cause: String) {
        let now = ContinuousClock.now
        let (retired, deaths) = state.withLock { s -> (Bool, Int) in
            if s.workers[slot] === worker { s.workers[slot] = nil }
            s.closing.remove(ObjectIdentifier(worker))
            guard !s.retired else { return (true, 0) }
            s.deaths = s.deaths.filter { now - $0 < .seconds(60) } + [now]
            s.lastCause = cause
            return (false, s.deaths.count)
        }
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
            // A worker that cannot start counts as one that died (the unit turns unhealthy).
            let now = ContinuousClock.now
            let count = state.withLock { s -> Int in
                s.deaths = s.deaths.filter { now - $0 < .seconds(60) } + [now]
                s.lastCause = "cannot start: \(error)"
                return s.deaths.count
            }
            log.error("worker restart failed", ["unit": .string(launch.unit), "error": .string("\(error)")])
            scheduleRestart(slot: slot, deaths: count)
            return
        }
        let waiting = state.withLock { s -> [Waiting]? in
            // Retired meanwhile: this worker is not needed.
            guard !s.retired else { return nil }
            s.workers[slot] = worker
            s.restarts += 1
            defer { s.waiting = [] }
            return s.waiting
        }
        guard let waiting else {
            worker.close()
            return
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
