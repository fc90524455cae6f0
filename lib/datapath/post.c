/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * ibv_post_send and ibv_post_recv: pure memory operations on the shared
 * rings, one lock and one doorbell per call as in the mlx5 provider. The
 * first work request that fails stops the list (*bad_wr); those before it
 * are posted.
 */
#include "lib/shim.h"

static void wqe_from_send_wr(struct rocemu_wqe *wqe, const struct ibv_send_wr *wr,
			     enum ibv_qp_type type)
{
	wqe->wr_id = wr->wr_id;
	wqe->flags = wr->send_flags;
	wqe->opcode = wr->opcode;
	wqe->imm = 0;
	wqe->num = (size_t)(unsigned int)wr->num_sge;
	wqe->sge = wr->sg_list;
	wqe->buf = NULL;
	wqe->ah = NULL;		/* a DCI's comes only from mlx5dv_wr_set_dc_addr */
	wqe->dci_stream = 0;
	if (type == IBV_QPT_UD) {
		wqe->ah = wr->wr.ud.ah;
		wqe->remote_qpn = wr->wr.ud.remote_qpn;
		wqe->remote_qkey = wr->wr.ud.remote_qkey;
	} else if (type == IBV_QPT_XRC_SEND) {
		wqe->remote_srqn = wr->qp_type.xrc.remote_srqn;
	}
	switch (wr->opcode) {
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		wqe->imm = wr->imm_data;
		/* fall through */
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_READ:
		wqe->raddr = wr->wr.rdma.remote_addr;
		wqe->rkey = wr->wr.rdma.rkey;
		break;
	case IBV_WR_ATOMIC_CMP_AND_SWP:
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		wqe->raddr = wr->wr.atomic.remote_addr;
		wqe->rkey = wr->wr.atomic.rkey;
		wqe->compare_add = wr->wr.atomic.compare_add;
		wqe->swap = wr->wr.atomic.swap;
		break;
	case IBV_WR_SEND_WITH_IMM:
		wqe->imm = wr->imm_data;
		break;
	case IBV_WR_SEND_WITH_INV:
		wqe->imm = htobe32(wr->invalidate_rkey);
		break;
	case IBV_WR_LOCAL_INV:
		wqe->imm = htobe32(wr->invalidate_rkey);
		wqe->num = 0;	/* no data: the SGE list means nothing here */
		break;
	case IBV_WR_TSO:
		wqe->tso_hdr = wr->tso.hdr;
		wqe->tso_hdr_sz = wr->tso.hdr_sz;
		wqe->tso_mss = wr->tso.mss;
		break;
	case IBV_WR_BIND_MW:
		wqe->mw = wr->bind_mw.mw;
		wqe->bind_rkey = wr->bind_mw.rkey;
		wqe->bind_info = &wr->bind_mw.bind_info;
		wqe->num = 0;
		break;
	default:
		break;	/* SEND; anything else is refused by rocemu_sq_write */
	}
}

int rocemu_post_send_op(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
			struct ibv_send_wr **bad_wr)
{
	struct rocemu_qp *qp = to_rqp(ibqp);
	struct rocemu_sq *sq = &qp->sq;
	struct rocemu_wqe wqe;
	uint32_t start;
	int err = 0;

	pthread_spin_lock(&sq->lock);
	start = sq->cur_post;
	for (; wr; wr = wr->next) {
		/* Before RTS, and for too many SGEs, mlx5's post_send says ENOMEM. */
		if (__builtin_expect(wr->num_sge > sq->state_max_sge, 0)) {
			err = ENOMEM;
			*bad_wr = wr;
			break;
		}
		wqe_from_send_wr(&wqe, wr, to_rqp(ibqp)->type);
		err = rocemu_sq_write(qp, &wqe);
		if (__builtin_expect(err, 0)) {
			*bad_wr = wr;
			break;
		}
	}
	if (__builtin_expect(sq->cur_post != start, 1))
		rocemu_sq_ring(qp);
	pthread_spin_unlock(&sq->lock);
	return err;
}

static void *set_recv_seg(struct mlx5_wqe_data_seg *seg, uint32_t length, uint32_t lkey,
			  uint64_t addr)
{
	seg->byte_count = htobe32(length);
	seg->lkey = htobe32(lkey);
	seg->addr = htobe64(addr);
	return seg + 1;
}

int rocemu_post_recv_op(struct ibv_qp *ibqp, struct ibv_recv_wr *wr,
			struct ibv_recv_wr **bad_wr)
{
	struct rocemu_qp *qp = to_rqp(ibqp);

	/* A QP with an SRQ has no receive queue: as mlx5's of max_post 0, it is full. */
	if (__builtin_expect(ibqp->srq != NULL, 0)) {
		*bad_wr = wr;
		return ENOMEM;
	}
	return rocemu_rq_post(&qp->rq, &qp->dbrec[MLX5_RCV_DBR], ibqp->context, wr, bad_wr);
}

int rocemu_rq_post(struct rocemu_rq *rq, __be32 *dbrec, struct ibv_context *context,
		   struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr)
{
	struct mlx5_wqe_data_seg *seg;
	uint32_t start, idx, tail, n;
	int i, err = 0;

	pthread_spin_lock(&rq->lock);
	start = rq->head;
	/* Acquire: the daemon finished with the entries the poller freed. */
	tail = __atomic_load_n(&rq->tail, __ATOMIC_ACQUIRE);
	for (; wr; wr = wr->next) {
		if (__builtin_expect(rq->head - tail >= rq->wqe_cnt, 0)) {
			tail = __atomic_load_n(&rq->tail, __ATOMIC_ACQUIRE);
			if (rq->head - tail >= rq->wqe_cnt) {
				err = ENOMEM;
				*bad_wr = wr;
				break;
			}
		}
		/* Before INIT too: rq->state_max_sge is -1 there. */
		if (__builtin_expect(wr->num_sge > rq->state_max_sge, 0)) {
			err = EINVAL;
			*bad_wr = wr;
			break;
		}
		idx = rq->head & (rq->wqe_cnt - 1);
		seg = (struct mlx5_wqe_data_seg *)(rq->buf + ((size_t)idx << rq->wqe_shift));
		for (i = 0, n = 0; i < wr->num_sge; i++) {
			if (!wr->sg_list[i].length)
				continue;	/* as mlx5: nothing to scatter there */
			seg = set_recv_seg(seg, wr->sg_list[i].length, wr->sg_list[i].lkey,
					   wr->sg_list[i].addr);
			n++;
		}
		if (n < rq->max_sge)
			set_recv_seg(seg, 0, MLX5_INVALID_LKEY, 0);
		rq->wrid[idx] = wr->wr_id;
		rq->head++;
	}
	if (__builtin_expect(rq->head != start, 1)) {
		/* Release: a daemon that reads the new counter reads whole entries. */
		__atomic_store_n(dbrec, rocemu_wq_dbrec_word(rq->head), __ATOMIC_RELEASE);
		rocemu_ctx_recv_doorbell(to_rctx(context));
	}
	pthread_spin_unlock(&rq->lock);
	return err;
}
