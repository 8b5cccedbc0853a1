import Foundation
import HearthModel
import HearthStore
import HearthTOML

/// The runtime's configuration, read from `runtime.toml`. Every key is optional; the defaults are
/// listed in the README and printed by `hearth config show`.
public struct RuntimeConfig: Sendable, Equatable {
    /// A unit to load: its name and, optionally, an explicit library path and how it is isolated.
    public struct Unit: Sendable, Equatable {
        public var name: String
        public var path: String?
        /// Overrides `[workers] isolation` for this unit.
        public var isolation: Isolation?
        /// Worker processes for this unit (process isolation); overrides `[workers] count`.
        public var workers: Int?
        /// Overrides `[workers] memory_limit_mb` / `open_files` for this unit.
        public var memoryLimitMB: Int?
        public var openFiles: Int?

        public init(name: String, path: String? = nil, isolation: Isolation? = nil, workers: Int? = nil) {
            self.name = name
            self.path = path
            self.isolation = isolation
            self.workers = workers
        }
    }

    /// Where a unit's handlers run: in worker processes of their own (a trap kills one worker), or
    /// in the host process (the fastest path; a trap kills the host).
    public enum Isolation: String, Sendable, Equatable, CaseIterable {
        case process
        case inProcess = "in-process"
    }

    /// `[workers]`: how units in process isolation run.
    public struct Workers: Sendable, Equatable {
        /// Isolation for units that set none; nil: `defaultIsolation` (process for `hearth serve`).
        public var isolation: Isolation?
        /// Worker processes per unit.
        public var count = 1
        /// Address-space limit of each worker (RLIMIT_AS), in MiB; 0 for none.
        public var memoryLimitMB = 4096
        /// Open-file limit of each worker (RLIMIT_NOFILE).
        public var openFiles = 1024
        /// How long a timed-out invocation has to stop after it is cancelled before its worker is killed.
        public var killGraceSeconds = 1.0
        /// The longest wait before restarting a worker that keeps dying.
        public var restartBackoffMaxSeconds = 30.0
        /// How long a new worker may take to load its library and describe it before the version is refused.
        public var startTimeoutSeconds = 30.0
        /// The `hearth` executable workers run; nil: this process's executable if it is `hearth`,
        /// else `hearth` in the units directory or beside this executable.
        public var executable: String?
        public init() {}
    }

    public struct Server: Sendable, Equatable {
        public var host = "127.0.0.1"
        /// DNS names besides `localhost` that requests may address the server by and still use
        /// emulator mode's public credentials (`hearth` for a container reached by service name);
        /// IP addresses always may.
        public var allowedHosts: [String] = []
        public var port = 5001
        public var threads = 2
        public var maxBodyBytes = 32 * 1024 * 1024
        public var maxHeaderBytes = 16 * 1024
        public var maxConnections = 1024
        /// Connections admitted past `maxConnections` for /healthz and clients already connected.
        public var reservedConnections = 64
        /// A request's head must arrive within this.
        public var headTimeoutSeconds = 20.0
        /// Request bodies held in memory at once, across all connections.
        public var maxBufferedBytes = 128 * 1024 * 1024
        /// A body must arrive within this of its head; a handler must answer within this (or its
        /// function's longer timeout).
        public var requestTimeoutSeconds = 60.0
        public var shutdownGraceSeconds = 10.0
        public var adminTokenEnv = "HEARTH_ADMIN_TOKEN"
        /// The scheduling policy `hearth serve` sets for its threads and its workers'.
        public var scheduling = ThreadScheduling.batch
        public init() {}
    }

    public struct Store: Sendable, Equatable {
        public enum Synchronous: String, Sendable, CaseIterable { case off, normal, full }
        public var path = "store.sqlite"
        public var synchronous = Synchronous.normal
        public var readers = 4
        /// WAL checkpoints on a thread of their own (false: inside the writer's commits, as SQLite does by default).
        public var backgroundCheckpoints = true
        public var changeRetentionHours = 168.0
        public init() {}
    }

    public struct Auth: Sendable, Equatable {
        /// Accept unsigned tokens as Firebase's Auth emulator does. Unset: on only for a project
        /// whose id starts with "demo-" (Firebase's convention for emulator-only projects).
        public var emulator: Bool?
        public var clockSkewSeconds = 300.0
        /// The signing keys, inside the data directory; created on first start with mode 0600.
        public var keysFile = "auth-keys.json"
        /// Sign-in methods turned on (the console's switches): `password`, `anonymous`, `custom`,
        /// `google.com`, `apple.com`. All by default, as in the Auth emulator.
        public var providers: [String] = ["password", "emailLink", "anonymous", "custom", "google.com", "apple.com"]
        public static let knownProviders: Set<String> = ["password", "emailLink", "anonymous", "custom", "google.com", "apple.com"]
        /// Firebase's email enumeration protection; unset, on as for new projects, but off in
        /// emulator mode, as in Firebase's Auth emulator (`RuntimeConfig.emailEnumerationProtection`).
        public var emailEnumerationProtection: Bool?
        /// scrypt cost of new password hashes: N = 2^mem_cost, r = rounds (Firebase's: 14 and 8).
        public var passwordHashMemCost = 14
        public var passwordHashRounds = 8
        /// Failed password sign-ins per address before TOO_MANY_ATTEMPTS_TRY_LATER, then one more
        /// per `failed_sign_in_refill_seconds`.
        public var failedSignInBurst = 10
        public var failedSignInRefillSeconds = 60.0
        /// OAuth client ids Google ID tokens may be for, and where Google's keys are (a URL or a file).
        public var googleClientIDs: [String] = []
        public var googleJWKS = "https://www.googleapis.com/oauth2/v3/certs"
        /// Bundle or service ids Apple ID tokens may be for, and Apple's keys.
        public var appleClientIDs: [String] = []
        public var appleJWKS = "https://appleid.apple.com/auth/keys"
        public init() {}
    }

    /// Pushes (`context.messaging`): recorded in the outbox only (`log`, the default with no
    /// service account), or sent through FCM HTTP v1 (`fcm`).
    public struct Messaging: Sendable, Equatable {
        public enum Mode: String, Sendable, CaseIterable { case log, fcm }
        public var mode: Mode?
        /// A Google service-account key file (JSON); setting it turns `fcm` on.
        public var serviceAccountFile: String?
        public var fcmURL = "https://fcm.googleapis.com"
        /// Where the service-account assertion is exchanged; unset: the file's `token_uri`.
        public var oauthTokenURL: String?
        public init() {}

        public var resolvedMode: Mode { mode ?? (serviceAccountFile == nil ? .log : .fcm) }
    }

    /// Outbound HTTP from units (`context.http`): only to these base URLs (scheme, host, port and
    /// path prefix), with a time and size limit per request.
    public struct Outbound: Sendable, Equatable {
        public var allow: [String] = []
        public var timeoutSeconds = 30.0
        public var maxResponseBytes = 10 << 20
        public init() {}

        /// Whether `url` is under one of the allowed base URLs (a base ending in `/` matches
        /// below it; one without matches itself and below `base/`). Scheme and host compare
        /// case-insensitively, the path exactly; a URL with dot segments (`/../`, `%2e`) or a
        /// backslash is never allowed, since the client would normalize it past the prefix.
        public func allows(_ url: String) -> Bool {
            let lower = url.lowercased()
            if lower.contains("/..") || lower.contains("/./") || lower.hasSuffix("/.") || lower.contains("%2e") || url.contains("\\") { return false }
            let target = Outbound.normalized(url)
            return allow.contains { raw in
                let base = Outbound.normalized(raw)
                return target == base || target.hasPrefix(base.hasSuffix("/") ? base : base + "/") || target.hasPrefix(base + "?")
            }
        }

        /// The URL with its scheme and host (everything before the path) lower-cased.
        static func normalized(_ url: String) -> String {
            guard let schemeEnd = url.range(of: "://") else { return url }
            let rest = url[schemeEnd.upperBound...]
            let authorityEnd = rest.firstIndex(where: { $0 == "/" || $0 == "?" || $0 == "#" }) ?? rest.endIndex
            return url[..<authorityEnd].lowercased() + url[authorityEnd...]
        }

        /// `scheme://host[:port]` of a URL, for logs and errors (never its userinfo, path or query).
        public static func origin(_ url: String) -> String {
            guard let c = URLComponents(string: url), let scheme = c.scheme, let host = c.host else { return "(unparsable URL)" }
            return "\(scheme)://\(host)" + (c.port.map { ":\($0)" } ?? "")
        }
    }

    public struct AppCheck: Sendable, Equatable {
        /// A JWKS file with the keys App Check tokens are signed with; unset: App Check tokens are
        /// not verified (and functions with `enforceAppCheck` refuse every call).
        public var jwksFile: String?
        public var issuerPrefix = "https://firebaseappcheck.googleapis.com/"
        public init() {}
    }

    /// The delivery engine (triggers, tasks, schedules).
    public struct Delivery: Sendable, Equatable {
        /// How often a serving runtime looks for work other processes queued in the database.
        public var pollIntervalSeconds = 1.0
        /// How long an enqueued task id stays reserved (a second enqueue with it is `already-exists`).
        public var taskDedupeWindowHours = 24.0
        /// Concurrency of trigger functions that set none.
        public var defaultConcurrency = 100
        /// Keep each trigger's commit-to-start latency in the engine's stats (benchmarks; not in runtime.toml).
        public var recordsTriggerLatency = false
        public init() {}
    }

    public struct Log: Sendable, Equatable {
        public var level = LogLevel.info
        public var format = RuntimeLog.Format.text
        public init() {}
    }

    /// A path rewrite: requests whose path matches `source` go to the `onRequest` function `function`.
    public struct Rewrite: Sendable, Equatable {
        public var source: String
        public var function: String
        public init(source: String, function: String) {
            self.source = source
            self.function = function
        }
    }

    /// The project id, used in token issuers and callable URLs. A `demo-` prefix enables the
    /// emulator-compatible behaviours (as the Firebase emulators do).
    public var project = "hearth-local"
    public var region = "us-central1"
    /// Where the runtime keeps its data (store, keys); relative to the config file's directory.
    public var dataDirectory = ".hearth"
    /// Where unit libraries are found; nil means next to the `hearth` executable.
    public var unitsDirectory: String?
    /// Where the units' sources are: each directory in it (but `Shared`, which holds libraries
    /// units share) is a unit of that name. Relative to the config file.
    public var functionsDirectory = "functions"
    /// The units to load: those `units` lists in runtime.toml, or, when it lists none, every unit
    /// under `functions_dir`.
    public var units: [Unit] = []
    public var workers = Workers()
    /// `[record]`: record every invocation into a directory (see `Recorder`); `hearth serve
    /// --record DIR` sets it too.
    public var record = Record()

    public struct Record: Sendable, Equatable {
        /// Where recording files go (relative to the config file); nil: not recording.
        public var directory: String?
        /// A file is rotated past this size.
        public var maxFileMB = 64
        public init() {}
    }
    /// The isolation of units when neither they nor `[workers]` choose: `hearth serve` sets
    /// process; tests, tools and the other commands run units in-process.
    public var defaultIsolation = Isolation.inProcess
    public var server = Server()
    public var store = Store()
    public var log = Log()
    public var auth = Auth()
    public var messaging = Messaging()
    public var outbound = Outbound()
    /// `[params]`: string parameters units read with `context.params` (Firebase's `defineString`),
    /// such as providers' base URLs. Not secrets: those go in `[secrets]`.
    public var params: [String: String] = [:]
    public var appCheck = AppCheck()
    /// `[firestore]`: documents over Firestore's REST API.
    public var firestore = Firestore()

    public struct Firestore: Sendable, Equatable {
        /// A `firestore.rules` file guarding clients' REST requests (relative to the config file);
        /// nil: clients may read and write nothing (the admin token still may).
        public var rules: String?
        public init() {}
    }
    public var delivery = Delivery()
    /// A TOML file of secrets (mode 0600), beside the environment; relative to the config file.
    public var secretsFile: String?
    public var rewrites: [Rewrite] = []
    /// The directory relative paths are resolved against (the config file's).
    public var baseDirectory = FileManager.default.currentDirectoryPath

    public init() {}

    /// Reads and validates a configuration file.
    public static func load(path: String) throws -> RuntimeConfig {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ConfigError("\(path): cannot read the file")
        }
        guard let text = String(validating: [UInt8](data), as: UTF8.self) else { throw ConfigError("\(path): not valid UTF-8") }
        let table: TOMLTable
        do { table = try TOML.parse(text) } catch { throw ConfigError("\(path): \(error)") }
        let base = URL(fileURLWithPath: path).deletingLastPathComponent().path
        let config: RuntimeConfig
        do { config = try RuntimeConfig(table: table, baseDirectory: base) } catch {
            throw ConfigError(error.problems.map { "\(path): \($0)" })
        }
        return config
    }

    /// Builds the configuration from a parsed document; every problem is reported at once.
    public init(table: TOMLTable, baseDirectory: String) throws(ConfigError) {
        self.init()
        self.baseDirectory = baseDirectory
        var r = ConfigReader(table)
        if let v = r.string("project") {
            if RuntimeConfig.isValidProjectID(v) { project = v } else { r.problem("project", "must be 4-30 lower-case letters, digits or '-', starting with a letter (got \"\(v)\")") }
        }
        if let v = r.string("region") { region = v }
        if let v = r.string("data_dir") { dataDirectory = v }
        if let v = r.string("units_dir") { unitsDirectory = v }
        if let v = r.string("functions_dir") { functionsDirectory = v }
        if r.raw("units") == nil { units = discoveredUnits() } else { readUnits(&r) }
        r.section("server") { s in
            if let v = s.string("host") { server.host = v }
            if let v = s.stringArray("allowed_hosts") { server.allowedHosts = v.map { $0.lowercased() } }
            if let v = s.int("port", range: 0...65535) { server.port = v }
            if let v = s.int("threads", range: 1...256) { server.threads = v }
            if let v = s.int("max_body_bytes", range: 1...(1 << 32)) { server.maxBodyBytes = v }
            if let v = s.int("max_header_bytes", range: 1024...(1 << 20)) { server.maxHeaderBytes = v }
            if let v = s.int("max_connections", range: 1...100_000) { server.maxConnections = v }
            if let v = s.int("reserved_connections", range: 0...10_000) { server.reservedConnections = v }
            if let v = s.seconds("head_timeout_seconds", range: 0.1...3600) { server.headTimeoutSeconds = v }
            if let v = s.int("max_buffered_bytes", range: 1...(1 << 40)) { server.maxBufferedBytes = v }
            if let v = s.seconds("request_timeout_seconds", range: 0.001...3600) { server.requestTimeoutSeconds = v }
            if let v = s.seconds("shutdown_grace_seconds", range: 0...3600) { server.shutdownGraceSeconds = v }
            if let v = s.string("admin_token_env") { server.adminTokenEnv = v }
            if let v = s.oneOf("scheduling", ThreadScheduling.self) { server.scheduling = v }
            // A body the server accepts must fit its budget, or it would be told to retry forever.
            if server.maxBufferedBytes < server.maxBodyBytes {
                s.problem("max_buffered_bytes", "must be at least max_body_bytes (\(server.maxBodyBytes))")
            }
        }
        r.section("store") { s in
            if let v = s.string("path") { store.path = v }
            if let v = s.oneOf("synchronous", Store.Synchronous.self) { store.synchronous = v }
            if let v = s.int("readers", range: 1...64) { store.readers = v }
            if let v = s.bool("background_checkpoints") { store.backgroundCheckpoints = v }
            if let v = s.seconds("change_retention_hours", range: 0.001...1_000_000) { store.changeRetentionHours = v }
        }
        r.section("auth") { s in
            if let v = s.bool("emulator") { auth.emulator = v }
            if let v = s.seconds("clock_skew_seconds", range: 0...3600) { auth.clockSkewSeconds = v }
            if let v = s.string("keys_file") { auth.keysFile = v }
            if let v = s.stringArray("providers") {
                if let unknown = v.first(where: { !Auth.knownProviders.contains($0) }) {
                    s.problem("providers", "unknown sign-in method \"\(unknown)\" (known: \(Auth.knownProviders.sorted().joined(separator: ", ")))")
                } else {
                    auth.providers = v
                }
            }
            if let v = s.bool("email_enumeration_protection") { auth.emailEnumerationProtection = v }
            if let v = s.int("password_hash_mem_cost", range: 1...20) { auth.passwordHashMemCost = v }
            if let v = s.int("password_hash_rounds", range: 1...32) { auth.passwordHashRounds = v }
            let memory = 128 * (UInt64(1) << UInt64(auth.passwordHashMemCost)) * UInt64(auth.passwordHashRounds)
            if memory > 1 << 30 {
                s.problem("password_hash_mem_cost", "scrypt with N = 2^\(auth.passwordHashMemCost) and r = \(auth.passwordHashRounds) needs \(memory >> 20) MiB a hash; at most 1024 MiB")
            }
            if let v = s.int("failed_sign_in_burst", range: 1...1_000_000) { auth.failedSignInBurst = v }
            if let v = s.seconds("failed_sign_in_refill_seconds", range: 0...86_400) { auth.failedSignInRefillSeconds = v }
            if let v = s.stringArray("google_client_ids") { auth.googleClientIDs = v }
            if let v = s.string("google_jwks") { auth.googleJWKS = v }
            if let v = s.stringArray("apple_client_ids") { auth.appleClientIDs = v }
            if let v = s.string("apple_jwks") { auth.appleJWKS = v }
        }
        r.section("messaging") { s in
            if let v = s.oneOf("mode", Messaging.Mode.self) { messaging.mode = v }
            if let v = s.string("service_account_file") { messaging.serviceAccountFile = v }
            if let v = s.string("fcm_url") { messaging.fcmURL = v }
            if let v = s.string("oauth_token_url") { messaging.oauthTokenURL = v }
            if messaging.mode == .fcm && messaging.serviceAccountFile == nil {
                s.problem("mode", "\"fcm\" needs service_account_file")
            }
        }
        r.section("outbound") { s in
            if let v = s.stringArray("allow") {
                if let bad = v.first(where: { !($0.hasPrefix("https://") || $0.hasPrefix("http://")) || $0.count < 10 }) {
                    s.problem("allow", "\"\(bad)\" is not an http(s) base URL")
                } else {
                    outbound.allow = v
                }
            }
            if let v = s.seconds("timeout_seconds", range: 0.1...600) { outbound.timeoutSeconds = v }
            if let v = s.int("max_response_bytes", range: 1...(1 << 30)) { outbound.maxResponseBytes = v }
        }
        r.section("params") { s in
            for key in s.table.keys {
                if let v = s.string(key) { params[key] = v }
            }
        }
        r.section("app_check") { s in
            if let v = s.string("jwks_file") { appCheck.jwksFile = v }
            if let v = s.string("issuer_prefix") { appCheck.issuerPrefix = v }
        }
        r.section("firestore") { s in
            if let v = s.string("rules") { firestore.rules = v }
        }
        r.section("workers") { s in
            workers.isolation = RuntimeConfig.isolation(&s, "isolation")
            if let v = s.int("count", range: 1...64) { workers.count = v }
            if let v = s.int("memory_limit_mb", range: 0...(1 << 22)) { workers.memoryLimitMB = v }
            if let v = s.int("open_files", range: 16...(1 << 20)) { workers.openFiles = v }
            if let v = s.seconds("kill_grace_seconds", range: 0...600) { workers.killGraceSeconds = v }
            if let v = s.seconds("restart_backoff_max_seconds", range: 0.01...3600) { workers.restartBackoffMaxSeconds = v }
            if let v = s.seconds("start_timeout_seconds", range: 0.1...3600) { workers.startTimeoutSeconds = v }
            if let v = s.string("executable") { workers.executable = v }
        }
        r.section("record") { s in
            if let v = s.string("directory") { record.directory = v }
            if let v = s.int("max_file_mb", range: 1...(1 << 20)) { record.maxFileMB = v }
        }
        r.section("delivery") { s in
            if let v = s.seconds("poll_interval_seconds", range: 0.01...3600) { delivery.pollIntervalSeconds = v }
            if let v = s.seconds("task_dedupe_window_hours", range: 0...8760) { delivery.taskDedupeWindowHours = v }
            if let v = s.int("default_concurrency", range: 1...100_000) { delivery.defaultConcurrency = v }
        }
        r.section("secrets") { s in
            if let v = s.string("file") { secretsFile = v }
        }
        r.section("log") { s in
            if let v = s.oneOf("level", LogLevel.self) { log.level = v }
            if let v = s.oneOf("format", RuntimeLog.Format.self) { log.format = v }
        }
        r.tables("rewrites") { s, _ in
            let source = s.string("source")
            let function = s.string("function")
            if source == nil { s.problem("source", "missing (a path glob such as \"/api/todos/**\")") }
            if function == nil { s.problem("function", "missing (the name of an onRequest function)") }
            if let source, let function { rewrites.append(Rewrite(source: source, function: function)) }
        }
        r.finish()
        if !r.problems.isEmpty { throw ConfigError(r.problems) }
    }

    private mutating func readUnits(_ r: inout ConfigReader) {
        guard let raw = r.raw("units") else { return }
        guard case .array(let items) = raw else {
            r.problem("units", "expected a list of unit names or [[units]] tables")
            return
        }
        var names: Set<String> = []
        for (i, item) in items.enumerated() {
            var unit: Unit?
            switch item {
            case .string(let name):
                unit = Unit(name: name)
            case .table(let t):
                var sub = ConfigReader(t, path: "units[\(i)]")
                if let name = sub.string("name") {
                    var u = Unit(name: name, path: sub.string("path"))
                    u.isolation = RuntimeConfig.isolation(&sub, "isolation")
                    u.workers = sub.int("workers", range: 1...64)
                    u.memoryLimitMB = sub.int("memory_limit_mb", range: 0...(1 << 22))
                    u.openFiles = sub.int("open_files", range: 16...(1 << 20))
                    unit = u
                } else {
                    sub.problem("name", "missing")
                }
                sub.finish()
                r.problems(sub.problems)
            default:
                r.problem("units[\(i)]", "expected a unit name or a table with name and path")
            }
            guard let unit else { continue }
            if !RuntimeConfig.isValidUnitName(unit.name) {
                r.problem("units[\(i)].name", "'\(unit.name)' is not a valid unit name (letters, digits and '_', starting with a letter)")
            } else if !names.insert(unit.name).inserted {
                r.problem("units[\(i)].name", "unit '\(unit.name)' is listed twice")
            } else {
                units.append(unit)
            }
        }
    }

    /// The units under `functionsDirectory`: its subdirectories whose names are unit names (not
    /// `Shared`, not hidden), sorted. None when the directory does not exist.
    public func discoveredUnits() -> [Unit] {
        let directory = resolve(functionsDirectory)
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        return names.filter { name in
            var isDirectory: ObjCBool = false
            return name != "Shared" && RuntimeConfig.isValidUnitName(name)
                && FileManager.default.fileExists(atPath: directory + "/" + name, isDirectory: &isDirectory) && isDirectory.boolValue
        }.sorted().map { Unit(name: $0) }
    }

    static func isolation(_ r: inout ConfigReader, _ key: String) -> Isolation? {
        guard let v = r.string(key) else { return nil }
        guard let isolation = Isolation(rawValue: v) else {
            r.problem(key, "expected \"process\" or \"in-process\" (got \"\(v)\")")
            return nil
        }
        return isolation
    }

    /// How `unit` runs: its own setting, else `[workers]`'s, else the mode's default.
    public func isolation(of unit: Unit) -> Isolation { unit.isolation ?? workers.isolation ?? defaultIsolation }

    /// The `hearth` executable worker processes run (see `Workers.executable`).
    public var workerExecutable: String {
        if let executable = workers.executable { return resolve(executable) }
        let exe = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        if (exe as NSString).lastPathComponent == "hearth" { return exe }
        let candidates = [resolvedUnitsDirectory + "/hearth", RuntimeConfig.executableDirectory + "/hearth"]
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0) } ?? candidates[0]
    }

    static func isValidProjectID(_ s: String) -> Bool {
        let u = Array(s.utf8)
        guard (4...30).contains(u.count), let f = u.first, f >= 97 && f <= 122 else { return false }
        return u.allSatisfy { ($0 >= 97 && $0 <= 122) || ($0 >= 48 && $0 <= 57) || $0 == 45 }
    }

    static func isValidUnitName(_ s: String) -> Bool {
        let u = Array(s.utf8)
        guard !u.isEmpty, let f = u.first, f | 0x20 >= 97 && f | 0x20 <= 122 else { return false }
        return u.allSatisfy { ($0 | 0x20 >= 97 && $0 | 0x20 <= 122) || ($0 >= 48 && $0 <= 57) || $0 == 95 }
    }

    /// Resolves a path from the configuration against the config file's directory.
    public func resolve(_ path: String) -> String {
        path.hasPrefix("/") ? path : URL(fileURLWithPath: baseDirectory).appendingPathComponent(path).standardized.path
    }

    public var resolvedDataDirectory: String { resolve(dataDirectory) }

    /// The store's database file: `store.path` inside the data directory (or absolute).
    public var storePath: String {
        store.path.hasPrefix("/") ? store.path : URL(fileURLWithPath: resolvedDataDirectory).appendingPathComponent(store.path).path
    }

    /// Whether unsigned tokens are accepted (see `Auth.emulator`).
    public var emulatorMode: Bool { auth.emulator ?? project.hasPrefix("demo-") }

    /// Email enumeration protection as configured, else on, except in emulator mode.
    public var emailEnumerationProtection: Bool { auth.emailEnumerationProtection ?? !emulatorMode }

    public var keysPath: String {
        auth.keysFile.hasPrefix("/") ? auth.keysFile : URL(fileURLWithPath: resolvedDataDirectory).appendingPathComponent(auth.keysFile).path
    }

    public var storeOptions: SQLiteEngine.Options {
        SQLiteEngine.Options(synchronous: SQLiteEngine.Options.Synchronous(rawValue: store.synchronous.rawValue.uppercased()) ?? .normal,
                             readers: store.readers, backgroundCheckpoints: store.backgroundCheckpoints)
    }

    /// The directory unit libraries are loaded from.
    public var resolvedUnitsDirectory: String {
        if let unitsDirectory { return resolve(unitsDirectory) }
        return RuntimeConfig.executableDirectory
    }

    /// The library path of a unit.
    public func libraryPath(of unit: Unit) -> String {
        if let path = unit.path { return resolve(path) }
        return UnitLoader.libraryPath(unit: unit.name, directory: resolvedUnitsDirectory)
    }

    public static var executableDirectory: String {
        let exe = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        return URL(fileURLWithPath: exe).deletingLastPathComponent().path
    }

    /// The effective configuration with every default filled in, as `hearth config show` prints it.
    public var value: Value {
        let unitValues: [Value] = units.map { u in
            var m: [String: Value] = ["name": .string(u.name), "library": .string(libraryPath(of: u)),
                                      "isolation": .string(isolation(of: u).rawValue)]
            if let p = u.path { m["path"] = .string(p) }
            if let w = u.workers { m["workers"] = .int(Int64(w)) }
            if let v = u.memoryLimitMB { m["memory_limit_mb"] = .int(Int64(v)) }
            if let v = u.openFiles { m["open_files"] = .int(Int64(v)) }
            return .map(m)
        }
        return [
            "project": .string(project),
            "region": .string(region),
            "data_dir": .string(dataDirectory),
            "units_dir": .string(resolvedUnitsDirectory),
            "functions_dir": .string(resolve(functionsDirectory)),
            "units": .array(unitValues),
            "workers": [
                "isolation": .string((workers.isolation ?? defaultIsolation).rawValue), "count": .int(Int64(workers.count)),
                "memory_limit_mb": .int(Int64(workers.memoryLimitMB)), "open_files": .int(Int64(workers.openFiles)),
                "kill_grace_seconds": .double(workers.killGraceSeconds), "restart_backoff_max_seconds": .double(workers.restartBackoffMaxSeconds),
                "start_timeout_seconds": .double(workers.startTimeoutSeconds),
                "executable": .string(workerExecutable),
            ],
            "record": ["directory": record.directory.map { .string(resolve($0)) } ?? .null, "max_file_mb": .int(Int64(record.maxFileMB))],
            "server": [
                "host": .string(server.host), "allowed_hosts": .array(server.allowedHosts.map { .string($0) }), "port": .int(Int64(server.port)), "threads": .int(Int64(server.threads)),
                "max_body_bytes": .int(Int64(server.maxBodyBytes)), "max_header_bytes": .int(Int64(server.maxHeaderBytes)),
                "max_connections": .int(Int64(server.maxConnections)), "reserved_connections": .int(Int64(server.reservedConnections)),
                "head_timeout_seconds": .double(server.headTimeoutSeconds), "max_buffered_bytes": .int(Int64(server.maxBufferedBytes)),
                "request_timeout_seconds": .double(server.requestTimeoutSeconds),
                "shutdown_grace_seconds": .double(server.shutdownGraceSeconds), "scheduling": .string(server.scheduling.rawValue),
                "admin_token_env": .string(server.adminTokenEnv),
            ],
            "store": [
                "path": .string(store.path), "synchronous": .string(store.synchronous.rawValue),
                "readers": .int(Int64(store.readers)), "background_checkpoints": .bool(store.backgroundCheckpoints), "change_retention_hours": .double(store.changeRetentionHours),
            ],
            "log": ["level": .string(log.level.rawValue), "format": .string(log.format.rawValue)],
            "auth": ["emulator": .bool(emulatorMode), "clock_skew_seconds": .double(auth.clockSkewSeconds), "keys_file": .string(keysPath),
                     "providers": .array(auth.providers.map { .string($0) }), "email_enumeration_protection": .bool(emailEnumerationProtection),
                     "password_hash_mem_cost": .int(Int64(auth.passwordHashMemCost)), "password_hash_rounds": .int(Int64(auth.passwordHashRounds)),
                     "failed_sign_in_burst": .int(Int64(auth.failedSignInBurst)), "failed_sign_in_refill_seconds": .double(auth.failedSignInRefillSeconds),
                     "google_client_ids": .array(auth.googleClientIDs.map { .string($0) }), "google_jwks": .string(auth.googleJWKS),
                     "apple_client_ids": .array(auth.appleClientIDs.map { .string($0) }), "apple_jwks": .string(auth.appleJWKS)],
            "messaging": ["mode": .string(messaging.resolvedMode.rawValue), "service_account_file": messaging.serviceAccountFile.map { .string(resolve($0)) } ?? .null,
                          "fcm_url": .string(messaging.fcmURL), "oauth_token_url": messaging.oauthTokenURL.map { .string($0) } ?? .null],
            "outbound": ["allow": .array(outbound.allow.map { .string($0) }), "timeout_seconds": .double(outbound.timeoutSeconds),
                         "max_response_bytes": .int(Int64(outbound.maxResponseBytes))],
            "params": .map(params.mapValues { .string($0) }),
            "app_check": ["jwks_file": appCheck.jwksFile.map { .string(resolve($0)) } ?? .null, "issuer_prefix": .string(appCheck.issuerPrefix)],
            "firestore": ["rules": firestore.rules.map { .string(resolve($0)) } ?? .null],
            "secrets": ["file": secretsFile.map { .string(resolve($0)) } ?? .null],
            "delivery": ["poll_interval_seconds": .double(delivery.pollIntervalSeconds), "task_dedupe_window_hours": .double(delivery.taskDedupeWindowHours),
                         "default_concurrency": .int(Int64(delivery.defaultConcurrency))],
            "rewrites": .array(rewrites.map { ["source": .string($0.source), "function": .string($0.function)] }),
        ]
    }
}
