/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The software flush of a device that is gone, as a ConnectX driver does
 * on a fatal error (Linux mlx5_ib_poll_sw_comp): once the daemon died and
 * the poller has read every CQE it wrote, each WR still outstanding on a
 * QP of the CQ completes with WR_FLUSH_ERR (sends, then receives, each
 * queue in order) and that QP is in ERR, then each receive of a WQ of the
 * CQ, the WQ in ERR. WRs posted afterwards go the same way, so a program
 * that only polls sees its work fail instead of waiting.
 */
#include "lib/shim.h"

#include <string.h>

struct flush_match {
	struct rocemu_cq *cq;
	bool send;	/* out: the QP has a send (else a receive) to flush */
};

/* With sq.lock held: a send WR outstanding? */
static bool sq_outstanding(struct rocemu_sq *sq)
{
	return sq->wqe_cnt && sq->tail != sq->cur_post;
}

static bool rq_outstanding(struct rocemu_rq *rq)
{
	return rq->wqe_cnt && rq->tail != rq->head;
}

/* A QP of m->cq with a WR to flush; every QP of the CQ met is in ERR from now on. */
static bool flush_match(struct rocemu_qp *qp, void *arg)
{
	struct flush_match *m = arg;
	struct ibv_qp *ibqp = &qp->qpx.qp_base;
	bool found = false;

	if (ibqp->send_cq == ibv_cq_ex_to_cq(&m->cq->ibcq)) {
		ibqp->state = IBV_QPS_ERR;
		pthread_spin_lock(&qp->sq.lock);
		found = sq_outstanding(&qp->sq);
		pthread_spin_unlock(&qp->sq.lock);
		m->send = found;
	}
	if (!found && ibqp->recv_cq == ibv_cq_ex_to_cq(&m->cq->ibcq)) {
		ibqp->state = IBV_QPS_ERR;
		pthread_spin_lock(&qp->rq.lock);
		found = rq_outstanding(&qp->rq);
		pthread_spin_unlock(&qp->rq.lock);
	}
	return found;
}

/* The oldest outstanding send WR of qp; its BBs are free again. */
static uint64_t sq_flush_one(struct rocemu_sq *sq)
{
	uint32_t idx;
	uint64_t wr_id;

	pthread_spin_lock(&sq->lock);
	idx = sq->tail & (sq->wqe_cnt - 1);
	wr_id = sq->wrid[idx];
	/* Release: the poster reuses these BBs only after this point. */
	__atomic_store_n(&sq->tail, sq->wqe_head[idx] + 1, __ATOMIC_RELEASE);
	pthread_spin_unlock(&sq->lock);
	return wr_id;
}

static uint64_t rq_flush_one(struct rocemu_rq *rq)
{
	uint64_t wr_id;

	pthread_spin_lock(&rq->lock);
	wr_id = rq->wrid[rq->tail & (rq->wqe_cnt - 1)];
	__atomic_store_n(&rq->tail, rq->tail + 1, __ATOMIC_RELEASE);
	pthread_spin_unlock(&rq->lock);
	return wr_id;
}

/* A WQ of cq (its lock held) with a receive to flush; every WQ met is in ERR from now on. */
static struct rocemu_wq *wq_to_flush(struct rocemu_cq *cq)
{
	struct rocemu_wq *wq;
	bool found;

	for (wq = cq->wqs; wq; wq = wq->cq_next) {
		wq->ibwq.state = IBV_WQS_ERR;
		pthread_spin_lock(&wq->rq.lock);
		found = rq_outstanding(&wq->rq);
		pthread_spin_unlock(&wq->rq.lock);
		if (found)
			return wq;
	}
	return NULL;
}

bool rocemu_cq_flush_one(struct rocemu_cq *cq, struct ibv_wc *wc)
{
	struct ibv_context *ctx = cq->ibcq.context;
	struct flush_match m = { .cq = cq };
	struct rocemu_wq *wq;
	struct rocemu_qp *qp;

	/*
	 * No QP leaves the table under the context mutex. Only tried: the lock
	 * order is context mutex, then CQ lock (rocemu_qp_table_remove); the
	 * next poll tries again.
	 */
	if (pthread_mutex_trylock(&ctx->mutex))
		return false;
	qp = rocemu_qp_table_first(to_rctx(ctx), flush_match, &m);
	wq = qp ? NULL : wq_to_flush(cq);
	pthread_mutex_unlock(&ctx->mutex);
	if (!qp && !wq)
		return false;
	memset(wc, 0, sizeof(*wc));
	wc->status = IBV_WC_WR_FLUSH_ERR;
	wc->vendor_err = MLX5_CQE_SYNDROME_WR_FLUSH_ERR;
	if (wq) {	/* its number, as its CQEs carry it */
		wc->qp_num = wq->ibwq.wq_num;
		wc->wr_id = rq_flush_one(&wq->rq);
		wc->opcode = IBV_WC_RECV;
		return true;
	}
	wc->qp_num = qp->qpn;
	if (m.send) {
		wc->wr_id = sq_flush_one(&qp->sq);
		wc->opcode = IBV_WC_SEND;	/* not defined for an error completion */
	} else {
		wc->wr_id = rq_flush_one(&qp->rq);
		wc->opcode = IBV_WC_RECV;
	}
	return true;
}
