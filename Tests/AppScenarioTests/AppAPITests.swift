import Foundation
import HearthHTTP
import HearthModel
@_spi(Internals) import HearthRuntime
import HearthTesting
import Testing

/// The app's HTTP API behind `[[rewrites]]`, over real HTTP through the front door (SCENARIOS §7).
struct APIClient: Sendable {
    let app: TestRuntime
    let door: FrontDoor
    let client = HTTPClient()

    static let rewrites: [RuntimeConfig.Rewrite] = [
        .init(source: "/api/todos", function: "todosApi"), .init(source: "/api/todos/**", function: "todosApi"),
        .init(source: "/api/web-pages", function: "webPagesApi"), .init(source: "/api/web-pages/**", function: "webPagesApi"),
        .init(source: "/api/push-notifications", function: "pushNotificationsApi"), .init(source: "/api/push-notifications/**", function: "pushNotificationsApi"),
    ]

    static func start() async throws -> APIClient {
        let app = try await TestRuntime(units: appUnits + ["AppAPI"]) { config in
            config.server.port = 0
            config.rewrites = rewrites
        }
        let door = try FrontDoor(runtime: app.runtime, secrets: Secrets())
        try door.start()
        return APIClient(app: app, door: door)
    }

    func send(_ method: String, _ path: String, as uid: String?, json: Value? = nil) async throws -> (status: Int, body: Value, headers: HTTPHeaders) {
        var headers = HTTPHeaders([("Content-Type", "application/json")])
        if let uid { headers.set("Authorization", "Bearer \(try await app.runtime.caller(asUser: uid).rawToken)") }
        let r = try await client.send(HTTPClientRequest(method: method, url: "http://127.0.0.1:\(door.port)\(path)", headers: headers,
                                                        body: json.map { JSONWriter.encode($0) } ?? [], timeout: .seconds(150)))
        return (r.status, (try? JSONParser.parse(r.body)) ?? .null, r.headers)
    }
}

@Suite("The app's HTTP API (SCENARIOS §7)")
struct AppAPITests {
    @Test("todos: create (201, Location, numbered), read, filter, order and page, change, soft delete; another member sees nothing")
    func todos() async throws {
        let api = try await APIClient.start()
        try await api.app.member("amy")
        let created = try await api.send("POST", "/api/todos", as: "amy", json: ["title": "milk", "category": "home", "targetDate": "2026-01-05T09:00:00Z"])
        #expect(created.status == 201, "\(created.body)")
        let id = try #require(created.body["id"]?.stringValue)
        #expect(created.headers["location"] == "/api/todos/\(id)")
        #expect(created.body["sequence"] == 1)
        #expect(created.body["targetDate"] == "2026-01-05T09:00:00Z")
        for i in 0..<4 { _ = try await api.send("POST", "/api/todos", as: "amy", json: ["title": .string("t\(i)"), "category": "work"]) }

        #expect(try await api.send("GET", "/api/todos/\(id)", as: "amy").body["title"] == "milk")
        let work = try await api.send("GET", "/api/todos?category=work&due=none&orderBy=createdAt&direction=asc&pageSize=3", as: "amy")
        #expect(work.status == 200, "\(work.body)")
        #expect(work.body["items"]?.arrayValue?.count == 3)
        let token = try #require(work.body["nextPageToken"]?.stringValue)
        let rest = try await api.send("GET", "/api/todos?category=work&due=none&orderBy=createdAt&direction=asc&pageSize=3&pageToken=\(token)", as: "amy")
        #expect(rest.body["items"]?.arrayValue?.count == 1)
        #expect(rest.body["nextPageToken"] == nil)
        #expect(try await api.send("GET", "/api/todos?due=set", as: "amy").body["items"]?.arrayValue?.map { $0["id"] } == [.string(id)])

        let changed = try await api.send("PATCH", "/api/todos/\(id)", as: "amy", json: ["isDone": true, "targetDate": .null])
        #expect(changed.status == 200, "\(changed.body)")
        #expect(changed.body["isDone"] == true)
        #expect(changed.body["targetDate"] == .null)
        #expect(changed.body["sequence"] == 1, "an update keeps the number")
        #expect(try await api.send("GET", "/api/todos?done=true", as: "amy").body["items"]?.arrayValue?.count == 1)

        #expect(try await api.send("DELETE", "/api/todos/\(id)", as: "amy").status == 204)
        #expect(try await api.send("DELETE", "/api/todos/\(id)", as: "amy").status == 400, "already deleted: failed-precondition")
        #expect(try await api.send("GET", "/api/todos?done=true", as: "amy").body["items"]?.arrayValue?.isEmpty == true)

        #expect(try await api.send("GET", "/api/todos", as: nil).status == 401)
        #expect(try await api.send("GET", "/api/todos/\(id)", as: "bob").status == 404)
        #expect(try await api.send("GET", "/api/todos?pageSize=500", as: "amy").status == 400)
        #expect(try await api.send("GET", "/api/todos?orderBy=title", as: "amy").status == 400)
        #expect(try await api.send("POST", "/api/todos", as: "amy", json: ["title": 5]).status == 400)
        #expect(try await api.send("POST", "/api/todos", as: "amy", json: ["title": "x", "targetDate": "tomorrow"]).status == 400)
        let put = try await api.send("PUT", "/api/todos/\(id)", as: "amy", json: [:])
        #expect(put.status == 405)
        #expect(put.headers["allow"] == "GET, PATCH, DELETE")
        #expect(try await api.send("GET", "/api/other", as: "amy").status == 404)
        await api.door.shutdown(grace: .seconds(2))
    }

    @Test("web pages and push notifications: list, create, mark read, soft delete")
    func pagesAndNotifications() async throws {
        let api = try await APIClient.start()
        try await api.app.member("ben")
        let page = try await api.send("POST", "/api/web-pages", as: "ben", json: ["url": "https://swift.org", "title": "Swift"])
        #expect(page.status == 201, "\(page.body)")
        let pageID = try #require(page.body["id"]?.stringValue)
        #expect(try await api.send("POST", "/api/web-pages", as: "ben", json: ["url": "javascript:alert(1)"]).status == 400)
        #expect(try await api.send("GET", "/api/web-pages", as: "ben").body["items"]?.arrayValue?.count == 1)
        #expect(try await api.send("DELETE", "/api/web-pages/\(pageID)", as: "ben").status == 204)
        #expect(try await api.send("GET", "/api/web-pages", as: "ben").body["items"]?.arrayValue?.isEmpty == true)

        try await api.app.seed(["members/ben/messages/m1": ["itemId": "i", "title": "Due", "body": "b", "isRead": false, "isDeleted": false,
                                                            "createdAt": .timestamp(api.app.clock.now())]])
        #expect(try await api.send("GET", "/api/push-notifications?unread=true", as: "ben").body["items"]?.arrayValue?.count == 1)
        let read = try await api.send("PATCH", "/api/push-notifications/m1", as: "ben", json: ["isRead": true])
        #expect(read.body["isRead"] == true)
        #expect(try await api.send("GET", "/api/push-notifications?unread=true", as: "ben").body["items"]?.arrayValue?.isEmpty == true)
        #expect(try await api.send("PATCH", "/api/push-notifications/none", as: "ben", json: ["isRead": true]).status == 404)
        #expect(try await api.send("DELETE", "/api/push-notifications/m1", as: "ben").status == 204)
        #expect(try await api.send("GET", "/api/push-notifications", as: "ben").body["items"]?.arrayValue?.isEmpty == true)
        await api.door.shutdown(grace: .seconds(2))
    }
}
