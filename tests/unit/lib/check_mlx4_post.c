/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The WQEs a ConnectX-3 context posts (lib/mlx4/post.c, lib/mlx4/sq.c),
 * byte for byte against what libmlx4's mlx4_post_send and mlx4_post_recv
 * write for the same work requests: ctrl, raddr, atomic, datagram, XRC,
 * local invalidate and bind segments, inline data cut at 64 bytes, zero
 * length data, owner bits per pass, stamping, and libmlx4's errors.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "lib/shim.h"

#define QPN 0x000456
#define REMOTE_QPN 0x000789
#define QKEY 0x11223344u
#define RKEY 0xabcd
#define LKEY 0x1234
#define REMOTE_SRQN 0x000042
#define MAP_SIZE (64 * 1024)

static struct rocemu_context rctx;
static struct rocemu_qp qp;
static struct ibv_qp *const ibqp = &qp.qpx.qp_base;
static _Alignas(4096) char map[MAP_SIZE];
static int send_doorbells, recv_doorbells;

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

/* Not reached: no SRQ is posted to here. */
int rocemu_srq_post(struct rocemu_srq *srq, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr,
		    int err_sge, int err_full)
{
	(void)srq, (void)wr, (void)bad_wr, (void)err_sge, (void)err_full;
	abort();
}

/* A QP of type as the daemon lays it out for these caps (libmlx4's sizing), its SQ started. */
static void qp_open(enum ibv_qp_type type)
{
	struct ibv_qp_cap want = { .max_send_wr = 8, .max_recv_wr = 4, .max_send_sge = 2,
				   .max_recv_sge = 2, .max_inline_data = 64 };
	struct rocemu_wq_sizes sizes;

	memset(&rctx, 0, sizeof(rctx));
	memset(&qp, 0, sizeof(qp));
	memset(map, 0, sizeof(map));
	send_doorbells = recv_doorbells = 0;
	rctx.info.model = ROCEMU_MODEL_CX3;
	ibqp->context = &rctx.vctx.context;
	ibqp->qp_type = type;
	qp.type = type;
	qp.qpn = QPN;
	ck_assert_int_eq(rocemu_mlx4_wq_size(&want, type, 0, 0, &sizes), 0);
	rocemu_mlx4_wq_caps(&sizes, type, &qp.cap);
	qp.layout = (struct rocemu_qp_layout){
		.qpn = QPN, .sq_wqe_cnt = sizes.sq_bbs, .sq_wqe_shift = sizes.sq_wqe_shift,
		.rq_wqe_cnt = sizes.rq_wqes, .rq_wqe_shift = sizes.rq_wqe_shift, .size = MAP_SIZE,
		.sq_offset = 0, .rq_offset = 16384, .dbrec_offset = 32768, .bf_offset = 36864,
		.bf_size = ROCEMU_MLX4_UAR_SIZE,
	};
	qp.map = map;
	ck_assert_int_eq(rocemu_qp_queues_init(&qp), 0);
	rocemu_mlx4_sq_init(&qp);
}

static const struct mlx4_wqe_ctrl_seg *wqe(uint32_t i)
{
	return rocemu_mlx4_sq_wqe(&qp.sq, i);
}

static void ctrl_expect(uint32_t i, uint32_t owner_opcode, uint8_t fence_size, uint32_t srcrb,
			__be32 imm)
{
	const struct mlx4_wqe_ctrl_seg *c = wqe(i);

	ck_assert_uint_eq(be32toh(c->owner_opcode), owner_opcode);
	ck_assert_uint_eq(c->fence_size, fence_size);
	ck_assert_uint_eq(be32toh(c->srcrb_flags), srcrb);
	ck_assert_uint_eq(c->imm, imm);
}

START_TEST(test_sq_init_ownership)
{
	uint32_t stride;

	qp_open(IBV_QPT_RC);
	stride = 1u << qp.sq.wqe_shift;
	/* libmlx4: 2 KiB and one WQE of headroom */
	ck_assert_uint_eq(qp.sq.spare, ROCEMU_MLX4_SQ_HEADROOM / stride + 1);
	ck_assert_uint_eq(qp.sq.wqe_cnt - qp.sq.spare, qp.cap.max_send_wr);
	for (uint32_t i = 0; i < qp.sq.wqe_cnt; i++) {
		const uint32_t *w = (const uint32_t *)wqe(i);

		ck_assert_uint_eq(be32toh(wqe(i)->owner_opcode), ROCEMU_MLX4_WQE_OWNER);
		ck_assert_uint_eq(wqe(i)->fence_size, stride / 16);
		for (uint32_t off = 64; off < stride; off += 64)
			ck_assert_uint_eq(w[off / 4], ROCEMU_MLX4_WQE_STAMP);
	}
}
END_TEST

/* RDMA WRITE with one empty SGE: ctrl, raddr, data segments last first, 0x80000000 for none. */
START_TEST(test_rdma_write)
{
	char buf[32];
	struct ibv_sge sge[2] = { { (uintptr_t)buf, 32, LKEY }, { (uintptr_t)buf, 0, LKEY + 1 } };
	struct ibv_send_wr wr = { .wr_id = 7, .sg_list = sge, .num_sge = 2,
				  .opcode = IBV_WR_RDMA_WRITE, .send_flags = IBV_SEND_SIGNALED,
				  .wr.rdma = { .remote_addr = 0x1000, .rkey = RKEY } };
	struct ibv_send_wr *bad = NULL;
	const struct mlx4_wqe_raddr_seg *r;
	const struct mlx4_wqe_data_seg *d;

	qp_open(IBV_QPT_RC);
	ck_assert_int_eq(rocemu_mlx4_post_send_op(ibqp, &wr, &bad), 0);
	ctrl_expect(0, MLX4_OPCODE_RDMA_WRITE, 4, MLX4_WQE_CTRL_CQ_UPDATE, 0);
	r = (const void *)(wqe(0) + 1);
	ck_assert_uint_eq(be64toh(r->raddr), 0x1000);
	ck_assert_uint_eq(be32toh(r->rkey), RKEY);
	d = (const void *)(r + 1);
	ck_assert_uint_eq(be32toh(d[0].byte_count), 32);
	ck_assert_uint_eq(be32toh(d[0].lkey), LKEY);
	ck_assert_uint_eq(be64toh(d[0].addr), (uintptr_t)buf);
	ck_assert_uint_eq(be32toh(d[1].byte_count), 0x80000000u);
	ck_assert_uint_eq(be32toh(d[1].lkey), LKEY + 1);
	ck_assert_uint_eq(qp.sq.cur_post, 1);
	ck_assert_uint_eq(qp.sq.wrid[0], 7);
	ck_assert_int_eq(send_doorbells, 1);
	/* The UAR's send doorbell: the QPN, as libmlx4's doorbell_qpn */
	ck_assert_uint_eq(be32toh(*(uint32_t *)(map + qp.layout.bf_offset + MLX4_SEND_DOORBELL)),
			  QPN << 8);
}
END_TEST

/* Inline data never crosses 64 bytes: 44 bytes after ctrl and the header, then a new segment. */
START_TEST(test_send_inline_split)
{
	char data[60];
	struct ibv_sge sge = { (uintptr_t)data, sizeof(data), 0 };
	struct ibv_send_wr wr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND_WITH_IMM, .imm_data = htobe32(0x55),
				  .send_flags = IBV_SEND_INLINE | IBV_SEND_SOLICITED };
	struct ibv_send_wr *bad = NULL;
	const char *w;

	for (size_t i = 0; i < sizeof(data); i++)
		data[i] = (char)i;
	qp_open(IBV_QPT_RC);
	ck_assert_int_eq(rocemu_mlx4_post_send_op(ibqp, &wr, &bad), 0);
	/* 1 ctrl + (60 bytes + 2 headers + 15) / 16 */
	ctrl_expect(0, MLX4_OPCODE_SEND_IMM, 1 + (60 + 8 + 15) / 16, MLX4_WQE_CTRL_SOLICIT,
		    htobe32(0x55));
	w = (const char *)wqe(0);
	ck_assert_uint_eq(be32toh(*(const uint32_t *)(w + 16)), MLX4_INLINE_SEG | 44);
	ck_assert_mem_eq(w + 20, data, 44);
	ck_assert_uint_eq(be32toh(*(const uint32_t *)(w + 64)), MLX4_INLINE_SEG | 16);
	ck_assert_mem_eq(w + 68, data + 44, 16);
}
END_TEST

START_TEST(test_inline_too_long)
{
	char data[256];
	struct ibv_sge sge = { (uintptr_t)data, 0, 0 };
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_INLINE };
	struct ibv_send_wr *bad = NULL;

	qp_open(IBV_QPT_RC);
	sge.length = qp.cap.max_inline_data + 1;
	ck_assert_int_eq(rocemu_mlx4_post_send_op(ibqp, &wr, &bad), ENOMEM);
	ck_assert_ptr_eq(bad, &wr);
	ck_assert_uint_eq(qp.sq.cur_post, 0);
	ck_assert_int_eq(send_doorbells, 0);
}
END_TEST

/* Compare and swap: raddr, atomic (swap, compare), one data segment. */
START_TEST(test_atomic_cs)
{
	uint64_t result;
	struct ibv_sge sge = { (uintptr_t)&result, 8, LKEY };
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_ATOMIC_CMP_AND_SWP,
				  .wr.atomic = { .remote_addr = 0x2000, .compare_add = 5, .swap = 9,
						 .rkey = RKEY } };
	struct ibv_send_wr *bad = NULL;
	const struct mlx4_wqe_atomic_seg *a;

	qp_open(IBV_QPT_RC);
	qp.sq_sig_all = 1;	/* every WQE signaled, as libmlx4's sq_signal_bits */
	ck_assert_int_eq(rocemu_mlx4_post_send_op(ibqp, &wr, &bad), 0);
	ctrl_expect(0, MLX4_OPCODE_ATOMIC_CS, 4, MLX4_WQE_CTRL_CQ_UPDATE, 0);
	a = (const void *)((const char *)wqe(0) + 32);
	ck_assert_uint_eq(be64toh(a->swap_add), 9);
	ck_assert_uint_eq(be64toh(a->compare), 5);
}
END_TEST

/* UD: the AH's struct mlx4_av, destination QP and Q_Key, data after 64 bytes. */
START_TEST(test_ud_datagram)
{
	char buf[8];
	struct rocemu_ah ah;
	struct ibv_sge sge = { (uintptr_t)buf, 8, LKEY };
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_FENCE,
				  .wr.ud = { .ah = &ah.ibah, .remote_qpn = REMOTE_QPN,
					     .remote_qkey = QKEY } };
	struct ibv_send_wr *bad = NULL;
	const struct mlx4_wqe_datagram_seg *dg;

	memset(&ah, 0, sizeof(ah));
	ah.mlx4_av.g_slid = 0x80;
	ah.mlx4_av.hop_limit = 64;
	ah.mlx4_av.dgid[15] = 3;
	qp_open(IBV_QPT_UD);
	ck_assert_int_eq(rocemu_mlx4_post_send_op(ibqp, &wr, &bad), 0);
	ctrl_expect(0, MLX4_OPCODE_SEND, MLX4_WQE_CTRL_FENCE | 5, 0, 0);
	dg = (const void *)(wqe(0) + 1);
	ck_assert_mem_eq(&dg->av, &ah.mlx4_av, sizeof(dg->av));
	ck_assert_uint_eq(be32toh(dg->dqpn), REMOTE_QPN);
	ck_assert_uint_eq(be32toh(dg->qkey), QKEY);
	ck_assert_uint_eq(be32toh(((const struct mlx4_wqe_data_seg *)(dg + 1))->byte_count), 8);
	/* No AH: refused before anything is written */
	wr.wr.ud.ah = NULL;
	ck_assert_int_eq(rocemu_mlx4_post_send_op(ibqp, &wr, &bad), EINVAL);
}
END_TEST

/* XRC: the remote SRQ in srcrb_flags' top 24 bits (MLX4_REMOTE_SRQN_FLAGS). */
START_TEST(test_xrc_srqn)
{
	struct ibv_send_wr wr = { .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
				  .qp_type.xrc.remote_srqn = REMOTE_SRQN };
	struct ibv_send_wr *bad = NULL;

	qp_open(IBV_QPT_XRC_SEND);
	ck_assert_int_eq(rocemu_mlx4_post_send_op(ibqp, &wr, &bad), 0);
	ctrl_expect(0, MLX4_OPCODE_SEND, 1, REMOTE_SRQN << 8 | MLX4_WQE_CTRL_CQ_UPDATE, 0);
	ck_assert_uint_eq(rocemu_mlx4_xrc_srqn(wqe(0)->srcrb_flags), REMOTE_SRQN);
}
END_TEST

/* Local invalidate and window bind: strongly ordered, their segments after ctrl. */
START_TEST(test_local_inv_and_bind)
{
	struct ibv_mr mr = { .lkey = LKEY };
	struct ibv_mw mw = { .rkey = 0x300, .type = IBV_MW_TYPE_2 };
	struct ibv_send_wr bind = {
		.opcode = IBV_WR_BIND_MW,
		.bind_mw = { .mw = &mw, .rkey = 0x301,
			     .bind_info = { .mr = &mr, .addr = 0x4000, .length = 0x100,
					    .mw_access_flags = IBV_ACCESS_REMOTE_READ |
							       IBV_ACCESS_ZERO_BASED } } };
	struct ibv_send_wr inv = { .opcode = IBV_WR_LOCAL_INV, .invalidate_rkey = 0x301,
				   .next = &bind };
	struct ibv_send_wr *bad = NULL;
	const struct mlx4_wqe_local_inval_seg *l;
	const struct mlx4_wqe_bind_seg *b;

	qp_open(IBV_QPT_RC);
	ck_assert_int_eq(rocemu_mlx4_post_send_op(ibqp, &inv, &bad), 0);
	ctrl_expect(0, MLX4_OPCODE_LOCAL_INVAL, 1 + sizeof(*l) / 16, MLX4_WQE_CTRL_STRONG_ORDER, 0);
	l = (const void *)(wqe(0) + 1);
	ck_assert_uint_eq(be32toh(l->mem_key), 0x301);
	ctrl_expect(1, MLX4_OPCODE_BIND_MW, 1 + sizeof(*b) / 16, MLX4_WQE_CTRL_STRONG_ORDER, 0);
	b = (const void *)(wqe(1) + 1);
	ck_assert_uint_eq(be32toh(b->flags1), MLX4_WQE_MW_REMOTE_READ);
	ck_assert_uint_eq(be32toh(b->flags2), MLX4_WQE_BIND_TYPE_2 | MLX4_WQE_BIND_ZERO_BASED);
	ck_assert_uint_eq(be32toh(b->new_rkey), 0x301);
	ck_assert_uint_eq(be32toh(b->lkey), LKEY);
	ck_assert_uint_eq(be64toh(b->addr), 0x4000);
	ck_assert_uint_eq(be64toh(b->length), 0x100);
	ck_assert_int_eq(send_doorbells, 1);	/* one per call */
}
END_TEST

/* max_send_wr outstanding at most; the next pass's WQEs carry the owner bit; spare ahead stamped. */
START_TEST(test_full_and_second_pass)
{
	struct ibv_send_wr wr = { .opcode = IBV_WR_SEND };
	struct ibv_send_wr *bad = NULL;
	uint32_t i, cnt, stride;

	qp_open(IBV_QPT_RC);
	cnt = qp.sq.wqe_cnt;
	stride = 1u << qp.sq.wqe_shift;
	for (i = 0; i < qp.cap.max_send_wr; i++)
		ck_assert_int_eq(rocemu_mlx4_post_send_op(ibqp, &wr, &bad), 0);
	ck_assert_int_eq(rocemu_mlx4_post_send_op(ibqp, &wr, &bad), ENOMEM);
	/* The WQE posted last stamped the one sq_spare ahead: its 64-byte chunks say invalid. */
	if (stride > 64) {
		const uint32_t *w = (const uint32_t *)wqe(i - 1 + qp.sq.spare);

		ck_assert_uint_eq(w[16], ROCEMU_MLX4_WQE_STAMP);
	}
	/* Completed (as the poller would say) up to the ring's end: the next pass sets the owner bit. */
	while (qp.sq.cur_post < cnt + 1) {
		__atomic_store_n(&qp.sq.tail, qp.sq.cur_post, __ATOMIC_RELEASE);
		ck_assert_int_eq(rocemu_mlx4_post_send_op(ibqp, &wr, &bad), 0);
	}
	ck_assert_uint_eq(be32toh(wqe(cnt - 1)->owner_opcode), MLX4_OPCODE_SEND);
	ck_assert_uint_eq(be32toh(wqe(cnt)->owner_opcode), ROCEMU_MLX4_WQE_OWNER | MLX4_OPCODE_SEND);
	ck_assert(rocemu_mlx4_wqe_posted(be32toh(wqe(cnt)->owner_opcode), cnt, cnt));
	ck_assert(!rocemu_mlx4_wqe_posted(be32toh(wqe(cnt + 1)->owner_opcode), cnt + 1, cnt));
}
END_TEST

START_TEST(test_send_errors)
{
	struct ibv_sge sge[3] = { { 0 } };
	struct ibv_send_wr bad_op = { .opcode = IBV_WR_TSO };
	struct ibv_send_wr many = { .sg_list = sge, .num_sge = 3, .opcode = IBV_WR_SEND };
	struct ibv_send_wr ok = { .opcode = IBV_WR_SEND, .next = &bad_op };
	struct ibv_send_wr *bad = NULL;

	qp_open(IBV_QPT_RC);
	qp.sq.max_sge = 2;
	ck_assert_int_eq(rocemu_mlx4_post_send_op(ibqp, &many, &bad), ENOMEM);
	ck_assert_ptr_eq(bad, &many);
	/* The first is posted and rung; the TSO one, no opcode of a ConnectX-3's, stops the list. */
	ck_assert_int_eq(rocemu_mlx4_post_send_op(ibqp, &ok, &bad), EINVAL);
	ck_assert_ptr_eq(bad, &bad_op);
	ck_assert_uint_eq(qp.sq.cur_post, 1);
	ck_assert_int_eq(send_doorbells, 1);
}
END_TEST

/* Receive WQEs: the SGEs as given (empty ones too), then MLX4_INVALID_LKEY; the record's counter. */
START_TEST(test_post_recv)
{
	char buf[16];
	struct ibv_sge sge = { (uintptr_t)buf, 0, LKEY };
	struct ibv_recv_wr wr = { .wr_id = 3, .sg_list = &sge, .num_sge = 1 };
	struct ibv_recv_wr many = { .num_sge = 3 };
	struct ibv_recv_wr *bad = NULL;
	const struct mlx4_wqe_data_seg *d;

	qp_open(IBV_QPT_RC);
	ck_assert_int_eq(rocemu_mlx4_post_recv_op(ibqp, &wr, &bad), 0);
	d = (const void *)qp.rq.buf;
	ck_assert_uint_eq(be32toh(d[0].byte_count), 0);
	ck_assert_uint_eq(be32toh(d[0].lkey), LKEY);
	ck_assert_uint_eq(be64toh(d[0].addr), (uintptr_t)buf);
	ck_assert_uint_eq(be32toh(d[1].lkey), MLX4_INVALID_LKEY);
	ck_assert_uint_eq(be32toh(qp.dbrec[0]), 1);
	ck_assert_uint_eq(qp.rq.wrid[0], 3);
	ck_assert_int_eq(recv_doorbells, 1);
	/* libmlx4: too many SGEs is ENOMEM, as is a full queue */
	qp.rq.max_sge = 2;
	ck_assert_int_eq(rocemu_mlx4_post_recv_op(ibqp, &many, &bad), ENOMEM);
	while (qp.rq.head < qp.rq.wqe_cnt)
		ck_assert_int_eq(rocemu_mlx4_post_recv_op(ibqp, &wr, &bad), 0);
	ck_assert_int_eq(rocemu_mlx4_post_recv_op(ibqp, &wr, &bad), ENOMEM);
	ck_assert_uint_eq(be32toh(qp.dbrec[0]), qp.rq.wqe_cnt);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("mlx4_post");
	TCase *tc = tcase_create("mlx4_post");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_sq_init_ownership);
	tcase_add_test(tc, test_rdma_write);
	tcase_add_test(tc, test_send_inline_split);
	tcase_add_test(tc, test_inline_too_long);
	tcase_add_test(tc, test_atomic_cs);
	tcase_add_test(tc, test_ud_datagram);
	tcase_add_test(tc, test_xrc_srqn);
	tcase_add_test(tc, test_local_inv_and_bind);
	tcase_add_test(tc, test_full_and_second_pass);
	tcase_add_test(tc, test_send_errors);
	tcase_add_test(tc, test_post_recv);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
