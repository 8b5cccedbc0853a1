import Synchronization
import HearthHTTP
import HearthModel

/// `http.fetch`: units' outbound HTTP through the host's libcurl client, only to the base URLs
/// runtime.toml's `[outbound] allow` lists, within its time and size limits.
enum OutboundServices {
    static func register(_ services: inout HostServices.Builder, config: RuntimeConfig.Outbound, log: RuntimeLog) {
        let client = LazyClient()
        services.serve(Boundary.HTTPFetch.self) { caller, request in
            let outgoing: HTTPClientRequest
            do { outgoing = try OutboundServices.check(request, config: config) } catch let error as HTTPSError {
                if error.code == .permissionDenied {
                    log.warning("outbound request refused", ["unit": .string(caller.unit), "origin": .string(RuntimeConfig.Outbound.origin(request.url))])
                }
                throw error
            }
            do {
                let response = try await client.get().send(outgoing)
                return Boundary.HTTPFetchReply(status: Int64(response.status), headers: response.headers.map { ($0.name, $0.value) }, body: response.body)
            } catch let error as HTTPClientError {
                switch error.kind {
                case .timeout: throw HTTPSError(.deadlineExceeded, "http.fetch: \(error.message)")
                case .responseTooLarge: throw HTTPSError(.resourceExhausted, "http.fetch: \(error.message)")
                case .invalidRequest: throw HTTPSError(.invalidArgument, "http.fetch: \(error.message)")
                default: throw HTTPSError(.unavailable, "http.fetch: \(error.message)")
                }
            }
        }
    }
}

extension OutboundServices {
    /// The request the host will send for `request`, or why it will not: a URL that is not http(s)
    /// (`invalid-argument`) or not under `[outbound] allow` (`permission-denied`), a method other
    /// than GET/POST/PUT/PATCH/DELETE/HEAD, a header name or value that would split the request.
    /// The timeout is the unit's, clamped to 1 ms…`timeout_seconds`.
    static func check(_ request: Boundary.HTTPFetch, config: RuntimeConfig.Outbound) throws -> HTTPClientRequest {
        guard request.url.hasPrefix("https://") || request.url.hasPrefix("http://") else {
            throw HTTPSError(.invalidArgument, "http.fetch: the URL must be http(s)")
        }
        guard config.allows(request.url) else {
            throw HTTPSError(.permissionDenied, "http.fetch: \(RuntimeConfig.Outbound.origin(request.url)) is not in runtime.toml's [outbound] allow")
        }
        let method = request.method.uppercased()
        guard ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD"].contains(method) else {
            throw HTTPSError(.invalidArgument, "http.fetch: method \(Printable.quoted(request.method, limit: 20)) is not supported")
        }
        let limit = Duration.seconds(double: config.timeoutSeconds)
        let asked = Duration.milliseconds(min(max(request.timeoutMillis, 1), 600_000))
        var headers = HTTPHeaders()
        for (name, value) in request.headerPairs {
            // By scalar: "\r\n" is one Character, which a Character comparison with "\r" misses.
            func splits(_ s: String) -> Bool { s.unicodeScalars.contains { $0 == "\r" || $0 == "\n" || $0 == "\0" } }
            guard !name.isEmpty, !name.unicodeScalars.contains(":"), !splits(name), !splits(value) else {
                throw HTTPSError(.invalidArgument, "http.fetch: header \(Printable.quoted(name, limit: 40)) is not a valid header")
            }
            headers.add(name, value)
        }
        return HTTPClientRequest(method: method, url: request.url, headers: headers, body: request.body,
                                 timeout: asked < limit ? asked : limit, maxResponseBytes: config.maxResponseBytes)
    }
}

/// One HTTP client for every unit's requests, made on first use.
final class LazyClient: Sendable {
    private let client = Mutex<HTTPClient?>(nil)
    func get() -> HTTPClient {
        client.withLock { c in
            if let c { return c }
            let made = HTTPClient()
            c = made
            return made
        }
    }
}
