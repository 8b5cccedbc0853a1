/// Firestore's rules for resource names
/// (https://firebase.google.com/docs/firestore/quotas#collections_documents_and_fields).
public enum PathRules {
    /// A document's name is at most 6 KiB (counted here on the path below `documents/`).
    public static let maxPathBytes = 6 * 1024
    public static let maxSegments = 100
    /// Each collection and document id is at most 1,500 bytes.
    public static let maxIDBytes = 1500

    /// Checks one collection or document id; the error names the id and the rule. With
    /// `numericIDs`, a numeric id (`__id7__`, see `numericID`) passes too.
    public static func validateID(_ id: Substring, in path: String, numericIDs: Bool = false) throws(HTTPSError) {
        if id.isEmpty { throw .invalidArgument("invalid path '\(path)': empty segment") }
        if id.utf8.count > maxIDBytes {
            throw .invalidArgument("invalid path '\(path.prefix(80))…': an id longer than \(maxIDBytes) bytes (\(id.utf8.count))")
        }
        if id == "." || id == ".." { throw .invalidArgument("invalid path '\(path)': '\(id)' is not a valid id") }
        if isReserved(id) && !(numericIDs && numericID(id) != nil) {
            throw .invalidArgument("invalid path '\(path)': ids of the form __.*__ are reserved ('\(id)')")
        }
    }

    /// `__.*__`, on the bytes: a grapheme test would miss `__x\u{600}__`, whose U+0600 joins the
    /// underscore after it.
    public static func isReserved(_ id: Substring) -> Bool {
        let utf8 = id.utf8
        return utf8.count >= 4 && utf8.starts(with: "__".utf8) && utf8.reversed().starts(with: "__".utf8)
    }

    /// The number a numeric id stands for: `__id<int64>__`, the form Firestore gives the numeric
    /// keys of Datastore, written canonically (an optional minus and digits, no leading zero, no
    /// `-0`), so that two ids with one number are one id. No document here has one (such ids are
    /// reserved), but clients name them as bounds: firebase-tools' recursive delete and the Admin
    /// SDKs' `recursiveDelete` query from `collection/__id-9223372036854775808__`, the lowest name
    /// in a collection. Numeric ids sort before every other id, by their number. Read on the
    /// UTF-8 bytes only.
    public static func numericID<S: StringProtocol>(_ segment: S) -> Int64? {
        let utf8 = Array(segment.utf8)
        guard utf8.count >= 7, utf8.starts(with: "__id".utf8), utf8.reversed().starts(with: "__".utf8) else { return nil }
        var digits = utf8[4..<(utf8.count - 2)]
        let negative = digits.first == UInt8(ascii: "-")
        if negative { digits = digits.dropFirst() }
        guard let first = digits.first, digits.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }),
              first != UInt8(ascii: "0") || (digits.count == 1 && !negative) else { return nil }
        // Int64's own parser: nil past the range (the digits are checked, so nothing else fails).
        return Int64(String(decoding: utf8[4..<(utf8.count - 2)], as: UTF8.self))
    }

    /// A slash path's segments, split on the "/" byte. Splitting the String itself does not split
    /// where an id starts with a combining mark (U+0301), which joins the slash before it into one
    /// Character; every path is split here instead.
    public static func split(_ path: Substring, omittingEmpty: Bool = false) -> [Substring] {
        path.utf8.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: omittingEmpty).map { Substring($0) }
    }

    public static func split(_ path: String, omittingEmpty: Bool = false) -> [Substring] {
        split(Substring(path), omittingEmpty: omittingEmpty)
    }

    /// The text after the last "/" byte of `path`, and the text before it (nil without a slash).
    public static func lastSegment(_ path: String) -> (parent: Substring, id: Substring)? {
        guard let slash = path.utf8.lastIndex(of: UInt8(ascii: "/")) else { return nil }
        return (path[..<slash], path[path.utf8.index(after: slash)...])
    }

    /// The order of the first segments where two paths differ, or nil when one is a prefix of the
    /// other (or they are equal): what every segment-wise order of names is built on.
    public static func firstDifference<A: StringProtocol, B: StringProtocol>(_ a: [A], _ b: [B]) -> ComparisonOrder? {
        for (x, y) in zip(a, b) {
            let c = compareIDs(String(x), String(y))
            if c != .same { return c }
        }
        return nil
    }

    /// Firestore's order of two paths given as segments: segment by segment, a prefix first.
    public static func compareSegments<A: StringProtocol, B: StringProtocol>(_ a: [A], _ b: [B]) -> ComparisonOrder {
        firstDifference(a, b) ?? ComparisonOrder(a.count, b.count)
    }

    /// Firestore's order of two ids: numeric ids first, by number, then the rest by UTF-8 bytes.
    public static func compareIDs(_ a: String, _ b: String) -> ComparisonOrder {
        // Most ids do not start with "_", so this is one byte test for each in the common case.
        if a.utf8.first == UInt8(ascii: "_") || b.utf8.first == UInt8(ascii: "_") {
            switch (numericID(a), numericID(b)) {
            case let (x?, y?): return ComparisonOrder(x, y)
            case (_?, nil): return .ascending
            case (nil, _?): return .descending
            case (nil, nil): break
            }
        }
        return Value.compareUTF8(a, b)
    }

    /// Splits and checks a slash path; `document` says which kind of path is wanted (nil: either).
    /// One pass over the UTF-8 bytes; the slow checks run only on suspicious segments.
    public static func segments(_ path: String, document: Bool?, numericIDs: Bool = false) throws(HTTPSError) -> [String] {
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
                if n > maxIDBytes {
                    return .invalidArgument("invalid path '\(path.prefix(80))…': an id longer than \(maxIDBytes) bytes (\(n))")
                }
                let id = String(decoding: segment, as: UTF8.self)
                if n == 0 || n <= 2 && segment.allSatisfy({ $0 == UInt8(ascii: ".") }) || n >= 4 && segment[0] == 95 {
                    // Numeric ids name documents, never collections (the even positions).
                    do throws(HTTPSError) { try validateID(Substring(id), in: path, numericIDs: numericIDs && parts.count % 2 == 1) } catch { return error }
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

    /// Parses a name a query compares documents with, where numeric ids (`__id7__`) are allowed
    /// beside the ids documents can have (`PathRules.numericID`).
    public init(queryBound path: String) throws(HTTPSError) {
        segments = try PathRules.segments(path, document: true, numericIDs: true)
        description = path
    }

    /// Builds a path from segments that are already known to be valid.
    public init(trustedSegments: [String]) {
        precondition(trustedSegments.count >= 2 && trustedSegments.count % 2 == 0, "not a document path: \(trustedSegments)")
        segments = trustedSegments
        description = trustedSegments.joined(separator: "/")
    }

    /// Equal when the bytes are (`UTF8Key`): Firestore keeps "café" and "cafe\u{301}" apart.
    public static func == (a: DocumentPath, b: DocumentPath) -> Bool { UTF8Key.equal(a.description, b.description) }
    public func hash(into hasher: inout Hasher) { UTF8Key.hash(description, into: &hasher) }

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
        other.segments.count > segments.count && other.segments.starts(with: segments, by: UTF8Key.equal)
    }

    /// Firestore's order of document names: segment by segment (`PathRules.compareIDs`).
    public static func < (lhs: DocumentPath, rhs: DocumentPath) -> Bool {
        PathRules.compareSegments(lhs.segments, rhs.segments) == .ascending
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

    /// Equal when the bytes are (`UTF8Key`).
    public static func == (a: CollectionPath, b: CollectionPath) -> Bool { UTF8Key.equal(a.description, b.description) }
    public func hash(into hasher: inout Hasher) { UTF8Key.hash(description, into: &hasher) }

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
