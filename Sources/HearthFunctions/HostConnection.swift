import HearthModel
import HearthUnitABI
import Synchronization

/// The unit's side of the boundary: sends service requests to the host through the C table the
/// host handed over at load, and turns replies into values or errors.
public final class HostConnection: Sendable {
    /// Set once at load and never freed by the host (see HearthUnitABI.h).
    nonisolated(unsafe) let services: UnsafePointer<hearth_host_services>

    init(services: UnsafePointer<hearth_host_services>) {
        self.services = services
    }

    /// Sends one message and waits for the reply.
    func send(_ message: [String: Value]) async -> [UInt8] {
        let bytes = UnitProtocol.encode(message)
        return await withCheckedContinuation { (continuation: CheckedContinuation<[UInt8], Never>) in
            let box = Unmanaged.passRetained(ReplyBox(continuation))
            bytes.withUnsafeBufferPointer { p in
                services.pointee.call(services.pointee.context, p.baseAddress!, p.count, box.toOpaque(), replyTrampoline)
            }
        }
    }

    /// Sends a message the host answers before returning (the clock, logs).
    func sendSynchronously(_ message: [String: Value]) -> [UInt8]? {
        let bytes = UnitProtocol.encode(message)
        let box = SyncReplyBox()
        let unmanaged = Unmanaged.passRetained(box)
        bytes.withUnsafeBufferPointer { p in
            services.pointee.call(services.pointee.context, p.baseAddress!, p.count, unmanaged.toOpaque(), syncReplyTrampoline)
        }
        return box.take()
    }
}

final class ReplyBox {
    let continuation: CheckedContinuation<[UInt8], Never>
    init(_ continuation: CheckedContinuation<[UInt8], Never>) { self.continuation = continuation }
}

/// Holds a reply that arrives during the call; `take` returns nil if the host answered later.
final class SyncReplyBox: Sendable {
    let bytes = Mutex<[UInt8]?>(nil)
    func take() -> [UInt8]? { bytes.withLock { $0.take() } }
}

let replyTrampoline: hearth_reply_fn = { context, bytes, length in
    let box = Unmanaged<ReplyBox>.fromOpaque(context!).takeRetainedValue()
    let copy = bytes.map { Array(UnsafeBufferPointer(start: $0, count: length)) } ?? []
    box.continuation.resume(returning: copy)
}

let syncReplyTrampoline: hearth_reply_fn = { context, bytes, length in
    let box = Unmanaged<SyncReplyBox>.fromOpaque(context!).takeRetainedValue()
    let copy = bytes.map { Array(UnsafeBufferPointer(start: $0, count: length)) } ?? []
    box.bytes.withLock { $0 = copy }
}

/// A connection bound to one invocation: every request says which invocation it serves, so the
/// host can attribute logs, stream chunks and transactions.
public struct HostChannel: Sendable {
    let connection: HostConnection
    public let invocationID: UInt64

    /// Calls a host service (`docs.get`, `tasks.enqueue`…) and returns its result, or throws the
    /// `HTTPSError` the host answered with (marked `raisedByHearth`: a function that lets an
    /// internal one through answers its caller `INTERNAL`).
    public func call(_ op: String, _ arguments: [String: Value] = [:]) async throws -> Value {
        var message = arguments
        message["op"] = .string(op)
        message["invocation"] = .int(Int64(bitPattern: invocationID))
        let reply = await connection.send(message)
        return try HostChannel.unwrap(reply)
    }

    /// Calls a service the host answers at once (clock, logs).
    public func callSynchronously(_ op: String, _ arguments: [String: Value] = [:]) throws -> Value {
        var message = arguments
        message["op"] = .string(op)
        message["invocation"] = .int(Int64(bitPattern: invocationID))
        guard let reply = connection.sendSynchronously(message) else {
            throw HTTPSError(.internal, "the host did not answer '\(op)' synchronously").fromHearth()
        }
        return try HostChannel.unwrap(reply)
    }

    static func unwrap(_ reply: [UInt8]) throws -> Value {
        let members = try reply.withUnsafeBufferPointer { (p) throws(HTTPSError) in try UnitProtocol.decode(p) }
        do { return try UnitProtocol.unwrapReply(members) } catch { throw error.httpsError.fromHearth() }
    }
}
