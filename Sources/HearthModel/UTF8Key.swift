/// A string that is equal to another only when their UTF-8 bytes are, as Firestore compares ids
/// and SQLite compares keys. Swift's own `String ==` and hashing follow canonical equivalence, so
/// "café" (U+00E9) equals "cafe\u{301}" (e and a combining accent): two ids Firestore keeps apart,
/// and which a dictionary keyed by `String` would merge. Key paths and ids with this instead.
public struct UTF8Key: Hashable, Sendable, CustomStringConvertible {
    public let string: String

    public init(_ string: String) { self.string = string }
    public init(_ string: Substring) { self.string = String(string) }

    public static func == (a: UTF8Key, b: UTF8Key) -> Bool { UTF8Key.equal(a.string, b.string) }
    public func hash(into hasher: inout Hasher) { UTF8Key.hash(string, into: &hasher) }
    public var description: String { string }

    /// Byte equality of two strings.
    public static func equal(_ a: String, _ b: String) -> Bool { Value.compareUTF8(a, b) == .same }

    /// Byte equality of two substrings (segments of a split path).
    public static func equal(_ a: Substring, _ b: Substring) -> Bool { a.utf8.elementsEqual(b.utf8) }

    /// Hashes a string's UTF-8 bytes, consistently with `equal`.
    public static func hash(_ string: String, into hasher: inout Hasher) {
        var copy = string
        copy.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
        hasher.combine(string.utf8.count)
    }
}

extension Dictionary where Key == String {
    /// The value whose key has exactly `key`'s bytes: a `String`-keyed dictionary's own subscript
    /// also finds a canonically equivalent key ("é" for "e\u{301}"), which Firestore keeps apart.
    public subscript(bytes key: String) -> Value? {
        guard let i = index(forKey: key), UTF8Key.equal(self[i].key, key) else { return nil }
        return self[i].value
    }
}
