/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The ibv_qp_ex work-request API (lib/datapath/wr.c) writing through the
 * shim's own send queue writer (lib/datapath/wqe.c) into a ring in plain
 * memory: what each builder and setter puts in the WQE, one doorbell per
 * batch, and a batch with an error anywhere dropped whole, its first error
 * returned, as the mlx5 provider does.
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/shim.h"

#define QPN 0x0000a5
#define SQ_BBS 8
#define MAX_SGE 2
#define MAX_INLINE 64
#define DBREC_OFFSET (SQ_BBS * ROCEMU_WQE_BB)
#define BF_OFFSET (DBREC_OFFSET + ROCEMU_WQE_BB)
#define BF_SIZE (2 * ROCEMU_WQE_BB)
#define MAP_SIZE (BF_OFFSET + BF_SIZE)

#define LKEY 0x1111
#define RKEY 0x2222
#define RADDR 0x7f0000001000ull
#define LADDR 0x600000ull

static struct rocemu_context rctx;
static struct rocemu_qp qp;
static struct ibv_qp_ex *const qpx = &qp.qpx;
static _Alignas(ROCEMU_WQE_BB) char map[MAP_SIZE];
static int doorbells;

/* The doorbell's last step, telling the daemon: here, counted. */
void rocemu_ctx_doorbell(struct rocemu_context *ctx)
{
	ck_assert_ptr_eq(ctx, &rctx);
	doorbells++;
}

/* A QP of type in RTS, its send queue SQ_BBS basic blocks at the start of map. */
static void qp_open(enum ibv_qp_type type)
{
	memset(&rctx, 0, sizeof(rctx));
	memset(&qp, 0, sizeof(qp));
	memset(map, 0, sizeof(map));
	doorbells = 0;
	qp.qpx.qp_base.context = &rctx.vctx.context;
	qp.qpx.qp_base.qp_type = type;
	qp.type = type;
	qp.qpn = QPN;
	qp.cap.max_send_sge = MAX_SGE;
	qp.cap.max_inline_data = MAX_INLINE;
	qp.layout = (struct rocemu_qp_layout){
		.qpn = QPN, .sq_wqe_cnt = SQ_BBS, .size = MAP_SIZE, .sq_offset = 0,
		.dbrec_offset = DBREC_OFFSET, .bf_offset = BF_OFFSET, .bf_size = BF_SIZE,
	};
	qp.map = map;
	ck_assert_int_eq(rocemu_qp_queues_init(&qp), 0);
	rocemu_qp_queues_state(&qp, IBV_QPS_RTS);
	rocemu_qp_wr_ops_init(&qp);
}

static void rc_open(void)
{
	qp_open(IBV_QPT_RC);
}

static void qp_close(void)
{
	rocemu_qp_queues_free(&qp);
}

static const struct mlx5_wqe_ctrl_seg *ctrl_at(uint32_t bb)
{
	return (const struct mlx5_wqe_ctrl_seg *)(map + (size_t)(bb % SQ_BBS) * ROCEMU_WQE_BB);
}

/* The segment n 16-byte units after the ctrl segment of the WQE at bb. */
static const void *seg_at(uint32_t bb, unsigned int n)
{
	return (const char *)ctrl_at(bb) + (size_t)n * ROCEMU_WQE_SEG;
}

static void assert_ctrl(uint32_t bb, uint8_t opcode, uint32_t ds)
{
	const struct mlx5_wqe_ctrl_seg *ctrl = ctrl_at(bb);

	ck_assert_uint_eq(rocemu_wqe_ctrl_opcode(ctrl), opcode);
	ck_assert_uint_eq(rocemu_wqe_ctrl_index(ctrl), bb);
	ck_assert_uint_eq(rocemu_wqe_ctrl_qpn(ctrl), QPN);
	ck_assert_uint_eq(rocemu_wqe_ctrl_ds(ctrl), ds);
}

static void assert_data_seg(const void *seg, uint32_t lkey, uint64_t addr, uint32_t length)
{
	const struct mlx5_wqe_data_seg *d = seg;

	ck_assert_uint_eq(be32toh(d->lkey), lkey);
	ck_assert_uint_eq(be64toh(d->addr), addr);
	ck_assert_uint_eq(be32toh(d->byte_count), length);
}

/* Nothing of a failed batch reached the ring's owner: no counter moved, no doorbell. */
static void assert_nothing_posted(void)
{
	ck_assert_uint_eq(qp.sq.cur_post, 0);
	ck_assert_uint_eq(qp.dbrec[MLX5_SND_DBR], 0);
	ck_assert_int_eq(doorbells, 0);
}

static void send_one(uint64_t wr_id)
{
	qpx->wr_id = wr_id;
	qpx->wr_send(qpx);
	qpx->wr_set_sge(qpx, LKEY, LADDR, 8);
}

/* Two WQEs, one doorbell: the record holds the counter past both, BlueFlame the last. */
START_TEST(test_batch_rings_once)
{
	qpx->wr_start(qpx);
	qpx->wr_id = 1;
	qpx->wr_rdma_write(qpx, RKEY, RADDR);
	qpx->wr_set_sge(qpx, LKEY, LADDR, 100);
	qpx->wr_id = 2;
	qpx->wr_send_imm(qpx, htobe32(0xabcd));
	qpx->wr_set_sge(qpx, LKEY, LADDR + 100, 20);
	ck_assert_int_eq(qpx->wr_complete(qpx), 0);

	ck_assert_int_eq(doorbells, 1);
	ck_assert_uint_eq(qp.sq.cur_post, 2);
	ck_assert_uint_eq(qp.dbrec[MLX5_SND_DBR], rocemu_wq_dbrec_word(2));
	assert_ctrl(0, MLX5_OPCODE_RDMA_WRITE, 3);
	ck_assert_uint_eq(be64toh(((const struct mlx5_wqe_raddr_seg *)seg_at(0, 1))->raddr), RADDR);
	ck_assert_uint_eq(be32toh(((const struct mlx5_wqe_raddr_seg *)seg_at(0, 1))->rkey), RKEY);
	assert_data_seg(seg_at(0, 2), LKEY, LADDR, 100);
	assert_ctrl(1, MLX5_OPCODE_SEND_IMM, 2);
	ck_assert_uint_eq(be32toh(ctrl_at(1)->imm), 0xabcd);
	assert_data_seg(seg_at(1, 1), LKEY, LADDR + 100, 20);
	ck_assert_uint_eq(qp.sq.wrid[0], 1);
	ck_assert_uint_eq(qp.sq.wrid[1], 2);
	ck_assert_uint_eq(qp.sq.wr_opcode[0], IBV_WR_RDMA_WRITE);
	ck_assert_uint_eq(qp.sq.wr_opcode[1], IBV_WR_SEND_WITH_IMM);
	ck_assert_mem_eq(map + BF_OFFSET, ctrl_at(1), ROCEMU_WQE_BB);
}
END_TEST

/* wr_id and wr_flags are taken when the builder runs, not when the data setter does. */
START_TEST(test_wr_id_and_flags_of_the_builder_call)
{
	qpx->wr_start(qpx);
	qpx->wr_id = 7;
	qpx->wr_flags = IBV_SEND_SIGNALED | IBV_SEND_SOLICITED;
	qpx->wr_send(qpx);
	qpx->wr_id = 8;
	qpx->wr_flags = 0;
	qpx->wr_set_sge(qpx, LKEY, LADDR, 8);
	ck_assert_int_eq(qpx->wr_complete(qpx), 0);

	ck_assert_uint_eq(qp.sq.wrid[0], 7);
	ck_assert_uint_eq(ctrl_at(0)->fm_ce_se, MLX5_WQE_CTRL_CQ_UPDATE | MLX5_WQE_CTRL_SOLICITED);
}
END_TEST

/* IBV_SEND_INLINE in wr_flags means nothing: inline data comes from the inline setters only. */
START_TEST(test_inline_only_from_inline_setters)
{
	static const char payload[] = "hello";
	const struct mlx5_wqe_inl_data_seg *inl;

	qpx->wr_start(qpx);
	qpx->wr_flags = IBV_SEND_INLINE;
	qpx->wr_send(qpx);
	qpx->wr_set_sge(qpx, LKEY, LADDR, 8);
	qpx->wr_flags = 0;
	qpx->wr_send(qpx);
	qpx->wr_set_inline_data(qpx, (void *)payload, 5);
	ck_assert_int_eq(qpx->wr_complete(qpx), 0);

	assert_ctrl(0, MLX5_OPCODE_SEND, 2);
	assert_data_seg(seg_at(0, 1), LKEY, LADDR, 8);
	assert_ctrl(1, MLX5_OPCODE_SEND, 2);
	inl = seg_at(1, 1);
	ck_assert_uint_eq(be32toh(inl->byte_count), 5 | MLX5_INLINE_SEG);
	ck_assert_mem_eq(inl + 1, payload, 5);
}
END_TEST

/* A READ sends no data of its own: inline data for it, even an empty list, is EINVAL. */
START_TEST(test_inline_data_on_read_refused)
{
	qpx->wr_start(qpx);
	qpx->wr_rdma_read(qpx, RKEY, RADDR);
	qpx->wr_set_inline_data(qpx, map, 4);
	ck_assert_int_eq(qpx->wr_complete(qpx), EINVAL);
	assert_nothing_posted();

	qpx->wr_start(qpx);
	qpx->wr_rdma_read(qpx, RKEY, RADDR);
	qpx->wr_set_inline_data_list(qpx, 0, NULL);
	ck_assert_int_eq(qpx->wr_complete(qpx), EINVAL);
	assert_nothing_posted();
}
END_TEST

/* Inline data over max_inline_data is ENOMEM, as libmlx5's wr_set_inline_data(_list) say. */
START_TEST(test_inline_data_too_long)
{
	static char payload[MAX_INLINE + 1];
	const struct ibv_data_buf bufs[2] = { { payload, MAX_INLINE }, { payload, 1 } };

	qpx->wr_start(qpx);
	qpx->wr_send(qpx);
	qpx->wr_set_inline_data(qpx, payload, MAX_INLINE + 1);
	ck_assert_int_eq(qpx->wr_complete(qpx), ENOMEM);
	assert_nothing_posted();

	qpx->wr_start(qpx);
	qpx->wr_send(qpx);
	qpx->wr_set_inline_data_list(qpx, 2, bufs);
	ck_assert_int_eq(qpx->wr_complete(qpx), ENOMEM);
	assert_nothing_posted();

	qpx->wr_start(qpx);
	qpx->wr_send(qpx);
	qpx->wr_set_inline_data(qpx, payload, MAX_INLINE);
	ck_assert_int_eq(qpx->wr_complete(qpx), 0);
}
END_TEST

/* Too many SGEs in the middle (ENOMEM) drop the WQEs before it too; the next batch starts at 0. */
START_TEST(test_error_drops_the_whole_batch)
{
	const struct ibv_sge sges[MAX_SGE + 1] = {
		{ LADDR, 8, LKEY }, { LADDR + 8, 8, LKEY }, { LADDR + 16, 8, LKEY },
	};

	qpx->wr_start(qpx);
	send_one(1);
	qpx->wr_send(qpx);
	qpx->wr_set_sge_list(qpx, MAX_SGE + 1, sges);
	send_one(3);
	ck_assert_int_eq(qpx->wr_complete(qpx), ENOMEM);
	assert_nothing_posted();

	qpx->wr_start(qpx);
	send_one(4);
	ck_assert_int_eq(qpx->wr_complete(qpx), 0);
	ck_assert_uint_eq(qp.sq.cur_post, 1);
	ck_assert_uint_eq(qp.sq.wrid[0], 4);
	ck_assert_int_eq(doorbells, 1);
}
END_TEST

/* A full ring is ENOMEM, and the first error is the one wr_complete returns. */
START_TEST(test_first_error_returned)
{
	unsigned int i;

	qpx->wr_start(qpx);
	for (i = 0; i < SQ_BBS; i++)
		send_one(i);
	ck_assert_uint_eq(qp.sq.cur_post, SQ_BBS);
	send_one(SQ_BBS);
	qpx->wr_send(qpx);	/* no data setter: EINVAL, after the ENOMEM */
	ck_assert_int_eq(qpx->wr_complete(qpx), ENOMEM);
	assert_nothing_posted();
}
END_TEST

/* A builder without its data setter, or a data setter without a builder: EINVAL. */
START_TEST(test_builder_and_setter_pair_up)
{
	qpx->wr_start(qpx);
	qpx->wr_send(qpx);
	ck_assert_int_eq(qpx->wr_complete(qpx), EINVAL);
	assert_nothing_posted();

	qpx->wr_start(qpx);
	qpx->wr_send(qpx);
	send_one(2);
	ck_assert_int_eq(qpx->wr_complete(qpx), EINVAL);
	assert_nothing_posted();

	qpx->wr_start(qpx);
	qpx->wr_set_sge(qpx, LKEY, LADDR, 8);
	ck_assert_int_eq(qpx->wr_complete(qpx), EINVAL);
	assert_nothing_posted();
}
END_TEST

/* Before RTS nothing is posted; once there, the same batch is. */
START_TEST(test_nothing_posted_before_rts)
{
	rocemu_qp_queues_state(&qp, IBV_QPS_RESET);
	qpx->wr_start(qpx);
	send_one(1);
	ck_assert_int_eq(qpx->wr_complete(qpx), EINVAL);
	assert_nothing_posted();

	rocemu_qp_queues_state(&qp, IBV_QPS_RTS);
	qpx->wr_start(qpx);
	send_one(1);
	ck_assert_int_eq(qpx->wr_complete(qpx), 0);
	ck_assert_int_eq(doorbells, 1);
}
END_TEST

/* wr_abort forgets the batch and lets go of the send queue. */
START_TEST(test_abort_rolls_back)
{
	qpx->wr_start(qpx);
	send_one(1);
	ck_assert_uint_eq(qp.sq.cur_post, 1);
	qpx->wr_abort(qpx);
	assert_nothing_posted();
	ck_assert_int_eq(pthread_spin_trylock(&qp.sq.lock), 0);
	pthread_spin_unlock(&qp.sq.lock);
}
END_TEST

/* Local operations are written by their builder, with no data setter. */
START_TEST(test_local_invalidate_needs_no_setter)
{
	qpx->wr_start(qpx);
	qpx->wr_id = 9;
	qpx->wr_local_inv(qpx, RKEY);
	ck_assert_int_eq(qpx->wr_complete(qpx), 0);

	assert_ctrl(0, MLX5_OPCODE_LOCAL_INVAL, 1);
	ck_assert_uint_eq(be32toh(ctrl_at(0)->imm), RKEY);
	ck_assert_uint_eq(qp.sq.wrid[0], 9);
}
END_TEST

/* Compare-and-swap puts swap first, then compare; fetch-and-add its addend, compare 0. */
START_TEST(test_atomic_segments)
{
	const struct mlx5_wqe_atomic_seg *a;

	qpx->wr_start(qpx);
	qpx->wr_atomic_cmp_swp(qpx, RKEY, RADDR, 0x1111222233334444ull, 0x5555666677778888ull);
	qpx->wr_set_sge(qpx, LKEY, LADDR, 8);
	qpx->wr_atomic_fetch_add(qpx, RKEY, RADDR + 8, 5);
	qpx->wr_set_sge(qpx, LKEY, LADDR + 8, 8);
	ck_assert_int_eq(qpx->wr_complete(qpx), 0);

	assert_ctrl(0, MLX5_OPCODE_ATOMIC_CS, 4);
	a = seg_at(0, 2);
	ck_assert_uint_eq(be64toh(a->swap_add), 0x5555666677778888ull);
	ck_assert_uint_eq(be64toh(a->compare), 0x1111222233334444ull);
	assert_data_seg(seg_at(0, 3), LKEY, LADDR, 8);
	assert_ctrl(1, MLX5_OPCODE_ATOMIC_FA, 4);
	a = seg_at(1, 2);
	ck_assert_uint_eq(be64toh(a->swap_add), 5);
	ck_assert_uint_eq(be64toh(a->compare), 0);
	ck_assert_uint_eq(be64toh(((const struct mlx5_wqe_raddr_seg *)seg_at(1, 1))->raddr),
			  RADDR + 8);
}
END_TEST

/* Each builder a QP type takes, and only those (mlx5_qp_fill_wr_pfns). */
START_TEST(test_builders_of_each_qp_type)
{
	qp_open(IBV_QPT_UD);
	ck_assert_ptr_nonnull(qpx->wr_send);
	ck_assert_ptr_nonnull(qpx->wr_send_imm);
	ck_assert_ptr_nonnull(qpx->wr_set_ud_addr);
	ck_assert_ptr_null(qpx->wr_send_inv);
	ck_assert_ptr_null(qpx->wr_rdma_write);
	ck_assert_ptr_null(qpx->wr_local_inv);
	ck_assert_ptr_null(qpx->wr_set_xrc_srqn);
	qp_close();

	qp_open(IBV_QPT_UC);
	ck_assert_ptr_nonnull(qpx->wr_rdma_write);
	ck_assert_ptr_nonnull(qpx->wr_send_inv);
	ck_assert_ptr_nonnull(qpx->wr_bind_mw);
	ck_assert_ptr_null(qpx->wr_rdma_read);
	ck_assert_ptr_null(qpx->wr_atomic_cmp_swp);
	ck_assert_ptr_null(qpx->wr_atomic_fetch_add);
	ck_assert_ptr_null(qpx->wr_set_ud_addr);
	qp_close();

	qp_open(IBV_QPT_XRC_SEND);
	ck_assert_ptr_nonnull(qpx->wr_set_xrc_srqn);
	ck_assert_ptr_nonnull(qpx->wr_rdma_read);
	ck_assert_ptr_nonnull(qpx->wr_atomic_fetch_add);
	ck_assert_ptr_null(qpx->wr_set_ud_addr);
}
END_TEST

/* UD: the address comes with each WQE; one without is EINVAL. */
START_TEST(test_ud_address_for_each_wqe)
{
	struct rocemu_ah ah;
	const struct mlx5_wqe_datagram_seg *d;
	uint32_t posted;

	qp_open(IBV_QPT_UD);
	memset(&ah, 0, sizeof(ah));
	memset(ah.av.rgid, 0x5a, sizeof(ah.av.rgid));
	qpx->wr_start(qpx);
	qpx->wr_send(qpx);
	qpx->wr_set_ud_addr(qpx, &ah.ibah, 0x000777, 0x11111111);
	qpx->wr_set_sge(qpx, LKEY, LADDR, 8);
	ck_assert_int_eq(qpx->wr_complete(qpx), 0);
	d = seg_at(0, 1);
	ck_assert_uint_eq(be32toh(d->av.dqp_dct), 0x000777 | MLX5_EXTENDED_UD_AV);
	ck_assert_uint_eq(be32toh(d->av.key.qkey.qkey), 0x11111111);
	ck_assert_mem_eq(d->av.rgid, ah.av.rgid, sizeof(ah.av.rgid));
	assert_ctrl(0, MLX5_OPCODE_SEND, 1 + sizeof(*d) / ROCEMU_WQE_SEG + 1);
	assert_data_seg(seg_at(0, 1 + sizeof(*d) / ROCEMU_WQE_SEG), LKEY, LADDR, 8);
	posted = qp.sq.cur_post;

	qpx->wr_start(qpx);
	send_one(2);
	ck_assert_int_eq(qpx->wr_complete(qpx), EINVAL);
	ck_assert_uint_eq(qp.sq.cur_post, posted);
	ck_assert_int_eq(doorbells, 1);
}
END_TEST

/* XRC: the SRQ at the target goes in the segment after ctrl. */
START_TEST(test_xrc_srqn)
{
	const struct rocemu_wqe_xrc_seg *x;

	qp_open(IBV_QPT_XRC_SEND);
	qpx->wr_start(qpx);
	qpx->wr_send(qpx);
	qpx->wr_set_xrc_srqn(qpx, 0x000042);
	qpx->wr_set_sge(qpx, LKEY, LADDR, 8);
	ck_assert_int_eq(qpx->wr_complete(qpx), 0);
	assert_ctrl(0, MLX5_OPCODE_SEND, 3);
	x = seg_at(0, 1);
	ck_assert_uint_eq(be32toh(x->xrc_srqn), 0x000042);
	assert_data_seg(seg_at(0, 2), LKEY, LADDR, 8);
}
END_TEST

static Suite *wr_suite(void)
{
	Suite *s = suite_create("wr");
	TCase *rc = tcase_create("rc");
	TCase *types = tcase_create("qp types");

	tcase_add_checked_fixture(rc, rc_open, qp_close);
	tcase_add_test(rc, test_batch_rings_once);
	tcase_add_test(rc, test_wr_id_and_flags_of_the_builder_call);
	tcase_add_test(rc, test_inline_only_from_inline_setters);
	tcase_add_test(rc, test_inline_data_on_read_refused);
	tcase_add_test(rc, test_inline_data_too_long);
	tcase_add_test(rc, test_error_drops_the_whole_batch);
	tcase_add_test(rc, test_first_error_returned);
	tcase_add_test(rc, test_builder_and_setter_pair_up);
	tcase_add_test(rc, test_nothing_posted_before_rts);
	tcase_add_test(rc, test_abort_rolls_back);
	tcase_add_test(rc, test_local_invalidate_needs_no_setter);
	tcase_add_test(rc, test_atomic_segments);
	suite_add_tcase(s, rc);
	tcase_add_checked_fixture(types, NULL, qp_close);
	tcase_add_test(types, test_builders_of_each_qp_type);
	tcase_add_test(types, test_ud_address_for_each_wqe);
	tcase_add_test(types, test_xrc_srqn);
	suite_add_tcase(s, types);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(wr_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
