/*
 * Suspended connections kept in libmicrohttpd's epoll set.
 *
 * libmicrohttpd 0.9.75 takes a connection's socket out of its polling thread's epoll set when
 * the connection is suspended (EPOLL_CTL_DEL inside MHD_suspend_connection) and puts it back
 * (EPOLL_CTL_ADD) when, after the resumed connection's answer, it next waits to read. Every
 * callable's request is suspended while its unit answers, so that is two system calls per
 * request, each taking the epoll instance's lock and freeing or allocating its entry: 6% of
 * the echo callable's CPU in a profile.
 *
 * Here the socket stays registered while suspended ("parked"). The DEL made inside
 * MHD_suspend_connection (hearth_suspending marks the call) is not made; events the kernel
 * reports for a parked socket are held back from libmicrohttpd, which must not see a suspended
 * connection ready; and the ADD after the resumption, finding the registration in place with
 * the same events and data, is not made either. libmicrohttpd marks every resumed connection
 * ready to read and write, since it may have missed an edge while suspended, so nothing is lost
 * by holding events back; still, when some were, the ADD becomes a MOD, which has the kernel
 * report the socket's readiness again as an ADD would.
 *
 * A parked registration that the ADD does not find as recorded (another epoll instance, other
 * events or data) is deleted for real first, and so is one whose socket is being closed: this
 * file also defines close(2) for the process, which deletes a parked socket's registration
 * before the descriptor goes, whoever closes it (libmicrohttpd after a resumed connection's
 * last answer, or at its daemon's stop). A closed socket must never stay in an epoll set: a copy
 * of its descriptor (a child between fork and exec) would keep it there, and libmicrohttpd would
 * get events for a connection it has freed; and a registration recorded as parked after its
 * socket closed would make the next socket given that number look registered when it is not.
 *
 * A descriptor closed other than by close() (dup2 or dup3 onto it, close_range, glibc's own
 * internal closes) would leave its record parked; libmicrohttpd closes its sockets with close().
 *
 * ServerCore marks suspensions only with libmicrohttpd 0.9.75, whose behaviour this was worked
 * out from, and with epoll_batches.c's epoll_wait in place, through which events are held back.
 *
 * Only a DEL inside MHD_suspend_connection parks, and only libmicrohttpd's polling threads
 * (hearth_mark_polling_thread) have their events held back; every epoll_ctl call of the process
 * is recorded (under one lock) so that parked sockets can be recognized, and is otherwise glibc's.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "CEpollBatches.h"
#include "epoll_internal.h"

enum { NONE = 0, REGISTERED = 1, PARKED = 2 };

/* Sockets numbered from this on are never parked (their calls go straight through). */
enum { TABLE_SIZE = 65536 };

struct registration {
    _Atomic unsigned char state;  /* read without the lock by close() */
    int epoll;
    uint32_t events;
    uint32_t held;  /* events held back while parked */
    uint64_t data;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct registration *_Atomic table;  /* TABLE_SIZE entries, allocated at the first registration */
static _Atomic unsigned long parked_now;
static _Atomic unsigned long deletes_spared, adds_spared, adds_as_mod, events_held, deletes_forced, deletes_failed;
static _Thread_local int suspending;

/* Parked registrations by their data (the connection pointer libmicrohttpd registered), so that
 * an event can be matched to its socket: open addressing with linear probing. */
struct slot { uint64_t data; int socket; };
static struct slot *slots;
static size_t slot_capacity, slot_count;

/* glibc's own functions, found when the executable is loaded (so never under the lock). */
typedef int (*epoll_ctl_function)(int, int, int, struct epoll_event *);
typedef int (*close_function)(int);
static _Atomic(epoll_ctl_function) glibc_epoll_ctl;
static _Atomic(close_function) glibc_close;

__attribute__((constructor)) static void find_glibc_functions(void) {
    atomic_store_explicit(&glibc_epoll_ctl, (epoll_ctl_function)dlsym(RTLD_NEXT, "epoll_ctl"), memory_order_release);
    atomic_store_explicit(&glibc_close, (close_function)dlsym(RTLD_NEXT, "close"), memory_order_release);
}

static int system_epoll_ctl(int epoll, int operation, int socket, struct epoll_event *event) {
    /* A call before the constructor ran (another library's), or without glibc's symbol: the
     * system call itself. */
    epoll_ctl_function function = atomic_load_explicit(&glibc_epoll_ctl, memory_order_acquire);
    if (function == NULL) return (int)syscall(SYS_epoll_ctl, epoll, operation, socket, event);
    return function(epoll, operation, socket, event);
}

static size_t slot_index(uint64_t data) {
    uint64_t h = data * 0x9E3779B97F4A7C15ull;
    return (size_t)(h >> 20) & (slot_capacity - 1);
}

/* Returns 0, or -1 when memory for the index ran out (the caller then deletes for real). */
static int slots_insert(uint64_t data, int socket) {
    if ((slot_count + 1) * 2 > slot_capacity) {
        size_t capacity = slot_capacity ? slot_capacity * 2 : 256;
        struct slot *grown = calloc(capacity, sizeof *grown);
        if (grown == NULL) return -1;
        struct slot *old = slots;
        size_t old_capacity = slot_capacity;
        slots = grown;
        slot_capacity = capacity;
        for (size_t i = 0; i < old_capacity; i++) {
            if (old[i].data == 0) continue;
            size_t j = slot_index(old[i].data);
            while (slots[j].data != 0) j = (j + 1) & (slot_capacity - 1);
            slots[j] = old[i];
        }
        free(old);
    }
    size_t i = slot_index(data);
    while (slots[i].data != 0) i = (i + 1) & (slot_capacity - 1);
    slots[i].data = data;
    slots[i].socket = socket;
    slot_count++;
    return 0;
}

static int slots_find(uint64_t data) {
    if (slot_count == 0) return -1;
    size_t i = slot_index(data);
    while (slots[i].data != 0) {
        if (slots[i].data == data) return slots[i].socket;
        i = (i + 1) & (slot_capacity - 1);
    }
    return -1;
}

/* Removes `data` and closes the gap behind it, so that probing needs no tombstones. */
static void slots_remove(uint64_t data) {
    if (slot_count == 0) return;
    size_t mask = slot_capacity - 1, i = slot_index(data);
    while (slots[i].data != data) {
        if (slots[i].data == 0) return;
        i = (i + 1) & mask;
    }
    slots[i].data = 0;
    slot_count--;
    size_t gap = i;
    for (size_t j = (i + 1) & mask; slots[j].data != 0; j = (j + 1) & mask) {
        size_t home = slot_index(slots[j].data);
        /* The entry at j may move into the gap when its home is not cyclically in (gap, j]. */
        int between = gap <= j ? (home > gap && home <= j) : (home > gap || home <= j);
        if (!between) {
            slots[gap] = slots[j];
            slots[j].data = 0;
            gap = j;
        }
    }
}

static void unpark(struct registration *r) {
    slots_remove(r->data);
    r->held = 0;
    atomic_fetch_sub_explicit(&parked_now, 1, memory_order_relaxed);
}

/* Called with the lock held. */
static struct registration *entry(int socket) {
    if (socket < 0 || socket >= TABLE_SIZE) return NULL;
    struct registration *t = atomic_load_explicit(&table, memory_order_relaxed);
    if (t == NULL) {
        t = calloc(TABLE_SIZE, sizeof *t);
        if (t == NULL) return NULL;
        atomic_store_explicit(&table, t, memory_order_release);
    }
    return &t[socket];
}

int epoll_ctl(int epoll, int operation, int socket, struct epoll_event *event) {
    /* Every thread's calls are recorded: a polling thread's first connection is added before
     * the thread is known as one. */
    if (socket < 0 || socket >= TABLE_SIZE) return system_epoll_ctl(epoll, operation, socket, event);
    if (operation == EPOLL_CTL_DEL && suspending) hearth_drained_suspended(socket);
    pthread_mutex_lock(&lock);
    struct registration *r = entry(socket);
    if (r == NULL) {
        pthread_mutex_unlock(&lock);
        return system_epoll_ctl(epoll, operation, socket, event);
    }
    /* Edge-triggered registrations only (libmicrohttpd's connections all are): a level-triggered
     * one would be reported at every wait while parked. */
    /* And data no parked socket has: an event is matched to its socket by its data. */
    if (operation == EPOLL_CTL_DEL && suspending && r->state == REGISTERED && r->epoll == epoll &&
        (r->events & EPOLLET) != 0 && r->data != 0 && slots_find(r->data) < 0 &&
        slots_insert(r->data, socket) == 0) {
        r->state = PARKED;
        r->held = 0;
        atomic_fetch_add_explicit(&parked_now, 1, memory_order_relaxed);
        atomic_fetch_add_explicit(&deletes_spared, 1, memory_order_relaxed);
        pthread_mutex_unlock(&lock);
        return 0;
    }
    if (r->state == PARKED) {
        /* Suspended again without an add in between: libmicrohttpd, marked ready by the
         * resumption, read the next request straight from the socket (one sent while the last
         * was suspended) and never waited for the kernel to report it. The registration stays
         * as it is, parked, with what it held back. */
        if (operation == EPOLL_CTL_DEL && suspending && r->epoll == epoll) {
            atomic_fetch_add_explicit(&deletes_spared, 1, memory_order_relaxed);
            pthread_mutex_unlock(&lock);
            return 0;
        }
        uint32_t held = r->held;
        int same = r->epoll == epoll;
        unpark(r);
        r->state = REGISTERED;
        if (operation == EPOLL_CTL_ADD && event != NULL && same && r->events == event->events &&
            r->data == event->data.u64) {
            pthread_mutex_unlock(&lock);
            if (held == 0) {
                atomic_fetch_add_explicit(&adds_spared, 1, memory_order_relaxed);
                return 0;
            }
            atomic_fetch_add_explicit(&adds_as_mod, 1, memory_order_relaxed);
            return system_epoll_ctl(epoll, EPOLL_CTL_MOD, socket, event);
        }
        if (operation == EPOLL_CTL_ADD || !same) {
            /* Not the registration kept, or kept elsewhere: removed, then the call made as asked. */
            system_epoll_ctl(r->epoll, EPOLL_CTL_DEL, socket, NULL);
            r->state = NONE;
            atomic_fetch_add_explicit(&deletes_forced, 1, memory_order_relaxed);
        }
        /* Otherwise a DEL or MOD not made by a suspension: the socket is in the set, so the call
         * does what it asks. */
    }
    pthread_mutex_unlock(&lock);
    int result = system_epoll_ctl(epoll, operation, socket, event);
    if (result != 0) return result;
    pthread_mutex_lock(&lock);
    if (operation == EPOLL_CTL_DEL) {
        if (r->epoll == epoll) r->state = NONE;
    } else if (event != NULL && (operation == EPOLL_CTL_ADD || operation == EPOLL_CTL_MOD)) {
        r->state = REGISTERED;
        r->epoll = epoll;
        r->events = event->events;
        r->data = event->data.u64;
    }
    pthread_mutex_unlock(&lock);
    return result;
}

int hearth_hold_parked_events(struct epoll_event *events, int count) {
    if (count <= 0 || atomic_load_explicit(&parked_now, memory_order_relaxed) == 0) return count;
    pthread_mutex_lock(&lock);
    int kept = 0;
    for (int i = 0; i < count; i++) {
        int socket = slots_find(events[i].data.u64);
        struct registration *t = atomic_load_explicit(&table, memory_order_relaxed);
        if (socket >= 0 && t != NULL && t[socket].state == PARKED) {
            t[socket].held |= events[i].events;
            atomic_fetch_add_explicit(&events_held, 1, memory_order_relaxed);
            continue;
        }
        events[kept++] = events[i];
    }
    pthread_mutex_unlock(&lock);
    return kept;
}

void hearth_suspending(int flag) { suspending = flag; }

int hearth_parked_quietly(int socket) {
    struct registration *t = atomic_load_explicit(&table, memory_order_acquire);
    if (socket < 0 || socket >= TABLE_SIZE || t == NULL) return 0;
    if (atomic_load_explicit(&t[socket].state, memory_order_relaxed) != PARKED) return 0;
    pthread_mutex_lock(&lock);
    int quiet = t[socket].state == PARKED && t[socket].held == 0;
    pthread_mutex_unlock(&lock);
    return quiet;
}

int hearth_socket_parked(int socket) {
    struct registration *t = atomic_load_explicit(&table, memory_order_acquire);
    if (socket < 0 || socket >= TABLE_SIZE || t == NULL) return 0;
    pthread_mutex_lock(&lock);
    int answer = t[socket].state != PARKED ? 0 : t[socket].held == 0 ? 1 : 2;
    pthread_mutex_unlock(&lock);
    return answer;
}

/* close(2) for the whole process (the executable's definition is bound ahead of glibc's, as
 * epoll_wait's is): a parked socket's registration is deleted before its descriptor closes, and
 * any other record of the descriptor dropped. Only a parked socket takes the lock; it is parked
 * and closed by its own polling thread, so a close elsewhere (another thread's, a signal
 * handler's) reads a state no one is changing. */
int close(int descriptor) {
    struct registration *t = atomic_load_explicit(&table, memory_order_acquire);
    if (descriptor >= 0 && descriptor < TABLE_SIZE && t != NULL) {
        struct registration *r = &t[descriptor];
        if (atomic_load_explicit(&r->state, memory_order_relaxed) == PARKED) {
            pthread_mutex_lock(&lock);
            if (r->state == PARKED) {
                if (system_epoll_ctl(r->epoll, EPOLL_CTL_DEL, descriptor, NULL) != 0) {
                    atomic_fetch_add_explicit(&deletes_failed, 1, memory_order_relaxed);
                }
                unpark(r);
                atomic_fetch_add_explicit(&deletes_forced, 1, memory_order_relaxed);
            }
            r->state = NONE;
            pthread_mutex_unlock(&lock);
        } else {
            /* REGISTERED to NONE unless it was parked meanwhile (never by another thread than
             * the one closing, but then the lock's path above is the one to take). */
            unsigned char seen = REGISTERED;
            if (!atomic_compare_exchange_strong_explicit(&r->state, &seen, NONE, memory_order_relaxed, memory_order_relaxed) &&
                seen == PARKED) {
                pthread_mutex_lock(&lock);
                if (r->state == PARKED) {
                    system_epoll_ctl(r->epoll, EPOLL_CTL_DEL, descriptor, NULL);
                    unpark(r);
                }
                r->state = NONE;
                pthread_mutex_unlock(&lock);
            }
        }
    }
    close_function function = atomic_load_explicit(&glibc_close, memory_order_acquire);
    int result = function == NULL ? (int)syscall(SYS_close, descriptor) : function(descriptor);
    int saved = errno;
    hearth_forget_wakeup_channel(descriptor);
    hearth_forget_drained(descriptor);
    errno = saved;
    return result;
}

struct hearth_parking_counts hearth_parking_counts(void) {
    struct hearth_parking_counts c = {
        .deletes_spared = atomic_load(&deletes_spared),
        .adds_spared = atomic_load(&adds_spared),
        .adds_as_mod = atomic_load(&adds_as_mod),
        .events_held = atomic_load(&events_held),
        .deletes_forced = atomic_load(&deletes_forced),
        .deletes_failed = atomic_load(&deletes_failed),
        .parked_now = atomic_load(&parked_now),
    };
    return c;
}
