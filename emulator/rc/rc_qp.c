/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * RC per QP, and its transport ops: setting the engines up on state
 * changes, handing its packets to responder or completer, the one table
 * that maps each error to its CQE syndrome and NAK, and the move to ERR
 * with the flush of both queues (every outstanding WQE completes with
 * WR_FLUSH_ERR, signaled or not, as mlx5 hardware does), the SQD
 * transition and the QP's async events. What the requester checks on
 * each run (may it fetch, its memory, the SQD drain) is rc_req.c's.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "emulator/engine/transport.h"
#include "emulator/ring/format.h"
#include "emulator/obj/async_event.h"
#include "emulator/obj/cq.h"
#include "emulator/obj/qp.h"
#include "emulator/obj/qp_state.h"
#include "emulator/obj/qp_timer.h"
#include "emulator/obj/srq.h"
#include "emulator/rc/rc.h"
#include "net/roce/roce_hdr.h"
#include "rocemu/log.h"
#include "rocemu/ring.h"

/*
 * resp_event: the async event when the responder detects the error (IBTA
 * 11.6.3: invalid request and access violation have their own; anything
 * else is catastrophic). The requester's errors all give QP_FATAL.
 */
static const struct {
	const char *name;
	enum ibv_wc_status status;	/* of the CQE */
	int nak;		/* what the responder answers, -1: nothing */
	enum ibv_event_type resp_event;
} rc_errors[RC_ERR__COUNT] = {
	[RC_ERR_NONE] = { "none", 0, -1, IBV_EVENT_QP_FATAL },
	[RC_ERR_LOC_LEN] = { "local length error", IBV_WC_LOC_LEN_ERR,
			     ROCEMU_NAK_INVALID_REQUEST, IBV_EVENT_QP_REQ_ERR },
	[RC_ERR_LOC_QP_OP] = { "local QP operation error", IBV_WC_LOC_QP_OP_ERR,
			       ROCEMU_NAK_REMOTE_OP_ERROR, IBV_EVENT_QP_FATAL },
	[RC_ERR_LOC_PROT] = { "local protection error", IBV_WC_LOC_PROT_ERR,
			      ROCEMU_NAK_REMOTE_OP_ERROR, IBV_EVENT_QP_ACCESS_ERR },
	[RC_ERR_WR_FLUSH] = { "flushed", IBV_WC_WR_FLUSH_ERR, -1, IBV_EVENT_QP_FATAL },
	[RC_ERR_REM_INV_REQ] = { "remote invalid request",
				 IBV_WC_REM_INV_REQ_ERR,
				 ROCEMU_NAK_INVALID_REQUEST, IBV_EVENT_QP_REQ_ERR },
	[RC_ERR_REM_ACCESS] = { "remote access error", IBV_WC_REM_ACCESS_ERR,
				ROCEMU_NAK_REMOTE_ACCESS_ERROR, IBV_EVENT_QP_ACCESS_ERR },
	[RC_ERR_REM_OP] = { "remote operational error", IBV_WC_REM_OP_ERR,
			    ROCEMU_NAK_REMOTE_OP_ERROR, IBV_EVENT_QP_FATAL },
	[RC_ERR_RETRY_EXC] = { "transport retry counter exceeded",
			       IBV_WC_RETRY_EXC_ERR, -1, IBV_EVENT_QP_FATAL },
	[RC_ERR_RNR_RETRY_EXC] = { "RNR retry counter exceeded",
				   IBV_WC_RNR_RETRY_EXC_ERR, -1, IBV_EVENT_QP_FATAL },
	[RC_ERR_MW_BIND] = { "memory window bind error", IBV_WC_MW_BIND_ERR, -1,
			     IBV_EVENT_QP_FATAL },
};

void rocemu_rc_qp_rx(struct rocemu_qp *qp)
{
	/* IBTA 11.6.2: the first packet received in RTR establishes communication. */
	if (qp->attr.qp_state != IBV_QPS_RTR || qp->rc->comm_est)
		return;
	qp->rc->comm_est = true;
	rocemu_async_event_qp(qp, IBV_EVENT_COMM_EST);
}

enum ibv_wc_status rocemu_rc_err_status(enum rocemu_rc_err err)
{
	return rc_errors[err].status;
}

int rocemu_rc_err_nak(enum rocemu_rc_err err)
{
	return rc_errors[err].nak;
}

const char *rocemu_rc_err_name(enum rocemu_rc_err err)
{
	return rc_errors[err].name;
}

void rocemu_rc_start(struct rocemu_qp *qp, struct rocemu_rc *rc)
{
	uint32_t n = qp->layout.sq_wqe_cnt ? qp->layout.sq_wqe_cnt : 1;

	qp->rc = rc;
	rc->req.fifo_mask = n - 1;
}

int rocemu_rc_init(struct rocemu_qp *qp)
{
	struct rocemu_rc *rc = calloc(1, sizeof(*rc));

	if (!rc)
		return -ENOMEM;
	rocemu_rc_start(qp, rc);
	return 0;
}

int rocemu_rc_resp_mem_get(struct rocemu_qp *qp)
{
	struct rocemu_rc_resp *resp = &qp->rc->resp;

	if (!resp->mem)
		resp->mem = calloc(1, sizeof(*resp->mem));
	return resp->mem ? 0 : -ENOMEM;
}

/* Give back both engines' memory: the next use allocates it afresh. */
static void rc_mem_put(struct rocemu_qp *qp)
{
	free(qp->rc->req.mem);
	free(qp->rc->resp.mem);
}

/* Nothing held or waiting may name a QP that goes or starts again. */
static void resp_drop_held(struct rocemu_qp *qp)
{
	rocemu_resp_hold_forget(qp);
	rocemu_rc_ack_forget(qp);
}

void rocemu_rc_stop(struct rocemu_qp *qp)
{
	resp_drop_held(qp);
	rocemu_qp_path_release(qp);
	rc_mem_put(qp);
	qp->rc->req.mem = NULL;
	qp->rc->resp.mem = NULL;
}

void rocemu_rc_destroy(struct rocemu_qp *qp)
{
	rocemu_rc_stop(qp);
	free(qp->rc);
	qp->rc = NULL;
}

/* Forget every queue position: the shim starts its rings from 0 again too. */
static void rc_reset(struct rocemu_qp *qp)
{
	uint32_t mask = qp->rc->req.fifo_mask;

	resp_drop_held(qp);
	rocemu_qp_timers_cancel(qp);
	rocemu_qp_path_release(qp);
	rc_mem_put(qp);
	memset(&qp->rc->req, 0, sizeof(qp->rc->req));
	qp->rc->req.fifo_mask = mask;
	memset(&qp->rc->resp, 0, sizeof(qp->rc->resp));
	qp->owner->dev->format->doorbell_reset(qp);
}

void rocemu_rc_modified(struct rocemu_qp *qp, enum ibv_qp_state cur, enum ibv_qp_state next)
{
	switch (next) {
	case IBV_QPS_RESET:
		rc_reset(qp);
		break;
	case IBV_QPS_RTR:
		if (cur == IBV_QPS_INIT) {
			rocemu_qp_path_set(qp);
			qp->rc->resp.epsn = qp->attr.rq_psn;
			qp->rc->comm_est = false;
		}
		break;
	case IBV_QPS_RTS:
		if (cur == IBV_QPS_RTR) {
			qp->rc->req.cursor_psn = qp->attr.sq_psn;
			qp->rc->req.next_psn = qp->attr.sq_psn;
			qp->rc->req.una_psn = qp->attr.sq_psn;
			qp->rc->req.sent_psn = qp->attr.sq_psn;
			qp->rc->req.window = ROCEMU_RC_WINDOW;
		}
		qp->rc->req.draining = false;
		/* WQEs posted before RTS go now; with no doorbell ever written there are none. */
		if (qp->owner->dev->format->doorbell_written(qp))
			qp->ops->post(qp);
		break;
	case IBV_QPS_SQD:
		if (cur == IBV_QPS_RTS) {
			/* Drain what was posted until now, WQEs fetched or not. */
			qp->rc->req.draining = true;
			qp->rc->req.sqd_db = qp->owner->dev->format->sq_doorbell(qp, qp->rc->req.sq_bb);
			qp->ops->post(qp);
			rocemu_rc_sqd_check(qp);
		}
		break;
	case IBV_QPS_ERR:
		qp->rc->req.draining = false;
		if (cur != IBV_QPS_ERR) {
			rocemu_rc_flush(qp);
			rocemu_srq_qp_errored(qp);
		}
		break;
	default:
		break;
	}
}

void rocemu_rc_cqe(struct rocemu_qp *qp, struct rocemu_cq *cq, const struct rocemu_cqe_info *info)
{
	if (qp->owner->dev->format->cqe_write(cq, info) || qp->attr.qp_state == IBV_QPS_ERR ||
	    rocemu_qp_timer_armed(qp, ROCEMU_QP_TIMER_CQ_LOST))
		return;
	rocemu_log(ROCEMU_LOG_INFO, "%s qp 0x%06x: cq 0x%06x in error took no CQE, QP fails",
		   qp->owner->dev->name, qp->qpn, cq->cqn);
	/* A timer due now: the engine that wrote the CQE finishes its pass first. */
	rocemu_qp_timer_arm(qp, ROCEMU_QP_TIMER_CQ_LOST, rocemu_now_ns());
}

void rocemu_rc_recv_cqe(struct rocemu_qp *qp, struct rocemu_cqe_info *info)
{
	info->srqn = rocemu_qp_recv_srqn(qp);
	rocemu_rc_cqe(qp, rocemu_qp_recv_cq(qp), info);
}

void rocemu_rc_complete_send(struct rocemu_qp *qp, const struct rocemu_rc_wqe *e,
			     enum rocemu_rc_err err)
{
	struct rocemu_cqe_info info = {
		.kind = err ? ROCEMU_CQE_SEND_ERR : ROCEMU_CQE_SEND_DONE,
		.status = rocemu_rc_err_status(err),
		.wqe_opcode = e->opcode,
		.qpn = qp->qpn,
		.wqe_counter = e->wqe_counter,
		.byte_cnt = rocemu_ring_wqe_op(qp->owner->dev->format, e->opcode)->wc_len ==
			    ROCEMU_WC_LEN_CQE ? e->length : 0,
	};

	/* The reply the completer kept for this CQE (cs_req) goes in it, once. */
	if (!err && qp->rc->req.cqe_data_len && rocemu_rc_wqe_is_rd_atomic(qp, e)) {
		info.scatter = qp->rc->req.cqe_data;
		info.scatter_len = qp->rc->req.cqe_data_len;
		qp->rc->req.cqe_data_len = 0;
	}
	/* An XRC target has no send queue: a doorbell it was never given completes nothing. */
	if ((err || e->signaled) && qp->send_cq)
		rocemu_rc_cqe(qp, qp->send_cq, &info);
}

/*
 * Complete every SQ WQE (in flight, then still in the ring) with
 * WR_FLUSH_ERR; a doorbell past the ring names no WQE to flush.
 */
static void flush_sq(struct rocemu_qp *qp)
{
	struct rocemu_rc_req *req = &qp->rc->req;
	int posted = qp->owner->dev->format->sq_posted(qp, req->sq_bb);
	struct rocemu_send_wqe w;
	struct rocemu_rc_wqe e;

	rocemu_rc_req_timers_cancel(qp);
	for (; req->tail != req->head; req->tail++)
		rocemu_rc_complete_send(qp, &req->fifo[req->tail & req->fifo_mask], RC_ERR_WR_FLUSH);
	req->cursor = req->head;
	req->reads_out = 0;
	for (; posted > 0; posted -= (int)w.bbs) {
		qp->owner->dev->format->parse_send(qp, req->sq_bb, (uint32_t)posted, &w);
		e = (struct rocemu_rc_wqe){ .opcode = w.opcode, .wqe_counter = w.wqe_counter };
		rocemu_rc_complete_send(qp, &e, RC_ERR_WR_FLUSH);
		req->sq_bb += w.bbs;
	}
}

static void flush_rq(struct rocemu_qp *qp)
{
	struct rocemu_rc_resp *resp = &qp->rc->resp;
	int posted = rocemu_qp_rq_posted(qp, resp->rq_ci);
	struct rocemu_cqe_info info = {
		.kind = ROCEMU_CQE_RECV_ERR,
		.status = IBV_WC_WR_FLUSH_ERR,
		.qpn = qp->qpn,
	};

	if (resp->has_recv) {	/* consumed by a message that never ended */
		info.wqe_counter = (uint16_t)resp->recv.counter;
		rocemu_rc_recv_cqe(qp, &info);
		resp->has_recv = false;
	}
	resp->in_msg = RC_MSG_NONE;
	/* The WQEs of an SRQ belong to no QP until taken: none (no RQ) to flush here. */
	for (; posted > 0; posted--, resp->rq_ci++) {
		info.wqe_counter = (uint16_t)resp->rq_ci;
		rocemu_rc_cqe(qp, qp->recv_cq, &info);
	}
}

void rocemu_rc_flush(struct rocemu_qp *qp)
{
	flush_sq(qp);
	flush_rq(qp);
	rocemu_rc_resp_forget(qp);
}

void rocemu_rc_req_fail(struct rocemu_qp *qp, uint32_t pos, enum rocemu_rc_err err)
{
	struct rocemu_rc_req *req = &qp->rc->req;
	const struct rocemu_rc_variant *v = qp->rc->variant;

	/* A DCI with streams fails the stream, not itself (dci.c). */
	if (v && v->req_fail && v->req_fail(qp, pos, err))
		return;
	/* Only a WQE in flight can fail; anything else would flush phantoms (2^32 of them). */
	if (pos - req->tail >= req->head - req->tail) {
		rocemu_rc_qp_error(qp, err);
		return;
	}
	/* CQEs in SQ order: the shim's tail follows the last one written. */
	for (; req->tail != pos; req->tail++)
		rocemu_rc_complete_send(qp, &req->fifo[req->tail & req->fifo_mask], RC_ERR_WR_FLUSH);
	rocemu_rc_complete_send(qp, &req->fifo[pos & req->fifo_mask], err);
	req->tail = pos + 1;
	if (req->cursor - req->tail > req->head - req->tail)
		req->cursor = req->tail;
	rocemu_rc_qp_error(qp, err);
}

/* Move to ERR, flush and report event (then LAST_WQE_REACHED with an SRQ), once. */
static void qp_to_error(struct rocemu_qp *qp, enum rocemu_rc_err why, enum ibv_event_type event)
{
	if (qp->attr.qp_state == IBV_QPS_ERR)
		return;
	/* What the responder acknowledged before the error leaves first, as it would have. */
	rocemu_rc_resp_settle(qp);
	rocemu_qp_enter_state(qp, IBV_QPS_ERR, rocemu_rc_err_name(why));
	qp->rc->req.draining = false;
	rocemu_rc_flush(qp);
	rocemu_async_event_qp(qp, event);
	rocemu_srq_qp_errored(qp);
}

void rocemu_rc_qp_error(struct rocemu_qp *qp, enum rocemu_rc_err why)
{
	qp_to_error(qp, why, IBV_EVENT_QP_FATAL);
}

void rocemu_rc_resp_error(struct rocemu_qp *qp, enum rocemu_rc_err why)
{
	const struct rocemu_rc_variant *v = qp->rc->variant;

	/* A DCT serves every DCI: one DCI's bad request ends that connection only (dct.c). */
	if (v && v->resp_fail) {
		v->resp_fail(qp, why);
		return;
	}
	qp_to_error(qp, why, rc_errors[why].resp_event);
}

void rocemu_rc_rx(struct rocemu_qp *qp, const struct rocemu_pkt *pkt)
{
	if (pkt->info->flags & ROCEMU_OPF_REQ)
		rocemu_rc_resp_packet(qp, pkt);
	else
		rocemu_rc_comp_packet(qp, pkt);
}

bool rocemu_rc_sq_draining(const struct rocemu_qp *qp)
{
	return qp->rc->req.draining;
}

const struct rocemu_transport_ops rocemu_rc_transport = {
	.name = "RC",
	.connected = true,
	.init = rocemu_rc_init,
	.destroy = rocemu_rc_destroy,
	.modified = rocemu_rc_modified,
	.post = rocemu_rc_req_run,
	.flush = rocemu_rc_flush,
	.rx = rocemu_rc_rx,
	.timer = rocemu_rc_timer,
	.sq_draining = rocemu_rc_sq_draining,
	/* Also for UC, XRC and DC, which hold their work in RC's engines. */
	.rx_buffer_end = rocemu_resp_hold_own,
	.settle = rocemu_rc_settle_all,
};
