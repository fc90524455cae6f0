/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#include "emulator/base/pid_fd.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>

int rocemu_pid_fd_take(pid_t pid, int fd)
{
	int pidfd, copy = -1;

	if (fd < 0)
		return -1;
#if defined(SYS_pidfd_open) && defined(SYS_pidfd_getfd)
	pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (pidfd >= 0) {
		copy = (int)syscall(SYS_pidfd_getfd, pidfd, fd, 0);
		close(pidfd);
	}
#endif
	return copy;
}

bool rocemu_fd_is_userfaultfd(int fd)
{
	static const char name[] = "anon_inode:[userfaultfd]";
	char path[64], link[sizeof(name)];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = readlink(path, link, sizeof(link));
	return n == (ssize_t)sizeof(name) - 1 && !memcmp(link, name, (size_t)n);
}
