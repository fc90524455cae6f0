/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#include "emulator/observe/trace.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
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
#include "emulator/ring/format.h"
#include "emulator/obj/cq.h"
#include "emulator/obj/qp.h"
#include "emulator/obj/qp_state.h"
#include "net/roce/roce_hdr.h"
#include "net/roce/roce_opcode.h"
#include "net/roce/roce_text.h"
#include "rocemu/log.h"
#include "rocemu/ring.h"

#define MAX_TRACERS 16
#define LINE_MAX_BYTES 256
#define TRACE_SNDBUF (1 << 20)	/* lines a slow reader may lag behind */
#define CM_QPN 1
#define NO_QP 0x01000000u	/* above every 24-bit QPN: matches no filter */

struct rocemu_tracer {
	struct rocemu_list node;	/* in emu->tracers */
	struct rocemu_client *owner;
	int fd;				/* this end: one line per message, never blocking */
	int dev_index;			/* -1: every device */
	uint32_t qpn;			/* ROCEMU_TRACE_ANY_QP or one QP */
	uint32_t kinds;
	uint64_t lost;			/* lines not taken since the last one that was */
};

/* One event to the tracers that want it: its device, kind and up to two QPs it concerns. */
struct trace_event {
	const struct rocemu_device *dev;
	uint32_t kind;
	uint32_t qpn[2];
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

static bool wants(const struct rocemu_tracer *t, const struct trace_event *ev)
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

/* Timestamp, device, then fmt: one line to every tracer that wants ev. */
__attribute__((format(printf, 2, 3)))
static void emit(const struct trace_event *ev, const char *fmt, ...)
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

/* The local QP that sends along flow to destqp: RC pairs each have a source port of their own. */
static uint32_t sender_qpn(const struct rocemu_device *dev, const struct rocemu_ipv4_udp *flow,
			   uint32_t destqp)
{
	struct rocemu_client *c;
	struct rocemu_qp *qp;

	rocemu_list_for_each(c, &dev->emu->clients, struct rocemu_client, node) {
		if (c->dev != dev)
			continue;
		rocemu_list_for_each(qp, &c->qps, struct rocemu_qp, node)
			if (qp->path.flow.sport == flow->sport && qp->path.flow.daddr == flow->daddr &&
			    qp->attr.dest_qp_num == destqp)
				return qp->qpn;
	}
	return NO_QP;
}

static bool any_qp_filter(const struct rocemu_emu *emu)
{
	const struct rocemu_tracer *t;

	rocemu_list_for_each(t, &emu->tracers, struct rocemu_tracer, node)
		if (t->qpn != ROCEMU_TRACE_ANY_QP)
			return true;
	return false;
}

static void trace_packet(struct rocemu_device *dev, bool sent, const struct rocemu_ipv4_udp *flow,
			 const uint8_t *pkt, size_t len)
{
	const struct rocemu_opcode_info *info = len >= ROCEMU_BTH_BYTES ?
		rocemu_opcode_info(rocemu_bth_opcode(pkt)) : NULL;
	ssize_t paylen = info ? rocemu_pkt_payload_len(pkt, len) : -1;
	struct trace_event ev = { .dev = dev, .kind = ROCEMU_TRACE_PACKET,
				  .qpn = { NO_QP, NO_QP } };
	char src[INET_ADDRSTRLEN], dst[INET_ADDRSTRLEN], extra[64] = "";
	const char *icrc = "";

	inet_ntop(AF_INET, &flow->saddr, src, sizeof(src));
	inet_ntop(AF_INET, &flow->daddr, dst, sizeof(dst));
	if (!sent && rocemu_icrc_check_v4(flow, pkt, len, NULL))
		icrc = " ICRC bad";
	if (paylen < 0) {
		emit(&ev, "%s %s:%u > %s malformed, %zu bytes%s", sent ? "tx" : "rx", src,
		     ntohs(flow->sport), dst, len, icrc);
		return;
	}
	ev.qpn[0] = rocemu_bth_destqp(pkt);
	if (sent && any_qp_filter(dev->emu))
		ev.qpn[1] = sender_qpn(dev, flow, ev.qpn[0]);
	if (info->hdr_mask & ROCEMU_HDRM_AETH)
		rocemu_aeth_text(rocemu_aeth_syndrome(pkt + info->offset[ROCEMU_HDR_AETH]), extra,
				 sizeof(extra));
	else if (ev.qpn[0] == CM_QPN)
		snprintf(extra, sizeof(extra), "CM %s",
			 rocemu_cm_attr_name(rocemu_mad_attr(pkt + info->length, (size_t)paylen)));
	else if (info->hdr_mask & ROCEMU_HDRM_DETH)
		snprintf(extra, sizeof(extra), "src QP 0x%06x",
			 rocemu_deth_src_qp(pkt + info->offset[ROCEMU_HDR_DETH]));
	emit(&ev, "%s %s:%u > %s QP 0x%06x %s PSN %u %zd B%s%s%s", sent ? "tx" : "rx", src,
	     ntohs(flow->sport), dst, ev.qpn[0], info->name, rocemu_bth_psn(pkt), paylen,
	     extra[0] ? " " : "", extra, icrc);
}

void rocemu_trace_packets(struct rocemu_device *dev, bool sent, const struct rocemu_ipv4_udp *flow,
			  const uint8_t *buf, size_t len, size_t seg)
{
	size_t off, n;

	if (!seg)
		seg = len;
	for (off = 0; off < len; off += seg) {
		n = len - off < seg ? len - off : seg;
		trace_packet(dev, sent, flow, buf + off, n);
	}
}

void rocemu_trace_qp_state(const struct rocemu_qp *qp, enum ibv_qp_state from,
			   enum ibv_qp_state to, const char *why)
{
	struct trace_event ev = { .dev = qp->owner->dev, .kind = ROCEMU_TRACE_QP,
				  .qpn = { qp->qpn, qp->qpn } };

	emit(&ev, "qp 0x%06x %s -> %s%s%s", qp->qpn, rocemu_qp_state_name(from),
	     rocemu_qp_state_name(to), why ? ": " : "", why ? why : "");
}

void rocemu_trace_cqe(const struct rocemu_cq *cq, const struct rocemu_cqe_info *info,
		      uint8_t cqe_opcode, uint8_t syndrome)
{
	const struct rocemu_cqe_op *op = rocemu_cqe_op(cqe_opcode);
	struct trace_event ev = { .dev = cq->owner->dev, .kind = ROCEMU_TRACE_CQE,
				  .qpn = { info->qpn, info->qpn } };

	if (op->flags & ROCEMU_CQE_OP_ERR)
		emit(&ev, "cqe cq 0x%x qp 0x%06x %s wqe %u: %s (syndrome 0x%02x)", cq->cqn, info->qpn,
		     op->flags & ROCEMU_CQE_OP_SQ ? "send" : "recv", info->wqe_counter,
		     rocemu_cqe_error_text(syndrome), syndrome);
	else if (op->flags & ROCEMU_CQE_OP_SQ)
		emit(&ev, "cqe cq 0x%x qp 0x%06x send wqe %u %s: success", cq->cqn, info->qpn,
		     info->wqe_counter, rocemu_ring_wqe_op(cq->owner->dev->format, info->wqe_opcode)->name);
	else
		emit(&ev, "cqe cq 0x%x qp 0x%06x recv %s %u B: success", cq->cqn, info->qpn, op->name,
		     info->byte_cnt);
}

void rocemu_trace_async(const struct rocemu_client *c, uint32_t qpn, const char *event)
{
	struct trace_event ev = { .dev = c->dev, .kind = ROCEMU_TRACE_ASYNC, .qpn = { qpn, qpn } };

	if (!c->dev)
		return;
	if (qpn == ROCEMU_TRACE_ANY_QP)
		emit(&ev, "async %s", event);
	else
		emit(&ev, "async qp 0x%06x %s", qpn, event);
}
