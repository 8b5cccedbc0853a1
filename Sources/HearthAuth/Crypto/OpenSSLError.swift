import COpenSSL
import HearthModel

/// A failure inside OpenSSL: what Hearth was doing and OpenSSL's own queued error strings.
public struct CryptoError: Error, Sendable, CustomStringConvertible, Equatable {
    public var operation: String
    public var detail: String

    public var description: String { detail.isEmpty ? operation : "\(operation): \(detail)" }

    /// Drains OpenSSL's thread-local error queue into one error.
    static func openssl(_ operation: String) -> CryptoError {
        var messages: [String] = []
        while true {
            let code = ERR_get_error()
            if code == 0 { break }
            var buffer = [CChar](repeating: 0, count: 256)
            ERR_error_string_n(code, &buffer, buffer.count)
            messages.append(cString(buffer))
        }
        return CryptoError(operation: operation, detail: messages.joined(separator: "; "))
    }
}

/// Cryptographic helpers with no key involved.
public enum Crypto {
    /// SHA-256 of `data`.
    public static func sha256<C: Collection>(_ data: C) -> [UInt8] where C.Element == UInt8 {
        let bytes = Array(data)
        var out = [UInt8](repeating: 0, count: 32)
        var size: UInt32 = 0
        bytes.withUnsafeBytes { p in _ = EVP_Digest(p.baseAddress, p.count, &out, &size, EVP_sha256(), nil) }
        return out
    }

    /// HMAC-SHA256 (for interoperating with symmetric schemes; Hearth's own tokens never use it).
    public static func hmacSHA256(key: [UInt8], message: [UInt8]) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        _ = HMAC(EVP_sha256(), key, Int32(key.count), message, message.count, &out, &length)
        return Array(out.prefix(Int(length)))
    }

    /// Constant-time comparison, for secrets.
    public static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        var diff: UInt8 = 0
        for (x, y) in zip(a, b) { diff |= x ^ y }
        return diff == 0
    }
}

/// The text of a NUL-terminated C buffer.
func cString(_ buffer: [CChar]) -> String {
    String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
}
