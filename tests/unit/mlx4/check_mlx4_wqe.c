/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The mlx4 ring format's send side (emulator/mlx4/wqe.c) read back from
 * WQEs written as libmlx4's post_send writes them: every opcode with its
 * segments, inline data split at 64-byte boundaries, UD's datagram
 * segment and UDP source port, XRC's remote SRQ, the owner bit of odd
 * passes and the wrap, stamped spare WQEs never posted; a QP reset owns
 * every WQE again; bad WQEs are -EINVAL; a direct program's doorbells are
 * noticed.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <infiniband/mlx4dv.h>

#include "emulator/mlx4/format.h"
#include "emulator/mlx4/wqe.h"
#include "emulator/obj/qp.h"
#include "rocemu/ring_mlx4.h"
#include "tests/unit/fixture.h"

#define CNT 16u
#define SHIFT 8u			/* 256-byte WQEs: four 64-byte chunks */
#define SPARE 2u			/* stamped ahead, never posted */
#define DBREC_OFF ((size_t)CNT << SHIFT)
#define UAR_OFF 8192u
#define RING_BYTES (UAR_OFF + ROCEMU_MLX4_UAR_SIZE)

static struct rocemu_qp qp;
static uint8_t *ring;
static uint32_t head;
static const struct rocemu_ring_format *saved_format;

/* A work request as the test posts it, in libmlx4's terms. */
struct wr {
	uint8_t opcode;			/* MLX4_OPCODE_* */
	bool signaled, solicited, fence, inl;
	uint32_t imm;			/* host order; SEND_INVAL: the rkey */
	uint64_t raddr;
	uint32_t rkey;
	uint64_t swap, compare;
	uint32_t inv_key;		/* LOCAL_INVAL */
	uint32_t dqpn, qkey, flow_label;	/* UD */
	uint16_t dlid;
	uint32_t xrc_srqn;
	unsigned int nsge;
	struct ibv_sge sge[8];
};

static uint8_t *wqe_at(uint32_t i)
{
	return ring + ((size_t)(i & (CNT - 1)) << SHIFT);
}

/* libmlx4's stamp_send_wqe: 0xffffffff at each 64-byte chunk after the first. */
static void stamp(uint32_t i)
{
	struct mlx4_wqe_ctrl_seg *ctrl = (void *)wqe_at(i);
	uint32_t ds = (ctrl->fence_size & 0x3f) * 16u;

	for (uint32_t off = 64; off < ds; off += 64)
		memset(wqe_at(i) + off, 0xff, 4);
}

static void ring_init(enum ibv_qp_type type)
{
	ring = aligned_alloc(4096, RING_BYTES);
	ck_assert_ptr_nonnull(ring);
	memset(ring, 0, RING_BYTES);
	/* mlx4_qp_init_sq_ownership */
	for (uint32_t i = 0; i < CNT; i++) {
		struct mlx4_wqe_ctrl_seg *ctrl = (void *)wqe_at(i);

		ctrl->owner_opcode = htobe32(ROCEMU_MLX4_WQE_OWNER);
		ctrl->fence_size = 1u << (SHIFT - 4);
		stamp(i);
	}
	qp = (struct rocemu_qp){ 0 };
	qp.owner = fx.client;
	qp.type = type;
	qp.qpn = 0x123;
	qp.rings.addr = ring;
	qp.layout = (struct rocemu_qp_layout){ .qpn = 0x123, .sq_wqe_cnt = CNT, .sq_wqe_shift = SHIFT,
					       .sq_offset = 0, .dbrec_offset = DBREC_OFF,
					       .bf_offset = UAR_OFF, .bf_size = ROCEMU_MLX4_UAR_SIZE };
	head = 0;
}

static void setup(void)
{
	fx_setup();
	saved_format = fx.dev->format;
	fx.dev->format = &rocemu_ring_mlx4;
	ring_init(IBV_QPT_RC);
}

static void teardown(void)
{
	free(ring);
	fx.dev->format = saved_format;
	fx_teardown();
}

/* Inline data as libmlx4 lays it: a new segment header wherever a 64-byte chunk fills. */
static uint32_t write_inline(uint8_t *wqe, uint32_t off, const struct wr *wr)
{
	uint32_t seg = off, pos = off + 4, seg_len = 0, total = 0, nseg = 0;

	for (unsigned int i = 0; i < wr->nsge; i++) {
		const uint8_t *src = (const uint8_t *)(uintptr_t)wr->sge[i].addr;
		uint32_t len = wr->sge[i].length;

		total += len;
		while (len >= 64 - pos % 64) {
			uint32_t n = 64 - pos % 64;

			memcpy(wqe + pos, src, n);
			src += n;
			len -= n;
			pos += n;
			seg_len += n;
			*(__be32 *)(wqe + seg) = htobe32(MLX4_INLINE_SEG | seg_len);
			seg_len = 0;
			seg = pos;
			pos += 4;
			nseg++;
		}
		memcpy(wqe + pos, src, len);
		pos += len;
		seg_len += len;
	}
	if (seg_len) {
		nseg++;
		*(__be32 *)(wqe + seg) = htobe32(MLX4_INLINE_SEG | seg_len);
	}
	return (total + nseg * 4 + 15) / 16;
}

/* One WQE at head as mlx4_post_send writes it; returns its index. */
static uint32_t post(const struct wr *wr)
{
	uint32_t i = head++;
	uint8_t *wqe = wqe_at(i);
	struct mlx4_wqe_ctrl_seg *ctrl = (void *)wqe;
	uint32_t off = sizeof(*ctrl), size = 1;

	ctrl->srcrb_flags = htobe32((wr->signaled ? MLX4_WQE_CTRL_CQ_UPDATE : 0) |
				    (wr->solicited ? MLX4_WQE_CTRL_SOLICIT : 0));
	ctrl->imm = htobe32(wr->imm);
	if (qp.type == IBV_QPT_XRC_SEND)
		ctrl->srcrb_flags |= htobe32(wr->xrc_srqn << 8);
	if (qp.type == IBV_QPT_UD) {
		struct mlx4_wqe_datagram_seg *dg = (void *)(wqe + off);

		memset(dg, 0, sizeof(*dg));
		dg->av.sl_tclass_flowlabel = htobe32(wr->flow_label);
		dg->av.dlid = htobe16(wr->dlid);
		memset(dg->av.dgid + 10, 0xff, 2);
		dg->av.dgid[12] = 192, dg->av.dgid[15] = 7;
		dg->dqpn = htobe32(wr->dqpn);
		dg->qkey = htobe32(wr->qkey);
		off += sizeof(*dg);
	}
	switch (wr->opcode) {
	case MLX4_OPCODE_ATOMIC_CS:
	case MLX4_OPCODE_ATOMIC_FA:
	case MLX4_OPCODE_RDMA_READ:
	case MLX4_OPCODE_RDMA_WRITE:
	case MLX4_OPCODE_RDMA_WRITE_IMM: {
		struct mlx4_wqe_raddr_seg *r = (void *)(wqe + off);

		r->raddr = htobe64(wr->raddr);
		r->rkey = htobe32(wr->rkey);
		r->reserved = 0;
		off += sizeof(*r);
		if (wr->opcode == MLX4_OPCODE_ATOMIC_CS || wr->opcode == MLX4_OPCODE_ATOMIC_FA) {
			struct mlx4_wqe_atomic_seg *a = (void *)(wqe + off);

			a->swap_add = htobe64(wr->swap);
			a->compare = htobe64(wr->compare);
			off += sizeof(*a);
		}
		break;
	}
	case MLX4_OPCODE_LOCAL_INVAL: {
		struct mlx4_wqe_local_inval_seg *l = (void *)(wqe + off);

		memset(l, 0, sizeof(*l));
		l->mem_key = htobe32(wr->inv_key);
		off += sizeof(*l);
		break;
	}
	case MLX4_OPCODE_BIND_MW: {
		struct mlx4_wqe_bind_seg *b = (void *)(wqe + off);

		b->flags1 = htobe32(MLX4_WQE_MW_REMOTE_READ | MLX4_WQE_MW_REMOTE_WRITE);
		b->flags2 = htobe32(MLX4_WQE_BIND_TYPE_2);
		b->new_rkey = htobe32(wr->rkey);
		b->lkey = htobe32(wr->sge[0].lkey);
		b->addr = htobe64(wr->sge[0].addr);
		b->length = htobe64(wr->sge[0].length);
		off += sizeof(*b);
		break;
	}
	default:
		break;
	}
	size = off / 16;
	if (wr->inl && wr->nsge) {
		size += write_inline(wqe, off, wr);
	} else if (wr->opcode != MLX4_OPCODE_BIND_MW) {
		struct mlx4_wqe_data_seg *d = (void *)(wqe + off);

		for (unsigned int s = 0; s < wr->nsge; s++) {
			d[s].lkey = htobe32(wr->sge[s].lkey);
			d[s].addr = htobe64(wr->sge[s].addr);
			d[s].byte_count = htobe32(wr->sge[s].length ? wr->sge[s].length : 0x80000000u);
		}
		size += wr->nsge;
	}
	ctrl->fence_size = (uint8_t)((wr->fence ? MLX4_WQE_CTRL_FENCE : 0) | size);
	__atomic_store_n(&ctrl->owner_opcode,
			 htobe32(rocemu_mlx4_owner_opcode(wr->opcode, i, CNT)), __ATOMIC_RELEASE);
	stamp((i + SPARE) & (CNT - 1));
	return i;
}

static int parse(uint32_t i, struct rocemu_send_wqe *w)
{
	int posted = rocemu_mlx4_sq_posted(&qp, i);

	ck_assert_int_gt(posted, 0);
	return rocemu_mlx4_parse_send(&qp, i, (uint32_t)posted, w);
}

START_TEST(test_every_opcode)
{
	static uint8_t buf[64];
	struct wr base = { .signaled = true, .nsge = 1,
			   .sge = { { (uintptr_t)buf, sizeof(buf), 0x77 } },
			   .raddr = 0x1000, .rkey = 0xabcd01, .imm = 0x11223344 };
	const uint8_t ops[] = { MLX4_OPCODE_SEND, MLX4_OPCODE_SEND_IMM, MLX4_OPCODE_SEND_INVAL,
				MLX4_OPCODE_RDMA_WRITE, MLX4_OPCODE_RDMA_WRITE_IMM,
				MLX4_OPCODE_RDMA_READ, MLX4_OPCODE_ATOMIC_CS, MLX4_OPCODE_ATOMIC_FA,
				MLX4_OPCODE_LOCAL_INVAL, MLX4_OPCODE_BIND_MW, MLX4_OPCODE_NOP };
	struct rocemu_send_wqe w;

	for (size_t k = 0; k < sizeof(ops); k++) {
		struct wr wr = base;
		const struct rocemu_wqe_op *op = &rocemu_mlx4_wqe_ops[ops[k]];
		uint32_t i;

		wr.opcode = ops[k];
		wr.solicited = k & 1;
		wr.fence = k & 2;
		wr.swap = 5, wr.compare = 9, wr.inv_key = 0x4455;
		if (!(op->flags & ROCEMU_WQE_OP_DATA) && ops[k] != MLX4_OPCODE_BIND_MW)
			wr.nsge = 0;
		i = post(&wr);
		ck_assert_int_eq(parse(i, &w), 0);
		ck_assert_uint_eq(w.opcode, ops[k]);
		ck_assert_uint_eq(w.bbs, 1);
		ck_assert_uint_eq(w.wqe_counter, (uint16_t)i);
		ck_assert(w.signaled);
		ck_assert_int_eq(w.solicited, !!(k & 1));
		ck_assert_int_eq(w.fence, !!(k & 2));
		if (op->flags & ROCEMU_WQE_OP_RADDR) {
			ck_assert_uint_eq(w.raddr, 0x1000);
			ck_assert_uint_eq(w.rkey, 0xabcd01);
		}
		if (op->flags & ROCEMU_WQE_OP_ATOMIC) {
			ck_assert_uint_eq(w.swap_add, 5);
			ck_assert_uint_eq(w.compare, 9);
		}
		if (op->flags & ROCEMU_WQE_OP_DATA) {
			ck_assert_uint_eq(w.num_sge, 1);
			ck_assert_uint_eq(w.sge[0].addr, (uintptr_t)buf);
			ck_assert_uint_eq(w.sge[0].key, 0x77);
			ck_assert_uint_eq(w.length, sizeof(buf));
		}
		if (ops[k] == MLX4_OPCODE_LOCAL_INVAL)
			ck_assert_uint_eq(be32toh(w.imm), 0x4455);
		else
			ck_assert_uint_eq(be32toh(w.imm), 0x11223344);
		if (ops[k] == MLX4_OPCODE_BIND_MW) {
			ck_assert_uint_eq(w.bind.mw_key, 0xabcd01);
			ck_assert_uint_eq(w.bind.new_rkey, 0xabcd01);
			ck_assert_uint_eq(w.bind.mr_key, 0x77);
			ck_assert_uint_eq(w.bind.access,
					  IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE);
			ck_assert_uint_eq(w.bind.addr, (uintptr_t)buf);
			ck_assert_uint_eq(w.bind.length, sizeof(buf));
		}
	}
}
END_TEST

START_TEST(test_zero_length_sge)
{
	static uint8_t a[8], b[8];
	struct wr wr = { .opcode = MLX4_OPCODE_SEND, .nsge = 3,
			 .sge = { { (uintptr_t)a, 8, 1 }, { (uintptr_t)b, 0, 2 }, { (uintptr_t)b, 8, 3 } } };
	struct rocemu_send_wqe w;

	ck_assert_int_eq(parse(post(&wr), &w), 0);
	ck_assert_uint_eq(w.num_sge, 2);
	ck_assert_uint_eq(w.length, 16);
	ck_assert_uint_eq(w.sge[1].key, 3);
	ck_assert(!w.signaled);
}
END_TEST

/* 100 bytes after ctrl and raddr: segments of 28, 60 and 12 bytes. */
START_TEST(test_inline_across_chunks)
{
	static uint8_t a[40], b[60];
	struct wr wr = { .opcode = MLX4_OPCODE_RDMA_WRITE, .inl = true, .nsge = 2,
			 .sge = { { (uintptr_t)a, sizeof(a), 0 }, { (uintptr_t)b, sizeof(b), 0 } } };
	struct rocemu_send_wqe w;

	for (size_t k = 0; k < sizeof(a); k++)
		a[k] = (uint8_t)k;
	for (size_t k = 0; k < sizeof(b); k++)
		b[k] = (uint8_t)(0x80 + k);
	ck_assert_int_eq(parse(post(&wr), &w), 0);
	ck_assert_uint_eq(w.inline_len, 100);
	ck_assert_uint_eq(w.length, 100);
	ck_assert_uint_eq(w.num_sge, 0);
	ck_assert_mem_eq(w.inline_data, a, sizeof(a));
	ck_assert_mem_eq(w.inline_data + sizeof(a), b, sizeof(b));
}
END_TEST

/* Exactly filling a chunk: the header libmlx4 leaves unwritten after it is past ds. */
START_TEST(test_inline_fills_chunk)
{
	static uint8_t a[28];
	struct wr wr = { .opcode = MLX4_OPCODE_SEND, .inl = true, .nsge = 1,
			 .sge = { { (uintptr_t)a, sizeof(a), 0 } } };
	struct rocemu_send_wqe w;

	memset(a, 0x5a, sizeof(a));
	/* ctrl (16) + header (4) + 28 + the next header's 4 at byte 48: 36 bytes, not a chunk */
	ck_assert_int_eq(parse(post(&wr), &w), 0);
	ck_assert_uint_eq(w.inline_len, 28);
	wr.sge[0].length = 44;	/* fills bytes 20..63 */
	{
		static uint8_t big[44];

		memset(big, 0x33, sizeof(big));
		wr.sge[0].addr = (uintptr_t)big;
		ck_assert_int_eq(parse(post(&wr), &w), 0);
		ck_assert_uint_eq(w.inline_len, 44);
		ck_assert_mem_eq(w.inline_data, big, sizeof(big));
	}
}
END_TEST

START_TEST(test_ud_dest)
{
	static uint8_t a[16];
	struct wr wr = { .opcode = MLX4_OPCODE_SEND_IMM, .nsge = 1, .dqpn = 0x456, .qkey = 0x1111,
			 .flow_label = 0x12345, .sge = { { (uintptr_t)a, sizeof(a), 9 } } };
	struct rocemu_send_wqe w;

	free(ring);
	ring_init(IBV_QPT_UD);
	ck_assert_int_eq(parse(post(&wr), &w), 0);
	ck_assert_uint_eq(w.dest.dqpn, 0x456);
	ck_assert_uint_eq(w.dest.qkey, 0x1111);
	ck_assert_uint_eq(w.dest.udp_sport, ibv_flow_label_to_udp_sport(0x12345));
	ck_assert_uint_eq(w.dest.rgid[15], 7);
	ck_assert_uint_eq(w.length, sizeof(a));
	/* Without a flow label: the port the shim keeps in dlid. */
	wr.flow_label = 0;
	wr.dlid = 0xc456;
	ck_assert_int_eq(parse(post(&wr), &w), 0);
	ck_assert_uint_eq(w.dest.udp_sport, 0xc456);
	/* RDMA WRITE is no UD opcode. */
	wr.opcode = MLX4_OPCODE_RDMA_WRITE;
	ck_assert_int_eq(parse(post(&wr), &w), -EOPNOTSUPP);
}
END_TEST

START_TEST(test_xrc_srqn)
{
	struct wr wr = { .opcode = MLX4_OPCODE_SEND, .xrc_srqn = 0x00beef };
	struct rocemu_send_wqe w;

	free(ring);
	ring_init(IBV_QPT_XRC_SEND);
	ck_assert_int_eq(parse(post(&wr), &w), 0);
	ck_assert_uint_eq(w.xrc_srqn, 0x00beef);
}
END_TEST

/* Three passes: posted by the owner bit of each pass, the stamped spares never. */
START_TEST(test_owner_passes_and_wrap)
{
	struct wr wr = { .opcode = MLX4_OPCODE_NOP };
	struct rocemu_send_wqe w;
	uint32_t consumed = 0;

	ck_assert_int_eq(rocemu_mlx4_sq_posted(&qp, 0), 0);
	while (consumed < 3 * CNT) {
		uint32_t i = post(&wr);

		post(&wr);
		ck_assert_int_eq(rocemu_mlx4_sq_posted(&qp, consumed), 2);
		ck_assert_uint_eq(rocemu_mlx4_sq_doorbell(&qp, consumed), (uint16_t)(i + 2));
		ck_assert_int_eq(rocemu_mlx4_parse_send(&qp, i, 2, &w), 0);
		ck_assert_uint_eq(w.wqe_counter, (uint16_t)i);
		consumed += 2;
		ck_assert_int_eq(rocemu_mlx4_sq_posted(&qp, consumed), 0);
	}
	/* A full ring: every WQE posted, never more. */
	for (uint32_t k = 0; k < CNT; k++)
		post(&wr);
	ck_assert_int_eq(rocemu_mlx4_sq_posted(&qp, consumed), CNT);
}
END_TEST

START_TEST(test_bad_wqes)
{
	static uint8_t a[64];
	struct wr wr = { .opcode = MLX4_OPCODE_SEND, .nsge = 1,
			 .sge = { { (uintptr_t)a, sizeof(a), 1 } } };
	struct rocemu_send_wqe w;
	struct mlx4_wqe_ctrl_seg *ctrl;
	uint32_t i;

	/* ds past the 256-byte stride */
	i = post(&wr);
	ctrl = (void *)wqe_at(i);
	ctrl->fence_size = 17;
	ck_assert_int_eq(parse(i, &w), -EINVAL);
	ck_assert_uint_eq(w.bbs, 1);
	/* ds 0 */
	ctrl->fence_size = 0;
	ck_assert_int_eq(parse(i, &w), -EINVAL);
	/* an inline length past ds */
	i = post(&wr);
	ctrl = (void *)wqe_at(i);
	*(__be32 *)(wqe_at(i) + 16) = htobe32(MLX4_INLINE_SEG | 40);
	ctrl->fence_size = 3;
	ck_assert_int_eq(parse(i, &w), -EINVAL);
	/* an inline segment across 64 bytes, within ds */
	ctrl->fence_size = 6;
	*(__be32 *)(wqe_at(i) + 16) = htobe32(MLX4_INLINE_SEG | 48);
	ck_assert_int_eq(parse(i, &w), -EINVAL);
	/* a data segment with bit 31 and a length: a stamp, or inline after a pointer */
	i = post(&wr);
	*(__be32 *)(wqe_at(i) + 16) = htobe32(0xffffffffu);
	ck_assert_int_eq(parse(i, &w), -EINVAL);
	/* an opcode no ConnectX-3 runs here */
	wr.opcode = MLX4_OPCODE_LSO;
	ck_assert_int_eq(parse(post(&wr), &w), -EOPNOTSUPP);
}
END_TEST

START_TEST(test_too_many_sges)
{
	static uint8_t a[8];
	struct rocemu_send_wqe w;

	/* 1008-byte WQEs: room for 62 data segments, more than the emulator takes */
	free(ring);
	ring = aligned_alloc(4096, (size_t)CNT << 10);
	memset(ring, 0, (size_t)CNT << 10);
	qp.rings.addr = ring;
	qp.layout.sq_wqe_shift = 10;
	for (uint32_t k = 0; k < ROCEMU_MAX_SGE + 1; k++) {
		struct mlx4_wqe_data_seg *d = (void *)(ring + 16 + 16 * k);

		d->byte_count = htobe32(sizeof(a));
		d->lkey = htobe32(1);
		d->addr = htobe64((uintptr_t)a);
	}
	((struct mlx4_wqe_ctrl_seg *)ring)->fence_size = ROCEMU_MAX_SGE + 2;
	((struct mlx4_wqe_ctrl_seg *)ring)->owner_opcode = htobe32(MLX4_OPCODE_SEND);
	ck_assert_int_eq(rocemu_mlx4_parse_send(&qp, 0, 1, &w), -EINVAL);
	((struct mlx4_wqe_ctrl_seg *)ring)->fence_size = ROCEMU_MAX_SGE + 1;
	ck_assert_int_eq(rocemu_mlx4_parse_send(&qp, 0, 1, &w), 0);
	ck_assert_uint_eq(w.num_sge, ROCEMU_MAX_SGE);
	qp.layout.sq_wqe_shift = SHIFT;
}
END_TEST

/* After a reset the indices start at 0 again: the last pass's WQEs read as not posted. */
START_TEST(test_reset_owns_again)
{
	struct wr wr = { .opcode = MLX4_OPCODE_NOP };

	for (uint32_t k = 0; k < 3; k++)
		post(&wr);
	ck_assert_int_eq(rocemu_mlx4_sq_posted(&qp, 0), 3);
	*(__be32 *)(ring + DBREC_OFF) = htobe32(5);
	rocemu_mlx4_doorbell_reset(&qp);
	ck_assert_int_eq(rocemu_mlx4_sq_posted(&qp, 0), 0);
	ck_assert_uint_eq(*(__be32 *)(ring + DBREC_OFF), 0);
	head = 0;
	post(&wr);
	ck_assert_int_eq(rocemu_mlx4_sq_posted(&qp, 0), 1);
}
END_TEST

START_TEST(test_direct_doorbells)
{
	struct wr wr = { .opcode = MLX4_OPCODE_NOP };
	uint32_t *reg = (uint32_t *)(ring + UAR_OFF + MLX4_SEND_DOORBELL);

	ck_assert(!rocemu_mlx4_direct_rung(&qp));
	/* The BlueFlame path rings no register: the next WQE's owner bit says it. */
	post(&wr);
	ck_assert(rocemu_mlx4_direct_rung(&qp));
	ck_assert(!rocemu_mlx4_direct_rung(&qp));
	/* The send doorbell register, read and cleared. */
	*reg = htobe32(qp.qpn << 8);
	ck_assert(rocemu_mlx4_direct_rung(&qp));
	ck_assert_uint_eq(*reg, 0);
	ck_assert(!rocemu_mlx4_direct_rung(&qp));
	/* The RQ doorbell record. */
	*(__be32 *)(ring + DBREC_OFF) = htobe32(1);
	ck_assert(rocemu_mlx4_direct_rung(&qp));
	ck_assert(!rocemu_mlx4_direct_rung(&qp));
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("mlx4_wqe");
	TCase *tc = tcase_create("send");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_every_opcode);
	tcase_add_test(tc, test_zero_length_sge);
	tcase_add_test(tc, test_inline_across_chunks);
	tcase_add_test(tc, test_inline_fills_chunk);
	tcase_add_test(tc, test_ud_dest);
	tcase_add_test(tc, test_xrc_srqn);
	tcase_add_test(tc, test_owner_passes_and_wrap);
	tcase_add_test(tc, test_bad_wqes);
	tcase_add_test(tc, test_too_many_sges);
	tcase_add_test(tc, test_reset_owns_again);
	tcase_add_test(tc, test_direct_doorbells);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return fx_suite_run(suite());
}
