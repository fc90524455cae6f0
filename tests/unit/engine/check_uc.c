/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The UC transport (emulator/uc/uc_req.c, uc_resp.c) on the fake wire.
 * Requester: UC opcodes, no AckReq, a WQE complete once its last packet
 * left, long messages sent over several turns of the loop, READ failed
 * locally. Responder: a PSN gap drops the rest of the message and the next
 * one starts clean at any PSN in the receive WQE the lost one had taken; a
 * FIRST cutting into a message abandons it, and a plain WRITE that does so
 * leaves the receive WQE for the next SEND; no receive WQE or a bad R_Key
 * drops the message with nothing sent back; a SEND longer than its receive
 * WQE fails the QP.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "emulator/uc/uc.h"
#include "tests/unit/fixture.h"

static uint8_t payload[4 * FX_MTU_BYTES];

static void fill(uint8_t *p, size_t len, uint8_t seed)
{
	for (size_t i = 0; i < len; i++)
		p[i] = (uint8_t)(seed + i * 11);
}

/* ---------------- requester ---------------- */

static uint16_t post_sgl(uint8_t opcode, uint32_t offset, uint32_t len, uint64_t raddr)
{
	const struct ibv_sge sge = { .addr = (uintptr_t)(fx.buf + offset), .length = len,
				     .lkey = fx.lkey };
	const struct fx_wr wr = { .opcode = opcode, .flags = MLX5_WQE_CTRL_CQ_UPDATE,
				  .raddr = raddr, .rkey = 0x1234, .imm = htobe32(0xabcd),
				  .sge = &sge, .num_sge = 1 };

	return fx_post_send(&wr);
}

/* Nothing answers a UC packet: the CQE comes as the last packet leaves. */
START_TEST(test_send_completes_when_sent)
{
	struct mlx5_cqe64 cqe;

	fill(fx.buf, 2 * FX_MTU_BYTES + 10, 1);
	post_sgl(MLX5_OPCODE_SEND, 0, 2 * FX_MTU_BYTES + 10, 0);
	fx_doorbell();
	ck_assert_uint_eq(fx.nwire, 3);
	fx_wire_expect(0, ROCEMU_OP_UC_SEND_FIRST, FX_SQ_PSN, false, FX_MTU_BYTES);
	fx_wire_expect(1, ROCEMU_OP_UC_SEND_MIDDLE, FX_SQ_PSN + 1, false, FX_MTU_BYTES);
	fx_wire_expect(2, ROCEMU_OP_UC_SEND_LAST, FX_SQ_PSN + 2, false, 10);
	fx_expect_cqe(&fx.scq, MLX5_CQE_REQ, 0, 0);
	ck_assert(!fx_poll(&fx.scq, &cqe));
}
END_TEST

START_TEST(test_write_imm_opcodes)
{
	const uint8_t *bth;

	post_sgl(MLX5_OPCODE_RDMA_WRITE_IMM, 0, FX_MTU_BYTES + 1, 0x7000);
	fx_doorbell();
	ck_assert_uint_eq(fx.nwire, 2);
	bth = fx_wire_expect(0, ROCEMU_OP_UC_RDMA_WRITE_FIRST, FX_SQ_PSN, false, FX_MTU_BYTES);
	ck_assert_uint_eq(rocemu_reth_va(rocemu_pkt_reth((uint8_t *)bth)), 0x7000);
	ck_assert_uint_eq(rocemu_reth_dma_len(rocemu_pkt_reth((uint8_t *)bth)), FX_MTU_BYTES + 1);
	bth = fx_wire_expect(1, ROCEMU_OP_UC_RDMA_WRITE_LAST_WITH_IMMEDIATE, FX_SQ_PSN + 1, false, 1);
	ck_assert_mem_eq(rocemu_pkt_immdt((uint8_t *)bth), "\0\0\xab\xcd", 4);
	fx_expect_cqe(&fx.scq, MLX5_CQE_REQ, 0, 0);
}
END_TEST

/* More packets than one burst: the rest leave at the loop's next turns, then the CQE. */
START_TEST(test_long_message_over_turns)
{
	const uint32_t npkts = ROCEMU_UC_BURST + 10;

	post_sgl(MLX5_OPCODE_SEND, 0, npkts * FX_MTU_BYTES, 0);
	fx_doorbell();
	fx_run(10 * 1000 * 1000);
	ck_assert_uint_eq(fx.nwire, npkts);
	for (uint32_t i = 1; i + 1 < npkts; i++)
		fx_wire_expect(i, ROCEMU_OP_UC_SEND_MIDDLE, FX_SQ_PSN + i, false, FX_MTU_BYTES);
	fx_wire_expect(npkts - 1, ROCEMU_OP_UC_SEND_LAST, FX_SQ_PSN + npkts - 1, false,
		       FX_MTU_BYTES);
	fx_expect_cqe(&fx.scq, MLX5_CQE_REQ, 0, 0);
}
END_TEST

/* UC carries no READ: the WQE fails with a local QP operation error, nothing is sent. */
START_TEST(test_read_fails_locally)
{
	post_sgl(MLX5_OPCODE_RDMA_READ, 0, 64, 0x7000);
	fx_doorbell();
	ck_assert_uint_eq(fx.nwire, 0);
	fx_expect_cqe(&fx.scq, MLX5_CQE_REQ_ERR, 0, MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR);
	fx_expect_qp_error(IBV_EVENT_QP_FATAL);
}
END_TEST

/* ---------------- responder ---------------- */

static void rx_uc(uint8_t opcode, uint32_t psn, uint32_t rkey, const void *data, uint32_t len,
		  uint32_t dma_len)
{
	const struct fx_hdrs h = { .psn = psn, .va = (uintptr_t)(fx.buf + 8192), .rkey = rkey,
				   .dma_len = dma_len, .imm = 0x11223344 };

	fx_rx_build(opcode, &h, data, len);
}

static void post_recv(uint32_t off, uint32_t len)
{
	const struct ibv_sge sge = { .addr = (uintptr_t)(fx.buf + off), .length = len,
				     .lkey = fx.lkey };

	fx_post_recv(&sge, 1);
	fx_doorbell();
}

static void expect_recv(uint8_t op, uint16_t counter, uint32_t len)
{
	struct mlx5_cqe64 cqe = fx_expect_cqe(&fx.rcq, op, counter, 0);

	ck_assert_uint_eq(be32toh(cqe.byte_cnt), len);
}

static void expect_quiet(void)
{
	struct mlx5_cqe64 cqe;

	ck_assert(!fx_poll(&fx.rcq, &cqe));
	ck_assert_uint_eq(fx.nwire, 0);
	ck_assert_int_eq(fx_qp_state(), IBV_QPS_RTS);
}

/*
 * A PSN gap drops the rest of the message, silently; the next FIRST starts
 * one at its own PSN, in the receive WQE the lost message had taken.
 */
START_TEST(test_gap_loses_message_wqe_reused)
{
	fill(payload, sizeof(payload), 3);
	post_recv(0, 4096);
	post_recv(4096, 4096);
	rx_uc(ROCEMU_OP_UC_SEND_FIRST, FX_RQ_PSN, 0, payload + 100, FX_MTU_BYTES, 0);
	rx_uc(ROCEMU_OP_UC_SEND_LAST, FX_RQ_PSN + 2, 0, payload, 10, 0);
	rx_uc(ROCEMU_OP_UC_SEND_MIDDLE, FX_RQ_PSN + 3, 0, payload, FX_MTU_BYTES, 0);
	expect_quiet();
	ck_assert_uint_eq(fx.dev->counters.rx_uc_dropped, 2);
	rx_uc(ROCEMU_OP_UC_SEND_FIRST, FX_RQ_PSN + 10, 0, payload, FX_MTU_BYTES, 0);
	rx_uc(ROCEMU_OP_UC_SEND_LAST, FX_RQ_PSN + 11, 0, payload + FX_MTU_BYTES, 100, 0);
	expect_recv(MLX5_CQE_RESP_SEND, 0, FX_MTU_BYTES + 100);
	ck_assert_mem_eq(fx.buf, payload, FX_MTU_BYTES + 100);
	rx_uc(ROCEMU_OP_UC_SEND_ONLY, FX_RQ_PSN + 12, 0, payload, 7, 0);
	expect_recv(MLX5_CQE_RESP_SEND, 1, 7);
	ck_assert_uint_eq(fx.nwire, 0);
}
END_TEST

/* A FIRST or ONLY in the middle of a message abandons it (IBTA class D1) and is taken. */
START_TEST(test_only_cuts_into_message)
{
	fill(payload, sizeof(payload), 4);
	post_recv(0, 4096);
	rx_uc(ROCEMU_OP_UC_SEND_FIRST, FX_RQ_PSN, 0, payload + 1, FX_MTU_BYTES, 0);
	rx_uc(ROCEMU_OP_UC_SEND_ONLY_WITH_IMMEDIATE, FX_RQ_PSN + 1, 0, payload, 50, 0);
	expect_recv(MLX5_CQE_RESP_SEND_IMM, 0, 50);
	ck_assert_mem_eq(fx.buf, payload, 50);
	ck_assert_uint_eq(fx.nwire, 0);
}
END_TEST

/* A plain WRITE cutting into a SEND leaves the receive WQE for the next SEND. */
START_TEST(test_write_leaves_wqe_of_lost_send)
{
	fill(payload, sizeof(payload), 7);
	post_recv(0, 4096);
	rx_uc(ROCEMU_OP_UC_SEND_FIRST, FX_RQ_PSN, 0, payload, FX_MTU_BYTES, 0);
	rx_uc(ROCEMU_OP_UC_RDMA_WRITE_ONLY, FX_RQ_PSN + 1, fx.rkey, payload, 30, 30);
	expect_quiet();
	ck_assert_mem_eq(fx.buf + 8192, payload, 30);
	rx_uc(ROCEMU_OP_UC_SEND_ONLY, FX_RQ_PSN + 2, 0, payload + 1, 12, 0);
	expect_recv(MLX5_CQE_RESP_SEND, 0, 12);
	ck_assert_mem_eq(fx.buf, payload + 1, 12);
}
END_TEST

/* No receive WQE: no RNR NAK on UC, the message is dropped and the next one taken. */
START_TEST(test_no_receive_dropped)
{
	fill(payload, sizeof(payload), 5);
	rx_uc(ROCEMU_OP_UC_SEND_FIRST, FX_RQ_PSN, 0, payload, FX_MTU_BYTES, 0);
	rx_uc(ROCEMU_OP_UC_SEND_LAST, FX_RQ_PSN + 1, 0, payload, 1, 0);
	expect_quiet();
	ck_assert_uint_eq(fx.dev->counters.rx_uc_dropped, 2);
	post_recv(0, 4096);
	rx_uc(ROCEMU_OP_UC_SEND_ONLY, FX_RQ_PSN + 2, 0, payload, 9, 0);
	expect_recv(MLX5_CQE_RESP_SEND, 0, 9);
}
END_TEST

/* A bad R_Key drops the WRITE whole, with nothing answered and the QP unharmed. */
START_TEST(test_write_bad_rkey_dropped)
{
	fill(payload, sizeof(payload), 6);
	memset(fx.buf + 8192, 0x5a, 2 * FX_MTU_BYTES);
	rx_uc(ROCEMU_OP_UC_RDMA_WRITE_FIRST, FX_RQ_PSN, fx.rkey + 1, payload, FX_MTU_BYTES,
	      FX_MTU_BYTES + 5);
	rx_uc(ROCEMU_OP_UC_RDMA_WRITE_LAST, FX_RQ_PSN + 1, 0, payload, 5, 0);
	expect_quiet();
	for (unsigned int i = 0; i < 2 * FX_MTU_BYTES; i++)
		ck_assert_uint_eq(fx.buf[8192 + i], 0x5a);
	post_recv(0, 64);
	rx_uc(ROCEMU_OP_UC_RDMA_WRITE_ONLY_WITH_IMMEDIATE, FX_RQ_PSN + 2, fx.rkey, payload, 20, 20);
	expect_recv(MLX5_CQE_RESP_WR_IMM, 0, 20);
	ck_assert_mem_eq(fx.buf + 8192, payload, 20);
}
END_TEST

/* A fault of this side's own: the receive WQE completes in error and the QP fails. */
START_TEST(test_send_too_long_fails)
{
	post_recv(0, 100);
	rx_uc(ROCEMU_OP_UC_SEND_ONLY, FX_RQ_PSN, 0, payload, 200, 0);
	fx_expect_cqe(&fx.rcq, MLX5_CQE_RESP_ERR, 0, MLX5_CQE_SYNDROME_LOCAL_LENGTH_ERR);
	ck_assert_uint_eq(fx.nwire, 0);
	fx_expect_qp_error(IBV_EVENT_QP_REQ_ERR);
}
END_TEST

static Suite *uc_suite(void)
{
	Suite *s = suite_create("uc");
	TCase *req = tcase_create("requester"), *resp = tcase_create("responder");

	tcase_add_checked_fixture(req, fx_setup_uc, fx_teardown);
	tcase_add_test(req, test_send_completes_when_sent);
	tcase_add_test(req, test_write_imm_opcodes);
	tcase_add_test(req, test_long_message_over_turns);
	tcase_add_test(req, test_read_fails_locally);
	suite_add_tcase(s, req);
	tcase_add_checked_fixture(resp, fx_setup_uc, fx_teardown);
	tcase_add_test(resp, test_gap_loses_message_wqe_reused);
	tcase_add_test(resp, test_only_cuts_into_message);
	tcase_add_test(resp, test_write_leaves_wqe_of_lost_send);
	tcase_add_test(resp, test_no_receive_dropped);
	tcase_add_test(resp, test_write_bad_rkey_dropped);
	tcase_add_test(resp, test_send_too_long_fails);
	suite_add_tcase(s, resp);
	return s;
}

int main(void)
{
	return fx_suite_run(uc_suite());
}
