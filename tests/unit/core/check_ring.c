/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The shared-ring contract (include/rocemu/ring.h) against the formats of
 * <infiniband/mlx5dv.h> and the rules of rdma-core's mlx5 provider
 * (handle_good_req, handle_responder, mlx5_arm_cq, calc_sq_size): sizes,
 * the opcode tables, encodings, index widths, the sizing rule at its edges,
 * and the daemon's QP layout at the send queue cap and above it.
 */
#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "emulator/core/device.h"
#include "emulator/mlx5/format.h"
#include "emulator/obj/qp_layout.h"
#include "rocemu/ring.h"

#define N_ELEMS(a) (sizeof(a) / sizeof((a)[0]))

/* ---- sizes ---- */

START_TEST(test_sizes_match_mlx5dv)
{
	ck_assert_uint_eq(ROCEMU_WQE_BB, MLX5_SEND_WQE_BB);
	ck_assert_uint_eq(ROCEMU_WQE_BB, 1u << MLX5_SEND_WQE_SHIFT);
	ck_assert_uint_eq(ROCEMU_WQE_SEG, sizeof(struct mlx5_wqe_data_seg));
	ck_assert_uint_eq(ROCEMU_WQE_SEG, sizeof(struct mlx5_wqe_ctrl_seg));
	ck_assert_uint_eq(ROCEMU_WQE_SEG, sizeof(struct mlx5_wqe_raddr_seg));
	ck_assert_uint_eq(ROCEMU_WQE_SEG, sizeof(struct mlx5_wqe_atomic_seg));
	ck_assert_uint_eq(sizeof(struct mlx5_wqe_inl_data_seg), 4);
	ck_assert_uint_eq(sizeof(struct rocemu_wqe_bind_seg), 2 * ROCEMU_WQE_SEG);
	ck_assert_uint_eq(sizeof(struct mlx5_cqe64), 64);
	/* ds is 6 bits: 63 units of 16 bytes span 16 BBs */
	ck_assert_uint_eq(ROCEMU_WQE_DS_MASK, 63);
	ck_assert_uint_eq(ROCEMU_WQE_MAX_BBS, 16);
	ck_assert_uint_eq(rocemu_wqe_ds_bbs(1), 1);
	ck_assert_uint_eq(rocemu_wqe_ds_bbs(4), 1);
	ck_assert_uint_eq(rocemu_wqe_ds_bbs(5), 2);
	ck_assert_uint_eq(rocemu_wqe_ds_bbs(ROCEMU_WQE_DS_MASK), ROCEMU_WQE_MAX_BBS);
}
END_TEST

/* A 16-bit counter published from a free-running one: full and empty must differ. */
static bool full_looks_empty(uint32_t base, uint32_t ring)
{
	return rocemu_wq_dbrec_word(base + ring) == rocemu_wq_dbrec_word(base);
}

START_TEST(test_index_widths_do_not_alias)
{
	static const uint32_t bases[] = { 0, 1, 0x7fff, 0xfff0, 0x12345678, 0xffffffff };
	size_t i;

	ck_assert_uint_eq(ROCEMU_SQ_MAX_BBS, 1u << 15);	/* ConnectX log_max_qp_sz */
	ck_assert_uint_eq(ROCEMU_RQ_MAX_WQES, 1u << 15);
	for (i = 0; i < N_ELEMS(bases); i++) {
		ck_assert(!full_looks_empty(bases[i], ROCEMU_SQ_MAX_BBS));
		ck_assert(!full_looks_empty(bases[i], ROCEMU_RQ_MAX_WQES));
		/* the ring the old rule allowed: 32768 WQEs of 2 BBs */
		ck_assert(full_looks_empty(bases[i], 2 * ROCEMU_SQ_MAX_BBS));
	}
	ck_assert_uint_eq(be32toh(rocemu_wq_dbrec_word(0x12345678)), 0x5678);
	/* A CQ of max_cqe entries: producer minus consumer stays below 24 bits' half. */
	ck_assert_uint_le(rocemu_cq_size(ROCEMU_MAX_CQE), (ROCEMU_CQ_INDEX_MASK + 1u) / 2);
}
END_TEST

/* ---- the WQE opcode table ---- */

#define WC_LEN_CQE (-1)

/* rdma-core mlx5 handle_good_req; UMR and LOCAL_INVAL complete as the WR posted them. */
static const struct {
	uint8_t opcode;
	enum ibv_wc_opcode wc_opcode;
	unsigned int wc_flags;
	int byte_len;		/* WC_LEN_CQE: the CQE's byte_cnt */
} good_req[] = {
	{ MLX5_OPCODE_RDMA_WRITE, IBV_WC_RDMA_WRITE, 0, 0 },
	{ MLX5_OPCODE_RDMA_WRITE_IMM, IBV_WC_RDMA_WRITE, IBV_WC_WITH_IMM, 0 },
	{ MLX5_OPCODE_SEND, IBV_WC_SEND, 0, 0 },
	{ MLX5_OPCODE_SEND_IMM, IBV_WC_SEND, IBV_WC_WITH_IMM, 0 },
	{ MLX5_OPCODE_SEND_INVAL, IBV_WC_SEND, 0, 0 },
	{ MLX5_OPCODE_RDMA_READ, IBV_WC_RDMA_READ, 0, WC_LEN_CQE },
	{ MLX5_OPCODE_ATOMIC_CS, IBV_WC_COMP_SWAP, 0, 8 },
	{ MLX5_OPCODE_ATOMIC_FA, IBV_WC_FETCH_ADD, 0, 8 },
	{ MLX5_OPCODE_LOCAL_INVAL, IBV_WC_LOCAL_INV, 0, 0 },
	{ MLX5_OPCODE_UMR, IBV_WC_BIND_MW, 0, 0 },
	{ MLX5_OPCODE_NOP, IBV_WC_SEND, 0, 0 },	/* no work request's: UCX writes it itself */
};

START_TEST(test_wqe_ops_complete_as_mlx5)
{
	const struct rocemu_wqe_op *op = rocemu_wqe_op(good_req[_i].opcode);
	int byte_len = op->wc_len == ROCEMU_WC_LEN_CQE ? WC_LEN_CQE :
		       op->wc_len == ROCEMU_WC_LEN_ATOMIC ? 8 : 0;

	ck_assert_msg(op->flags & ROCEMU_WQE_OP_VALID, "opcode 0x%02x", good_req[_i].opcode);
	ck_assert_uint_eq(op->wc_opcode, good_req[_i].wc_opcode);
	ck_assert_uint_eq(op->wc_flags, good_req[_i].wc_flags);
	ck_assert_int_eq(byte_len, good_req[_i].byte_len);
}
END_TEST

#define RADDR ROCEMU_WQE_OP_RADDR
#define ATOMIC ROCEMU_WQE_OP_ATOMIC
#define DATA ROCEMU_WQE_OP_DATA
#define INLINE ROCEMU_WQE_OP_INLINE
#define BIND ROCEMU_WQE_OP_BIND
#define SEGMENT_FLAGS (RADDR | ATOMIC | DATA | INLINE | BIND)

/* Segments after ctrl, as mlx5's _mlx5_post_send builds them (bind: rocemu's segment). */
static const struct {
	uint8_t opcode;
	uint16_t segments;
	uint32_t header_ds;
} wqe_segments[] = {
	{ MLX5_OPCODE_SEND, DATA | INLINE, 1 },
	{ MLX5_OPCODE_SEND_IMM, DATA | INLINE, 1 },
	{ MLX5_OPCODE_SEND_INVAL, DATA | INLINE, 1 },
	{ MLX5_OPCODE_RDMA_WRITE, RADDR | DATA | INLINE, 2 },
	{ MLX5_OPCODE_RDMA_WRITE_IMM, RADDR | DATA | INLINE, 2 },
	{ MLX5_OPCODE_RDMA_READ, RADDR | DATA, 2 },
	{ MLX5_OPCODE_ATOMIC_CS, RADDR | ATOMIC | DATA, 3 },
	{ MLX5_OPCODE_ATOMIC_FA, RADDR | ATOMIC | DATA, 3 },
	{ MLX5_OPCODE_LOCAL_INVAL, 0, 1 },
	{ MLX5_OPCODE_UMR, BIND, 3 },
	{ MLX5_OPCODE_NOP, 0, 1 },
};

START_TEST(test_wqe_ops_segments)
{
	const struct rocemu_wqe_op *op = rocemu_wqe_op(wqe_segments[_i].opcode);

	ck_assert_uint_eq(op->flags & SEGMENT_FLAGS, wqe_segments[_i].segments);
	ck_assert_uint_eq(rocemu_wqe_op_header_ds(op), wqe_segments[_i].header_ds);
}
END_TEST

static bool implies(bool a, bool b)
{
	return !a || b;
}

/* Every row of the 256: flags that go together do, and what is not a WQE has none. */
START_TEST(test_wqe_ops_consistent)
{
	const struct rocemu_wqe_op *op = rocemu_wqe_op((uint8_t)_i);
	uint16_t f = op->flags;

	if (!(f & ROCEMU_WQE_OP_VALID)) {
		ck_assert_uint_eq(f, 0);
		ck_assert_ptr_null(op->name);
		return;
	}
	ck_assert_ptr_nonnull(op->name);
	ck_assert(implies(f & ATOMIC, (f & RADDR) && (f & DATA) && !(f & INLINE)));
	ck_assert(implies(f & ROCEMU_WQE_OP_COMPARE, f & ATOMIC));
	ck_assert(implies(f & ROCEMU_WQE_OP_READ, (f & RADDR) && (f & DATA) && !(f & INLINE)));
	ck_assert(implies(f & ROCEMU_WQE_OP_LOCAL, !(f & (RADDR | DATA))));
	ck_assert(implies(f & BIND, f & ROCEMU_WQE_OP_LOCAL));
	ck_assert(implies(f & INLINE, f & DATA));
	ck_assert(!((f & ROCEMU_WQE_OP_IMM) && (f & ROCEMU_WQE_OP_INV)));
	/* What comes before the data fits the first BB: the writer wraps only data. */
	ck_assert_uint_le(rocemu_wqe_op_header_ds(op) * ROCEMU_WQE_SEG, ROCEMU_WQE_BB);
	ck_assert(rocemu_wqe_op_rd_atomic(op) == !!(f & (ROCEMU_WQE_OP_READ | ATOMIC)));
}
END_TEST

/* Work request -> WQE opcode (mlx5_ib_opcode; rocemu's LOCAL_INV is LOCAL_INVAL) -> completion. */
static const struct {
	enum ibv_wr_opcode wr;
	int opcode;
	enum ibv_wc_opcode wc;
} wr_map[] = {
	{ IBV_WR_RDMA_WRITE, MLX5_OPCODE_RDMA_WRITE, IBV_WC_RDMA_WRITE },
	{ IBV_WR_RDMA_WRITE_WITH_IMM, MLX5_OPCODE_RDMA_WRITE_IMM, IBV_WC_RDMA_WRITE },
	{ IBV_WR_SEND, MLX5_OPCODE_SEND, IBV_WC_SEND },
	{ IBV_WR_SEND_WITH_IMM, MLX5_OPCODE_SEND_IMM, IBV_WC_SEND },
	{ IBV_WR_RDMA_READ, MLX5_OPCODE_RDMA_READ, IBV_WC_RDMA_READ },
	{ IBV_WR_ATOMIC_CMP_AND_SWP, MLX5_OPCODE_ATOMIC_CS, IBV_WC_COMP_SWAP },
	{ IBV_WR_ATOMIC_FETCH_AND_ADD, MLX5_OPCODE_ATOMIC_FA, IBV_WC_FETCH_ADD },
	{ IBV_WR_LOCAL_INV, MLX5_OPCODE_LOCAL_INVAL, IBV_WC_LOCAL_INV },
	{ IBV_WR_BIND_MW, MLX5_OPCODE_UMR, IBV_WC_BIND_MW },
	{ IBV_WR_SEND_WITH_INV, MLX5_OPCODE_SEND_INVAL, IBV_WC_SEND },
	{ IBV_WR_TSO, MLX5_OPCODE_TSO, IBV_WC_TSO },
	/* not on this device */
	{ IBV_WR_DRIVER1, -1, 0 },
	{ (enum ibv_wr_opcode)-1, -1, 0 },
	{ (enum ibv_wr_opcode)1000, -1, 0 },
};

START_TEST(test_wr_opcodes)
{
	int opcode = rocemu_wqe_opcode_of_wr(wr_map[_i].wr);

	ck_assert_int_eq(opcode, wr_map[_i].opcode);
	if (opcode >= 0)
		ck_assert_uint_eq(rocemu_wqe_op((uint8_t)opcode)->wc_opcode, wr_map[_i].wc);
}
END_TEST

/* ---- the CQE opcode table (mlx5 handle_responder, mlx5_parse_cqe) ---- */

static const struct {
	uint8_t op;
	uint8_t flags;
	enum ibv_wc_opcode wc;
	unsigned int wc_flags;
} cqe_map[] = {
	{ MLX5_CQE_REQ, ROCEMU_CQE_OP_SQ, 0, 0 },
	{ MLX5_CQE_RESP_WR_IMM, ROCEMU_CQE_OP_RQ, IBV_WC_RECV_RDMA_WITH_IMM, IBV_WC_WITH_IMM },
	{ MLX5_CQE_RESP_SEND, ROCEMU_CQE_OP_RQ, IBV_WC_RECV, 0 },
	{ MLX5_CQE_RESP_SEND_IMM, ROCEMU_CQE_OP_RQ, IBV_WC_RECV, IBV_WC_WITH_IMM },
	{ MLX5_CQE_RESP_SEND_INV, ROCEMU_CQE_OP_RQ, IBV_WC_RECV, IBV_WC_WITH_INV },
	{ MLX5_CQE_REQ_ERR, ROCEMU_CQE_OP_SQ | ROCEMU_CQE_OP_ERR, 0, 0 },
	{ MLX5_CQE_RESP_ERR, ROCEMU_CQE_OP_RQ | ROCEMU_CQE_OP_ERR, IBV_WC_RECV, 0 },
	/* never written by this device */
	{ MLX5_CQE_RESIZE_CQ, 0, 0, 0 },
	{ MLX5_CQE_NO_PACKET, 0, 0, 0 },
	{ MLX5_CQE_SIG_ERR, 0, 0, 0 },
	{ MLX5_CQE_INVALID, 0, 0, 0 },
};

START_TEST(test_cqe_ops)
{
	const struct rocemu_cqe_op *op = rocemu_cqe_op(cqe_map[_i].op);

	ck_assert_uint_eq(op->flags, cqe_map[_i].flags);
	ck_assert_uint_eq(op->wc_opcode, cqe_map[_i].wc);
	ck_assert_uint_eq(op->wc_flags, cqe_map[_i].wc_flags);
	ck_assert_ptr_eq(rocemu_cqe_op(cqe_map[_i].op), rocemu_cqe_op(cqe_map[_i].op | 0x10));
}
END_TEST

/* ---- encodings ---- */

START_TEST(test_ctrl_segment_round_trip)
{
	struct mlx5_wqe_ctrl_seg ctrl;

	memset(&ctrl, 0xff, sizeof(ctrl));
	mlx5dv_set_ctrl_seg(&ctrl, 0xbeef, MLX5_OPCODE_ATOMIC_FA, 0, 0xabcdef, 0, 35, 0, 0);
	ck_assert_uint_eq(rocemu_wqe_ctrl_opcode(&ctrl), MLX5_OPCODE_ATOMIC_FA);
	ck_assert_uint_eq(rocemu_wqe_ctrl_index(&ctrl), 0xbeef);
	ck_assert_uint_eq(rocemu_wqe_ctrl_qpn(&ctrl), 0xabcdef);
	ck_assert_uint_eq(rocemu_wqe_ctrl_ds(&ctrl), 35);
}
END_TEST

START_TEST(test_cqe_encoding)
{
	struct mlx5_cqe64 cqe;
	const uint32_t ncqe = 8;
	uint32_t pi;

	memset(&cqe, 0, sizeof(cqe));
	cqe.sop_drop_qpn = rocemu_cqe_sop_drop_qpn(MLX5_OPCODE_RDMA_READ, 0x1abcdef);
	ck_assert_uint_eq(rocemu_cqe_qpn(&cqe), 0xabcdef);
	ck_assert_uint_eq(rocemu_cqe_wqe_opcode(&cqe), MLX5_OPCODE_RDMA_READ);
	/* A fresh ring: invalid and hardware's. */
	ck_assert(!rocemu_cqe_ready(rocemu_cqe_op_own(MLX5_CQE_INVALID, 0, ncqe), 0, ncqe));
	for (pi = 0; pi < 4 * ncqe; pi++) {
		uint8_t op_own = rocemu_cqe_op_own(MLX5_CQE_REQ, pi, ncqe);

		cqe.op_own = op_own;
		ck_assert_uint_eq(mlx5dv_get_cqe_opcode(&cqe), MLX5_CQE_REQ);
		ck_assert_uint_eq(mlx5dv_get_cqe_owner(&cqe), (pi / ncqe) & 1);
		ck_assert(rocemu_cqe_ready(op_own, pi, ncqe));
		/* The same slot one pass later is not yet written. */
		ck_assert(!rocemu_cqe_ready(op_own, pi + ncqe, ncqe));
	}
}
END_TEST

START_TEST(test_cq_arm_word)
{
	static const uint32_t cis[] = { 0, 1, 0xffffff, 0x1000000, 0xdeadbeef };
	uint32_t sn, w;
	size_t i;

	for (sn = 0; sn < 8; sn++) {
		for (i = 0; i < N_ELEMS(cis); i++) {
			/* mlx5_arm_cq: sn << 28 | cmd | ci, sn and ci masked */
			w = rocemu_cq_arm_word(sn, false, cis[i]);
			ck_assert_uint_eq(w, (sn & 3) << 28 | MLX5_CQ_DB_REQ_NOT | (cis[i] & 0xffffff));
			ck_assert(rocemu_cq_arm_all(w));
			w = rocemu_cq_arm_word(sn, true, cis[i]);
			ck_assert_uint_eq(w, (sn & 3) << 28 | MLX5_CQ_DB_REQ_NOT_SOL |
					     (cis[i] & 0xffffff));
			ck_assert(!rocemu_cq_arm_all(w));
			ck_assert_uint_eq(rocemu_cq_arm_sn(w), sn & 3);
			ck_assert_uint_eq(rocemu_cq_arm_ci(w), cis[i] & 0xffffff);
		}
	}
}
END_TEST

/* ---- the sizing rule ---- */

static const struct {
	uint32_t sge, inl, bbs;
} wqe_bbs_cases[] = {
	{ 0, 0, 1 },		/* ctrl + raddr + atomic */
	{ 1, 0, 1 },		/* 48 + 16 bytes */
	{ 2, 0, 2 },
	{ 0, 28, 1 },		/* ctrl + raddr + 4 + 28 */
	{ 0, 29, 2 },
	{ 5, 0, 2 },		/* 48 + 80 = 128 */
	{ 6, 0, 3 },
	{ ROCEMU_MAX_SGE, 0, 9 },			/* 48 + 480 */
	{ ROCEMU_MAX_SGE, ROCEMU_MAX_INLINE, 9 },	/* 32 + 4 + 512 rounded */
};

START_TEST(test_sq_wqe_bbs)
{
	ck_assert_uint_eq(rocemu_sq_wqe_bbs(IBV_QPT_RC, wqe_bbs_cases[_i].sge, wqe_bbs_cases[_i].inl, 0),
			  wqe_bbs_cases[_i].bbs);
}
END_TEST

/* UD: ctrl and the 48-byte datagram segment before the data (mlx5's UD sq_overhead). */
static const struct {
	uint32_t sge, inl, bbs;
} ud_wqe_bbs_cases[] = {
	{ 0, 0, 2 },		/* 64 + an empty inline segment */
	{ 1, 0, 2 },		/* 64 + 16, as mlx5 sizes a UD QP of one SGE */
	{ 4, 0, 2 },		/* 64 + 64 */
	{ 5, 0, 3 },
	{ 0, 60, 2 },		/* 64 + 4 + 60 */
	{ 0, 61, 3 },
};

START_TEST(test_ud_sq_wqe_bbs)
{
	ck_assert_uint_eq(rocemu_sq_wqe_bbs(IBV_QPT_UD, ud_wqe_bbs_cases[_i].sge,
					    ud_wqe_bbs_cases[_i].inl, 0),
			  ud_wqe_bbs_cases[_i].bbs);
}
END_TEST

/*
 * RAW_PACKET: ctrl and the 32-byte Ethernet segment (18 bytes inline), no
 * raddr (mlx5's sq_overhead), and max_tso_header rounded to 16 (mlx5_calc_send_wqe).
 */
static const struct {
	uint32_t sge, inl, tso, bbs;
} raw_wqe_bbs_cases[] = {
	{ 1, 0, 0, 1 },		/* 48 + 16 */
	{ 2, 0, 0, 2 },
	{ 0, 12, 0, 1 },	/* 48 + 4 + 12 */
	{ 0, 13, 0, 2 },
	{ 1, 1, 0, 1 },
	{ 1, 0, 1, 2 },		/* 48 + 16 + 16 */
	{ 1, 0, 64, 2 },	/* 48 + 64 + 16 = 128 */
	{ 2, 0, 64, 3 },
	{ 1, 0, 256, 5 },	/* 48 + 256 + 16 = 320 */
};

START_TEST(test_raw_sq_wqe_bbs)
{
	ck_assert_uint_eq(rocemu_sq_wqe_bbs(IBV_QPT_RAW_PACKET, raw_wqe_bbs_cases[_i].sge,
					    raw_wqe_bbs_cases[_i].inl, raw_wqe_bbs_cases[_i].tso),
			  raw_wqe_bbs_cases[_i].bbs);
}
END_TEST

/* The Ethernet segment for a header inline: 16 + align(hdr - 2, 16) bytes, 32 at least (mlx5 set_tso_eth_seg). */
START_TEST(test_eth_seg_bytes)
{
	uint32_t hdr;

	ck_assert_uint_eq(rocemu_wqe_qp_header_ds(IBV_QPT_RAW_PACKET), 2);
	ck_assert_uint_eq(rocemu_wqe_eth_seg_bytes(0), 32);
	ck_assert_uint_eq(rocemu_wqe_eth_seg_bytes(ROCEMU_ETH_INLINE_HEADER), 32);
	for (hdr = ROCEMU_ETH_MIN_HEADER; hdr <= 512; hdr++)
		ck_assert_uint_eq(rocemu_wqe_eth_seg_bytes(hdr), 16 + (hdr - 2 + 15) / 16 * 16);
}
END_TEST

/* A RAW_PACKET QP posts SEND and TSO only; TSO no other type. */
START_TEST(test_raw_ops)
{
	uint32_t op;

	for (op = 0; op < 256; op++) {
		const struct rocemu_wqe_op *o = rocemu_wqe_op((uint8_t)op);

		ck_assert(rocemu_wqe_op_allowed(o, IBV_QPT_RAW_PACKET) ==
			  (op == MLX5_OPCODE_SEND || op == MLX5_OPCODE_TSO));
	}
	ck_assert(!rocemu_wqe_op_allowed(rocemu_wqe_op(MLX5_OPCODE_TSO), IBV_QPT_RC));
	ck_assert(!rocemu_wqe_op_allowed(rocemu_wqe_op(MLX5_OPCODE_TSO), IBV_QPT_UD));
}
END_TEST

/* Any WQE a QP of either type with these caps may post fits the BBs the rule gives it. */
START_TEST(test_every_wqe_fits)
{
	enum ibv_qp_type type = _i > ROCEMU_MAX_SGE ? IBV_QPT_UD : IBV_QPT_RC;
	uint32_t sge = (uint32_t)_i % (ROCEMU_MAX_SGE + 1), inl, bbs, data, op;

	for (inl = 0; inl <= ROCEMU_MAX_INLINE; inl++) {
		bbs = rocemu_sq_wqe_bbs(type, sge, inl, 0);
		for (op = 0; op < 256; op++) {
			const struct rocemu_wqe_op *o = rocemu_wqe_op((uint8_t)op);

			if (!rocemu_wqe_op_allowed(o, type))
				continue;
			data = 0;
			if (o->flags & DATA)
				data = (o->flags & ATOMIC ? (sge ? 1 : 0) : sge) * ROCEMU_WQE_SEG;
			if ((o->flags & INLINE) && (4 + inl + 15) / 16 * 16 > data)
				data = (4 + inl + 15) / 16 * 16;
			ck_assert_uint_le((rocemu_wqe_op_header_ds(o) + rocemu_wqe_qp_header_ds(type)) *
					  ROCEMU_WQE_SEG + data, bbs * ROCEMU_WQE_BB);
		}
	}
}
END_TEST

/* The caps granted for a WQE size give that size back: shim and daemon agree. */
START_TEST(test_caps_round_trip)
{
	struct ibv_qp_cap want = { .max_send_wr = 1, .max_send_sge = wqe_bbs_cases[_i].sge,
				   .max_inline_data = wqe_bbs_cases[_i].inl };
	struct rocemu_wq_sizes sizes;
	struct ibv_qp_cap granted;

	ck_assert_int_eq(rocemu_wq_size(&want, IBV_QPT_RC, 0, &sizes), 0);
	rocemu_wq_caps(&sizes, IBV_QPT_RC, &granted);
	ck_assert_uint_ge(granted.max_send_sge, want.max_send_sge);
	ck_assert_uint_ge(granted.max_inline_data, want.max_inline_data);
	ck_assert_uint_eq(rocemu_sq_wqe_bbs(IBV_QPT_RC, granted.max_send_sge, granted.max_inline_data, 0),
			  sizes.sq_wqe_bbs);
}
END_TEST

static const struct {
	const char *what;
	struct ibv_qp_cap want;
	int ret;
	uint32_t sq_bbs, rq_wqes, rq_shift;
} size_cases[] = {
	{ "no queues", { 0, 0, 1, 1, 0 }, 0, 0, 0, 4 },
	{ "1-BB WQEs at the cap", { 32768, 1, 1, 1, 0 }, 0, 32768, 1, 4 },
	{ "1-BB WQEs above the cap", { 32769, 1, 1, 1, 0 }, -EINVAL, 0, 0, 0 },
	{ "2-BB WQEs at the cap", { 16384, 1, 3, 1, 0 }, 0, 32768, 1, 4 },
	{ "2-BB WQEs rounded past the cap", { 16385, 1, 3, 1, 0 }, -EINVAL, 0, 0, 0 },
	{ "2-BB WQEs, max_qp_wr of them", { 32768, 1, 3, 1, 0 }, -EINVAL, 0, 0, 0 },
	{ "9-BB WQEs at the cap", { 3640, 1, 30, 1, 512 }, 0, 32768, 1, 4 },
	{ "9-BB WQEs past the cap", { 3641, 1, 30, 1, 512 }, -EINVAL, 0, 0, 0 },
	{ "rounded up to a power of two", { 100, 100, 1, 3, 0 }, 0, 128, 128, 6 },
	{ "RQ at the cap", { 1, 32768, 1, 32, 0 }, 0, 1, 32768, 9 },
	{ "RQ above the cap", { 1, 32769, 1, 1, 0 }, -EINVAL, 0, 0, 0 },
	{ "RQ stride above 512 bytes", { 1, 1, 1, 33, 0 }, -EINVAL, 0, 0, 0 },
	{ "huge max_send_wr", { UINT32_MAX, 1, 1, 1, 0 }, -EINVAL, 0, 0, 0 },
	{ "huge max_send_sge", { 1, 1, UINT32_MAX, 1, 0 }, -EINVAL, 0, 0, 0 },
	{ "huge max_inline_data", { 1, 1, 1, 1, UINT32_MAX }, -EINVAL, 0, 0, 0 },
	{ "WQE past what ds describes", { 1, 1, 0, 1, 1008 - 36 + 1 }, -EINVAL, 0, 0, 0 },
	{ "huge max_recv_sge", { 1, 1, 1, UINT32_MAX, 0 }, -EINVAL, 0, 0, 0 },
};

START_TEST(test_wq_size)
{
	struct rocemu_wq_sizes sizes;
	struct ibv_qp_cap granted;
	int ret = rocemu_wq_size(&size_cases[_i].want, IBV_QPT_RC, 0, &sizes);

	ck_assert_msg(ret == size_cases[_i].ret, "%s: %d", size_cases[_i].what, ret);
	if (ret)
		return;
	ck_assert_uint_eq(sizes.sq_bbs, size_cases[_i].sq_bbs);
	ck_assert_uint_eq(sizes.rq_wqes, size_cases[_i].rq_wqes);
	ck_assert_uint_eq(sizes.rq_wqe_shift, size_cases[_i].rq_shift);
	rocemu_wq_caps(&sizes, IBV_QPT_RC, &granted);
	ck_assert_uint_ge(granted.max_send_wr, size_cases[_i].want.max_send_wr);
	ck_assert_uint_le((uint64_t)granted.max_send_wr * sizes.sq_wqe_bbs, sizes.sq_bbs);
	ck_assert_uint_eq(granted.max_recv_wr, sizes.rq_wqes);
	ck_assert_uint_ge(granted.max_recv_sge, size_cases[_i].want.max_recv_sge);
}
END_TEST

START_TEST(test_cq_size)
{
	ck_assert_uint_eq(rocemu_cq_size(0), 2);
	ck_assert_uint_eq(rocemu_cq_size(1), 2);
	ck_assert_uint_eq(rocemu_cq_size(2), 4);
	ck_assert_uint_eq(rocemu_cq_size(3), 4);
	ck_assert_uint_eq(rocemu_cq_size(4), 8);
	ck_assert_uint_eq(rocemu_cq_size(ROCEMU_MAX_CQE), 1u << 22);
}
END_TEST

/* mlx5_create_srq/mlx5_alloc_srq_buf: max_wr + 1 entries and a stride of 2^n >= 32, at most 512. */
START_TEST(test_srq_size)
{
	struct rocemu_srq_sizes sizes;
	uint32_t max_wr, max_sge;

	ck_assert_int_eq(rocemu_srq_size(100, 2, &sizes), 0);
	ck_assert_uint_eq(sizes.wqes, 128);
	ck_assert_uint_eq(sizes.wqe_shift, 6);
	rocemu_srq_caps(&sizes, &max_wr, &max_sge);
	ck_assert_uint_eq(max_wr, 127);
	ck_assert_uint_eq(max_sge, 3);
	ck_assert_int_eq(rocemu_srq_size(0, 0, &sizes), 0);
	ck_assert_uint_eq(sizes.wqes, 1);
	ck_assert_uint_eq(sizes.wqe_shift, 5);
	ck_assert_int_eq(rocemu_srq_size(ROCEMU_SRQ_MAX_WQES - 1, 31, &sizes), 0);
	ck_assert_uint_eq(sizes.wqes, ROCEMU_SRQ_MAX_WQES);
	ck_assert_uint_eq(1u << sizes.wqe_shift, ROCEMU_RQ_MAX_STRIDE);
	ck_assert_int_eq(rocemu_srq_size(ROCEMU_SRQ_MAX_WQES, 1, &sizes), -EINVAL);
	ck_assert_int_eq(rocemu_srq_size(1, 32, &sizes), -EINVAL);
	ck_assert_int_eq(rocemu_srq_size(UINT32_MAX, 1, &sizes), -EINVAL);
}
END_TEST

/* ---- the daemon: reported limit and creates at and above the cap ---- */

START_TEST(test_device_reports_the_cap)
{
	struct rocemu_device dev;
	struct ibv_device_attr attr;

	memset(&dev, 0, sizeof(dev));
	rocemu_device_query(&dev, &attr);
	ck_assert_int_eq(attr.max_qp_wr, ROCEMU_SQ_MAX_BBS);
	/* An SRQ of max_srq_wr WQEs fits the ring's counters (one entry stays free). */
	ck_assert_int_eq(attr.max_srq_wr, ROCEMU_SRQ_MAX_WQES - 1);
	ck_assert_int_gt(attr.max_srq, 0);
	ck_assert_int_eq(attr.max_srq_sge, ROCEMU_MAX_SGE);
}
END_TEST

START_TEST(test_layout_at_and_above_the_cap)
{
	struct ibv_qp_cap want = { .max_send_wr = ROCEMU_MAX_QP_WR, .max_recv_wr = ROCEMU_MAX_QP_WR,
				   .max_send_sge = 1, .max_recv_sge = 1 };
	struct rocemu_qp_layout layout;
	struct ibv_qp_cap granted;

	ck_assert_int_eq(rocemu_qp_layout(&rocemu_ring_mlx5, &want, IBV_QPT_RC, 0, 0, &granted, &layout), 0);
	ck_assert_uint_eq(layout.sq_wqe_cnt, ROCEMU_SQ_MAX_BBS);
	ck_assert_uint_eq(granted.max_send_wr, ROCEMU_MAX_QP_WR);
	ck_assert_uint_eq(layout.rq_wqe_cnt, ROCEMU_RQ_MAX_WQES);
	/* Two BBs per WQE: half as many WQEs fill the ring. */
	want.max_send_sge = 4;
	ck_assert_int_eq(rocemu_qp_layout(&rocemu_ring_mlx5, &want, IBV_QPT_RC, 0, 0, &granted, &layout), -EINVAL);
	want.max_send_wr = ROCEMU_MAX_QP_WR / 2;
	ck_assert_int_eq(rocemu_qp_layout(&rocemu_ring_mlx5, &want, IBV_QPT_RC, 0, 0, &granted, &layout), 0);
	ck_assert_uint_eq(layout.sq_wqe_cnt, ROCEMU_SQ_MAX_BBS);
	ck_assert_uint_eq(granted.max_send_wr, ROCEMU_MAX_QP_WR / 2);
	ck_assert_uint_eq(granted.max_send_sge, 5);
	want.max_send_wr++;
	ck_assert_int_eq(rocemu_qp_layout(&rocemu_ring_mlx5, &want, IBV_QPT_RC, 0, 0, &granted, &layout), -EINVAL);
}
END_TEST

/* A 512-byte stride has room for 32 segments; the daemon reads max_sge of them. */
START_TEST(test_layout_recv_sge_within_max_sge)
{
	struct ibv_qp_cap want = { .max_send_wr = 1, .max_recv_wr = 1, .max_send_sge = 1,
				   .max_recv_sge = ROCEMU_MAX_SGE };
	struct rocemu_qp_layout layout;
	struct ibv_qp_cap granted;

	ck_assert_int_eq(rocemu_qp_layout(&rocemu_ring_mlx5, &want, IBV_QPT_RC, 0, 0, &granted, &layout), 0);
	ck_assert_uint_eq(1u << layout.rq_wqe_shift, 512);
	ck_assert_uint_eq(granted.max_recv_sge, ROCEMU_MAX_SGE);
	want.max_recv_sge = 3;
	ck_assert_int_eq(rocemu_qp_layout(&rocemu_ring_mlx5, &want, IBV_QPT_RC, 0, 0, &granted, &layout), 0);
	ck_assert_uint_eq(granted.max_recv_sge, 4);
}
END_TEST

static Suite *ring_suite(void)
{
	Suite *s = suite_create("ring");
	TCase *sizes = tcase_create("sizes");
	TCase *ops = tcase_create("opcodes");
	TCase *enc = tcase_create("encodings");
	TCase *rule = tcase_create("sizing");
	TCase *daemon = tcase_create("daemon");

	tcase_add_test(sizes, test_sizes_match_mlx5dv);
	tcase_add_test(sizes, test_index_widths_do_not_alias);
	suite_add_tcase(s, sizes);

	tcase_add_loop_test(ops, test_wqe_ops_complete_as_mlx5, 0, N_ELEMS(good_req));
	tcase_add_loop_test(ops, test_wqe_ops_segments, 0, N_ELEMS(wqe_segments));
	tcase_add_loop_test(ops, test_wqe_ops_consistent, 0, 256);
	tcase_add_loop_test(ops, test_wr_opcodes, 0, N_ELEMS(wr_map));
	tcase_add_loop_test(ops, test_cqe_ops, 0, N_ELEMS(cqe_map));
	suite_add_tcase(s, ops);

	tcase_add_test(enc, test_ctrl_segment_round_trip);
	tcase_add_test(enc, test_cqe_encoding);
	tcase_add_test(enc, test_cq_arm_word);
	suite_add_tcase(s, enc);

	tcase_add_loop_test(rule, test_sq_wqe_bbs, 0, N_ELEMS(wqe_bbs_cases));
	tcase_add_loop_test(rule, test_ud_sq_wqe_bbs, 0, N_ELEMS(ud_wqe_bbs_cases));
	tcase_add_loop_test(rule, test_raw_sq_wqe_bbs, 0, N_ELEMS(raw_wqe_bbs_cases));
	tcase_add_test(rule, test_eth_seg_bytes);
	tcase_add_test(rule, test_raw_ops);
	tcase_add_loop_test(rule, test_every_wqe_fits, 0, 2 * (ROCEMU_MAX_SGE + 1));
	tcase_add_loop_test(rule, test_caps_round_trip, 0, N_ELEMS(wqe_bbs_cases));
	tcase_add_loop_test(rule, test_wq_size, 0, N_ELEMS(size_cases));
	tcase_add_test(rule, test_cq_size);
	tcase_add_test(rule, test_srq_size);
	suite_add_tcase(s, rule);

	tcase_add_test(daemon, test_device_reports_the_cap);
	tcase_add_test(daemon, test_layout_at_and_above_the_cap);
	tcase_add_test(daemon, test_layout_recv_sge_within_max_sge);
	suite_add_tcase(s, daemon);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(ring_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
