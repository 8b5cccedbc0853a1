import Foundation
import HearthModel
@_spi(Internals) import HearthRuntime
import HearthTesting
import Testing

@Suite("Recordings: redaction, the file format and its errors, rotation")
struct RecordingTests {
    static let jwt = "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ1MSIsImVtYWlsIjoiYUBleGFtcGxlLmNvbSJ9.c2lnbmF0dXJlLXNpZ25hdHVyZS1zaWduYXR1cmU"

    func temp() -> String { NSTemporaryDirectory() + "hearth-rec-test-" + UUID().uuidString }

    @Test("redaction: credential keys, declared secrets inside text, JWT signatures, Authorization keeping its scheme, form and JSON bodies")
    func redaction() {
        let r = Redactor(secrets: ["API_KEY": "k-123456789", "SHORT": "ab"])
        let fields = r.fields(["password": "hunter2", "fcmToken": "dev-token", "idToken": .string(Self.jwt), "note": "key k-123456789 here, ab stays",
                               "nested": ["refresh_token": "rt-1", "keep": "visible"], "code": "one-time", "isTokenValid": true])
        #expect(fields["password"] == "<redacted:password>")
        #expect(fields["fcmToken"] == "<redacted:fcmToken>")
        #expect(fields["idToken"] == .string("eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ1MSIsImVtYWlsIjoiYUBleGFtcGxlLmNvbSJ9.<redacted>"), "claims stay, the signature goes")
        #expect(fields["note"] == "key <secret:API_KEY> here, ab stays", "values under 4 characters are not searched for")
        #expect(fields["nested"]?["refresh_token"] == "<redacted:refresh_token>")
        #expect(fields["nested"]?["keep"] == "visible")
        #expect(fields["code"] == "<redacted:code>")
        #expect(fields["isTokenValid"] == true, "booleans are not credentials")
        #expect(r.header("Authorization", "Bearer \(Self.jwt)") == "Bearer eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ1MSIsImVtYWlsIjoiYUBleGFtcGxlLmNvbSJ9.<redacted>",
                "an ID token keeps its claims (whose call it was), not its signature")
        #expect(r.header("Authorization", "Basic dXNlcjpwYXNz") == "Basic <redacted:authorization>")
        #expect(r.header("X-Api-Key", "k") == "<redacted:x-api-key>")
        #expect(r.header("Stripe-Signature", "t=1,v1=abc") == "<redacted:stripe-signature>")
        // A message whose only credential is a header named for one is looked into, not recorded
        // as it is: every word the header rule redacts for makes the quick search look.
        for word in Redactor.credentialHeaderWords {
            let name = "X-\(word.capitalized)-Id"
            let call = Boundary.Event.callable(.init(data: 1, headers: [name.lowercased(): "v-987654"]))
            let invoke = Boundary.Invoke(function: "f", event: call, now: Timestamp(seconds: 0), seed: RandomSeed(high: 1, low: 2))
            #expect(r.mightHold(invoke.wireBytes), "\(name)")
            guard case .callable(let redacted) = r.event(call) else { Issue.record("not a callable"); continue }
            #expect(redacted.headers[name] == "<redacted:\(name.lowercased())>")
        }
        #expect(r.url("https://api.example/v1?access_token=at-1&page=2&key=AIza") == "https://api.example/v1?access_token=<redacted:access_token>&page=2&key=<redacted:key>")
        #expect(r.fields(["code": 400, "secret": ["inner": "x"]]) == ["code": 400, "secret": ["inner": "x"]], "only strings are credentials: other values keep their type")
        #expect(r.header("Authorization", "k-123456789 sig") == "<redacted:authorization>", "only a known scheme is kept")
        #expect(r.string("ab") == "<secret:SHORT>", "a short secret is replaced when it is the whole string")
        var spec = QuerySpec(collection: try! CollectionPath("devices"))
        spec.filters = [QuerySpec.Filter(FieldPath(segments: ["fcmToken"]), .equal, "dev-1"),
                        QuerySpec.Filter(FieldPath(segments: ["owner"]), .equal, "ann")]
        let redactedQuery = r.querySpec(spec)
        #expect(redactedQuery.filters.map(\.value) == ["<redacted:fcmToken>", "ann"])
        // Linear on hostile input: a megabyte of JWT starts.
        let hostile = String(repeating: "eyJ=", count: 250_000)
        #expect(Redactor.maskJWTs(hostile, keepClaims: true).count == hostile.count)
        #expect(r.header("Cookie", "session=abc") == "<redacted:cookie>")
        #expect(r.header("Accept", "text/plain") == "text/plain")
        let form = String(decoding: r.body(Array("grant_type=authorization_code&code=abc&client_secret=\(Self.jwt)&client_id=k-123456789".utf8)), as: UTF8.self)
        #expect(form == "grant_type=authorization_code&code=<redacted:code>&client_secret=eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ1MSIsImVtYWlsIjoiYUBleGFtcGxlLmNvbSJ9.<redacted>&client_id=<secret:API_KEY>")
        let json = try? JSONParser.parse(r.body(Array("{\"access_token\": \"at-9\", \"scope\": \"email\"}".utf8)))
        #expect(json?["access_token"] == "<redacted:access_token>")
        #expect(json?["scope"] == "email")
        #expect(Redactor.normalized("a=%3Csecret%3AX%3E&b=\(Self.jwt)&c=<redacted:c>") == "a=<redacted>&b=<redacted>&c=<redacted>")
    }

    @Test("a recording of real invocations never holds a declared secret, a password, a token or an Authorization header")
    func secretsNeverRecorded() async throws {
        let dir = temp()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let secrets = dir + "-secrets.toml"
        #expect(FileManager.default.createFile(atPath: secrets, contents: Data("HEARTH_TEST_SECRET = \"s3cret-value\"\n".utf8), attributes: [.posixPermissions: 0o600]))
        defer { try? FileManager.default.removeItem(atPath: secrets) }
        let app = try await TestRuntime(units: ["SecretUnit", "EchoUnit"]) { $0.secretsFile = secrets }
        try await app.record(to: dir)
        #expect(try await app.call("readSecret")["matches"] == true)
        _ = try await app.call("echo", ["password": "hunter2-pw", "idToken": .string(Self.jwt), "note": "carries s3cret-value inside", "fcmToken": "device-77"], as: "eve")
        try await app.write(["notes/n1": ["apiKey": "ak-555555", "text": "s3cret-value again"]])
        await app.stopRecording()
        var all = ""
        for file in try Recording.files(at: dir) {
            let text = try String(contentsOfFile: file, encoding: .utf8)
            all += text
            for line in text.split(separator: "\n") {
                for piece in line.split(separator: "\"") { if let bytes = Base64.decode(String(piece)) { all += String(decoding: bytes, as: UTF8.self) } }
            }
        }
        for secret in ["s3cret-value", "hunter2-pw", "c2lnbmF0dXJlLXNpZ25hdHVyZS1zaWduYXR1cmU", "device-77", "ak-555555"] {
            #expect(!all.contains(secret), "\(secret) is in the recording")
        }
        #expect(all.contains("<secret:HEARTH_TEST_SECRET>"), "the placeholder stands in")
        // And the redacted recording still replays against the same code, given the secret's
        // value; without it, the function that reads it answers differently, and says so.
        let replay = try Replay(file: dir, units: ["SecretUnit", "EchoUnit"])
        let report = try await replay.handler(secrets: ["HEARTH_TEST_SECRET": "s3cret-value"])
        #expect(report.divergences.isEmpty, "\(report)")
        let without = try await replay.handler()
        #expect(without.divergences.map(\.function) == ["readSecret"], "\(without)")
    }

    /// Writes `lines` after a valid header as one file; returns its path.
    func file(_ lines: [String], header: String? = nil) -> String {
        let path = temp() + ".jsonl"
        let head = header ?? "{\"type\":\"header\",\"format\":1,\"hearth\":\"x\",\"boundary\":\(Boundary.version),\"process\":\"test\",\"pid\":1,\"startedAt\":\"2026-01-01T00:00:00Z\",\"units\":{},\"config\":{}}"
        #expect(FileManager.default.createFile(atPath: path, contents: Data(([head] + lines).joined(separator: "\n").utf8 + [0x0A])))
        return path
    }

    func error(_ path: String) -> String {
        do { _ = try Recording.read(path); return "" } catch { return "\(error)" }
    }

    @Test("bad recording files are refused with the file and line: not JSON, unknown kinds, bad base64, bad messages, other versions")
    func badFiles() {
        #expect(error(file(["{not json"])).hasSuffix(":2: not JSON: " + (error(file(["{not json"])).components(separatedBy: "not JSON: ").last ?? "")))
        #expect(error(file(["[1]"])).contains(":2: a line must be a JSON object"))
        #expect(error(file(["{\"type\":\"mystery\"}"])).contains(":2: unknown line type 'mystery'"))
        #expect(error(file(["{\"type\":\"change\",\"n\":1,\"seq\":1,\"path\":\"a/b\",\"time\":\"2026-01-01T00:00:00Z\",\"after\":\"%%%\"}"])).contains(":2: field 'after' must be base64"))
        #expect(error(file(["{\"type\":\"change\",\"n\":1,\"seq\":1,\"path\":\"a/b\",\"time\":\"2026-01-01T00:00:00Z\",\"after\":\"AAAA\"}"])).contains(":2: field 'after':"))
        #expect(error(file(["{\"type\":\"change\",\"n\":1,\"seq\":1,\"path\":\"a\",\"time\":\"2026-01-01T00:00:00Z\",\"after\":null}"])).contains(":2: field 'path':"))
        #expect(error(file(["{\"type\":\"input\",\"n\":1,\"at\":\"yesterday\",\"kind\":\"userDeleted\",\"uid\":\"u\"}"])).contains(":2: field 'at' must be an RFC 3339 time"))
        #expect(error(file(["{\"type\":\"input\",\"n\":1,\"at\":\"2026-01-01T00:00:00Z\",\"kind\":\"teleport\"}"])).contains("unknown input kind 'teleport'"))
        #expect(error(file([], header: "{\"type\":\"header\",\"format\":99}")).contains(":1: recording format 99 is not supported"))
        #expect(error(file([], header: "{\"type\":\"header\",\"format\":1,\"hearth\":\"x\",\"boundary\":1,\"process\":\"t\",\"pid\":1,\"startedAt\":\"2026-01-01T00:00:00Z\"}")).contains("recorded with boundary version 1"))
        #expect(error(file([], header: "{\"type\":\"input\",\"n\":1,\"at\":\"2026-01-01T00:00:00Z\",\"kind\":\"userDeleted\",\"uid\":\"u\"}")).contains(":1: a recording file starts with a header line"))
        #expect(error("/nonexistent/recording").contains("no such file or directory"))
        let empty = temp()
        try? FileManager.default.createDirectory(atPath: empty, withIntermediateDirectories: true)
        #expect(error(empty).contains("holds no recording"))
        // A huge number where an integer belongs, and an invocation id that is not hex.
        #expect(error(file(["{\"type\":\"change\",\"n\":1e400,\"seq\":1,\"path\":\"a/b\",\"time\":\"2026-01-01T00:00:00Z\",\"after\":null}"])).contains(":2:"))
        #expect(error(file(["{\"type\":\"invocation\",\"id\":\"zz\",\"calls\":[],\"outcome\":{}}"])).contains("field 'id' must be a hex invocation id"))
    }

    @Test("a last line without its newline (a file being written) is left out; everything before it is read")
    func unfinishedLine() throws {
        let path = file(["{\"type\":\"input\",\"n\":1,\"at\":\"2026-01-01T00:00:00Z\",\"kind\":\"userDeleted\",\"uid\":\"u1\"}"])
        let handle = try #require(FileHandle(forWritingAtPath: path))
        handle.seekToEndOfFile()
        handle.write(Data("{\"type\":\"input\",\"n\":2,\"at\":\"2026-01-0".utf8))
        try handle.close()
        let recording = try Recording.read(path)
        #expect(recording.inputs.count == 1)
    }

    @Test("files rotate by size, each with its header; read back in order while another task keeps writing")
    func rotationAndConcurrentReading() async throws {
        let dir = temp()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let app = try await TestRuntime(units: ["EchoUnit"])
        try await app.runtime.startRecording(Recorder.Options(directory: dir, maxFileBytes: 4096, process: "test"), changes: true)
        let writer = Task {
            for i in 0..<200 { _ = try await app.call("echo", ["i": .int(Int64(i)), "pad": .string(String(repeating: "x", count: 100))]) }
        }
        // Reading while the recorder writes never fails (whole lines only).
        for _ in 0..<20 {
            if let recording = try? Recording.read(dir) { #expect(recording.invocations.count <= 200) }
            await Task.yield()
        }
        try await writer.value
        await app.stopRecording()
        let files = try Recording.files(at: dir)
        #expect(files.count > 3, "\(files.count) files")
        let recording = try Recording.read(dir)
        #expect(recording.headers.count == files.count)
        #expect(recording.invocations.count == 200)
        #expect(recording.invocations.map { $0.invoke.event.summary["data"]?["i"]?.intValue ?? -1 } == (0..<200).map(Int64.init))
    }
}
