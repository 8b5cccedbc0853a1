#ifndef HEARTH_EPOLL_BATCHES_H
#define HEARTH_EPOLL_BATCHES_H

#include <sys/epoll.h>
#include <sys/types.h>
#include <sys/eventfd.h>  /* libmicrohttpd's wake-up channels are eventfds (coalesced_wakeups.c) */
#include <sys/socket.h>   /* hearth_accept_cloexec */

/// Marks the calling thread as one of libmicrohttpd's polling threads, whose `epoll_wait` calls
/// epoll_batches.c corrects. Called from the server's connection callback, which libmicrohttpd
/// runs on the polling thread that accepted the connection (a thread with no connection has at
/// most two events to wait for, never a full batch).
void hearth_mark_polling_thread(void);

/// How many `epoll_wait` calls on the calling thread were made not to block because the call
/// before, on the same epoll descriptor, filled its caller's buffer (for tests).
unsigned long hearth_unblocked_epoll_waits_here(void);

/// 1 when the process's `epoll_wait` is this correction's (its executable links HearthHTTP and
/// exports the symbol), else 0.
int hearth_epoll_correction_active(void);

/// 1 on a thread `hearth_mark_polling_thread` marked, else 0.
int hearth_is_polling_thread(void);
/// Sets the function every marked polling thread calls before each `epoll_wait`, that is once
/// per pass over its ready connections (nil: none). Work the thread left for the pass's end (frames
/// corked for a unit's worker) goes out from there, in one write.
void hearth_set_before_poll(void (*hook)(void));

/// Set (1) around `MHD_suspend_connection` on a polling thread, cleared (0) after: the
/// `EPOLL_CTL_DEL` libmicrohttpd makes inside it keeps the socket in the epoll set, parked
/// (parked_sockets.c), and the `EPOLL_CTL_ADD` after the resumption is then not made either.
void hearth_suspending(int flag);

/// What parking did in this process (for tests and benchmarks).
struct hearth_parking_counts {
    unsigned long deletes_spared;  ///< EPOLL_CTL_DEL calls of suspensions not made
    unsigned long adds_spared;     ///< EPOLL_CTL_ADD calls after resumptions not made
    unsigned long adds_as_mod;     ///< ... made as EPOLL_CTL_MOD, events having been held back
    unsigned long events_held;     ///< events of parked sockets held back from libmicrohttpd
    unsigned long deletes_forced;  ///< parked registrations deleted for real (socket closing, changed)
    unsigned long deletes_failed;  ///< ... that failed (never expected: the socket is still open)
    unsigned long parked_now;      ///< sockets parked at this moment
};
struct hearth_parking_counts hearth_parking_counts(void);

/// Whether `socket` is parked at this moment (for tests): 0 no, 1 yes, 2 yes and events of it
/// were held back.
int hearth_socket_parked(int socket);

/// Set (1) around `MHD_resume_connection`, cleared (0) after: its write to the polling thread's
/// wake-up channel is skipped while an earlier resumption's is still unread (coalesced_wakeups.c,
/// which says why this is sound for libmicrohttpd 0.9.75 with the epoll_wait correction only).
void hearth_resuming(int flag);

/// What coalescing did in this process (for tests and benchmarks).
struct hearth_wakeup_counts {
    unsigned long written;  ///< resumptions' wake-ups written
    unsigned long skipped;  ///< ... skipped, one being already unread
};
struct hearth_wakeup_counts hearth_wakeup_counts(void);

/// What is recorded of `descriptor` (for tests): 0 nothing, else 1 (a wake-up channel) plus 2
/// when a resumption's wake-up is unread.
int hearth_wakeup_channel_state(int descriptor);

/// Replaces memset in libmicrohttpd's own global offset table by a function that skips the
/// zeroing of a connection's memory pool between requests (pool_zeroing.c, which says why that is
/// sound for 0.9.75). Once per process; 1 when in place, 0 when the slot was not found.
int hearth_skip_pool_zeroing(void);

/// How many of libmicrohttpd's pool zeroings were skipped in this process (for tests).
unsigned long hearth_pool_zeroings_skipped(void);

/// Replaces recv in libmicrohttpd's own global offset table by a function that answers EAGAIN,
/// without the system call, a read of a socket that can only be empty: its last read was short,
/// and it has been parked since, with nothing held back (drained_reads.c says why that is sound
/// for 0.9.75 with parking). Once per process; 1 when in place.
int hearth_spare_drained_reads(void);

/// How many reads were answered so in this process (for tests).
unsigned long hearth_drained_reads_spared(void);

/// What libmicrohttpd's recv now is, callable directly (for step tests).
ssize_t hearth_libmicrohttpd_recv(int socket, void *buffer, size_t length, int flags);

/// accept4(listening, address, length, SOCK_CLOEXEC | SOCK_NONBLOCK): a connection that is never
/// inherited by a process the server spawns, not even for an instant.
int hearth_accept_cloexec(int listening, struct sockaddr *address, socklen_t *length);

#endif
