#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import Synchronization

/// One TCP connection as the guard sees it. Its fields change only under `ConnectionGuard.records`'
/// lock (the guard and libmicrohttpd's callbacks both take it).
final class ConnectionRecord: @unchecked Sendable {
    enum Phase { case awaitingHead, readingBody, handling }

    let fd: Int32
    /// The peer's address as the socket reported it when the connection opened: checked again
    /// before a shutdown, so that a descriptor number reused elsewhere is never touched.
    let peer: [UInt8]
    var phase = Phase.awaitingHead
    /// When the current phase began.
    var since: ContinuousClock.Instant
    /// Requests this connection has completed (a proven client, not a connection that only waits).
    var served = 0
    var closing = false

    init(fd: Int32, since: ContinuousClock.Instant) {
        self.fd = fd
        self.since = since
        peer = ConnectionRecord.peerAddress(fd)
    }

    static func peerAddress(_ fd: Int32) -> [UInt8] {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let rc = withUnsafeMutablePointer(to: &storage) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { getpeername(fd, $0, &length) }
        }
        guard rc == 0 else { return [] }
        return withUnsafeBytes(of: &storage) { Array($0.prefix(Int(length))) }
    }
}

/// Deadlines libmicrohttpd does not have. Its `CONNECTION_TIMEOUT` is idleness only (every byte
/// resets it), so a client trickling a byte a second would keep a connection, and with a thousand of
/// them every connection, forever. The guard closes a connection (`shutdown(2)` on its socket, which
/// libmicrohttpd then reads as the client going away) when:
/// - its request head is not complete `headTimeout` after the connection opened (a kept-alive
///   connection gets its idle time on top);
/// - its body is not complete `readTimeout` after its head;
/// - the server is past its connection limit and the connection has not sent a whole head within
///   `pressureHeadTimeout` and never completed a request: those slots go to real clients.
///
/// Closing happens under the same lock as libmicrohttpd's "connection closed" callback, which runs
/// before it closes the descriptor, so a descriptor number reused by a new connection is never shut.
final class ConnectionGuard: Sendable {
    struct Limits: Sendable {
        var headTimeout: Duration
        var idleTimeout: Duration
        var readTimeout: Duration
        var pressureHeadTimeout: Duration
        /// Connections beyond this count put the server under pressure.
        var softLimit: Int
    }

    let limits: Limits
    private let records = Mutex<(all: [ObjectIdentifier: ConnectionRecord], stopped: Bool)>(([:], false))
    private let count = Atomic<Int>(0)

    init(limits: Limits) { self.limits = limits }

    /// Open connections.
    var openCount: Int { count.load(ordering: .relaxed) }
    /// Connections libmicrohttpd has started since the server did (none ever leaves this count).
    let startedCount = Atomic<Int>(0)

    var underPressure: Bool { openCount > limits.softLimit }

    /// The open connections' descriptors (for tests).
    var openDescriptors: [Int32] { records.withLock { $0.all.values.map(\.fd) } }

    func opened(fd: Int32) -> ConnectionRecord {
        let record = ConnectionRecord(fd: fd, since: .now)
        records.withLock { $0.all[ObjectIdentifier(record)] = record }
        count.wrappingAdd(1, ordering: .relaxed)
        startedCount.wrappingAdd(1, ordering: .releasing)
        return record
    }

    func closed(_ record: ConnectionRecord) {
        let removed = records.withLock { $0.all.removeValue(forKey: ObjectIdentifier(record)) != nil }
        if removed { count.wrappingSubtract(1, ordering: .relaxed) }
    }

    /// Closes nothing from now on: called before the server stops, whose sockets libmicrohttpd
    /// then closes (and the process may reuse the numbers at once).
    func stop() {
        records.withLock { $0.stopped = true }
    }

    func move(_ record: ConnectionRecord, to phase: ConnectionRecord.Phase) {
        records.withLock { _ in
            record.phase = phase
            record.since = .now
        }
    }

    /// A request on the connection ended; `proves` says whether it counts as the work of a real
    /// client (a reserved path such as /healthz does not: anyone may ask it under pressure).
    func requestCompleted(_ record: ConnectionRecord, proves: Bool) {
        records.withLock { _ in
            if proves { record.served += 1 }
            record.phase = .awaitingHead
            record.since = .now
        }
    }

    func served(_ record: ConnectionRecord) -> Int { records.withLock { _ in record.served } }

    /// How long a connection may stay in its phase (nil: no deadline, the handler's own timeout
    /// answers 504).
    func deadline(_ record: ConnectionRecord, underPressure pressure: Bool) -> Duration? {
        switch record.phase {
        case .awaitingHead:
            if record.served == 0 { return pressure ? limits.pressureHeadTimeout : limits.headTimeout }
            return limits.idleTimeout + limits.headTimeout
        case .readingBody: return limits.readTimeout
        case .handling: return nil
        }
    }

    /// Closes every connection past its deadline; returns how many.
    @discardableResult
    func sweep(now: ContinuousClock.Instant = .now) -> Int {
        let pressure = underPressure
        return records.withLock { state in
            guard !state.stopped else { return 0 }
            var closed = 0
            for record in state.all.values where !record.closing {
                guard let deadline = deadline(record, underPressure: pressure), now - record.since >= deadline else { continue }
                record.closing = true
                // A second guard besides the lock: the socket must still be this connection's.
                guard ConnectionRecord.peerAddress(record.fd) == record.peer, !record.peer.isEmpty else { continue }
                shutdown(record.fd, Int32(Glibc.SHUT_RDWR))
                closed += 1
            }
            return closed
        }
    }
}

/// A timer on a queue of its own (not Swift's cooperative pool, which handlers may keep busy).
final class RepeatingTimer: Sendable {
    private let source: Mutex<DispatchSourceTimer?>
    private let queue = DispatchQueue(label: "hearth.http.watchdog")
    /// Marks this timer's queue (each timer its own key: a tick of one cancelling another waits).
    private let onTimerQueue = DispatchSpecificKey<Bool>()

    init(every interval: DispatchTimeInterval, _ action: @escaping @Sendable () -> Void) {
        queue.setSpecific(key: onTimerQueue, value: true)
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(deadline: .now() + interval, repeating: interval, leeway: .milliseconds(10))
        timer.setEventHandler(handler: action)
        timer.resume()
        source = Mutex(timer)
    }

    /// Stops the timer; returns once no tick runs any more. A tick already running when the timer
    /// is cancelled finishes first: the server's watchdog resumes connections, which it must not
    /// do once libmicrohttpd's daemon is stopped (that follows this call).
    func cancel() {
        source.withLock { $0?.cancel(); $0 = nil }
        // The queue is serial: an empty block runs only after the tick in progress, if any.
        if DispatchQueue.getSpecific(key: onTimerQueue) != true { queue.sync {} }
    }

    deinit { cancel() }
}
