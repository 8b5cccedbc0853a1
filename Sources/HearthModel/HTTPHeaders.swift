/// Header fields: names compare without case; order and repeats are kept.
public struct HTTPHeaders: Sendable, Hashable, Sequence {
    public private(set) var fields: [(name: String, value: String)]

    public init(_ fields: [(name: String, value: String)] = []) { self.fields = fields }

    /// No fields yet, with room for `capacity` of them (a head's count, or a response's usual few).
    public init(capacity: Int) {
        fields = []
        fields.reserveCapacity(capacity)
    }

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
    public static func lowercasedName(_ name: String) -> String { ASCIICase.lowercased(name) }

    /// The same fields, in order, with their names lower-cased (as a callable's event carries them).
    public var withLowercasedNames: HTTPHeaders {
        var out = HTTPHeaders(capacity: fields.count)
        for (name, value) in fields { out.add(HTTPHeaders.lowercasedName(name), value) }
        return out
    }

    /// Header names compare ASCII case-insensitively (names are tokens: ASCII only), without
    /// allocating lower-cased copies on every lookup.
    public static func sameName(_ a: String, _ b: String) -> Bool { ASCIICase.equal(a, b) }

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

extension HTTPHeaders: ExpressibleByDictionaryLiteral {
    /// The fields in the literal's order: `["Accept": "*/*", "User-Agent": "app/1"]`.
    public init(dictionaryLiteral elements: (String, String)...) {
        self.init(elements.map { (name: $0.0, value: $0.1) })
    }
}
