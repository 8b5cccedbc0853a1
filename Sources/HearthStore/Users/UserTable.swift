import HearthModel

/// Auth users in the runtime's database. Uniqueness of uid, email (case-insensitively), phone number
/// and provider identities is enforced by the database, so of two concurrent creations with one
/// email exactly one succeeds; the other gets `already-exists`.
public final class UserTable: Sendable {
    let writer: Writer
    let readers: ReaderPool
    /// Notified when a user event is logged (the delivery engine routes it).
    let activity: WorkSignal
    /// What tokens' checks read, used again until a user changes (see `TokenStateCache`).
    let tokenStates: TokenStateCache

    init(writer: Writer, readers: ReaderPool, activity: WorkSignal, tokenStates: TokenStateCache) {
        self.writer = writer
        self.readers = readers
        self.activity = activity
        self.tokenStates = tokenStates
    }

    /// The users of an engine (`engine.users`, as its concrete type, for the store's own tests).
    public convenience init(engine: SQLiteEngine) {
        self.init(writer: engine.writer, readers: engine.readers, activity: engine.activity, tokenStates: engine.userTable.tokenStates)
    }

    static func encode(_ user: UserRecord) throws -> [UInt8] {
        BinaryValueCodec.encode(try ValueEncoder().encode(user))
    }

    static func decode(_ bytes: [UInt8]) throws -> UserRecord {
        try ValueDecoder().decode(UserRecord.self, from: try BinaryValueCodec.decode(bytes))
    }

    /// Emails as stored for uniqueness and lookup (see `EmailKey`).
    static func normalizedEmail(_ email: String?) -> String? { email.map(EmailKey.of) }

    // MARK: reads

    /// What an ID token's check needs of a user (disabled, tokens revoked before): read from the
    /// database, or what was read before while no user has changed since (`TokenStateCache`). Every
    /// change to the users table through Hearth, in any process on the data directory, says so once
    /// it is committed, so a user disabled, deleted or with tokens revoked is refused from the next
    /// check on; a signed-in app's calls (a token on every one) then cost an `fstat` instead of a
    /// read transaction.
    public func tokenState(uid: String) throws -> UserTokenState? {
        let stamp = tokenStates.stamp(now: writer.clock.now())
        if let known = tokenStates.state(uid, stamp) { return known }
        let state = try readers.withReader { db in try UserTable.tokenState(db, uid: uid) }
        tokenStates.keep(uid, state, stamp)
        return state
    }

    /// `tokenState` for `UserRepository.tokenStateNow`: the same, on the calling thread, reading
    /// (when it must) with a connection already open and without waiting for a lock
    /// (`.unavailable` when it would).
    public func tokenStateNow(uid: String) -> ImmediateTokenState {
        let stamp = tokenStates.stamp(now: writer.clock.now())
        if let known = tokenStates.state(uid, stamp) { return known.map(ImmediateTokenState.user) ?? .noSuchUser }
        do {
            guard let found = try readers.withIdleReaderNotWaiting({ db in try UserTable.tokenState(db, uid: uid) }) else { return .unavailable }
            tokenStates.keep(uid, found, stamp)
            guard let state = found else { return .noSuchUser }
            return .user(state)
        } catch {
            return .unavailable
        }
    }

    /// The read behind both: the stored record's map, without building a `UserRecord`.
    static func tokenState(_ db: Connection, uid: String) throws -> UserTokenState? {
        try db.query("SELECT record FROM users WHERE uid = ?", [.text(uid)]) { s in
            let record = try BinaryValueCodec.decode(s.blob(0))
            let after: Timestamp?
            if case .timestamp(let t)? = record["tokensValidAfterTime"] { after = t } else { after = nil }
            return UserTokenState(disabled: record["disabled"]?.boolValue ?? false, tokensValidAfterTime: after)
        }.first
    }

    public func get(uid: String) throws -> UserRecord? {
        try readers.withReader { db in try UserTable.read(db, "SELECT record FROM users WHERE uid = ?", [.text(uid)]) }
    }

    public func get(email: String) throws -> UserRecord? {
        try readers.withReader { db in try UserTable.read(db, "SELECT record FROM users WHERE email = ?", [.text(EmailKey.of(email))]) }
    }

    public func get(phoneNumber: String) throws -> UserRecord? {
        try readers.withReader { db in try UserTable.read(db, "SELECT record FROM users WHERE phone = ?", [.text(phoneNumber)]) }
    }

    public func get(provider: String, providerUID: String) throws -> UserRecord? {
        try readers.withReader { db in
            try UserTable.read(db, "SELECT u.record FROM user_providers AS p JOIN users AS u ON u.uid = p.uid WHERE p.provider = ? AND p.provider_uid = ?",
                               [.text(provider), .text(providerUID)])
        }
    }

    static func read(_ db: Connection, _ sql: String, _ bindings: [SQLiteValue]) throws -> UserRecord? {
        try db.query(sql, bindings) { try decode($0.blob(0)) }.first
    }

    /// Users ordered by uid, `maxResults` at a time; pass the returned token for the next page.
    public func list(maxResults: Int, pageToken: String?) throws -> (users: [UserRecord], nextPageToken: String?) {
        try readers.withReader { db in
            let users = try db.query("SELECT record FROM users WHERE uid > ? ORDER BY uid LIMIT ?",
                                     [.text(pageToken ?? ""), .integer(Int64(maxResults + 1))]) { try UserTable.decode($0.blob(0)) }
            if users.count > maxResults {
                let page = Array(users.prefix(maxResults))
                return (page, page.last?.uid)
            }
            return (users, nil)
        }
    }

    public func count() throws -> Int {
        try readers.withReader { db in Int(try db.scalarInt("SELECT count(*) FROM users") ?? 0) }
    }

    // MARK: writes

    /// Stores a new user and logs its creation; `already-exists` names what is taken.
    public func create(_ user: UserRecord, time: Timestamp) async throws {
        let record = try UserTable.encode(user)
        try await writer.withTransaction { db in
            try UserTable.checkUnique(db, user, except: nil)
            try UserTable.insert(db, user, record: record)
            try UserTable.logEvent(db, .created, user, time: time)
        }
        tokenStates.changed()
        activity.notify()
    }

    /// Stores a new user's row and provider links (uniqueness checked by the caller).
    static func insert(_ db: Connection, _ user: UserRecord, record: [UInt8]) throws {
        try db.run("INSERT INTO users(uid, email, phone, record, create_time) VALUES (?, ?, ?, ?, ?)", [
            .text(user.uid), UserTable.normalizedEmail(user.email).map { .text($0) } ?? .null,
            user.phoneNumber.map { .text($0) } ?? .null, .blob(record), .integer(RowEncoding.micros(user.metadata.creationTime)),
        ])
        try UserTable.writeProviders(db, user)
    }

    /// Applies `change` to a user atomically and returns the result; `not-found` for an unknown uid.
    public func update(uid: String, _ change: @Sendable (inout UserRecord) throws -> Void) async throws -> UserRecord {
        let updated = try await writer.withTransaction { db in
            guard var user = try UserTable.read(db, "SELECT record FROM users WHERE uid = ?", [.text(uid)]) else {
                throw HTTPSError(.notFound, "no user record for uid \(uid)")
            }
            try change(&user)
            guard user.uid == uid else { throw HTTPSError(.invalidArgument, "a user's uid cannot change") }
            try UserTable.checkUnique(db, user, except: uid)
            try db.run("UPDATE users SET email = ?, phone = ?, record = ? WHERE uid = ?", [
                UserTable.normalizedEmail(user.email).map { .text($0) } ?? .null, user.phoneNumber.map { .text($0) } ?? .null,
                .blob(try UserTable.encode(user)), .text(uid),
            ])
            try db.run("DELETE FROM user_providers WHERE uid = ?", [.text(uid)])
            try UserTable.writeProviders(db, user)
            return user
        }
        tokenStates.changed()
        return updated
    }

    /// Deletes a user with its refresh tokens and logs the deletion (with the record as it was).
    @discardableResult
    public func delete(uid: String, time: Timestamp) async throws -> UserRecord {
        defer { activity.notify() }
        let deleted = try await writer.withTransaction { db in
            guard let user = try UserTable.read(db, "SELECT record FROM users WHERE uid = ?", [.text(uid)]) else {
                throw HTTPSError(.notFound, "no user record for uid \(uid)")
            }
            try db.run("DELETE FROM users WHERE uid = ?", [.text(uid)])
            try db.run("DELETE FROM user_providers WHERE uid = ?", [.text(uid)])
            // Its refresh tokens stop working but are kept, revoked and emptied of the developer
            // claims they carried: a user created later under the same uid must not inherit them,
            // and using one says the token expired.
            _ = try UserTable.revokeRefreshTokens(db, uid: uid, time: time)
            try db.run("UPDATE refresh_tokens SET claims = ? WHERE uid = ?", [.blob(BinaryValueCodec.encode(.map([:]))), .text(uid)])
            try db.run("DELETE FROM oob_codes WHERE uid = ?", [.text(uid)])
            try UserTable.logEvent(db, .deleted, user, time: time)
            return user
        }
        tokenStates.changed()
        return deleted
    }

    static func checkUnique(_ db: Connection, _ user: UserRecord, except uid: String?) throws {
        switch try clash(db, user, except: uid) {
        case nil: return
        case .uid?: throw HTTPSError(.alreadyExists, "the user with the provided uid already exists")
        case .email?: throw HTTPSError(.alreadyExists, "the email address is already in use by another account")
        case .phone?: throw HTTPSError(.alreadyExists, "the phone number is already in use by another account")
        case .provider(let p, _)?: throw HTTPSError(.alreadyExists, "the \(p.providerId) account is already linked to another user")
        }
    }

    /// What of `user` another stored user already has (its uid, unless it is `uid` being updated).
    enum Clash {
        case uid
        case email(owner: String)
        case phone(owner: String)
        case provider(UserRecord.ProviderInfo, owner: String)
    }

    static func clash(_ db: Connection, _ user: UserRecord, except uid: String?) throws -> Clash? {
        if uid == nil, try db.scalarInt("SELECT 1 FROM users WHERE uid = ?", [.text(user.uid)]) != nil { return .uid }
        if let email = normalizedEmail(user.email),
           let owner = try db.query("SELECT uid FROM users WHERE email = ?", [.text(email)], { $0.text(0) }).first, owner != uid {
            return .email(owner: owner)
        }
        if let phone = user.phoneNumber,
           let owner = try db.query("SELECT uid FROM users WHERE phone = ?", [.text(phone)], { $0.text(0) }).first, owner != uid {
            return .phone(owner: owner)
        }
        for p in user.providerData {
            if let owner = try db.query("SELECT uid FROM user_providers WHERE provider = ? AND provider_uid = ?", [.text(p.providerId), .text(p.uid)], { $0.text(0) }).first,
               owner != (uid ?? user.uid) {
                return .provider(p, owner: owner)
            }
        }
        return nil
    }

    static func writeProviders(_ db: Connection, _ user: UserRecord) throws {
        for p in user.providerData {
            try db.run("INSERT OR REPLACE INTO user_providers(provider, provider_uid, uid) VALUES (?, ?, ?)", [.text(p.providerId), .text(p.uid), .text(user.uid)])
        }
    }

    static func logEvent(_ db: Connection, _ kind: UserEventKind, _ user: UserRecord, time: Timestamp) throws {
        try db.run("INSERT INTO user_events(time, kind, uid, record) VALUES (?, ?, ?, ?)",
                   [.integer(RowEncoding.micros(time)), .integer(kind == .created ? 0 : 1), .text(user.uid), .blob(try encode(user.redacted))])
    }

    // MARK: the user event log

    /// Events after `sequence`, oldest first.
    public func events(after sequence: Int64, limit: Int) throws -> [UserEventRecord] {
        try readers.withReader { db in
            try db.query("SELECT seq, time, kind, record FROM user_events WHERE seq > ? ORDER BY seq LIMIT ?", [.integer(sequence), .integer(Int64(limit))]) { s in
                UserEventRecord(sequence: s.int64(0), time: RowEncoding.time(s.int64(1)), kind: s.int64(2) == 0 ? .created : .deleted, user: try UserTable.decode(s.blob(3)))
            }
        }
    }

    public func lastEventSequence() throws -> Int64 {
        try readers.withReader { db in try db.scalarInt("SELECT max(seq) FROM user_events") ?? 0 }
    }

    // MARK: refresh tokens

    public func storeRefreshToken(hash: [UInt8], _ record: RefreshTokenRecord) async throws {
        let claims = BinaryValueCodec.encode(.map(record.claims))
        try await writer.withTransaction { db in
            try db.run("INSERT INTO refresh_tokens(hash, uid, claims, auth_time, create_time, sign_in_provider) VALUES (?, ?, ?, ?, ?, ?)", [
                .blob(hash), .text(record.uid), .blob(claims), .integer(RowEncoding.micros(record.authTime)),
                .integer(RowEncoding.micros(record.createTime)), .text(record.signInProvider),
            ])
        }
    }

    public func refreshTokenRecord(hash: [UInt8]) throws -> RefreshTokenRecord? {
        try readers.withReader { db in
            try db.query("SELECT uid, claims, auth_time, create_time, revoked_time, sign_in_provider FROM refresh_tokens WHERE hash = ?", [.blob(hash)]) { s in
                RefreshTokenRecord(uid: s.text(0), claims: (try BinaryValueCodec.decode(s.blob(1))).mapValue ?? [:],
                                   authTime: RowEncoding.time(s.int64(2)), createTime: RowEncoding.time(s.int64(3)),
                                   signInProvider: s.text(5), revokedTime: s.isNull(4) ? nil : RowEncoding.time(s.int64(4)))
            }.first
        }
    }

    /// Revokes every live refresh token of a user; returns how many there were.
    @discardableResult
    public func revokeAllRefreshTokens(uid: String) async throws -> Int {
        let now = writer.clock.now()
        return try await writer.withTransaction { db in try UserTable.revokeRefreshTokens(db, uid: uid, time: now) }
    }

    static func revokeRefreshTokens(_ db: Connection, uid: String, time: Timestamp) throws -> Int {
        try db.run("UPDATE refresh_tokens SET revoked_time = ? WHERE uid = ? AND revoked_time IS NULL",
                   [.integer(RowEncoding.micros(time)), .text(uid)])
        return db.changes
    }
}

extension UserTable {
    // MARK: out-of-band codes

    public func storeOobCode(_ code: OobCode) async throws {
        try await writer.withTransaction { db in
            // Expired codes go as new ones come: the table holds only what could still be used.
            try db.run("DELETE FROM oob_codes WHERE expire_time <= ?", [.integer(RowEncoding.micros(code.createTime))])
            try db.run("INSERT INTO oob_codes(code, kind, uid, email, new_email, create_time, expire_time) VALUES (?, ?, ?, ?, ?, ?, ?)", [
                .text(code.code), .text(code.kind.rawValue), .text(code.uid), .text(code.email), code.newEmail.map { .text($0) } ?? .null,
                .integer(RowEncoding.micros(code.createTime)), .integer(RowEncoding.micros(code.expireTime)),
            ])
        }
    }

    static let oobColumns = "code, kind, uid, email, new_email, create_time, expire_time"

    static func oobCode(_ s: Statement) -> OobCode? {
        guard let kind = OobCode.Kind(rawValue: s.text(1)) else { return nil }
        return OobCode(code: s.text(0), kind: kind, uid: s.text(2), email: s.text(3), newEmail: s.isNull(4) ? nil : s.text(4),
                       createTime: RowEncoding.time(s.int64(5)), expireTime: RowEncoding.time(s.int64(6)))
    }

    public func oobCode(_ code: String) async throws -> OobCode? {
        try readers.withReader { db in
            try db.query("SELECT \(UserTable.oobColumns) FROM oob_codes WHERE code = ?", [.text(code)], UserTable.oobCode).first ?? nil
        }
    }

    public func takeOobCode(_ code: String) async throws -> OobCode? {
        try await writer.withTransaction { db in
            guard let found = try db.query("SELECT \(UserTable.oobColumns) FROM oob_codes WHERE code = ?", [.text(code)], UserTable.oobCode).first ?? nil else {
                return nil
            }
            try db.run("DELETE FROM oob_codes WHERE code = ?", [.text(code)])
            return found
        }
    }

    /// The newest `limit` codes not yet used, oldest first (the emulator's listing, whose readers
    /// take the last code for an address).
    public func oobCodes(limit: Int) async throws -> [OobCode] {
        try readers.withReader { db in
            try db.query("SELECT \(UserTable.oobColumns) FROM oob_codes ORDER BY create_time DESC, code DESC LIMIT ?", [.integer(Int64(limit))], UserTable.oobCode)
                .compactMap { $0 }.reversed()
        }
    }
}

/// The auth service's view of the table (`UserRepository`), and the user event log's.
extension UserTable: UserStorage {
    public func user(uid: String) async throws -> UserRecord? { try get(uid: uid) }
    public func user(email: String) async throws -> UserRecord? { try get(email: email) }
    public func user(phoneNumber: String) async throws -> UserRecord? { try get(phoneNumber: phoneNumber) }
    public func user(provider: String, providerUID: String) async throws -> UserRecord? { try get(provider: provider, providerUID: providerUID) }
    public func refreshToken(hash: [UInt8]) async throws -> RefreshTokenRecord? { try refreshTokenRecord(hash: hash) }
    public func revokeRefreshTokens(uid: String) async throws { try await revokeAllRefreshTokens(uid: uid) }
}
