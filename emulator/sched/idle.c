/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#include "emulator/sched/idle.h"

#include "emulator/core/client.h"
#include "emulator/ring/format.h"
#include "emulator/engine/transport.h"
#include "emulator/obj/cq.h"
#include "emulator/obj/qp.h"
#include "emulator/observe/tap.h"
#include "emulator/sched/direct.h"
#include "rocemu/log.h"

/* Spin this long after the last work before sleeping: saves a wake-up per round trip. */
#define SPIN_NS 2000u

static void sleeping_set(struct rocemu_emu *emu, uint32_t v)
{
	struct rocemu_client *c;

	/* Release: a shim that sees the flag sees recv_kick as it was before it. */
	rocemu_list_for_each(c, &emu->clients, struct rocemu_client, node)
		if (c->dev)
			__atomic_store_n(&rocemu_client_page(c)->daemon_sleeping, v, __ATOMIC_RELEASE);
	emu->sleeping = v;
}

void rocemu_idle_page_init(struct rocemu_emu *emu, struct rocemu_client *c)
{
	/* The idle hook clears it while the daemon runs; a spare kick costs little. */
	__atomic_store_n(&rocemu_client_page(c)->recv_kick, emu->qps_in_error > 0, __ATOMIC_RELAXED);
	__atomic_store_n(&rocemu_client_page(c)->daemon_sleeping, 1, __ATOMIC_RELEASE);
}

/* The loop woke up for emu (a datagram taken, a kick): clear the sleeping flags. */
static void idle_awake(void *arg)
{
	struct rocemu_emu *emu = arg;

	emu->last_work_ns = rocemu_now_ns();
	if (emu->sleeping)
		sleeping_set(emu, 0);
}

void rocemu_idle_kick(struct rocemu_client *c)
{
	idle_awake(c->emu);
}

/* New WQEs: sent in RTS (and SQD), flushed in ERR, left alone in the other states. */
static void scan_qp(struct rocemu_qp *qp)
{
	if (qp->attr.qp_state == IBV_QPS_ERR)
		qp->ops->flush(qp);
	else
		qp->ops->post(qp);
}

/*
 * Work for c's QPs and CQs if its doorbell_seq moved or a doorbell of
 * mlx5dv_init_obj's rang. Returns whether it did.
 */
static bool scan_client(struct rocemu_client *c)
{
	uint32_t seq = __atomic_load_n(&rocemu_client_page(c)->doorbell_seq, __ATOMIC_ACQUIRE);
	struct rocemu_qp *qp, *qp_tmp;
	struct rocemu_cq *cq;

	/* rocemu_direct_rung first: it records the doorbells it saw; only watched clients have any. */
	if (!(c->direct_objs && rocemu_direct_rung(c)) && seq == c->doorbell_seq_seen)
		return false;
	c->doorbell_seq_seen = seq;
	rocemu_list_for_each_safe(qp, qp_tmp, &c->qps, struct rocemu_qp, node)
		scan_qp(qp);
	rocemu_list_for_each(cq, &c->cqs, struct rocemu_cq, node)
		cq->owner->dev->format->cq_arm_check(cq);
	return true;
}

/* Work was done: the direct doorbells' poll shortens, if anything is watched. */
static void work_done(struct rocemu_emu *emu)
{
	if (emu->direct_objs)
		rocemu_direct_work(emu);
	emu->last_work_ns = rocemu_now_ns();
}

void rocemu_idle_before_request(struct rocemu_client *c)
{
	if (c->dev && scan_client(c))
		work_done(c->emu);
}

static bool scan_all(struct rocemu_emu *emu)
{
	struct rocemu_client *c;
	bool work = false;

	rocemu_list_for_each(c, &emu->clients, struct rocemu_client, node)
		if (c->dev)
			work |= scan_client(c);
	return work;
}

static int idle_hook(void *arg, bool may_sleep)
{
	struct rocemu_emu *emu = arg;

	/* Held data and ACKs leave before the doorbells bring new work, and before any sleep. */
	rocemu_transport_settle();
	if (emu->sleeping)
		sleeping_set(emu, 0);
	/* A timer due (the next burst of a READ, say) is work too: no sleeping flag then. */
	if (scan_all(emu)) {
		work_done(emu);
		return 1;
	}
	if (!may_sleep) {
		emu->last_work_ns = rocemu_now_ns();
		return 1;
	}
	if (emu->busy_poll && emu->num_connections)
		return 1;
	if (rocemu_now_ns() - emu->last_work_ns < SPIN_NS)
		return 1;
	sleeping_set(emu, 1);
	/* Cold: direct doorbells write-protected, so those the scan below misses fault instead. */
	rocemu_direct_cool(emu);
	/* Full barrier: the flag is visible before we read the doorbells again (Dekker). */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (scan_all(emu)) {
		sleeping_set(emu, 0);
		work_done(emu);
		return 1;
	}
	rocemu_direct_sleep(emu);
	rocemu_tap_idle(emu);
	return 0;
}

void rocemu_idle_start(struct rocemu_emu *emu)
{
	rocemu_loop_set_idle_hook(emu->loop, idle_hook, emu);
	rocemu_loop_set_rx_hook(emu->loop, idle_awake, emu);
}
