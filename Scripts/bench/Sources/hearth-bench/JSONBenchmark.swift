import Foundation
import HearthModel

/// A to-do item as SCENARIOS.md stores it, for the typed (Codable) comparison.
struct BenchItem: Codable {
    var sequence: Int
    var title: String
    var body: String
    var tags: [String]
    var category: String
    var isDone: Bool
    var completedAt: String?
    var targetDate: String?
    var createdAt: String
    var updatedAt: String
    var deletedAt: String?
    var goalId: String?
    var priority: Double
    var meta: [String: Int]
}

struct BenchDocument: Codable {
    var owner: String
    var items: [BenchItem]
}

enum JSONCorpus {
    static let words = ["alpha", "beta", "gamma", "déjà vu", "naïve", "東京", "🚀 launch", "tab\there", "quote\"d", "line\nbreak",
                        "reminder", "groceries", "deploy", "review", "write", "call", "plan", "fix", "ship", "read"]

    static func item(_ i: Int, _ rng: inout SplitMix64) -> BenchItem {
        func pick() -> String { words[Int(rng.next() % UInt64(words.count))] }
        let sentence = (0..<(8 + Int(rng.next() % 8))).map { _ in pick() }.joined(separator: " ")
        return BenchItem(
            sequence: i + 1, title: "\(pick()) \(pick()) #\(i)", body: sentence,
            tags: (0..<Int(rng.next() % 4)).map { _ in pick() }, category: i % 3 == 0 ? "default" : "work-\(i % 7)",
            isDone: rng.next() % 2 == 0, completedAt: rng.next() % 2 == 0 ? nil : "2026-05-01T09:00:00.123Z",
            targetDate: "2026-06-\(10 + i % 18)T00:00:00Z", createdAt: "2026-04-01T08:30:00Z", updatedAt: "2026-04-02T10:15:30.5Z",
            deletedAt: nil, goalId: rng.next() % 3 == 0 ? "goal-\(rng.next() % 1000)" : nil,
            priority: Double(rng.next() % 10_000) / 100, meta: ["views": Int(rng.next() % 100_000), "edits": Int(rng.next() % 50), "big": Int(Int64.max - Int64(i))])
    }

    /// A document of about `bytes` bytes of JSON.
    static func document(bytes: Int, seed: UInt64) -> BenchDocument {
        var rng = SplitMix64(seed: seed)
        var doc = BenchDocument(owner: "member-\(seed)", items: [])
        var size = 0
        while size < bytes {
            doc.items.append(item(doc.items.count, &rng))
            size = (try? JSONEncoder().encode(doc).count) ?? bytes
            if size > bytes && doc.items.count > 1 { doc.items.removeLast(); break }
        }
        return doc
    }
}

func runJSONBenchmark() async throws {
    printHeader("JSON: Hearth's codec vs Foundation on the same documents", command: "Scripts/bench/json")
    print("size     operation                        MB/s     ops/s   vs JSONSerialization  vs JSONDecoder/Encoder")
    for (label, size, count) in [("1 KB", 1024, 16), ("100 KB", 100 * 1024, 4)] {
        let docs = (0..<count).map { JSONCorpus.document(bytes: size, seed: UInt64($0 + 1)) }
        let jsonBytes = try docs.map { try JSONEncoder().encode($0) }
        let datas = jsonBytes.map { Data($0) }
        let arrays = jsonBytes.map { [UInt8]($0) }
        let values = try arrays.map { try JSONParser.parse($0) }
        let foundationObjects = try datas.map { try JSONSerialization.jsonObject(with: $0) }
        let avgBytes = Double(arrays.map(\.count).reduce(0, +)) / Double(arrays.count)
        var k = 0
        func next() -> Int { k = (k + 1) % count; return k }

        let hearthDecode = try opsPerSecond { _ = try JSONParser.parse(arrays[next()]) }
        let fsDecode = try opsPerSecond { _ = try JSONSerialization.jsonObject(with: datas[next()]) }
        let decoder = JSONDecoder()
        let codableDecode = try opsPerSecond { _ = try decoder.decode(BenchDocument.self, from: datas[next()]) }
        let valueDecoder = ValueDecoder()
        let hearthTyped = try opsPerSecond { _ = try valueDecoder.decode(BenchDocument.self, from: try JSONParser.parse(arrays[next()])) }

        let hearthEncode = opsPerSecond { _ = JSONWriter.encode(values[next()]) }
        let hearthEncodeUnsorted = opsPerSecond { _ = JSONWriter.encode(values[next()], options: JSONWriteOptions(sortKeys: false)) }
        let fsEncode = try opsPerSecond { _ = try JSONSerialization.data(withJSONObject: foundationObjects[next()]) }
        let encoder = JSONEncoder()
        let codableEncode = try opsPerSecond { _ = try encoder.encode(docs[next()]) }
        let valueEncoder = ValueEncoder()
        let hearthTypedEncode = try opsPerSecond { _ = JSONWriter.encode(try valueEncoder.encode(docs[next()])) }

        func row(_ name: String, _ ops: Double, _ fs: Double?, _ codable: Double?) {
            let mbs = ops * avgBytes / 1e6
            let r1 = fs.map { fmt(ops / $0, 2) + "x" } ?? "-"
            let r2 = codable.map { fmt(ops / $0, 2) + "x" } ?? "-"
            print("\(label.padding(toLength: 8, withPad: " ", startingAt: 0)) \(name.padding(toLength: 32, withPad: " ", startingAt: 0)) \(fmt(mbs).leftPad(7))  \(fmt(ops, 0).leftPad(8))   \(r1.leftPad(18))  \(r2.leftPad(22))")
        }
        row("decode Hearth (bytes→Value)", hearthDecode, fsDecode, codableDecode)
        row("decode Hearth typed (→struct)", hearthTyped, fsDecode, codableDecode)
        row("decode JSONSerialization", fsDecode, nil, nil)
        row("decode JSONDecoder (→struct)", codableDecode, nil, nil)
        row("encode Hearth (Value→bytes)", hearthEncode, fsEncode, codableEncode)
        row("encode Hearth, unsorted keys", hearthEncodeUnsorted, fsEncode, codableEncode)
        row("encode Hearth typed (struct→)", hearthTypedEncode, fsEncode, codableEncode)
        row("encode JSONSerialization", fsEncode, nil, nil)
        row("encode JSONEncoder (struct→)", codableEncode, nil, nil)
        print("(average document \(Int(avgBytes)) bytes, \(count) documents)\n")
    }
}

extension String {
    func leftPad(_ width: Int) -> String { count >= width ? self : String(repeating: " ", count: width - count) + self }
}
