/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The RC requester: takes send WQEs in order, gives each its PSN range
 * and sends its packets (SEND, RDMA WRITE, READ request) within the
 * window and the READ/atomic credits (max_rd_atomic), fenced WQEs after
 * earlier READs and atomics completed. LOCAL_INV and memory window binds
 * are executed here, in SQ order. WQEs stay in the FIFO until the
 * completer retires them, so a resend only moves the cursor. What each
 * run checks lives here too: whether the SQ may fetch (RTS, SQD), the
 * requester's memory on first use, the local ACK timer armed for what it
 * sent, and the end of an SQD drain.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "emulator/engine/transport.h"
#include "emulator/mem/dma.h"
#include "emulator/mem/mkey_indirect.h"
#include "emulator/mem/mw.h"
#include "emulator/mem/pd_mr.h"
#include "emulator/obj/async_event.h"
#include "emulator/obj/qp.h"
#include "emulator/rc/rc.h"
#include "net/loop/loop.h"
#include "net/roce/roce_hdr.h"
#include "rocemu/log.h"
#include "rocemu/ring.h"

enum req_state {
	REQ_FETCH,		/* the WQE at the cursor, or a new one from the SQ ring */
	REQ_LIMITS,		/* window and READ credits */
	REQ_LOAD,		/* its parsed form */
	REQ_CHECK_LOCAL,	/* lkeys, bounds, rights before the first packet */
	REQ_SEND,
	REQ_LOCAL,		/* a WQE this device executes: LOCAL_INV, bind, NOP */
	REQ_ADVANCE,
	REQ_ERR_LOCAL,
	REQ_DONE,
};

/* With a local ACK timeout of 0 (infinite) the timer only complains, this often. */
#define RETRY_LOG_NS 1000000000ull

static const char *const req_state_names[] = {
	[REQ_FETCH] = "FETCH",
	[REQ_LIMITS] = "LIMITS",
	[REQ_LOAD] = "LOAD",
	[REQ_CHECK_LOCAL] = "CHECK_LOCAL",
	[REQ_SEND] = "SEND",
	[REQ_LOCAL] = "LOCAL",
	[REQ_ADVANCE] = "ADVANCE",
	[REQ_ERR_LOCAL] = "ERR_LOCAL",
	[REQ_DONE] = "DONE",
};

/* The wire opcode row of a WQE, from its properties (IBTA 9.4: SEND, WRITE, READ, atomics). */
static const uint8_t *wire_ops(const struct rocemu_wqe_op *op)
{
	if (op->flags & ROCEMU_WQE_OP_READ)
		return rocemu_rc_ops_read_req;
	if (op->flags & ROCEMU_WQE_OP_ATOMIC)
		return op->flags & ROCEMU_WQE_OP_COMPARE ? rocemu_rc_ops_cmp_swap
							 : rocemu_rc_ops_fetch_add;
	if (op->flags & ROCEMU_WQE_OP_RADDR)
		return op->flags & ROCEMU_WQE_OP_IMM ? rocemu_rc_ops_write_imm : rocemu_rc_ops_write;
	if (op->flags & ROCEMU_WQE_OP_IMM)
		return rocemu_rc_ops_send_imm;
	return op->flags & ROCEMU_WQE_OP_INV ? rocemu_rc_ops_send_inv : rocemu_rc_ops_send;
}

struct req_ctx {
	struct rocemu_qp *qp;
	struct rocemu_rc_req *req;
	struct rocemu_rc_wqe *e;
	enum rocemu_rc_err err;
	int posted;		/* BBs of the SQ this run may still take (rocemu_rc_req_take) */
	bool staging;		/* this run holds the stage (rc_tx.c) */
};

bool rocemu_rc_wqe_is_rd_atomic(const struct rocemu_qp *qp, const struct rocemu_rc_wqe *e)
{
	return rocemu_wqe_op_rd_atomic(rocemu_ring_wqe_op(qp->owner->dev->format, e->opcode));
}

static bool has_flag(const struct rocemu_qp *qp, const struct rocemu_rc_wqe *e, uint16_t flag)
{
	return rocemu_ring_wqe_op(qp->owner->dev->format, e->opcode)->flags & flag;
}

static uint32_t inflight(const struct rocemu_rc_req *req)
{
	return (uint32_t)rocemu_psn_diff(req->cursor_psn, req->una_psn);
}

bool rocemu_rc_sq_active(const struct rocemu_qp *qp)
{
	return qp->attr.qp_state == IBV_QPS_RTS || qp->attr.qp_state == IBV_QPS_SQD;
}

bool rocemu_rc_sq_may_fetch(const struct rocemu_qp *qp, uint32_t bb)
{
	if (qp->attr.qp_state == IBV_QPS_RTS)
		return true;
	/* SQD starts no WQE posted after the transition (IBTA 10.3.1.4). */
	return qp->attr.qp_state == IBV_QPS_SQD && qp->rc->req.draining &&
	       (uint16_t)bb != qp->rc->req.sqd_db;
}

void rocemu_rc_sqd_check(struct rocemu_qp *qp)
{
	struct rocemu_rc_req *req = &qp->rc->req;

	if (qp->attr.qp_state != IBV_QPS_SQD || !req->draining ||
	    (uint16_t)req->sq_bb != req->sqd_db || req->tail != req->head)
		return;
	req->draining = false;
	rocemu_rc_req_timers_cancel(qp);
	if (qp->attr.en_sqd_async_notify)
		rocemu_async_event_qp(qp, IBV_EVENT_SQ_DRAINED);
}

int rocemu_rc_req_mem_get(struct rocemu_qp *qp)
{
	struct rocemu_rc_req *req = &qp->rc->req;
	struct rocemu_rc_req_mem *mem;

	if (req->mem)
		return 0;
	mem = calloc(1, sizeof(*mem) + ((size_t)req->fifo_mask + 1) * sizeof(mem->fifo[0]));
	if (!mem)
		return -ENOMEM;
	req->mem = mem;
	req->fifo = mem->fifo;
	req->wqe = &mem->wqe;
	req->comp_wqe = &mem->comp_wqe;
	return 0;
}

bool rocemu_rc_req_outstanding(const struct rocemu_rc_req *req)
{
	return req->tail != req->cursor || rocemu_psn_diff(req->cursor_psn, req->una_psn) > 0;
}

void rocemu_rc_retry_arm(struct rocemu_qp *qp)
{
	struct rocemu_rc_req *req = &qp->rc->req;
	uint64_t ns = rocemu_ack_timeout_ns(qp->attr.timeout);

	if (rocemu_qp_timer_armed(qp, ROCEMU_QP_TIMER_RETRY) || !rocemu_rc_req_outstanding(req))
		return;
	req->retry_una = req->una_psn;
	rocemu_qp_timer_arm(qp, ROCEMU_QP_TIMER_RETRY, rocemu_now_ns() + (ns ? ns : RETRY_LOG_NS));
}

/* The requester sends nothing while an RNR wait runs (rocemu_rc_rnr_wait). */
static bool rnr_waiting(const struct rocemu_qp *qp)
{
	return rocemu_qp_timer_armed(qp, ROCEMU_QP_TIMER_RNR);
}

struct rocemu_rc_wqe *rocemu_rc_req_take(struct rocemu_qp *qp, int *posted,
					 enum rocemu_rc_err *err)
{
	struct rocemu_rc_req *req = &qp->rc->req;
	struct rocemu_send_wqe *w = req->wqe;
	struct rocemu_rc_wqe *e = &req->fifo[req->head & req->fifo_mask];
	uint32_t npkts;
	int parsed;

	*err = RC_ERR_LOC_QP_OP;
	if (*posted < 0) {
		rocemu_sq_broken_log(qp, req->next_psn, req->sq_bb);
		return NULL;
	}
	parsed = qp->owner->dev->format->parse_send(qp, req->sq_bb, (uint32_t)*posted, w);
	*e = (struct rocemu_rc_wqe){ .bb = req->sq_bb, .length = w->length,
				     .wqe_counter = w->wqe_counter, .opcode = w->opcode,
				     .bbs = (uint8_t)w->bbs,
				     .signaled = w->signaled, .fence = w->fence };
	req->head++;
	req->sq_bb += w->bbs;
	*posted -= (int)w->bbs;
	if (parsed) {
		w->bbs = 0;	/* nothing valid cached */
		return e;
	}
	/* Past max_msg_sz a message's PSNs could wrap: a ConnectX fails it so. */
	*err = w->length > ROCEMU_MAX_MSG_SZ ? RC_ERR_LOC_LEN : RC_ERR_NONE;
	if (*err)
		return e;
	/* A local operation takes no PSN: it retires with what precedes it. */
	npkts = has_flag(qp, e, ROCEMU_WQE_OP_LOCAL) ? 0 : rocemu_rc_npkts(qp, w->length);
	e->first_psn = req->next_psn;
	e->last_psn = rocemu_psn_add(req->next_psn, npkts - 1);
	req->next_psn = rocemu_psn_add(req->next_psn, npkts);
	return e;
}

static enum req_state req_fetch(struct req_ctx *c)
{
	struct rocemu_rc_req *req = c->req;
	const struct rocemu_rc_variant *v = c->qp->rc->variant;
	enum rocemu_rc_fetch fetch;

	if (req->cursor != req->head) {
		c->e = &req->fifo[req->cursor & req->fifo_mask];
		return REQ_LIMITS;
	}
	/*
	 * A full FIFO waits for completions. Without memory for the FIFO the
	 * WQE waits in the ring for the next doorbell. A broken doorbell
	 * (posted < 0) goes on to fail in the take.
	 */
	if (!c->posted || !rocemu_rc_sq_may_fetch(c->qp, req->sq_bb) ||
	    req->head - req->tail > req->fifo_mask || rocemu_rc_req_mem_get(c->qp))
		return REQ_DONE;
	fetch = v && v->fetch ? v->fetch(c->qp, req->sq_bb) : ROCEMU_RC_FETCH_GO;
	if (fetch == ROCEMU_RC_FETCH_WAIT)
		return REQ_DONE;
	c->e = rocemu_rc_req_take(c->qp, &c->posted, &c->err);
	if (c->err || fetch == ROCEMU_RC_FETCH_FLUSH) {
		c->err = c->err ? c->err : RC_ERR_WR_FLUSH;
		return REQ_ERR_LOCAL;
	}
	return REQ_LIMITS;
}

static enum req_state req_limits(struct req_ctx *c)
{
	uint32_t credits = c->qp->attr.max_rd_atomic ? c->qp->attr.max_rd_atomic : 1;

	if (inflight(c->req) >= c->req->window)
		return REQ_DONE;
	if (rocemu_rc_wqe_is_rd_atomic(c->qp, c->e) && c->req->reads_out >= credits)
		return REQ_DONE;
	/* IBTA 10.8.3.3: a fenced WQE waits until earlier READs and atomics completed. */
	if (c->e->fence && c->req->reads_out)
		return REQ_DONE;
	return REQ_LOAD;
}

static enum req_state req_load(struct req_ctx *c)
{
	struct rocemu_send_wqe *w = c->req->wqe;

	if (!w->bbs || w->bb != c->e->bb) {
		if (c->qp->owner->dev->format->parse_send(c->qp, c->e->bb, c->e->bbs, w)) {
			w->bbs = 0;
			c->err = RC_ERR_LOC_QP_OP;
			return REQ_ERR_LOCAL;
		}
	}
	return c->req->cursor_psn == c->e->first_psn ? REQ_CHECK_LOCAL : REQ_SEND;
}

static enum req_state req_check_local(struct req_ctx *c)
{
	const struct rocemu_send_wqe *w = c->req->wqe;
	unsigned int n;

	if (has_flag(c->qp, c->e, ROCEMU_WQE_OP_LOCAL))
		return REQ_LOCAL;
	/* The original value needs its 8 bytes. */
	if (has_flag(c->qp, c->e, ROCEMU_WQE_OP_ATOMIC) &&
	    (w->inline_len || w->length < sizeof(uint64_t))) {
		c->err = RC_ERR_LOC_LEN;
		return REQ_ERR_LOCAL;
	}
	if (w->length == w->inline_len)
		return REQ_SEND;
	/* READ and atomic data land in these SGEs: they need local write access. */
	if (rocemu_dma_sgl(c->qp->mem, w->sge, w->num_sge, 0,
			   w->length - w->inline_len,
			   rocemu_rc_wqe_is_rd_atomic(c->qp, c->e) ? IBV_ACCESS_LOCAL_WRITE : 0, NULL, 0,
			   &n)) {
		c->err = RC_ERR_LOC_PROT;
		return REQ_ERR_LOCAL;
	}
	return REQ_SEND;
}

/* A payload read failed: the client is gone, or the WQE at the cursor fails. */
static enum req_state send_failed(struct req_ctx *c, int err)
{
	if (err == -ESRCH) {
		rocemu_client_gone(c->qp->owner);
		return REQ_DONE;
	}
	c->err = RC_ERR_LOC_PROT;
	return REQ_ERR_LOCAL;
}

/* Send what this run staged: 0, or the -errno of the message now back at the cursor. */
static int req_flush(struct req_ctx *c)
{
	return c->staging ? rocemu_rc_stage_flush(c->qp) : 0;
}

/* sent packets of the WQE at the cursor are out (or staged to go in order). */
static enum req_state sent_advance(struct req_ctx *c, uint32_t sent)
{
	struct rocemu_rc_req *req = c->req;

	if (rocemu_rc_wqe_is_rd_atomic(c->qp, c->e)) {
		req->cursor_psn = rocemu_psn_add(c->e->last_psn, 1);
		req->reads_out++;
	} else {
		req->cursor_psn = rocemu_psn_add(req->cursor_psn, sent);
	}
	if (rocemu_psn_diff(req->cursor_psn, req->sent_psn) > 0)
		req->sent_psn = req->cursor_psn;
	return req->cursor_psn == rocemu_psn_add(c->e->last_psn, 1) ? REQ_ADVANCE : REQ_DONE;
}

/*
 * Stage a message read from its WQE: it leaves with the ones staged before
 * it at the next flush, as many packets as the window takes now.
 */
static enum req_state req_stage(struct req_ctx *c, const struct rocemu_rc_msg *m, uint32_t offset)
{
	uint32_t npkts = rocemu_rc_npkts(c->qp, m->length) - offset / c->qp->path.mtu;
	uint32_t room = c->req->window - inflight(c->req);
	int err;

	if (!rocemu_rc_stage_add(c->qp, m, offset, room)) {
		err = req_flush(c);
		if (err)
			return send_failed(c, err);
		rocemu_rc_stage_add(c->qp, m, offset, room);
	}
	return sent_advance(c, npkts < room ? npkts : room);
}

static enum req_state req_send(struct req_ctx *c)
{
	struct rocemu_rc_req *req = c->req;
	const struct rocemu_send_wqe *w = req->wqe;
	uint32_t offset = (uint32_t)rocemu_psn_diff(req->cursor_psn, c->e->first_psn) * c->qp->path.mtu;
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
		.ieth_rkey = be32toh(w->imm),
		.xrc_srqn = w->xrc_srqn,
		.atomic_swap_add = w->swap_add,
		.atomic_compare = w->compare,
		.se = w->solicited,
		.ackreq = true,
	};
	uint32_t sent;
	int err;

	if (has_flag(c->qp, c->e, ROCEMU_WQE_OP_ATOMIC)) {
		m.length = 0;	/* the request carries no data; the answer comes back */
		m.src = RC_SRC_NONE;
		offset = 0;
	} else if (has_flag(c->qp, c->e, ROCEMU_WQE_OP_READ)) {
		/* One request for what is still missing of the READ. */
		m.psn = req->cursor_psn;
		m.length = 0;
		m.src = RC_SRC_NONE;
		m.reth_va = w->raddr + offset;
		m.reth_len = w->length - offset;
		offset = 0;
	}
	if (m.src == RC_SRC_WQE && c->staging)
		return req_stage(c, &m, offset);
	err = req_flush(c);
	if (!err)
		err = rocemu_rc_send_msg(c->qp, &m, offset, req->window - inflight(req), &sent);
	if (err)
		return send_failed(c, err);
	return sent_advance(c, sent);
}

enum rocemu_rc_err rocemu_rc_local_execute(struct rocemu_qp *qp, const struct rocemu_send_wqe *w)
{
	uint16_t flags = rocemu_ring_wqe_op(qp->owner->dev->format, w->opcode)->flags;
	bool bind = !w->umr && (flags & ROCEMU_WQE_OP_BIND);
	uint32_t key = bind ? w->bind.mw_key : be32toh(w->imm);
	struct rocemu_mem_owner owner = qp->mem;
	int err;

	if (!w->umr && !(flags & (ROCEMU_WQE_OP_BIND | ROCEMU_WQE_OP_INV)))
		return RC_ERR_NONE;	/* NOP */
	err = w->umr ? rocemu_mkey_umr(owner, &w->umr_op)
	      : bind ? rocemu_mw_bind(owner, &w->bind) : rocemu_mr_invalidate(owner, key, false);
	if (!err)
		return RC_ERR_NONE;
	rocemu_log(ROCEMU_LOG_INFO, "%s qp 0x%06x: %s of 0x%08x: %s", qp->owner->dev->name,
		   qp->qpn, w->umr ? "UMR" : bind ? "bind" : "local invalidate", key,
		   strerror(-err));
	/* A UMR's bad key or entry is a protection error; a malformed one a QP operation error. */
	if (w->umr)
		return err == -EINVAL || err == -EOPNOTSUPP ? RC_ERR_LOC_QP_OP : RC_ERR_LOC_PROT;
	return bind ? RC_ERR_MW_BIND : RC_ERR_LOC_QP_OP;
}

/* LOCAL_INV, BIND, NOP: done here, in order; each completes once everything before it did. */
static enum req_state req_local(struct req_ctx *c)
{
	struct rocemu_rc_req *req = c->req;
	int err = req_flush(c);

	if (err)
		return send_failed(c, err);
	c->err = rocemu_rc_local_execute(c->qp, req->wqe);
	if (c->err)
		return REQ_ERR_LOCAL;
	if (req->tail == req->cursor) {
		rocemu_rc_complete_send(c->qp, c->e, RC_ERR_NONE);
		req->tail++;
	}
	return REQ_ADVANCE;
}

static enum req_state req_advance(struct req_ctx *c)
{
	c->req->cursor++;
	return REQ_FETCH;
}

static enum req_state req_err_local(struct req_ctx *c)
{
	/* What was staged before it leaves first; a failure there is the one that counts. */
	int err = req_flush(c);

	if (err && send_failed(c, err) == REQ_DONE)
		return REQ_DONE;
	rocemu_rc_req_fail(c->qp, c->req->cursor, c->err);
	return REQ_DONE;
}

/* The end of a run: what is staged leaves; a message whose read fails fails its WQE. */
static void req_run_flush(struct req_ctx *c)
{
	int err = req_flush(c);

	if (err && send_failed(c, err) == REQ_ERR_LOCAL)
		req_err_local(c);
}

void rocemu_rc_req_run(struct rocemu_qp *qp)
{
	struct req_ctx c = { .qp = qp, .req = &qp->rc->req };
	enum req_state state = REQ_FETCH;

	if (!rocemu_rc_sq_active(qp) || rnr_waiting(qp) || !qp->layout.sq_wqe_cnt ||
	    qp->owner->gone)
		return;
	c.posted = qp->owner->dev->format->sq_posted(qp, c.req->sq_bb);
	/* A DCI's headers follow its connection of the moment: its messages leave at once. */
	c.staging = qp->type != ROCEMU_QPT_DCI && rocemu_rc_stage_claim(qp);
	while (state != REQ_DONE) {
		if (rocemu_log_enabled(ROCEMU_LOG_DEBUG))
			rocemu_log(ROCEMU_LOG_DEBUG, "%s qp 0x%06x psn 0x%06x req %s",
				   qp->owner->dev->name, qp->qpn, c.req->cursor_psn,
				   req_state_names[state]);
		switch (state) {
		case REQ_FETCH:
			state = req_fetch(&c);
			break;
		case REQ_LIMITS:
			state = req_limits(&c);
			break;
		case REQ_LOAD:
			state = req_load(&c);
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
		case REQ_ADVANCE:
			state = req_advance(&c);
			break;
		case REQ_ERR_LOCAL:
			state = req_err_local(&c);
			break;
		case REQ_DONE:
			break;
		}
	}
	/* Nothing staged outlives the run. */
	if (c.staging) {
		req_run_flush(&c);
		rocemu_rc_stage_release();
	}
	if (rocemu_rc_sq_active(qp))
		rocemu_rc_retry_arm(qp);
	rocemu_rc_sqd_check(qp);
}

/* READs the requester has sent and not completed: those in [tail, cursor). */
static uint32_t reads_before_cursor(const struct rocemu_qp *qp)
{
	const struct rocemu_rc_req *req = &qp->rc->req;
	uint32_t pos, n = 0;

	for (pos = req->tail; pos != req->cursor; pos++)
		n += rocemu_rc_wqe_is_rd_atomic(qp, &req->fifo[pos & req->fifo_mask]);
	return n;
}

void rocemu_rc_req_rewind(struct rocemu_qp *qp, uint32_t psn)
{
	struct rocemu_rc_req *req = &qp->rc->req;
	uint32_t pos;

	/* A stale NAK (duplicated, reordered) must not go back past what was acknowledged. */
	if (rocemu_psn_diff(psn, req->una_psn) < 0)
		psn = req->una_psn;
	for (pos = req->tail; pos != req->head; pos++) {
		const struct rocemu_rc_wqe *e = &req->fifo[pos & req->fifo_mask];

		if (rocemu_psn_diff(psn, e->first_psn) >= 0 && rocemu_psn_diff(psn, e->last_psn) <= 0)
			break;
	}
	if (pos == req->head || rocemu_psn_diff(psn, req->cursor_psn) > 0) {
		rocemu_log(ROCEMU_LOG_DEBUG, "%s qp 0x%06x psn 0x%06x: nothing to resend there",
			   qp->owner->dev->name, qp->qpn, psn);
		return;
	}
	rocemu_log(ROCEMU_LOG_DEBUG, "%s qp 0x%06x psn 0x%06x resend (was at 0x%06x)",
		   qp->owner->dev->name, qp->qpn, psn, req->cursor_psn);
	qp->owner->dev->counters.retransmitted_packets += (uint32_t)rocemu_psn_diff(req->cursor_psn, psn);
	req->cursor = pos;
	req->cursor_psn = psn;
	req->reads_out = reads_before_cursor(qp);
	req->window = ROCEMU_RC_WINDOW_RESTART;
}
