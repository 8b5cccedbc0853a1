/// A transform applied to one field when a write commits, computed by the store (not the writer).
public enum FieldTransform: Sendable, Hashable {
    /// The commit time of the write.
    case serverTimestamp
    /// Adds a number: integer + integer stays an integer (saturating at the 64-bit bounds, as
    /// Firestore does); any double makes the result a double. A missing or non-numeric field is
    /// treated as 0 and replaced.
    case increment(Value)
    /// Appends each element not already present (Firestore equality); a non-array field becomes
    /// an array of the elements.
    case arrayUnion([Value])
    /// Removes every element equal to one of these; a non-array field becomes an empty array.
    case arrayRemove([Value])
    /// Removes the field (in updates and merges).
    case delete
}

/// A sentinel written in place of a field's value to ask the store for a transform, as Firestore's
/// `FieldValue` does. Encodes only through `ValueEncoder`.
///
/// ```swift
/// struct Touch: Encodable { var updatedAt = FieldValue.serverTimestamp(); var views = FieldValue.increment(1) }
/// ```
public struct FieldValue: Sendable, Hashable, Encodable {
    public let transform: FieldTransform

    public init(_ transform: FieldTransform) { self.transform = transform }

    public static func serverTimestamp() -> FieldValue { FieldValue(.serverTimestamp) }
    public static func increment(_ by: Int) -> FieldValue { FieldValue(.increment(.int(Int64(by)))) }
    public static func increment(_ by: Int64) -> FieldValue { FieldValue(.increment(.int(by))) }
    public static func increment(_ by: Double) -> FieldValue { FieldValue(.increment(.double(by))) }
    public static func arrayUnion(_ elements: [Value]) -> FieldValue { FieldValue(.arrayUnion(elements)) }
    public static func arrayRemove(_ elements: [Value]) -> FieldValue { FieldValue(.arrayRemove(elements)) }
    public static func delete() -> FieldValue { FieldValue(.delete) }

    public func encode(to encoder: Encoder) throws {
        guard let valueEncoder = encoder as? ValueEncoderImpl else {
            throw EncodingError.invalidValue(self, .init(codingPath: encoder.codingPath,
                                                         debugDescription: "FieldValue can only be written to a document"))
        }
        valueEncoder.recordTransform(transform)
    }
}

/// A date filled in by the store with the commit time when it is nil, as Firestore's `@ServerTimestamp`.
///
/// ```swift
/// struct Item: Codable { var title: String; @ServerTimestamp var createdAt: Date? }
/// ```
@propertyWrapper
public struct ServerTimestamp<T: Codable & Sendable & Equatable>: Codable, Sendable, Equatable {
    public var wrappedValue: T?

    public init(wrappedValue: T?) { self.wrappedValue = wrappedValue }

    public init(from decoder: Decoder) throws {
        let container = try decoder.singleValueContainer()
        wrappedValue = container.decodeNil() ? nil : try container.decode(T.self)
    }

    public func encode(to encoder: Encoder) throws {
        if let value = wrappedValue {
            var container = encoder.singleValueContainer()
            try container.encode(value)
        } else {
            try FieldValue.serverTimestamp().encode(to: encoder)
        }
    }
}

extension KeyedDecodingContainer {
    /// A missing `@ServerTimestamp` field decodes as nil rather than failing.
    public func decode<T>(_ type: ServerTimestamp<T>.Type, forKey key: Key) throws -> ServerTimestamp<T> {
        try decodeIfPresent(type, forKey: key) ?? ServerTimestamp(wrappedValue: nil)
    }
}
