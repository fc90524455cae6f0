/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * UD per QP and its transport ops: queue positions on state changes and
 * the flush on ERR (engine/dgram_qp.c completes and fails its WQEs).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "emulator/ring/format.h"
#include "emulator/engine/dgram_qp.h"
#include "emulator/engine/mcast.h"
#include "emulator/obj/qp.h"
#include "emulator/obj/qp_state.h"
#include "emulator/obj/srq.h"
#include "emulator/ud/ud.h"

static int ud_init(struct rocemu_qp *qp)
{
	qp->ud = calloc(1, sizeof(*qp->ud));
	return qp->ud ? 0 : -ENOMEM;
}

/* Only a process gone leaves groups attached: ibv_destroy_qp refuses (EBUSY). */
static void ud_destroy(struct rocemu_qp *qp)
{
	rocemu_mcast_detach_all(qp);
	free(qp->ud);
	qp->ud = NULL;
}

/* Complete every WQE posted and not yet taken, on both queues, with WR_FLUSH_ERR. */
static void ud_flush(struct rocemu_qp *qp)
{
	rocemu_dgram_flush(qp, &qp->ud->sq_bb, &qp->ud->rq_ci);
}

static void ud_modified(struct rocemu_qp *qp, enum ibv_qp_state cur, enum ibv_qp_state next)
{
	switch (next) {
	case IBV_QPS_RESET:
		memset(qp->ud, 0, sizeof(*qp->ud));
		qp->owner->dev->format->doorbell_reset(qp);
		break;
	case IBV_QPS_RTS:
		if (cur == IBV_QPS_RTR)
			qp->ud->psn = qp->attr.sq_psn;
		rocemu_ud_send_run(qp);
		break;
	case IBV_QPS_ERR:
		ud_flush(qp);
		if (cur != IBV_QPS_ERR)
			rocemu_srq_qp_errored(qp);
		break;
	default:
		break;
	}
}

static void ud_timer(struct rocemu_qp *qp, enum rocemu_qp_timer_kind kind)
{
	(void)qp;
	(void)kind;	/* UD arms none: nothing is acknowledged */
}

/* Every WQE is sent when fetched: nothing is left to drain at SQD. */
static bool ud_sq_draining(const struct rocemu_qp *qp)
{
	(void)qp;
	return false;
}

const struct rocemu_transport_ops rocemu_ud_transport = {
	.name = "UD",
	.connected = false,
	.init = ud_init,
	.destroy = ud_destroy,
	.modified = ud_modified,
	.post = rocemu_ud_send_run,
	.flush = ud_flush,
	.rx = rocemu_ud_recv,
	.timer = ud_timer,
	.sq_draining = ud_sq_draining,
};
