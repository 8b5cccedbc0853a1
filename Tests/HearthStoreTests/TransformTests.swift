import Foundation
import HearthModel
@testable import HearthStore
import Testing

/// Field transforms: computed by the store at commit, in the order given, after the write's data.
@Suite("Field transforms", .timeLimit(.minutes(1)))
struct TransformTests {
    @Test("serverTimestamp writes the commit time and returns it as the transform result")
    func serverTimestamp() async throws {
        try await withStore { store, clock in
            clock.set(Timestamp(seconds: 1_800_000_000, nanos: 5_555_555))
            let path = try doc("c/d")
            let result = try await store.commit([.set(path, ["a": 1], transforms: [.init(try field("at"), .serverTimestamp),
                                                                                   .init(try field("m.at"), .serverTimestamp)])])
            let fields = try #require(try await store.get(path)?.fields)
            #expect(fields["at"] == .timestamp(result.commitTime))
            #expect(fields["m"] == ["at": .timestamp(result.commitTime)])
            #expect(result.commitTime.nanos % 1000 == 0)
            #expect(result.writeResults[0].transformResults == [.timestamp(result.commitTime), .timestamp(result.commitTime)])
        }
    }

    @Test("serverTimestamp in an update of a missing document fails not-found")
    func serverTimestampUpdateMissing() async throws {
        try await withStore { store, _ in
            await expectError(.notFound) {
                try await store.commit([.update(try doc("c/d"), [], transforms: [.init(try field("at"), .serverTimestamp)])])
            }
        }
    }

    static let increments: [(String, Value?, Value, Value)] = [
        ("int + int", 5, 3, 8),
        ("int + negative int", 5, -7, -2),
        ("int + double", 5, 0.5, 5.5),
        ("double + int", 1.5, 2, 3.5),
        ("double + double", 0.25, 0.5, 0.75),
        ("missing field takes the operand", nil, 4, 4),
        ("missing field takes a double operand", nil, 2.5, 2.5),
        ("string is replaced by the operand", "seven", 3, 3),
        ("null is replaced by the operand", .null, 3, 3),
        ("map is replaced by the operand", ["a": 1], 1.5, 1.5),
        ("saturates at Int64.max", .int(Int64.max - 1), 10, .int(Int64.max)),
        ("saturates at Int64.min", .int(Int64.min + 1), -10, .int(Int64.min)),
        ("double overflow is infinity", 1.7976931348623157e308, 1.7976931348623157e308, .double(.infinity)),
    ]

    @Test("increment adds integers and doubles as Firestore does", arguments: increments)
    func increment(name: String, old: Value?, operand: Value, expected: Value) async throws {
        try await withStore { store, _ in
            let path = try doc("c/d")
            try await store.commit([.set(path, old.map { ["n": $0] } ?? [:])])
            let result = try await store.commit([.update(path, [], transforms: [.init(try field("n"), .increment(operand))])])
            let stored = try #require(try await store.get(path)?.fields["n"])
            #expect(stored == expected, "\(name)")
            #expect(stored.typeName == expected.typeName, "\(name)")
            #expect(result.writeResults[0].transformResults == [expected])
        }
    }

    @Test("increment of a nested field creates the maps on the way")
    func incrementNested() async throws {
        try await withStore { store, _ in
            let path = try doc("c/d")
            try await store.commit([.set(path, [:], transforms: [.init(try field("stats.views"), .increment(1))])])
            try await store.commit([.merge(path, [:], transforms: [.init(try field("stats.views"), .increment(1))])])
            #expect(try await store.get(path)?.fields == ["stats": ["views": 2]])
        }
    }

    @Test("increment by a non-number is invalid-argument")
    func incrementNonNumber() async throws {
        try await withStore { store, _ in
            let path = try doc("c/d")
            try await store.commit([.set(path, ["n": 1])])
            await expectError(.invalidArgument, "needs a number") {
                try await store.commit([.update(path, [], transforms: [.init(try field("n"), .increment("1"))])])
            }
            #expect(try await store.get(path)?.fields["n"] == 1)
        }
    }

    @Test("transforms apply after the write's data, in order, one field twice too (as Firestore applies them)")
    func transformOrder() async throws {
        try await withStore { store, _ in
            let path = try doc("c/d")
            try await store.commit([.set(path, ["n": 10, "list": [1]], transforms: [.init(try field("n"), .increment(1)),
                                                                                   .init(try field("list"), .arrayUnion([2]))])])
            #expect(try await store.get(path)?.fields == ["n": 11, "list": [1, 2]])
            let twice = try await store.commit([.update(path, [], transforms: [.init(try field("n"), .increment(1)), .init(try field("n"), .increment(5))])])
            #expect(twice.writeResults.first?.transformResults == [12, 17])
            await expectError(.invalidArgument, "delete cannot carry") {
                try await store.commit([DocumentWrite(path: path, operation: .delete, transforms: [.init(try field("n"), .increment(1))])])
            }
            #expect(try await store.get(path)?.fields["n"] == 17)
        }
    }

    static let unions: [(String, Value?, [Value], Value)] = [
        ("missing field becomes the elements", nil, [1, 2], [1, 2]),
        ("appends only missing elements", [1, 2], [2, 3, 1], [1, 2, 3]),
        ("duplicates among the elements are added once", [], ["a", "a", "b"], ["a", "b"]),
        ("existing duplicates are kept", [1, 1], [2], [1, 1, 2]),
        ("1.0 is already present as 1", [1], [1.0], [1]),
        ("maps compare by value", [["a": 1]], [["a": 1], ["a": 2]], [["a": 1], ["a": 2]]),
        ("a non-array field becomes the elements", "text", [1], [1]),
        ("null counts as an element", [nil], [nil, 0], [nil, 0]),
    ]

    @Test("arrayUnion adds each element not already present", arguments: unions)
    func arrayUnion(name: String, old: Value?, elements: [Value], expected: Value) async throws {
        try await withStore { store, _ in
            let path = try doc("c/d")
            try await store.commit([.set(path, old.map { ["a": $0] } ?? [:])])
            try await store.commit([.update(path, [], transforms: [.init(try field("a"), .arrayUnion(elements))])])
            #expect(try await store.get(path)?.fields["a"] == expected, "\(name)")
        }
    }

    static let removals: [(String, Value?, [Value], Value)] = [
        ("removes every equal element", [1, 2, 1, 3], [1], [2, 3]),
        ("removes several", ["a", "b", "c"], ["c", "a", "x"], ["b"]),
        ("1.0 removes 1", [1, 2], [1.0], [2]),
        ("missing field becomes an empty array", nil, [1], []),
        ("a non-array field becomes an empty array", 5, [5], []),
        ("maps compare by value", [["a": 1], ["a": 2]], [["a": 1]], [["a": 2]]),
    ]

    @Test("arrayRemove removes every element equal to one given", arguments: removals)
    func arrayRemove(name: String, old: Value?, elements: [Value], expected: Value) async throws {
        try await withStore { store, _ in
            let path = try doc("c/d")
            try await store.commit([.set(path, old.map { ["a": $0] } ?? [:])])
            try await store.commit([.update(path, [], transforms: [.init(try field("a"), .arrayRemove(elements))])])
            #expect(try await store.get(path)?.fields["a"] == expected, "\(name)")
        }
    }

    @Test("array transforms keep the array-contains index in step")
    func arrayIndex() async throws {
        try await withStore { store, _ in
            let path = try doc("c/d")
            try await store.commit([.set(path, ["tags": ["a"]])])
            try await store.commit([.update(path, [], transforms: [.init(try field("tags"), .arrayUnion(["b"]))])])
            var q = QuerySpec(collection: try coll("c"))
            q.filters = [.init(try field("tags"), .arrayContains, "b")]
            #expect(try await store.ids(q) == ["d"])
            try await store.commit([.update(path, [], transforms: [.init(try field("tags"), .arrayRemove(["b"]))])])
            #expect(try await store.ids(q) == [])
        }
    }

    @Test("delete transform removes the field and results in null")
    func deleteTransform() async throws {
        try await withStore { store, _ in
            let path = try doc("c/d")
            try await store.commit([.set(path, ["a": 1, "b": 2])])
            let result = try await store.commit([.update(path, [], transforms: [.init(try field("a"), .delete)])])
            #expect(try await store.get(path)?.fields == ["b": 2])
            #expect(result.writeResults[0].transformResults == [.null])
        }
    }

    @Test("a transform on __name__ or an empty field path is refused")
    func badTransformPath() async throws {
        try await withStore { store, _ in
            let path = try doc("c/d")
            await expectError(.invalidArgument) {
                try await store.commit([.set(path, [:], transforms: [.init(.documentID, .serverTimestamp)])])
            }
            await expectError(.invalidArgument) {
                try await store.commit([.set(path, [:], transforms: [.init(FieldPath(segments: []), .serverTimestamp)])])
            }
            await expectError(.invalidArgument) {
                try await store.commit([.set(path, [:], transforms: [.init(FieldPath(segments: ["__x__"]), .increment(1))])])
            }
            #expect(try await store.get(path) == nil)
        }
    }
}
