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
/// by another process after its rotation). A file removed while a ring runs is written again from
/// the ring's keys; one that cannot be read leaves them in use and is reported once.
public final class KeyRing: Sendable {
    public struct Entry: Sendable {
        public let kid: String
        public let key: Key
        public let createdAt: Timestamp
    }

    /// How many keys (the active one included) stay trusted after rotations.
    public static let retained = 3
    /// How long a rotation or a first start waits for another process's lock on the file.
    static let lockWait: Duration = .seconds(30)

    public let path: String
    /// How stale verification may be about keys another process dropped (at most a day).
    public let recheckInterval: Duration
    private let state: Mutex<State>
    /// When verification next looks at the file (monotonic nanoseconds).
    private let nextCheck = Atomic<UInt64>(0)
    private let problems = Mutex<(@Sendable (String) -> Void)?>(nil)

    private struct State {
        var entries: [Entry]  // first is active
        /// The file the entries were read from (nil in memory), held open so that its inode number
        /// is not reused for a later version while the ring compares against it.
        var file: OpenFile?
        /// A version of the file that could not be read: not read again until it changes.
        var unreadable: FileIdentity?
        /// The last problem reported (a new version read or written clears it).
        var lastProblem: String?
    }

    /// Loads the key file, or creates it with a new key.
    public init(path: String, clock: any Clock, recheckInterval: Duration = .seconds(1)) throws {
        self.path = path
        self.recheckInterval = min(max(recheckInterval, .zero), .seconds(86_400))
        if let (entries, file) = try KeyRing.read(path) {
            state = Mutex(State(entries: entries, file: file))
            return
        }
        let entry = try KeyRing.newEntry(clock: clock)
        // Another process may be starting too: the first to hold the lock writes the file.
        let (entries, file) = try KeyRing.locked(path) { () throws -> ([Entry], OpenFile) in
            if let theirs = try KeyRing.read(path) { return theirs }
            return ([entry], try KeyRing.save([entry], to: path))
        }
        state = Mutex(State(entries: entries, file: file))
    }

    /// A key ring in memory only (tests).
    public init(keys: [Entry]) {
        path = ""
        recheckInterval = .zero
        state = Mutex(State(entries: keys))
    }

    /// Where a key file that cannot be read or written again is reported (the runtime's log).
    public func reportProblems(to report: @escaping @Sendable (String) -> Void) { problems.withLock { $0 = report } }

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

    /// `trusts` for a thread that must not wait: when the recheck interval has passed, it only
    /// looks at the file's identity, and answers nil (leaving it to `trusts`) when the file
    /// changed, is gone or cannot be looked at, where a refresh reads it, or writes it again under
    /// its lock.
    public func trustsWithoutWaiting(_ kid: String) -> Bool? {
        if !path.isEmpty, DispatchTime.now().uptimeNanoseconds >= nextCheck.load(ordering: .relaxed) {
            let known = state.withLock { $0.file?.identity }
            guard case .success(let identity?) = FileIdentity.of(path), identity == known else { return nil }
            scheduleNextCheck()
        }
        return state.withLock { $0.entries.contains { $0.kid == kid } }
    }

    private func scheduleNextCheck() {
        let interval = recheckInterval.components  // at most a day: no overflow
        nextCheck.store(DispatchTime.now().uptimeNanoseconds + UInt64(interval.seconds) * 1_000_000_000 + UInt64(interval.attoseconds / 1_000_000_000),
                        ordering: .relaxed)
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
        try KeyRing.locked(path) {
            let keys = rotated(try KeyRing.read(path)?.entries ?? state.withLock { $0.entries })
            let file = try KeyRing.save(keys, to: path)
            state.withLock { $0 = State(entries: keys, file: file) }
        }
        return entry
    }

    /// The public keys as a JWKS document (`{"keys": [...]}`).
    public func jwks() throws -> Value {
        ["keys": .array(try entries.map { try $0.key.publicJWK(kid: $0.kid) })]
    }

    /// Reads the file again if it changed since it was last read (`force`, or once the recheck
    /// interval has passed). A file that cannot be read leaves the keys as they are; a file
    /// removed is written again from them, so another process does not start a new one.
    private func refresh(force: Bool) {
        guard !path.isEmpty else { return }
        if !force {
            let now = DispatchTime.now().uptimeNanoseconds
            guard now >= nextCheck.load(ordering: .relaxed) else { return }
            scheduleNextCheck()
        }
        let (known, unreadable) = state.withLock { ($0.file, $0.unreadable) }
        let current: FileIdentity
        switch FileIdentity.of(path) {
        case .success(let identity?):
            guard identity != known?.identity, identity != unreadable else { return }
            current = identity
        case .success(nil):
            restore()
            return
        case .failure(let error):
            return reportOnce(nil, "cannot look at the signing key file \(path): \(error)")
        }
        do {
            guard let (entries, file) = try KeyRing.read(path) else { return }
            // Only over the version this refresh compared against: a rotation or another refresh
            // may have stored a newer one meanwhile.
            state.withLock { if $0.file === known { $0 = State(entries: entries, file: file) } }
        } catch {
            // Only what the file says marks this version unreadable; a failure to read it (out of
            // descriptors, a write under way) is tried again at the next refresh.
            reportOnce(error is KeyFileUnavailable ? nil : current, "the signing key file \(path) cannot be read (\(error)); the keys read before stay in use")
        }
    }

    /// Writes the ring's keys to its file, which another process removed (unless one wrote it again first).
    private func restore() {
        do {
            try KeyRing.locked(path) {
                if let (entries, file) = try KeyRing.read(path) {
                    state.withLock { $0 = State(entries: entries, file: file) }
                    return
                }
                let entries = state.withLock { $0.entries }
                let file = try KeyRing.save(entries, to: path)
                state.withLock { $0 = State(entries: entries, file: file) }
            }
            problems.withLock { $0 }?("the signing key file \(path) was removed; written again with the keys in use")
        } catch {
            reportOnce(nil, "the signing key file \(path) was removed and cannot be written again: \(error)")
        }
    }

    /// Reports a problem (not twice in a row), and marks the file's version `identity`, if any, as
    /// not to be read again until it changes.
    private func reportOnce(_ identity: FileIdentity?, _ message: String) {
        let repeated = state.withLock { s -> Bool in
            if let identity { s.unreadable = identity }
            defer { s.lastProblem = message }
            return s.lastProblem == message
        }
        if !repeated { problems.withLock { $0 }?(message) }
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

    /// The key file's keys, with the file held open, or nil if there is no file.
    private static func read(_ path: String) throws -> (entries: [Entry], file: OpenFile)? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            if errno == ENOENT { return nil }
            throw KeyFileUnavailable(CryptoError(operation: "cannot open the key file \(path)", detail: String(cString: strerror(errno))))
        }
        let file = OpenFile(descriptor)
        guard let identity = file.identity else {
            throw KeyFileUnavailable(CryptoError(operation: "cannot look at the key file \(path)", detail: String(cString: strerror(errno))))
        }
        let data: Data
        do { data = try FileHandle(fileDescriptor: descriptor, closeOnDealloc: false).readToEnd() ?? Data() } catch { throw KeyFileUnavailable(error) }
        guard data.count == identity.size else { throw KeyFileUnavailable(CryptoError(operation: "the key file \(path) changed while it was read", detail: "")) }
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
        return (entries, file)
    }

    /// Runs `body` holding an exclusive lock on `<path>.lock`, shared with other processes; waits
    /// for another holder at most `lockWait`.
    private static func locked<T>(_ path: String, _ body: () throws -> T) throws -> T {
        let directory = URL(fileURLWithPath: path).deletingLastPathComponent().path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let descriptor = open(path + ".lock", O_RDONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard descriptor >= 0 else {
            throw CryptoError(operation: "cannot open the key file's lock \(path).lock", detail: String(cString: strerror(errno)))
        }
        defer { close(descriptor) }
        let attempts = Int(lockWait.components.seconds) * 100
        for attempt in 0... {
            if flock(descriptor, LOCK_EX | LOCK_NB) == 0 { break }
            guard errno == EWOULDBLOCK || errno == EINTR else {
                throw CryptoError(operation: "cannot lock the key file \(path)", detail: String(cString: strerror(errno)))
            }
            guard attempt < attempts else {
                throw CryptoError(operation: "another process has held \(path).lock for \(lockWait)", detail: "")
            }
            usleep(10_000)
        }
        defer { flock(descriptor, LOCK_UN) }
        return try body()
    }

    /// Writes the key file atomically, readable and writable by its owner only; returns the new
    /// file, held open. Callers hold the lock.
    private static func save(_ entries: [Entry], to path: String) throws -> OpenFile {
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
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw CryptoError(operation: "cannot open the key file \(path) just written", detail: String(cString: strerror(errno))) }
        return OpenFile(descriptor)
    }
}

/// A version of the key file, held open.
private final class OpenFile: Sendable {
    let descriptor: Int32
    let identity: FileIdentity?

    init(_ descriptor: Int32) {
        self.descriptor = descriptor
        var info = stat()
        identity = fstat(descriptor, &info) == 0 ? FileIdentity(info) : nil
    }

    deinit { close(descriptor) }
}

/// What tells one version of a file from another: a save renames a new file into place, so the
/// inode changes (the ring holds the version it read open, so its number is not reused); size and
/// times catch an edit in place.
private struct FileIdentity: Equatable, Sendable {
    let device: UInt64, inode: UInt64, size: Int
    let modified: Int, modifiedNanoseconds: Int, changed: Int, changedNanoseconds: Int

    init(_ info: stat) {
        device = UInt64(info.st_dev)
        inode = UInt64(info.st_ino)
        size = info.st_size
        modified = info.st_mtim.tv_sec
        modifiedNanoseconds = info.st_mtim.tv_nsec
        changed = info.st_ctim.tv_sec
        changedNanoseconds = info.st_ctim.tv_nsec
    }

    /// The identity of the file at `path`: nil if there is none, an error if it cannot be looked at.
    static func of(_ path: String) -> Result<FileIdentity?, CryptoError> {
        var info = stat()
        if stat(path, &info) == 0 { return .success(FileIdentity(info)) }
        if errno == ENOENT { return .success(nil) }
        return .failure(CryptoError(operation: "stat", detail: String(cString: strerror(errno))))
    }
}

/// The key file could not be read (as opposed to read and found wrong): worth trying again.
private struct KeyFileUnavailable: Error, CustomStringConvertible {
    let underlying: any Error
    init(_ underlying: any Error) { self.underlying = underlying }
    var description: String { "\(underlying)" }
}
