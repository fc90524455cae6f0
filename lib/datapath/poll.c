/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * ibv_poll_cq and the one CQE parser it shares with the extended polling
 * of ibv_cq_ex. The daemon owns the producer side of the ring and writes
 * op_own last (release); the shim owns the consumer index, and reports it
 * in the doorbell record once per poll call, as the mlx5 provider does.
 */
#include "lib/shim.h"

#include <sched.h>

#include "rocemu/log.h"

/* Empty polls in a row after which the poller yields its CPU (DESIGN.md: 2-core machines). */
#define POLL_YIELD_EVERY 16
/* Yields after which an idle poller looks whether the daemon hung up: one poll(2) per 1024. */
#define POLL_CHECK_EVERY 64

/* The SQ entry of a CQE's wqe_counter: 16 bits of the BB counter, extended from the tail. */
static uint32_t sq_idx(const struct rocemu_sq *sq, uint16_t wqe_counter)
{
	uint32_t tail = sq->tail;

	return (tail + (uint16_t)(wqe_counter - (uint16_t)tail)) & (sq->wqe_cnt - 1);
}

/*
 * A raw WQE (mlx5dv_wr_raw_wqe) completes as IBV_WC_DRIVER2, as libmlx5
 * says; a UMR WQE is a window bind or, posted as IBV_WR_DRIVER1, an mkey's
 * UMR (MLX5DV_WC_UMR).
 */
static enum ibv_wc_opcode sq_wc_opcode(const struct rocemu_sq *sq, const struct mlx5_cqe64 *cqe)
{
	uint8_t opcode = rocemu_cqe_wqe_opcode(cqe);

	if (__builtin_expect(sq->raw_wqes, 0) &&
	    sq->wr_opcode[sq_idx(sq, be16toh(cqe->wqe_counter))] == (uint8_t)ROCEMU_WR_RAW_WQE)
		return IBV_WC_DRIVER2;
	if (opcode == MLX5_OPCODE_UMR &&
	    sq->wr_opcode[sq_idx(sq, be16toh(cqe->wqe_counter))] == IBV_WR_DRIVER1)
		return IBV_WC_DRIVER1;
	return (enum ibv_wc_opcode)rocemu_wqe_op(opcode)->wc_opcode;
}

uint64_t rocemu_sq_complete(struct rocemu_sq *sq, uint16_t wqe_counter)
{
	uint32_t idx = sq_idx(sq, wqe_counter);
	/* Read before the release below: a poster may then overwrite the entry. */
	uint64_t wr_id = sq->wrid[idx];

	/* Release: the poster reuses these BBs only after this point. */
	__atomic_store_n(&sq->tail, sq->wqe_head[idx] + 1, __ATOMIC_RELEASE);
	return wr_id;
}

uint64_t rocemu_rq_complete(struct rocemu_rq *rq)
{
	uint64_t wr_id = rq->wrid[rq->tail & (rq->wqe_cnt - 1)];

	/* Release: the poster reuses the entry only after this point. */
	__atomic_store_n(&rq->tail, rq->tail + 1, __ATOMIC_RELEASE);
	return wr_id;
}

/*
 * Where a CQE's receive came from: the XRC SRQ it names (its QP, an XRC
 * target, may be another process's: qp NULL), the WQ it names (an RSS
 * QP's receive: qp NULL), or the QP's SRQ (which the CQE names too) or RQ.
 */
struct cqe_src {
	struct rocemu_qp *qp;
	struct rocemu_srq *xrc_srq;
	struct rocemu_wq *wq;
};

/* The WQ wqn that completes to cq (cq's lock held), or NULL: mlx5's RWQ by its user index. */
static struct rocemu_wq *cq_wq(const struct rocemu_cq *cq, uint32_t wqn)
{
	struct rocemu_wq *wq;

	for (wq = cq->wqs; wq && wq->ibwq.wq_num != wqn; wq = wq->cq_next)
		;
	return wq;
}

struct rocemu_srq *rocemu_cq_xrc_srq(const struct rocemu_cq *cq, uint32_t srqn)
{
	struct rocemu_srq *srq;

	for (srq = cq->xrc_srqs; srq && srq->srqn != srqn; srq = srq->xrc_next)
		;
	return srq;
}

static struct rocemu_srq *cqe_src_srq(const struct cqe_src *src)
{
	return src->xrc_srq ? src->xrc_srq : src->qp->qpx.qp_base.srq ?
		to_rsrq(src->qp->qpx.qp_base.srq) : NULL;
}

/* The receive a CQE completes: the SRQ WQE its wqe_counter names, else the RQ's oldest. */
static uint64_t recv_complete(const struct cqe_src *src, const struct mlx5_cqe64 *cqe)
{
	struct rocemu_srq *srq;

	if (src->wq)
		return rocemu_rq_complete(&src->wq->rq);
	srq = cqe_src_srq(src);

	return srq ? rocemu_srq_complete(srq, be16toh(cqe->wqe_counter))
		   : rocemu_rq_complete(&src->qp->rq);
}

/* Data the CQE carries into the receive WQE it names, while that WQE is still unposted. */
static enum ibv_wc_status recv_scatter(const struct cqe_src *src, const struct mlx5_cqe64 *cqe,
				       uint32_t len)
{
	const void *data = rocemu_cqe_scatter_data(cqe);
	struct rocemu_srq *srq;

	if (__builtin_expect(!data, 1))
		return IBV_WC_SUCCESS;
	srq = cqe_src_srq(src);
	return srq ? rocemu_cqe_scatter_to_srq(srq, be16toh(cqe->wqe_counter), data, len)
		   : rocemu_cqe_scatter_to_rq(&src->qp->rq, be16toh(cqe->wqe_counter), data, len);
}

static void parse_req(const struct cqe_src *src, const struct mlx5_cqe64 *cqe, struct ibv_wc *wc)
{
	const struct rocemu_wqe_op *op = rocemu_wqe_op(rocemu_cqe_wqe_opcode(cqe));
	const void *data = rocemu_cqe_scatter_data(cqe);

	wc->opcode = sq_wc_opcode(&src->qp->sq, cqe);
	wc->wc_flags = op->wc_flags;
	wc->byte_len = op->wc_len == ROCEMU_WC_LEN_CQE ? be32toh(cqe->byte_cnt) :
		       op->wc_len == ROCEMU_WC_LEN_ATOMIC ? sizeof(uint64_t) : 0;
	/* A READ or atomic reply in the CQE goes to its SGEs before the WQE is given back. */
	wc->status = __builtin_expect(!data, 1) ? IBV_WC_SUCCESS :
		     rocemu_cqe_scatter_to_sq(src->qp, be16toh(cqe->wqe_counter), data, wc->byte_len);
	wc->wr_id = rocemu_sq_complete(&src->qp->sq, be16toh(cqe->wqe_counter));
}

/* mlx5's get_csum_ok: IPv4 with good L3 and L4 checksums. */
static unsigned int cqe_csum_ok(const struct mlx5_cqe64 *cqe)
{
	return (cqe->hds_ip_ext & (MLX5_CQE_L3_OK | MLX5_CQE_L4_OK)) ==
			       (MLX5_CQE_L3_OK | MLX5_CQE_L4_OK) &&
		       rocemu_cqe_l3_hdr_type(cqe) == MLX5_CQE_L3_HDR_TYPE_IPV4 ?
	       IBV_WC_IP_CSUM_OK : 0;
}

static void parse_resp(const struct cqe_src *src, const struct mlx5_cqe64 *cqe, uint8_t opcode,
		       struct ibv_wc *wc)
{
	const struct rocemu_cqe_op *op = rocemu_cqe_op(opcode);
	uint32_t flags_rqpn = be32toh(cqe->flags_rqpn);

	wc->byte_len = be32toh(cqe->byte_cnt);
	wc->status = recv_scatter(src, cqe, wc->byte_len);
	wc->wr_id = recv_complete(src, cqe);
	wc->opcode = (enum ibv_wc_opcode)op->wc_opcode;
	wc->wc_flags = op->wc_flags | ((flags_rqpn >> 28) & 3 ? IBV_WC_GRH : 0);
	/* A RAW_PACKET QP's, once its port is set (mlx5's MLX5_RX_CSUM_VALID); mlx5 tells a WQ's none */
	if (src->qp && src->qp->raw_csum)
		wc->wc_flags |= cqe_csum_ok(cqe);
	if (op->wc_flags & IBV_WC_WITH_IMM)
		wc->imm_data = cqe->imm_inval_pkey;	/* stays big-endian, as on the wire */
	else if (op->wc_flags & IBV_WC_WITH_INV)
		wc->invalidated_rkey = be32toh(cqe->imm_inval_pkey);
	wc->src_qp = flags_rqpn & 0xffffff;
	wc->sl = (flags_rqpn >> 24) & 0xf;
	wc->slid = be16toh(cqe->slid);
	wc->dlid_path_bits = cqe->ml_path & 0x7f;
}

static void parse_err(const struct rocemu_cq *cq, const struct cqe_src *src,
		      const struct mlx5_cqe64 *cqe, uint8_t opcode, struct ibv_wc *wc)
{
	const struct mlx5_err_cqe *ecqe = (const struct mlx5_err_cqe *)cqe;
	bool sq = rocemu_cqe_op(opcode)->flags & ROCEMU_CQE_OP_SQ;

	wc->status = rocemu_cqe_error_status(ecqe->syndrome);
	wc->vendor_err = ecqe->vendor_err_synd;
	if (sq) {
		wc->opcode = sq_wc_opcode(&src->qp->sq, cqe);
		wc->wr_id = rocemu_sq_complete(&src->qp->sq, be16toh(cqe->wqe_counter));
	} else {
		wc->wr_id = recv_complete(src, cqe);
		wc->opcode = (enum ibv_wc_opcode)rocemu_cqe_op(opcode)->wc_opcode;
	}
	if (ecqe->syndrome != MLX5_CQE_SYNDROME_WR_FLUSH_ERR)
		rocemu_log(ROCEMU_LOG_DEBUG, "%s qp 0x%06x %s error CQE syndrome 0x%02x vendor 0x%02x",
			   to_rctx(cq->ibcq.context)->info.name, wc->qp_num,
			   sq ? "send" : "recv", ecqe->syndrome,
			   ecqe->vendor_err_synd);
}

struct rocemu_qp *rocemu_cq_qp(struct rocemu_cq *cq, uint32_t qpn, struct rocemu_qp **cache)
{
	if (__builtin_expect(!*cache || (*cache)->qpn != qpn, 0))
		*cache = rocemu_qp_table_find(to_rctx(cq->ibcq.context), qpn);
	return *cache;
}

bool rocemu_cq_poll_one(struct rocemu_cq *cq, struct ibv_wc *wc, struct rocemu_qp **cache)
{
	const struct rocemu_cqe_op *op;
	struct mlx5_cqe64 *cqe;
	struct cqe_src src;
	uint8_t opcode;
	uint32_t qpn, srqn;

	for (;;) {
		cqe = rocemu_cqe_sw(cq, cq->cons_index);
		if (!cqe)	/* what the daemon wrote is all read: a dead one's WRs are flushed */
			return rocemu_conn_is_lost(&to_rctx(cq->ibcq.context)->conn) &&
			       rocemu_cq_flush_one(cq, wc);
		opcode = cqe->op_own >> 4;
		op = rocemu_cqe_op(opcode);
		cq->cons_index++;
		qpn = rocemu_cqe_qpn(cqe);
		srqn = op->flags & ROCEMU_CQE_OP_RQ ? rocemu_cqe_srqn(cqe) : 0;
		src.wq = rocemu_cqe_is_wq(cqe) ? cq_wq(cq, qpn) : NULL;
		src.xrc_srq = srqn ? rocemu_cq_xrc_srq(cq, srqn) : NULL;
		src.qp = src.xrc_srq || rocemu_cqe_is_wq(cqe) ? NULL : rocemu_cq_qp(cq, qpn, cache);
		if (__builtin_expect(src.qp || src.xrc_srq || src.wq, 1))
			break;
		/* A CQE of a QP, XRC SRQ or WQ destroyed since (mlx5 cleans them from the CQ): dropped. */
		rocemu_log(ROCEMU_LOG_DEBUG, "cq 0x%06x: CQE of unknown qp 0x%06x srq 0x%06x dropped (opcode %u wqe %u)",
			   cq->cqn, qpn, srqn, opcode, be16toh(cqe->wqe_counter));
	}

	wc->qp_num = qpn;
	wc->vendor_err = 0;
	wc->src_qp = 0;
	wc->pkey_index = 0;
	wc->slid = 0;
	wc->sl = 0;
	wc->dlid_path_bits = 0;
	wc->imm_data = 0;
	wc->wc_flags = 0;
	wc->byte_len = 0;
	if (op->flags & ROCEMU_CQE_OP_ERR) {
		parse_err(cq, &src, cqe, opcode, wc);
	} else if (op->flags & ROCEMU_CQE_OP_SQ) {
		parse_req(&src, cqe, wc);
	} else if (op->flags & ROCEMU_CQE_OP_RQ) {
		parse_resp(&src, cqe, opcode, wc);
	} else {
		/* Not a CQE this device writes: report it, consume nothing else. */
		rocemu_log(ROCEMU_LOG_WARN, "cq 0x%06x: qp 0x%06x unexpected CQE opcode %u",
			   cq->cqn, qpn, opcode);
		wc->wr_id = 0;
		wc->status = IBV_WC_GENERAL_ERR;
		wc->opcode = IBV_WC_SEND;
	}
	return true;
}

void rocemu_cq_update_ci(struct rocemu_cq *cq)
{
	/* Release: the daemon reuses the slots only after we have read them. */
	__atomic_store_n(&cq->dbrec[ROCEMU_CQ_DBR_SET_CI],
			 htobe32(cq->cons_index & ROCEMU_CQ_INDEX_MASK),
			 __ATOMIC_RELEASE);
}

enum rocemu_poll_idle rocemu_cq_count_poll(struct rocemu_cq *cq, bool empty)
{
	pthread_t self;

	if (!empty) {
		cq->empty_polls = 0;
		return ROCEMU_POLL_BUSY;
	}
	self = pthread_self();
	if (!pthread_equal(cq->empty_poller, self)) {
		cq->empty_poller = self;
		cq->empty_polls = 0;
	}
	if (++cq->empty_polls < POLL_YIELD_EVERY)
		return ROCEMU_POLL_BUSY;
	cq->empty_polls = 0;
	if (++cq->idle_yields < POLL_CHECK_EVERY)
		return ROCEMU_POLL_YIELD;
	cq->idle_yields = 0;
	return ROCEMU_POLL_CHECK;
}

void rocemu_cq_idle(struct rocemu_cq *cq, enum rocemu_poll_idle idle)
{
	if (__builtin_expect(idle == ROCEMU_POLL_BUSY, 1))
		return;
	/* A program that only polls learns this way that the daemon died (no event read). */
	if (idle == ROCEMU_POLL_CHECK)
		rocemu_conn_check(&to_rctx(cq->ibcq.context)->conn);
	sched_yield();
}

/* One look at the CQ: up to num_entries completions; *idle what the poller does next. */
static int cq_poll(struct rocemu_cq *cq, int num_entries, struct ibv_wc *wc,
		   enum rocemu_poll_idle *idle, rocemu_cq_poll_one_fn *poll_one)
{
	struct rocemu_qp *cache = NULL;
	uint32_t start;
	int n;

	pthread_spin_lock(&cq->lock);
	start = cq->cons_index;
	for (n = 0; n < num_entries; n++)
		if (!poll_one(cq, wc + n, &cache))
			break;
	if (cq->cons_index != start)
		rocemu_cq_update_ci(cq);
	*idle = rocemu_cq_count_poll(cq, n == 0);
	pthread_spin_unlock(&cq->lock);
	return n;
}

int rocemu_cq_poll(struct rocemu_cq *cq, int num_entries, struct ibv_wc *wc,
		   rocemu_cq_poll_one_fn *poll_one)
{
	enum rocemu_poll_idle idle;
	int n = cq_poll(cq, num_entries, wc, &idle, poll_one);

	/* An empty answer tells the CQ as it is on return, not as it was before a yield. */
	if (__builtin_expect(idle != ROCEMU_POLL_BUSY, 0)) {
		rocemu_cq_idle(cq, idle);
		n = cq_poll(cq, num_entries, wc, &idle, poll_one);
	}
	return n;
}

int rocemu_poll_cq_op(struct ibv_cq *ibcq, int num_entries, struct ibv_wc *wc)
{
	return rocemu_cq_poll(to_rcq(ibcq), num_entries, wc, rocemu_cq_poll_one);
}
