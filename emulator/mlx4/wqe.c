/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#include "emulator/mlx4/wqe.h"

#include <errno.h>
#include <string.h>

#include "emulator/mlx5/wqe.h"
#include "emulator/obj/qp.h"
#include "net/roce/roce_hdr.h"
#include "rocemu/log.h"
#include "rocemu/ring_mlx4.h"

#define SEG_SIZE ROCEMU_WQE_SEG

static uint8_t *sq_wqe_addr(const struct rocemu_qp *qp, uint32_t i)
{
	return (uint8_t *)qp->rings.addr + qp->layout.sq_offset +
	       ((size_t)(i & (qp->layout.sq_wqe_cnt - 1)) << qp->layout.sq_wqe_shift);
}

static __be32 *sq_owner_word(const struct rocemu_qp *qp, uint32_t i)
{
	return (__be32 *)(sq_wqe_addr(qp, i) + offsetof(struct mlx4_wqe_ctrl_seg, owner_opcode));
}

static bool sq_wqe_posted(const struct rocemu_qp *qp, uint32_t i)
{
	/* Acquire: pairs with the poster's barrier before it hands the WQE over. */
	return rocemu_mlx4_wqe_posted(be32toh(__atomic_load_n(sq_owner_word(qp, i),
							      __ATOMIC_ACQUIRE)),
				      i, qp->layout.sq_wqe_cnt);
}

int rocemu_mlx4_sq_posted(const struct rocemu_qp *qp, uint32_t bb)
{
	uint32_t n = 0;

	while (n < qp->layout.sq_wqe_cnt && sq_wqe_posted(qp, bb + n))
		n++;
	return (int)n;
}

uint16_t rocemu_mlx4_sq_doorbell(const struct rocemu_qp *qp, uint32_t bb)
{
	return (uint16_t)(bb + (uint32_t)rocemu_mlx4_sq_posted(qp, bb));
}

void rocemu_mlx4_peek_dc(const struct rocemu_qp *qp, uint32_t bb, struct rocemu_send_dest *dest,
			 uint16_t *stream)
{
	(void)qp;
	(void)bb;
	*dest = (struct rocemu_send_dest){ 0 };
	*stream = 0;
}

/*
 * Inline segments from *off: each within one 64-byte chunk of the WQE,
 * the next starting only where one filled its chunk (libmlx4's post_send);
 * *off then is the 16-byte unit after them.
 */
static int parse_inline(const uint8_t *wqe, uint32_t *off, uint32_t end,
			struct rocemu_send_wqe *w)
{
	uint32_t pos = *off, count;

	while (pos + sizeof(count) <= end) {
		memcpy(&count, wqe + pos, sizeof(count));
		count = be32toh(count);
		if (!(count & MLX4_INLINE_SEG))
			break;
		count &= ~(uint32_t)MLX4_INLINE_SEG;
		if (count > end - pos - sizeof(count) ||
		    pos % MLX4_INLINE_ALIGN + sizeof(count) + count > MLX4_INLINE_ALIGN ||
		    count > ROCEMU_MAX_INLINE - w->inline_len)
			return -EINVAL;
		memcpy(w->inline_data + w->inline_len, wqe + pos + sizeof(count), count);
		w->inline_len += count;
		pos += sizeof(count) + count;
		if (pos % MLX4_INLINE_ALIGN)
			break;
	}
	*off = (pos + SEG_SIZE - 1) / SEG_SIZE * SEG_SIZE;
	return 0;
}

/* Data segments from off to end; libmlx4 writes a zero length as bit 31 alone. */
static int parse_sges(const uint8_t *wqe, uint32_t off, uint32_t end, struct rocemu_send_wqe *w)
{
	struct mlx4_wqe_data_seg d;
	uint32_t count;

	for (; off + SEG_SIZE <= end; off += SEG_SIZE) {
		memcpy(&d, wqe + off, sizeof(d));
		count = be32toh(d.byte_count);
		if (count == MLX4_INLINE_SEG || !count)
			continue;
		if (count & MLX4_INLINE_SEG || w->num_sge == ROCEMU_MAX_SGE ||
		    count > UINT32_MAX - w->length)
			return -EINVAL;
		w->sge[w->num_sge] = (struct rocemu_sge){ .addr = be64toh(d.addr),
							  .length = count,
							  .key = be32toh(d.lkey) };
		w->length += count;
		w->num_sge++;
	}
	return 0;
}

static void dest_parse(const struct mlx4_wqe_datagram_seg *dg, struct rocemu_send_dest *dest)
{
	dest->dqpn = be32toh(dg->dqpn) & ROCEMU_QPN_MASK;
	dest->qkey = be32toh(dg->qkey);
	dest->dc_key = 0;
	dest->udp_sport = rocemu_mlx4_av_udp_sport(&dg->av);
	memcpy(dest->rgid, dg->av.dgid, sizeof(dest->rgid));
}

static void bind_parse(const struct mlx4_wqe_bind_seg *b, struct rocemu_mw_bind *bind)
{
	uint32_t flags1 = be32toh(b->flags1), flags2 = be32toh(b->flags2);

	/* The WQE names the window by its new rkey alone: the index bits are the same. */
	bind->mw_key = be32toh(b->new_rkey);
	bind->new_rkey = be32toh(b->new_rkey);
	bind->mr_key = be32toh(b->lkey);
	bind->access = (flags1 & MLX4_WQE_MW_REMOTE_READ ? IBV_ACCESS_REMOTE_READ : 0) |
		       (flags1 & MLX4_WQE_MW_REMOTE_WRITE ? IBV_ACCESS_REMOTE_WRITE : 0) |
		       (flags1 & MLX4_WQE_MW_ATOMIC ? IBV_ACCESS_REMOTE_ATOMIC : 0) |
		       (flags2 & MLX4_WQE_BIND_ZERO_BASED ? IBV_ACCESS_ZERO_BASED : 0);
	bind->addr = be64toh(b->addr);
	bind->length = be64toh(b->length);
}

/* Bytes after ctrl that a QP type and an opcode put before the data (libmlx4 post_send). */
static uint32_t header_bytes(enum ibv_qp_type type, const struct rocemu_wqe_op *op)
{
	uint32_t n = sizeof(struct mlx4_wqe_ctrl_seg);

	if (type == IBV_QPT_UD)
		n += sizeof(struct mlx4_wqe_datagram_seg);
	if (op->flags & ROCEMU_WQE_OP_RADDR)
		n += sizeof(struct mlx4_wqe_raddr_seg);
	if (op->flags & ROCEMU_WQE_OP_ATOMIC)
		n += sizeof(struct mlx4_wqe_atomic_seg);
	if (op->flags & ROCEMU_WQE_OP_BIND)
		n += sizeof(struct mlx4_wqe_bind_seg);
	if ((op->flags & (ROCEMU_WQE_OP_INV | ROCEMU_WQE_OP_LOCAL)) ==
	    (ROCEMU_WQE_OP_INV | ROCEMU_WQE_OP_LOCAL))
		n += sizeof(struct mlx4_wqe_local_inval_seg);
	return n;
}

/* The segments after ctrl up to the data, at their places in wqe. */
static void parse_headers(const uint8_t *wqe, enum ibv_qp_type type, const struct rocemu_wqe_op *op,
			  struct rocemu_send_wqe *w)
{
	const uint8_t *seg = wqe + sizeof(struct mlx4_wqe_ctrl_seg);

	if (type == IBV_QPT_UD) {
		dest_parse((const void *)seg, &w->dest);
		seg += sizeof(struct mlx4_wqe_datagram_seg);
	}
	if (op->flags & ROCEMU_WQE_OP_RADDR) {
		const struct mlx4_wqe_raddr_seg *r = (const void *)seg;

		w->raddr = be64toh(r->raddr);
		w->rkey = be32toh(r->rkey);
		seg += sizeof(*r);
	}
	if (op->flags & ROCEMU_WQE_OP_ATOMIC) {
		const struct mlx4_wqe_atomic_seg *a = (const void *)seg;

		w->swap_add = be64toh(a->swap_add);
		w->compare = be64toh(a->compare);
	}
	if (op->flags & ROCEMU_WQE_OP_BIND)
		bind_parse((const void *)seg, &w->bind);
	/* LOCAL_INV: the key where the engines look for SEND_INV's, ctrl's imm. */
	if ((op->flags & (ROCEMU_WQE_OP_INV | ROCEMU_WQE_OP_LOCAL)) ==
	    (ROCEMU_WQE_OP_INV | ROCEMU_WQE_OP_LOCAL))
		w->imm = ((const struct mlx4_wqe_local_inval_seg *)seg)->mem_key;
}

/* QP types whose send WQEs a ConnectX-3 runs here. */
static bool type_sends(enum ibv_qp_type type)
{
	return type == IBV_QPT_RC || type == IBV_QPT_UC || type == IBV_QPT_UD ||
	       type == IBV_QPT_XRC_SEND;
}

int rocemu_mlx4_parse_send(const struct rocemu_qp *qp, uint32_t bb, uint32_t posted,
			   struct rocemu_send_wqe *w)
{
	uint8_t wqe[ROCEMU_MLX4_WQE_MAX_DS * SEG_SIZE];
	struct mlx4_wqe_ctrl_seg ctrl;
	const struct rocemu_wqe_op *op;
	uint32_t ds, end, off, srcrb;
	int err;

	w->bb = bb;
	w->bbs = 1;
	w->wqe_counter = (uint16_t)bb;
	w->umr = false;
	w->num_sge = 0;
	w->length = 0;
	w->inline_len = 0;
	if (!qp->layout.sq_wqe_cnt || !posted)
		return -EINVAL;
	memcpy(&ctrl, sq_wqe_addr(qp, bb), sizeof(ctrl));
	ds = ctrl.fence_size & ROCEMU_MLX4_WQE_MAX_DS;
	srcrb = be32toh(ctrl.srcrb_flags);
	w->opcode = (uint8_t)(be32toh(ctrl.owner_opcode) & ROCEMU_MLX4_OPCODE_MASK);
	w->signaled = srcrb & MLX4_WQE_CTRL_CQ_UPDATE;
	w->solicited = srcrb & MLX4_WQE_CTRL_SOLICIT;
	w->fence = ctrl.fence_size & MLX4_WQE_CTRL_FENCE;
	w->imm = ctrl.imm;
	w->xrc_srqn = qp->type == IBV_QPT_XRC_SEND ?
		rocemu_mlx4_xrc_srqn(ctrl.srcrb_flags) & ROCEMU_QPN_MASK : 0;
	end = ds * SEG_SIZE;
	if (!ds || end > 1u << qp->layout.sq_wqe_shift)
		return -EINVAL;
	op = rocemu_ring_wqe_op(qp->owner->dev->format, w->opcode);
	if (!type_sends(qp->type) || !rocemu_wqe_op_allowed(op, qp->type))
		return -EOPNOTSUPP;
	off = header_bytes(qp->type, op);
	if (end < off)
		return -EINVAL;
	memcpy(wqe, sq_wqe_addr(qp, bb), end);
	parse_headers(wqe, qp->type, op, w);
	if (!(op->flags & ROCEMU_WQE_OP_DATA))
		return 0;
	err = parse_inline(wqe, &off, end, w);
	if (err)
		return err;
	w->length = w->inline_len;
	return parse_sges(wqe, off, end, w);
}

void rocemu_mlx4_doorbell_reset(struct rocemu_qp *qp)
{
	rocemu_wqe_doorbell_reset(qp);
	for (uint32_t i = 0; i < qp->layout.sq_wqe_cnt; i++) {
		__be32 *owner = sq_owner_word(qp, i);

		__atomic_store_n(owner, *owner | htobe32(ROCEMU_MLX4_WQE_OWNER), __ATOMIC_RELEASE);
	}
	qp->direct_seen = 0;
}

/* The send doorbell register in the UAR page: nonzero once rung, cleared by the look. */
static bool send_doorbell_rung(struct rocemu_qp *qp)
{
	uint32_t *reg = (uint32_t *)((uint8_t *)qp->rings.addr + qp->layout.bf_offset +
				     MLX4_SEND_DOORBELL);

	return qp->layout.bf_size > MLX4_SEND_DOORBELL &&
	       __atomic_exchange_n(reg, 0, __ATOMIC_ACQ_REL) != 0;
}

/*
 * direct_seen: the RQ doorbell record's word, and above it the next send
 * WQE the look expects (libmlx4's BlueFlame path rings no register).
 */
bool rocemu_mlx4_direct_rung(struct rocemu_qp *qp)
{
	const __be32 *rq_db = (const __be32 *)((const uint8_t *)qp->rings.addr +
					       qp->layout.dbrec_offset);
	uint32_t rq = be32toh(__atomic_load_n(rq_db, __ATOMIC_ACQUIRE));
	uint32_t sq = (uint32_t)(qp->direct_seen >> 32);
	bool rung = rq != (uint32_t)qp->direct_seen;

	if (qp->layout.sq_wqe_cnt) {
		uint32_t n = (uint32_t)rocemu_mlx4_sq_posted(qp, sq);

		rung |= n > 0;
		sq += n;
	}
	rung |= send_doorbell_rung(qp);
	qp->direct_seen = (uint64_t)sq << 32 | rq;
	return rung;
}
