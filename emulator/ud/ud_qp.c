/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * UD per QP and its transport ops: queue positions on state changes, the
 * completions of both queues and the move to ERR, which flushes them
 * (every outstanding WQE completes with WR_FLUSH_ERR, as on mlx5).
 */
#include <string.h>

#include "emulator/ring/format.h"
#include "emulator/engine/mcast.h"
#include "emulator/obj/async_event.h"
#include "emulator/obj/qp.h"
#include "emulator/obj/qp_state.h"
#include "emulator/obj/srq.h"
#include "emulator/ud/ud.h"
#include "rocemu/log.h"
#include "rocemu/ring.h"

static void ud_flush(struct rocemu_qp *qp);

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

/*
 * An error CQE moves the QP to ERR, as a ConnectX does, and so does a
 * broken work queue, with QP_FATAL (no CQE can tell of it); the rest
 * flushes, and a QP with an SRQ reports its last WQE: it holds none
 * between datagrams.
 */
static void ud_to_error(struct rocemu_qp *qp, const char *why, bool fatal)
{
	if (qp->attr.qp_state == IBV_QPS_ERR)
		return;
	rocemu_qp_enter_state(qp, IBV_QPS_ERR, why);
	ud_flush(qp);
	if (fatal)
		rocemu_async_event_qp(qp, IBV_EVENT_QP_FATAL);
	rocemu_srq_qp_errored(qp);
}

void rocemu_ud_qp_fatal(struct rocemu_qp *qp)
{
	ud_to_error(qp, "a broken work queue", true);
}

void rocemu_ud_complete_send(struct rocemu_qp *qp, const struct rocemu_send_wqe *w,
			     enum ibv_wc_status status)
{
	struct rocemu_cqe_info info = {
		.kind = status ? ROCEMU_CQE_SEND_ERR : ROCEMU_CQE_SEND_DONE,
		.status = status,
		.wqe_opcode = w->opcode,
		.qpn = qp->qpn,
		.wqe_counter = w->wqe_counter,
		.byte_cnt = rocemu_ring_wqe_op(qp->owner->dev->format, w->opcode)->wc_len ==
			    ROCEMU_WC_LEN_CQE ? w->length : 0,
	};

	if (status || w->signaled)
		qp->owner->dev->format->cqe_write(qp->send_cq, &info);
	if (status && status != IBV_WC_WR_FLUSH_ERR)
		ud_to_error(qp, "an error completion", false);
}

void rocemu_ud_recv_fail(struct rocemu_qp *qp, uint32_t counter, enum ibv_wc_status status)
{
	struct rocemu_cqe_info info = {
		.kind = ROCEMU_CQE_RECV_ERR,
		.status = status,
		.qpn = qp->qpn,
		.wqe_counter = (uint16_t)counter,
		.srqn = rocemu_qp_recv_srqn(qp),
	};

	qp->owner->dev->format->cqe_write(rocemu_qp_recv_cq(qp), &info);
	if (status != IBV_WC_WR_FLUSH_ERR)
		ud_to_error(qp, "an error completion", false);
}

/*
 * Complete every WQE posted and not yet taken, on both queues, with
 * WR_FLUSH_ERR; an SRQ's WQEs belong to no QP until taken: none to flush,
 * and a doorbell past its ring names none either.
 */
static void ud_flush(struct rocemu_qp *qp)
{
	struct rocemu_ud *ud = qp->ud;
	int posted = qp->owner->dev->format->sq_posted(qp, ud->sq_bb);
	struct rocemu_send_wqe w;

	for (; posted > 0; posted -= (int)w.bbs) {
		qp->owner->dev->format->parse_send(qp, ud->sq_bb, (uint32_t)posted, &w);
		rocemu_ud_complete_send(qp, &w, IBV_WC_WR_FLUSH_ERR);
		ud->sq_bb += w.bbs;
	}
	for (posted = rocemu_qp_rq_posted(qp, ud->rq_ci); posted > 0; posted--, ud->rq_ci++)
		rocemu_ud_recv_fail(qp, ud->rq_ci, IBV_WC_WR_FLUSH_ERR);
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
