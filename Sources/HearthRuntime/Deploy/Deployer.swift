#if canImport(Glibc)
import Glibc
#endif
import Foundation
import CHearthSystem
import HearthAuth
import HearthHTTP
import HearthModel

/// `hearth deploy` and `hearth rollback`: build a unit, keep each version's library at a path of
/// its own (content-addressed, under `<data_dir>/units/<Unit>/<version>/`), validate it in a
/// throwaway worker, record it, and activate it on every running host (or leave it for the next
/// start). Deploys of one unit are serialized by a lock file beside its versions.
public struct Deployer: Sendable {
    public let runtime: Runtime
    /// Progress lines (stderr).
    let progress: @Sendable (String) -> Void

    public init(runtime: Runtime, progress: @escaping @Sendable (String) -> Void) {
        self.runtime = runtime
        self.progress = progress
    }

    var config: RuntimeConfig { runtime.config }

    /// What a deploy or rollback did.
    public struct Outcome: Sendable {
        public var record: DeployRecord
        public var version: UnitVersion
        /// Each running host that activated it, with how long activation took there.
        public var activated: [(url: String, seconds: Double)]
        /// Hosts that refused it, with their reason.
        public var refused: [(url: String, reason: String)]
    }

    /// Who is deploying, for the history: `user@host`.
    public static var who: String {
        let env = ProcessInfo.processInfo.environment
        let user = env["USER"] ?? env["LOGNAME"] ?? "uid \(getuid())"
        return user + "@" + ProcessInfo.processInfo.hostName
    }

    // MARK: building

    /// The package that holds the configuration: the nearest directory upwards with a Package.swift.
    public func packageRoot() throws -> String {
        var directory = URL(fileURLWithPath: config.baseDirectory).standardized
        while true {
            if FileManager.default.fileExists(atPath: directory.appendingPathComponent("Package.swift").path) { return directory.path }
            let parent = directory.deletingLastPathComponent()
            if parent.path == directory.path {
                throw HTTPSError(.failedPrecondition, "no Package.swift in \(config.baseDirectory) or above it: pass --library PATH")
            }
            directory = parent
        }
    }

    /// Builds the unit's product in release mode (SwiftPM's progress goes to this process's
    /// output) and returns the library it made.
    public func build(unit: String) async throws -> String {
        let root = try packageRoot()
        // The package finds units by listing directories; a unit added since the last build needs
        // the cached plan dropped (see Scripts/lib/unit-list-check).
        let check = root + "/Scripts/lib/unit-list-check"
        if FileManager.default.isExecutableFile(atPath: check) { _ = try await Deployer.run(check, [], in: root) }
        progress("building \(unit) (swift build -c release --product \(unit)) in \(root)")
        let status = try await Deployer.run("/usr/bin/env", ["swift", "build", "-c", "release", "--product", unit, "--manifest-cache", "none"], in: root)
        guard status == 0 else { throw HTTPSError(.failedPrecondition, "swift build of \(unit) failed with status \(status)") }
        return root + "/.build/release/lib\(unit).so"
    }

    /// Runs a program in `directory` with this process's output; returns its exit status (128 +
    /// the signal when one ended it). posix_spawn, not Foundation's Process (whose `run()` has been
    /// seen to crash on Swift 6.3.1 for Linux).
    static func run(_ executable: String, _ arguments: [String], in directory: String) async throws -> Int32 {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        guard hearth_spawn_chdir(&actions, directory) == 0 else { throw HTTPSError(.internal, "cannot start \(executable) in \(directory)") }
        // Standard input, output and error only: a build, which can run for minutes, must not hold
        // open what this process has open (its store, locks and sockets), even a descriptor some
        // library opened without close-on-exec.
        guard hearth_spawn_closefrom(&actions, 3) == 0 else { throw HTTPSError(.internal, "cannot start \(executable): posix_spawn_file_actions_addclosefrom_np failed") }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        hearth_spawnattr_clean(&attributes, 0)
        var argv: [UnsafeMutablePointer<CChar>?] = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { for p in argv { free(p) } }
        var pid: pid_t = 0
        let status = posix_spawn(&pid, executable, &actions, &attributes, &argv, environ)
        guard status == 0 else { throw HTTPSError(.internal, "cannot start \(executable): \(String(cString: strerror(status)))") }
        let child = pid
        return await withCheckedContinuation { continuation in
            // waitpid blocks: on a thread of its own, not on the cooperative pool.
            Thread {
                var code: Int32 = 0
                while waitpid(child, &code, 0) < 0 && errno == EINTR {}
                let exit = hearth_exit_code(code)
                continuation.resume(returning: exit >= 0 ? exit : 128 + hearth_term_signal(code))
            }.start()
        }
    }

    // MARK: versions

    /// Deploys a built library: installs, validates, records and activates it.
    public func deploy(unit: String, library: String, who: String = Deployer.who) async throws -> Outcome {
        try checkConfigured(unit)
        return try await withDeployLock(unit) {
            let (version, path) = try runtime.installLibrary(unit: unit, library: library)
            progress("validating \(unit) \(version) in a throwaway worker")
            let manifest = try await runtime.validate(unit: unit, library: path)
            let recorded = UnitVersion(unit: unit, version: version, path: path, functions: manifest.functions.map(\.name),
                                       created: runtime.clock.now(), createdBy: who)
            try await runtime.deploys.record(recorded)
            return try await activate(recorded, action: .deploy, who: who)
        }
    }

    /// Activates an earlier version again: `to` (a version or a unique prefix of one), or the one
    /// active before the current one.
    public func rollback(unit: String, to target: String?, who: String = Deployer.who) async throws -> Outcome {
        try checkConfigured(unit)
        return try await withDeployLock(unit) {
            let history = try runtime.deploys.history(unit: unit)
            let versions = try runtime.deploys.versions(unit: unit)
            let chosen: UnitVersion
            if let target {
                let matches = versions.filter { $0.version.hasPrefix(target) }
                guard matches.count == 1, let only = matches.first else {
                    throw HTTPSError(matches.isEmpty ? .notFound : .invalidArgument,
                                     matches.isEmpty ? "no version \(target) of unit \(unit) is recorded (`hearth deploy --list \(unit)`)"
                                                     : "\(target) matches \(matches.count) versions of \(unit): give more digits")
                }
                chosen = only
            } else {
                guard let current = history.first?.version,
                      let previous = history.first(where: { $0.version != current })?.version,
                      let version = versions.first(where: { $0.version == previous }) else {
                    throw HTTPSError(.failedPrecondition, "unit \(unit) has no earlier deployed version to roll back to (`hearth deploy --list \(unit)`)")
                }
                chosen = version
            }
            guard FileManager.default.fileExists(atPath: chosen.path) else {
                throw HTTPSError(.failedPrecondition, "the library of \(unit) \(chosen.version) is gone (\(chosen.path)); deploy it again")
            }
            return try await activate(chosen, action: .rollback, who: who)
        }
    }

    private func checkConfigured(_ unit: String) throws {
        guard config.units.contains(where: { $0.name == unit }) else {
            throw HTTPSError(.notFound, "unit \(unit) is not one of runtime.toml's units (\(config.units.map(\.name).joined(separator: ", ")))")
        }
    }

    /// Activates `version` on every running host; with none running, records it for the next start.
    private func activate(_ version: UnitVersion, action: DeployRecord.Action, who: String) async throws -> Outcome {
        let hosts = HostRegistry.live(config: config)
        var activated: [(url: String, seconds: Double)] = []
        var refused: [(url: String, reason: String)] = []
        if !hosts.isEmpty {
            let client = HTTPClient()
            for host in hosts {
                progress("activating \(version.unit) \(version.version) on \(host.url) (pid \(host.pid))")
                let request = HTTPClientRequest(method: "POST", url: host.url + "/__/admin/units/\(version.unit):activate",
                                                headers: HTTPHeaders([("Authorization", "Bearer " + host.token), ("Content-Type", "application/json")]),
                                                body: JSONWriter.encode(["version": .string(version.version)]), timeout: .seconds(120))
                do {
                    let response = try await client.send(request)
                    let body = try? JSONParser.parse(response.body)
                    if response.status == 200 {
                        activated.append((host.url, body?["seconds"]?.doubleValue ?? 0))
                    } else {
                        refused.append((host.url, body?["error"]?["message"]?.stringValue ?? "status \(response.status)"))
                    }
                } catch {
                    refused.append((host.url, "\(error)"))
                }
            }
        }
        // Recorded when some host runs it now, or none runs and it applies at the next start.
        guard !activated.isEmpty || hosts.isEmpty else {
            throw HTTPSError(.failedPrecondition, refused.map { "\($0.url): \($0.reason)" }.joined(separator: "; "))
        }
        let record = try await runtime.deploys.activate(DeployRecord(unit: version.unit, version: version.version, action: action,
                                                                     time: runtime.clock.now(), who: who, hosts: activated.count))
        return Outcome(record: record, version: version, activated: activated, refused: refused)
    }

    /// Runs `body` holding `<data_dir>/units/<unit>/deploy.lock` (waiting for another deploy of
    /// the unit to finish first).
    private func withDeployLock<T: Sendable>(_ unit: String, _ body: () async throws -> T) async throws -> T {
        let directory = runtime.unitDirectory(unit)
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let fd = open(directory + "/deploy.lock", O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw HTTPSError(.internal, "cannot open \(directory)/deploy.lock: \(String(cString: strerror(errno)))") }
        defer { Glibc.close(fd) }
        var announced = false
        // Bounded: a deploy (activation included) takes seconds; fifteen minutes means something is stuck.
        for _ in 0..<9000 {
            if flock(fd, LOCK_EX | LOCK_NB) == 0 {
                defer { flock(fd, LOCK_UN) }
                return try await body()
            }
            if !announced {
                progress("waiting for another deploy of \(unit) to finish")
                announced = true
            }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw HTTPSError(.deadlineExceeded, "another deploy of \(unit) has held \(directory)/deploy.lock for 15 minutes")
    }
}

extension Runtime {
    /// The directory of `unit`'s versions.
    func unitDirectory(_ unit: String) -> String { config.resolvedDataDirectory + "/units/" + unit }

    /// Copies `library` to its content-addressed path (once: an existing copy is that same
    /// content); returns the version (16 hex digits of its SHA-256) and the copy's path.
    public func installLibrary(unit: String, library: String) throws -> (version: String, path: String) {
        guard let data = FileManager.default.contents(atPath: library) else {
            throw HTTPSError(.notFound, "cannot read the library \(library)")
        }
        return try installLibrary(unit: unit, contents: data, before: { _ in })
    }

    /// The version (16 hex digits of the SHA-256) of a library's `contents`.
    static func libraryVersion(_ contents: Data) -> String { String(Hex.encode(Crypto.sha256(Array(contents))).prefix(16)) }

    /// Copies a library's `contents` to its content-addressed path, first calling `before` with
    /// the version's directory (`pinnedBuild` takes its in-use lock there).
    func installLibrary(unit: String, contents data: Data, before: (String) -> Void) throws -> (version: String, path: String) {
        let version = Runtime.libraryVersion(data)
        let directory = unitDirectory(unit) + "/" + version
        before(directory)
        let path = directory + "/lib\(unit).so"
        if !FileManager.default.fileExists(atPath: path) {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            let temporary = path + ".tmp-\(getpid())"
            guard FileManager.default.createFile(atPath: temporary, contents: data, attributes: [.posixPermissions: 0o755]) else {
                throw HTTPSError(.internal, "cannot write \(temporary)")
            }
            guard rename(temporary, path) == 0 else { throw HTTPSError(.internal, "cannot write \(path): \(String(cString: strerror(errno)))") }
        }
        return (version, path)
    }
}
