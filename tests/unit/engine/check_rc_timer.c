/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * RC's timers (emulator/rc/rc_timer.c) on the fake wire: the local ACK
 * timeout fired by the loop resends from the oldest unacknowledged PSN
 * retry_cnt times, then fails the WQE with RETRY_EXC_ERR, flushes the
 * rest and takes the QP to ERR; an ACK that moved the oldest PSN since
 * the timer was armed defers the resend and gives back the count; an
 * infinite timeout (0) never resends nor fails; an RNR NAK stops the ACK
 * timer and the resend waits for the RNR timer; a QP whose CQ lost a CQE
 * fails with QP_FATAL; a gone process's QP resends nothing.
 */
#include <check.h>

#include "emulator/core/client.h"
#include "emulator/obj/qp.h"
#include "emulator/obj/qp_timer.h"
#include "emulator/rc/rc.h"
#include "tests/unit/fixture.h"

#define SHORT_TIMEOUT 8			/* 4.096 us * 2^8: about 1 ms */
#define LONG_TIMEOUT 20			/* about 4 s: only a test's own call expires it */
#define RUN_STEP_NS (10 * 1000 * 1000ull)
#define RUN_STEPS_MAX 1000u		/* 10 s of loop at most: a deadline, not a pace */
#define RNR_TIMER_10US 1		/* IBTA table 45: 0.01 ms */

static uint8_t ack_syndrome(void)
{
	return rocemu_aeth_syndrome_make(ROCEMU_AETH_ACK, ROCEMU_AETH_CREDITS_INVALID);
}

static uint16_t post_send(bool signaled)
{
	const struct ibv_sge sge = { .addr = (uintptr_t)fx.buf, .length = 8, .lkey = fx.lkey };
	const struct fx_wr wr = { .opcode = MLX5_OPCODE_SEND,
				  .flags = signaled ? MLX5_WQE_CTRL_CQ_UPDATE : 0,
				  .sge = &sge, .num_sge = 1 };

	return fx_post_send(&wr);
}

/* The local ACK timer expires now, as the loop would fire it. */
static void ack_timeout(void)
{
	rocemu_qp_timer_cancel(fx_emu_qp(), ROCEMU_QP_TIMER_RETRY);
	rocemu_rc_timer(fx_emu_qp(), ROCEMU_QP_TIMER_RETRY);
}

/* Run the loop until a CQE of fx.scq is there (or the deadline), and take it. */
static struct mlx5_cqe64 run_until_cqe(void)
{
	struct mlx5_cqe64 cqe;
	unsigned int step;

	for (step = 0; step < RUN_STEPS_MAX; step++) {
		if (fx_poll(&fx.scq, &cqe))
			return cqe;
		fx_run(RUN_STEP_NS);
	}
	ck_abort_msg("no CQE within %u ms of loop", RUN_STEPS_MAX * 10);
	return cqe;
}

/*
 * Fired by the loop: retry_cnt resends of the unacknowledged SEND, then
 * RETRY_EXC_ERR for it and a flush of the one behind, the QP in ERR.
 */
START_TEST(test_retry_exhaustion_by_the_loop)
{
	struct mlx5_cqe64 cqe;
	uint16_t first, second;

	fx_emu_qp()->attr.timeout = LONG_TIMEOUT;
	fx_emu_qp()->attr.retry_cnt = 3;
	first = post_send(true);
	second = post_send(true);
	fx_doorbell();
	ck_assert_uint_eq(fx.nwire, 2);
	fx_wire_clear();
	/* Short from now on, as armed after the send: no expiry may fall inside the doorbell's turns. */
	fx_emu_qp()->attr.timeout = SHORT_TIMEOUT;
	rocemu_qp_timer_cancel(fx_emu_qp(), ROCEMU_QP_TIMER_RETRY);
	rocemu_rc_retry_arm(fx_emu_qp());
	cqe = run_until_cqe();
	ck_assert_uint_eq(mlx5dv_get_cqe_opcode(&cqe), MLX5_CQE_REQ_ERR);
	ck_assert_uint_eq(be16toh(cqe.wqe_counter), first);
	ck_assert_uint_eq(((struct mlx5_err_cqe *)&cqe)->syndrome,
			  MLX5_CQE_SYNDROME_TRANSPORT_RETRY_EXC_ERR);
	fx_expect_cqe(&fx.scq, MLX5_CQE_REQ_ERR, second, MLX5_CQE_SYNDROME_WR_FLUSH_ERR);
	/* Each resend went back to the oldest PSN: both packets, three times. */
	ck_assert_uint_eq(fx.nwire, 6);
	for (unsigned int i = 0; i < 6; i += 2) {
		fx_wire_expect(i, ROCEMU_OP_RC_SEND_ONLY, FX_SQ_PSN, true, 8);
		fx_wire_expect(i + 1, ROCEMU_OP_RC_SEND_ONLY, FX_SQ_PSN + 1, true, 8);
	}
	ck_assert_uint_eq(fx.dev->counters.local_ack_timeout_err, 3);
	fx_expect_qp_error(IBV_EVENT_QP_FATAL);
	ck_assert(!rocemu_qp_timer_armed(fx_emu_qp(), ROCEMU_QP_TIMER_RETRY));
}
END_TEST

/* retry_cnt 0: the first timeout already fails, nothing resent. */
START_TEST(test_retry_cnt_zero_fails_at_once)
{
	uint16_t s;

	fx_emu_qp()->attr.timeout = LONG_TIMEOUT;
	fx_emu_qp()->attr.retry_cnt = 0;
	s = post_send(false);
	fx_doorbell();
	fx_wire_clear();
	ack_timeout();
	ck_assert_uint_eq(fx.nwire, 0);
	/* An unsignaled WQE's error still completes. */
	fx_expect_cqe(&fx.scq, MLX5_CQE_REQ_ERR, s, MLX5_CQE_SYNDROME_TRANSPORT_RETRY_EXC_ERR);
	ck_assert_uint_eq(fx.dev->counters.local_ack_timeout_err, 0);
	fx_expect_qp_error(IBV_EVENT_QP_FATAL);
}
END_TEST

/*
 * An ACK moved the oldest PSN since the timer was armed: no resend then,
 * the count starts again, and the next timeout resends only what is left.
 */
START_TEST(test_progress_defers_resend)
{
	struct mlx5_cqe64 cqe;

	fx_emu_qp()->attr.timeout = LONG_TIMEOUT;
	fx_emu_qp()->attr.retry_cnt = 1;
	post_send(true);
	post_send(true);
	fx_doorbell();
	ack_timeout();
	ck_assert_uint_eq(fx_emu_qp()->rc->req.retries, 1);
	fx_rx_ack(FX_SQ_PSN, ack_syndrome(), 1);
	fx_expect_cqe(&fx.scq, MLX5_CQE_REQ, 0, 0);
	fx_wire_clear();
	ack_timeout();
	ck_assert_uint_eq(fx.nwire, 0);
	ck_assert_uint_eq(fx_emu_qp()->rc->req.retries, 0);
	ck_assert(rocemu_qp_timer_armed(fx_emu_qp(), ROCEMU_QP_TIMER_RETRY));
	/* retry_cnt 1 again in full: one resend from the oldest PSN, no failure. */
	ack_timeout();
	ck_assert_uint_eq(fx.nwire, 1);
	fx_wire_expect(0, ROCEMU_OP_RC_SEND_ONLY, FX_SQ_PSN + 1, true, 8);
	ck_assert(!fx_poll(&fx.scq, &cqe));
	ck_assert_int_eq(fx_qp_state(), IBV_QPS_RTS);
}
END_TEST

/* Nothing outstanding any more: the timer's expiry does nothing and is not armed again. */
START_TEST(test_nothing_outstanding)
{
	fx_emu_qp()->attr.timeout = LONG_TIMEOUT;
	post_send(true);
	fx_doorbell();
	fx_rx_ack(FX_SQ_PSN, ack_syndrome(), 1);
	fx_expect_cqe(&fx.scq, MLX5_CQE_REQ, 0, 0);
	fx_wire_clear();
	ack_timeout();
	ck_assert_uint_eq(fx.nwire, 0);
	ck_assert(!rocemu_qp_timer_armed(fx_emu_qp(), ROCEMU_QP_TIMER_RETRY));
	ck_assert_uint_eq(fx.dev->counters.local_ack_timeout_err, 0);
}
END_TEST

/* A timeout of 0 is infinite: expiries past retry_cnt resend nothing and fail nothing. */
START_TEST(test_infinite_timeout)
{
	struct mlx5_cqe64 cqe;

	ck_assert_uint_eq(fx_emu_qp()->attr.timeout, 0);
	fx_emu_qp()->attr.retry_cnt = 1;
	post_send(true);
	fx_doorbell();
	fx_wire_clear();
	for (unsigned int i = 0; i < 10; i++)
		ack_timeout();
	ck_assert_uint_eq(fx.nwire, 0);
	ck_assert_uint_eq(fx.dev->counters.local_ack_timeout_err, 0);
	ck_assert(rocemu_qp_timer_armed(fx_emu_qp(), ROCEMU_QP_TIMER_RETRY));
	ck_assert(!fx_poll(&fx.scq, &cqe));
	ck_assert_int_eq(fx_qp_state(), IBV_QPS_RTS);
}
END_TEST

/*
 * An RNR NAK is an answer: the ACK timer stops, the count of timeouts
 * starts again, a timeout meanwhile resends nothing, and the resend comes
 * when the loop fires the RNR timer.
 */
START_TEST(test_rnr_wait_stops_ack_timer)
{
	struct rocemu_qp *qp = fx_emu_qp();
	unsigned int step;

	qp->attr.timeout = LONG_TIMEOUT;
	post_send(true);
	fx_doorbell();
	ack_timeout();
	ack_timeout();
	ck_assert_uint_eq(qp->rc->req.retries, 2);
	fx_wire_clear();
	fx_rx_ack(FX_SQ_PSN, rocemu_aeth_syndrome_make(ROCEMU_AETH_RNR_NAK, RNR_TIMER_10US), 0);
	ck_assert_uint_eq(qp->rc->req.retries, 0);
	ck_assert(!rocemu_qp_timer_armed(qp, ROCEMU_QP_TIMER_RETRY));
	ck_assert(rocemu_qp_timer_armed(qp, ROCEMU_QP_TIMER_RNR));
	rocemu_rc_timer(qp, ROCEMU_QP_TIMER_RETRY);
	ck_assert_uint_eq(fx.nwire, 0);
	for (step = 0; step < RUN_STEPS_MAX && !fx.nwire; step++)
		fx_run(RUN_STEP_NS);
	ck_assert_uint_eq(fx.nwire, 1);
	fx_wire_expect(0, ROCEMU_OP_RC_SEND_ONLY, FX_SQ_PSN, true, 8);
	ck_assert(!rocemu_qp_timer_armed(qp, ROCEMU_QP_TIMER_RNR));
	/* The resend armed the ACK timer again. */
	ck_assert(rocemu_qp_timer_armed(qp, ROCEMU_QP_TIMER_RETRY));
}
END_TEST

/* A CQ refused a CQE: at the timer the QP fails with a local QP operation error, QP_FATAL. */
START_TEST(test_cq_lost_fails_qp)
{
	uint16_t s;

	fx_emu_qp()->attr.timeout = LONG_TIMEOUT;
	s = post_send(true);
	fx_doorbell();
	rocemu_rc_timer(fx_emu_qp(), ROCEMU_QP_TIMER_CQ_LOST);
	fx_expect_qp_error(IBV_EVENT_QP_FATAL);
	fx_expect_cqe(&fx.scq, MLX5_CQE_REQ_ERR, s, MLX5_CQE_SYNDROME_WR_FLUSH_ERR);
	ck_assert(!rocemu_qp_timer_armed(fx_emu_qp(), ROCEMU_QP_TIMER_RETRY));
}
END_TEST

/* The process is gone: its QP's timeouts resend nothing and fail nothing. */
START_TEST(test_gone_process_resends_nothing)
{
	struct mlx5_cqe64 cqe;

	fx_emu_qp()->attr.timeout = LONG_TIMEOUT;
	fx_emu_qp()->attr.retry_cnt = 0;
	post_send(true);
	fx_doorbell();
	fx_wire_clear();
	rocemu_client_gone(fx.client);
	ack_timeout();
	ck_assert_uint_eq(fx.nwire, 0);
	ck_assert(!fx_poll(&fx.scq, &cqe));
}
END_TEST

static Suite *rc_timer_suite(void)
{
	Suite *s = suite_create("rc_timer");
	TCase *tc = tcase_create("rc_timer");

	tcase_add_checked_fixture(tc, fx_setup, fx_teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_retry_exhaustion_by_the_loop);
	tcase_add_test(tc, test_retry_cnt_zero_fails_at_once);
	tcase_add_test(tc, test_progress_defers_resend);
	tcase_add_test(tc, test_nothing_outstanding);
	tcase_add_test(tc, test_infinite_timeout);
	tcase_add_test(tc, test_rnr_wait_stops_ack_timer);
	tcase_add_test(tc, test_cq_lost_fails_qp);
	tcase_add_test(tc, test_gone_process_resends_nothing);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return fx_suite_run(rc_timer_suite());
}
