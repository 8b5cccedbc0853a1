import HearthHTTP
import HearthModel

extension FrontDoor {
    /// Firestore's REST API: CORS as a browser client needs it, then the caller (admin token,
    /// a client's ID token, or nobody) and `FirestoreREST`.
    func firestore(_ request: HTTPServerRequest, _ segments: [Substring]) async -> HTTPServerResponse {
        let origin = request.headers["origin"]
        if request.method == "OPTIONS" {
            let pre = CORS.preflight(policy: nil, origin: origin, requestedHeaders: request.headers["access-control-request-headers"],
                                     methods: "GET, POST, PATCH, DELETE")
            return HTTPServerResponse(status: pre.status, headers: pre.headers)
        }
        var response: HTTPServerResponse
        if authorizedAsAdmin(request) {
            response = await documents.handle(request, segments, caller: .admin)
        } else if let authorization = request.headers["authorization"] {
            if authorization.hasPrefix("Bearer "), authorization.count > 7,
               let caller = try? await runtime.caller(idToken: String(authorization.dropFirst(7))) {
                response = await documents.handle(request, segments, caller: .client(caller))
            } else {
                response = .googleError(HTTPSError(.unauthenticated, "Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential."))
            }
        } else {
            response = await documents.handle(request, segments, caller: .client(nil))
        }
        for (name, value) in CORS.headers(policy: nil, origin: origin) { response.headers.add(name, value) }
        return response
    }
}
