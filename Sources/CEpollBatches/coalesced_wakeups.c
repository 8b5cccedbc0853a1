/*
 * Resumptions' wake-ups of a libmicrohttpd polling thread coalesced.
 *
 * MHD_resume_connection (libmicrohttpd 0.9.75) marks the connection to resume under the daemon's
 * cleanup mutex, then writes to its polling thread's inter-thread channel, an eventfd in that
 * thread's epoll set, so that the thread wakes and resumes it. Every callable's answer resumes a
 * connection, so that is a write system call per request, and most of them are redundant: when
 * the replies of one batch from a unit's worker are answered in a row, the first write has
 * already made the eventfd readable.
 *
 * So a resumption's write is skipped while an earlier one's is pending, that is written and not
 * yet read by the polling thread. This file defines write(2) and read(2) for the process, as
 * epoll_batches.c defines epoll_wait: a write made inside MHD_resume_connection (hearth_resuming
 * marks the call) of the channel's 8 bytes records the descriptor as a wake-up channel and sets
 * its pending flag, and is skipped when the flag was already set; a read of a channel
 * (libmicrohttpd's clear of it) clears the flag after the read, the flag looked at only then.
 *
 * Why no resumption is lost, in 0.9.75's MHD_epoll (read off its machine code): each call first
 * resumes every marked connection (resume_suspended_connections), waiting without blocking if it
 * resumed any; then it calls epoll_wait, and again for as long as a call fills its 128 events;
 * the channel is read (cleared) where its event is handled, in that loop. A resumption skips its
 * write only while the flag is set, and the flag is cleared only right after the poller's read.
 * So a skipped resumption, marked before it skipped, either (a) finds a write not yet read: the
 * channel is readable, the poller's epoll_wait returns, and its next call resumes the connection;
 * or (b) came between the poller's read and its clear of the flag: the poller is inside the loop,
 * and its next call resumes the connection first, unless a further epoll_wait of the same loop
 * blocks. That is the one case this file depends on something else for: a further call is made
 * only after a full batch of 128 events, and epoll_batches.c makes exactly that call never block
 * on libmicrohttpd's polling threads. Hence ServerCore turns coalescing on only when that
 * correction is active and the library is 0.9.75. Both the set and the clear are sequentially
 * consistent read-modify-writes, so the poller, having read the flag a skipping resumer set, sees
 * that resumer's marks when it takes the mutex to resume.
 *
 * A descriptor closed with close() is forgotten after it closes (parked_sockets.c calls
 * hearth_forget_wakeup_channel), so that a late record of the old channel can only cost a new
 * descriptor of that number one extra write. Any other write or read is glibc's, after a look at
 * a byte. A signal handler on a resuming thread that wrote exactly 8 bytes inside the call would
 * be taken for the channel's write; the process installs none that writes.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdatomic.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "CEpollBatches.h"
#include "epoll_internal.h"

enum { CHANNELS = 65536 };
enum { KNOWN = 1, PENDING = 2 };

/* Per descriptor: KNOWN once a resumption wrote to it, PENDING while a resumption's write is
 * unread. */
static _Atomic unsigned char channels[CHANNELS];
static _Thread_local int resuming;
static _Atomic unsigned long wakeups_written, wakeups_skipped;

typedef ssize_t (*write_function)(int, const void *, size_t);
typedef ssize_t (*read_function)(int, void *, size_t);
static _Atomic(write_function) glibc_write;
static _Atomic(read_function) glibc_read;

__attribute__((constructor)) static void find_glibc_io(void) {
    atomic_store_explicit(&glibc_write, (write_function)dlsym(RTLD_NEXT, "write"), memory_order_release);
    atomic_store_explicit(&glibc_read, (read_function)dlsym(RTLD_NEXT, "read"), memory_order_release);
}

static ssize_t system_write(int descriptor, const void *bytes, size_t count) {
    write_function function = atomic_load_explicit(&glibc_write, memory_order_acquire);
    if (function == NULL) return (ssize_t)syscall(SYS_write, descriptor, bytes, count);
    return function(descriptor, bytes, count);
}

static ssize_t system_read(int descriptor, void *bytes, size_t count) {
    read_function function = atomic_load_explicit(&glibc_read, memory_order_acquire);
    if (function == NULL) return (ssize_t)syscall(SYS_read, descriptor, bytes, count);
    return function(descriptor, bytes, count);
}

void hearth_resuming(int flag) { resuming = flag; }

ssize_t write(int descriptor, const void *bytes, size_t count) {
    /* The channel's write is the first one inside MHD_resume_connection, of an eventfd's 8 bytes
     * (a message it might log after a failed write is not). */
    if (resuming == 1 && count == 8 && descriptor >= 0 && descriptor < CHANNELS) {
        resuming = 2;
        unsigned char before = atomic_fetch_or(&channels[descriptor], KNOWN | PENDING);
        if ((before & PENDING) != 0) {
            atomic_fetch_add_explicit(&wakeups_skipped, 1, memory_order_relaxed);
            return (ssize_t)count;
        }
        ssize_t written = system_write(descriptor, bytes, count);
        atomic_fetch_add_explicit(&wakeups_written, 1, memory_order_relaxed);
        /* Not written and not because the counter is full (which leaves it readable): not a
         * channel, or no longer one, and nothing may stay pending with nothing to read. */
        if (written < 0 && errno != EAGAIN) {
            int saved = errno;
            atomic_store(&channels[descriptor], 0);
            errno = saved;
        }
        return written;
    }
    return system_write(descriptor, bytes, count);
}

ssize_t read(int descriptor, void *bytes, size_t count) {
    ssize_t result = system_read(descriptor, bytes, count);
    /* Looked at after the read, not before: a channel's first resumption may record it and write
     * between a look and the read, and a write this read took must not stay pending (every later
     * resumption would skip its write, and the poller would sleep with connections to resume). */
    if (descriptor >= 0 && descriptor < CHANNELS && (atomic_load(&channels[descriptor]) & PENDING) != 0) {
        int saved = errno;
        atomic_fetch_and(&channels[descriptor], (unsigned char)~PENDING);
        errno = saved;
    }
    return result;
}

void hearth_forget_wakeup_channel(int descriptor) {
    if (descriptor >= 0 && descriptor < CHANNELS &&
        atomic_load_explicit(&channels[descriptor], memory_order_relaxed) != 0) {
        atomic_store(&channels[descriptor], 0);
    }
}

int hearth_wakeup_channel_state(int descriptor) {
    if (descriptor < 0 || descriptor >= CHANNELS) return 0;
    return atomic_load(&channels[descriptor]);
}

struct hearth_wakeup_counts hearth_wakeup_counts(void) {
    struct hearth_wakeup_counts c = {
        .written = atomic_load(&wakeups_written),
        .skipped = atomic_load(&wakeups_skipped),
    };
    return c;
}
