#if canImport(Glibc)
import Glibc
#endif
import CEpollBatches
import CMicroHTTPD
import Foundation
import Synchronization

/// Accepts the server's connections on a thread of its own and hands each to libmicrohttpd
/// (`MHD_add_connection`), which gives it to one of its polling threads by the descriptor's
/// number (descriptor modulo threads): descriptors are handed out lowest first, so connections
/// opened together alternate between the threads.
///
/// libmicrohttpd's own accepting (the listening socket in every polling thread's epoll set) lets
/// the thread that wakes first accept up to eleven connections in a row before the others get a
/// turn: 32 connections opened one after another all went to one thread (`AcceptorTests`), and
/// wrk's 32 split about 21 and 11 (`recvfrom` per request on the two threads, 0.72 and 0.28);
/// under the echo callable the busier thread was nearly a whole core while the other core had
/// idle time. Here they come out 16 and 16. The price is one thread hand-off per new connection
/// (this thread, then the polling thread's wake-up), nothing per request on a kept-alive
/// connection.
///
/// The connection limit (`capacity`: the guard's limit and its reserve) is enforced here, not by
/// libmicrohttpd, whose limit `HTTPServer` sets with room to spare: libmicrohttpd splits its
/// limit between its threads and checks a thread's share only once the connection reaches that
/// thread, closing it unannounced when the share is full, and it counts a connection closed only
/// after the server's callback has. At the limit nothing is accepted until a connection closes:
/// new clients wait in the listening socket's backlog (the guard closes stalled connections under
/// pressure), as they did with libmicrohttpd's own accepting.
final class Acceptor: Sendable {
    private let listening: Int32
    /// The daemon's handle (as an address: handles are not Sendable).
    private let daemon: UInt
    private let capacity: Int
    private let connections: ConnectionGuard
    private let stopped = Atomic<Bool>(false)
    private let socketClosed = Atomic<Bool>(false)
    private let exited = DispatchSemaphore(value: 0)

    /// Connections handed to libmicrohttpd and counted as on their way to a polling thread until
    /// the guard sees them start (only this thread writes it).
    private let handed = Atomic<Int>(0)

    init(listening: Int32, daemon: OpaquePointer, capacity: Int, connections: ConnectionGuard) {
        self.listening = listening
        self.daemon = UInt(bitPattern: Int(bitPattern: UnsafeRawPointer(daemon)))
        self.capacity = max(1, capacity)
        self.connections = connections
    }

    /// Connections open or on their way to a polling thread (handed, not yet started there).
    private var occupied: Int {
        let started = connections.startedCount.load(ordering: .acquiring)
        return connections.openCount + max(0, handed.load(ordering: .relaxed) - started)
    }

    func start() {
        let thread = Thread { [self] in
            run()
            exited.signal()
        }
        thread.name = "hearth-accept"
        thread.start()
    }

    private func run() {
        guard let daemon = OpaquePointer(bitPattern: daemon) else { return }
        var fullSince: ContinuousClock.Instant?
        var startedWhenFull = 0
        while !stopped.load(ordering: .acquiring) {
            if occupied >= capacity {
                // A connection libmicrohttpd took and then dropped before starting it (out of
                // memory for its pool) would count as on its way for ever: if none has started
                // for a second while full, only the open ones count.
                let started = connections.startedCount.load(ordering: .acquiring)
                if fullSince == nil || started != startedWhenFull { (fullSince, startedWhenFull) = (.now, started) }
                if let since = fullSince, ContinuousClock.now - since > .seconds(1) {
                    handed.store(started, ordering: .relaxed)
                    fullSince = nil
                }
                usleep(2_000)  // at the limit: look again once a connection may have closed
                continue
            }
            fullSince = nil
            var address = sockaddr_storage()
            var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
            let client = withUnsafeMutablePointer(to: &address) { p in
                p.withMemoryRebound(to: sockaddr.self, capacity: 1) { hearth_accept_cloexec(listening, $0, &length) }
            }
            guard client >= 0 else {
                let error = errno
                if stopped.load(ordering: .acquiring) { return }  // `stop` shut the socket down
                // The next connection may be fine (one that went away, a network error accept(2)
                // says to retry); out of descriptors or memory, wait for some to be freed.
                if error != EINTR && error != ECONNABORTED && error != EAGAIN { usleep(10_000) }
                continue
            }
            guard !stopped.load(ordering: .acquiring) else {
                close(client)
                return
            }
            // It closes the socket itself when it refuses it.
            let added = withUnsafePointer(to: &address) { p in
                p.withMemoryRebound(to: sockaddr.self, capacity: 1) { MHD_add_connection(daemon, client, $0, length) }
            }
            if added == MHD_Result.YES { handed.wrappingAdd(1, ordering: .relaxed) }
        }
    }

    /// Stops accepting: new connections are refused from now on, and once this returns (to every
    /// caller) the thread has handed its last connection to libmicrohttpd, so the daemon may be
    /// stopped, and the listening socket is closed.
    func stop() {
        if !stopped.exchange(true, ordering: .acquiringAndReleasing) {
            shutdown(listening, Int32(Glibc.SHUT_RDWR))  // a blocked accept() returns EINVAL
        }
        exited.wait()
        exited.signal()  // for the next caller
        if !socketClosed.exchange(true, ordering: .acquiringAndReleasing) { close(listening) }
    }
}
