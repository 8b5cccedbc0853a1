import HearthModel

/// The store's schema as numbered migrations. `PRAGMA user_version` records how many have run; on
/// open the missing ones run in one transaction, and a database from a newer binary (a higher
/// version than this list knows) is refused rather than misread.
enum Schema {
    static let migrations: [String] = [
        // 1: documents, their collections, the field index and the change feed.
        """
        CREATE TABLE collections (
            id INTEGER PRIMARY KEY,
            path TEXT NOT NULL UNIQUE,
            parent_path TEXT NOT NULL,
            collection_id TEXT NOT NULL
        );
        CREATE INDEX collections_by_parent ON collections(parent_path, collection_id);
        CREATE INDEX collections_by_group ON collections(collection_id, path);

        CREATE TABLE documents (
            collection INTEGER NOT NULL,
            id TEXT NOT NULL,
            data BLOB NOT NULL,
            create_time INTEGER NOT NULL,
            update_time INTEGER NOT NULL,
            PRIMARY KEY (collection, id)
        ) WITHOUT ROWID;

        CREATE TABLE field_index (
            collection INTEGER NOT NULL,
            field TEXT NOT NULL,
            element INTEGER NOT NULL,
            value BLOB NOT NULL,
            id TEXT NOT NULL,
            PRIMARY KEY (collection, field, element, value, id)
        ) WITHOUT ROWID;

        CREATE TABLE changes (
            seq INTEGER PRIMARY KEY,
            commit_time INTEGER NOT NULL,
            path TEXT NOT NULL,
            kind INTEGER NOT NULL,
            before BLOB,
            after BLOB
        );
        CREATE INDEX changes_by_time ON changes(commit_time);

        CREATE TABLE consumers (
            name TEXT PRIMARY KEY,
            cursor INTEGER NOT NULL,
            updated_time INTEGER NOT NULL
        );
        """,
        // 2: auth users, their provider links, refresh tokens (hashed) and the user event log.
        """
        CREATE TABLE users (
            uid TEXT PRIMARY KEY,
            email TEXT UNIQUE,
            phone TEXT UNIQUE,
            record BLOB NOT NULL,
            create_time INTEGER NOT NULL
        );
        CREATE TABLE user_providers (
            provider TEXT NOT NULL,
            provider_uid TEXT NOT NULL,
            uid TEXT NOT NULL,
            PRIMARY KEY (provider, provider_uid)
        ) WITHOUT ROWID;
        CREATE INDEX user_providers_by_uid ON user_providers(uid);
        CREATE TABLE refresh_tokens (
            hash BLOB PRIMARY KEY,
            uid TEXT NOT NULL,
            claims BLOB NOT NULL,
            auth_time INTEGER NOT NULL,
            create_time INTEGER NOT NULL
        ) WITHOUT ROWID;
        CREATE INDEX refresh_tokens_by_uid ON refresh_tokens(uid);
        CREATE TABLE user_events (
            seq INTEGER PRIMARY KEY,
            time INTEGER NOT NULL,
            kind INTEGER NOT NULL,
            uid TEXT NOT NULL,
            record BLOB NOT NULL
        );
        """,
        // 3: the feed's high-water mark (last sequence and commit time), kept when pruning empties
        // the changes table, so that after a restart sequences are never reused and commit times
        // never go back.
        """
        CREATE TABLE feed_state (
            id INTEGER PRIMARY KEY CHECK (id = 1),
            last_sequence INTEGER NOT NULL,
            last_commit_time INTEGER NOT NULL
        );
        """,
        // 4: which fields are indexed, per collection id. An index is built when a query first needs
        // it and kept by every write afterwards; a database indexed by schema 1 (every field) keeps
        // all the fields it already has entries for.
        """
        CREATE TABLE indexed_fields (
            collection_id TEXT NOT NULL,
            field TEXT NOT NULL,
            PRIMARY KEY (collection_id, field)
        ) WITHOUT ROWID;
        INSERT INTO indexed_fields(collection_id, field)
            SELECT DISTINCT c.collection_id, i.field FROM field_index AS i JOIN collections AS c ON c.id = i.collection;
        """,
        // 5: pruning finds its cutoff by sequence (commit times rise with it), so the change feed
        // needs no second index that every commit would have to update.
        """
        DROP INDEX IF EXISTS changes_by_time;
        """,
        // 6: the delivery engine. A delivery is one event for one function (a document change, a
        // user event, a task, a schedule firing) with its attempts and state: pending (0), running
        // under a lease (1) or dead (2); a delivery that succeeds is deleted. `(function, event_id)`
        // is unique, so an event is queued for a function at most once. Task ids stay reserved in
        // `task_ids` for the dedupe window after they are enqueued; `schedules` keeps each
        // schedule's last firing, so a restart never fires an instant twice.
        """
        CREATE TABLE deliveries (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            function TEXT NOT NULL,
            event_id TEXT NOT NULL,
            ordering_key TEXT,
            payload BLOB NOT NULL,
            attempts INTEGER NOT NULL DEFAULT 0,
            first_attempt_time INTEGER,
            due_time INTEGER NOT NULL,
            state INTEGER NOT NULL DEFAULT 0,
            lease_owner TEXT,
            lease_until INTEGER,
            last_error TEXT,
            last_status INTEGER,
            dispatch_deadline REAL,
            create_time INTEGER NOT NULL,
            UNIQUE (function, event_id)
        );
        CREATE INDEX deliveries_due ON deliveries(function, state, due_time);
        CREATE INDEX deliveries_order ON deliveries(function, ordering_key, id) WHERE ordering_key IS NOT NULL;
        CREATE INDEX deliveries_leases ON deliveries(state, lease_until);
        CREATE TABLE task_ids (
            queue TEXT NOT NULL,
            id TEXT NOT NULL,
            enqueue_time INTEGER NOT NULL,
            PRIMARY KEY (queue, id)
        ) WITHOUT ROWID;
        CREATE TABLE schedules (
            function TEXT PRIMARY KEY,
            last_fire INTEGER NOT NULL
        );
        """,
        // 7: cursors in the user event log get their own table: `consumers` holds change-feed
        // positions only, whose minimum decides how far the feed may be pruned.
        """
        CREATE TABLE user_event_cursors (
            name TEXT PRIMARY KEY,
            cursor INTEGER NOT NULL,
            updated_time INTEGER NOT NULL
        );
        INSERT INTO user_event_cursors(name, cursor, updated_time)
            SELECT name, cursor, updated_time FROM consumers WHERE name LIKE 'user-trigger:%';
        DELETE FROM consumers WHERE name LIKE 'user-trigger:%';
        """,
        // 8: revoked refresh tokens are kept, marked, so a refresh with one is answered TOKEN_EXPIRED
        // (as Firebase does) rather than as an unknown token.
        """
        ALTER TABLE refresh_tokens ADD COLUMN revoked_time INTEGER;
        """,
        // 9: attempts that got an answer from the handler other than a 5xx failure (Cloud Tasks'
        // execution count), apart from attempts started.
        """
        ALTER TABLE deliveries ADD COLUMN executions INTEGER NOT NULL DEFAULT 0;
        """,
        // 10: each rate-limited function's token bucket, shared by every process claiming from
        // this database (tokens left and when they were last refilled, microseconds).
        """
        CREATE TABLE dispatch_buckets (
            function TEXT PRIMARY KEY,
            tokens REAL NOT NULL,
            refilled INTEGER NOT NULL
        );
        """,
        // 11: emails are keyed with ASCII letters folded only (EmailKey), no longer by Unicode
        // lower-casing: `fixups` recomputes the key of every stored user from its record.
        """
        SELECT 1;
        """,
        // 12: delivery payloads are the boundary's typed events (Boundary.Event's wire encoding),
        // no longer `Value` maps: `fixups` rewrites every stored one (LegacyPayload).
        """
        SELECT 1;
        """,
        // 13: a refresh token remembers how its session signed in (the ID tokens it mints say so
        // in `firebase.sign_in_provider`); out-of-band codes (verify email, reset password) are
        // stored until used or expired, shared by every process on this database.
        """
        ALTER TABLE refresh_tokens ADD COLUMN sign_in_provider TEXT NOT NULL DEFAULT 'custom';
        CREATE TABLE oob_codes (
            code TEXT PRIMARY KEY,
            kind TEXT NOT NULL,
            uid TEXT NOT NULL,
            email TEXT NOT NULL,
            new_email TEXT,
            create_time INTEGER NOT NULL,
            expire_time INTEGER NOT NULL
        );
        CREATE INDEX oob_codes_by_uid ON oob_codes(uid);
        """,
        // 14: the messaging outbox: every push a function sent, as the `log` mode records it (and
        // the FCM mode, with FCM's answer).
        """
        CREATE TABLE outbox (
            seq INTEGER PRIMARY KEY AUTOINCREMENT,
            time INTEGER NOT NULL,
            function TEXT NOT NULL,
            message BLOB NOT NULL,
            outcome TEXT NOT NULL,
            message_id TEXT
        );
        """,
        // 15: deploy history: unit versions (content-addressed library copies) and each
        // activation (deploy or rollback) of one.
        """
        CREATE TABLE unit_versions (
            unit TEXT NOT NULL,
            version TEXT NOT NULL,
            path TEXT NOT NULL,
            functions TEXT NOT NULL,
            created INTEGER NOT NULL,
            created_by TEXT NOT NULL,
            PRIMARY KEY (unit, version)
        ) WITHOUT ROWID;
        CREATE TABLE unit_deploys (
            seq INTEGER PRIMARY KEY AUTOINCREMENT,
            unit TEXT NOT NULL,
            version TEXT NOT NULL,
            action TEXT NOT NULL,
            time INTEGER NOT NULL,
            who TEXT NOT NULL,
            hosts INTEGER NOT NULL
        );
        CREATE INDEX unit_deploys_by_unit ON unit_deploys(unit, seq);
        """,
    ]

    /// Steps SQL cannot express, run right after the migration of that number (1-based), in the
    /// same transaction.
    static let fixups: [Int: @Sendable (Connection) throws -> Void] = [
        11: { db in
            let rows = try db.query("SELECT uid, record FROM users WHERE email IS NOT NULL") { ($0.text(0), $0.blob(1)) }
            for (uid, record) in rows {
                guard let email = try BinaryValueCodec.decode(record)["email"]?.stringValue else { continue }
                try db.run("UPDATE users SET email = ? WHERE uid = ?", [.text(EmailKey.of(email)), .text(uid)])
            }
        },
        12: { db in try LegacyPayload.convertAll(db) },
    ]

    static var version: Int { migrations.count }

    /// Brings the database up to `version`, or refuses one that is newer.
    /// The version is read again inside the write transaction: two processes opening one new
    /// database at once must not both run the same migrations.
    static func migrate(_ db: Connection) throws {
        func current() throws -> Int {
            let found = Int(try db.scalarInt("PRAGMA user_version") ?? 0)
            if found > version { throw StoreError.schemaTooNew(found: found, supported: version) }
            return found
        }
        guard try current() < version else { return }
        try db.transaction {
            let start = try current()
            for index in start..<version {
                try db.execute(migrations[index])
                try fixups[index + 1]?(db)
            }
            try db.execute("PRAGMA user_version = \(version)")
        }
    }
}

/// Failures of the store that are not about a caller's input.
public enum StoreError: Error, Sendable, CustomStringConvertible, Equatable {
    case schemaTooNew(found: Int, supported: Int)
    case closed

    public var description: String {
        switch self {
        case .schemaTooNew(let found, let supported):
            return "the database has schema version \(found), newer than this binary supports (\(supported)); use a newer hearth"
        case .closed:
            return "the store is closed"
        }
    }
}
