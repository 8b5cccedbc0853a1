import Foundation
import HearthHTTP
import HearthModel
import HearthTesting
import Testing

/// Extreme numbers in every numeric field Hearth reads from outside — the callable protocol's
/// integer wrappers, token time claims, task options, admin query parameters and ids, Identity
/// Toolkit fields — sent to a real `hearth serve`: each is answered (4xx where the value is out of
/// range, never 5xx), and the server is alive afterwards. A Swift trap would end the process.
@Suite("Extreme numbers never take the server down")
struct ExtremeNumberTests {
    let client = HTTPClient()
    static let adminToken = "fuzz-admin-token"

    /// Numbers as JSON text: the ends of Int64 and UInt64 and just past them, doubles at and past
    /// their range, subnormals, negative zero, huge literals, and the same as strings.
    static let literals = [
        "9223372036854775807", "9223372036854775808", "-9223372036854775808", "-9223372036854775809",
        "18446744073709551615", "18446744073709551616", "1e308", "1e309", "-1e309", "1e-400", "4.9e-324", "-0", "-1",
        "2147483648", "123456789012345678901234567890.5", "\"9223372036854775808\"", "\"-9223372036854775809\"",
        "\"NaN\"", "\"Infinity\"", "\"1e400\"", "1E+400000",
    ]

    /// A JWT with `alg: none` whose claims are the JSON text given (numbers kept exactly as written).
    static func unsigned(claimsJSON: String) -> String {
        func b64(_ s: String) -> String {
            Data(s.utf8).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
                .replacingOccurrences(of: "=", with: "")
        }
        return b64(#"{"alg":"none","typ":"JWT"}"#) + "." + b64(claimsJSON) + "."
    }

    struct Probe: Sendable {
        var method: String
        var path: String
        var body: String?
        var headers: [(String, String)] = []
        /// Whether a 2xx is acceptable for this literal (otherwise a 4xx is required).
        var mayAccept: Bool
    }

    static func probes(_ n: String) -> [Probe] {
        let admin = [("Authorization", "Bearer \(adminToken)")]
        let owner = [("Authorization", "Bearer owner")]
        let now = Int64(Date().timeIntervalSince1970)
        let smallNonNegative = ["-0", "1e-400", "4.9e-324"].contains(n)
        let encodedPath = n.replacingOccurrences(of: "\"", with: "%22")
        var out: [Probe] = [
            Probe(method: "POST", path: "/echo", body: #"{"data":{"@type":"type.googleapis.com/google.protobuf.Int64Value","value":\#(n)}}"#, mayAccept: true),
            Probe(method: "POST", path: "/echo", body: #"{"data":{"@type":"type.googleapis.com/google.protobuf.UInt64Value","value":\#(n)}}"#, mayAccept: true),
            Probe(method: "POST", path: "/echo", body: #"{"data":\#(n)}"#, mayAccept: true),
            Probe(method: "POST", path: "/__/admin/tasks", body: #"{"queue":"work","data":{"label":"x"},"scheduleDelaySeconds":\#(n)}"#,
                  headers: admin, mayAccept: smallNonNegative),
            Probe(method: "POST", path: "/__/admin/tasks", body: #"{"queue":"work","data":{"label":"x"},"dispatchDeadlineSeconds":\#(n)}"#,
                  headers: admin, mayAccept: false),
            Probe(method: "POST", path: "/__/admin/tasks", body: #"{"queue":"work","data":{"label":"x"},"scheduleTime":\#(n)}"#,
                  headers: admin, mayAccept: false),
            Probe(method: "GET", path: "/__/admin/deliveries?limit=\(encodedPath)", headers: admin, mayAccept: false),
            Probe(method: "POST", path: "/__/admin/deliveries/\(encodedPath):retry", headers: admin, mayAccept: false),
            Probe(method: "DELETE", path: "/__/admin/deliveries/\(encodedPath)", headers: admin, mayAccept: false),
            Probe(method: "GET", path: "/__/admin/users?maxResults=\(encodedPath)", headers: admin, mayAccept: false),
            Probe(method: "POST", path: "/__/admin/users", body: #"{"uid":"fuzz","emailVerified":\#(n)}"#, headers: admin, mayAccept: false),
            Probe(method: "POST", path: "/__/admin/functions/echo:invoke", body: #"{"data":\#(n)}"#, headers: admin, mayAccept: true),
            Probe(method: "POST", path: "/identitytoolkit.googleapis.com/v1/projects/demo-fuzz/accounts:update",
                  body: #"{"localId":"someone","validSince":\#(n)}"#, headers: owner, mayAccept: false),
            Probe(method: "POST", path: "/identitytoolkit.googleapis.com/v1/projects/demo-fuzz/accounts", body: #"{"localId":\#(n)}"#,
                  headers: owner, mayAccept: n.hasPrefix("\"")),
            Probe(method: "POST", path: "/identitytoolkit.googleapis.com/v1/projects/demo-fuzz/accounts:query", body: #"{"maxResults":\#(n)}"#,
                  headers: owner, mayAccept: true),
            Probe(method: "GET", path: "/identitytoolkit.googleapis.com/v1/projects/demo-fuzz/accounts:batchGet?maxResults=\(encodedPath)",
                  headers: owner, mayAccept: true),
            Probe(method: "POST", path: "/securetoken.googleapis.com/v1/token", body: #"{"grant_type":"refresh_token","refresh_token":\#(n)}"#,
                  mayAccept: false),
            Probe(method: "POST", path: "/identitytoolkit.googleapis.com/v1/accounts:signInWithCustomToken",
                  body: #"{"token":"\#(unsigned(claimsJSON: #"{"aud":"https://identitytoolkit.googleapis.com/google.identity.identitytoolkit.v1.IdentityToolkit","uid":"fuzz","iat":\#(n),"exp":\#(now + 60)}"#))"}"#,
                  mayAccept: false),
        ]
        for claim in ["exp", "iat", "auth_time"] {
            var claims = ["\"iss\":\"https://securetoken.google.com/demo-fuzz\"", "\"aud\":\"demo-fuzz\"", "\"sub\":\"fuzz\"",
                          "\"iat\":\(now)", "\"exp\":\(now + 600)", "\"auth_time\":\(now)"]
            claims.removeAll { $0.hasPrefix("\"\(claim)\"") }
            claims.append("\"\(claim)\":\(n)")
            let token = unsigned(claimsJSON: "{" + claims.joined(separator: ",") + "}")
            // Valid when it is a whole number of seconds from 1970 to 9999, in the past (iat,
            // auth_time) or the future (exp).
            let seconds = n == "-0" ? 0 : Int64(n)
            let valid = seconds.map { (0...253_402_300_799).contains($0) && (claim == "exp" ? $0 > now : $0 <= now + 300) } ?? false
            out.append(Probe(method: "POST", path: "/whoami", body: #"{"data":null}"#, headers: [("Authorization", "Bearer \(token)")],
                             mayAccept: valid))
        }
        return out
    }

    @Test("every probe is answered without a 5xx, out-of-range values with a 4xx, and the server stays up")
    func extremes() async throws {
        let dir = TempDir()
        _ = dir.write("runtime.toml", """
            project = "demo-fuzz"
            units_dir = "\(buildDirectory)"
            units = ["EchoUnit", "DeliveryUnit"]
            [server]
            port = 0
            [log]
            level = "notice"
            """)
        let server = try ChildProcess(["serve"], directory: dir.path, environment: ["HEARTH_ADMIN_TOKEN": Self.adminToken])
        let base = "http://127.0.0.1:\(try await server.servingPort(seconds: 120))"
        var failures: [String] = []
        var sent = 0
        for literal in Self.literals {
            for probe in Self.probes(literal) {
                var headers = probe.headers
                if probe.body != nil { headers.append(("Content-Type", "application/json")) }
                let request = HTTPClientRequest(method: probe.method, url: base + probe.path, headers: HTTPHeaders(headers),
                                                body: probe.body.map { Array($0.utf8) } ?? [], timeout: .seconds(60))
                sent += 1
                let response: HTTPClientResponse
                do { response = try await client.send(request) } catch {
                    failures.append("\(probe.method) \(probe.path) with \(literal): no answer (\(error))")
                    guard server.process.isRunning else { break }
                    continue
                }
                if response.status >= 500 || (!probe.mayAccept && !(400..<500).contains(response.status)) {
                    failures.append("\(probe.method) \(probe.path) with \(literal): \(response.status) \(response.text.prefix(200))")
                }
            }
            guard server.process.isRunning else { break }
        }
        #expect(server.process.isRunning, "the server died: \(server.stderrText.suffix(2000))")
        #expect(failures.isEmpty, "\(failures.count) of \(sent):\n\(failures.prefix(20).joined(separator: "\n"))")
        let health = try await client.send(HTTPClientRequest(url: base + "/healthz", timeout: .seconds(30)))
        #expect(health.status == 200)
        server.signal(SIGTERM)
        #expect(try await server.waitForExit(seconds: 60) == 0)
    }
}
