import Foundation
import HearthAuth
import HearthHTTP
import HearthModel
import Synchronization

/// Where functions' pushes go: the outbox only (`log`), or FCM HTTP v1 (`fcm`) and the outbox.
final class Messenger: Sendable {
    let outbox: any OutboxStorage
    let fcm: FCMClient?
    let clock: any Clock

    init(outbox: any OutboxStorage, fcm: FCMClient?, clock: any Clock) {
        self.outbox = outbox
        self.fcm = fcm
        self.clock = clock
    }

    func send(_ message: PushMessage, function: String) async throws -> String {
        try message.check()
        guard let fcm else {
            let sequence = try await outbox.record(time: clock.now(), function: function, message: message, outcome: "logged", messageID: nil)
            return "log/\(sequence)"
        }
        do {
            let name = try await fcm.send(message)
            // FCM has it: failing to note that must not make the caller send it again.
            _ = try? await outbox.record(time: clock.now(), function: function, message: message, outcome: "sent", messageID: name)
            return name
        } catch let error as HTTPSError {
            _ = try? await outbox.record(time: clock.now(), function: function, message: message, outcome: "\(error.code.rawValue): \(error.message)", messageID: nil)
            throw error
        }
    }
}

/// A Google service account's key file, as the console downloads it.
struct ServiceAccount: Sendable {
    let projectID: String
    let clientEmail: String
    let keyID: String?
    let key: Key
    let tokenURI: String

    init(json: [UInt8]) throws {
        let v = try JSONParser.parse(json)
        guard let email = v["client_email"]?.stringValue, let pem = v["private_key"]?.stringValue, let project = v["project_id"]?.stringValue else {
            throw HTTPSError(.failedPrecondition, "the service account file needs client_email, private_key and project_id")
        }
        clientEmail = email
        projectID = project
        keyID = v["private_key_id"]?.stringValue
        key = try Key.privateKey(pem: pem)
        tokenURI = v["token_uri"]?.stringValue ?? "https://oauth2.googleapis.com/token"
    }
}

/// FCM HTTP v1: a service-account assertion (RS256 JWT) exchanged for an OAuth access token, kept
/// until a minute before it expires (and fetched again once on a 401), then `messages:send`.
public final class FCMClient: Sendable {
    let account: ServiceAccount
    let baseURL: String
    let tokenURL: String
    let http: HTTPClient
    let clock: any Clock
    let token = Mutex<(value: String, expires: Timestamp)?>(nil)
    static let scope = "https://www.googleapis.com/auth/firebase.messaging"

    init(account: ServiceAccount, baseURL: String, tokenURL: String?, clock: any Clock, http: HTTPClient = HTTPClient()) {
        self.account = account
        self.baseURL = baseURL.hasSuffix("/") ? String(baseURL.dropLast()) : baseURL
        self.tokenURL = tokenURL ?? account.tokenURI
        self.clock = clock
        self.http = http
    }

    func send(_ message: PushMessage) async throws -> String {
        var refreshed = false
        while true {
            let bearer = try await accessToken(forceNew: refreshed)
            let response: HTTPClientResponse
            do {
                response = try await http.send(HTTPClientRequest(
                    method: "POST", url: "\(baseURL)/v1/projects/\(account.projectID)/messages:send",
                    headers: HTTPHeaders([("Content-Type", "application/json"), ("Authorization", "Bearer \(bearer)")]),
                    body: JSONWriter.encode(["message": FCMClient.wire(message)]), timeout: .seconds(30)))
            } catch where error.kind == .timeout {
                // The request may have reached FCM: callers must not assume it was not sent.
                throw HTTPSError(.deadlineExceeded, "FCM did not answer in time (the push may have been delivered)")
            } catch {
                throw HTTPSError(.unavailable, "FCM is unreachable: \(error)")
            }
            if response.status == 200 {
                return (try? JSONParser.parse(response.body))?["name"]?.stringValue ?? ""
            }
            if response.status == 401 && !refreshed {
                refreshed = true
                continue
            }
            throw FCMClient.failure(response)
        }
    }

    /// FCM v1's message: token, notification, data, and the APNs payload with badge and sound.
    static func wire(_ m: PushMessage) -> Value {
        var message: [String: Value] = ["token": .string(m.token)]
        var notification: [String: Value] = [:]
        if let t = m.title { notification["title"] = .string(t) }
        if let b = m.body { notification["body"] = .string(b) }
        if !notification.isEmpty { message["notification"] = .map(notification) }
        if !m.data.isEmpty { message["data"] = .map(m.data.mapValues { .string($0) }) }
        var aps: [String: Value] = [:]
        if let badge = m.badge { aps["badge"] = .int(Int64(badge)) }
        if let sound = m.sound { aps["sound"] = .string(sound) }
        if !aps.isEmpty { message["apns"] = ["payload": ["aps": .map(aps)]] }
        return .map(message)
    }

    /// FCM's refusal, told apart as the SDK documents: the token is gone, the request is bad, or
    /// it may work later (429, 5xx: `unavailable`, with Retry-After when FCM gave one).
    static func failure(_ response: HTTPClientResponse) -> HTTPSError {
        let error = (try? JSONParser.parse(response.body))?["error"]
        let status = error?["status"]?.stringValue ?? ""
        let detail = (error?["message"]?.stringValue).map { Printable.quoted($0, limit: 200) } ?? "HTTP \(response.status)"
        let codes = (error?["details"]?.arrayValue ?? []).compactMap { $0["errorCode"]?.stringValue }
        // Only FCM's own word says the token is gone: a 404 from a wrong fcm_url, project id or proxy
        // must not make callers forget every device's token.
        if codes.contains("UNREGISTERED") {
            return HTTPSError(.notFound, "UNREGISTERED: the registration token is not registered (\(detail))")
        }
        if response.status == 404 {
            return HTTPSError(.failedPrecondition, "FCM answered 404 without UNREGISTERED (check [messaging] fcm_url and the project id): \(detail)")
        }
        switch response.status {
        case 400: return HTTPSError(.invalidArgument, "\(codes.first ?? (status.isEmpty ? "INVALID_ARGUMENT" : status)): \(detail)")
        case 401, 403: return HTTPSError(.failedPrecondition, "FCM refused the service account (\(codes.first ?? status)): \(detail)")
        case 429, 500...599:
            let after = response.headers["retry-after"].map { "; retry after \(Printable.quoted($0, limit: 40)) s" } ?? ""
            return HTTPSError(.unavailable, "FCM answered \(response.status)\(after): \(detail)")
        default: return HTTPSError(.unknown, "FCM answered \(response.status): \(detail)")
        }
    }

    func accessToken(forceNew: Bool) async throws -> String {
        let now = clock.now()
        if !forceNew, let cached = token.withLock({ $0 }), now < cached.expires { return cached.value }
        let assertion = try JWT.sign(["iss": .string(account.clientEmail), "scope": .string(FCMClient.scope), "aud": .string(tokenURL),
                                      "iat": .int(now.seconds), "exp": .int(now.seconds + 3600)], key: account.key, kid: account.keyID)
        let body = "grant_type=\(PercentEncoding.encodeQueryValue("urn:ietf:params:oauth:grant-type:jwt-bearer"))&assertion=\(assertion)"
        let response: HTTPClientResponse
        do {
            response = try await http.send(HTTPClientRequest(method: "POST", url: tokenURL,
                                                             headers: HTTPHeaders([("Content-Type", "application/x-www-form-urlencoded")]),
                                                             body: Array(body.utf8), timeout: .seconds(30)))
        } catch {
            throw HTTPSError(.unavailable, "the OAuth token endpoint is unreachable: \(error)")
        }
        guard response.status == 200, let parsed = try? JSONParser.parse(response.body), let value = parsed["access_token"]?.stringValue else {
            if response.status >= 500 || response.status == 429 { throw HTTPSError(.unavailable, "the OAuth token endpoint answered \(response.status)") }
            throw HTTPSError(.failedPrecondition, "the OAuth token endpoint refused the service account (HTTP \(response.status))")
        }
        let lifetime = min(max(parsed["expires_in"]?.intValue ?? 3600, 0), 86_400)
        // Kept until a minute before it expires.
        token.withLock { $0 = (value, now + .seconds(max(lifetime - 60, 0))) }
        return value
    }
}
