/// Random ids of 20 characters from [A-Za-z0-9], as Firestore's auto ids: documents created with
/// `collection.document()` and tasks enqueued without an id. The bits come from the caller's
/// generator: `RandomSource.autoID()` on the host, the invocation's seeded generator in a unit.
///
/// Each character takes one random byte below 248 (the largest multiple of 62 under 256), so every
/// character is uniform; bytes from 248 up are skipped, as Firestore's SDKs skip them.
public enum AutoID {
    public static let length = 20
    static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789".utf8)
    static let limit: UInt8 = 248

    public static func make<G: RandomNumberGenerator>(length: Int = AutoID.length, using generator: inout G) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(length)
        while out.count < length {
            var word = generator.next()
            for _ in 0..<8 where out.count < length {
                let b = UInt8(truncatingIfNeeded: word)
                word >>= 8
                if b < limit { out.append(alphabet[Int(b % UInt8(alphabet.count))]) }
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}
