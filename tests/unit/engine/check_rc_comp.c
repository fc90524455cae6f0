/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The RC completer (emulator/rc/rc_comp.c) on the fake wire: WQEs sent by the
 * requester, then the peer's ACKs, NAKs and responses in; CQEs and resent
 * packets out. Retiring in order on (coalesced) ACKs, signaled or not,
 * go-back-N on a PSN sequence NAK, READ data scattered into the SGEs, the
 * original value of an atomic, an RNR wait, and a NAK that fails the QP;
 * READ responses that do not fit the READ and ghost ACKs and NAKs dropped.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "emulator/obj/qp.h"
#include "emulator/obj/qp_timer.h"
#include "emulator/rc/rc.h"
#include "tests/unit/fixture.h"

/* Long enough for an RNR wait of 10 us, far shorter than anything else pending. */
#define RNR_RUN_NS (20 * 1000 * 1000ull)
#define RNR_TIMER_10US 1	/* IBTA table 45: 0.01 ms */

static uint8_t ack_syndrome(void)
{
	return rocemu_aeth_syndrome_make(ROCEMU_AETH_ACK, ROCEMU_AETH_CREDITS_INVALID);
}

static uint8_t nak_syndrome(uint8_t code)
{
	return rocemu_aeth_syndrome_make(ROCEMU_AETH_NAK, code);
}

static uint16_t post(uint8_t opcode, bool signaled, uint32_t off, uint32_t len)
{
	const struct ibv_sge sge = { .addr = (uintptr_t)(fx.buf + off), .length = len,
				     .lkey = fx.lkey };
	const struct fx_wr wr = { .opcode = opcode,
				  .flags = signaled ? MLX5_WQE_CTRL_CQ_UPDATE : 0,
				  .raddr = opcode == MLX5_OPCODE_SEND ? 0 : 0x10000,
				  .rkey = 0x77, .sge = &sge, .num_sge = 1 };

	return fx_post_send(&wr);
}

static void expect_req_cqe(uint16_t counter, uint8_t opcode)
{
	struct mlx5_cqe64 cqe = fx_expect_cqe(&fx.scq, MLX5_CQE_REQ, counter, 0);

	ck_assert_uint_eq(be32toh(cqe.sop_drop_qpn), (uint32_t)opcode << 24 | fx.qp.qpn);
}

static void expect_no_cqe(void)
{
	struct mlx5_cqe64 cqe;

	ck_assert(!fx_poll(&fx.scq, &cqe));
}

START_TEST(test_ack_retires_in_order)
{
	uint16_t w0, w1, s3;

	w0 = post(MLX5_OPCODE_RDMA_WRITE, true, 0, 8);
	w1 = post(MLX5_OPCODE_RDMA_WRITE, true, 0, 8);
	post(MLX5_OPCODE_SEND, false, 0, 8);
	s3 = post(MLX5_OPCODE_SEND, true, 0, 8);
	fx_doorbell();
	ck_assert_uint_eq(fx.nwire, 4);
	fx_rx_ack(FX_SQ_PSN + 1, ack_syndrome(), 2);
	expect_req_cqe(w0, MLX5_OPCODE_RDMA_WRITE);
	expect_req_cqe(w1, MLX5_OPCODE_RDMA_WRITE);
	expect_no_cqe();
	/* One ACK covers the rest; the unsignaled SEND retires without a CQE. */
	fx_rx_ack(FX_SQ_PSN + 3, ack_syndrome(), 4);
	expect_req_cqe(s3, MLX5_OPCODE_SEND);
	expect_no_cqe();
}
END_TEST

START_TEST(test_partial_ack_completes_nothing)
{
	uint16_t s;

	s = post(MLX5_OPCODE_SEND, true, 0, 3 * FX_MTU_BYTES);
	fx_doorbell();
	fx_rx_ack(FX_SQ_PSN + 1, ack_syndrome(), 0);
	expect_no_cqe();
	fx_rx_ack(FX_SQ_PSN + 2, ack_syndrome(), 1);
	expect_req_cqe(s, MLX5_OPCODE_SEND);
}
END_TEST

/* Go-back-N: a PSN sequence NAK resends from its PSN, and completes nothing. */
START_TEST(test_nak_sequence_rewinds)
{
	uint16_t s;

	s = post(MLX5_OPCODE_SEND, true, 0, 3 * FX_MTU_BYTES);
	fx_doorbell();
	ck_assert_uint_eq(fx.nwire, 3);
	fx_wire_clear();
	fx_rx_ack(FX_SQ_PSN + 1, nak_syndrome(ROCEMU_NAK_PSN_SEQ_ERROR), 0);
	ck_assert_uint_eq(fx.nwire, 2);
	fx_wire_expect(0, ROCEMU_OP_RC_SEND_MIDDLE, FX_SQ_PSN + 1, false, FX_MTU_BYTES);
	fx_wire_expect(1, ROCEMU_OP_RC_SEND_LAST, FX_SQ_PSN + 2, true, FX_MTU_BYTES);
	ck_assert_uint_eq(fx.dev->counters.packet_seq_err, 1);
	ck_assert_uint_eq(fx.dev->counters.retransmitted_packets, 2);
	expect_no_cqe();
	fx_rx_ack(FX_SQ_PSN + 2, ack_syndrome(), 1);
	expect_req_cqe(s, MLX5_OPCODE_SEND);
}
END_TEST

START_TEST(test_read_response_scattered)
{
	const struct ibv_sge sge[2] = {
		{ .addr = (uintptr_t)(fx.buf + 0), .length = 1000, .lkey = fx.lkey },
		{ .addr = (uintptr_t)(fx.buf + 5000), .length = 500, .lkey = fx.lkey },
	};
	const struct fx_wr wr = { .opcode = MLX5_OPCODE_RDMA_READ,
				  .flags = MLX5_WQE_CTRL_CQ_UPDATE, .raddr = 0x20000, .rkey = 0x55,
				  .sge = sge, .num_sge = 2 };
	struct fx_hdrs h = { .psn = FX_SQ_PSN, .syndrome = ack_syndrome(), .msn = 1 };
	static uint8_t data[1500];
	struct mlx5_cqe64 cqe;
	uint16_t r;

	for (size_t i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)(i * 31 + 7);
	r = fx_post_send(&wr);
	fx_doorbell();
	fx_rx_build(ROCEMU_OP_RC_RDMA_READ_RESPONSE_FIRST, &h, data, FX_MTU_BYTES);
	expect_no_cqe();
	h.psn++;
	fx_rx_build(ROCEMU_OP_RC_RDMA_READ_RESPONSE_LAST, &h, data + FX_MTU_BYTES,
		    sizeof(data) - FX_MTU_BYTES);
	cqe = fx_expect_cqe(&fx.scq, MLX5_CQE_REQ, r, 0);
	ck_assert_uint_eq(be32toh(cqe.byte_cnt), sizeof(data));
	ck_assert_mem_eq(fx.buf, data, 1000);
	ck_assert_mem_eq(fx.buf + 5000, data + 1000, 500);
}
END_TEST

/* The AtomicAckETH value lands in the SGE in host order. */
START_TEST(test_atomic_ack_writes_original)
{
	const struct ibv_sge sge = { .addr = (uintptr_t)(fx.buf + 128), .length = 8,
				     .lkey = fx.lkey };
	const struct fx_wr wr = { .opcode = MLX5_OPCODE_ATOMIC_FA,
				  .flags = MLX5_WQE_CTRL_CQ_UPDATE, .raddr = 0x30000, .rkey = 0x66,
				  .swap_add = 1, .sge = &sge, .num_sge = 1 };
	const struct fx_hdrs h = { .psn = FX_SQ_PSN, .syndrome = ack_syndrome(), .msn = 1,
				   .orig = 0x0102030405060708ull };
	uint64_t v;
	uint16_t a;

	a = fx_post_send(&wr);
	fx_doorbell();
	fx_wire_expect(0, ROCEMU_OP_RC_FETCH_ADD, FX_SQ_PSN, true, 0);
	fx_rx_build(ROCEMU_OP_RC_ATOMIC_ACKNOWLEDGE, &h, NULL, 0);
	expect_req_cqe(a, MLX5_OPCODE_ATOMIC_FA);
	memcpy(&v, fx.buf + 128, sizeof(v));
	ck_assert_uint_eq(v, 0x0102030405060708ull);
}
END_TEST

/* An RNR NAK: nothing resent until the wait it names is over, then from its PSN. */
START_TEST(test_rnr_nak_waits_then_resends)
{
	post(MLX5_OPCODE_SEND, true, 0, 8);
	fx_doorbell();
	fx_wire_clear();
	fx_rx_ack(FX_SQ_PSN, rocemu_aeth_syndrome_make(ROCEMU_AETH_RNR_NAK, RNR_TIMER_10US), 0);
	ck_assert_uint_eq(fx.nwire, 0);
	ck_assert_uint_eq(fx.dev->counters.rnr_nak_retry_err, 1);
	fx_run(RNR_RUN_NS);
	ck_assert_uint_eq(fx.nwire, 1);
	fx_wire_expect(0, ROCEMU_OP_RC_SEND_ONLY, FX_SQ_PSN, true, 8);
	expect_no_cqe();
}
END_TEST

/* The local ACK timer of the QP expires n times, as the loop fires it: no longer armed. */
static void ack_timeouts(unsigned int n)
{
	while (n--) {
		rocemu_qp_timer_cancel(fx_emu_qp(), ROCEMU_QP_TIMER_RETRY);
		rocemu_rc_timer(fx_emu_qp(), ROCEMU_QP_TIMER_RETRY);
	}
}

/*
 * retry_cnt counts timeouts without an answer in between: an ACK after 5
 * of 7 leaves the next message its own 7, even when the timer armed for
 * the first expires with nothing outstanding (a slow peer, as rxe in a VM).
 */
START_TEST(test_ack_restarts_the_retry_count)
{
	uint16_t s;

	fx_emu_qp()->attr.timeout = 20;	/* 4 s: only the calls below expire it */
	post(MLX5_OPCODE_SEND, true, 0, 8);
	fx_doorbell();
	ack_timeouts(5);
	ck_assert_uint_eq(fx.dev->counters.local_ack_timeout_err, 5);
	fx_rx_ack(FX_SQ_PSN, ack_syndrome(), 1);
	expect_req_cqe(0, MLX5_OPCODE_SEND);
	ack_timeouts(1);
	s = post(MLX5_OPCODE_SEND, true, 0, 8);
	fx_doorbell();
	fx_wire_clear();
	ack_timeouts(7);
	ck_assert_uint_eq(fx.nwire, 7);
	expect_no_cqe();
	ack_timeouts(1);
	fx_expect_cqe(&fx.scq, MLX5_CQE_REQ_ERR, s, MLX5_CQE_SYNDROME_TRANSPORT_RETRY_EXC_ERR);
}
END_TEST

/* A remote access NAK fails its WQE, flushes the rest and the QP (QP_FATAL). */
START_TEST(test_access_nak_fails_qp)
{
	uint16_t w, s;

	w = post(MLX5_OPCODE_RDMA_WRITE, true, 0, 8);
	s = post(MLX5_OPCODE_SEND, false, 0, 8);
	fx_doorbell();
	fx_rx_ack(FX_SQ_PSN, nak_syndrome(ROCEMU_NAK_REMOTE_ACCESS_ERROR), 0);
	fx_expect_cqe(&fx.scq, MLX5_CQE_REQ_ERR, w, MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR);
	fx_expect_cqe(&fx.scq, MLX5_CQE_REQ_ERR, s, MLX5_CQE_SYNDROME_WR_FLUSH_ERR);
	expect_no_cqe();
	fx_expect_qp_error(IBV_EVENT_QP_FATAL);
}
END_TEST

/* READ responses that do not fit the READ in flight: dropped and counted, the READ unharmed. */
START_TEST(test_read_response_misfits_dropped)
{
	const struct ibv_sge sge = { .addr = (uintptr_t)fx.buf, .length = 3 * FX_MTU_BYTES,
				     .lkey = fx.lkey };
	const struct fx_wr wr = { .opcode = MLX5_OPCODE_RDMA_READ,
				  .flags = MLX5_WQE_CTRL_CQ_UPDATE, .raddr = 0x20000, .rkey = 0x55,
				  .sge = &sge, .num_sge = 1 };
	const struct {
		uint8_t opcode;
		uint32_t psn_off, paylen;
		uint8_t syndrome;
	} misfits[] = {
		/* The whole READ in one packet: more than the MTU, ending it at its first PSN. */
		{ ROCEMU_OP_RC_RDMA_READ_RESPONSE_ONLY, 0, 3 * FX_MTU_BYTES, ack_syndrome() },
		{ ROCEMU_OP_RC_RDMA_READ_RESPONSE_FIRST, 0, 2 * FX_MTU_BYTES, ack_syndrome() },
		{ ROCEMU_OP_RC_RDMA_READ_RESPONSE_LAST, 0, FX_MTU_BYTES, ack_syndrome() },
		{ ROCEMU_OP_RC_RDMA_READ_RESPONSE_MIDDLE, 0, FX_MTU_BYTES, 0 },
		{ ROCEMU_OP_RC_RDMA_READ_RESPONSE_FIRST, 0, FX_MTU_BYTES,
		  nak_syndrome(ROCEMU_NAK_REMOTE_ACCESS_ERROR) },
		{ ROCEMU_OP_RC_ATOMIC_ACKNOWLEDGE, 0, 0, ack_syndrome() },
		{ ROCEMU_OP_RC_ACKNOWLEDGE, 0, 0, 2 << 5 },	/* a reserved syndrome type */
	};
	struct fx_hdrs h = { .syndrome = ack_syndrome(), .msn = 1 };
	static uint8_t data[3 * FX_MTU_BYTES];
	uint16_t r;

	memset(data, 0xee, sizeof(data));
	r = fx_post_send(&wr);
	fx_doorbell();
	for (size_t i = 0; i < sizeof(misfits) / sizeof(misfits[0]); i++) {
		h.psn = FX_SQ_PSN + misfits[i].psn_off;
		h.syndrome = misfits[i].syndrome;
		fx_rx_build(misfits[i].opcode, &h, data, misfits[i].paylen);
	}
	/* A LAST past the READ's PSNs answers nothing sent. */
	h = (struct fx_hdrs){ .psn = FX_SQ_PSN + 3, .syndrome = ack_syndrome(), .msn = 1 };
	fx_rx_build(ROCEMU_OP_RC_RDMA_READ_RESPONSE_LAST, &h, data, FX_MTU_BYTES);
	ck_assert_uint_eq(fx.dev->counters.rx_bad_responses, sizeof(misfits) / sizeof(misfits[0]));
	ck_assert_uint_eq(fx.dev->counters.rx_ghost_acks, 1);
	expect_no_cqe();
	ck_assert_int_eq(fx_qp_state(), IBV_QPS_RTS);
	for (unsigned int i = 0; i < 3; i++) {
		static const uint8_t ops[] = { ROCEMU_OP_RC_RDMA_READ_RESPONSE_FIRST,
					       ROCEMU_OP_RC_RDMA_READ_RESPONSE_MIDDLE,
					       ROCEMU_OP_RC_RDMA_READ_RESPONSE_LAST };

		for (size_t k = 0; k < FX_MTU_BYTES; k++)
			data[i * FX_MTU_BYTES + k] = (uint8_t)(i + k * 7);
		h.psn = FX_SQ_PSN + i;
		fx_rx_build(ops[i], &h, data + i * FX_MTU_BYTES, FX_MTU_BYTES);
	}
	fx_expect_cqe(&fx.scq, MLX5_CQE_REQ, r, 0);
	ck_assert_mem_eq(fx.buf, data, sizeof(data));
}
END_TEST

/* ACKs and NAKs outside the PSNs in flight are ghosts: ignored, counted, nothing fails. */
START_TEST(test_stale_and_early_acks_ignored)
{
	uint16_t w0, w1;

	w0 = post(MLX5_OPCODE_RDMA_WRITE, true, 0, 8);
	fx_doorbell();
	fx_rx_ack(FX_SQ_PSN, ack_syndrome(), 1);
	expect_req_cqe(w0, MLX5_OPCODE_RDMA_WRITE);
	w1 = post(MLX5_OPCODE_RDMA_WRITE, true, 0, 8);
	fx_doorbell();
	fx_wire_clear();
	fx_rx_ack(FX_SQ_PSN, nak_syndrome(ROCEMU_NAK_REMOTE_ACCESS_ERROR), 1);
	fx_rx_ack(FX_SQ_PSN - 0x1000, nak_syndrome(ROCEMU_NAK_INVALID_REQUEST), 1);
	fx_rx_ack(FX_SQ_PSN, rocemu_aeth_syndrome_make(ROCEMU_AETH_RNR_NAK, 0), 1);
	fx_rx_ack(FX_SQ_PSN, nak_syndrome(ROCEMU_NAK_PSN_SEQ_ERROR), 1);
	fx_rx_ack(FX_SQ_PSN + 2, ack_syndrome(), 2);
	fx_rx_ack(FX_SQ_PSN + 2, nak_syndrome(ROCEMU_NAK_REMOTE_OP_ERROR), 2);
	ck_assert_uint_eq(fx.dev->counters.rx_ghost_acks, 6);
	ck_assert_uint_eq(fx.dev->counters.rnr_nak_retry_err, 0);
	ck_assert_uint_eq(fx.dev->counters.packet_seq_err, 0);
	ck_assert_uint_eq(fx.nwire, 0);
	expect_no_cqe();
	ck_assert_int_eq(fx_qp_state(), IBV_QPS_RTS);
	fx_rx_ack(FX_SQ_PSN + 1, ack_syndrome(), 2);
	expect_req_cqe(w1, MLX5_OPCODE_RDMA_WRITE);
}
END_TEST

static Suite *rc_comp_suite(void)
{
	Suite *s = suite_create("rc_comp");
	TCase *tc = tcase_create("rc_comp");

	tcase_add_checked_fixture(tc, fx_setup, fx_teardown);
	tcase_add_test(tc, test_ack_retires_in_order);
	tcase_add_test(tc, test_partial_ack_completes_nothing);
	tcase_add_test(tc, test_nak_sequence_rewinds);
	tcase_add_test(tc, test_read_response_scattered);
	tcase_add_test(tc, test_atomic_ack_writes_original);
	tcase_add_test(tc, test_rnr_nak_waits_then_resends);
	tcase_add_test(tc, test_access_nak_fails_qp);
	tcase_add_test(tc, test_ack_restarts_the_retry_count);
	tcase_add_test(tc, test_read_response_misfits_dropped);
	tcase_add_test(tc, test_stale_and_early_acks_ignored);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return fx_suite_run(rc_comp_suite());
}
