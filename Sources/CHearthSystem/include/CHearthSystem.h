#ifndef HEARTH_SYSTEM_H
#define HEARTH_SYSTEM_H
/*
 * The few glibc calls the worker supervisor needs that Swift's Glibc module does not show
 * (they are GNU extensions, declared only under _GNU_SOURCE).
 */
#include <spawn.h>

/// pipe2(fds, O_CLOEXEC): both ends close-on-exec from the start.
int hearth_pipe_cloexec(int fds[2]);

/// posix_spawn_file_actions_addclosefrom_np: the child closes every descriptor from `from` up.
int hearth_spawn_closefrom(posix_spawn_file_actions_t *actions, int from);

/// Makes stdout line-buffered (a worker's output reaches the host's log line by line).
void hearth_line_buffer_stdout(void);

#endif
