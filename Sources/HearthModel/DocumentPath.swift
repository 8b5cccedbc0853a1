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
    /// One pass over the UTF-8 bytes; the slow checks run only on suspicious segments.
    public static func segments(_ path: String, document: Bool?) throws(HTTPSError) -> [String] {
        let bytes = path.utf8.count
        if bytes > maxPathBytes {
            throw .invalidArgument("invalid path: longer than \(maxPathBytes) bytes (\(bytes))")
        }
        if bytes == 0 { throw .invalidArgument("invalid path: empty") }
        var parts: [String] = []
        parts.reserveCapacity(4)
        // Over the contiguous bytes with integer offsets: a String.Index walk cost more than the
        // work (every document reference in a unit and every write in the host parses one).
        var text = path
        let problem: HTTPSError? = text.withUTF8 { bytes in
            var start = 0
            for index in 0...bytes.count where index == bytes.count || bytes[index] == UInt8(ascii: "/") {
                let segment = UnsafeBufferPointer(rebasing: bytes[start..<index])
                let n = segment.count
                let id = String(decoding: segment, as: UTF8.self)
                if n == 0 || n <= 2 && segment.allSatisfy({ $0 == UInt8(ascii: ".") }) || n >= 4 && segment[0] == 95 {
                    do throws(HTTPSError) { try validateID(Substring(id), in: path) } catch { return error }
                }
                parts.append(id)
                if parts.count > maxSegments {
                    return .invalidArgument("invalid path '\(path.prefix(80))…': more than \(maxSegments) segments")
                }
                start = index + 1
            }
            return nil
        }
        if let problem { throw problem }
        if let document {
            let isDocument = parts.count % 2 == 0
            if document && !isDocument {
                throw .invalidArgument("invalid document path '\(path)': a document path has an even number of segments (collection/document/…)")
            }
            if !document && isDocument {
                throw .invalidArgument("invalid collection path '\(path)': a collection path has an odd number of segments")
            }
        }
        return parts
    }
}

/// The path of a document: alternating collection and document ids (`members/alice/items/i1`).
public struct DocumentPath: Sendable, Hashable, Comparable, CustomStringConvertible, Codable {
    public let segments: [String]
    /// The slash path, joined once: equality and hashing use it.
    public let description: String

    /// Parses and validates a slash path; errors are `invalid-argument` naming the rule broken.
    public init(_ path: String) throws(HTTPSError) {
        segments = try PathRules.segments(path, document: true)
        description = path
    }

    /// Builds a path from segments that are already known to be valid.
    public init(trustedSegments: [String]) {
        precondition(trustedSegments.count >= 2 && trustedSegments.count % 2 == 0, "not a document path: \(trustedSegments)")
        segments = trustedSegments
        description = trustedSegments.joined(separator: "/")
    }

    public static func == (a: DocumentPath, b: DocumentPath) -> Bool { a.description == b.description }
    public func hash(into hasher: inout Hasher) { hasher.combine(description) }

    public var id: String { segments[segments.count - 1] }
    public var collection: CollectionPath {
        CollectionPath(segments: Array(segments.dropLast()), description: collectionDescription)
    }
    /// The slash path of `collection` alone, without its segments (a lookup key).
    public var collectionDescription: String {
        // On the UTF-8 bytes: `lastIndex(of:)` on the string walks graphemes.
        let slash = description.utf8.lastIndex(of: UInt8(ascii: "/"))!
        return String(description[..<slash])
    }
    public var collectionID: String { segments[segments.count - 2] }
    /// The document that holds this document's collection, nil at the root.
    public var parentDocument: DocumentPath? {
        segments.count >= 4 ? DocumentPath(trustedSegments: Array(segments.dropLast(2))) : nil
    }
    public var depth: Int { segments.count / 2 }

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
    /// The slash path, joined once: equality and hashing use it.
    public let description: String

    public init(_ path: String) throws(HTTPSError) {
        segments = try PathRules.segments(path, document: false)
        description = path
    }

    public init(trustedSegments: [String]) {
        precondition(trustedSegments.count % 2 == 1, "not a collection path: \(trustedSegments)")
        segments = trustedSegments
        description = trustedSegments.joined(separator: "/")
    }

    init(segments: [String], description: String) {
        self.segments = segments
        self.description = description
    }

    public static func == (a: CollectionPath, b: CollectionPath) -> Bool { a.description == b.description }
    public func hash(into hasher: inout Hasher) { hasher.combine(description) }

    public var id: String { segments[segments.count - 1] }
    public var parent: DocumentPath? { segments.count > 1 ? DocumentPath(trustedSegments: Array(segments.dropLast())) : nil }

    /// The document `id` in this collection; the id is validated.
    public func document(_ id: String) throws(HTTPSError) -> DocumentPath {
        // On the UTF-8 bytes: `contains("/")` goes through Foundation's `range(of:)`, a few % of a
        // worker's time per `collection(…).document()` in the write + trigger profile.
        if id.utf8.contains(UInt8(ascii: "/")) { throw .invalidArgument("invalid document id '\(id)': ids cannot contain '/'") }
        return try DocumentPath(description + "/" + id)
    }
}
