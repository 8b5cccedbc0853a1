import Foundation
import HearthModel
import Synchronization

/// The runtime's log: one line per event, as text for people or JSON for machines
/// (`--log-format text|json`). Lines are written whole, never interleaved.
public final class RuntimeLog: Sendable {
    public enum Format: String, Sendable, CaseIterable {
        case text, json
    }

    public let format: Format
    public let level: LogLevel
    let clock: any Clock
    let output: @Sendable (String) -> Void

    public init(format: Format = .text, level: LogLevel = .info, clock: any Clock = SystemClock(),
                output: (@Sendable (String) -> Void)? = nil) {
        self.format = format
        self.level = level
        self.clock = clock
        self.output = output ?? RuntimeLog.standardError
    }

    static let errorLock = Mutex(())

    static let standardError: @Sendable (String) -> Void = { line in
        errorLock.withLock { _ in
            FileHandle.standardError.write(Data((line + "\n").utf8))
        }
    }

    /// A log that keeps nothing, for tools that must print only their own output.
    public static func discarding() -> RuntimeLog { RuntimeLog(level: .error, output: { _ in }) }

    public func log(_ level: LogLevel, _ message: String, _ fields: [String: Value] = [:]) {
        guard level >= self.level else { return }
        let time = clock.now()
        switch format {
        case .json:
            var m = fields
            m["time"] = .string(time.rfc3339)
            m["level"] = .string(level.rawValue)
            m["message"] = .string(message)
            output(JSONWriter.string(.map(m), options: .sorted))
        case .text:
            var line = "\(time.rfc3339) \(level.rawValue.uppercased()) \(message)"
            for key in fields.keys.sorted() {
                let v = fields[key]!
                line += " \(key)=" + (v.stringValue ?? JSONWriter.string(v))
            }
            output(line)
        }
    }

    public func debug(_ message: String, _ fields: [String: Value] = [:]) { log(.debug, message, fields) }
    public func info(_ message: String, _ fields: [String: Value] = [:]) { log(.info, message, fields) }
    public func warning(_ message: String, _ fields: [String: Value] = [:]) { log(.warning, message, fields) }
    public func error(_ message: String, _ fields: [String: Value] = [:]) { log(.error, message, fields) }
}
