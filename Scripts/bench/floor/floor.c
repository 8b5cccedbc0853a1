// The floor under Hearth's two peer workloads on this machine: the least a server built on the same
// C libraries (libmicrohttpd configured as Hearth configures it, SQLite in WAL mode with
// synchronous = NORMAL) spends per request, with none of Hearth's own work. Scripts/bench/peers
// runs it under the same wrk load as Hearth and the peers, so that the goals can be set against
// what the machine allows at all.
//
//   floor echo PORT                POST: answers {"result":<the body's "data">} on libmicrohttpd's
//                                  thread (the data found by searching for "data":, not parsed).
//   floor echo-worker PORT         The same answer, built by a child process, as Hearth's isolated
//                                  units build it: libmicrohttpd's thread suspends the connection
//                                  and sends the body over a Unix socket; the child answers; a reader
//                                  thread stores the answer and resumes the connection, and
//                                  libmicrohttpd's thread queues it.
//   floor write PORT DIR           POST: the item goes to a writer thread, which takes everything
//                                  waiting (group commit, as Hearth's store does under load). One
//                                  transaction inserts the items (random 20-character ids), their
//                                  change rows and a delivery row each; after its COMMIT each request
//                                  is answered {"result":"<id>"}. Then the trigger's work, on the same
//                                  thread: a second transaction inserts the log documents and their
//                                  change rows and deletes the deliveries.
//   floor write-worker PORT DIR    The same rows, with the callable and the trigger in a child
//                                  process, as Hearth's isolated units run: the request goes to the
//                                  child, which asks the server to create the item (a service call);
//                                  the writer commits it and answers the child, which answers the
//                                  request; the writer sends the child the trigger's event, the child
//                                  asks for the log document, the writer commits it and answers, and
//                                  the child reports the trigger done, which deletes the delivery.
//                                  Each writer transaction takes everything waiting.
//   GET (write modes)              answers the number of triggers not yet done, so that a benchmark
//                                  can wait for them before counting.
//
// Frames between the server and the child: a 4-byte length, an 8-byte tag, a 1-byte kind, the bytes.
// As in Hearth: reads are buffered, and the child and the writer thread send what they have
// gathered in one write; WAL checkpoints run on a thread of their own past 16,000 pages.
// Less than Hearth does (so the floor asks less of the machine than Hearth must): no JSON parsing, no routing,
// rules, auth, metrics, leases or recovery; the deliveries table has only its unique index, and no
// routing cursor is kept. Bodies over 4 KiB are answered 413.
#define _GNU_SOURCE  // memmem
#include <microhttpd.h>
#include <sqlite3.h>
#include <pthread.h>
#include <stdatomic.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

enum { MAX_BODY = 4096, MAX_GROUP = 256 };  // a longer body is answered 413

// Frame kinds. Server to child: CALL (tag: the request), CREATED (the service call's answer: the
// id), EVENT (tag: the item's change sequence; the id), LOGGED. Child to server: CREATE (the
// callable's service call: the item), RESULT (the callable's answer), LOG (the trigger's service
// call), DONE (the trigger finished).
enum { CALL = 1, CREATE, CREATED, RESULT, EVENT, LOG, LOGGED, DONE };

struct request {
    size_t length;
    int too_long;
    char body[MAX_BODY];
    struct MHD_Connection *connection;  // set when the request is suspended
    char id[21];
    int answered;
    size_t answer_length;
    char answer[MAX_BODY + 64];
};

// What the writer thread takes in one transaction: items to create, log documents to create (the
// trigger's), deliveries to delete (triggers done).
struct job {
    int kind;  // CREATE, LOG or DONE
    struct request *request;  // CREATE
    long long sequence;  // LOG, DONE: the item's change sequence
    char id[21];  // LOG
};

static enum { ECHO, ECHO_WORKER, WRITE, WRITE_WORKER } mode;
static int worker_socket = -1;
static pthread_mutex_t send_lock = PTHREAD_MUTEX_INITIALIZER;
static sqlite3 *db;
static pthread_mutex_t queue_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t work = PTHREAD_COND_INITIALIZER;
static struct job *queue;
static size_t queued, queue_capacity;
static sqlite3_stmt *insert_doc, *insert_change, *insert_delivery, *delete_delivery, *begin, *commit;
static long long sequence;
static long pending_triggers;

static void die(const char *what) {
    fprintf(stderr, "floor: %s: %s\n", what, db ? sqlite3_errmsg(db) : "");
    exit(1);
}

static void run(sqlite3_stmt *s) {
    if (sqlite3_step(s) != SQLITE_DONE) {
        fprintf(stderr, "floor: step (%s): %d %s\n", sqlite3_sql(s), sqlite3_extended_errcode(db), sqlite3_errmsg(db));
        exit(1);
    }
    sqlite3_reset(s);
}

static void prepare(sqlite3_stmt **s, const char *sql) {
    if (sqlite3_prepare_v3(db, sql, -1, SQLITE_PREPARE_PERSISTENT, s, NULL) != SQLITE_OK) die(sql);
}

// Checkpoints on a thread of their own, as Hearth's store runs them (its Checkpointer): the
// writer's connection asks once per cycle, when the WAL reaches 16,000 pages (its WAL hook replaces
// SQLite's automatic checkpoint), and again only after 4,000 more if a pass could not copy
// everything. The thread runs PASSIVE checkpoints on a connection of its own until a pass finds at
// most 16 new frames (at most 10 passes), and flushes the database file (a PASSIVE pass that did
// not copy every frame leaves that to the next checkpoint); then the writer copies the few left at
// the end of its next commit, so the WAL holds nothing uncopied and starts over.
enum { checkpoint_threshold = 16000, checkpoint_retry_step = checkpoint_threshold / 4 };
static char store_path[4096];
static pthread_mutex_t checkpoint_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t checkpoint_wanted = PTHREAD_COND_INITIALIZER;
static int checkpoint_requested;
static int checkpoint_asked_at;  // the writer's only
static atomic_int checkpoint_copied_all;

static int wal_grew(void *unused, sqlite3 *connection, const char *name, int pages) {
    (void)unused; (void)name;
    if (pages < checkpoint_threshold) {
        checkpoint_asked_at = 0;
        atomic_store(&checkpoint_copied_all, 0);
        return SQLITE_OK;
    }
    if (atomic_exchange(&checkpoint_copied_all, 0)) {
        sqlite3_wal_checkpoint_v2(connection, NULL, SQLITE_CHECKPOINT_PASSIVE, NULL, NULL);
        return SQLITE_OK;
    }
    if (checkpoint_asked_at != 0 && pages < checkpoint_asked_at + checkpoint_retry_step) return SQLITE_OK;
    checkpoint_asked_at = pages;
    pthread_mutex_lock(&checkpoint_lock);
    checkpoint_requested = 1;
    pthread_cond_signal(&checkpoint_wanted);
    pthread_mutex_unlock(&checkpoint_lock);
    return SQLITE_OK;
}

static void *checkpoint_loop(void *unused) {
    (void)unused;
    sqlite3 *connection;
    if (sqlite3_open_v2(store_path, &connection, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK) die("open for checkpoints");
    sqlite3_busy_timeout(connection, 5000);
    // A connection that has not read the database yet has not opened its WAL either, and SQLite
    // before 3.41 answers its checkpoints SQLITE_OK with nothing done (log and done -1), as Hearth's
    // Connection avoids by setting journal_mode when it opens.
    if (sqlite3_exec(connection, "PRAGMA journal_mode = WAL", NULL, NULL, NULL) != SQLITE_OK) die("journal_mode for checkpoints");
    for (;;) {
        pthread_mutex_lock(&checkpoint_lock);
        while (!checkpoint_requested) pthread_cond_wait(&checkpoint_wanted, &checkpoint_lock);
        checkpoint_requested = 0;
        pthread_mutex_unlock(&checkpoint_lock);
        int copied = 0, all = 0;
        for (int pass = 0; pass < 10; pass++) {
            int log = 0, done = 0;
            if (sqlite3_wal_checkpoint_v2(connection, NULL, SQLITE_CHECKPOINT_PASSIVE, &log, &done) != SQLITE_OK) break;
            if (log <= 0 || done != log || log < copied) break;
            all = 1;
            int fresh = log - copied;
            copied = log;
            if (fresh <= 16) break;
        }
        if (all) {
            sqlite3_file *file = NULL;
            if (sqlite3_file_control(connection, "main", SQLITE_FCNTL_FILE_POINTER, &file) == SQLITE_OK && file && file->pMethods)
                file->pMethods->xSync(file, SQLITE_SYNC_NORMAL);
            atomic_store(&checkpoint_copied_all, 1);
        }
    }
    return NULL;
}

static void open_store(const char *dir) {
    char *path = store_path;
    snprintf(store_path, sizeof store_path, "%s/floor.sqlite", dir);
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK) die("open");
    // As Hearth's connections do: a lock another connection holds for a moment makes a write wait
    // instead of failing. Without it the floor once stopped with "database is locked" in a run of
    // Scripts/bench/peers (not reproduced in 20 runs alone; a likely cause is the checkpoint
    // connection taking the write lock to read again a WAL index header it found being written).
    sqlite3_busy_timeout(db, 5000);
    const char *schema =
        "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;"
        "CREATE TABLE IF NOT EXISTS documents (collection INTEGER NOT NULL, id TEXT NOT NULL, data BLOB NOT NULL,"
        "  create_time INTEGER NOT NULL, update_time INTEGER NOT NULL, PRIMARY KEY (collection, id)) WITHOUT ROWID;"
        "CREATE TABLE IF NOT EXISTS changes (seq INTEGER PRIMARY KEY, commit_time INTEGER NOT NULL, path TEXT NOT NULL,"
        "  kind INTEGER NOT NULL, before BLOB, after BLOB);"
        "CREATE TABLE IF NOT EXISTS deliveries (id INTEGER PRIMARY KEY, function TEXT NOT NULL, event_id TEXT NOT NULL,"
        "  payload BLOB NOT NULL, state INTEGER NOT NULL, due_time INTEGER NOT NULL, UNIQUE (function, event_id));";
    if (sqlite3_exec(db, schema, NULL, NULL, NULL) != SQLITE_OK) die("schema");
    prepare(&insert_doc, "INSERT INTO documents VALUES (?, ?, ?, 0, 0)");
    prepare(&insert_change, "INSERT INTO changes VALUES (?, 0, ?, 1, NULL, ?)");
    prepare(&insert_delivery, "INSERT INTO deliveries (id, function, event_id, payload, state, due_time) VALUES (?, 'benchLog', ?, ?, 1, 0)");
    prepare(&delete_delivery, "DELETE FROM deliveries WHERE id = ?");
    prepare(&begin, "BEGIN IMMEDIATE");
    prepare(&commit, "COMMIT");
    sqlite3_wal_hook(db, wal_grew, NULL);
    pthread_t checkpointer;
    if (pthread_create(&checkpointer, NULL, checkpoint_loop, NULL) != 0) die("pthread_create");
}

static void random_id(char out[21]) {
    static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    unsigned char bytes[20];
    if (getrandom(bytes, sizeof bytes, 0) != sizeof bytes) die("getrandom");
    for (int i = 0; i < 20; i++) out[i] = alphabet[bytes[i] % 62];
    out[20] = 0;
}

// {"data":X} -> {"result":X}, into out (at least length + 64 bytes).
static int echo(const char *body, size_t length, char *out, size_t size) {
    const char *data = memmem(body, length, "\"data\":", 7);
    size_t start = data ? (size_t)(data - body) + 7 : 0, end = length;
    while (end > start && body[end - 1] != '}') end--;
    if (end > start) end--;
    return snprintf(out, size, "{\"result\":%.*s}", (int)(end - start), body + start);
}

enum { FRAME_HEADER = 13 };

static void frame_header(char out[FRAME_HEADER], uint64_t tag, int kind, uint32_t length) {
    memcpy(out, &length, 4);
    memcpy(out + 4, &tag, 8);
    out[12] = (char)kind;
}

static int write_frame(int fd, uint64_t tag, int kind, const void *bytes, uint32_t length) {
    char header[FRAME_HEADER];
    frame_header(header, tag, kind, length);
    struct iovec parts[2] = {{header, FRAME_HEADER}, {(void *)bytes, length}};
    return writev(fd, parts, 2) == (ssize_t)(FRAME_HEADER + length) ? 0 : -1;
}

// Frames to send, gathered so that a batch goes out in one write (as Hearth's frame sockets send).
struct frame_buffer {
    size_t used;
    char bytes[16 * MAX_BODY];
};

static void flush_frames(int fd, struct frame_buffer *out) {
    for (size_t done = 0; done < out->used;) {
        ssize_t n = write(fd, out->bytes + done, out->used - done);
        if (n <= 0) die("send to the other process");
        done += (size_t)n;
    }
    out->used = 0;
}

static void add_frame(int fd, struct frame_buffer *out, uint64_t tag, int kind, const void *bytes, uint32_t length) {
    if (out->used + FRAME_HEADER + length > sizeof out->bytes) flush_frames(fd, out);
    frame_header(out->bytes + out->used, tag, kind, length);
    if (length) memcpy(out->bytes + out->used + FRAME_HEADER, bytes, length);
    out->used += FRAME_HEADER + length;
}

// Reads frames through a buffer, as many as each read brings (as Hearth's frame sockets do).
struct frame_reader {
    int fd;
    size_t start, end;
    char buffer[4 * MAX_BODY];
};

// The length of the frame at the front of the buffer, or -1 while its header is not all there.
static long long front_length(const struct frame_reader *r) {
    uint32_t length;
    if (r->end - r->start < FRAME_HEADER) return -1;
    memcpy(&length, r->buffer + r->start, 4);
    return length;
}

// Whether a whole frame is in the buffer already (the next call will not read).
static int frame_buffered(const struct frame_reader *r) {
    long long length = front_length(r);
    return length >= 0 && r->end - r->start >= FRAME_HEADER + (size_t)length;
}

// The next frame; its bytes stay valid until the next call. -1 at the end of the stream, or
// for a frame longer than any this program sends.
static int next_frame(struct frame_reader *r, uint64_t *tag, int *kind, const char **bytes, uint32_t *length) {
    for (;;) {
        if (front_length(r) > MAX_BODY + 64) return -1;
        if (frame_buffered(r)) {
            const char *front = r->buffer + r->start;
            memcpy(length, front, 4);
            memcpy(tag, front + 4, 8);
            *kind = front[12];
            *bytes = front + FRAME_HEADER;
            r->start += FRAME_HEADER + *length;
            return 0;
        }
        size_t have = r->end - r->start;
        if (r->start > 0) {  // keep the partial frame at the front
            memmove(r->buffer, r->buffer + r->start, have);
            r->start = 0;
            r->end = have;
        }
        ssize_t got = read(r->fd, r->buffer + r->end, sizeof r->buffer - r->end);
        if (got <= 0) return -1;
        r->end += (size_t)got;
    }
}

// From libmicrohttpd's threads to the child, under the lock the writer thread's flushes take too.
static void to_worker(uint64_t tag, int kind, const void *bytes, uint32_t length) {
    pthread_mutex_lock(&send_lock);
    int sent = write_frame(worker_socket, tag, kind, bytes, length);
    pthread_mutex_unlock(&send_lock);
    if (sent != 0) die("send to the worker");
}

// The child: one thread reading frames and answering each at once, as a worker does for handlers
// that only await their service calls. What it sends goes out in one write per batch read.
static void worker_loop(int fd) {
    static struct frame_reader reader;
    static struct frame_buffer sends;
    char out[MAX_BODY + 64];
    reader.fd = fd;
    for (;;) {
        uint64_t tag;
        int kind, n;
        uint32_t length;
        const char *bytes;
        if (!frame_buffered(&reader)) flush_frames(fd, &sends);
        if (next_frame(&reader, &tag, &kind, &bytes, &length) != 0) _exit(0);
        switch (kind) {
        case CALL:
            if (mode == ECHO_WORKER) {
                n = echo(bytes, length, out, sizeof out);
                add_frame(fd, &sends, tag, RESULT, out, (uint32_t)n);
            } else {
                add_frame(fd, &sends, tag, CREATE, bytes, length);  // ref.create(req.data)
            }
            break;
        case CREATED:  // return ref.id
            n = snprintf(out, sizeof out, "{\"result\":\"%.*s\"}", (int)length, bytes);
            add_frame(fd, &sends, tag, RESULT, out, (uint32_t)n);
            break;
        case EVENT:  // the trigger: documents.collection("benchLog").document(id).set(...)
            add_frame(fd, &sends, tag, LOG, bytes, length);
            break;
        case LOGGED:
            add_frame(fd, &sends, tag, DONE, NULL, 0);
            break;
        default:
            _exit(1);
        }
    }
}

static void enqueue(struct job job) {
    pthread_mutex_lock(&queue_lock);
    if (queued == queue_capacity) {
        queue_capacity = queue_capacity ? 2 * queue_capacity : 1024;
        queue = realloc(queue, queue_capacity * sizeof *queue);
        if (!queue) die("out of memory");
    }
    queue[queued++] = job;
    pthread_cond_signal(&work);
    pthread_mutex_unlock(&queue_lock);
}

static void answer_request(struct request *r, const char *bytes, size_t length) {
    memcpy(r->answer, bytes, length);
    r->answer_length = length;
    __atomic_store_n(&r->answered, 1, __ATOMIC_RELEASE);
    MHD_resume_connection(r->connection);  // the request may be gone once this returns
}

// The server's reader thread: the child's frames.
static void *reader_loop(void *unused) {
    (void)unused;
    static struct frame_reader reader;
    reader.fd = worker_socket;
    for (;;) {
        uint64_t tag;
        int kind;
        uint32_t length;
        const char *bytes;
        if (next_frame(&reader, &tag, &kind, &bytes, &length) != 0) die("the worker's socket");
        struct job job = {.kind = kind, .sequence = (long long)tag};
        switch (kind) {
        case RESULT:
            if (length > MAX_BODY + 64) die("a RESULT frame too long");
            answer_request((struct request *)(uintptr_t)tag, bytes, length);
            break;
        case CREATE:  // the item's body is already in its request
            job.request = (struct request *)(uintptr_t)tag;
            enqueue(job);
            break;
        case LOG:
            if (length != 20) die("a LOG frame without an id");
            memcpy(job.id, bytes, 20);
            job.id[20] = 0;
            enqueue(job);
            break;
        case DONE:
            enqueue(job);
            break;
        default:
            die("an unknown frame");
        }
    }
    return NULL;
}

static void insert(int collection, const char *id, const char *path, long long seq, const char *data, int length) {
    sqlite3_bind_int(insert_doc, 1, collection);
    sqlite3_bind_text(insert_doc, 2, id, -1, SQLITE_STATIC);
    sqlite3_bind_blob(insert_doc, 3, data, length, SQLITE_STATIC);
    run(insert_doc);
    sqlite3_bind_int64(insert_change, 1, seq);
    sqlite3_bind_text(insert_change, 2, path, -1, SQLITE_STATIC);
    sqlite3_bind_blob(insert_change, 3, data, length, SQLITE_STATIC);
    run(insert_change);
}

static void create_log(long long item_sequence, const char *id) {
    char path[64], log[64];
    snprintf(path, sizeof path, "benchLog/%.20s", id);
    int length = snprintf(log, sizeof log, "{\"item\":\"%.20s\",\"n\":7}", id);
    insert(2, id, path, ++sequence, log, length);
    if (mode == WRITE) {  // write-worker deletes the delivery when the child says DONE
        sqlite3_bind_int64(delete_delivery, 1, item_sequence);
        run(delete_delivery);
    }
}

// The writer thread: each turn takes every job waiting (up to MAX_GROUP) into one transaction and
// answers after its COMMIT; what it sends the child goes out in one write. In-process (write), the
// trigger's log documents are jobs for the next turn, as if the trigger ran at once.
static void *writer_loop(void *unused) {
    (void)unused;
    static struct job group[MAX_GROUP];
    static long long item_sequences[MAX_GROUP];
    static struct frame_buffer sends;
    for (;;) {
        pthread_mutex_lock(&queue_lock);
        while (!queued) pthread_cond_wait(&work, &queue_lock);
        size_t n = queued < MAX_GROUP ? queued : MAX_GROUP;
        memcpy(group, queue, n * sizeof *group);
        memmove(queue, queue + n, (queued - n) * sizeof *queue);
        queued -= n;
        pthread_mutex_unlock(&queue_lock);
        char path[64];
        run(begin);
        for (size_t i = 0; i < n; i++) {
            struct job *job = &group[i];
            if (job->kind == CREATE) {
                struct request *r = job->request;
                snprintf(path, sizeof path, "bench/%s", r->id);
                insert(1, r->id, path, ++sequence, r->body, (int)r->length);
                item_sequences[i] = sequence;
                sqlite3_bind_int64(insert_delivery, 1, sequence);
                sqlite3_bind_text(insert_delivery, 2, path, -1, SQLITE_STATIC);
                sqlite3_bind_blob(insert_delivery, 3, r->body, (int)r->length, SQLITE_STATIC);
                run(insert_delivery);
            } else if (job->kind == LOG) {
                create_log(job->sequence, job->id);
            } else {
                sqlite3_bind_int64(delete_delivery, 1, job->sequence);
                run(delete_delivery);
            }
        }
        run(commit);
        for (size_t i = 0; i < n; i++) {
            struct job *job = &group[i];
            if (job->kind == CREATE) {
                struct request *r = job->request;
                struct job log = {.kind = LOG, .sequence = item_sequences[i]};
                memcpy(log.id, r->id, 21);  // before the answer: the request may be gone after it
                if (mode == WRITE) {
                    char out[64];
                    int length = snprintf(out, sizeof out, "{\"result\":\"%s\"}", r->id);
                    answer_request(r, out, (size_t)length);
                    enqueue(log);
                } else {
                    add_frame(worker_socket, &sends, (uint64_t)(uintptr_t)r, CREATED, log.id, 20);
                    add_frame(worker_socket, &sends, (uint64_t)item_sequences[i], EVENT, log.id, 20);
                }
            } else if (job->kind == LOG && mode == WRITE_WORKER) {
                add_frame(worker_socket, &sends, (uint64_t)job->sequence, LOGGED, NULL, 0);
            } else {  // the trigger is done: a LOG in-process, a DONE from the child
                __atomic_sub_fetch(&pending_triggers, 1, __ATOMIC_RELAXED);
            }
        }
        if (sends.used) {
            pthread_mutex_lock(&send_lock);
            flush_frames(worker_socket, &sends);
            pthread_mutex_unlock(&send_lock);
        }
    }
    return NULL;
}

static void start_worker(void) {
    int pair[2];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, pair) != 0) die("socketpair");
    pid_t child = fork();
    if (child < 0) die("fork");
    if (child == 0) {
        close(pair[0]);
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        worker_loop(pair[1]);
    }
    close(pair[1]);
    worker_socket = pair[0];
    pthread_t reader;
    if (pthread_create(&reader, NULL, reader_loop, NULL) != 0) die("pthread_create");
}

static enum MHD_Result respond(struct MHD_Connection *connection, unsigned status, const char *bytes, size_t length) {
    struct MHD_Response *response = MHD_create_response_from_buffer(length, (void *)bytes, MHD_RESPMEM_MUST_COPY);
    MHD_add_response_header(response, "Content-Type", "application/json");
    enum MHD_Result ok = MHD_queue_response(connection, status, response);
    MHD_destroy_response(response);
    return ok;
}


static enum MHD_Result answer(void *cls, struct MHD_Connection *connection, const char *url, const char *method,
                              const char *version, const char *upload, size_t *upload_size, void **state) {
    (void)cls; (void)url; (void)version;
    struct request *r = *state;
    if (!r) {
        r = malloc(sizeof *r);  // not calloc: no need to clear the buffers
        if (!r) return MHD_NO;
        r->length = 0;
        r->too_long = 0;
        r->connection = NULL;
        r->answered = 0;
        *state = r;
        return MHD_YES;
    }
    if (*upload_size) {
        if (*upload_size > MAX_BODY - r->length) r->too_long = 1;
        else memcpy(r->body + r->length, upload, *upload_size);
        if (!r->too_long) r->length += *upload_size;
        *upload_size = 0;
        return MHD_YES;
    }
    char out[MAX_BODY + 64];
    if (r->too_long) {
        static const char too_long[] = "{\"error\":\"body too long\"}";
        return respond(connection, MHD_HTTP_CONTENT_TOO_LARGE, too_long, sizeof too_long - 1);
    }
    if (strcmp(method, "GET") == 0) {
        int length = snprintf(out, sizeof out, "%ld", __atomic_load_n(&pending_triggers, __ATOMIC_RELAXED));
        return respond(connection, MHD_HTTP_OK, out, (size_t)length);
    }
    if (mode == ECHO) return respond(connection, MHD_HTTP_OK, out, (size_t)echo(r->body, r->length, out, sizeof out));
    if (!r->connection) {  // first time here: to the child or the writer, and wait for the answer
        r->connection = connection;
        MHD_suspend_connection(connection);
        if (mode != ECHO_WORKER) __atomic_add_fetch(&pending_triggers, 1, __ATOMIC_RELAXED);
        if (mode == WRITE) {
            random_id(r->id);
            enqueue((struct job){.kind = CREATE, .request = r});
        } else {
            if (mode == WRITE_WORKER) random_id(r->id);  // the auto-id, chosen before the create
            to_worker((uint64_t)(uintptr_t)r, CALL, r->body, (uint32_t)r->length);
        }
        return MHD_YES;
    }
    if (!__atomic_load_n(&r->answered, __ATOMIC_ACQUIRE)) return MHD_YES;
    return respond(connection, MHD_HTTP_OK, r->answer, r->answer_length);
}

static void completed(void *cls, struct MHD_Connection *connection, void **state, enum MHD_RequestTerminationCode code) {
    (void)cls; (void)connection; (void)code;
    free(*state);
    *state = NULL;
}

int main(int argc, char **argv) {
    const char *names[] = {"echo", "echo-worker", "write", "write-worker"};
    int found = -1;
    for (int i = 0; argc >= 3 && i < 4; i++) {
        if (strcmp(argv[1], names[i]) == 0) found = i;
    }
    if (found < 0 || (found >= WRITE && argc < 4)) {
        fprintf(stderr, "usage: floor echo|echo-worker PORT | floor write|write-worker PORT DIR\n");
        return 2;
    }
    mode = found;
    char *end;
    long port = strtol(argv[2], &end, 10);
    if (*argv[2] == 0 || *end != 0 || port < 1 || port > 65535) {
        fprintf(stderr, "floor: the port must be a number from 1 to 65535, not '%s'\n", argv[2]);
        return 2;
    }
    // SIGTERM and SIGINT end the process through sigwait below; blocked before any thread
    // starts, so that every thread inherits the mask.
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    if (mode == WRITE || mode == WRITE_WORKER) {
        open_store(argv[3]);
        pthread_t writer;
        if (pthread_create(&writer, NULL, writer_loop, NULL) != 0) die("pthread_create");
    }
    if (mode == ECHO_WORKER || mode == WRITE_WORKER) start_worker();
    // As Hearth's HTTPServer: an internal polling thread pool of two over epoll. Without Hearth's
    // epoll correction (Sources/CEpollBatches), which only matters when 128 events are ready at
    // once on one thread: never with the benchmarks' 16 or 32 connections.
    struct MHD_Daemon *daemon = MHD_start_daemon(
        MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME, (uint16_t)port, NULL, NULL,
        answer, NULL, MHD_OPTION_THREAD_POOL_SIZE, 2u, MHD_OPTION_CONNECTION_LIMIT, 1024u,
        MHD_OPTION_NOTIFY_COMPLETED, completed, NULL, MHD_OPTION_END);
    if (!daemon) die("MHD_start_daemon");
    int signal_number;
    sigwait(&set, &signal_number);
    _exit(0);  // the writer may be mid-transaction: SQLite's WAL keeps what was committed
}
