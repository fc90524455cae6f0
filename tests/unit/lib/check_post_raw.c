/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Sends on a RAW_PACKET QP (lib/datapath/eth_seg.c through wqe.c) into
 * rings in plain memory, read field by field through <infiniband/mlx5dv.h>'s
 * struct mlx5_wqe_eth_seg as libmlx5's post_send writes it: the frame's
 * first 18 bytes inline and the data segments going on after them, inline
 * sends, IBV_SEND_IP_CSUM's cs_flags, TSO's mss and whole header, the ds
 * and BBs (also by the daemon's parser), and the errno libmlx5 gives for
 * short frames, checksums before the port is set, TSO headers out of
 * bounds and TSO data past max_tso; the ibv_qp_ex builders alike.
 */
#include <check.h>
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "lib/shim.h"
#include "tests/unit/lib/daemon_rings.h"

#define QPN 0x000321
#define SQ_BBS 8
#define MAX_SEND_SGE 4
#define MAX_INLINE 128
#define MAX_TSO_HEADER 128
#define DBREC_OFFSET (SQ_BBS * ROCEMU_WQE_BB)
#define MAP_SIZE (DBREC_OFFSET + ROCEMU_WQE_BB)
#define LKEY 0x1111
#define INLINE_AT offsetof(struct mlx5_wqe_eth_seg, inline_hdr_start)

static struct rocemu_context rctx;
static struct rocemu_qp qp;
static struct ibv_qp *const ibqp = &qp.qpx.qp_base;
static _Alignas(ROCEMU_WQE_BB) char map[MAP_SIZE];
static struct daemon_qp *dqp;
static uint8_t frame[256];	/* a frame's bytes: byte i is i */

void rocemu_ctx_doorbell(struct rocemu_context *ctx)
{
	ck_assert_ptr_eq(ctx, &rctx);
}

void rocemu_ctx_recv_doorbell(struct rocemu_context *ctx)
{
	ck_assert_ptr_eq(ctx, &rctx);
}

/* A RAW_PACKET QP in RTS with room for TSO headers; port_set as modify with IBV_QP_PORT leaves it. */
static void raw_open_port(bool port_set)
{
	size_t i;

	memset(&rctx, 0, sizeof(rctx));
	memset(&qp, 0, sizeof(qp));
	memset(map, 0, sizeof(map));
	for (i = 0; i < sizeof(frame); i++)
		frame[i] = (uint8_t)i;
	ibqp->context = &rctx.vctx.context;
	ibqp->qp_type = IBV_QPT_RAW_PACKET;
	qp.type = IBV_QPT_RAW_PACKET;
	qp.qpn = QPN;
	qp.max_tso_header = MAX_TSO_HEADER;
	qp.cap = (struct ibv_qp_cap){ .max_send_sge = MAX_SEND_SGE, .max_inline_data = MAX_INLINE };
	qp.layout = (struct rocemu_qp_layout){
		.qpn = QPN, .sq_wqe_cnt = SQ_BBS, .size = MAP_SIZE, .sq_offset = 0,
		.rq_offset = DBREC_OFFSET, .dbrec_offset = DBREC_OFFSET,
	};
	qp.map = map;
	ck_assert_int_eq(rocemu_qp_queues_init(&qp), 0);
	rocemu_qp_queues_state(&qp, IBV_QPS_INIT);
	rocemu_qp_queues_state(&qp, IBV_QPS_RTS);
	if (port_set)
		rocemu_qp_raw_port_set(&qp);
	dqp = daemon_qp_new(map, &qp.layout, IBV_QPT_RAW_PACKET);
}

static void raw_open(void)
{
	raw_open_port(true);
}

static void raw_close(void)
{
	daemon_qp_free(dqp);
	rocemu_qp_queues_free(&qp);
}

static const struct mlx5_wqe_ctrl_seg *ctrl_at(uint32_t bb)
{
	return (const struct mlx5_wqe_ctrl_seg *)(map + (size_t)(bb % SQ_BBS) * ROCEMU_WQE_BB);
}

static const struct mlx5_wqe_eth_seg *eth_at(uint32_t bb)
{
	return (const struct mlx5_wqe_eth_seg *)(ctrl_at(bb) + 1);
}

static const void *seg_at(uint32_t bb, unsigned int n)
{
	size_t off = (size_t)(bb % SQ_BBS) * ROCEMU_WQE_BB + (size_t)n * ROCEMU_WQE_SEG;

	return map + off % ((size_t)SQ_BBS * ROCEMU_WQE_BB);
}

static void assert_ctrl(uint32_t bb, uint8_t opcode, uint32_t ds)
{
	ck_assert_uint_eq(be32toh(ctrl_at(bb)->opmod_idx_opcode), (bb & 0xffff) << 8 | opcode);
	ck_assert_uint_eq(be32toh(ctrl_at(bb)->qpn_ds), (uint32_t)QPN << 8 | ds);
}

static void assert_data_seg(const void *seg, uint64_t addr, uint32_t length, uint32_t lkey)
{
	const struct mlx5_wqe_data_seg *d = seg;

	ck_assert_uint_eq(be32toh(d->byte_count), length);
	ck_assert_uint_eq(be32toh(d->lkey), lkey);
	ck_assert_uint_eq(be64toh(d->addr), addr);
}

/* The Ethernet segment without TSO: flags, 18 bytes of the frame inline, nothing else set. */
static void assert_eth_plain(uint32_t bb, uint8_t cs_flags)
{
	const struct mlx5_wqe_eth_seg *e = eth_at(bb);

	ck_assert_uint_eq(e->rsvd0, 0);
	ck_assert_uint_eq(e->cs_flags, cs_flags);
	ck_assert_uint_eq(e->rsvd1, 0);
	ck_assert_uint_eq(e->mss, 0);
	ck_assert_uint_eq(e->rsvd2, 0);
	ck_assert_uint_eq(be16toh(e->inline_hdr_sz), 18);
	ck_assert_mem_eq((const uint8_t *)e + INLINE_AT, frame, 18);
}

static int post(struct ibv_send_wr *wr)
{
	struct ibv_send_wr *bad = NULL;
	int err = rocemu_post_send_op(ibqp, wr, &bad);

	ck_assert_ptr_eq(bad, err ? wr : NULL);
	return err;
}

static uint64_t addr_of(size_t off)
{
	return (uintptr_t)frame + off;
}

/* One SGE of a whole frame: its first 18 bytes inline, the data segment the rest (ds 4: 1 BB). */
START_TEST(test_send_plain)
{
	struct ibv_sge sge = { addr_of(0), 100, LKEY };
	struct ibv_send_wr wr = { .wr_id = 7, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED };
	struct daemon_send_wqe w;

	ck_assert_int_eq(post(&wr), 0);
	assert_ctrl(0, MLX5_OPCODE_SEND, 4);
	ck_assert_uint_eq(ctrl_at(0)->fm_ce_se, MLX5_WQE_CTRL_CQ_UPDATE);
	assert_eth_plain(0, 0);
	assert_data_seg(seg_at(0, 3), addr_of(18), 82, LKEY);
	ck_assert_uint_eq(qp.sq.cur_post, 1);
	ck_assert_int_eq(daemon_sq_posted(dqp, 0), 1);
	ck_assert_int_eq(daemon_parse_send(dqp, 0, 1, &w), 0);
	ck_assert_uint_eq(w.opcode, MLX5_OPCODE_SEND);
	ck_assert_uint_eq(w.num_sge, 1);
	ck_assert_uint_eq(w.sge[0].addr, addr_of(18));
	ck_assert_uint_eq(w.sge[0].length, 82);
}
END_TEST

/* A header of exactly 18 bytes in its own SGE: the data starts with the next SGE whole. */
START_TEST(test_send_header_sge)
{
	struct ibv_sge sges[2] = { { addr_of(0), 18, LKEY }, { addr_of(18), 60, LKEY + 1 } };
	struct ibv_send_wr wr = { .sg_list = sges, .num_sge = 2, .opcode = IBV_WR_SEND };

	ck_assert_int_eq(post(&wr), 0);
	assert_ctrl(0, MLX5_OPCODE_SEND, 4);
	assert_eth_plain(0, 0);
	assert_data_seg(seg_at(0, 3), addr_of(18), 60, LKEY + 1);
}
END_TEST

/* Headers spread over short SGEs (one of no bytes): gathered inline, the data from the last one's rest. */
START_TEST(test_send_header_gathered)
{
	struct ibv_sge sges[4] = { { addr_of(0), 6, LKEY }, { addr_of(6), 0, LKEY },
				   { addr_of(6), 8, LKEY }, { addr_of(14), 50, LKEY + 2 } };
	struct ibv_send_wr wr = { .sg_list = sges, .num_sge = 4, .opcode = IBV_WR_SEND };

	ck_assert_int_eq(post(&wr), 0);
	assert_ctrl(0, MLX5_OPCODE_SEND, 4);
	assert_eth_plain(0, 0);
	assert_data_seg(seg_at(0, 3), addr_of(18), 46, LKEY + 2);
}
END_TEST

/* Fewer than 18 bytes, or no SGE, is EINVAL (copy_eth_inline_headers); nothing posted. */
START_TEST(test_send_short_frame_einval)
{
	struct ibv_sge sges[2] = { { addr_of(0), 10, LKEY }, { addr_of(10), 7, LKEY } };
	struct ibv_send_wr wr = { .sg_list = sges, .num_sge = 2, .opcode = IBV_WR_SEND };

	ck_assert_int_eq(post(&wr), EINVAL);
	wr.num_sge = 0;
	ck_assert_int_eq(post(&wr), EINVAL);
	ck_assert_uint_eq(qp.sq.cur_post, 0);
}
END_TEST

/* IBV_SEND_INLINE: 18 bytes in the Ethernet segment, the rest in an inline segment after it. */
START_TEST(test_send_inline)
{
	struct ibv_sge sge = { addr_of(0), 64, LKEY };
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_INLINE };
	const struct mlx5_wqe_inl_data_seg *inl;

	ck_assert_int_eq(post(&wr), 0);
	/* ctrl, eth (2), inline header and 46 bytes: 4 bytes + 46 = 50 -> 4 units */
	assert_ctrl(0, MLX5_OPCODE_SEND, 1 + 2 + 4);
	assert_eth_plain(0, 0);
	inl = seg_at(0, 3);
	ck_assert_uint_eq(be32toh(inl->byte_count), 46 | MLX5_INLINE_SEG);
	ck_assert_mem_eq(inl + 1, frame + 18, 46);
	ck_assert_uint_eq(qp.sq.cur_post, 2);
}
END_TEST

/* Checksums: cs_flags L3 and L4 once the port is set; before it EINVAL, as mlx5's qp_cap_cache says. */
START_TEST(test_send_ip_csum)
{
	struct ibv_sge sge = { addr_of(0), 60, LKEY };
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_IP_CSUM };

	ck_assert_int_eq(post(&wr), 0);
	assert_eth_plain(0, MLX5_ETH_WQE_L3_CSUM | MLX5_ETH_WQE_L4_CSUM);
	raw_close();
	raw_open_port(false);
	ck_assert_int_eq(post(&wr), EINVAL);
	wr.send_flags = 0;
	ck_assert_int_eq(post(&wr), 0);
}
END_TEST

/* TSO: mss, the whole 54-byte header inline (ds 1 + 5), the payload by data segment. */
START_TEST(test_send_tso)
{
	struct ibv_sge sge = { addr_of(54), 200, LKEY };
	struct ibv_send_wr wr = { .wr_id = 9, .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_TSO,
				  .send_flags = IBV_SEND_IP_CSUM };
	const struct mlx5_wqe_eth_seg *e;

	wr.tso.hdr = frame;
	wr.tso.hdr_sz = 54;
	wr.tso.mss = 1460;
	ck_assert_int_eq(post(&wr), 0);
	/* eth: 16 + align(54 - 2, 16) = 80 bytes, 5 units */
	ck_assert_uint_eq(rocemu_wqe_eth_seg_bytes(54), 5 * ROCEMU_WQE_SEG);
	assert_ctrl(0, MLX5_OPCODE_TSO, 1 + 5 + 1);
	e = eth_at(0);
	ck_assert_uint_eq(e->cs_flags, MLX5_ETH_WQE_L3_CSUM | MLX5_ETH_WQE_L4_CSUM);
	ck_assert_uint_eq(be16toh(e->mss), 1460);
	ck_assert_uint_eq(be16toh(e->inline_hdr_sz), 54);
	ck_assert_mem_eq((const uint8_t *)e + INLINE_AT, frame, 54);
	assert_data_seg(seg_at(0, 6), addr_of(54), 200, LKEY);
	ck_assert_uint_eq(qp.sq.cur_post, 2);	/* 7 units: 2 BBs */
	ck_assert_uint_eq(qp.sq.wr_opcode[0], IBV_WR_TSO);
}
END_TEST

/* A TSO header that runs past the ring's end goes on at BB 0, and so do the data segments. */
START_TEST(test_send_tso_wraps)
{
	struct ibv_sge filler_sge = { addr_of(0), 20, LKEY }, sge = { addr_of(0), 30, LKEY + 3 };
	struct ibv_send_wr filler = { .sg_list = &filler_sge, .num_sge = 1, .opcode = IBV_WR_SEND };
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_TSO };
	const size_t at = 7 * ROCEMU_WQE_BB + sizeof(struct mlx5_wqe_ctrl_seg) + INLINE_AT;
	const size_t before_end = SQ_BBS * ROCEMU_WQE_BB - at;
	size_t i;

	for (i = 0; i < 7; i++)
		ck_assert_int_eq(post(&filler), 0);
	__atomic_store_n(&qp.sq.tail, 7, __ATOMIC_RELEASE);	/* the fillers completed */
	wr.tso.hdr = frame + 100;
	wr.tso.hdr_sz = 100;
	wr.tso.mss = 500;
	ck_assert_int_eq(post(&wr), 0);
	/* eth 16 + align(98, 16) = 128 bytes (8 units): 10 units, 3 BBs from BB 7 */
	assert_ctrl(7, MLX5_OPCODE_TSO, 1 + 8 + 1);
	ck_assert_uint_eq(qp.sq.cur_post, 10);
	ck_assert_mem_eq(map + at, frame + 100, before_end);
	ck_assert_mem_eq(map, frame + 100 + before_end, 100 - before_end);
	assert_data_seg(seg_at(7, 9), addr_of(0), 30, LKEY + 3);
}
END_TEST

/* Header shorter than 14 or past max_tso_header: EINVAL; payload past max_tso, or before the port: EINVAL. */
START_TEST(test_send_tso_limits_einval)
{
	struct ibv_sge sge = { addr_of(0), 100, LKEY };
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_TSO };

	wr.tso.hdr = frame;
	wr.tso.mss = 100;
	wr.tso.hdr_sz = 13;
	ck_assert_int_eq(post(&wr), EINVAL);
	wr.tso.hdr_sz = MAX_TSO_HEADER + 1;
	ck_assert_int_eq(post(&wr), EINVAL);
	wr.tso.hdr_sz = 14;
	ck_assert_int_eq(post(&wr), 0);
	sge.length = ROCEMU_TSO_MAX + 1;
	ck_assert_int_eq(post(&wr), EINVAL);
	raw_close();
	raw_open_port(false);
	sge.length = 1;
	ck_assert_int_eq(post(&wr), EINVAL);
}
END_TEST

/* A RAW_PACKET QP sends and segments only: RDMA and SEND with immediate are EINVAL. */
START_TEST(test_send_other_opcodes_einval)
{
	struct ibv_sge sge = { addr_of(0), 100, LKEY };
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE };

	ck_assert_int_eq(post(&wr), EINVAL);
	wr.opcode = IBV_WR_SEND_WITH_IMM;
	ck_assert_int_eq(post(&wr), EINVAL);
	ck_assert_uint_eq(qp.sq.cur_post, 0);
}
END_TEST

/* TSO on any other QP type is EINVAL (it is a RAW_PACKET opcode). */
START_TEST(test_tso_on_rc_einval)
{
	struct ibv_sge sge = { addr_of(0), 100, LKEY };
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_TSO };

	qp.type = IBV_QPT_RC;
	wr.tso.hdr = frame;
	wr.tso.hdr_sz = 54;
	ck_assert_int_eq(post(&wr), EINVAL);
}
END_TEST

/* The ibv_qp_ex builders write the same WQEs: wr_send with an SGE, wr_send_tso with inline data. */
START_TEST(test_wr_api)
{
	struct ibv_qp_ex *qpx = &qp.qpx;
	const struct mlx5_wqe_inl_data_seg *inl;
	const struct mlx5_wqe_eth_seg *e;

	rocemu_qp_wr_ops_init(&qp);
	ck_assert_ptr_nonnull(qpx->wr_send_tso);
	ck_assert_ptr_null(qpx->wr_rdma_write);
	ibv_wr_start(qpx);
	qpx->wr_id = 1;
	qpx->wr_flags = IBV_SEND_IP_CSUM;
	ibv_wr_send(qpx);
	ibv_wr_set_sge(qpx, LKEY, addr_of(0), 40);
	qpx->wr_id = 2;
	qpx->wr_flags = 0;
	ibv_wr_send_tso(qpx, frame, 42, 1000);
	ibv_wr_set_inline_data(qpx, frame + 42, 20);
	ck_assert_int_eq(ibv_wr_complete(qpx), 0);
	assert_ctrl(0, MLX5_OPCODE_SEND, 4);
	assert_eth_plain(0, MLX5_ETH_WQE_L3_CSUM | MLX5_ETH_WQE_L4_CSUM);
	assert_data_seg(seg_at(0, 3), addr_of(18), 22, LKEY);
	/* eth 16 + align(40, 16) = 64 bytes (4 units), inline 4 + 20 -> 2 units */
	assert_ctrl(1, MLX5_OPCODE_TSO, 1 + 4 + 2);
	e = eth_at(1);
	ck_assert_uint_eq(be16toh(e->mss), 1000);
	ck_assert_uint_eq(be16toh(e->inline_hdr_sz), 42);
	ck_assert_mem_eq((const uint8_t *)e + INLINE_AT, frame, 42);
	inl = seg_at(1, 5);
	ck_assert_uint_eq(be32toh(inl->byte_count), 20 | MLX5_INLINE_SEG);
	ck_assert_mem_eq(inl + 1, frame + 42, 20);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("post_raw");
	TCase *tc = tcase_create("raw_send");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(tc, raw_open, raw_close);
	tcase_add_test(tc, test_send_plain);
	tcase_add_test(tc, test_send_header_sge);
	tcase_add_test(tc, test_send_header_gathered);
	tcase_add_test(tc, test_send_short_frame_einval);
	tcase_add_test(tc, test_send_inline);
	tcase_add_test(tc, test_send_ip_csum);
	tcase_add_test(tc, test_send_tso);
	tcase_add_test(tc, test_send_tso_wraps);
	tcase_add_test(tc, test_send_tso_limits_einval);
	tcase_add_test(tc, test_send_other_opcodes_einval);
	tcase_add_test(tc, test_tso_on_rc_einval);
	tcase_add_test(tc, test_wr_api);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
