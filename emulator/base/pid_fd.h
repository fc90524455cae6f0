/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* A descriptor of another process, copied into this one (pidfd_getfd), and what it is. */
#ifndef ROCEMU_EMULATOR_PID_FD_H
#define ROCEMU_EMULATOR_PID_FD_H

#include <stdbool.h>
#include <sys/types.h>

/* A copy of fd number fd of process pid, or -1 (also for fd < 0). */
int rocemu_pid_fd_take(pid_t pid, int fd);

/* Whether fd is a userfaultfd, by the name its anonymous inode gives in /proc. */
bool rocemu_fd_is_userfaultfd(int fd);

#endif /* ROCEMU_EMULATOR_PID_FD_H */
