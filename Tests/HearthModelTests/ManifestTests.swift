import Foundation
import HearthModel
import Testing

func json(_ value: some Encodable) throws -> String {
    JSONWriter.string(try ValueEncoder().encode(value), options: JSONWriteOptions(sortKeys: true))
}

struct TriggerShape: Sendable, CustomTestStringConvertible {
    var trigger: Trigger
    var json: String
    var testDescription: String { trigger.summary }
}

struct OptionsCase: Sendable, CustomTestStringConvertible {
    var label: String
    var trigger: Trigger
    var options: FunctionOptions
    var problems: [String]
    var testDescription: String { label }
}

@Suite("Triggers")
struct TriggerTests {
    @Test("a trigger encodes as an object with exactly one key naming its kind", arguments: [
        TriggerShape(trigger: .callable, json: #"{"callable":{}}"#),
        TriggerShape(trigger: .request, json: #"{"request":{}}"#),
        TriggerShape(trigger: .task, json: #"{"task":{}}"#),
        TriggerShape(trigger: .schedule(schedule: "every 5 minutes", timeZone: "Europe/Paris"), json: #"{"schedule":{"schedule":"every 5 minutes","timeZone":"Europe/Paris"}}"#),
        TriggerShape(trigger: .document(.created, pattern: "members/{uid}"), json: #"{"document":{"event":"created","pattern":"members/{uid}"}}"#),
        TriggerShape(trigger: .document(.written, pattern: "a/{b=**}"), json: #"{"document":{"event":"written","pattern":"a/{b=**}"}}"#),
        TriggerShape(trigger: .user(.deleted), json: #"{"user":{"event":"deleted"}}"#),
    ])
    func encoding(_ c: TriggerShape) throws {
        #expect(try json(c.trigger) == c.json)
        // The same shape through Foundation's coders, and back.
        let data = try JSONEncoder().encode(c.trigger)
        #expect(try JSONParser.parse(Array(data)) == JSONParser.parse(c.json))
        #expect(try JSONDecoder().decode(Trigger.self, from: data) == c.trigger)
        #expect(try ValueDecoder().decode(Trigger.self, from: JSONParser.parse(c.json)) == c.trigger)
    }

    @Test("decoding refuses zero or several kinds, naming what it found")
    func decodeRejects() throws {
        func message(_ text: String) -> String? {
            do {
                _ = try ValueDecoder().decode(Trigger.self, from: try JSONParser.parse(text))
                return nil
            } catch {
                return describeDecodingError(error)
            }
        }
        #expect(message("{}") == "value: a trigger has exactly one of callable, request, schedule, task, document, user; found none")
        #expect(message(#"{"callable":{},"task":{}}"#) == "value: a trigger has exactly one of callable, request, schedule, task, document, user; found callable, task")
        #expect(message(#"{"other":{}}"#) == "value: a trigger has exactly one of callable, request, schedule, task, document, user; found none")
        #expect(message(#"{"document":{"event":"renamed","pattern":"a/b"}}"#) != nil)
        #expect(message(#"{"schedule":{}}"#) == "schedule.schedule: missing required field")
        #expect(message("[]") == "value: expected map, found array")
    }

    @Test("a schedule without a time zone defaults to UTC")
    func scheduleDefaultZone() throws {
        let trigger = try ValueDecoder().decode(Trigger.self, from: JSONParser.parse(#"{"schedule":{"schedule":"0 9 * * *"}}"#))
        #expect(trigger == .schedule(schedule: "0 9 * * *", timeZone: "UTC"))
    }

    @Test("kind names, summaries and event classification")
    func names() {
        #expect(Trigger.callable.kindName == "callable")
        #expect(Trigger.document(.updated, pattern: "a/{b}").kindName == "document.updated")
        #expect(Trigger.user(.created).kindName == "user.created")
        #expect(Trigger.schedule(schedule: "every day 09:00", timeZone: "UTC").summary == #"schedule "every day 09:00" (UTC)"#)
        #expect(Trigger.document(.created, pattern: "members/{uid}").summary == "document.created members/{uid}")
        #expect(Trigger.task.summary == "task")
        #expect(!Trigger.callable.isEvent)
        #expect(!Trigger.request.isEvent)
        #expect(Trigger.task.isEvent)
        #expect(Trigger.schedule(schedule: "x", timeZone: "UTC").isEvent)
        #expect(Trigger.user(.deleted).isEvent)
    }

    @Test("document event kinds accept the matching changes; written accepts all", arguments: DocumentEventKind.allCases)
    func accepts(_ kind: DocumentEventKind) {
        for change in [ChangeKind.created, .updated, .deleted] {
            let expected = kind == .written || kind.rawValue == change.rawValue
            #expect(kind.accepts(change) == expected, "\(kind) accepts \(change)")
        }
    }
}

@Suite("Function options and manifests")
struct ManifestTests {
    @Test("options that do not fit the trigger or are out of range are reported", arguments: [
        OptionsCase(label: "valid callable", trigger: .callable, options: FunctionOptions(timeout: .seconds(60), cors: .allowAll, enforceAppCheck: true, heartbeat: .seconds(30), secrets: ["API_KEY"]), problems: []),
        OptionsCase(label: "valid task", trigger: .task, options: FunctionOptions(timeout: .seconds(3600), retry: .taskQueueDefault, rateLimits: .taskQueueDefault, dispatchDeadline: .seconds(1800)), problems: []),
        OptionsCase(label: "timeout zero", trigger: .request, options: FunctionOptions(timeout: .seconds(0)), problems: ["timeout must be in (0, 3600] seconds (got 0.0 s)"]),
        OptionsCase(label: "timeout too long", trigger: .callable, options: FunctionOptions(timeout: .seconds(3600.5)), problems: ["timeout must be in (0, 3600] seconds (got 3600.5 s)"]),
        OptionsCase(label: "timeout negative", trigger: .task, options: FunctionOptions(timeout: .seconds(-1)), problems: ["timeout must be in (0, 3600] seconds (got -1.0 s)"]),
        OptionsCase(label: "cors and app check on a task", trigger: .task, options: FunctionOptions(cors: .allowAll, enforceAppCheck: true),
                    problems: ["cors applies only to callable and request functions", "enforceAppCheck applies only to callable and request functions"]),
        OptionsCase(label: "heartbeat on a request", trigger: .request, options: FunctionOptions(heartbeat: .seconds(10)), problems: ["heartbeat applies only to callable functions"]),
        OptionsCase(label: "heartbeat zero", trigger: .callable, options: FunctionOptions(heartbeat: .seconds(0)), problems: ["heartbeat must be in (0, 3600] seconds (got 0.0 s)"]),
        OptionsCase(label: "retry and rate limits on a callable", trigger: .callable, options: FunctionOptions(retry: .taskQueueDefault, rateLimits: .taskQueueDefault),
                    problems: ["retry applies only to event functions (schedules, tasks, document and user triggers)", "rateLimits applies only to event functions"]),
        OptionsCase(label: "dispatch deadline on a document trigger", trigger: .document(.created, pattern: "a/{b}"), options: FunctionOptions(dispatchDeadline: .seconds(60)),
                    problems: ["dispatchDeadline applies only to task queues"]),
        OptionsCase(label: "dispatch deadline too short", trigger: .task, options: FunctionOptions(dispatchDeadline: .seconds(14.9)), problems: ["dispatchDeadline must be in [15, 1800] seconds (got 14.9 s)"]),
        OptionsCase(label: "dispatch deadline too long", trigger: .task, options: FunctionOptions(dispatchDeadline: .seconds(1801)), problems: ["dispatchDeadline must be in [15, 1800] seconds (got 1801.0 s)"]),
        OptionsCase(label: "bad retry policy", trigger: .task, options: FunctionOptions(retry: RetryPolicy(maxAttempts: 0, minBackoff: .seconds(10), maxBackoff: .seconds(1), maxDoublings: -1, maxRetryDuration: .seconds(-1), jitter: 2)),
                    problems: ["retry: maxAttempts must be at least 1, or -1 for unlimited (got 0)", "retry: maxBackoff must be at least minBackoff", "retry: maxDoublings must not be negative",
                               "retry: maxRetryDuration must not be negative", "retry: jitter must be between 0 and 1"]),
        OptionsCase(label: "negative min backoff", trigger: .user(.created), options: FunctionOptions(retry: RetryPolicy(maxAttempts: 2, minBackoff: .seconds(-1), maxBackoff: .seconds(1), maxDoublings: 0)),
                    problems: ["retry: minBackoff must not be negative"]),
        OptionsCase(label: "bad rate limits", trigger: .schedule(schedule: "x", timeZone: "UTC"), options: FunctionOptions(rateLimits: RateLimits(maxDispatchesPerSecond: 0, maxConcurrentDispatches: 0)),
                    problems: ["rateLimits: maxDispatchesPerSecond must be in (0, 1000000] (got 0.0)", "rateLimits: maxConcurrentDispatches must be between 1 and 1000000 (got 0)"]),
        OptionsCase(label: "infinite rate", trigger: .task, options: FunctionOptions(rateLimits: RateLimits(maxDispatchesPerSecond: .infinity)),
                    problems: ["rateLimits: maxDispatchesPerSecond must be in (0, 1000000] (got inf)"]),
        OptionsCase(label: "rate past Int", trigger: .task, options: FunctionOptions(rateLimits: RateLimits(maxDispatchesPerSecond: 1e20, maxConcurrentDispatches: Int.max)),
                    problems: ["rateLimits: maxDispatchesPerSecond must be in (0, 1000000] (got 1e+20)", "rateLimits: maxConcurrentDispatches must be between 1 and 1000000 (got 9223372036854775807)"]),
        OptionsCase(label: "empty origin list", trigger: .request, options: FunctionOptions(cors: .origins([])), problems: ["cors: an empty origin list; use false to disable CORS"]),
        OptionsCase(label: "bad secret names", trigger: .callable, options: FunctionOptions(secrets: ["OK_1", "1BAD", "with-dash", ""]),
                    problems: ["secret name '1BAD' must be letters, digits and '_', starting with a letter",
                               "secret name 'with-dash' must be letters, digits and '_', starting with a letter",
                               "secret name '' must be letters, digits and '_', starting with a letter"]),
    ])
    func optionProblems(_ c: OptionsCase) {
        #expect(c.options.problems(for: c.trigger) == c.problems)
    }

    @Test("durations from JSON are seconds; ones out of any range saturate and are refused, never trap", arguments: [
        (#"{"timeoutSeconds": 1e19}"#, "timeout must be in (0, 3600] seconds"),
        (#"{"timeoutSeconds": -1e300}"#, "timeout must be in (0, 3600] seconds"),
        (#"{"heartbeatSeconds": 1e300}"#, "heartbeat must be in (0, 3600] seconds"),
        (#"{"dispatchDeadlineSeconds": 9.5}"#, "dispatchDeadline must be in [15, 1800] seconds"),
    ])
    func durationsFromJSON(_ json: String, _ problem: String) throws {
        let options = try JSONDecoder().decode(FunctionOptions.self, from: Data(json.utf8))
        let problems = options.problems(for: .callable) + options.problems(for: .task)
        #expect(problems.contains { $0.hasPrefix(problem) }, "\(problems)")
    }

    @Test("options are seconds in JSON, as Firebase's manifest has them")
    func optionsJSON() throws {
        let options = FunctionOptions(timeout: .milliseconds(1500), heartbeat: .seconds(30), dispatchDeadline: .seconds(60))
        let json = try JSONParser.parse(Array(try JSONEncoder().encode(options)))
        #expect(json["timeoutSeconds"]?.doubleValue == 1.5)
        #expect(json["heartbeatSeconds"]?.doubleValue == 30)
        #expect(json["dispatchDeadlineSeconds"]?.doubleValue == 60)
        #expect(try JSONDecoder().decode(FunctionOptions.self, from: try JSONEncoder().encode(options)) == options)
    }

    @Test("function names: 1 to 63 letters, digits, '_' or '-', starting with a letter", arguments: [
        ("a", true), ("sendPushNotification", true), ("a-b_c9", true), (String(repeating: "a", count: 63), true),
        ("", false), (String(repeating: "a", count: 64), false), ("9lives", false), ("_x", false), ("-x", false),
        ("has space", false), ("dot.name", false), ("é", false), ("a/b", false), ("Z", true),
    ])
    func functionNames(_ name: String, _ valid: Bool) {
        #expect(FunctionManifest.isValidFunctionName(name) == valid)
    }

    @Test("secret names: letters, digits and '_', starting with a letter, up to 128")
    func secretNames() {
        #expect(FunctionManifest.isValidSecretName("API_KEY"))
        #expect(FunctionManifest.isValidSecretName(String(repeating: "S", count: 128)))
        #expect(!FunctionManifest.isValidSecretName(String(repeating: "S", count: 129)))
        #expect(!FunctionManifest.isValidSecretName("_KEY"))
        #expect(!FunctionManifest.isValidSecretName("KEY-1"))
    }

    @Test("a manifest reports every problem, each naming its function")
    func manifestProblems() {
        let manifest = FunctionManifest(unit: "Items", abiVersion: 1, functions: [
            FunctionSpec(name: "ok", trigger: .callable),
            FunctionSpec(name: "9bad", trigger: .request),
            FunctionSpec(name: "ok", trigger: .task),
            FunctionSpec(name: "onMember", trigger: .document(.created, pattern: "members")),
            FunctionSpec(name: "onItem", trigger: .document(.written, pattern: "members/{uid}/items/{uid}")),
            FunctionSpec(name: "nightly", trigger: .schedule(schedule: "bogus", timeZone: "Mars/Base")),
            FunctionSpec(name: "slow", trigger: .callable, options: FunctionOptions(timeout: .seconds(7200))),
        ])
        let problems = manifest.problems { schedule, zone in schedule == "bogus" ? "invalid schedule '\(schedule)' in \(zone)" : nil }
        #expect(problems == [
            "function name '9bad' must be 1-63 letters, digits, '_' or '-', starting with a letter",
            "function 'ok' is declared twice",
            "function 'onMember': invalid path pattern 'members': it names a collection; a trigger pattern must name documents (an even number of segments)",
            "function 'onItem': invalid path pattern 'members/{uid}/items/{uid}': wildcard 'uid' appears twice",
            "function 'nightly': invalid schedule 'bogus' in Mars/Base",
            "function 'slow': timeout must be in (0, 3600] seconds (got 7200.0 s)",
        ])
    }

    @Test("a valid manifest has no problems and round-trips through JSON")
    func validManifest() throws {
        let manifest = FunctionManifest(unit: "Members", abiVersion: 1, functions: [
            FunctionSpec(name: "createMember", trigger: .callable, options: FunctionOptions(timeout: .seconds(30), cors: .origins(["https://*.example.com"]), enforceAppCheck: true)),
            FunctionSpec(name: "onMemberCreated", trigger: .document(.created, pattern: "members/{uid}"), options: FunctionOptions(retry: .eventRetryDefault)),
            FunctionSpec(name: "sendPush", trigger: .task, options: FunctionOptions(retry: .exponential(maxAttempts: 5), rateLimits: RateLimits(maxDispatchesPerSecond: 10))),
            FunctionSpec(name: "tick", trigger: .schedule(schedule: "every 5 minutes", timeZone: "UTC")),
            FunctionSpec(name: "cleanup", trigger: .user(.deleted)),
            FunctionSpec(name: "api", trigger: .request, options: FunctionOptions(cors: .disabled, secrets: ["TOKEN"], region: "europe-west1")),
        ])
        #expect(manifest.problems().isEmpty)
        let data = try JSONEncoder().encode(manifest)
        #expect(try JSONDecoder().decode(FunctionManifest.self, from: data) == manifest)
        let value = try ValueEncoder().encode(manifest)
        #expect(try ValueDecoder().decode(FunctionManifest.self, from: value) == manifest)
        let binary = try BinaryValueCodec.decode(BinaryValueCodec.encode(value))
        #expect(try ValueDecoder().decode(FunctionManifest.self, from: binary) == manifest)
    }

    @Test("CORS policies encode as true, false or a list, and decode a single origin too")
    func cors() throws {
        #expect(try json(["c": CORSPolicy.allowAll]) == #"{"c":true}"#)
        #expect(try json(["c": CORSPolicy.disabled]) == #"{"c":false}"#)
        #expect(try json(["c": CORSPolicy.origins(["https://a.example"])]) == #"{"c":["https://a.example"]}"#)
        let decoder = ValueDecoder()
        #expect(try decoder.decode(CORSPolicy.self, from: true) == .allowAll)
        #expect(try decoder.decode(CORSPolicy.self, from: false) == .disabled)
        #expect(try decoder.decode(CORSPolicy.self, from: "https://a.example") == .origins(["https://a.example"]))
        #expect(try decoder.decode(CORSPolicy.self, from: ["a", "b"]) == .origins(["a", "b"]))
        #expect(throws: DecodingError.self) { try decoder.decode(CORSPolicy.self, from: 5) }
    }

    @Test("rate limits: defaults and problems")
    func rateLimits() {
        #expect(RateLimits.taskQueueDefault == RateLimits(maxDispatchesPerSecond: 500, maxConcurrentDispatches: 1000))
        #expect(RateLimits().problems().isEmpty)
        #expect(RateLimits(maxDispatchesPerSecond: -1).problems() == ["maxDispatchesPerSecond must be in (0, 1000000] (got -1.0)"])
        #expect(RateLimits(maxDispatchesPerSecond: .nan).problems().count == 1)
        #expect(RateLimits(maxDispatchesPerSecond: 0.5, maxConcurrentDispatches: 1).problems().isEmpty)
    }
}
