/// Case rules for ASCII only: the letters A–Z and a–z fold into each other, and every other byte,
/// all of UTF-8 beyond ASCII included, stays as it is. What HTTP header names, media types and
/// Firebase's email keys compare by (Unicode case folding would merge distinct strings: KELVIN
/// SIGN is not `k`).
public enum ASCIICase {
    /// `byte` lower-cased when it is an ASCII capital letter.
    @inlinable public static func lower(_ byte: UInt8) -> UInt8 { byte >= 0x41 && byte <= 0x5A ? byte | 0x20 : byte }

    /// `text` with its ASCII letters lower-cased; the same string when none is upper-case.
    public static func lowercased(_ text: String) -> String {
        guard text.utf8.contains(where: { $0 >= 0x41 && $0 <= 0x5A }) else { return text }
        // Written in place: no array in between, and none at all for up to 15 bytes (stored inline).
        // Only ASCII letters change, so valid UTF-8 stays valid and the count stays the same.
        let utf8 = text.utf8
        return String(unsafeUninitializedCapacity: utf8.count) { (buffer: UnsafeMutableBufferPointer<UInt8>) -> Int in
            var i = 0
            for byte in utf8 {
                buffer[i] = lower(byte)
                i += 1
            }
            return i
        }
    }

    /// Whether two byte runs are equal once their ASCII letters are lower-cased.
    public static func equal(_ x: UnsafeBufferPointer<UInt8>, _ y: UnsafeBufferPointer<UInt8>) -> Bool {
        guard x.count == y.count else { return false }
        for i in 0..<x.count where x[i] != y[i] && lower(x[i]) != lower(y[i]) { return false }
        return true
    }

    /// Whether two strings are equal once their ASCII letters are lower-cased, compared over their
    /// own buffers (strings of different UTF-8 lengths differ without a scan).
    public static func equal(_ a: String, _ b: String) -> Bool {
        guard a.utf8.count == b.utf8.count else { return false }
        if let same = a.utf8.withContiguousStorageIfAvailable({ x in b.utf8.withContiguousStorageIfAvailable { y in equal(x, y) } }),
           let same { return same }
        // A bridged or otherwise non-contiguous string: copied once.
        return Array(a.utf8).withUnsafeBufferPointer { x in Array(b.utf8).withUnsafeBufferPointer { y in equal(x, y) } }
    }
}
