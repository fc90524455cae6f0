/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#include "emulator/core/client.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "rocemu/log.h"

const char *rocemu_client_dev_name(const struct rocemu_client *c)
{
	return c->dev ? c->dev->name : "-";
}

void rocemu_client_unwatch_pid(struct rocemu_client *c)
{
	if (c->pidfd < 0)
		return;
	rocemu_loop_unwatch_fd(c->emu->loop, c->pidfd);
	close(c->pidfd);
	c->pidfd = -1;
}

void rocemu_client_gone(struct rocemu_client *c)
{
	if (c->gone)
		return;
	c->gone = true;
	rocemu_client_unwatch_pid(c);
	rocemu_log(ROCEMU_LOG_INFO, "%s pid %d (%s) is gone: its QPs send nothing until it closes",
		   rocemu_client_dev_name(c), (int)c->pid, c->comm);
}

static void client_pid_exited(void *arg, int fd, uint32_t revents)
{
	rocemu_client_gone(arg);
}

void rocemu_client_watch_pid(struct rocemu_client *c)
{
#ifdef SYS_pidfd_open
	c->pidfd = (int)syscall(SYS_pidfd_open, c->pid, 0);
	if (c->pidfd < 0) {
		rocemu_log(ROCEMU_LOG_DEBUG, "pid %d: no pidfd (%s): a gone process shows at its next DMA",
			   (int)c->pid, strerror(errno));
		return;
	}
	if (rocemu_loop_watch_fd(c->emu->loop, c->pidfd, client_pid_exited, c)) {
		close(c->pidfd);
		c->pidfd = -1;
	}
#endif
}
