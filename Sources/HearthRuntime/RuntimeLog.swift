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

    /// The most of one field's value a line keeps: values often come from outside (a token's
    /// `kid`, a path, a handler's message), and one of them must not fill the log.
    public static let maxFieldBytes = 1024

    public func log(_ level: LogLevel, _ message: String, _ fields: [String: Value] = [:]) {
        guard level >= self.level else { return }
        let time = clock.now()
        switch format {
        case .json:
            // JSON escapes every control character; only the length needs a bound.
            var m = fields.mapValues(RuntimeLog.bounded)
            m["time"] = .string(time.rfc3339)
            m["level"] = .string(level.rawValue)
            m["message"] = .string(Printable.truncated(message, bytes: RuntimeLog.maxFieldBytes))
            output(JSONWriter.string(.map(m), options: .sorted))
        case .text:
            var line = "\(time.rfc3339) \(level.rawValue.uppercased()) \(Printable.escaped(message, limit: RuntimeLog.maxFieldBytes))"
            for key in fields.keys.sorted() {
                let v = fields[key]!
                line += " \(RuntimeLog.textField(key))=" + RuntimeLog.textField(v.stringValue ?? JSONWriter.string(v))
            }
            output(line)
        }
    }

    /// A text-format key or value: bare when it is plain (letters, digits and `-._:/@+,%`), else
    /// quoted with every quote, backslash and control character escaped, so no value can end the
    /// line or forge another `key=value`.
    static func textField(_ text: String) -> String {
        let plain = !text.isEmpty && text.utf8.count <= maxFieldBytes && text.utf8.allSatisfy { b in
            (b >= 48 && b <= 57) || (b | 0x20 >= 97 && b | 0x20 <= 122) || "-._:/@+,%".utf8.contains(b)
        }
        if plain { return text }
        return "\"" + Printable.escaped(text, limit: maxFieldBytes).replacingOccurrences(of: "\"", with: "\\\"") + "\""
    }

    static func bounded(_ v: Value) -> Value {
        if case .string(let s) = v, s.utf8.count > maxFieldBytes { return .string(Printable.truncated(s, bytes: maxFieldBytes)) }
        return v
    }

    public func debug(_ message: String, _ fields: [String: Value] = [:]) { log(.debug, message, fields) }
    public func info(_ message: String, _ fields: [String: Value] = [:]) { log(.info, message, fields) }
    public func warning(_ message: String, _ fields: [String: Value] = [:]) { log(.warning, message, fields) }
    public func error(_ message: String, _ fields: [String: Value] = [:]) { log(.error, message, fields) }
}
