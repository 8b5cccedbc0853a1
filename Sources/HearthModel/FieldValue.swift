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
    /// The larger of the field and a number (Firestore's `maximum`): a missing or non-numeric
    /// field takes the operand; mixed integer and double take the larger operand's type; equal
    /// values (3 and 3.0, or any zeros) leave the field as it is; NaN wins.
    case maximum(Value)
    /// The smaller of the field and a number, by the same rules as `maximum`.
    case minimum(Value)
}

/// A field's new value in a write: a plain value, or a sentinel asking the store for a transform
/// when the write commits, as Firestore's `FieldValue`. One type serves both places a write names
/// fields: `update(["views": .increment(1), "title": "new"])`, and properties of an `Encodable`
/// written with `create`, `set` or `set(merge:)`.
///
/// Null is written explicitly, `.null` (there is no `nil` literal: a nil optional property is
/// stored as null, an absent key leaves the field alone, `.delete()` removes it).
///
/// Sentinels belong to document writes only: encoding one anywhere else (a query value, a task
/// payload, a callable's result) throws an `EncodingError`. `.delete()` is refused by `create` and
/// `set` without merge (`invalid-argument`), and one write transforms a field at most once.
///
/// ```swift
/// try await ref.update(["views": .increment(1), "seenAt": .serverTimestamp(), "note": .null, "draft": .delete()])
/// struct Touch: Encodable { var updatedAt = FieldValue.serverTimestamp(); var views = FieldValue.increment(1) }
/// ```
public struct FieldValue: Sendable, Hashable, Encodable, ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral, ExpressibleByStringLiteral
{
    /// What the write does with the field.
    public enum Kind: Sendable, Hashable {
        /// Stores the value as it is.
        case value(Value)
        /// Asks the store to compute the field at commit.
        case transform(FieldTransform)
    }

    /// A plain value or a transform.
    public let kind: Kind

    /// A sentinel for `transform`; `.serverTimestamp()`, `.increment(_:)`… are shorter.
    public init(_ transform: FieldTransform) { kind = .transform(transform) }
    init(value: Value) { kind = .value(value) }

    /// Writes the boolean `value`. Literals write plain values: `["isDone": true, "priority": 2, "title": "new"]`.
    public init(booleanLiteral value: Bool) { kind = .value(.bool(value)) }
    /// Writes the integer `value`.
    public init(integerLiteral value: Int64) { kind = .value(.int(value)) }
    /// Writes the double `value`.
    public init(floatLiteral value: Double) { kind = .value(.double(value)) }
    /// Writes the string `value`.
    public init(stringLiteral value: String) { kind = .value(.string(value)) }

    /// The transform, when this is one.
    public var transform: FieldTransform? {
        if case .transform(let t) = kind { return t }
        return nil
    }

    /// Writes null.
    public static let null = FieldValue(value: .null)
    /// Writes `value` as it is.
    public static func value(_ value: Value) -> FieldValue { FieldValue(value: value) }
    /// Writes any `Encodable` (a nil optional becomes null, a `Date` a timestamp); throws an
    /// `EncodingError` when it does not encode or holds a sentinel.
    ///
    /// ```swift
    /// try await ref.update(["targetDate": try .value(input.targetDate)])   // a Date?: a timestamp, or null
    /// ```
    public static func value<T: Encodable>(_ value: T) throws -> FieldValue { FieldValue(value: try ValueEncoder().encode(value)) }

    /// The commit time of the write (every server timestamp of one commit is the same instant).
    public static func serverTimestamp() -> FieldValue { FieldValue(.serverTimestamp) }
    /// Adds to the field (see `FieldTransform.increment` for integers, doubles and missing fields);
    /// concurrent increments all count, without a transaction.
    public static func increment(_ by: Int) -> FieldValue { FieldValue(.increment(.int(Int64(by)))) }
    /// Adds an integer to the field, as `increment(_: Int)`.
    public static func increment(_ by: Int64) -> FieldValue { FieldValue(.increment(.int(by))) }
    /// Adds a double to the field; the result is a double.
    public static func increment(_ by: Double) -> FieldValue { FieldValue(.increment(.double(by))) }
    /// Appends each element the array does not already hold (a non-array field becomes the elements).
    public static func arrayUnion(_ elements: [Value]) -> FieldValue { FieldValue(.arrayUnion(elements)) }
    /// Removes every element equal to one of these (a non-array field becomes an empty array).
    public static func arrayRemove(_ elements: [Value]) -> FieldValue { FieldValue(.arrayRemove(elements)) }
    /// Removes the field (in `update` and `set(merge:)`; nothing happens if it is absent).
    public static func delete() -> FieldValue { FieldValue(.delete) }

    /// Encodes a plain value as itself; a sentinel is recorded as a transform by the document
    /// encoder and throws an `EncodingError` with any other encoder.
    public func encode(to encoder: Encoder) throws {
        switch kind {
        case .value(let value):
            var c = encoder.singleValueContainer()
            try c.encode(value)
        case .transform(let transform):
            guard let valueEncoder = encoder as? ValueEncoderImpl else {
                throw EncodingError.invalidValue(self, .init(codingPath: encoder.codingPath,
                                                             debugDescription: "FieldValue can only be written to a document"))
            }
            valueEncoder.recordTransform(transform)
        }
    }
}

/// A date filled in by the store with the commit time when it is nil, as Firestore's `@ServerTimestamp`.
/// A non-nil value is written as it is, so a read-modify-write keeps the stored time; a missing or
/// null field decodes as nil.
///
/// Only document writes (`create`, `set`, `set(merge:)`, batches, transactions) fill it in:
/// encoding a nil one elsewhere (a task payload, a callable's result) throws an `EncodingError`,
/// so return the stored value, or a type without the wrapper.
///
/// ```swift
/// struct Item: Codable { var title: String; @ServerTimestamp var createdAt: Date? }
/// ```
@propertyWrapper
public struct ServerTimestamp<T: Codable & Sendable & Equatable>: Codable, Sendable, Equatable {
    /// The stored time, or nil to have the store fill in the commit time.
    public var wrappedValue: T?

    /// Wraps `wrappedValue` (usually nil: `@ServerTimestamp var createdAt: Date?`).
    public init(wrappedValue: T?) { self.wrappedValue = wrappedValue }

    /// Reads the time; null decodes as nil.
    public init(from decoder: Decoder) throws {
        let container = try decoder.singleValueContainer()
        wrappedValue = container.decodeNil() ? nil : try container.decode(T.self)
    }

    /// Writes the time, or, when nil, a `serverTimestamp()` sentinel.
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
