#define _GNU_SOURCE
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <unistd.h>
#include "CHearthSystem.h"

int hearth_pipe_cloexec(int fds[2]) { return pipe2(fds, O_CLOEXEC); }

int hearth_spawn_closefrom(posix_spawn_file_actions_t *actions, int from) {
    return posix_spawn_file_actions_addclosefrom_np(actions, from);
}

void hearth_line_buffer_stdout(void) { setvbuf(stdout, NULL, _IOLBF, 0); }
