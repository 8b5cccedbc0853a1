import Foundation
import HearthModel
import Synchronization

/// Handler replay (as Temporal's replayer checks workflows): each recorded invocation runs again
/// against the current unit code, in this process, with the recorded service replies fed back;
/// every call the new code makes is compared with the recorded ones, and so is the outcome.
///
/// Calls are matched by operation and redacted request: the first unused recorded call of the same
/// operation with the same request answers; failing that, the first unused one of the operation
/// answers and the argument is reported as different; a call with none left is refused and
/// reported. Clock readings are answered in recorded order. Logs are not compared.
public final class HandlerReplayer: Sendable {
    /// How long one replayed invocation may take in real time.
    static let wallLimit: Duration = .seconds(30)

    private let sessions = SessionTable()
    private let nextID = Atomic<UInt64>(1)
    let redactor: Redactor
    let services: HostServices

    /// `secrets`: values of declared secrets, when the replaying machine has them (the recording
    /// holds only placeholders): the code reads them as it did, and its requests are redacted as
    /// the recording's were. A secret not given reads as its placeholder.
    public init(secrets: [String: String] = [:]) {
        var builder = HostServices.Builder(tasks: ServiceTasks())
        let sessions = self.sessions
        let redactor = Redactor(secrets: secrets)
        for op in Boundary.Operation.allCases where !op.isSentByHost {
            builder.raw(op) { _, header, bytes, reply in
                let op = header.operation
                let body = [UInt8](bytes[Boundary.headerSize...])
                guard let session = sessions.table.withLock({ $0[header.invocation] }) else {
                    reply.send(Boundary.failure(header, RemoteError(code: .cancelled, message: "replay: invocation \(Invoker.format(header.invocation)) is not running")))
                    return
                }
                if op == .secretGet, let name = try? Boundary.SecretGet(wireBytes: body).name, let value = secrets[name] {
                    _ = session.answer(header, body)  // used up, compared
                    reply.send(Boundary.frame(header.answer(.reply), value))
                    return
                }
                reply.send(session.answer(header, body))
            }
        }
        services = HostServices(builder)
        self.redactor = redactor
    }

    /// Loads units to replay against: each configured unit's library, in this process or, where
    /// the configuration says so, in worker processes (a unit that traps then fails its
    /// invocation, reported as a divergence, instead of ending the replay).
    public func load(_ config: RuntimeConfig, only names: Set<String>? = nil) async throws -> [String: LoadedUnit] {
        let loader = UnitLoader(services: services, validateSchedule: Runtime.scheduleProblem)
        var out: [String: LoadedUnit] = [:]
        for unit in config.units where names?.contains(unit.name) ?? true {
            out[unit.name] = try await loader.load(unit: unit.name, path: config.libraryPath(of: unit), placement: config.placement(of: unit))
        }
        return out
    }

    /// Stops the worker processes of `units` (process isolation).
    public func stop(_ units: [String: LoadedUnit]) {
        for unit in units.values { unit.transport.stop() }
    }

    /// Replays `recording`'s invocations of the loaded `units` (those of other units are skipped).
    public func replay(_ recording: Recording, units: [String: LoadedUnit], functions: Set<String>? = nil,
                       progress: (@Sendable (Int, Int) -> Void)? = nil) async -> ReplayReport {
        var report = ReplayReport(mode: .handler)
        let started = ContinuousClock.now
        let chosen = recording.invocations.filter { units[$0.unit] != nil && (functions?.contains($0.function) ?? true) }
        report.invocations = chosen.count
        for (k, recorded) in chosen.enumerated() {
            if let progress, k % 1000 == 0, k > 0 { progress(k, chosen.count) }
            report.divergences += await replay(recorded, unit: units[recorded.unit]!)
            report.replayed += 1
        }
        report.seconds = (ContinuousClock.now - started).secondsDouble
        return report
    }

    /// Replays one invocation; returns how it diverged.
    public func replay(_ recorded: RecordedInvocation, unit: LoadedUnit) async -> [Divergence] {
        let subject = Invoker.format(recorded.id)
        guard unit.manifest.functions.contains(where: { $0.name == recorded.function }) else {
            return [Divergence(kind: .notReplayable, subject: subject, function: recorded.function, message: "unit \(unit.name) no longer has this function")]
        }
        let id = nextID.wrappingAdd(1, ordering: .relaxed).oldValue
        let session = ReplaySession(recorded, redactor: redactor)
        sessions.table.withLock { $0[id] = session }
        // Every call is answered at once from the recording, so an invocation that does not end
        // within `wallLimit` of real time loops or waits on something of its own.
        let limit = HandlerReplayer.wallLimit
        let answer = await withCheckedContinuation { (continuation: CheckedContinuation<Result<Boundary.InvocationResult, RemoteError>?, Never>) in
            let race = Race(continuation)
            DispatchQueue.global().asyncAfter(deadline: .now() + limit.secondsDouble) { race.finish(nil) }
            unit.request(recorded.invoke, invocation: id, function: recorded.function) { race.finish($0) }
        }
        sessions.table.withLock { _ = $0.removeValue(forKey: id) }
        guard let answer else {
            unit.transport.abandon(invocation: id, function: recorded.function, timeout: limit)
            return [Divergence(kind: .notReplayable, subject: subject, function: recorded.function,
                               message: "the invocation did not end within \(Int(limit.secondsDouble)) s of real time")]
        }
        return session.finish(outcome: answer)
    }
}

/// One invocation being replayed: the recorded calls not yet used, and what diverged.
final class ReplaySession: Sendable {
    struct State {
        var used: [Bool]
        var divergences: [Divergence] = []
    }

    let recorded: RecordedInvocation
    private let state: Mutex<State>
    let redactor: Redactor

    init(_ recorded: RecordedInvocation, redactor: Redactor) {
        self.recorded = recorded
        self.redactor = redactor
        state = Mutex(State(used: [Bool](repeating: false, count: recorded.calls.count)))
    }

    var subject: String { Invoker.format(recorded.id) }

    /// The reply frame for a call the new code makes.
    func answer(_ header: Boundary.Header, _ body: [UInt8]) -> [UInt8] {
        let op = header.operation
        if op == .log { return Boundary.frame(header.answer(.reply), Boundary.Empty()) }
        let request = redactor.request(op, body)
        let calls = recorded.calls
        let picked: Int? = state.withLock { s -> Int? in
            let unused = calls.indices.filter { !s.used[$0] && calls[$0].operation == op }
            // Clock readings in order; other calls by their request first.
            let index = op == .clockNow ? unused.first : (unused.first { MessageText.same(op, calls[$0].request, request) } ?? unused.first)
            guard let index else {
                s.divergences.append(Divergence(kind: .unexpectedCall, subject: subject, function: recorded.function,
                                                message: "the new code calls \(op.name), which the recorded invocation did not (or not this often)",
                                                diff: MessageText.diff("", MessageText.request(op, request))))
                return nil
            }
            s.used[index] = true
            if op != .clockNow, !MessageText.same(op, calls[index].request, request) {
                s.divergences.append(Divergence(kind: .differentArgument, subject: subject, function: recorded.function,
                                                message: "\(op.name) is called with a different argument",
                                                diff: MessageText.diff(MessageText.request(op, calls[index].request), MessageText.request(op, request))))
            }
            return index
        }
        guard let picked else {
            return Boundary.failure(header, RemoteError(code: .internal, message: "replay: the recording has no \(op.name) call left to answer this one"))
        }
        switch calls[picked].reply {
        case .success(let bytes)?:
            return Boundary.frame(header.answer(.reply), RawMessage(bytes: bytes))
        case .failure(let e)?:
            return Boundary.failure(header, e)
        case nil:
            return Boundary.failure(header, RemoteError(code: .cancelled, message: "replay: the recorded call was never answered (the invocation ended first)"))
        }
    }

    /// The divergences, once the invocation answered with `outcome`.
    func finish(outcome: Result<Boundary.InvocationResult, RemoteError>) -> [Divergence] {
        var out = state.withLock { s -> [Divergence] in
            let missing = recorded.calls.indices.filter { !s.used[$0] && recorded.calls[$0].operation != .clockNow }
            for index in missing {
                let call = recorded.calls[index]
                s.divergences.append(Divergence(kind: .missingCall, subject: subject, function: recorded.function,
                                                message: "the recorded invocation called \(call.operation.name); the new code does not",
                                                diff: MessageText.diff(MessageText.request(call.operation, call.request), "")))
            }
            return s.divergences
        }
        let new = outcome.map(redactor.result).mapError(redactor.error)
        if !ReplaySession.sameOutcome(recorded.outcome, new) {
            out.append(Divergence(kind: .differentOutcome, subject: subject, function: recorded.function, message: "the outcome differs",
                                  diff: MessageText.diff(MessageText.outcome(recorded.outcome), MessageText.outcome(new))))
        }
        return out
    }

    static func sameOutcome(_ a: Result<Boundary.InvocationResult, RemoteError>, _ b: Result<Boundary.InvocationResult, RemoteError>) -> Bool {
        switch (a, b) {
        case (.success, .success), (.failure, .failure):
            return Redactor.normalized(MessageText.outcome(a)) == Redactor.normalized(MessageText.outcome(b))
        default: return false
        }
    }
}

final class SessionTable: Sendable {
    let table = Mutex<[UInt64: ReplaySession]>([:])
}

/// A message whose encoding is already at hand (a recorded reply).
struct RawMessage: WireEncodable {
    let bytes: [UInt8]
    func encode(to w: inout WireWriter) { w.raw(bytes) }
}
