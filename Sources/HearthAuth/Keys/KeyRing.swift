import Foundation
import HearthModel
import Synchronization

/// The runtime's signing keys: one active RSA 2048 key that signs new tokens, and the previous ones,
/// still trusted for verification after a rotation. Kept in a JSON file readable only by its owner
/// (mode 0600), created with a first key on first start.
///
/// Several processes share the file (`hearth serve` and CLI commands on one data directory): a
/// rotation is a read-modify-write under an exclusive `flock` on `<file>.lock`, so two rotations
/// keep both keys, and two first starts agree on one key. Each ring follows the file: signing and
/// the JWKS look at it every time (a `stat`, beside an RSA signature), verification at most once
/// per `recheckInterval`, and at once when a token names a key the ring does not know (one minted
/// by another process after its rotation).
public final class KeyRing: Sendable {
    public struct Entry: Sendable {
        public let kid: String
        public let key: Key
        public let createdAt: Timestamp
    }

    /// How many keys (the active one included) stay trusted after rotations.
    public static let retained = 3

    public let path: String
    /// How stale verification may be about keys another process dropped.
    public let recheckInterval: Duration
    private let state: Mutex<Loaded>
    /// When verification next looks at the file (monotonic nanoseconds).
    private let nextCheck = Atomic<UInt64>(0)

    private struct Loaded {
        var entries: [Entry]  // first is active
        var file: FileIdentity?
    }

    /// Loads the key file, or creates it with a new key.
    public init(path: String, clock: any Clock, recheckInterval: Duration = .seconds(1)) throws {
        self.path = path
        self.recheckInterval = recheckInterval
        if let loaded = try KeyRing.read(path) {
            state = Mutex(loaded)
            return
        }
        let entry = try KeyRing.newEntry(clock: clock)
        // Another process may be starting too: the first to hold the lock writes the file.
        let loaded = try KeyRing.locked(path) { () throws -> Loaded in
            if let theirs = try KeyRing.read(path) { return theirs }
            return Loaded(entries: [entry], file: try KeyRing.save([entry], to: path))
        }
        state = Mutex(loaded)
    }

    /// A key ring in memory only (tests).
    public init(keys: [Entry]) {
        path = ""
        recheckInterval = .zero
        state = Mutex(Loaded(entries: keys, file: nil))
    }

    /// The key that signs new tokens.
    public var active: Entry {
        refresh(force: true)
        return state.withLock { $0.entries[0] }
    }

    /// The trusted keys, the active one first.
    public var entries: [Entry] {
        refresh(force: true)
        return state.withLock { $0.entries }
    }

    /// Whether the key `kid` still verifies tokens (it was not dropped by rotations).
    public func trusts(_ kid: String) -> Bool {
        refresh(force: false)
        return state.withLock { $0.entries.contains { $0.kid == kid } }
    }

    public var verificationKeys: [String: Key] { verificationKeys(for: nil) }

    /// The keys to verify a token signed with `kid`: if the ring does not know it, it reads the file
    /// first (another process may have rotated).
    public func verificationKeys(for kid: String?) -> [String: Key] {
        refresh(force: false)
        var entries = state.withLock { $0.entries }
        if let kid, !entries.contains(where: { $0.kid == kid }) {
            refresh(force: true)
            entries = state.withLock { $0.entries }
        }
        return Dictionary(entries.map { ($0.kid, $0.key) }, uniquingKeysWith: { a, _ in a })
    }

    /// Makes a new active key; the previous ones stay valid for verification (up to `retained`).
    /// With a file, the rotation starts from the file as it is (another process may have rotated).
    @discardableResult
    public func rotate(clock: any Clock) throws -> Entry {
        let entry = try KeyRing.newEntry(clock: clock)
        func rotated(_ keys: [Entry]) -> [Entry] { Array(([entry] + keys).prefix(KeyRing.retained)) }
        guard !path.isEmpty else {
            state.withLock { $0.entries = rotated($0.entries) }
            return entry
        }
        let loaded = try KeyRing.locked(path) { () throws -> Loaded in
            let current = try KeyRing.read(path)?.entries ?? state.withLock { $0.entries }
            let keys = rotated(current)
            return Loaded(entries: keys, file: try KeyRing.save(keys, to: path))
        }
        state.withLock { $0 = loaded }
        return entry
    }

    /// The public keys as a JWKS document (`{"keys": [...]}`).
    public func jwks() throws -> Value {
        ["keys": .array(try entries.map { try $0.key.publicJWK(kid: $0.kid) })]
    }

    /// Reads the file again if it changed since it was last read (`force`, or once the recheck
    /// interval has passed). A file that cannot be read or parsed leaves the keys as they are: a
    /// later rotation writes it again.
    private func refresh(force: Bool) {
        guard !path.isEmpty else { return }
        if !force {
            let now = DispatchTime.now().uptimeNanoseconds
            guard now >= nextCheck.load(ordering: .relaxed) else { return }
            let interval = recheckInterval.components
            let nanoseconds = UInt64(clamping: interval.seconds) &* 1_000_000_000 &+ UInt64(clamping: interval.attoseconds / 1_000_000_000)
            nextCheck.store(now &+ nanoseconds, ordering: .relaxed)
        }
        guard let identity = FileIdentity(path), identity != state.withLock({ $0.file }) else { return }
        guard let loaded = try? KeyRing.read(path) else { return }
        state.withLock { $0 = loaded }
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

    /// The key file's keys and identity, or nil if there is no file.
    private static func read(_ path: String) throws -> Loaded? {
        // The identity first: a file replaced between the two reads is read again at the next refresh.
        guard let identity = FileIdentity(path) else { return nil }
        guard let data = FileManager.default.contents(atPath: path) else { throw CryptoError(operation: "cannot read the key file \(path)", detail: "") }
        let value = try JSONParser.parse([UInt8](data))
        guard case .array(let items)? = value["keys"], !items.isEmpty else {
            throw CryptoError(operation: "the key file \(path) holds no keys", detail: "")
        }
        let entries = try items.map { item in
            guard let kid = item["kid"]?.stringValue, let pem = item["privateKey"]?.stringValue,
                  let created = item["createdAt"]?.stringValue.flatMap(Timestamp.init(rfc3339:)) else {
                throw CryptoError(operation: "the key file \(path) has a malformed entry", detail: "")
            }
            return Entry(kid: kid, key: try Key.privateKey(pem: pem), createdAt: created)
        }
        return Loaded(entries: entries, file: identity)
    }

    /// Runs `body` holding an exclusive lock on `<path>.lock`, shared with other processes.
    private static func locked<T>(_ path: String, _ body: () throws -> T) throws -> T {
        let directory = URL(fileURLWithPath: path).deletingLastPathComponent().path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let descriptor = open(path + ".lock", O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw CryptoError(operation: "cannot open the key file's lock \(path).lock", detail: String(cString: strerror(errno)))
        }
        defer { close(descriptor) }
        while flock(descriptor, LOCK_EX) != 0 {
            guard errno == EINTR else { throw CryptoError(operation: "cannot lock the key file \(path)", detail: String(cString: strerror(errno))) }
        }
        defer { flock(descriptor, LOCK_UN) }
        return try body()
    }

    /// Writes the key file atomically, readable and writable by its owner only; returns the new
    /// file's identity. Callers hold the lock.
    private static func save(_ entries: [Entry], to path: String) throws -> FileIdentity? {
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
        return FileIdentity(path)
    }
}

/// What tells one version of a file from another: a save renames a new file into place, so the
/// inode changes; size and times catch an edit in place.
private struct FileIdentity: Equatable, Sendable {
    let device: UInt64, inode: UInt64, size: Int64
    let modified: Int, modifiedNanoseconds: Int, changed: Int, changedNanoseconds: Int

    init?(_ path: String) {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        device = UInt64(info.st_dev)
        inode = UInt64(info.st_ino)
        size = Int64(info.st_size)
        modified = info.st_mtim.tv_sec
        modifiedNanoseconds = info.st_mtim.tv_nsec
        changed = info.st_ctim.tv_sec
        changedNanoseconds = info.st_ctim.tv_nsec
    }
}
