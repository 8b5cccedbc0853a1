/// Header fields: names compare without case; order and repeats are kept.
public struct HTTPHeaders: Sendable, Hashable, Sequence {
    public private(set) var fields: [(name: String, value: String)]

    public init(_ fields: [(name: String, value: String)] = []) { self.fields = fields }

    /// The first value of `name`.
    public subscript(name: String) -> String? {
        let lower = name.lowercased()
        return fields.first { $0.name.lowercased() == lower }?.value
    }

    /// Every value of `name`, in order.
    public func values(_ name: String) -> [String] {
        let lower = name.lowercased()
        return fields.filter { $0.name.lowercased() == lower }.map(\.value)
    }

    public mutating func add(_ name: String, _ value: String) { fields.append((name, value)) }

    /// Replaces every value of `name` with one.
    public mutating func set(_ name: String, _ value: String) {
        let lower = name.lowercased()
        fields.removeAll { $0.name.lowercased() == lower }
        fields.append((name, value))
    }

    public func makeIterator() -> IndexingIterator<[(name: String, value: String)]> { fields.makeIterator() }

    public static func == (a: HTTPHeaders, b: HTTPHeaders) -> Bool {
        a.fields.count == b.fields.count && zip(a.fields, b.fields).allSatisfy { $0.name == $1.name && $0.value == $1.value }
    }

    public func hash(into hasher: inout Hasher) {
        for f in fields { hasher.combine(f.name); hasher.combine(f.value) }
    }

    /// As it crosses the unit boundary: an array of [name, value] pairs.
    public var value: Value { .array(fields.map { .array([.string($0.name), .string($0.value)]) }) }

    public init(value: Value?) {
        fields = (value?.arrayValue ?? []).compactMap { pair in
            guard let p = pair.arrayValue, p.count == 2, let n = p[0].stringValue, let v = p[1].stringValue else { return nil }
            return (n, v)
        }
    }
}

