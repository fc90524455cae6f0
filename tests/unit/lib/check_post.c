/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * ibv_post_send and ibv_post_recv (lib/datapath/post.c) through the send
 * queue writer (lib/datapath/wqe.c) into rings in plain memory, each WQE
 * read twice: field by field through <infiniband/mlx5dv.h>'s segment
 * structs, and by the daemon's own parser (daemon_rings.h). Every opcode
 * a QP type takes, inline data (also wrapping past the ring's end), the
 * limits and the errno libmlx5 gives for each, the doorbell record and
 * BlueFlame copy, and receive WQEs with their terminating segment.
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/shim.h"
#include "tests/unit/lib/daemon_rings.h"

#define QPN 0x0004d2
#define SQ_BBS 8
#define RQ_WQES 4
#define RQ_SHIFT 6		/* 4 data segments per receive WQE */
#define MAX_SEND_SGE 4
#define MAX_RECV_SGE 3		/* fewer than the WQE's 4 slots: a terminator follows */
#define MAX_INLINE 64
#define RQ_OFFSET (SQ_BBS * ROCEMU_WQE_BB)
#define DBREC_OFFSET (RQ_OFFSET + (RQ_WQES << RQ_SHIFT))
#define BF_OFFSET (DBREC_OFFSET + ROCEMU_WQE_BB)
#define BF_SIZE (2 * ROCEMU_WQE_BB)
#define MAP_SIZE (BF_OFFSET + BF_SIZE)

#define LKEY 0x1111
#define RKEY 0x2222
#define RADDR 0x7f0000001000ull
#define LADDR 0x600000ull
#define IMM 0xfeedbeef
#define INV_RKEY 0x00333301
#define REMOTE_QPN 0x000777
#define QKEY 0x11111111
#define REMOTE_SRQN 0x000042

static struct rocemu_context rctx;
static struct rocemu_qp qp;
static struct ibv_qp *const ibqp = &qp.qpx.qp_base;
static _Alignas(ROCEMU_WQE_BB) char map[MAP_SIZE];
static struct daemon_qp *dqp;
static int send_doorbells, recv_doorbells;

/* The doorbells' last step, telling the daemon: here, counted. */
void rocemu_ctx_doorbell(struct rocemu_context *ctx)
{
	ck_assert_ptr_eq(ctx, &rctx);
	send_doorbells++;
}

void rocemu_ctx_recv_doorbell(struct rocemu_context *ctx)
{
	ck_assert_ptr_eq(ctx, &rctx);
	recv_doorbells++;
}

/* A QP of type in state (its queues' rules follow it), both sides of its rings set up. */
static void qp_open_in(enum ibv_qp_type type, enum ibv_qp_state state)
{
	memset(&rctx, 0, sizeof(rctx));
	memset(&qp, 0, sizeof(qp));
	memset(map, 0, sizeof(map));
	send_doorbells = recv_doorbells = 0;
	ibqp->context = &rctx.vctx.context;
	ibqp->qp_type = type;
	qp.type = type;
	qp.qpn = QPN;
	qp.cap = (struct ibv_qp_cap){ .max_send_sge = MAX_SEND_SGE, .max_recv_sge = MAX_RECV_SGE,
				      .max_inline_data = MAX_INLINE };
	qp.layout = (struct rocemu_qp_layout){
		.qpn = QPN, .sq_wqe_cnt = SQ_BBS, .rq_wqe_cnt = RQ_WQES, .rq_wqe_shift = RQ_SHIFT,
		.size = MAP_SIZE, .sq_offset = 0, .rq_offset = RQ_OFFSET,
		.dbrec_offset = DBREC_OFFSET, .bf_offset = BF_OFFSET, .bf_size = BF_SIZE,
	};
	qp.map = map;
	ck_assert_int_eq(rocemu_qp_queues_init(&qp), 0);
	if (state != IBV_QPS_RESET)
		rocemu_qp_queues_state(&qp, IBV_QPS_INIT);
	if (state == IBV_QPS_RTS)
		rocemu_qp_queues_state(&qp, IBV_QPS_RTS);
	dqp = daemon_qp_new(map, &qp.layout, type);
}

static void qp_open(enum ibv_qp_type type)
{
	qp_open_in(type, IBV_QPS_RTS);
}

static void rc_open(void)
{
	qp_open(IBV_QPT_RC);
}

static void qp_close(void)
{
	daemon_qp_free(dqp);
	rocemu_qp_queues_free(&qp);
}

static const struct mlx5_wqe_ctrl_seg *ctrl_at(uint32_t bb)
{
	return (const struct mlx5_wqe_ctrl_seg *)(map + (size_t)(bb % SQ_BBS) * ROCEMU_WQE_BB);
}

/* The segment n 16-byte units after the ctrl segment of the WQE at bb, past the ring's end at BB 0. */
static const void *seg_at(uint32_t bb, unsigned int n)
{
	size_t off = (size_t)(bb % SQ_BBS) * ROCEMU_WQE_BB + (size_t)n * ROCEMU_WQE_SEG;

	return map + off % ((size_t)SQ_BBS * ROCEMU_WQE_BB);
}

/* ctrl as libmlx5 writes it: index and opcode, QPN and size, flags and imm. */
static void assert_ctrl(uint32_t bb, uint8_t opcode, uint32_t ds, uint8_t fm_ce_se, __be32 imm)
{
	const struct mlx5_wqe_ctrl_seg *ctrl = ctrl_at(bb);

	ck_assert_uint_eq(be32toh(ctrl->opmod_idx_opcode), (bb & 0xffff) << 8 | opcode);
	ck_assert_uint_eq(be32toh(ctrl->qpn_ds), (uint32_t)QPN << 8 | ds);
	ck_assert_uint_eq(ctrl->fm_ce_se, fm_ce_se);
	ck_assert_uint_eq(ctrl->imm, imm);
}

static void assert_data_seg(const void *seg, const struct ibv_sge *sge)
{
	const struct mlx5_wqe_data_seg *d = seg;

	ck_assert_uint_eq(be32toh(d->byte_count), sge->length);
	ck_assert_uint_eq(be32toh(d->lkey), sge->lkey);
	ck_assert_uint_eq(be64toh(d->addr), sge->addr);
}

/* The daemon's parse of the WQE at bb, which must succeed. */
static struct daemon_send_wqe daemon_wqe_at(uint32_t bb)
{
	struct daemon_send_wqe w;
	int posted = daemon_sq_posted(dqp, bb);

	ck_assert_int_gt(posted, 0);
	ck_assert_int_eq(daemon_parse_send(dqp, bb, (uint32_t)posted, &w), 0);
	return w;
}

static int post(struct ibv_send_wr *wr, struct ibv_send_wr **bad)
{
	*bad = NULL;
	return rocemu_post_send_op(ibqp, wr, bad);
}

static void post_ok(struct ibv_send_wr *wr)
{
	struct ibv_send_wr *bad;

	ck_assert_int_eq(post(wr, &bad), 0);
	ck_assert_ptr_null(bad);
}

/* What each send opcode makes of one WR: its mlx5 opcode, segments and where imm comes from. */
struct send_case {
	enum ibv_wr_opcode wr_opcode;
	uint8_t opcode;
	bool raddr, atomic, compare;
	bool imm, inv;
	int num_sge;		/* of the WR; LOCAL_INV's list means nothing */
	unsigned int ds;	/* of the WQE */
};

static const struct send_case send_cases[] = {
	{ IBV_WR_SEND, MLX5_OPCODE_SEND, false, false, false, false, false, 2, 3 },
	{ IBV_WR_SEND_WITH_IMM, MLX5_OPCODE_SEND_IMM, false, false, false, true, false, 2, 3 },
	{ IBV_WR_SEND_WITH_INV, MLX5_OPCODE_SEND_INVAL, false, false, false, false, true, 2, 3 },
	{ IBV_WR_RDMA_WRITE, MLX5_OPCODE_RDMA_WRITE, true, false, false, false, false, 2, 4 },
	{ IBV_WR_RDMA_WRITE_WITH_IMM, MLX5_OPCODE_RDMA_WRITE_IMM, true, false, false, true, false,
	  2, 4 },
	{ IBV_WR_RDMA_READ, MLX5_OPCODE_RDMA_READ, true, false, false, false, false, 2, 4 },
	{ IBV_WR_ATOMIC_CMP_AND_SWP, MLX5_OPCODE_ATOMIC_CS, true, true, true, false, false, 1, 4 },
	{ IBV_WR_ATOMIC_FETCH_AND_ADD, MLX5_OPCODE_ATOMIC_FA, true, true, false, false, false, 1,
	  4 },
	{ IBV_WR_LOCAL_INV, MLX5_OPCODE_LOCAL_INVAL, false, false, false, false, true, 2, 1 },
};

/* Each opcode of an RC QP, posted at BB 1: its bytes by mlx5dv.h's structs and the daemon's reading. */
START_TEST(test_send_opcode)
{
	const struct send_case *c = &send_cases[_i];
	struct ibv_sge sges[2] = { { LADDR, 8, LKEY }, { LADDR + 64, 100, LKEY + 1 } };
	struct ibv_sge first = { LADDR, 1, LKEY };
	struct ibv_send_wr filler = { .wr_id = 1, .sg_list = &first, .num_sge = 1,
				      .opcode = IBV_WR_SEND };
	struct ibv_send_wr wr = {
		.wr_id = 2, .sg_list = sges, .num_sge = c->num_sge, .opcode = c->wr_opcode,
		.send_flags = IBV_SEND_SIGNALED | IBV_SEND_SOLICITED | IBV_SEND_FENCE,
	};
	__be32 imm = c->imm ? htobe32(IMM) : c->inv ? htobe32(INV_RKEY) : 0;
	struct daemon_send_wqe w;
	unsigned int n = 1;

	if (c->imm)
		wr.imm_data = htobe32(IMM);
	if (c->inv)
		wr.invalidate_rkey = INV_RKEY;
	if (c->atomic)
		wr.wr.atomic = (__typeof__(wr.wr.atomic)){ .remote_addr = RADDR,
							   .compare_add = 0x0102030405060708ull,
							   .swap = 0x1112131415161718ull,
							   .rkey = RKEY };
	else
		wr.wr.rdma = (__typeof__(wr.wr.rdma)){ .remote_addr = RADDR, .rkey = RKEY };
	post_ok(&filler);
	post_ok(&wr);
	ck_assert_uint_eq(qp.sq.cur_post, 2);
	ck_assert_uint_eq(qp.sq.wrid[1], 2);
	ck_assert_uint_eq(qp.sq.wr_opcode[1], c->wr_opcode);

	assert_ctrl(1, c->opcode, c->ds,
		    MLX5_WQE_CTRL_CQ_UPDATE | MLX5_WQE_CTRL_SOLICITED | MLX5_WQE_CTRL_FENCE, imm);
	if (c->raddr) {
		const struct mlx5_wqe_raddr_seg *r = seg_at(1, n++);

		ck_assert_uint_eq(be64toh(r->raddr), RADDR);
		ck_assert_uint_eq(be32toh(r->rkey), RKEY);
		ck_assert_uint_eq(r->reserved, 0);
	}
	if (c->atomic) {
		const struct mlx5_wqe_atomic_seg *a = seg_at(1, n++);

		/* Compare-and-swap puts swap first; fetch-and-add its addend there, compare 0. */
		ck_assert_uint_eq(be64toh(a->swap_add),
				  c->compare ? 0x1112131415161718ull : 0x0102030405060708ull);
		ck_assert_uint_eq(be64toh(a->compare), c->compare ? 0x0102030405060708ull : 0);
	}
	for (int i = 0; c->opcode != MLX5_OPCODE_LOCAL_INVAL && i < c->num_sge; i++)
		assert_data_seg(seg_at(1, n++), &sges[i]);
	ck_assert_uint_eq(n, c->ds);

	w = daemon_wqe_at(1);
	ck_assert_uint_eq(w.bbs, 1);
	ck_assert_uint_eq(w.opcode, c->opcode);
	ck_assert_uint_eq(w.wqe_counter, 1);
	ck_assert(w.signaled && w.solicited && w.fence);
	ck_assert_uint_eq(w.imm, imm);
	if (c->raddr) {
		ck_assert_uint_eq(w.raddr, RADDR);
		ck_assert_uint_eq(w.rkey, RKEY);
	}
	if (c->atomic) {
		ck_assert_uint_eq(w.swap_add, be64toh(((const struct mlx5_wqe_atomic_seg *)
						       seg_at(1, 2))->swap_add));
		ck_assert_uint_eq(w.compare, c->compare ? 0x0102030405060708ull : 0);
	}
	ck_assert_uint_eq(w.num_sge, c->opcode == MLX5_OPCODE_LOCAL_INVAL ? 0 : (unsigned)c->num_sge);
	for (unsigned int i = 0; i < w.num_sge; i++) {
		ck_assert_uint_eq(w.sge[i].addr, sges[i].addr);
		ck_assert_uint_eq(w.sge[i].length, sges[i].length);
		ck_assert_uint_eq(w.sge[i].key, sges[i].lkey);
	}
}
END_TEST

/* An atomic's SGE says 16 bytes: its data segment says 8, as libmlx5 writes it, and the daemon reads 8. */
START_TEST(test_atomic_sge_takes_8_bytes)
{
	struct ibv_sge sge = { LADDR, 16, LKEY };
	struct ibv_send_wr wr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_ATOMIC_FETCH_AND_ADD };
	const struct mlx5_wqe_data_seg *d;
	struct daemon_send_wqe w;

	wr.wr.atomic.remote_addr = RADDR;
	wr.wr.atomic.rkey = RKEY;
	wr.wr.atomic.compare_add = 1;
	post_ok(&wr);
	d = seg_at(0, 3);
	ck_assert_uint_eq(be32toh(d->byte_count), 8);
	ck_assert_uint_eq(be64toh(d->addr), LADDR);
	w = daemon_wqe_at(0);
	ck_assert_uint_eq(w.num_sge, 1);
	ck_assert_uint_eq(w.sge[0].length, 8);
}
END_TEST

/* A window bind: ctrl and the bind segment the daemon reads, no data. */
START_TEST(test_bind_mw)
{
	struct ibv_mr mr = { .lkey = LKEY };
	struct ibv_mw mw = { .rkey = 0x00555501, .type = IBV_MW_TYPE_2 };
	struct ibv_send_wr wr = {
		.wr_id = 3, .opcode = IBV_WR_BIND_MW, .send_flags = IBV_SEND_SIGNALED,
		.bind_mw = { .mw = &mw, .rkey = 0x00555502,
			     .bind_info = { .mr = &mr, .addr = LADDR, .length = 4096,
					    .mw_access_flags = IBV_ACCESS_REMOTE_WRITE } },
	};
	struct daemon_send_wqe w;

	post_ok(&wr);
	assert_ctrl(0, MLX5_OPCODE_UMR, 1 + sizeof(struct rocemu_wqe_bind_seg) / ROCEMU_WQE_SEG,
		    MLX5_WQE_CTRL_CQ_UPDATE, 0);
	w = daemon_wqe_at(0);
	ck_assert_uint_eq(w.opcode, MLX5_OPCODE_UMR);
	ck_assert_uint_eq(w.bind_mw_key, 0x00555501);
	ck_assert_uint_eq(w.bind_new_rkey, 0x00555502);
	ck_assert_uint_eq(w.bind_mr_key, LKEY);
	ck_assert_uint_eq(w.bind_access, IBV_ACCESS_REMOTE_WRITE);
	ck_assert_uint_eq(w.bind_addr, LADDR);
	ck_assert_uint_eq(w.bind_length, 4096);
	ck_assert_uint_eq(w.num_sge, 0);
}
END_TEST

/* IBV_SEND_INLINE: the SGEs' bytes in one inline segment, copied at post time. */
START_TEST(test_inline_send)
{
	char a[10], b[20];
	struct ibv_sge sges[2] = { { (uintptr_t)a, sizeof(a), 0 }, { (uintptr_t)b, sizeof(b), 0 } };
	struct ibv_send_wr wr = { .wr_id = 4, .sg_list = sges, .num_sge = 2, .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_INLINE };
	const struct mlx5_wqe_inl_data_seg *inl;
	struct daemon_send_wqe w;

	memset(a, 'a', sizeof(a));
	memset(b, 'b', sizeof(b));
	post_ok(&wr);
	memset(a, 0, sizeof(a));	/* the WQE holds the bytes, not the buffer */
	/* ctrl, then 4 + 30 bytes: 3 units */
	assert_ctrl(0, MLX5_OPCODE_SEND, 4, 0, 0);
	inl = seg_at(0, 1);
	ck_assert_uint_eq(be32toh(inl->byte_count), 30 | MLX5_INLINE_SEG);
	w = daemon_wqe_at(0);
	ck_assert_uint_eq(w.inline_len, 30);
	ck_assert_uint_eq(w.length, 30);
	ck_assert_uint_eq(w.num_sge, 0);
	ck_assert_int_eq(memcmp(w.inline_data, "aaaaaaaaaabbbbbbbbbbbbbbbbbbbb", 30), 0);
	ck_assert_int_eq(memcmp(inl + 1, w.inline_data, 30), 0);
}
END_TEST

/* Inline data of the last BB goes on at BB 0; the daemon reads it whole. */
START_TEST(test_inline_wraps_the_ring)
{
	char data[MAX_INLINE], one = 1;
	struct ibv_sge sge = { (uintptr_t)data, sizeof(data), 0 }, small = { (uintptr_t)&one, 1, 0 };
	struct ibv_send_wr wr = { .wr_id = 5, .sg_list = &small, .num_sge = 1,
				  .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_INLINE };
	struct daemon_send_wqe w;

	for (unsigned int i = 0; i < sizeof(data); i++)
		data[i] = (char)i;
	for (unsigned int i = 0; i < SQ_BBS - 1; i++)
		post_ok(&wr);
	/* As the poller frees them once completed. */
	__atomic_store_n(&qp.sq.tail, SQ_BBS - 1, __ATOMIC_RELEASE);
	wr.sg_list = &sge;
	post_ok(&wr);
	/* ctrl + 4 + 64 bytes: 6 units, two BBs, the second one BB 0 */
	ck_assert_uint_eq(qp.sq.cur_post, SQ_BBS + 1);
	assert_ctrl(SQ_BBS - 1, MLX5_OPCODE_SEND, 6, 0, 0);
	w = daemon_wqe_at(SQ_BBS - 1);
	ck_assert_uint_eq(w.bbs, 2);
	ck_assert_uint_eq(w.inline_len, MAX_INLINE);
	ck_assert_mem_eq(w.inline_data, data, MAX_INLINE);
	ck_assert_mem_eq(map, data + ROCEMU_WQE_BB - 20, MAX_INLINE - (ROCEMU_WQE_BB - 20));
}
END_TEST

/* Data segments of the last BB go on at BB 0 too. */
START_TEST(test_data_segments_wrap_the_ring)
{
	struct ibv_sge one = { LADDR, 1, LKEY };
	struct ibv_sge sges[MAX_SEND_SGE] = { { LADDR, 1, LKEY }, { LADDR + 1, 2, LKEY },
					      { LADDR + 3, 3, LKEY }, { LADDR + 6, 4, LKEY } };
	struct ibv_send_wr wr = { .wr_id = 6, .sg_list = &one, .num_sge = 1, .opcode = IBV_WR_SEND };
	struct daemon_send_wqe w;

	for (unsigned int i = 0; i < SQ_BBS - 1; i++)
		post_ok(&wr);
	__atomic_store_n(&qp.sq.tail, SQ_BBS - 1, __ATOMIC_RELEASE);
	wr.opcode = IBV_WR_RDMA_WRITE;
	wr.wr.rdma.remote_addr = RADDR;
	wr.wr.rdma.rkey = RKEY;
	wr.sg_list = sges;
	wr.num_sge = MAX_SEND_SGE;
	post_ok(&wr);
	assert_ctrl(SQ_BBS - 1, MLX5_OPCODE_RDMA_WRITE, 6, 0, 0);
	for (unsigned int i = 0; i < MAX_SEND_SGE; i++)
		assert_data_seg(seg_at(SQ_BBS - 1, 2 + i), &sges[i]);
	w = daemon_wqe_at(SQ_BBS - 1);
	ck_assert_uint_eq(w.bbs, 2);
	ck_assert_uint_eq(w.num_sge, MAX_SEND_SGE);
	ck_assert_uint_eq(w.sge[3].addr, LADDR + 6);
	ck_assert_uint_eq(w.length, 10);
}
END_TEST

/* IBV_SEND_INLINE on a READ or atomic means nothing (their data comes back): data segments. */
START_TEST(test_inline_flag_ignored_on_read)
{
	struct ibv_sge sge = { LADDR, 16, LKEY };
	struct ibv_send_wr wr = { .wr_id = 7, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_RDMA_READ, .send_flags = IBV_SEND_INLINE,
				  .wr.rdma = { RADDR, RKEY } };

	post_ok(&wr);
	assert_ctrl(0, MLX5_OPCODE_RDMA_READ, 3, 0, 0);
	assert_data_seg(seg_at(0, 2), &sge);
}
END_TEST

/* Zero-length SGEs are left out of the WQE, as mlx5 leaves them out. */
START_TEST(test_zero_length_sges_skipped)
{
	struct ibv_sge sges[3] = { { LADDR, 0, LKEY }, { LADDR + 8, 8, LKEY }, { LADDR + 16, 0, LKEY } };
	struct ibv_send_wr wr = { .wr_id = 8, .sg_list = sges, .num_sge = 3, .opcode = IBV_WR_SEND };
	struct daemon_send_wqe w;

	post_ok(&wr);
	assert_ctrl(0, MLX5_OPCODE_SEND, 2, 0, 0);
	assert_data_seg(seg_at(0, 1), &sges[1]);
	w = daemon_wqe_at(0);
	ck_assert_uint_eq(w.num_sge, 1);
	ck_assert_uint_eq(w.length, 8);
}
END_TEST

/* One doorbell per call: the record holds the BB counter past the list, BlueFlame the last WQE. */
START_TEST(test_doorbell_record_and_blueflame)
{
	struct ibv_sge sge = { LADDR, 8, LKEY };
	struct ibv_send_wr wr[3] = {
		{ .wr_id = 1, .next = &wr[1], .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND },
		{ .wr_id = 2, .next = &wr[2], .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND },
		{ .wr_id = 3, .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND_WITH_IMM,
		  .imm_data = htobe32(IMM) },
	};

	ck_assert_int_eq(daemon_sq_posted(dqp, 0), 0);
	post_ok(&wr[0]);
	ck_assert_int_eq(send_doorbells, 1);
	ck_assert_uint_eq(be32toh(qp.dbrec[MLX5_SND_DBR]), 3);
	ck_assert_uint_eq(qp.dbrec[MLX5_RCV_DBR], 0);
	ck_assert_int_eq(daemon_sq_posted(dqp, 0), 3);
	ck_assert_mem_eq(map + BF_OFFSET, ctrl_at(2), ROCEMU_WQE_BB);
	/* The next doorbell's copy goes to the other half of the BlueFlame register. */
	wr[2].next = NULL;
	post_ok(&wr[2]);
	ck_assert_int_eq(send_doorbells, 2);
	ck_assert_mem_eq(map + BF_OFFSET + BF_SIZE / 2, ctrl_at(3), ROCEMU_WQE_BB);
	ck_assert_int_eq(daemon_sq_posted(dqp, 0), 4);
	ck_assert_int_eq(daemon_sq_posted(dqp, 3), 1);
}
END_TEST

/* IBV_SEND_SIGNALED or a QP that signals all: CQ_UPDATE; the QP's setting alone does it too. */
START_TEST(test_signal_all)
{
	struct ibv_sge sge = { LADDR, 8, LKEY };
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND };

	post_ok(&wr);
	qp.sq_sig_all = 1;
	post_ok(&wr);
	assert_ctrl(0, MLX5_OPCODE_SEND, 2, 0, 0);
	assert_ctrl(1, MLX5_OPCODE_SEND, 2, MLX5_WQE_CTRL_CQ_UPDATE, 0);
	ck_assert(!daemon_wqe_at(0).signaled);
	ck_assert(daemon_wqe_at(1).signaled);
}
END_TEST

/* More SGEs than max_send_sge: ENOMEM at that WR (mlx5's post_send), those before it posted. */
START_TEST(test_too_many_sges_enomem)
{
	struct ibv_sge sges[MAX_SEND_SGE + 1] = { { LADDR, 8, LKEY } };
	struct ibv_send_wr wr[2] = {
		{ .wr_id = 1, .next = &wr[1], .sg_list = sges, .num_sge = 1, .opcode = IBV_WR_SEND },
		{ .wr_id = 2, .sg_list = sges, .num_sge = MAX_SEND_SGE + 1, .opcode = IBV_WR_SEND },
	};
	struct ibv_send_wr *bad;

	ck_assert_int_eq(post(&wr[0], &bad), ENOMEM);
	ck_assert_ptr_eq(bad, &wr[1]);
	ck_assert_uint_eq(qp.sq.cur_post, 1);
	ck_assert_int_eq(send_doorbells, 1);
	ck_assert_int_eq(daemon_sq_posted(dqp, 0), 1);
}
END_TEST

/* Inline data over max_inline_data: ENOMEM at that WR, as libmlx5's set_data_inl_seg. */
START_TEST(test_inline_too_long_enomem)
{
	char data[MAX_INLINE + 1] = { 0 };
	struct ibv_sge sges[2] = { { (uintptr_t)data, MAX_INLINE, 0 }, { (uintptr_t)data, 1, 0 } };
	struct ibv_send_wr wr = { .wr_id = 9, .sg_list = sges, .num_sge = 2, .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_INLINE };
	struct ibv_send_wr *bad;

	ck_assert_int_eq(post(&wr, &bad), ENOMEM);
	ck_assert_ptr_eq(bad, &wr);
	ck_assert_uint_eq(qp.sq.cur_post, 0);
	ck_assert_int_eq(send_doorbells, 0);
	ck_assert_uint_eq(qp.dbrec[MLX5_SND_DBR], 0);
	/* Exactly max_inline_data is taken. */
	wr.num_sge = 1;
	post_ok(&wr);
}
END_TEST

/* A full send queue: ENOMEM at the first WR that does not fit; the rest rang once. */
START_TEST(test_full_send_queue_enomem)
{
	struct ibv_sge sge = { LADDR, 8, LKEY };
	struct ibv_send_wr wr[SQ_BBS + 1], *bad;

	for (unsigned int i = 0; i <= SQ_BBS; i++)
		wr[i] = (struct ibv_send_wr){ .wr_id = i, .next = i < SQ_BBS ? &wr[i + 1] : NULL,
					      .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND };
	ck_assert_int_eq(post(&wr[0], &bad), ENOMEM);
	ck_assert_ptr_eq(bad, &wr[SQ_BBS]);
	ck_assert_uint_eq(qp.sq.cur_post, SQ_BBS);
	ck_assert_int_eq(send_doorbells, 1);
	ck_assert_int_eq(daemon_sq_posted(dqp, 0), SQ_BBS);
	/* Once the poller frees one BB, one more WQE fits. */
	__atomic_store_n(&qp.sq.tail, 1, __ATOMIC_RELEASE);
	ck_assert_int_eq(post(&wr[SQ_BBS], &bad), 0);
	ck_assert_uint_eq(daemon_wqe_at(SQ_BBS).wqe_counter, SQ_BBS);
}
END_TEST

/* Before RTS the send queue takes nothing: ENOMEM, as mlx5's qp_state_max_gs of -1 gives. */
START_TEST(test_send_before_rts_enomem)
{
	struct ibv_send_wr wr = { .wr_id = 1, .opcode = IBV_WR_SEND }, *bad;

	qp_close();
	qp_open_in(IBV_QPT_RC, IBV_QPS_INIT);
	ck_assert_int_eq(post(&wr, &bad), ENOMEM);
	ck_assert_ptr_eq(bad, &wr);
	ck_assert_int_eq(send_doorbells, 0);
	rocemu_qp_queues_state(&qp, IBV_QPS_RTS);
	ck_assert_int_eq(post(&wr, &bad), 0);
	assert_ctrl(0, MLX5_OPCODE_SEND, 1, 0, 0);
}
END_TEST

/* An opcode no verbs WR has: EINVAL at that WR, nothing rung. */
START_TEST(test_unknown_opcode_einval)
{
	struct ibv_sge sge = { LADDR, 8, LKEY };
	struct ibv_send_wr wr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1,
				  .opcode = (enum ibv_wr_opcode)0x7f }, *bad;

	ck_assert_int_eq(post(&wr, &bad), EINVAL);
	ck_assert_ptr_eq(bad, &wr);
	ck_assert_int_eq(send_doorbells, 0);
}
END_TEST

/* A READ on a UC QP is posted, as libmlx5 posts it: the device completes it in error. */
START_TEST(test_uc_read_left_to_the_device)
{
	struct ibv_sge sge = { LADDR, 8, LKEY };
	struct ibv_send_wr wr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_RDMA_READ, .wr.rdma = { RADDR, RKEY } };

	qp_close();
	qp_open(IBV_QPT_UC);
	post_ok(&wr);
	assert_ctrl(0, MLX5_OPCODE_RDMA_READ, 3, 0, 0);
	ck_assert_uint_eq(daemon_wqe_at(0).opcode, MLX5_OPCODE_RDMA_READ);
}
END_TEST

/* UD: the datagram segment carries the AH's address vector, the WR's QP and Q_Key. */
START_TEST(test_ud_datagram_segment)
{
	struct rocemu_ah ah;
	struct ibv_sge sge = { LADDR, 8, LKEY };
	struct ibv_send_wr wr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND_WITH_IMM, .imm_data = htobe32(IMM),
				  .wr.ud = { .ah = &ah.ibah, .remote_qpn = REMOTE_QPN,
					     .remote_qkey = QKEY } }, *bad;
	const struct mlx5_wqe_datagram_seg *d;
	struct daemon_send_wqe w;
	uint32_t posted;

	qp_close();
	qp_open(IBV_QPT_UD);
	memset(&ah, 0, sizeof(ah));
	for (unsigned int i = 0; i < sizeof(ah.av.rgid); i++)
		ah.av.rgid[i] = (uint8_t)(0x20 + i);
	ah.av.rlid = htobe16(0xc001);	/* where the shim keeps the UDP source port */
	ah.av.stat_rate_sl = 0x30;
	post_ok(&wr);
	assert_ctrl(0, MLX5_OPCODE_SEND_IMM, 1 + sizeof(*d) / ROCEMU_WQE_SEG + 1, 0, htobe32(IMM));
	d = seg_at(0, 1);
	ck_assert_uint_eq(be32toh(d->av.dqp_dct), REMOTE_QPN | MLX5_EXTENDED_UD_AV);
	ck_assert_uint_eq(be32toh(d->av.key.qkey.qkey), QKEY);
	ck_assert_mem_eq(d->av.rgid, ah.av.rgid, sizeof(ah.av.rgid));
	ck_assert_uint_eq(d->av.rlid, ah.av.rlid);
	ck_assert_uint_eq(d->av.stat_rate_sl, 0x30);
	assert_data_seg(seg_at(0, 1 + sizeof(*d) / ROCEMU_WQE_SEG), &sge);
	w = daemon_wqe_at(0);
	ck_assert_uint_eq(w.dqpn, REMOTE_QPN);
	ck_assert_uint_eq(w.qkey, QKEY);
	ck_assert_mem_eq(w.rgid, ah.av.rgid, sizeof(w.rgid));
	ck_assert_uint_eq(w.num_sge, 1);
	posted = qp.sq.cur_post;

	/* A UD WR without an AH, or with an opcode UD lacks: EINVAL. */
	wr.wr.ud.ah = NULL;
	ck_assert_int_eq(post(&wr, &bad), EINVAL);
	wr.wr.ud.ah = &ah.ibah;
	wr.opcode = IBV_WR_RDMA_WRITE;
	ck_assert_int_eq(post(&wr, &bad), EINVAL);
	ck_assert_uint_eq(qp.sq.cur_post, posted);
}
END_TEST

/* XRC: the SRQ at the target in the segment after ctrl. */
START_TEST(test_xrc_segment)
{
	struct ibv_sge sge = { LADDR, 8, LKEY };
	struct ibv_send_wr wr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_RDMA_WRITE, .wr.rdma = { RADDR, RKEY },
				  .qp_type.xrc.remote_srqn = REMOTE_SRQN };
	const struct rocemu_wqe_xrc_seg *x;
	struct daemon_send_wqe w;

	qp_close();
	qp_open(IBV_QPT_XRC_SEND);
	post_ok(&wr);
	assert_ctrl(0, MLX5_OPCODE_RDMA_WRITE, 4, 0, 0);
	x = seg_at(0, 1);
	ck_assert_uint_eq(be32toh(x->xrc_srqn), REMOTE_SRQN);
	w = daemon_wqe_at(0);
	ck_assert_uint_eq(w.xrc_srqn, REMOTE_SRQN);
	ck_assert_uint_eq(w.raddr, RADDR);
	ck_assert_uint_eq(w.num_sge, 1);
}
END_TEST

static const struct mlx5_wqe_data_seg *recv_seg(uint32_t index, unsigned int n)
{
	return (const struct mlx5_wqe_data_seg *)(map + RQ_OFFSET +
						  ((size_t)(index % RQ_WQES) << RQ_SHIFT)) + n;
}

static int post_recv(struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
{
	*bad = NULL;
	return rocemu_post_recv_op(ibqp, wr, bad);
}

/* Receive WQEs: data segments, zero-length ones left out, then a terminator with MLX5_INVALID_LKEY. */
START_TEST(test_recv_wqe)
{
	struct ibv_sge sges[3] = { { LADDR, 100, LKEY }, { LADDR + 100, 0, LKEY },
				   { LADDR + 200, 50, LKEY + 1 } };
	struct ibv_recv_wr wr[2] = { { .wr_id = 21, .next = &wr[1], .sg_list = sges, .num_sge = 3 },
				     { .wr_id = 22, .sg_list = sges, .num_sge = 1 } }, *bad;
	struct daemon_recv_wqe r;

	ck_assert_int_eq(post_recv(&wr[0], &bad), 0);
	ck_assert_int_eq(recv_doorbells, 1);
	ck_assert_uint_eq(be32toh(qp.dbrec[MLX5_RCV_DBR]), 2);
	ck_assert_uint_eq(qp.dbrec[MLX5_SND_DBR], 0);
	ck_assert_uint_eq(qp.rq.wrid[0], 21);
	ck_assert_uint_eq(qp.rq.wrid[1], 22);
	assert_data_seg(recv_seg(0, 0), &sges[0]);
	assert_data_seg(recv_seg(0, 1), &sges[2]);
	ck_assert_uint_eq(be32toh(recv_seg(0, 2)->lkey), MLX5_INVALID_LKEY);
	ck_assert_uint_eq(recv_seg(0, 2)->byte_count, 0);
	assert_data_seg(recv_seg(1, 0), &sges[0]);
	ck_assert_uint_eq(be32toh(recv_seg(1, 1)->lkey), MLX5_INVALID_LKEY);

	ck_assert_int_eq(daemon_rq_posted(dqp, 0), 2);
	daemon_parse_recv(dqp, 0, &r);
	ck_assert_uint_eq(r.num_sge, 2);
	ck_assert_uint_eq(r.length, 150);
	ck_assert_uint_eq(r.sge[1].addr, LADDR + 200);
	ck_assert_uint_eq(r.sge[1].key, LKEY + 1);
	daemon_parse_recv(dqp, 1, &r);
	ck_assert_uint_eq(r.num_sge, 1);
	ck_assert_uint_eq(r.length, 100);
}
END_TEST

/* max_recv_sge SGEs fill the WQE's segments up to it: no terminator is needed after them. */
START_TEST(test_recv_wqe_at_max_sge)
{
	struct ibv_sge sges[MAX_RECV_SGE] = { { LADDR, 1, LKEY }, { LADDR + 1, 2, LKEY },
					      { LADDR + 3, 3, LKEY } };
	struct ibv_recv_wr wr = { .wr_id = 23, .sg_list = sges, .num_sge = MAX_RECV_SGE }, *bad;
	struct daemon_recv_wqe r;

	ck_assert_int_eq(post_recv(&wr, &bad), 0);
	for (unsigned int i = 0; i < MAX_RECV_SGE; i++)
		assert_data_seg(recv_seg(0, i), &sges[i]);
	ck_assert_uint_eq(recv_seg(0, MAX_RECV_SGE)->lkey, 0);	/* untouched */
	daemon_parse_recv(dqp, 0, &r);
	ck_assert_uint_eq(r.num_sge, MAX_RECV_SGE);
	ck_assert_uint_eq(r.length, 6);
}
END_TEST

/* More SGEs than max_recv_sge: EINVAL at that WR (mlx5_post_recv), those before it posted. */
START_TEST(test_recv_too_many_sges_einval)
{
	struct ibv_sge sges[MAX_RECV_SGE + 1] = { { LADDR, 8, LKEY } };
	struct ibv_recv_wr wr[2] = { { .wr_id = 1, .next = &wr[1], .sg_list = sges, .num_sge = 1 },
				     { .wr_id = 2, .sg_list = sges, .num_sge = MAX_RECV_SGE + 1 } };
	struct ibv_recv_wr *bad;

	ck_assert_int_eq(post_recv(&wr[0], &bad), EINVAL);
	ck_assert_ptr_eq(bad, &wr[1]);
	ck_assert_uint_eq(qp.rq.head, 1);
	ck_assert_int_eq(recv_doorbells, 1);
	ck_assert_int_eq(daemon_rq_posted(dqp, 0), 1);
}
END_TEST

/* A full receive queue: ENOMEM at the WR that does not fit; once one is polled, it fits. */
START_TEST(test_recv_queue_full_enomem)
{
	struct ibv_sge sge = { LADDR, 8, LKEY };
	struct ibv_recv_wr wr[RQ_WQES + 1], *bad;

	for (unsigned int i = 0; i <= RQ_WQES; i++)
		wr[i] = (struct ibv_recv_wr){ .wr_id = i, .next = i < RQ_WQES ? &wr[i + 1] : NULL,
					      .sg_list = &sge, .num_sge = 1 };
	ck_assert_int_eq(post_recv(&wr[0], &bad), ENOMEM);
	ck_assert_ptr_eq(bad, &wr[RQ_WQES]);
	ck_assert_int_eq(daemon_rq_posted(dqp, 0), RQ_WQES);
	__atomic_store_n(&qp.rq.tail, 1, __ATOMIC_RELEASE);
	ck_assert_int_eq(post_recv(&wr[RQ_WQES], &bad), 0);
	ck_assert_uint_eq(qp.rq.wrid[0], RQ_WQES);
	ck_assert_int_eq(daemon_rq_posted(dqp, 1), RQ_WQES);
}
END_TEST

/* In RESET the receive queue takes nothing (EINVAL); from INIT on it does. */
START_TEST(test_recv_in_reset_einval)
{
	struct ibv_sge sge = { LADDR, 8, LKEY };
	struct ibv_recv_wr wr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1 }, *bad;

	qp_close();
	qp_open_in(IBV_QPT_RC, IBV_QPS_RESET);
	ck_assert_int_eq(post_recv(&wr, &bad), EINVAL);
	ck_assert_ptr_eq(bad, &wr);
	ck_assert_int_eq(recv_doorbells, 0);
	rocemu_qp_queues_state(&qp, IBV_QPS_INIT);
	ck_assert_int_eq(post_recv(&wr, &bad), 0);
}
END_TEST

/* A QP on an SRQ has no receive queue: ENOMEM, as mlx5's of max_post 0. */
START_TEST(test_recv_on_srq_qp_enomem)
{
	struct ibv_srq srq;
	struct ibv_sge sge = { LADDR, 8, LKEY };
	struct ibv_recv_wr wr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1 }, *bad;

	ibqp->srq = &srq;
	ck_assert_int_eq(post_recv(&wr, &bad), ENOMEM);
	ck_assert_ptr_eq(bad, &wr);
	ck_assert_int_eq(recv_doorbells, 0);
	ibqp->srq = NULL;
}
END_TEST

/* After RESET both queues start at index 0 again, their doorbell records zero. */
START_TEST(test_queues_reset)
{
	struct ibv_sge sge = { LADDR, 8, LKEY };
	struct ibv_send_wr swr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND };
	struct ibv_recv_wr rwr = { .wr_id = 2, .sg_list = &sge, .num_sge = 1 }, *rbad;

	post_ok(&swr);
	ck_assert_int_eq(post_recv(&rwr, &rbad), 0);
	rocemu_qp_queues_reset(&qp);
	ck_assert_uint_eq(qp.dbrec[MLX5_SND_DBR], 0);
	ck_assert_uint_eq(qp.dbrec[MLX5_RCV_DBR], 0);
	ck_assert_uint_eq(qp.sq.cur_post, 0);
	ck_assert_uint_eq(qp.rq.head, 0);
	ck_assert_int_eq(daemon_sq_posted(dqp, 0), 0);
	ck_assert_int_eq(daemon_rq_posted(dqp, 0), 0);
	swr.wr_id = 3;
	post_ok(&swr);
	ck_assert_uint_eq(qp.sq.wrid[0], 3);
	ck_assert_uint_eq(daemon_wqe_at(0).wqe_counter, 0);
}
END_TEST

/* Queues whose sizes are not powers of two are the daemon's error: EPROTO, nothing set up. */
START_TEST(test_queues_init_refuses_bad_layout)
{
	struct rocemu_qp bad_qp;

	memset(&bad_qp, 0, sizeof(bad_qp));
	bad_qp.layout = (struct rocemu_qp_layout){ .sq_wqe_cnt = 6 };
	ck_assert_int_eq(rocemu_qp_queues_init(&bad_qp), EPROTO);
	bad_qp.layout = (struct rocemu_qp_layout){ .sq_wqe_cnt = 8, .rq_wqe_cnt = 3 };
	ck_assert_int_eq(rocemu_qp_queues_init(&bad_qp), EPROTO);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("post");
	TCase *send = tcase_create("post_send");
	TCase *recv = tcase_create("post_recv");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(send, rc_open, qp_close);
	tcase_add_loop_test(send, test_send_opcode, 0, sizeof(send_cases) / sizeof(send_cases[0]));
	tcase_add_test(send, test_atomic_sge_takes_8_bytes);
	tcase_add_test(send, test_bind_mw);
	tcase_add_test(send, test_inline_send);
	tcase_add_test(send, test_inline_wraps_the_ring);
	tcase_add_test(send, test_data_segments_wrap_the_ring);
	tcase_add_test(send, test_inline_flag_ignored_on_read);
	tcase_add_test(send, test_zero_length_sges_skipped);
	tcase_add_test(send, test_doorbell_record_and_blueflame);
	tcase_add_test(send, test_signal_all);
	tcase_add_test(send, test_too_many_sges_enomem);
	tcase_add_test(send, test_inline_too_long_enomem);
	tcase_add_test(send, test_full_send_queue_enomem);
	tcase_add_test(send, test_send_before_rts_enomem);
	tcase_add_test(send, test_unknown_opcode_einval);
	tcase_add_test(send, test_uc_read_left_to_the_device);
	tcase_add_test(send, test_ud_datagram_segment);
	tcase_add_test(send, test_xrc_segment);
	suite_add_tcase(s, send);
	tcase_add_checked_fixture(recv, rc_open, qp_close);
	tcase_add_test(recv, test_recv_wqe);
	tcase_add_test(recv, test_recv_wqe_at_max_sge);
	tcase_add_test(recv, test_recv_too_many_sges_einval);
	tcase_add_test(recv, test_recv_queue_full_enomem);
	tcase_add_test(recv, test_recv_in_reset_einval);
	tcase_add_test(recv, test_recv_on_srq_qp_enomem);
	tcase_add_test(recv, test_queues_reset);
	tcase_add_test(recv, test_queues_init_refuses_bad_layout);
	suite_add_tcase(s, recv);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
