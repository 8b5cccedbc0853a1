/// Percent-decoding for URL paths, query strings and form bodies, shared by the HTTP server and
/// the units' `HTTPRequest` (which must not link the server).
public enum PercentEncoding {
    /// Decodes `%XX` escapes (a malformed one stays as written); with `plusAsSpace`, `+` is a space,
    /// as in query strings and form bodies.
    public static func decode<S: StringProtocol>(_ s: S, plusAsSpace: Bool) -> String {
        // Most path segments and form values hold nothing to decode: no copy through bytes then.
        if !s.utf8.contains(where: { $0 == UInt8(ascii: "%") || ($0 == UInt8(ascii: "+") && plusAsSpace) }) { return String(s) }
        var out: [UInt8] = []
        out.reserveCapacity(s.utf8.count)
        var bytes = Array(s.utf8)[...]
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
