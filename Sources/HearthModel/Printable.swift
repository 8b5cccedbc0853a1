/// Text from outside (a token's `kid`, a path from a URL, a handler's message) made safe to put in a
/// log line or an error message: control characters and other invisible separators are escaped
/// (`\n`, `\r`, `\t`, `\u{1B}`…), so no value can forge a line break or a terminal escape, and
/// long values are cut at `limit` bytes with the full length noted.
public enum Printable {
    public static func escaped(_ text: String, limit: Int = 1024) -> String {
        var out = ""
        var bytes = 0
        for scalar in text.unicodeScalars {
            let piece: String
            switch scalar {
            case "\n": piece = "\\n"
            case "\r": piece = "\\r"
            case "\t": piece = "\\t"
            case "\\": piece = "\\\\"
            default:
                switch scalar.properties.generalCategory {
                case .control, .lineSeparator, .paragraphSeparator, .format, .surrogate, .unassigned, .privateUse:
                    piece = "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
                default:
                    piece = String(scalar)
                }
            }
            if bytes + piece.utf8.count > limit {
                return out + "…(\(text.utf8.count) bytes)"
            }
            out += piece
            bytes += piece.utf8.count
        }
        return out
    }

    /// `text` cut to at most `bytes` bytes of UTF-8 at a character boundary (for stored messages).
    public static func truncated(_ text: String, bytes: Int) -> String {
        guard text.utf8.count > bytes else { return text }
        var out = ""
        for ch in text {
            if out.utf8.count + ch.utf8.count > bytes - 3 { break }
            out.append(ch)
        }
        return out + "…"
    }

    /// `escaped`, for quoting inside a message.
    public static func quoted(_ text: String, limit: Int = 200) -> String { escaped(text, limit: limit) }
}

/// How Hearth compares email addresses for uniqueness and lookup, as Firebase does: ASCII letters
/// lower-cased, everything else exact, so that distinct addresses never merge under Unicode case
/// folding (KELVIN SIGN is not `k`, and `İ` is not `i̇`).
public enum EmailKey {
    public static func of(_ email: String) -> String {
        ASCIICase.lowercased(email)
    }
}
