#ifndef HEARTH_SQLITE_WAL_H
#define HEARTH_SQLITE_WAL_H
/*
 * A VFS over SQLite's "unix" one that hands a writer connection's WAL appends to the kernel once
 * per transaction instead of twice per frame (see buffered_wal.c).
 */
struct sqlite3;

/// The VFS's name, for sqlite3_open_v2.
extern const char *const hearth_buffered_wal_vfs;

/// Registers the VFS (not as the default); safe to call more than once. SQLITE_OK or an error.
int hearth_buffered_wal_register(void);

/// Starts buffering the WAL appends of `db`, which was opened with the VFS and whose WAL is open
/// (the connection is in WAL mode and has read the database). SQLITE_OK; SQLITE_NOTFOUND when
/// the connection's files are not the VFS's, or SQLite is not the release the VFS was checked
/// against (3.40.x); or SQLITE_NOMEM.
int hearth_buffered_wal_start(struct sqlite3 *db);

/// The WAL writes `db` made through the buffer, the writes the kernel got for them, the flushes
/// made late, from a shared-memory call rather than as a transaction ended, and the frame headers
/// SQLite rewrote after reading their frames (passed straight through); -1 each when its WAL is
/// not buffered.
void hearth_buffered_wal_counts(struct sqlite3 *db, long long *writes, long long *flushes, long long *lateFlushes,
                                long long *headerRewrites);

/// For tests: the next flush of `db`'s WAL buffer fails with SQLITE_FULL and writes nothing, as a
/// full disk would. SQLITE_OK, or SQLITE_NOTFOUND when its WAL is not buffered.
int hearth_buffered_wal_fail_next_flush(struct sqlite3 *db);
#endif
