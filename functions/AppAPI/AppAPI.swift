import Foundation
import HearthFunctions
import TodoModel

/// The app's plain HTTP API (SCENARIOS §7), behind runtime.toml's `[[rewrites]]`: every request
/// carries the Firebase ID token (`Authorization: Bearer`), answers are JSON, errors
/// `{"error": {"status", "message"}}` with the code's HTTP status.
///
/// - `/api/todos`: `GET` lists the member's items not deleted (`category`, `done=true|false`,
///   `due=set|none`, `orderBy=createdAt|updatedAt|targetDate`, `direction=asc|desc`,
///   `pageSize` 1–100, `pageToken`), `POST` creates one (201 with `Location`);
///   `/api/todos/{id}`: `GET`, `PATCH` (the fields to change), `DELETE` (soft: 204).
/// - `/api/web-pages`: `GET` (not deleted, newest first, paged), `POST {url, title}` (201);
///   `/api/web-pages/{id}`: `DELETE` (soft, 204).
/// - `/api/auth/apple` `POST {authorizationCode}`, `/api/auth/github` `POST {code}`: the sign-in
///   exchanges, answering `{customToken}`; `/api/auth/google` `POST` with the Firebase ID token the
///   app got from a Google sign-in answers the user (`{uid, email, providers}`).
/// - `/api/push-notifications`: `GET` (not deleted, newest first, `unread=true`, paged);
///   `/api/push-notifications/{id}`: `PATCH {isRead}`, `DELETE` (soft, 204).
public enum AppAPI: FunctionModule {
    public static let name = "AppAPI"

    public static func register(_ fn: inout FunctionRegistry) {
        fn.onRequest("todosApi") { req in try await Todos.handle(req) }
        fn.onRequest("webPagesApi") { req in try await WebPages.handle(req) }
        fn.onRequest("pushNotificationsApi") { req in try await Notifications.handle(req) }
        // The same exchanges as the callables, for clients that speak plain HTTP.
        fn.onRequest("authApi", .init(secrets: ProviderExchange.appleSecrets + ProviderExchange.githubSecrets)) { req in
            try await SignIn.handle(req)
        }
    }
}

/// What every route shares: the member, the path's id, paging, JSON.
struct Route {
    let req: HTTPRequest
    let paths: MemberPaths
    /// The segment after the prefix (`/api/todos/{id}`), when there is one.
    let id: String?

    static func resolve(_ req: HTTPRequest, prefix: String) async throws -> Route {
        let auth = try await req.verifiedAuth()
        let paths = try MemberPaths(uid: auth.uid)
        let rest = req.path.hasPrefix(prefix) ? String(req.path.dropFirst(prefix.count)) : ""
        let segments = rest.split(separator: "/").map(String.init)
        guard segments.count <= 1 else { throw HTTPSError(.notFound, "no route for \(req.path)") }
        let id = segments.first.map { PercentEncoding.decode($0, plusAsSpace: false) }
        if let id { try Validate.identifier(id, name: "id") }
        return Route(req: req, paths: paths, id: id)
    }

    func methodNotAllowed(_ allowed: [String]) -> HTTPResponse { Route.methodNotAllowed(req.method, allowed) }

    /// 405 with `Allow`.
    static func methodNotAllowed(_ method: String, _ allowed: [String]) -> HTTPResponse {
        var r = HTTPResponse.error(HTTPSError(.invalidArgument, "\(method) is not allowed here; use \(allowed.joined(separator: ", "))"))
        r.status = 405
        r.headers.set("Allow", allowed.joined(separator: ", "))
        return r
    }

    /// The request body as a JSON object.
    func object() throws -> [String: Value] {
        guard case .map(let m)? = try? JSONParser.parse(req.body) else { throw HTTPSError(.invalidArgument, "the body must be a JSON object") }
        return m
    }

    var pageSize: Int {
        get throws {
            guard let text = req.queryValue("pageSize") else { return 20 }
            guard let n = Int(text), (1...100).contains(n) else { throw HTTPSError(.invalidArgument, "pageSize must be 1 to 100") }
            return n
        }
    }

    /// A page of `query` after the document `pageToken` names (its id in `collection`).
    func page(_ query: Query, collection: String, docs: Documents) async throws -> Value {
        let size = try pageSize
        var q = query.limit(to: size)
        if let token = req.queryValue("pageToken") {
            guard (try? Validate.identifier(token, name: "pageToken")) != nil,
                  let last = try await docs.collection(collection).document(token).get([String: Value].self) else {
                throw HTTPSError(.invalidArgument, "pageToken is not valid (the page it continues from is gone)")
            }
            q = q.start(afterDocument: last)
        }
        let found = try await q.getDocuments([String: Value].self)
        var out: [String: Value] = ["items": .array(found.map(Route.resource))]
        if found.count == size, let last = found.last { out["nextPageToken"] = .string(last.id) }
        return .map(out)
    }

    /// A document as the API shows it: its fields, with `id`.
    static func resource(_ doc: DocumentSnapshot<[String: Value]>) -> Value {
        var m = doc.data
        m["id"] = .string(doc.id)
        return .map(m)
    }

    static func json(_ value: Value, status: Int = 200) -> HTTPResponse {
        HTTPResponse(status: status, headers: HTTPHeaders([("Content-Type", "application/json")]), body: JSONWriter.encode(value))
    }

    static func created(_ value: Value, location: String) -> HTTPResponse {
        var r = json(value, status: 201)
        r.headers.set("Location", location)
        return r
    }

    func bool(_ name: String) throws -> Bool? {
        guard let v = req.queryValue(name) else { return nil }
        switch v {
        case "true": return true
        case "false": return false
        default: throw HTTPSError(.invalidArgument, "\(name) must be true or false")
        }
    }
}

enum Todos {
    static let prefix = "/api/todos"
    static let orderFields: Set<String> = ["createdAt", "updatedAt", "targetDate"]

    static func handle(_ req: HTTPRequest) async throws -> HTTPResponse {
        let route = try await Route.resolve(req, prefix: prefix)
        let docs = req.documents
        switch (req.method, route.id) {
        case ("GET", nil):
            var q = try docs.collection(route.paths.items).whereFieldIsNull("deletedAt")
            if let category = req.queryValue("category") {
                try Validate.identifier(category, name: "category")
                q = try q.whereField("category", isEqualTo: category)
            }
            if let done = try route.bool("done") { q = try q.whereField("isDone", isEqualTo: done) }
            switch req.queryValue("due") {
            case nil: break
            case "none": q = try q.whereFieldIsNull("targetDate")
            case "set": q = try q.whereField("targetDate", isNotEqualTo: Value.null)
            default: throw HTTPSError(.invalidArgument, "due must be set or none")
            }
            let field = req.queryValue("orderBy") ?? "createdAt"
            guard orderFields.contains(field) else { throw HTTPSError(.invalidArgument, "orderBy must be createdAt, updatedAt or targetDate") }
            let direction = req.queryValue("direction") ?? "desc"
            guard direction == "asc" || direction == "desc" else { throw HTTPSError(.invalidArgument, "direction must be asc or desc") }
            q = try q.order(by: field, descending: direction == "desc")
            return Route.json(try await route.page(q, collection: route.paths.items, docs: docs))
        case ("POST", nil):
            var body = try route.object()
            try dates(&body)
            let input: CreateItem
            do { input = try ValueDecoder().decode(CreateItem.self, from: .map(body)) } catch {
                throw HTTPSError(.invalidArgument, "the body is not an item: \(error)")
            }
            let reply = try await ItemOperations.create(input, paths: route.paths, docs: docs)
            return Route.created(try await item(reply.itemId, route, docs), location: "\(prefix)/\(PercentEncoding.encodeQueryValue(reply.itemId))")
        case ("GET", let id?):
            return Route.json(try await item(id, route, docs))
        case ("PATCH", let id?):
            var body = try route.object()
            body["itemId"] = .string(id)
            try dates(&body)
            if body["targetDate"] == .null {
                body["targetDate"] = nil
                body["clearTargetDate"] = true
            }
            let input: UpdateItem
            do { input = try ValueDecoder().decode(UpdateItem.self, from: .map(body)) } catch {
                throw HTTPSError(.invalidArgument, "the body is not an item change: \(error)")
            }
            _ = try await ItemOperations.update(input, paths: route.paths, docs: docs)
            return Route.json(try await item(id, route, docs))
        case ("DELETE", let id?):
            _ = try await ItemOperations.setItemDeleted(true, id, paths: route.paths, docs: docs)
            return HTTPResponse(status: 204)
        case (_, nil): return route.methodNotAllowed(["GET", "POST"])
        case (_, _?): return route.methodNotAllowed(["GET", "PATCH", "DELETE"])
        }
    }

    static func item(_ id: String, _ route: Route, _ docs: Documents) async throws -> Value {
        guard let doc = try await docs.document(try route.paths.item(id)).get([String: Value].self) else { throw HTTPSError(.notFound, "no todo \(id)") }
        return Route.resource(doc)
    }

    /// `targetDate` as RFC 3339 text in the JSON; a timestamp in the store.
    static func dates(_ body: inout [String: Value]) throws {
        guard case .string(let text)? = body["targetDate"] else { return }
        guard let t = Timestamp(rfc3339: text) else { throw HTTPSError(.invalidArgument, "targetDate must be an RFC 3339 time") }
        body["targetDate"] = .timestamp(t)
    }
}

enum WebPages {
    static let prefix = "/api/web-pages"

    static func handle(_ req: HTTPRequest) async throws -> HTTPResponse {
        let route = try await Route.resolve(req, prefix: prefix)
        let docs = req.documents
        switch (req.method, route.id) {
        case ("GET", nil):
            let q = try docs.collection(route.paths.links).whereField("isDeleted", isEqualTo: false).order(by: "createdAt", descending: true)
            return Route.json(try await route.page(q, collection: route.paths.links, docs: docs))
        case ("POST", nil):
            let body = try route.object()
            guard let url = body["url"]?.stringValue, url.hasPrefix("https://") || url.hasPrefix("http://"), url.count <= 2048 else {
                throw HTTPSError(.invalidArgument, "url must be an http(s) URL of at most 2048 characters")
            }
            let title = body["title"]?.stringValue ?? url
            try Validate.text(title, name: "title", max: 500)
            let ref = try docs.collection(route.paths.links).document()
            _ = try await ref.create(Link(url: url, title: title))
            let doc = try await ref.get([String: Value].self)
            return Route.created(doc.map(Route.resource) ?? .null, location: "\(prefix)/\(PercentEncoding.encodeQueryValue(ref.id))")
        case ("DELETE", let id?):
            try await ItemOperations.setFlag(true, try docs.document(try route.paths.link(id)), what: "web page", docs: docs)
            return HTTPResponse(status: 204)
        case (_, nil): return route.methodNotAllowed(["GET", "POST"])
        case (_, _?): return route.methodNotAllowed(["DELETE"])
        }
    }
}

enum Notifications {
    static let prefix = "/api/push-notifications"

    static func handle(_ req: HTTPRequest) async throws -> HTTPResponse {
        let route = try await Route.resolve(req, prefix: prefix)
        let docs = req.documents
        switch (req.method, route.id) {
        case ("GET", nil):
            var q = try docs.collection(route.paths.messages).whereField("isDeleted", isEqualTo: false)
            if try route.bool("unread") == true { q = try q.whereField("isRead", isEqualTo: false) }
            q = try q.order(by: "createdAt", descending: true)
            return Route.json(try await route.page(q, collection: route.paths.messages, docs: docs))
        case ("PATCH", let id?):
            guard case .bool(let read)? = try route.object()["isRead"] else { throw HTTPSError(.invalidArgument, "the body must be {\"isRead\": true|false}") }
            let ref = try docs.document(try route.paths.message(id))
            do { _ = try await ref.update(["isRead": .value(.bool(read))]) } catch let e as HTTPSError where e.code == .notFound {
                throw HTTPSError(.notFound, "no push notification \(id)")
            }
            guard let doc = try await ref.get([String: Value].self) else { throw HTTPSError(.notFound, "no push notification \(id)") }
            return Route.json(Route.resource(doc))
        case ("DELETE", let id?):
            try await ItemOperations.setFlag(true, try docs.document(try route.paths.message(id)), what: "push notification", docs: docs)
            return HTTPResponse(status: 204)
        case (_, nil): return route.methodNotAllowed(["GET"])
        case (_, _?): return route.methodNotAllowed(["PATCH", "DELETE"])
        }
    }
}

enum SignIn {
    static let routes: Set<String> = ["/api/auth/apple", "/api/auth/github", "/api/auth/google"]

    static func handle(_ req: HTTPRequest) async throws -> HTTPResponse {
        guard routes.contains(req.path) else { throw HTTPSError(.notFound, "no route for \(req.path)") }
        guard req.method == "POST" else { return Route.methodNotAllowed(req.method, ["POST"]) }
        let body: [String: Value]
        if req.body.isEmpty { body = [:] } else {
            guard case .map(let m)? = try? JSONParser.parse(req.body) else { throw HTTPSError(.invalidArgument, "the body must be a JSON object") }
            body = m
        }
        switch req.path {
        case "/api/auth/apple":
            return Route.json(["customToken": .string(try await ProviderExchange.apple(code: body["authorizationCode"]?.stringValue, req))])
        case "/api/auth/github":
            return Route.json(["customToken": .string(try await ProviderExchange.github(code: body["code"]?.stringValue, req))])
        case "/api/auth/google":
            // Google signs in on the client; the server verifies the resulting ID token.
            let auth = try await req.verifiedAuth()
            let user = try await req.context.auth.getUser(uid: auth.uid)
            return Route.json(["uid": .string(user.uid), "email": user.email.map { .string($0) } ?? .null,
                               "providers": .array(user.providerData.map { .string($0.providerId) })])
        default:
            throw HTTPSError(.notFound, "no route for \(req.path)")
        }
    }
}
