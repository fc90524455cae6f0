/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The UD transport (emulator/ud_*.c) on the fixture's fake wire: a UD QP
 * in RTS sends one datagram per WQE as its datagram segment addresses it
 * (DETH with the Q_Key, privileged or not, and our QPN; the AV's source
 * port), fails a message over the port MTU with a local length error,
 * receives behind a GRH with the CQE fields mlx5 reads, drops and counts
 * what has the wrong Q_Key or finds no receive, and flushes in ERR. A UD QP
 * on an SRQ takes its receives there (the CQE names the SRQ WQE, the limit
 * event fires, an empty SRQ drops and counts the datagram) and reports
 * QP_LAST_WQE_REACHED in ERR.
 */
#include <arpa/inet.h>
#include <check.h>
#include <netinet/ip.h>
#include <string.h>

#include "emulator/core/device.h"
#include "tests/unit/fixture.h"

#define QKEY FX_QKEY
#define PEER_QKEY 0x00001234u
#define PRIVILEGED_QKEY 0x80000000u
#define AV_SPORT 0xc555u
#define IMM 0x01020304u
#define GRH_BYTES 40u
#define MSG 100u
#define DATAGRAM_DS 3u		/* sizeof(struct mlx5_wqe_datagram_seg) / 16 */

/* A UD send WQE of len bytes from fx.buf to the peer, as mlx5 writes it; returns its counter. */
static uint16_t post_ud(uint8_t opcode, uint32_t qkey, uint32_t len)
{
	uint32_t bb = fx.qp.sq_cur, peer = inet_addr(FX_PEER_IP);
	struct mlx5_wqe_ctrl_seg *ctrl = fx_sq_seg(bb, 0);
	struct mlx5_wqe_datagram_seg *dgram = fx_sq_seg(bb, 1);
	struct mlx5_wqe_data_seg *data = fx_sq_seg(bb, 1 + DATAGRAM_DS);

	mlx5dv_set_ctrl_seg(ctrl, (uint16_t)bb, opcode, 0, fx.qp.qpn, MLX5_WQE_CTRL_CQ_UPDATE,
			    1 + DATAGRAM_DS + 1, 0, htobe32(IMM));
	memset(dgram, 0, sizeof(*dgram));
	dgram->av.rgid[10] = 0xff;
	dgram->av.rgid[11] = 0xff;
	memcpy(&dgram->av.rgid[12], &peer, sizeof(peer));
	dgram->av.dqp_dct = htobe32(FX_PEER_QPN | MLX5_EXTENDED_UD_AV);
	dgram->av.key.qkey.qkey = htobe32(qkey);
	dgram->av.rlid = htobe16(AV_SPORT);
	mlx5dv_set_data_seg(data, len, fx.lkey, (uintptr_t)fx.buf);
	fx.qp.sq_cur += 2;	/* 16 + 48 + 16 bytes */
	return (uint16_t)bb;
}

START_TEST(test_send)
{
	const uint8_t *bth, *deth;

	for (uint32_t i = 0; i < MSG; i++)
		fx.buf[i] = (uint8_t)i;
	post_ud(MLX5_OPCODE_SEND_IMM, PEER_QKEY, MSG);
	post_ud(MLX5_OPCODE_SEND, PRIVILEGED_QKEY, 0);
	fx_doorbell();
	bth = fx_wire_expect(0, ROCEMU_OP_UD_SEND_ONLY_WITH_IMMEDIATE, FX_SQ_PSN, false, MSG);
	deth = bth + ROCEMU_BTH_BYTES;
	ck_assert_uint_eq(rocemu_bth_destqp(bth), FX_PEER_QPN);
	ck_assert_uint_eq(rocemu_deth_qkey(deth), PEER_QKEY);
	ck_assert_uint_eq(rocemu_deth_src_qp(deth), fx.qp.qpn);
	ck_assert_uint_eq(rocemu_immdt_imm(deth + ROCEMU_DETH_BYTES), IMM);
	ck_assert_mem_eq(deth + ROCEMU_DETH_BYTES + ROCEMU_IMMDT_BYTES, fx.buf, MSG);
	ck_assert_uint_eq(fx.wire[0].flow.daddr, inet_addr(FX_PEER_IP));
	ck_assert_uint_eq(ntohs(fx.wire[0].flow.sport), AV_SPORT);
	ck_assert_uint_eq(ntohs(fx.wire[0].flow.dport), 4791);
	/* IBTA 10.2.4: bit 31 set takes the QP's own Q_Key. */
	bth = fx_wire_expect(1, ROCEMU_OP_UD_SEND_ONLY, rocemu_psn_add(FX_SQ_PSN, 1), false, 0);
	ck_assert_uint_eq(rocemu_deth_qkey(bth + ROCEMU_BTH_BYTES), QKEY);
	fx_expect_cqe(&fx.scq, MLX5_CQE_REQ, 0, 0);
	fx_expect_cqe(&fx.scq, MLX5_CQE_REQ, 2, 0);
	ck_assert_uint_eq(fx.nwire, 2);
}
END_TEST

START_TEST(test_send_over_mtu)
{
	uint32_t mtu = rocemu_mtu_bytes(fx.dev->active_mtu);

	post_ud(MLX5_OPCODE_SEND, PEER_QKEY, mtu);
	post_ud(MLX5_OPCODE_SEND, PEER_QKEY, mtu + 1);
	post_ud(MLX5_OPCODE_SEND, PEER_QKEY, 1);
	fx_doorbell();
	fx_wire_expect(0, ROCEMU_OP_UD_SEND_ONLY, FX_SQ_PSN, false, mtu);
	ck_assert_uint_eq(fx.nwire, 1);
	fx_expect_cqe(&fx.scq, MLX5_CQE_REQ, 0, 0);
	fx_expect_cqe(&fx.scq, MLX5_CQE_REQ_ERR, 2, MLX5_CQE_SYNDROME_LOCAL_LENGTH_ERR);
	fx_expect_cqe(&fx.scq, MLX5_CQE_REQ_ERR, 4, MLX5_CQE_SYNDROME_WR_FLUSH_ERR);
	ck_assert_int_eq(fx_qp_state(), IBV_QPS_ERR);
}
END_TEST

START_TEST(test_recv)
{
	struct ibv_sge sge = { .addr = (uintptr_t)fx.buf, .length = GRH_BYTES + MSG, .lkey = fx.lkey };
	struct fx_hdrs h = { .psn = 7, .qkey = QKEY, .imm = IMM };
	uint8_t payload[MSG];
	struct mlx5_cqe64 cqe;
	struct iphdr ip;

	memset(payload, 0xab, sizeof(payload));
	memset(fx.buf, 0x5a, GRH_BYTES + MSG + 8);
	fx_post_recv(&sge, 1);
	fx_doorbell();
	fx_rx_build(ROCEMU_OP_UD_SEND_ONLY_WITH_IMMEDIATE, &h, payload, MSG);
	cqe = fx_expect_cqe(&fx.rcq, MLX5_CQE_RESP_SEND_IMM, 0, 0);
	ck_assert_uint_eq(be32toh(cqe.byte_cnt), GRH_BYTES + MSG);
	/* SL: the RoCE packet type, UDP (bit 3) and IPv4, as a ConnectX writes it */
	ck_assert_uint_eq(be32toh(cqe.flags_rqpn),
			  (uint32_t)MLX5_CQE_L3_HDR_TYPE_IPV4 << 28 |
			  (0x8u | MLX5_CQE_L3_HDR_TYPE_IPV4) << 24 | FX_PEER_QPN);
	ck_assert_uint_eq(be32toh(cqe.imm_inval_pkey), IMM);
	ck_assert_uint_eq(be32toh(cqe.srqn_uidx), 0);	/* from the RQ: no SRQ named */
	for (unsigned int i = 0; i < 20; i++)
		ck_assert_uint_eq(fx.buf[i], 0);
	memcpy(&ip, fx.buf + 20, sizeof(ip));
	ck_assert_uint_eq(ip.version, 4);
	ck_assert_uint_eq(ip.protocol, IPPROTO_UDP);
	ck_assert_uint_eq(ip.saddr, inet_addr(FX_PEER_IP));
	ck_assert_uint_eq(ip.daddr, inet_addr(FX_DEV_IP));
	ck_assert_uint_eq(ntohs(ip.tot_len), 20 + 8 + 12 + 8 + 4 + MSG + 4);
	ck_assert_mem_eq(fx.buf + GRH_BYTES, payload, MSG);
	ck_assert_uint_eq(fx.buf[GRH_BYTES + MSG], 0x5a);
}
END_TEST

/* Dropped and counted, the receive WQE left for the next datagram. */
START_TEST(test_recv_drops)
{
	struct ibv_sge sge = { .addr = (uintptr_t)fx.buf, .length = GRH_BYTES + MSG, .lkey = fx.lkey };
	struct fx_hdrs h = { .psn = 1, .qkey = QKEY + 1 };
	struct mlx5_cqe64 cqe;
	uint8_t payload[MSG] = { 0 };

	fx_rx_build(ROCEMU_OP_UD_SEND_ONLY, &h, payload, MSG);
	ck_assert_uint_eq(fx.dev->counters.rx_qkey_violations, 1);
	h.qkey = QKEY;
	fx_rx_build(ROCEMU_OP_UD_SEND_ONLY, &h, payload, MSG);
	ck_assert_uint_eq(fx.dev->counters.out_of_buffer, 1);
	ck_assert_uint_eq(fx.dev->counters.rx_ud_dropped, 0);
	fx_post_recv(&sge, 1);
	fx_doorbell();
	h.qkey = QKEY ^ 0x10000;
	fx_rx_build(ROCEMU_OP_UD_SEND_ONLY, &h, payload, MSG);
	ck_assert_uint_eq(fx.dev->counters.rx_qkey_violations, 2);
	ck_assert(!fx_poll(&fx.rcq, &cqe));
	h.qkey = QKEY;
	fx_rx_build(ROCEMU_OP_UD_SEND_ONLY, &h, payload, MSG);
	fx_expect_cqe(&fx.rcq, MLX5_CQE_RESP_SEND, 0, 0);
	ck_assert_int_eq(fx_qp_state(), IBV_QPS_RTS);
}
END_TEST

/* A message longer than the receive: a local length error, the QP in ERR. */
START_TEST(test_recv_too_long)
{
	struct ibv_sge sge = { .addr = (uintptr_t)fx.buf, .length = GRH_BYTES + MSG - 1,
			       .lkey = fx.lkey };
	struct fx_hdrs h = { .psn = 1, .qkey = QKEY };
	uint8_t payload[MSG] = { 0 };

	fx_post_recv(&sge, 1);
	fx_post_recv(&sge, 1);
	fx_doorbell();
	fx_rx_build(ROCEMU_OP_UD_SEND_ONLY, &h, payload, MSG);
	fx_expect_cqe(&fx.rcq, MLX5_CQE_RESP_ERR, 0, MLX5_CQE_SYNDROME_LOCAL_LENGTH_ERR);
	fx_expect_cqe(&fx.rcq, MLX5_CQE_RESP_ERR, 1, MLX5_CQE_SYNDROME_WR_FLUSH_ERR);
	ck_assert_int_eq(fx_qp_state(), IBV_QPS_ERR);
}
END_TEST

/* In ERR both queues flush; the QP sends and receives nothing. */
START_TEST(test_flush)
{
	struct ibv_sge sge = { .addr = (uintptr_t)fx.buf, .length = GRH_BYTES + MSG, .lkey = fx.lkey };
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_ERR };
	struct fx_hdrs h = { .psn = 1, .qkey = QKEY };
	uint8_t payload[MSG] = { 0 };
	struct mlx5_cqe64 cqe;

	ck_assert_int_eq(fx_qp_modify(&attr, IBV_QP_STATE), 0);
	fx_post_recv(&sge, 1);
	post_ud(MLX5_OPCODE_SEND, PEER_QKEY, MSG);
	fx_doorbell();
	fx_expect_cqe(&fx.scq, MLX5_CQE_REQ_ERR, 0, MLX5_CQE_SYNDROME_WR_FLUSH_ERR);
	fx_expect_cqe(&fx.rcq, MLX5_CQE_RESP_ERR, 0, MLX5_CQE_SYNDROME_WR_FLUSH_ERR);
	fx_rx_build(ROCEMU_OP_UD_SEND_ONLY, &h, payload, MSG);
	ck_assert(!fx_poll(&fx.rcq, &cqe));
	ck_assert_uint_eq(fx.dev->counters.rx_ud_dropped, 1);
	ck_assert_uint_eq(fx.nwire, 0);
}
END_TEST

/* An SRQ WQE of GRH_BYTES + MSG bytes at fx.buf + off; its index. */
static uint16_t srq_post_at(size_t off)
{
	struct ibv_sge sge = { .addr = (uintptr_t)fx.buf + off, .length = GRH_BYTES + MSG,
			       .lkey = fx.lkey };

	return fx_srq_post(&sge, 1);
}

/* A receive through the SRQ lands as one through the RQ; its CQE names the SRQ WQE. */
START_TEST(test_srq_recv)
{
	struct fx_hdrs h = { .psn = 1, .qkey = QKEY, .imm = IMM };
	struct rocemu_async_record ev;
	uint8_t payload[MSG];
	struct mlx5_cqe64 cqe;
	uint16_t index[4];

	for (unsigned int i = 0; i < 3; i++)
		index[i] = srq_post_at(i * 4096);
	ck_assert_int_eq(fx_srq_arm(2), 0);
	for (unsigned int i = 0; i < 3; i++) {
		memset(payload, 0x10 + i, sizeof(payload));
		fx_rx_build(ROCEMU_OP_UD_SEND_ONLY_WITH_IMMEDIATE, &h, payload, MSG);
		cqe = fx_expect_cqe(&fx.rcq, MLX5_CQE_RESP_SEND_IMM, index[i], 0);
		ck_assert_uint_eq(be32toh(cqe.byte_cnt), GRH_BYTES + MSG);
		ck_assert_uint_eq(be32toh(cqe.flags_rqpn) & 0xffffff, FX_PEER_QPN);
		ck_assert_uint_eq(be32toh(cqe.sop_drop_qpn) & 0xffffff, fx.qp.qpn);
		/* The SRQ named, as a ConnectX names it for mlx5's poller (CQE version 0). */
		ck_assert_uint_eq(be32toh(cqe.srqn_uidx) & 0xffffff, fx.srq.srqn);
		ck_assert_uint_eq(be32toh(cqe.imm_inval_pkey), IMM);
		ck_assert_uint_eq(fx.buf[i * 4096 + 20] >> 4, 4);	/* the GRH's IPv4 header */
		ck_assert_mem_eq(fx.buf + i * 4096 + GRH_BYTES, payload, MSG);
		/* The limit event once fewer than 2 WQEs are left, then no more. */
		ck_assert(fx_async_event(&ev) == (i == 1));
		if (i == 1) {
			ck_assert_uint_eq(ev.event_type, IBV_EVENT_SRQ_LIMIT_REACHED);
			ck_assert_uint_eq(ev.element, FX_USER_SRQ);
		}
	}
	/* An empty SRQ: no RNR for UD, the datagram is dropped and counted, the QP receives on. */
	fx_rx_build(ROCEMU_OP_UD_SEND_ONLY, &h, payload, MSG);
	ck_assert(!fx_poll(&fx.rcq, &cqe));
	ck_assert_uint_eq(fx.dev->counters.out_of_buffer, 1);
	ck_assert_int_eq(fx_qp_state(), IBV_QPS_RTS);
	index[3] = srq_post_at(0);
	fx_rx_build(ROCEMU_OP_UD_SEND_ONLY, &h, payload, MSG);
	fx_expect_cqe(&fx.rcq, MLX5_CQE_RESP_SEND, index[3], 0);
	ck_assert(!fx_async_event(&ev));
}
END_TEST

/* A datagram longer than the SRQ WQE fails that WQE, then QP_LAST_WQE_REACHED. */
START_TEST(test_srq_recv_too_long)
{
	struct ibv_sge sge = { .addr = (uintptr_t)fx.buf, .length = GRH_BYTES + MSG - 1,
			       .lkey = fx.lkey };
	struct fx_hdrs h = { .psn = 1, .qkey = QKEY };
	uint8_t payload[MSG] = { 0 };
	struct mlx5_cqe64 cqe;
	uint16_t index;

	index = fx_srq_post(&sge, 1);
	fx_srq_post(&sge, 1);
	fx_rx_build(ROCEMU_OP_UD_SEND_ONLY, &h, payload, MSG);
	cqe = fx_expect_cqe(&fx.rcq, MLX5_CQE_RESP_ERR, index, MLX5_CQE_SYNDROME_LOCAL_LENGTH_ERR);
	ck_assert_uint_eq(be32toh(((struct mlx5_err_cqe *)&cqe)->srqn) & 0xffffff, fx.srq.srqn);
	/* The other WQE is the SRQ's, not flushed with the QP. */
	ck_assert(!fx_poll(&fx.rcq, &cqe));
	fx_expect_qp_error(IBV_EVENT_QP_LAST_WQE_REACHED);
}
END_TEST

/* Moved to ERR, a QP with an SRQ reports its last WQE reached, and flushes none of the SRQ's. */
START_TEST(test_srq_to_error)
{
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_ERR };
	struct mlx5_cqe64 cqe;

	srq_post_at(0);
	ck_assert_int_eq(fx_qp_modify(&attr, IBV_QP_STATE), 0);
	fx_doorbell();
	fx_expect_qp_error(IBV_EVENT_QP_LAST_WQE_REACHED);
	ck_assert(!fx_poll(&fx.rcq, &cqe));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("ud");
	TCase *tc = tcase_create("ud"), *srq = tcase_create("ud_srq");

	tcase_add_checked_fixture(tc, fx_setup_ud, fx_teardown);
	tcase_add_test(tc, test_send);
	tcase_add_test(tc, test_send_over_mtu);
	tcase_add_test(tc, test_recv);
	tcase_add_test(tc, test_recv_drops);
	tcase_add_test(tc, test_recv_too_long);
	tcase_add_test(tc, test_flush);
	suite_add_tcase(s, tc);
	tcase_add_checked_fixture(srq, fx_setup_ud_srq, fx_teardown);
	tcase_add_test(srq, test_srq_recv);
	tcase_add_test(srq, test_srq_recv_too_long);
	tcase_add_test(srq, test_srq_to_error);
	suite_add_tcase(s, srq);
	return fx_suite_run(s);
}
