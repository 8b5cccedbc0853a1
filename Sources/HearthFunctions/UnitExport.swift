import HearthModel
import HearthUnitABI
import Synchronization

/// The ABI version this SDK speaks (HEARTH_UNIT_ABI_VERSION).
public let unitABIVersion: UInt32 = hearth_unit_abi_version()

/// Exports a unit through the C boundary. Call it from the unit's one `@_cdecl("hearth_unit_entry")`
/// function; a host calls that once after `dlopen`.
///
/// Each unit library has its own copy of this SDK, so the state below is per unit. Each host that
/// asks gets its own dispatcher (its own connection back); the registry is built once.
public func exportUnit<M: FunctionModule>(_ module: M.Type, host: UnsafeRawPointer) -> UnsafeRawPointer? {
    let services = host.assumingMemoryBound(to: hearth_host_services.self)
    guard services.pointee.abi_version == unitABIVersion else { return nil }
    return UnitDispatcher.install(host: services) {
        var registry = FunctionRegistry(unit: M.unitName)
        M.register(&registry)
        return FunctionRegistry.Frozen(registry)
    }
}

/// Receives the host's messages (describe, invoke, cancel) and runs handlers.
final class UnitDispatcher: Sendable {
    let registry: FunctionRegistry.Frozen
    let connection: HostConnection
    let running = Mutex<[UInt64: Task<Void, Never>]>([:])

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

    static func install(host: UnsafePointer<hearth_host_services>, makeRegistry: () -> FunctionRegistry.Frozen) -> UnsafeRawPointer? {
        // Pointers are not Sendable, so the lock hands back the address.
        let address: UInt = installed.withLock { state in
            if let existing = state.exports[UnsafeRawPointer(host)] { return UInt(bitPattern: existing) }
            let registry = state.registry ?? makeRegistry()
            state.registry = registry
            let dispatcher = UnitDispatcher(registry: registry, connection: HostConnection(services: host))
            let exports = UnsafeMutablePointer<hearth_unit_exports>.allocate(capacity: 1)
            exports.initialize(to: hearth_unit_exports(abi_version: unitABIVersion,
                                                       context: Unmanaged.passRetained(dispatcher).toOpaque(),
                                                       handle: unitHandle))
            state.exports[UnsafeRawPointer(host)] = exports
            return UInt(bitPattern: exports)
        }
        return UnsafeRawPointer(bitPattern: address)
    }

    func handle(_ bytes: UnsafeBufferPointer<UInt8>, reply: ReplyTarget) {
        let message: [String: Value]
        do { message = try UnitProtocol.decode(bytes) } catch {
            reply.send(UnitProtocol.failure(RemoteError(error)))
            return
        }
        switch message["op"]?.stringValue {
        case UnitProtocol.describe?:
            if registry.problems.isEmpty {
                do {
                    reply.send(UnitProtocol.result(try ValueEncoder().encode(registry.manifest)))
                } catch {
                    reply.send(UnitProtocol.failure(RemoteError(code: .internal, message: "cannot encode the manifest: \(error)")))
                }
            } else {
                reply.send(UnitProtocol.failure(RemoteError(code: .failedPrecondition, message: registry.problems.joined(separator: "; "))))
            }
        case UnitProtocol.invoke?:
            invoke(message, reply: reply)
        case UnitProtocol.cancel?:
            if let id = message["id"]?.intValue {
                let task = running.withLock { $0[UInt64(bitPattern: id)] }
                task?.cancel()
            }
            reply.send(UnitProtocol.result(.null))
        default:
            reply.send(UnitProtocol.failure(RemoteError(code: .unimplemented, message: "unknown message '\(message["op"]?.stringValue ?? "?")'")))
        }
    }

    func invoke(_ message: [String: Value], reply: ReplyTarget) {
        guard let name = message["function"]?.stringValue, let function = registry.byName[name] else {
            reply.send(UnitProtocol.failure(RemoteError(code: .notFound, message: "no function '\(message["function"]?.stringValue ?? "")' in unit \(registry.unit)")))
            return
        }
        let id = UInt64(bitPattern: message["id"]?.intValue ?? 0)
        let event = message["event"] ?? .null
        let context = FunctionContext(invocationID: id, functionName: name, connection: connection)
        // The task registers itself before it can finish, so `running` never keeps a finished task.
        running.withLock { running in
            running[id] = Task {
                let bytes: [UInt8]
                do {
                    bytes = UnitProtocol.result(try await function.invoke(event, context))
                } catch {
                    bytes = UnitProtocol.failure(RemoteError(wrapping: error))
                }
                _ = self.running.withLock { $0.removeValue(forKey: id) }
                reply.send(bytes)
            }
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
    dispatcher.handle(UnsafeBufferPointer(start: bytes, count: length), reply: ReplyTarget(context: replyContext, reply: reply))
}
