/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The ibv_qp_ex work-request API (QPs created with send_ops_flags):
 * wr_start takes the send lock, each builder records an opcode with
 * qpx->wr_id and qpx->wr_flags as they are at that call, its data setter
 * writes the WQE through the same writer as ibv_post_send, and
 * wr_complete rings one doorbell for the batch. As in the mlx5 provider,
 * an error anywhere in the batch drops the whole batch and wr_complete
 * returns the first one.
 */
#include "lib/shim.h"

void rocemu_sq_batch_fail(struct rocemu_sq *sq, int err)
{
	if (!sq->batch_err)
		sq->batch_err = err;
}

/* Record the next WQE; its data setter writes it. */
static void wr_build(struct ibv_qp_ex *qpx, enum ibv_wr_opcode opcode, uint32_t rkey,
		     uint64_t raddr, __be32 imm)
{
	struct rocemu_sq *sq = &to_rqp_ex(qpx)->sq;
	struct rocemu_wqe *wqe = &sq->pending;

	/* A builder whose WQE got no data setter is a malformed batch. */
	if (__builtin_expect(sq->wr_pending, 0))
		rocemu_sq_batch_fail(sq, EINVAL);
	sq->wr_pending = true;
	wqe->wr_id = qpx->wr_id;
	wqe->flags = qpx->wr_flags;
	wqe->opcode = opcode;
	wqe->rkey = rkey;
	wqe->raddr = raddr;
	wqe->imm = imm;
	wqe->ah = NULL;		/* UD, DCI: wr_set_ud_addr, mlx5dv_wr_set_dc_addr give it for each WQE */
	wqe->dci_stream = 0;
}

/* UD: between the builder and its data setter, as in mlx5. */
static void wr_set_ud_addr(struct ibv_qp_ex *qpx, struct ibv_ah *ah, uint32_t remote_qpn,
			   uint32_t remote_qkey)
{
	struct rocemu_wqe *wqe = &to_rqp_ex(qpx)->sq.pending;

	wqe->ah = ah;
	wqe->remote_qpn = remote_qpn;
	wqe->remote_qkey = remote_qkey;
}

/* XRC: between the builder and its data setter, as in mlx5. */
static void wr_set_xrc_srqn(struct ibv_qp_ex *qpx, uint32_t remote_srqn)
{
	to_rqp_ex(qpx)->sq.pending.remote_srqn = remote_srqn;
}

/* Write the recorded WQE with its data: sge[num] or inline buf[num]. */
static void wr_write(struct ibv_qp_ex *qpx, size_t num, const struct ibv_sge *sge,
		     const struct ibv_data_buf *buf)
{
	struct rocemu_qp *qp = to_rqp_ex(qpx);
	struct rocemu_sq *sq = &qp->sq;
	struct rocemu_wqe *wqe = &sq->pending;
	int err;

	if (__builtin_expect(!sq->wr_pending, 0)) {
		rocemu_sq_batch_fail(sq, EINVAL);
		return;
	}
	sq->wr_pending = false;
	if (__builtin_expect(sq->batch_err, 0))
		return;
	/* Here inline data comes only from the inline setters, as in mlx5. */
	wqe->flags &= ~(unsigned int)IBV_SEND_INLINE;
	wqe->num = num;
	wqe->sge = sge;
	wqe->buf = buf;
	err = rocemu_sq_write(qp, wqe);
	if (__builtin_expect(err, 0))
		rocemu_sq_batch_fail(sq, err);
}

static void wr_start(struct ibv_qp_ex *qpx)
{
	struct rocemu_sq *sq = &to_rqp_ex(qpx)->sq;

	pthread_spin_lock(&sq->lock);
	sq->batch_start = sq->cur_post;
	sq->batch_err = 0;
	sq->wr_pending = false;
}

static int wr_complete(struct ibv_qp_ex *qpx)
{
	struct rocemu_qp *qp = to_rqp_ex(qpx);
	struct rocemu_sq *sq = &qp->sq;
	int err;

	/* Before RTS nothing is posted (mlx5's wr_complete_error). */
	if (__builtin_expect(sq->wr_pending || sq->state_max_sge < 0, 0))
		rocemu_sq_batch_fail(sq, EINVAL);
	err = sq->batch_err;
	if (__builtin_expect(err, 0))
		sq->cur_post = sq->batch_start;	/* nothing of the batch was made visible */
	else if (sq->cur_post != sq->batch_start)
		rocemu_sq_ring(qp);
	pthread_spin_unlock(&sq->lock);
	return err;
}

static void wr_abort(struct ibv_qp_ex *qpx)
{
	struct rocemu_sq *sq = &to_rqp_ex(qpx)->sq;

	sq->cur_post = sq->batch_start;
	pthread_spin_unlock(&sq->lock);
}

static void wr_send(struct ibv_qp_ex *qpx)
{
	wr_build(qpx, IBV_WR_SEND, 0, 0, 0);
}

static void wr_send_imm(struct ibv_qp_ex *qpx, __be32 imm_data)
{
	wr_build(qpx, IBV_WR_SEND_WITH_IMM, 0, 0, imm_data);
}

static void wr_send_inv(struct ibv_qp_ex *qpx, uint32_t invalidate_rkey)
{
	wr_build(qpx, IBV_WR_SEND_WITH_INV, 0, 0, htobe32(invalidate_rkey));
}

static void wr_rdma_write(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t remote_addr)
{
	wr_build(qpx, IBV_WR_RDMA_WRITE, rkey, remote_addr, 0);
}

static void wr_rdma_write_imm(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t remote_addr,
			      __be32 imm_data)
{
	wr_build(qpx, IBV_WR_RDMA_WRITE_WITH_IMM, rkey, remote_addr, imm_data);
}

static void wr_rdma_read(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t remote_addr)
{
	wr_build(qpx, IBV_WR_RDMA_READ, rkey, remote_addr, 0);
}

static void wr_atomic_cmp_swp(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t remote_addr,
			      uint64_t compare, uint64_t swap)
{
	struct rocemu_wqe *wqe = &to_rqp_ex(qpx)->sq.pending;

	wr_build(qpx, IBV_WR_ATOMIC_CMP_AND_SWP, rkey, remote_addr, 0);
	wqe->compare_add = compare;
	wqe->swap = swap;
}

static void wr_atomic_fetch_add(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t remote_addr,
				uint64_t add)
{
	struct rocemu_wqe *wqe = &to_rqp_ex(qpx)->sq.pending;

	wr_build(qpx, IBV_WR_ATOMIC_FETCH_AND_ADD, rkey, remote_addr, 0);
	wqe->compare_add = add;
	wqe->swap = 0;
}

/* Local operations carry no data: written at once, as in mlx5. */
static void wr_local_inv(struct ibv_qp_ex *qpx, uint32_t invalidate_rkey)
{
	wr_build(qpx, IBV_WR_LOCAL_INV, 0, 0, htobe32(invalidate_rkey));
	wr_write(qpx, 0, NULL, NULL);
}

static void wr_bind_mw(struct ibv_qp_ex *qpx, struct ibv_mw *mw, uint32_t rkey,
		       const struct ibv_mw_bind_info *bind_info)
{
	struct rocemu_wqe *wqe = &to_rqp_ex(qpx)->sq.pending;

	wr_build(qpx, IBV_WR_BIND_MW, 0, 0, 0);
	wqe->mw = mw;
	wqe->bind_rkey = rkey;
	wqe->bind_info = bind_info;
	wr_write(qpx, 0, NULL, NULL);
}

/* RAW_PACKET: the header goes inline whole, the data setter gives the payload (mlx5_send_wr_send_tso). */
static void wr_send_tso(struct ibv_qp_ex *qpx, void *hdr, uint16_t hdr_sz, uint16_t mss)
{
	struct rocemu_wqe *wqe = &to_rqp_ex(qpx)->sq.pending;

	wr_build(qpx, IBV_WR_TSO, 0, 0, 0);
	wqe->tso_hdr = hdr;
	wqe->tso_hdr_sz = hdr_sz;
	wqe->tso_mss = mss;
}

static void wr_set_sge(struct ibv_qp_ex *qpx, uint32_t lkey, uint64_t addr, uint32_t length)
{
	struct ibv_sge sge = { .addr = addr, .length = length, .lkey = lkey };

	wr_write(qpx, 1, &sge, NULL);
}

static void wr_set_sge_list(struct ibv_qp_ex *qpx, size_t num_sge, const struct ibv_sge *sg_list)
{
	wr_write(qpx, num_sge, sg_list, NULL);
}

static void wr_set_inline_data(struct ibv_qp_ex *qpx, void *addr, size_t length)
{
	struct ibv_data_buf buf = { .addr = addr, .length = length };

	wr_write(qpx, 1, NULL, &buf);
}

static void wr_set_inline_data_list(struct ibv_qp_ex *qpx, size_t num_buf,
				    const struct ibv_data_buf *buf_list)
{
	static const struct ibv_data_buf none;

	/* buf never NULL here: it is what marks the data as inline */
	wr_write(qpx, num_buf, NULL, num_buf ? buf_list : &none);
}

uint64_t rocemu_qp_type_send_ops(enum ibv_qp_type type)
{
	switch (type) {
	case IBV_QPT_UD:
		return IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM;
	case IBV_QPT_UC:
		return ROCEMU_QP_SEND_OPS_FLAGS_UC;
	case IBV_QPT_RAW_PACKET:
		return IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_TSO;
	default:
		return ROCEMU_QP_SEND_OPS_FLAGS;
	}
}

/* Every builder of the QP type, whichever send_ops_flags asked for, as mlx5_qp_fill_wr_pfns. */
void rocemu_qp_wr_ops_init(struct rocemu_qp *qp)
{
	struct ibv_qp_ex *qpx = &qp->qpx;
	uint64_t ops = rocemu_qp_type_send_ops(qp->type);

	qpx->wr_start = wr_start;
	qpx->wr_complete = wr_complete;
	qpx->wr_abort = wr_abort;
	qpx->wr_set_sge = wr_set_sge;
	qpx->wr_set_sge_list = wr_set_sge_list;
	qpx->wr_set_inline_data = wr_set_inline_data;
	qpx->wr_set_inline_data_list = wr_set_inline_data_list;
	if (qp->type == IBV_QPT_UD)
		qpx->wr_set_ud_addr = wr_set_ud_addr;
	if (qp->type == IBV_QPT_XRC_SEND)
		qpx->wr_set_xrc_srqn = wr_set_xrc_srqn;
	if (ops & IBV_QP_EX_WITH_SEND)
		qpx->wr_send = wr_send;
	if (ops & IBV_QP_EX_WITH_SEND_WITH_IMM)
		qpx->wr_send_imm = wr_send_imm;
	if (ops & IBV_QP_EX_WITH_SEND_WITH_INV)
		qpx->wr_send_inv = wr_send_inv;
	if (ops & IBV_QP_EX_WITH_RDMA_WRITE)
		qpx->wr_rdma_write = wr_rdma_write;
	if (ops & IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM)
		qpx->wr_rdma_write_imm = wr_rdma_write_imm;
	if (ops & IBV_QP_EX_WITH_RDMA_READ)
		qpx->wr_rdma_read = wr_rdma_read;
	if (ops & IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP)
		qpx->wr_atomic_cmp_swp = wr_atomic_cmp_swp;
	if (ops & IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD)
		qpx->wr_atomic_fetch_add = wr_atomic_fetch_add;
	if (ops & IBV_QP_EX_WITH_LOCAL_INV)
		qpx->wr_local_inv = wr_local_inv;
	if (ops & IBV_QP_EX_WITH_BIND_MW)
		qpx->wr_bind_mw = wr_bind_mw;
	if (ops & IBV_QP_EX_WITH_TSO)
		qpx->wr_send_tso = wr_send_tso;
}
