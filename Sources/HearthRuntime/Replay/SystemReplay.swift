import Foundation
import HearthAuth
import HearthModel
import Synchronization

/// System replay: a fresh store (empty, or seeded from an export) is driven by the recording's
/// external inputs (callable and HTTP requests, schedule instants, CLI and admin writes, users
/// created or deleted from outside, tasks enqueued from outside) at their recorded times under a
/// ManualClock. Triggers, tasks and schedules run for real through the delivery engine, with
/// each invocation given its recorded random seed (so auto ids repeat); outbound HTTP and pushes
/// are answered from the recording, and declared secrets read as their recorded placeholders.
///
/// Afterwards the documents the recording changed (and any the replay changed) are compared with
/// their recorded final state, and so are outbound calls and dead letters. Deliveries run one at
/// a time, so the same file replayed twice gives the same store hash.
public enum SystemReplayer {
    public struct Options: Sendable {
        /// Timestamps in documents may differ by this much (the replay runs a trigger at its
        /// cause's instant; the original ran it a little later).
        public var timeTolerance: Duration = .seconds(5)
        /// An export (`hearth export`) to seed the store from; nil: an empty store.
        public var snapshot: String?
        /// Where the replay's store lives; a temporary directory (removed after) when nil.
        public var directory: String?
        /// Runs on the replay's configuration before its runtime opens (tests put a signing key
        /// in place, so no key is generated on a cooperative thread).
        public var prepare: (@Sendable (RuntimeConfig) throws -> Void)?
        public init() {}
    }

    /// Replays `recording` against the units of `config` (their libraries, loaded in this process).
    public static func run(_ recording: Recording, config base: RuntimeConfig, options: Options = Options(),
                           seedStore: (@Sendable (Runtime) async throws -> Void)? = nil,
                           progress: (@Sendable (Int, Int) -> Void)? = nil) async throws -> ReplayReport {
        var report = ReplayReport(mode: .system)
        let started = ContinuousClock.now
        let directory = options.directory ?? (NSTemporaryDirectory() + "hearth-replay-" + SystemRandom().autoID())
        defer { if options.directory == nil { try? FileManager.default.removeItem(atPath: directory) } }

        var config = base
        config.dataDirectory = directory
        config.store.path = "store.sqlite"
        config.record.directory = nil
        config.defaultIsolation = .inProcess
        config.workers.isolation = .inProcess
        for k in config.units.indices { config.units[k].isolation = nil }
        config.delivery.defaultConcurrency = 1
        config.messaging.mode = .log
        // Parameters as recorded (provider base URLs…): the run being reproduced had them.
        for header in recording.headers where header.process == "serve" || header.process == "test" {
            for (name, value) in header.config["params"]?.mapValue ?? [:] { if let v = value.stringValue { config.params[name] = v } }
        }

        let startTime = [recording.invocations.first?.at, recording.inputs.first?.at, recording.changes.first?.time, recording.headers.map(\.startedAt).min()]
            .compactMap { $0 }.min() ?? Timestamp(seconds: 1_767_225_600)
        let endTime = ([recording.invocations.last?.at, recording.inputs.last?.at, recording.changes.last?.time].compactMap { $0 }.max() ?? startTime)
        let clock = ManualClock(startTime)
        let secrets = try Secrets.load(path: config.secretsFile.map(config.resolve))
        let declared = secrets.declaredValues(Array(Set(recording.invocations.flatMap { $0.calls.compactMap(\.secretName) })))
        let redactor = Redactor(secrets: declared)
        let outbound = OutboundAnswers(recording, redactor: redactor)
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try options.prepare?(config)
        let runtimeBox = RuntimeBox()
        let runtime = try await Runtime.open(config: config, clock: clock, random: SeededRandom(seed: 0x5245_504C_4159), services: { builder in
            builder.answer(Boundary.SecretGet.self) { _, request in declared[request.name] ?? "<secret:\(request.name)>" }
            // Signed with a recorded placeholder key, which cannot sign: the recording's redacted JWT stands in.
            builder.serve(Boundary.SignJWT.self) { _, _ in "<redacted:jwt>" }
            builder.serve(Boundary.HTTPFetch.self) { _, request in try outbound.answer(.httpFetch, request, Boundary.HTTPFetchReply.self) }
            builder.serve(Boundary.SendMessage.self) { _, request in try outbound.answer(.sendMessage, request, String.self) }
            // A user a unit created gets the uid it got then (auth's uids are random), so what
            // later inputs say of that uid still applies.
            builder.serve(Boundary.CreateUser.self) { _, request in
                var user = request.user
                if user.uid == nil, let recorded = try? outbound.answer(.createUser, request, UserRecord.self) { user.uid = recorded.uid }
                guard let auth = runtimeBox.runtime?.users else { throw HTTPSError(.unavailable, "replay: the runtime is not ready") }
                return try await auth.create(user)
            }
            // Tokens are not in the recording: their verifications are answered from it, in order.
            builder.serve(Boundary.VerifyIDToken.self) { _, request in try outbound.answer(.verifyIDToken, request, CallerAuth.self) }
        })
        runtimeBox.runtime = runtime
        defer { runtime.close() }
        if let snapshot = options.snapshot { _ = try await runtime.importData(from: snapshot) }
        if let seedStore { try await seedStore(runtime) }
        let feedStart = try runtime.store.engine.feedEnd()
        await runtime.loadUnits()
        if let refused = runtime.loadErrors.first { throw refused }
        try await runtime.startDeliveries(driving: false)
        await runtime.engine.setFiresSchedules(false)
        await runtime.engine.setSerial(true)
        let planner = SeedPlanner(recording)
        runtime.invoker.planner.set { function, event, delivery in planner.seed(function, event, delivery) }

        // The timeline of external inputs.
        enum Step { case invoke(RecordedInvocation), schedule(RecordedInvocation), input(RecordedInput) }
        var steps: [(at: Timestamp, n: Int64, step: Step)] = []
        var schedules = Set<String>()
        for i in recording.invocations where i.external {
            if case .schedule(let e) = i.invoke.event {
                guard schedules.insert(i.function + "|" + e.scheduleTime.rfc3339).inserted else { continue }
                steps.append((i.at, i.n, .schedule(i)))
            } else {
                steps.append((i.at, i.n, .invoke(i)))
            }
        }
        for input in recording.inputs { steps.append((input.at, input.n, .input(input))) }
        steps.sort { ($0.at, $0.n) < ($1.at, $1.n) }
        report.invocations = recording.invocations.count

        for (k, item) in steps.enumerated() {
            if let progress, k % 1000 == 0, k > 0 { progress(k, steps.count) }
            await advance(runtime, clock, to: item.at)
            switch item.step {
            case .invoke(let recorded):
                guard let entry = runtime.table[recorded.function] else {
                    report.divergences.append(Divergence(kind: .notReplayable, subject: Invoker.format(recorded.id), function: recorded.function,
                                                         message: "no function of this name is loaded"))
                    continue
                }
                planner.nextExternal(recorded)
                guard let outcome = await invokeExternal(runtime, clock, entry, recorded) else {
                    report.divergences.append(Divergence(kind: .notReplayable, subject: Invoker.format(recorded.id), function: recorded.function,
                                                         message: "the invocation did not end within \(Int(SystemReplayer.wallLimit.secondsDouble)) s of real time"))
                    continue
                }
                let new = outcome.result.map(redactor.result).mapError(redactor.error)
                if !MessageText.same(MessageText.outcome(recorded.outcome), MessageText.outcome(new), tolerance: options.timeTolerance) {
                    report.divergences.append(Divergence(kind: .differentOutcome, subject: Invoker.format(recorded.id), function: recorded.function,
                                                         message: "the outcome differs", diff: MessageText.diff(MessageText.outcome(recorded.outcome), MessageText.outcome(new))))
                }
            case .schedule(let recorded):
                if case .schedule(let e) = recorded.invoke.event { try await runtime.engine.fireRecorded(recorded.function, instant: e.scheduleTime) }
            case .input(let input):
                do { try await apply(input, to: runtime) } catch {
                    report.divergences.append(Divergence(kind: .notReplayable, subject: "input \(input.n)", function: "",
                                                         message: "the recorded \(input.kindName) failed in the replay: \(error)"))
                }
            }
            await runtime.engine.settle()
        }
        await advance(runtime, clock, to: endTime)
        report.replayed = planner.invocations

        // Compare.
        let compared = try await compare(recording, runtime, feedStart: feedStart, tolerance: options.timeTolerance, outbound: outbound)
        report.divergences += compared.divergences
        report.documents = compared.documents
        report.storeHash = compared.hash
        report.seconds = (ContinuousClock.now - started).secondsDouble
        return report
    }

    /// How long one replayed invocation may take in real time.
    static let wallLimit: Duration = .seconds(60)

    /// Runs a recorded external invocation; while it waits for time (`clock.sleep`, its timeout),
    /// the manual clock moves to the next deadline. A streamed callable's client stays connected.
    /// Nil when it does not end within `wallLimit` of real time.
    static func invokeExternal(_ runtime: Runtime, _ clock: ManualClock, _ entry: FunctionEntry, _ recorded: RecordedInvocation) async -> InvocationOutcome? {
        var stream: StreamSink?
        if case .callable(let e) = recorded.invoke.event, e.acceptsStreaming { stream = { _ in true } }
        let done = OutcomeSlot()
        let task = Task { [stream] in
            let outcome = await runtime.invoker.invoke(entry, event: recorded.invoke.event, timeout: entry.spec.options.effectiveTimeout, stream: stream)
            done.set(outcome)
            runtime.invoker.progress.notify()
        }
        let giveUp = ContinuousClock.now + wallLimit
        while done.value == nil, ContinuousClock.now < giveUp {
            await runtime.invoker.progress.wait(atMost: .milliseconds(20))
            guard done.value == nil else { break }
            // Waiting for time: the next sleeper (the handler's sleep, its timeout) comes due.
            if runtime.invoker.anySleeping, let next = clock.nextDeadline {
                clock.advance(to: max(next, clock.now()))
                await runtime.engine.settle()
            }
        }
        if done.value == nil { task.cancel() }
        return done.value
    }

    /// Moves the clock to `target`, running what comes due on the way (as `TestRuntime.advance`).
    static func advance(_ runtime: Runtime, _ clock: ManualClock, to target: Timestamp) async {
        await runtime.engine.settle()
        while true {
            let next = [await runtime.engine.nextDeadline(), clock.nextDeadline].compactMap { $0 }.filter { $0 <= target }.min()
            guard let next else { break }
            clock.advance(to: max(next, clock.now()))
            await runtime.engine.settle()
        }
        if target > clock.now() { clock.advance(to: target) }
        await runtime.engine.settle()
    }

    static func apply(_ input: RecordedInput, to runtime: Runtime) async throws {
        switch input.kind {
        case .write(let commit):
            _ = try await runtime.store.commit(commit.writes)
            if !commit.enqueues.isEmpty { _ = try await runtime.enqueue(commit.enqueues) }
        case .userCreated(let user):
            try await runtime.store.engine.users.create(user, time: runtime.clock.now())
        case .userDeleted(let uid):
            _ = try await runtime.store.engine.users.delete(uid: uid, time: runtime.clock.now())
        case .tasks(let tasks):
            _ = try await runtime.enqueue(tasks)
        case .recursiveDelete(let path):
            _ = try await runtime.store.recursiveDelete(path, batchSize: 500)
        }
    }

    struct Compared {
        var divergences: [Divergence] = []
        var documents = 0
        var hash = ""
    }

    static func compare(_ recording: Recording, _ runtime: Runtime, feedStart: Int64, tolerance: Duration, outbound: OutboundAnswers) async throws -> Compared {
        var out = Compared()
        let redactor = outbound.redactor
        var expected: [DocumentPath: StoredDocument?] = [:]
        for change in recording.changes { expected[change.path] = .some(change.after) }
        var replayed = Set<DocumentPath>()
        var after = feedStart
        while true {
            let changes = try await runtime.store.engine.changes(after: after, limit: 1000)
            guard let last = changes.last else { break }
            for c in changes { replayed.insert(c.path) }
            after = last.sequence
        }
        let paths = Set(expected.keys).union(replayed).sorted { $0.description < $1.description }
        let actual = try await runtime.store.getAll(paths)
        for (path, doc) in zip(paths, actual) {
            out.documents += 1
            let mine = doc.map(redactor.document)
            let theirs: StoredDocument?? = expected[path]
            guard let recorded = theirs else {
                out.divergences.append(Divergence(kind: .differentDocument, subject: path.description, function: "",
                                                  message: "the replay wrote this document; the recording did not",
                                                  diff: MessageText.diff("", text(mine))))
                continue
            }
            if !same(recorded?.fields, mine?.fields, tolerance: tolerance) {
                out.divergences.append(Divergence(kind: .differentDocument, subject: path.description, function: "",
                                                  message: recorded == nil ? "deleted in the recording" : (mine == nil ? "missing after the replay" : "its fields differ"),
                                                  diff: MessageText.diff(text(recorded), text(mine))))
            }
        }
        // Outbound calls and dead letters, as multisets.
        let recordedCalls = recording.invocations.flatMap { $0.calls.filter { $0.operation == .httpFetch || $0.operation == .sendMessage } }
            .map { Redactor.normalized(MessageText.request($0.operation, $0.request)) }
        let made = outbound.made.filter { $0.0 == .httpFetch || $0.0 == .sendMessage }.map { Redactor.normalized(MessageText.request($0.0, $0.1)) }
        for (text, delta) in multisetDifference(recordedCalls, made) {
            out.divergences.append(Divergence(kind: .differentOutbound, subject: text.split(separator: "\n").first.map(String.init) ?? "", function: "",
                                              message: delta > 0 ? "recorded \(delta) more time(s) than replayed" : "replayed \(-delta) more time(s) than recorded",
                                              diff: delta > 0 ? MessageText.diff(text, "") : MessageText.diff("", text)))
        }
        let recordedDead = recording.deadLetters.map { "\($0.function) \(SeedPlanner.key($0.function, $0.event))" }
        let dead = try runtime.deliveryList(state: .dead, limit: 100_000).compactMap { d -> String? in
            guard let e = try? d.eventForAttempt() else { return nil }
            return "\(d.function) \(SeedPlanner.key(d.function, redactor.event(e)))"
        }
        for (text, delta) in multisetDifference(recordedDead, dead) {
            out.divergences.append(Divergence(kind: .differentDeadLetter, subject: text, function: "",
                                              message: delta > 0 ? "dead-lettered in the recording, not in the replay" : "dead-lettered in the replay, not in the recording"))
        }
        // The store hash: every document (path and fields), dead letters and outbound calls.
        var hashed: [UInt8] = []
        for root in try await runtime.store.listCollections(under: nil) {
            let docs = try await runtime.store.engine.documents(under: root.segments, limit: Int.max).sorted { $0.description < $1.description }
            for (path, doc) in zip(docs, try await runtime.store.getAll(docs)) {
                hashed += Array(path.description.utf8) + [0]
                if let doc { hashed += JSONWriter.encode(.map(doc.fields), options: .tagged) }
                hashed.append(0x0A)
            }
        }
        for line in dead.sorted() + made.sorted() { hashed += Array(line.utf8) + [0x0A] }
        out.hash = Hex.encode(Crypto.sha256(hashed))
        return out
    }

    static func text(_ doc: StoredDocument?) -> String {
        guard let doc else { return "(no document)" }
        return JSONWriter.string(.map(doc.fields), options: JSONWriteOptions(style: .tagged, sortKeys: true, pretty: true))
    }

    /// Whether two documents' fields agree, timestamps within `tolerance`.
    static func same(_ a: [String: Value]?, _ b: [String: Value]?, tolerance: Duration) -> Bool {
        switch (a, b) {
        case (nil, nil): return true
        case (let x?, let y?): return same(.map(x), .map(y), tolerance: tolerance)
        default: return false
        }
    }

    static func same(_ a: Value, _ b: Value, tolerance: Duration) -> Bool {
        switch (a, b) {
        case (.timestamp(let x), .timestamp(let y)): return (x > y ? x - y : y - x) <= tolerance
        case (.map(let x), .map(let y)):
            return x.count == y.count && x.allSatisfy { k, v in y[k].map { same(v, $0, tolerance: tolerance) } ?? false }
        case (.array(let x), .array(let y)):
            return x.count == y.count && zip(x, y).allSatisfy { same($0, $1, tolerance: tolerance) }
        case (.string(let x), .string(let y)): return x == y || Redactor.normalized(x) == Redactor.normalized(y)
        default: return a == b
        }
    }

    /// Items counted in `a` minus in `b`, where they differ.
    static func multisetDifference(_ a: [String], _ b: [String]) -> [(String, Int)] {
        var count: [String: Int] = [:]
        for x in a { count[x, default: 0] += 1 }
        for x in b { count[x, default: 0] -= 1 }
        return count.filter { $0.value != 0 }.sorted { $0.key < $1.key }
    }
}

/// Gives each replayed invocation the seed its recorded counterpart had: the external one being
/// invoked, or, for a delivery, the recorded delivery of the same function and event (document
/// path and change, task data, user, schedule instant), attempt by attempt.
final class SeedPlanner: Sendable {
    struct State {
        var groups: [String: [[RecordedInvocation]]] = [:]
        var assigned: [Int64: (group: [RecordedInvocation], attempts: Int)] = [:]
        var external: RecordedInvocation?
        var invocations = 0
    }

    private let state: Mutex<State>

    init(_ recording: Recording) {
        var byDelivery: [Int64: [RecordedInvocation]] = [:]
        var order: [Int64] = []
        for i in recording.invocations {
            guard let d = i.delivery else { continue }
            if byDelivery[d] == nil { order.append(d) }
            byDelivery[d, default: []].append(i)
        }
        var groups: [String: [[RecordedInvocation]]] = [:]
        for d in order {
            let attempts = byDelivery[d]!.sorted { ($0.attempt ?? 0, $0.n) < ($1.attempt ?? 0, $1.n) }
            groups[SeedPlanner.key(attempts[0].function, attempts[0].invoke.event), default: []].append(attempts)
        }
        state = Mutex(State(groups: groups))
    }

    func nextExternal(_ recorded: RecordedInvocation) { state.withLock { $0.external = recorded } }

    /// Invocations started in the replay.
    var invocations: Int { state.withLock { $0.invocations } }

    func seed(_ function: String, _ event: Boundary.Event, _ delivery: Int64?) -> RandomSeed? {
        state.withLock { $0.invocations += 1 }
        guard let delivery else {
            return state.withLock { s in
                defer { s.external = nil }
                return s.external?.function == function ? s.external?.invoke.seed : nil
            }
        }
        let key = SeedPlanner.key(function, Redactor().event(event))
        return state.withLock { s -> RandomSeed? in
            if var known = s.assigned[delivery] {
                known.attempts += 1
                s.assigned[delivery] = known
                return known.group[min(known.attempts - 1, known.group.count - 1)].invoke.seed
            }
            guard var queue = s.groups[key], !queue.isEmpty else { return nil }
            let group = queue.removeFirst()
            s.groups[key] = queue
            s.assigned[delivery] = (group, 1)
            return group[0].invoke.seed
        }
    }

    /// What identifies a delivery's cause across runs (ids and sequences differ between them).
    static func key(_ function: String, _ event: Boundary.Event) -> String {
        switch event {
        case .document(let e): return "\(function) document \(e.kind.rawValue) \(e.path)"
        case .task(let e): return "\(function) task " + JSONWriter.string(e.data, options: .tagged)
        case .user(let e): return "\(function) user \(e.kind.rawValue) \(e.user.uid)"
        case .schedule(let e): return "\(function) schedule \(e.scheduleTime.rfc3339)"
        case .callable, .request: return "\(function) \(event.kind)"
        }
    }
}

/// Outbound calls (HTTP, pushes, ID-token checks, users created) answered from a recording: the
/// first unused recorded call with the same redacted request, else one that reads the same
/// (`MessageText.same`: placeholders, percent-encoding), else the first unused of the operation;
/// the calls made are kept for the comparison. Indexed, so each answer costs about the same
/// however long the recording.
final class OutboundAnswers: Sendable {
    struct Entry {
        var op: Boundary.Operation
        var request: [UInt8]
        var reply: Result<[UInt8], RemoteError>?
        var used = false
    }

    struct State {
        var pool: [Entry]
        var exact: [[UInt8]: [Int]] = [:]
        var loose: [String: [Int]] = [:]
        var byOperation: [Boundary.Operation: [Int]] = [:]
        var made: [(Boundary.Operation, [UInt8])] = []

        /// The first unused index of `queue`, dropping used ones from its front.
        mutating func take(_ queue: inout [Int]) -> Int? {
            while let first = queue.first {
                queue.removeFirst()
                if !pool[first].used { return first }
            }
            return nil
        }
    }

    static let operations: Set<Boundary.Operation> = [.httpFetch, .sendMessage, .verifyIDToken, .createUser]
    let redactor: Redactor
    private let state: Mutex<State>

    static func looseKey(_ op: Boundary.Operation, _ request: [UInt8]) -> String { op.name + "\u{0}" + Redactor.normalized(MessageText.request(op, request)) }
    static func exactKey(_ op: Boundary.Operation, _ request: [UInt8]) -> [UInt8] { [UInt8(truncatingIfNeeded: op.rawValue), UInt8(truncatingIfNeeded: op.rawValue >> 8)] + request }

    init(_ recording: Recording, redactor: Redactor) {
        var s = State(pool: recording.invocations.flatMap { i in
            i.calls.filter { OutboundAnswers.operations.contains($0.operation) }.map { Entry(op: $0.operation, request: $0.request, reply: $0.reply) }
        })
        for (k, e) in s.pool.enumerated() {
            s.exact[OutboundAnswers.exactKey(e.op, e.request), default: []].append(k)
            s.loose[OutboundAnswers.looseKey(e.op, e.request), default: []].append(k)
            s.byOperation[e.op, default: []].append(k)
        }
        state = Mutex(s)
        self.redactor = redactor
    }

    var made: [(Boundary.Operation, [UInt8])] { state.withLock { $0.made } }

    func answer<R: WireEncodable, Reply: WireDecodable>(_ op: Boundary.Operation, _ request: R, _ type: Reply.Type) throws -> Reply {
        var w = WireWriter()
        request.encode(to: &w)
        let redacted = redactor.request(op, w.finish())
        let exact = OutboundAnswers.exactKey(op, redacted), loose = OutboundAnswers.looseKey(op, redacted)
        let reply = state.withLock { s -> Result<[UInt8], RemoteError>?? in
            s.made.append((op, redacted))
            var index: Int?
            if var q = s.exact[exact] { index = s.take(&q); s.exact[exact] = q }
            if index == nil, var q = s.loose[loose] { index = s.take(&q); s.loose[loose] = q }
            if index == nil, var q = s.byOperation[op] { index = s.take(&q); s.byOperation[op] = q }
            guard let index else { return nil }
            s.pool[index].used = true
            return .some(s.pool[index].reply)
        }
        guard let found = reply else { throw HTTPSError(.unavailable, "replay: the recording has no \(op.name) response left for this request") }
        switch found {
        case .success(let bytes)?: return try Reply(wireBytes: bytes)
        case .failure(let e)?: throw e.httpsError
        case nil: throw HTTPSError(.deadlineExceeded, "replay: the recorded \(op.name) was never answered")
        }
    }
}

/// Where an invocation run in a task leaves its outcome.
final class OutcomeSlot: Sendable {
    private let slot = Mutex<InvocationOutcome?>(nil)
    var value: InvocationOutcome? { slot.withLock { $0 } }
    func set(_ outcome: InvocationOutcome) { slot.withLock { $0 = outcome } }
}

/// The replay's runtime, for services built before it exists.
final class RuntimeBox: @unchecked Sendable {  // set once, before any unit runs
    var runtime: Runtime?
}
