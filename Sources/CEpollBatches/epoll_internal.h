#ifndef HEARTH_EPOLL_INTERNAL_H
#define HEARTH_EPOLL_INTERNAL_H
#include <stdint.h>
#include <sys/epoll.h>

/* Removes from `events` those of parked sockets (parked_sockets.c), recording them as held back;
 * returns how many are left. */
int hearth_hold_parked_events(struct epoll_event *events, int count);

/* Forgets what coalesced_wakeups.c recorded of a descriptor being closed. */
void hearth_forget_wakeup_channel(int descriptor);

/* 1 when `socket` is parked and nothing was held back for it since it was (parked_sockets.c). */
int hearth_parked_quietly(int socket);

/* Forgets drained_reads.c's record of a descriptor being closed. */
void hearth_forget_drained(int descriptor);

/* Called for every delete made inside a suspension (parked_sockets.c): drained_reads.c keeps the
 * socket's record only when its short read was made in the calling thread's present pass. */
void hearth_drained_suspended(int socket);

/* How many epoll_wait calls the calling polling thread has made (epoll_batches.c). */
uint64_t hearth_polling_passes(void);

/* Replaces the function `name` that libmicrohttpd imports, in its own global offset table only
 * (imports.c); returns what the slot held (the function libmicrohttpd called until now), or NULL
 * when the slot was not found or could not be written. */
void *hearth_replace_libmicrohttpd_import(const char *name, void *replacement);
#endif
