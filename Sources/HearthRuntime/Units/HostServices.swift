import HearthModel
import HearthStore
import HearthUnitABI
import Synchronization

/// Who is calling a host service: the unit and the invocation its frame names.
public struct ServiceCaller: Sendable {
    public let unit: String
    public let invocation: UInt64
}

/// The services the host offers units, one typed handler per `Boundary.Operation`. Built before any
/// unit loads, then immutable. Each handler decodes its request from the frame, runs, and encodes
/// its reply (or the error it threw as a failure frame); synchronous ones answer before the unit's
/// call returns (the clock, logs, secrets).
public final class HostServices: Sendable {
    typealias FrameHandler = @Sendable (_ caller: ServiceCaller, _ header: Boundary.Header, _ body: UnsafeRawBufferPointer, _ reply: HostReplyTarget) -> Void

    /// Collects handlers; `HostServices(builder)` freezes them.
    public struct Builder {
        var handlers: [Boundary.Operation: FrameHandler] = [:]
        let tasks: ServiceTasks
        /// Whether an invocation is running in a unit (a unit may act only for its own invocations).
        let isInFlight: @Sendable (_ invocation: UInt64, _ unit: String) -> Bool
        let recording: RecordingSwitch

        public init(tasks: ServiceTasks, isInFlight: @escaping @Sendable (UInt64, String) -> Bool = { _, _ in true }, recording: RecordingSwitch = RecordingSwitch()) {
            self.tasks = tasks
            self.isInFlight = isInFlight
            self.recording = recording
        }

        /// Any operation, answered by `handler` from the frame itself (a replay answers every
        /// service from a recording).
        mutating func raw(_ operation: Boundary.Operation, _ handler: @escaping FrameHandler) {
            handlers[operation] = handler
        }

        /// A service answered before the call returns (`R.operation.isSynchronous`).
        public mutating func answer<R: Boundary.Request>(_ type: R.Type, _ body: @escaping @Sendable (ServiceCaller, R) throws -> R.Reply) {
            precondition(R.operation.isSynchronous, "\(R.operation) is not a synchronous operation")
            handlers[R.operation] = { caller, header, bytes, reply in
                reply.send(HostServices.run(header) { () throws -> R.Reply in try body(caller, try HostServices.decode(R.self, bytes)) })
            }
        }

        /// A service answered later, in a task attributed to the invocation (cancelled with it). An
        /// invocation that is no longer running (finished, timed out or cancelled) is refused:
        /// a handler that outlives its timeout must not commit while its retry runs.
        public mutating func serve<R: Boundary.Request>(_ type: R.Type, _ body: @escaping @Sendable (ServiceCaller, R) async throws -> R.Reply) {
            precondition(!R.operation.isSynchronous && !R.operation.isSentByHost, "\(R.operation) is not an asynchronous host service")
            handlers[R.operation] = taskHandler(R.self, body)
        }

        /// A service started on the thread that read the request and answered through `done`,
        /// wherever the work finishes (a commit: on the store's writer thread, right after the
        /// COMMIT): no task, and no hop back to the pool to send the reply. The reply never blocks
        /// that thread on a full socket. While recording, it runs as `serve` does, in a task.
        public mutating func complete<R: Boundary.Request>(_ type: R.Type, _ body: @escaping @Sendable (ServiceCaller, R, _ done: @escaping @Sendable (Result<R.Reply, any Error>) -> Void) throws -> Void) {
            precondition(!R.operation.isSynchronous && !R.operation.isSentByHost, "\(R.operation) is not an asynchronous host service")
            let inTask = taskHandler(R.self) { caller, request in
                try await withCheckedThrowingContinuation { continuation in
                    do { try body(caller, request) { continuation.resume(with: $0) } } catch { continuation.resume(throwing: error) }
                }
            }
            let (isInFlight, recording) = (self.isInFlight, self.recording)
            handlers[R.operation] = { caller, header, bytes, reply in
                if recording.recorder != nil { return inTask(caller, header, bytes, reply) }
                guard let request = HostServices.admit(R.self, caller, header, bytes, reply, isInFlight: isInFlight) else { return }
                do {
                    try body(caller, request) { result in
                        let frame: [UInt8]
                        switch result {
                        case .success(let answer): frame = Boundary.frame(header.answer(.reply), answer)
                        case .failure(let error): frame = Boundary.failure(header, RemoteError(wrapping: error))
                        }
                        FrameSocket.$sendsWithoutBlocking.withValue(true) { reply.send(frame) }
                    }
                } catch {
                    reply.send(Boundary.failure(header, RemoteError(wrapping: error)))
                }
            }
        }

        /// `serve`'s handler: `body` in a task attributed to the invocation.
        private func taskHandler<R: Boundary.Request>(_ type: R.Type, _ body: @escaping @Sendable (ServiceCaller, R) async throws -> R.Reply) -> FrameHandler {
            let (tasks, isInFlight, recording) = (self.tasks, self.isInFlight, self.recording)
            return { caller, header, bytes, reply in
                guard let request = HostServices.admit(R.self, caller, header, bytes, reply, isInFlight: isInFlight) else { return }
                // Writes go from here straight to the writer's queue: the task starts on the thread
                // that read the request (a worker's socket reader) and first suspends there.
                tasks.start(invocation: caller.invocation, inline: HostServices.startsInline(R.operation)) {
                    @Sendable func run() async {
                        do { reply.send(Boundary.frame(header.answer(.reply), try await body(caller, request))) } catch {
                            reply.send(Boundary.failure(header, RemoteError(wrapping: error)))
                        }
                    }
                    // While recording, work done for a unit is marked as such: not an input from
                    // outside (see `RecordedUsers`).
                    if recording.recorder != nil {
                        await RecordingOrigin.$invocation.withValue(caller.invocation) { await run() }
                    } else {
                        await run()
                    }
                }
            }
        }
    }

    /// The request in `bytes`, or nil once a failure is sent: the invocation is no longer running
    /// (finished, timed out or cancelled: a handler that outlives its timeout must not commit while
    /// its retry runs), or the request does not decode.
    static func admit<R: Boundary.Request>(_ type: R.Type, _ caller: ServiceCaller, _ header: Boundary.Header, _ bytes: UnsafeRawBufferPointer,
                                           _ reply: HostReplyTarget, isInFlight: (UInt64, String) -> Bool) -> R? {
        guard isInFlight(caller.invocation, caller.unit) else {
            reply.send(Boundary.failure(header, RemoteError(code: .cancelled,
                message: "\(header.operation): invocation \(Invoker.format(caller.invocation)) is no longer running (it finished, timed out or was cancelled)")))
            return nil
        }
        do { return try HostServices.decode(R.self, bytes) } catch {
            reply.send(Boundary.failure(header, RemoteError(wrapping: error)))
            return nil
        }
    }

    /// Services whose work before their first suspension is decoding the request and handing it
    /// to the writer: started inline (see `ServiceTasks.start`). Reads run SQLite on the spot, and
    /// stay in a task on the pool, so a long query never holds up a worker's socket reader. A
    /// transaction's commit, which goes through the store's async commit, is handed to the writer's
    /// thread too: a worker's socket reader never commits itself (`CommitPlacement`).
    static func startsInline(_ operation: Boundary.Operation) -> Bool {
        switch operation {
        case .commit, .commitTransaction, .enqueueTasks: return true
        default: return false
        }
    }

    let handlers: [Boundary.Operation: FrameHandler]
    let tasks: ServiceTasks
    let recording: RecordingSwitch
    /// C tables handed to units, one per unit, kept for the life of the process.
    private let tables = Mutex<[String: UnsafeMutablePointer<hearth_host_services>]>([:])

    public init(_ builder: Builder) {
        handlers = builder.handlers
        tasks = builder.tasks
        recording = builder.recording
    }

    /// The operations served, by name.
    public var operations: [String] { handlers.keys.map(\.name).sorted() }

    static func decode<R: WireDecodable>(_ type: R.Type, _ bytes: UnsafeRawBufferPointer) throws(HTTPSError) -> R {
        do { return try Boundary.body(R.self, of: bytes) } catch {
            switch error {
            case .invalid(let e): throw e
            case .malformed: throw HTTPSError(.internal, "\(error)").fromHearth()
            }
        }
    }

    static func run<T: WireEncodable>(_ header: Boundary.Header, _ body: () throws -> T) -> [UInt8] {
        do { return Boundary.frame(header.answer(.reply), try body()) } catch { return Boundary.failure(header, RemoteError(wrapping: error)) }
    }

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

    /// Why a unit's request is refused for its size, or nil; the same in-process as in a worker.
    /// - Any request past what a host reads from a worker (`WorkerProcess.maxWorkerFrame`): a
    ///   worker refuses it before sending, so an in-process unit gets the same answer here. It is
    ///   not decoded.
    /// - A commit whose writes take more than 10 MiB, as Firestore bounds the Admin SDKs' commits.
    ///   Its tasks' payloads do not count (Firestore has no enqueue in a commit), so a frame past
    ///   the bound is read as far as the end of its writes, which come first.
    static func sizeRefusal(_ header: Boundary.Header, _ bytes: UnsafeRawBufferPointer) -> String? {
        guard bytes.count > DocumentLimits.maxRequestBytes else { return nil }
        if bytes.count > WorkerProcess.maxWorkerFrame { return largeRequest(bytes.count) }
        guard header.operation == .commit || header.operation == .commitTransaction else { return nil }
        var reader = WireReader(UnsafeRawBufferPointer(rebasing: bytes[Boundary.headerSize...]))
        if header.operation == .commitTransaction { guard (try? reader.varint()) != nil else { return nil } }
        let start = reader.offset
        guard (try? reader.list(DocumentWrite.self)) != nil else { return nil }  // malformed: the handler says so
        return reader.offset - start > DocumentLimits.maxRequestBytes ? DocumentLimits.requestTooLarge : nil
    }

    static func largeRequest(_ count: Int) -> String {
        "a request of \(count) bytes to the host is larger than \(WorkerProcess.maxWorkerFrame) bytes"
    }

    func handle(unit: String, bytes: UnsafeRawBufferPointer, reply: HostReplyTarget) {
        let header: Boundary.Header
        do { header = try Boundary.header(bytes) } catch {
            reply.send(Boundary.failure(Boundary.Header(kind: .failure, operation: .log, invocation: 0), error.remoteError))
            return
        }
        guard header.kind == .request, let handler = handlers[header.operation] else {
            reply.send(Boundary.failure(header, RemoteError(code: .unimplemented, message: "the host has no service '\(header.operation)'")))
            return
        }
        if let refusal = HostServices.sizeRefusal(header, bytes) {
            reply.send(Boundary.failure(header, RemoteError(code: .invalidArgument, message: refusal)))
            return
        }
        var reply = reply
        if let recorder = recording.recorder, let index = recorder.call(header.invocation, header, body: bytes) {
            reply.tap = { frame in recorder.reply(header.invocation, index, frame: frame) }
        }
        handler(ServiceCaller(unit: unit, invocation: header.invocation), header, bytes, reply)
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
    /// Sees the reply first (a recording).
    var tap: (@Sendable ([UInt8]) -> Void)?

    init(context: UnsafeMutableRawPointer?, reply: hearth_reply_fn) {
        self.context = context
        self.reply = reply
    }

    func send(_ bytes: [UInt8]) {
        tap?(bytes)
        bytes.withUnsafeBufferPointer { reply(context, $0.baseAddress, $0.count) }
    }
}

let hostCallTrampoline: @convention(c) (UnsafeMutableRawPointer?, UnsafePointer<UInt8>, Int, UnsafeMutableRawPointer?, hearth_reply_fn) -> Void = { context, bytes, length, replyContext, reply in
    let call = Unmanaged<UnitCallContext>.fromOpaque(context!).takeUnretainedValue()
    call.services.handle(unit: call.unit, bytes: UnsafeRawBufferPointer(start: bytes, count: length),
                         reply: HostReplyTarget(context: replyContext, reply: reply))
}
