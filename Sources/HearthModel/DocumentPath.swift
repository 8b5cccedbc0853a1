/// Firestore's rules for resource names
/// (https://firebase.google.com/docs/firestore/quotas#collections_documents_and_fields).
public enum PathRules {
    public static let maxPathBytes = 1500
    public static let maxSegments = 100
    public static let maxIDBytes = 1500

    /// Checks one collection or document id; the error names the id and the rule.
    public static func validateID(_ id: Substring, in path: String) throws(HTTPSError) {
        if id.isEmpty { throw .invalidArgument("invalid path '\(path)': empty segment") }
        if id == "." || id == ".." { throw .invalidArgument("invalid path '\(path)': '\(id)' is not a valid id") }
        if id.utf8.count >= 4 && id.hasPrefix("__") && id.hasSuffix("__") {
            throw .invalidArgument("invalid path '\(path)': ids of the form __.*__ are reserved ('\(id)')")
        }
    }

    /// Splits and checks a slash path; `document` says which kind of path is wanted (nil: either).
    public static func segments(_ path: String, document: Bool?) throws(HTTPSError) -> [String] {
        if path.utf8.count > maxPathBytes {
            throw .invalidArgument("invalid path: longer than \(maxPathBytes) bytes (\(path.utf8.count))")
        }
        if path.isEmpty { throw .invalidArgument("invalid path: empty") }
        let parts = path.split(separator: "/", omittingEmptySubsequences: false)
        if parts.count > maxSegments {
            throw .invalidArgument("invalid path '\(path.prefix(80))…': more than \(maxSegments) segments")
        }
        for part in parts { try validateID(part, in: path) }
        if let document {
            let isDocument = parts.count % 2 == 0
            if document && !isDocument {
                throw .invalidArgument("invalid document path '\(path)': a document path has an even number of segments (collection/document/…)")
            }
            if !document && isDocument {
                throw .invalidArgument("invalid collection path '\(path)': a collection path has an odd number of segments")
            }
        }
        return parts.map(String.init)
    }
}

/// The path of a document: alternating collection and document ids (`members/alice/items/i1`).
public struct DocumentPath: Sendable, Hashable, Comparable, CustomStringConvertible, Codable {
    public let segments: [String]

    /// Parses and validates a slash path; errors are `invalid-argument` naming the rule broken.
    public init(_ path: String) throws(HTTPSError) {
        segments = try PathRules.segments(path, document: true)
    }

    /// Builds a path from segments that are already known to be valid.
    public init(trustedSegments: [String]) {
        precondition(trustedSegments.count >= 2 && trustedSegments.count % 2 == 0, "not a document path: \(trustedSegments)")
        segments = trustedSegments
    }

    public var id: String { segments[segments.count - 1] }
    public var collection: CollectionPath { CollectionPath(trustedSegments: Array(segments.dropLast())) }
    public var collectionID: String { segments[segments.count - 2] }
    /// The document that holds this document's collection, nil at the root.
    public var parentDocument: DocumentPath? {
        segments.count >= 4 ? DocumentPath(trustedSegments: Array(segments.dropLast(2))) : nil
    }
    public var depth: Int { segments.count / 2 }

    public var description: String { segments.joined(separator: "/") }

    /// A subcollection of this document.
    public func collection(_ id: String) throws(HTTPSError) -> CollectionPath {
        try CollectionPath(description + "/" + id)
    }

    /// True when `other` lies under this document (in one of its subcollections, at any depth).
    public func isAncestor(of other: DocumentPath) -> Bool {
        other.segments.count > segments.count && other.segments.starts(with: segments)
    }

    /// Firestore's order of document names: segment by segment, each by UTF-8 bytes.
    public static func < (lhs: DocumentPath, rhs: DocumentPath) -> Bool {
        for (a, b) in zip(lhs.segments, rhs.segments) {
            let c = Value.compareUTF8(a, b)
            if c != .same { return c == .ascending }
        }
        return lhs.segments.count < rhs.segments.count
    }

    public init(from decoder: Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        do { self = try DocumentPath(text) } catch {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: error.message))
        }
    }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(description)
    }
}

/// The path of a collection: an odd number of segments (`members`, `members/alice/items`).
public struct CollectionPath: Sendable, Hashable, CustomStringConvertible {
    public let segments: [String]

    public init(_ path: String) throws(HTTPSError) {
        segments = try PathRules.segments(path, document: false)
    }

    public init(trustedSegments: [String]) {
        precondition(trustedSegments.count % 2 == 1, "not a collection path: \(trustedSegments)")
        segments = trustedSegments
    }

    public var id: String { segments[segments.count - 1] }
    public var parent: DocumentPath? { segments.count > 1 ? DocumentPath(trustedSegments: Array(segments.dropLast())) : nil }
    public var description: String { segments.joined(separator: "/") }

    /// The document `id` in this collection; the id is validated.
    public func document(_ id: String) throws(HTTPSError) -> DocumentPath {
        if id.contains("/") { throw .invalidArgument("invalid document id '\(id)': ids cannot contain '/'") }
        return try DocumentPath(description + "/" + id)
    }
}
