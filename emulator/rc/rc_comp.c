/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The RC completer: ACKs, NAKs and READ responses coming back to a
 * requester. Retires WQEs in order once their last PSN is acknowledged
 * (writing CQEs for signaled ones), scatters READ response data into the
 * WQE's SGEs, resends from a NAK'd PSN (go-back-N) or after an RNR wait,
 * and fails the QP on the other NAKs. Whatever lies outside the PSNs in
 * flight (a ghost) or does not fit the request it answers is dropped and
 * counted before it changes anything.
 */
#include <errno.h>
#include <string.h>

#include "emulator/core/device.h"
#include "emulator/engine/transport.h"
#include "emulator/mem/dma.h"
#include "emulator/obj/qp.h"
#include "emulator/rc/rc.h"
#include "net/roce/roce_hdr.h"
#include "rocemu/log.h"
#include "rocemu/ring.h"

#define RNR_RETRY_INFINITE 7

enum comp_state {
	COMP_CHECK_PSN,
	COMP_CHECK_ACK,		/* what the AETH says */
	COMP_READ,		/* READ response data */
	COMP_ATOMIC,		/* Atomic Acknowledge: the original value */
	COMP_RETIRE,		/* ACK: complete what it covers */
	COMP_RNR,		/* RNR NAK: wait, then resend */
	COMP_NAK_SEQ,		/* PSN sequence error: go back */
	COMP_ERROR,		/* the WQE at the PSN fails, the QP goes to ERR */
	COMP_GHOST,		/* outside [una_psn, sent_psn): ignored, as IBTA ghost ACKs */
	COMP_BAD,		/* fits no request in flight: dropped */
	COMP_DONE,
};

static const char *const comp_state_names[] = {
	[COMP_CHECK_PSN] = "CHECK_PSN",
	[COMP_CHECK_ACK] = "CHECK_ACK",
	[COMP_READ] = "READ",
	[COMP_ATOMIC] = "ATOMIC",
	[COMP_RETIRE] = "RETIRE",
	[COMP_RNR] = "RNR",
	[COMP_NAK_SEQ] = "NAK_SEQ",
	[COMP_ERROR] = "ERROR",
	[COMP_GHOST] = "GHOST",
	[COMP_BAD] = "BAD",
	[COMP_DONE] = "DONE",
};

/* AETH NAK codes -> requester error (IBTA 9.7.5.2). */
static const enum rocemu_rc_err nak_errors[] = {
	[ROCEMU_NAK_INVALID_REQUEST] = RC_ERR_REM_INV_REQ,
	[ROCEMU_NAK_REMOTE_ACCESS_ERROR] = RC_ERR_REM_ACCESS,
	[ROCEMU_NAK_REMOTE_OP_ERROR] = RC_ERR_REM_OP,
	[ROCEMU_NAK_INVALID_RD_REQUEST] = RC_ERR_REM_INV_REQ,
};

struct comp_ctx {
	struct rocemu_qp *qp;
	struct rocemu_rc_req *req;
	const struct rocemu_pkt *pkt;
	uint8_t syndrome;
	enum rocemu_rc_err err;
	int dma_err;		/* of a failed local DMA */
	bool run_req;		/* the window may have opened */
};

static uint16_t op_flags(const struct comp_ctx *c, const struct rocemu_rc_wqe *e)
{
	return rocemu_ring_wqe_op(c->qp->owner->dev->format, e->opcode)->flags;
}

static bool is_read(const struct comp_ctx *c, const struct rocemu_rc_wqe *e)
{
	return op_flags(c, e) & ROCEMU_WQE_OP_READ;
}

/*
 * Lost responses: resend from una_psn (go-back-N), once per gap; when the
 * resent request is lost too, the local ACK timeout resends again.
 */
static void rewind_once(struct comp_ctx *c)
{
	struct rocemu_rc_req *req = c->req;

	if (req->gap_rewound && req->gap_psn == req->una_psn)
		return;
	req->gap_rewound = true;
	req->gap_psn = req->una_psn;
	rocemu_rc_req_rewind(c->qp, req->una_psn);
	c->run_req = true;
}

/* psn and all before it are answered: the window widens again after a resend cut it. */
static void una_advance(struct rocemu_rc_req *req, uint32_t psn)
{
	req->una_psn = rocemu_psn_add(psn, 1);
	if (req->window < ROCEMU_RC_WINDOW)
		req->window *= 2;
}

/* Complete WQEs whose last PSN is at or before psn; a READ waits for its data. */
static void retire_upto(struct comp_ctx *c, uint32_t psn)
{
	struct rocemu_rc_req *req = c->req;
	const struct rocemu_rc_wqe *held = NULL;

	while (req->tail != req->head) {
		struct rocemu_rc_wqe *e = &req->fifo[req->tail & req->fifo_mask];

		if (rocemu_psn_diff(e->last_psn, psn) > 0)
			break;
		if (rocemu_rc_wqe_is_rd_atomic(c->qp, e)) {
			held = e;
			break;
		}
		/* A local WQE (LOCAL_INV, bind) the requester has not reached yet is not done. */
		if ((op_flags(c, e) & ROCEMU_WQE_OP_LOCAL) && req->tail == req->cursor)
			break;
		rocemu_rc_complete_send(c->qp, e, RC_ERR_NONE);
		req->tail++;
	}
	if (held) {
		/* An ACK past a READ or atomic still waiting: its responses were lost (implicit NAK). */
		if (rocemu_psn_diff(held->first_psn, req->una_psn) > 0)
			req->una_psn = held->first_psn;
		rewind_once(c);
	} else if (rocemu_psn_diff(psn, req->una_psn) >= 0) {
		una_advance(req, psn);
	}
	/* An ACK for packets sent before a rewind: no need to send them again. */
	if (rocemu_psn_diff(req->cursor_psn, req->una_psn) < 0) {
		req->cursor = req->tail;
		req->cursor_psn = req->una_psn;
	}
	if (req->cursor - req->tail > req->head - req->tail)
		req->cursor = req->tail;
}

static enum comp_state comp_check_psn(struct comp_ctx *c)
{
	const struct rocemu_pkt *pkt = c->pkt;
	int32_t d = rocemu_psn_diff(pkt->psn, c->req->una_psn);

	/* Answers only what was sent and is not acknowledged yet: stale or forged otherwise. */
	if (d < 0 || rocemu_psn_diff(pkt->psn, c->req->sent_psn) >= 0)
		return COMP_GHOST;
	if (!(pkt->info->flags & (ROCEMU_OPF_READ | ROCEMU_OPF_ATOMIC)))
		return COMP_CHECK_ACK;
	if (d > 0) {
		/* Response packets were lost: ask again from the first missing one. */
		rewind_once(c);
		return COMP_DONE;
	}
	return pkt->info->flags & ROCEMU_OPF_READ ? COMP_READ : COMP_ATOMIC;
}

static enum comp_state comp_check_ack(struct comp_ctx *c)
{
	const uint8_t *aeth = rocemu_pkt_aeth((uint8_t *)c->pkt->bth);
	uint8_t value;

	c->syndrome = rocemu_aeth_syndrome(aeth);
	value = rocemu_aeth_syndrome_value(c->syndrome);
	switch (rocemu_aeth_syndrome_type(c->syndrome)) {
	case ROCEMU_AETH_ACK:
		return COMP_RETIRE;
	case ROCEMU_AETH_RNR_NAK:
		return COMP_RNR;
	case ROCEMU_AETH_NAK:
		if (value == ROCEMU_NAK_PSN_SEQ_ERROR)
			return COMP_NAK_SEQ;
		if (value >= sizeof(nak_errors) / sizeof(nak_errors[0]) || !nak_errors[value])
			return COMP_BAD;	/* a reserved NAK code */
		c->err = nak_errors[value];
		retire_upto(c, rocemu_psn_add(c->pkt->psn, -1u));
		return COMP_ERROR;
	default:
		return COMP_BAD;	/* a reserved syndrome type */
	}
}

static enum comp_state comp_retire(struct comp_ctx *c)
{
	retire_upto(c, c->pkt->psn);
	/* An answer is progress: both retry counts start again (rxe's reset_retry_counters). */
	c->req->retries = 0;
	c->req->rnr_retries = 0;
	c->run_req = true;
	return COMP_DONE;
}

/* An AETH, where the opcode carries one, says ACK: a response is never a NAK. */
static bool aeth_is_ack(const struct rocemu_pkt *pkt)
{
	const uint8_t *aeth = rocemu_pkt_aeth((uint8_t *)pkt->bth);

	return !aeth || rocemu_aeth_syndrome_type(rocemu_aeth_syndrome(aeth)) == ROCEMU_AETH_ACK;
}

/*
 * The READ at the head answers with packet psn: FIRST, MIDDLE, LAST or
 * ONLY where that PSN lies in it (a resent request starts a new FIRST or
 * ONLY anywhere), END exactly at its last PSN, a full MTU before it and
 * what remains at it, so a response never covers more than the READ asked.
 */
static bool read_response_fits(const struct comp_ctx *c, const struct rocemu_rc_wqe *e)
{
	const struct rocemu_pkt *pkt = c->pkt;
	uint32_t f = pkt->info->flags;
	int32_t pos = rocemu_psn_diff(pkt->psn, e->first_psn);
	bool last = pkt->psn == e->last_psn;
	uint32_t offset;

	if (!is_read(c, e) || pos < 0 || rocemu_psn_diff(pkt->psn, e->last_psn) > 0)
		return false;
	if (!!(f & ROCEMU_OPF_END) != last || ((f & ROCEMU_OPF_MIDDLE) && !pos) || !aeth_is_ack(pkt))
		return false;
	offset = (uint32_t)pos * c->qp->path.mtu;
	return pkt->paylen == (last ? e->length - offset : c->qp->path.mtu);
}

/* The WQE a response answers: the head, once what came before the response is retired. */
static struct rocemu_rc_wqe *response_head(struct comp_ctx *c)
{
	struct rocemu_rc_req *req = c->req;

	retire_upto(c, rocemu_psn_add(c->pkt->psn, -1u));	/* a response acknowledges what came before */
	return req->tail == req->head ? NULL : &req->fifo[req->tail & req->fifo_mask];
}

/* Write len bytes at offset into the SGEs of READ or atomic WQE e, parsed once per WQE. */
static enum comp_state scatter_into(struct comp_ctx *c, const struct rocemu_rc_wqe *e,
				    uint32_t offset, void *data, uint32_t len)
{
	struct rocemu_send_wqe *w = c->req->comp_wqe;
	struct rocemu_dma_seg remote[ROCEMU_DMA_MAX_SEGS];
	struct iovec local = { .iov_base = data, .iov_len = len };
	unsigned int n;

	if (!w->bbs || w->bb != e->bb) {
		c->err = RC_ERR_LOC_QP_OP;
		if (c->qp->owner->dev->format->parse_send(c->qp, e->bb, e->bbs, w)) {
			w->bbs = 0;	/* nothing valid cached */
			return COMP_ERROR;
		}
	}
	c->err = RC_ERR_LOC_PROT;
	c->req->cqe_data_len = 0;
	if (!len)
		return COMP_DONE;
	c->dma_err = rocemu_dma_sgl(c->qp->mem, w->sge, w->num_sge, offset, len,
				    IBV_ACCESS_LOCAL_WRITE, remote, ROCEMU_DMA_MAX_SEGS, &n);
	/* The whole reply of a signaled WQE fits its CQE (cs_req): there, SGEs checked as for DMA. */
	if (!c->dma_err && e->signaled && !offset && len <= c->qp->cqe_scatter_req &&
	    (!is_read(c, e) || len == e->length) &&
	    rocemu_cqe_scatter_reachable(c->qp->owner->mm, w->sge, w->num_sge, remote, n)) {
		memcpy(c->req->cqe_data, data, len);
		c->req->cqe_data_len = len;
		return COMP_DONE;
	}
	if (!c->dma_err)
		c->dma_err = rocemu_dma_copy(c->qp->owner->mm, &local, 1, remote, n, true);
	return c->dma_err ? COMP_ERROR : COMP_DONE;
}

/* The last response of the READ or atomic at the head: complete it, then local WQEs behind it. */
static void complete_rd_atomic(struct comp_ctx *c, struct rocemu_rc_wqe *e)
{
	struct rocemu_rc_req *req = c->req;

	rocemu_rc_complete_send(c->qp, e, RC_ERR_NONE);
	req->tail++;
	if (req->reads_out)	/* none when a rewind has not resent it yet */
		req->reads_out--;
	retire_upto(c, c->pkt->psn);
	c->run_req = true;
}

/* Scatter one READ response packet into the head WQE's SGEs. */
static enum comp_state comp_read(struct comp_ctx *c)
{
	const struct rocemu_pkt *pkt = c->pkt;
	struct rocemu_rc_wqe *e = response_head(c);

	if (!e || !read_response_fits(c, e))
		return COMP_BAD;
	if (scatter_into(c, e, (uint32_t)rocemu_psn_diff(pkt->psn, e->first_psn) * c->qp->path.mtu,
			 (void *)pkt->payload, pkt->paylen) != COMP_DONE)
		return COMP_ERROR;
	una_advance(c->req, pkt->psn);
	if (pkt->info->flags & ROCEMU_OPF_END)
		complete_rd_atomic(c, e);
	return COMP_DONE;
}

/* Write the AtomicAckETH original value into the head WQE's SGEs and complete it. */
static enum comp_state comp_atomic(struct comp_ctx *c)
{
	const struct rocemu_pkt *pkt = c->pkt;
	struct rocemu_rc_wqe *e = response_head(c);
	uint64_t orig;

	if (!e || !rocemu_rc_wqe_is_rd_atomic(c->qp, e) || is_read(c, e) || e->first_psn != pkt->psn ||
	    !aeth_is_ack(pkt))
		return COMP_BAD;
	/* The value arrives big-endian and lands in host order (IBTA 9.4.5). */
	orig = rocemu_atmack_orig(rocemu_pkt_atmack((uint8_t *)pkt->bth));
	if (scatter_into(c, e, 0, &orig, sizeof(orig)) != COMP_DONE)
		return COMP_ERROR;
	una_advance(c->req, pkt->psn);
	complete_rd_atomic(c, e);
	return COMP_DONE;
}

static enum comp_state comp_rnr(struct comp_ctx *c)
{
	struct rocemu_qp *qp = c->qp;
	uint32_t us = rocemu_rnr_timer_to_us(rocemu_aeth_syndrome_value(c->syndrome));

	retire_upto(c, rocemu_psn_add(c->pkt->psn, -1u));
	if (qp->attr.rnr_retry != RNR_RETRY_INFINITE &&
	    ++c->req->rnr_retries > qp->attr.rnr_retry) {
		c->err = RC_ERR_RNR_RETRY_EXC;
		return COMP_ERROR;
	}
	qp->owner->dev->counters.rnr_nak_retry_err++;
	rocemu_rc_req_rewind(qp, c->pkt->psn);
	rocemu_rc_rnr_wait(qp, us);
	return COMP_DONE;
}

/*
 * Go back to the NAK'd PSN once per gap, as rxe does while a retry is under
 * way: a duplicated NAK, or a second one for the same gap, would send the
 * whole window again behind the first resend.
 */
static enum comp_state comp_nak_seq(struct comp_ctx *c)
{
	c->qp->owner->dev->counters.packet_seq_err++;
	retire_upto(c, rocemu_psn_add(c->pkt->psn, -1u));
	rewind_once(c);
	return COMP_DONE;
}

static enum comp_state comp_error(struct comp_ctx *c)
{
	if (c->dma_err == -ESRCH) {
		rocemu_client_gone(c->qp->owner);
		return COMP_DONE;
	}
	if (c->req->tail != c->req->head)
		rocemu_rc_req_fail(c->qp, c->req->tail, c->err);
	else
		rocemu_rc_qp_error(c->qp, c->err);
	return COMP_DONE;
}

static enum comp_state comp_ghost(struct comp_ctx *c)
{
	c->qp->owner->dev->counters.rx_ghost_acks++;
	return COMP_DONE;
}

static enum comp_state comp_bad(struct comp_ctx *c)
{
	c->qp->owner->dev->counters.rx_bad_responses++;
	if (rocemu_log_enabled(ROCEMU_LOG_DEBUG))
		rocemu_log(ROCEMU_LOG_DEBUG, "%s qp 0x%06x psn 0x%06x rx %s len %u: fits no request, dropped",
			   c->qp->owner->dev->name, c->qp->qpn, c->pkt->psn, c->pkt->info->name,
			   c->pkt->paylen);
	return COMP_DONE;
}

void rocemu_rc_comp_packet(struct rocemu_qp *qp, const struct rocemu_pkt *pkt)
{
	struct comp_ctx c = { .qp = qp, .req = &qp->rc->req, .pkt = pkt };
	enum comp_state state = COMP_CHECK_PSN;

	if (!rocemu_rc_sq_active(qp) || qp->owner->gone)
		return;
	while (state != COMP_DONE) {
		if (rocemu_log_enabled(ROCEMU_LOG_DEBUG))
			rocemu_log(ROCEMU_LOG_DEBUG, "%s qp 0x%06x psn 0x%06x comp %s",
				   qp->owner->dev->name, qp->qpn, pkt->psn, comp_state_names[state]);
		switch (state) {
		case COMP_CHECK_PSN:
			state = comp_check_psn(&c);
			break;
		case COMP_CHECK_ACK:
			state = comp_check_ack(&c);
			break;
		case COMP_READ:
			state = comp_read(&c);
			break;
		case COMP_ATOMIC:
			state = comp_atomic(&c);
			break;
		case COMP_RETIRE:
			state = comp_retire(&c);
			break;
		case COMP_RNR:
			state = comp_rnr(&c);
			break;
		case COMP_NAK_SEQ:
			state = comp_nak_seq(&c);
			break;
		case COMP_ERROR:
			state = comp_error(&c);
			break;
		case COMP_GHOST:
			state = comp_ghost(&c);
			break;
		case COMP_BAD:
			state = comp_bad(&c);
			break;
		case COMP_DONE:
			break;
		}
	}
	if (c.run_req)
		rocemu_rc_req_run(qp);
}
