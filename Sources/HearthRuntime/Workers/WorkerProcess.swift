#if canImport(Glibc)
import Glibc
#endif
import Foundation
import HearthModel
import HearthStore
import CHearthSystem
import HearthUnitABI
import Synchronization

/// What a worker is started with.
struct WorkerLaunch: Sendable {
    var executable: String
    var unit: String
    var library: String
    var memoryLimitMB: Int
    var openFiles: Int
}

/// The host's side of one worker process: spawns it with one end of a socket pair, sends it
/// frames, serves the host-service requests it sends back, and notices when it dies.
///
/// A dead worker fails every request it had not answered with `internal` ("worker died", the
/// cause in `debug`: the signal or exit status, the invocations in flight, the last lines of its
/// stderr). Its stdout and stderr go to the host's log, line by line, with the unit's name.
final class WorkerProcess: Sendable {
    let launch: WorkerLaunch
    let pid: pid_t
    private let socket: FrameSocket
    private let log: RuntimeLog

    struct Pending: Sendable {
        let operation: Boundary.Operation
        let invocation: UInt64
        let function: String?
        let reply: @Sendable ([UInt8]) -> Void
    }

    private struct State {
        var nextCall: UInt64 = 1
        var pending: [UInt64: Pending] = [:]
        var dead = false
        /// Why the host killed the worker, if it did.
        var killReason: String?
        /// Set before `waitpid`: from then on the pid is not signalled.
        var reaping = false
        var lastErrorLines: [String] = []
        /// Output pipes still open (their readers finish before the cause is written).
        var openOutputs = 2
    }

    private let state = Mutex(State())
    /// Signalled when both output pipes have reached their end.
    private let outputsClosed = DispatchSemaphore(value: 0)
    private let exited: @Sendable (WorkerProcess, String) -> Void

    /// The largest frame a worker may send its host; a longer one ends the connection (and so the worker).
    static let maxWorkerFrame = 64 << 20

    /// The failure that replaces a unit's reply past `maxWorkerFrame`, or nil: the reply to one
    /// request fails, naming what it was and its size, instead of a host dropping the worker.
    static func oversizedReply(_ frame: UnsafeRawBufferPointer) -> [UInt8]? {
        guard frame.count > maxWorkerFrame, let header = try? Boundary.header(frame) else { return nil }
        let what = header.kind == .failure ? "error" : "reply"
        let message = "the unit's \(what) to '\(header.operation)' of \(frame.count) bytes is larger than the \(maxWorkerFrame) bytes a worker may send to its host"
        return Boundary.failure(header, RemoteError(code: .resourceExhausted, message: message))
    }

    /// Requests sent and not answered (invocations running, describes, cancels).
    var outstanding: Int { state.withLock { $0.pending.count } }
    var isDead: Bool { state.withLock { $0.dead } }

    /// Starts a worker. `services` answers its host-service calls; `exited` runs once when it is
    /// gone, with the cause.
    init(_ launch: WorkerLaunch, services: HostServices, log: RuntimeLog, exited: @escaping @Sendable (WorkerProcess, String) -> Void) throws {
        self.launch = launch
        self.log = log
        self.exited = exited
        // A socket pair for each direction (FrameSocket says why).
        let (hostEnd, workerEnd) = try FrameSocket.ends()
        var out: [Int32] = [-1, -1], err: [Int32] = [-1, -1]
        guard hearth_pipe_cloexec(&out) == 0, hearth_pipe_cloexec(&err) == 0 else {
            let problem = String(cString: strerror(errno))
            for fd in [hostEnd.read, hostEnd.write, workerEnd.read, workerEnd.write] + out + err where fd >= 0 { Glibc.close(fd) }
            throw ConfigError("pipe2 failed: \(problem)")
        }
        // Above the standard descriptors, so dup2 onto 3 and 4 always makes a copy (clearing
        // close-on-exec).
        let childRead = fcntl(workerEnd.read, F_DUPFD_CLOEXEC, 10)
        let childWrite = fcntl(workerEnd.write, F_DUPFD_CLOEXEC, 10)
        Glibc.close(workerEnd.read)
        Glibc.close(workerEnd.write)
        defer {
            Glibc.close(childRead)
            Glibc.close(childWrite)
            Glibc.close(out[1])
            Glibc.close(err[1])
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, out[1], 1)
        posix_spawn_file_actions_adddup2(&actions, err[1], 2)
        posix_spawn_file_actions_adddup2(&actions, childRead, 3)
        posix_spawn_file_actions_adddup2(&actions, childWrite, 4)
        // Nothing else of the host's (its database, its listening socket) reaches the worker.
        hearth_spawn_closefrom(&actions, 5)
        let arguments = [launch.executable, "worker", "--unit", launch.unit, "--library", launch.library, "--fd", "3", "--write-fd", "4",
                         "--memory-limit-mb", String(launch.memoryLimitMB), "--open-files", String(launch.openFiles),
                         "--boundary-version", String(Boundary.version)]
        var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        // Not the host's environment: secrets may be there, and a unit reads only what it declared.
        var envp: [UnsafeMutablePointer<CChar>?] = WorkerProcess.environment().map { strdup($0) } + [nil]
        defer { for p in argv + envp { free(p) } }
        // Default signal actions and an empty mask (the host ignores SIGINT and SIGTERM to stop in
        // order), in a process group of its own (a terminal's ^C reaches the host, which stops it).
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        hearth_spawnattr_clean(&attributes, 1)
        var child: pid_t = 0
        let status = posix_spawn(&child, launch.executable, &actions, &attributes, &argv, &envp)
        guard status == 0 else {
            Glibc.close(hostEnd.read)
            Glibc.close(hostEnd.write)
            Glibc.close(out[0])
            Glibc.close(err[0])
            throw ConfigError("cannot start a worker (\(launch.executable)): \(String(cString: strerror(status)))")
        }
        pid = child
        let killer = KillSwitch()
        socket = FrameSocket(fd: hostEnd.read, writeFD: hostEnd.write, sendTimeout: 10, onWriteFailure: { killer.fire() })
        killer.arm { [weak self] in self?.kill(reason: "it stopped reading its socket (a write to it made no progress for 10 s)") }
        readOutput(out[0], stream: "stdout")
        readOutput(err[0], stream: "stderr")
        // A worker refuses any request or reply past this bound before sending it
        // (`HostServices.sizeRefusal`, `oversizedReply`), so no frame ends the connection. The
        // reader never commits on its own thread: a transaction's commit that starts there
        // (`HostServices.startsInline`) goes to the writer's, and the reader reads on.
        socket.startReading(name: "hearth-host-\(launch.unit)-\(child)", maxFrame: WorkerProcess.maxWorkerFrame,
                            threadSetup: { CommitPlacement.neverOnThisThread() }, onFrame: { [self] frame in
            self.received(frame, services: services)
        }, onClose: { [self] problem in
            self.connectionClosed(problem)
        })
    }

    /// Registers a request about to be sent: `reply` gets the answer once, or the failure that
    /// stands for it when the worker dies first. Returns the call id to `write` it with, or nil when
    /// the worker is dead (`reply` is not called: the caller sends it elsewhere).
    func register(_ header: Boundary.Header, function: String?, reply: @escaping @Sendable ([UInt8]) -> Void) -> UInt64? {
        state.withLock { s in
            guard !s.dead else { return nil }
            let id = s.nextCall
            s.nextCall += 1
            s.pending[id] = Pending(operation: header.operation, invocation: header.invocation, function: function, reply: reply)
            return id
        }
    }

    /// Writes a registered request. A failed write means the worker is going: its reader sees
    /// the end and fails what is pending.
    func write(_ frame: [UInt8], call: UInt64) {
        socket.send(frame, call: call)
    }

    /// Registers and writes a request; false when the worker is dead.
    func send(_ frame: [UInt8], function: String?, reply: @escaping @Sendable ([UInt8]) -> Void) -> Bool {
        guard let header = try? frame.withUnsafeBytes({ try Boundary.header($0) }), let call = register(header, function: function, reply: reply) else {
            return false
        }
        write(frame, call: call)
        return true
    }

    /// Whether the worker still runs `invocation`.
    func isRunning(invocation: UInt64) -> Bool {
        state.withLock { s in s.pending.values.contains { $0.operation == .invoke && $0.invocation == invocation } }
    }

    /// Kills the worker (SIGKILL); what it was running fails with `reason` in the cause. Never
    /// once the process is being reaped (its pid could be another process's by then).
    func kill(reason: String) {
        state.withLock { s in
            guard !s.dead, !s.reaping, s.killReason == nil else { return }
            s.killReason = reason
            _ = Glibc.kill(pid, SIGKILL)
        }
    }

    /// Asks the worker to exit once it has read everything sent (it exits at the end of its input).
    func close() { socket.shutdownWriting() }

    private func received(_ frame: [UInt8], services: HostServices) {
        guard let header = try? frame.withUnsafeBytes({ try Boundary.header($0) }) else { return }
        if header.kind == .request {
            // A host-service call from the unit: answered with the same call id, whenever it is done.
            let target = HostReplyTarget(context: Unmanaged.passRetained(socket).toOpaque(), reply: socketReplyTrampoline)
            frame.withUnsafeBytes { services.handle(unit: launch.unit, bytes: $0, reply: target) }
            return
        }
        guard let pending = state.withLock({ $0.pending.removeValue(forKey: header.call) }) else { return }
        pending.reply(frame)
    }

    private func connectionClosed(_ problem: String?) {
        state.withLock { $0.reaping = true }
        let status = reap()
        // Its last words (a fatal error's message) come through stderr: wait for the pipe's end.
        _ = outputsClosed.wait(timeout: .now() + 0.5)
        let (pending, killReason, lines) = state.withLock { s -> ([Pending], String?, [String]) in
            s.dead = true
            defer { s.pending = [:] }
            return (Array(s.pending.values), s.killReason, s.lastErrorLines)
        }
        var cause = WorkerProcess.describe(status: status)
        if let killReason { cause += ", killed by the host: \(killReason)" }
        if let problem { cause += " (connection: \(problem))" }
        let running = pending.filter { $0.operation == .invoke }
        if !running.isEmpty {
            let list = running.map { p in "\(Invoker.format(p.invocation))" + (p.function.map { " (\($0))" } ?? "") }
            cause += "; in flight: " + list.joined(separator: ", ")
        }
        if let last = lines.last { cause += "; last stderr: \(last)" }
        for p in pending {
            let header = Boundary.Header(kind: .request, operation: p.operation, invocation: p.invocation)
            p.reply(Boundary.failure(header, RemoteError.workerDied(unit: launch.unit, cause: cause)))
        }
        exited(self, cause)
    }

    /// Waits for the process to end (it closed its socket, so it is exiting); one that lingers
    /// for two seconds more is killed.
    private func reap() -> Int32 {
        var status: Int32 = 0
        for _ in 0..<200 {
            let r = waitpid(pid, &status, WNOHANG)
            if r == pid { return status }
            if r < 0 && errno != EINTR { return -1 }
            usleep(10_000)
        }
        _ = Glibc.kill(pid, SIGKILL)
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        return status
    }

    /// What a worker's environment holds of the host's: locale, time zone, paths; and the host's
    /// process id under `Boundary.workerProcessVariable`, which tells the unit it runs in a worker.
    static func environment() -> [String] {
        let keep: Set<String> = ["PATH", "HOME", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "TMPDIR", "USER"]
        return (ProcessInfo.processInfo.environment.filter { keep.contains($0.key) }.map { "\($0.key)=\($0.value)" }
            + ["\(Boundary.workerProcessVariable)=\(getpid())"]).sorted()
    }

    /// "exited with status 0", "killed by signal 4 (SIGILL: a trap …)".
    static func describe(status: Int32) -> String {
        if status < 0 { return "exited (status unknown)" }
        let code = hearth_exit_code(status)
        if code >= 0 { return "exited with status \(code)" }
        let signal = hearth_term_signal(status)
        let names: [Int32: String] = [
            SIGILL: "SIGILL: a trap (force-unwrap, overflow, precondition, or memory exhausted under the worker's limit)",
            SIGTRAP: "SIGTRAP: a trap (force-unwrap, overflow, precondition)",
            SIGABRT: "SIGABRT: aborted", SIGSEGV: "SIGSEGV: invalid memory access", SIGBUS: "SIGBUS: bus error",
            SIGKILL: "SIGKILL", SIGTERM: "SIGTERM", SIGFPE: "SIGFPE: arithmetic fault",
        ]
        return "killed by signal \(signal) (\(names[signal] ?? "signal \(signal)"))"
    }

    /// Logs each line the worker writes to `fd` with its unit and process id.
    private func readOutput(_ fd: Int32, stream: String) {
        let thread = Thread { [self, log, launch, pid] in
            var pending: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 8192)
            func emit(_ bytes: ArraySlice<UInt8>) {
                let line = String(decoding: bytes, as: UTF8.self)
                guard !line.isEmpty else { return }
                if stream == "stderr" {
                    state.withLock { s in
                        s.lastErrorLines.append(Printable.truncated(line, bytes: 1024))
                        if s.lastErrorLines.count > 8 { s.lastErrorLines.removeFirst() }
                    }
                }
                log.log(stream == "stderr" ? .warning : .info, "worker output",
                        ["unit": .string(launch.unit), "pid": .int(Int64(pid)), "stream": .string(stream), "line": .string(line)])
            }
            while true {
                let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress!, $0.count) }
                if n < 0 && errno == EINTR { continue }
                if n <= 0 { break }
                pending += buffer[0..<n]
                while let newline = pending.firstIndex(of: 10) {
                    emit(pending[..<newline])
                    pending.removeSubrange(...newline)
                }
                if pending.count > 16 << 10 {
                    emit(pending[...])
                    pending.removeAll()
                }
            }
            if !pending.isEmpty { emit(pending[...]) }
            Glibc.close(fd)
            if state.withLock({ s -> Bool in s.openOutputs -= 1; return s.openOutputs == 0 }) { outputsClosed.signal() }
        }
        thread.name = "hearth-\(stream)-\(launch.unit)"
        thread.start()
    }
}

extension RemoteError {
    /// The failure of a request its worker did not answer: `internal` for the caller, the cause
    /// for the log and dead letters.
    static func workerDied(unit: String, cause: String) -> RemoteError {
        RemoteError(code: .internal, message: "INTERNAL", debug: "\(workerDiedPrefix) (unit \(unit)): \(cause)")
    }

    static let workerDiedPrefix = "worker died"

    /// Whether this failure stands for a worker that died (its cause is worth keeping with a dead letter).
    var isWorkerDeath: Bool { code == .internal && debug?.hasPrefix(RemoteError.workerDiedPrefix) == true }
}

/// Sends a host-service reply back over the worker's socket (the context is a retained socket,
/// released here: each request is answered exactly once).
let socketReplyTrampoline: hearth_reply_fn = { context, bytes, length in
    let socket = Unmanaged<FrameSocket>.fromOpaque(context!).takeRetainedValue()
    if let bytes { socket.send(UnsafeRawBufferPointer(start: bytes, count: length)) }
}

/// A deferred action set after its owner is built (the socket's write-failure hook needs the
/// worker that owns the socket).
final class KillSwitch: Sendable {
    private let action = ClosureSlot<@Sendable () -> Void>()
    func arm(_ body: @escaping @Sendable () -> Void) { action.set(body) }
    func fire() { action.value?() }
}
