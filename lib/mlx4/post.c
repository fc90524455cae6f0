/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * ibv_post_send, ibv_post_recv and ibv_post_srq_recv on a ConnectX-3's
 * rings, as libmlx4 posts them (include/rocemu/ring_mlx4.h): one WQE per
 * stride, its owner bit written last; the WQE sq_spare ahead stamped; the
 * receive doorbell record. The errors are libmlx4's.
 */
#include "lib/shim.h"

#include <string.h>

#define NO_DATA_BYTE_COUNT 0x80000000u	/* a zero-length data segment (libmlx4 set_data_seg) */

static void *set_raddr(void *seg, uint64_t raddr, uint32_t rkey)
{
	struct mlx4_wqe_raddr_seg *r = seg;

	r->raddr = htobe64(raddr);
	r->rkey = htobe32(rkey);
	r->reserved = 0;
	return r + 1;
}

static void *set_atomic(void *seg, const struct ibv_send_wr *wr)
{
	struct mlx4_wqe_atomic_seg *a = seg;

	if (wr->opcode == IBV_WR_ATOMIC_CMP_AND_SWP) {
		a->swap_add = htobe64(wr->wr.atomic.swap);
		a->compare = htobe64(wr->wr.atomic.compare_add);
	} else {
		a->swap_add = htobe64(wr->wr.atomic.compare_add);
		a->compare = 0;
	}
	return a + 1;
}

static void *set_local_inv(void *seg, uint32_t rkey)
{
	struct mlx4_wqe_local_inval_seg *l = seg;

	memset(l, 0, sizeof(*l));
	l->mem_key = htobe32(rkey);
	return l + 1;
}

static void *set_bind(void *seg, const struct ibv_send_wr *wr)
{
	const struct ibv_mw_bind_info *info = &wr->bind_mw.bind_info;
	unsigned int acc = info->mw_access_flags;
	struct mlx4_wqe_bind_seg *b = seg;
	uint32_t f1 = 0, f2 = 0;

	f1 |= acc & IBV_ACCESS_REMOTE_ATOMIC ? MLX4_WQE_MW_ATOMIC : 0;
	f1 |= acc & IBV_ACCESS_REMOTE_WRITE ? MLX4_WQE_MW_REMOTE_WRITE : 0;
	f1 |= acc & IBV_ACCESS_REMOTE_READ ? MLX4_WQE_MW_REMOTE_READ : 0;
	f2 |= wr->bind_mw.mw->type == IBV_MW_TYPE_2 ? MLX4_WQE_BIND_TYPE_2 : 0;
	f2 |= acc & IBV_ACCESS_ZERO_BASED ? MLX4_WQE_BIND_ZERO_BASED : 0;
	b->flags1 = htobe32(f1);
	b->flags2 = htobe32(f2);
	b->new_rkey = htobe32(wr->bind_mw.rkey);
	b->lkey = htobe32(info->mr ? info->mr->lkey : 0);
	b->addr = htobe64(info->addr);
	b->length = htobe64(info->length);
	return b + 1;
}

static void *set_datagram(void *seg, const struct ibv_send_wr *wr)
{
	struct mlx4_wqe_datagram_seg *d = seg;

	memset(d, 0, sizeof(*d));
	d->av = to_rah(wr->wr.ud.ah)->mlx4_av;
	d->dqpn = htobe32(wr->wr.ud.remote_qpn);
	d->qkey = htobe32(wr->wr.ud.remote_qkey);
	return d + 1;
}

/*
 * Inline data in segments that never cross a 64-byte boundary of the WQE
 * (the stride is 64-byte aligned). Returns the 16-byte units written, or
 * 0 with ENOMEM past max_inline.
 */
static uint32_t set_inline(const struct rocemu_sq *sq, char *wqe, char *at,
			   const struct ibv_send_wr *wr, int *err)
{
	struct mlx4_wqe_inline_seg *seg = (struct mlx4_wqe_inline_seg *)at;
	char *dst = at + sizeof(*seg);
	size_t off = (size_t)(dst - wqe) & (MLX4_INLINE_ALIGN - 1);
	uint32_t total = 0, seg_len = 0, nseg = 0;

	for (int i = 0; i < wr->num_sge; i++) {
		const char *src = (const char *)(uintptr_t)wr->sg_list[i].addr;
		size_t len = wr->sg_list[i].length;

		total += (uint32_t)len;
		if (total > sq->max_inline) {
			*err = ENOMEM;
			return 0;
		}
		while (len >= MLX4_INLINE_ALIGN - off) {
			size_t chunk = MLX4_INLINE_ALIGN - off;

			memcpy(dst, src, chunk);
			len -= chunk;
			src += chunk;
			dst += chunk;
			seg->byte_count = htobe32(MLX4_INLINE_SEG | (seg_len + (uint32_t)chunk));
			seg_len = 0;
			seg = (struct mlx4_wqe_inline_seg *)dst;
			dst += sizeof(*seg);
			off = sizeof(*seg);
			nseg++;
		}
		memcpy(dst, src, len);
		dst += len;
		seg_len += (uint32_t)len;
		off += len;
	}
	if (seg_len) {
		seg->byte_count = htobe32(MLX4_INLINE_SEG | seg_len);
		nseg++;
	}
	return (total + nseg * (uint32_t)sizeof(*seg) + 15) / 16;
}

/* Data segments, last first as libmlx4 writes them; zero bytes is 0x80000000 (no data). */
static uint32_t set_data(char *at, const struct ibv_send_wr *wr)
{
	struct mlx4_wqe_data_seg *d = (struct mlx4_wqe_data_seg *)at;

	for (int i = wr->num_sge - 1; i >= 0; i--) {
		d[i].lkey = htobe32(wr->sg_list[i].lkey);
		d[i].addr = htobe64(wr->sg_list[i].addr);
		d[i].byte_count = htobe32(wr->sg_list[i].length ? wr->sg_list[i].length :
					  NO_DATA_BYTE_COUNT);
	}
	return (uint32_t)wr->num_sge * (uint32_t)(sizeof(*d) / 16);
}

/* The segments after ctrl that the QP type and opcode carry; returns where data goes. */
static char *set_type_segs(struct mlx4_wqe_ctrl_seg *ctrl, enum ibv_qp_type type,
			   const struct ibv_send_wr *wr)
{
	char *seg = (char *)(ctrl + 1);

	if (type == IBV_QPT_UD)
		return set_datagram(seg, wr);
	if (type != IBV_QPT_RC && type != IBV_QPT_UC && type != IBV_QPT_XRC_SEND)
		return seg;
	if (type == IBV_QPT_XRC_SEND)
		ctrl->srcrb_flags |= htobe32(wr->qp_type.xrc.remote_srqn << 8);
	switch (wr->opcode) {
	case IBV_WR_ATOMIC_CMP_AND_SWP:
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		seg = set_raddr(seg, wr->wr.atomic.remote_addr, wr->wr.atomic.rkey);
		return set_atomic(seg, wr);
	case IBV_WR_RDMA_READ:
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		return set_raddr(seg, wr->wr.rdma.remote_addr, wr->wr.rdma.rkey);
	case IBV_WR_LOCAL_INV:
		ctrl->srcrb_flags |= htobe32(MLX4_WQE_CTRL_STRONG_ORDER);
		return set_local_inv(seg, wr->invalidate_rkey);
	case IBV_WR_BIND_MW:
		ctrl->srcrb_flags |= htobe32(MLX4_WQE_CTRL_STRONG_ORDER);
		return set_bind(seg, wr);
	case IBV_WR_SEND_WITH_INV:
		ctrl->imm = htobe32(wr->invalidate_rkey);
		return seg;
	default:
		return seg;
	}
}

/* With sq.lock held: write wr at cur_post and hand it to the device. Returns 0 or an errno. */
static int sq_post_one(struct rocemu_qp *qp, const struct ibv_send_wr *wr)
{
	struct rocemu_sq *sq = &qp->sq;
	struct mlx4_wqe_ctrl_seg *ctrl;
	uint32_t idx, size;
	char *seg;
	int opcode, err = 0;

	/* Acquire: the daemon finished with the WQEs the poller freed. */
	if (sq->cur_post - __atomic_load_n(&sq->tail, __ATOMIC_ACQUIRE) >= qp->cap.max_send_wr ||
	    (uint32_t)wr->num_sge > sq->max_sge)
		return ENOMEM;
	opcode = rocemu_mlx4_opcode_of_wr(wr->opcode);
	if (opcode < 0 || (qp->type == IBV_QPT_UD && !wr->wr.ud.ah) ||
	    (wr->opcode == IBV_WR_BIND_MW && !wr->bind_mw.mw))
		return EINVAL;
	ctrl = rocemu_mlx4_sq_wqe(sq, sq->cur_post);
	ctrl->srcrb_flags = htobe32((wr->send_flags & IBV_SEND_SIGNALED || qp->sq_sig_all ?
				     MLX4_WQE_CTRL_CQ_UPDATE : 0) |
				    (wr->send_flags & IBV_SEND_SOLICITED ? MLX4_WQE_CTRL_SOLICIT : 0));
	ctrl->imm = wr->opcode == IBV_WR_SEND_WITH_IMM || wr->opcode == IBV_WR_RDMA_WRITE_WITH_IMM ?
		    wr->imm_data : 0;
	seg = set_type_segs(ctrl, qp->type, wr);
	size = (uint32_t)(seg - (char *)ctrl) / 16;
	if ((wr->send_flags & IBV_SEND_INLINE) && wr->num_sge) {
		size += set_inline(sq, (char *)ctrl, seg, wr, &err);
		if (err)
			return err;
	} else {
		size += set_data(seg, wr);
	}
	ctrl->fence_size = (uint8_t)((wr->send_flags & IBV_SEND_FENCE ? MLX4_WQE_CTRL_FENCE : 0) |
				     size);
	/* Release: a daemon that sees the owner bit reads the whole WQE. */
	__atomic_store_n(&ctrl->owner_opcode,
			 htobe32(rocemu_mlx4_owner_opcode((uint8_t)opcode, sq->cur_post, sq->wqe_cnt)),
			 __ATOMIC_RELEASE);
	idx = sq->cur_post & (sq->wqe_cnt - 1);
	sq->wrid[idx] = wr->wr_id;
	sq->wqe_head[idx] = sq->cur_post;
	sq->wr_opcode[idx] = (uint8_t)wr->opcode;
	rocemu_mlx4_sq_stamp(sq, sq->cur_post + sq->spare);
	sq->cur_post++;
	return 0;
}

int rocemu_mlx4_post_send_op(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
			     struct ibv_send_wr **bad_wr)
{
	struct rocemu_qp *qp = to_rqp(ibqp);
	struct rocemu_sq *sq = &qp->sq;
	uint32_t start;
	int err = 0;

	pthread_spin_lock(&sq->lock);
	start = sq->cur_post;
	for (; wr; wr = wr->next) {
		err = sq_post_one(qp, wr);
		if (__builtin_expect(err, 0)) {
			*bad_wr = wr;
			break;
		}
	}
	if (__builtin_expect(sq->cur_post != start, 1)) {
		/* The UAR's send doorbell, as libmlx4 rings it; the daemon goes by owner bits. */
		if (qp->layout.bf_size >= MLX4_SEND_DOORBELL + sizeof(uint32_t))
			__atomic_store_n((uint32_t *)(sq->bf + MLX4_SEND_DOORBELL),
					 htobe32(qp->qpn << 8), __ATOMIC_RELEASE);
		rocemu_ctx_doorbell(to_rctx(ibqp->context));
	}
	pthread_spin_unlock(&sq->lock);
	return err;
}

int rocemu_mlx4_post_recv_op(struct ibv_qp *ibqp, struct ibv_recv_wr *wr,
			     struct ibv_recv_wr **bad_wr)
{
	struct rocemu_rq *rq = &to_rqp(ibqp)->rq;
	struct mlx4_wqe_data_seg *scat;
	uint32_t start;
	int i, err = 0;

	pthread_spin_lock(&rq->lock);
	start = rq->head;
	for (; wr; wr = wr->next) {
		/* A QP with an SRQ has no RQ (wqe_cnt 0): full, as libmlx4's of max_post 0. */
		if (rq->head - __atomic_load_n(&rq->tail, __ATOMIC_ACQUIRE) >= rq->wqe_cnt ||
		    (uint32_t)wr->num_sge > rq->max_sge) {
			err = ENOMEM;
			*bad_wr = wr;
			break;
		}
		scat = (struct mlx4_wqe_data_seg *)(rq->buf + ((size_t)(rq->head & (rq->wqe_cnt - 1))
							       << rq->wqe_shift));
		for (i = 0; i < wr->num_sge; i++) {
			scat[i].byte_count = htobe32(wr->sg_list[i].length);
			scat[i].lkey = htobe32(wr->sg_list[i].lkey);
			scat[i].addr = htobe64(wr->sg_list[i].addr);
		}
		if ((uint32_t)i < rq->max_sge) {
			scat[i].byte_count = 0;
			scat[i].lkey = htobe32(MLX4_INVALID_LKEY);
			scat[i].addr = 0;
		}
		rq->wrid[rq->head & (rq->wqe_cnt - 1)] = wr->wr_id;
		rq->head++;
	}
	if (rq->head != start) {
		/* Release: a daemon that reads the new counter reads whole WQEs. */
		__atomic_store_n(&to_rqp(ibqp)->dbrec[0], rocemu_wq_dbrec_word(rq->head),
				 __ATOMIC_RELEASE);
		rocemu_ctx_recv_doorbell(to_rctx(ibqp->context));
	}
	pthread_spin_unlock(&rq->lock);
	return err;
}

/* libmlx4's mlx4_post_srq_recv answers -1 for a full SRQ and for too many SGEs alike. */
int rocemu_mlx4_post_srq_recv_op(struct ibv_srq *srq, struct ibv_recv_wr *wr,
				 struct ibv_recv_wr **bad_wr)
{
	return rocemu_srq_post(to_rsrq(srq), wr, bad_wr, -1, -1);
}
