import CSQLite
import Foundation
import HearthModel
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
