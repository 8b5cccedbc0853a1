/// A document path with wildcards, as document triggers use:
/// `members/{uid}/items/{itemId}` (`{x}` and `{x=*}` capture one segment),
/// `members/{path=**}` (captures one or more segments, at most once per pattern).
///
/// A pattern without `**` must name documents (an even number of segments); a pattern without any
/// wildcard matches exactly one document. `members/{uid}` does not match `members/a/items/b`.
public struct PathPattern: Sendable, Hashable, CustomStringConvertible, Codable {
    public enum Segment: Sendable, Hashable {
        case literal(String)
        case capture(String)
        case captureRest(String)
    }

    public let segments: [Segment]
    public let text: String

    public init(_ text: String) throws(HTTPSError) {
        self.text = text
        if text.isEmpty { throw .invalidArgument("invalid path pattern: empty") }
        var segments: [Segment] = []
        var names: Set<String> = []
        var restCount = 0
        for raw in PathRules.split(text) {
            if raw.hasPrefix("{") {
                guard raw.hasSuffix("}"), raw.count >= 3 else {
                    throw .invalidArgument("invalid path pattern '\(text)': malformed wildcard '\(raw)'")
                }
                let inner = raw.dropFirst().dropLast()
                var name = inner
                var rest = false
                if let eq = inner.firstIndex(of: "=") {
                    name = inner[..<eq]
                    let kind = inner[inner.index(after: eq)...]
                    switch kind {
                    case "*": rest = false
                    case "**": rest = true
                    default: throw .invalidArgument("invalid path pattern '\(text)': wildcard '\(raw)' must be {name}, {name=*} or {name=**}")
                    }
                }
                guard PathPattern.isIdentifier(name) else {
                    throw .invalidArgument("invalid path pattern '\(text)': wildcard name '\(name)' must be letters, digits and '_'")
                }
                guard names.insert(String(name)).inserted else {
                    throw .invalidArgument("invalid path pattern '\(text)': wildcard '\(name)' appears twice")
                }
                if rest {
                    restCount += 1
                    segments.append(.captureRest(String(name)))
                } else {
                    segments.append(.capture(String(name)))
                }
            } else {
                if raw.contains("{") || raw.contains("}") {
                    throw .invalidArgument("invalid path pattern '\(text)': braces must enclose a whole segment ('\(raw)')")
                }
                try PathRules.validateID(raw, in: text)
                segments.append(.literal(String(raw)))
            }
        }
        if restCount > 1 { throw .invalidArgument("invalid path pattern '\(text)': at most one {name=**} wildcard") }
        if segments.count > PathRules.maxSegments { throw .invalidArgument("invalid path pattern '\(text)': more than \(PathRules.maxSegments) segments") }
        if restCount == 0 && segments.count % 2 != 0 {
            throw .invalidArgument("invalid path pattern '\(text)': it names a collection; a trigger pattern must name documents (an even number of segments)")
        }
        self.segments = segments
    }

    static func isIdentifier(_ s: Substring) -> Bool {
        guard let first = s.utf8.first, !(first >= 48 && first <= 57) else { return false }
        return s.utf8.allSatisfy { c in c == 95 || (c >= 48 && c <= 57) || (c | 0x20 >= 97 && c | 0x20 <= 122) }
    }

    public var description: String { text }

    /// True when the pattern has no wildcard.
    public var isExact: Bool { segments.allSatisfy { if case .literal = $0 { return true } else { return false } } }

    /// The wildcard names, in order.
    public var parameterNames: [String] {
        segments.compactMap {
            switch $0 {
            case .literal: return nil
            case .capture(let n), .captureRest(let n): return n
            }
        }
    }

    /// The captured parameters when `path` matches, nil otherwise.
    public func match(_ path: DocumentPath) -> [String: String]? {
        match(segments: path.segments)
    }

    public func match(segments path: [String]) -> [String: String]? {
        var params: [String: String] = [:]
        guard let restIndex = segments.firstIndex(where: { if case .captureRest = $0 { return true } else { return false } }) else {
            guard path.count == segments.count else { return nil }
            for (seg, part) in zip(segments, path) where !PathPattern.matchOne(seg, part, &params) { return nil }
            return params
        }
        let before = segments[..<restIndex]
        let after = segments[(restIndex + 1)...]
        guard path.count >= before.count + after.count + 1 else { return nil }
        for (seg, part) in zip(before, path) where !PathPattern.matchOne(seg, part, &params) { return nil }
        for (seg, part) in zip(after, path.suffix(after.count)) where !PathPattern.matchOne(seg, part, &params) { return nil }
        if case .captureRest(let name) = segments[restIndex] {
            params[name] = path[before.count..<(path.count - after.count)].joined(separator: "/")
        }
        return params
    }

    static func matchOne(_ seg: Segment, _ part: String, _ params: inout [String: String]) -> Bool {
        switch seg {
        case .literal(let l): return UTF8Key.equal(l, part)  // bytes: "\u{212A}udos" is not "Kudos"
        case .capture(let n): params[n] = part; return true
        case .captureRest: return false
        }
    }

    /// The longest literal prefix (whole segments), which bounds the paths this pattern can match.
    public var literalPrefix: [String] {
        var prefix: [String] = []
        for seg in segments {
            guard case .literal(let l) = seg else { break }
            prefix.append(l)
        }
        return prefix
    }

    public init(from decoder: Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        do { self = try PathPattern(text) } catch {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: error.message))
        }
    }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(text)
    }
}
