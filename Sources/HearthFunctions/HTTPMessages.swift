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
    public let method: String
    /// The path as requested (`/api/todos/42`), without the query.
    public let path: String
    /// The raw query string, without `?`.
    public let query: String
    public let headers: HTTPHeaders
    public let body: [UInt8]
    public let context: FunctionContext

    /// Query parameters, percent-decoded, in order.
    public var queryItems: [(name: String, value: String)] {
        PercentEncoding.formItems(query)
    }

    /// The first value of a query parameter.
    public func queryValue(_ name: String) -> String? { queryItems.first { $0.name == name }?.value }

    public var bodyText: String { String(decoding: body, as: UTF8.self) }

    /// Decodes a JSON body; a body that is not valid JSON or does not fit `T` is `invalid-argument`.
    public func decodeJSON<T: Decodable>(_ type: T.Type = T.self) throws -> T {
        let value: Value
        do { value = try JSONParser.parse(body) } catch { throw HTTPSError(.invalidArgument, "request body: \(error)") }
        do { return try ValueDecoder().decode(type, from: value) } catch {
            throw HTTPSError(.invalidArgument, "request body: \(describeDecodingError(error))")
        }
    }

    /// The bearer token of the `Authorization` header, if it has one.
    public var bearerToken: String? {
        guard let h = headers["authorization"], h.hasPrefix("Bearer ") else { return nil }
        let token = h.dropFirst(7)
        return token.isEmpty ? nil : String(token)
    }

}

/// What an `onRequest` function answers.
public struct HTTPResponse: Sendable {
    public var status: Int
    public var headers: HTTPHeaders
    public var body: [UInt8]

    public init(status: Int = 200, headers: HTTPHeaders = HTTPHeaders(), body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// A JSON response from an `Encodable` value.
    public static func json<T: Encodable>(_ value: T, status: Int = 200) throws -> HTTPResponse {
        let v = try ValueEncoder().encode(value)
        return HTTPResponse(status: status, headers: HTTPHeaders([("Content-Type", "application/json")]),
                            body: JSONWriter.encode(v, options: .plain))
    }

    public static func text(_ text: String, status: Int = 200) -> HTTPResponse {
        HTTPResponse(status: status, headers: HTTPHeaders([("Content-Type", "text/plain; charset=utf-8")]), body: Array(text.utf8))
    }

    /// A JSON error body `{"error": {"status", "message"}}` with the code's HTTP status.
    public static func error(_ error: HTTPSError) -> HTTPResponse {
        HTTPResponse(status: error.code.httpStatus, headers: HTTPHeaders([("Content-Type", "application/json")]),
                     body: JSONWriter.encode(["error": error.callableBody]))
    }
}

extension HTTPResponse {
    /// As it crosses the boundary.
    var message: Boundary.Response { Boundary.Response(status: status, headers: headers, body: body) }
}
