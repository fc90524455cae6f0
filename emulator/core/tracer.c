/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#include "emulator/core/tracer.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "emulator/base/list.h"
#include "emulator/core/client.h"
#include "emulator/core/device.h"
#include "rocemu/log.h"

#define MAX_TRACERS 16
#define LINE_MAX_BYTES 256
#define TRACE_SNDBUF (1 << 20)	/* lines a slow reader may lag behind */

struct rocemu_tracer {
	struct rocemu_list node;	/* in emu->tracers */
	struct rocemu_client *owner;
	int fd;				/* this end: one line per message, never blocking */
	int dev_index;			/* -1: every device */
	uint32_t qpn;			/* ROCEMU_TRACE_ANY_QP or one QP */
	uint32_t kinds;
	uint64_t lost;			/* lines not taken since the last one that was */
};

int rocemu_trace_start(struct rocemu_client *c, const struct rocemu_trace_req *req, int *fd)
{
	struct rocemu_emu *emu = c->emu;
	char name[ROCEMU_DEV_NAME_MAX + 1];
	struct rocemu_tracer *t;
	int pair[2], sndbuf = TRACE_SNDBUF;
	struct rocemu_device *dev = NULL;

	memcpy(name, req->dev_name, ROCEMU_DEV_NAME_MAX);
	name[ROCEMU_DEV_NAME_MAX] = '\0';
	if (name[0] && !(dev = rocemu_emu_device_by_name(emu, name)))
		return -ENODEV;
	if (!req->kinds || req->kinds & ~(uint32_t)ROCEMU_TRACE_ALL)
		return -EINVAL;
	if (emu->ntracers >= MAX_TRACERS)
		return -EBUSY;
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair)) {
		free(t);
		return -errno;
	}
	setsockopt(pair[0], SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf));
	shutdown(pair[0], SHUT_RD);
	*t = (struct rocemu_tracer){ .owner = c, .fd = pair[0], .dev_index = dev ? (int)dev->index : -1,
				     .qpn = req->qpn, .kinds = req->kinds };
	rocemu_list_add_tail(&emu->tracers, &t->node);
	emu->ntracers++;
	*fd = pair[1];
	rocemu_log(ROCEMU_LOG_INFO, "trace started by pid %d (%s) for %s", (int)c->pid, c->comm,
		   dev ? dev->name : "every device");
	return 0;
}

static void tracer_end(struct rocemu_emu *emu, struct rocemu_tracer *t)
{
	rocemu_list_del(&t->node);
	emu->ntracers--;
	close(t->fd);
	rocemu_log(ROCEMU_LOG_INFO, "trace of pid %d ended", (int)t->owner->pid);
	free(t);
}

void rocemu_trace_client_gone(struct rocemu_client *c)
{
	struct rocemu_tracer *t, *tmp;

	rocemu_list_for_each_safe(t, tmp, &c->emu->tracers, struct rocemu_tracer, node)
		if (t->owner == c)
			tracer_end(c->emu, t);
}

static bool wants(const struct rocemu_tracer *t, const struct rocemu_trace_event *ev)
{
	return (t->kinds & ev->kind) && (t->dev_index < 0 || (uint32_t)t->dev_index == ev->dev->index) &&
	       (t->qpn == ROCEMU_TRACE_ANY_QP || t->qpn == ev->qpn[0] || t->qpn == ev->qpn[1]);
}

/* Hand one line to t; false when its reader is gone. */
static bool tracer_send(struct rocemu_tracer *t, const char *line, size_t len)
{
	char notice[80];
	ssize_t n;

	if (t->lost) {
		int k = snprintf(notice, sizeof(notice), "(%llu events not shown: the reader fell behind)\n",
				 (unsigned long long)t->lost);

		if (send(t->fd, notice, (size_t)k, MSG_DONTWAIT | MSG_NOSIGNAL) < 0)
			goto failed;
		t->lost = 0;
	}
	n = send(t->fd, line, len, MSG_DONTWAIT | MSG_NOSIGNAL);
	if (n >= 0)
		return true;
failed:
	if (errno != EAGAIN && errno != EWOULDBLOCK)
		return false;
	t->lost++;
	return true;
}

void rocemu_trace_emit(const struct rocemu_trace_event *ev, const char *fmt, ...)
{
	struct rocemu_emu *emu = ev->dev->emu;
	char line[LINE_MAX_BYTES];
	struct rocemu_tracer *t, *tmp;
	struct timespec ts;
	struct tm tm;
	va_list ap;
	int n, k;

	clock_gettime(CLOCK_REALTIME, &ts);
	localtime_r(&ts.tv_sec, &tm);
	n = snprintf(line, sizeof(line), "%02d:%02d:%02d.%06ld %s ", tm.tm_hour, tm.tm_min,
		     tm.tm_sec, ts.tv_nsec / 1000, ev->dev->name);
	va_start(ap, fmt);
	k = vsnprintf(line + n, sizeof(line) - (size_t)n - 1, fmt, ap);
	va_end(ap);
	n = k < 0 ? n : (size_t)(n + k) < sizeof(line) - 1 ? n + k : (int)sizeof(line) - 2;
	line[n++] = '\n';
	rocemu_list_for_each_safe(t, tmp, &emu->tracers, struct rocemu_tracer, node)
		if (wants(t, ev) && !tracer_send(t, line, (size_t)n))
			tracer_end(emu, t);
}

bool rocemu_trace_any_qp_filter(const struct rocemu_emu *emu)
{
	const struct rocemu_tracer *t;

	rocemu_list_for_each(t, &emu->tracers, struct rocemu_tracer, node)
		if (t->qpn != ROCEMU_TRACE_ANY_QP)
			return true;
	return false;
}

void rocemu_trace_qp_state(const struct rocemu_device *dev, uint32_t qpn, const char *from,
			   const char *to, const char *why)
{
	struct rocemu_trace_event ev = { .dev = dev, .kind = ROCEMU_TRACE_QP, .qpn = { qpn, qpn } };

	rocemu_trace_emit(&ev, "qp 0x%06x %s -> %s%s%s", qpn, from, to, why ? ": " : "",
			  why ? why : "");
}

void rocemu_trace_async(const struct rocemu_client *c, uint32_t qpn, const char *event)
{
	struct rocemu_trace_event ev = { .dev = c->dev, .kind = ROCEMU_TRACE_ASYNC, .qpn = { qpn, qpn } };

	if (!c->dev)
		return;
	if (qpn == ROCEMU_TRACE_ANY_QP)
		rocemu_trace_emit(&ev, "async %s", event);
	else
		rocemu_trace_emit(&ev, "async qp 0x%06x %s", qpn, event);
}
