import Foundation
import HearthAuth
import HearthModel
import HearthStore
import Synchronization

/// The host: loads the configured units, keeps the function table, and runs functions with the
/// services units call back into.
///
/// What the CLI, the testing library and tools reach is its facade: `documents`, `users`,
/// `keys`, the delivery methods below, `call` and `enqueue`. The parts below it (the document
/// store, the auth service, the storage engine) are for the runtime itself, its tests and
/// benchmarks (`@_spi(Internals) import HearthRuntime`).
public final class Runtime: Sendable {
    public let config: RuntimeConfig
    @_spi(Internals) public let store: DocumentStore
    @_spi(Internals) public let auth: AuthService
    public let clock: any Clock
    /// Where ids, seeds and retry jitter come from (`SeededRandom` in tests and replay).
    public let random: any RandomSource
    public let log: RuntimeLog
    public let invoker: Invoker
    public let services: HostServices
    /// The delivery queue (deliveries, task ids, schedule state) in the runtime's database.
    let deliveries: any DeliveryStorage
    /// Secrets units declare and the admin token (environment first, then the secrets file).
    public let secrets: Secrets
    /// Runs triggers, tasks and schedules; started by `startDeliveries`.
    public let engine: DeliveryEngine
    private let state: SharedState
    /// One activation at a time.
    let activations = AsyncLock()
    /// Where invocations and inputs are recorded, while recording (`startRecording`).
    public let recording: RecordingSwitch

    struct State {
        var table = FunctionTable.empty
        var loadErrors: [UnitLoadError] = []
    }

    /// The runtime's mutable state, shared with services that consult the function table.
    final class SharedState: Sendable {
        private let mutex = Mutex(State())
        func withLock<T>(_ body: (inout State) -> T) -> T { mutex.withLock { body(&$0) } }
    }

    /// The current function table.
    public var table: FunctionTable { state.withLock { $0.table } }
    /// Swaps the function table whole (an activation); `unit` is no longer listed as refused.
    func replaceTable(_ table: FunctionTable, clearingErrorsOf unit: String) {
        state.withLock {
            $0.table = table
            $0.loadErrors.removeAll { $0.unit == unit }
        }
    }

    /// Units refused at load, with the reason each was refused.
    public var loadErrors: [UnitLoadError] { state.withLock { $0.loadErrors } }

    public init(config: RuntimeConfig, store: DocumentStore, keys: KeyRing, clock: any Clock = SystemClock(),
                random: any RandomSource = SystemRandom(), log: RuntimeLog? = nil, secrets: Secrets = Secrets(), fcm: FCMClient? = nil,
                services overrides: ((inout HostServices.Builder) -> Void)? = nil) {
        self.config = config
        self.store = store
        self.clock = clock
        self.random = random
        self.secrets = secrets
        let log = log ?? RuntimeLog(format: config.log.format, level: config.log.level, clock: clock)
        self.log = log
        // The storage engine is all the runtime knows of the database: documents and the feed,
        // deliveries, users.
        let storage = store.engine
        let recording = RecordingSwitch()
        self.recording = recording
        let auth = AuthService(configuration: Runtime.authConfiguration(config, clock: clock),
                               users: RecordedUsers(base: storage.users, recording: recording), keys: keys, clock: clock, random: random, log: { message in log.info(message) })
        self.auth = auth
        keys.reportProblems { message in log.warning(message) }
        let invoker = Invoker(clock: clock, random: random, log: log, recording: recording, onFinish: { id in store.transactions.rollbackAll(owner: id) })
        self.invoker = invoker
        let deliveries = storage.deliveries
        self.deliveries = deliveries
        let state = SharedState()
        self.state = state
        let tasks = TaskRequests(clock: clock, random: random, dedupeWindow: .seconds(double: config.delivery.taskDedupeWindowHours * 3600), isQueue: { name in
            state.withLock { $0.table[name]?.trigger == .task }
        })
        self.taskRequests = tasks
        let messenger = Messenger(outbox: storage.outbox, fcm: fcm, clock: clock)
        self.services = Runtime.makeServices(clock: clock, log: log, invoker: invoker, store: store, auth: auth, tasks: tasks, deliveries: deliveries,
                                             messenger: messenger, secrets: secrets, config: config, declaredSecrets: { function in state.withLock { $0.table[function]?.spec.options.secrets ?? [] } },
                                             overrides: overrides)
        // The poll applies to a driving engine only (`hearth serve`); a test drives its engine itself.
        let engineConfiguration = DeliveryEngine.Configuration(
            pollInterval: .seconds(double: config.delivery.pollIntervalSeconds),
            taskDedupeWindow: .seconds(double: config.delivery.taskDedupeWindowHours * 3600), defaultConcurrency: config.delivery.defaultConcurrency,
            feedRetention: .seconds(double: config.store.changeRetentionHours * 3600),
            recordsTriggerLatency: config.delivery.recordsTriggerLatency)
        engine = DeliveryEngine(configuration: engineConfiguration, storage: storage, invoker: invoker, clock: clock, random: random, log: log)
    }

    /// Checks task requests (from units, the CLI and the admin API).
    let taskRequests: TaskRequests

    /// Enqueues tasks (checked as a unit's would be); returns their ids.
    public func enqueue(_ tasks: [TaskSpec]) async throws -> [String] {
        let checked = try taskRequests.check(tasks)
        try await deliveries.enqueue(checked)
        recording.recorder?.input(.tasks(tasks))
        return checked.map(\.id)
    }

    // MARK: deliveries, for the CLI and the admin API

    /// A schedule function with its timing.
    public struct ScheduleInfo: Sendable {
        public var function: String
        public var expression: String
        public var timeZone: String
        public var lastFire: Timestamp?
        public var nextFire: Timestamp?

        /// The next firing as a local time in the schedule's zone, e.g. `2026-01-02 09:00 (Asia/Seoul)`.
        public var nextFireLocal: String? {
            guard let nextFire, let zone = TimeZone(identifier: timeZone) else { return nil }
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = zone
            formatter.dateFormat = "yyyy-MM-dd HH:mm zzz"
            return formatter.string(from: nextFire.date)
        }

        public var value: Value {
            ["function": .string(function), "schedule": .string(expression), "timeZone": .string(timeZone),
             "lastFire": lastFire.map { .timestamp($0) } ?? .null, "nextFire": nextFire.map { .timestamp($0) } ?? .null,
             "nextFireLocal": nextFireLocal.map { .string($0) } ?? .null]
        }
    }

    /// Every schedule function, with its last firing (from the database) and next one.
    public func scheduleTable() throws -> [ScheduleInfo] {
        let now = clock.now()
        return try table.entries.compactMap { entry -> ScheduleInfo? in
            guard case .schedule(let expression, let zone) = entry.trigger else { return nil }
            let schedule = try Schedule(expression, timeZone: zone)
            let last = try deliveries.lastFire(schedule: entry.name)
            // Calendar schedules fire at their next instant; an interval one its period after the
            // last firing (due now when that has passed).
            let next = schedule.interval != nil ? schedule.nextFire(after: last ?? now).map { max($0, now) }
                                                : schedule.nextFire(after: max(last ?? now, now))
            return ScheduleInfo(function: entry.name, expression: expression, timeZone: zone, lastFire: last, nextFire: next)
        }.sorted { $0.function < $1.function }
    }

    /// Queues a firing of a schedule function now, outside its timing; a serving runtime runs it
    /// at once (another process's within its poll interval).
    public func runScheduleNow(_ name: String) async throws {
        guard let entry = table[name], case .schedule = entry.trigger else {
            throw HTTPSError(.notFound, "no schedule function named '\(name)'")
        }
        let now = clock.now()
        try await deliveries.add([NewDelivery(function: name, eventID: "manual-" + now.rfc3339,
                                              event: .schedule(Boundary.ScheduleEvent(jobName: name, scheduleTime: now)), dueTime: now)])
        engine.poke()
    }

    /// Makes a dead letter pending again.
    public func retryDelivery(_ id: Int64) async throws {
        guard try await deliveries.retryDead(id: id, now: clock.now()) else { throw HTTPSError(.notFound, "no dead delivery with id \(id)") }
        engine.poke()
    }

    /// Deletes a pending or dead delivery.
    public func dropDelivery(_ id: Int64) async throws {
        guard try await deliveries.drop(id: id) else { throw HTTPSError(.notFound, "no pending or dead delivery with id \(id)") }
        engine.poke()
    }

    /// Starts the delivery engine on the loaded function table; with `driving`, deliveries run as
    /// they come due (`hearth serve`); without, the caller drives it (`TestRuntime`). Only a runtime
    /// that runs deliveries takes the data directory's node id (CLI commands that only read or
    /// queue work never do, so they never keep a server from its own leases).
    public func startDeliveries(driving: Bool) async throws {
        let node = Runtime.nodeIdentity(config: config, random: random)
        if let lock = node.lock { nodeLock.withLock { $0 = lock } }
        try await engine.start(table: table, driving: driving, node: DeliveryEngine.Node(id: node.id, owned: node.lock != nil),
                               removeStaleCursors: loadErrors.isEmpty)
    }

    /// This node's id for delivery leases, kept in the data directory so a restart takes back its
    /// own unfinished deliveries at once. The id is this process's only while it holds an exclusive
    /// lock on `<data_dir>/node-id.lock`; a second live process on the same directory gets a fresh
    /// id (and waits for leases to end instead of taking over deliveries that are still running).
    static func nodeIdentity(config: RuntimeConfig, random: any RandomSource) -> (id: String, lock: NodeLock?) {
        let directory = config.resolve(config.dataDirectory)
        try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        guard let lock = NodeLock(path: directory + "/node-id.lock") else { return (DeliveryEngine.Node.ephemeral(random).id, nil) }
        let path = directory + "/node-id"
        if let data = FileManager.default.contents(atPath: path), let id = String(data: data, encoding: .utf8)?.trimmingCharacters(in: .whitespacesAndNewlines), !id.isEmpty {
            return (id, lock)
        }
        let id = DeliveryEngine.Node.ephemeral(random).id
        _ = FileManager.default.createFile(atPath: path, contents: Data((id + "\n").utf8))
        return (id, lock)
    }

    /// Holds the node lock once deliveries started; released when the runtime closes or the process exits.
    private let nodeLock = Mutex<NodeLock?>(nil)
    /// The build copies this runtime's workers run (`pinnedBuild`).
    let pins = BuildPins()

    /// Stops every unit's worker processes (they exit once they have answered what they run).
    public func stopUnits() {
        for unit in table.units { unit.transport.stop() }
    }

    /// Closes the store and gives up the node id (for runtimes that end before the process does);
    /// workers are stopped.
    public func close() {
        stopUnits()
        store.close()
        nodeLock.withLock { $0?.release() }
        pins.releaseAll()
    }

    /// Opens the configured store and signing keys and builds the runtime (units are loaded by `loadUnits`).
    /// `services` replaces host services (a system replay answers outbound calls from its recording).
    public static func open(config: RuntimeConfig, clock: any Clock = SystemClock(), random: any RandomSource = SystemRandom(),
                            log: RuntimeLog? = nil, services: ((inout HostServices.Builder) -> Void)? = nil) async throws -> Runtime {
        let secrets = try Secrets.load(path: config.secretsFile.map(config.resolve))
        let store = try await DocumentStore.open(path: config.storePath, options: config.storeOptions, clock: clock, random: random)
        let keys = try KeyRing(path: config.keysPath, clock: clock)
        let fcm = try Runtime.fcmClient(config, clock: clock)
        return Runtime(config: config, store: store, keys: keys, clock: clock, random: random, log: log, secrets: secrets, fcm: fcm, services: services)
    }

    /// Metrics of the runtime's parts beyond HTTP and invocations (the delivery engine adds its own).
    public func extraMetrics() -> [(name: String, help: String, type: String, samples: [(labels: String, value: Double)])] {
        var out: [(name: String, help: String, type: String, samples: [(labels: String, value: Double)])] = [
            ("hearth_units_loaded", "Units loaded.", "gauge", [("", Double(table.units.count))]),
            ("hearth_units_refused", "Units refused at load.", "gauge", [("", Double(loadErrors.count))]),
            ("hearth_unit_healthy", "1 while a unit serves normally, 0 while its workers keep dying.", "gauge",
             table.units.map { ("unit=\"\($0.name)\"", $0.health.healthy ? 1 : 0) }),
            ("hearth_unit_workers", "Worker processes up, per unit in process isolation.", "gauge",
             table.units.filter { $0.isolation == .process }.map { ("unit=\"\($0.name)\"", Double($0.health.workers)) }),
            ("hearth_unit_worker_restarts_total", "Workers restarted after dying, per unit.", "counter",
             table.units.filter { $0.isolation == .process }.map { ("unit=\"\($0.name)\"", Double($0.health.restarts)) }),
            ("hearth_change_feed_sequence", "The change feed's last sequence (any process's commits).", "gauge",
             [("", Double((try? store.engine.feedEnd()) ?? store.engine.lastSequence))]),
        ]
        // Deliveries: what waits in the database, and what the engine did since the process started.
        let events = table.entries.filter { $0.trigger.isEvent }.map(\.name).sorted()
        let counts = (try? deliveries.counts()) ?? [:]
        let done = engine.stats.counters
        let now = clock.now()
        func label(_ name: String) -> String { "function=\"\(name)\"" }
        func gauge(_ pick: (DeliveryCounts) -> Int) -> [(labels: String, value: Double)] {
            events.map { (label($0), Double(pick(counts[$0] ?? DeliveryCounts()))) }
        }
        func counter(_ pick: (DeliveryStats.Counters) -> Int) -> [(labels: String, value: Double)] {
            events.map { (label($0), Double(pick(done[$0] ?? DeliveryStats.Counters()))) }
        }
        out += [
            ("hearth_deliveries_pending", "Deliveries waiting to run (including retries not yet due).", "gauge", gauge(\.pending)),
            ("hearth_deliveries_in_flight", "Deliveries running (in any process sharing the database).", "gauge", gauge(\.running)),
            ("hearth_deliveries_dead", "Dead letters: deliveries that failed for good.", "gauge", gauge(\.dead)),
            ("hearth_deliveries_oldest_pending_age_seconds", "Age of the oldest pending delivery past its due time.", "gauge",
             events.map { name in (label(name), counts[name]?.oldestPendingDue.map { max(0, (now - $0).secondsDouble) } ?? 0) }),
            ("hearth_deliveries_started_total", "Delivery attempts started by this process.", "counter", counter(\.started)),
            ("hearth_deliveries_succeeded_total", "Delivery attempts that succeeded.", "counter", counter(\.succeeded)),
            ("hearth_deliveries_failed_total", "Delivery attempts that failed and will be retried.", "counter", counter(\.failed)),
            ("hearth_deliveries_dead_lettered_total", "Deliveries that failed for good.", "counter", counter(\.dead)),
        ]
        return out
    }

    /// The caller a verified ID token describes, for invoking callables.
    public func caller(idToken: String) async throws(TokenRejection) -> CallerAuth {
        let verified = try await auth.verifyIDToken(idToken)
        return CallerAuth(uid: verified.uid, claims: verified.claims, rawToken: idToken)
    }

    /// `caller(idToken:)` without suspending (`AuthService.verifyIDTokenNow`): nil when it cannot
    /// be decided on the calling thread.
    func callerNow(idToken: String) -> Result<CallerAuth, TokenRejection>? {
        auth.verifyIDTokenNow(idToken).map { result in
            result.map { CallerAuth(uid: $0.uid, claims: $0.claims, rawToken: idToken) }
        }
    }

    /// A signed-in caller for local use (`hearth call --as`, `hearth token`): a real ID token for the
    /// user, created first if it does not exist (as a custom-token sign-in would), verified like any other.
    public func caller(asUser uid: String, claims extra: [String: Value] = [:]) async throws -> CallerAuth {
        var user = try await auth.users.user(uid: uid)
        if user == nil {
            do { user = try await auth.createUser(NewUser(uid: uid)) } catch let e as HTTPSError where e.code == .alreadyExists {
                user = try await auth.getUser(uid: uid)
            }
        }
        let token = try auth.mintIDToken(for: user!, signInProvider: "custom", developerClaims: extra)
        let verified = try await auth.verifyIDToken(token)
        return CallerAuth(uid: verified.uid, claims: verified.claims, rawToken: token)
    }

    /// What is wrong with a schedule expression in a zone (nil when valid): units declaring one are refused at load.
    @Sendable static func scheduleProblem(_ expression: String, _ zone: String) -> String? {
        do {
            _ = try Schedule(expression, timeZone: zone)
            return nil
        } catch {
            return String(describing: error)
        }
    }

    /// The library a unit in workers runs at its build version: a content-addressed copy of the
    /// one in the units directory, as a deployed version's (workers restart from it, so they keep
    /// running the code the manifest was read from while `hearth deploy` builds the unit's next
    /// version over the original). The original when it cannot be read (the load says why).
    ///
    /// The copy is held (`BuildPins`) while this runtime lives; copies of earlier builds that no
    /// process holds and no deploy recorded are removed.
    func pinnedBuild(of unit: RuntimeConfig.Unit) -> String {
        let library = config.libraryPath(of: unit)
        guard let contents = FileManager.default.contents(atPath: library) else { return library }
        do {
            let pins = self.pins
            var held = false
            let (version, path) = try installLibrary(unit: unit.name, contents: contents) { directory in held = pins.hold(directory) }
            if !held { log.warning("the copy of \(unit.name)'s build at \(path) could not be held; another process's prune may remove it") }
            pruneBuildCopies(of: unit.name, keeping: version)
            return path
        } catch {
            log.warning("workers of \(unit.name) run \(library) itself: \(error)")
            return library
        }
    }

    /// Removes `unit`'s build copies no process holds and no deploy recorded, but `version` (`BuildPins`).
    func pruneBuildCopies(of unit: String, keeping version: String) {
        let deploys = self.deploys
        let removed = BuildPins.prune(unitDirectory: unitDirectory(unit), keep: version) {
            (try? deploys.versions(unit: unit)).map { Set($0.map(\.version)) }
        }
        if removed > 0 { log.info("removed \(removed) copies of earlier builds of \(unit) no process runs") }
    }

    /// Loads every configured unit: its deployed version when `hearth deploy` recorded one (see
    /// `activate`), else its library in the units directory. A unit that fails is refused (logged
    /// and listed in `loadErrors`); the others load.
    public func loadUnits() async {
        let loader = UnitLoader(services: services, log: log, validateSchedule: Runtime.scheduleProblem)
        let deployed = deployedVersions()
        // Units in workers start side by side (each worker loads its library on its own core);
        // libraries loaded into this process one after another.
        let units = config.units
        var results = [Result<LoadedUnit, UnitLoadError>?](repeating: nil, count: units.count)
        let inWorkers = units.enumerated().filter { config.isolation(of: $0.element) == .process }
            .map { (index: $0.offset, unit: $0.element, version: deployed[$0.element.name]) }
        // The libraries' copies are read, hashed and written on a thread of their own: each is
        // megabytes of file I/O, and Swift's pool has one thread per core for everything else.
        let paths = await Runtime.onThread { [self] in
            inWorkers.map { item -> String in
                if let deployed = item.version { pruneBuildCopies(of: item.unit.name, keeping: deployed.version) }
                return item.version?.path ?? pinnedBuild(of: item.unit)
            }
        }
        let started = await withTaskGroup(of: (Int, Result<LoadedUnit, UnitLoadError>).self) { group in
            for (item, path) in zip(inWorkers, paths) {
                let placement = placement(of: item.unit)
                group.addTask {
                    let result: Result<LoadedUnit, UnitLoadError>
                    do { result = .success(try await loader.load(unit: item.unit.name, path: path, version: item.version?.version, placement: placement)) } catch let error as UnitLoadError {
                        result = .failure(error)
                    } catch {
                        result = .failure(UnitLoadError(unit: item.unit.name, path: path, reason: "\(error)"))
                    }
                    return (item.index, result)
                }
            }
            var out: [(Int, Result<LoadedUnit, UnitLoadError>)] = []
            for await answer in group { out.append(answer) }
            return out
        }
        for (i, result) in started { results[i] = result }
        for (i, unit) in units.enumerated() where results[i] == nil {
            let version = deployed[unit.name]
            do {
                results[i] = .success(try await loader.load(unit: unit.name, path: version?.path ?? config.libraryPath(of: unit),
                                                            version: version?.version, placement: placement(of: unit)))
            } catch {
                results[i] = .failure(error)
            }
        }
        var loaded: [LoadedUnit] = []
        var errors: [UnitLoadError] = []
        for result in results {
            switch result {
            case .success(let candidate)?:
                noteMissingSecrets(candidate)
                loaded.append(candidate)
            case .failure(let error)?: errors.append(error)
            case nil: break
            }
        }
        let (table, refused) = FunctionTable.build(loaded)
        errors += refused
        for unit in loaded where refused.contains(where: { $0.unit == unit.name }) { unit.transport.stop() }
        for error in errors { log.error("unit refused", ["unit": .string(error.unit), "path": .string(error.path), "reason": .string(error.reason)]) }
        for unit in table.units {
            log.info("unit loaded", ["unit": .string(unit.name), "functions": .int(Int64(unit.manifest.functions.count)), "path": .string(unit.path),
                                     "isolation": .string(unit.isolation.rawValue), "version": .string(unit.version ?? "build")])
        }
        state.withLock {
            $0.table = table
            $0.loadErrors = errors
        }
    }

    /// The active deployed version of each unit whose copy is still on disk.
    func deployedVersions() -> [String: UnitVersion] {
        let deploys = store.engine.deploys
        guard let active = try? deploys.active() else { return [:] }
        var out: [String: UnitVersion] = [:]
        for (unit, record) in active {
            guard let version = try? deploys.version(unit: unit, version: record.version) else { continue }
            if FileManager.default.fileExists(atPath: version.path) {
                out[unit] = version
            } else {
                log.error("deployed version missing", ["unit": .string(unit), "version": .string(version.version), "path": .string(version.path),
                                                       "effect": "the unit's library in the units directory is loaded instead"])
            }
        }
        return out
    }

    /// A declared secret that is not set is named (never a value) at load; the unit loads, and
    /// reading the secret answers failed-precondition naming it, so an app runs before every
    /// provider is configured (SCENARIOS §1's "missing provider secret"). One line per secret (a
    /// notice: `hearth serve` shows it, CLI commands stay quiet).
    func noteMissingSecrets(_ unit: LoadedUnit) {
        var missing: [String: [String]] = [:]
        for fn in unit.manifest.functions {
            for name in (fn.options.secrets ?? []) where secrets.value(name) == nil { missing[name, default: []].append(fn.name) }
        }
        for (name, functions) in missing.sorted(by: { $0.key < $1.key }) {
            log.log(.notice, "declared secret not set", ["unit": .string(unit.name), "secret": .string(name),
                                                   "functions": .string(functions.joined(separator: ",")),
                                                   "effect": "reading it answers failed-precondition until it is set"])
        }
    }

    /// How `unit` runs, from the configuration.
    func placement(of unit: RuntimeConfig.Unit) -> UnitPlacement { config.placement(of: unit) }

    /// Runs a callable in-process, as the HTTP front door would after verifying the caller.
    public func call(_ name: String, data: Value, auth: CallerAuth? = nil, headers: HTTPHeaders = HTTPHeaders()) async -> InvocationOutcome {
        guard let entry = table[name] else {
            return InvocationOutcome(id: 0, result: .failure(RemoteError(code: .notFound, message: "no function named '\(name)'")), duration: .zero)
        }
        guard entry.trigger == .callable else {
            return InvocationOutcome(id: 0, result: .failure(RemoteError(code: .failedPrecondition,
                message: "'\(name)' is a \(entry.trigger.kindName) function, not a callable")), duration: .zero)
        }
        // Names lower-cased, as the front door gives them (`FrontDoor.callableCall`).
        return await invokeCallable(entry, Boundary.CallableEvent(data: data, auth: auth, headers: headers.withLowercasedNames))
    }

    /// Runs a callable with its event (from the front door or `call`), within the function's timeout.
    func invokeCallable(_ entry: FunctionEntry, _ event: Boundary.CallableEvent, stream: StreamSink? = nil) async -> InvocationOutcome {
        await invoker.invoke(entry, event: .callable(event), timeout: entry.spec.options.effectiveTimeout, stream: stream)
    }

    /// The same, the outcome passed to `completion` on the thread that has it (`Invoker.invoke`).
    func invokeCallable(_ entry: FunctionEntry, _ event: Boundary.CallableEvent, completion: @escaping @Sendable (InvocationOutcome) -> Void) {
        invoker.invoke(entry, event: .callable(event), timeout: entry.spec.options.effectiveTimeout, completion: completion)
    }

    /// The services units can call: the clock, logs, secrets, stream chunks, documents,
    /// transactions, tasks and auth.
    static func makeServices(clock: any Clock, log: RuntimeLog, invoker: Invoker, store: DocumentStore, auth: AuthService,
                             tasks: TaskRequests, deliveries: any DeliveryStorage, messenger: Messenger, secrets: Secrets, config: RuntimeConfig,
                             declaredSecrets: @escaping @Sendable (String) -> [String], overrides: ((inout HostServices.Builder) -> Void)?) -> HostServices {
        var services = HostServices.Builder(tasks: invoker.serviceTasks, isInFlight: { invoker.isRunning($0, in: $1) }, recording: invoker.recording)
        services.answer(Boundary.ClockNow.self) { _, _ in clock.now() }
        // Only for a running invocation, and only what its function declared.
        services.answer(Boundary.SecretGet.self) { caller, request in
            guard let record = invoker.record(for: caller.invocation), record.unit == caller.unit else {
                throw HTTPSError(.cancelled, "secrets.get: the invocation is no longer running")
            }
            guard declaredSecrets(record.function).contains(request.name) else {
                log.warning("secret refused", ["function": .string(record.function), "secret": .string(request.name), "reason": "not declared"])
                throw HTTPSError(.permissionDenied, "function '\(record.function)' did not declare the secret '\(request.name)' (add it to secrets:)")
            }
            guard let value = secrets.value(request.name) else { throw HTTPSError(.failedPrecondition, "the secret '\(request.name)' is not set") }
            return value
        }
        services.answer(Boundary.Log.self) { caller, request in
            var fields = request.metadata
            fields["unit"] = .string(caller.unit)
            fields["invocation"] = .string(Invoker.format(caller.invocation))
            if let record = invoker.record(for: caller.invocation) { fields["function"] = .string(record.function) }
            log.log(request.level, request.message, fields)
            return Boundary.Empty()
        }
        services.serve(Boundary.ClockSleep.self) { caller, request in
            try await invoker.sleep(caller.invocation, until: request.until)
            return Boundary.Empty()
        }
        services.serve(Boundary.StreamSend.self) { caller, request in
            guard let sink = invoker.record(for: caller.invocation)?.stream else { return false }
            return await sink(request.chunk)
        }
        DocumentServices.register(&services, store: store, tasks: tasks)
        TaskServices.register(&services, requests: tasks, deliveries: deliveries)
        AuthServices.register(&services, auth: auth)
        let params = config.params
        services.answer(Boundary.ParamGet.self) { _, request in params[request.name] }
        OutboundServices.register(&services, config: config.outbound, log: log)
        services.serve(Boundary.SendMessage.self) { caller, request in
            let function = invoker.record(for: caller.invocation)?.function ?? caller.unit
            return try await messenger.send(request.message, function: function)
        }
        overrides?(&services)
        return HostServices(services)
    }

    /// The FCM client for `[messaging]`'s fcm mode (nil in log mode); a service account that
    /// cannot be read stops the runtime at start, saying why.
    static func fcmClient(_ config: RuntimeConfig, clock: any Clock) throws -> FCMClient? {
        guard config.messaging.resolvedMode == .fcm, let file = config.messaging.serviceAccountFile else { return nil }
        let path = config.resolve(file)
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ConfigError("[messaging] service_account_file \(path) cannot be read")
        }
        do {
            return FCMClient(account: try ServiceAccount(json: Array(data)), baseURL: config.messaging.fcmURL,
                             tokenURL: config.messaging.oauthTokenURL, clock: clock)
        } catch {
            throw ConfigError("[messaging] service_account_file \(path): \(error)")
        }
    }
}

/// An exclusive `flock` on a file, held until released or the process ends.
final class NodeLock: Sendable {
    private let fd = Mutex<Int32>(-1)

    init?(path: String) {
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { return nil }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            Glibc.close(descriptor)
            return nil
        }
        fd.withLock { $0 = descriptor }
    }

    func release() {
        let descriptor = fd.withLock { d -> Int32 in defer { d = -1 }; return d }
        if descriptor >= 0 { Glibc.close(descriptor) }
    }

    deinit { release() }
}

extension RuntimeConfig {
    /// How `unit` runs: in this process, or in worker processes with their limits.
    func placement(of unit: RuntimeConfig.Unit) -> UnitPlacement {
        guard isolation(of: unit) == .process else { return .inProcess }
        let w = workers
        return UnitPlacement(isolation: .process,
                             launch: WorkerLaunch(executable: workerExecutable, unit: unit.name, library: "",
                                                  memoryLimitMB: unit.memoryLimitMB ?? w.memoryLimitMB, openFiles: unit.openFiles ?? w.openFiles),
                             workers: unit.workers ?? w.count, killGrace: w.killGraceSeconds, backoffMax: w.restartBackoffMaxSeconds,
                             startTimeout: w.startTimeoutSeconds)
    }
}
