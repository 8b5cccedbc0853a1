/*
 * The read libmicrohttpd makes after each answer spared when it can only find nothing.
 *
 * libmicrohttpd 0.9.75 marks a resumed connection ready to read and write, as it may have missed
 * an edge while suspended. So after a callable's answer it calls recv on the socket, which
 * nearly always fails with EAGAIN: 0.95 of the echo callable's 1.9 recvfrom calls per request,
 * each a system call and a lock of the socket.
 *
 * Such a read is answered EAGAIN here, without the system call, when it can only find nothing:
 *   1. The socket's last read was short (fewer bytes than asked). TCP copies every byte queued
 *      (and what arrived meanwhile) before it returns less than asked, so the socket was empty
 *      then, and any byte arriving later makes the kernel queue an event (libmicrohttpd
 *      registers connections edge-triggered).
 *   2. The request was suspended, the socket parked (parked_sockets.c), in the same pass of its
 *      polling thread as that read: with no epoll_wait between them, no such event can have been
 *      reported and then left unread. (An event reported before a suspension in a later pass
 *      may be: libmicrohttpd only marks the connection ready when it is writing a response,
 *      and a pipelined request already in its buffer can then be suspended without a read. So a
 *      suspension in another pass than the short read drops the record.)
 *   3. The socket is still parked, and nothing was held back for it: an event reported while
 *      parked was held back, and the read is then made; one queued and not yet reported stays
 *      queued: libmicrohttpd, seeing EAGAIN, clears its read-ready mark and waits for the socket
 *      again; the add it makes then is skipped, the registration being in place, and the next
 *      epoll_wait reports the event.
 * So a read answered here is one the kernel would have answered EAGAIN a moment earlier, or one
 * whose bytes libmicrohttpd gets at its next wait.
 *
 * One difference remains: a client that half-closes its side after its request (shutdown for
 * writing). The short read also took the end of stream in, and the next read would have
 * returned 0: libmicrohttpd then closes the connection without its answer. Answered EAGAIN, it
 * sends the answer and keeps the connection until the idle timeout, as it keeps a client that
 * sends nothing more.
 *
 * libmicrohttpd's recv is replaced in its own global offset table (imports.c); nothing else in
 * the process is touched. Only calls on its polling threads, without flags, are considered; the
 * other call to recv in the library (HTTPS upgrades) is on a socket that is never parked. close()
 * forgets a descriptor's record (parked_sockets.c). ServerCore installs this with parking, for
 * 0.9.75 and the epoll_wait correction only.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/socket.h>
#include "CEpollBatches.h"
#include "epoll_internal.h"

enum { TABLE_SIZE = 65536 };

/* Per descriptor: when its last read by libmicrohttpd was short, 1 + the pass of its polling
 * thread it was made in (hearth_polling_passes), else 0. */
static _Atomic uint64_t drained[TABLE_SIZE];
static _Atomic unsigned long reads_spared;
static pthread_once_t install_once = PTHREAD_ONCE_INIT;
static int installed;

static ssize_t drained_recv(int socket, void *buffer, size_t length, int flags) {
    int tracked = socket >= 0 && socket < TABLE_SIZE && flags == 0 && hearth_is_polling_thread();
    if (tracked && atomic_load_explicit(&drained[socket], memory_order_relaxed) && hearth_parked_quietly(socket)) {
        atomic_fetch_add_explicit(&reads_spared, 1, memory_order_relaxed);
        errno = EAGAIN;
        return -1;
    }
    /* glibc's recv: this file does not define one, so the call binds to it. */
    ssize_t n = recv(socket, buffer, length, flags);
    uint64_t record = n > 0 && (size_t)n < length ? hearth_polling_passes() + 1 : 0;
    if (tracked) atomic_store_explicit(&drained[socket], record, memory_order_relaxed);
    return n;
}

static void install(void) {
    installed = hearth_replace_libmicrohttpd_import("recv", (void *)drained_recv) != NULL;
}

int hearth_spare_drained_reads(void) {
    pthread_once(&install_once, install);
    return installed;
}

unsigned long hearth_drained_reads_spared(void) {
    return atomic_load_explicit(&reads_spared, memory_order_relaxed);
}

ssize_t hearth_libmicrohttpd_recv(int socket, void *buffer, size_t length, int flags) {
    return drained_recv(socket, buffer, length, flags);
}

void hearth_drained_suspended(int socket) {
    if (socket < 0 || socket >= TABLE_SIZE) return;
    uint64_t record = atomic_load_explicit(&drained[socket], memory_order_relaxed);
    if (record != 0 && record != hearth_polling_passes() + 1) atomic_store_explicit(&drained[socket], 0, memory_order_relaxed);
}

void hearth_forget_drained(int descriptor) {
    if (descriptor >= 0 && descriptor < TABLE_SIZE) atomic_store_explicit(&drained[descriptor], 0, memory_order_relaxed);
}
