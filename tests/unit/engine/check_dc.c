/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The DC transport's initiator (emulator/dc/dci.c, dc_qp.c) on the fake
 * wire, with a DCI as the fixture's QP and the peer as its DCT: RC's
 * requester and completer send RC's opcodes in DC's class (RD's), every
 * request with the DCT's key in DCETH, the connection's number in RDETH
 * (its first PSN marked "connect") and the DCI in DETH; a WQE for another
 * DCT key waits until what is in flight completed, then opens a new
 * connection; DC acknowledges complete WQEs, an RC one is dropped; with
 * streams, a NAK fails the stream only: its later WQEs are flushed without
 * a packet, the other streams go on, until the stream is reset.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "emulator/dc/dc.h"
#include "emulator/obj/qp.h"
#include "tests/unit/fixture.h"

#define KEY_A UINT64_C(0x0123456789abcdef)
#define KEY_B UINT64_C(0xfedcba9876543210)

static uint8_t ack_syndrome(void)
{
	return rocemu_aeth_syndrome_make(ROCEMU_AETH_ACK, ROCEMU_AETH_CREDITS_INVALID);
}

static uint16_t post(uint8_t opcode, uint32_t len, uint64_t key, uint16_t stream)
{
	const struct ibv_sge sge = { .addr = (uintptr_t)fx.buf, .length = len, .lkey = fx.lkey };
	const struct fx_wr wr = { .opcode = opcode, .flags = MLX5_WQE_CTRL_CQ_UPDATE,
				  .raddr = 0x10000, .rkey = 0x1234, .sge = &sge, .num_sge = 1,
				  .dc_key = key, .dci_stream = stream };

	return fx_post_send(&wr);
}

static void ack(uint8_t syndrome, uint32_t psn, uint32_t msn)
{
	const struct fx_hdrs h = { .psn = psn, .syndrome = syndrome, .msn = msn };

	fx_rx_build(ROCEMU_OP_DC_ACKNOWLEDGE, &h, NULL, 0);
}

/* Packet i carries key, the connection number (returned) and the connect mark as said. */
static uint32_t expect_dc(unsigned int i, uint64_t key, bool connect)
{
	uint8_t *bth = (uint8_t *)fx_wire_bth(i);
	const uint8_t *rdeth = rocemu_pkt_rdeth(bth);

	ck_assert_ptr_nonnull(rdeth);
	ck_assert_uint_eq(rocemu_dceth_key(rocemu_pkt_dceth(bth)), key);
	ck_assert_int_eq(rocemu_rdeth_dc_connect(rdeth), connect);
	ck_assert_uint_eq(rocemu_deth_src_qp(rocemu_pkt_deth(bth)), fx.qp.qpn);
	return rocemu_rdeth_eecn(rdeth);
}

/* A SEND of three packets: key, one connection, "connect" on the first; a DC ACK completes it. */
START_TEST(test_send_headers)
{
	uint16_t counter = post(MLX5_OPCODE_SEND, 2 * FX_MTU_BYTES + 10, KEY_A, 0);
	uint32_t conn;

	fx_doorbell();
	ck_assert_uint_eq(fx.nwire, 3);
	fx_wire_expect(0, ROCEMU_OP_DC_SEND_FIRST, FX_SQ_PSN, false, FX_MTU_BYTES);
	fx_wire_expect(1, ROCEMU_OP_DC_SEND_MIDDLE, FX_SQ_PSN + 1, false, FX_MTU_BYTES);
	fx_wire_expect(2, ROCEMU_OP_DC_SEND_LAST, FX_SQ_PSN + 2, true, 10);
	conn = expect_dc(0, KEY_A, true);
	ck_assert_uint_eq(expect_dc(1, KEY_A, false), conn);
	ck_assert_uint_eq(expect_dc(2, KEY_A, false), conn);
	ack(ack_syndrome(), FX_SQ_PSN + 2, 1);
	fx_expect_cqe(&fx.scq, MLX5_CQE_REQ, counter, 0);
}
END_TEST

/* Another key waits for the first connection's ACK, then connects anew; PSNs go on. */
START_TEST(test_new_connection_waits)
{
	uint16_t a = post(MLX5_OPCODE_RDMA_WRITE, 8, KEY_A, 0);
	uint16_t b = post(MLX5_OPCODE_RDMA_WRITE, 8, KEY_B, 0);
	uint32_t first;

	fx_doorbell();
	ck_assert_uint_eq(fx.nwire, 1);
	fx_wire_expect(0, ROCEMU_OP_DC_RDMA_WRITE_ONLY, FX_SQ_PSN, true, 8);
	first = expect_dc(0, KEY_A, true);
	ack(ack_syndrome(), FX_SQ_PSN, 1);
	fx_expect_cqe(&fx.scq, MLX5_CQE_REQ, a, 0);
	ck_assert_uint_eq(fx.nwire, 2);
	fx_wire_expect(1, ROCEMU_OP_DC_RDMA_WRITE_ONLY, FX_SQ_PSN + 1, true, 8);
	ck_assert_uint_ne(expect_dc(1, KEY_B, true), first);
	ack(ack_syndrome(), FX_SQ_PSN + 1, 1);
	fx_expect_cqe(&fx.scq, MLX5_CQE_REQ, b, 0);
}
END_TEST

/* A first packet resent (go-back-N) keeps its "connect" mark: the DCT learns where to start. */
START_TEST(test_resend_keeps_connect)
{
	uint32_t conn;

	post(MLX5_OPCODE_SEND, 2 * FX_MTU_BYTES, KEY_A, 0);
	fx_doorbell();
	conn = expect_dc(0, KEY_A, true);
	ack(rocemu_aeth_syndrome_make(ROCEMU_AETH_NAK, ROCEMU_NAK_PSN_SEQ_ERROR), FX_SQ_PSN, 0);
	ck_assert_uint_eq(fx.nwire, 4);
	fx_wire_expect(2, ROCEMU_OP_DC_SEND_FIRST, FX_SQ_PSN, false, FX_MTU_BYTES);
	ck_assert_uint_eq(expect_dc(2, KEY_A, true), conn);
	expect_dc(3, KEY_A, false);
}
END_TEST

/* An RC acknowledge is another transport's: dropped and counted, the WQE still waits. */
START_TEST(test_rc_ack_dropped)
{
	struct mlx5_cqe64 cqe;
	uint64_t dropped = fx.dev->rx_dropped;
	uint16_t counter = post(MLX5_OPCODE_SEND, 8, KEY_A, 0);

	fx_doorbell();
	fx_rx_ack(FX_SQ_PSN, ack_syndrome(), 1);
	ck_assert(!fx_poll(&fx.scq, &cqe));
	ck_assert_uint_eq(fx.dev->rx_dropped, dropped + 1);
	ack(ack_syndrome(), FX_SQ_PSN, 1);
	fx_expect_cqe(&fx.scq, MLX5_CQE_REQ, counter, 0);
}
END_TEST

/* Without streams a NAK fails the DCI as it fails an RC QP. */
START_TEST(test_nak_fails_dci)
{
	uint16_t counter = post(MLX5_OPCODE_RDMA_WRITE, 8, KEY_A, 1);

	fx_doorbell();
	ack(rocemu_aeth_syndrome_make(ROCEMU_AETH_NAK, ROCEMU_NAK_REMOTE_ACCESS_ERROR), FX_SQ_PSN,
	    1);
	fx_expect_cqe(&fx.scq, MLX5_CQE_REQ_ERR, counter, MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR);
	ck_assert_int_eq(fx_qp_state(), IBV_QPS_ERR);
}
END_TEST

/* Stream 1's NAK: its next WQE flushes with no packet, stream 2 connects and goes; reset. */
START_TEST(test_stream_error_isolated)
{
	uint16_t bad = post(MLX5_OPCODE_RDMA_WRITE, 8, KEY_A, 1);
	uint16_t flushed = post(MLX5_OPCODE_RDMA_WRITE, 8, KEY_A, 1);
	uint16_t other = post(MLX5_OPCODE_RDMA_WRITE, 8, KEY_A, 2);
	struct rocemu_qp *qp = rocemu_qp_lookup(fx.client, fx.qp.qpn);
	uint16_t again;

	fx_doorbell();
	ck_assert_uint_eq(fx.nwire, 2);	/* stream 1's two; stream 2 waits */
	ack(rocemu_aeth_syndrome_make(ROCEMU_AETH_NAK, ROCEMU_NAK_REMOTE_ACCESS_ERROR), FX_SQ_PSN,
	    1);
	fx_expect_cqe(&fx.scq, MLX5_CQE_REQ_ERR, bad, MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR);
	fx_expect_cqe(&fx.scq, MLX5_CQE_REQ_ERR, flushed, MLX5_CQE_SYNDROME_WR_FLUSH_ERR);
	fx_turn();
	ck_assert_int_eq(fx_qp_state(), IBV_QPS_RTS);
	ck_assert_uint_eq(fx.nwire, 3);
	/* The next connection starts past every PSN the failed one sent. */
	fx_wire_expect(2, ROCEMU_OP_DC_RDMA_WRITE_ONLY, FX_SQ_PSN + 2, true, 8);
	expect_dc(2, KEY_A, true);
	ack(ack_syndrome(), FX_SQ_PSN + 2, 1);
	fx_expect_cqe(&fx.scq, MLX5_CQE_REQ, other, 0);
	/* Stream 1 flushes until it is reset, then goes again. */
	again = post(MLX5_OPCODE_RDMA_WRITE, 8, KEY_A, 1);
	fx_doorbell();
	fx_expect_cqe(&fx.scq, MLX5_CQE_REQ_ERR, again, MLX5_CQE_SYNDROME_WR_FLUSH_ERR);
	ck_assert_uint_eq(fx.nwire, 3);
	ck_assert_int_eq(rocemu_dci_stream_reset(qp, 1 << FX_DCI_LOG_STREAMS), -EINVAL);
	ck_assert_int_eq(rocemu_dci_stream_reset(qp, 1), 0);
	again = post(MLX5_OPCODE_RDMA_WRITE, 8, KEY_A, 1);
	fx_doorbell();
	ck_assert_uint_eq(fx.nwire, 4);
	ack(ack_syndrome(), FX_SQ_PSN + 3, 1);
	fx_expect_cqe(&fx.scq, MLX5_CQE_REQ, again, 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("dc");
	TCase *t = tcase_create("dci");
	TCase *streams = tcase_create("dci streams");

	tcase_add_checked_fixture(t, fx_setup_dci, fx_teardown);
	tcase_add_test(t, test_send_headers);
	tcase_add_test(t, test_new_connection_waits);
	tcase_add_test(t, test_resend_keeps_connect);
	tcase_add_test(t, test_rc_ack_dropped);
	tcase_add_test(t, test_nak_fails_dci);
	suite_add_tcase(s, t);
	tcase_add_checked_fixture(streams, fx_setup_dci_streams, fx_teardown);
	tcase_add_test(streams, test_stream_error_isolated);
	suite_add_tcase(s, streams);
	return fx_suite_run(s);
}
