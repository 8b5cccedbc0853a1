import CHearthSystem
import HearthModel

/// Keeps secrets out of recordings: every message is decoded, its sensitive parts replaced by
/// stable placeholders, and encoded again, so a recording holds the same kind of bytes the
/// boundary carries, minus what must never reach a file.
///
/// What is replaced, everywhere a message holds it:
/// - the values of declared secrets (`<secret:NAME>`), inside any string or text body;
/// - anything shaped like a JWT (ID, custom and provider tokens, signed client secrets) loses its
///   signature (`header.claims.<redacted>`): no longer a credential, but a replayed unit can still
///   read the claims of a provider's ID token as the original did;
/// - map keys and form or JSON body fields that name credentials (`…token…`, `…password…`,
///   `…secret…`, `code`, `authorizationCode`, `assertion`): `<redacted:KEY>`;
/// - `Authorization`, `Cookie`, App Check and instance-id headers, the caller's raw ID token,
///   minted custom tokens, signed JWTs and the private keys given to sign them.
///
/// Placeholders depend only on the field, never on the secret, so replaying redacted traffic
/// against new code compares equal where the old code saw equal values.
public struct Redactor: Sendable {
    /// Declared secrets' values by name (only values of 4 characters or more are searched for).
    let secrets: [(name: String, value: String)]

    /// What `mightHold` searches encoded messages for (lower-cased): the start of every key the
    /// rules redact, of every header they replace, of a JWT, and each secret's value.
    let needles: [[UInt8]]

    /// Every declared secret, for whole-string equality (a short one is not searched for inside text).
    let whole: [String: String]

    public init(secrets: [String: String] = [:]) {
        // Each value as it is and percent-encoded (in a URL or a form body), longest first.
        var search: [(name: String, value: String)] = []
        for (name, value) in secrets where value.count >= 4 {
            search.append((name, value))
            if let encoded = value.addingPercentEncoding(withAllowedCharacters: .alphanumerics), encoded != value { search.append((name, encoded)) }
        }
        self.secrets = search.sorted { $0.value.count > $1.value.count }
        var whole: [String: String] = [:]
        for (name, value) in secrets where !value.isEmpty { whole[value] = name }
        self.whole = whole
        // Every word `isSensitive(header:)` redacts a header for is one: a message whose only
        // credential is an `X-Session-Id` header is looked into too.
        needles = (["token", "password", "secret", "code", "assertion", "authoriz", "apikey", "api_key", "api-key", "private", "cookie", "appcheck", "eyj"]
                   + Redactor.credentialHeaderWords + self.secrets.map { $0.value.lowercased() } + whole.keys.filter { $0.count < 4 }.map { $0.lowercased() }).map { Array($0.utf8) }
    }

    /// Whether an encoded message might hold something to redact; when not (most messages), it
    /// is recorded as it is, without decoding it. False positives only cost the decoding.
    public func mightHold(_ bytes: [UInt8]) -> Bool {
        guard !bytes.isEmpty else { return false }
        var lower = bytes
        for i in lower.indices where lower[i] >= 65 && lower[i] <= 90 { lower[i] |= 0x20 }
        return lower.withUnsafeBytes { hay in
            needles.contains { needle in
                needle.withUnsafeBytes { n in hearth_memmem(hay.baseAddress, hay.count, n.baseAddress, n.count) != nil }
            }
        }
    }

    static let sensitiveHeaders: Set<String> = ["authorization", "proxy-authorization", "cookie", "set-cookie", "x-firebase-appcheck",
                                                "firebase-instance-id-token", "x-goog-api-key", "x-hearth-control-token"]

    /// Whether a header carries a credential: the known ones, and any whose name says so
    /// (`X-Api-Key`, `X-Auth-Token`, `Stripe-Signature`, `X-Session-Id`…).
    static func isSensitive(header name: String) -> Bool {
        let n = name.lowercased()
        return sensitiveHeaders.contains(n) || credentialHeaderWords.contains { n.contains($0) }
    }

    /// Words that make a header name a credential's wherever they appear in it.
    @_spi(Internals) public static let credentialHeaderWords = ["token", "key", "secret", "auth", "signature", "cookie", "session", "password", "credential"]

    /// Whether a field or key names a credential.
    static func isSensitive(key: String) -> Bool {
        let k = key.lowercased()
        if k.contains("token") || k.contains("password") || k.contains("secret") || k.contains("apikey") || k.contains("api_key") { return true }
        return ["code", "authorizationcode", "authorization_code", "assertion", "client_assertion", "authorization", "privatekey", "private_key"].contains(k)
    }

    static func placeholder(_ key: String) -> String { "<redacted:\(key)>" }

    // MARK: values

    public func string(_ s: String) -> String {
        if let name = whole[s] { return "<secret:\(name)>" }
        var out = s
        for (name, value) in secrets where Redactor.has(out, value) { out = out.replacingOccurrences(of: value, with: "<secret:\(name)>") }
        return Redactor.maskJWTs(out, keepClaims: true)
    }

    /// Whether `s` contains `needle` (bytes; Foundation's search is slow).
    static func has(_ s: String, _ needle: String) -> Bool {
        var s = s, needle = needle
        return s.withUTF8 { hay in needle.withUTF8 { n in hearth_memmem(hay.baseAddress, hay.count, n.baseAddress, n.count) != nil } }
    }

    static func isJWT(_ s: String) -> Bool { s.hasPrefix("eyJ") && maskJWTs(s, keepClaims: false) == "<redacted:jwt>" }

    /// Replaces every JWT-shaped run (`eyJ…` `.` `…` `.` `…`, base64url): its signature only with
    /// `keepClaims`, else whole (comparisons: tokens minted at different times compare equal).
    public static func maskJWTs(_ s: String, keepClaims: Bool) -> String {
        guard has(s, "eyJ") else { return s }
        let scalars = Array(s.unicodeScalars)
        func isB64(_ c: Unicode.Scalar) -> Bool {
            (c >= "A" && c <= "Z") || (c >= "a" && c <= "z") || (c >= "0" && c <= "9") || c == "-" || c == "_"
        }
        var out = String.UnicodeScalarView()
        var i = 0
        while i < scalars.count {
            if i + 3 <= scalars.count, scalars[i] == "e", scalars[i + 1] == "y", scalars[i + 2] == "J", i == 0 || scalars[i - 1] == "=" || !isB64(scalars[i - 1]) {
                // Three base64url segments joined by two dots.
                var j = i, dots = 0
                while j < scalars.count, isB64(scalars[j]) || (scalars[j] == "." && dots < 2) {
                    if scalars[j] == "." { dots += 1 }
                    j += 1
                }
                guard dots == 2, j - i > 20 else {
                    // Not a JWT: nothing inside this run can start one (each is preceded by a
                    // base64url character), so go on after it; the scan stays linear.
                    while i < j { out.append(scalars[i]); i += 1 }
                    continue
                }
                do {
                    if keepClaims {
                        // Up to and including the second dot, then the placeholder.
                        var k = i, seen = 0
                        while seen < 2 { if scalars[k] == "." { seen += 1 }; out.append(scalars[k]); k += 1 }
                        out.append(contentsOf: "<redacted>".unicodeScalars)
                    } else {
                        out.append(contentsOf: "<redacted:jwt>".unicodeScalars)
                    }
                    i = j
                    continue
                }
            }
            out.append(scalars[i])
            i += 1
        }
        return String(out)
    }

    public func value(_ v: Value) -> Value {
        switch v {
        case .string(let s): return .string(string(s))
        case .map(let m): return .map(fields(m))
        case .array(let a): return .array(a.map(value))
        default: return v
        }
    }

    public func fields(_ m: [String: Value]) -> [String: Value] {
        var out: [String: Value] = [:]
        out.reserveCapacity(m.count)
        for (k, v) in m {
            // A credential is a string (or bytes): under a credential-like key it is replaced (a JWT
            // keeps its claims, see above); anything else there (a number, a map…) keeps its type,
            // its strings redacted by the same rules, so replayed code sees the same shapes.
            out[k] = Redactor.isSensitive(key: k) ? value(v, under: k) : value(v)
        }
        return out
    }

    func document(_ d: StoredDocument) -> StoredDocument {
        var copy = d
        copy.fields = fields(d.fields)
        return copy
    }

    func write(_ w: DocumentWrite) -> DocumentWrite {
        var copy = w
        if case .update(let f, let mask) = w.operation { copy.operation = .update(fields: fields(f), mask: mask) }
        return copy
    }

    func task(_ t: TaskSpec) -> TaskSpec {
        var copy = t
        copy.data = value(t.data)
        return copy
    }

    /// A header's value: credentials replaced, keeping an `Authorization` scheme (`Bearer
    /// <redacted:authorization>`), so replayed code still finds the shape it checks for.
    public func header(_ name: String, _ value: String) -> String {
        let lower = name.lowercased()
        guard Redactor.isSensitive(header: lower) else { return string(value) }
        if lower.hasSuffix("authorization"), let space = value.firstIndex(of: " "),
           ["bearer", "basic", "digest", "token", "aws4-hmac-sha256", "negotiate"].contains(value[..<space].lowercased()) {
            // An ID token keeps its claims (whose call it was), not its signature.
            let credential = String(value[value.index(after: space)...])
            return String(value[...space]) + (Redactor.isJWT(credential) ? string(credential) : Redactor.placeholder(lower))
        }
        return Redactor.placeholder(lower)
    }

    func headerPairs(_ pairs: [String]) -> [String] {
        var out = pairs
        var i = 0
        while i + 1 < out.count {
            out[i + 1] = header(out[i], out[i + 1])
            i += 2
        }
        return out
    }

    func headers(_ h: HTTPHeaders) -> HTTPHeaders {
        HTTPHeaders(h.fields.map { (name: $0.name, value: header($0.name, $0.value)) })
    }

    /// A URL with credential parameters of its query (`access_token=`, `key=`, `code=`…) replaced.
    public func url(_ u: String) -> String {
        guard let q = u.firstIndex(of: "?") else { return string(u) }
        return string(String(u[..<q])) + "?" + query(String(u[u.index(after: q)...]))
    }

    /// A query string (`a=1&access_token=…`) with credential parameters replaced.
    public func query(_ q: String) -> String {
        q.split(separator: "&", omittingEmptySubsequences: false).map { pair -> String in
            guard let eq = pair.firstIndex(of: "=") else { return string(String(pair)) }
            let key = String(pair[..<eq])
            let name = (key.removingPercentEncoding ?? key).lowercased()
            let raw = String(pair[pair.index(after: eq)...])
            let sensitive = (Redactor.isSensitive(key: name) || ["key", "sig", "signature"].contains(name)) && !Redactor.isJWT(raw.removingPercentEncoding ?? raw)
            return key + "=" + (sensitive ? Redactor.placeholder(name) : string(raw))
        }.joined(separator: "&")
    }

    /// A text to compare, not to keep: percent-decoded, every JWT and every placeholder
    /// (`<redacted:…>`, `<secret:…>`) the same, so a value redacted by one rule on one side and
    /// another rule on the other (or minted anew) compares equal.
    public static func normalized(_ s: String) -> String {
        let text = Array(maskJWTs(s.removingPercentEncoding ?? s, keepClaims: false).utf8)
        // One forward pass: each `<redacted…>` or `<secret:…>` becomes `<redacted>`, and runs of
        // them (a JWT whose signature was redacted reads as two) one.
        let redacted = Array("<redacted".utf8), secret = Array("<secret:".utf8), placeholder = Array("<redacted>".utf8)
        func starts(_ prefix: [UInt8], at i: Int) -> Bool { i + prefix.count <= text.count && Array(text[i..<(i + prefix.count)]) == prefix }
        var out: [UInt8] = []
        out.reserveCapacity(text.count)
        var i = 0
        while i < text.count {
            if text[i] == UInt8(ascii: "<"), starts(redacted, at: i) || starts(secret, at: i),
               let end = text[i..<min(i + 256, text.count)].firstIndex(of: UInt8(ascii: ">")) {
                if !(out.count >= placeholder.count && Array(out.suffix(placeholder.count)) == placeholder) { out += placeholder }
                i = end + 1
                continue
            }
            out.append(text[i])
            i += 1
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// A request or response body: JSON and form bodies field by field, other text as a string.
    public func body(_ bytes: [UInt8]) -> [UInt8] {
        guard !bytes.isEmpty else { return bytes }
        if let first = bytes.first(where: { $0 != 0x20 && $0 != 0x0A && $0 != 0x0D && $0 != 0x09 }), first == UInt8(ascii: "{") || first == UInt8(ascii: "["),
           let parsed = try? JSONParser.parse(bytes) {
            return JSONWriter.encode(value(parsed), options: .sorted)
        }
        guard let text = String(validating: bytes, as: UTF8.self) else { return bytes }
        if text.contains("="), !text.contains(" "), !text.contains("\n") {
            return Array(query(text).utf8)  // application/x-www-form-urlencoded
        }
        return Array(string(text).utf8)
    }

    // MARK: messages

    @_spi(Internals) public func event(_ e: Boundary.Event) -> Boundary.Event {
        switch e {
        case .callable(var c):
            c.data = value(c.data)
            if var auth = c.auth {
                auth.rawToken = auth.rawToken.isEmpty ? "" : Redactor.placeholder("idToken")
                auth.claims = fields(auth.claims)
                c.auth = auth
            }
            if c.instanceIDToken != nil { c.instanceIDToken = Redactor.placeholder("instanceIdToken") }
            c.headers = headers(c.headers)
            return .callable(c)
        case .request(var r):
            r.headers = self.headers(r.headers)
            r.body = body(r.body)
            r.query = query(r.query)
            return .request(r)
        case .document(var d):
            d.before = d.before.map(document)
            d.after = d.after.map(document)
            return .document(d)
        case .task(var t):
            t.data = value(t.data)
            return .task(t)
        case .user(var u):
            u.user = user(u.user)
            return .user(u)
        case .schedule: return e
        }
    }

    func user(_ u: UserRecord) -> UserRecord {
        var copy = u.redacted
        copy.customClaims = u.customClaims.map(fields)
        return copy
    }

    func result(_ r: Boundary.InvocationResult) -> Boundary.InvocationResult {
        var w = WireWriter(capacity: 64)
        r.encode(to: &w)
        guard mightHold(w.finish()) else { return r }
        switch r {
        case .none: return r
        case .value(let v): return .value(value(v))
        case .response(var response):
            response.headers = headers(response.headers)
            response.body = body(response.body)
            return .response(response)
        }
    }

    func error(_ e: RemoteError) -> RemoteError {
        RemoteError(code: e.code, message: string(e.message), details: e.details.map(value), debug: e.debug.map(string))
    }

    /// A query: a filter on a credential-like field (`where fcmToken == …`) loses its value's strings.
    public func querySpec(_ q: QuerySpec) -> QuerySpec {
        var copy = q
        copy.filters = q.filters.map { f in
            var g = f
            let name = f.field.segments.last ?? ""
            g.value = Redactor.isSensitive(key: name) ? value(f.value, under: name) : value(f.value)
            return g
        }
        return copy
    }

    /// `v` as it would be under key `key` of a map.
    func value(_ v: Value, under key: String) -> Value {
        switch v {
        case .string(let text): return .string(Redactor.isJWT(text) ? string(text) : Redactor.placeholder(key))
        case .bytes: return .bytes(Array(Redactor.placeholder(key).utf8))
        case .array(let items): return .array(items.map { value($0, under: key) })
        default: return value(v)
        }
    }

    /// A service request's body, redacted.
    func request(_ op: Boundary.Operation, _ body: [UInt8]) -> [UInt8] {
        guard mightHold(body) else { return body }
        do {
            switch op {
            case .commit:
                var m = try Boundary.Commit(wireBytes: body)
                m.writes = m.writes.map(write)
                m.enqueues = m.enqueues.map(task)
                return m.wireBytes
            case .commitTransaction:
                var m = try Boundary.CommitTransaction(wireBytes: body)
                m.writes = m.writes.map(write)
                m.enqueues = m.enqueues.map(task)
                return m.wireBytes
            case .enqueueTasks:
                var m = try Boundary.EnqueueTasks(wireBytes: body)
                m.tasks = m.tasks.map(task)
                return m.wireBytes
            case .verifyIDToken:
                var m = try Boundary.VerifyIDToken(wireBytes: body)
                m.token = Redactor.isJWT(m.token) ? string(m.token) : Redactor.placeholder("idToken")
                return m.wireBytes
            case .signJWT:
                var m = try Boundary.SignJWT(wireBytes: body)
                m.privateKeyPEM = Redactor.placeholder("privateKey")
                m.claims = fields(m.claims)
                return m.wireBytes
            case .createCustomToken:
                var m = try Boundary.CreateCustomToken(wireBytes: body)
                m.claims = m.claims.map(fields)
                return m.wireBytes
            case .setCustomClaims:
                var m = try Boundary.SetCustomClaims(wireBytes: body)
                m.claims = m.claims.map(fields)
                return m.wireBytes
            case .updateUser:
                var m = try Boundary.UpdateUser(wireBytes: body)
                m.update.customClaims = m.update.customClaims.map(fields)
                return m.wireBytes
            case .sendMessage:
                var m = try Boundary.SendMessage(wireBytes: body)
                m.message.token = Redactor.placeholder("fcmToken")
                m.message.title = m.message.title.map(string)
                m.message.body = m.message.body.map(string)
                var data: [String: String] = [:]
                for (k, v) in m.message.data { data[k] = Redactor.isSensitive(key: k) && !Redactor.isJWT(v) ? Redactor.placeholder(k) : string(v) }
                m.message.data = data
                return m.wireBytes
            case .httpFetch:
                var m = try Boundary.HTTPFetch(wireBytes: body)
                m.url = url(m.url)
                m.headers = headerPairs(m.headers)
                m.body = self.body(m.body)
                return m.wireBytes
            case .runQuery:
                var m = try Boundary.RunQuery(wireBytes: body)
                m.query = querySpec(m.query)
                return m.wireBytes
            case .countQuery:
                var m = try Boundary.CountQuery(wireBytes: body)
                m.query = querySpec(m.query)
                return m.wireBytes
            case .transactionQuery:
                var m = try Boundary.TransactionQuery(wireBytes: body)
                m.query = querySpec(m.query)
                return m.wireBytes
            case .log:
                var m = try Boundary.Log(wireBytes: body)
                m.message = string(m.message)
                m.metadata = fields(m.metadata)
                return m.wireBytes
            case .streamSend:
                var m = try Boundary.StreamSend(wireBytes: body)
                m.chunk = value(m.chunk)
                return m.wireBytes
            default:
                return body
            }
        } catch {
            // What cannot be read is not kept (a unit sent a malformed request).
            return []
        }
    }

    /// A service reply's body, redacted (`name` is the secret's name for `secrets.get`).
    func reply(_ op: Boundary.Operation, _ body: [UInt8], secret name: String? = nil) -> [UInt8] {
        do {
            switch op {
            case .secretGet:
                return "<secret:\(name ?? "?")>".wireBytes
            case .createCustomToken:
                return Redactor.placeholder("customToken").wireBytes
            case .signJWT:
                return Redactor.placeholder("jwt").wireBytes
            case _ where !mightHold(body):
                return body
            case .getDocuments, .transactionGet:
                return (try [StoredDocument?](wireBytes: body).map { $0.map(document) }).wireBytes
            case .runQuery, .transactionQuery:
                return (try [StoredDocument](wireBytes: body).map(document)).wireBytes
            case .getUser, .createUser, .updateUser:
                return (user(try UserRecord(wireBytes: body))).wireBytes
            case .listUsers:
                var page = try Boundary.UserPage(wireBytes: body)
                page.users = page.users.map(user)
                return page.wireBytes
            case .verifyIDToken:
                var m = try CallerAuth(wireBytes: body)
                m.rawToken = m.rawToken.isEmpty ? "" : Redactor.placeholder("idToken")
                m.claims = fields(m.claims)
                return m.wireBytes
            case .httpFetch:
                var m = try Boundary.HTTPFetchReply(wireBytes: body)
                m.headers = headerPairs(m.headers)
                m.body = self.body(m.body)
                return m.wireBytes
            default:
                return body
            }
        } catch {
            return []
        }
    }

}
