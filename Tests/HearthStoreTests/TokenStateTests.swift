import CSQLite
import Foundation
import Glibc
import HearthModel
import Synchronization
@testable import HearthStore
import Testing

/// The user's token state read for a call on the HTTP server's own thread (`tokenStateNow`):
/// the same answer as `tokenState`, and never a wait for another connection's lock.
@Suite("Token state without waiting", .timeLimit(.minutes(1)))
struct TokenStateTests {
    @Test("tokenStateNow answers as tokenState does, read each time; with no idle connection it leaves the read to tokenState instead of opening one")
    func readsWithoutWaiting() async throws {
        try await withStore { store, _ in
            let engine = try #require(store.engine as? SQLiteEngine)
            let users = engine.userTable
            let record = UserRecord(uid: "ann", disabled: true, metadata: .init(creationTime: Timestamp(seconds: 1)), tokensValidAfterTime: Timestamp(seconds: 1))
            try await users.create(record, time: Timestamp(seconds: 1))
            #expect(users.tokenStateNow(uid: "ann") == .unavailable, "no connection idle yet: opening one is not for this thread")
            #expect(try await users.tokenState(uid: "ann") == UserTokenState(disabled: true, tokensValidAfterTime: record.tokensValidAfterTime))
            #expect(users.tokenStateNow(uid: "ann") == .user(UserTokenState(disabled: true, tokensValidAfterTime: record.tokensValidAfterTime)))
            #expect(users.tokenStateNow(uid: "nobody") == .noSuchUser)

            _ = try await users.update(uid: "ann") { $0.disabled = false }
            #expect(users.tokenStateNow(uid: "ann") == .user(UserTokenState(disabled: false, tokensValidAfterTime: record.tokensValidAfterTime)),
                    "read again each time")
        }
    }

    @Test("a user's token state is read once and used again while no user changes: a change through Hearth, in this process or another on the data directory (create, update, delete, import), is seen at the next check, also through a symbolic link to the database and after the file was renamed away; one made behind Hearth's back within a second; with the version file gone, every check reads; not a regular file, nothing is remembered until a change replaces it; a process that cannot change it still sees its own changes at once")
    func rememberedUntilUsersChange() async throws {
        let clock = ManualClock()
        try await withStore(clock: clock) { store, _ in
            let engine = store.sqlite
            let users = engine.userTable
            // As the auth service asks: through the protocol.
            let repository: any UserRepository = users
            let created = Timestamp(seconds: 1)
            try await users.create(UserRecord(uid: "ann", metadata: .init(creationTime: created)), time: created)
            let enabled = UserTokenState(disabled: false, tokensValidAfterTime: nil)
            let disabled = UserTokenState(disabled: true, tokensValidAfterTime: nil)
            #expect(try await repository.tokenState(uid: "ann") == enabled)

            // Changed behind Hearth's back (another connection, no version change): what was read
            // is used again, by both forms, until a second has passed on the store's clock.
            let directory = (engine.path as NSString).deletingLastPathComponent
            let raw = try Connection(path: engine.path, options: Connection.Options())
            func rawDisable(_ on: Bool) throws {
                let record = try UserTable.encode(UserRecord(uid: "ann", disabled: on, metadata: .init(creationTime: created)))
                try raw.run("UPDATE users SET record = ? WHERE uid = 'ann'", [.blob(record)])
            }
            try rawDisable(true)
            #expect(try await repository.tokenState(uid: "ann") == enabled, "remembered: the version did not change")
            #expect(users.tokenStateNow(uid: "ann") == .user(enabled))
            clock.advance(by: TokenStateCache.lifetime)
            #expect(try await repository.tokenState(uid: "ann") == disabled, "read again after tokenStateLifetime")

            // Through Hearth: seen at once, with no time passing.
            _ = try await users.update(uid: "ann") { $0.disabled = false }
            #expect(users.tokenStateNow(uid: "ann") == .user(enabled))

            // Another process on the data directory: a second store on the same file.
            let other = try await DocumentStore.open(path: engine.path, clock: clock)
            defer { other.close() }
            let otherUsers = other.sqlite.userTable
            _ = try await otherUsers.update(uid: "ann") { $0.disabled = true }
            #expect(users.tokenStateNow(uid: "ann") == .user(disabled), "another process's update")
            try await otherUsers.delete(uid: "ann", time: created)
            #expect(try await repository.tokenState(uid: "ann") == nil, "another process's delete")
            #expect(users.tokenStateNow(uid: "ann") == .noSuchUser)
            try await otherUsers.create(UserRecord(uid: "ann", metadata: .init(creationTime: created)), time: created)
            #expect(users.tokenStateNow(uid: "ann") == .user(enabled), "another process's create")
            #expect(try await repository.tokenState(uid: "bob") == nil)
            let imported = try await other.sqlite.importRecords(requireEmpty: false, Self.records([.user(UserRecord(uid: "bob", metadata: .init(creationTime: created)))]))
            #expect(imported.counts[.users] == 1)
            #expect(try await repository.tokenState(uid: "bob") == enabled, "another process's import")

            // A process that reached the database through a symbolic link to the file, from another
            // directory, names the same file.
            let link = directory + "-link"
            try FileManager.default.createDirectory(atPath: link, withIntermediateDirectories: false)
            defer { try? FileManager.default.removeItem(atPath: link) }
            try FileManager.default.createSymbolicLink(atPath: link + "/linked.sqlite", withDestinationPath: engine.path)
            let linked = try await DocumentStore.open(path: link + "/linked.sqlite", clock: clock)
            defer { linked.close() }
            #expect(users.tokenStateNow(uid: "ann") == .user(enabled))
            _ = try await linked.sqlite.userTable.update(uid: "ann") { $0.disabled = true }
            #expect(users.tokenStateNow(uid: "ann") == .user(disabled), "a change through the linked path")
            _ = try await linked.sqlite.userTable.update(uid: "ann") { $0.disabled = false }

            // The file renamed away (rotated, say): the next change makes a new one at the name,
            // and that is the one checked.
            #expect(users.tokenStateNow(uid: "ann") == .user(enabled))
            #expect(rename(directory + "/users.changes", directory + "/users.changes.1") == 0)
            #expect(users.tokenStateNow(uid: "ann") == .user(enabled), "no file at the name: read")
            _ = try await otherUsers.update(uid: "ann") { $0.disabled = true }
            #expect(users.tokenStateNow(uid: "ann") == .user(disabled), "another process's change after the rotation")
            _ = try await otherUsers.update(uid: "ann") { $0.disabled = false }
            #expect(users.tokenStateNow(uid: "ann") == .user(enabled))
            _ = try await otherUsers.update(uid: "ann") { $0.disabled = true }
            #expect(users.tokenStateNow(uid: "ann") == .user(disabled), "and the one after")
            _ = try await users.update(uid: "ann") { $0.disabled = false }

            // The version file removed: nothing is remembered; the next change through Hearth makes it again.
            try FileManager.default.removeItem(atPath: directory + "/users.changes")
            try rawDisable(true)
            #expect(users.tokenStateNow(uid: "ann") == .user(disabled), "no version: read every time")
            try rawDisable(false)
            #expect(try await repository.tokenState(uid: "ann") == enabled)
            _ = try await users.update(uid: "ann") { $0.disabled = true }
            #expect(FileManager.default.fileExists(atPath: directory + "/users.changes"))
            #expect(users.tokenStateNow(uid: "ann") == .user(disabled))

            // Not a regular file (a FIFO in its place, which cannot be appended to without a
            // reader): nothing is remembered, and the next change puts a new file in its place.
            try FileManager.default.removeItem(atPath: directory + "/users.changes")
            #expect(mkfifo(directory + "/users.changes", 0o600) == 0)
            #expect(users.tokenStateNow(uid: "ann") == .user(disabled))
            try rawDisable(false)
            #expect(users.tokenStateNow(uid: "ann") == .user(enabled), "no version: read every time")
            _ = try await otherUsers.update(uid: "ann") { $0.disabled = true }
            var info = stat()
            #expect(lstat(directory + "/users.changes", &info) == 0 && (info.st_mode & S_IFMT) == S_IFREG, "replaced by a regular file")
            #expect(users.tokenStateNow(uid: "ann") == .user(disabled))
            #expect(users.tokenStateNow(uid: "ann") == .user(disabled), "remembered again")

            // A process that cannot change the version (another OS user's file in a directory it
            // cannot write): its own checks forget what they read when it changes a user, even a
            // check that read just before the change and keeps its result after; other processes
            // see the change within TokenStateCache.lifetime.
            let stuck = UserTable(writer: engine.writer, readers: engine.readers, activity: engine.activity,
                                  tokenStates: TokenStateCache(changes: UserChanges(directory: directory, writable: false)))
            #expect(stuck.tokenStateNow(uid: "ann") == .user(disabled))
            let inFlight = stuck.tokenStates.stamp(now: clock.now())
            _ = try await stuck.update(uid: "ann") { $0.disabled = false }
            stuck.tokenStates.keep("ann", disabled, inFlight)  // the read from before the change, kept after it
            #expect(stuck.tokenStateNow(uid: "ann") == .user(enabled), "this process's own change is seen at once")
            #expect(users.tokenStateNow(uid: "ann") == .user(disabled), "not told")
            clock.advance(by: TokenStateCache.lifetime)
            #expect(users.tokenStateNow(uid: "ann") == .user(enabled), "read again after TokenStateCache.lifetime")
        }
    }

    /// Hands out `records` one at a time, as an import's reader does.
    static func records(_ records: [ExportRecord]) -> @Sendable () throws -> ExportRecord? {
        let left = Mutex(records[...])
        return { left.withLock { $0.popFirst() } }
    }

    /// A reader in WAL mode meets a lock only in rare moments (another process recovering the
    /// WAL), so this takes a writer's lock: the mechanism is the same busy handler.
    @Test("withoutBusyWaits turns SQLite's busy handler off for its body: a lock held by another connection fails at once with SQLITE_BUSY; afterwards the connection works as before")
    func busyHandlerOff() throws {
        let path = temporaryStorePath()
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
        let holder = try Connection(path: path, options: Connection.Options())
        var patient = Connection.Options()
        patient.busyTimeoutMilliseconds = 600_000  // were the handler on, the suite's time limit would end the test
        let other = try Connection(path: path, options: patient)
        try holder.execute("BEGIN IMMEDIATE")
        do {
            try other.withoutBusyWaits { try other.execute("BEGIN IMMEDIATE") }
            Issue.record("the lock was taken while another connection held it")
        } catch let error as SQLiteError {
            #expect(error.code == SQLITE_BUSY, "\(error)")
        }
        try holder.execute("COMMIT")
        try other.execute("BEGIN IMMEDIATE")
        try other.execute("COMMIT")
    }
}
