import Foundation
import HearthAuth
import HearthHTTP
import HearthModel
import HearthRules
import HearthStore
import Synchronization

/// The runtime's HTTP face: the Firebase callable protocol, `onRequest` functions behind rewrites,
/// the Auth REST endpoints an iOS app and firebase-admin use against an emulator, the admin API,
/// `/healthz` and `/metrics`.
///
/// Routes, in order: `/healthz`, `/metrics`, `/__/admin/…`, `/identitytoolkit.googleapis.com/…`,
/// `/www.googleapis.com/identitytoolkit/v3/…` (the iOS SDK's paths), `/securetoken.googleapis.com/…`,
/// `/emulator/v1/…` (the Auth emulator's oobCodes), `/v1/projects/{p}/databases/…` (Firestore's REST
/// API, `FirestoreREST`; also under `/v1beta1`), `[[rewrites]]` (first match wins), `/api/**` (404), then
/// functions at `/{name}` and `/{project}/{region}/{name}`.
public final class FrontDoor: Sendable {
    public let runtime: Runtime
    let server: HTTPServer
    let secrets: Secrets
    let appCheck: AppCheckVerifier?
    let rewrites: [Rewrite]
    /// Documents over Firestore's REST v1 API, under `firestore.rules`.
    let documents: FirestoreREST
    private let ready = Atomic<Bool>(false)

    /// A path glob mapped to an `onRequest` function: `/api/todos` matches exactly, `/api/todos/**`
    /// matches it and everything beneath, `*` matches one segment.
    struct Rewrite: Sendable {
        let source: String
        let function: String
        let segments: [Substring]

        init(source: String, function: String) {
            self.source = source
            self.function = function
            segments = PathRules.split(source, omittingEmpty: true)
        }

        func matches(_ path: [Substring]) -> Bool {
            for (k, segment) in segments.enumerated() {
                if segment == "**" { return true }  // validated to end the pattern: anything below, or nothing
                guard k < path.count else { return false }
                if segment != "*" && segment != path[k] { return false }
            }
            return path.count == segments.count
        }
    }

    /// Builds the front door; configuration errors (rewrites to unknown or non-`onRequest`
    /// functions, rewrites shadowing callable routes, unreadable App Check keys) are thrown.
    /// A token of this process's own that the admin API also accepts (`hearth serve` writes it to
    /// the data directory's host registry for `hearth deploy`).
    let controlToken: String?

    public init(runtime: Runtime, secrets: Secrets, controlToken: String? = nil) throws {
        self.runtime = runtime
        self.secrets = secrets
        self.controlToken = controlToken
        let config = runtime.config
        rewrites = config.rewrites.map { Rewrite(source: $0.source, function: $0.function) }
        if let file = config.appCheck.jwksFile {
            let path = config.resolve(file)
            guard let data = FileManager.default.contents(atPath: path) else { throw ConfigError("app_check.jwks_file: cannot read \(path)") }
            let keys = try AppCheckVerifier.keys(jwks: try JSONParser.parse([UInt8](data)))
            appCheck = AppCheckVerifier(keys: keys, projectID: config.project, issuerPrefix: config.appCheck.issuerPrefix, clock: runtime.clock)
        } else {
            appCheck = nil
        }
        let store = runtime.store
        let read: @Sendable (DocumentPath) throws -> StoredDocument?
        if let embedded = store.engine as? SQLiteEngine {
            read = { path in try embedded.getAll([path])[0] }
        } else {
            read = { path in throw HTTPSError(.unimplemented, "get() and exists() in rules need the embedded store (reading \(path))") }
        }
        let rules = try FirestoreAccess.load(config).map { FrontDoor.withDebugLog($0, config, runtime.log) }
        documents = FirestoreREST(runtime: runtime, access: FirestoreAccess(rules: RulesInForce(rules), clock: runtime.clock, read: read, log: runtime.log))
        var serverConfig = HTTPServer.Configuration()
        serverConfig.host = config.server.host
        serverConfig.port = config.server.port
        serverConfig.threads = config.server.threads
        serverConfig.maxBodyBytes = config.server.maxBodyBytes
        serverConfig.maxHeaderBytes = config.server.maxHeaderBytes
        serverConfig.maxConnections = config.server.maxConnections
        serverConfig.reservedConnections = config.server.reservedConnections
        serverConfig.headTimeout = .seconds(double: config.server.headTimeoutSeconds)
        serverConfig.readTimeout = .seconds(double: config.server.requestTimeoutSeconds)
        serverConfig.maxBufferedBytes = config.server.maxBufferedBytes
        // Functions enforce their own timeouts (up to an hour); the server's is a backstop above them.
        let longest = runtime.table.entries.compactMap(\.spec.options.timeout).max() ?? FunctionOptions.defaultTimeout
        serverConfig.requestTimeout = max(.seconds(double: config.server.requestTimeoutSeconds), longest + .seconds(5))
        let box = HandlerBox()
        server = HTTPServer(configuration: serverConfig, head: { head in box.check(&head) }, immediate: { request in box.handleNow(request) }) { request in
            await box.handle(request)
        }
        box.door.withLock { $0.door = self }
        try validateRoutes()
    }

    /// Refuses rewrites that point nowhere sensible or hide a callable's route.
    func validateRoutes() throws {
        var problems: [String] = []
        let table = runtime.table
        for (i, rewrite) in rewrites.enumerated() {
            guard rewrite.source.hasPrefix("/") else {
                problems.append("rewrites[\(i)].source '\(rewrite.source)' must start with '/'")
                continue
            }
            if let starStar = rewrite.segments.firstIndex(of: "**"), starStar != rewrite.segments.count - 1 {
                problems.append("rewrites[\(i)].source '\(rewrite.source)': '**' may only end the path")
            }
            guard let entry = table[rewrite.function] else {
                problems.append("rewrites[\(i)] points to '\(rewrite.function)', which no loaded unit declares")
                continue
            }
            if entry.trigger != .request {
                problems.append("rewrites[\(i)] points to '\(rewrite.function)', a \(entry.trigger.kindName) function; rewrites need onRequest functions")
            }
            for callable in table.entries where callable.trigger == .callable {
                let paths = [["\(callable.name)"], [config.project, config.region, callable.name]].map { $0.map { Substring($0) } }
                if paths.contains(where: rewrite.matches) {
                    problems.append("rewrites[\(i)] '\(rewrite.source)' shadows the route of callable '\(callable.name)'")
                }
            }
        }
        if !problems.isEmpty { throw ConfigError(problems) }
    }

    var config: RuntimeConfig { runtime.config }

    public var port: Int { server.port }

    public func start() throws {
        try server.start()
        ready.store(true, ordering: .relaxed)
        runtime.log.log(.notice, "listening", ["address": .string("http://\(config.server.host):\(server.port)"), "project": .string(config.project)])
        if config.emulatorMode && !CORS.isLocalPage("http://" + config.server.host) {
            // Emulator mode keeps its public credentials off other web pages, not off the network.
            runtime.log.warning("emulator mode listening on \(config.server.host): anyone who can reach this address may use its public credentials (Bearer owner, unsigned tokens, the emulator endpoints); bind 127.0.0.1 or turn emulator mode off")
        }
        if !HTTPServer.epollCorrectionActive {
            runtime.log.warning("libmicrohttpd's polling threads run without the epoll correction (CEpollBatches is not this executable's epoll_wait): with many busy connections a request can wait for the connection timeout")
        }
    }

    /// Stops accepting, finishes in-flight requests within `grace`, stops.
    public func shutdown(grace: Duration) async {
        ready.store(false, ordering: .relaxed)
        await server.shutdown(grace: grace)
    }

    var metrics: Metrics { runtime.invoker.metrics }

    // MARK: routing

    /// Where a path leads: decided from the path alone, so the head can be routed before the body
    /// is read (`check`) and the request dispatched after (`route`), by one rule.
    enum Target {
        case health, metrics
        case admin(ArraySlice<Substring>)
        case identityToolkit(ArraySlice<Substring>), secureToken(ArraySlice<Substring>), emulator(ArraySlice<Substring>)
        case legacyToolkit(ArraySlice<Substring>)
        case firestore(ArraySlice<Substring>)
        /// The Cloud Tasks API, as the Admin SDKs call an emulator of it (`FrontDoor+CloudTasks`).
        case cloudTasks
        case rewrite(Rewrite)
        case function(FunctionEntry)
        case notFound(String)

        /// The function, when the target is one.
        var function: FunctionEntry? {
            if case .function(let entry) = self { return entry }
            return nil
        }
    }

    func target(_ segments: [Substring]) -> Target {
        // Segments compared to the reserved names byte for byte (`==` on a Substring and a literal
        // takes the standard library's general comparison: with it, this function was 1% of an
        // echo callable's host samples and its comparisons 0.5% more, twice per request).
        func segment(_ i: Int, is name: StaticString) -> Bool { i < segments.count && FrontDoor.same(segments[i], name) }
        let count = segments.count
        if segment(0, is: "healthz") && count == 1 { return .health }
        if segment(0, is: "metrics") && count == 1 { return .metrics }
        if segment(0, is: "__") && segment(1, is: "admin") { return .admin(segments.dropFirst(2)) }
        if segment(0, is: "identitytoolkit.googleapis.com") { return .identityToolkit(segments.dropFirst()) }
        if segment(0, is: "securetoken.googleapis.com") { return .secureToken(segments.dropFirst()) }
        if segment(0, is: "emulator") && (segment(1, is: "v1") || segment(1, is: "action")) { return .emulator(segments.dropFirst()) }
        if segment(0, is: "www.googleapis.com") && segment(1, is: "identitytoolkit") { return .legacyToolkit(segments.dropFirst()) }
        // v1beta1 is the same API under its older name, which older firebase-tools still call.
        if (segment(0, is: "v1") || segment(0, is: "v1beta1")) && count >= 6 && segment(1, is: "projects") && segment(3, is: "databases") {
            return .firestore(segments.dropFirst())
        }
        if segment(0, is: "projects") && segment(2, is: "locations") && segment(4, is: "queues") && segment(6, is: "tasks") && (count == 7 || count == 8) {
            return .cloudTasks
        }
        if let rewrite = rewrites.first(where: { $0.matches(segments) }) { return .rewrite(rewrite) }
        // Built only for an answer that names it: every function request passes here.
        var path: String { "/" + segments.joined(separator: "/") }
        if segment(0, is: "api") { return .notFound("no route for \(path)") }
        var name: Substring?
        if segments.count == 1 { name = segments[0] }
        if segments.count == 3 && segments[0] == Substring(config.project) && segments[1] == Substring(config.region) { name = segments[2] }
        guard let name, let entry = runtime.table[String(name)] else { return .notFound("no function at \(path)") }
        switch entry.trigger {
        case .callable, .request: return .function(entry)
        default: return .notFound("'\(entry.name)' is a \(entry.trigger.kindName) function and has no HTTP route")
        }
    }

    /// Whether `text` is `name`, compared over their UTF-8 bytes.
    static func same(_ text: Substring, _ name: StaticString) -> Bool {
        // `withUTF8Buffer`, not `utf8Start`: a one-scalar literal is stored without a pointer.
        name.withUTF8Buffer { bytes in
            let utf8 = text.utf8
            guard utf8.count == bytes.count else { return false }
            return utf8.withContiguousStorageIfAvailable { $0.elementsEqual(bytes) } ?? utf8.elementsEqual(bytes)
        }
    }

    /// What the head alone decides, before any body byte is read: a path that routes nowhere is 404
    /// (with the CORS headers the full answer would have), and the admin API without its token is
    /// refused. A request with a body answered here is closed unread. A function's entry is left in
    /// the head's note, so that the request is not routed again once whole (`routed`).
    func check(_ head: inout HTTPRequestHead) -> HTTPServerResponse? {
        switch target(head.pathSegments) {
        case .admin(let rest): return adminRefusal(head.headers, Array(rest))
        case .notFound(let message): return .error(.notFound, message, headers: CORS.headers(policy: nil, origin: head.headers["origin"]))
        case .function(let entry):
            head.note = entry
            return nil
        default: return nil
        }
    }

    /// The function the head was routed to (`check`), if it is still the one the table has under
    /// its name: a deploy may have replaced it while the body came, and the request then goes to
    /// the new one, as if it had come whole after the deploy.
    func routed(_ request: HTTPServerRequest) -> FunctionEntry? {
        guard let entry = request.note as? FunctionEntry, runtime.table[entry.name] === entry else { return nil }
        return entry
    }

    func handle(_ request: HTTPServerRequest) async -> HTTPServerResponse {
        let started = ContinuousClock.now
        metrics.httpInFlight.wrappingAdd(1, ordering: .relaxed)
        let (route, response) = await route(request)
        return counted(response, route: route, started: started)
    }

    /// Bodies up to this size are parsed on the server's thread (`handleNow`); larger ones in a task,
    /// so that no request holds up that thread's other connections for long (a 64 KiB body parses in
    /// well under a millisecond).
    static let immediateBodyLimit = 64 * 1024

    /// What the server's own thread answers, with no task (`HTTPServer.ImmediateHandler`): calls to
    /// callables of units in worker processes, which wait for nothing before their message goes
    /// to the worker: those with no ID token, and those whose token was verified before (its
    /// signature's check is cached) and whose user's state the store has on this thread (as read
    /// before while no user has changed since, or by a primary-key read on a connection already
    /// open, which never waits for a lock: when it would, or no connection is idle, the call goes
    /// to a task). Everything else (nil) goes through `handle`, in a task: a token seen for the
    /// first time is verified there, and a unit loaded in-process would start its handler on the
    /// calling thread (`Task.immediate`), where a long synchronous handler would hold up the
    /// server's connections.
    func handleNow(_ request: HTTPServerRequest) -> HTTPServerResponse? {
        guard request.method == "POST", request.body.count <= Self.immediateBodyLimit else { return nil }
        guard let entry = routed(request) ?? target(request.pathSegments).function, entry.trigger == .callable, entry.unit.isolation == .process else {
            return nil
        }
        let started = ContinuousClock.now
        metrics.httpInFlight.wrappingAdd(1, ordering: .relaxed)
        // A worker's full socket does not stall this thread: a polling thread's frames wait for
        // its next poll, and what does not fit then goes to a background writer (`FrameSocket`).
        guard let response = callableNow(entry, request, countedFrom: started) else {
            metrics.httpInFlight.wrappingSubtract(1, ordering: .relaxed)
            return nil
        }
        // The function's answer is counted where it is made (`invoke`), without the three closures
        // `counted` would wrap it in; an answer made here (a refusal, a stream) is counted now.
        if case .later = response.body { return response }
        return counted(response, route: "callable", started: started)
    }

    /// Counted when the response is known, which for a function's call is after it returns.
    func counted(_ response: HTTPServerResponse, route: String, started: ContinuousClock.Instant) -> HTTPServerResponse {
        let metrics = self.metrics
        return response.map { r in
            FrontDoor.count(r, route: route, started: started, in: metrics)
            return r
        }
    }

    /// Counts a response to a request started at `started`, once it is known.
    static func count(_ response: HTTPServerResponse, route: String, started: ContinuousClock.Instant, in metrics: Metrics) {
        metrics.httpInFlight.wrappingSubtract(1, ordering: .relaxed)
        metrics.request(route: route, status: response.status, seconds: (ContinuousClock.now - started).secondsDouble)
    }

    func route(_ request: HTTPServerRequest) async -> (String, HTTPServerResponse) {
        let segments = request.pathSegments
        switch target(segments) {
        case .health: return ("health", health())
        case .metrics: return ("metrics", metricsResponse())
        case .admin(let rest): return ("admin", await admin(request, Array(rest)))
        case .identityToolkit(let rest): return ("auth", await withBrowserCORS(request) { await identityToolkit(request, Array(rest)) })
        case .secureToken(let rest): return ("auth", await withBrowserCORS(request) { await secureToken(request, Array(rest)) })
        case .emulator(let rest): return ("auth", await withBrowserCORS(request, localPagesOnly: true) { await emulatorEndpoint(request, Array(rest)) })
        case .legacyToolkit(let rest): return ("auth", await withBrowserCORS(request) { await legacyToolkit(request, Array(rest)) })
        case .firestore(let rest): return ("firestore", await firestore(request, Array(rest)))
        case .cloudTasks: return ("tasks", await cloudTasks(request, segments))
        case .rewrite(let rewrite):
            guard let entry = runtime.table[rewrite.function], entry.trigger == .request else {
                return ("rewrite", .error(.notFound, "no onRequest function '\(rewrite.function)'"))
            }
            return ("request", await onRequest(entry, request))
        case .function(let entry):
            switch entry.trigger {
            case .callable: return ("callable", await callable(entry, request))
            default: return ("request", await onRequest(entry, request))
            }
        case .notFound(let message):
            // Not-found answers carry the default CORS headers, so a browser app sees the 404 itself.
            let cors = CORS.headers(policy: nil, origin: request.headers["origin"])
            return (segments.first == "api" ? "api" : "other", .error(.notFound, message, headers: cors))
        }
    }

    // MARK: health and metrics

    func health() -> HTTPServerResponse {
        let table = runtime.table
        let units = table.units
        let unhealthy = units.filter { !$0.health.healthy }
        // A unit whose workers keep dying leaves the host serving the others: degraded, not down.
        let status: Value = !ready.load(ordering: .relaxed) ? "unavailable" : unhealthy.isEmpty ? "ok" : "degraded"
        let body: Value = [
            "status": status,
            "functions": .int(Int64(table.entries.count)),
            "units": .array(units.map { .string($0.name) }),
            "unitStatus": .map(Dictionary(units.map { ($0.name, $0.statusValue) }, uniquingKeysWith: { a, _ in a })),
            "unhealthyUnits": .array(unhealthy.map { .string($0.name) }),
            "refusedUnits": .array(runtime.loadErrors.map { .string($0.unit) }),
        ]
        return .json(body, status: ready.load(ordering: .relaxed) ? 200 : 503)
    }

    func metricsResponse() -> HTTPServerResponse {
        let text = metrics.render(extra: runtime.extraMetrics())
        return HTTPServerResponse(status: 200, headers: HTTPHeaders([("Content-Type", "text/plain; version=0.0.4; charset=utf-8")]), body: .bytes(Array(text.utf8)))
    }
}

/// Lets the server's handler reach the front door that owns the server (set once, right after
/// init). Weak, so the door and its server do not keep each other alive.
final class HandlerBox: Sendable {
    struct Reference { weak var door: FrontDoor? }
    let door = Mutex(Reference())

    func handle(_ request: HTTPServerRequest) async -> HTTPServerResponse {
        guard let door = door.withLock({ $0.door }) else { return .error(.unavailable, "the server is stopping") }
        return await door.handle(request)
    }

    func check(_ head: inout HTTPRequestHead) -> HTTPServerResponse? {
        door.withLock { $0.door }?.check(&head)
    }

    func handleNow(_ request: HTTPServerRequest) -> HTTPServerResponse? {
        door.withLock { $0.door }?.handleNow(request)
    }
}

extension FrontDoor {
    /// debug() in rules writes to the server log, at debug level, in emulator mode only: as on
    /// Firebase, where only the emulator's debug log shows it (production drops it, so rules keep
    /// their debug() calls, and the values they show are users' data).
    static func withDebugLog(_ rules: Ruleset, _ config: RuntimeConfig, _ log: RuntimeLog) -> Ruleset {
        guard config.emulatorMode else { return rules }
        var rules = rules
        rules.debugLog = { log.log(.debug, "firestore.rules \($0)") }
        return rules
    }

    /// The Firestore emulator's `PUT /emulator/v1/projects/{project}:securityRules`
    /// (`{"rules": {"files": [{"name"?, "content"}]}}`, as @firebase/rules-unit-testing sends it):
    /// the rules in force until the next one or a restart. A file that does not load is refused,
    /// naming line and column, and the rules in force stay.
    func putSecurityRules(_ request: HTTPServerRequest) -> HTTPServerResponse {
        guard request.method == "PUT" else { return FrontDoor.toolkitError(405, "METHOD_NOT_ALLOWED") }
        guard case .map(let body)? = try? JSONParser.parse(request.body), case .array(let files)? = body["rules"]?["files"],
              files.count == 1, let content = files[0]["content"]?.stringValue else {
            return .googleError(HTTPSError(.invalidArgument, "the body must be {\"rules\": {\"files\": [{\"content\": \"…\"}]}} with one file"))
        }
        let name = files[0]["name"]?.stringValue ?? "firestore.rules"
        do {
            let rules = FrontDoor.withDebugLog(try Ruleset(source: content, fileName: name), config, runtime.log)
            documents.access.rules.replace(with: rules)
            runtime.log.info("firestore rules replaced", ["file": .string(name)])
            return .json([:])
        } catch {
            return .googleError(HTTPSError(.invalidArgument, "\(error)"))
        }
    }
}
