import Foundation
import HearthModel

/// String parameters from runtime.toml's `[params]`, as Firebase's `defineString` reads them from
/// `.env`: base URLs, client ids, anything that is configuration rather than a secret.
///
/// ```swift
/// let apple = req.params.string("APPLE_BASE_URL", default: "https://appleid.apple.com")
/// ```
public struct Params: Sendable {
    let channel: HostChannel

    /// The parameter, or `defaultValue` when runtime.toml does not set it (or the host did not answer).
    public func string(_ name: String, default defaultValue: String) -> String {
        ((try? channel.callSynchronously(Boundary.ParamGet(name: name))) ?? nil) ?? defaultValue
    }

    /// The parameter, or nil when unset.
    public func string(_ name: String) -> String? {
        (try? channel.callSynchronously(Boundary.ParamGet(name: name))) ?? nil
    }
}

/// An HTTP response from `OutboundHTTP`.
public struct FetchResponse: Sendable {
    public let status: Int
    /// Header pairs, names lower-cased.
    public let headers: [(name: String, value: String)]
    public let body: [UInt8]

    public func header(_ name: String) -> String? {
        let lower = name.lowercased()
        return headers.first { $0.name == lower }?.value
    }

    /// The body as JSON (`invalid-argument`-free: nil when it is not JSON).
    public var json: Value? { try? JSONParser.parse(body) }
    public var text: String { String(decoding: body, as: UTF8.self) }
}

/// Outbound HTTP through the host's client (libcurl, connections reused, TLS verified): only to
/// base URLs runtime.toml's `[outbound] allow` lists (others are `permission-denied`), within its
/// timeout and response size limit. Failures: `unavailable` (unreachable), `deadline-exceeded`,
/// `resource-exhausted` (response too large). An HTTP error status is a response, not an error.
///
/// ```swift
/// let r = try await req.http.post(url, form: ["code": code, "client_id": id])
/// guard r.status == 200, let token = r.json?["access_token"]?.stringValue else { throw … }
/// ```
public struct OutboundHTTP: Sendable {
    let channel: HostChannel

    public func fetch(_ method: String, _ url: String, headers: [(String, String)] = [], body: [UInt8] = [],
                      timeout: Duration = .seconds(30)) async throws -> FetchResponse {
        let millis = Int64(min(max(timeout.secondsDouble * 1000, 1), 600_000))
        let reply = try await channel.call(Boundary.HTTPFetch(method: method, url: url, headers: headers, body: body, timeoutMillis: millis))
        let pairs = stride(from: 0, to: reply.headers.count - 1, by: 2).map { (name: reply.headers[$0], value: reply.headers[$0 + 1]) }
        return FetchResponse(status: Int(clamping: reply.status), headers: pairs, body: reply.body)
    }

    public func get(_ url: String, headers: [(String, String)] = []) async throws -> FetchResponse {
        try await fetch("GET", url, headers: headers)
    }

    /// A form post (`application/x-www-form-urlencoded`), as OAuth token endpoints take.
    public func post(_ url: String, form: [(String, String)], headers: [(String, String)] = []) async throws -> FetchResponse {
        let body = form.map { "\(PercentEncoding.encodeQueryValue($0.0))=\(PercentEncoding.encodeQueryValue($0.1))" }.joined(separator: "&")
        return try await fetch("POST", url, headers: [("Content-Type", "application/x-www-form-urlencoded")] + headers, body: Array(body.utf8))
    }

    /// A JSON body.
    public func send(_ method: String, _ url: String, json: Value, headers: [(String, String)] = []) async throws -> FetchResponse {
        try await fetch(method, url, headers: [("Content-Type", "application/json")] + headers, body: JSONWriter.encode(json))
    }
}
