import Foundation
import HearthAuth
import HearthHTTP
import HearthModel
@_spi(Internals) import HearthRuntime
import Synchronization

/// Signatures and verifications per second, RS256 and ES256, and verification of a cached ID token.
func runAuthBenchmark() async throws {
    printHeader("Auth: JWT signing and verification (OpenSSL 3), one core", command: "Scripts/bench/auth")
    let message = Array("eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJhbGljZSIsImlhdCI6MTcwMDAwMDAwMH0".utf8)
    for (name, key) in [("RS256", try Key.generateRSA()), ("ES256", try Key.generateP256())] {
        let signature = try key.sign(message)
        let signs = try opsPerSecond { _ = try key.sign(message) }
        let verifies = opsPerSecond { precondition(key.verify(signature, for: message)) }
        let token = try JWT.sign(["sub": "alice", "n": 1], key: key, kid: "k")
        let fullVerifies = try opsPerSecond { try JWT.verifySignature(try JWT.decode(token), keys: ["k": key]) }
        print("\(name): sign \(fmt(signs, 0))/s   verify \(fmt(verifies, 0))/s   decode+verify a JWT \(fmt(fullVerifies, 0))/s")
    }
    var config = RuntimeConfig()
    config.dataDirectory = NSTemporaryDirectory() + "hearth-bench-auth-\(getpid())"
    config.project = "hearth-bench"
    defer { try? FileManager.default.removeItem(atPath: config.dataDirectory) }
    let runtime = try await Runtime.open(config: config, log: RuntimeLog(level: .error))
    let user = try await runtime.auth.createUser(NewUser(uid: "alice", email: "alice@example.com"))
    let idToken = try runtime.auth.mintIDToken(for: user, signInProvider: "custom")
    _ = try await runtime.auth.verifyIDToken(idToken)
    let cached = try await asyncOpsPerSecond { _ = try await runtime.auth.verifyIDToken(idToken, checkRevoked: false) }
    let cachedRevocation = try await asyncOpsPerSecond { _ = try await runtime.auth.verifyIDToken(idToken, checkRevoked: true) }
    // Uncached: the cache is emptied before each verification, so every one checks the signature.
    let uncached = try await asyncOpsPerSecond {
        runtime.auth.clearVerificationCache()
        _ = try await runtime.auth.verifyIDToken(idToken, checkRevoked: false)
    }
    print("ID token verification (RS256): first time \(fmt(uncached, 0))/s   cached \(fmt(cached, 0))/s   cached + revocation check (user read) \(fmt(cachedRevocation, 0))/s")
    runtime.close()
    try await runSignInBenchmark()
}

/// Client sign-ins: password sign-ins (bounded by scrypt's cost, a setting) and custom-token
/// sign-in + account lookup round trips over HTTP on 127.0.0.1, as the iOS SDK makes them.
func runSignInBenchmark() async throws {
    print("")
    print("Client sign-in over the runtime and over HTTP (2 cores; CPU is the whole process's per operation)")
    for (memCost, rounds) in [(14, 8), (12, 8)] {
        var config = RuntimeConfig()
        config.dataDirectory = NSTemporaryDirectory() + "hearth-bench-signin-\(getpid())-\(memCost)"
        config.project = "hearth-bench"
        config.auth.passwordHashMemCost = memCost
        config.auth.passwordHashRounds = rounds
        config.auth.failedSignInBurst = 1_000_000
        defer { try? FileManager.default.removeItem(atPath: config.dataDirectory) }
        let runtime = try await Runtime.open(config: config, log: RuntimeLog(level: .error))
        _ = try await runtime.auth.signUp(email: "bench@example.com", password: "bench-password")
        let label = "N=2^\(memCost) r=\(rounds)\(memCost == 14 ? " (Firebase's)" : "")"
        for workers in [1, 2] {
            let r = try await concurrentRate(workers: workers, seconds: 3) {
                _ = try await runtime.auth.signInWithPassword(email: "bench@example.com", password: "bench-password")
            }
            print("password sign-in, scrypt \(label), \(workers) at once: \(fmt(r.perSecond, 1))/s   CPU \(fmt(r.cpuMicros / 1000, 1)) ms each")
        }
        runtime.close()
    }

    var config = RuntimeConfig()
    config.dataDirectory = NSTemporaryDirectory() + "hearth-bench-http-signin-\(getpid())"
    config.project = "hearth-bench"
    config.server.port = 0
    defer { try? FileManager.default.removeItem(atPath: config.dataDirectory) }
    let runtime = try await Runtime.open(config: config, log: RuntimeLog(level: .error))
    let door = try FrontDoor(runtime: runtime, secrets: Secrets())
    try door.start()
    let client = HTTPClient()
    let base = "http://127.0.0.1:\(door.port)/www.googleapis.com/identitytoolkit/v3/relyingparty/"
    let counter = BenchCounter()
    @Sendable func roundTrip() async throws {
        let uid = "bench-\(counter.add() % 1000)"
        let custom = try runtime.auth.createCustomToken(uid: uid)
        let json = HTTPHeaders([("Content-Type", "application/json")])
        let signIn = try await client.send(HTTPClientRequest(method: "POST", url: base + "verifyCustomToken?key=k", headers: json,
                                                             body: JSONWriter.encode(["token": .string(custom), "returnSecureToken": true])))
        guard let idToken = try JSONParser.parse(signIn.body)["idToken"]?.stringValue else { throw HTTPSError(.internal, signIn.text) }
        let lookup = try await client.send(HTTPClientRequest(method: "POST", url: base + "getAccountInfo?key=k", headers: json,
                                                             body: JSONWriter.encode(["idToken": .string(idToken)])))
        guard lookup.status == 200 else { throw HTTPSError(.internal, lookup.text) }
    }
    for workers in [1, 8] {
        let r = try await concurrentRate(workers: workers, seconds: 5, roundTrip)
        print("custom-token sign-in + getAccountInfo over HTTP, \(workers) at once: \(fmt(r.perSecond, 0)) round trips/s   CPU \(fmt(r.cpuMicros, 0)) µs each")
    }
    await door.shutdown(grace: .seconds(1))
    runtime.close()
}

/// Runs `body` on `workers` tasks for `seconds` (after a warm-up of a few calls each); operations
/// per second and the process's CPU time (user + system) per operation, in microseconds.
func concurrentRate(workers: Int, seconds: Double, _ body: @escaping @Sendable () async throws -> Void) async throws -> (perSecond: Double, cpuMicros: Double) {
    for _ in 0..<3 { try await body() }
    let count = BenchCounter()
    let clock = ContinuousClock()
    let cpuStart = processCPUSeconds()
    let start = clock.now
    try await withThrowingTaskGroup(of: Void.self) { group in
        for _ in 0..<workers {
            group.addTask {
                while (clock.now - start).seconds < seconds {
                    try await body()
                    count.add()
                }
            }
        }
        try await group.waitForAll()
    }
    let elapsed = (clock.now - start).seconds
    let done = Double(count.value)
    return (done / elapsed, (processCPUSeconds() - cpuStart) / done * 1e6)
}

func processCPUSeconds() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6 + Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) / 1e6
}

final class BenchCounter: Sendable {
    private let count = Atomic<Int>(0)
    /// Adds one; returns the count before.
    @discardableResult func add() -> Int { count.wrappingAdd(1, ordering: .relaxed).oldValue }
    var value: Int { count.load(ordering: .relaxed) }
}
