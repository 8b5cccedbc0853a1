#define _GNU_SOURCE
#include <fcntl.h>
#include <spawn.h>
#include <signal.h>
#include <stdio.h>
#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>
#include "CHearthSystem.h"

int hearth_pipe_cloexec(int fds[2]) { return pipe2(fds, O_CLOEXEC); }

int hearth_spawn_closefrom(posix_spawn_file_actions_t *actions, int from) {
    return posix_spawn_file_actions_addclosefrom_np(actions, from);
}

void hearth_line_buffer_stdout(void) { setvbuf(stdout, NULL, _IOLBF, 0); }

int hearth_spawn_chdir(posix_spawn_file_actions_t *actions, const char *path) {
    return posix_spawn_file_actions_addchdir_np(actions, path);
}

int hearth_spawnattr_clean(posix_spawnattr_t *attributes, int own_group) {
    sigset_t all, none;
    sigfillset(&all);
    sigemptyset(&none);
    short flags = POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK;
    if (posix_spawnattr_setsigdefault(attributes, &all) != 0) return -1;
    if (posix_spawnattr_setsigmask(attributes, &none) != 0) return -1;
    if (own_group) {
        if (posix_spawnattr_setpgroup(attributes, 0) != 0) return -1;
        flags |= POSIX_SPAWN_SETPGROUP;
    }
    return posix_spawnattr_setflags(attributes, flags);
}

int hearth_exit_code(int status) { return WIFEXITED(status) ? WEXITSTATUS(status) : -1; }

int hearth_term_signal(int status) { return WIFSIGNALED(status) ? WTERMSIG(status) : 0; }

#include <string.h>
const void *hearth_memmem(const void *haystack, size_t haystack_length, const void *needle, size_t needle_length) {
    return memmem(haystack, haystack_length, needle, needle_length);
}

int hearth_thread_policy(int tid) {
    int policy = sched_getscheduler(tid);
    if (policy < 0) return -1;
    policy &= ~SCHED_RESET_ON_FORK;
    return policy == SCHED_BATCH ? 1 : policy == SCHED_OTHER ? 0 : 2;
}

int hearth_set_thread_policy(int tid, int batch) {
    struct sched_param parameters = { .sched_priority = 0 };
    return sched_setscheduler(tid, batch ? SCHED_BATCH : SCHED_OTHER, &parameters);
}
