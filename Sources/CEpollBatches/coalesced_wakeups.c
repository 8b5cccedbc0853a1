/*
 * Resumptions' wake-ups of a libmicrohttpd polling thread coalesced.
 *
 * MHD_resume_connection (libmicrohttpd 0.9.75) marks the connection to resume, then writes to
 * its polling thread's inter-thread channel, an eventfd in that thread's epoll set, so that the
 * thread wakes and resumes it. Every callable's answer resumes a connection, so that is a write
 * system call per request, and most of them are redundant: when the replies of one batch from a
 * unit's worker are answered in a row, the first write has already made the eventfd readable,
 * and the thread, once awake, resumes every connection marked before it next waits (MHD_epoll
 * clears the channel first and resumes after, as its own comment says: "all external conditions
 * will be processed later").
 *
 * So a resumption's write is skipped when an earlier one's is still pending, that is written and
 * not yet read by the polling thread's clear of the channel. This file defines write(2) and
 * read(2) for the process, as epoll_batches.c defines epoll_wait: a write made inside
 * MHD_resume_connection (hearth_resuming marks the call) of the channel's 8 bytes records the
 * descriptor as a wake-up channel and sets its pending flag, and is skipped when the flag was
 * already set; a read of a recorded channel (the clear) clears the flag after the read.
 *
 * Why no resumption is lost: the flag is set only by a resumption that writes (or is about to),
 * and cleared only right after a read of the channel. A resumption that finds it set and skips
 * has marked its connection before; either the write that set the flag has not yet been read, and
 * the thread will wake, read it and then resume every marked connection; or the thread read it
 * and has not yet cleared the flag, and it resumes the marked connections after that read (the
 * clear comes first in MHD_epoll's pass, the resumptions later). Both the set and the clear are
 * atomic exchanges, so the thread's later look at the marks sees the skipped resumption's.
 *
 * A descriptor closed with close() is forgotten (parked_sockets.c calls
 * hearth_forget_wakeup_channel); any other write or read is glibc's, after a look at a byte.
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
    if (descriptor >= 0 && descriptor < CHANNELS &&
        (atomic_load_explicit(&channels[descriptor], memory_order_relaxed) & KNOWN) != 0) {
        ssize_t result = system_read(descriptor, bytes, count);
        int saved = errno;
        atomic_fetch_and(&channels[descriptor], (unsigned char)~PENDING);
        errno = saved;
        return result;
    }
    return system_read(descriptor, bytes, count);
}

void hearth_forget_wakeup_channel(int descriptor) {
    if (descriptor >= 0 && descriptor < CHANNELS &&
        atomic_load_explicit(&channels[descriptor], memory_order_relaxed) != 0) {
        atomic_store(&channels[descriptor], 0);
    }
}

struct hearth_wakeup_counts hearth_wakeup_counts(void) {
    struct hearth_wakeup_counts c = {
        .written = atomic_load(&wakeups_written),
        .skipped = atomic_load(&wakeups_skipped),
    };
    return c;
}
