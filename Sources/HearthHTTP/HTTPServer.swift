#if canImport(Glibc)
import Glibc
#endif
import CEpollBatches
import CMicroHTTPD
import HearthModel
import Synchronization

/// An HTTP/1.1 server on libmicrohttpd: epoll and a small thread pool do the socket work; each
/// request's Swift handler runs as a task while its connection is suspended, so no pool thread ever
/// waits for a handler (the pattern NOTES.md measured at ~80k requests/s). Requests whose work
/// never waits can be answered by an `ImmediateHandler` on the pool thread itself, with no task.
///
/// Limits, each answered before the body is read where it can be: head size (431), body size
/// (413), bytes buffered across all connections (503 with `Retry-After`), the request framing a
/// proxy could read differently (400/501, see `RequestFraming`), and what `head` refuses (the
/// front door's routing: 404, 401). Deadlines: a whole head within `headTimeoutSeconds`, a whole
/// body within `readTimeout`, idle connections closed after `connectionTimeoutSeconds`, handlers
/// answered 504 after `requestTimeout` (`ConnectionGuard`). Past `maxConnections` connections,
/// `reservedConnections` more are admitted for `reservedPaths` (`/healthz`) and clients whose
/// connection already served a request; other new connections get 503, and ones that do not send a
/// head at once are closed. `shutdown(grace:)` stops accepting, lets in-flight requests finish
/// within the grace period, then stops.
public final class HTTPServer: Sendable {
    public struct Configuration: Sendable {
        public var host = "127.0.0.1"
        /// 0 picks a free port; read it from `port` after `start`.
        public var port = 0
        public var threads = 2
        public var maxBodyBytes = 32 * 1024 * 1024
        public var maxHeaderBytes = 16 * 1024
        public var maxConnections = 1024
        /// Connections admitted beyond `maxConnections`, for `reservedPaths` and kept-alive clients.
        public var reservedConnections = 64
        /// Paths served even past `maxConnections` (health checks).
        public var reservedPaths: Set<String> = ["/healthz"]
        /// Idle connections are closed after this long without a byte.
        public var connectionTimeoutSeconds = 30
        /// A request head must be complete this long after its connection opened (or, kept alive,
        /// after the idle time that follows the previous request).
        public var headTimeout: Duration = .seconds(20)
        /// Past `maxConnections`, a new connection must send its head within this.
        public var pressureHeadTimeout: Duration = .seconds(1)
        /// A request body must be complete this long after its head.
        public var readTimeout: Duration = .seconds(60)
        /// A handler that has not answered by then gets its task cancelled and the client a 504.
        public var requestTimeout: Duration = .seconds(60)
        /// Request bodies held in memory at once, across connections (declared lengths count from
        /// the head on); past it new requests with bodies are answered 503 with `Retry-After`.
        public var maxBufferedBytes = 128 * 1024 * 1024

        public init() {}
    }

    public typealias Handler = @Sendable (HTTPServerRequest) async -> HTTPServerResponse
    /// Looks at a head before the body is read; a response it returns is sent instead of reading
    /// the body and running the handler (routing, authorization). What it leaves in the head's
    /// `note` reaches the handlers as the request's (a route found once, at the head).
    public typealias HeadHandler = @Sendable (inout HTTPRequestHead) -> HTTPServerResponse?

    /// Runs on the server's own thread once a request is whole, before any task is made: the
    /// response it returns answers the request (a `later` one when whoever has it calls back), and
    /// nil hands the request to the handler's task. For requests that never wait before their
    /// work goes elsewhere (the front door's callables to units in workers: the checks, then a
    /// message to the unit's worker): they skip the task and the hop to another thread. It must not
    /// block: every connection of that thread waits for it.
    public typealias ImmediateHandler = @Sendable (HTTPServerRequest) -> HTTPServerResponse?

    let configuration: Configuration
    let core: ServerCore
    /// The daemon's handle (as an address: handles are not Sendable), 0 when stopped.
    private let daemon = Mutex<UInt>(0)
    private let boundPort = Atomic<Int>(0)
    /// Accepts connections for the daemon (set by `start`).
    private let acceptor = Mutex<Acceptor?>(nil)

    public init(configuration: Configuration, head: HeadHandler? = nil, immediate: ImmediateHandler? = nil, handler: @escaping Handler) {
        self.configuration = configuration
        core = ServerCore(configuration: configuration, head: head, immediate: immediate, handler: handler)
    }

    /// Open connections (for tests and metrics).
    public var openConnections: Int { core.connections.openCount }

    /// The port the server listens on (after `start`).
    public var port: Int { boundPort.load(ordering: .relaxed) }

    /// Whether libmicrohttpd's polling threads get CEpollBatches' correction (for libmicrohttpd
    /// 0.9.75, whose threads could sleep with a full batch of ready connections unserved): true
    /// when the process's `epoll_wait` is the correction's, which it is in any executable linking
    /// HearthHTTP. The front door warns at start when it is not.
    public static var epollCorrectionActive: Bool { hearth_epoll_correction_active() != 0 }

    /// How many times the calling thread's `epoll_wait` was kept from sleeping after a full batch
    /// (for tests, from a callback on a polling thread).
    static var unblockedEpollWaitsOnThisThread: UInt { UInt(hearth_unblocked_epoll_waits_here()) }

    /// Whether the calling thread is one of libmicrohttpd's polling threads (one that accepted a
    /// connection): work it does for a request holds up every connection of that thread.
    public static var onPollingThread: Bool { hearth_is_polling_thread() != 0 }

    /// Sets what every polling thread runs before it next waits for its connections, once per
    /// pass over those that were ready (nil: nothing): work a request's handling left for the end
    /// of the pass goes out from there, for all of the pass's requests at once.
    public static func setBeforePoll(_ hook: (@convention(c) () -> Void)?) { hearth_set_before_poll(hook) }

    /// Requests whose handler has started and whose response has not finished.
    public var inFlight: Int { core.inFlight.load(ordering: .relaxed) }

    /// Binds the address and starts serving.
    public func start() throws(HTTPServerError) {
        _ = poolZeroingSkipped
        _ = drainedReadsSpared
        let fd = try ListenSocket.open(host: configuration.host, port: configuration.port)
        boundPort.store(ListenSocket.port(of: fd), ordering: .relaxed)
        // The listening socket is the acceptor's (`Acceptor`), which spreads connections evenly
        // over the polling threads.
        // Saturating: nothing bounds a configuration's numbers (the runtime's config file does).
        let reserve = max(0, configuration.reservedConnections)
        let capacity = configuration.maxConnections > Int.max - reserve ? Int.max : max(1, configuration.maxConnections + reserve)
        let threads = max(1, configuration.threads)
        let (limit, overflow) = (capacity == Int.max ? capacity : capacity + 1).multipliedReportingOverflow(by: threads)
        let flags = MHD_USE_INTERNAL_POLLING_THREAD.rawValue | MHD_USE_EPOLL.rawValue | MHD_ALLOW_SUSPEND_RESUME.rawValue
            | MHD_USE_NO_LISTEN_SOCKET.rawValue
        let cls = OpaquePointer(Unmanaged.passUnretained(core).toOpaque())
        let options: [CVarArg] = [
            MHD_OPTION.THREAD_POOL_SIZE.rawValue, UInt32(clamping: threads),
            // The hard limit (maxConnections and the reserve) is the acceptor's, the soft one
            // (maxConnections) the guard's. libmicrohttpd's, split between its threads, is set so
            // that each thread's share holds them all: it never refuses what the acceptor hands it.
            MHD_OPTION.CONNECTION_LIMIT.rawValue, UInt32(clamping: overflow ? Int.max : limit),
            MHD_OPTION.CONNECTION_TIMEOUT.rawValue, UInt32(configuration.connectionTimeoutSeconds),
            // Room for a head somewhat over the limit, so the server can read it and answer 431 itself;
            // heads far beyond it exhaust the pool and libmicrohttpd answers 431 (or closes). At most
            // 32 KiB by default: libmicrohttpd 0.9.75 mallocs such a pool (larger ones are mapped),
            // and no longer zeroes it between requests (`poolZeroingSkipped`).
            MHD_OPTION.CONNECTION_MEMORY_LIMIT.rawValue, max(configuration.maxHeaderBytes, 4096) + 12 * 1024,
            MHD_OPTION.URI_LOG_CALLBACK.rawValue, unsafeBitCast(uriLogCallback, to: OpaquePointer.self), cls,
            MHD_OPTION.NOTIFY_COMPLETED.rawValue, unsafeBitCast(completedCallback, to: OpaquePointer.self), cls,
            MHD_OPTION.NOTIFY_CONNECTION.rawValue, unsafeBitCast(connectionCallback, to: OpaquePointer.self), cls,
            MHD_OPTION.END.rawValue,
        ]
        let started: OpaquePointer? = withVaList(options) { args in
            MHD_start_daemon_va(flags, 0, nil, nil, accessHandler, UnsafeMutableRawPointer(cls), args)
        }
        guard let started else {
            close(fd)
            throw HTTPServerError("libmicrohttpd could not start on \(configuration.host):\(port)")
        }
        daemon.withLock { $0 = UInt(bitPattern: Int(bitPattern: UnsafeRawPointer(started))) }
        let acceptor = Acceptor(listening: fd, daemon: started, capacity: capacity, connections: core.connections)
        self.acceptor.withLock { $0 = acceptor }
        acceptor.start()
        core.startWatchdog()
    }

    /// Stops accepting connections, waits up to `grace` for in-flight requests, cancels what is
    /// left (answering 503), then stops the daemon. Safe to call more than once.
    public func shutdown(grace: Duration) async {
        guard daemon.withLock({ $0 }) != 0 else { return }
        acceptor.withLock { $0 }?.stop()
        core.stopAccepting()
        let clock = ContinuousClock()
        let deadline = clock.now + grace
        while core.inFlight.load(ordering: .relaxed) > 0 && clock.now < deadline {
            try? await Task.sleep(for: .milliseconds(5))
        }
        core.abandonInFlight()
        // Give resumed connections a moment to send their answers (a request leaves `inFlight` when
        // libmicrohttpd reports it complete, after the answer is written) before the daemon goes.
        let drain = clock.now + .seconds(2)
        while core.inFlight.load(ordering: .relaxed) > 0 && clock.now < drain {
            try? await Task.sleep(for: .milliseconds(5))
        }
        let stopping = daemon.withLock { d -> UInt in
            defer { d = 0 }
            return d
        }
        core.stopWatchdog()
        core.connections.stop()
        if stopping != 0, let handle = OpaquePointer(bitPattern: stopping) { MHD_stop_daemon(handle) }
    }

    /// A server dropped without `shutdown` (a test that failed half-way, say) stops its daemon
    /// here: libmicrohttpd's threads hold an unretained pointer to `core`, and calling into it
    /// after it is freed crashed the process (in ConnectionGuard and ServerCore's completion).
    deinit {
        let running = daemon.withLock { d -> UInt in
            defer { d = 0 }
            return d
        }
        guard running != 0, let handle = OpaquePointer(bitPattern: running) else { return }
        acceptor.withLock { $0 }?.stop()
        // Handlers still running are answered 503 now, so none touches its connection later.
        core.abandonInFlight()
        core.stopWatchdog()
        core.connections.stop()
        MHD_stop_daemon(handle)
    }
}

public struct HTTPServerError: Error, Sendable, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}

// MARK: the listening socket

enum ListenSocket {
    /// A listening TCP socket on `host:port`, closed on exec: no child of the process holds the
    /// port open after the server stops (workers are spawned with every other descriptor closed
    /// anyway; this covers any other child, as for the sockets the acceptor accepts).
    static func open(host: String, port: Int) throws(HTTPServerError) -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw HTTPServerError("socket(): \(String(cString: strerror(errno)))") }
        var yes: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        guard inet_pton(AF_INET, host == "localhost" ? "127.0.0.1" : host, &address.sin_addr) == 1 else {
            close(fd)
            throw HTTPServerError("'\(host)' is not an IPv4 address")
        }
        let bound = withUnsafePointer(to: &address) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0 else {
            let reason = String(cString: strerror(errno))
            close(fd)
            throw HTTPServerError("cannot listen on \(host):\(port): \(reason)")
        }
        guard listen(fd, 1024) == 0 else {
            close(fd)
            throw HTTPServerError("listen(): \(String(cString: strerror(errno)))")
        }
        return fd
    }

    static func port(of fd: Int32) -> Int {
        var address = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}
