/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#include "emulator/core/client.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "rocemu/ctrl.h"
#include "rocemu/log.h"

const char *rocemu_client_dev_name(const struct rocemu_client *c)
{
	return c->dev ? c->dev->name : "-";
}

void rocemu_emu_qp_errors(struct rocemu_emu *emu, int delta)
{
	struct rocemu_client *c;
	bool before = emu->qps_in_error > 0;

	emu->qps_in_error += delta;
	if (before == (emu->qps_in_error > 0))
		return;
	rocemu_list_for_each(c, &emu->clients, struct rocemu_client, node)
		if (c->dev)
			__atomic_store_n(&rocemu_client_page(c)->recv_kick, emu->qps_in_error > 0,
					 __ATOMIC_RELEASE);
}

void rocemu_client_watch_direct(struct rocemu_client *c, struct rocemu_direct *d)
{
	if (d->watched)
		return;
	d->watched = true;
	d->owner = c;
	c->direct_objs++;
	c->emu->direct_objs++;
	c->emu->direct_polled++;
}

void rocemu_client_direct_uffd_close(struct rocemu_client *c, struct rocemu_direct *d)
{
	if (!d->has_uffd)
		return;
	/* Closing the daemon's copy, the last, releases a thread still faulting there. */
	rocemu_loop_unwatch_fd(c->emu->loop, d->uffd);
	close(d->uffd);
	d->has_uffd = false;
	if (d->armed)
		c->emu->direct_polled++;
	d->armed = false;
}

void rocemu_client_unwatch_direct(struct rocemu_client *c, struct rocemu_direct *d)
{
	rocemu_client_direct_uffd_close(c, d);
	if (!d->watched)
		return;
	d->watched = false;
	c->direct_objs--;
	c->emu->direct_objs--;
	c->emu->direct_polled--;
}

/* Whether the process behind c's pidfd still runs (its pidfd is readable once it exits). */
static bool client_alive(const struct rocemu_client *c)
{
	struct pollfd p = { .fd = c->pidfd, .events = POLLIN };

	return c->pidfd >= 0 && poll(&p, 1, 0) == 0;
}

bool rocemu_client_capable(const struct rocemu_client *c, unsigned int cap)
{
	unsigned long long caps = 0;
	char path[64], line[128];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)c->pid);
	f = fopen(path, "r");
	if (!f)
		return false;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "CapEff: %llx", &caps) == 1)
			break;
	fclose(f);
	/* Alive after the read: the PID was still its own, not reused by another process. */
	return cap < 64 && (caps & (1ull << cap)) && client_alive(c);
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
