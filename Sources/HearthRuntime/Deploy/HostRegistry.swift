#if canImport(Glibc)
import Glibc
#endif
import Foundation
import HearthModel

/// The `hearth serve` processes running on a data directory, so `hearth deploy` can reach them:
/// each writes `<data_dir>/hosts/<pid>.json` (mode 0600) with its admin URL and a control token of
/// its own (accepted by its admin API's units routes), holds an exclusive `flock` on it while it
/// runs, and removes it when it stops. A file nobody holds locked is stale (its server died) and is
/// removed by the next reader.
public enum HostRegistry {
    public struct Host: Sendable, Equatable {
        public var pid: Int32
        /// `http://host:port`
        public var url: String
        public var token: String
        public var path: String
    }

    static func directory(_ config: RuntimeConfig) -> String { config.resolvedDataDirectory + "/hosts" }

    /// This process's entry: locked while it lives; `remove` deletes it.
    public final class Registration: Sendable {
        public let path: String
        let lock: NodeLock

        init(path: String, lock: NodeLock) {
            self.path = path
            self.lock = lock
        }

        public func remove() {
            try? FileManager.default.removeItem(atPath: path)
            lock.release()
        }
    }

    /// Records this process as a host.
    public static func register(config: RuntimeConfig, port: Int, token: String) throws -> Registration {
        let dir = directory(config)
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        // A wildcard address is reached on loopback; an IPv6 one in brackets.
        let host = config.server.host
        let address = host == "0.0.0.0" ? "127.0.0.1" : host == "::" ? "[::1]" : host.contains(":") ? "[\(host)]" : host
        let body: Value = ["pid": .int(Int64(getpid())), "url": .string("http://\(address):\(port)"), "token": .string(token)]
        let path = dir + "/\(getpid()).json"
        let temporary = path + ".tmp"
        guard FileManager.default.createFile(atPath: temporary, contents: Data(JSONWriter.encode(body)), attributes: [.posixPermissions: 0o600]) else {
            throw ConfigError("cannot write \(temporary)")
        }
        guard let lock = NodeLock(path: temporary) else { throw ConfigError("cannot lock \(temporary)") }
        guard rename(temporary, path) == 0 else { throw ConfigError("cannot write \(path): \(String(cString: strerror(errno)))") }
        return Registration(path: path, lock: lock)
    }

    /// The hosts whose process is alive (stale files are removed).
    public static func live(config: RuntimeConfig) -> [Host] {
        let dir = directory(config)
        let names = (try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? []
        var hosts: [Host] = []
        for name in names.sorted() where name.hasSuffix(".json") {
            let path = dir + "/" + name
            guard let data = FileManager.default.contents(atPath: path), let value = try? JSONParser.parse(Array(data)),
                  let pid = value["pid"]?.intValue.flatMap({ Int32(exactly: $0) }), let url = value["url"]?.stringValue,
                  let token = value["token"]?.stringValue else { continue }
            // Locked by its server while it runs; a file we can lock is a dead server's.
            if let probe = NodeLock(path: path) {
                probe.release()
                try? FileManager.default.removeItem(atPath: path)
                continue
            }
            hosts.append(Host(pid: pid, url: url, token: token, path: path))
        }
        return hosts
    }
}
