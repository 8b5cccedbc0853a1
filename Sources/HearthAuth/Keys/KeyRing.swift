import Foundation
import HearthModel
import Synchronization

/// The runtime's signing keys: one active RSA 2048 key that signs new tokens, and the previous ones,
/// still trusted for verification after a rotation. Kept in a JSON file readable only by its owner
/// (mode 0600), created with a first key on first start.
public final class KeyRing: Sendable {
    public struct Entry: Sendable {
        public let kid: String
        public let key: Key
        public let createdAt: Timestamp
    }

    /// How many keys (the active one included) stay trusted after rotations.
    public static let retained = 3

    public let path: String
    private let state: Mutex<[Entry]>  // first is active

    /// Loads the key file, or creates it with a new key.
    public init(path: String, clock: any Clock) throws {
        self.path = path
        if FileManager.default.fileExists(atPath: path) {
            state = Mutex(try KeyRing.load(path))
        } else {
            let entry = try KeyRing.newEntry(clock: clock)
            try KeyRing.save([entry], to: path)
            state = Mutex([entry])
        }
    }

    /// A key ring in memory only (tests).
    public init(keys: [Entry]) {
        path = ""
        state = Mutex(keys)
    }

    public var active: Entry { state.withLock { $0[0] } }
    public var entries: [Entry] { state.withLock { $0 } }
    /// Whether the key `kid` still verifies tokens (it was not dropped by rotations).
    public func trusts(_ kid: String) -> Bool { state.withLock { $0.contains { $0.kid == kid } } }

    public var verificationKeys: [String: Key] { Dictionary(entries.map { ($0.kid, $0.key) }, uniquingKeysWith: { a, _ in a }) }

    /// Makes a new active key; the previous ones stay valid for verification (up to `retained`).
    @discardableResult
    public func rotate(clock: any Clock) throws -> Entry {
        let entry = try KeyRing.newEntry(clock: clock)
        let keys = state.withLock { s -> [Entry] in
            s.insert(entry, at: 0)
            if s.count > KeyRing.retained { s.removeLast(s.count - KeyRing.retained) }
            return s
        }
        if !path.isEmpty { try KeyRing.save(keys, to: path) }
        return entry
    }

    /// The public keys as a JWKS document (`{"keys": [...]}`).
    public func jwks() throws -> Value {
        ["keys": .array(try entries.map { try $0.key.publicJWK(kid: $0.kid) })]
    }

    static func newEntry(clock: any Clock) throws -> Entry {
        let key = try Key.generateRSA()
        return Entry(kid: kid(for: key), key: key, createdAt: clock.now())
    }

    /// A key id derived from the public key: 40 hex digits, like Firebase's.
    static func kid(for key: Key) -> String {
        let digest = Crypto.sha256(Array(((try? key.publicPEM()) ?? "").utf8))
        return digest.prefix(20).map { String(format: "%02x", $0) }.joined()
    }

    static func load(_ path: String) throws -> [Entry] {
        guard let data = FileManager.default.contents(atPath: path) else { throw CryptoError(operation: "cannot read the key file \(path)", detail: "") }
        let value = try JSONParser.parse([UInt8](data))
        guard case .array(let items)? = value["keys"], !items.isEmpty else {
            throw CryptoError(operation: "the key file \(path) holds no keys", detail: "")
        }
        return try items.map { item in
            guard let kid = item["kid"]?.stringValue, let pem = item["privateKey"]?.stringValue,
                  let created = item["createdAt"]?.stringValue.flatMap(Timestamp.init(rfc3339:)) else {
                throw CryptoError(operation: "the key file \(path) has a malformed entry", detail: "")
            }
            return Entry(kid: kid, key: try Key.privateKey(pem: pem), createdAt: created)
        }
    }

    /// Writes the key file atomically, readable and writable by its owner only.
    static func save(_ entries: [Entry], to path: String) throws {
        let directory = URL(fileURLWithPath: path).deletingLastPathComponent().path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let document: Value = ["keys": .array(try entries.map { e in
            ["kid": .string(e.kid), "createdAt": .string(e.createdAt.rfc3339), "algorithm": .string(e.key.algorithm.rawValue),
             "privateKey": .string(try e.key.privatePEM())]
        })]
        let temporary = path + ".tmp-\(getpid())"
        let bytes = JSONWriter.encode(document, options: .pretty)
        guard FileManager.default.createFile(atPath: temporary, contents: Data(bytes), attributes: [.posixPermissions: 0o600]) else {
            throw CryptoError(operation: "cannot write the key file \(temporary)", detail: "")
        }
        chmod(temporary, 0o600)
        guard rename(temporary, path) == 0 else {
            unlink(temporary)
            throw CryptoError(operation: "cannot replace the key file \(path)", detail: String(cString: strerror(errno)))
        }
    }
}
