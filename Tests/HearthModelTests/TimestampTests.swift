import Foundation
import HearthModel
import Testing

struct FormatCase: Sendable, CustomTestStringConvertible {
    var timestamp: Timestamp
    var text: String
    var testDescription: String { text }
}

struct ParseCase: Sendable, CustomTestStringConvertible {
    var text: String
    var seconds: Int64
    var nanos: Int32
    var testDescription: String { text }
}

@Suite("Timestamp")
struct TimestampTests {
    @Test("RFC 3339 output is UTC with 0, 3, 6 or 9 fractional digits", arguments: [
        FormatCase(timestamp: Timestamp(seconds: 0), text: "1970-01-01T00:00:00Z"),
        FormatCase(timestamp: Timestamp(seconds: 0, nanos: 500_000_000), text: "1970-01-01T00:00:00.500Z"),
        FormatCase(timestamp: Timestamp(seconds: 0, nanos: 123_456_000), text: "1970-01-01T00:00:00.123456Z"),
        FormatCase(timestamp: Timestamp(seconds: 0, nanos: 100_000), text: "1970-01-01T00:00:00.000100Z"),
        FormatCase(timestamp: Timestamp(seconds: 0, nanos: 1), text: "1970-01-01T00:00:00.000000001Z"),
        FormatCase(timestamp: Timestamp(seconds: 0, nanos: 999_999_999), text: "1970-01-01T00:00:00.999999999Z"),
        FormatCase(timestamp: Timestamp(seconds: -1), text: "1969-12-31T23:59:59Z"),
        FormatCase(timestamp: Timestamp(seconds: -1, nanos: 500_000_000), text: "1969-12-31T23:59:59.500Z"),
        FormatCase(timestamp: Timestamp(seconds: -31_536_000), text: "1969-01-01T00:00:00Z"),
        FormatCase(timestamp: Timestamp(seconds: 951_782_400), text: "2000-02-29T00:00:00Z"),
        FormatCase(timestamp: Timestamp(seconds: 1_714_554_000), text: "2024-05-01T09:00:00Z"),
        FormatCase(timestamp: Timestamp(seconds: Timestamp.minSeconds), text: "0001-01-01T00:00:00Z"),
        FormatCase(timestamp: Timestamp(seconds: Timestamp.maxSeconds, nanos: 999_999_999), text: "9999-12-31T23:59:59.999999999Z"),
        FormatCase(timestamp: Timestamp(seconds: -2_208_988_800), text: "1900-01-01T00:00:00Z"),
        FormatCase(timestamp: Timestamp(seconds: 4_107_542_400), text: "2100-03-01T00:00:00Z"),
    ])
    func format(_ c: FormatCase) {
        #expect(c.timestamp.rfc3339 == c.text)
        #expect(c.timestamp.description == c.text)
        #expect(Timestamp(rfc3339: c.text) == c.timestamp)
    }

    @Test("RFC 3339 input accepts offsets, 1 to 9 fractional digits, lower case and a space separator", arguments: [
        ParseCase(text: "2024-05-01T09:00:00Z", seconds: 1_714_554_000, nanos: 0),
        ParseCase(text: "2024-05-01T18:00:00+09:00", seconds: 1_714_554_000, nanos: 0),
        ParseCase(text: "2024-05-01T03:30:00-05:30", seconds: 1_714_554_000, nanos: 0),
        ParseCase(text: "2024-05-01T09:00:00+00:00", seconds: 1_714_554_000, nanos: 0),
        ParseCase(text: "2024-05-01T09:00:00-00:00", seconds: 1_714_554_000, nanos: 0),
        ParseCase(text: "2024-05-01t09:00:00z", seconds: 1_714_554_000, nanos: 0),
        ParseCase(text: "2024-05-01 09:00:00Z", seconds: 1_714_554_000, nanos: 0),
        ParseCase(text: "2024-05-01T09:00:00.1Z", seconds: 1_714_554_000, nanos: 100_000_000),
        ParseCase(text: "2024-05-01T09:00:00.12Z", seconds: 1_714_554_000, nanos: 120_000_000),
        ParseCase(text: "2024-05-01T09:00:00.123Z", seconds: 1_714_554_000, nanos: 123_000_000),
        ParseCase(text: "2024-05-01T09:00:00.1234Z", seconds: 1_714_554_000, nanos: 123_400_000),
        ParseCase(text: "2024-05-01T09:00:00.12345Z", seconds: 1_714_554_000, nanos: 123_450_000),
        ParseCase(text: "2024-05-01T09:00:00.123456Z", seconds: 1_714_554_000, nanos: 123_456_000),
        ParseCase(text: "2024-05-01T09:00:00.1234567Z", seconds: 1_714_554_000, nanos: 123_456_700),
        ParseCase(text: "2024-05-01T09:00:00.12345678Z", seconds: 1_714_554_000, nanos: 123_456_780),
        ParseCase(text: "2024-05-01T09:00:00.123456789Z", seconds: 1_714_554_000, nanos: 123_456_789),
        ParseCase(text: "2024-05-01T09:00:00.000000001+01:00", seconds: 1_714_550_400, nanos: 1),
        ParseCase(text: "2024-05-01T09:00:00.1234567891Z", seconds: 1_714_554_000, nanos: 123_456_789),
        ParseCase(text: "2024-05-01T09:00:00.999999999999Z", seconds: 1_714_554_000, nanos: 999_999_999),
        ParseCase(text: "1969-12-31T23:59:59.999999999Z", seconds: -1, nanos: 999_999_999),
        ParseCase(text: "1970-01-01T00:00:00+00:01", seconds: -60, nanos: 0),
        ParseCase(text: "1970-01-01T00:59:00+23:59", seconds: -82_800, nanos: 0),
        ParseCase(text: "0001-01-01T00:00:00Z", seconds: -62_135_596_800, nanos: 0),
        ParseCase(text: "2024-02-29T12:00:00Z", seconds: 1_709_208_000, nanos: 0),
        ParseCase(text: "2000-02-29T00:00:00Z", seconds: 951_782_400, nanos: 0),
        ParseCase(text: "2016-12-31T23:59:60Z", seconds: 1_483_228_799, nanos: 0),  // a leap second reads as :59
    ])
    func parse(_ c: ParseCase) throws {
        let t = try #require(Timestamp(rfc3339: c.text))
        #expect(t.seconds == c.seconds)
        #expect(t.nanos == c.nanos)
    }

    @Test("malformed or impossible dates are refused", arguments: [
        "", "2024-05-01", "2024-05-01T09:00:00", "2024-05-01T09:00:00.Z", "2024-05-01T09:00:00.",
        "2024-13-01T00:00:00Z", "2024-00-01T00:00:00Z", "2023-02-29T00:00:00Z", "2100-02-29T00:00:00Z", "2024-02-30T00:00:00Z",
        "2024-04-31T00:00:00Z", "2024-05-00T00:00:00Z", "2024-05-32T00:00:00Z", "2024-05-01T24:00:00Z", "2024-05-01T09:60:00Z",
        "2024-05-01T09:00:61Z", "2024-05-01X09:00:00Z", "2024/05/01T09:00:00Z", "2024-05-01T09:00:00+0900",
        "2024-05-01T09:00:00+24:00", "2024-05-01T09:00:00+09:60", "2024-05-01T09:00:00+09", "2024-05-01T09:00:00+09:00:00",
        "2024-05-01T09:00:00Zjunk", "2024-05-01T09:00:00 Z", "+2024-05-01T09:00:00Z", "2024-5-01T09:00:00Z",
        "2024-05-01T9:00:00Z", "２024-05-01T09:00:00Z", "2024-05-01T09:00:00.12a3Z", "-024-05-01T09:00:00Z",
    ])
    func invalid(_ text: String) {
        #expect(Timestamp(rfc3339: text) == nil)
    }

    @Test("nanoseconds outside 0..<1e9 carry into the seconds", arguments: [
        (Int64(10), Int32(-1), Int64(9), Int32(999_999_999)),
        (10, 1_500_000_000, 11, 500_000_000),
        (10, 1_000_000_000, 11, 0),
        (10, -1_000_000_000, 9, 0),
        (10, -2_000_000_000, 8, 0),
        (10, -1_500_000_000, 8, 500_000_000),
        (10, -999_999_999, 9, 1),
        (0, Int32.max, 2, 147_483_647),
        (0, Int32.min, -3, 852_516_352),
        (0, 999_999_999, 0, 999_999_999),
    ])
    func normalisation(_ seconds: Int64, _ nanos: Int32, _ expectedSeconds: Int64, _ expectedNanos: Int32) {
        let t = Timestamp(seconds: seconds, nanos: nanos)
        #expect(t.seconds == expectedSeconds)
        #expect(t.nanos == expectedNanos)
        #expect((0..<1_000_000_000).contains(t.nanos))
    }

    @Test("conversions to and from epoch counts and dates, negative times included")
    func conversions() {
        #expect(Timestamp(microseconds: -1) == Timestamp(seconds: -1, nanos: 999_999_000))
        #expect(Timestamp(microseconds: -1).microsecondsSinceEpoch == -1)
        #expect(Timestamp(microseconds: 1_500_000) == Timestamp(seconds: 1, nanos: 500_000_000))
        #expect(Timestamp(nanosecondsSinceEpoch: -1) == Timestamp(seconds: -1, nanos: 999_999_999))
        #expect(Timestamp(nanosecondsSinceEpoch: -1).nanosecondsSinceEpoch == -1)
        #expect(Timestamp(nanosecondsSinceEpoch: -1_000_000_000) == Timestamp(seconds: -1))
        #expect(Timestamp(nanosecondsSinceEpoch: 1_234_567_890_123).nanosecondsSinceEpoch == 1_234_567_890_123)
        #expect(Timestamp(date: Date(timeIntervalSince1970: -0.25)) == Timestamp(seconds: -1, nanos: 750_000_000))
        #expect(Timestamp(date: Date(timeIntervalSince1970: 1_700_000_000)) == Timestamp(seconds: 1_700_000_000))
        #expect(Timestamp(seconds: -1, nanos: 750_000_000).date == Date(timeIntervalSince1970: -0.25))
        #expect(Timestamp(seconds: 2, nanos: 500_000_000).secondsSinceEpoch == 2.5)
    }

    @Test("arithmetic with durations carries nanoseconds both ways")
    func arithmetic() {
        let t = Timestamp(seconds: 10, nanos: 900_000_000)
        #expect(t + .milliseconds(200) == Timestamp(seconds: 11, nanos: 100_000_000))
        #expect(t - .milliseconds(1950) == Timestamp(seconds: 8, nanos: 950_000_000))
        #expect(t.advanced(by: .seconds(-11)) == Timestamp(seconds: -1, nanos: 900_000_000))
        #expect(t + .nanoseconds(100_000_000) == Timestamp(seconds: 11))
        #expect(Timestamp(seconds: 11, nanos: 100_000_000) - t == .milliseconds(200))
        #expect(t - Timestamp(seconds: 11, nanos: 100_000_000) == .milliseconds(-200))
        #expect(t - t == .zero)
    }

    @Test("ordering: seconds first, then nanoseconds")
    func ordering() {
        let ordered = [Timestamp(seconds: -2, nanos: 999_999_999), Timestamp(seconds: -1), Timestamp(seconds: -1, nanos: 1), .zero, Timestamp(seconds: 0, nanos: 1), Timestamp(seconds: 1)]
        for (a, b) in zip(ordered, ordered.dropFirst()) {
            #expect(a < b)
            #expect(!(b < a))
        }
        #expect(Timestamp(seconds: Timestamp.minSeconds).isInFirestoreRange)
        #expect(!Timestamp(seconds: Timestamp.minSeconds - 1).isInFirestoreRange)
        #expect(Timestamp(seconds: Timestamp.maxSeconds, nanos: 999_999_999).isInFirestoreRange)
        #expect(!Timestamp(seconds: Timestamp.maxSeconds + 1).isInFirestoreRange)
    }

    @Test("random timestamps in Firestore's range survive format and parse")
    func randomRoundTrip() throws {
        var rng = SplitMix64(seed: 0x7153)
        for _ in 0..<5000 {
            let t = Timestamp(seconds: Int64.random(in: Timestamp.minSeconds...Timestamp.maxSeconds, using: &rng),
                              nanos: [0, 1_000_000, 1000, 1][Int.random(in: 0...3, using: &rng)] * Int32.random(in: 0...999, using: &rng))
            #expect(Timestamp(rfc3339: t.rfc3339) == t, "\(t.rfc3339)")
        }
    }

    @Test("formatting agrees with Foundation's ISO 8601 formatter")
    func agreesWithFoundation() {
        let formatter = ISO8601DateFormatter()
        formatter.timeZone = TimeZone(identifier: "UTC")
        var rng = SplitMix64(seed: 0x1509)
        for _ in 0..<2000 {
            let seconds = Int64.random(in: -2_208_988_800...4_102_444_800, using: &rng)  // 1900…2100
            let ours = Timestamp(seconds: seconds).rfc3339
            let theirs = formatter.string(from: Date(timeIntervalSince1970: TimeInterval(seconds)))
            #expect(ours == theirs)
            #expect(formatter.date(from: ours).map { Int64($0.timeIntervalSince1970) } == seconds)
        }
    }

    @Test("timestamps encode as seconds and nanos through Foundation's coders")
    func foundationCoding() throws {
        let t = Timestamp(seconds: -5, nanos: 7)
        let data = try JSONEncoder().encode(t)
        #expect(try JSONParser.parse(Array(data)) == ["seconds": -5, "nanos": 7])
        #expect(try JSONDecoder().decode(Timestamp.self, from: data) == t)
    }
}

/// Arithmetic on times and durations from outside (tokens, requests, units) saturates instead of trapping.
@Suite("Time arithmetic at the limits")
struct TimeLimitTests {
    static let huge = Duration(secondsComponent: 0, attosecondsComponent: 0) + .seconds(Int64.max) + .seconds(Int64.max)

    @Test("timestamp plus or minus an enormous duration saturates at the far ends")
    func saturates() {
        let t = Timestamp(seconds: 1_000)
        #expect(t + .seconds(Int64.max) == .distantFuture)
        #expect(Timestamp(seconds: -10) - .seconds(Int64.max) == .distantPast)
        #expect(t - .seconds(Int64.max) == Timestamp(seconds: 1_000 - Int64.max), "representable, so exact")
        #expect(Timestamp(seconds: Int64.max) + .seconds(1) == .distantFuture)
        #expect(Timestamp(seconds: Int64.min) - .seconds(1) == .distantPast)
        #expect(t + TimeLimitTests.huge == .distantFuture, "beyond 2^63 s, where Duration.components traps")
        #expect(t - TimeLimitTests.huge == .distantPast)
        #expect(t + (.zero - TimeLimitTests.huge) == .distantPast)
        #expect(TimeLimitTests.huge.secondsDouble > 1.8e19)
        #expect(Timestamp(seconds: Int64.max) - Timestamp(seconds: Int64.min) == .seconds(Int64.max))
        #expect(Timestamp(seconds: Int64.min) - Timestamp(seconds: Int64.max) == .seconds(Int64.min))
        #expect(Timestamp(seconds: Int64.max, nanos: 2_000_000_000).seconds == Int64.max, "carrying nanos saturates too")
        #expect(Timestamp.distantFuture.microsecondsSinceEpoch == Int64.max)
        #expect(Timestamp.distantPast.nanosecondsSinceEpoch == Int64.min)
        #expect(Timestamp(date: Date(timeIntervalSince1970: .infinity)) == .distantFuture)
    }

    @Test("seconds(double:) is total: NaN is zero, values past Int64 clamp, ordinary values stay exact to the nanosecond")
    func secondsDouble() {
        #expect(Duration.seconds(double: .nan) == .zero)
        #expect(Duration.seconds(double: .infinity) == .seconds(Int64.max))
        #expect(Duration.seconds(double: -.infinity) == .seconds(Int64.min))
        #expect(Duration.seconds(double: 1e300) == .seconds(Int64.max))
        #expect(Duration.seconds(double: 9.3e18) == .seconds(Int64.max))
        #expect(Duration.seconds(double: 1.5) == .milliseconds(1500))
        #expect(Duration.seconds(double: -0.25) == .milliseconds(-250))
    }

    @Test("secondsDouble is the duration in seconds, either side of zero and beyond Int64 seconds")
    func durationInSeconds() {
        #expect(Duration.zero.secondsDouble == 0)
        #expect(Duration.milliseconds(1500).secondsDouble == 1.5)
        #expect(Duration.milliseconds(-250).secondsDouble == -0.25)
        #expect(Duration.nanoseconds(1).secondsDouble == 1e-9)
        #expect(Duration(secondsComponent: 0, attosecondsComponent: 1).secondsDouble == 1e-18)
        #expect(Duration.seconds(-3).secondsDouble == -3)
        #expect(Duration.seconds(Int64.max).secondsDouble == 9.223372036854775807e18)
        #expect(Duration.seconds(Int64.min).secondsDouble == -9.223372036854775808e18)
        #expect(TimeLimitTests.huge.secondsDouble == 2 * 9.223372036854775807e18)
        #expect((Duration.zero - TimeLimitTests.huge).secondsDouble == -2 * 9.223372036854775807e18)
        #expect(abs(Duration.microseconds(123_456_789).secondsDouble - 123.456789) < 1e-12)
    }

    @Test("a timestamp decoded or built with nanos outside the second is normalized, and encodes without trapping")
    func normalized() throws {
        let decoded = try JSONDecoder().decode(Timestamp.self, from: Data(#"{"seconds": 10, "nanos": -1}"#.utf8))
        #expect(decoded == Timestamp(seconds: 9, nanos: 999_999_999))
        var t = Timestamp(seconds: 5)
        t.nanos = -7  // a unit can still set the field
        let bytes = BinaryValueCodec.encode(.timestamp(t))
        #expect(try BinaryValueCodec.decode(bytes) == .timestamp(Timestamp(seconds: 4, nanos: 999_999_993)))
    }
}
