/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#include "emulator/sched/direct.h"

#include <errno.h>

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

int rocemu_direct_watch(struct rocemu_client *c, const struct rocemu_direct_doorbells_req *req)
{
	struct rocemu_qp *qp;
	struct rocemu_cq *cq;
	bool *watched;

	switch (req->kind) {
	case ROCEMU_DIRECT_QP:
		qp = rocemu_qp_lookup(c, req->handle);
		if (!qp)
			return -EINVAL;
		watched = &qp->direct;
		break;
	case ROCEMU_DIRECT_CQ:
		cq = rocemu_cq_lookup(c, req->handle);
		if (!cq)
			return -EINVAL;
		watched = &cq->direct;
		if (!cq->direct)
			cq_arm_handover(cq);
		break;
	default:
		return -EINVAL;
	}
	if (*watched)
		return 0;
	rocemu_client_watch_direct(c, watched);
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
		if (qp->direct)
			rung |= c->dev->format->direct_rung(qp);
	rocemu_list_for_each(cq, &c->cqs, struct rocemu_cq, node)
		if (cq->direct)
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

void rocemu_direct_sleep(struct rocemu_emu *emu)
{
	uint64_t deadline;

	if (!emu->direct_objs)
		return;
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
