/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The send queue writer: one mlx5 WQE (ctrl, raddr, atomic, data or
 * inline segments, big-endian) per work request, for ibv_post_send and the
 * ibv_qp_ex API alike, and the doorbell that hands a batch to the daemon.
 * Also the set-up of both queues of a QP. The ring is shared with the
 * daemon: the shim owns cur_post and the BBs between tail and cur_post
 * until the doorbell record says otherwise.
 */
#include "lib/shim.h"

#include <stdlib.h>
#include <string.h>

#define BB_SIZE ROCEMU_WQE_BB
#define SEG_SIZE ROCEMU_WQE_SEG

static uint32_t align_up(uint32_t v, uint32_t a)
{
	return (v + a - 1) & ~(a - 1);
}

size_t rocemu_wqe_elem(const struct rocemu_wqe *wqe, size_t i, const void **addr)
{
	if (wqe->buf) {
		*addr = wqe->buf[i].addr;
		return wqe->buf[i].length;
	}
	*addr = (const void *)(uintptr_t)wqe->sge[i].addr;
	return wqe->sge[i].length;
}

/* Element i's bytes that go into the data part, and where they are. */
static size_t data_elem(const struct rocemu_wqe *wqe, const struct rocemu_data_start *from, size_t i,
			const void **addr)
{
	size_t len = rocemu_wqe_elem(wqe, i, addr);

	if (i != from->first)
		return len;
	*addr = (const char *)*addr + from->offset;
	return len - from->offset;
}

/*
 * Size in 16-byte units of the data part, or 0 with *err set: ENOMEM for
 * more SGEs than max_send_sge or more inline bytes than max_inline_data,
 * as libmlx5's set_data_inl_seg and wr_set_sge_list/wr_set_inline_data say.
 */
static uint32_t data_ds(const struct rocemu_sq *sq, const struct rocemu_wqe *wqe, bool inl,
			const struct rocemu_data_start *from, size_t *inl_len, int *err)
{
	const void *addr;
	uint32_t ds = 0;
	size_t i, len, total = 0;

	if (__builtin_expect(wqe->sge && wqe->num > sq->max_sge, 0)) {
		*err = ENOMEM;
		return 0;
	}
	if (!inl) {
		for (i = from->first; i < wqe->num; i++)
			ds += wqe->sge[i].length != 0;	/* zero-length SGEs are skipped */
		return ds;
	}
	for (i = from->first; i < wqe->num; i++) {
		len = data_elem(wqe, from, i, &addr);
		if (__builtin_expect(len > sq->max_inline - total, 0)) {
			*err = ENOMEM;
			return 0;
		}
		total += len;
	}
	*inl_len = total;
	/* mlx5: no inline segment at all for zero bytes */
	return total ? align_up(sizeof(struct mlx5_wqe_inl_data_seg) + total, SEG_SIZE) / SEG_SIZE
		     : 0;
}

static void *wrap(const struct rocemu_sq *sq, void *seg)
{
	return seg == sq->qend ? sq->buf : seg;
}

static void *set_raddr_seg(void *seg, uint64_t raddr, uint32_t rkey)
{
	struct mlx5_wqe_raddr_seg *r = seg;

	r->raddr = htobe64(raddr);
	r->rkey = htobe32(rkey);
	r->reserved = 0;
	return r + 1;
}

static void *set_atomic_seg(void *seg, const struct rocemu_wqe *wqe, bool compare)
{
	struct mlx5_wqe_atomic_seg *a = seg;

	if (compare) {
		a->swap_add = htobe64(wqe->swap);
		a->compare = htobe64(wqe->compare_add);
	} else {
		a->swap_add = htobe64(wqe->compare_add);
		a->compare = 0;
	}
	return a + 1;
}

static void *set_bind_seg(void *seg, const struct rocemu_wqe *wqe)
{
	struct rocemu_wqe_bind_seg *b = seg;
	const struct ibv_mw_bind_info *info = wqe->bind_info;

	b->mw_rkey = htobe32(wqe->mw->rkey);
	b->new_rkey = htobe32(wqe->bind_rkey);
	b->mr_lkey = htobe32(info->mr ? info->mr->lkey : 0);
	b->access = htobe32(info->mw_access_flags);
	b->addr = htobe64(info->addr);
	b->length = htobe64(info->length);
	return b + 1;
}

/*
 * UD: the AH's address vector with the WR's destination QP and Q_Key
 * (mlx5 set_datagram_seg); DCI: with the DCT and its access key
 * (mlx5_send_wr_set_dc_addr).
 */
static void *set_datagram_seg(void *seg, const struct rocemu_wqe *wqe, bool dc)
{
	struct mlx5_wqe_datagram_seg *d = seg;

	d->av = to_rah(wqe->ah)->av;
	d->av.dqp_dct = htobe32(wqe->remote_qpn | MLX5_EXTENDED_UD_AV);
	if (dc)
		d->av.key.dc_key = htobe64(wqe->dc_key);
	else
		d->av.key.qkey.qkey = htobe32(wqe->remote_qkey);
	return d + 1;
}

/* XRC: the SRQ at the target (mlx5 post_send's xrc_seg). */
static void *set_xrc_seg(void *seg, const struct rocemu_wqe *wqe)
{
	struct rocemu_wqe_xrc_seg *x = seg;

	memset(x, 0, sizeof(*x));
	x->xrc_srqn = htobe32(wqe->remote_srqn);
	return x + 1;
}

/*
 * An atomic's SGE takes its 8 bytes whatever length it says, as libmlx5
 * writes it; a RAW_PACKET send's first SGE may start past its inline bytes.
 */
static void *set_data_seg(const struct rocemu_sq *sq, void *seg, const struct ibv_sge *sg,
			  bool atomic, size_t offset)
{
	struct mlx5_wqe_data_seg *d = wrap(sq, seg);

	d->byte_count = htobe32(atomic ? sizeof(uint64_t) : sg->length - (uint32_t)offset);
	d->lkey = htobe32(sg->lkey);
	d->addr = htobe64(sg->addr + offset);
	return d + 1;
}

char *rocemu_sq_copy(const struct rocemu_sq *sq, char *dst, const void *src, size_t len)
{
	size_t room = (size_t)(sq->qend - dst);

	if (__builtin_expect(len > room, 0)) {
		memcpy(dst, src, room);
		src = (const char *)src + room;
		len -= room;
		dst = sq->buf;
	}
	memcpy(dst, src, len);
	return dst + len;
}

static void set_inline_seg(const struct rocemu_sq *sq, void *seg, const struct rocemu_wqe *wqe,
			   const struct rocemu_data_start *from, size_t total)
{
	struct mlx5_wqe_inl_data_seg *hdr = wrap(sq, seg);
	char *dst = (char *)(hdr + 1);
	const void *addr;
	size_t i, len;

	hdr->byte_count = htobe32((uint32_t)total | MLX5_INLINE_SEG);
	for (i = from->first; i < wqe->num; i++) {
		len = data_elem(wqe, from, i, &addr);
		if (len)
			dst = rocemu_sq_copy(sq, dst, addr, len);
	}
}

/* The ctrl segment's completion, solicited-event and fence bits of WR flags. */
static uint8_t wqe_fm_ce_se(const struct rocemu_qp *qp, unsigned int flags)
{
	return ((flags & IBV_SEND_SIGNALED) || qp->sq_sig_all ? MLX5_WQE_CTRL_CQ_UPDATE : 0) |
	       (flags & IBV_SEND_SOLICITED ? MLX5_WQE_CTRL_SOLICITED : 0) |
	       (flags & IBV_SEND_FENCE ? MLX5_WQE_CTRL_FENCE : 0);
}

/* Where the next WQE of bbs BBs goes, or NULL when the ring lacks room for it. */
static struct mlx5_wqe_ctrl_seg *sq_claim(struct rocemu_sq *sq, uint32_t bbs)
{
	/* Acquire: the daemon finished reading the BBs the poller freed. */
	uint32_t tail = __atomic_load_n(&sq->tail, __ATOMIC_ACQUIRE);

	if (__builtin_expect(sq->cur_post - tail + bbs > sq->wqe_cnt, 0))
		return NULL;
	return (struct mlx5_wqe_ctrl_seg *)(sq->buf +
					    (size_t)(sq->cur_post & (sq->wqe_cnt - 1)) * BB_SIZE);
}

/* The WQE at ctrl, of bbs BBs, is posted: what its completion needs, then the counter. */
static void sq_account(struct rocemu_sq *sq, struct mlx5_wqe_ctrl_seg *ctrl, uint32_t bbs,
		       uint64_t wr_id, enum ibv_wr_opcode opcode)
{
	uint32_t idx = sq->cur_post & (sq->wqe_cnt - 1);

	sq->wrid[idx] = wr_id;
	sq->wqe_head[idx] = sq->cur_post + bbs - 1;
	sq->wr_opcode[idx] = (uint8_t)opcode;
	sq->last_ctrl = ctrl;
	sq->cur_post += bbs;
}

int rocemu_sq_write_segs(struct rocemu_qp *qp, uint8_t opcode, uint8_t fence, __be32 imm,
			 const void *segs, size_t len, uint64_t wr_id, unsigned int flags,
			 enum ibv_wr_opcode wr_opcode)
{
	struct rocemu_sq *sq = &qp->sq;
	struct mlx5_wqe_ctrl_seg *ctrl;
	uint32_t ds = (uint32_t)(1 + len / SEG_SIZE), bbs = rocemu_wqe_ds_bbs(ds);

	if (__builtin_expect(bbs > sq->max_wqe_bbs, 0))
		return EINVAL;
	ctrl = sq_claim(sq, bbs);
	if (__builtin_expect(!ctrl, 0))
		return ENOMEM;
	mlx5dv_set_ctrl_seg(ctrl, (uint16_t)sq->cur_post, opcode, 0, qp->qpn,
			    wqe_fm_ce_se(qp, flags) | fence, (uint8_t)ds, 0, imm);
	ctrl->dci_stream_channel_id = 0;
	rocemu_sq_copy(sq, (char *)(ctrl + 1), segs, len);
	sq_account(sq, ctrl, bbs, wr_id, wr_opcode);
	return 0;
}

int rocemu_sq_write(struct rocemu_qp *qp, const struct rocemu_wqe *wqe)
{
	struct rocemu_sq *sq = &qp->sq;
	struct mlx5_wqe_ctrl_seg *ctrl;
	const struct rocemu_wqe_op *op;
	struct rocemu_data_start from = { 0, 0 };
	uint32_t ds, bbs, eth_ds = 0;
	size_t i, inl_len = 0;
	int opcode, err = 0;
	enum ibv_qp_type type;
	bool inl;
	void *seg;

	opcode = rocemu_wqe_opcode_of_wr(wqe->opcode);
	if (__builtin_expect(opcode < 0, 0))
		return EINVAL;
	op = rocemu_wqe_op((uint8_t)opcode);
	type = qp->type;
	if (__builtin_expect(!rocemu_wqe_op_allowed(op, type), 0))
		return EINVAL;
	if (__builtin_expect((type == IBV_QPT_UD || type == ROCEMU_QPT_DCI) && !wqe->ah, 0))
		return EINVAL;
	/* Inline data from a buffer list (wr API) only where the opcode sends data. */
	if (__builtin_expect(wqe->buf && !(op->flags & ROCEMU_WQE_OP_INLINE), 0))
		return EINVAL;
	/* IBV_SEND_INLINE means nothing to READ and atomics: their data comes back. */
	inl = wqe->buf || ((wqe->flags & IBV_SEND_INLINE) && (op->flags & ROCEMU_WQE_OP_INLINE));
	if (type == IBV_QPT_RAW_PACKET) {
		err = rocemu_eth_seg_check(qp, wqe, inl, &from, &eth_ds);
		if (__builtin_expect(err, 0))
			return err;
	}
	ds = data_ds(sq, wqe, inl, &from, &inl_len, &err);
	if (__builtin_expect(err, 0))
		return err;
	if (__builtin_expect((op->flags & ROCEMU_WQE_OP_BIND) && (!wqe->mw || !wqe->bind_info), 0))
		return EINVAL;
	ds += rocemu_wqe_op_header_ds(op) +
	      (type == IBV_QPT_RAW_PACKET ? eth_ds : rocemu_wqe_qp_header_ds(type));
	bbs = rocemu_wqe_ds_bbs(ds);
	if (__builtin_expect(bbs > sq->max_wqe_bbs, 0))
		return EINVAL;
	ctrl = sq_claim(sq, bbs);
	if (__builtin_expect(!ctrl, 0))
		return ENOMEM;
	/* The WQE index is the low 16 bits of cur_post (ring.h: SQ indices). */
	mlx5dv_set_ctrl_seg(ctrl, (uint16_t)sq->cur_post, (uint8_t)opcode, 0, qp->qpn,
			    wqe_fm_ce_se(qp, wqe->flags), (uint8_t)ds, 0, wqe->imm);
	ctrl->dci_stream_channel_id = htobe16(wqe->dci_stream);
	/*
	 * ctrl with raddr and atomic (and XRC's segment), or with the datagram,
	 * fit the first BB; a DCI's raddr starts the second, which may be BB 0.
	 */
	seg = ctrl + 1;
	if (type == IBV_QPT_UD || type == ROCEMU_QPT_DCI)
		seg = wrap(sq, set_datagram_seg(seg, wqe, type == ROCEMU_QPT_DCI));
	else if (type == IBV_QPT_XRC_SEND)
		seg = set_xrc_seg(seg, wqe);
	else if (type == IBV_QPT_RAW_PACKET)
		seg = rocemu_eth_seg_write(sq, seg, wqe, eth_ds);
	if (op->flags & ROCEMU_WQE_OP_RADDR)
		seg = set_raddr_seg(seg, wqe->raddr, wqe->rkey);
	if (op->flags & ROCEMU_WQE_OP_ATOMIC)
		seg = set_atomic_seg(seg, wqe, op->flags & ROCEMU_WQE_OP_COMPARE);
	if (op->flags & ROCEMU_WQE_OP_BIND)
		seg = set_bind_seg(seg, wqe);
	if (inl) {
		if (inl_len)
			set_inline_seg(sq, seg, wqe, &from, inl_len);
	} else {
		for (i = from.first; i < wqe->num; i++)
			if (wqe->sge[i].length)
				seg = set_data_seg(sq, seg, &wqe->sge[i],
						   op->flags & ROCEMU_WQE_OP_ATOMIC,
						   i == from.first ? from.offset : 0);
	}

	sq_account(sq, ctrl, bbs, wqe->wr_id, wqe->opcode);
	return 0;
}

void rocemu_sq_ring(struct rocemu_qp *qp)
{
	struct rocemu_sq *sq = &qp->sq;

	/* Release: a daemon that reads the new counter reads whole WQEs. */
	__atomic_store_n(&qp->dbrec[MLX5_SND_DBR], rocemu_wq_dbrec_word(sq->cur_post),
			 __ATOMIC_RELEASE);
	/* Full barrier: the record is visible before the BlueFlame copy (mlx5 mmio_wc_start). */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (sq->bf_half >= BB_SIZE) {
		memcpy(sq->bf + sq->bf_toggle, sq->last_ctrl, BB_SIZE);
		sq->bf_toggle ^= sq->bf_half;
	}
	rocemu_ctx_doorbell(to_rctx(qp->qpx.qp_base.context));
}

int rocemu_qp_queues_init(struct rocemu_qp *qp)
{
	const struct rocemu_qp_layout *l = &qp->layout;
	struct rocemu_sq *sq = &qp->sq;
	struct rocemu_rq *rq = &qp->rq;
	char *map = qp->map;

	if ((l->sq_wqe_cnt & (l->sq_wqe_cnt - 1)) || (l->rq_wqe_cnt & (l->rq_wqe_cnt - 1)))
		return EPROTO;
	pthread_spin_init(&sq->lock, PTHREAD_PROCESS_PRIVATE);
	pthread_spin_init(&rq->lock, PTHREAD_PROCESS_PRIVATE);
	/* one spare entry: a queue of 0 entries still gets an allocation */
	sq->wrid = calloc(l->sq_wqe_cnt + 1, sizeof(*sq->wrid));
	sq->wqe_head = calloc(l->sq_wqe_cnt + 1, sizeof(*sq->wqe_head));
	sq->wr_opcode = calloc(l->sq_wqe_cnt + 1, sizeof(*sq->wr_opcode));
	rq->wrid = calloc(l->rq_wqe_cnt + 1, sizeof(*rq->wrid));
	if (!sq->wrid || !sq->wqe_head || !sq->wr_opcode || !rq->wrid) {
		rocemu_qp_queues_free(qp);
		return ENOMEM;
	}
	rocemu_qp_queues_state(qp, IBV_QPS_RESET);
	if (!map)	/* an RSS QP: no queue of its own, nothing to post (wqe_cnt 0) */
		return 0;
	qp->dbrec = (__be32 *)(map + l->dbrec_offset);
	sq->buf = map + l->sq_offset;
	sq->wqe_shift = rocemu_sq_entry_shift(qp->qpx.qp_base.context, l);
	sq->qend = sq->buf + ((size_t)l->sq_wqe_cnt << sq->wqe_shift);
	sq->wqe_cnt = l->sq_wqe_cnt;
	sq->max_wqe_bbs = rocemu_sq_wqe_bbs(qp->type, qp->cap.max_send_sge,
					     qp->cap.max_inline_data, qp->max_tso_header);
	sq->max_sge = qp->cap.max_send_sge;
	sq->max_inline = qp->cap.max_inline_data;
	sq->bf = map + l->bf_offset;
	sq->bf_half = l->bf_size / 2;
	rq->buf = map + l->rq_offset;
	rq->wqe_cnt = l->rq_wqe_cnt;
	rq->wqe_shift = l->rq_wqe_shift;
	rq->max_sge = qp->cap.max_recv_sge;
	return 0;
}

/*
 * What the QP's state lets a poster post, as mlx5's qp_state_max_gs: the
 * receive queue from INIT on, the send queue from RTS on, neither in RESET.
 */
void rocemu_qp_queues_state(struct rocemu_qp *qp, enum ibv_qp_state state)
{
	switch (state) {
	case IBV_QPS_RESET:
		qp->sq.state_max_sge = -1;
		qp->rq.state_max_sge = -1;
		break;
	case IBV_QPS_INIT:
		qp->rq.state_max_sge = (int32_t)qp->rq.max_sge;
		break;
	case IBV_QPS_RTS:
		qp->sq.state_max_sge = (int32_t)qp->sq.max_sge;
		break;
	default:
		break;
	}
}

void rocemu_qp_queues_reset(struct rocemu_qp *qp)
{
	struct rocemu_sq *sq = &qp->sq;
	struct rocemu_rq *rq = &qp->rq;

	pthread_spin_lock(&sq->lock);
	sq->cur_post = 0;
	__atomic_store_n(&sq->tail, 0, __ATOMIC_RELEASE);
	memset(sq->wrid, 0, (sq->wqe_cnt + 1) * sizeof(*sq->wrid));
	memset(sq->wqe_head, 0, (sq->wqe_cnt + 1) * sizeof(*sq->wqe_head));
	memset(sq->wr_opcode, 0, (sq->wqe_cnt + 1) * sizeof(*sq->wr_opcode));
	sq->last_ctrl = NULL;
	__atomic_store_n(&qp->dbrec[MLX5_SND_DBR], 0, __ATOMIC_RELEASE);
	pthread_spin_unlock(&sq->lock);
	pthread_spin_lock(&rq->lock);
	rq->head = 0;
	__atomic_store_n(&rq->tail, 0, __ATOMIC_RELEASE);
	memset(rq->wrid, 0, (rq->wqe_cnt + 1) * sizeof(*rq->wrid));
	__atomic_store_n(&qp->dbrec[MLX5_RCV_DBR], 0, __ATOMIC_RELEASE);
	pthread_spin_unlock(&rq->lock);
}

void rocemu_qp_queues_free(struct rocemu_qp *qp)
{
	free(qp->sq.wrid);
	free(qp->sq.wqe_head);
	free(qp->sq.wr_opcode);
	free(qp->rq.wrid);
	pthread_spin_destroy(&qp->sq.lock);
	pthread_spin_destroy(&qp->rq.lock);
}
