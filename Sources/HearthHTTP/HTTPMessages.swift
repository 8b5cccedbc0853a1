import HearthModel

/// A request as the server received it: the body is complete (up to the server's limit).
public struct HTTPServerRequest: Sendable {
    public var method: String
    /// The path as sent, still percent-encoded, without the query (`/api/todos/42`).
    public var path: String
    /// The raw query string without `?` (empty when there is none).
    public var query: String
    public var headers: HTTPHeaders
    public var body: [UInt8]
    /// What the server's head handler noted of this request (`HTTPRequestHead.note`), nil if none.
    public var note: (any AnyObject & Sendable)?

    public init(method: String, path: String, query: String = "", headers: HTTPHeaders = HTTPHeaders(), body: [UInt8] = [],
                note: (any AnyObject & Sendable)? = nil) {
        self.method = method
        self.path = path
        self.query = query
        self.headers = headers
        self.body = body
        self.note = note
    }

    /// The path split into percent-decoded segments (`/a/b%20c` → `["a", "b c"]`).
    public var pathSegments: [Substring] { PercentEncoding.pathSegments(path) }

    /// Query parameters, decoded, in order.
    public var queryItems: [(name: String, value: String)] {
        PercentEncoding.formItems(query)
    }
}

/// A request's head, as the server has it before reading any body byte: enough to route it,
/// authorize it and refuse it without reading what follows.
public struct HTTPRequestHead: Sendable {
    public var method: String
    public var path: String
    public var query: String
    public var headers: HTTPHeaders
    /// The declared body length; nil for a chunked body (length unknown until it ends).
    public var contentLength: Int?
    /// Left by the head handler for the handlers, which get it as `HTTPServerRequest.note` (what it
    /// found about the request, so that they need not find it again).
    public var note: (any AnyObject & Sendable)?

    public var hasBody: Bool { contentLength.map { $0 > 0 } ?? true }

    /// The path split into percent-decoded segments, as `HTTPServerRequest.pathSegments`.
    public var pathSegments: [Substring] { PercentEncoding.pathSegments(path) }
}

/// What a handler answers: a status, headers and a body, either whole or streamed.
public struct HTTPServerResponse: Sendable {
    public enum Body: Sendable {
        case bytes([UInt8])
        /// Produced while it is sent (chunked transfer encoding): the closure writes chunks until it
        /// returns, which ends the response.
        case stream(@Sendable (HTTPResponseWriter) async -> Void)
        /// Not known yet: the server calls the closure once, and the response comes later through
        /// the function it is given, from whichever thread has it (see `later(_:)`).
        case later(@Sendable (_ answer: @escaping @Sendable (HTTPServerResponse) -> Void) -> Void)
    }

    public var status: Int
    public var headers: HTTPHeaders
    public var body: Body

    public init(status: Int, headers: HTTPHeaders = HTTPHeaders(), body: Body = .bytes([])) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// A response finished later by a callback rather than by the handler's task: `start` begins
    /// the work and passes `answer` on to whatever finishes it, which calls it once. The server
    /// then sends that response from the calling thread, with no task resumed in between (a reply
    /// read off a worker's socket goes straight out). The status and headers of this placeholder
    /// are never sent; `map` applies a handler's own additions to the eventual response.
    public static func later(_ start: @escaping @Sendable (_ answer: @escaping @Sendable (HTTPServerResponse) -> Void) -> Void) -> HTTPServerResponse {
        HTTPServerResponse(status: 200, body: .later(start))
    }

    /// This response with `transform` applied: at once, or to the eventual response of a `later` one.
    public func map(_ transform: @escaping @Sendable (HTTPServerResponse) -> HTTPServerResponse) -> HTTPServerResponse {
        guard case .later(let start) = body else { return transform(self) }
        return .later { answer in start { answer(transform($0).resolved) } }
    }

    /// A `later` response answered with another `later` one is a handler's mistake: 500, not a hang.
    var resolved: HTTPServerResponse {
        guard case .later = body else { return self }
        return .error(.internal, "a deferred response was answered with another deferred response")
    }

    public static func json(_ value: Value, status: Int = 200, headers: HTTPHeaders = HTTPHeaders()) -> HTTPServerResponse {
        var h = headers
        h.set("Content-Type", "application/json; charset=utf-8")
        return HTTPServerResponse(status: status, headers: h, body: .bytes(JSONWriter.encode(value, options: .callable)))
    }

    /// `{"key": value}` as JSON: the same bytes as `json([key: value])`, without building the map.
    public static func json(member key: String, _ value: Value, status: Int = 200) -> HTTPServerResponse {
        // Room for the CORS headers a callable's answer gets next, so adding them does not regrow the fields.
        var headers = HTTPHeaders(capacity: 4)
        headers.add("Content-Type", "application/json; charset=utf-8")
        return HTTPServerResponse(status: status, headers: headers, body: .bytes(JSONWriter.encode(member: key, value, options: .callable)))
    }

    public static func text(_ text: String, status: Int = 200) -> HTTPServerResponse {
        HTTPServerResponse(status: status, headers: HTTPHeaders([("Content-Type", "text/plain; charset=utf-8")]), body: .bytes(Array(text.utf8)))
    }

    /// `{"error": {"status": …, "message": …}}` with the code's HTTP status.
    public static func error(_ code: FunctionsErrorCode, _ message: String, headers: HTTPHeaders = HTTPHeaders()) -> HTTPServerResponse {
        json(["error": HTTPSError(code, message).callableBody], status: code.httpStatus, headers: headers)
    }
}

/// Where a streamed response's chunks go.
public protocol HTTPResponseWriter: Sendable {
    /// Sends a chunk; false once the client has gone away (stop producing then).
    func write(_ bytes: [UInt8]) async -> Bool
}

/// Helpers for header values (percent-decoding and forms are `PercentEncoding`, in HearthModel).
public enum HTTPText {
    /// Whether a Content-Type value's media type (before its parameters, without surrounding
    /// blanks) is `expected`, in any ASCII case:
    /// `isMediaType("Application/JSON; charset=utf-8", "application/json")` is true. Compared in
    /// place, since every callable request asks.
    public static func isMediaType(_ contentType: String?, _ expected: String) -> Bool {
        guard var value = contentType else { return false }
        var expected = expected
        return value.withUTF8 { bytes in
            var start = 0, end = bytes.firstIndex(of: UInt8(ascii: ";")) ?? bytes.count
            while start < end, bytes[start] == 32 || bytes[start] == 9 { start += 1 }
            while end > start, bytes[end - 1] == 32 || bytes[end - 1] == 9 { end -= 1 }
            return expected.withUTF8 { ASCIICase.equal(UnsafeBufferPointer(rebasing: bytes[start..<end]), $0) }
        }
    }
}
