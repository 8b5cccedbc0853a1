#ifndef HEARTH_EPOLL_BATCHES_H
#define HEARTH_EPOLL_BATCHES_H

/// Marks the calling thread as one of libmicrohttpd's polling threads, whose `epoll_wait` calls
/// epoll_batches.c corrects. Called from the server's connection callback, which libmicrohttpd
/// runs on the polling thread that accepted the connection.
void hearth_mark_polling_thread(void);

/// How many `epoll_wait` calls on marked threads were made not to block because the call before
/// filled its caller's buffer (for tests).
unsigned long hearth_unblocked_epoll_waits(void);

#endif
