/*
 * libmicrohttpd's clearing of a connection's memory pool skipped.
 *
 * Between two requests of a kept-alive connection, MHD_pool_reset (libmicrohttpd 0.9.75,
 * memorypool.c) zeroes the whole pool but the bytes it keeps: with the server's 28 KiB pool, a
 * 28 KiB memset per request, about 2.4% of the echo callable's CPU in a profile. Its source says
 * the zeroing is "technically not needed, but safer". MHD_pool_reallocate zeroes a block it
 * shrinks or moves away from in the same way; those are the library's only calls to memset.
 *
 * Nothing in 0.9.75 relies on the zeroes: a pool of 32 KiB or less is allocated with malloc and
 * never cleared, so the first request of every connection already runs on memory that held
 * whatever the allocator last put there (often an earlier connection's requests); every block taken
 * from a pool is written before it is read (the received headers' entries, all fields read, the
 * response's iovec and the cookie copy by memcpy, the read and write buffers only up to their
 * offsets).
 *
 * So the library's memset is replaced, in its own global offset table only (imports.c), by a
 * function that skips a zeroing and does anything else (never called) as glibc would. Nothing else in the
 * process is touched. ServerCore installs it only for 0.9.75, where its call sites were read off
 * the machine code: three, all the pool's zeroing.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include "CEpollBatches.h"
#include "epoll_internal.h"

static _Atomic unsigned long zeroings_skipped;
static pthread_once_t install_once = PTHREAD_ONCE_INIT;
static int installed;

static void *pool_memset(void *s, int c, size_t n) {
    if (c != 0) return memset(s, c, n);
    atomic_fetch_add_explicit(&zeroings_skipped, 1, memory_order_relaxed);
    return s;
}

static void install(void) {
    installed = hearth_replace_libmicrohttpd_import("memset", (void *)pool_memset) != NULL;
}

int hearth_skip_pool_zeroing(void) {
    pthread_once(&install_once, install);
    return installed;
}

unsigned long hearth_pool_zeroings_skipped(void) {
    return atomic_load_explicit(&zeroings_skipped, memory_order_relaxed);
}
