/*
 * A VFS over SQLite's "unix" one that gathers a writer connection's WAL appends in memory and
 * hands them to the kernel in one write per transaction.
 *
 * SQLite writes each WAL frame as two pwrite calls, its 24-byte header and then its page
 * (walWriteOneFrame in SQLite's wal.c), so a group commit of 20 frames costs 40 system calls on
 * the writer's thread, which every commit waits for. Here the frames of a transaction collect in
 * a buffer and go out together when the page of the frame that ends the transaction (its header
 * carries the database size, nonzero only on a commit frame) is written: within that xWrite, so a
 * failed write fails the commit as it would have without the buffer. (Also when that page does
 * not fit in what is left of the buffer: the bytes before it are written first, then the page.)
 *
 * Why this is safe for readers in this and other processes: a reader learns of new frames only
 * from the wal-index header, which the writer publishes after its commit frame is written
 * (walIndexWriteHdr, after sqlite3WalFrames has written every frame), and the buffer is empty by
 * then. As a second line, the buffer is also flushed before every shared-memory barrier, lock and
 * unmap call on the connection's database file (walIndexWriteHdr puts a barrier between its two header
 * copies, and readers take the header only when both agree), and before any read, sync, truncate,
 * size query or close of the WAL itself, and before a write that does not continue the buffered
 * bytes (SQLite rewrites a frame in place when a transaction spills a page twice). Frames of a
 * transaction that rolls back are flushed before its write lock is released, so they can never
 * land after another writer's. When a transaction spilled a page and wrote it again, SQLite
 * rewrites the frames' checksums at its commit (walRewriteChecksums: each frame read, then its
 * 24-byte header written, the commit frame's last): a header written right after a whole frame
 * was read goes straight through, so the commit frame's rewritten header fails the commit if its
 * write fails.
 *
 * A flush that fails, wherever, drops the bytes it held; from then on every call on the WAL fails
 * with SQLITE_IOERR_WRITE until the connection releases its write lock, but for reads of frames
 * that reached the file (an I/O error makes SQLite roll the whole transaction back, where a "disk
 * full" inside a statement would undo only that statement and leave frames counted that never
 * reached the file).
 *
 * What this relies on beyond SQLite's documented WAL format (https://www.sqlite.org/fileformat2.html:
 * a frame header's second field is the database size on a commit frame, zero otherwise) is how
 * SQLite 3.40's wal.c orders its writes, reads, barriers and locks, which is what this file was
 * checked against: hearth_buffered_wal_start refuses any other SQLite release (3.40.x only), and
 * the connection then writes as SQLite does.
 *
 * Only connections opened with this VFS and started with hearth_buffered_wal_start buffer; every
 * other file passes straight through. Not used with synchronous = FULL or EXTRA, where SQLite may
 * split the commit frame around a sync point (the Swift side starts it only for NORMAL and OFF).
 */
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include "CSQLiteWAL.h"

const char *const hearth_buffered_wal_vfs = "hearth-buffered-wal";

/* The unix VFS writes at most 0x1ffff bytes per call (seekAndWriteFd masks the count with it):
 * the buffer goes out in pieces of at most MAX_WRITE, 31 pages of 4 KiB, which holds the frames
 * of most group commits in one. */
enum { BUFFER_CAPACITY = 1 << 20, MAX_WRITE = 31 * 4096, FRAME_HEADER_BYTES = 24 };

typedef struct BufferedFile BufferedFile;
struct BufferedFile {
    sqlite3_file base;
    /* The unix VFS's file, in the memory right after this struct. */
    sqlite3_file *real;
    /* A database file: its connection's WAL, once started. A WAL: its database file. */
    BufferedFile *peer;
    /* A started WAL: bytes not yet written, meant for [start, start + length). */
    unsigned char *buffer;
    int length;
    sqlite3_int64 start;
    /* The last write was the header of a frame that ends a transaction. */
    int commitHeader;
    /* The last call read a whole frame, at frameRead (see walRewriteChecksums above). Cleared by
     * every shared-memory call on the database file: recovery (walIndexRecover) reads whole frames
     * too, and takes and releases locks before anything is written. */
    int afterRead;
    sqlite3_int64 frameRead;
    /* A flush failed, dropping bytes from lostFrom on: every call fails until the write lock is
     * released, but for reads below lostFrom (frames that reached the file, which a rollback
     * reads back). */
    int failed;
    sqlite3_int64 lostFrom;
    /* Tests: the next flush fails without writing. */
    int failNextFlush;
    /* Writes taken into the buffer, write calls made for them, and flushes made from the database
     * file's shared-memory calls with bytes still buffered (none while commits flush as they end;
     * only a transaction that spilled frames and rolled back can leave some). */
    long long writes, flushes, lateFlushes;
    /* Frame headers rewritten after a whole-frame read, passed straight through. */
    long long headerRewrites;
};

/* The unix file goes right after this struct, which keeps it aligned as unixOpen needs. */
_Static_assert(sizeof(BufferedFile) % 8 == 0, "BufferedFile must keep the file after it 8-byte aligned");

static sqlite3_vfs *unixVFS;

static int flush(BufferedFile *f) {
    int n = f->length;
    f->length = 0;
    f->commitHeader = 0;
    if (n > 0 && f->failNextFlush) {
        f->failNextFlush = 0;
        f->failed = 1;
        f->lostFrom = f->start;
        return SQLITE_FULL;
    }
    for (int done = 0; done < n;) {
        int chunk = n - done < MAX_WRITE ? n - done : MAX_WRITE;
        f->flushes++;
        int rc = f->real->pMethods->xWrite(f->real, f->buffer + done, chunk, f->start + done);
        if (rc != SQLITE_OK) {
            f->failed = 1;
            f->lostFrom = f->start + done;
            return rc;
        }
        done += chunk;
    }
    return SQLITE_OK;
}

/* For calls other than a write: an I/O error whatever the flush's, so SQLite rolls back the whole
 * transaction; and the sticky failure. */
static int flushBeforeOther(BufferedFile *f) {
    if (f->failed) return SQLITE_IOERR_WRITE;
    return flush(f) == SQLITE_OK ? SQLITE_OK : SQLITE_IOERR_WRITE;
}

/* Flushes a database file's WAL; for calls that cannot report an error (see the comment above:
 * the buffer is empty whenever a commit is published, so a failure here loses only frames of a
 * transaction that was not committed). */
static void flushPeerWAL(BufferedFile *f) {
    if (!f->peer || f->peer->length == 0) return;
    f->peer->lateFlushes++;
    (void)flush(f->peer);
}

#define REAL(f) (((BufferedFile *)(f))->real)
#define FORWARD(f, method, ...) (REAL(f)->pMethods->method(REAL(f), ##__VA_ARGS__))

static int walWrite(sqlite3_file *file, const void *data, int amount, sqlite3_int64 offset) {
    BufferedFile *f = (BufferedFile *)file;
    if (!f->buffer) return FORWARD(file, xWrite, data, amount, offset);
    if (f->failed) return SQLITE_IOERR_WRITE;
    f->writes++;
    int rewritesHeader = f->afterRead && amount == FRAME_HEADER_BYTES && offset == f->frameRead;
    f->afterRead = 0;
    f->headerRewrites += rewritesHeader;
    /* Whether this is the page of the frame that ends a transaction: taken before a flush to make
     * room, which forgets the header it writes (the commit's page must then still go out now). */
    int endsTransaction = f->commitHeader;
    if (f->length > 0 && (offset != f->start + f->length || amount > BUFFER_CAPACITY - f->length || amount > MAX_WRITE || rewritesHeader)) {
        int rc = flush(f);
        if (rc != SQLITE_OK) return rc;
    }
    if (amount > MAX_WRITE || rewritesHeader) {
        f->flushes++;
        f->commitHeader = 0;
        return FORWARD(file, xWrite, data, amount, offset);
    }
    const unsigned char *bytes = data;
    f->commitHeader = amount == FRAME_HEADER_BYTES && (bytes[4] | bytes[5] | bytes[6] | bytes[7]) != 0;
    if (f->length == 0) f->start = offset;
    memcpy(f->buffer + f->length, data, (size_t)amount);
    f->length += amount;
    return endsTransaction ? flush(f) : SQLITE_OK;
}

static int walRead(sqlite3_file *file, void *data, int amount, sqlite3_int64 offset) {
    BufferedFile *f = (BufferedFile *)file;
    if (f->failed) {
        if (offset + amount > f->lostFrom) return SQLITE_IOERR_WRITE;
    } else if (flush(f) != SQLITE_OK) {
        return SQLITE_IOERR_WRITE;
    }
    /* A whole frame (header and a page, a power of two) is read to rewrite its header, or by
     * recovery (see afterRead). */
    int page = amount - FRAME_HEADER_BYTES;
    f->afterRead = f->buffer && page >= 512 && (page & (page - 1)) == 0;
    f->frameRead = offset;
    return FORWARD(file, xRead, data, amount, offset);
}

static int walTruncate(sqlite3_file *file, sqlite3_int64 size) {
    int rc = flushBeforeOther((BufferedFile *)file);
    return rc != SQLITE_OK ? rc : FORWARD(file, xTruncate, size);
}

static int walSync(sqlite3_file *file, int flags) {
    int rc = flushBeforeOther((BufferedFile *)file);
    return rc != SQLITE_OK ? rc : FORWARD(file, xSync, flags);
}

static int walFileSize(sqlite3_file *file, sqlite3_int64 *size) {
    int rc = flushBeforeOther((BufferedFile *)file);
    return rc != SQLITE_OK ? rc : FORWARD(file, xFileSize, size);
}

static int walFileControl(sqlite3_file *file, int op, void *arg) {
    int rc = flushBeforeOther((BufferedFile *)file);
    return rc != SQLITE_OK ? rc : FORWARD(file, xFileControl, op, arg);
}

static int fileClose(sqlite3_file *file) {
    BufferedFile *f = (BufferedFile *)file;
    int flushed = f->buffer ? flushBeforeOther(f) : SQLITE_OK;
    if (f->peer) f->peer->peer = NULL;
    f->peer = NULL;
    free(f->buffer);
    f->buffer = NULL;
    int rc = FORWARD(file, xClose);
    return flushed != SQLITE_OK ? flushed : rc;
}

static int fileRead(sqlite3_file *file, void *data, int amount, sqlite3_int64 offset) { return FORWARD(file, xRead, data, amount, offset); }
static int fileWrite(sqlite3_file *file, const void *data, int amount, sqlite3_int64 offset) { return FORWARD(file, xWrite, data, amount, offset); }
static int fileTruncate(sqlite3_file *file, sqlite3_int64 size) { return FORWARD(file, xTruncate, size); }
static int fileSync(sqlite3_file *file, int flags) { return FORWARD(file, xSync, flags); }
static int fileFileSize(sqlite3_file *file, sqlite3_int64 *size) { return FORWARD(file, xFileSize, size); }
static int fileLock(sqlite3_file *file, int lock) { return FORWARD(file, xLock, lock); }
static int fileUnlock(sqlite3_file *file, int lock) { return FORWARD(file, xUnlock, lock); }
static int fileCheckReservedLock(sqlite3_file *file, int *out) { return FORWARD(file, xCheckReservedLock, out); }
static int fileFileControl(sqlite3_file *file, int op, void *arg) { return FORWARD(file, xFileControl, op, arg); }
static int fileSectorSize(sqlite3_file *file) { return FORWARD(file, xSectorSize); }
static int fileDeviceCharacteristics(sqlite3_file *file) { return FORWARD(file, xDeviceCharacteristics); }
/* A database file's shared-memory call: its WAL's last read was not walRewriteChecksums'. */
static void forgetFrameRead(BufferedFile *f) {
    if (f->peer) f->peer->afterRead = 0;
}
static int fileShmMap(sqlite3_file *file, int region, int size, int extend, void volatile **out) {
    forgetFrameRead((BufferedFile *)file);
    return FORWARD(file, xShmMap, region, size, extend, out);
}
/* The sticky failure clears when the WAL write lock is released. In locking_mode = EXCLUSIVE
 * SQLite takes no shared-memory locks and it would never clear: the store does not use that mode. */
static int fileShmLock(sqlite3_file *file, int offset, int n, int flags) {
    BufferedFile *f = (BufferedFile *)file;
    forgetFrameRead(f);
    flushPeerWAL(f);
    int rc = FORWARD(file, xShmLock, offset, n, flags);
    /* The WAL write lock (slot 0) released: the transaction that failed is over. */
    if (f->peer && (flags & SQLITE_SHM_UNLOCK) && (flags & SQLITE_SHM_EXCLUSIVE) && offset == 0) f->peer->failed = 0;
    return rc;
}
static void fileShmBarrier(sqlite3_file *file) {
    forgetFrameRead((BufferedFile *)file);
    flushPeerWAL((BufferedFile *)file);
    FORWARD(file, xShmBarrier);
}
static int fileShmUnmap(sqlite3_file *file, int deleteFlag) {
    flushPeerWAL((BufferedFile *)file);
    return FORWARD(file, xShmUnmap, deleteFlag);
}
static int fileFetch(sqlite3_file *file, sqlite3_int64 offset, int amount, void **out) { return FORWARD(file, xFetch, offset, amount, out); }
static int fileUnfetch(sqlite3_file *file, sqlite3_int64 offset, void *page) { return FORWARD(file, xUnfetch, offset, page); }

/* Every file but a WAL: straight through, with the database file's shared-memory calls flushing
 * its WAL first. */
static const sqlite3_io_methods fileMethods = {
    3, fileClose, fileRead, fileWrite, fileTruncate, fileSync, fileFileSize, fileLock, fileUnlock,
    fileCheckReservedLock, fileFileControl, fileSectorSize, fileDeviceCharacteristics,
    fileShmMap, fileShmLock, fileShmBarrier, fileShmUnmap, fileFetch, fileUnfetch,
};

static const sqlite3_io_methods walMethods = {
    3, fileClose, walRead, walWrite, walTruncate, walSync, walFileSize, fileLock, fileUnlock,
    fileCheckReservedLock, walFileControl, fileSectorSize, fileDeviceCharacteristics,
    fileShmMap, fileShmLock, fileShmBarrier, fileShmUnmap, fileFetch, fileUnfetch,
};

static int vfsOpen(sqlite3_vfs *vfs, const char *name, sqlite3_file *file, int flags, int *outFlags) {
    BufferedFile *f = (BufferedFile *)file;
    memset(f, 0, sizeof(*f));
    f->real = (sqlite3_file *)(f + 1);
    int rc = unixVFS->xOpen(unixVFS, name, f->real, flags, outFlags);
    if (rc != SQLITE_OK) {
        /* SQLite calls xClose after a failed xOpen only when pMethods is set: close the real file
         * here if it was opened, and leave ours unset. */
        if (f->real->pMethods) f->real->pMethods->xClose(f->real);
        return rc;
    }
    /* SQLite relies on the file's methods version: ours forwards the shared-memory and fetch calls,
     * which the unix VFS's files have (version 3). */
    if (f->real->pMethods->iVersion < 3) {
        f->real->pMethods->xClose(f->real);
        return SQLITE_CANTOPEN;
    }
    f->base.pMethods = (flags & SQLITE_OPEN_WAL) ? &walMethods : &fileMethods;
    return SQLITE_OK;
}

static int vfsDelete(sqlite3_vfs *vfs, const char *name, int syncDir) { return unixVFS->xDelete(unixVFS, name, syncDir); }
static int vfsAccess(sqlite3_vfs *vfs, const char *name, int flags, int *out) { return unixVFS->xAccess(unixVFS, name, flags, out); }
static int vfsFullPathname(sqlite3_vfs *vfs, const char *name, int n, char *out) { return unixVFS->xFullPathname(unixVFS, name, n, out); }
static void *vfsDlOpen(sqlite3_vfs *vfs, const char *name) { return unixVFS->xDlOpen(unixVFS, name); }
static void vfsDlError(sqlite3_vfs *vfs, int n, char *out) { unixVFS->xDlError(unixVFS, n, out); }
static void (*vfsDlSym(sqlite3_vfs *vfs, void *handle, const char *symbol))(void) { return unixVFS->xDlSym(unixVFS, handle, symbol); }
static void vfsDlClose(sqlite3_vfs *vfs, void *handle) { unixVFS->xDlClose(unixVFS, handle); }
static int vfsRandomness(sqlite3_vfs *vfs, int n, char *out) { return unixVFS->xRandomness(unixVFS, n, out); }
static int vfsSleep(sqlite3_vfs *vfs, int micros) { return unixVFS->xSleep(unixVFS, micros); }
static int vfsCurrentTime(sqlite3_vfs *vfs, double *out) { return unixVFS->xCurrentTime(unixVFS, out); }
static int vfsGetLastError(sqlite3_vfs *vfs, int n, char *out) { return unixVFS->xGetLastError(unixVFS, n, out); }
static int vfsCurrentTimeInt64(sqlite3_vfs *vfs, sqlite3_int64 *out) { return unixVFS->xCurrentTimeInt64(unixVFS, out); }

static sqlite3_vfs bufferedVFS = {
    2, 0, 0, NULL, "hearth-buffered-wal", NULL,
    vfsOpen, vfsDelete, vfsAccess, vfsFullPathname, vfsDlOpen, vfsDlError, vfsDlSym, vfsDlClose,
    vfsRandomness, vfsSleep, vfsCurrentTime, vfsGetLastError, vfsCurrentTimeInt64,
};

static pthread_once_t registered = PTHREAD_ONCE_INIT;
static int registerResult = SQLITE_ERROR;

static void registerOnce(void) {
    unixVFS = sqlite3_vfs_find("unix");
    if (!unixVFS || unixVFS->iVersion < 2) return;
    bufferedVFS.szOsFile = (int)sizeof(BufferedFile) + unixVFS->szOsFile;
    bufferedVFS.mxPathname = unixVFS->mxPathname;
    registerResult = sqlite3_vfs_register(&bufferedVFS, 0);
}

int hearth_buffered_wal_register(void) {
    pthread_once(&registered, registerOnce);
    return registerResult;
}

/* The connection's database file and WAL, when both are this VFS's. */
static int files(struct sqlite3 *db, BufferedFile **main, BufferedFile **wal) {
    sqlite3_file *m = NULL, *w = NULL;
    if (sqlite3_file_control(db, "main", SQLITE_FCNTL_FILE_POINTER, &m) != SQLITE_OK
        || sqlite3_file_control(db, "main", SQLITE_FCNTL_JOURNAL_POINTER, &w) != SQLITE_OK
        || !m || !w || m->pMethods != &fileMethods || w->pMethods != &walMethods) return SQLITE_NOTFOUND;
    *main = (BufferedFile *)m;
    *wal = (BufferedFile *)w;
    return SQLITE_OK;
}

/* The SQLite release whose WAL code this file was checked against, as major * 1000 + minor. */
enum { CHECKED_SQLITE_RELEASE = 3040 };

int hearth_buffered_wal_start(struct sqlite3 *db) {
    if (sqlite3_libversion_number() / 1000 != CHECKED_SQLITE_RELEASE) return SQLITE_NOTFOUND;
    BufferedFile *main, *wal;
    int rc = files(db, &main, &wal);
    if (rc != SQLITE_OK) return rc;
    if (!wal->buffer) {
        wal->buffer = malloc(BUFFER_CAPACITY);
        if (!wal->buffer) return SQLITE_NOMEM;
    }
    main->peer = wal;
    wal->peer = main;
    wal->afterRead = 0;
    return SQLITE_OK;
}

int hearth_buffered_wal_fail_next_flush(struct sqlite3 *db) {
    BufferedFile *main, *wal;
    if (files(db, &main, &wal) != SQLITE_OK || !wal->buffer) return SQLITE_NOTFOUND;
    wal->failNextFlush = 1;
    return SQLITE_OK;
}

void hearth_buffered_wal_counts(struct sqlite3 *db, long long *writes, long long *flushes, long long *lateFlushes,
                                long long *headerRewrites) {
    BufferedFile *main, *wal;
    *writes = *flushes = *lateFlushes = *headerRewrites = -1;
    if (files(db, &main, &wal) != SQLITE_OK || !wal->buffer) return;
    *writes = wal->writes;
    *flushes = wal->flushes;
    *lateFlushes = wal->lateFlushes;
    *headerRewrites = wal->headerRewrites;
}
