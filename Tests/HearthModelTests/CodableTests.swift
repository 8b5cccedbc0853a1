import Foundation
import HearthModel
import Testing

enum ListKind: String, Codable, Equatable { case personal, shared }
enum ListPriority: Int, Codable, Equatable { case low = 1, high = 3 }

struct TodoItem: Codable, Equatable {
    var title: String
    var done: Bool
    var tags: [String]
    var note: String?
}

struct ListOwner: Codable, Equatable {
    var uid: String
    var since: Date
}

struct TodoList: Codable, Equatable {
    var name: String
    var kind: ListKind
    var priority: ListPriority
    var items: [TodoItem]
    var owner: ListOwner?
    var counts: [String: Int]
    var ratio: Double
    var small: Int8
    var big: UInt64
    var avatar: Data
    var place: GeoPoint
    var ref: DocumentPath
    var extra: Value
    var grid: [[Int]]
    var maybe: [Int?]
}

enum TestShape: Codable, Equatable {
    case circle(radius: Double)
    case square(side: Double)
    case dot
}

func decodingMessage<T: Decodable>(_ type: T.Type, from value: Value) -> String? {
    do {
        _ = try ValueDecoder().decode(type, from: value)
        return nil
    } catch {
        return describeDecodingError(error)
    }
}

@Suite("Codable ↔ Value")
struct CodableTests {
    let sample = TodoList(
        name: "Groceries", kind: .shared, priority: .high,
        items: [TodoItem(title: "milk", done: false, tags: ["dairy"], note: nil), TodoItem(title: "eggs", done: true, tags: [], note: "free range")],
        owner: ListOwner(uid: "alice", since: Date(timeIntervalSince1970: 1_700_000_000.5)),
        counts: ["a": 1, "b": 2], ratio: 0.25, small: -8, big: 42, avatar: Data([1, 2, 3]),
        place: GeoPoint(latitude: 48.85, longitude: 2.35), ref: try! DocumentPath("members/alice"),
        extra: ["any": [1, "two"]], grid: [[1, 2], [3]], maybe: [1, nil, 3])

    @Test("a nested struct encodes to the expected map")
    func encodeShape() throws {
        let value = try ValueEncoder().encode(sample)
        let expected: Value = [
            "name": "Groceries", "kind": "shared", "priority": 3,
            "items": [
                ["title": "milk", "done": false, "tags": ["dairy"], "note": nil],
                ["title": "eggs", "done": true, "tags": .array([]), "note": "free range"],
            ],
            "owner": ["uid": "alice", "since": .timestamp(Timestamp(seconds: 1_700_000_000, nanos: 500_000_000))],
            "counts": ["a": 1, "b": 2], "ratio": 0.25, "small": -8, "big": 42, "avatar": .bytes([1, 2, 3]),
            "place": .geoPoint(GeoPoint(latitude: 48.85, longitude: 2.35)), "ref": .reference("members/alice"),
            "extra": ["any": [1, "two"]], "grid": [[1, 2], [3]], "maybe": [1, nil, 3],
        ]
        #expect(value == expected)
    }

    @Test("a nested struct round-trips")
    func roundTrip() throws {
        let value = try ValueEncoder().encode(sample)
        #expect(try ValueDecoder().decode(TodoList.self, from: value) == sample)
        // Also through the binary codec and tagged JSON.
        let viaBinary = try BinaryValueCodec.decode(BinaryValueCodec.encode(value))
        #expect(try ValueDecoder().decode(TodoList.self, from: viaBinary) == sample)
        let viaJSON = try JSONParser.parse(JSONWriter.encode(value, options: .tagged), options: .tagged)
        #expect(try ValueDecoder().decode(TodoList.self, from: viaJSON) == sample)
    }

    @Test("nil optionals are written as explicit null, at every level")
    func explicitNulls() throws {
        var list = sample
        list.owner = nil
        let value = try ValueEncoder().encode(list)
        #expect(value["owner"] == .null)
        #expect(value.mapValue?.keys.contains("owner") == true)
        #expect(value["items"]?.arrayValue?[0]["note"] == .null)
        #expect(try ValueEncoder().encode(Optional<Int>.none) == .null)
        #expect(try ValueEncoder().encode([Int?.none, 1]) == [nil, 1])
        #expect(try ValueDecoder().decode(TodoList.self, from: value).owner == nil)
    }

    @Test("a missing optional decodes as nil; null decodes as nil")
    func missingOptional() throws {
        #expect(try ValueDecoder().decode(TodoItem.self, from: ["title": "t", "done": true, "tags": .array([])]).note == nil)
        #expect(try ValueDecoder().decode(TodoItem.self, from: ["title": "t", "done": true, "tags": .array([]), "note": nil]).note == nil)
        #expect(try ValueDecoder().decode(Int?.self, from: .null) == nil)
    }

    @Test("scalars at the top level encode directly")
    func topLevelScalars() throws {
        let encoder = ValueEncoder()
        #expect(try encoder.encode("s") == "s")
        #expect(try encoder.encode(true) == true)
        #expect(try encoder.encode(7) == 7)
        #expect(try encoder.encode(Int64.min) == .int(.min))
        #expect(try encoder.encode(Int8(-3)) == -3)
        #expect(try encoder.encode(UInt32.max) == .int(Int64(UInt32.max)))
        #expect(try encoder.encode(2.5) == 2.5)
        #expect(try encoder.encode(Float(0.5)) == 0.5)
        #expect(try encoder.encode(Date(timeIntervalSince1970: -1.5)) == .timestamp(Timestamp(seconds: -2, nanos: 500_000_000)))
        #expect(try encoder.encode(Timestamp(seconds: 5, nanos: 6)) == .timestamp(Timestamp(seconds: 5, nanos: 6)))
        #expect(try encoder.encode(Data([9])) == .bytes([9]))
        #expect(try encoder.encode(Value.reference("a/b")) == .reference("a/b"))
        #expect(try encoder.encode(ListKind.personal) == "personal")
        #expect(try encoder.encode(["x": 1.5]) == ["x": 1.5])
    }

    @Test("maps and arrays of Value, optionals and nested ones encode as they are, at any level")
    func valueCollections() throws {
        let encoder = ValueEncoder()
        let every: [String: Value] = ["null": .null, "b": true, "i": .int(-4), "d": .double(.nan), "t": .timestamp(Timestamp(seconds: 3)),
                                      "s": "x", "bytes": .bytes([0, 255]), "ref": .reference("a/b"), "geo": .geoPoint(GeoPoint(latitude: 1, longitude: 2)),
                                      "a": [1, "two"], "m": ["k": ["deep": 1]], "": "empty key", "a.b": "dotted"]
        #expect(try encoder.encode(every) == .map(every))
        #expect(try encoder.encode([Value]([.null, ["k": 1], [2]])) == [.null, ["k": 1], [2]])
        // Optionals of the types written directly: the value when set, null when not.
        #expect(try encoder.encode(Optional("s")) == "s")
        #expect(try encoder.encode(Optional<Int>.none) == .null)
        #expect(try encoder.encode(Optional(Value.int(1))) == .int(1))
        #expect(try encoder.encode(Optional(["k": Value.bool(true)])) == ["k": true])
        struct Holder: Encodable { var fields: [String: Value]; var list: [Value]?; var when: Date? }
        #expect(try encoder.encode(Holder(fields: every, list: [1], when: nil)) == ["fields": .map(every), "list": [1], "when": .null])
        // Sentinels still become transforms beside a map of values.
        struct Mixed: Encodable { var fields: [String: Value]; var at = FieldValue.serverTimestamp() }
        let (value, transforms) = try encoder.encodeWithTransforms(Mixed(fields: ["n": 1]))
        #expect(value == ["fields": ["n": 1]])
        #expect(transforms.map(\.path.description) == ["at"])
    }

    @Test("Date ↔ timestamp, Data ↔ bytes, GeoPoint ↔ geopoint, DocumentPath ↔ reference")
    func specialTypes() throws {
        let decoder = ValueDecoder()
        let date = try decoder.decode(Date.self, from: .timestamp(Timestamp(seconds: 1, nanos: 500_000_000)))
        #expect(date == Date(timeIntervalSince1970: 1.5))
        #expect(try decoder.decode(Date.self, from: "1970-01-01T00:00:01.5Z") == Date(timeIntervalSince1970: 1.5))
        #expect(try decoder.decode(Timestamp.self, from: "2024-05-01T09:00:00Z") == Timestamp(seconds: 1_714_554_000))
        #expect(try decoder.decode(Data.self, from: .bytes([1, 2])) == Data([1, 2]))
        #expect(try decoder.decode(Data.self, from: "AQI=") == Data([1, 2]))
        #expect(try decoder.decode(GeoPoint.self, from: .geoPoint(GeoPoint(latitude: 1, longitude: 2))) == GeoPoint(latitude: 1, longitude: 2))
        #expect(try decoder.decode(GeoPoint.self, from: ["latitude": 1, "longitude": 2.5]) == GeoPoint(latitude: 1, longitude: 2.5))
        #expect(try decoder.decode(DocumentPath.self, from: .reference("a/b/c/d")).segments == ["a", "b", "c", "d"])
        #expect(try decoder.decode(DocumentPath.self, from: "a/b") == DocumentPath("a/b"))
        #expect(try ValueEncoder().encode(DocumentPath("a/b/c/d")) == .reference("a/b/c/d"))
        #expect(try ValueEncoder().encode(GeoPoint(latitude: 1, longitude: 2)) == .geoPoint(GeoPoint(latitude: 1, longitude: 2)))
    }

    @Test("special types report mismatches with the field path")
    func specialTypeErrors() {
        struct S: Codable { var at: Date; var blob: Data; var ref: DocumentPath }
        #expect(decodingMessage(S.self, from: ["at": 5, "blob": .bytes([]), "ref": .reference("a/b")]) == "at: expected timestamp, found integer")
        #expect(decodingMessage(S.self, from: ["at": "yesterday", "blob": .bytes([]), "ref": .reference("a/b")]) == "at: expected timestamp, found string")
        #expect(decodingMessage(S.self, from: ["at": .timestamp(.zero), "blob": "**", "ref": .reference("a/b")]) == "blob: expected bytes, found string")
        #expect(decodingMessage(S.self, from: ["at": .timestamp(.zero), "blob": .bytes([]), "ref": 1]) == "ref: expected reference, found integer")
        #expect(decodingMessage(S.self, from: ["at": .timestamp(.zero), "blob": .bytes([]), "ref": .reference("a")])
            == "ref: invalid document path: invalid-argument: invalid document path 'a': a document path has an even number of segments (collection/document/…)")
    }

    @Test("enums with raw values and with associated values round-trip")
    func enums() throws {
        #expect(try ValueDecoder().decode(ListKind.self, from: "shared") == .shared)
        #expect(try ValueDecoder().decode(ListPriority.self, from: 1) == .low)
        #expect(decodingMessage(ListKind.self, from: "nope") != nil)
        for shape in [TestShape.circle(radius: 1.5), .square(side: 2), .dot] {
            let value = try ValueEncoder().encode(shape)
            #expect(try ValueDecoder().decode(TestShape.self, from: value) == shape)
        }
        #expect(try ValueEncoder().encode(TestShape.circle(radius: 1.5)) == ["circle": ["radius": 1.5]])
    }

    @Test("dictionaries with string and integer keys round-trip")
    func dictionaries() throws {
        let byString: [String: [Int]] = ["a": [1], "b.c": [], "": [2, 3]]
        let value = try ValueEncoder().encode(byString)
        #expect(value == ["a": [1], "b.c": .array([]), "": [2, 3]])
        #expect(try ValueDecoder().decode([String: [Int]].self, from: value) == byString)
        let byInt: [Int: String] = [1: "one", -2: "minus two"]
        let intValue = try ValueEncoder().encode(byInt)
        #expect(intValue == ["1": "one", "-2": "minus two"])
        #expect(try ValueDecoder().decode([Int: String].self, from: intValue) == byInt)
    }

    @Test("decode errors name the field path", arguments: [
        (Value.map(["name": "x", "items": [["title": "a", "done": true, "tags": .array([])], ["title": "b", "done": true, "tags": .array([])], ["title": 5, "done": true, "tags": .array([])]]]),
         "items[2].title: expected string, found integer"),
        (.map(["name": "x", "items": [["title": "a", "tags": .array([])]]]), "items[0].done: missing required field"),
        (.map(["name": "x", "items": [["title": "a", "done": true, "tags": ["ok", 3]]]]), "items[0].tags[1]: expected string, found integer"),
        (.map(["name": "x", "items": [["title": "a", "done": "yes", "tags": .array([])]]]), "items[0].done: expected boolean, found string"),
        (.map(["name": "x", "items": "none"]), "items: expected array, found string"),
        (.map(["items": .array([])]), "name: missing required field"),
        (.map(["name": nil, "items": .array([])]), "name: expected string, found null"),
        (.array([]), "value: expected map, found array"),
    ])
    func errorPaths(_ value: Value, _ message: String) {
        struct Small: Codable { var name: String; var items: [TodoItem] }
        #expect(decodingMessage(Small.self, from: value) == message)
    }

    @Test("nested arrays and dictionaries appear in the path")
    func nestedPaths() {
        struct Grid: Codable { var rows: [[Int]]; var byName: [String: TodoItem] }
        #expect(decodingMessage(Grid.self, from: ["rows": [[1], [2, "x"]], "byName": .map([:])]) == "rows[1][1]: expected integer, found string")
        #expect(decodingMessage(Grid.self, from: ["rows": .array([]), "byName": ["bob": ["title": 1]]]) == "byName.bob.title: expected string, found integer")
        #expect(decodingMessage([Int].self, from: [1, "x"]) == "[1]: expected integer, found string")
        #expect(decodingMessage(Int.self, from: "x") == "value: expected integer, found string")
    }

    @Test("integers decode into any integer type they fit, and fail with the range otherwise")
    func integerRanges() throws {
        struct Sizes: Codable { var i8: Int8?; var u8: UInt8?; var i32: Int32?; var u64: UInt64?; var i: Int? }
        let decoder = ValueDecoder()
        let ok = try decoder.decode(Sizes.self, from: ["i8": -128, "u8": 255, "i32": .int(Int64(Int32.min)), "u64": .int(.max), "i": .int(.min)])
        #expect(ok.i8 == -128 && ok.u8 == 255 && ok.i32 == .min && ok.u64 == UInt64(Int64.max) && ok.i == .min)
        #expect(decodingMessage(Sizes.self, from: ["i8": 128]) == "i8: 128 does not fit in Int8")
        #expect(decodingMessage(Sizes.self, from: ["u8": -1]) == "u8: -1 does not fit in UInt8")
        #expect(decodingMessage(Sizes.self, from: ["i32": .int(.max)]) == "i32: 9223372036854775807 does not fit in Int32")
        #expect(decodingMessage(Sizes.self, from: ["u64": -5]) == "u64: -5 does not fit in UInt64")
        #expect(decodingMessage([UInt16].self, from: [1, 70_000]) == "[1]: 70000 does not fit in UInt16")
    }

    @Test("doubles decode into integers only when exact")
    func doubleToInt() throws {
        struct N: Codable { var n: Int }
        #expect(try ValueDecoder().decode(N.self, from: ["n": 2.0]).n == 2)
        #expect(try ValueDecoder().decode(N.self, from: ["n": -0.0]).n == 0)
        #expect(decodingMessage(N.self, from: ["n": 2.5]) == "n: 2.5 is not an integer that fits in Int")
        #expect(decodingMessage(N.self, from: ["n": 1e20]) == "n: 1e+20 is not an integer that fits in Int")
        #expect(decodingMessage(N.self, from: ["n": .double(.nan)]) == "n: nan is not an integer that fits in Int")
        #expect(decodingMessage(N.self, from: ["n": .double(.infinity)]) == "n: inf is not an integer that fits in Int")
        #expect(try ValueDecoder().decode(Int8.self, from: 127.0) == 127)
        #expect(decodingMessage(Int8.self, from: 128.0) == "value: 128.0 is not an integer that fits in Int8")
        // Integers decode into floating point.
        #expect(try ValueDecoder().decode(Double.self, from: 3) == 3.0)
        #expect(try ValueDecoder().decode(Float.self, from: 0.5) == 0.5)
        #expect(decodingMessage(Double.self, from: "3") == "value: expected number, found string")
    }

    @Test("unsigned values beyond Int64 cannot be encoded, at any level")
    func unsignedOverflow() throws {
        struct U: Codable { var u: UInt64 }
        #expect(throws: EncodingError.self) { try ValueEncoder().encode(U(u: .max)) }
        #expect(throws: EncodingError.self) { try ValueEncoder().encode(UInt64.max) }
        #expect(throws: EncodingError.self) { try ValueEncoder().encode([UInt64.max]) }
        #expect(throws: EncodingError.self) { try ValueEncoder().encode(UInt.max) }
        #expect(try ValueEncoder().encode(U(u: UInt64(Int64.max))) == ["u": .int(.max)])
    }

    @Test("Value nested in a Codable type passes through untouched")
    func valuePassThrough() throws {
        struct Envelope: Codable, Equatable { var kind: String; var payload: Value }
        let e = Envelope(kind: "k", payload: [.timestamp(.zero), .bytes([1]), .reference("a/b"), .double(.nan)])
        let value = try ValueEncoder().encode(e)
        #expect(value["payload"] == e.payload)
        #expect(try ValueDecoder().decode(Envelope.self, from: value) == e)
        #expect(try ValueDecoder().decode(Value.self, from: ["x": 1]) == ["x": 1])
    }

    @Test("Value also travels through Foundation's JSON coders")
    func valueThroughFoundation() throws {
        let value: Value = ["a": [1, 2.5, "s", true, nil], "b": ["c": .int(.max)]]
        let data = try JSONEncoder().encode(value)
        #expect(try JSONDecoder().decode(Value.self, from: data) == value)
    }
}

@Suite("FieldValue sentinels and @ServerTimestamp")
struct SentinelTests {
    struct Stats: Encodable { var views = FieldValue.increment(Int64(1)); var label = "s" }
    struct Touch: Encodable {
        var title = "t"
        var updatedAt = FieldValue.serverTimestamp()
        var score = FieldValue.increment(0.5)
        var stats = Stats()
        var tags = FieldValue.arrayUnion(["a", 1])
        var old = FieldValue.arrayRemove(["b"])
        var gone = FieldValue.delete()
    }

    @Test("sentinels become transforms at their field path and leave no field")
    func transforms() throws {
        let (value, transforms) = try ValueEncoder().encodeWithTransforms(Touch())
        #expect(value == ["title": "t", "stats": ["label": "s"]])
        let byPath = Dictionary(uniqueKeysWithValues: transforms.map { ($0.path.description, $0.transform) })
        #expect(byPath == [
            "updatedAt": .serverTimestamp, "score": .increment(.double(0.5)), "stats.views": .increment(.int(1)),
            "tags": .arrayUnion(["a", 1]), "old": .arrayRemove(["b"]), "gone": .delete,
        ])
        #expect(transforms.map(\.path.description) == ["updatedAt", "score", "stats.views", "tags", "old", "gone"])
        #expect(transforms[2].path.segments == ["stats", "views"])
    }

    @Test("a sentinel under a key with dots keeps the key as one segment")
    func dottedKeys() throws {
        let (value, transforms) = try ValueEncoder().encodeWithTransforms(["a.b": FieldValue.serverTimestamp()])
        #expect(value == .map([:]))
        #expect(transforms.count == 1)
        #expect(transforms.first?.path.segments == ["a.b"])
        #expect(transforms.first?.path.description == "`a.b`")
    }

    @Test("plain encode refuses sentinels, naming the field")
    func plainEncodeRefuses() {
        do {
            _ = try ValueEncoder().encode(Touch())
            Issue.record("expected an error")
        } catch let EncodingError.invalidValue(_, context) {
            #expect(context.debugDescription == "FieldValue at 'updatedAt' is only allowed in document writes")
        } catch {
            Issue.record("unexpected \(error)")
        }
    }

    @Test("a sentinel inside an array is an error")
    func sentinelInArray() {
        struct Bad: Encodable { var list = [FieldValue.serverTimestamp()] }
        #expect(throws: EncodingError.self) { try ValueEncoder().encodeWithTransforms(Bad()) }
    }

    @Test("a sentinel cannot go through another encoder")
    func otherEncoder() {
        #expect(throws: EncodingError.self) { try JSONEncoder().encode(["t": FieldValue.serverTimestamp()]) }
    }

    struct Item: Codable, Equatable {
        var title: String
        @ServerTimestamp var createdAt: Date?
    }

    @Test("@ServerTimestamp: nil becomes a server-timestamp transform, a date is written as a timestamp")
    func serverTimestampEncode() throws {
        let (value, transforms) = try ValueEncoder().encodeWithTransforms(Item(title: "a", createdAt: nil))
        #expect(value == ["title": "a"])
        #expect(transforms.count == 1)
        #expect(transforms.first?.path == FieldPath(segments: ["createdAt"]))
        #expect(transforms.first?.transform == .serverTimestamp)

        let set = try ValueEncoder().encodeWithTransforms(Item(title: "a", createdAt: Date(timeIntervalSince1970: 10)))
        #expect(set.0 == ["title": "a", "createdAt": .timestamp(Timestamp(seconds: 10))])
        #expect(set.1.isEmpty)
    }

    @Test("@ServerTimestamp decodes a timestamp, and nil from null or a missing field")
    func serverTimestampDecode() throws {
        let decoder = ValueDecoder()
        #expect(try decoder.decode(Item.self, from: ["title": "a", "createdAt": .timestamp(Timestamp(seconds: 10))]).createdAt == Date(timeIntervalSince1970: 10))
        #expect(try decoder.decode(Item.self, from: ["title": "a", "createdAt": nil]).createdAt == nil)
        #expect(try decoder.decode(Item.self, from: ["title": "a"]).createdAt == nil)
        #expect(decodingMessage(Item.self, from: ["title": "a", "createdAt": 5]) == "createdAt: expected timestamp, found integer")
    }

    @Test("FieldValue factories build the matching transforms")
    func factories() {
        #expect(FieldValue.increment(Int64(3)).transform == .increment(.int(3)))
        #expect(FieldValue.increment(2.5).transform == .increment(.double(2.5)))
        #expect(FieldValue.delete().transform == .delete)
        #expect(FieldValue.arrayUnion([1]).transform == .arrayUnion([1]))
    }
}

@Suite("UserRecord coding")
struct UserRecordTests {
    @Test("a full user record round-trips through Value and JSON")
    func roundTrip() throws {
        let user = UserRecord(
            uid: "u1", email: "a@example.com", emailVerified: true, displayName: "A", photoURL: nil, phoneNumber: "+15550100",
            disabled: false,
            metadata: .init(creationTime: Timestamp(seconds: 1_700_000_000, nanos: 123_000_000), lastSignInTime: Timestamp(seconds: 1_700_000_100)),
            providerData: [.init(providerId: "password", uid: "a@example.com", email: "a@example.com")],
            customClaims: ["admin": true, "level": 3], tokensValidAfterTime: nil)
        let value = try ValueEncoder().encode(user)
        #expect(value["photoURL"] == .null)
        #expect(value["metadata"]?["creationTime"] == .timestamp(Timestamp(seconds: 1_700_000_000, nanos: 123_000_000)))
        #expect(value["customClaims"] == ["admin": true, "level": 3])
        #expect(try ValueDecoder().decode(UserRecord.self, from: value) == user)
        let tagged = try JSONParser.parse(JSONWriter.encode(value, options: .tagged), options: .tagged)
        #expect(try ValueDecoder().decode(UserRecord.self, from: tagged) == user)
    }
}
