/*
 * A correction for libmicrohttpd 0.9.75 (Debian 12's), whose polling threads could sleep with
 * requests already read off epoll and not yet served.
 *
 * MHD_epoll (daemon.c) computes one timeout, then calls epoll_wait with it in a loop for as long
 * as a call fills its buffer of 128 events. When exactly 128 events were ready, the second call
 * finds none and blocks for that whole timeout (the time to the earliest connection deadline, up
 * to the connection timeout), while the 128 connections of the first batch wait in its list of
 * ready connections, unprocessed. It wakes at the next event on any of its sockets. Under load
 * with many connections the HTTP tests saw requests sit unread for 20 s (ConnectionTests'
 * fullEventBatch makes such a batch on purpose). Later batches of one loop should never block,
 * and upstream's later releases do not.
 *
 * This file defines epoll_wait, which the hearth executable (and any executable linking
 * HearthHTTP) then provides to every shared library in the process, libmicrohttpd included, ahead
 * of glibc's: the same interposition that makes jemalloc the process's allocator. On threads
 * marked as libmicrohttpd's polling threads, a call that follows a full batch does not block; on
 * every other thread (Dispatch's, Foundation's) epoll_wait is glibc's unchanged.
 */
#define _GNU_SOURCE
#include <stdatomic.h>
#include <stddef.h>
#include <sys/epoll.h>
#include "CEpollBatches.h"

static _Thread_local int polling_thread;
static _Thread_local int last_batch_full;
static atomic_ulong unblocked;

void hearth_mark_polling_thread(void) { polling_thread = 1; }

unsigned long hearth_unblocked_epoll_waits(void) { return atomic_load_explicit(&unblocked, memory_order_relaxed); }

int epoll_wait(int epfd, struct epoll_event *events, int maxevents, int timeout) {
    if (!polling_thread) return epoll_pwait(epfd, events, maxevents, timeout, NULL);
    if (last_batch_full && timeout != 0) {
        timeout = 0;
        atomic_fetch_add_explicit(&unblocked, 1, memory_order_relaxed);
    }
    int ready = epoll_pwait(epfd, events, maxevents, timeout, NULL);
    last_batch_full = ready == maxevents;
    return ready;
}
