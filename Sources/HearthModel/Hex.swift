/// Hexadecimal text of bytes (digests, percent-escapes).
public enum Hex {
    static let lower = Array("0123456789abcdef".utf8)
    static let upper = Array("0123456789ABCDEF".utf8)

    /// Two digits for one byte.
    public static func byte(_ b: UInt8, uppercase: Bool = false) -> String {
        let digits = uppercase ? upper : lower
        return String(decoding: [digits[Int(b >> 4)], digits[Int(b & 15)]], as: UTF8.self)
    }

    /// Two lowercase digits per byte, in order (a SHA-256 digest is 64 characters).
    public static func encode<C: Collection>(_ bytes: C) -> String where C.Element == UInt8 {
        encode(bytes, uppercase: false)
    }

    /// Two digits per byte, in order, upper- or lowercase. (A second entry point rather than a
    /// default argument, so units built against `encode(_:)` keep linking.)
    public static func encode<C: Collection>(_ bytes: C, uppercase: Bool) -> String where C.Element == UInt8 {
        let digits = uppercase ? upper : lower
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count * 2)
        for b in bytes {
            out.append(digits[Int(b >> 4)])
            out.append(digits[Int(b & 15)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}
