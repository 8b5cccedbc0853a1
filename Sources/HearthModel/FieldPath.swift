/// A path to a field inside a document: `title`, `address.city`, or with quoted segments
/// `` `a.b`.c `` (backticks quote a segment that contains dots or other special characters; inside
/// them `\` escapes the next character).
public struct FieldPath: Sendable, Hashable, Comparable, CustomStringConvertible, Codable {
    public let segments: [String]

    /// Equal when every segment's bytes are (`UTF8Key`), as Firestore compares field names;
    /// Swift's `String ==` would take `é` and `e\u{301}` for one name.
    public static func == (a: FieldPath, b: FieldPath) -> Bool {
        a.segments.count == b.segments.count && zip(a.segments, b.segments).allSatisfy { UTF8Key.equal($0, $1) }
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(segments.count)
        for segment in segments { UTF8Key.hash(segment, into: &hasher) }
    }

    /// The special path naming the document itself, used to order and filter by document name.
    public static let documentID = FieldPath(segments: ["__name__"])

    public init(segments: [String]) {
        self.segments = segments
    }

    /// Firestore's limit on a field path (https://firebase.google.com/docs/firestore/quotas).
    public static let maxBytes = 1500
    /// More segments than any document can nest (maps at most 20 deep): a bound before anything
    /// walks a path recursively.
    public static let maxSegments = 100

    /// Parses a dotted field path; errors name the path and the problem. `requiringQuotes`: a
    /// segment that is not a simple name (`[a-zA-Z_][a-zA-Z_0-9]*`) must be quoted, as Firestore's
    /// API reads field paths (the SDKs quote such names); the SDK side here is lenient.
    public init(_ text: String, requiringQuotes: Bool = false) throws(HTTPSError) {
        if text.isEmpty { throw .invalidArgument("invalid field path: empty") }
        if text.utf8.count > FieldPath.maxBytes {
            throw .invalidArgument("invalid field path '\(text.prefix(40))…': longer than \(FieldPath.maxBytes) bytes")
        }
        var segments: [String] = []
        var current = ""
        var quoted = false
        var wasQuoted = false
        var escaping = false
        func append(_ segment: String, quoted: Bool) throws(HTTPSError) {
            if requiringQuotes && !quoted && !FieldPath.isSimple(segment) {
                throw .invalidArgument("Invalid property path \"\(text)\". Unquoted property paths must match regex ([a-zA-Z_][a-zA-Z_0-9]*), "
                    + "and quoted property paths must match regex (`(?:[^`\\]|(?:\\.))+`)")
            }
            segments.append(segment)
        }
        // Scalar by scalar, not Character by Character: a combining mark after a backtick or backslash
        // would otherwise fuse with it into one grapheme and hide the quote or the escape.
        for ch in text.unicodeScalars {
            if quoted {
                if escaping {
                    current.unicodeScalars.append(ch)
                    escaping = false
                } else if ch == "\\" {
                    escaping = true
                } else if ch == "`" {
                    quoted = false
                    wasQuoted = true
                } else {
                    current.unicodeScalars.append(ch)
                }
                continue
            }
            switch ch {
            case ".":
                if current.isEmpty && !wasQuoted { throw .invalidArgument("invalid field path '\(text)': empty segment") }
                try append(current, quoted: wasQuoted)
                current = ""
                wasQuoted = false
            case "`":
                if !current.isEmpty || wasQuoted { throw .invalidArgument("invalid field path '\(text)': a backtick must open a whole segment") }
                quoted = true
            default:
                if wasQuoted { throw .invalidArgument("invalid field path '\(text)': text after a quoted segment") }
                if "~*/[]".unicodeScalars.contains(ch) { throw .invalidArgument("invalid field path '\(text)': '\(ch)' must be quoted with backticks") }
                current.unicodeScalars.append(ch)
            }
        }
        if quoted { throw .invalidArgument("invalid field path '\(text)': unterminated backtick") }
        if current.isEmpty && !wasQuoted { throw .invalidArgument("invalid field path '\(text)': empty segment") }
        try append(current, quoted: wasQuoted)
        if segments.count > FieldPath.maxSegments {
            throw .invalidArgument("invalid field path '\(text.prefix(40))…': more than \(FieldPath.maxSegments) segments")
        }
        self.segments = segments
    }

    public var isDocumentID: Bool { segments.count == 1 && segments[0] == "__name__" }

    /// The canonical dotted form, quoting segments that are not simple identifiers.
    public var description: String {
        segments.map { FieldPath.isSimple($0) ? $0 : FieldPath.quoted($0) }.joined(separator: ".")
    }

    /// The segment between backticks, with `\` before each backtick and backslash (scalar by scalar,
    /// as the parser reads them).
    static func quoted(_ segment: String) -> String {
        var out = String.UnicodeScalarView()
        out.append("`")
        for scalar in segment.unicodeScalars {
            if scalar == "\\" || scalar == "`" { out.append("\\") }
            out.append(scalar)
        }
        out.append("`")
        return String(out)
    }

    static func isSimple(_ s: String) -> Bool {
        guard let first = s.utf8.first, first == 95 || (first | 0x20 >= 97 && first | 0x20 <= 122) else { return false }
        return s.utf8.allSatisfy { c in c == 95 || (c >= 48 && c <= 57) || (c | 0x20 >= 97 && c | 0x20 <= 122) }
    }

    public func appending(_ segment: String) -> FieldPath { FieldPath(segments: segments + [segment]) }

    /// The first pair of `paths` where one lies inside the other (`outer` a prefix of `inner`), or
    /// with `equalToo` where one is given twice; nil when none. Sorted by segments, a path that
    /// contains another comes right before one that it contains (anything sorting between them has
    /// the same prefix), so neighbours are enough to compare.
    public static func firstNested(in paths: [FieldPath], equalToo: Bool) -> (outer: FieldPath, inner: FieldPath)? {
        guard paths.count > 1 else { return nil }
        let sorted = paths.sorted(by: <)
        for (outer, inner) in zip(sorted, sorted.dropFirst()) where (equalToo || outer != inner) && outer.isPrefix(of: inner) {
            return (outer, inner)
        }
        return nil
    }

    /// True when this path is `other` or one of its ancestors.
    public func isPrefix(of other: FieldPath) -> Bool { other.segments.starts(with: segments, by: UTF8Key.equal) }

    public static func < (lhs: FieldPath, rhs: FieldPath) -> Bool {
        for (a, b) in zip(lhs.segments, rhs.segments) where !UTF8Key.equal(a, b) {
            return Value.compareUTF8(a, b) == .ascending
        }
        return lhs.segments.count < rhs.segments.count
    }

    public init(from decoder: Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        do { self = try FieldPath(text) } catch {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: error.message))
        }
    }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(description)
    }
}

extension Value {
    /// The value at a field path inside a map, or nil when any step is missing or not a map. Names
    /// match by their bytes, as Firestore's (and the index's) do: `é` is not `e\u{301}`.
    public func value(at path: FieldPath) -> Value? {
        var current = self
        for segment in path.segments {
            guard case .map(let m) = current, let next = m[bytes: segment] else { return nil }
            current = next
        }
        return current
    }
}
