/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Completions, errors and flush of UD and RAW_PACKET QPs (dgram_qp.h). */
#include "emulator/engine/dgram_qp.h"

#include "emulator/obj/async_event.h"
#include "emulator/obj/qp.h"
#include "emulator/obj/srq.h"
#include "emulator/ring/format.h"
#include "rocemu/ring.h"

/*
 * An error CQE moves the QP to ERR, as a ConnectX does, and so does a
 * broken work queue, with QP_FATAL (no CQE can tell of it); the rest
 * flushes, and a QP with an SRQ reports its last WQE: it holds none
 * between datagrams.
 */
static void dgram_to_error(struct rocemu_qp *qp, const char *why, bool fatal)
{
	if (qp->attr.qp_state == IBV_QPS_ERR)
		return;
	rocemu_qp_enter_state(qp, IBV_QPS_ERR, why);
	qp->ops->flush(qp);
	if (fatal)
		rocemu_async_event_qp(qp, IBV_EVENT_QP_FATAL);
	rocemu_srq_qp_errored(qp);
}

void rocemu_dgram_qp_fatal(struct rocemu_qp *qp)
{
	dgram_to_error(qp, "a broken work queue", true);
}

void rocemu_dgram_complete_send(struct rocemu_qp *qp, const struct rocemu_send_wqe *w,
				enum ibv_wc_status status)
{
	const struct rocemu_ring_format *format = qp->owner->dev->format;
	struct rocemu_cqe_info info = {
		.kind = status ? ROCEMU_CQE_SEND_ERR : ROCEMU_CQE_SEND_DONE,
		.status = status,
		.wqe_opcode = w->opcode,
		.qpn = qp->qpn,
		.wqe_counter = w->wqe_counter,
		.byte_cnt = rocemu_ring_wqe_op(format, w->opcode)->wc_len == ROCEMU_WC_LEN_CQE ?
			    w->length : 0,
	};

	if (status || w->signaled)
		format->cqe_write(qp->send_cq, &info);
	if (status && status != IBV_WC_WR_FLUSH_ERR)
		dgram_to_error(qp, "an error completion", false);
}

void rocemu_dgram_recv_fail(struct rocemu_qp *qp, uint32_t counter, enum ibv_wc_status status)
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
		dgram_to_error(qp, "an error completion", false);
}

void rocemu_dgram_flush(struct rocemu_qp *qp, uint32_t *sq_bb, uint32_t *rq_ci)
{
	const struct rocemu_ring_format *format = qp->owner->dev->format;
	int posted = format->sq_posted(qp, *sq_bb);
	struct rocemu_send_wqe w;

	for (; posted > 0; posted -= (int)w.bbs) {
		format->parse_send(qp, *sq_bb, (uint32_t)posted, &w);
		rocemu_dgram_complete_send(qp, &w, IBV_WC_WR_FLUSH_ERR);
		*sq_bb += w.bbs;
	}
	for (posted = rocemu_qp_rq_posted(qp, *rq_ci); posted > 0; posted--, ++*rq_ci)
		rocemu_dgram_recv_fail(qp, *rq_ci, IBV_WC_WR_FLUSH_ERR);
}
