#ifndef HEARTH_EPOLL_INTERNAL_H
#define HEARTH_EPOLL_INTERNAL_H
#include <sys/epoll.h>

/* Removes from `events` those of parked sockets (parked_sockets.c), recording them as held back;
 * returns how many are left. */
int hearth_hold_parked_events(struct epoll_event *events, int count);

/* Forgets what coalesced_wakeups.c recorded of a descriptor being closed. */
void hearth_forget_wakeup_channel(int descriptor);
#endif
