/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The RC responder (emulator/rc/rc_resp.c) on the fake wire: the peer's
 * requests in, memory, receive CQEs and acknowledges out. WRITE placement
 * and ACK, a PSN gap NAK'd once, READ responses of path-MTU size, RNR NAK
 * without a receive, SEND into a receive WQE, duplicates answered and not
 * executed again, atomics with replay, and an R_Key violation; duplicate
 * READs only through a new READ's checks, and a QP of a gone process silent.
 * A long READ leaves one burst per turn of the loop, the ACKs of requests
 * behind it after it, a duplicate restarts it from its PSN; READs past
 * max_dest_rd_atomic and duplicate atomics out of the replay cache are
 * dropped and counted. WRITEs of one turn share one ACK; one failing among
 * them NAKs its own PSN, the earlier ones landed; a READ behind a WRITE of
 * the same turn reads its data; a hold dropped at a reset leaves nothing
 * behind for the next.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "emulator/rc/rc.h"
#include "tests/unit/fixture.h"

static uint8_t payload[4 * FX_MTU_BYTES];

static void fill(uint8_t *p, size_t len, uint8_t seed)
{
	for (size_t i = 0; i < len; i++)
		p[i] = (uint8_t)(seed + i * 13);
}

/* One request packet from the peer at psn; RETH/AtomicETH towards fx.buf + off. */
static void rx_req(uint8_t opcode, uint32_t psn, bool ackreq, uint32_t off, uint32_t dma_len,
		   const void *data, uint32_t len)
{
	const struct fx_hdrs h = { .psn = psn, .ackreq = ackreq,
				   .va = (uintptr_t)(fx.buf + off), .rkey = fx.rkey,
				   .dma_len = dma_len, .imm = 0x11223344 };

	fx_rx_build(opcode, &h, data, len);
}

/* Packet i is an acknowledge for psn of AETH type and value with msn. */
static void expect_ack(unsigned int i, uint32_t psn, enum rocemu_aeth_type type, uint8_t value,
		       uint32_t msn)
{
	const uint8_t *bth = fx_wire_expect(i, ROCEMU_OP_RC_ACKNOWLEDGE, psn, false, 0);
	uint8_t *aeth = rocemu_pkt_aeth((uint8_t *)bth);

	ck_assert_uint_eq(rocemu_aeth_syndrome_type(rocemu_aeth_syndrome(aeth)), type);
	if (type != ROCEMU_AETH_ACK)
		ck_assert_uint_eq(rocemu_aeth_syndrome_value(rocemu_aeth_syndrome(aeth)), value);
	ck_assert_uint_eq(rocemu_aeth_msn(aeth), msn);
}

/* The request at FX_RQ_PSN was NAK'd with code and failed the QP with event type. */
static void expect_nak_error(uint8_t code, enum ibv_event_type type)
{
	ck_assert_uint_eq(fx.nwire, 1);
	expect_ack(0, FX_RQ_PSN, ROCEMU_AETH_NAK, code, 0);
	fx_expect_qp_error(type);
}

static void post_recv(uint32_t off, uint32_t len)
{
	const struct ibv_sge sge = { .addr = (uintptr_t)(fx.buf + off), .length = len,
				     .lkey = fx.lkey };

	fx_post_recv(&sge, 1);
	fx_doorbell();
}

START_TEST(test_write_placed_and_acked)
{
	struct mlx5_cqe64 cqe;

	fill(payload, 100, 1);
	rx_req(ROCEMU_OP_RC_RDMA_WRITE_ONLY, FX_RQ_PSN, true, 4096, 100, payload, 100);
	ck_assert_mem_eq(fx.buf + 4096, payload, 100);
	ck_assert_uint_eq(fx.nwire, 1);
	expect_ack(0, FX_RQ_PSN, ROCEMU_AETH_ACK, 0, 1);
	ck_assert(!fx_poll(&fx.rcq, &cqe));	/* a WRITE takes no receive */
}
END_TEST

START_TEST(test_write_two_packets_one_ack)
{
	fill(payload, 1500, 2);
	rx_req(ROCEMU_OP_RC_RDMA_WRITE_FIRST, FX_RQ_PSN, false, 0, 1500, payload, FX_MTU_BYTES);
	ck_assert_uint_eq(fx.nwire, 0);
	rx_req(ROCEMU_OP_RC_RDMA_WRITE_LAST, FX_RQ_PSN + 1, true, 0, 0, payload + FX_MTU_BYTES,
	       1500 - FX_MTU_BYTES);
	ck_assert_mem_eq(fx.buf, payload, 1500);
	ck_assert_uint_eq(fx.nwire, 1);
	expect_ack(0, FX_RQ_PSN + 1, ROCEMU_AETH_ACK, 0, 1);
}
END_TEST

/* A gap is NAK'd once (IBTA 9.7.5.1.1); the next gap after the expected PSN came, again. */
START_TEST(test_psn_gap_nak_once)
{
	rx_req(ROCEMU_OP_RC_RDMA_WRITE_ONLY, FX_RQ_PSN + 2, true, 0, 8, payload, 8);
	rx_req(ROCEMU_OP_RC_RDMA_WRITE_ONLY, FX_RQ_PSN + 3, true, 0, 8, payload, 8);
	rx_req(ROCEMU_OP_RC_RDMA_WRITE_ONLY, FX_RQ_PSN + 2, true, 0, 8, payload, 8);
	ck_assert_uint_eq(fx.nwire, 1);
	expect_ack(0, FX_RQ_PSN, ROCEMU_AETH_NAK, ROCEMU_NAK_PSN_SEQ_ERROR, 0);
	ck_assert_uint_eq(fx.dev->counters.out_of_sequence, 3);
	rx_req(ROCEMU_OP_RC_RDMA_WRITE_ONLY, FX_RQ_PSN, true, 0, 8, payload, 8);
	expect_ack(1, FX_RQ_PSN, ROCEMU_AETH_ACK, 0, 1);
	rx_req(ROCEMU_OP_RC_RDMA_WRITE_ONLY, FX_RQ_PSN + 5, true, 0, 8, payload, 8);
	ck_assert_uint_eq(fx.nwire, 3);
	expect_ack(2, FX_RQ_PSN + 1, ROCEMU_AETH_NAK, ROCEMU_NAK_PSN_SEQ_ERROR, 1);
}
END_TEST

START_TEST(test_read_responses_of_pmtu)
{
	const uint32_t len = 2 * FX_MTU_BYTES + 300;
	const uint8_t *bth;

	fill(fx.buf + 8192, len, 3);
	rx_req(ROCEMU_OP_RC_RDMA_READ_REQUEST, FX_RQ_PSN, true, 8192, len, NULL, 0);
	ck_assert_uint_eq(fx.nwire, 3);
	bth = fx_wire_expect(0, ROCEMU_OP_RC_RDMA_READ_RESPONSE_FIRST, FX_RQ_PSN, false,
			     FX_MTU_BYTES);
	ck_assert_uint_eq(rocemu_aeth_msn(rocemu_pkt_aeth((uint8_t *)bth)), 1);
	bth = fx_wire_expect(1, ROCEMU_OP_RC_RDMA_READ_RESPONSE_MIDDLE, FX_RQ_PSN + 1, false,
			     FX_MTU_BYTES);
	ck_assert_ptr_null(rocemu_pkt_aeth((uint8_t *)bth));
	bth = fx_wire_expect(2, ROCEMU_OP_RC_RDMA_READ_RESPONSE_LAST, FX_RQ_PSN + 2, false, 300);
	ck_assert_uint_eq(rocemu_aeth_msn(rocemu_pkt_aeth((uint8_t *)bth)), 1);
	for (unsigned int i = 0; i < 3; i++) {
		bth = fx_wire_bth(i);
		ck_assert_mem_eq(bth + rocemu_pkt_info(bth)->length,
				 fx.buf + 8192 + i * FX_MTU_BYTES, fx_wire_paylen(i));
	}
	/* The READ took three PSNs: the next request is at +3. */
	rx_req(ROCEMU_OP_RC_RDMA_WRITE_ONLY, FX_RQ_PSN + 3, true, 0, 8, payload, 8);
	expect_ack(3, FX_RQ_PSN + 3, ROCEMU_AETH_ACK, 0, 2);
}
END_TEST

START_TEST(test_rnr_nak_without_receive)
{
	struct mlx5_cqe64 cqe;

	fill(payload, 40, 4);
	rx_req(ROCEMU_OP_RC_SEND_ONLY, FX_RQ_PSN, true, 0, 0, payload, 40);
	ck_assert_uint_eq(fx.nwire, 1);
	expect_ack(0, FX_RQ_PSN, ROCEMU_AETH_RNR_NAK, FX_MIN_RNR_TIMER, 0);
	ck_assert(!fx_poll(&fx.rcq, &cqe));
	/* Once a receive is posted the resent SEND lands. */
	post_recv(1024, 64);
	rx_req(ROCEMU_OP_RC_SEND_ONLY, FX_RQ_PSN, true, 0, 0, payload, 40);
	expect_ack(1, FX_RQ_PSN, ROCEMU_AETH_ACK, 0, 1);
	cqe = fx_expect_cqe(&fx.rcq, MLX5_CQE_RESP_SEND, 0, 0);
	ck_assert_uint_eq(be32toh(cqe.byte_cnt), 40);
	ck_assert_mem_eq(fx.buf + 1024, payload, 40);
}
END_TEST

START_TEST(test_send_with_imm_into_receive)
{
	const struct ibv_sge sge[2] = {
		{ .addr = (uintptr_t)(fx.buf + 100), .length = 1000, .lkey = fx.lkey },
		{ .addr = (uintptr_t)(fx.buf + 20000), .length = 1000, .lkey = fx.lkey },
	};
	struct mlx5_cqe64 cqe;

	fill(payload, FX_MTU_BYTES + 10, 5);
	fx_post_recv(sge, 2);
	fx_doorbell();
	rx_req(ROCEMU_OP_RC_SEND_FIRST, FX_RQ_PSN, false, 0, 0, payload, FX_MTU_BYTES);
	rx_req(ROCEMU_OP_RC_SEND_LAST_WITH_IMMEDIATE, FX_RQ_PSN + 1, true, 0, 0,
	       payload + FX_MTU_BYTES, 10);
	cqe = fx_expect_cqe(&fx.rcq, MLX5_CQE_RESP_SEND_IMM, 0, 0);
	ck_assert_uint_eq(be32toh(cqe.byte_cnt), FX_MTU_BYTES + 10);
	ck_assert_uint_eq(be32toh(cqe.imm_inval_pkey), 0x11223344);
	ck_assert_uint_eq(be32toh(cqe.flags_rqpn) & 0xffffff, FX_PEER_QPN);
	ck_assert_uint_eq(be32toh(cqe.sop_drop_qpn) & 0xffffff, fx.qp.qpn);
	ck_assert_mem_eq(fx.buf + 100, payload, 1000);
	ck_assert_mem_eq(fx.buf + 20000, payload + 1000, FX_MTU_BYTES + 10 - 1000);
	ck_assert_uint_eq(fx.nwire, 1);
	expect_ack(0, FX_RQ_PSN + 1, ROCEMU_AETH_ACK, 0, 1);
}
END_TEST

/* A duplicate WRITE is acknowledged again and not placed again. */
START_TEST(test_duplicate_write_acked_not_placed)
{
	fill(payload, 64, 6);
	rx_req(ROCEMU_OP_RC_RDMA_WRITE_ONLY, FX_RQ_PSN, true, 0, 64, payload, 64);
	memset(fx.buf, 0, 64);
	rx_req(ROCEMU_OP_RC_RDMA_WRITE_ONLY, FX_RQ_PSN, true, 0, 64, payload, 64);
	ck_assert_uint_eq(fx.nwire, 2);
	expect_ack(1, FX_RQ_PSN, ROCEMU_AETH_ACK, 0, 1);
	ck_assert_uint_eq(fx.dev->counters.duplicate_request, 1);
	for (int i = 0; i < 64; i++)
		ck_assert_uint_eq(fx.buf[i], 0);
}
END_TEST

/* Fetch-and-add runs once; its duplicate is answered from the replay cache (IBTA C9-140). */
START_TEST(test_atomic_executed_once)
{
	const struct fx_hdrs h = { .psn = FX_RQ_PSN, .va = (uintptr_t)(fx.buf + 64),
				   .rkey = fx.rkey, .swap_add = 5 };
	uint64_t v = 100;
	const uint8_t *bth;

	memcpy(fx.buf + 64, &v, sizeof(v));
	fx_rx_build(ROCEMU_OP_RC_FETCH_ADD, &h, NULL, 0);
	fx_rx_build(ROCEMU_OP_RC_FETCH_ADD, &h, NULL, 0);
	memcpy(&v, fx.buf + 64, sizeof(v));
	ck_assert_uint_eq(v, 105);
	ck_assert_uint_eq(fx.nwire, 2);
	for (unsigned int i = 0; i < 2; i++) {
		bth = fx_wire_expect(i, ROCEMU_OP_RC_ATOMIC_ACKNOWLEDGE, FX_RQ_PSN, false, 0);
		ck_assert_uint_eq(rocemu_atmack_orig(rocemu_pkt_atmack((uint8_t *)bth)), 100);
	}
}
END_TEST

/* An R_Key outside its MR: NAK remote access, the QP goes to ERR with QP_ACCESS_ERR. */
START_TEST(test_write_out_of_bounds_naks)
{
	rx_req(ROCEMU_OP_RC_RDMA_WRITE_ONLY, FX_RQ_PSN, true, FX_BUF_BYTES - 4, 8, payload, 8);
	expect_nak_error(ROCEMU_NAK_REMOTE_ACCESS_ERROR, IBV_EVENT_QP_ACCESS_ERR);
}
END_TEST

/* A SEND longer than its receive: local length error CQE, NAK invalid request (rxe too). */
START_TEST(test_send_longer_than_receive)
{
	post_recv(0, 16);
	rx_req(ROCEMU_OP_RC_SEND_ONLY, FX_RQ_PSN, true, 0, 0, payload, 17);
	fx_expect_cqe(&fx.rcq, MLX5_CQE_RESP_ERR, 0, MLX5_CQE_SYNDROME_LOCAL_LENGTH_ERR);
	expect_nak_error(ROCEMU_NAK_INVALID_REQUEST, IBV_EVENT_QP_REQ_ERR);
}
END_TEST

/* A middle packet with no message begun breaks the opcode sequence (IBTA 9.7.5.1.2). */
START_TEST(test_middle_without_first)
{
	post_recv(0, 4096);
	rx_req(ROCEMU_OP_RC_SEND_MIDDLE, FX_RQ_PSN, false, 0, 0, payload, FX_MTU_BYTES);
	expect_nak_error(ROCEMU_NAK_INVALID_REQUEST, IBV_EVENT_QP_REQ_ERR);
}
END_TEST

/* A WRITE whose packets carry fewer bytes than its RETH said. */
START_TEST(test_write_shorter_than_reth)
{
	rx_req(ROCEMU_OP_RC_RDMA_WRITE_ONLY, FX_RQ_PSN, true, 0, 100, payload, 99);
	expect_nak_error(ROCEMU_NAK_INVALID_REQUEST, IBV_EVENT_QP_REQ_ERR);
}
END_TEST

/* A duplicate READ on a QP without REMOTE_READ is dropped: no memory goes out, the QP lives. */
START_TEST(test_duplicate_read_needs_remote_read)
{
	struct ibv_qp_attr attr = { .qp_access_flags = IBV_ACCESS_REMOTE_WRITE };

	rx_req(ROCEMU_OP_RC_RDMA_WRITE_ONLY, FX_RQ_PSN, true, 0, 8, payload, 8);
	ck_assert_int_eq(fx_qp_modify(&attr, IBV_QP_ACCESS_FLAGS), 0);
	fx_wire_clear();
	rx_req(ROCEMU_OP_RC_RDMA_READ_REQUEST, FX_RQ_PSN, true, 0, 64, NULL, 0);
	ck_assert_uint_eq(fx.nwire, 0);
	ck_assert_uint_eq(fx.dev->counters.rx_bad_duplicates, 1);
	ck_assert_int_eq(fx_qp_state(), IBV_QPS_RTS);
}
END_TEST

/* A duplicate READ is answered again, but never past the PSN the responder expects. */
START_TEST(test_duplicate_read_within_its_psns)
{
	fill(fx.buf, 64, 4);
	rx_req(ROCEMU_OP_RC_RDMA_READ_REQUEST, FX_RQ_PSN, true, 0, 64, NULL, 0);
	rx_req(ROCEMU_OP_RC_RDMA_READ_REQUEST, FX_RQ_PSN, true, 0, 64, NULL, 0);
	ck_assert_uint_eq(fx.nwire, 2);
	for (unsigned int i = 0; i < 2; i++)
		fx_wire_expect(i, ROCEMU_OP_RC_RDMA_READ_RESPONSE_ONLY, FX_RQ_PSN, false, 64);
	rx_req(ROCEMU_OP_RC_RDMA_READ_REQUEST, FX_RQ_PSN, true, 0, 2 * FX_MTU_BYTES, NULL, 0);
	ck_assert_uint_eq(fx.nwire, 2);
	ck_assert_uint_eq(fx.dev->counters.rx_bad_duplicates, 1);
	ck_assert_int_eq(fx_qp_state(), IBV_QPS_RTS);
}
END_TEST

/* Packets [from, to) on the wire are READ responses of PSNs first_psn + i, fx.buf + off + i MTUs. */
static void expect_read_responses(unsigned int from, unsigned int to, uint32_t first_psn,
				  uint32_t npkts, uint32_t off, uint32_t len, uint32_t msn)
{
	for (unsigned int w = from; w < to; w++) {
		uint32_t i = (uint32_t)rocemu_psn_diff(rocemu_bth_psn(fx_wire_bth(w)), first_psn);
		uint8_t op = npkts == 1 ? ROCEMU_OP_RC_RDMA_READ_RESPONSE_ONLY
			     : !i ? ROCEMU_OP_RC_RDMA_READ_RESPONSE_FIRST
			     : i == npkts - 1 ? ROCEMU_OP_RC_RDMA_READ_RESPONSE_LAST
			     : ROCEMU_OP_RC_RDMA_READ_RESPONSE_MIDDLE;
		uint32_t paylen = i == npkts - 1 ? len - i * FX_MTU_BYTES : FX_MTU_BYTES;
		const uint8_t *bth = fx_wire_expect(w, op, rocemu_psn_add(first_psn, i), false, paylen);
		const uint8_t *aeth = rocemu_pkt_aeth((uint8_t *)bth);

		if (aeth)
			ck_assert_uint_eq(rocemu_aeth_msn(aeth), msn);
		ck_assert_mem_eq(bth + rocemu_pkt_info(bth)->length, fx.buf + off + i * FX_MTU_BYTES,
				 paylen);
	}
}

/*
 * A READ of 121 MTUs sends one burst when it comes and the rest on the next
 * turn; a WRITE behind it is placed at once, its ACK goes after the READ.
 */
START_TEST(test_read_in_bursts_acks_behind)
{
	const uint32_t len = 120 * FX_MTU_BYTES + 100, npkts = 121, write_off = 124 * FX_MTU_BYTES;

	ck_assert_uint_eq(ROCEMU_RC_RESP_BURST, 64);
	fill(fx.buf, len, 7);
	fill(payload, 64, 8);
	rx_req(ROCEMU_OP_RC_RDMA_READ_REQUEST, FX_RQ_PSN, true, 0, len, NULL, 0);
	ck_assert_uint_eq(fx.nwire, ROCEMU_RC_RESP_BURST);
	rx_req(ROCEMU_OP_RC_RDMA_WRITE_ONLY, FX_RQ_PSN + npkts, true, write_off, 64, payload, 64);
	ck_assert_mem_eq(fx.buf + write_off, payload, 64);
	ck_assert_uint_eq(fx.nwire, ROCEMU_RC_RESP_BURST);	/* no ACK before the READ is answered */
	fx_turn();
	ck_assert_uint_eq(fx.nwire, npkts + 1);
	expect_read_responses(0, npkts, FX_RQ_PSN, npkts, 0, len, 1);
	expect_ack(npkts, FX_RQ_PSN + npkts, ROCEMU_AETH_ACK, 0, 2);
	fx_turn();
	ck_assert_uint_eq(fx.nwire, npkts + 1);
}
END_TEST

/*
 * A duplicate of the READ being answered restarts it from its PSN, one burst
 * per turn; one that does not end where the READ ends is dropped.
 */
START_TEST(test_read_duplicate_restarts)
{
	const uint32_t npkts = FX_BUF_BYTES / FX_MTU_BYTES, restart = 10;

	fill(fx.buf, FX_BUF_BYTES, 9);
	rx_req(ROCEMU_OP_RC_RDMA_READ_REQUEST, FX_RQ_PSN, true, 0, FX_BUF_BYTES, NULL, 0);
	ck_assert_uint_eq(fx.nwire, ROCEMU_RC_RESP_BURST);
	expect_read_responses(0, ROCEMU_RC_RESP_BURST, FX_RQ_PSN, npkts, 0, FX_BUF_BYTES, 1);
	/* Ends one MTU early: not the READ asked again. */
	rx_req(ROCEMU_OP_RC_RDMA_READ_REQUEST, FX_RQ_PSN + 20, true, 20 * FX_MTU_BYTES,
	       (npkts - 21) * FX_MTU_BYTES, NULL, 0);
	ck_assert_uint_eq(fx.dev->counters.rx_bad_duplicates, 1);
	rx_req(ROCEMU_OP_RC_RDMA_READ_REQUEST, FX_RQ_PSN + restart, true, restart * FX_MTU_BYTES,
	       FX_BUF_BYTES - restart * FX_MTU_BYTES, NULL, 0);
	ck_assert_uint_eq(fx.nwire, ROCEMU_RC_RESP_BURST);
	fx_turn();
	ck_assert_uint_eq(fx.nwire, 2 * ROCEMU_RC_RESP_BURST);
	fx_turn();
	ck_assert_uint_eq(fx.nwire, ROCEMU_RC_RESP_BURST + npkts - restart);
	expect_read_responses(ROCEMU_RC_RESP_BURST, fx.nwire, FX_RQ_PSN + restart,
			      npkts - restart, restart * FX_MTU_BYTES,
			      FX_BUF_BYTES - restart * FX_MTU_BYTES, 1);
	ck_assert_uint_eq(fx.dev->counters.rx_bad_duplicates, 1);
	ck_assert_int_eq(fx_qp_state(), IBV_QPS_RTS);
}
END_TEST

/* A READ with all max_dest_rd_atomic resources owed is dropped; sent again later, answered. */
START_TEST(test_read_past_resources_dropped)
{
	const uint32_t len = (ROCEMU_RC_RESP_BURST + 1) * FX_MTU_BYTES;
	const uint32_t npkts = ROCEMU_RC_RESP_BURST + 1;
	uint32_t psn = FX_RQ_PSN;
	unsigned int i;

	for (i = 0; i < FX_RD_ATOMIC; i++, psn += npkts)
		rx_req(ROCEMU_OP_RC_RDMA_READ_REQUEST, psn, true, 0, len, NULL, 0);
	rx_req(ROCEMU_OP_RC_RDMA_READ_REQUEST, psn, true, 0, 64, NULL, 0);
	ck_assert_uint_eq(fx.dev->counters.rx_busy_rd_atomics, 1);
	ck_assert_uint_eq(fx.nwire, ROCEMU_RC_RESP_BURST);
	fx_wire_clear();
	for (i = 0; i < FX_RD_ATOMIC; i++)
		fx_turn();
	ck_assert_uint_eq(fx.nwire, FX_RD_ATOMIC * npkts - ROCEMU_RC_RESP_BURST);
	for (i = 0; i < fx.nwire; i++)
		ck_assert_uint_eq(rocemu_bth_psn(fx_wire_bth(i)), FX_RQ_PSN + ROCEMU_RC_RESP_BURST + i);
	fx_wire_clear();
	rx_req(ROCEMU_OP_RC_RDMA_READ_REQUEST, psn, true, 0, 64, NULL, 0);
	ck_assert_uint_eq(fx.nwire, 1);
	fx_wire_expect(0, ROCEMU_OP_RC_RDMA_READ_RESPONSE_ONLY, psn, false, 64);
	ck_assert_uint_eq(fx.dev->counters.out_of_sequence, 0);
}
END_TEST

/* A duplicate atomic the replay cache does not hold is dropped and counted, never executed. */
START_TEST(test_duplicate_atomic_not_cached_counted)
{
	const struct fx_hdrs h = { .psn = FX_RQ_PSN, .va = (uintptr_t)(fx.buf + 64),
				   .rkey = fx.rkey, .swap_add = 5 };
	uint64_t v = 100;

	memcpy(fx.buf + 64, &v, sizeof(v));
	rx_req(ROCEMU_OP_RC_RDMA_WRITE_ONLY, FX_RQ_PSN, false, 0, 8, payload, 8);
	fx_rx_build(ROCEMU_OP_RC_FETCH_ADD, &h, NULL, 0);
	ck_assert_uint_eq(fx.nwire, 0);
	ck_assert_uint_eq(fx.dev->counters.rx_stale_atomics, 1);
	memcpy(&v, fx.buf + 64, sizeof(v));
	ck_assert_uint_eq(v, 100);
}
END_TEST

/* A QP whose process is gone answers nothing and sends nothing. */
START_TEST(test_gone_process_silent)
{
	const struct ibv_sge sge = { .addr = (uintptr_t)fx.buf, .length = 8, .lkey = fx.lkey };
	const struct fx_wr wr = { .opcode = MLX5_OPCODE_SEND, .flags = MLX5_WQE_CTRL_CQ_UPDATE,
				  .sge = &sge, .num_sge = 1 };

	rocemu_client_gone(fx.client);
	rx_req(ROCEMU_OP_RC_RDMA_WRITE_ONLY, FX_RQ_PSN, true, 0, 0, NULL, 0);
	rx_req(ROCEMU_OP_RC_RDMA_READ_REQUEST, FX_RQ_PSN, true, 0, 64, NULL, 0);
	fx_post_send(&wr);
	fx_doorbell();
	ck_assert_uint_eq(fx.nwire, 0);
}
END_TEST

/* WRITEs arriving in one turn land together and are acknowledged once, by the last PSN. */
START_TEST(test_write_burst_one_ack)
{
	fill(payload, 4 * 64, 9);
	fx_rx_burst_begin();
	for (uint32_t i = 0; i < 4; i++)
		rx_req(ROCEMU_OP_RC_RDMA_WRITE_ONLY, FX_RQ_PSN + i, true, 1024 * i, 64,
		       payload + 64 * i, 64);
	ck_assert_uint_eq(fx.nwire, 0);
	fx_rx_burst_end();
	for (uint32_t i = 0; i < 4; i++)
		ck_assert_mem_eq(fx.buf + 1024 * i, payload + 64 * i, 64);
	ck_assert_uint_eq(fx.nwire, 1);
	expect_ack(0, FX_RQ_PSN + 3, ROCEMU_AETH_ACK, 0, 4);
}
END_TEST

/*
 * The third of four WRITEs in one turn lands on a page gone read-only
 * since it was checked: the two before it land, the NAK names its PSN and
 * MSN as if each had been placed at once, no ACK covers it, and the fourth
 * never lands.
 */
START_TEST(test_write_burst_fails_midway)
{
	uint8_t *page = fx.buf + 8 * 4096;

	fill(payload, 4 * 64, 10);
	fx_rx_burst_begin();
	for (uint32_t i = 0; i < 4; i++)
		rx_req(ROCEMU_OP_RC_RDMA_WRITE_ONLY, FX_RQ_PSN + i, true, 6 * 4096 + 4096 * i, 64,
		       payload + 64 * i, 64);
	ck_assert_int_eq(mprotect(page, 4096, PROT_READ), 0);
	fx_rx_burst_end();
	ck_assert_int_eq(mprotect(page, 4096, PROT_READ | PROT_WRITE), 0);
	ck_assert_mem_eq(fx.buf + 6 * 4096, payload, 64);
	ck_assert_mem_eq(fx.buf + 7 * 4096, payload + 64, 64);
	ck_assert_uint_eq(fx.buf[9 * 4096], 0);
	ck_assert_uint_eq(fx.nwire, 1);
	expect_ack(0, FX_RQ_PSN + 2, ROCEMU_AETH_NAK, ROCEMU_NAK_REMOTE_ACCESS_ERROR, 2);
	fx_expect_qp_error(IBV_EVENT_QP_ACCESS_ERR);
}
END_TEST

/*
 * A WRITE held when its QP is reset is dropped with it, and the next hold
 * starts afresh: the WRITEs after the reset land what they carried.
 */
START_TEST(test_hold_after_reset_starts_afresh)
{
	fill(payload, 3 * 64, 12);
	fx_rx_burst_begin();
	rx_req(ROCEMU_OP_RC_RDMA_WRITE_ONLY, FX_RQ_PSN, true, 0, 64, payload, 64);
	fx_qp_reset_to_rts();
	rx_req(ROCEMU_OP_RC_RDMA_WRITE_ONLY, FX_RQ_PSN, true, 1024, 64, payload + 64, 64);
	rx_req(ROCEMU_OP_RC_RDMA_WRITE_ONLY, FX_RQ_PSN + 1, true, 2048, 64, payload + 128, 64);
	fx_rx_burst_end();
	ck_assert_uint_eq(fx.buf[0], 0);
	ck_assert_mem_eq(fx.buf + 1024, payload + 64, 64);
	ck_assert_mem_eq(fx.buf + 2048, payload + 128, 64);
	ck_assert_uint_eq(fx.nwire, 1);
	expect_ack(0, FX_RQ_PSN + 1, ROCEMU_AETH_ACK, 0, 2);
}
END_TEST

/* A READ behind a WRITE in the same turn reads what the WRITE wrote, after the WRITE's ACK. */
START_TEST(test_read_after_write_in_one_turn)
{
	const uint8_t *bth;

	fill(payload, 200, 11);
	fx_rx_burst_begin();
	rx_req(ROCEMU_OP_RC_RDMA_WRITE_ONLY, FX_RQ_PSN, true, 512, 200, payload, 200);
	rx_req(ROCEMU_OP_RC_RDMA_READ_REQUEST, FX_RQ_PSN + 1, true, 512, 200, NULL, 0);
	fx_rx_burst_end();
	ck_assert_uint_eq(fx.nwire, 2);
	expect_ack(0, FX_RQ_PSN, ROCEMU_AETH_ACK, 0, 1);
	bth = fx_wire_expect(1, ROCEMU_OP_RC_RDMA_READ_RESPONSE_ONLY, FX_RQ_PSN + 1, false, 200);
	ck_assert_mem_eq(bth + rocemu_pkt_info(bth)->length, payload, 200);
}
END_TEST

static Suite *rc_resp_suite(void)
{
	Suite *s = suite_create("rc_resp");
	TCase *tc = tcase_create("rc_resp");

	tcase_add_checked_fixture(tc, fx_setup, fx_teardown);
	tcase_add_test(tc, test_write_placed_and_acked);
	tcase_add_test(tc, test_write_two_packets_one_ack);
	tcase_add_test(tc, test_psn_gap_nak_once);
	tcase_add_test(tc, test_read_responses_of_pmtu);
	tcase_add_test(tc, test_rnr_nak_without_receive);
	tcase_add_test(tc, test_send_with_imm_into_receive);
	tcase_add_test(tc, test_duplicate_write_acked_not_placed);
	tcase_add_test(tc, test_atomic_executed_once);
	tcase_add_test(tc, test_write_out_of_bounds_naks);
	tcase_add_test(tc, test_send_longer_than_receive);
	tcase_add_test(tc, test_middle_without_first);
	tcase_add_test(tc, test_write_shorter_than_reth);
	tcase_add_test(tc, test_duplicate_read_needs_remote_read);
	tcase_add_test(tc, test_duplicate_read_within_its_psns);
	tcase_add_test(tc, test_gone_process_silent);
	tcase_add_test(tc, test_read_in_bursts_acks_behind);
	tcase_add_test(tc, test_read_duplicate_restarts);
	tcase_add_test(tc, test_read_past_resources_dropped);
	tcase_add_test(tc, test_duplicate_atomic_not_cached_counted);
	tcase_add_test(tc, test_write_burst_one_ack);
	tcase_add_test(tc, test_write_burst_fails_midway);
	tcase_add_test(tc, test_read_after_write_in_one_turn);
	tcase_add_test(tc, test_hold_after_reset_starts_afresh);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return fx_suite_run(rc_resp_suite());
}
