#if canImport(Glibc)
import Glibc
#endif
import CMicroHTTPD
import Foundation
import Synchronization

/// Accepts the server's connections on a thread of its own and hands each to libmicrohttpd
/// (`MHD_add_connection`), which gives it to one of its polling threads by the descriptor's
/// number (descriptor modulo threads, the next thread if that one is full): descriptors are
/// handed out lowest first, so connections opened together alternate between the threads.
///
/// libmicrohttpd's own accepting (the listening socket in every polling thread's epoll set) lets
/// the thread that wakes first accept up to eleven connections in a row before the others get a
/// turn: wrk's 32 connections came out about 21 and 11 (`recvfrom` per request on the two
/// threads, 0.72 and 0.28), 16 connections 11 and 5, and under the echo callable the busier
/// thread was nearly a whole core while the other core had idle time. Here they come out 16 and
/// 16. The price is one thread hand-off per new connection (this thread, then the polling
/// thread's wake-up), nothing per request on a kept-alive connection.
///
/// At the daemon's connection limit (`capacity`: the guard's limit and its reserve) it accepts
/// nothing until a connection closes, as libmicrohttpd's own accepting did: new clients wait in
/// the listening socket's backlog (the guard closes stalled connections under pressure) instead
/// of being accepted and closed at once.
final class Acceptor: Sendable {
    private let listening: Int32
    /// The daemon's handle (as an address: handles are not Sendable).
    private let daemon: UInt
    private let capacity: Int
    private let connections: ConnectionGuard
    private let stopped = Atomic<Bool>(false)
    private let exited = DispatchSemaphore(value: 0)

    /// Connections accepted and handed to libmicrohttpd.
    let handed = Atomic<Int>(0)

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
        while !stopped.load(ordering: .acquiring) {
            if occupied >= capacity {
                usleep(2_000)  // at the limit (rare): look again once a connection may have closed
                continue
            }
            var address = sockaddr_storage()
            var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
            let client = withUnsafeMutablePointer(to: &address) { p in
                p.withMemoryRebound(to: sockaddr.self, capacity: 1) { accept(listening, $0, &length) }
            }
            guard client >= 0 else {
                switch errno {
                case EINTR, ECONNABORTED, EPROTO:
                    continue  // that connection went away before it was accepted
                case EMFILE, ENFILE, ENOBUFS, ENOMEM:
                    usleep(10_000)  // out of descriptors or memory: wait for some to be freed
                    continue
                default:
                    return  // EINVAL: `stop` shut the socket down
                }
            }
            _ = fcntl(client, F_SETFD, FD_CLOEXEC)  // never inherited by a unit's worker
            guard !stopped.load(ordering: .acquiring) else {
                close(client)
                return
            }
            // It closes the socket itself when every polling thread is at its connection limit.
            let added = withUnsafePointer(to: &address) { p in
                p.withMemoryRebound(to: sockaddr.self, capacity: 1) { MHD_add_connection(daemon, client, $0, length) }
            }
            if added == MHD_Result.YES { handed.wrappingAdd(1, ordering: .relaxed) }
        }
    }

    /// Stops accepting: new connections are refused from now on, and once this returns the
    /// thread has handed its last connection to libmicrohttpd (so the daemon may be stopped) and
    /// the listening socket is closed. Safe to call more than once.
    func stop() {
        guard !stopped.exchange(true, ordering: .acquiringAndReleasing) else { return }
        shutdown(listening, Int32(Glibc.SHUT_RDWR))  // a blocked accept() returns EINVAL
        exited.wait()
        close(listening)
    }
}
