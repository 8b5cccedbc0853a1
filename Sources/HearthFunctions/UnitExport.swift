import HearthModel
import HearthUnitABI
import Synchronization

/// The boundary version this SDK speaks (`HEARTH_UNIT_ABI_VERSION`, `Boundary.version`).
public let unitABIVersion: UInt32 = hearth_unit_abi_version()

/// Exports a unit through the C boundary. The entry point that calls it is generated for every unit
/// by the package's `HearthUnitEntry` build plugin; unit authors never write it.
///
/// Each unit library has its own copy of this SDK, so the state below is per unit. Each host that
/// asks gets its own dispatcher (its own connection back); the registry is built once. The exports
/// always say which version the unit speaks: a host of another version refuses the unit, naming
/// both, and never sends it a message. Returns the exports for `host` (the same ones on every call
/// with the same host table); `M.register` runs once, on the first call from a host of this version.
public func exportUnit<M: FunctionModule>(_ module: M.Type, host: UnsafeRawPointer) -> UnsafeRawPointer? {
    let services = host.assumingMemoryBound(to: hearth_host_services.self)
    // Where handlers go on after a reply is settled now, before any runs (`ReplyDelivery.inWorker`).
    _ = ReplyDelivery.inWorker
    return UnitDispatcher.install(host: services, speaksHostVersion: services.pointee.abi_version == unitABIVersion) {
        var registry = FunctionRegistry(unit: M.name)
        M.register(&registry)
        return FunctionRegistry.Frozen(registry)
    }
}

/// Receives the host's frames (describe, invoke, cancel) and runs handlers.
final class UnitDispatcher: Sendable {
    let registry: FunctionRegistry.Frozen
    let connection: HostConnection
    /// Handlers running, by invocation (for cancellation), and invocations whose handler finished
    /// before its task was registered (a handler that never suspends finishes inside `invoke`).
    struct Running {
        var tasks: [UInt64: Task<Void, Never>] = [:]
        var finishedEarly: Set<UInt64> = []
    }

    let running = Mutex(Running())

    init(registry: FunctionRegistry.Frozen, connection: HostConnection) {
        self.registry = registry
        self.connection = connection
    }

    struct Installed: @unchecked Sendable {  // only read and written under `installed`'s lock
        var registry: FunctionRegistry.Frozen?
        /// Exports per host table, by the table's address. Never freed: hosts keep them for life.
        var exports: [UnsafeRawPointer: UnsafeMutablePointer<hearth_unit_exports>] = [:]
    }

    static let installed = Mutex(Installed())

    static func install(host: UnsafePointer<hearth_host_services>, speaksHostVersion: Bool,
                        makeRegistry: () -> FunctionRegistry.Frozen) -> UnsafeRawPointer? {
        // Pointers are not Sendable, so the lock hands back the address.
        let address: UInt = installed.withLock { state in
            if let existing = state.exports[UnsafeRawPointer(host)] { return UInt(bitPattern: existing) }
            let exports = UnsafeMutablePointer<hearth_unit_exports>.allocate(capacity: 1)
            if speaksHostVersion {
                let registry = state.registry ?? makeRegistry()
                state.registry = registry
                let dispatcher = UnitDispatcher(registry: registry, connection: HostConnection(services: host))
                exports.initialize(to: hearth_unit_exports(abi_version: unitABIVersion,
                                                           context: Unmanaged.passRetained(dispatcher).toOpaque(),
                                                           handle: unitHandle))
            } else {
                // Only the version, for the host's message; a host of another version sends nothing.
                exports.initialize(to: hearth_unit_exports(abi_version: unitABIVersion, context: nil, handle: refusingHandle))
            }
            state.exports[UnsafeRawPointer(host)] = exports
            return UInt(bitPattern: exports)
        }
        return UnsafeRawPointer(bitPattern: address)
    }

    func handle(_ bytes: UnsafeRawBufferPointer, reply: ReplyTarget) {
        let header: Boundary.Header
        do { header = try Boundary.header(bytes) } catch {
            // Without a header there is nothing to answer with but the error itself.
            reply.send(Boundary.failure(Boundary.Header(kind: .failure, operation: .invoke, invocation: 0), error.remoteError))
            return
        }
        switch header.operation {
        case .describe:
            if registry.problems.isEmpty {
                reply.send(Boundary.frame(header.answer(.reply), registry.manifest))
            } else {
                reply.send(Boundary.failure(header, RemoteError(code: .failedPrecondition, message: registry.problems.joined(separator: "; "))))
            }
        case .invoke:
            do throws(WireError) {
                invoke(header, try Boundary.body(Boundary.Invoke.self, of: bytes), reply: reply)
            } catch {
                reply.send(Boundary.failure(header, error.remoteError))
            }
        case .cancel:
            let task = running.withLock { $0.tasks[header.invocation] }
            task?.cancel()
            reply.send(Boundary.frame(header.answer(.reply), Boundary.Empty()))
        default:
            reply.send(Boundary.failure(header, RemoteError(code: .unimplemented, message: "a unit does not answer '\(header.operation)'")))
        }
    }

    func invoke(_ header: Boundary.Header, _ message: Boundary.Invoke, reply: ReplyTarget) {
        guard let function = registry.byName[message.function] else {
            reply.send(Boundary.failure(header, RemoteError(code: .notFound, message: "no function '\(message.function)' in unit \(registry.unit)")))
            return
        }
        let id = header.invocation
        let channel = HostChannel(connection: connection, invocationID: id, startTime: message.now, random: InvocationRandom(seed: message.seed))
        let context = FunctionContext(functionName: message.function, channel: channel)
        let event = message.event
        // The handler starts on this thread and runs until it first suspends (a handler that never
        // does, like most callables, answers without a hop to another thread); in a worker it goes
        // on where each of its service replies arrives (`HandlerExecutor`).
        let task = ReplyDelivery.starting { Task.immediate(executorPreference: ReplyDelivery.handlerExecutor) {
            let bytes: [UInt8]
            do {
                bytes = Boundary.frame(header.answer(.reply), try await function.invoke(event, context))
            } catch {
                bytes = Boundary.failure(header, RemoteError(wrapping: error))
            }
            self.running.withLock { r in if r.tasks.removeValue(forKey: id) == nil { r.finishedEarly.insert(id) } }
            reply.send(bytes)
        } }
        running.withLock { r in
            if r.finishedEarly.remove(id) == nil { r.tasks[id] = task }
        }
    }
}

extension FunctionRegistry {
    /// The registry after registration, for lookup by name.
    struct Frozen: Sendable {
        let unit: String
        let byName: [String: RegisteredFunction]
        let manifest: FunctionManifest
        let problems: [String]

        init(_ registry: FunctionRegistry) {
            unit = registry.unit
            byName = Dictionary(registry.functions.map { ($0.spec.name, $0) }, uniquingKeysWith: { a, _ in a })
            manifest = registry.manifest
            problems = registry.problems
        }
    }
}

/// Where a reply goes: the requester's context pointer and callback, carried across tasks.
struct ReplyTarget: @unchecked Sendable {  // the host guarantees the pointer stays valid until the one reply
    let context: UnsafeMutableRawPointer?
    let reply: hearth_reply_fn

    func send(_ bytes: [UInt8]) {
        bytes.withUnsafeBufferPointer { reply(context, $0.baseAddress, $0.count) }
    }
}

let unitHandle: @convention(c) (UnsafeMutableRawPointer?, UnsafePointer<UInt8>, Int, UnsafeMutableRawPointer?, hearth_reply_fn) -> Void = {
    unitContext, bytes, length, replyContext, reply in
    let dispatcher = Unmanaged<UnitDispatcher>.fromOpaque(unitContext!).takeUnretainedValue()
    dispatcher.handle(UnsafeRawBufferPointer(start: bytes, count: length), reply: ReplyTarget(context: replyContext, reply: reply))
}

/// The handler of exports given to a host of another version: refuses everything.
let refusingHandle: @convention(c) (UnsafeMutableRawPointer?, UnsafePointer<UInt8>, Int, UnsafeMutableRawPointer?, hearth_reply_fn) -> Void = {
    _, _, _, replyContext, reply in
    let error = RemoteError(code: .failedPrecondition, message: "this unit speaks boundary version \(unitABIVersion) and refuses a host of another version")
    ReplyTarget(context: replyContext, reply: reply).send(Boundary.failure(Boundary.Header(kind: .failure, operation: .describe, invocation: 0), error))
}
