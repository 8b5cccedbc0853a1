import HearthModel
import HearthUnitABI
import Synchronization

/// The unit's side of the boundary: sends service requests to the host through the C table the
/// host handed over at load, and turns replies into values or errors.
final class HostConnection: Sendable {
    /// Set once at load and never freed by the host (see HearthUnitABI.h).
    nonisolated(unsafe) let services: UnsafePointer<hearth_host_services>

    init(services: UnsafePointer<hearth_host_services>) {
        self.services = services
    }

    /// Sends one frame and waits for the reply frame.
    func send(_ frame: [UInt8]) async -> [UInt8] {
        await withCheckedContinuation { (continuation: CheckedContinuation<[UInt8], Never>) in
            let box = Unmanaged.passRetained(ReplyBox(continuation))
            frame.withUnsafeBufferPointer { p in
                services.pointee.call(services.pointee.context, p.baseAddress!, p.count, box.toOpaque(), replyTrampoline)
            }
        }
    }

    /// Sends a frame the host answers before returning (the clock, logs, secrets); nil if it did not.
    func sendSynchronously(_ frame: [UInt8]) -> [UInt8]? {
        let box = SyncReplyBox()
        let unmanaged = Unmanaged.passRetained(box)
        frame.withUnsafeBufferPointer { p in
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
    ReplyDelivery.deliver { box.continuation.resume(returning: copy) }
}

let syncReplyTrampoline: hearth_reply_fn = { context, bytes, length in
    let box = Unmanaged<SyncReplyBox>.fromOpaque(context!).takeRetainedValue()
    let copy = bytes.map { Array(UnsafeBufferPointer(start: $0, count: length)) } ?? []
    box.bytes.withLock { $0 = copy }
}

/// A connection bound to one invocation: every request it sends carries the invocation's id, so the
/// host can attribute logs, stream chunks and transactions, and refuse calls from an invocation that
/// has ended. Typed clients (`Documents`, `TaskQueues`, `Auth`…) are built on it; a unit can also
/// send any `Boundary.Request` itself.
public struct HostChannel: Sendable {
    let connection: HostConnection
    /// The invocation every request on this channel is attributed to (`FunctionContext.invocationID`).
    public let invocationID: UInt64
    /// The host clock's reading when the invocation started.
    let startTime: Timestamp
    /// The invocation's random generator (seeded by the host, so replays repeat auto ids).
    let random: InvocationRandom

    /// Sends `request` and returns its reply, or throws the `HTTPSError` the host answered with
    /// (marked `raisedByHearth`: a function that lets an internal one through answers its caller
    /// `INTERNAL`). The host refuses a request from an invocation that has ended (finished, timed
    /// out or cancelled) with `cancelled`, and one it has no service for with `unimplemented`.
    ///
    /// ```swift
    /// let roots: [CollectionPath] = try await req.context.host.call(Boundary.ListCollections(parent: nil))
    /// ```
    public func call<R: Boundary.Request>(_ request: R) async throws -> R.Reply {
        let frame = Boundary.frame(Boundary.Header(kind: .request, operation: R.operation, invocation: invocationID), request)
        return try HostChannel.unwrap(Boundary.reply(R.Reply.self, from: await connection.send(frame)))
    }

    /// Sends a request the host answers before the call returns (the clock, logs, secrets);
    /// throws `internal` when the host did not answer in time (as for an asynchronous service).
    ///
    /// ```swift
    /// let now = try req.context.host.callSynchronously(Boundary.ClockNow())
    /// ```
    public func callSynchronously<R: Boundary.Request>(_ request: R) throws -> R.Reply {
        let frame = Boundary.frame(Boundary.Header(kind: .request, operation: R.operation, invocation: invocationID), request)
        guard let reply = connection.sendSynchronously(frame) else {
            throw HTTPSError(.internal, "the host did not answer '\(R.operation)' synchronously").fromHearth()
        }
        return try HostChannel.unwrap(Boundary.reply(R.Reply.self, from: reply))
    }

    static func unwrap<T>(_ result: Result<T, RemoteError>) throws(HTTPSError) -> T {
        switch result {
        case .success(let value): return value
        case .failure(let error): throw error.httpsError.fromHearth()
        }
    }
}

/// An invocation's random numbers: xoshiro256** seeded from the host's 128-bit seed.
final class InvocationRandom: Sendable {
    private let generator: Mutex<Xoshiro256>

    init(seed: RandomSeed) { generator = Mutex(Xoshiro256(seed: seed)) }

    /// A 20-character auto id (Firestore's shape).
    func autoID() -> String { generator.withLock { AutoID.make(using: &$0) } }
}
