#if canImport(Glibc)
import Glibc
#endif
import Foundation
import HearthModel
import Synchronization

/// Records what a runtime does, as it happens, into a directory of JSON-lines files: every
/// invocation (its event, each host-service call with its reply, its outcome), inputs from outside
/// that are not invocations (CLI and admin writes, auth users created or deleted, tasks enqueued),
/// the document changes committed (from the change feed) and dead letters.
///
/// An invocation's line is written when it ends, as one `write(2)` of a whole line, so a reader
/// never sees half a line (the last line of a file being written may lack its newline: readers
/// skip it). Files rotate at `maxFileBytes`; each begins with a header. Everything is redacted
/// first (`Redactor`).
public final class Recorder: Sendable {
    public struct Options: Sendable {
        public var directory: String
        public var maxFileBytes: Int
        /// `serve`, `cli`, `test`: the file names and headers say which process recorded.
        public var process: String

        public init(directory: String, maxFileBytes: Int = 64 << 20, process: String = "serve") {
            self.directory = directory
            self.maxFileBytes = max(4096, maxFileBytes)
            self.process = process
        }
    }

    struct Open {
        var function: String
        var unit: String
        var version: String
        var external: Bool
        var delivery: Int64?
        var attempt: Int?
        var at: Timestamp
        var invoke: Boundary.Invoke
        var calls: [RecordedCall] = []
    }

    struct FileState {
        var fd: Int32 = -1
        var written = 0
        var index = 0
        var path = ""
        var closed = false
        /// Lines waiting for the caller that is writing.
        var pending: [UInt8] = []
        var writing = false
    }

    private static let started = Atomic<Int>(0)
    public let options: Options
    let redactor: Redactor
    let clock: any Clock
    let header: @Sendable () -> RecordingHeader
    private let open = Mutex<[UInt64: Open]>([:])
    private let file = Mutex(FileState())
    private let counter = Atomic<Int64>(0)
    private let stamp: String
    /// Reads the change feed after a sequence (nil: this process does not record changes).
    let feed: (@Sendable (Int64) async throws -> [DocumentChange])?
    private let feedCursor: Mutex<Int64>
    private let feedBusy = Atomic<Bool>(false)
    private let feedDirty = Atomic<Bool>(false)
    /// What went wrong last (the change feed could not be read), for `GET /__/admin/record`.
    public let problem = Mutex<String?>(nil)
    /// Lines written (for the admin API and tests).
    public var linesWritten: Int64 { counter.load(ordering: .relaxed) }

    /// Opens the first file in `options.directory` (created if needed).
    public init(options: Options, redactor: Redactor, clock: any Clock, feedStart: Int64 = 0,
                feed: (@Sendable (Int64) async throws -> [DocumentChange])? = nil, header: @escaping @Sendable () -> RecordingHeader) throws {
        self.options = options
        self.redactor = redactor
        self.clock = clock
        self.header = header
        self.feed = feed
        feedCursor = Mutex(feedStart)
        do {
            try FileManager.default.createDirectory(atPath: options.directory, withIntermediateDirectories: true)
        } catch {
            throw ConfigError("recording directory \(options.directory) cannot be created: \(error.localizedDescription)")
        }
        let t = clock.now().rfc3339.replacingOccurrences(of: ":", with: "").replacingOccurrences(of: "-", with: "")
        // Two recorders of one process started within the same second get different names.
        stamp = String(t.prefix(15)) + "-" + options.process + "-" + String(getpid()) + "-" + String(Recorder.started.wrappingAdd(1, ordering: .relaxed).newValue)
        // A process that records something opens its first file then (a CLI command that only
        // reads leaves none); serve opens it at once, so a bad directory stops it at start.
        if feed != nil { try file.withLock { (s: inout FileState) throws in try rotate(&s) } }
    }

    /// Opens the next file (and writes its header); the previous one is closed only once the
    /// new one is open, so a failure leaves no stale descriptor behind (writes stop instead).
    private func rotate(_ s: inout FileState) throws {
        let index = s.index + 1
        let path = options.directory + "/" + stamp + "-" + String(format: "%04d", index) + ".jsonl"
        let fd = Glibc.open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            let reason = String(cString: strerror(errno))
            if s.fd >= 0 { Glibc.close(s.fd) }
            s.fd = -1
            s.closed = true
            throw ConfigError("recording file \(path) cannot be opened: \(reason)")
        }
        if s.fd >= 0 { Glibc.close(s.fd) }
        s.index = index
        s.path = path
        s.fd = fd
        s.written = 0
        var head = header()
        head.config = redactor.value(head.config)
        var line = RecordLine.header(head).json
        line.append(0x0A)
        guard writeAll(fd, line) else {
            s.closed = true
            return
        }
        s.written += line.count
    }

    /// Writes everything, or returns false (the disk is full, the file is gone…).
    @discardableResult
    private func writeAll(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBytes { p in
            guard let base = p.baseAddress else { return true }
            var offset = 0
            while offset < p.count {
                let n = Glibc.write(fd, base + offset, p.count - offset)
                if n < 0 {
                    if errno == EINTR { continue }
                    return false
                }
                offset += n
            }
            return true
        }
    }

    func nextN() -> Int64 { counter.wrappingAdd(1, ordering: .relaxed).newValue }

    func append(_ line: RecordLine) {
        var bytes = line.json
        bytes.append(0x0A)
        write(bytes)
    }

    /// Writes whole lines. Lines that arrive while another caller writes are combined into its
    /// next `write(2)` (the caller holding the pen writes until nothing waits), so concurrent
    /// invocations cost one system call between them, and every write is of whole lines.
    func write(_ lines: [UInt8]) {
        guard !lines.isEmpty else { return }
        let writesNow = file.withLock { s -> Bool in
            guard !s.closed else { return false }
            s.pending += lines
            if s.writing { return false }
            s.writing = true
            return true
        }
        guard writesNow else { return }
        while true {
            let (fd, batch) = file.withLock { s -> (Int32, [UInt8]) in
                guard !s.pending.isEmpty, !s.closed else {
                    s.writing = false
                    return (-1, [])
                }
                let batch = s.pending
                s.pending = []
                if s.fd < 0 || (s.written + batch.count > options.maxFileBytes && s.written > 0) { try? rotate(&s) }
                s.written += batch.count
                return (s.fd, batch)
            }
            guard !batch.isEmpty else { return }
            // A failed write stops the recording: what follows would sit after half a line (a
            // reader skips an unfinished last line, not one in the middle).
            if fd >= 0, !writeAll(fd, batch) {
                file.withLock { s in
                    s.closed = true
                    s.writing = false
                }
                return
            }
        }
    }

    /// The file being written.
    public var currentFile: String { file.withLock { $0.path } }

    // MARK: invocations

    func begin(_ id: UInt64, function: String, unit: String, version: String?, external: Bool, delivery: Int64?, attempt: Int?, invoke: Boundary.Invoke) {
        open.withLock { $0[id] = Open(function: function, unit: unit, version: version ?? "build", external: external, delivery: delivery,
                                      attempt: attempt, at: invoke.now, invoke: invoke) }
    }

    /// A service call arrives: its place in the invocation's calls (nil when not recorded).
    func call(_ invocation: UInt64, _ header: Boundary.Header, body: UnsafeRawBufferPointer) -> Int? {
        guard header.operation != .log else { return nil }
        let request = [UInt8](body[Boundary.headerSize...])
        return open.withLock { o -> Int? in
            guard o[invocation] != nil else { return nil }
            let index = o[invocation]!.calls.count
            o[invocation]!.calls.append(RecordedCall(operation: header.operation, request: request, reply: nil))
            return index
        }
    }

    /// The reply frame to call `index` of `invocation`.
    func reply(_ invocation: UInt64, _ index: Int, frame: [UInt8]) {
        let answer: Result<[UInt8], RemoteError>
        let kind = frame.count >= Boundary.headerSize ? Boundary.FrameKind(rawValue: frame[4]) : nil
        if kind == .reply {
            answer = .success(Array(frame[Boundary.headerSize...]))
        } else {
            answer = .failure(Boundary.reply(Boundary.Empty.self, from: frame).failureValue ?? RemoteError(code: .internal, message: "unreadable reply"))
        }
        open.withLock { o in
            guard o[invocation] != nil, index < o[invocation]!.calls.count else { return }
            o[invocation]!.calls[index].reply = answer
        }
    }

    func finish(_ id: UInt64, outcome: Result<Boundary.InvocationResult, RemoteError>, duration: Duration) {
        guard let record = open.withLock({ $0.removeValue(forKey: id) }) else { return }
        let r = redactor
        var invoke = record.invoke
        var invokeBytes = invoke.wireBytes
        if r.mightHold(invokeBytes) {
            invoke.event = r.event(invoke.event)
            invokeBytes = invoke.wireBytes
        }
        // The result's encoding is made once: to look for what to redact, and for the line.
        var resultBytes: [UInt8]?
        let result = outcome.map { value -> Boundary.InvocationResult in
            let bytes = value.wireBytes
            guard r.mightHold(bytes) else { resultBytes = bytes; return value }
            let redacted = r.result(value)
            resultBytes = redacted.wireBytes
            return redacted
        }
        let calls = record.calls.map { call -> RecordedCall in
            RecordedCall(operation: call.operation, request: r.request(call.operation, call.request),
                         reply: call.reply.map { reply in reply.map { r.reply(call.operation, $0, secret: call.secretName) }.mapError(r.error) })
        }
        let line = RecordedInvocation(n: nextN(), id: id, function: record.function, unit: record.unit, version: record.version, external: record.external,
                                      delivery: record.delivery, attempt: record.attempt, at: record.at, invoke: invoke, calls: calls,
                                      outcome: result.mapError(r.error), micros: Int64(duration.secondsDouble * 1e6), invokeBytes: invokeBytes, resultBytes: resultBytes)
        append(.invocation(line))
        drainFeed()
    }

    // MARK: inputs, changes, dead letters

    func input(_ kind: RecordedInput.Kind) {
        let r = redactor
        let redacted: RecordedInput.Kind
        switch kind {
        case .write(var commit):
            commit.writes = commit.writes.map(r.write)
            commit.enqueues = commit.enqueues.map(r.task)
            redacted = .write(commit)
        case .userCreated(let user): redacted = .userCreated(r.user(user))
        case .userDeleted, .recursiveDelete: redacted = kind
        case .tasks(let tasks): redacted = .tasks(tasks.map(r.task))
        }
        append(.input(RecordedInput(n: nextN(), at: clock.now(), kind: redacted)))
        drainFeed()
    }

    func deadLetter(function: String, event: Boundary.Event, error: String) {
        append(.deadLetter(RecordedDeadLetter(n: nextN(), at: clock.now(), function: function, event: redactor.event(event), error: redactor.string(error))))
    }

    /// Records the change feed up to its end, in the background; one drain at a time. A change
    /// noted while a drain runs (after its last read, maybe) makes it drain again before it ends.
    func drainFeed() {
        guard feed != nil else { return }
        feedDirty.store(true, ordering: .releasing)
        guard feedBusy.compareExchange(expected: false, desired: true, ordering: .acquiring).exchanged else { return }
        Task {
            // Changes are read in batches: what commits within a few milliseconds of the first
            // comes in the same read (`flush` does not wait).
            try? await Task.sleep(for: .milliseconds(5))
            await self.drainHoldingBusy()
        }
    }

    /// Records the change feed up to its end now (at stop, and in tests before reading a file).
    public func flush() async {
        guard feed != nil else { return }
        feedDirty.store(true, ordering: .releasing)
        while !feedBusy.compareExchange(expected: false, desired: true, ordering: .acquiring).exchanged { await Task.yield() }
        await drainHoldingBusy()
    }

    /// Drains while changes were noted, then gives up the drain (taking it again if a change is
    /// noted just after).
    private func drainHoldingBusy() async {
        while true {
            feedDirty.store(false, ordering: .releasing)
            await drainNow()
            feedBusy.store(false, ordering: .releasing)
            guard feedDirty.load(ordering: .acquiring),
                  feedBusy.compareExchange(expected: false, desired: true, ordering: .acquiring).exchanged else { return }
        }
    }

    private func drainNow() async {
        guard let feed else { return }
        while true {
            let after = feedCursor.withLock { $0 }
            let changes: [DocumentChange]
            do { changes = try await feed(after) } catch {
                problem.withLock { $0 = "the change feed could not be read after sequence \(after): \(error)" }
                return
            }
            guard !changes.isEmpty else { return }
            var lines: [UInt8] = []
            for c in changes {
                var after = c.after
                var bytes = after.map { ($0).wireBytes }
                if let b = bytes, redactor.mightHold(b) {
                    after = after.map(redactor.document)
                    bytes = after.map { ($0).wireBytes }
                }
                lines += RecordLine.change(RecordedChange(n: nextN(), sequence: c.sequence, path: c.path, after: after, time: c.commitTime, afterBytes: bytes)).json
                lines.append(0x0A)
            }
            write(lines)
            feedCursor.withLock { $0 = changes.last!.sequence }
        }
    }

    /// Writes what is pending and closes the file; later events are not recorded.
    public func close() async {
        await flush()
        // A caller still writing finishes first (its batch is taken under the lock, written after).
        while file.withLock({ $0.writing }) { await Task.yield() }
        file.withLock { s in
            if !s.pending.isEmpty, s.fd >= 0 { writeAll(s.fd, s.pending) }
            s.pending = []
            if s.fd >= 0 { Glibc.close(s.fd) }
            s.fd = -1
            s.closed = true
        }
    }
}

extension Result {
    var failureValue: Failure? { if case .failure(let e) = self { return e } else { return nil } }
}

/// Whether (and where) a runtime records: shared by the invoker, the host services and the
/// facade, switched by `Runtime.startRecording` / `stopRecording`.
public final class RecordingSwitch: Sendable {
    private let current = Mutex<Recorder?>(nil)
    private let on = Atomic<Bool>(false)

    public init() {}

    /// The recorder, when recording (one atomic load when not).
    @inline(__always) var recorder: Recorder? {
        guard on.load(ordering: .relaxed) else { return nil }
        return current.withLock { $0 }
    }

    func set(_ recorder: Recorder?) -> Recorder? {
        current.withLock { c in
            let old = c
            c = recorder
            on.store(recorder != nil, ordering: .relaxed)
            return old
        }
    }
}
