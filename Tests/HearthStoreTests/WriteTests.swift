import Foundation
import HearthModel
@testable import HearthStore
import Testing

/// Firestore's write kinds (create, set, merge, update, delete) and preconditions, each through a
/// real commit.
@Suite("Writes", .timeLimit(.minutes(1)))
struct WriteTests {
    @Test("create stores a new document and fails already-exists when it is repeated")
    func create() async throws {
        try await withStore { store, _ in
            let path = try doc("members/alice")
            let result = try await store.commit([.create(path, ["name": "Alice"])])
            let stored = try #require(try await store.get(path))
            #expect(stored.fields == ["name": "Alice"])
            #expect(stored.createTime == result.commitTime)
            #expect(stored.updateTime == result.commitTime)
            #expect(result.writeResults == [WriteResult(updateTime: result.commitTime)])
            await expectError(.alreadyExists, "members/alice") {
                try await store.commit([.create(path, ["name": "Mallory"])])
            }
            #expect(try await store.get(path) == stored)
            #expect(try await store.allChanges().map(\.kind) == [.created])
        }
    }

    @Test("set replaces the whole document, creating it when missing")
    func set() async throws {
        try await withStore { store, clock in
            let path = try doc("c/d")
            let first = try await store.commit([.set(path, ["a": 1, "m": ["x": 1, "y": 2]])])
            clock.advance(by: .seconds(1))
            let second = try await store.commit([.set(path, ["b": 2])])
            let stored = try #require(try await store.get(path))
            #expect(stored.fields == ["b": 2])
            #expect(stored.createTime == first.commitTime)
            #expect(stored.updateTime == second.commitTime)
            #expect(try await store.allChanges().map(\.kind) == [.created, .updated])
        }
    }

    @Test("merge deep-merges nested maps and keeps untouched fields")
    func mergeDeep() async throws {
        try await withStore { store, _ in
            let path = try doc("c/d")
            try await store.commit([.set(path, ["a": 1, "m": ["x": 1, "y": ["p": 1, "q": 2]], "keep": true])])
            try await store.commit([.merge(path, ["m": ["y": ["q": 3, "r": 4], "z": 5], "b": 2])])
            #expect(try await store.get(path)?.fields == ["a": 1, "m": ["x": 1, "y": ["p": 1, "q": 3, "r": 4], "z": 5], "keep": true, "b": 2])
            // An empty map is a leaf: it replaces the map it lands on.
            try await store.commit([.merge(path, ["m": ["y": .map([:])]])])
            #expect(try await store.get(path)?.fields["m"] == ["x": 1, "y": .map([:]), "z": 5])
            // A non-map value is replaced by a map merged into it.
            try await store.commit([.merge(path, ["a": ["inner": 1]])])
            #expect(try await store.get(path)?.fields["a"] == ["inner": 1])
        }
    }

    @Test("merge creates a missing document")
    func mergeCreates() async throws {
        try await withStore { store, _ in
            let path = try doc("c/d")
            try await store.commit([.merge(path, ["m": ["x": 1]])])
            #expect(try await store.get(path)?.fields == ["m": ["x": 1]])
            #expect(try await store.allChanges().map(\.kind) == [.created])
        }
    }

    @Test("merge with mergeFields writes only the listed fields")
    func mergeFields() async throws {
        try await withStore { store, _ in
            let path = try doc("c/d")
            try await store.commit([.set(path, ["a": 1, "b": 1, "m": ["x": 1, "y": 1]])])
            try await store.commit([.merge(path, ["a": 2, "b": 2, "m": ["x": 2, "y": 2]],
                                           mergeFields: [try field("a"), try field("m.y")])])
            #expect(try await store.get(path)?.fields == ["a": 2, "b": 1, "m": ["x": 1, "y": 2]])
            // A listed map field is replaced whole.
            try await store.commit([.merge(path, ["m": ["z": 3]], mergeFields: [try field("m")])])
            #expect(try await store.get(path)?.fields["m"] == ["z": 3])
        }
    }

    @Test("FieldValue.delete in a merge removes the field; in a plain set it is refused")
    func mergeDelete() async throws {
        try await withStore { store, _ in
            let path = try doc("c/d")
            try await store.commit([.set(path, ["a": 1, "b": 2, "m": ["x": 1, "y": 2]])])
            try await store.commit([.merge(path, ["c": 3], transforms: [.init(try field("a"), .delete), .init(try field("m.x"), .delete)])])
            #expect(try await store.get(path)?.fields == ["b": 2, "c": 3, "m": ["y": 2]])
            await expectError(.invalidArgument, "FieldValue.delete()") {
                try await store.commit([.set(path, ["z": 1], transforms: [.init(try field("b"), .delete)])])
            }
            #expect(try await store.get(path)?.fields == ["b": 2, "c": 3, "m": ["y": 2]])
        }
    }

    @Test("update fails not-found when the document is missing, and stores nothing")
    func updateMissing() async throws {
        try await withStore { store, _ in
            let path = try doc("c/missing")
            await expectError(.notFound, "c/missing") { try await store.commit([.update(path, [try upd("a", 1)])]) }
            #expect(try await store.get(path) == nil)
            #expect(try await store.allChanges().isEmpty)
        }
    }

    @Test("update sets dotted field paths inside maps and leaves the rest")
    func updateDotted() async throws {
        try await withStore { store, _ in
            let path = try doc("c/d")
            try await store.commit([.set(path, ["a": 1, "m": ["x": 1, "y": ["p": 1]], "s": "x"])])
            try await store.commit([.update(path, [try upd("m.y.q", 2), try upd("m.x", 5), try upd("n.deep", true)])])
            #expect(try await store.get(path)?.fields == ["a": 1, "m": ["x": 5, "y": ["p": 1, "q": 2]], "s": "x", "n": ["deep": true]])
            // A dotted path through a non-map replaces it with a map.
            try await store.commit([.update(path, [try upd("s.t", 1)])])
            #expect(try await store.get(path)?.fields["s"] == ["t": 1])
        }
    }

    @Test("update with a quoted segment reaches a field whose name contains a dot")
    func updateQuoted() async throws {
        try await withStore { store, _ in
            let path = try doc("c/d")
            try await store.commit([.set(path, ["a.b": ["c": 1], "a": ["b": ["c": 9]]])])
            try await store.commit([.update(path, [try upd("`a.b`.c", 2)])])
            #expect(try await store.get(path)?.fields == ["a.b": ["c": 2], "a": ["b": ["c": 9]]])
            try await store.commit([.update(path, [try upd("`x.y`", "quoted"), try upd("`odd\\`name`", 1)])])
            let fields = try #require(try await store.get(path)?.fields)
            #expect(fields["x.y"] == "quoted")
            #expect(fields["odd`name"] == 1)
        }
    }

    @Test("an update mask may repeat a field or name one inside another (each takes its value from the one data, as in Firestore); transforms of a field and one inside it are refused")
    func updateOverlappingPaths() async throws {
        try await withStore { store, _ in
            let path = try doc("c/d")
            try await store.commit([.set(path, ["m": ["x": 1, "y": 2], "n": 1])])
            // The Firestore emulator's answers: mask [m, m.x] over data m = {y: 5} leaves m = {y: 5};
            // [m.x, m] over m = {x: 7} leaves m = {x: 7}; a repeated path is one.
            try await store.commit([DocumentWrite(path: path, operation: .update(fields: ["m": ["y": 5]], mask: [try field("m"), try field("m.x")]))])
            #expect(try await store.get(path)?.fields == ["m": ["y": 5], "n": 1])
            try await store.commit([DocumentWrite(path: path, operation: .update(fields: ["m": ["x": 7]], mask: [try field("m.x"), try field("m")]))])
            #expect(try await store.get(path)?.fields == ["m": ["x": 7], "n": 1])
            try await store.commit([DocumentWrite(path: path, operation: .update(fields: ["n": 2], mask: [try field("n"), try field("n")]))])
            #expect(try await store.get(path)?.fields == ["m": ["x": 7], "n": 2])
            await expectError(.invalidArgument, "Cannot transform property m and its nested property at the same time.") {
                try await store.commit([.update(path, [], transforms: [.init(try field("m.x"), .increment(1)), .init(try field("m"), .delete)])])
            }
            // Fields that only share a prefix of their names do not overlap.
            try await store.commit([.update(path, [try upd("m.x", 5), try upd("mm", 1), try upd("m.xy", 2)])])
            #expect(try await store.get(path)?.fields == ["m": ["x": 5, "xy": 2], "n": 2, "mm": 1])
        }
    }

    @Test("update with a map value replaces the whole map")
    func updateMapReplaces() async throws {
        try await withStore { store, _ in
            let path = try doc("c/d")
            try await store.commit([.set(path, ["m": ["x": 1, "y": 2]])])
            try await store.commit([.update(path, [try upd("m", ["z": 3])])])
            #expect(try await store.get(path)?.fields == ["m": ["z": 3]])
        }
    }

    @Test("update with FieldValue.delete removes fields, nested ones too")
    func updateDelete() async throws {
        try await withStore { store, _ in
            let path = try doc("c/d")
            try await store.commit([.set(path, ["a": 1, "m": ["x": 1, "y": 2]])])
            try await store.commit([.update(path, [], transforms: [.init(try field("a"), .delete), .init(try field("m.y"), .delete),
                                                                   .init(try field("absent"), .delete)])])
            #expect(try await store.get(path)?.fields == ["m": ["x": 1]])
        }
    }

    @Test("delete removes a document, and deleting a missing one succeeds with no change")
    func delete() async throws {
        try await withStore { store, _ in
            let path = try doc("c/d")
            try await store.commit([.create(path, ["a": 1])])
            let result = try await store.commit([.delete(path)])
            #expect(result.writeResults == [WriteResult(updateTime: nil)])
            #expect(try await store.get(path) == nil)
            try await store.commit([.delete(path)])
            try await store.commit([.delete(try doc("never/was"))])
            #expect(try await store.allChanges().map(\.kind) == [.created, .deleted])
            #expect(try store.indexRowCount() == 0)
        }
    }

    @Test("a deleted document can be created again with a new create time")
    func recreate() async throws {
        try await withStore { store, clock in
            let path = try doc("c/d")
            try await store.commit([.create(path, ["a": 1])])
            try await store.commit([.delete(path)])
            clock.advance(by: .seconds(5))
            let again = try await store.commit([.create(path, ["a": 2])])
            #expect(try await store.get(path)?.createTime == again.commitTime)
        }
    }

    // MARK: preconditions

    @Test("exists(true) passes on an existing document and fails not-found on a missing one")
    func existsTrue() async throws {
        try await withStore { store, _ in
            let path = try doc("c/d")
            await expectError(.notFound) {
                try await store.commit([DocumentWrite(path: path, operation: .update(fields: ["a": 1], mask: nil), precondition: .exists(true))])
            }
            await expectError(.notFound) { try await store.commit([.delete(path, precondition: .exists(true))]) }
            try await store.commit([.create(path, ["a": 1])])
            try await store.commit([DocumentWrite(path: path, operation: .update(fields: ["a": 2], mask: nil), precondition: .exists(true))])
            #expect(try await store.get(path)?.fields == ["a": 2])
            try await store.commit([.delete(path, precondition: .exists(true))])
            #expect(try await store.get(path) == nil)
        }
    }

    @Test("exists(false) passes on a missing document and fails already-exists on an existing one")
    func existsFalse() async throws {
        try await withStore { store, _ in
            let path = try doc("c/d")
            try await store.commit([DocumentWrite(path: path, operation: .update(fields: ["a": 1], mask: nil), precondition: .exists(false))])
            await expectError(.alreadyExists) { try await store.commit([.delete(path, precondition: .exists(false))]) }
            #expect(try await store.get(path)?.fields == ["a": 1])
        }
    }

    @Test("a create followed in its commit by another write to the document fails already-exists when it exists, writing nothing")
    func createThenAnotherWrite() async throws {
        try await withStore { store, _ in
            let path = try doc("c/d")
            try await store.commit([.set(path, ["a": 1])])
            let create = DocumentWrite(path: path, operation: .update(fields: ["b": 2], mask: nil), precondition: .exists(false))
            // Found by the side-by-side run with Google's Firestore emulator: the create was taken
            // without reading the document and the delete after it left nothing to insert, so the
            // commit succeeded and wrote nothing.
            for later: DocumentWrite in [.delete(path), .set(path, ["c": 3]), .update(path, [try upd("c", 3)])] {
                await expectError(.alreadyExists) { try await store.commit([create, later]) }
                #expect(try await store.get(path)?.fields == ["a": 1])
            }
            // On a missing document the same commits apply in order.
            let fresh = try doc("c/e")
            let createFresh = DocumentWrite(path: fresh, operation: .update(fields: ["b": 2], mask: nil), precondition: .exists(false))
            try await store.commit([createFresh, .delete(fresh)])
            #expect(try await store.get(fresh) == nil)
            try await store.commit([createFresh, .update(fresh, [try upd("c", 3)])])
            #expect(try await store.get(fresh)?.fields == ["b": 2, "c": 3])
        }
    }

    @Test("an updateTime precondition passes on the exact time and fails failed-precondition otherwise")
    func updateTimePrecondition() async throws {
        try await withStore { store, clock in
            let path = try doc("c/d")
            let created = try await store.commit([.create(path, ["n": 1])])
            clock.advance(by: .seconds(1))
            let stale = created.commitTime - .seconds(1)
            await expectError(.failedPrecondition) {
                try await store.commit([DocumentWrite(path: path, operation: .update(fields: ["n": 2], mask: nil), precondition: .updateTime(stale))])
            }
            await expectError(.failedPrecondition) { try await store.commit([.delete(path, precondition: .updateTime(stale))]) }
            await expectError(.failedPrecondition) {
                try await store.commit([.delete(try doc("c/missing"), precondition: .updateTime(created.commitTime))])
            }
            #expect(try await store.get(path)?.fields == ["n": 1])
            let updated = try await store.commit([DocumentWrite(path: path, operation: .update(fields: ["n": 2], mask: nil),
                                                                precondition: .updateTime(created.commitTime))])
            #expect(try await store.get(path)?.fields == ["n": 2])
            try await store.commit([.delete(path, precondition: .updateTime(updated.commitTime))])
            #expect(try await store.get(path) == nil)
            #expect(try await store.allChanges().map(\.kind) == [.created, .updated, .deleted])
        }
    }

    // MARK: times

    @Test("commit times strictly increase even when the clock stands still")
    func commitTimesIncrease() async throws {
        try await withStore { store, _ in
            var times: [Timestamp] = []
            for i in 0..<20 {
                times.append(try await store.commit([.set(try doc("c/d\(i % 3)"), ["i": .int(Int64(i))])]).commitTime)
            }
            #expect(zip(times, times.dropFirst()).allSatisfy { $0 < $1 })
            #expect(Set(times).count == times.count)
        }
    }

    @Test("commit times never go backwards when the clock does")
    func clockGoesBack() async throws {
        try await withStore { store, clock in
            let first = try await store.commit([.set(try doc("c/a"), [:])]).commitTime
            clock.set(clock.now() - .seconds(3600))
            let second = try await store.commit([.set(try doc("c/b"), [:])]).commitTime
            #expect(second > first)
        }
    }

    @Test("commit times follow the clock and are truncated to microseconds")
    func commitTimeFromClock() async throws {
        try await withStore { store, clock in
            clock.set(Timestamp(seconds: 1_800_000_000, nanos: 123_456_789))
            let result = try await store.commit([.create(try doc("c/d"), [:])])
            #expect(result.commitTime == Timestamp(seconds: 1_800_000_000, nanos: 123_456_000))
        }
    }

    @Test("createTime is kept across updates while updateTime follows each change")
    func createTimeKept() async throws {
        try await withStore { store, clock in
            let path = try doc("c/d")
            let created = try await store.commit([.create(path, ["n": 0])])
            var last = created.commitTime
            for i in 1...3 {
                clock.advance(by: .seconds(10))
                last = try await store.commit([.update(path, [try upd("n", .int(Int64(i)))])]).commitTime
            }
            let stored = try #require(try await store.get(path))
            #expect(stored.createTime == created.commitTime)
            #expect(stored.updateTime == last)
            let changes = try await store.allChanges()
            #expect(changes.compactMap(\.after?.createTime).allSatisfy { $0 == created.commitTime })
        }
    }

    @Test("a write that changes nothing keeps updateTime, returns it, and writes no change-feed entry")
    func noOpWrite() async throws {
        try await withStore { store, clock in
            let path = try doc("c/d")
            let created = try await store.commit([.set(path, ["a": 1, "m": ["x": 1]])])
            clock.advance(by: .seconds(1))
            for write in [DocumentWrite.set(path, ["a": 1, "m": ["x": 1]]), .merge(path, ["m": ["x": 1]]),
                          .update(path, [try upd("a", 1)]), .update(path, [], transforms: [.init(try field("zz"), .delete)])] {
                let result = try await store.commit([write])
                #expect(result.writeResults.first?.updateTime == created.commitTime)
            }
            #expect(try await store.get(path)?.updateTime == created.commitTime)
            #expect(try await store.allChanges().count == 1)
            #expect(store.engine.lastSequence == 1)
        }
    }

    @Test("timestamps in values are truncated to microseconds")
    func valueTimestampsTruncated() async throws {
        try await withStore { store, _ in
            let path = try doc("c/d")
            let t = Timestamp(seconds: 1_700_000_000, nanos: 987_654_321)
            let before1970 = Timestamp(seconds: -1, nanos: 999_999_999)
            try await store.commit([.set(path, ["t": .timestamp(t), "a": [.timestamp(t)], "m": ["t": .timestamp(before1970)]])])
            let fields = try #require(try await store.get(path)?.fields)
            #expect(fields["t"] == .timestamp(Timestamp(seconds: 1_700_000_000, nanos: 987_654_000)))
            #expect(fields["a"] == [.timestamp(Timestamp(seconds: 1_700_000_000, nanos: 987_654_000))])
            #expect(fields["m"] == ["t": .timestamp(Timestamp(seconds: -1, nanos: 999_999_000))])
            // The truncated value is what queries see.
            var q = QuerySpec(collection: try coll("c"))
            q.filters = [.init(try field("t"), .equal, .timestamp(Timestamp(seconds: 1_700_000_000, nanos: 987_654_000)))]
            #expect(try await store.ids(q) == ["d"])
        }
    }

    @Test("every value type round-trips through the store unchanged")
    func roundTrip() async throws {
        try await withStore { store, _ in
            let fields: [String: Value] = [
                "null": nil, "bool": true, "int": .int(Int64.min), "double": .double(-0.5), "nan": .double(.nan),
                "inf": .double(-.infinity), "time": .timestamp(Timestamp(seconds: 1, nanos: 1000)), "string": "héllo\u{0}x",
                "bytes": .bytes([0, 255, 1]), "ref": .reference("members/alice"),
                "geo": .geoPoint(GeoPoint(latitude: -33.5, longitude: 151.25)), "array": [1, "a", nil, ["m": 1]],
                "map": ["nested": ["deeper": [1.5]]], "emptyMap": .map([:]), "emptyArray": [],
            ]
            let path = try doc("c/d")
            try await store.commit([.create(path, fields)])
            #expect(try await store.get(path)?.fields == fields)
        }
    }
    @Test("a field changed from 0.0 to -0.0 (or back) is a change: stored, in the feed, with a new update time; NaN to NaN is none")
    func negativeZero() async throws {
        try await withStore { store, clock in
            let path = try doc("c/z")
            try await store.commit([.create(path, ["x": 0.0, "n": .double(.nan), "m": ["y": 0.0]])])
            clock.advance(by: .seconds(1))
            let flipped = try await store.commit([.set(path, ["x": .double(-0.0), "n": .double(.nan), "m": ["y": 0.0]])])
            let stored = try #require(try await store.get(path))
            #expect(stored.fields["x"]?.doubleValue?.sign == .minus, "the sign is kept")
            #expect(stored.updateTime == flipped.commitTime)
            clock.advance(by: .seconds(1))
            let nested = try await store.commit([.update(path, [try upd("m.y", .double(-0.0))])])
            #expect(try await store.get(path)?.updateTime == nested.commitTime)
            clock.advance(by: .seconds(1))
            let same = try await store.commit([.update(path, [try upd("n", .double(.nan))])])
            #expect(same.writeResults.first?.updateTime == nested.commitTime, "NaN to NaN changes nothing")
            #expect(try await store.allChanges().map(\.kind) == [.created, .updated, .updated])
        }
    }
}

