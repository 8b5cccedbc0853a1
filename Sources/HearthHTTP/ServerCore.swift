#if canImport(Glibc)
import Glibc
#endif
import CEpollBatches
import CMicroHTTPD
import HearthModel
import Synchronization

/// A libmicrohttpd connection handle. The library keeps it valid from the first access-handler call
/// until the completion callback, which is the whole time Hearth holds it; it is only ever passed
/// back to libmicrohttpd (suspend, resume, queue), which is thread-safe for those calls.
struct ConnectionHandle: @unchecked Sendable {
    let pointer: OpaquePointer
}

/// One request on a connection, from its URI to its completion. libmicrohttpd threads and the
/// handler's task both touch it, always under `state`'s lock.
final class RequestState: Sendable {
    enum Phase {
        case receiving
        /// The handler is running (its task is recorded once created, for cancellation).
        case running(Task<Void, Never>?)
        case ready(HTTPServerResponse)
        case responded
    }

    struct Inner {
        var method = ""
        var headers = HTTPHeaders()
        var headersRead = false
        var body: [UInt8] = []
        var tooLarge = false
        /// The body would take the server past its budget of buffered bytes: discarded, then 503.
        var overBudget = false
        /// Bytes of the server's budget this request holds (its declared length, or what arrived).
        var reserved = 0
        /// What the head check answered, for a request without a body (sent once the request ends,
        /// so the connection stays alive).
        var headAnswer: HTTPServerResponse?
        /// What the head handler noted, for the request's handlers.
        var note: (any AnyObject & Sendable)?
        var phase = Phase.receiving
        /// Set while the connection is suspended waiting for the handler (or for stream data).
        var suspended = false
        var connection: ConnectionHandle?
        var counted = false
        var deadline: ContinuousClock.Instant?
        var stream: StreamState?
    }

    let rawURI: String
    let state = Mutex(Inner())

    init(rawURI: String) { self.rawURI = rawURI }

    /// Stores the handler's answer and resumes the connection so libmicrohttpd asks for it.
    /// Returns false when the request was already answered (timed out, shut down).
    @discardableResult
    func finish(with response: HTTPServerResponse) -> Bool {
        let (answered, resume) = state.withLock { s -> (Bool, ConnectionHandle?) in
            guard case .running = s.phase else { return (false, nil) }
            s.phase = .ready(response)
            guard s.suspended else { return (true, nil) }
            s.suspended = false
            return (true, s.connection)
        }
        if let resume { resumeConnection(resume.pointer) }
        return answered
    }

    /// Answers a running handler with `response` (a timeout, a shutdown) and cancels its task;
    /// nothing happens to a request already answered.
    func finishRunning(with response: HTTPServerResponse) {
        let task: Task<Void, Never>? = state.withLock { s in
            if case .running(let t) = s.phase { return t }
            return nil
        }
        if finish(with: response) { task?.cancel() }
    }
}

/// A streamed response's chunks between the producer task and libmicrohttpd's content reader.
final class StreamState: Sendable, HTTPResponseWriter {
    struct Inner {
        var pending: [UInt8] = []
        var finished = false
        var closed = false
        var suspended = false
    }

    let state = Mutex(Inner())
    let connection: ConnectionHandle
    unowned let request: RequestState

    init(connection: ConnectionHandle, request: RequestState) {
        self.connection = connection
        self.request = request
    }

    func write(_ bytes: [UInt8]) async -> Bool {
        let (open, resume) = state.withLock { s -> (Bool, Bool) in
            guard !s.closed && !s.finished else { return (false, false) }
            s.pending += bytes
            let resume = s.suspended
            s.suspended = false
            return (true, resume)
        }
        if resume { resumeConnection(connection.pointer) }
        return open
    }

    func end() {
        let resume = state.withLock { s -> Bool in
            s.finished = true
            let resume = s.suspended
            s.suspended = false
            return resume
        }
        if resume { resumeConnection(connection.pointer) }
    }

    /// libmicrohttpd asks for the next bytes: give what is there, end the stream, or suspend until
    /// the producer writes (the pattern microhttpd.h prescribes for "no data yet").
    func read(into buffer: UnsafeMutablePointer<CChar>, max: Int) -> Int {
        state.withLock { s -> Int in
            if !s.pending.isEmpty {
                let n = min(max, s.pending.count)
                s.pending.withUnsafeBytes { p in
                    UnsafeMutableRawPointer(buffer).copyMemory(from: p.baseAddress!, byteCount: n)
                }
                s.pending.removeFirst(n)
                return n
            }
            if s.finished || s.closed { return MHD_CONTENT_READER_END_OF_STREAM }
            s.suspended = true
            suspendConnection(connection.pointer)
            return 0
        }
    }
}

/// The state shared by every callback of one server.
final class ServerCore: Sendable {
    let configuration: HTTPServer.Configuration
    let handler: HTTPServer.Handler
    let immediate: HTTPServer.ImmediateHandler?
    let head: HTTPServer.HeadHandler?
    let inFlight = Atomic<Int>(0)
    let connections: ConnectionGuard
    /// Body bytes held or promised (declared lengths) across all requests.
    let buffered = Atomic<Int>(0)
    private let accepting = Atomic<Bool>(true)
    /// Requests being handled or streamed, for timeouts and shutdown.
    private let live = LiveRequests()
    /// Every 50 ms: handlers past their timeout, connections past their deadlines.
    private let watchdog = Mutex<RepeatingTimer?>(nil)

    init(configuration: HTTPServer.Configuration, head: HTTPServer.HeadHandler?, immediate: HTTPServer.ImmediateHandler?,
         handler: @escaping HTTPServer.Handler) {
        self.configuration = configuration
        self.handler = handler
        self.immediate = immediate
        self.head = head
        connections = ConnectionGuard(limits: .init(
            headTimeout: configuration.headTimeout, idleTimeout: .seconds(configuration.connectionTimeoutSeconds),
            readTimeout: configuration.readTimeout, pressureHeadTimeout: configuration.pressureHeadTimeout,
            softLimit: configuration.maxConnections))
    }

    var isAccepting: Bool { accepting.load(ordering: .relaxed) }

    func stopAccepting() {
        accepting.store(false, ordering: .relaxed)
    }

    func startWatchdog() {
        watchdog.withLock { timer in
            guard timer == nil else { return }
            // The timer holds what it sweeps, not the core: a weak reference to the core would give
            // it a side table, and every retain and release of it (several per request) would take
            // the runtime's slow path. The core owns the timer, and the timer stops when it goes.
            timer = RepeatingTimer(every: .milliseconds(50)) { [live, connections, timeout = configuration.requestTimeout] in
                live.expire(timeout: timeout)
                connections.sweep()
            }
        }
    }

    /// Stops the watchdog; returns once its tick in progress, if any, has finished (outside the
    /// lock: the wait runs a tick's cancellations of handler tasks).
    func stopWatchdog() { watchdog.withLock { $0.take() }?.cancel() }

    /// Takes `bytes` of the buffering budget; false (nothing taken) when that would pass the limit.
    func reserve(_ bytes: Int) -> Bool {
        guard bytes > 0 else { return true }
        while true {
            let current = buffered.load(ordering: .relaxed)
            guard current <= configuration.maxBufferedBytes - bytes else { return false }
            if buffered.compareExchange(expected: current, desired: current + bytes, ordering: .relaxed).exchanged { return true }
        }
    }

    func release(_ bytes: Int) {
        if bytes > 0 { buffered.wrappingSubtract(bytes, ordering: .relaxed) }
    }

    // MARK: running handlers

    func start(_ request: RequestState, connection: ConnectionHandle, _ input: HTTPServerRequest) {
        live.insert(request)
        inFlight.wrappingAdd(1, ordering: .relaxed)
        let handler = self.handler
        request.state.withLock { s in
            s.connection = connection
            s.counted = true
            s.suspended = true
            s.deadline = ContinuousClock.now + configuration.requestTimeout
            s.phase = .running(nil)
            suspendConnection(connection.pointer)
        }
        if let immediate, let response = immediate(input) {
            Self.answer(request, with: response)
            return
        }
        let task = Task { Self.answer(request, with: await handler(input)) }
        request.state.withLock { s in
            // The handler may already have answered (finish moved the phase on); then there is
            // nothing left to cancel.
            if case .running(nil) = s.phase { s.phase = .running(task) }
        }
    }

    /// A handler's response: sent now, or, for a `later` one, when whoever has the answer calls
    /// back, on its own thread (see `HTTPServerResponse.later`).
    private static func answer(_ request: RequestState, with response: HTTPServerResponse) {
        if case .later(let start) = response.body {
            start { request.finish(with: $0.resolved) }
        } else {
            request.finish(with: response)
        }
    }

    /// At shutdown: cancel running handlers (answering 503) and end streams, so that every
    /// suspended connection is resumed before the daemon stops.
    func abandonInFlight() {
        for request in live.all {
            request.finishRunning(with: .error(.unavailable, "the server is shutting down"))
            request.state.withLock { $0.stream }?.end()
        }
    }

    func completed(_ request: RequestState) {
        live.remove(request)
        let (counted, stream, reserved) = request.state.withLock { s -> (Bool, StreamState?, Int) in
            defer { s.counted = false; s.reserved = 0; s.body = [] }
            s.phase = .responded
            return (s.counted, s.stream, s.reserved)
        }
        release(reserved)
        stream?.state.withLock { $0.closed = true }
        if counted { inFlight.wrappingSubtract(1, ordering: .relaxed) }
    }

    // MARK: responses

    /// Framing headers libmicrohttpd writes itself; a handler's own are dropped (compared without
    /// case, in place: this runs for every header of every response).
    static let skippedHeaders = ["content-length", "transfer-encoding", "connection"]

    /// Hands a response to libmicrohttpd (a stream starts its producer).
    func queue(_ response: HTTPServerResponse, on connection: ConnectionHandle, for request: RequestState) -> MHD_Result {
        let mhd: OpaquePointer?
        var producer: (@Sendable (HTTPResponseWriter) async -> Void)?
        var stream: StreamState?
        switch response.body {
        case .later:
            // `start` resolves every later response before it is stored: never reached.
            return queue(.error(.internal, "a deferred response reached the connection unresolved"), on: connection, for: request)
        case .bytes(let bytes):
            mhd = bytes.withUnsafeBytes { p in
                MHD_create_response_from_buffer(p.count, UnsafeMutableRawPointer(mutating: p.baseAddress), MHD_ResponseMemoryMode.RESPMEM_MUST_COPY)
            }
        case .stream(let produce):
            let state = StreamState(connection: connection, request: request)
            stream = state
            producer = produce
            mhd = MHD_create_response_from_callback(UInt64.max, 16 * 1024, streamReader, Unmanaged.passRetained(state).toOpaque(), streamFree)
            request.state.withLock { $0.stream = state }
            live.insert(request)
        }
        guard let mhd else { return MHD_Result.NO }
        for (name, value) in response.headers where !ServerCore.skippedHeaders.contains(where: { HTTPHeaders.sameName($0, name) }) {
            // Copied to the stack: passed as they are, names and values of up to 15 bytes (stored
            // inline) would each be copied to an array on the heap (libmicrohttpd copies them again).
            _ = withStackCString(name) { n in withStackCString(value) { v in MHD_add_response_header(mhd, n, v) } }
        }
        let result = MHD_queue_response(connection.pointer, UInt32(response.status), mhd)
        MHD_destroy_response(mhd)
        if let producer, let stream {
            Task {
                await producer(stream)
                stream.end()
            }
        }
        return result
    }
}

// MARK: C callbacks (libmicrohttpd calls these on its own threads)

/// Creates each request's state as soon as its URI is read; the raw URI keeps the query string.
let uriLogCallback: @convention(c) (UnsafeMutableRawPointer?, UnsafePointer<CChar>?, OpaquePointer?) -> UnsafeMutableRawPointer? = { _, uri, _ in
    Unmanaged.passRetained(RequestState(rawURI: uri.map { String(cString: $0) } ?? "/")).toOpaque()
}

let completedCallback: MHD_RequestCompletedCallback = { cls, connection, requestContext, _ in
    guard let cls, let requestContext, let raw = requestContext.pointee else { return }
    let core = Unmanaged<ServerCore>.fromOpaque(cls).takeUnretainedValue()
    let request = Unmanaged<RequestState>.fromOpaque(raw).takeRetainedValue()
    requestContext.pointee = nil
    core.completed(request)
    if let connection, let record = connectionRecord(connection) {
        let path = splitURI(request.rawURI).path
        core.connections.requestCompleted(record, proves: !core.configuration.reservedPaths.contains(path))
    }
}

/// Tracks each TCP connection for the guard: its record lives in the connection's socket context
/// from "started" to "closed" (which libmicrohttpd calls before it closes the descriptor).
let connectionCallback: MHD_NotifyConnectionCallback = { cls, connection, socketContext, code in
    guard let cls, let connection, let socketContext else { return }
    let core = Unmanaged<ServerCore>.fromOpaque(cls).takeUnretainedValue()
    switch code {
    case .CONNECTION_NOTIFY_STARTED:
        hearth_mark_polling_thread()
        let record = core.connections.opened(fd: hearth_connection_fd(connection))
        socketContext.pointee = Unmanaged.passRetained(record).toOpaque()
    case .CONNECTION_NOTIFY_CLOSED:
        guard let raw = socketContext.pointee else { return }
        let record = Unmanaged<ConnectionRecord>.fromOpaque(raw).takeRetainedValue()
        socketContext.pointee = nil
        core.connections.closed(record)
    default:
        break
    }
}

func connectionRecord(_ connection: OpaquePointer) -> ConnectionRecord? {
    hearth_connection_context(connection).map { Unmanaged<ConnectionRecord>.fromOpaque($0).takeUnretainedValue() }
}

let streamReader: MHD_ContentReaderCallback = { cls, _, buffer, max in
    guard let cls, let buffer else { return MHD_CONTENT_READER_END_WITH_ERROR }
    return Unmanaged<StreamState>.fromOpaque(cls).takeUnretainedValue().read(into: buffer, max: max)
}

let streamFree: MHD_ContentReaderFreeCallback = { cls in
    if let cls { Unmanaged<StreamState>.fromOpaque(cls).release() }
}

/// Appends each header to the `HTTPHeaders` its context points to (a local of `headArrived`).
let headerCollector: MHD_KeyValueIterator = { cls, _, key, value in
    guard let cls, let key else { return MHD_Result.YES }
    cls.assumingMemoryBound(to: HTTPHeaders.self).pointee.add(String(cString: key), value.map { String(cString: $0) } ?? "")
    return MHD_Result.YES
}

extension ServerCore {
    /// The first access-handler call: the whole head is in, no body byte has been handed over.
    /// Returns an answer to send now (libmicrohttpd then skips the body and closes the connection),
    /// or nil to go on reading the body.
    func headArrived(_ request: RequestState, connection: OpaquePointer, method: String) -> HTTPServerResponse? {
        // Counted first (no iterator: libmicrohttpd only counts), so the fields are stored once.
        var headers = HTTPHeaders(capacity: max(0, Int(MHD_get_connection_values(connection, MHD_ValueKind.HEADER_KIND, nil, nil))))
        withUnsafeMutablePointer(to: &headers) { p in
            _ = MHD_get_connection_values(connection, MHD_ValueKind.HEADER_KIND, headerCollector, UnsafeMutableRawPointer(p))
        }
        let record = connectionRecord(connection)
        if let record { connections.move(record, to: .readingBody) }
        let (path, query) = splitURI(request.rawURI)
        request.state.withLock { s in
            s.method = method
            s.headers = headers
        }
        func refuse(_ status: Int, _ code: FunctionsErrorCode, _ message: String, retryAfter: Bool = false) -> HTTPServerResponse {
            var r = HTTPServerResponse.error(code, message).with(status: status)
            if retryAfter { r.headers.set("Retry-After", "1") }
            return r
        }
        if let problem = RequestFraming.problem(rawTarget: request.rawURI, headers: headers) {
            return refuse(problem.status, problem.status == 501 ? .unimplemented : .invalidArgument, problem.message)
        }
        // The head as received, terminators included (libmicrohttpd's own count).
        if hearth_request_head_size(connection) > configuration.maxHeaderBytes {
            return refuse(431, .invalidArgument, "the request head is larger than \(configuration.maxHeaderBytes) bytes")
        }
        if !isAccepting { return refuse(503, .unavailable, "the server is shutting down") }
        if connections.underPressure, !configuration.reservedPaths.contains(path), record.map({ connections.served($0) == 0 }) ?? true {
            return refuse(503, .unavailable, "the server is at its connection limit", retryAfter: true)
        }
        let chunked = headers["transfer-encoding"] != nil
        let declared = chunked ? nil : Int(headers["content-length"] ?? "0")
        if headers["content-length"] != nil && declared == nil {
            return refuse(413, .invalidArgument, "the request body is larger than \(configuration.maxBodyBytes) bytes")  // past Int
        }
        if let head {
            var seen = HTTPRequestHead(method: method, path: path, query: query, headers: headers, contentLength: declared)
            if let answer = head(&seen) {
                // Without a body there is nothing to skip: answer at the end, keeping the connection.
                if declared == 0 {
                    request.state.withLock { $0.headAnswer = answer }
                    return nil
                }
                return answer
            }
            if let note = seen.note { request.state.withLock { $0.note = note } }
        }
        if let declared, declared > configuration.maxBodyBytes {
            return refuse(413, .invalidArgument, "the request body is larger than \(configuration.maxBodyBytes) bytes")
        }
        if let declared, declared > 0 {
            guard reserve(declared) else {
                return refuse(503, .unavailable, "the server is holding too many request bodies; try again", retryAfter: true)
            }
            request.state.withLock { $0.reserved = declared }
        }
        return nil
    }
}

let accessHandler: MHD_AccessHandlerCallback = { cls, connection, _, method, _, uploadData, uploadSize, requestContext in
    guard let cls, let connection, let requestContext, let uploadSize else { return MHD_Result.NO }
    let core = Unmanaged<ServerCore>.fromOpaque(cls).takeUnretainedValue()
    guard let raw = requestContext.pointee else { return MHD_Result.NO }
    let request = Unmanaged<RequestState>.fromOpaque(raw).takeUnretainedValue()
    let max = core.configuration.maxBodyBytes

    let firstCall = request.state.withLock { s -> Bool in
        guard !s.headersRead else { return false }
        s.headersRead = true
        return true
    }
    if firstCall {
        let methodName = method.map { String(cString: $0) } ?? "GET"
        guard let answer = core.headArrived(request, connection: connection, method: methodName) else { return MHD_Result.YES }
        request.state.withLock { $0.phase = .responded }
        return core.queue(answer, on: ConnectionHandle(pointer: connection), for: request)
    }

    // Body chunks.
    if uploadSize.pointee > 0 {
        let n = uploadSize.pointee
        let grow = request.state.withLock { s -> Int in
            guard !s.tooLarge && !s.overBudget else { return 0 }
            if s.body.count + n > max {
                s.tooLarge = true
                s.body = []
                return 0
            }
            // A chunked body takes its budget as it arrives; a declared one took it with the head.
            return s.body.count + n > s.reserved ? s.body.count + n - s.reserved : 0
        }
        let allowed = core.reserve(grow)
        request.state.withLock { s in
            guard !s.tooLarge && !s.overBudget else { return }
            if !allowed {
                s.overBudget = true
                s.body = []
            } else if let uploadData {
                s.reserved += grow
                s.body.append(contentsOf: UnsafeRawBufferPointer(start: uploadData, count: n))
            }
        }
        uploadSize.pointee = 0
        return MHD_Result.YES
    }

    // The request is complete: answer, or start the handler.
    enum Next {
        case respond(HTTPServerResponse)
        case start(HTTPServerRequest)
        case wait
    }
    let next = request.state.withLock { s -> Next in
        switch s.phase {
        case .ready(let response):
            s.phase = .responded
            return .respond(response)
        case .receiving:
            if s.tooLarge {
                s.phase = .responded
                return .respond(.error(.invalidArgument, "the request body is larger than \(max) bytes").with(status: 413))
            }
            if s.overBudget {
                s.phase = .responded
                var r = HTTPServerResponse.error(.unavailable, "the server is holding too many request bodies; try again")
                r.headers.set("Retry-After", "1")
                return .respond(r)
            }
            if let answer = s.headAnswer {
                s.phase = .responded
                return .respond(answer)
            }
            if !core.isAccepting {
                s.phase = .responded
                return .respond(.error(.unavailable, "the server is shutting down"))
            }
            let (path, query) = splitURI(request.rawURI)
            return .start(HTTPServerRequest(method: s.method, path: path, query: query, headers: s.headers, body: s.body, note: s.note))
        case .running, .responded:
            return .wait
        }
    }
    switch next {
    case .respond(let response):
        return core.queue(response, on: ConnectionHandle(pointer: connection), for: request)
    case .start(let input):
        if let record = connectionRecord(connection) { core.connections.move(record, to: .handling) }
        core.start(request, connection: ConnectionHandle(pointer: connection), input)
        return MHD_Result.YES
    case .wait:
        return MHD_Result.YES
    }
}

func splitURI(_ uri: String) -> (path: String, query: String) {
    guard let q = uri.utf8.firstIndex(of: UInt8(ascii: "?")) else { return (uri, "") }
    return (String(uri[..<q]), String(uri[uri.index(after: q)...]))
}

extension HTTPServerResponse {
    func with(status: Int) -> HTTPServerResponse {
        var r = self
        r.status = status
        return r
    }
}

/// The requests a server is handling or streaming, by identity: what its watchdog times out and its
/// shutdown abandons.
final class LiveRequests: Sendable {
    private let requests = Mutex<[ObjectIdentifier: RequestState]>([:])

    func insert(_ request: RequestState) { requests.withLock { $0[ObjectIdentifier(request)] = request } }
    func remove(_ request: RequestState) { requests.withLock { _ = $0.removeValue(forKey: ObjectIdentifier(request)) } }
    var all: [RequestState] { requests.withLock { Array($0.values) } }

    /// Answers every handler running past `timeout` with deadline-exceeded and cancels its task.
    func expire(timeout: Duration) {
        let now = ContinuousClock.now
        let overdue = requests.withLock { $0.values.filter { r in r.state.withLock { s in
            if case .running = s.phase, let d = s.deadline { return d <= now }
            return false
        } } }
        for request in overdue { request.finishRunning(with: .error(.deadlineExceeded, "the request took longer than \(timeout)")) }
    }
}

/// `text` as a NUL-terminated C string in a temporary buffer (on the stack when small), for a C
/// call that copies what it needs. A NUL inside `text` ends the C string there, as it would with
/// Swift's own conversion.
func withStackCString<R>(_ text: String, _ body: (UnsafePointer<CChar>) -> R) -> R {
    var text = text
    return text.withUTF8 { bytes in
        withUnsafeTemporaryAllocation(of: CChar.self, capacity: bytes.count + 1) { buffer in
            let base = buffer.baseAddress!
            if let source = bytes.baseAddress {
                UnsafeMutableRawPointer(base).copyMemory(from: source, byteCount: bytes.count)
            }
            base[bytes.count] = 0
            return body(base)
        }
    }
}

/// Suspends a connection on its polling thread, its socket left in the thread's epoll set while
/// suspended (see Sources/CEpollBatches/parked_sockets.c): two system calls fewer per request.
func suspendConnection(_ connection: OpaquePointer) {
    guard knownLibmicrohttpd else { return MHD_suspend_connection(connection) }
    hearth_suspending(1)
    MHD_suspend_connection(connection)
    hearth_suspending(0)
}

/// Resumes a suspended connection, its wake-up of the polling thread skipped when an earlier
/// resumption's is still unread (see Sources/CEpollBatches/coalesced_wakeups.c).
func resumeConnection(_ connection: OpaquePointer) {
    guard knownLibmicrohttpd else { return MHD_resume_connection(connection) }
    hearth_resuming(1)
    MHD_resume_connection(connection)
    hearth_resuming(0)
}

/// Whether suspended sockets are parked and resumptions' wake-ups coalesced: why both are sound
/// was worked out from libmicrohttpd 0.9.75's event loop (what it does with a suspended socket,
/// what a resumption marks, when a pass resumes), and holds only with the `epoll_wait`
/// correction in place, through which parked sockets' events are held back. With another version
/// the connections are suspended and resumed as libmicrohttpd alone does it.
let knownLibmicrohttpd = hearth_epoll_correction_active() != 0 && String(cString: MHD_get_version()) == "0.9.75"

/// Whether libmicrohttpd's zeroing of a connection's memory pool between two requests is skipped
/// (Sources/CEpollBatches/pool_zeroing.c says why that is sound): only with 0.9.75, whose calls
/// to memset were read off its machine code. Set up by the first server to start.
let poolZeroingSkipped = String(cString: MHD_get_version()) == "0.9.75" && hearth_skip_pool_zeroing() != 0

/// Whether libmicrohttpd's read after each answer is answered without a system call when the socket
/// can only be empty (Sources/CEpollBatches/drained_reads.c): with parking only, which it relies on.
let drainedReadsSpared = knownLibmicrohttpd && hearth_spare_drained_reads() != 0
