/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * RC's timers handled here (the loop reaches them through qp_timer.c and
 * rocemu_rc_transport's timer hook): the local ACK timeout that resends
 * from the oldest unacknowledged PSN and fails the QP once retry_cnt is
 * spent (the requester arms it after a run), the RNR wait after an RNR
 * NAK, the failure of a QP whose CQ refused a CQE, and the responder's
 * next burst of what it owes.
 */
#include "emulator/obj/qp.h"
#include "emulator/obj/qp_timer.h"
#include "emulator/rc/rc.h"
#include "rocemu/log.h"

/* A local ACK timeout of 0 is infinite: only complain (rc_req.c arms it for a second then). */
#define RETRY_INFINITE_TIMEOUT 0

static void retry_expired(struct rocemu_qp *qp)
{
	struct rocemu_rc_req *req = &qp->rc->req;

	if (!rocemu_rc_sq_active(qp) || !rocemu_rc_req_outstanding(req) || qp->owner->gone)
		return;
	if (req->una_psn != req->retry_una || rocemu_qp_timer_armed(qp, ROCEMU_QP_TIMER_RNR)) {
		req->retries = 0;	/* progress, or waiting for the responder */
		rocemu_rc_retry_arm(qp);
		return;
	}
	if (qp->attr.timeout == RETRY_INFINITE_TIMEOUT) {
		rocemu_log(ROCEMU_LOG_WARN, "%s qp 0x%06x psn 0x%06x: no ACK for 1 s (timeout infinite)",
			   qp->owner->dev->name, qp->qpn, req->una_psn);
		rocemu_rc_retry_arm(qp);
		return;
	}
	if (++req->retries > qp->attr.retry_cnt) {
		rocemu_rc_req_fail(qp, req->tail, RC_ERR_RETRY_EXC);
		return;
	}
	qp->owner->dev->counters.local_ack_timeout_err++;
	req->gap_rewound = false;
	rocemu_log(ROCEMU_LOG_INFO, "%s qp 0x%06x psn 0x%06x: local ACK timeout, resend (retry %u of %u)",
		   qp->owner->dev->name, qp->qpn, req->una_psn, req->retries, qp->attr.retry_cnt);
	rocemu_rc_req_rewind(qp, req->una_psn);
	rocemu_rc_req_run(qp);
}

void rocemu_rc_rnr_wait(struct rocemu_qp *qp, uint32_t us)
{
	/* An RNR NAK is an answer: the local ACK timer starts again with the resend. */
	rocemu_rc_req_timers_cancel(qp);
	qp->rc->req.retries = 0;
	rocemu_qp_timer_arm(qp, ROCEMU_QP_TIMER_RNR, rocemu_now_ns() + us * 1000ull);
}

void rocemu_rc_req_timers_cancel(struct rocemu_qp *qp)
{
	rocemu_qp_timer_cancel(qp, ROCEMU_QP_TIMER_RNR);
	rocemu_qp_timer_cancel(qp, ROCEMU_QP_TIMER_RETRY);
}

void rocemu_rc_timer(struct rocemu_qp *qp, enum rocemu_qp_timer_kind kind)
{
	switch (kind) {
	case ROCEMU_QP_TIMER_RETRY:
		retry_expired(qp);
		break;
	case ROCEMU_QP_TIMER_RNR:
		rocemu_rc_req_run(qp);
		break;
	case ROCEMU_QP_TIMER_CQ_LOST:
		rocemu_rc_qp_error(qp, RC_ERR_LOC_QP_OP);
		break;
	case ROCEMU_QP_TIMER_RESP:
		rocemu_rc_resp_drain(qp);
		break;
	default:
		break;
	}
}
