import HearthModel

/// A request to an `onRequest` function: the method, path, query, headers and body as received.
///
/// ```swift
/// fn.onRequest("api") { req in
///     guard req.method == "GET" else { return .text("method not allowed", status: 405) }
///     return try .json(["page": req.queryValue("page") ?? "1"])
/// }
/// ```
public struct HTTPRequest: HandlerInput {
    /// The request method as sent (`GET`, `POST`…).
    public let method: String
    /// The path as requested (`/api/todos/42`), without the query.
    public let path: String
    /// The raw query string, without `?`.
    public let query: String
    /// The request's headers, in order, repeats kept; lookups ignore case (`headers["content-type"]`).
    public let headers: HTTPHeaders
    /// The body's bytes as received (empty when there is none).
    public let body: [UInt8]
    /// The invocation's context; see `FunctionContext`.
    public let context: FunctionContext

    /// Query parameters, percent-decoded (`+` as a space), in order, repeats kept.
    public var queryItems: [(name: String, value: String)] {
        PercentEncoding.formItems(query)
    }

    /// The first value of a query parameter, or nil when it is absent.
    public func queryValue(_ name: String) -> String? { queryItems.first { $0.name == name }?.value }

    /// The body as UTF-8 text (invalid bytes become U+FFFD).
    public var bodyText: String { String(decoding: body, as: UTF8.self) }

    /// Decodes a JSON body (whatever its `Content-Type`); a body that is not valid JSON or does not
    /// fit `T` throws `invalid-argument`, which an `onRequest` function answers as a 400.
    ///
    /// ```swift
    /// let input = try req.decodeJSON(CreateItem.self)
    /// ```
    public func decodeJSON<T: Decodable>(_ type: T.Type = T.self) throws -> T {
        let value: Value
        do { value = try JSONParser.parse(body) } catch { throw HTTPSError(.invalidArgument, "request body: \(error)") }
        do { return try ValueDecoder().decode(type, from: value) } catch {
            throw HTTPSError(.invalidArgument, "request body: \(describeDecodingError(error))")
        }
    }

    /// The bearer token of the `Authorization` header (`Bearer <token>`), if it has one; not
    /// verified (see `verifiedAuth()`).
    public var bearerToken: String? {
        guard let h = headers["authorization"], let token = BearerCredential.token(in: h) else { return nil }
        return token.isEmpty ? nil : String(token)
    }

}

/// What an `onRequest` function answers: a status, headers and a body, sent as given (plus CORS
/// headers when the function's `cors` option asks for them).
///
/// ```swift
/// fn.onRequest("ping") { _ in HTTPResponse(status: 204) }
/// fn.onRequest("echo") { req in .text(req.bodyText) }
/// ```
public struct HTTPResponse: Sendable {
    /// The HTTP status code (200 by default).
    public var status: Int
    /// The response's headers, sent in order.
    public var headers: HTTPHeaders
    /// The body's bytes.
    public var body: [UInt8]

    /// A response with these parts; by default an empty 200.
    public init(status: Int = 200, headers: HTTPHeaders = HTTPHeaders(), body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// A JSON response (`Content-Type: application/json`) from an `Encodable` value, encoded as
    /// document values are (a `Date` or `Timestamp` as RFC 3339 text); throws if it does not encode.
    public static func json<T: Encodable>(_ value: T, status: Int = 200) throws -> HTTPResponse {
        let v = try ValueEncoder().encode(value)
        return HTTPResponse(status: status, headers: HTTPHeaders([("Content-Type", "application/json")]),
                            body: JSONWriter.encode(v, options: .plain))
    }

    /// A plain-text response (`Content-Type: text/plain; charset=utf-8`) of `text` as UTF-8.
    public static func text(_ text: String, status: Int = 200) -> HTTPResponse {
        HTTPResponse(status: status, headers: HTTPHeaders([("Content-Type", "text/plain; charset=utf-8")]), body: Array(text.utf8))
    }

    /// A JSON error body `{"error": {"status", "message", "details"?}}` with the code's HTTP status
    /// (`not-found` 404, `permission-denied` 403…), as an `onRequest` function answers an
    /// `HTTPSError` it throws.
    public static func error(_ error: HTTPSError) -> HTTPResponse {
        HTTPResponse(status: error.code.httpStatus, headers: HTTPHeaders([("Content-Type", "application/json")]),
                     body: JSONWriter.encode(["error": error.callableBody]))
    }
}

extension HTTPResponse {
    /// As it crosses the boundary.
    var message: Boundary.Response { Boundary.Response(status: status, headers: headers, body: body) }
}
