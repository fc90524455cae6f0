/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#include "emulator/sched/direct.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "emulator/base/pid_fd.h"
#include "emulator/obj/cq.h"
#include "emulator/obj/qp.h"
#include "emulator/ring/format.h"
#include "rocemu/log.h"
#include "rocemu/ring.h"

/*
 * mlx5 and the programs that arm its CQs themselves start the arm sequence
 * at 0, the shim at 1: a CQ never armed reads as fired at sequence 3, so
 * that an arm with 0 is new and the initial arm word (0) is not.
 */
static void cq_arm_handover(struct rocemu_cq *cq)
{
	__be32 *dbrec = (__be32 *)((char *)cq->ring.addr + cq->layout.dbrec_offset);

	if (cq->fired_sn || __atomic_load_n(&dbrec[ROCEMU_CQ_DBR_ARM], __ATOMIC_ACQUIRE))
		return;
	cq->fired_sn = 3;
	__atomic_store_n(&dbrec[ROCEMU_CQ_DBR_ARM], htobe32(3u << 28), __ATOMIC_RELEASE);
}

/* Write-protect d's pages (wp) or lift that, waking a thread that faulted there; false on failure. */
static bool direct_protect(struct rocemu_direct *d, bool wp)
{
	struct uffdio_writeprotect p = {
		.range = { .start = d->addr, .len = d->len },
		.mode = wp ? UFFDIO_WRITEPROTECT_MODE_WP : 0,
	};

	return !ioctl(d->uffd, UFFDIO_WRITEPROTECT, &p);
}

/*
 * A doorbell page of d was written while protected: lift the protection
 * (the writer goes on) and poll again. A descriptor that errs, or that
 * the lift fails on, is given up: the object is polled from then on.
 */
static void direct_fault(void *arg, int fd, uint32_t revents)
{
	struct rocemu_direct *d = arg;
	struct uffd_msg msg[8];
	ssize_t n = -1;

	/* Bounded: a program faulting on purpose gets one read per turn of the loop. */
	if (!(revents & (POLLERR | POLLHUP | POLLNVAL)))
		n = read(fd, msg, sizeof(msg));
	if (n < 0 && errno == EAGAIN)
		return;
	if (n < (ssize_t)sizeof(msg[0]) || !direct_protect(d, false)) {
		rocemu_log(ROCEMU_LOG_DEBUG, "%s: direct doorbells: userfaultfd given up: %s",
			   rocemu_client_dev_name(d->owner), n < 0 ? strerror(errno) : "short read");
		rocemu_client_direct_uffd_close(d->owner, d);
	} else if (d->armed) {
		if (d->owner->dev)
			d->owner->dev->direct_wakeups++;
		d->armed = false;
		d->owner->emu->direct_polled++;
	}
	rocemu_direct_work(d->owner->emu);
}

/*
 * The userfaultfd that came with req, if any and sound, becomes d's: an
 * idle daemon protects d's pages instead of polling them. Without one the
 * object is polled, as before; a program only loses its own wake-ups.
 */
static void direct_take_uffd(struct rocemu_client *c, struct rocemu_direct *d,
			     const struct rocemu_direct_doorbells_req *req)
{
	long page = sysconf(_SC_PAGESIZE);
	int fd = c->req_fd;

	if (!req->wp_len || fd < 0 || req->wp_addr % (uint64_t)page ||
	    req->wp_len % (uint64_t)page || req->wp_len > ROCEMU_DIRECT_WP_MAX ||
	    req->wp_addr > UINT64_MAX - req->wp_len || !rocemu_fd_is_userfaultfd(fd))
		return;
	/* Blocking, it would poll as an error forever: the loop must never stall on it. */
	if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) ||
	    rocemu_loop_watch_fd(c->emu->loop, fd, direct_fault, d))
		return;
	c->req_fd = -1;
	d->uffd = fd;
	d->addr = req->wp_addr;
	d->len = req->wp_len;
	d->has_uffd = true;
}

int rocemu_direct_watch(struct rocemu_client *c, const struct rocemu_direct_doorbells_req *req)
{
	struct rocemu_direct *d;
	struct rocemu_qp *qp;
	struct rocemu_cq *cq;

	switch (req->kind) {
	case ROCEMU_DIRECT_QP:
		qp = rocemu_qp_lookup(c, req->handle);
		if (!qp)
			return -EINVAL;
		d = &qp->direct;
		break;
	case ROCEMU_DIRECT_CQ:
		cq = rocemu_cq_lookup(c, req->handle);
		if (!cq)
			return -EINVAL;
		d = &cq->direct;
		if (!d->watched)
			cq_arm_handover(cq);
		break;
	default:
		return -EINVAL;
	}
	if (d->watched)
		return 0;
	rocemu_client_watch_direct(c, d);
	direct_take_uffd(c, d, req);
	/* The program rings next: poll soon (the period is kept only while something is watched). */
	rocemu_direct_work(c->emu);
	rocemu_log(ROCEMU_LOG_DEBUG, "%s %s 0x%06x: direct doorbells watched", c->dev->name,
		   req->kind == ROCEMU_DIRECT_QP ? "qp" : "cq", req->handle);
	return 0;
}

/* Both words of a CQ's doorbell record at once: a new consumer index or arm. */
static uint64_t dbrec_words(const void *dbrec)
{
	/* Acquire: the program consumed the CQEs before it wrote the record. */
	return __atomic_load_n((const uint64_t *)dbrec, __ATOMIC_ACQUIRE);
}

static bool seen_update(uint64_t *seen, uint64_t now)
{
	bool changed = *seen != now;

	*seen = now;
	return changed;
}

bool rocemu_direct_rung(struct rocemu_client *c)
{
	struct rocemu_qp *qp;
	struct rocemu_cq *cq;
	bool rung = false;

	rocemu_list_for_each(qp, &c->qps, struct rocemu_qp, node)
		if (qp->direct.watched)
			rung |= c->dev->format->direct_rung(qp);
	rocemu_list_for_each(cq, &c->cqs, struct rocemu_cq, node)
		if (cq->direct.watched)
			rung |= seen_update(&cq->direct_seen, dbrec_words((const char *)cq->ring.addr +
									cq->layout.dbrec_offset));
	return rung;
}

void rocemu_direct_work(struct rocemu_emu *emu)
{
	emu->direct_poll_ns = ROCEMU_DIRECT_POLL_MIN_NS;
	emu->direct_work_ns = rocemu_now_ns();
}

/* Nothing else to do: the idle hook that runs before the loop's next poll scans. */
static void direct_poll_fired(void *arg)
{
	struct rocemu_emu *emu = arg;

	emu->direct_timer = 0;
	/* Found work, not the idle hook's stamp of a due timer (this poll's own turn is one). */
	if (rocemu_now_ns() - emu->direct_work_ns < ROCEMU_DIRECT_HOT_NS) {
		emu->direct_poll_ns = ROCEMU_DIRECT_POLL_MIN_NS;
		return;
	}
	emu->direct_poll_ns *= 2;
	if (emu->direct_poll_ns > ROCEMU_DIRECT_POLL_MAX_NS)
		emu->direct_poll_ns = ROCEMU_DIRECT_POLL_MAX_NS;
}

/* Protect d's pages if it has a userfaultfd; one that cannot is given up, and d polled. */
static void direct_arm(struct rocemu_direct *d)
{
	if (d->armed || !d->has_uffd)
		return;
	if (!direct_protect(d, true)) {
		rocemu_log(ROCEMU_LOG_DEBUG, "%s: direct doorbells: userfaultfd given up: %s",
			   rocemu_client_dev_name(d->owner), strerror(errno));
		rocemu_client_direct_uffd_close(d->owner, d);
		return;
	}
	d->armed = true;
	d->owner->emu->direct_polled--;
}

void rocemu_direct_cool(struct rocemu_emu *emu)
{
	struct rocemu_client *c;
	struct rocemu_qp *qp;
	struct rocemu_cq *cq;

	if (emu->direct_polled == 0 || rocemu_now_ns() - emu->direct_work_ns < ROCEMU_DIRECT_HOT_NS)
		return;
	rocemu_list_for_each(c, &emu->clients, struct rocemu_client, node) {
		if (!c->direct_objs)
			continue;
		rocemu_list_for_each(qp, &c->qps, struct rocemu_qp, node)
			if (qp->direct.watched)
				direct_arm(&qp->direct);
		rocemu_list_for_each(cq, &c->cqs, struct rocemu_cq, node)
			if (cq->direct.watched)
				direct_arm(&cq->direct);
	}
}

void rocemu_direct_sleep(struct rocemu_emu *emu)
{
	uint64_t deadline;

	/* Every watched object protected: its next doorbell faults and wakes the loop. */
	if (!emu->direct_polled) {
		if (emu->direct_timer)
			rocemu_loop_timer_cancel(emu->loop, emu->direct_timer);
		emu->direct_timer = 0;
		return;
	}
	if (emu->direct_poll_ns < ROCEMU_DIRECT_POLL_MIN_NS)
		emu->direct_poll_ns = ROCEMU_DIRECT_POLL_MIN_NS;
	deadline = rocemu_now_ns() + emu->direct_poll_ns;
	/* A poll armed while idle may lie further out than the period work just reset. */
	if (emu->direct_timer && emu->direct_deadline <= deadline)
		return;
	if (emu->direct_timer)
		rocemu_loop_timer_cancel(emu->loop, emu->direct_timer);
	emu->direct_deadline = deadline;
	emu->direct_timer = rocemu_loop_timer_add(emu->loop, deadline, direct_poll_fired, emu);
}
