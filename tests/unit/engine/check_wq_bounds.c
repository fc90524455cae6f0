/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * A program's own rings as garbage (what mlx5dv_init_obj lets it write):
 * every loop of the daemon over them ends within the ring, whatever the
 * doorbell records say. Two-BB WQEs of an opcode the device has not and
 * an odd doorbell (the step of 2 never meets it), on every transport: the
 * first WQE fails with a local QP operation error, the one the doorbell
 * cuts is flushed, the QP is in ERR, and doorbells rung at random after
 * that flush no more than the ring holds. A doorbell past the ring (SQ,
 * RQ, SRQ) breaks its queue: the QP goes to ERR with QP_FATAL and no CQE,
 * an SRQ raises SRQ_ERR. A WQE cut by its doorbell, a message over
 * max_msg_sz, a READ request over it from the wire, a CQ consumer index
 * ahead of the producer: each fails what it belongs to, nothing else.
 */
#include <check.h>
#include <errno.h>
#include <string.h>

#include "emulator/core/device.h"
#include "emulator/engine/recv_wqe.h"
#include "emulator/mlx5/wqe.h"
#include "emulator/obj/cq.h"
#include "emulator/obj/qp.h"
#include "emulator/obj/srq.h"
#include "tests/unit/fixture.h"

#define GARBAGE_DS 5		/* 80 bytes: two BBs */
#define RANDOM_DOORBELLS 1000

/* Every other BB of the SQ a ctrl of a two-BB WQE this device cannot execute. */
static void sq_fill_garbage(void)
{
	for (uint32_t bb = 0; bb < fx.qp.layout.sq_wqe_cnt; bb += 2) {
		memset(fx_sq_seg(bb, 0), 0xa5, 2 * MLX5_SEND_WQE_BB);
		mlx5dv_set_ctrl_seg(fx_sq_seg(bb, 0), (uint16_t)bb, MLX5_OPCODE_TSO, 0, fx.qp.qpn,
				    MLX5_WQE_CTRL_CQ_UPDATE, GARBAGE_DS, 0, 0);
	}
}

/* Deterministic doorbell values, the same every run. */
static uint32_t lcg(uint32_t *state)
{
	*state = *state * 1103515245u + 12345u;
	return *state >> 8;
}

/*
 * WQEs at BBs 0 and 2 rung with doorbell 3: the first fails, the second,
 * cut by the doorbell, is flushed; nothing goes on the wire. Then random
 * doorbells on both queues: each flush ends, the QP stays in ERR.
 */
static void garbage_odd_doorbell(void)
{
	uint32_t state = 1;
	struct mlx5_cqe64 cqe;

	sq_fill_garbage();
	fx.qp.sq_cur = 3;
	fx_doorbell();
	fx_expect_cqe(&fx.scq, MLX5_CQE_REQ_ERR, 0, MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR);
	fx_expect_cqe(&fx.scq, MLX5_CQE_REQ_ERR, 2, MLX5_CQE_SYNDROME_WR_FLUSH_ERR);
	ck_assert(!fx_poll(&fx.scq, &cqe));
	ck_assert_uint_eq(fx.nwire, 0);
	ck_assert_int_eq(fx_qp_state(), IBV_QPS_ERR);
	for (int i = 0; i < RANDOM_DOORBELLS; i++) {
		fx.qp.sq_cur = lcg(&state);
		fx.qp.rq_head = lcg(&state);
		fx_doorbell();
	}
	ck_assert_int_eq(fx_qp_state(), IBV_QPS_ERR);
	ck_assert_uint_eq(fx.nwire, 0);
}

START_TEST(test_garbage_odd_doorbell)
{
	garbage_odd_doorbell();
}
END_TEST

/* A requester's error raises QP_FATAL (RC, UC, XRC, DC: rc_qp.c); UD's error CQE says it all. */
START_TEST(test_garbage_odd_doorbell_fatal)
{
	struct rocemu_async_record ev;

	garbage_odd_doorbell();
	ck_assert(fx_async_event(&ev));
	ck_assert_uint_eq(ev.element, FX_USER_QP);
	ck_assert_uint_eq(ev.event_type, IBV_EVENT_QP_FATAL);
}
END_TEST

/* What a doorbell record says is posted: up to the ring, never past it, either way round. */
START_TEST(test_posted_within_ring)
{
	struct rocemu_qp *qp = fx_emu_qp();
	uint32_t sq = fx.qp.layout.sq_wqe_cnt, rq = fx.qp.layout.rq_wqe_cnt;

	fx.qp.sq_cur = sq;
	fx.qp.rq_head = rq;
	fx_doorbell();
	ck_assert_int_eq(rocemu_wqe_sq_posted(qp, 0), (int)sq);
	ck_assert_int_eq(rocemu_wqe_sq_posted(qp, sq), 0);
	ck_assert_int_eq(rocemu_wqe_sq_posted(qp, 0x10000 + 1), (int)sq - 1);
	ck_assert_int_eq(rocemu_wqe_sq_posted(qp, sq + 1), -EINVAL);	/* the consumer ahead */
	ck_assert_int_eq(rocemu_qp_rq_posted(qp, 0), (int)rq);
	ck_assert_int_eq(rocemu_qp_rq_posted(qp, 0xffff), -EINVAL);
	qp->layout.sq_wqe_cnt = 0;	/* a queue without a ring has nothing posted */
	ck_assert_int_eq(rocemu_wqe_sq_posted(qp, 5), 0);
	qp->layout.sq_wqe_cnt = sq;
}
END_TEST

/* A send doorbell past the ring: no WQE to fail, the work queue is broken. */
START_TEST(test_sq_doorbell_past_ring)
{
	struct mlx5_cqe64 cqe;

	sq_fill_garbage();
	fx.qp.sq_cur = fx.qp.layout.sq_wqe_cnt + 1;
	fx_doorbell();
	ck_assert(!fx_poll(&fx.scq, &cqe));
	ck_assert_uint_eq(fx.nwire, 0);
	fx_expect_qp_error(IBV_EVENT_QP_FATAL);
}
END_TEST

/* A good SEND of two BBs whose doorbell says one: a local QP operation error. */
START_TEST(test_wqe_past_doorbell)
{
	const struct ibv_sge sge[4] = {
		{ (uintptr_t)fx.buf, 8, fx.lkey }, { (uintptr_t)fx.buf, 8, fx.lkey },
		{ (uintptr_t)fx.buf, 8, fx.lkey }, { (uintptr_t)fx.buf, 8, fx.lkey },
	};
	const struct fx_wr wr = { .opcode = MLX5_OPCODE_SEND, .sge = sge, .num_sge = 4 };

	fx_post_send(&wr);
	ck_assert_uint_eq(fx.qp.sq_cur, 2);
	fx.qp.sq_cur = 1;
	fx_doorbell();
	ck_assert_uint_eq(fx.nwire, 0);
	fx_expect_cqe(&fx.scq, MLX5_CQE_REQ_ERR, 0, MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR);
	fx_expect_qp_error(IBV_EVENT_QP_FATAL);
}
END_TEST

/* Longer than max_msg_sz, its PSNs could wrap: a local length error before any packet. */
START_TEST(test_message_over_max_msg_sz)
{
	const struct ibv_sge sge = { (uintptr_t)fx.buf, ROCEMU_MAX_MSG_SZ + 1, fx.lkey };
	const struct fx_wr wr = { .opcode = MLX5_OPCODE_RDMA_WRITE, .sge = &sge, .num_sge = 1,
				  .raddr = 0x1000, .rkey = 0x42 };

	fx_post_send(&wr);
	fx_doorbell();
	ck_assert_uint_eq(fx.nwire, 0);
	fx_expect_cqe(&fx.scq, MLX5_CQE_REQ_ERR, 0, MLX5_CQE_SYNDROME_LOCAL_LENGTH_ERR);
	fx_expect_qp_error(IBV_EVENT_QP_FATAL);
}
END_TEST

/* The NAK at FX_RQ_PSN is code, and the QP failed with event type. */
static void expect_nak(uint8_t code, enum ibv_event_type type)
{
	const uint8_t *bth;
	uint32_t syndrome;

	ck_assert_uint_eq(fx.nwire, 1);
	bth = fx_wire_expect(0, ROCEMU_OP_RC_ACKNOWLEDGE, FX_RQ_PSN, false, 0);
	syndrome = rocemu_aeth_syndrome(rocemu_pkt_aeth((uint8_t *)bth));
	ck_assert_uint_eq(rocemu_aeth_syndrome_type(syndrome), ROCEMU_AETH_NAK);
	ck_assert_uint_eq(rocemu_aeth_syndrome_value(syndrome), code);
	fx_expect_qp_error(type);
}

/* A receive doorbell past the ring: the SEND that needs a WQE fails the QP, nothing completes. */
START_TEST(test_rq_doorbell_past_ring)
{
	const struct fx_hdrs h = { .psn = FX_RQ_PSN, .ackreq = true };
	static const uint8_t data[16];
	struct mlx5_cqe64 cqe;

	fx.qp.rq_head = fx.qp.layout.rq_wqe_cnt + 1;
	fx_doorbell();
	fx_rx_build(ROCEMU_OP_RC_SEND_ONLY, &h, data, sizeof(data));
	expect_nak(ROCEMU_NAK_REMOTE_OP_ERROR, IBV_EVENT_QP_FATAL);
	ck_assert(!fx_poll(&fx.rcq, &cqe));
}
END_TEST

/* A READ request from the wire over max_msg_sz: an invalid request, whatever its R_Key. */
START_TEST(test_read_request_over_max_msg_sz)
{
	const struct fx_hdrs h = { .psn = FX_RQ_PSN, .ackreq = true, .va = (uintptr_t)fx.buf,
				   .rkey = fx.rkey, .dma_len = UINT32_MAX };

	fx_rx_build(ROCEMU_OP_RC_RDMA_READ_REQUEST, &h, NULL, 0);
	expect_nak(ROCEMU_NAK_INVALID_REQUEST, IBV_EVENT_QP_REQ_ERR);
}
END_TEST

/* A consumer index ahead of the producer: an overrun, the CQ in error, no CQE written. */
START_TEST(test_cq_consumer_ahead)
{
	const struct ibv_sge sge = { (uintptr_t)fx.buf, 8, fx.lkey };
	const struct fx_wr wr = { .opcode = MLX5_OPCODE_SEND, .flags = MLX5_WQE_CTRL_CQ_UPDATE,
				  .sge = &sge, .num_sge = 1 };
	__be32 *dbrec = (__be32 *)(fx.scq.map + fx.scq.layout.dbrec_offset);
	struct rocemu_async_record ev;

	__atomic_store_n(dbrec, htobe32(ROCEMU_CQ_INDEX_MASK / 2), __ATOMIC_RELEASE);
	fx_post_send(&wr);
	fx_doorbell();
	fx_rx_ack(FX_SQ_PSN, rocemu_aeth_syndrome_make(ROCEMU_AETH_ACK, 0), 1);
	ck_assert(fx_async_event(&ev));
	ck_assert_uint_eq(ev.element, FX_USER_CQ);
	ck_assert_uint_eq(ev.event_type, IBV_EVENT_CQ_ERR);
	ck_assert_uint_eq(fx_emu_cq(&fx.scq)->pi, 0);
}
END_TEST

/* A UD send doorbell past the ring: QP_FATAL, as on the connected transports. */
START_TEST(test_ud_sq_doorbell_past_ring)
{
	fx.qp.sq_cur = 0x8000;
	fx_doorbell();
	ck_assert_uint_eq(fx.nwire, 0);
	fx_expect_qp_error(IBV_EVENT_QP_FATAL);
}
END_TEST

/* A UD receive doorbell past the ring: the datagram that needs a WQE fails the QP. */
START_TEST(test_ud_rq_doorbell_past_ring)
{
	const struct fx_hdrs h = { .psn = 1, .qkey = FX_QKEY };
	static const uint8_t data[16];

	fx.qp.rq_head = fx.qp.layout.rq_wqe_cnt + 1;
	fx_doorbell();
	fx_rx_build(ROCEMU_OP_UD_SEND_ONLY, &h, data, sizeof(data));
	fx_expect_qp_error(IBV_EVENT_QP_FATAL);
}
END_TEST

/*
 * An SRQ doorbell past the ring breaks the SRQ (SRQ_ERR, once) and fails
 * the QP that takes from it; the SRQ stays broken with a sane doorbell.
 */
START_TEST(test_srq_doorbell_past_ring)
{
	const struct fx_hdrs h = { .psn = 1, .qkey = FX_QKEY };
	__be32 *db = (__be32 *)(fx.srq.map + fx.srq.layout.dbrec_offset);
	static const uint8_t data[16];
	struct rocemu_async_record ev;
	struct rocemu_srq *srq = rocemu_srq_lookup(fx.client, fx.srq.srqn);
	struct rocemu_recv_wqe w;
	uint32_t rq_ci = 0;

	__atomic_store_n(db, rocemu_wq_dbrec_word(fx.srq.layout.wqe_cnt + 1), __ATOMIC_RELEASE);
	fx_rx_build(ROCEMU_OP_UD_SEND_ONLY, &h, data, sizeof(data));
	ck_assert(fx_async_event(&ev));
	ck_assert_uint_eq(ev.element, FX_USER_SRQ);
	ck_assert_uint_eq(ev.event_type, IBV_EVENT_SRQ_ERR);
	fx_expect_qp_error(IBV_EVENT_QP_FATAL);
	ck_assert(fx_async_event(&ev));
	ck_assert_uint_eq(ev.event_type, IBV_EVENT_QP_LAST_WQE_REACHED);
	ck_assert(srq->broken);
	__atomic_store_n(db, rocemu_wq_dbrec_word(1), __ATOMIC_RELEASE);
	ck_assert_int_eq(rocemu_recv_wqe_next(fx_emu_qp(), &rq_ci, &w), -EINVAL);
	ck_assert(!fx_async_event(&ev));
}
END_TEST

static TCase *garbage_case(const char *name, void (*setup)(void), bool fatal)
{
	TCase *tc = tcase_create(name);

	tcase_add_checked_fixture(tc, setup, fx_teardown);
	tcase_add_test(tc, fatal ? test_garbage_odd_doorbell_fatal : test_garbage_odd_doorbell);
	return tc;
}

int main(void)
{
	Suite *s = suite_create("wq_bounds");
	TCase *rc = garbage_case("rc", fx_setup, true), *ud = garbage_case("ud", fx_setup_ud, false),
	      *srq = tcase_create("srq");

	tcase_add_test(rc, test_posted_within_ring);
	tcase_add_test(rc, test_sq_doorbell_past_ring);
	tcase_add_test(rc, test_wqe_past_doorbell);
	tcase_add_test(rc, test_message_over_max_msg_sz);
	tcase_add_test(rc, test_rq_doorbell_past_ring);
	tcase_add_test(rc, test_read_request_over_max_msg_sz);
	tcase_add_test(rc, test_cq_consumer_ahead);
	suite_add_tcase(s, rc);
	suite_add_tcase(s, garbage_case("uc", fx_setup_uc, true));
	suite_add_tcase(s, garbage_case("xrc", fx_setup_xrc_ini, true));
	suite_add_tcase(s, garbage_case("dci", fx_setup_dci, true));
	tcase_add_test(ud, test_ud_sq_doorbell_past_ring);
	tcase_add_test(ud, test_ud_rq_doorbell_past_ring);
	suite_add_tcase(s, ud);
	tcase_add_checked_fixture(srq, fx_setup_ud_srq, fx_teardown);
	tcase_add_test(srq, test_srq_doorbell_past_ring);
	suite_add_tcase(s, srq);
	return fx_suite_run(s);
}
