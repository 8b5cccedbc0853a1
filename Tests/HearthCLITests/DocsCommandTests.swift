import Foundation
@testable import HearthCLI
import HearthModel
import Testing

@Suite("hearth docs")
struct DocsCommandTests {
    func config(_ dir: TempDir) -> String {
        dir.write("runtime.toml", "data_dir = \"data\"\nunits_dir = \"\(buildDirectory)\"\n")
    }

    @Test("set then get round-trips fields, including tagged timestamps, with create and update times")
    func setGet() async throws {
        let dir = TempDir()
        let c = config(dir)
        let (setCode, setOut) = await run(["docs", "set", "members/alice", "--data", #"{"name": "Alice", "born": {"$timestamp": "1990-05-01T00:00:00Z"}, "n": 9007199254740993}"#, "--config", c])
        #expect(setCode == 0, "\(setOut.stderr)")
        let (code, out) = await run(["docs", "get", "members/alice", "--config", c])
        #expect(code == 0)
        let doc = try JSONParser.parse(out.stdout, options: .tagged)
        #expect(doc["fields"] == ["name": "Alice", "born": .timestamp(Timestamp(rfc3339: "1990-05-01T00:00:00Z")!), "n": .int(9_007_199_254_740_993)])
        #expect(doc["path"] == "members/alice")
        #expect(doc["createTime"]?.stringValue != nil)
    }

    @Test("--merge merges, --create refuses an existing document")
    func mergeCreate() async throws {
        let dir = TempDir()
        let c = config(dir)
        _ = await run(["docs", "set", "a/b", "--data", #"{"x": {"y": 1}, "z": 1}"#, "--config", c])
        _ = await run(["docs", "set", "a/b", "--merge", "--data", #"{"x": {"w": 2}}"#, "--config", c])
        let (_, out) = await run(["docs", "get", "a/b", "--config", c])
        #expect(try JSONParser.parse(out.stdout)["fields"] == ["x": ["y": 1, "w": 2], "z": 1])
        let (code, err) = await run(["docs", "set", "a/b", "--create", "--data", "{}", "--config", c])
        #expect(code == 1)
        #expect(err.stderr.contains("already-exists"))
    }

    @Test("query filters, orders and limits; --count counts; --group spans collections")
    func query() async throws {
        let dir = TempDir()
        let c = config(dir)
        for (i, (user, done)) in [("a", true), ("a", false), ("b", false)].enumerated() {
            _ = await run(["docs", "set", "members/\(user)/items/i\(i)", "--data", "{\"n\": \(i), \"done\": \(done)}", "--config", c])
        }
        let (code, out) = await run(["docs", "query", "members/a/items", "--where", "done == false", "--config", c])
        #expect(code == 0)
        #expect(try JSONParser.parse(out.stdout).arrayValue?.map { $0["path"] } == ["members/a/items/i1"])
        let (_, ordered) = await run(["docs", "query", "items", "--group", "--order-by", "n:desc", "--limit", "2", "--config", c])
        #expect(try JSONParser.parse(ordered.stdout).arrayValue?.map { $0["path"] } == ["members/b/items/i2", "members/a/items/i1"])
        let (_, count) = await run(["docs", "query", "items", "--group", "--where", "n >= 1", "--count", "--config", c])
        #expect(try JSONParser.parse(count.stdout) == ["count": 2])
    }

    @Test("query arguments are checked: operators, values, directions and Firestore's rules")
    func queryErrors() async throws {
        let dir = TempDir()
        let c = config(dir)
        let (op, opOut) = await run(["docs", "query", "x", "--where", "a ~ 1", "--config", c])
        #expect(op == 2)
        #expect(opOut.stderr.contains("unknown operator '~'"))
        let (value, valueOut) = await run(["docs", "query", "x", "--where", "a == nope", "--config", c])
        #expect(value == 2)
        #expect(valueOut.stderr.contains("not valid JSON"))
        let (ltl, ltlOut) = await run(["docs", "query", "x", "--limit-to-last", "2", "--config", c])
        #expect(ltl == 2)
        #expect(ltlOut.stderr.contains("limitToLast requires at least one orderBy"))
        let (path, pathOut) = await run(["docs", "query", "x/y", "--config", c])
        #expect(path == 2)
        #expect(pathOut.stderr.contains("odd number of segments"))
    }

    @Test("delete removes one document; --recursive removes a subtree; export prints JSON lines")
    func deleteAndExport() async throws {
        let dir = TempDir()
        let c = config(dir)
        for p in ["t/a", "t/a/s/1", "t/a/s/1/u/2", "t/b"] { _ = await run(["docs", "set", p, "--data", "{\"p\": \"\(p)\"}", "--config", c]) }
        let (_, export) = await run(["docs", "export", "--config", c])
        let lines = export.stdout.split(separator: "\n")
        #expect(lines.count == 4)
        #expect(try lines.map { try JSONParser.parse(String($0))["path"] }.contains("t/a/s/1/u/2"))
        let (code, out) = await run(["docs", "delete", "t/a", "--recursive", "--config", c])
        #expect(code == 0)
        #expect(try JSONParser.parse(out.stdout) == ["deleted": 3])
        _ = await run(["docs", "delete", "t/b", "--config", c])
        let (_, after) = await run(["docs", "export", "--config", c])
        #expect(after.stdout.isEmpty)
    }

    @Test("bad paths and data are refused before anything is written", arguments: [
        ["docs", "get", "members"],
        ["docs", "set", "a/b", "--data", "[1]"],
        ["docs", "set", "a/b"],
        ["docs", "set", "a/__x__", "--data", "{}"],
        ["docs", "delete", "a"],
    ])
    func refusals(args: [String]) async throws {
        let dir = TempDir()
        let (code, out) = await run(args + ["--config", config(dir)])
        #expect(code == 2 || code == 1)
        #expect(!out.stderr.isEmpty)
        #expect(!FileManager.default.fileExists(atPath: dir.path + "/data/store.sqlite") || code == 1)
    }
}
