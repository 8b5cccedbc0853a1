/// Firestore's vector values (embeddings): a map `{"__type__": "__vector__", "value": [numbers]}`,
/// as the SDKs write them (`FieldValue.vector([...])`, Python's `Vector([...])`). The `__type__`
/// key is the one field name of the reserved `__.*__` form a document may hold, and only in
/// this shape.
extension Value {
    public static let vectorTypeKey = "__type__"
    public static let vectorTypeName = "__vector__"
    /// The most components a vector search takes (Firestore's limit for a vector index).
    public static let maxVectorDimensions = 2048

    /// A vector value holding `components`.
    public static func vector(_ components: [Double]) -> Value {
        .map([vectorTypeKey: .string(vectorTypeName), "value": .array(components.map { .double($0) })])
    }

    /// The components when this is a vector value, else nil (`vectorItems` takes doubles only, as
    /// every SDK writes them).
    public var vectorComponents: [Double]? {
        vectorItems?.compactMap { if case .double(let d) = $0 { d } else { nil } }
    }

    /// Whether this is a vector value (checked without copying its components).
    public var isVector: Bool { vectorItems != nil }

    /// A vector value's dimension, or nil.
    public var vectorDimension: Int? { vectorItems?.count }

    /// The `value` array of a vector value. The type name is compared on bytes, as Firestore
    /// compares strings.
    public var vectorItems: [Value]? {
        guard case .map(let m) = self, m.count == 2, case .string(let type)? = m[Value.vectorTypeKey],
              type.utf8.elementsEqual(Value.vectorTypeName.utf8), case .array(let items)? = m["value"],
              items.allSatisfy({ if case .double = $0 { true } else { false } }) else { return nil }
        return items
    }
}
