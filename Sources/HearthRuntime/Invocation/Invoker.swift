import HearthModel
import Synchronization

/// The outcome of one invocation.
public struct InvocationOutcome: Sendable {
    public let id: UInt64
    public let result: Result<Boundary.InvocationResult, RemoteError>
    public let duration: Duration

    /// A callable's value (nil when it failed).
    public var value: Value? { if case .success(let v) = result { return v.value } else { return nil } }
    public var error: RemoteError? { if case .failure(let e) = result { return e } else { return nil } }
}

/// Receives stream chunks a callable sends while it runs; returns false once the client is gone.
public typealias StreamSink = @Sendable (Value) async -> Bool

/// Runs functions in their units: assigns invocation ids, enforces timeouts (cancelling the
/// handler's task), keeps the in-flight table that host services consult, and writes one log line
/// per invocation.
public final class Invoker: Sendable {
    /// A running invocation: what host services consult, and what ending it takes (see `end`).
    /// The reply's and the deadline's closures hold only the invoker and the id (`Ending`), so a
    /// reply that never comes after a deadline keeps none of this (`record(for:)` hands out copies
    /// for as long as a service call looks at one).
    struct InFlight: Sendable {
        let entry: FunctionEntry
        let stream: StreamSink?
        /// The delivery this invocation attempts, for engine-run invocations.
        let delivery: Int64?
        /// When it times out.
        let deadline: Timestamp?
        /// Set while the handler sleeps on the host clock (`clock.sleep`), until when: such an
        /// invocation waits for time, not for work (what `DeliveryEngine.settle` asks).
        var sleepingUntil: Timestamp?
        let timeout: Duration?
        let started: ContinuousClock.Instant
        let recorder: Recorder?
        let logFields: [String: Value]
        /// Called once with the outcome, after the invocation is logged and recorded.
        let completion: @Sendable (InvocationOutcome) -> Void

        var function: String { entry.name }
        var unit: String { entry.unit.name }
    }

    let clock: any Clock
    /// Seeds each invocation's own generator (its auto ids).
    let random: any RandomSource
    let log: RuntimeLog
    let deadlines: Deadlines
    /// Host work started by invocations' service calls, cancelled with them.
    public let serviceTasks = ServiceTasks()
    private let nextID: Atomic<UInt64>
    private let inFlight = Mutex<[UInt64: InFlight]>([:])

    /// Called with each invocation's id once it has finished (to release what it left open).
    let onFinish: @Sendable (UInt64) -> Void
    public let metrics = Metrics()
    /// Notified when an invocation ends or starts waiting for time (what a settling engine waits on).
    let progress = WorkSignal()

    /// Where invocations are recorded, while recording.
    let recording: RecordingSwitch
    /// Chooses an invocation's seed before it starts (a system replay gives each the recorded one,
    /// moving its clock to the recorded time); nil: the runtime's random source.
    let planner = ClosureSlot<@Sendable (_ function: String, _ event: Boundary.Event, _ delivery: Int64?) -> RandomSeed?>()

    public init(clock: any Clock, random: any RandomSource = SystemRandom(), log: RuntimeLog, recording: RecordingSwitch = RecordingSwitch(),
                onFinish: @escaping @Sendable (UInt64) -> Void = { _ in }) {
        self.clock = clock
        self.random = random
        self.log = log
        self.recording = recording
        deadlines = Deadlines(clock: clock)
        self.onFinish = onFinish
        // Ids are unique within the process; a random start keeps them distinct across restarts in logs.
        nextID = Atomic(1 + random.next() % (1 << 40))
    }

    public var inFlightCount: Int { inFlight.withLock { $0.count } }

    /// Whether some running invocation sleeps on the host clock.
    var anySleeping: Bool { inFlight.withLock { $0.values.contains { $0.sleepingUntil != nil } } }

    func record(for invocation: UInt64) -> InFlight? { inFlight.withLock { $0[invocation] } }

    /// Whether `invocation` is running in `unit`: asked before every service call. Only the unit's
    /// name is compared, where `record(for:)` would copy the whole entry out (retaining and then
    /// releasing each of its references) and then compare.
    func isRunning(_ invocation: UInt64, in unit: String) -> Bool {
        inFlight.withLock { table in
            guard let index = table.index(forKey: invocation) else { return false }
            return table.values[index].entry.unit.name == unit
        }
    }

    /// The running invocations that attempt deliveries.
    var deliveryInvocations: [UInt64: InFlight] {
        inFlight.withLock { $0.filter { $0.value.delivery != nil } }
    }

    /// Sleeps on the host clock on behalf of an invocation's `clock.sleep`, noting that it waits
    /// for time meanwhile.
    func sleep(_ invocation: UInt64, until deadline: Timestamp) async throws {
        inFlight.withLock { $0[invocation]?.sleepingUntil = deadline }
        progress.notify()
        defer { inFlight.withLock { $0[invocation]?.sleepingUntil = nil } }
        try await clock.sleep(until: deadline)
    }

    /// Runs `entry` with `event`. Past `timeout` the caller gets `deadline-exceeded` and the unit is
    /// asked to cancel the handler's task.
    public func invoke(_ entry: FunctionEntry, event: Boundary.Event, timeout: Duration? = nil,
                       stream: StreamSink? = nil, delivery: Int64? = nil, logFields: [String: Value] = [:]) async -> InvocationOutcome {
        await withCheckedContinuation { continuation in
            invoke(entry, event: event, timeout: timeout, stream: stream, delivery: delivery, logFields: logFields) {
                continuation.resume(returning: $0)
            }
        }
    }

    /// Runs `entry` with `event` and passes the outcome to `completion`, on whichever thread has it:
    /// the one that reads the unit's reply, or the deadline's timer. No task waits in between, so
    /// an HTTP response can be finished from there (one thread hand-off less per call).
    /// `completion` runs exactly once, after the invocation is logged and recorded.
    /// `encodedEvent` is `event` in the boundary's encoding when the caller has it (a delivery's
    /// stored payload): a worker's frame then carries those bytes instead of encoding it again.
    public func invoke(_ entry: FunctionEntry, event: Boundary.Event, encodedEvent: [UInt8]? = nil, timeout: Duration? = nil,
                       stream: StreamSink? = nil, delivery: Int64? = nil, logFields: [String: Value] = [:],
                       completion: @escaping @Sendable (InvocationOutcome) -> Void) {
        let id = nextID.wrappingAdd(1, ordering: .relaxed).oldValue
        let planned = planner.value?(entry.name, event, delivery)
        let now = clock.now()
        let deadline = timeout.map { now + $0 }
        let started = ContinuousClock.now
        let message = Boundary.Invoke(function: entry.name, event: event, now: now, seed: planned ?? random.seed(), encodedEvent: encodedEvent)
        let recorder = recording.recorder
        inFlight.withLock {
            $0[id] = InFlight(entry: entry, stream: stream, delivery: delivery, deadline: deadline, timeout: timeout, started: started,
                              recorder: recorder, logFields: logFields, completion: completion)
        }
        metrics.invocationsInFlight.wrappingAdd(1, ordering: .relaxed)
        recorder?.begin(id, function: entry.name, unit: entry.unit.name, version: entry.unit.version, external: event.isExternalInput, delivery: delivery,
                        attempt: logFields["attempt"]?.intValue.map { Int(clamping: $0) }, invoke: message)
        // Whichever comes first: the unit's reply or the deadline (one shared timer for all).
        let ending = Ending(invoker: self, id: id)
        if let deadline { ending.deadlineToken.store(deadlines.schedule(at: deadline) { ending.expire() }, ordering: .releasing) }
        entry.unit.request(message, invocation: id, function: entry.name) { ending.answer($0) }
    }

    /// The unit's reply and the deadline's timer, as one object both closures capture alone: a
    /// closure whose only capture is one object uses it as its context, where closures capturing
    /// the id beside the invoker allocated a context each.
    final class Ending: Sendable {
        let invoker: Invoker
        let id: UInt64
        /// The deadline's `Deadlines` token, 0 for none; stored before the invocation is sent.
        let deadlineToken = Atomic<UInt64>(0)

        init(invoker: Invoker, id: UInt64) {
            self.invoker = invoker
            self.id = id
        }

        /// The unit answered.
        func answer(_ reply: Result<Boundary.InvocationResult, RemoteError>) {
            let token = deadlineToken.load(ordering: .acquiring)
            if token != 0 { invoker.deadlines.cancel(token) }
            invoker.end(id, reply)
        }

        /// The deadline passed.
        func expire() { invoker.end(id, nil) }
    }

    /// Ends invocation `id` with `reply` (nil: its deadline passed) unless something ended it
    /// already. The reply and the deadline race for the in-flight entry, with no race object per
    /// call: whichever takes the entry out ends the invocation, and the other finds it gone.
    private func end(_ id: UInt64, _ reply: Result<Boundary.InvocationResult, RemoteError>?) {
        guard let call = inFlight.withLock({ $0.removeValue(forKey: id) }) else { return }
        metrics.invocationsInFlight.wrappingSubtract(1, ordering: .relaxed)
        progress.notify()
        let result: Result<Boundary.InvocationResult, RemoteError>
        if let reply {
            serviceTasks.forget(invocation: id)
            result = reply
        } else {
            // Stop the handler (its task is cancelled in the unit; a worker that does not stop it
            // is killed) and the host work it is waiting on.
            serviceTasks.cancel(invocation: id)
            call.entry.unit.transport.abandon(invocation: id, function: call.entry.name, timeout: call.timeout ?? .zero)
            let seconds = call.timeout.map { $0.secondsDouble } ?? 0
            result = .failure(RemoteError(code: .deadlineExceeded, message: "DEADLINE_EXCEEDED",
                                          debug: "the function ran longer than its timeout of \(seconds) s"))
        }
        onFinish(id)
        let duration = ContinuousClock.now - call.started
        call.recorder?.finish(id, outcome: result, duration: duration)
        logInvocation(call.entry, id: id, result: result, duration: duration, fields: call.logFields)
        call.completion(InvocationOutcome(id: id, result: result, duration: duration))
    }

    func logInvocation(_ entry: FunctionEntry, id: UInt64, result: Result<Boundary.InvocationResult, RemoteError>, duration: Duration, fields: [String: Value]) {
        let level: LogLevel
        switch result {
        case .success:
            metrics.invocation(function: entry.name, error: nil, seconds: duration.secondsDouble)
            level = .info
        case .failure(let e):
            metrics.invocation(function: entry.name, error: e.code, seconds: duration.secondsDouble)
            level = e.code == .internal || e.code == .unknown || e.code == .deadlineExceeded ? .error : .warning
        }
        // The line's fields are built only when it is written (an info line per call is skipped
        // at the default warning level, and building it cost ~5% of a callable's CPU).
        guard level >= log.level else { return }
        var f = fields
        f["function"] = .string(entry.name)
        f["unit"] = .string(entry.unit.name)
        f["trigger"] = .string(entry.trigger.kindName)
        f["invocation"] = .string(Invoker.format(id))
        f["durationMs"] = .double((duration.secondsDouble * 1e6).rounded() / 1e3)
        switch result {
        case .success:
            f["outcome"] = "ok"
        case .failure(let e):
            f["outcome"] = "error"
            f["code"] = .string(e.code.rawValue)
            f["error"] = .string(e.message)
            if let debug = e.debug { f["cause"] = .string(debug) }
        }
        log.log(level, "invocation", f)
    }

    /// Invocation ids as logs print them.
    public static func format(_ id: UInt64) -> String {
        let hex = String(id, radix: 16)
        return String(repeating: "0", count: max(0, 12 - hex.count)) + hex
    }
}


extension Boundary.Event {
    /// Whether the event comes from outside the system (a request, a schedule's instant) rather
    /// than from other work: what a system replay drives.
    var isExternalInput: Bool {
        switch self {
        case .callable, .request, .schedule: return true
        case .document, .task, .user: return false
        }
    }
}
