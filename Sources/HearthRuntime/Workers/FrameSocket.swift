#if canImport(Glibc)
import Glibc
#endif
import Foundation
import HearthHTTP
import HearthModel
import Synchronization

/// One end of a connected Unix stream socket carrying boundary frames (Frame.swift): a reader
/// thread splits the stream into frames and hands each to `onFrame`; `send` writes whole frames,
/// one at a time, from any thread.
///
/// Both ends of a worker connection use it: the host's `WorkerProcess` and the worker's
/// `WorkerMain`. Frames are exactly the bytes the in-process C boundary carries, so nothing is
/// translated on the way.
///
/// Writes combine: a sender that finds another one writing leaves its frame in the outbox and
/// returns; the writer sends everything queued meanwhile in one `send(2)`. Under load, many frames
/// go per system call (and per wake-up of the reader on the other side).
///
/// A worker connection is two socket pairs, one for each direction (`Ends`): on a single
/// bidirectional socket, each time one side reads what the other sent, the kernel signals write
/// space on the sender's socket, and that wakes the sender's reader thread blocked in `read(2)` on
/// the same socket for nothing (a blocking read does not tell input from write space). Under the
/// echo callable those were two wake-ups in three of the readers'.
final class FrameSocket: Sendable {
    /// The descriptor frames are read from.
    let fd: Int32
    /// The descriptor frames are written to (`fd` itself for a single bidirectional socket).
    let writeFD: Int32
    private let closed = Atomic<Bool>(false)

    private struct Outbox {
        var bytes: [UInt8] = []
        var writing = false
        /// Shut the write side once the outbox is empty.
        var shutdownWhenFlushed = false
        /// The reader thread left frames here to send before it next waits for input.
        var corked = false
        /// When the first of them was left.
        var corkedAt: ContinuousClock.Instant?
    }

    /// The reader thread (as a number, 0 before it starts): what it sends waits in the outbox
    /// until it is about to block in `read`, so replies to a batch of requests read at once go out
    /// in one `send(2)` (and wake the other side once).
    private let readerThreadID = Atomic<UInt>(0)
    /// Set around a send from a thread that must never block on a full socket (the store's writer
    /// answering a unit's commit): like the reader thread's sends and the HTTP server's polling
    /// threads', the rest goes to a background writer.
    @TaskLocal static var sendsWithoutBlocking = false
    /// Corked bytes past this are written at once.
    private static let corkLimit = 256 << 10
    /// The largest written batch whose buffer is kept to be the outbox's next.
    private static let reusedBufferLimit = 64 << 10
    /// The age past which corked frames go out as soon as the reader finishes the frame it is
    /// handling (not while it handles one).
    static let corkDelay = Duration.microseconds(50)

    private let outbox = Mutex(Outbox())
    /// Held while writing to, or closing, the descriptor (so a write never lands on a closed one).
    private let descriptorLock = Mutex<Void>(())

    /// Called (on the writing thread) when a write fails or times out.
    private let onWriteFailure: (@Sendable () -> Void)?

    /// `sendTimeout`: a write that cannot progress for this long fails (a peer that stopped
    /// reading must not hold the writing thread forever). `writeFD`: frames go out there instead
    /// of on `fd`; the socket owns and closes both.
    init(fd: Int32, writeFD: Int32? = nil, sendTimeout: Double? = nil, onWriteFailure: (@Sendable () -> Void)? = nil) {
        self.fd = fd
        self.writeFD = writeFD ?? fd
        self.onWriteFailure = onWriteFailure
        // Sets `SendBatch`'s flush, without which no batch holds a frame back.
        _ = PollerCorks.shared
        if let sendTimeout {
            var tv = timeval(tv_sec: Int(sendTimeout), tv_usec: Int((sendTimeout - sendTimeout.rounded(.down)) * 1e6))
            _ = setsockopt(self.writeFD, SOL_SOCKET, SO_SNDTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        }
    }

    /// A connected pair (`socketpair`), both ends close-on-exec.
    static func pair() throws -> (Int32, Int32) {
        var fds: [Int32] = [0, 0]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &fds) == 0 else {
            throw ConfigError("socketpair failed: \(String(cString: strerror(errno)))")
        }
        return (fds[0], fds[1])
    }

    /// One end of a connection made of two socket pairs: it reads from `read` and writes to `write`.
    struct End {
        var read: Int32
        var write: Int32
    }

    /// Two connected ends, one socket pair for each direction, all close-on-exec.
    static func ends() throws -> (End, End) {
        let (aRead, bWrite) = try pair()
        do {
            let (bRead, aWrite) = try pair()
            return (End(read: aRead, write: aWrite), End(read: bRead, write: bWrite))
        } catch {
            Glibc.close(aRead)
            Glibc.close(bWrite)
            throw error
        }
    }

    var isClosed: Bool { closed.load(ordering: .acquiring) }

    /// Queues one frame and writes it (with any others queued meanwhile) unless another sender is
    /// writing, which then writes it. False when the connection is already gone; a frame queued on
    /// a connection that breaks meanwhile is lost, which the reader's end of stream reports.
    /// Never raises SIGPIPE.
    @discardableResult
    func send(_ frame: UnsafeRawBufferPointer, call: UInt64? = nil) -> Bool {
        guard !isClosed else { return false }
        let corker = corkerHere()
        var register = false
        let writes = outbox.withLock { o -> Bool in
            let start = o.bytes.count
            o.bytes.append(contentsOf: frame)
            if let call, frame.count >= Boundary.headerSize {
                // The call id goes in as the frame is queued (no copy of the frame to change it).
                for k in 0..<8 { o.bytes[start + 15 + k] = UInt8(truncatingIfNeeded: call >> (8 * UInt64(k))) }
            }
            if o.writing { return false }
            if let corker, o.bytes.count < FrameSocket.corkLimit {
                if !o.corked { o.corkedAt = ContinuousClock.now }
                o.corked = true
                register = corker != .reader
                return false
            }
            o.writing = true
            o.corked = false
            return true
        }
        if register { PollerCorks.shared.add(self) }
        guard writes else { return true }
        return drain(nonBlocking: mustNotBlockHere(corker))
    }

    /// The threads that cork what they send: this socket's reader (until it next blocks), a
    /// polling thread of the HTTP server (the frames of every request it handles in one pass go
    /// out together when it next polls, `PollerCorks`), and any thread inside a `SendBatch` (the
    /// writer answering a group, the delivery engine starting a batch: its frames go out when the
    /// batch ends).
    private enum Corker { case reader, poller, batch }

    /// How the calling thread corks, or nil when it does not.
    private func corkerHere() -> Corker? {
        if readerThreadID.load(ordering: .relaxed) == UInt(pthread_self()) { return .reader }
        if HTTPServer.onPollingThread { return .poller }
        return SendBatch.isActive ? .batch : nil
    }

    /// Whether the calling thread must not wait on a full socket: the threads that cork never
    /// block, past the cork's limit either; nor does a sender that says it must not
    /// (`sendsWithoutBlocking`).
    private func mustNotBlockHere(_ corker: Corker?) -> Bool {
        corker != nil || FrameSocket.sendsWithoutBlocking
    }

    /// Sends what the reader thread corked (called by it before it blocks, and after each frame
    /// once the oldest corked frame has waited `corkDelay`). The age is checked between frames:
    /// a reply corked before a frame whose handling runs long (a handler's synchronous part in a
    /// worker) waits for that handling to end, as the frames read after it do. Never blocks unless
    /// told it may: every thread that corks (a reader, a polling thread, one ending a `SendBatch`)
    /// must not wait on a full socket, and what does not fit goes to a background writer. The
    /// reader's last flush, before it closes the descriptor, may block: a background writer would
    /// find the descriptor closed.
    func flushCorked(olderThan age: Duration? = nil, mayBlock: Bool = false) {
        let writes = outbox.withLock { o -> Bool in
            guard o.corked, !o.writing else { return false }
            if let age, let at = o.corkedAt, ContinuousClock.now - at < age { return false }
            o.corked = false
            o.writing = true
            return true
        }
        if writes { _ = drain(nonBlocking: !mayBlock) }
    }

    /// Writes the outbox until it is empty (the caller took the writer's role). The reader thread
    /// never blocks here: both sides' readers write (replies, synchronous services), and two
    /// readers blocked writing to each other would never read again. When the socket is full it
    /// leaves the rest to a background writer, which may block, and goes back to reading.
    /// `nonBlocking`: the caller's thread must not wait on a full socket (see `send`).
    private func drain(nonBlocking: Bool) -> Bool {
        var ok = true
        // The buffer of the batch last written, emptied: it becomes the outbox's next buffer, so
        // senders append into capacity already there instead of allocating an outbox per batch
        // (a large one is let go).
        var written: [UInt8] = []
        while true {
            var (batch, shut) = outbox.withLock { o -> ([UInt8], Bool) in
                if o.bytes.isEmpty {
                    o.writing = false
                    if written.capacity > o.bytes.capacity { swap(&o.bytes, &written) }
                    return ([], o.shutdownWhenFlushed)
                }
                swap(&written, &o.bytes)
                return (written, false)
            }
            written = []
            if batch.isEmpty {
                if shut { shutdownNow() }
                return ok
            }
            switch write(batch, nonBlocking: nonBlocking) {
            case .done:
                if batch.capacity <= FrameSocket.reusedBufferLimit {
                    batch.removeAll(keepingCapacity: true)
                    swap(&written, &batch)
                }
            case .wouldBlock(let sent):
                // Still the writer: the rest goes first, then whatever was queued meanwhile.
                outbox.withLock { o in o.bytes = Array(batch[sent...]) + o.bytes }
                DispatchQueue.global().async { [self] in _ = drain(nonBlocking: false) }
                return ok
            case .failed(let timedOut):
                // The stream may hold part of a frame now: nothing more is written to it.
                writesBroken.store(true, ordering: .relaxed)
                if timedOut { onWriteFailure?() }
                ok = false
            }
        }
    }

    private enum WriteResult {
        case done
        case wouldBlock(written: Int)
        /// `timedOut`: the peer stopped reading (SO_SNDTIMEO), not merely went away.
        case failed(timedOut: Bool)
    }

    /// Set after a failed write: the stream may end inside a frame, so nothing more goes out.
    private let writesBroken = Atomic<Bool>(false)

    @discardableResult
    func send(_ frame: [UInt8], call: UInt64? = nil) -> Bool { frame.withUnsafeBytes { send($0, call: call) } }

    private func write(_ bytes: [UInt8], nonBlocking: Bool) -> WriteResult {
        descriptorLock.withLock { _ in
            guard !isClosed, !writesBroken.load(ordering: .relaxed) else { return .failed(timedOut: false) }
            return bytes.withUnsafeBytes { p in
                var offset = 0
                while offset < p.count {
                    let n = Glibc.send(writeFD, p.baseAddress! + offset, p.count - offset, Int32(MSG_NOSIGNAL) | (nonBlocking ? Int32(MSG_DONTWAIT) : 0))
                    if n > 0 { offset += n; continue }
                    if n < 0 && errno == EINTR { continue }
                    if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) {
                        if nonBlocking { return .wouldBlock(written: offset) }
                        return .failed(timedOut: true)  // SO_SNDTIMEO ran out
                    }
                    return .failed(timedOut: false)
                }
                return .done
            }
        }
    }

    /// Stops writing (the peer reads end of stream once what was sent is read).
    func shutdownWriting() {
        // After whatever is queued: the sender writing now shuts it when it has flushed the outbox.
        enum Next { case writerWill, shutNow, drainFirst }
        let next = outbox.withLock { o -> Next in
            o.shutdownWhenFlushed = true
            if o.writing { return .writerWill }
            guard !o.bytes.isEmpty else { return .shutNow }
            // Corked frames go out first; the drain shuts the socket when it is done.
            o.writing = true
            o.corked = false
            return .drainFirst
        }
        switch next {
        case .writerWill: break
        case .shutNow: shutdownNow()
        case .drainFirst: _ = drain(nonBlocking: mustNotBlockHere(corkerHere()))
        }
    }

    private func shutdownNow() {
        descriptorLock.withLock { _ in if !isClosed { _ = shutdown(writeFD, Int32(SHUT_WR)) } }
    }

    /// Starts the reader thread. `onFrame` gets each whole frame (a copy, so it may keep it);
    /// `onClose` runs once, when the peer closed, the stream broke or a frame was malformed
    /// (with the reason), after which the descriptor is closed. Frames longer than `maxFrame`
    /// end the connection (a worker may not make its host allocate without bound).
    /// `threadSetup` runs first on the reader thread (the host marks it as one that never commits
    /// itself, `CommitPlacement`).
    func startReading(name: String, maxFrame: Int = Boundary.maxFrameBytes, threadSetup: (@Sendable () -> Void)? = nil,
                      onFrame: @escaping @Sendable ([UInt8]) -> Void, onClose: @escaping @Sendable (String?) -> Void) {
        let thread = Thread { [self] in
            threadSetup?()
            // Strong, as the thread itself holds the socket while it reads: the reader goes with
            // `readerState` when the loop ends. A weak reference would give the socket a side table,
            // and every retain and release of it (several per frame) the runtime's slow path.
            let reader = FrameReader(fd: fd, maxFrame: maxFrame, beforeBlocking: { [self] in flushCorked() })
            readerState.withLock { $0 = (pthread_self(), reader) }
            readerThreadID.store(UInt(pthread_self()), ordering: .relaxed)
            while case .frame(let frame) = reader.next() {
                onFrame(frame)
                flushCorked(olderThan: FrameSocket.corkDelay)
            }
            let problem = reader.endReason
            readerState.withLock { $0 = nil }
            readerThreadID.store(0, ordering: .relaxed)
            flushCorked(mayBlock: true)
            descriptorLock.withLock { _ in
                closed.store(true, ordering: .releasing)
                _ = Glibc.close(fd)
                if writeFD != fd { _ = Glibc.close(writeFD) }
            }
            onClose(problem)
        }
        thread.name = name
        thread.start()
    }

    /// The reader thread and its reader, while it runs.
    private let readerState = Mutex<(thread: pthread_t, reader: FrameReader)?>(nil)

    /// Whether the calling thread is this socket's reader.
    var onReaderThread: Bool {
        readerState.withLock { state in state.map { pthread_equal($0.thread, pthread_self()) != 0 } ?? false }
    }

    /// On the reader thread, while it handles a frame: reads on until a frame `wanted` accepts
    /// arrives and returns it (nil when the stream ends first). Frames `wanted` refuses are given
    /// to `other` when they are replies, and kept for the reader's loop when they are requests, so
    /// nothing runs nested but replies. A worker whose handler calls a synchronous host service
    /// on the reader thread waits for the answer this way. Should what `other` ran have read the
    /// wanted frame itself (a nested pump), `answered` has it: checked after each frame handed on.
    func pump(until wanted: (Boundary.Header) -> Bool, other: ([UInt8]) -> Void, answered: () -> [UInt8]?) -> [UInt8]? {
        guard let reader = readerState.withLock({ $0?.reader }) else { return nil }
        return reader.pump(until: wanted, other: other, answered: answered)
    }
}

/// The reading side of a `FrameSocket`, used only by its reader thread: a buffer, the frames
/// set aside while a nested `pump` waited, and how the stream ended.
final class FrameReader: @unchecked Sendable {  // touched by the reader thread only
    enum Next {
        case frame([UInt8])
        case end(String?)
    }

    enum State {
        case open
        case end
    }

    let fd: Int32
    let maxFrame: Int
    private var buffer = [UInt8](repeating: 0, count: 1 << 16)
    private var start = 0, end = 0
    private var deferred: [[UInt8]] = []
    private(set) var state = State.open
    private(set) var endReason: String?

    /// Runs before each blocking read (the socket sends what its reader corked).
    private let beforeBlocking: () -> Void

    init(fd: Int32, maxFrame: Int, beforeBlocking: @escaping () -> Void = {}) {
        self.fd = fd
        self.maxFrame = maxFrame
        self.beforeBlocking = beforeBlocking
    }

    /// The next frame: one set aside by a pump first, else the next whole one on the stream.
    func next() -> Next {
        if !deferred.isEmpty { return .frame(deferred.removeFirst()) }
        return read()
    }

    func pump(until wanted: (Boundary.Header) -> Bool, other: ([UInt8]) -> Void, answered: () -> [UInt8]?) -> [UInt8]? {
        while true {
            guard case .frame(let frame) = read() else { return nil }
            guard let header = try? frame.withUnsafeBytes({ try Boundary.header($0) }) else { continue }
            if wanted(header) { return frame }
            if header.kind == .request {
                deferred.append(frame)
            } else {
                other(frame)
                if let answer = answered() { return answer }
            }
        }
    }

    private func finish(_ reason: String?) -> Next {
        state = .end
        endReason = reason
        return .end(reason)
    }

    /// The next whole frame from the stream (blocking), or the end.
    private func read() -> Next {
        guard state == .open else { return .end(endReason) }
        while true {
            if end - start >= 4 {
                let length = buffer.withUnsafeBytes { Int(UInt32(littleEndian: $0.loadUnaligned(fromByteOffset: start, as: UInt32.self))) }
                do { try Boundary.checkLength(length, maximum: maxFrame) } catch {
                    if case .malformed(_, let message) = error { return finish(message) }
                    return finish("\(error)")
                }
                if end - start >= length + 4 {
                    let frame = Array(buffer[start..<(start + length + 4)])
                    start += length + 4
                    if start == end {
                        start = 0
                        end = 0
                        // Back to the usual size after a large frame.
                        if buffer.count > 1 << 16 { buffer = [UInt8](repeating: 0, count: 1 << 16) }
                    }
                    return .frame(frame)
                }
                if length + 4 > buffer.count - start {
                    // Room for the whole frame, at the front.
                    var bigger = [UInt8](repeating: 0, count: max(buffer.count, length + 4))
                    bigger.withUnsafeMutableBytes { dst in buffer.withUnsafeBytes { src in
                        dst.baseAddress!.copyMemory(from: src.baseAddress! + start, byteCount: end - start)
                    } }
                    buffer = bigger
                    end -= start
                    start = 0
                }
            } else if start > 0 && buffer.count - end < 4096 {
                buffer.withUnsafeMutableBytes { p in p.baseAddress!.copyMemory(from: p.baseAddress! + start, byteCount: end - start) }
                end -= start
                start = 0
            }
            beforeBlocking()
            let n = buffer.withUnsafeMutableBytes { p in Glibc.read(fd, p.baseAddress! + end, p.count - end) }
            if n > 0 {
                end += n
            } else if n == 0 {
                return finish(nil)
            } else if errno != EINTR {
                return finish("read failed: \(String(cString: strerror(errno)))")
            }
        }
    }
}

/// The sockets the HTTP server's polling threads left frames corked in, each sent when the thread
/// that corked it next polls (`HTTPServer.setBeforePoll`): a pass over many ready connections sends
/// their calls to a worker in one write, which wakes the worker once. A thread inside a
/// `SendBatch` leaves its frames here too, sent when the batch ends.
final class PollerCorks: Sendable {
    static let shared = PollerCorks()
    /// The corking thread (as a number) and the socket.
    private let corked = Mutex<[(thread: UInt, socket: FrameSocket)]>([])

    private init() {
        HTTPServer.setBeforePoll { PollerCorks.shared.flush() }
        SendBatch.setFlush { PollerCorks.shared.flush() }
    }

    func add(_ socket: FrameSocket) {
        let thread = UInt(pthread_self())
        corked.withLock { list in
            if !list.contains(where: { $0.thread == thread && $0.socket === socket }) { list.append((thread, socket)) }
        }
    }

    /// Sends what the calling thread corked.
    func flush() {
        let thread = UInt(pthread_self())
        let mine = corked.withLock { list -> [FrameSocket] in
            guard list.contains(where: { $0.thread == thread }) else { return [] }
            let mine = list.filter { $0.thread == thread }.map(\.socket)
            list.removeAll { $0.thread == thread }
            return mine
        }
        for socket in mine { socket.flushCorked() }
    }
}
