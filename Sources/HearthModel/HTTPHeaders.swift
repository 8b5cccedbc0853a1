/// Header fields: names compare without case; order and repeats are kept.
public struct HTTPHeaders: Sendable, Hashable, Sequence {
    public private(set) var fields: [(name: String, value: String)]

    public init(_ fields: [(name: String, value: String)] = []) { self.fields = fields }

    /// The first value of `name`.
    public subscript(name: String) -> String? {
        // By index: `first(where:)` hands each field over as a copy, retaining both its strings.
        for i in fields.indices where HTTPHeaders.sameName(fields[i].name, name) { return fields[i].value }
        return nil
    }

    /// Every value of `name`, in order.
    public func values(_ name: String) -> [String] {
        fields.filter { HTTPHeaders.sameName($0.name, name) }.map(\.value)
    }

    /// A header name with its ASCII letters lower-cased, as `sameName` compares them (names are
    /// ASCII tokens); the same string when it has none upper-case, as most clients send them.
    public static func lowercasedName(_ name: String) -> String {
        guard name.utf8.contains(where: { $0 >= 0x41 && $0 <= 0x5A }) else { return name }
        return String(decoding: name.utf8.map { $0 >= 0x41 && $0 <= 0x5A ? $0 | 0x20 : $0 }, as: UTF8.self)
    }

    /// Header names compare ASCII case-insensitively (names are tokens: ASCII only), without
    /// allocating lower-cased copies on every lookup.
    public static func sameName(_ a: String, _ b: String) -> Bool {
        // Most names looked up differ in length, which a native string knows without a scan.
        guard a.utf8.count == b.utf8.count else { return false }
        let inPlace = a.utf8.withContiguousStorageIfAvailable { x in
            b.utf8.withContiguousStorageIfAvailable { y in sameBytes(x, y) }
        }
        if let inPlace, let same = inPlace { return same }
        return sameBytes(Array(a.utf8), Array(b.utf8))  // a bridged or otherwise non-contiguous string
    }

    private static func sameBytes<C: RandomAccessCollection>(_ x: C, _ y: C) -> Bool where C.Element == UInt8, C.Index == Int {
        guard x.count == y.count else { return false }
        for (p, q) in zip(x, y) where p != q {
            // ASCII letters differ only in bit 0x20; anything else must match exactly.
            guard p | 0x20 == q | 0x20, (p | 0x20) >= 0x61, (p | 0x20) <= 0x7A else { return false }
        }
        return true
    }

    public mutating func add(_ name: String, _ value: String) { fields.append((name, value)) }

    /// Replaces every value of `name` with one.
    public mutating func set(_ name: String, _ value: String) {
        fields.removeAll { HTTPHeaders.sameName($0.name, name) }
        fields.append((name, value))
    }

    public func makeIterator() -> IndexingIterator<[(name: String, value: String)]> { fields.makeIterator() }

    public static func == (a: HTTPHeaders, b: HTTPHeaders) -> Bool {
        a.fields.count == b.fields.count && zip(a.fields, b.fields).allSatisfy { $0.name == $1.name && $0.value == $1.value }
    }

    public func hash(into hasher: inout Hasher) {
        for f in fields { hasher.combine(f.name); hasher.combine(f.value) }
    }
}
