import HearthAuth
import HearthHTTP
import HearthModel

extension FrontDoor {
    static let badRequest = HTTPServerResponse.error(.invalidArgument, "Bad Request")

    /// The Firebase callable protocol, exactly: POST, `application/json`, a body `{"data": …}`,
    /// an optional `Authorization: Bearer <ID token>` (present but not valid: 401 before the function
    /// runs), App Check, CORS, `{"result"}` / `{"error"}`, and streaming over `text/event-stream`.
    /// In that order, as firebase-functions checks them: a request that is not a call is 400 whatever
    /// its token.
    func callable(_ entry: FunctionEntry, _ request: HTTPServerRequest) async -> HTTPServerResponse {
        switch callableCall(entry, request) {
        case .answered(let response):
            return response
        case .ready(var call):
            if let token = call.idToken {
                do {
                    call.event.auth = try await runtime.caller(idToken: token)
                } catch {
                    return refuse(entry, call, error)
                }
            }
            return invoke(entry, call)
        }
    }

    /// A callable request, whole, on the server's thread (`HTTPServer.ImmediateHandler`): it is
    /// checked and sent to the unit without a task. Nil (the request goes to `callable`, in a
    /// task) when it carries an ID token that cannot be checked here without waiting: one not
    /// verified before, a key file due for a look that changed, or a user's record that cannot be
    /// read at once (`AuthService.verifyIDTokenNow`). A token verified before is checked again here
    /// against the user's state, as `callable` checks it (read now, or as read before while no user
    /// has changed since: `TokenStateCache`).
    /// `countedFrom`: as for `invoke`.
    func callableNow(_ entry: FunctionEntry, _ request: HTTPServerRequest, countedFrom started: ContinuousClock.Instant? = nil) -> HTTPServerResponse? {
        switch callableCall(entry, request) {
        case .answered(let response):
            return response
        case .ready(var call):
            guard let token = call.idToken else { return invoke(entry, call, countedFrom: started) }
            switch runtime.callerNow(idToken: token) {
            case nil: return nil
            case .success(let caller)?:
                call.event.auth = caller
                return invoke(entry, call, countedFrom: started)
            case .failure(let error)?:
                return refuse(entry, call, error)
            }
        }
    }

    /// A call whose ID token was refused: 401 before the function runs, the reason in the log only.
    func refuse(_ entry: FunctionEntry, _ call: CallableCall, _ error: TokenRejection) -> HTTPServerResponse {
        runtime.log.warning("callable refused: invalid ID token", ["function": .string(entry.name), "reason": .string(error.description)])
        return call.respond(.error(.unauthenticated, "Unauthenticated"))
    }

    /// A request that passed the protocol's checks: its event (with no caller yet), the ID token
    /// and App Check token it carries, and the CORS headers every answer to it gets.
    struct CallableCall {
        var event: Boundary.CallableEvent
        let idToken: String?
        let appCheckToken: String?
        let cors: HTTPHeaders

        func respond(_ response: HTTPServerResponse) -> HTTPServerResponse { FrontDoor.withCORS(cors, response) }
    }

    enum CallableStep {
        case answered(HTTPServerResponse)
        case ready(CallableCall)
    }

    static func withCORS(_ cors: HTTPHeaders, _ response: HTTPServerResponse) -> HTTPServerResponse {
        response.map { r in
            var r = r
            for (n, v) in cors { r.headers.add(n, v) }
            return r
        }
    }

    /// The checks before the caller's ID token: a preflight is answered, and a request that is not
    /// a call (method, media type, body) or whose Authorization header is not a Bearer token is
    /// refused.
    func callableCall(_ entry: FunctionEntry, _ request: HTTPServerRequest) -> CallableStep {
        let options = entry.spec.options
        let origin = request.headers["origin"]
        if request.method == "OPTIONS" {
            let pre = CORS.preflight(policy: options.cors, origin: origin, requestedHeaders: request.headers["access-control-request-headers"])
            return .answered(HTTPServerResponse(status: pre.status, headers: pre.headers))
        }
        let cors = CORS.headers(policy: options.cors, origin: origin)
        guard request.method == "POST" else { return .answered(FrontDoor.withCORS(cors, FrontDoor.badRequest)) }
        guard HTTPText.isMediaType(request.headers["content-type"], "application/json") else { return .answered(FrontDoor.withCORS(cors, FrontDoor.badRequest)) }
        guard let data = FrontDoor.callableData(request.body) else { return .answered(FrontDoor.withCORS(cors, FrontDoor.badRequest)) }
        var idToken: String?
        if let authorization = request.headers["authorization"] {
            guard let token = BearerCredential.token(in: authorization), !token.isEmpty else {
                runtime.log.warning("callable refused: malformed Authorization header", ["function": .string(entry.name)])
                return .answered(FrontDoor.withCORS(cors, .error(.unauthenticated, "Unauthenticated")))
            }
            idToken = String(token)
        }
        var event = Boundary.CallableEvent(data: data)
        event.instanceIDToken = request.headers["firebase-instance-id-token"]
        // Names lower-cased, as the boundary has always given them: a unit built against an SDK
        // that keeps them in a `[String: String]` looks them up by lower-case name.
        event.headers = request.headers.withLowercasedNames
        event.acceptsStreaming = request.headers["accept"]?.lowercased().contains("text/event-stream") == true
        return .ready(CallableCall(event: event, idToken: idToken, appCheckToken: request.headers["x-firebase-appcheck"], cors: cors))
    }

    /// After the caller is known: App Check, then the function, answered when its unit replies (or
    /// streamed, when the client accepts `text/event-stream`).
    /// `countedFrom`: the request's start, when the function's answer is to be counted in the
    /// metrics as it is made (only a `later` response is; the caller counts any other).
    func invoke(_ entry: FunctionEntry, _ call: CallableCall, countedFrom started: ContinuousClock.Instant? = nil) -> HTTPServerResponse {
        let options = entry.spec.options
        var event = call.event
        if let token = call.appCheckToken {
            if let appCheck, let verified = try? appCheck.verify(token) {
                event.app = AppCheckClaims(appID: verified.appID, claims: verified.claims)
            } else if options.enforceAppCheck == true {
                runtime.log.warning("callable refused: invalid App Check token", ["function": .string(entry.name)])
                return call.respond(.error(.unauthenticated, "Unauthenticated"))
            }
        } else if options.enforceAppCheck == true {
            runtime.log.warning("callable refused: missing App Check token", ["function": .string(entry.name)])
            return call.respond(.error(.unauthenticated, "Unauthenticated"))
        }
        let runtime = self.runtime

        if event.acceptsStreaming {
            var h = HTTPHeaders([("Content-Type", "text/event-stream"), ("Cache-Control", "no-cache")])
            for (n, v) in call.cors { h.add(n, v) }
            let invocation = event
            let heartbeat = options.heartbeat
            return HTTPServerResponse(status: 200, headers: h, body: .stream { writer in
                // Heartbeats on the runtime's clock: a test's ManualClock drives them too.
                let beats = heartbeat.map { interval in
                    Task {
                        while !Task.isCancelled {
                            do { try await runtime.clock.sleep(for: interval) } catch { return }
                            let open = await writer.write(Array(": ping\n\n".utf8))
                            if !open { return }
                        }
                    }
                }
                let outcome = await runtime.invokeCallable(entry, invocation, stream: { chunk in
                    await writer.write(FrontDoor.sse(["message": chunk]))
                })
                beats?.cancel()
                switch outcome.result {
                case .success(let result): _ = await writer.write(FrontDoor.sse(["result": result.value]))
                case .failure(let error): _ = await writer.write(FrontDoor.sse(["error": error.httpsError.callableBody]))
                }
            })
        }

        // Answered from the thread that reads the unit's reply: no task waits for the function. The
        // CORS headers are added there too (not by `withCORS`, whose `map` would wrap the answer in
        // three more closures).
        let invocation = event
        let cors = call.cors
        let metrics = self.metrics
        return .later { answer in
            runtime.invokeCallable(entry, invocation) { outcome in
                var response: HTTPServerResponse
                switch outcome.result {
                case .success(let result):
                    response = .json(member: "result", result.value)
                case .failure(let error):
                    let visible = error.httpsError
                    response = .json(member: "error", visible.callableBody, status: visible.code.httpStatus)
                }
                for (n, v) in cors { response.headers.add(n, v) }
                if let started { FrontDoor.count(response, route: "callable", started: started, in: metrics) }
                answer(response)
            }
        }
    }

    static func sse(_ value: Value) -> [UInt8] {
        Array("data: ".utf8) + JSONWriter.encode(value, options: .callable) + Array("\n\n".utf8)
    }

    /// An `onRequest` function: the request goes in whole, the function's response comes out.
    func onRequest(_ entry: FunctionEntry, _ request: HTTPServerRequest) async -> HTTPServerResponse {
        let options = entry.spec.options
        let origin = request.headers["origin"]
        if request.method == "OPTIONS", let policy = options.cors {
            let pre = CORS.preflight(policy: policy, origin: origin, requestedHeaders: request.headers["access-control-request-headers"],
                                     methods: "GET, POST, PUT, PATCH, DELETE, OPTIONS")
            return HTTPServerResponse(status: pre.status, headers: pre.headers)
        }
        let event = Boundary.RequestEvent(method: request.method, path: request.path, query: request.query, headers: request.headers, body: request.body)
        let cors = options.cors.map { CORS.headers(policy: $0, origin: origin) } ?? HTTPHeaders()
        // As for callables: answered from the thread that reads the unit's reply.
        let invoker = runtime.invoker
        return .later { answer in
            invoker.invoke(entry, event: .request(event), timeout: options.effectiveTimeout) { outcome in
                var response: HTTPServerResponse
                switch outcome.result {
                case .success(.response(let r)):
                    response = HTTPServerResponse(status: (100...599).contains(r.status) ? r.status : 500, headers: r.headers, body: .bytes(r.body))
                case .success:
                    response = .json(["error": HTTPSError(.internal, "INTERNAL").callableBody], status: 500)
                case .failure(let error):
                    let visible = error.httpsError
                    response = .json(["error": visible.callableBody], status: visible.code.httpStatus)
                }
                for (n, v) in cors { response.headers.add(n, v) }
                answer(response)
            }
        }
    }
}

extension FrontDoor {
    /// The `data` of a callable's envelope `{"data": …}` (read with the callable protocol's
    /// limits and Int64Value wrappers), or nil if `body` is not exactly that: Firebase answers 400.
    /// Task queue functions take the same envelope.
    static func callableData(_ body: [UInt8]) -> Value? {
        // Read without building the envelope's map: what `envelopeData` would answer for it.
        (try? JSONParser.onlyMember("data", of: body, options: .callable)) ?? nil
    }

    /// The `data` of an envelope `{"data": …}` already parsed, or nil if it is anything else.
    static func envelopeData(_ envelope: Value) -> Value? {
        guard case .map(let m) = envelope, m.count == 1 else { return nil }
        return m["data"]
    }
}
