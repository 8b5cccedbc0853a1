#if canImport(Glibc)
import Glibc
#endif
import Foundation
import CHearthSystem
import HearthModel
import HearthUnitABI
import Synchronization

/// The worker process's side (`hearth worker`): loads one unit library and relays frames between it
/// and the host over the socket the host passed as a descriptor.
///
/// - Frames from the host (describe, invoke, cancel) go to the unit's exports as they are; the
///   unit's replies keep the request's call id, so they go back unchanged.
/// - Service requests from the unit get a call id of this worker's and go to the host; the host's
///   reply is handed to the unit's reply function. Synchronous services (the clock, secrets,
///   params) block the calling thread until the reply is in; a log line is sent without waiting.
/// - When the host closes the socket (it retired this worker, or exited), the worker exits.
public enum WorkerMain {
    public struct Options: Sendable {
        public var unit: String
        public var library: String
        /// The descriptor the host's frames arrive on.
        public var fd: Int32
        /// The descriptor frames go to the host on (nil: `fd` itself, one bidirectional socket).
        public var writeFD: Int32?
        public var memoryLimitMB: Int
        public var openFiles: Int
        /// The boundary version the host speaks (nil: not checked).
        public var boundaryVersion: UInt32?

        public init(unit: String, library: String, fd: Int32 = 3, writeFD: Int32? = nil, memoryLimitMB: Int = 0, openFiles: Int = 0,
                    boundaryVersion: UInt32? = nil) {
            self.boundaryVersion = boundaryVersion
            self.unit = unit
            self.library = library
            self.fd = fd
            self.writeFD = writeFD
            self.memoryLimitMB = memoryLimitMB
            self.openFiles = openFiles
        }
    }

    /// Exit codes the host reads as "the library cannot be loaded" (the reason is on stderr).
    public static let loadFailedStatus: Int32 = 70
    /// The host speaks another boundary version than this `hearth` binary (it was rebuilt under a running host).
    public static let versionMismatchStatus: Int32 = 71

    /// Runs the worker until the host closes the connection; returns the exit status.
    public static func run(_ options: Options) async -> Int32 {
        if let host = options.boundaryVersion, host != Boundary.version {
            FileHandle.standardError.write(Data("hearth worker: the host speaks boundary version \(host), this binary \(Boundary.version)\n".utf8))
            return versionMismatchStatus
        }
        applyLimits(options)
        // Lines reach the host's log as they are written, not when a buffer fills.
        hearth_line_buffer_stdout()
        let connection = WorkerConnection(socket: FrameSocket(fd: options.fd, writeFD: options.writeFD))
        let exports: UnsafePointer<hearth_unit_exports>
        do { exports = try load(options.library, host: connection.table) } catch {
            FileHandle.standardError.write(Data("hearth worker: unit \(options.unit): \(error)\n".utf8))
            return loadFailedStatus
        }
        connection.exports = UInt(bitPattern: exports)
        // Nothing the unit starts inherits the connection.
        _ = fcntl(options.fd, F_SETFD, FD_CLOEXEC)
        if let write = options.writeFD { _ = fcntl(write, F_SETFD, FD_CLOEXEC) }
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            connection.socket.startReading(name: "hearth-worker-\(options.unit)", onFrame: { frame in
                connection.received(frame)
            }, onClose: { _ in done.resume() })
        }
        return 0
    }

    /// Address space and open files, as the host asked (0: leave as is). (The host spawns the
    /// worker with nothing of its own open but the socket and the output pipes.)
    static func applyLimits(_ options: Options) {
        if options.memoryLimitMB > 0 {
            let bytes = rlim_t(options.memoryLimitMB) << 20
            var limit = rlimit(rlim_cur: bytes, rlim_max: bytes)
            _ = setrlimit(__rlimit_resource_t(RLIMIT_AS.rawValue), &limit)
        }
        if options.openFiles > 0 {
            var limit = rlimit(rlim_cur: rlim_t(options.openFiles), rlim_max: rlim_t(options.openFiles))
            _ = setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit)
        }
    }

    struct LoadError: Error, CustomStringConvertible {
        var description: String
    }

    static func load(_ path: String, host: UnsafePointer<hearth_host_services>) throws(LoadError) -> UnsafePointer<hearth_unit_exports> {
        guard let handle = dlopen(path, RTLD_NOW | RTLD_LOCAL) else { throw LoadError(description: "dlopen failed: \(String(cString: dlerror()))") }
        guard let versionSymbol = dlsym(handle, HEARTH_UNIT_VERSION_SYMBOL), let entrySymbol = dlsym(handle, HEARTH_UNIT_ENTRY_SYMBOL) else {
            throw LoadError(description: "the library is not a Hearth unit: it does not export \(HEARTH_UNIT_VERSION_SYMBOL) and \(HEARTH_UNIT_ENTRY_SYMBOL)")
        }
        let built = unsafeBitCast(versionSymbol, to: (@convention(c) () -> UInt32).self)()
        guard built == hearth_unit_abi_version() else {
            throw LoadError(description: "the unit was built against boundary version \(built); this worker speaks version \(hearth_unit_abi_version()) (rebuild the unit with this SDK)")
        }
        guard let exports = unsafeBitCast(entrySymbol, to: hearth_unit_entry_fn.self)(host) else {
            throw LoadError(description: "the unit's entry point returned no exports")
        }
        return exports
    }
}

/// The worker's one connection to its host, and the C host table the unit calls.
final class WorkerConnection: Sendable {
    let socket: FrameSocket
    /// The host table handed to the unit; its context is this connection (kept for the process's life).
    nonisolated(unsafe) let table: UnsafeMutablePointer<hearth_host_services>
    /// The unit's exports (an address, set once before the first frame is read).
    nonisolated(unsafe) var exports: UInt = 0

    /// A service request waiting for the host's reply.
    enum Waiter {
        /// An asynchronous service: the unit's reply function and its context.
        case callback(context: UInt, reply: hearth_reply_fn)
        /// A synchronous one: the unit's thread waits on the semaphore for `bytes`.
        case blocked(SyncWait)
    }

    private struct State: @unchecked Sendable {  // the function pointers are plain C functions
        var nextCall: UInt64 = 1
        var waiting: [UInt64: Waiter] = [:]
    }

    private let state = Mutex(State())

    init(socket: FrameSocket) {
        self.socket = socket
        table = UnsafeMutablePointer<hearth_host_services>.allocate(capacity: 1)
        table.initialize(to: hearth_host_services(abi_version: hearth_unit_abi_version(), context: nil, call: workerCallTrampoline))
        table.pointee.context = Unmanaged.passRetained(self).toOpaque()
    }

    /// A frame from the host: a request for the unit, or the reply to one of the unit's requests.
    func received(_ frame: [UInt8]) {
        guard let header = try? frame.withUnsafeBytes({ try Boundary.header($0) }) else { return }
        if header.kind == .request {
            // The unit starts the handler here, on the reader thread, and runs it until its first
            // suspension (a synchronous service it calls meanwhile is read by `pump`); each service
            // reply delivered here lets the handler waiting for it go on here too (`HandlerExecutor`
            // in HearthFunctions, told by `Boundary.workerProcessVariable`, which the host set).
            guard let exports = UnsafePointer<hearth_unit_exports>(bitPattern: exports) else { return }
            frame.withUnsafeBufferPointer { p in
                exports.pointee.handle(exports.pointee.context, p.baseAddress!, p.count, Unmanaged.passUnretained(socket).toOpaque(), workerReplyTrampoline)
            }
            return
        }
        deliverReply(header, frame)
    }

    /// Hands a reply from the host to the request waiting for it.
    private func deliverReply(_ header: Boundary.Header, _ frame: [UInt8]) {
        guard let waiter = state.withLock({ $0.waiting.removeValue(forKey: header.call) }) else { return }
        switch waiter {
        case .callback(let context, let reply):
            frame.withUnsafeBufferPointer { reply(UnsafeMutableRawPointer(bitPattern: context), $0.baseAddress, $0.count) }
        case .blocked(let wait):
            wait.finish(frame)
        }
    }

    /// The unit calls a host service.
    func call(_ bytes: UnsafeRawBufferPointer, context: UnsafeMutableRawPointer?, reply: hearth_reply_fn) {
        guard let header = try? Boundary.header(bytes) else {
            let failure = Boundary.failure(Boundary.Header(kind: .failure, operation: .log, invocation: 0),
                                           RemoteError(code: .internal, message: "the unit sent a malformed frame"))
            failure.withUnsafeBufferPointer { reply(context, $0.baseAddress, $0.count) }
            return
        }
        // The host reads frames up to `WorkerProcess.maxWorkerFrame` and drops the connection over
        // one larger, failing every invocation in this worker: refuse such a request here instead,
        // with the host's own answer (`HostServices.sizeRefusal`), so in-process units get the same.
        if bytes.count > WorkerProcess.maxWorkerFrame, let refusal = HostServices.sizeRefusal(header, bytes) {
            Boundary.failure(header, RemoteError(code: .invalidArgument, message: refusal)).withUnsafeBufferPointer { reply(context, $0.baseAddress, $0.count) }
            return
        }
        var frame = Array(bytes)
        if header.operation == .log {
            // Nothing waits on a log line's reply: answer at once, let the host's reply go unread.
            socket.send(frame)
            Boundary.frame(header.answer(.reply), Boundary.Empty()).withUnsafeBufferPointer { reply(context, $0.baseAddress, $0.count) }
            return
        }
        let wait = header.operation.isSynchronous ? SyncWait() : nil
        let call = state.withLock { s -> UInt64 in
            let id = s.nextCall
            s.nextCall += 1
            s.waiting[id] = wait.map { .blocked($0) } ?? .callback(context: UInt(bitPattern: context), reply: reply)
            return id
        }
        Boundary.setCall(call, in: &frame)
        if !socket.send(frame) {
            _ = state.withLock { $0.waiting.removeValue(forKey: call) }
            let failure = Boundary.failure(header, RemoteError(code: .unavailable, message: "the host connection is closed"))
            failure.withUnsafeBufferPointer { reply(context, $0.baseAddress, $0.count) }
            return
        }
        if let wait {
            let answer: [UInt8]?
            if socket.onReaderThread {
                // Called from a handler running on the reader thread: read the reply here, handing
                // other replies on and keeping requests for later.
                answer = socket.pump(until: { $0.kind != .request && $0.call == call }, other: { [self] frame in
                    if let h = try? frame.withUnsafeBytes({ try Boundary.header($0) }) { deliverReply(h, frame) }
                }, answered: { wait.poll() })
                _ = state.withLock { $0.waiting.removeValue(forKey: call) }
            } else {
                // The host answers synchronous services at once; a host gone quiet for this long is gone.
                answer = wait.wait(seconds: 60)
                if answer == nil { _ = state.withLock { $0.waiting.removeValue(forKey: call) } }
            }
            let bytes = answer ?? Boundary.failure(header, RemoteError(code: .unavailable, message: "the host did not answer '\(header.operation)'"))
            bytes.withUnsafeBufferPointer { reply(context, $0.baseAddress, $0.count) }
        }
    }
}

/// A reply a blocked thread waits for.
final class SyncWait: Sendable {
    private let semaphore = DispatchSemaphore(value: 0)
    private let bytes = Mutex<[UInt8]?>(nil)

    func finish(_ reply: [UInt8]) {
        bytes.withLock { $0 = reply }
        semaphore.signal()
    }

    func wait(seconds: Double) -> [UInt8]? {
        guard semaphore.wait(timeout: .now() + seconds) == .success else { return nil }
        return bytes.withLock { $0 }
    }

    /// The reply if it is in already (handed over by a nested read), without waiting.
    func poll() -> [UInt8]? { wait(seconds: 0) }
}

/// The host table's `call`: the unit sends a service request.
let workerCallTrampoline: @convention(c) (UnsafeMutableRawPointer?, UnsafePointer<UInt8>, Int, UnsafeMutableRawPointer?, hearth_reply_fn) -> Void = {
    context, bytes, length, replyContext, reply in
    let connection = Unmanaged<WorkerConnection>.fromOpaque(context!).takeUnretainedValue()
    connection.call(UnsafeRawBufferPointer(start: bytes, count: length), context: replyContext, reply: reply)
}

/// The unit answers a host request: the reply (with the request's call id) goes back as it is,
/// unless it is past what the host reads from a worker, which would end the connection and fail
/// every invocation in this worker: that one request fails instead (`WorkerProcess.oversizedReply`).
let workerReplyTrampoline: hearth_reply_fn = { context, bytes, length in
    let socket = Unmanaged<FrameSocket>.fromOpaque(context!).takeUnretainedValue()
    // A null pointer with a length (the ABI allows null) is taken as an empty reply, not trusted.
    let frame = UnsafeRawBufferPointer(start: bytes, count: bytes == nil ? 0 : length)
    if let failure = WorkerProcess.oversizedReply(frame) {
        _ = socket.send(failure)
        return
    }
    socket.send(frame)
}
