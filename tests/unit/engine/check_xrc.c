/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The XRC transport (emulator/xrc/xrc_qp.c) on the fake wire, with an XRC
 * initiator as the fixture's QP: RC's requester and completer send RC's
 * opcodes in XRC's class, every request with the XRCETH of the SRQ number
 * its WQE's XRC segment carries, responses and acknowledges without; XRC
 * acknowledges and READ responses complete its WQEs, while an RC
 * acknowledge (another transport) and an XRC request (an initiator
 * answers none) are dropped and counted.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/fixture.h"

#define SRQN 0x00abcdu

static uint8_t ack_syndrome(void)
{
	return rocemu_aeth_syndrome_make(ROCEMU_AETH_ACK, ROCEMU_AETH_CREDITS_INVALID);
}

static uint16_t post(uint8_t opcode, uint32_t len, uint32_t srqn)
{
	const struct ibv_sge sge = { .addr = (uintptr_t)fx.buf, .length = len, .lkey = fx.lkey };
	const struct fx_wr wr = { .opcode = opcode, .flags = MLX5_WQE_CTRL_CQ_UPDATE,
				  .raddr = 0x10000, .rkey = 0x1234, .sge = &sge, .num_sge = 1,
				  .xrc_srqn = srqn };

	return fx_post_send(&wr);
}

static void expect_xrceth(unsigned int i, uint32_t srqn)
{
	const uint8_t *xrceth = rocemu_pkt_xrceth((uint8_t *)fx_wire_bth(i));

	ck_assert_ptr_nonnull(xrceth);
	ck_assert_uint_eq(rocemu_xrceth_srqn(xrceth), srqn);
}

static void ack(uint32_t psn, uint32_t msn)
{
	const struct fx_hdrs h = { .psn = psn, .syndrome = ack_syndrome(), .msn = msn };

	fx_rx_build(ROCEMU_OP_XRC_ACKNOWLEDGE, &h, NULL, 0);
}

/* A SEND of three packets, each with XRCETH; the XRC acknowledge completes it. */
START_TEST(test_send_carries_xrceth)
{
	struct mlx5_cqe64 cqe;
	uint16_t counter;
	unsigned int i;

	counter = post(MLX5_OPCODE_SEND, 2 * FX_MTU_BYTES + 10, SRQN);
	fx_doorbell();
	ck_assert_uint_eq(fx.nwire, 3);
	fx_wire_expect(0, ROCEMU_OP_XRC_SEND_FIRST, FX_SQ_PSN, false, FX_MTU_BYTES);
	fx_wire_expect(1, ROCEMU_OP_XRC_SEND_MIDDLE, FX_SQ_PSN + 1, false, FX_MTU_BYTES);
	fx_wire_expect(2, ROCEMU_OP_XRC_SEND_LAST, FX_SQ_PSN + 2, true, 10);
	for (i = 0; i < 3; i++)
		expect_xrceth(i, SRQN);
	ck_assert(!fx_poll(&fx.scq, &cqe));
	ack(FX_SQ_PSN + 2, 1);
	fx_expect_cqe(&fx.scq, MLX5_CQE_REQ, counter, 0);
}
END_TEST

/* Each WQE names its own SRQ. */
START_TEST(test_srqn_per_wqe)
{
	post(MLX5_OPCODE_RDMA_WRITE, 8, 1);
	post(MLX5_OPCODE_SEND, 8, 2);
	fx_doorbell();
	ck_assert_uint_eq(fx.nwire, 2);
	fx_wire_expect(0, ROCEMU_OP_XRC_RDMA_WRITE_ONLY, FX_SQ_PSN, true, 8);
	fx_wire_expect(1, ROCEMU_OP_XRC_SEND_ONLY, FX_SQ_PSN + 1, true, 8);
	expect_xrceth(0, 1);
	expect_xrceth(1, 2);
}
END_TEST

/* An RC acknowledge is another transport's: dropped and counted, the WQE still waits. */
START_TEST(test_rc_ack_dropped)
{
	struct mlx5_cqe64 cqe;
	uint64_t dropped = fx.dev->rx_dropped;
	uint16_t counter;

	counter = post(MLX5_OPCODE_SEND, 8, SRQN);
	fx_doorbell();
	fx_rx_ack(FX_SQ_PSN, ack_syndrome(), 1);
	ck_assert(!fx_poll(&fx.scq, &cqe));
	ck_assert_uint_eq(fx.dev->rx_dropped, dropped + 1);
	ack(FX_SQ_PSN, 1);
	fx_expect_cqe(&fx.scq, MLX5_CQE_REQ, counter, 0);
}
END_TEST

/* An initiator has no responder: a request is dropped, nothing answers, the QP stays. */
START_TEST(test_request_to_initiator_dropped)
{
	const struct fx_hdrs h = { .psn = FX_RQ_PSN, .ackreq = true };
	uint64_t dropped = fx.dev->rx_dropped;
	uint8_t data[8] = { 0 };

	fx_rx_build(ROCEMU_OP_XRC_SEND_ONLY, &h, data, sizeof(data));
	ck_assert_uint_eq(fx.nwire, 0);
	ck_assert_uint_eq(fx.dev->rx_dropped, dropped + 1);
	ck_assert_int_eq(fx_qp_state(), IBV_QPS_RTS);
}
END_TEST

/* A READ request carries XRCETH; its XRC READ response fills the local buffer. */
START_TEST(test_read_response)
{
	const struct fx_hdrs h = { .psn = FX_SQ_PSN, .syndrome = ack_syndrome(), .msn = 1 };
	uint8_t data[32];
	uint16_t counter;

	for (unsigned int i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)(i * 7 + 1);
	memset(fx.buf, 0, sizeof(data));
	counter = post(MLX5_OPCODE_RDMA_READ, sizeof(data), SRQN);
	fx_doorbell();
	ck_assert_uint_eq(fx.nwire, 1);
	fx_wire_expect(0, ROCEMU_OP_XRC_RDMA_READ_REQUEST, FX_SQ_PSN, true, 0);
	expect_xrceth(0, SRQN);
	fx_rx_build(ROCEMU_OP_XRC_RDMA_READ_RESPONSE_ONLY, &h, data, sizeof(data));
	fx_expect_cqe(&fx.scq, MLX5_CQE_REQ, counter, 0);
	ck_assert_mem_eq(fx.buf, data, sizeof(data));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("xrc");
	TCase *t = tcase_create("initiator");

	tcase_add_checked_fixture(t, fx_setup_xrc_ini, fx_teardown);
	tcase_add_test(t, test_send_carries_xrceth);
	tcase_add_test(t, test_srqn_per_wqe);
	tcase_add_test(t, test_rc_ack_dropped);
	tcase_add_test(t, test_request_to_initiator_dropped);
	tcase_add_test(t, test_read_response);
	suite_add_tcase(s, t);
	return fx_suite_run(s);
}
