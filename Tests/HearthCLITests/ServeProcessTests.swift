import Foundation
import HearthModel
import Synchronization
import Testing

/// Runs the real `hearth` binary as a child process.
final class ChildProcess: @unchecked Sendable {  // `stderrText` is guarded by `lock`
    let process = Process()
    private let lock = NSLock()
    private var stderrBuffer = Data()
    private let pipe = Pipe()

    init(_ arguments: [String], directory: String) throws {
        process.executableURL = URL(fileURLWithPath: buildDirectory + "/hearth")
        process.arguments = arguments
        process.currentDirectoryURL = URL(fileURLWithPath: directory)
        process.standardError = pipe
        process.standardOutput = FileHandle.nullDevice
        pipe.fileHandleForReading.readabilityHandler = { [weak self] handle in
            let data = handle.availableData
            guard let self, !data.isEmpty else { return }
            self.lock.lock()
            self.stderrBuffer.append(data)
            self.lock.unlock()
        }
        try process.run()
    }

    var stderrText: String {
        lock.lock()
        defer { lock.unlock() }
        return String(decoding: stderrBuffer, as: UTF8.self)
    }

    /// Waits until stderr contains `text`, for at most `seconds`.
    func waitFor(_ text: String, seconds: Double = 90) async throws {
        let deadline = Date().addingTimeInterval(seconds)
        while !stderrText.contains(text) {
            guard process.isRunning else { throw Failure("process exited before printing '\(text)':\n\(stderrText)") }
            guard Date() < deadline else { throw Failure("timed out waiting for '\(text)':\n\(stderrText)") }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    /// Waits for the process to exit, for at most `seconds`; kills it if it does not.
    func waitForExit(seconds: Double = 90) async throws -> Int32 {
        let deadline = Date().addingTimeInterval(seconds)
        while process.isRunning {
            guard Date() < deadline else {
                process.interrupt()
                kill(process.processIdentifier, SIGKILL)
                throw Failure("process did not exit within \(seconds) s")
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        return process.terminationStatus
    }

    /// The port `hearth serve` reported in its `ready` line.
    func servingPort(seconds: Double = 30) async throws -> Int {
        try await waitFor("ready", seconds: seconds)
        guard let range = stderrText.range(of: #"port[=":]+([0-9]+)"#, options: .regularExpression),
              let port = Int(stderrText[range].filter(\.isNumber)) else { throw Failure("no port in:\n\(stderrText)") }
        return port
    }

    deinit { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }
}

struct Failure: Error, CustomStringConvertible {
    var description: String
    init(_ d: String) { description = d }
}

@Suite("hearth serve as a real process")
struct ServeProcessTests {
    @Test("serve loads the units, reports the function table, and exits 0 on SIGTERM and on SIGINT", arguments: [SIGTERM, SIGINT])
    func serveStopsOnSignal(signal: Int32) async throws {
        let dir = TempDir()
        _ = dir.write("runtime.toml", "units_dir = \"\(buildDirectory)\"\nunits = [\"EchoUnit\", \"BrokenUnit\"]\n[server]\nport = 0\n")
        let child = try ChildProcess(["serve"], directory: dir.path)
        try await child.waitFor("ready")
        #expect(child.stderrText.contains("name=echo"))
        #expect(child.stderrText.contains("unit refused"), "the broken unit is reported but does not stop the others")
        kill(child.process.processIdentifier, signal)
        let status = try await child.waitForExit()
        #expect(status == 0)
        #expect(child.stderrText.contains("stopped"))
    }
}
