import HearthHTTP
import HearthModel
@testable import HearthRuntime
import HearthTOML
import Testing

@Suite("Outbound HTTP and the app's runtime.toml sections: bad inputs")
struct OutboundCheckTests {
    static var config: RuntimeConfig.Outbound {
        var o = RuntimeConfig.Outbound()
        o.allow = ["https://api.example.com/"]
        o.timeoutSeconds = 30
        return o
    }

    func fetch(method: String = "GET", url: String = "https://api.example.com/x", headers: [(String, String)] = [], timeout: Int64 = 1000) -> Boundary.HTTPFetch {
        Boundary.HTTPFetch(method: method, url: url, headers: headers, body: [], timeoutMillis: timeout)
    }

    func code(_ request: Boundary.HTTPFetch) -> FunctionsErrorCode? {
        do { _ = try OutboundServices.check(request, config: Self.config); return nil } catch let e as HTTPSError { return e.code } catch { return .unknown }
    }

    @Test("extreme timeouts clamp to 1 ms … the configured limit, never trap")
    func timeouts() throws {
        for (asked, expected) in [(Int64.min, Duration.milliseconds(1)), (-5, .milliseconds(1)), (0, .milliseconds(1)),
                                  (1500, .milliseconds(1500)), (Int64.max, .seconds(30))] {
            #expect(try OutboundServices.check(fetch(timeout: asked), config: Self.config).timeout == expected, "\(asked)")
        }
    }

    @Test("bad methods, URLs and headers are refused, naming what is wrong")
    func refusals() {
        #expect(code(fetch(method: "CONNECT")) == .invalidArgument)
        #expect(code(fetch(method: String(repeating: "G", count: 100_000))) == .invalidArgument)
        #expect(code(fetch(url: "file:///etc/passwd")) == .invalidArgument)
        #expect(code(fetch(url: "https://elsewhere.example.com/x")) == .permissionDenied)
        #expect(code(fetch(url: "https://api.example.com/../x")) == .permissionDenied)
        #expect(code(fetch(headers: [("X-A", "1\r\nInjected: yes")])) == .invalidArgument)
        #expect(code(fetch(headers: [("Bad:Name", "v")])) == .invalidArgument)
        #expect(code(fetch(headers: [("", "v")])) == .invalidArgument)
        #expect(code(fetch(method: "post", headers: [("Accept", "application/json")])) == nil, "methods compare case-insensitively")
        #expect(RuntimeConfig.Outbound.origin("not a url") == "(unparsable URL)")
    }

    @Test("[outbound], [params], [messaging], [workers], [record], [store] and [[units]] refuse wrong types and ranges, naming the key")
    func configSections() throws {
        for (toml, key) in [("[outbound]\nallow = [\"ftp://x\"]", "outbound.allow"), ("[outbound]\nallow = \"https://x.example\"", "outbound.allow"),
                            ("[outbound]\ntimeout_seconds = 1e9", "outbound.timeout_seconds"), ("[outbound]\nmax_response_bytes = -1", "outbound.max_response_bytes"),
                            ("[outbound]\nmax_response_bytes = 9223372036854775807", "outbound.max_response_bytes"),
                            ("[params]\nAPPLE_BASE_URL = 5", "params.APPLE_BASE_URL"),
                            ("[server]\nallowed_hosts = \"hearth\"", "server.allowed_hosts"), ("[server]\nallowed_hosts = [1]", "server.allowed_hosts"), ("[messaging]\nmode = \"fcm\"", "messaging.mode"),
                            ("[messaging]\nmode = \"carrier-pigeon\"", "messaging.mode"),
                            ("[auth]\npassword_hash_mem_cost = 20\npassword_hash_rounds = 32", "auth.password_hash_mem_cost"),
                            ("[workers]\nisolation = \"sideways\"", "workers.isolation"), ("[workers]\nisolation = 1", "workers.isolation"),
                            ("[workers]\ncount = 0", "workers.count"), ("[workers]\ncount = 9223372036854775807", "workers.count"),
                            ("[workers]\nmemory_limit_mb = -1", "workers.memory_limit_mb"), ("[workers]\nopen_files = 2", "workers.open_files"),
                            ("[workers]\nkill_grace_seconds = 1e300", "workers.kill_grace_seconds"), ("[workers]\nkill_grace_seconds = nan", "workers.kill_grace_seconds"),
                            ("[workers]\nrestart_backoff_max_seconds = 0", "workers.restart_backoff_max_seconds"),
                            ("[workers]\nstart_timeout_seconds = -inf", "workers.start_timeout_seconds"), ("[workers]\nexecutable = []", "workers.executable"),
                            ("[workers]\nfleet = 3", "workers.fleet"),
                            ("[[units]]\nname = \"A\"\nworkers = 65", "units[0].workers"), ("[[units]]\nname = \"A\"\nisolation = \"vm\"", "units[0].isolation"),
                            ("[[units]]\nname = \"A\"\nmemory_limit_mb = -9223372036854775808", "units[0].memory_limit_mb"),
                            ("[record]\ndirectory = 7", "record.directory"), ("[record]\nmax_file_mb = 0", "record.max_file_mb"),
                            ("[record]\nmax_file_mb = 9223372036854775807", "record.max_file_mb"), ("[record]\nmax_file_mb = 1.5", "record.max_file_mb"),
                            ("[record]\nrotate = true", "record.rotate"),
                            ("[store]\nbackground_checkpoints = \"yes\"", "store.background_checkpoints"),
                            ("[firestore]\nrules = 5", "firestore.rules"), ("[firestore]\nrulez = \"firestore.rules\"", "firestore.rulez")] {
            do {
                _ = try RuntimeConfig(table: try TOML.parse(toml), baseDirectory: "/tmp")
                Issue.record("accepted \(toml)")
            } catch let error as ConfigError {
                #expect(error.problems.contains { $0.hasPrefix(key) }, "\(toml): \(error.problems)")
            }
        }
        let fine = try RuntimeConfig(table: try TOML.parse("[params]\nA = \"1\"\n[outbound]\nallow = [\"https://a.example/\"]\n[record]\ndirectory = \"rec\"\nmax_file_mb = 1048576\n[store]\nbackground_checkpoints = false"), baseDirectory: "/tmp")
        #expect(fine.params == ["A": "1"])
        #expect(fine.recordOptions(process: "serve")?.directory == "/tmp/rec" && fine.recordOptions(process: "serve")?.maxFileBytes == 1 << 40)
        #expect(fine.storeOptions.backgroundCheckpoints == false)
        #expect(fine.messaging.resolvedMode == .log)
    }
}
