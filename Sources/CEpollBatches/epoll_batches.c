/*
 * A correction for libmicrohttpd 0.9.75 (Debian 12's), whose polling threads could sleep with a
 * whole batch of ready connections not yet served.
 *
 * MHD_epoll (daemon.c) computes one timeout, then calls epoll_wait with it in a loop for as long
 * as a call fills its buffer of 128 events. When exactly 128 events were ready (connections, the
 * listening socket and the inter-thread wake-up all count), the second call finds none and blocks
 * until the next event on any of the thread's sockets or the nearest connection deadline (up to
 * the connection timeout), while the connections of the first batch wait in its list of ready
 * connections, their requests unread. Under load the HTTP tests saw requests wait 20 s
 * (ConnectionTests' fullEventBatch makes such a batch on purpose). The later calls of one loop
 * only collect what is already ready; they should never block.
 *
 * This file defines epoll_wait in the executable that links HearthHTTP, so the dynamic linker
 * binds every shared library's epoll_wait to it ahead of glibc's, libmicrohttpd included: the
 * same interposition that makes jemalloc the process's allocator. On threads marked as
 * libmicrohttpd's polling threads, a call on the epoll descriptor whose last call on that thread
 * filled its buffer does not block. Every call, marked thread or not, is then glibc's own
 * epoll_wait (found with RTLD_NEXT).
 *
 * coalesced_wakeups.c relies on this: a resumption whose wake-up it skips is resumed by
 * libmicrohttpd's next pass, which a blocking call after a full batch would delay.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/epoll.h>
#include "CEpollBatches.h"
#include "epoll_internal.h"

typedef int (*epoll_wait_function)(int, struct epoll_event *, int, int);

static _Atomic(epoll_wait_function) glibc_epoll_wait;
static _Thread_local int polling_thread;
/* The epoll descriptor whose last epoll_wait on this thread filled its buffer, or -1. */
static _Thread_local int full_batch_descriptor = -1;
static _Thread_local unsigned long unblocked_here;
/* How many epoll_wait calls this polling thread made (drained_reads.c). */
static _Thread_local uint64_t passes;

static _Atomic(void (*)(void)) before_poll;

void hearth_mark_polling_thread(void) { polling_thread = 1; }

int hearth_is_polling_thread(void) { return polling_thread; }

uint64_t hearth_polling_passes(void) { return passes; }

void hearth_set_before_poll(void (*hook)(void)) { atomic_store_explicit(&before_poll, hook, memory_order_release); }

unsigned long hearth_unblocked_epoll_waits_here(void) { return unblocked_here; }

int hearth_epoll_correction_active(void) {
    return dlsym(RTLD_DEFAULT, "epoll_wait") == (void *)epoll_wait;
}

static int system_epoll_wait(int descriptor, struct epoll_event *events, int capacity, int timeout) {
    epoll_wait_function function = atomic_load_explicit(&glibc_epoll_wait, memory_order_acquire);
    if (function == NULL) {
        function = (epoll_wait_function)dlsym(RTLD_NEXT, "epoll_wait");
        /* Without it (never with glibc), the same system call through its sibling. */
        if (function == NULL) return epoll_pwait(descriptor, events, capacity, timeout, NULL);
        atomic_store_explicit(&glibc_epoll_wait, function, memory_order_release);
    }
    return function(descriptor, events, capacity, timeout);
}

int epoll_wait(int descriptor, struct epoll_event *events, int capacity, int timeout) {
    if (!polling_thread) return system_epoll_wait(descriptor, events, capacity, timeout);
    void (*hook)(void) = atomic_load_explicit(&before_poll, memory_order_acquire);
    if (hook != NULL) hook();
    if (full_batch_descriptor == descriptor && timeout != 0) {
        timeout = 0;
        unblocked_here++;
    }
    for (;;) {
        int ready = system_epoll_wait(descriptor, events, capacity, timeout);
        passes++;
        full_batch_descriptor = ready == capacity ? descriptor : -1;
        int kept = hearth_hold_parked_events(events, ready);
        /* Only events of suspended connections, held back: a call that may block waits again. */
        if (kept == 0 && ready > 0 && timeout < 0) continue;
        return kept;
    }
}
