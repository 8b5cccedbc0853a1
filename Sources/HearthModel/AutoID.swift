#if canImport(Glibc)
import Glibc
#endif

/// Random ids of 20 characters from [A-Za-z0-9], as Firestore's auto ids: documents created with
/// `collection.document()` and tasks enqueued without an id.
///
/// Each character takes one random byte below 248 (the largest multiple of 62 under 256), so every
/// character is uniform; bytes from 248 up are skipped, as Firestore's SDKs skip them.
public enum AutoID {
    public static let length = 20
    static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789".utf8)
    static let limit: UInt8 = 248

    /// An id from the operating system's generator: one `getrandom` call (40 bytes, about twice
    /// what 20 characters need).
    public static func make() -> String {
        var out: [UInt8] = []
        out.reserveCapacity(length)
        var bytes = [UInt8](repeating: 0, count: 40)
        while out.count < length {
            arc4random_buf(&bytes, bytes.count)
            take(bytes, into: &out)
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// An id from `generator` (seeded in tests and replay, so ids repeat).
    public static func make<G: RandomNumberGenerator>(using generator: inout G) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(length)
        while out.count < length {
            let word = generator.next()
            take((0..<8).map { UInt8(truncatingIfNeeded: word >> ($0 * 8)) }, into: &out)
        }
        return String(decoding: out, as: UTF8.self)
    }

    private static func take(_ bytes: [UInt8], into out: inout [UInt8]) {
        for b in bytes where b < limit && out.count < length {
            out.append(alphabet[Int(b % UInt8(alphabet.count))])
        }
    }
}
