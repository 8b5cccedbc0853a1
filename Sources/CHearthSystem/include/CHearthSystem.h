#ifndef HEARTH_SYSTEM_H
#include <stddef.h>
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

/// posix_spawn_file_actions_addchdir_np: the child starts in `path`.
int hearth_spawn_chdir(posix_spawn_file_actions_t *actions, const char *path);

/// Attributes for a child that starts clean: every signal at its default action and none blocked
/// (ignored signals would otherwise stay ignored across exec); with `own_group`, in a process
/// group of its own.
int hearth_spawnattr_clean(posix_spawnattr_t *attributes, int own_group);

/// A waitpid status: the exit code when the process exited (else -1), and the signal that ended
/// it (else 0): WEXITSTATUS and WTERMSIG, which are macros Swift does not import.
int hearth_exit_code(int status);
int hearth_term_signal(int status);

/// Makes stdout line-buffered (a worker's output reaches the host's log line by line).
void hearth_line_buffer_stdout(void);

/// glibc's memmem (a GNU extension the Swift Glibc module does not export).
const void *hearth_memmem(const void *haystack, size_t haystack_length, const void *needle, size_t needle_length);

/// The scheduling policy of thread `tid` (0: the calling thread): 1 for SCHED_BATCH, 0 for
/// SCHED_OTHER ("normal"), 2 for any other policy, -1 with errno set when it cannot be read.
int hearth_thread_policy(int tid);

/// Sets thread `tid` (0: the calling thread) to SCHED_BATCH (`batch` 1) or SCHED_OTHER (0), at
/// static priority 0, its nice value kept: 0, or -1 with errno set (ESRCH: the thread has ended).
int hearth_set_thread_policy(int tid, int batch);

#endif
