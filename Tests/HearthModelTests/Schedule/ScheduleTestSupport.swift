import Foundation
import Testing
@testable import HearthModel

/// Parses an RFC 3339 literal used in a test table.
func ts(_ text: String, nanos: Int32 = 0) -> Timestamp {
    guard let stamp = Timestamp(rfc3339: text) else { fatalError("bad test timestamp \(text)") }
    return Timestamp(seconds: stamp.seconds, nanos: nanos)
}

/// The next `count` firings as RFC 3339 strings.
func fires(_ expression: String, in zone: String = "UTC", after: String, count: Int) throws -> [String] {
    try Schedule(expression, timeZone: zone).nextFires(after: ts(after), count: count).map(\.rfc3339)
}

/// One row of a next-fire table: the firings expected after `after`.
struct FireCase: Sendable, CustomTestStringConvertible {
    var expression: String
    var zone: String = "UTC"
    var after: String
    var expected: [String]

    init(_ expression: String, in zone: String = "UTC", after: String, _ expected: [String]) {
        self.expression = expression
        self.zone = zone
        self.after = after
        self.expected = expected
    }

    var testDescription: String { "'\(expression)' in \(zone) after \(after)" }

    func check() throws {
        let actual = try fires(expression, in: zone, after: after, count: expected.count)
        #expect(actual == expected, "\(testDescription)")
    }
}
