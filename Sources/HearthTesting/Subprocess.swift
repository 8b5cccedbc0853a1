import HearthModel
import CHearthSystem
import Foundation
import Synchronization

/// A child process for tests (the `hearth` binary, python3 cross-checks), started with
/// `posix_spawn` directly.
///
/// Foundation's `Process.run()` on Linux crashes now and then in the toolchain this project uses
/// (Swift 6.3.1): while listing `/proc/self/fd` to close descriptors in the child it copies whole
/// 256-byte `d_name` fields and can read past the end of glibc's buffer into an unmapped page
/// (swift-corelibs-foundation pull request 5472). A test suite that starts many processes while
/// holding many descriptors hit it about once in five runs. This spawns with
/// `posix_spawn_file_actions_addclosefrom_np` instead, which closes the parent's descriptors in the
/// child without listing them.
///
/// Output is read by a thread per pipe and kept; the exit is awaited by a thread blocked in
/// `waitpid`, so nothing here blocks Swift's cooperative threads.
public final class Subprocess: Sendable {
    public enum Output: Sendable {
        /// Kept in memory (`stdoutText`, `stderrText`).
        case capture
        case discard
        /// Written to a file (created or truncated).
        case file(String)
    }

    public enum Termination: Sendable, Equatable, CustomStringConvertible {
        case exited(Int32)
        case signaled(Int32)
        /// `waitpid` failed (with this errno): how it ended is unknown.
        case lost(Int32)

        public var description: String {
            switch self {
            case .exited(let code): "exited with status \(code)"
            case .signaled(let signal): "killed by signal \(signal)"
            case .lost(let error): "could not be waited for: \(String(cString: strerror(error)))"
            }
        }
    }

    public let pid: pid_t
    public let command: String
    private let stdoutBuffer = Mutex<[UInt8]>([])
    private let stderrBuffer = Mutex<[UInt8]>([])
    private struct ExitState {
        var termination: Termination?
        var openReaders = 0
        var waiters: [CheckedContinuation<Termination, Never>] = []
        /// Ended, and everything it wrote has been read.
        var finished: Termination? { openReaders == 0 ? termination : nil }
    }
    private let exit = Mutex(ExitState())
    /// Changes with every chunk of output and when the child ends (what `waitFor` checks on).
    public let changes = Changes()

    /// Starts `executable` (a path; a bare name is looked up in `PATH`) with `arguments`, in
    /// `directory` if given, with this process's environment plus `environment`.
    public init(_ executable: String, _ arguments: [String] = [], directory: String? = nil, environment: [String: String] = [:],
                stdout: Output = .capture, stderr: Output = .capture) throws {
        command = ([executable] + arguments).joined(separator: " ")
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }

        // The child starts with no signal blocked and every signal at its default action (the test
        // process ignores SIGPIPE, and ignored signals would otherwise stay ignored across exec).
        hearth_spawnattr_clean(&attributes, 0)

        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        var readEnds: [Int32] = []
        var writeEnds: [Int32] = []
        var started = false
        defer {
            for fd in writeEnds { close(fd) }
            if !started { for fd in readEnds { close(fd) } }  // no reader will own them
        }
        for (target, output) in [(Int32(1), stdout), (Int32(2), stderr)] {
            switch output {
            case .capture:
                var fds: [Int32] = [0, 0]
                guard pipe(&fds) == 0 else { throw SubprocessError("pipe: \(String(cString: strerror(errno)))") }
                // Children spawned here close every inherited descriptor anyway (closefrom below).
                _ = fcntl(fds[0], F_SETFD, FD_CLOEXEC)
                _ = fcntl(fds[1], F_SETFD, FD_CLOEXEC)
                readEnds.append(fds[0])
                writeEnds.append(fds[1])
                posix_spawn_file_actions_adddup2(&actions, fds[1], target)
            case .discard:
                posix_spawn_file_actions_addopen(&actions, target, "/dev/null", O_WRONLY, 0)
            case .file(let path):
                posix_spawn_file_actions_addopen(&actions, target, path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
            }
        }
        if let directory {
            guard hearth_spawn_chdir(&actions, directory) == 0 else { throw SubprocessError("cannot change the child's directory to \(directory)") }
        }
        // Everything above stdin, stdout and stderr is closed in the child.
        guard hearth_spawn_closefrom(&actions, 3) == 0 else { throw SubprocessError("posix_spawn_file_actions_addclosefrom_np failed") }

        let merged = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = merged.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            for p in argv { free(p) }
            for p in envp { free(p) }
        }
        var child: pid_t = 0
        let spawn = executable.contains("/") ? posix_spawn : posix_spawnp
        let status = spawn(&child, executable, &actions, &attributes, argv, envp)
        guard status == 0 else { throw SubprocessError("cannot start \(executable): \(String(cString: strerror(status)))") }
        started = true
        pid = child

        // The threads hold the subprocess until the child has ended and its pipes are drained.
        exit.withLock { $0.openReaders = readEnds.count }
        var readers = readEnds.makeIterator()
        if case .capture = stdout, let fd = readers.next() { Subprocess.thread { self.drain(fd, stdout: true) } }
        if case .capture = stderr, let fd = readers.next() { Subprocess.thread { self.drain(fd, stdout: false) } }
        Subprocess.thread { self.reap() }
    }

    /// Waits for the child in `waitpid` and records how it ended.
    private func reap() {
        var raw: Int32 = 0
        var result = waitpid(pid, &raw, 0)
        while result < 0 && errno == EINTR { result = waitpid(pid, &raw, 0) }
        let ended: Termination = result < 0 ? .lost(errno) : hearth_exit_code(raw) >= 0 ? .exited(hearth_exit_code(raw)) : .signaled(hearth_term_signal(raw))
        exit.withLock { $0.termination = ended }
        resumeWaitersIfFinished()
        changes.changed()
    }

    private func resumeWaitersIfFinished() {
        let (waiters, finished) = exit.withLock { state -> ([CheckedContinuation<Termination, Never>], Termination?) in
            guard let finished = state.finished else { return ([], nil) }
            defer { state.waiters = [] }
            return (state.waiters, finished)
        }
        if let finished { for waiter in waiters { waiter.resume(returning: finished) } }
    }

    /// Reads `fd` to its end, appending to the stdout or stderr buffer.
    private func drain(_ fd: Int32, stdout: Bool) {
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n > 0 {
                if stdout {
                    stdoutBuffer.withLock { $0.append(contentsOf: chunk[0..<n]) }
                } else {
                    stderrBuffer.withLock { $0.append(contentsOf: chunk[0..<n]) }
                }
                changes.changed()
            } else if n < 0 && errno == EINTR {
                continue
            } else {
                break
            }
        }
        close(fd)
        exit.withLock { $0.openReaders -= 1 }
        resumeWaitersIfFinished()
        changes.changed()
    }

    /// What the child wrote to stdout so far (when captured).
    public var stdoutBytes: [UInt8] { stdoutBuffer.withLock { $0 } }
    public var stdoutText: String { String(decoding: stdoutBytes, as: UTF8.self) }
    public var stderrText: String { String(decoding: stderrBuffer.withLock { $0 }, as: UTF8.self) }

    public var termination: Termination? { exit.withLock { $0.termination } }
    public var isRunning: Bool { termination == nil }

    public func signal(_ signal: Int32) {
        if isRunning { kill(pid, signal) }
    }

    /// Waits for the child to end and its captured output to be read, for at most `seconds`; on a
    /// timeout the child is killed.
    @discardableResult
    public func wait(seconds: Double = 90) async throws -> Termination {
        do {
            return try await withTimeout(seconds: seconds) { await self.termination() }
        } catch let error as TimeoutError {
            signal(SIGKILL)
            throw SubprocessError("\(command) did not exit within \(error.seconds) s; killed it")
        }
    }

    /// Waits until `condition` holds of the child's output, for at most `seconds`; fails early if the
    /// child ends first.
    /// Checked after every chunk of output and when the child ends, never by polling.
    public func waitFor(seconds: Double = 90, _ what: String, _ condition: @escaping @Sendable (Subprocess) -> Bool) async throws {
        // Done when the condition holds, or when the child has ended and its output is all read.
        let decided = await changes.wait(atMost: .seconds(seconds)) { condition(self) || self.exit.withLock { $0.finished != nil } }
        if condition(self) { return }
        if decided, let ended = termination {
            throw SubprocessError("\(command) ended (\(ended)) before \(what):\n\(stderrText)")
        }
        throw SubprocessError("timed out after \(seconds) s waiting for \(what) from \(command):\n\(stderrText)")
    }

    private func termination() async -> Termination {
        await withCheckedContinuation { continuation in
            let done = exit.withLock { state -> Termination? in
                if let t = state.finished { return t }
                state.waiters.append(continuation)
                return nil
            }
            if let done { continuation.resume(returning: done) }
        }
    }

    private static func thread(_ body: @escaping @Sendable () -> Void) {
        let thread = Thread(block: body)
        thread.stackSize = 1 << 20
        thread.start()
    }
}

public struct SubprocessError: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}
