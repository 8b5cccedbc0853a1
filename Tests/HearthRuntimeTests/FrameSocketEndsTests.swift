import Foundation
import Glibc
import HearthModel
import HearthTesting
@testable import HearthRuntime
import Synchronization
import Testing

/// A worker connection is two socket pairs, one for each direction (`FrameSocket.ends`): on one
/// bidirectional socket, each read by one side of what the other sent signals write space on the
/// sender's socket, which wakes the sender's reader thread, blocked in `read(2)` on that same
/// socket, for nothing.
@Suite("Frame sockets over a socket pair for each direction")
struct FrameSocketEndsTests {
    static func frame(_ n: UInt64) -> [UInt8] {
        Boundary.frame(Boundary.Header(kind: .request, operation: .log, invocation: n), Boundary.Empty())
    }

    /// Frames a reader received, and how its stream ended.
    final class Received: Sendable {
        let frames = Mutex<[UInt64]>([])
        let ended = Mutex<String??>(nil)
        let name: String
        /// The reader thread's directory under /proc ("PID/task/TID"), set by the thread itself.
        let thread = Mutex<String?>(nil)

        init(name: String) { self.name = name }

        func start(_ socket: FrameSocket) {
            socket.startReading(name: name, threadSetup: {
                let path = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/thread-self")
                self.thread.withLock { $0 = path }
            }, onFrame: { frame in
                let header = try? frame.withUnsafeBytes { try Boundary.header($0) }
                self.frames.withLock { $0.append(header?.invocation ?? 0) }
            }, onClose: { problem in self.ended.withLock { $0 = .some(problem) } })
        }

        var count: Int { frames.withLock { $0.count } }
        var hasEnded: Bool { ended.withLock { $0 != nil } }

        /// The reader thread's line `field` in /proc (nil before the thread started).
        func status(_ field: String) -> String? {
            guard let path = thread.withLock({ $0 }), let text = try? String(contentsOfFile: "/proc/\(path)/status", encoding: .utf8) else { return nil }
            return text.split(separator: "\n").first { $0.hasPrefix(field + ":") }.map { $0.dropFirst(field.count + 1).trimmingCharacters(in: .whitespaces) }
        }

        var voluntarySwitches: Int { status("voluntary_ctxt_switches").flatMap { Int($0) } ?? -1 }
        /// Blocked in the kernel ("S (sleeping)").
        var sleeping: Bool { status("State")?.hasPrefix("S") == true }
    }

    @Test("frames go both ways, and a side that stops writing ends the other's reading, whose end closes its writing side too")
    func bothWays() async throws {
        let (x, y) = try FrameSocket.ends()
        let sx = FrameSocket(fd: x.read, writeFD: x.write), sy = FrameSocket(fd: y.read, writeFD: y.write)
        let rx = Received(name: "test-ends-x"), ry = Received(name: "test-ends-y")
        rx.start(sx)
        ry.start(sy)
        let delivered = try await onOwnThread { () -> Bool in
            for n in 1...20 {
                sx.send(Self.frame(UInt64(n)))
                sy.send(Self.frame(UInt64(100 + n)))
            }
            return holdsSoon { rx.count == 20 && ry.count == 20 }
        }
        #expect(delivered)
        #expect(rx.frames.withLock { $0 } == (101...120).map { UInt64($0) })
        #expect(ry.frames.withLock { $0 } == (1...20).map { UInt64($0) })
        // x stops writing: y reads the end, and its reader closes y's two descriptors (x reads the
        // end in turn only once y's writing one is closed).
        sx.shutdownWriting()
        let ended = try await onOwnThread { holdsSoon { ry.hasEnded && rx.hasEnded } }
        #expect(ended)
        #expect(ry.ended.withLock { $0 } == .some(nil))
        #expect(rx.ended.withLock { $0 } == .some(nil))
    }

    /// Sends 50 frames from the socket whose reader is watched, one at a time, each read by the
    /// peer with a plain read; after each read, waits until the reader (if woken) sleeps again.
    /// Returns how many times the reader thread switched out meanwhile.
    static func wakeUpsWhileThePeerReads(_ socket: FrameSocket, reader: Received, peerRead: Int32) throws -> Int {
        guard holdsSoon({ reader.sleeping }) else { throw Failure("the reader never blocked") }
        let before = reader.voluntarySwitches
        var buffer = [UInt8](repeating: 0, count: 4096)
        for n in 0..<50 {
            let frame = frame(UInt64(n))
            socket.send(frame)
            var got = 0
            while got < frame.count {
                let r = buffer.withUnsafeMutableBytes { Glibc.read(peerRead, $0.baseAddress!, frame.count - got) }
                guard r > 0 else { throw Failure("the peer's read failed") }
                got += r
            }
            guard holdsSoon({ reader.sleeping }) else { throw Failure("the reader did not block again") }
        }
        return reader.voluntarySwitches - before
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
        init(_ d: String) { description = d }
    }

    @Test("a reader is not woken when the peer reads what its socket sent; on one bidirectional socket it is, every time")
    func noWakeUpsForWriteSpace() async throws {
        // One bidirectional socket (the way worker connections were made before).
        let (a, b) = try FrameSocket.pair()
        let single = FrameSocket(fd: a)
        let singleReader = Received(name: "test-single")
        singleReader.start(single)
        let singleWakeUps = try await onOwnThread { try Self.wakeUpsWhileThePeerReads(single, reader: singleReader, peerRead: b) }
        single.shutdownWriting()
        Glibc.close(b)

        // A socket pair for each direction.
        let (x, y) = try FrameSocket.ends()
        let split = FrameSocket(fd: x.read, writeFD: x.write)
        let splitReader = Received(name: "test-split")
        splitReader.start(split)
        let splitWakeUps = try await onOwnThread { try Self.wakeUpsWhileThePeerReads(split, reader: splitReader, peerRead: y.read) }
        split.shutdownWriting()
        Glibc.close(y.read)
        Glibc.close(y.write)

        // Each read of the peer's woke the single socket's reader (the kernel signals write space
        // to every sleeper on the sender's socket); the split one's slept through all fifty.
        #expect(singleWakeUps >= 25, "single socket: \(singleWakeUps) wake-ups for 50 reads")
        #expect(splitWakeUps <= 2, "socket pair per direction: \(splitWakeUps) wake-ups for 50 reads")
    }
}
