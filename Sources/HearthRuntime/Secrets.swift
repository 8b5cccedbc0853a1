import Foundation
import HearthModel
import HearthTOML

/// Secrets by name: from the environment first, then from the secrets file (a TOML table of strings
/// readable only by its owner). Values never reach logs, errors or responses.
public struct Secrets: Sendable {
    let file: [String: String]

    public init(file: [String: String] = [:]) { self.file = file }

    /// Reads the secrets file at `path` if it exists; refuses one others can read.
    public static func load(path: String?) throws -> Secrets {
        guard let path, FileManager.default.fileExists(atPath: path) else { return Secrets() }
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        if let mode = (attributes[.posixPermissions] as? NSNumber)?.intValue, mode & 0o077 != 0 {
            throw ConfigError("the secrets file \(path) is readable by others (mode \(String(mode, radix: 8))); chmod 600 it")
        }
        guard let data = FileManager.default.contents(atPath: path), let text = String(validating: [UInt8](data), as: UTF8.self) else {
            throw ConfigError("cannot read the secrets file \(path)")
        }
        let table: TOMLTable
        do { table = try TOML.parse(text) } catch { throw ConfigError("the secrets file \(path): \(error)") }
        var out: [String: String] = [:]
        for (key, value) in table.entries {
            guard case .string(let s) = value else { throw ConfigError("the secrets file \(path): '\(key)' must be a string") }
            out[key] = s
        }
        return Secrets(file: out)
    }

    /// The secret's value: the environment variable of that name, or the file's entry.
    public func value(_ name: String) -> String? {
        // getenv reads the one variable; ProcessInfo's environment copies all of them into a
        // dictionary on every call (tens of µs on each admin-token check).
        if let raw = getenv(name), raw.pointee != 0 { return String(cString: raw) }
        return file[name]
    }

    /// The values of `names` that are set, and of everything in the secrets file, by name: what a
    /// recording must never contain.
    public func declaredValues(_ names: [String]) -> [String: String] {
        var out = file
        for name in names { if let v = value(name) { out[name] = v } }
        return out
    }
}
