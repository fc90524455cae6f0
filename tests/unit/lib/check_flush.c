/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The shim's software flush of a device that is gone (lib/datapath/flush.c),
 * as mlx5_ib_poll_sw_comp: each WR outstanding on a QP of the CQ completes
 * with WR_FLUSH_ERR (vendor syndrome 0x5), sends before receives, each
 * queue oldest first across its ring's wrap; a multi-BB send frees all its
 * BBs; every QP of the CQ goes to ERR; a CQ serving only one side of a QP
 * flushes that side alone; a context mutex held elsewhere defers the flush;
 * a WQ of the CQ flushes its receives after the QPs', named by its number,
 * and goes to ERR.
 */
#include <check.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "lib/shim.h"

#define QPN 0x000123
#define DEPTH 4

static struct rocemu_context *rctx;
static struct rocemu_cq send_cq, recv_cq;
static struct rocemu_qp qp;
static uint64_t sq_wrid[DEPTH], rq_wrid[DEPTH];
static uint32_t sq_wqe_head[DEPTH];

static void cq_init(struct rocemu_cq *cq)
{
	memset(cq, 0, sizeof(*cq));
	cq->ibcq.context = &rctx->vctx.context;
	ck_assert_int_eq(pthread_spin_init(&cq->lock, PTHREAD_PROCESS_PRIVATE), 0);
}

/* qp, of a send and a receive CQ (the same one when shared), in RTS, its queues empty. */
static void qp_init(bool shared_cq)
{
	memset(&qp, 0, sizeof(qp));
	qp.qpn = QPN;
	qp.qpx.qp_base.state = IBV_QPS_RTS;
	qp.qpx.qp_base.send_cq = ibv_cq_ex_to_cq(&send_cq.ibcq);
	qp.qpx.qp_base.recv_cq = ibv_cq_ex_to_cq(shared_cq ? &send_cq.ibcq : &recv_cq.ibcq);
	qp.sq.wqe_cnt = DEPTH;
	qp.sq.wrid = sq_wrid;
	qp.sq.wqe_head = sq_wqe_head;
	qp.rq.wqe_cnt = DEPTH;
	qp.rq.wrid = rq_wrid;
	ck_assert_int_eq(pthread_spin_init(&qp.sq.lock, PTHREAD_PROCESS_PRIVATE), 0);
	ck_assert_int_eq(pthread_spin_init(&qp.rq.lock, PTHREAD_PROCESS_PRIVATE), 0);
	ck_assert_int_eq(rocemu_qp_table_insert(rctx, &qp), 0);
}

static void setup(void)
{
	rctx = calloc(1, sizeof(*rctx));
	ck_assert_ptr_nonnull(rctx);
	ck_assert_int_eq(pthread_mutex_init(&rctx->vctx.context.mutex, NULL), 0);
	cq_init(&send_cq);
	cq_init(&recv_cq);
}

static void teardown(void)
{
	rocemu_qp_table_free(rctx);
	free(rctx);
}

/* A send of bbs BBs posted with wr_id at the send queue's producer. */
static void post_send(uint64_t wr_id, uint32_t bbs)
{
	uint32_t idx = qp.sq.cur_post & (DEPTH - 1);

	sq_wrid[idx] = wr_id;
	sq_wqe_head[idx] = qp.sq.cur_post + bbs - 1;
	qp.sq.cur_post += bbs;
}

static void post_recv(uint64_t wr_id)
{
	rq_wrid[qp.rq.head++ & (DEPTH - 1)] = wr_id;
}

static void expect_flush(struct rocemu_cq *cq, uint64_t wr_id, enum ibv_wc_opcode opcode)
{
	struct ibv_wc wc;

	ck_assert(rocemu_cq_flush_one(cq, &wc));
	ck_assert_uint_eq(wc.wr_id, wr_id);
	ck_assert_int_eq(wc.status, IBV_WC_WR_FLUSH_ERR);
	ck_assert_uint_eq(wc.vendor_err, MLX5_CQE_SYNDROME_WR_FLUSH_ERR);
	ck_assert_uint_eq(wc.qp_num, QPN);
	ck_assert_int_eq(wc.opcode, opcode);
}

START_TEST(test_sends_then_receives)
{
	struct ibv_wc wc;

	qp_init(true);
	/* The send queue wrapped: its oldest WR at the ring's last slot. */
	qp.sq.cur_post = qp.sq.tail = DEPTH - 1;
	post_send(1, 1);
	post_send(2, 1);
	post_recv(10);
	post_recv(11);
	expect_flush(&send_cq, 1, IBV_WC_SEND);
	ck_assert_int_eq(qp.qpx.qp_base.state, IBV_QPS_ERR);
	expect_flush(&send_cq, 2, IBV_WC_SEND);
	ck_assert_uint_eq(qp.sq.tail, qp.sq.cur_post);
	expect_flush(&send_cq, 10, IBV_WC_RECV);
	expect_flush(&send_cq, 11, IBV_WC_RECV);
	ck_assert_uint_eq(qp.rq.tail, qp.rq.head);
	ck_assert(!rocemu_cq_flush_one(&send_cq, &wc));
}
END_TEST

/* A send of several BBs gives them all back at once. */
START_TEST(test_multi_bb_send)
{
	qp_init(true);
	post_send(7, 3);
	expect_flush(&send_cq, 7, IBV_WC_SEND);
	ck_assert_uint_eq(qp.sq.tail, 3);
}
END_TEST

START_TEST(test_each_cq_its_side)
{
	struct ibv_wc wc;

	qp_init(false);
	post_send(1, 1);
	post_recv(10);
	expect_flush(&recv_cq, 10, IBV_WC_RECV);
	ck_assert(!rocemu_cq_flush_one(&recv_cq, &wc));
	expect_flush(&send_cq, 1, IBV_WC_SEND);
	ck_assert(!rocemu_cq_flush_one(&send_cq, &wc));
}
END_TEST

/* Nothing outstanding: no completion, and still the QP is in ERR, as mlx5's. */
START_TEST(test_idle_qp_errs)
{
	struct ibv_wc wc;

	qp_init(true);
	ck_assert(!rocemu_cq_flush_one(&send_cq, &wc));
	ck_assert_int_eq(qp.qpx.qp_base.state, IBV_QPS_ERR);
}
END_TEST

/* The context mutex held (a QP being destroyed): the flush waits for the next poll. */
START_TEST(test_mutex_held_defers)
{
	struct ibv_wc wc;

	qp_init(true);
	post_send(1, 1);
	pthread_mutex_lock(&rctx->vctx.context.mutex);
	ck_assert(!rocemu_cq_flush_one(&send_cq, &wc));
	pthread_mutex_unlock(&rctx->vctx.context.mutex);
	ck_assert_int_eq(qp.qpx.qp_base.state, IBV_QPS_RTS);
	expect_flush(&send_cq, 1, IBV_WC_SEND);
}
END_TEST

/* A WQ completing to the CQ: its receives after the QP's, oldest first, with the WQ's number. */
START_TEST(test_wq_after_qps)
{
	uint64_t wq_wrid[DEPTH] = { 0 };
	struct rocemu_wq wq = {
		.ibwq = { .wq_num = 0x000042, .state = IBV_WQS_RDY },
		.rq = { .wqe_cnt = DEPTH, .wrid = wq_wrid, .tail = DEPTH - 1, .head = DEPTH + 1 },
	};
	struct ibv_wc wc;

	ck_assert_int_eq(pthread_spin_init(&wq.rq.lock, PTHREAD_PROCESS_PRIVATE), 0);
	wq_wrid[DEPTH - 1] = 20;
	wq_wrid[0] = 21;
	recv_cq.wqs = &wq;
	qp_init(false);
	post_recv(10);
	expect_flush(&recv_cq, 10, IBV_WC_RECV);
	ck_assert(rocemu_cq_flush_one(&recv_cq, &wc));
	ck_assert_uint_eq(wc.wr_id, 20);
	ck_assert_uint_eq(wc.qp_num, 0x000042);
	ck_assert_int_eq(wc.status, IBV_WC_WR_FLUSH_ERR);
	ck_assert_int_eq(wc.opcode, IBV_WC_RECV);
	ck_assert_int_eq(wq.ibwq.state, IBV_WQS_ERR);
	ck_assert(rocemu_cq_flush_one(&recv_cq, &wc));
	ck_assert_uint_eq(wc.wr_id, 21);
	ck_assert(!rocemu_cq_flush_one(&recv_cq, &wc));
	recv_cq.wqs = NULL;
}
END_TEST

static Suite *flush_suite(void)
{
	Suite *s = suite_create("flush");
	TCase *tc = tcase_create("flush");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_sends_then_receives);
	tcase_add_test(tc, test_multi_bb_send);
	tcase_add_test(tc, test_each_cq_its_side);
	tcase_add_test(tc, test_idle_qp_errs);
	tcase_add_test(tc, test_mutex_held_defers);
	tcase_add_test(tc, test_wq_after_qps);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(flush_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
