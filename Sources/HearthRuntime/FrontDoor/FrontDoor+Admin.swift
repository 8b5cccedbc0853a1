import HearthAuth
import HearthHTTP
import HearthModel
import HearthStore

/// The admin API under `/__/admin/`, for `Authorization: Bearer <admin token>`. The token comes from
/// the environment variable named by `server.admin_token_env` (default HEARTH_ADMIN_TOKEN) or the
/// secrets file entry of that name; with no token configured the whole API is off (404).
///
/// - `GET  functions`                    the function table
/// - `POST functions/{name}:invoke`      `{"data": …, "uid"?: …}` → `{"result"}` or `{"error"}`
/// - `GET  users[?maxResults&pageToken]`, `GET users/{uid}`, `POST users`, `PATCH users/{uid}`,
///   `DELETE users/{uid}`, `PUT users/{uid}/claims`
/// - `GET  deliveries[?function&state=pending|running|dead&limit]`, `POST deliveries/{id}:retry`,
///   `DELETE deliveries/{id}`
/// - `POST tasks` (one task `{queue, data, id?, scheduleDelaySeconds?|scheduleTime?, dispatchDeadlineSeconds?}`
///   or `{"tasks": [...]}`), `DELETE tasks/{queue}/{id}`
/// - `GET  schedules`, `POST schedules/{name}:run`
/// - `GET  record` (whether this server records, where), `POST record` `{"enabled": true,
///   "directory"?: …}` or `{"enabled": false}` (see `Runtime.startRecording`)
/// - `GET  units` (each unit's version, isolation and health), `POST units/{unit}:activate`
///   `{"version": …}` (a version `hearth deploy` recorded; see `Runtime.activate`)
extension FrontDoor {
    /// Why a request may not use the admin API (nil when it may): no token configured (the API is
    /// off), or not the token. Checked on the head, before a body is read, and again here.
    /// The control token `hearth serve` registers opens only the units routes (deploys); the rest
    /// of the API needs the configured admin token.
    func adminRefusal(_ headers: HTTPHeaders, _ segments: [Substring]) -> HTTPServerResponse? {
        let tokens = [adminToken, segments.first == "units" ? controlToken : nil].compactMap { $0 }
        guard !tokens.isEmpty else { return .error(.notFound, "the admin API is off: no admin token is configured") }
        guard let header = headers["authorization"], let bearer = BearerCredential.token(in: header),
              tokens.contains(where: { Crypto.constantTimeEqual(Array(bearer.utf8), Array($0.utf8)) }) else {
            return .error(.unauthenticated, "the admin API needs Authorization: Bearer <admin token>")
        }
        return nil
    }

    func admin(_ request: HTTPServerRequest, _ segments: [Substring]) async -> HTTPServerResponse {
        if let refusal = adminRefusal(request.headers, segments) { return refusal }
        let body: Value
        if request.body.isEmpty {
            body = .emptyMap
        } else {
            do { body = try JSONParser.parse(request.body, options: .clientBody) } catch {
                return .error(.invalidArgument, "the body is not valid JSON: \(error)")
            }
        }
        do {
            switch (request.method, segments.map(String.init)) {
            case ("GET", ["functions"]):
                return .json(["functions": .array(runtime.table.descriptions)])
            case ("POST", let path) where path.count == 2 && path[0] == "functions" && path[1].hasSuffix(":invoke"):
                let name = String(path[1].dropLast(":invoke".count))
                var auth: CallerAuth?
                if let uid = body["uid"]?.stringValue { auth = try await runtime.caller(asUser: uid) }
                let outcome = await runtime.call(name, data: body["data"] ?? .null, auth: auth)
                switch outcome.result {
                case .success(let v): return .json(["result": v.value])
                case .failure(let e):
                    let visible = e.httpsError
                    return .json(["error": visible.callableBody], status: visible.code.httpStatus)
                }
            case ("GET", ["users"]):
                let query = Dictionary(request.queryItems, uniquingKeysWith: { _, b in b })
                let maxResults = try FrontDoor.integer(query["maxResults"], "maxResults", in: 1...1000) ?? 1000
                let page = try await runtime.auth.listUsers(maxResults: maxResults, pageToken: query["pageToken"])
                var out: [String: Value] = ["users": try ValueEncoder().encode(page.users)]
                if let next = page.nextPageToken { out["nextPageToken"] = .string(next) }
                return .json(.map(out))
            case ("GET", let path) where path.count == 2 && path[0] == "users":
                return .json(try ValueEncoder().encode(try await runtime.auth.getUser(uid: path[1])))
            case ("POST", ["users"]):
                let request = try ValueDecoder().decode(NewUser.self, from: body)
                return .json(try ValueEncoder().encode(try await runtime.auth.createUser(request)), status: 201)
            case ("PATCH", let path) where path.count == 2 && path[0] == "users":
                let update = try ValueDecoder().decode(UserUpdate.self, from: body)
                return .json(try ValueEncoder().encode(try await runtime.auth.updateUser(uid: path[1], update)))
            case ("DELETE", let path) where path.count == 2 && path[0] == "users":
                try await runtime.auth.deleteUser(uid: path[1])
                return .json(["deleted": .string(path[1])])
            case ("PUT", let path) where path.count == 3 && path[0] == "users" && path[2] == "claims":
                guard case .map(let claims) = body else { return .error(.invalidArgument, "the claims must be a JSON object") }
                try await runtime.auth.setCustomClaims(uid: path[1], claims)
                return .json(try ValueEncoder().encode(try await runtime.auth.getUser(uid: path[1])))
            case ("GET", ["deliveries"]):
                let query = Dictionary(request.queryItems, uniquingKeysWith: { _, b in b })
                var state: DeliveryState?
                if let name = query["state"] {
                    guard let s = DeliveryState(name: name) else {
                        return .error(.invalidArgument, "state must be pending, running or dead (got '\(name)')")
                    }
                    state = s
                }
                let limit = try FrontDoor.integer(query["limit"], "limit", in: 1...10_000) ?? 100
                let list = try runtime.deliveries.list(function: query["function"], state: state, limit: limit)
                return .json(["deliveries": .array(list.map(\.summary))])
            case ("POST", let path) where path.count == 2 && path[0] == "deliveries" && path[1].hasSuffix(":retry"):
                guard let id = Int64(path[1].dropLast(":retry".count)) else { return .error(.invalidArgument, "a delivery id is a number") }
                try await runtime.retryDelivery(id)
                return .json(["retried": .int(id)])
            case ("DELETE", let path) where path.count == 2 && path[0] == "deliveries":
                guard let id = Int64(path[1]) else { return .error(.invalidArgument, "a delivery id is a number") }
                try await runtime.dropDelivery(id)
                return .json(["dropped": .int(id)])
            case ("POST", ["tasks"]):
                let tasks = try (body["tasks"]?.arrayValue ?? [body]).map { json throws(HTTPSError) in try TaskSpec(json: json) }
                return .json(["ids": .array(try await runtime.enqueue(tasks).map { .string($0) })], status: 201)
            case ("DELETE", let path) where path.count == 3 && path[0] == "tasks":
                guard try await runtime.deliveries.deleteTask(queue: path[1], id: path[2]) else {
                    return .error(.notFound, "no pending task '\(path[2])' in queue '\(path[1])'")
                }
                return .json(["deleted": .string(path[2])])
            case ("GET", ["record"]):
                return .json(recordingStatus)
            case ("POST", ["record"]):
                guard let enabled = body["enabled"]?.boolValue else { return .error(.invalidArgument, "record: the body needs \"enabled\": true or false") }
                if enabled {
                    let given = body["directory"]?.stringValue
                    if let given, given.isEmpty || given.utf8.count > 4096 { return .error(.invalidArgument, "record: \"directory\" must be a path of 1 to 4096 bytes") }
                    guard let directory = given.map(runtime.config.resolve) ?? runtime.recorder?.options.directory ?? runtime.config.recordOptions(process: "serve")?.directory else {
                        return .error(.invalidArgument, "record: name a \"directory\" (runtime.toml has no [record] directory)")
                    }
                    var options = Recorder.Options(directory: directory, maxFileBytes: runtime.config.record.maxFileMB << 20, process: "serve")
                    options.process = "serve"
                    try await runtime.startRecording(options, changes: true)
                } else {
                    await runtime.stopRecording()
                }
                return .json(recordingStatus)
            case ("GET", ["schedules"]):
                return .json(["schedules": .array(try runtime.scheduleTable().map(\.value))])
            case ("POST", let path) where path.count == 2 && path[0] == "schedules" && path[1].hasSuffix(":run"):
                let name = String(path[1].dropLast(":run".count))
                try await runtime.runScheduleNow(name)
                return .json(["fired": .string(name)])
            case ("GET", ["units"]):
                let units = runtime.table.units
                return .json(["units": .map(Dictionary(units.map { ($0.name, $0.statusValue) }, uniquingKeysWith: { a, _ in a }))])
            case ("POST", let path) where path.count == 2 && path[0] == "units" && path[1].hasSuffix(":activate"):
                let unit = String(path[1].dropLast(":activate".count))
                guard let version = body["version"]?.stringValue else { return .error(.invalidArgument, "the body needs {\"version\": …}") }
                return .json(try await runtime.activate(unit: unit, version: version).value)
            default:
                return .error(.notFound, "no admin route \(request.method) /__/admin/\(segments.joined(separator: "/"))")
            }
        } catch let e as HTTPSError {
            return .error(e.code, e.message)
        } catch let e as DecodingError {
            return .error(.invalidArgument, describeDecodingError(e))
        } catch {
            runtime.log.error("admin request failed", ["path": .string(request.path), "cause": .string("\(error)")])
            return .error(.internal, "INTERNAL")
        }
    }
}

extension FrontDoor {
    /// A query parameter that must be an integer in `range` when present; anything else (not a
    /// number, out of range, past Int64) is `invalid-argument` naming it, never a silent default.
    static func integer(_ text: String?, _ name: String, in range: ClosedRange<Int>) throws(HTTPSError) -> Int? {
        guard let text else { return nil }
        guard let n = Int(text), range.contains(n) else {
            throw .invalidArgument("\(name) must be an integer between \(range.lowerBound) and \(range.upperBound) (got '\(Printable.quoted(text, limit: 40))')")
        }
        return n
    }
}

extension FrontDoor {
    /// `GET record`: whether this server records, into which directory and file, lines so far.
    var recordingStatus: Value {
        guard let recorder = runtime.recorder else { return ["recording": false] }
        return ["recording": true, "directory": .string(recorder.options.directory), "file": .string(recorder.currentFile),
                "lines": .int(recorder.linesWritten), "problem": recorder.problem.withLock { $0 }.map { .string($0) } ?? .null]
    }
}
