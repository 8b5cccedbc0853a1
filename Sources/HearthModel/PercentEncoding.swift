/// Percent-decoding for URL paths, query strings and form bodies, shared by the HTTP server and
/// the units' `HTTPRequest` (which must not link the server).
public enum PercentEncoding {
    /// Decodes `%XX` escapes (a malformed one stays as written); with `plusAsSpace`, `+` is a space,
    /// as in query strings and form bodies.
    public static func decode<S: StringProtocol>(_ s: S, plusAsSpace: Bool) -> String {
        // A concrete string first: this generic function is not specialized for callers in other
        // modules, and each byte read through `S.UTF8View` would go through its witness table.
        let text = String(s)
        // Most path segments and form values hold nothing to decode: no copy through bytes then.
        if !text.utf8.contains(where: { $0 == UInt8(ascii: "%") || ($0 == UInt8(ascii: "+") && plusAsSpace) }) { return text }
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count)
        var bytes = Array(text.utf8)[...]
        while let c = bytes.popFirst() {
            if c == UInt8(ascii: "+") && plusAsSpace {
                out.append(0x20)
            } else if c == UInt8(ascii: "%"), bytes.count >= 2, let h = hexValue(bytes[bytes.startIndex]), let l = hexValue(bytes[bytes.startIndex + 1]) {
                out.append(h << 4 | l)
                bytes = bytes.dropFirst(2)
            } else {
                out.append(c)
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// A path's percent-decoded segments (`/a/b%20c` → `["a", "b c"]`), as slices of the path
    /// itself but for those with an escape: one array for the whole path, where decoding each
    /// segment into a `String` made one more array and a string each.
    public static func pathSegments(_ path: String) -> [Substring] {
        var segments = path.slashSeparated
        for i in segments.indices where segments[i].utf8.contains(UInt8(ascii: "%")) {
            segments[i] = Substring(decode(segments[i], plusAsSpace: false))
        }
        return segments
    }

    /// `a=1&b=x+y` → [("a", "1"), ("b", "x y")], in order.
    public static func formItems<S: StringProtocol>(_ text: S) -> [(name: String, value: String)] {
        text.split(separator: "&", omittingEmptySubsequences: true).map { part in
            let kv = part.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            return (decode(kv[0], plusAsSpace: true), kv.count > 1 ? decode(kv[1], plusAsSpace: true) : "")
        }
    }

    /// Encodes a query value: unreserved characters (RFC 3986 §2.3) as they are, every other
    /// byte of the UTF-8 as `%XX`.
    public static func encodeQueryValue(_ s: String) -> String {
        var out = ""
        for byte in s.utf8 {
            switch byte {
            case 48...57, 65...90, 97...122, UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                out += "%" + Hex.byte(byte, uppercase: true)
            }
        }
        return out
    }

    static func hexValue(_ c: UInt8) -> UInt8? {
        switch c {
        case 48...57: return c - 48
        case 65...70: return c - 55
        case 97...102: return c - 87
        default: return nil
        }
    }
}

extension String {
    /// The non-empty pieces between slashes, found on the UTF-8 bytes: a split on `Character`s
    /// breaks the text into graphemes first, ~1.5% of the host's CPU per callable. (A request
    /// target is ASCII, refused otherwise, so the two agree on every path the server routes.)
    /// On `String` only, so that it is compiled for it and not generically.
    public var slashSeparated: [Substring] {
        var out: [Substring] = []
        let bytes = utf8
        var start = bytes.startIndex
        var i = start
        while i != bytes.endIndex {
            if bytes[i] == UInt8(ascii: "/") {
                if start != i { out.append(self[start..<i]) }
                start = bytes.index(after: i)
            }
            i = bytes.index(after: i)
        }
        if start != bytes.endIndex { out.append(self[start..<bytes.endIndex]) }
        return out
    }
}
