import HearthModel
import HearthUnitABI
import Synchronization

/// One service request from a unit.
public struct HostRequest: Sendable {
    public let unit: String
    public let invocation: UInt64
    public let op: String
    public let arguments: [String: Value]

    /// A required string argument, or `invalid-argument` naming it.
    public func string(_ key: String) throws(HTTPSError) -> String {
        guard let s = arguments[key]?.stringValue else { throw .invalidArgument("\(op): missing string argument '\(key)'") }
        return s
    }
}

/// The services the host offers units, by operation name. Built before any unit loads, then
/// immutable; synchronous handlers answer before the unit's call returns (clock, logs).
public final class HostServices: Sendable {
    public typealias AsyncHandler = @Sendable (HostRequest) async throws -> Value
    public typealias SyncHandler = @Sendable (HostRequest) throws -> Value

    let asyncHandlers: [String: AsyncHandler]
    let syncHandlers: [String: SyncHandler]
    let tasks: ServiceTasks
    /// Whether an invocation is still running (not finished, timed out or cancelled). The
    /// asynchronous services (documents, transactions, tasks, auth) serve only those: a handler
    /// that outlives its timeout must not commit while its retry runs. The clock and logs stay open.
    let isInFlight: @Sendable (UInt64) -> Bool
    /// C tables handed to units, one per unit, kept for the life of the process.
    private let tables = Mutex<[String: UnsafeMutablePointer<hearth_host_services>]>([:])

    public init(async asyncHandlers: [String: AsyncHandler], sync syncHandlers: [String: SyncHandler], tasks: ServiceTasks,
                isInFlight: @escaping @Sendable (UInt64) -> Bool = { _ in true }) {
        self.asyncHandlers = asyncHandlers
        self.syncHandlers = syncHandlers
        self.tasks = tasks
        self.isInFlight = isInFlight
    }

    public var operations: [String] { (Array(asyncHandlers.keys) + Array(syncHandlers.keys)).sorted() }

    /// The C table for `unit`; its context identifies the unit on every call.
    func makeCTable(unit: String) -> UnsafeMutablePointer<hearth_host_services> {
        tables.withLock { tables in
            if let existing = tables[unit] { return existing }
            let context = Unmanaged.passRetained(UnitCallContext(unit: unit, services: self)).toOpaque()
            let table = UnsafeMutablePointer<hearth_host_services>.allocate(capacity: 1)
            table.initialize(to: hearth_host_services(abi_version: hearth_unit_abi_version(), context: context, call: hostCallTrampoline))
            tables[unit] = table
            return table
        }
    }

    func handle(unit: String, bytes: UnsafeBufferPointer<UInt8>, reply: HostReplyTarget) {
        let message: [String: Value]
        do { message = try UnitProtocol.decode(bytes) } catch {
            reply.send(UnitProtocol.failure(RemoteError(error)))
            return
        }
        let op = message["op"]?.stringValue ?? ""
        let request = HostRequest(unit: unit, invocation: UInt64(bitPattern: message["invocation"]?.intValue ?? 0), op: op, arguments: message)
        if let sync = syncHandlers[op] {
            do { reply.send(UnitProtocol.result(try sync(request))) } catch { reply.send(UnitProtocol.failure(RemoteError(wrapping: error))) }
        } else if let handler = asyncHandlers[op] {
            guard isInFlight(request.invocation) else {
                reply.send(UnitProtocol.failure(RemoteError(code: .cancelled,
                    message: "\(op): invocation \(Invoker.format(request.invocation)) is no longer running (it finished, timed out or was cancelled)")))
                return
            }
            tasks.start(invocation: request.invocation) {
                do { reply.send(UnitProtocol.result(try await handler(request))) } catch { reply.send(UnitProtocol.failure(RemoteError(wrapping: error))) }
            }
        } else {
            reply.send(UnitProtocol.failure(RemoteError(code: .unimplemented, message: "the host has no service '\(op)'")))
        }
    }
}

final class UnitCallContext: Sendable {
    let unit: String
    let services: HostServices
    init(unit: String, services: HostServices) {
        self.unit = unit
        self.services = services
    }
}

/// Where a reply to a unit goes: the unit's context pointer and callback.
struct HostReplyTarget: @unchecked Sendable {  // the unit keeps the pointer valid until its one reply
    let context: UnsafeMutableRawPointer?
    let reply: hearth_reply_fn

    func send(_ bytes: [UInt8]) {
        bytes.withUnsafeBufferPointer { reply(context, $0.baseAddress, $0.count) }
    }
}

let hostCallTrampoline: @convention(c) (UnsafeMutableRawPointer?, UnsafePointer<UInt8>, Int, UnsafeMutableRawPointer?, hearth_reply_fn) -> Void = { context, bytes, length, replyContext, reply in
    let call = Unmanaged<UnitCallContext>.fromOpaque(context!).takeUnretainedValue()
    call.services.handle(unit: call.unit, bytes: UnsafeBufferPointer(start: bytes, count: length),
                         reply: HostReplyTarget(context: replyContext, reply: reply))
}
