import Glibc
import HearthModel
import Synchronization

/// Tells every process on a data directory that its users changed, cheaply enough to ask on every
/// call: a file beside the database (`users.changes`) that each committed change to the users
/// table grows by one byte, appended by the process that committed it once its COMMIT returned.
/// Its `stat` (device, inode, size, change time) is the users' version: a reader that saw one
/// version before reading a user, and sees the same one later, read what is still stored, as far
/// as any change made through Hearth goes (this server, the CLI, another server on the directory).
///
/// The file only ever grows (a byte per change: a million changes make a megabyte). A process
/// that cannot append to it (another OS user's file, say) puts a new, empty file in its place,
/// whose inode changes the version. A version that cannot be read (no such file, not a regular
/// file: a symbolic link, a directory) is nil, and nothing is served from memory then. Changes
/// that do not append (the database edited by other means, a Hearth older than this file, a
/// process that could neither append nor replace it) are seen once what was read expires
/// (`TokenStateCache.lifetime`).
final class UserChanges: Sendable {
    static let name = "users.changes"
    let path: String
    /// False only in tests: this process cannot write the file (as for another OS user's file when
    /// the directory is not writable either), which the tests, run as root, cannot arrange.
    let writable: Bool
    /// The file's directory, held open: each version is an `fstatat` of the one name in it (no
    /// path to walk on every call, and always what is at that name now, whatever became of a file
    /// that was there before). -1 when it could not be opened: `lstat` of the whole path then.
    private let directory: Int32

    /// The file `users.changes` in `directory` (the database's own directory).
    init(directory: String, writable: Bool = true) {
        path = directory + "/" + UserChanges.name
        self.writable = writable
        self.directory = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
    }

    deinit {
        if directory >= 0 { close(directory) }
    }

    /// The users' version now; nil when it cannot be known.
    struct Version: Equatable, Sendable {
        let device: UInt64, inode: UInt64, size: Int64, changeSeconds: Int, changeNanoseconds: Int

        init(_ s: stat) {
            device = UInt64(s.st_dev)
            inode = UInt64(s.st_ino)
            size = Int64(s.st_size)
            changeSeconds = s.st_ctim.tv_sec
            changeNanoseconds = s.st_ctim.tv_nsec
        }
    }

    func version() -> Version? {
        var s = stat()
        let found = directory >= 0 ? fstatat(directory, UserChanges.name, &s, AT_SYMLINK_NOFOLLOW) : lstat(path, &s)
        guard found == 0, (s.st_mode & S_IFMT) == S_IFREG else { return nil }
        return Version(s)
    }

    /// Creates the file when it is missing (the store does on opening), so that the version can be
    /// read before any user changes.
    func prepare() {
        guard writable else { return }
        let fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0o600)
        if fd >= 0 { close(fd) }
    }

    /// Changes the version: called after each COMMIT that changed the users table. Appends a byte,
    /// or, when that fails, replaces the file by a new one. False when neither could be done (the
    /// change stays committed).
    @discardableResult
    func bump() -> Bool {
        guard writable else { return false }
        if append() { return true }
        let temporary = path + ".\(getpid()).tmp"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { return false }
        close(fd)
        if rename(temporary, path) == 0 { return true }
        unlink(temporary)
        return false
    }

    private func append() -> Bool {
        let fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0o600)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var s = stat()
        guard fstat(fd, &s) == 0, (s.st_mode & S_IFMT) == S_IFREG else { return false }
        var byte: UInt8 = 0x0a
        while true {
            let n = write(fd, &byte, 1)
            if n == 1 { return true }
            if n < 0 && errno == EINTR { continue }
            return false
        }
    }
}

/// What ID tokens' checks read of users (`UserTable.tokenState`), used again while no user
/// changes: the users' version (`UserChanges`) and this process's own count of changes are taken
/// before each read and kept with what it read; an entry counts only while both are still the
/// same, and for at most `lifetime` on the store's clock. The count catches what the version
/// cannot when this process fails to change it: a check that read a user just before this process
/// changed them, and kept the result after.
final class TokenStateCache: Sendable {
    let changes: UserChanges
    private let generation = Atomic<UInt64>(0)
    private let entries = Mutex<[String: Entry]>([:])

    /// How long a state read from the database is used again while nothing says the users changed:
    /// the bound for changes that do not change the version (see `UserChanges`).
    static let lifetime = Duration.seconds(1)
    /// At most this many users' states are kept (all forgotten when full).
    static let capacity = 10_000

    /// What a read is checked against, taken before it.
    struct Stamp: Sendable {
        let version: UserChanges.Version?
        let generation: UInt64
        let time: Timestamp
    }

    private struct Entry {
        let version: UserChanges.Version
        let generation: UInt64
        let state: UserTokenState?
        let readAt: Timestamp
    }

    init(changes: UserChanges) { self.changes = changes }

    func stamp(now: Timestamp) -> Stamp {
        // The count first: a change in this process between the two then shows in the count.
        let generation = generation.load(ordering: .acquiring)
        return Stamp(version: changes.version(), generation: generation, time: now)
    }

    /// The state read for `uid` under what `stamp` still shows, if it is recent; nil when it must
    /// be read (the inner nil: no such user).
    func state(_ uid: String, _ stamp: Stamp) -> UserTokenState?? {
        guard let version = stamp.version else { return nil }
        return entries.withLock { entries -> UserTokenState?? in
            guard let known = entries[uid], known.version == version, known.generation == stamp.generation,
                  known.readAt <= stamp.time, stamp.time - known.readAt < TokenStateCache.lifetime else { return nil }
            return .some(known.state)
        }
    }

    /// Keeps what a read under `stamp` found for `uid` (nothing when the version was unknown).
    func keep(_ uid: String, _ state: UserTokenState?, _ stamp: Stamp) {
        guard let version = stamp.version else { return }
        entries.withLock { entries in
            if entries.count >= TokenStateCache.capacity, entries[uid] == nil { entries.removeAll(keepingCapacity: true) }
            entries[uid] = Entry(version: version, generation: stamp.generation, state: state, readAt: stamp.time)
        }
    }

    /// After a COMMIT that changed users: forgets what this process read, and tells the other
    /// processes on the data directory.
    func changed() {
        generation.add(1, ordering: .releasing)
        entries.withLock { $0.removeAll(keepingCapacity: true) }
        changes.bump()
    }
}
