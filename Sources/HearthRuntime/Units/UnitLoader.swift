#if canImport(Glibc)
import Glibc
#endif
import Foundation
import HearthModel
import HearthUnitABI
import Synchronization

/// How the host reaches a loaded unit: the C exports of a library in this process, or worker
/// processes (`WorkerPool`). Both carry the same frames.
protocol UnitTransport: Sendable {
    var isolation: RuntimeConfig.Isolation { get }
    /// Sends one request frame; `reply` gets the answer frame exactly once, on any thread.
    func send(_ frame: [UInt8], function: String?, reply: @escaping @Sendable ([UInt8]) -> Void)
    /// `invocation` ran past its timeout: cancel it; a worker that does not stop it soon is killed.
    func abandon(invocation: UInt64, function: String, timeout: Duration)
    /// No new work comes this way (`successor`, a newer version, took over): finish what runs,
    /// then stop; a request that still arrives goes to the successor.
    func retire(successor: (any UnitTransport)?)
    /// Stops now (the host is stopping, or the version was refused): workers exit.
    func stop()
    var health: UnitHealth { get }
}

/// A unit's state as `/healthz`, metrics and `hearth functions` show it.
public struct UnitHealth: Sendable, Equatable {
    public var isolation: RuntimeConfig.Isolation
    /// Worker processes up (process isolation).
    public var workers: Int
    public var configuredWorkers: Int
    /// Workers started again after one died.
    public var restarts: Int
    /// False while the unit's workers keep dying (three deaths within a minute).
    public var healthy: Bool
    /// How the last worker died.
    public var lastDeath: String?

    static let inProcess = UnitHealth(isolation: .inProcess, workers: 0, configuredWorkers: 0, restarts: 0, healthy: true, lastDeath: nil)
}

/// A library loaded into this process: requests are C calls into its exports.
struct InProcessTransport: UnitTransport {
    /// Valid for the life of the process: unit libraries are never unloaded (dlclose of a Swift
    /// library makes later casts crash), and the unit keeps its exports alive.
    nonisolated(unsafe) let exports: UnsafePointer<hearth_unit_exports>

    var isolation: RuntimeConfig.Isolation { .inProcess }
    var health: UnitHealth { .inProcess }

    func send(_ frame: [UInt8], function: String?, reply: @escaping @Sendable ([UInt8]) -> Void) {
        let transport = self
        let handle = { @Sendable in
            let exports = transport.exports
            let box = Unmanaged.passRetained(HostReplyBox(reply))
            frame.withUnsafeBufferPointer { p in
                exports.pointee.handle(exports.pointee.context, p.baseAddress!, p.count, box.toOpaque(), hostReplyTrampoline)
            }
        }
        // An invocation runs in a task of its own: the unit starts its handler on the calling
        // thread, and the caller (waiting on its timeout) must not be that handler's thread.
        // Describe and cancel are answered at once.
        if frame.count > 6, UInt16(frame[5]) | UInt16(frame[6]) << 8 == Boundary.Operation.invoke.rawValue {
            Task { handle() }
        } else {
            handle()
        }
    }

    func abandon(invocation: UInt64, function: String, timeout: Duration) {
        let cancel = Boundary.frame(Boundary.Header(kind: .request, operation: .cancel, invocation: invocation), Boundary.Cancel())
        send(cancel, function: function, reply: { _ in })
    }

    func retire(successor: (any UnitTransport)?) {}
    func stop() {}
}

/// A loaded unit version with its validated manifest.
public final class LoadedUnit: Sendable {
    public let name: String
    public let path: String
    public let manifest: FunctionManifest
    /// The library's content hash (its deployed version), when known.
    public let version: String?
    let transport: any UnitTransport

    init(name: String, path: String, manifest: FunctionManifest, version: String?, transport: any UnitTransport) {
        self.name = name
        self.path = path
        self.manifest = manifest
        self.version = version
        self.transport = transport
    }

    public var isolation: RuntimeConfig.Isolation { transport.isolation }
    public var health: UnitHealth { transport.health }

    /// The unit as `/healthz` and the admin API show it.
    public var statusValue: Value {
        let h = health
        var m: [String: Value] = ["isolation": .string(h.isolation.rawValue), "healthy": .bool(h.healthy),
                                  "version": .string(version ?? "build"), "library": .string(path)]
        if h.isolation == .process {
            m["workers"] = .int(Int64(h.workers))
            m["configuredWorkers"] = .int(Int64(h.configuredWorkers))
            m["restarts"] = .int(Int64(h.restarts))
            m["lastDeath"] = h.lastDeath.map { .string($0) } ?? .null
        }
        return .map(m)
    }

    /// Sends one request to the unit and waits for its reply (or the error it answered with).
    func request<R: Boundary.Request>(_ request: R, invocation: UInt64, function: String? = nil) async -> Result<R.Reply, RemoteError> {
        await withCheckedContinuation { continuation in
            self.request(request, invocation: invocation, function: function) { continuation.resume(returning: $0) }
        }
    }

    /// Sends a request; `reply` gets the unit's answer (a frame that cannot be read becomes an
    /// error), on whichever thread the unit answers from.
    func request<R: Boundary.Request>(_ request: R, invocation: UInt64, function: String? = nil,
                                      reply: @escaping @Sendable (Result<R.Reply, RemoteError>) -> Void) {
        let frame = Boundary.frame(Boundary.Header(kind: .request, operation: R.operation, invocation: invocation), request)
        transport.send(frame, function: function) { bytes in reply(Boundary.reply(R.Reply.self, from: bytes)) }
    }
}

final class HostReplyBox {
    let reply: @Sendable ([UInt8]) -> Void
    init(_ reply: @escaping @Sendable ([UInt8]) -> Void) { self.reply = reply }
}

/// An in-process unit's reply; past what a worker may send, it fails as it would from a worker
/// (`WorkerProcess.oversizedReply`), so a function behaves alike in either placement.
let hostReplyTrampoline: hearth_reply_fn = { context, bytes, length in
    let box = Unmanaged<HostReplyBox>.fromOpaque(context!).takeRetainedValue()
    if length > WorkerProcess.maxWorkerFrame, let bytes, let failure = WorkerProcess.oversizedReply(UnsafeRawBufferPointer(start: bytes, count: length)) {
        box.reply(failure)
        return
    }
    box.reply(bytes.map { Array(UnsafeBufferPointer(start: $0, count: length)) } ?? [])
}

/// Why a unit was refused: the unit, the library file and the reason.
public struct UnitLoadError: Error, Sendable, CustomStringConvertible, Equatable {
    public var unit: String
    public var path: String
    public var reason: String

    public var description: String { "unit \(unit) (\(path)): \(reason)" }
}

/// How to run a unit being loaded: in this process, or in workers started with `launch`.
public struct UnitPlacement: Sendable {
    var isolation: RuntimeConfig.Isolation
    var launch: WorkerLaunch?
    var workers: Int
    var killGrace: Double
    var backoffMax: Double
    /// How long a worker may take to load the library and describe it.
    var startTimeout: Double = 30

    static let inProcess = UnitPlacement(isolation: .inProcess, launch: nil, workers: 0, killGrace: 0, backoffMax: 0)
}

/// Loads unit libraries (with dlopen, or in worker processes) and validates what they declare.
public struct UnitLoader: Sendable {
    let services: HostServices
    let log: RuntimeLog
    /// Checks a schedule expression and zone; returns the problem or nil.
    let validateSchedule: @Sendable (String, String) -> String?

    public init(services: HostServices, log: RuntimeLog = RuntimeLog(format: .text, level: .error, clock: SystemClock()),
                validateSchedule: @escaping @Sendable (String, String) -> String? = { _, _ in nil }) {
        self.services = services
        self.log = log
        self.validateSchedule = validateSchedule
    }

    /// The library file a unit builds to: `lib<Name>.so` in `directory`.
    public static func libraryPath(unit: String, directory: String) -> String {
        (directory as NSString).appendingPathComponent("lib\(unit).so")
    }

    /// Loads `unit` from `path` as `placement` says, checks its ABI version and manifest, or says why not.
    func load(unit: String, path: String, version: String? = nil, placement: UnitPlacement = .inProcess) async throws(UnitLoadError) -> LoadedUnit {
        func refuse(_ reason: String) -> UnitLoadError { UnitLoadError(unit: unit, path: path, reason: reason) }
        guard FileManager.default.fileExists(atPath: path) else {
            throw refuse("library not found (build it with `swift build --product \(unit)`)")
        }
        let transport: any UnitTransport
        if placement.isolation == .process, var launch = placement.launch {
            launch.unit = unit
            launch.library = path
            guard FileManager.default.isExecutableFile(atPath: launch.executable) else {
                throw refuse("the worker executable \(launch.executable) is missing (build `hearth`, or set [workers] executable)")
            }
            do {
                transport = try WorkerPool(launch, count: placement.workers, services: services, log: log,
                                           killGrace: placement.killGrace, backoffMax: placement.backoffMax)
            } catch {
                throw refuse("\(error)")
            }
        } else {
            transport = InProcessTransport(exports: try openInProcess(unit: unit, path: path))
        }
        do {
            return try await describe(unit: unit, path: path, version: version, transport: transport,
                                      timeout: placement.isolation == .process ? placement.startTimeout : nil)
        } catch {
            transport.stop()
            throw error
        }
    }

    /// dlopens the library in this process and checks its boundary version.
    private func openInProcess(unit: String, path: String) throws(UnitLoadError) -> UnsafePointer<hearth_unit_exports> {
        func refuse(_ reason: String) -> UnitLoadError { UnitLoadError(unit: unit, path: path, reason: reason) }
        guard let handle = dlopen(path, RTLD_NOW | RTLD_LOCAL) else {
            throw refuse("dlopen failed: \(String(cString: dlerror()))")
        }
        // Never dlclose: see InProcessTransport.exports.
        // The unit's own copy of the version function says what it was built against; a unit of
        // another version is refused before it is sent anything.
        let host = hearth_unit_abi_version()
        guard let versionSymbol = dlsym(handle, HEARTH_UNIT_VERSION_SYMBOL) else {
            throw refuse("the library is not a Hearth unit: it does not export \(HEARTH_UNIT_VERSION_SYMBOL) or \(HEARTH_UNIT_ENTRY_SYMBOL) (a unit is a module under functions/ built with HearthFunctions)")
        }
        let built = unsafeBitCast(versionSymbol, to: (@convention(c) () -> UInt32).self)()
        guard built == host else {
            throw refuse("the unit was built against boundary version \(built); this host speaks version \(host) (rebuild the unit with this SDK)")
        }
        guard let symbol = dlsym(handle, HEARTH_UNIT_ENTRY_SYMBOL) else {
            throw refuse("the library does not export \(HEARTH_UNIT_ENTRY_SYMBOL) (units get it from the HearthUnitEntry build plugin)")
        }
        let entry = unsafeBitCast(symbol, to: hearth_unit_entry_fn.self)
        let table = services.makeCTable(unit: unit)
        guard let exports = entry(table) else { throw refuse("the unit's entry point returned no exports") }
        guard exports.pointee.abi_version == host else {
            throw refuse("the unit's exports speak boundary version \(exports.pointee.abi_version); this host speaks version \(host)")
        }
        return exports
    }

    /// Asks the unit for its manifest and validates it.
    private func describe(unit: String, path: String, version: String?, transport: any UnitTransport, timeout: Double?) async throws(UnitLoadError) -> LoadedUnit {
        func refuse(_ reason: String) -> UnitLoadError { UnitLoadError(unit: unit, path: path, reason: reason) }
        let host = hearth_unit_abi_version()
        let probe = LoadedUnit(name: unit, path: path, manifest: FunctionManifest(unit: unit, abiVersion: 0, functions: []), version: version, transport: transport)
        let manifest: FunctionManifest
        let answer: Result<FunctionManifest, RemoteError> = await withCheckedContinuation { continuation in
            let once = Once()
            @Sendable func finish(_ result: Result<FunctionManifest, RemoteError>) {
                if once.first() { continuation.resume(returning: result) }
            }
            probe.request(Boundary.Describe(), invocation: 0) { finish($0) }
            if let timeout {
                // A library that hangs while loading (a static initializer waiting forever) is refused.
                DispatchQueue.global().asyncAfter(deadline: .now() + timeout) {
                    finish(.failure(RemoteError(code: .deadlineExceeded, message: "the worker did not load and describe the unit within \(timeout) s")))
                }
            }
        }
        switch answer {
        case .success(let m): manifest = m
        case .failure(let error) where error.isWorkerDeath:
            throw refuse("the worker died while loading the unit: \(error.debug ?? "")")
        case .failure(let error): throw refuse("invalid manifest: \(error.message)\(error.debug.map { " (\($0))" } ?? "")")
        }
        guard manifest.unit == unit else {
            throw refuse("the library declares unit '\(manifest.unit)', not '\(unit)'")
        }
        guard manifest.abiVersion == Int(host) else {
            throw refuse("manifest ABI version \(manifest.abiVersion), host speaks \(host)")
        }
        let problems = manifest.problems(validateSchedule: validateSchedule)
        guard problems.isEmpty else { throw refuse(problems.joined(separator: "; ")) }
        return LoadedUnit(name: unit, path: path, manifest: manifest, version: version, transport: transport)
    }
}

/// True for the first caller of `first()` only.
final class Once: Sendable {
    private let done = Atomic<Bool>(false)
    func first() -> Bool { !done.exchange(true, ordering: .acquiringAndReleasing) }
}
