/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The UC requester: takes send WQEs in order, gives each its PSN range,
 * sends its packets through the shared segmenter and completes it once
 * its last packet left: nothing is acknowledged or sent again (IBTA
 * 9.8.3). SEND and RDMA WRITE, with or without immediate, are all UC
 * carries; LOCAL_INV and window binds execute here, in SQ order; any
 * other WQE (READ, atomics, SEND with invalidate) fails with a local QP
 * operation error, as a ConnectX completes a READ posted on a UC QP. At
 * most ROCEMU_UC_BURST packets leave per turn of the loop, the rest at
 * the next one. The WQE being sent is the one entry of RC's FIFO [tail,
 * head), so the flush and the SQD drain of rc_qp.c serve UC unchanged.
 */
#include <errno.h>

#include "emulator/mem/dma.h"
#include "emulator/obj/qp.h"
#include "emulator/rc/rc.h"
#include "emulator/uc/uc.h"
#include "net/roce/roce_hdr.h"
#include "rocemu/log.h"
#include "rocemu/ring.h"

enum req_state {
	REQ_FETCH,		/* the WQE being sent, or a new one from the SQ ring */
	REQ_CHECK_LOCAL,	/* UC carries it; lkeys, bounds, rights before the first packet */
	REQ_SEND,
	REQ_LOCAL,		/* a WQE this device executes: LOCAL_INV, bind */
	REQ_COMPLETE,		/* its last packet left */
	REQ_ERR_LOCAL,
	REQ_DONE,
};

static const char *const req_state_names[] = {
	[REQ_FETCH] = "FETCH",
	[REQ_CHECK_LOCAL] = "CHECK_LOCAL",
	[REQ_SEND] = "SEND",
	[REQ_LOCAL] = "LOCAL",
	[REQ_COMPLETE] = "COMPLETE",
	[REQ_ERR_LOCAL] = "ERR_LOCAL",
	[REQ_DONE] = "DONE",
};

struct req_ctx {
	struct rocemu_qp *qp;
	struct rocemu_rc_req *req;
	struct rocemu_rc_wqe *e;
	uint32_t budget;	/* packets this turn may still send */
	int posted;		/* BBs of the SQ this run may still take (rocemu_rc_req_take) */
	enum rocemu_rc_err err;
};

/* The UC opcode row of a WQE, or NULL when UC does not carry it (READ, atomics, invalidate). */
static const uint8_t *wire_ops(const struct rocemu_wqe_op *op)
{
	if (op->flags & (ROCEMU_WQE_OP_READ | ROCEMU_WQE_OP_ATOMIC | ROCEMU_WQE_OP_INV))
		return NULL;
	if (op->flags & ROCEMU_WQE_OP_RADDR)
		return op->flags & ROCEMU_WQE_OP_IMM ? rocemu_uc_ops_write_imm : rocemu_uc_ops_write;
	return op->flags & ROCEMU_WQE_OP_IMM ? rocemu_uc_ops_send_imm : rocemu_uc_ops_send;
}

static enum req_state req_fetch(struct req_ctx *c)
{
	struct rocemu_rc_req *req = c->req;

	if (req->tail != req->head) {
		c->e = &req->fifo[req->tail & req->fifo_mask];
		return REQ_SEND;
	}
	/*
	 * Without memory for the FIFO the WQE waits in the ring for the next
	 * doorbell. A broken doorbell (posted < 0) goes on to fail in the take.
	 */
	if (!c->posted || !rocemu_rc_sq_may_fetch(c->qp, req->sq_bb) ||
	    rocemu_rc_req_mem_get(c->qp))
		return REQ_DONE;
	c->e = rocemu_rc_req_take(c->qp, &c->posted, &c->err);
	req->cursor = req->tail;
	if (c->err)
		return REQ_ERR_LOCAL;
	req->cursor_psn = c->e->first_psn;
	return REQ_CHECK_LOCAL;
}

static enum req_state req_check_local(struct req_ctx *c)
{
	const struct rocemu_send_wqe *w = c->req->wqe;
	unsigned int n;

	if (rocemu_ring_wqe_op(c->qp->owner->dev->format, w->opcode)->flags & ROCEMU_WQE_OP_LOCAL)
		return REQ_LOCAL;
	c->err = RC_ERR_LOC_QP_OP;
	if (!wire_ops(rocemu_ring_wqe_op(c->qp->owner->dev->format, w->opcode)))
		return REQ_ERR_LOCAL;
	c->err = RC_ERR_LOC_PROT;
	if (w->length > w->inline_len &&
	    rocemu_dma_sgl(c->qp->mem, w->sge, w->num_sge, 0,
			   w->length - w->inline_len, 0, NULL, 0, &n))
		return REQ_ERR_LOCAL;
	return REQ_SEND;
}

static enum req_state req_send(struct req_ctx *c)
{
	struct rocemu_rc_req *req = c->req;
	const struct rocemu_send_wqe *w = req->wqe;
	struct rocemu_rc_msg m = {
		.ops = wire_ops(rocemu_ring_wqe_op(c->qp->owner->dev->format, w->opcode)),
		.psn = c->e->first_psn,
		.length = w->length,
		.src = RC_SRC_WQE,
		.wqe = w,
		.reth_va = w->raddr,
		.reth_rkey = w->rkey,
		.reth_len = w->length,
		.imm = w->imm,
		.se = w->solicited,
	};
	uint32_t sent;
	int err;

	if (!c->budget) {
		rocemu_qp_timer_arm(c->qp, ROCEMU_QP_TIMER_TX, rocemu_now_ns());
		return REQ_DONE;
	}
	err = rocemu_rc_send_msg(c->qp, &m,
				 (uint32_t)rocemu_psn_diff(req->cursor_psn, c->e->first_psn) *
					 c->qp->path.mtu,
				 c->budget, &sent);
	if (err == -ESRCH) {
		rocemu_client_gone(c->qp->owner);
		return REQ_DONE;
	}
	if (err) {
		c->err = RC_ERR_LOC_PROT;
		return REQ_ERR_LOCAL;
	}
	c->budget -= sent;
	req->cursor_psn = rocemu_psn_add(req->cursor_psn, sent);
	return req->cursor_psn == rocemu_psn_add(c->e->last_psn, 1) ? REQ_COMPLETE : REQ_SEND;
}

static enum req_state req_local(struct req_ctx *c)
{
	c->err = rocemu_rc_local_execute(c->qp, c->req->wqe);
	return c->err ? REQ_ERR_LOCAL : REQ_COMPLETE;
}

static enum req_state req_complete(struct req_ctx *c)
{
	rocemu_rc_complete_send(c->qp, c->e, RC_ERR_NONE);
	c->req->tail++;
	c->req->cursor = c->req->tail;
	return REQ_FETCH;
}

static enum req_state req_err_local(struct req_ctx *c)
{
	rocemu_rc_req_fail(c->qp, c->req->tail, c->err);
	return REQ_DONE;
}

void rocemu_uc_req_run(struct rocemu_qp *qp)
{
	struct req_ctx c = { .qp = qp, .req = &qp->rc->req, .budget = ROCEMU_UC_BURST };
	enum req_state state = REQ_FETCH;

	if (!rocemu_rc_sq_active(qp) || !qp->layout.sq_wqe_cnt || qp->owner->gone)
		return;
	c.posted = qp->owner->dev->format->sq_posted(qp, c.req->sq_bb);
	while (state != REQ_DONE) {
		if (rocemu_log_enabled(ROCEMU_LOG_DEBUG))
			rocemu_log(ROCEMU_LOG_DEBUG, "%s qp 0x%06x psn 0x%06x uc req %s",
				   qp->owner->dev->name, qp->qpn, c.req->cursor_psn,
				   req_state_names[state]);
		switch (state) {
		case REQ_FETCH:
			state = req_fetch(&c);
			break;
		case REQ_CHECK_LOCAL:
			state = req_check_local(&c);
			break;
		case REQ_SEND:
			state = req_send(&c);
			break;
		case REQ_LOCAL:
			state = req_local(&c);
			break;
		case REQ_COMPLETE:
			state = req_complete(&c);
			break;
		case REQ_ERR_LOCAL:
			state = req_err_local(&c);
			break;
		case REQ_DONE:
			break;
		}
	}
	rocemu_rc_sqd_check(qp);
}
