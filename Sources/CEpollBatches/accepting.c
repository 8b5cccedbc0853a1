#define _GNU_SOURCE
#include <sys/socket.h>
#include "CEpollBatches.h"

/* accept4 is a GNU extension the Swift Glibc module does not export. */
int hearth_accept_cloexec(int listening, struct sockaddr *address, socklen_t *length) {
    return accept4(listening, address, length, SOCK_CLOEXEC | SOCK_NONBLOCK);
}
