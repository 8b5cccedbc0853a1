import Foundation
import HearthHTTP
import HearthModel
import HearthTesting
import Testing

/// `hearth export` and `hearth import` as a user runs them: the real binary, real files.
@Suite("hearth export and hearth import", .serialized)
struct ExportCommandTests {
    let client = HTTPClient()

    func hearth(_ args: [String], in dir: TempDir) async throws -> (status: Int32, out: String, err: String) {
        try await hearthProcess(args, in: dir)
    }

    func configs(_ dir: TempDir, units: String = "[]") {
        for (file, data) in [("runtime.toml", "data"), ("other.toml", "data2")] {
            _ = dir.write(file, """
                project = "hearth-export"
                data_dir = "\(data)"
                units_dir = "\(buildDirectory)"
                units = \(units)
                [server]
                port = 0
                [auth]
                password_hash_mem_cost = 10
                """)
        }
    }

    @Test("export a data directory and import it into another: the same documents and users; importing again is refused, naming what is there")
    func exportThenImport() async throws {
        let dir = TempDir()
        configs(dir)
        let data = #"{"n": 1, "d": 1.0, "z": -0.0, "nan": {"$double": "NaN"}, "t": {"$timestamp": "2024-01-02T03:04:05.123456Z"}, "b": {"$bytes": "AAEC/w=="}, "r": {"$reference": "members/bob"}, "g": {"$geopoint": {"latitude": 1.5, "longitude": -2}}, "m": {"list": [1, "two", null]}}"#
        #expect(try await hearth(["docs", "set", "members/alice", "--data", data], in: dir).status == 0)
        #expect(try await hearth(["docs", "set", "members/alice/items/a", "--data", #"{"n": 2}"#], in: dir).status == 0)
        #expect(try await hearth(["users", "create", "--uid", "bob", "--email", "bob@example.com"], in: dir).status == 0)

        let exported = try await hearth(["export", "out"], in: dir)
        #expect(exported.status == 0, "\(exported.err)")
        #expect(try JSONParser.parse(exported.out)["counts"] == ["documents": 2, "users": 1, "deliveries": 0, "schedules": 0, "taskIds": 0])
        #expect(exported.err.contains("exported 2 documents, 1 users, 0 deliveries"), "\(exported.err)")
        for file in ["manifest.json", "documents.jsonl", "users.jsonl", "deliveries.jsonl", "schedules.jsonl", "taskIds.jsonl"] {
            #expect(FileManager.default.fileExists(atPath: dir.path + "/out/" + file), "\(file)")
        }

        let imported = try await hearth(["import", "out", "--config", "other.toml"], in: dir)
        #expect(imported.status == 0, "\(imported.err)")
        #expect(try JSONParser.parse(imported.out)["counts"]?["documents"] == 2)
        for path in ["members/alice", "members/alice/items/a"] {
            let a = try await hearth(["docs", "get", path], in: dir), b = try await hearth(["docs", "get", path, "--config", "other.toml"], in: dir)
            #expect(a.status == 0 && a.out == b.out, "\(path): \(a.out) vs \(b.out)")
        }
        let a = try await hearth(["users", "get", "bob"], in: dir), b = try await hearth(["users", "get", "bob", "--config", "other.toml"], in: dir)
        #expect(a.status == 0 && a.out == b.out)

        let again = try await hearth(["import", "out", "--config", "other.toml"], in: dir)
        #expect(again.status == 1)
        #expect(again.err.contains("error: the store already holds 2 documents (first: members/alice); import into an empty store"), "\(again.err)")
        let intoNonEmpty = try await hearth(["export", "out"], in: dir)
        #expect(intoNonEmpty.status == 1 && intoNonEmpty.err.contains("out is not empty"), "\(intoNonEmpty.err)")
    }

    @Test("bad arguments and paths give a clear error and a non-zero exit", arguments: [
        (["export"], Int32(2), "missing the directory to export to"),
        (["import"], 2, "missing the export directory to import"),
        (["export", "a", "b"], 2, "unexpected argument 'b'"),
        (["import", "--hash-key", "eA==", "dir"], 2, "--hash-key goes with --firebase-auth"),
        (["import", "--firebase-auth", "p", "--rounds", "8"], 2, "the hash parameters go together: missing --hash-key"),
        (["import", "--firebase-auth", "p", "dir"], 2, "unexpected argument 'dir'"),
        (["import", "--firebase-auth", "p", "--hash-key", "***", "--salt-separator", "Bw==", "--rounds", "8", "--mem-cost", "14"], 2, "--hash-key must be base64"),
        (["import", "--firebase-auth", "p", "--hash-key", "eA==", "--salt-separator", "Bw==", "--rounds", "eight", "--mem-cost", "14"], 2, "'--rounds' needs an integer"),
        (["import", "nowhere"], 1, "error: nowhere does not exist"),
        (["import", "file.txt"], 1, "error: file.txt is not a directory"),
        (["import", "empty"], 1, "error: empty holds no manifest.json: it is not a finished Hearth export"),
        (["export", "file.txt"], 1, "error: file.txt exists and is not a directory"),
        (["import", "--firebase-auth", "nowhere"], 1, "error: nowhere does not exist"),
        (["import", "--firebase-auth", "empty"], 1, "holds no accounts.json"),
        (["import", "--firebase-auth", "file.txt"], 1, "error: file.txt:1: not valid JSON at column 1"),
    ])
    func badArguments(args: [String], status: Int32, message: String) async throws {
        let dir = TempDir()
        configs(dir)
        _ = dir.write("file.txt", "not json")
        try FileManager.default.createDirectory(atPath: dir.path + "/empty", withIntermediateDirectories: true)
        let r = try await hearth(args, in: dir)
        #expect(r.status == status, "\(args): \(r.err)")
        #expect(r.err.contains(message), "\(args): \(r.err)")
    }

    @Test("a file of an export that cannot be read, or a line that is wrong, is refused naming the file and line, and nothing is imported")
    func unreadable() async throws {
        let dir = TempDir()
        configs(dir)
        for i in 0..<3 { #expect(try await hearth(["docs", "set", "c/d\(i)", "--data", #"{"i": \#(i)}"#], in: dir).status == 0) }
        #expect(try await hearth(["export", "out"], in: dir).status == 0)
        let documents = dir.path + "/out/documents.jsonl"
        var lines = try String(contentsOfFile: documents, encoding: .utf8).split(separator: "\n").map(String.init)
        lines[2] = lines[2].replacingOccurrences(of: #""path":"c/d2""#, with: #""path":"c""#)
        try (lines.joined(separator: "\n") + "\n").write(toFile: documents, atomically: true, encoding: .utf8)
        let bad = try await hearth(["import", "out", "--config", "other.toml"], in: dir)
        #expect(bad.status == 1)
        #expect(bad.err.contains("error: documents.jsonl:3: field 'path': "), "\(bad.err)")
        try FileManager.default.removeItem(atPath: documents)
        try FileManager.default.createDirectory(atPath: documents, withIntermediateDirectories: false)
        let unreadable = try await hearth(["import", "out", "--config", "other.toml"], in: dir)
        #expect(unreadable.status == 1)
        #expect(unreadable.err.contains("error: documents.jsonl:1: cannot read: Is a directory"), "\(unreadable.err)")
        let query = try await hearth(["docs", "query", "c", "--count", "--config", "other.toml"], in: dir)
        #expect(try JSONParser.parse(query.out) == ["count": 0], "nothing was imported")
    }

    @Test("--firebase-auth imports the Auth emulator's export; its users sign in with their passwords through hearth serve's auth endpoint")
    func firebaseAuth() async throws {
        let dir = TempDir()
        configs(dir)
        let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/emulator-export").path
        try FileManager.default.copyItem(atPath: fixture, toPath: dir.path + "/emulator-export")
        let imported = try await hearth(["import", "--firebase-auth", "emulator-export"], in: dir)
        #expect(imported.status == 0, "\(imported.err)")
        #expect(try JSONParser.parse(imported.out)["counts"]?["users"] == 3)
        let again = try await hearth(["import", "--firebase-auth", "emulator-export/auth_export/accounts.json"], in: dir)
        #expect(again.status == 1)
        #expect(again.err.contains(#"error: accounts.json: users[0] (localId "3QhWs0yyc8ZhZtTbUcpVe2DvOoTK"): field 'uid': the uid '3QhWs0yyc8ZhZtTbUcpVe2DvOoTK' is taken"#), "\(again.err)")
        let grace = try JSONParser.parse(try await hearth(["users", "get", "--email", "grace@example.com"], in: dir).out)
        #expect(grace["providerData"]?.arrayValue?.first?["providerId"] == "google.com")

        let server = try ChildProcess(["serve"], directory: dir.path)
        let base = "http://127.0.0.1:\(try await server.servingPort(seconds: 120))"
        func signIn(_ email: String, _ password: String) async throws -> (Int, Value) {
            let body: Value = ["email": .string(email), "password": .string(password), "returnSecureToken": true]
            let r = try await client.send(HTTPClientRequest(method: "POST", url: base + "/identitytoolkit.googleapis.com/v1/accounts:signInWithPassword?key=k",
                                                            headers: HTTPHeaders([("Content-Type", "application/json")]), body: JSONWriter.encode(body), timeout: .seconds(60)))
            return (r.status, try JSONParser.parse(r.body))
        }
        let (status, ok) = try await signIn("ada@example.com", "ada-s3cret!")
        #expect(status == 200, "\(ok)")
        #expect(ok["localId"] == "3QhWs0yyc8ZhZtTbUcpVe2DvOoTK")
        let token = try #require(ok["idToken"]?.stringValue)
        let claims = try JSONParser.parse(Array(try #require(Base64.decodeURL(token.split(separator: ".")[1]))))
        #expect(claims["role"] == "admin", "custom claims kept")
        let (wrong, refused) = try await signIn("ada@example.com", "ada-s3cret?")
        #expect(wrong == 400 && refused["error"]?["message"] == "INVALID_LOGIN_CREDENTIALS", "\(refused)")

        // Exported while the server runs on the same data directory.
        let exported = try await hearth(["export", "snapshot"], in: dir)
        #expect(exported.status == 0, "\(exported.err)")
        #expect(try JSONParser.parse(exported.out)["counts"]?["users"] == 3)
        server.signal(SIGTERM)
        #expect(try await server.waitForExit(seconds: 60) == 0)
        let moved = try await hearth(["import", "snapshot", "--config", "other.toml"], in: dir)
        #expect(moved.status == 0, "\(moved.err)")
    }
}
