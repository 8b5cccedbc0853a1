import Foundation
import HearthModel

/// CORS as Firebase's v2 `onCall` does by default (`cors: true`, which firebase-functions hands to
/// the `cors` package as `origin: true`): any origin is reflected, always with `Vary: Origin`; a
/// request without an Origin (an app's SDK, curl) gets no Access-Control-Allow-Origin at all. A
/// function's `cors` option restricts it to listed origins (exact, `*` globs, or `/regex/`) or
/// turns it off.
enum CORS {
    /// The headers to add to a response for `origin` under `policy`.
    static func headers(policy: CORSPolicy?, origin: String?) -> HTTPHeaders {
        // The Access-Control-Allow-Origin value; nil when the origin is not among those allowed.
        let allowedOrigin: String?
        switch policy ?? .allowAll {
        case .disabled:
            return HTTPHeaders()
        case .allowAll:
            allowedOrigin = origin
        case .origins(let allowed):
            allowedOrigin = origin.flatMap { origin in allowed.contains(where: { matches($0, origin) }) ? origin : nil }
        }
        // The answer depends on the Origin: caches are told so, whatever it was (or its absence).
        guard let allowedOrigin else { return varyOnly }
        var h = HTTPHeaders(capacity: 2)
        h.add("Access-Control-Allow-Origin", allowedOrigin)
        h.add("Vary", "Origin")
        return h
    }

    /// The headers of an answer without an allowed origin (most calls, from apps rather than
    /// browsers): one shared array, not a new one per request.
    static let varyOnly: HTTPHeaders = ["Vary": "Origin"]

    /// A preflight answer: the request headers asked for are allowed, methods are POST. Unlike the
    /// `cors` package, which firebase-functions configures without a maximum age or a list of
    /// headers, it allows Firebase's own request headers when none are asked for and lets the
    /// browser keep the answer for an hour (`Access-Control-Max-Age: 3600`). A preflight from an
    /// origin that is not allowed (or with no Origin) gets only `Vary: Origin`.
    static func preflight(policy: CORSPolicy?, origin: String?, requestedHeaders: String?, methods: String = "POST") -> HTTPServerResponseHeaders {
        var h = headers(policy: policy, origin: origin)
        guard h["access-control-allow-origin"] != nil else { return HTTPServerResponseHeaders(status: 204, headers: h) }
        h.add("Access-Control-Allow-Methods", methods)
        h.add("Access-Control-Allow-Headers", requestedHeaders ?? "Content-Type, Authorization, X-Firebase-AppCheck, Firebase-Instance-ID-Token")
        h.add("Access-Control-Max-Age", "3600")
        if requestedHeaders != nil { h.add("Vary", "Access-Control-Request-Headers") }
        return HTTPServerResponseHeaders(status: 204, headers: h)
    }

    /// Whether a request comes from no web page (no Origin: an SDK, a script) or from one served
    /// by this machine (`http(s)://localhost`, `127.x.x.x`, `[::1]`, any port): who may use the
    /// emulator's public credentials.
    static func isLocalPage(_ origin: String?) -> Bool {
        guard let origin else { return true }
        guard let url = URLComponents(string: origin), url.scheme == "http" || url.scheme == "https", let host = url.host?.lowercased() else { return false }
        return isLoopbackName(host)
    }

    /// Whether the request was addressed to this server by a name no one else's DNS can hand out:
    /// an IP address, `localhost`, or one of `allowed` (`[server] allowed_hosts`). A browser sends
    /// no Origin on a same-origin GET, so a page whose name was rebound to 127.0.0.1 is told apart
    /// by the Host it addressed (`attacker.example:9099`).
    static func isDirectHost(_ hostHeader: String?, allowed: [String]) -> Bool {
        guard let header = hostHeader?.lowercased(), !header.isEmpty else { return hostHeader == nil }  // HTTP/1.0 without Host
        var name = Substring(header)
        func isPort(_ text: Substring) -> Bool { !text.isEmpty && text.count <= 5 && text.utf8.allSatisfy { (48...57).contains($0) } }
        if name.hasPrefix("[") {
            guard let close = name.firstIndex(of: "]") else { return false }
            let rest = name[name.index(after: close)...]
            guard rest.isEmpty || (rest.hasPrefix(":") && isPort(rest.dropFirst())) else { return false }
            let address = name[name.index(after: name.startIndex)..<close]
            return !address.isEmpty && address.utf8.allSatisfy { (48...57).contains($0) || (97...102).contains($0) || $0 == 58 || $0 == 46 }
        }
        if let colon = name.lastIndex(of: ":") {
            guard isPort(name[name.index(after: colon)...]) else { return false }
            name = name[..<colon]
        }
        return ipv4(name) != nil || isLoopbackName(String(name)) || allowed.contains(String(name))
    }

    private static func isLoopbackName(_ host: String) -> Bool {
        host == "localhost" || host.hasSuffix(".localhost") || host == "[::1]" || host == "::1" || ipv4(Substring(host))?.first == 127
    }

    /// A dotted IPv4 address's four bytes: four parts of one to three ASCII digits, each at most
    /// 255; nil for anything else (signs, hex, fewer parts).
    private static func ipv4(_ text: Substring) -> [UInt8]? {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4 else { return nil }
        var bytes: [UInt8] = []
        for part in parts {
            guard (1...3).contains(part.utf8.count), part.utf8.allSatisfy({ (48...57).contains($0) }), let byte = UInt8(part) else { return nil }
            bytes.append(byte)
        }
        return bytes
    }

    static func matches(_ pattern: String, _ origin: String) -> Bool {
        if pattern.count > 2 && pattern.hasPrefix("/") && pattern.hasSuffix("/") {
            let expression = String(pattern.dropFirst().dropLast())
            return origin.range(of: expression, options: .regularExpression) != nil
        }
        if pattern.contains("*") {
            let escaped = NSRegularExpression.escapedPattern(for: pattern).replacingOccurrences("\\*", "[^/]*")
            return origin.range(of: "^" + escaped + "$", options: .regularExpression) != nil
        }
        return pattern == origin
    }
}

struct HTTPServerResponseHeaders {
    var status: Int
    var headers: HTTPHeaders
}
