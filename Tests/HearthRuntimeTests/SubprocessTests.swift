import Foundation
import HearthTesting
import Testing

/// The tests' own process spawner (HearthTesting.Subprocess), which replaces Foundation's Process.
@Suite("Subprocess")
struct SubprocessTests {
    @Test("stdout and stderr are captured apart, with the exit status")
    func captures() async throws {
        let child = try Subprocess("/bin/sh", ["-c", "echo out; echo err >&2; printf 'no newline'; exit 3"])
        #expect(try await child.wait() == .exited(3))
        #expect(child.stdoutText == "out\nno newline")
        #expect(child.stderrText == "err\n")
        #expect(!child.isRunning)
    }

    @Test("a signal ends the child and is reported as such")
    func signals() async throws {
        let child = try Subprocess("/bin/sleep", ["60"])
        #expect(child.isRunning)
        child.signal(SIGTERM)
        #expect(try await child.wait() == .signaled(SIGTERM))
    }

    @Test("the directory, the environment and output files are the child's")
    func directoryEnvironmentFiles() async throws {
        let dir = NSTemporaryDirectory() + "hearth-subprocess-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let child = try Subprocess("sh", ["-c", "pwd; echo \"$HEARTH_PROBE\"; echo to-file >&2"], directory: dir,
                                   environment: ["HEARTH_PROBE": "probe value"], stderr: .file(dir + "/err.txt"))
        #expect(try await child.wait() == .exited(0))
        let resolved = URL(fileURLWithPath: dir).resolvingSymlinksInPath().path
        #expect(child.stdoutText == resolved + "\nprobe value\n" || child.stdoutText == dir + "\nprobe value\n")
        #expect(try String(contentsOfFile: dir + "/err.txt", encoding: .utf8) == "to-file\n")
    }

    @Test("the child inherits no descriptor of the test process beyond stdin, stdout and stderr")
    func noInheritedDescriptors() async throws {
        let file = open("/dev/null", O_RDONLY)  // no O_CLOEXEC: Foundation-style spawning would pass it on
        #expect(file >= 0)
        // A second, high descriptor: the lowest free one from 300 (never dup2 onto a fixed number,
        // which would silently close a descriptor another test is using).
        let high = fcntl(file, F_DUPFD, 300)
        #expect(high >= 300)
        defer { close(file); close(high) }
        let child = try Subprocess("/bin/ls", ["/proc/self/fd"])
        #expect(try await child.wait() == .exited(0))
        let fds = Set(child.stdoutText.split(separator: "\n").compactMap { Int($0) })
        #expect(fds.isSuperset(of: [0, 1, 2]))
        #expect(!fds.contains(Int(high)), "descriptors: \(fds.sorted())")
        #expect(fds.count <= 4, "0, 1, 2 and the directory ls reads: \(fds.sorted())")
    }

    @Test("a child past its wait is killed and the wait fails; a missing program is an error naming it")
    func timeoutAndMissing() async throws {
        let child = try Subprocess("/bin/sleep", ["60"])
        await #expect(throws: SubprocessError.self) { try await child.wait(seconds: 0.5) }
        _ = try await child.wait(seconds: 30)  // the kill is reaped
        #expect(child.termination == .signaled(SIGKILL))
        #expect(throws: SubprocessError.self) { _ = try Subprocess("/nonexistent/hearth-nothing", []) }
        do { _ = try Subprocess("hearth-no-such-program", []) } catch { #expect("\(error)".contains("hearth-no-such-program")) }
    }

    @Test("many children at once while the process holds many descriptors")
    func many() async throws {
        let held = (0..<200).map { _ in open("/dev/null", O_RDONLY) }
        defer { for fd in held { close(fd) } }
        try await withThrowingTaskGroup(of: Bool.self) { group in
            for i in 0..<60 {
                group.addTask {
                    let child = try Subprocess("/bin/echo", ["child \(i)"])
                    return try await child.wait() == .exited(0) && child.stdoutText == "child \(i)\n"
                }
            }
            for try await ok in group { #expect(ok) }
        }
    }
}
