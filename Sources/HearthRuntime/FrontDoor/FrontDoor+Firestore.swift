import HearthHTTP
import HearthModel

extension FrontDoor {
    /// Firestore's REST API: CORS as a browser client needs it, then the caller (admin token,
    /// a client's ID token, or nobody) and `FirestoreREST`.
    func firestore(_ request: HTTPServerRequest, _ segments: [Substring]) async -> HTTPServerResponse {
        await withBrowserCORS(request) {
            if authorizedAsAdmin(request) {
                return await documents.handle(request, segments, caller: .admin)
            } else if let authorization = request.headers["authorization"] {
                if let token = BearerCredential.token(in: authorization), !token.isEmpty,
                   let caller = try? await runtime.caller(idToken: String(token)) {
                    return await documents.handle(request, segments, caller: .client(caller))
                }
                return .googleError(HTTPSError(.unauthenticated, "Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential."))
            }
            return await documents.handle(request, segments, caller: .client(nil))
        }
    }

    /// CORS as a browser app's Firebase SDK needs it from Google's APIs (Firestore, Identity
    /// Toolkit, Secure Token): a preflight is answered for any origin, and every answer carries
    /// the origin back (`CORS` with the default policy). `localPagesOnly` (the Auth emulator's own
    /// endpoints, which emulator mode opens without credentials): only for pages on this machine.
    func withBrowserCORS(_ request: HTTPServerRequest, localPagesOnly: Bool = false, _ answer: () async -> HTTPServerResponse) async -> HTTPServerResponse {
        let origin = request.headers["origin"]
        if localPagesOnly && !CORS.isLocalPage(origin) {
            // No CORS headers: the browser neither sends a preflighted call nor shows the answer.
            if request.method == "OPTIONS" { return HTTPServerResponse(status: 204, headers: HTTPHeaders([("Vary", "Origin")])) }
            var response = await answer()
            response.headers.add("Vary", "Origin")
            return response
        }
        if request.method == "OPTIONS" {
            let pre = CORS.preflight(policy: nil, origin: origin, requestedHeaders: request.headers["access-control-request-headers"],
                                     methods: "GET, POST, PUT, PATCH, DELETE")
            return HTTPServerResponse(status: pre.status, headers: pre.headers)
        }
        var response = await answer()
        for (name, value) in CORS.headers(policy: nil, origin: origin) { response.headers.add(name, value) }
        return response
    }
}
