/// Base64 (RFC 4648) in its standard and URL-safe alphabets, strict on input.
public enum Base64 {
    static let standard: [UInt8] = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
    static let urlSafe: [UInt8] = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    static let standardDecode: [Int8] = decodeTable(standard)
    static let urlSafeDecode: [Int8] = decodeTable(urlSafe)

    static func decodeTable(_ alphabet: [UInt8]) -> [Int8] {
        var table = [Int8](repeating: -1, count: 256)
        for (i, c) in alphabet.enumerated() { table[Int(c)] = Int8(i) }
        return table
    }

    public static func encode<C: Collection>(_ bytes: C, urlSafe: Bool = false, padding: Bool = true) -> String where C.Element == UInt8 {
        String(decoding: encodeBytes(Array(bytes), urlSafe: urlSafe, padding: padding), as: UTF8.self)
    }

    /// Base64url without padding, as JWTs use.
    public static func encodeURL<C: Collection>(_ bytes: C) -> String where C.Element == UInt8 {
        encode(bytes, urlSafe: true, padding: false)
    }

    /// The encoding as ASCII bytes (no String on the way).
    public static func encodeBytes(_ input: [UInt8], urlSafe: Bool = false, padding: Bool = true) -> [UInt8] {
        let alphabet = urlSafe ? Base64.urlSafe : Base64.standard
        var out: [UInt8] = []
        out.reserveCapacity((input.count + 2) / 3 * 4)
        var i = 0
        while i + 3 <= input.count {
            let n = UInt32(input[i]) << 16 | UInt32(input[i + 1]) << 8 | UInt32(input[i + 2])
            out.append(alphabet[Int(n >> 18 & 63)])
            out.append(alphabet[Int(n >> 12 & 63)])
            out.append(alphabet[Int(n >> 6 & 63)])
            out.append(alphabet[Int(n & 63)])
            i += 3
        }
        let rest = input.count - i
        if rest == 1 {
            let n = UInt32(input[i]) << 16
            out.append(alphabet[Int(n >> 18 & 63)])
            out.append(alphabet[Int(n >> 12 & 63)])
            if padding { out.append(61); out.append(61) }
        } else if rest == 2 {
            let n = UInt32(input[i]) << 16 | UInt32(input[i + 1]) << 8
            out.append(alphabet[Int(n >> 18 & 63)])
            out.append(alphabet[Int(n >> 12 & 63)])
            out.append(alphabet[Int(n >> 6 & 63)])
            if padding { out.append(61) }
        }
        return out
    }

    /// Decodes standard base64. Padding is required when `requirePadding`; other characters, bad
    /// lengths and non-zero trailing bits are refused (nil).
    public static func decode(_ text: String, requirePadding: Bool = false) -> [UInt8]? {
        decodeBytes(Array(text.utf8), table: standardDecode, allowPadding: true, requirePadding: requirePadding)
    }

    /// Decodes base64url without padding, strictly (as JWTs are written).
    public static func decodeURL(_ text: some StringProtocol) -> [UInt8]? {
        decodeBytes(Array(text.utf8), table: urlSafeDecode, allowPadding: false, requirePadding: false)
    }

    /// Decodes a `bytes` field of Google's JSON mapping, which accepts standard or URL-safe base64,
    /// padded or not (https://protobuf.dev/programming-guides/json/).
    public static func decodeProtoBytes(_ text: String) -> [UInt8]? {
        let bytes = Array(text.utf8)
        if bytes.contains(where: { $0 == 45 || $0 == 95 }) {  // - or _
            return decodeBytes(bytes, table: urlSafeDecode, allowPadding: true, requirePadding: false)
        }
        return decodeBytes(bytes, table: standardDecode, allowPadding: true, requirePadding: false)
    }

    static func decodeBytes(_ input: [UInt8], table: [Int8], allowPadding: Bool, requirePadding: Bool) -> [UInt8]? {
        var body = input[...]
        var pad = 0
        while let last = body.last, last == 61 {
            guard allowPadding else { return nil }
            pad += 1
            body = body.dropLast()
        }
        if pad > 2 { return nil }
        if pad > 0 && input.count % 4 != 0 { return nil }
        if requirePadding && input.count % 4 != 0 { return nil }
        let remainder = body.count % 4
        if remainder == 1 { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(body.count * 3 / 4)
        var acc: UInt32 = 0
        var bits = 0
        for c in body {
            let v = table[Int(c)]
            if v < 0 { return nil }
            acc = acc << 6 | UInt32(v)
            bits += 6
            if bits >= 8 {
                bits -= 8
                out.append(UInt8(acc >> UInt32(bits) & 0xFF))
            }
        }
        // Leftover bits must be zero (canonical encoding).
        if bits > 0 && acc & ((1 << UInt32(bits)) - 1) != 0 { return nil }
        return out
    }
}
