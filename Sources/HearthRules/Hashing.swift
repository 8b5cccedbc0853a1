import COpenSSL

/// The hashes of the rules' `hashing` namespace.
enum Hashing {
    /// The table of a reflected CRC-32 with the given (reflected) polynomial.
    static func table(_ polynomial: UInt32) -> [UInt32] {
        (0..<256).map { (n: UInt32) -> UInt32 in
            var c = UInt32(n)
            for _ in 0..<8 { c = c & 1 != 0 ? polynomial ^ (c >> 1) : c >> 1 }
            return c
        }
    }

    /// CRC-32 as zlib and PNG compute it (IEEE 802.3, polynomial 0x04C11DB7 reflected).
    static let crc32Table = table(0xEDB8_8320)
    /// CRC-32C (Castagnoli, polynomial 0x1EDC6F41 reflected), as iSCSI and Cloud Storage use it.
    static let crc32cTable = table(0x82F6_3B78)

    static func crc32(_ bytes: [UInt8], table: [UInt32]) -> UInt32 {
        var c: UInt32 = 0xFFFF_FFFF
        for b in bytes { c = table[Int((c ^ UInt32(b)) & 0xFF)] ^ (c >> 8) }
        return c ^ 0xFFFF_FFFF
    }

    /// A CRC as Firebase's rules give it: its four bytes, least significant first (the runtime's
    /// hash code bytes, as the Firestore emulator's rules engine builds them).
    static func crcBytes(_ v: UInt32) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v >> 16 & 0xFF), UInt8(v >> 24)] }

    /// A digest by OpenSSL (MD5, SHA-256); nil when OpenSSL cannot make it (MD5 under FIPS).
    static func digest(_ bytes: [UInt8], _ md: OpaquePointer?) -> [UInt8]? {
        var out = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var size: UInt32 = 0
        let ok = bytes.withUnsafeBytes { p in EVP_Digest(p.baseAddress, p.count, &out, &size, md, nil) }
        guard ok == 1, size > 0 else { return nil }
        return Array(out.prefix(Int(size)))
    }
}
