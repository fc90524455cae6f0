/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The RAW_PACKET transport's receive side (emulator/raw/raw_recv.c) and
 * its CQE (emulator/mlx5/cqe.c), frames handed to the QP as the port's
 * steering does: the whole frame into the next receive WQE, the CQE's
 * byte count, L3/L4 types and checksum verdicts, flow tag; CVLAN_STRIPPING
 * takes the tag out and reports it, SCATTER_FCS appends the CRC-32; no WQE
 * drops and counts, a WQE too small completes with a local length error,
 * a QP not receiving drops and counts, ERR flushes the receive queue.
 */
#include <arpa/inet.h>
#include <check.h>
#include <linux/if_ether.h>
#include <netinet/in.h>
#include <netinet/ip.h>
#include <netinet/tcp.h>
#include <string.h>

#include "emulator/core/device.h"
#include "emulator/obj/qp.h"
#include "net/eth/eth_frame.h"
#include "tests/unit/fixture.h"
#include "tests/unit/net/eth_build.h"

#define FLOW_TAG 0x00abcdefu
#define PAYLOAD 200u
#define VLAN_TCI 0x2064u

/* rdma-core mlx5's CQE fields of a raw receive (the kernel's get_cqe_l3_hdr_type and friends). */
#define CQE_L3_TYPE(cqe) (((cqe).l4_hdr_type_etc >> 2) & 0x3)
#define CQE_L4_TYPE(cqe) (((cqe).l4_hdr_type_etc >> 4) & 0x7)
#define CQE_VLAN_STRIPPED(cqe) ((cqe).l4_hdr_type_etc & 0x1)
#define CQE_L4_UDP 0x2
#define CQE_L4_TCP_ACK_AND_DATA 0x4

/* IEEE 802.3's CRC-32, bit by bit (reflected, 0xedb88320), apart from the daemon's table. */
static uint32_t ref_crc32(const uint8_t *p, size_t len)
{
	uint32_t crc = 0xffffffffu;

	for (size_t i = 0; i < len; i++) {
		crc ^= p[i];
		for (int b = 0; b < 8; b++)
			crc = crc & 1 ? crc >> 1 ^ 0xedb88320u : crc >> 1;
	}
	return ~crc;
}

static uint8_t frame[2048];
static uint32_t frame_len;

static void setup_flags(uint32_t flags)
{
	fx_setup();
	ck_assert_int_eq(fx_qp_replace_raw(flags, 0), 0);
	fx_raw_to_rts();
}

static void setup_plain(void)
{
	setup_flags(0);
}

static void setup_strip_fcs(void)
{
	setup_flags(IBV_QP_CREATE_CVLAN_STRIPPING | IBV_QP_CREATE_SCATTER_FCS);
}

/* A UDP (or TCP) over IPv4 frame with PAYLOAD bytes, checksums right, tagged when vlan >= 0. */
static void frame_build(int vlan, uint8_t proto)
{
	uint32_t l4 = proto == IPPROTO_TCP ? 20 : 8;
	size_t n = build_eth(frame, vlan, ETH_P_IP);
	uint8_t *ip = frame + n;

	n += build_ipv4(ip, 5, proto, (uint16_t)(20 + l4 + PAYLOAD), 7, 0, "10.0.0.1", "10.0.0.2");
	if (proto == IPPROTO_TCP)
		n += build_tcp(frame + n, 80, 8080, 1, TH_ACK, 5);
	else
		n += build_udp(frame + n, 80, 8080, (uint16_t)(8 + PAYLOAD));
	for (uint32_t i = 0; i < PAYLOAD; i++)
		frame[n + i] = (uint8_t)(i ^ 0x5a);
	frame_len = (uint32_t)(n + PAYLOAD);
	ref_l4_csum(ip, ip + 20, proto, l4 + PAYLOAD);
}

/* The frame to fx.qp as the steering hands it. */
static void deliver(uint32_t tag)
{
	struct rocemu_eth_frame f;
	struct rocemu_qp *qp = fx_emu_qp();

	ck_assert(rocemu_eth_parse(&f, frame, frame_len));
	qp->ops->rx_frame(qp, &f, tag);
}

static void post_recv(uint32_t len)
{
	struct ibv_sge sge = { (uintptr_t)fx.buf, len, fx.lkey };

	fx_post_recv(&sge, 1);
	fx_doorbell();
}

START_TEST(test_recv_udp)
{
	struct mlx5_cqe64 cqe;

	frame_build(BUILD_NO_VLAN, IPPROTO_UDP);
	post_recv(1024);
	deliver(0);
	cqe = fx_expect_cqe(&fx.rcq, MLX5_CQE_RESP_SEND, 0, 0);
	ck_assert_uint_eq(be32toh(cqe.byte_cnt), frame_len);
	ck_assert_mem_eq(fx.buf, frame, frame_len);
	ck_assert_uint_eq(CQE_L3_TYPE(cqe), MLX5_CQE_L3_HDR_TYPE_IPV4);
	ck_assert_uint_eq(CQE_L4_TYPE(cqe), CQE_L4_UDP);
	ck_assert_uint_eq(cqe.hds_ip_ext & (MLX5_CQE_L3_OK | MLX5_CQE_L4_OK),
			  MLX5_CQE_L3_OK | MLX5_CQE_L4_OK);
	ck_assert(!CQE_VLAN_STRIPPED(cqe));
	ck_assert_uint_eq(rocemu_cqe_flow_tag(&cqe), 0);
	ck_assert_uint_eq(rocemu_cqe_qpn(&cqe), fx.qp.qpn);
	ck_assert_uint_eq(fx.dev->counters.raw_rx_frames, 1);
}
END_TEST

/* A bad L4 checksum: L3_OK alone; the flow tag in sop_drop_qpn, the QP as the user index. */
START_TEST(test_recv_tcp_bad_csum_tagged)
{
	struct mlx5_cqe64 cqe;

	frame_build(BUILD_NO_VLAN, IPPROTO_TCP);
	frame[frame_len - 1] ^= 0xff;
	post_recv(1024);
	deliver(FLOW_TAG);
	cqe = fx_expect_cqe(&fx.rcq, MLX5_CQE_RESP_SEND, 0, 0);
	ck_assert_uint_eq(CQE_L4_TYPE(cqe), CQE_L4_TCP_ACK_AND_DATA);
	ck_assert_uint_eq(cqe.hds_ip_ext & (MLX5_CQE_L3_OK | MLX5_CQE_L4_OK), MLX5_CQE_L3_OK);
	ck_assert_uint_eq(be32toh(cqe.sop_drop_qpn) & 0xffffff, FLOW_TAG);
	ck_assert_uint_eq(rocemu_cqe_qpn(&cqe), fx.qp.qpn);
}
END_TEST

/* Without CVLAN_STRIPPING the tag stays in the frame and the CQE has none. */
START_TEST(test_recv_vlan_kept)
{
	struct mlx5_cqe64 cqe;

	frame_build(VLAN_TCI, IPPROTO_UDP);
	post_recv(1024);
	deliver(0);
	cqe = fx_expect_cqe(&fx.rcq, MLX5_CQE_RESP_SEND, 0, 0);
	ck_assert_uint_eq(be32toh(cqe.byte_cnt), frame_len);
	ck_assert_mem_eq(fx.buf, frame, frame_len);
	ck_assert(!CQE_VLAN_STRIPPED(cqe));
}
END_TEST

START_TEST(test_recv_strip_and_fcs)
{
	struct mlx5_cqe64 cqe;
	uint32_t crc;
	uint8_t fcs[4];

	frame_build(VLAN_TCI, IPPROTO_UDP);
	crc = ref_crc32(frame, frame_len);
	for (int i = 0; i < 4; i++)
		fcs[i] = (uint8_t)(crc >> (8 * i));	/* the wire's order: least significant first */
	post_recv(1024);
	deliver(0);
	cqe = fx_expect_cqe(&fx.rcq, MLX5_CQE_RESP_SEND, 0, 0);
	ck_assert_uint_eq(be32toh(cqe.byte_cnt), frame_len - 4 + 4);
	ck_assert(CQE_VLAN_STRIPPED(cqe));
	ck_assert_uint_eq(be16toh(cqe.vlan_info), VLAN_TCI);
	ck_assert_mem_eq(fx.buf, frame, 12);
	ck_assert_mem_eq(fx.buf + 12, frame + 16, frame_len - 16);
	ck_assert_mem_eq(fx.buf + frame_len - 4, fcs, 4);
	ck_assert_uint_eq(CQE_L3_TYPE(cqe), MLX5_CQE_L3_HDR_TYPE_IPV4);
}
END_TEST

START_TEST(test_recv_no_wqe)
{
	struct mlx5_cqe64 cqe;

	frame_build(BUILD_NO_VLAN, IPPROTO_UDP);
	deliver(0);
	ck_assert(!fx_poll(&fx.rcq, &cqe));
	ck_assert_uint_eq(fx.dev->counters.out_of_buffer, 1);
	ck_assert_int_eq(fx_qp_state(), IBV_QPS_RTS);
}
END_TEST

START_TEST(test_recv_too_small)
{
	frame_build(BUILD_NO_VLAN, IPPROTO_UDP);
	post_recv(frame_len - 1);
	deliver(0);
	fx_expect_cqe(&fx.rcq, MLX5_CQE_RESP_ERR, 0, MLX5_CQE_SYNDROME_LOCAL_LENGTH_ERR);
	ck_assert_int_eq(fx_qp_state(), IBV_QPS_ERR);
}
END_TEST

/* A frame shorter than an IP header: delivered whole, L3 type none. */
START_TEST(test_recv_not_ip)
{
	struct mlx5_cqe64 cqe;

	frame_len = (uint32_t)build_eth(frame, BUILD_NO_VLAN, 0x88b5);
	memset(frame + frame_len, 0xee, 46);
	frame_len += 46;
	post_recv(1024);
	deliver(0);
	cqe = fx_expect_cqe(&fx.rcq, MLX5_CQE_RESP_SEND, 0, 0);
	ck_assert_uint_eq(be32toh(cqe.byte_cnt), 60);
	ck_assert_uint_eq(CQE_L3_TYPE(cqe), MLX5_CQE_L3_HDR_TYPE_NONE);
	ck_assert_uint_eq(cqe.hds_ip_ext & (MLX5_CQE_L3_OK | MLX5_CQE_L4_OK), 0);
}
END_TEST

START_TEST(test_recv_not_receiving)
{
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_RESET };
	struct mlx5_cqe64 cqe;

	ck_assert_int_eq(fx_qp_modify(&attr, IBV_QP_STATE), 0);
	frame_build(BUILD_NO_VLAN, IPPROTO_UDP);
	deliver(0);
	ck_assert(!fx_poll(&fx.rcq, &cqe));
	ck_assert_uint_eq(fx.dev->counters.raw_rx_dropped, 1);
}
END_TEST

START_TEST(test_flush_on_err)
{
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_ERR };

	post_recv(1024);
	post_recv(1024);
	ck_assert_int_eq(fx_qp_modify(&attr, IBV_QP_STATE), 0);
	fx_expect_cqe(&fx.rcq, MLX5_CQE_RESP_ERR, 0, MLX5_CQE_SYNDROME_WR_FLUSH_ERR);
	fx_expect_cqe(&fx.rcq, MLX5_CQE_RESP_ERR, 1, MLX5_CQE_SYNDROME_WR_FLUSH_ERR);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("raw_recv");
	TCase *tc = tcase_create("recv");
	TCase *strip = tcase_create("strip_fcs");

	tcase_add_checked_fixture(tc, setup_plain, fx_teardown);
	tcase_add_test(tc, test_recv_udp);
	tcase_add_test(tc, test_recv_tcp_bad_csum_tagged);
	tcase_add_test(tc, test_recv_vlan_kept);
	tcase_add_test(tc, test_recv_no_wqe);
	tcase_add_test(tc, test_recv_too_small);
	tcase_add_test(tc, test_recv_not_ip);
	tcase_add_test(tc, test_recv_not_receiving);
	tcase_add_test(tc, test_flush_on_err);
	suite_add_tcase(s, tc);
	tcase_add_checked_fixture(strip, setup_strip_fcs, fx_teardown);
	tcase_add_test(strip, test_recv_strip_and_fcs);
	suite_add_tcase(s, strip);
	return fx_suite_run(s);
}
