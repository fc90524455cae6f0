/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#include "emulator/mlx5/wqe.h"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <infiniband/mlx5dv.h>

#include "emulator/mem/mkey_indirect.h"
#include "emulator/obj/qp.h"
#include "emulator/obj/srq.h"
#include "net/roce/roce_hdr.h"
#include "rocemu/log.h"
#include "rocemu/ring.h"

#define BB_SIZE ROCEMU_WQE_BB
#define SEG_SIZE ROCEMU_WQE_SEG

static uint8_t *sq_bb_addr(const struct rocemu_qp *qp, uint32_t bb)
{
	return (uint8_t *)qp->rings.addr + qp->layout.sq_offset +
	       (size_t)(bb & (qp->layout.sq_wqe_cnt - 1)) * BB_SIZE;
}

static const __be32 *dbrec(const struct rocemu_qp *qp)
{
	return (const __be32 *)((const uint8_t *)qp->rings.addr + qp->layout.dbrec_offset);
}

uint16_t rocemu_wqe_sq_doorbell(const struct rocemu_qp *qp)
{
	/* Acquire: pairs with the shim's release store after writing WQEs. */
	return (uint16_t)be32toh(__atomic_load_n(&dbrec(qp)[MLX5_SND_DBR], __ATOMIC_ACQUIRE));
}

/* Entries from consumer to the 16-bit producer counter db, or -EINVAL past a ring of cnt. */
static int posted_within(uint16_t db, uint32_t consumer, uint32_t cnt)
{
	uint16_t n = (uint16_t)(db - consumer);

	return n <= cnt ? n : -EINVAL;
}

int rocemu_wqe_sq_posted(const struct rocemu_qp *qp, uint32_t bb)
{
	return qp->layout.sq_wqe_cnt ?
	       posted_within(rocemu_wqe_sq_doorbell(qp), bb, qp->layout.sq_wqe_cnt) : 0;
}

int rocemu_wqe_rq_posted(const struct rocemu_rq_ring *rq, uint32_t counter)
{
	const __be32 *db = rq->dbrec;

	/* Acquire: pairs with the shim's release store after writing WQEs. */
	return rq->wqe_cnt ?
	       posted_within((uint16_t)be32toh(__atomic_load_n(&db[MLX5_RCV_DBR], __ATOMIC_ACQUIRE)),
			     counter, rq->wqe_cnt) : 0;
}

bool rocemu_wqe_doorbell_written(const struct rocemu_qp *qp)
{
	unsigned char resident = 1;	/* if mincore fails: read it */

	/* A page of a memfd exists once touched: reading one that does not would allocate it. */
	mincore((uint8_t *)qp->rings.addr + qp->layout.dbrec_offset, (size_t)sysconf(_SC_PAGESIZE),
		&resident);
	return resident & 1;
}

bool rocemu_wqe_direct_rung(struct rocemu_qp *qp)
{
	/* Both words at once, acquire: the WQEs were written before the doorbell record. */
	uint64_t now = __atomic_load_n((const uint64_t *)dbrec(qp), __ATOMIC_ACQUIRE);
	bool changed = qp->direct_seen != now;

	qp->direct_seen = now;
	return changed;
}

void rocemu_wqe_doorbell_reset(struct rocemu_qp *qp)
{
	__be32 *db = (__be32 *)dbrec(qp);

	if (!rocemu_wqe_doorbell_written(qp))
		return;

	__atomic_store_n(&db[MLX5_RCV_DBR], 0, __ATOMIC_RELEASE);
	__atomic_store_n(&db[MLX5_SND_DBR], 0, __ATOMIC_RELEASE);
}

/*
 * Inline segments (each padded to 16 bytes), then data segments (zero-length
 * ones skipped), from seg on.
 */
static int parse_data(const uint8_t *seg, const uint8_t *end, struct rocemu_send_wqe *w)
{
	const struct mlx5_wqe_data_seg *d;
	uint32_t count;

	w->num_sge = 0;
	w->length = 0;
	w->inline_len = 0;
	for (; seg + sizeof(count) <= end; seg += (sizeof(count) + count + SEG_SIZE - 1) &
					       ~(size_t)(SEG_SIZE - 1)) {
		memcpy(&count, seg, sizeof(count));
		count = be32toh(count);
		if (!(count & MLX5_INLINE_SEG))
			break;
		count &= ~MLX5_INLINE_SEG;
		if (count > ROCEMU_MAX_INLINE - w->inline_len || count > (size_t)(end - seg) - 4)
			return -EINVAL;
		memcpy(w->inline_data + w->inline_len, seg + 4, count);
		w->inline_len += count;
	}
	w->length = w->inline_len;
	for (; seg + SEG_SIZE <= end; seg += SEG_SIZE) {
		d = (const struct mlx5_wqe_data_seg *)seg;
		if (be32toh(d->byte_count) & MLX5_INLINE_SEG)
			return -EINVAL;
		if (!d->byte_count)
			continue;
		if (w->num_sge == ROCEMU_MAX_SGE)
			return -EINVAL;
		w->sge[w->num_sge].length = be32toh(d->byte_count);
		w->sge[w->num_sge].key = be32toh(d->lkey);
		w->sge[w->num_sge].addr = be64toh(d->addr);
		if (w->sge[w->num_sge].length > UINT32_MAX - w->length)
			return -EINVAL;
		w->length += w->sge[w->num_sge].length;
		w->num_sge++;
	}
	return 0;
}

/* The datagram segment (UD's address handle, a DCI's DCT) at seg. */
static void dest_parse(const uint8_t *seg, struct rocemu_send_dest *dest)
{
	struct mlx5_wqe_av av;

	memcpy(&av, seg, sizeof(av));
	dest->dqpn = be32toh(av.dqp_dct) & ROCEMU_QPN_MASK;
	dest->qkey = be32toh(av.key.qkey.qkey);
	dest->dc_key = be64toh(av.key.dc_key);
	/* The shim keeps the UDP source port of the address handle where mlx5 has the LID. */
	dest->udp_sport = be16toh(av.rlid);
	memcpy(dest->rgid, av.rgid, sizeof(dest->rgid));
}

/*
 * A RAW_PACKET WQE's Ethernet segment at seg: its checksum flags, the mss
 * of a TSO and the inline header, which runs from inline_hdr_start past
 * the segment into the units after it (-EINVAL when past the WQE's end).
 */
static int eth_parse(const uint8_t *seg, const uint8_t *end, bool tso,
		     struct rocemu_send_eth *eth)
{
	const struct mlx5_wqe_eth_seg *e = (const void *)seg;
	uint32_t len = be16toh(e->inline_hdr_sz);

	if (len > ROCEMU_ETH_INLINE_HDR_MAX || rocemu_wqe_eth_seg_bytes(len) > (size_t)(end - seg))
		return -EINVAL;
	eth->l3_csum = e->cs_flags & MLX5_ETH_WQE_L3_CSUM;
	eth->l4_csum = e->cs_flags & MLX5_ETH_WQE_L4_CSUM;
	eth->mss = tso ? be16toh(e->mss) : 0;
	eth->hdr_len = (uint16_t)len;
	memcpy(eth->hdr, e->inline_hdr_start, len);
	return 0;
}

int rocemu_wqe_parse_send(const struct rocemu_qp *qp, uint32_t bb, uint32_t posted,
			  struct rocemu_send_wqe *w)
{
	uint8_t buf[ROCEMU_WQE_MAX_BBS * BB_SIZE];
	const struct mlx5_wqe_ctrl_seg *ctrl = (const void *)buf;
	const struct rocemu_wqe_op *op;
	const uint8_t *seg;
	uint32_t ds, i;

	/* A QP without a send queue has no ring to read, whatever its doorbell says. */
	if (!qp->layout.sq_wqe_cnt) {
		*w = (struct rocemu_send_wqe){ .bb = bb, .bbs = 1 };
		return -EINVAL;
	}
	/* One BB at a time: a WQE may wrap past the end of the ring into BB 0. */
	memcpy(buf, sq_bb_addr(qp, bb), BB_SIZE);
	ds = rocemu_wqe_ctrl_ds(ctrl);
	w->bb = bb;
	w->bbs = rocemu_wqe_ds_bbs(ds);
	w->opcode = rocemu_wqe_ctrl_opcode(ctrl);
	w->wqe_counter = rocemu_wqe_ctrl_index(ctrl);
	w->signaled = ctrl->fm_ce_se & MLX5_WQE_CTRL_CQ_UPDATE;
	w->solicited = ctrl->fm_ce_se & MLX5_WQE_CTRL_SOLICITED;
	w->fence = ctrl->fm_ce_se & (MLX5_WQE_CTRL_FENCE | MLX5_WQE_CTRL_INITIATOR_SMALL_FENCE);
	w->imm = ctrl->imm;
	w->umr = false;
	/* A WQE ends within what was posted (which the ring holds): else one BB is the step. */
	if (!ds || w->bbs > posted) {
		w->bbs = 1;
		return -EINVAL;
	}
	if (rocemu_wqe_ctrl_qpn(ctrl) != qp->qpn)
		return -EINVAL;
	for (i = 1; i < w->bbs; i++)
		memcpy(buf + i * BB_SIZE, sq_bb_addr(qp, bb + i), BB_SIZE);
	op = rocemu_wqe_op(w->opcode);
	if (!rocemu_wqe_op_allowed(op, qp->type))
		return -EOPNOTSUPP;
	if (ds < rocemu_wqe_op_header_ds(op) + rocemu_wqe_qp_header_ds(qp->type))
		return -EINVAL;
	seg = buf + sizeof(*ctrl);
	if (qp->type == IBV_QPT_UD || qp->type == ROCEMU_QPT_DCI)
		dest_parse(seg, &w->dest);
	if (qp->type == IBV_QPT_XRC_SEND)
		w->xrc_srqn = be32toh(((const struct rocemu_wqe_xrc_seg *)seg)->xrc_srqn) &
			      ROCEMU_QPN_MASK;
	if (qp->type == IBV_QPT_RAW_PACKET) {
		int err = eth_parse(seg, buf + ds * SEG_SIZE, op->flags & ROCEMU_WQE_OP_TSO, &w->eth);

		if (err)
			return err;
		seg += rocemu_wqe_eth_seg_bytes(w->eth.hdr_len);
	} else {
		seg += rocemu_wqe_qp_header_ds(qp->type) * SEG_SIZE;
	}
	if (op->flags & ROCEMU_WQE_OP_RADDR) {
		const struct mlx5_wqe_raddr_seg *r = (const void *)seg;

		w->raddr = be64toh(r->raddr);
		w->rkey = be32toh(r->rkey);
		seg += sizeof(*r);
	}
	if (op->flags & ROCEMU_WQE_OP_ATOMIC) {
		const struct mlx5_wqe_atomic_seg *a = (const void *)seg;

		w->swap_add = be64toh(a->swap_add);
		w->compare = be64toh(a->compare);
		seg += sizeof(*a);
	}
	/* UMR longer than rocemu's bind is libmlx5's UMR of an mkey. */
	if ((op->flags & ROCEMU_WQE_OP_BIND) && ds > rocemu_wqe_op_header_ds(op)) {
		w->umr = true;
		w->umr_op.key = be32toh(w->imm);
		w->num_sge = 0;
		return rocemu_umr_parse(seg, buf + ds * SEG_SIZE, &w->umr_op);
	}
	if (op->flags & ROCEMU_WQE_OP_BIND) {
		const struct rocemu_wqe_bind_seg *b = (const void *)seg;

		w->bind.mw_key = be32toh(b->mw_rkey);
		w->bind.new_rkey = be32toh(b->new_rkey);
		w->bind.mr_key = be32toh(b->mr_lkey);
		w->bind.access = be32toh(b->access);
		w->bind.addr = be64toh(b->addr);
		w->bind.length = be64toh(b->length);
		seg += sizeof(*b);
	}
	return parse_data(seg, buf + ds * SEG_SIZE, w);
}

void rocemu_wqe_peek_dc(const struct rocemu_qp *qp, uint32_t bb, struct rocemu_send_dest *dest,
			uint16_t *stream)
{
	uint8_t buf[BB_SIZE];
	const struct mlx5_wqe_ctrl_seg *ctrl = (const void *)buf;

	/* ctrl and the datagram segment fill the first BB exactly. */
	memcpy(buf, sq_bb_addr(qp, bb), BB_SIZE);
	dest_parse(buf + sizeof(*ctrl), dest);
	*stream = be16toh(ctrl->dci_stream_channel_id);
}

/* Receive data segments from base, n slots, up to the first invalid lkey. */
static void parse_recv_segs(const uint8_t *base, uint32_t n, uint32_t counter,
			    struct rocemu_recv_wqe *w)
{
	struct mlx5_wqe_data_seg d;
	uint32_t i;

	w->counter = counter;
	w->num_sge = 0;
	w->length = 0;
	for (i = 0; i < n && i < ROCEMU_MAX_SGE; i++) {
		memcpy(&d, base + i * SEG_SIZE, sizeof(d));
		if (be32toh(d.lkey) == MLX5_INVALID_LKEY)
			break;
		if (!d.byte_count)
			continue;
		w->sge[w->num_sge].length = be32toh(d.byte_count);
		w->sge[w->num_sge].key = be32toh(d.lkey);
		w->sge[w->num_sge].addr = be64toh(d.addr);
		w->length += w->sge[w->num_sge].length;
		w->num_sge++;
	}
}

int rocemu_wqe_parse_recv(const struct rocemu_rq_ring *rq, uint32_t counter,
			  struct rocemu_recv_wqe *w)
{
	uint32_t stride = 1u << rq->wqe_shift;
	const uint8_t *base = rq->buf + (size_t)(counter & (rq->wqe_cnt - 1)) * stride;

	parse_recv_segs(base, stride / SEG_SIZE, counter, w);
	return 0;
}

uint16_t rocemu_wqe_parse_srq(const struct rocemu_srq *srq, uint16_t index,
			      struct rocemu_recv_wqe *w)
{
	uint32_t stride = 1u << srq->layout.wqe_shift;
	const uint8_t *base = (const uint8_t *)srq->ring.addr + srq->layout.buf_offset +
			      (size_t)index * stride;
	struct mlx5_wqe_srq_next_seg next;

	memcpy(&next, base, sizeof(next));
	parse_recv_segs(base + sizeof(next), (stride - sizeof(next)) / SEG_SIZE, index, w);
	/* The link is the application's: masked, it stays inside the ring. */
	return be16toh(next.next_wqe_index) & (srq->layout.wqe_cnt - 1);
}

int rocemu_wqe_srq_posted(const struct rocemu_srq *srq, uint32_t taken)
{
	const __be32 *db = (const __be32 *)((const uint8_t *)srq->ring.addr +
					    srq->layout.dbrec_offset);

	/* Acquire: pairs with the shim's release store after writing WQEs. */
	return posted_within((uint16_t)be32toh(__atomic_load_n(db, __ATOMIC_ACQUIRE)), taken,
			     srq->layout.wqe_cnt);
}
