/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The RAW_PACKET transport's send side (emulator/raw/) on the fixture,
 * WQEs laid out with mlx5dv.h's structs as mlx5 writes them: a frame is
 * the Ethernet segment's inline header (running past the segment) then
 * the data, IBV_SEND_IP_CSUM fills both checksums, TSO cuts frames of mss
 * bytes with their own lengths, IDs, sequence numbers and flags, a frame
 * over the MTU, a TSO without mss and an inline header past the WQE
 * complete in error; create needs CAP_NET_RAW (through a live pidfd) and
 * takes only RAW_PACKET's flags. Frames are taken where they meet the
 * port (rocemu_eth_tx, wrapped at link time).
 */
#include <arpa/inet.h>
#include <check.h>
#include <linux/if_ether.h>
#include <errno.h>
#include <linux/capability.h>
#include <netinet/in.h>
#include <netinet/ip.h>
#include <netinet/tcp.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "emulator/core/device.h"
#include "net/eth/eth_frame.h"
#include "tests/unit/fixture.h"
#include "tests/unit/net/eth_build.h"

#define TSO_HDR_MAX 128u
#define FRAMES_MAX 64u
#define FRAME_BYTES 10000u

/* What reached the port. */
static uint8_t frames[FRAMES_MAX][FRAME_BYTES];
static uint32_t frame_len[FRAMES_MAX];
static unsigned int nframes;

void __wrap_rocemu_eth_tx(struct rocemu_device *dev, const uint8_t *frame, uint32_t len);

void __wrap_rocemu_eth_tx(struct rocemu_device *dev, const uint8_t *frame, uint32_t len)
{
	(void)dev;
	ck_assert_uint_lt(nframes, FRAMES_MAX);
	ck_assert_uint_le(len, FRAME_BYTES);
	memcpy(frames[nframes], frame, len);
	frame_len[nframes++] = len;
}

static void setup_raw(void)
{
	fx_setup();
	ck_assert_int_eq(fx_qp_replace_raw(0, TSO_HDR_MAX), 0);
	fx_raw_to_rts();
	nframes = 0;
}

/* An Ethernet, IPv4 and TCP (or UDP) header at p for a payload of len; its length. */
static size_t ipv4_hdr(uint8_t *p, uint8_t proto, uint32_t len, bool sums)
{
	size_t l4 = proto == IPPROTO_TCP ? 20 : 8;
	size_t n = build_eth(p, BUILD_NO_VLAN, ETH_P_IP);

	n += build_ipv4(p + n, 5, proto, (uint16_t)(20 + l4 + len), 0x1000, IP_DF, "10.0.0.1",
			"10.0.0.2");
	if (proto == IPPROTO_TCP)
		n += build_tcp(p + n, 1000, 2000, 5000, TH_ACK | TH_PUSH | TH_FIN, 5);
	else
		n += build_udp(p + n, 1000, 2000, (uint16_t)(8 + len));
	if (!sums)
		memset(p + 14 + 10, 0, 2);	/* the IPv4 checksum left to the device */
	return n;
}

/* Post a raw WQE: inline header hdr, then len bytes of fx.buf by SGE; returns its counter. */
static uint16_t post_raw(uint8_t opcode, const uint8_t *hdr, uint16_t hdr_len, uint32_t len,
			 uint8_t cs_flags, uint16_t mss)
{
	struct ibv_sge sge = { (uintptr_t)fx.buf, len, fx.lkey };
	struct fx_wr wr = { .opcode = opcode, .flags = MLX5_WQE_CTRL_CQ_UPDATE, .sge = &sge,
			    .num_sge = len ? 1 : 0, .eth_hdr = hdr, .eth_hdr_len = hdr_len,
			    .cs_flags = cs_flags, .mss = mss };

	return fx_post_send(&wr);
}

static void payload_fill(uint32_t len)
{
	for (uint32_t i = 0; i < len; i++)
		fx.buf[i] = (uint8_t)(i * 7 + 3);
}

START_TEST(test_frame_header_and_data)
{
	uint8_t hdr[64];
	size_t n = ipv4_hdr(hdr, IPPROTO_UDP, 100, true);
	uint16_t c;

	payload_fill(100);
	/* 42 bytes inline: 18 in the segment, 24 in the two units after it */
	c = post_raw(MLX5_OPCODE_SEND, hdr, (uint16_t)n, 100, 0, 0);
	fx_doorbell();
	fx_expect_cqe(&fx.scq, MLX5_CQE_REQ, c, 0);
	ck_assert_uint_eq(nframes, 1);
	ck_assert_uint_eq(frame_len[0], n + 100);
	ck_assert_mem_eq(frames[0], hdr, n);
	ck_assert_mem_eq(frames[0] + n, fx.buf, 100);
	ck_assert_uint_eq(fx.dev->counters.raw_tx_frames, 1);
}
END_TEST

START_TEST(test_frame_header_only_inline)
{
	uint8_t hdr[14];
	uint16_t c;

	build_eth(hdr, BUILD_NO_VLAN, 0x88b5);	/* a local experimental ethertype */
	payload_fill(200);
	c = post_raw(MLX5_OPCODE_SEND, hdr, sizeof(hdr), 200, 0, 0);
	fx_doorbell();
	fx_expect_cqe(&fx.scq, MLX5_CQE_REQ, c, 0);
	ck_assert_uint_eq(frame_len[0], 214);
	ck_assert_mem_eq(frames[0] + 14, fx.buf, 200);
}
END_TEST

/* A frame shorter than 60 bytes goes out padded, as a NIC pads it. */
START_TEST(test_frame_padded)
{
	uint8_t hdr[14];

	build_eth(hdr, BUILD_NO_VLAN, 0x88b5);
	payload_fill(4);
	post_raw(MLX5_OPCODE_SEND, hdr, sizeof(hdr), 4, 0, 0);
	fx_doorbell();
	ck_assert_uint_eq(nframes, 1);
	ck_assert_uint_eq(frame_len[0], 60);
	ck_assert_mem_eq(frames[0] + 14, fx.buf, 4);
	for (unsigned int i = 18; i < 60; i++)
		ck_assert_uint_eq(frames[0][i], 0);
}
END_TEST

START_TEST(test_ip_csum)
{
	uint8_t hdr[64];
	struct rocemu_eth_frame f;
	size_t n;

	for (int proto = 0; proto < 2; proto++) {
		n = ipv4_hdr(hdr, proto ? IPPROTO_UDP : IPPROTO_TCP, 300, false);
		payload_fill(300);
		post_raw(MLX5_OPCODE_SEND, hdr, (uint16_t)n, 300,
			 MLX5_ETH_WQE_L3_CSUM | MLX5_ETH_WQE_L4_CSUM, 0);
	}
	fx_doorbell();
	ck_assert_uint_eq(nframes, 2);
	for (unsigned int i = 0; i < 2; i++) {
		ck_assert(rocemu_eth_parse(&f, frames[i], frame_len[i]));
		ck_assert_int_eq(f.l4, i ? ROCEMU_ETH_L4_UDP : ROCEMU_ETH_L4_TCP);
		ck_assert(f.l3_csum_ok);
		ck_assert(f.l4_csum_ok);
	}
}
END_TEST

/* Without IP_CSUM the checksums are the application's, wrong ones too. */
START_TEST(test_no_csum_left_alone)
{
	uint8_t hdr[64];
	struct rocemu_eth_frame f;
	size_t n = ipv4_hdr(hdr, IPPROTO_TCP, 50, false);

	payload_fill(50);
	post_raw(MLX5_OPCODE_SEND, hdr, (uint16_t)n, 50, 0, 0);
	fx_doorbell();
	ck_assert(rocemu_eth_parse(&f, frames[0], frame_len[0]));
	ck_assert(!f.l3_csum_ok);
	ck_assert_mem_eq(frames[0], hdr, n);
}
END_TEST

START_TEST(test_tso)
{
	const uint32_t mss = 1000, len = 3500;
	uint8_t hdr[64];
	struct rocemu_eth_frame f;
	size_t n = ipv4_hdr(hdr, IPPROTO_TCP, 0, false);
	uint16_t c;

	payload_fill(len);
	c = post_raw(MLX5_OPCODE_TSO, hdr, (uint16_t)n, len, 0, (uint16_t)mss);
	fx_doorbell();
	fx_expect_cqe(&fx.scq, MLX5_CQE_REQ, c, 0);
	ck_assert_uint_eq(nframes, 4);
	for (unsigned int i = 0; i < 4; i++) {
		uint32_t pay = i < 3 ? mss : len - 3 * mss;
		const frame_iphdr *ip = (const void *)(frames[i] + 14);
		const frame_tcphdr *tcp = (const void *)(frames[i] + 34);

		ck_assert_uint_eq(frame_len[i], n + pay);
		ck_assert(rocemu_eth_parse(&f, frames[i], frame_len[i]));
		ck_assert(f.l3_csum_ok && f.l4_csum_ok);
		ck_assert_uint_eq(ntohs(ip->tot_len), 40 + pay);
		ck_assert_uint_eq(ntohs(ip->id), 0x1000 + i);
		ck_assert_uint_eq(ntohl(tcp->seq), 5000 + i * mss);
		/* FIN and PSH on the last frame only */
		ck_assert_uint_eq(f.tcp_flags, i < 3 ? TH_ACK : TH_ACK | TH_PUSH | TH_FIN);
		ck_assert_mem_eq(frames[i] + n, fx.buf + i * mss, pay);
	}
	ck_assert_uint_eq(fx.dev->counters.raw_tx_frames, 4);
}
END_TEST

/* Bad WQEs complete in error and send nothing; the QP goes to ERR, the rest flushes. */
static void expect_send_error(uint16_t c, uint8_t syndrome)
{
	fx_doorbell();
	fx_expect_cqe(&fx.scq, MLX5_CQE_REQ_ERR, c, syndrome);
	ck_assert_uint_eq(nframes, 0);
	ck_assert_int_eq(fx_qp_state(), IBV_QPS_ERR);
}

START_TEST(test_tso_mss_zero)
{
	uint8_t hdr[64];
	size_t n = ipv4_hdr(hdr, IPPROTO_TCP, 0, false);

	expect_send_error(post_raw(MLX5_OPCODE_TSO, hdr, (uint16_t)n, 2000, 0, 0),
			  MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR);
}
END_TEST

START_TEST(test_tso_header_over_max)
{
	uint8_t hdr[TSO_HDR_MAX + 16];
	size_t n = ipv4_hdr(hdr, IPPROTO_TCP, 0, false);

	memset(hdr + n, 0, sizeof(hdr) - n);
	expect_send_error(post_raw(MLX5_OPCODE_TSO, hdr, sizeof(hdr), 2000, 0, 1000),
			  MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR);
}
END_TEST

START_TEST(test_frame_over_mtu)
{
	uint8_t hdr[14];
	uint32_t len = fx.dev->netdev_mtu + 4 + 1;	/* + 14 bytes: one past MTU, header and tag */
	uint16_t c;

	ck_assert_uint_le(len, FX_BUF_BYTES);
	build_eth(hdr, BUILD_NO_VLAN, 0x88b5);
	c = post_raw(MLX5_OPCODE_SEND, hdr, sizeof(hdr), len, 0, 0);
	expect_send_error(c, MLX5_CQE_SYNDROME_LOCAL_LENGTH_ERR);
}
END_TEST

START_TEST(test_frame_at_mtu)
{
	uint8_t hdr[14];
	uint32_t len = fx.dev->netdev_mtu + 4;

	build_eth(hdr, BUILD_NO_VLAN, 0x88b5);
	post_raw(MLX5_OPCODE_SEND, hdr, sizeof(hdr), len, 0, 0);
	fx_doorbell();
	ck_assert_uint_eq(nframes, 1);
	ck_assert_uint_eq(frame_len[0], len + 14);
}
END_TEST

/* inline_hdr_sz says more bytes than the WQE's size holds. */
START_TEST(test_inline_header_past_wqe)
{
	uint8_t hdr[14];
	struct mlx5_wqe_eth_seg *e = fx_sq_seg(fx.qp.sq_cur, 1);
	uint16_t c;

	build_eth(hdr, BUILD_NO_VLAN, 0x88b5);
	c = post_raw(MLX5_OPCODE_SEND, hdr, sizeof(hdr), 100, 0, 0);
	e->inline_hdr_sz = htobe16(200);
	expect_send_error(c, MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR);
}
END_TEST

/* An opcode RAW_PACKET has not (an RDMA WRITE) fails the WQE. */
START_TEST(test_opcode_refused)
{
	uint8_t hdr[14];

	build_eth(hdr, BUILD_NO_VLAN, 0x88b5);
	expect_send_error(post_raw(MLX5_OPCODE_SEND_IMM, hdr, sizeof(hdr), 10, 0, 0),
			  MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR);
}
END_TEST

/* The effective capability sets of this process: CAP_NET_RAW dropped or raised again. */
static void net_raw_effective(bool on)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2];

	ck_assert_int_eq(syscall(SYS_capget, &h, d), 0);
	if (on)
		d[0].effective |= 1u << CAP_NET_RAW;
	else
		d[0].effective &= ~(1u << CAP_NET_RAW);
	ck_assert_int_eq(syscall(SYS_capset, &h, d), 0);
}

static bool net_raw_permitted(void)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2];

	return !syscall(SYS_capget, &h, d) && (d[0].permitted & (1u << CAP_NET_RAW));
}

START_TEST(test_create_needs_net_raw)
{
	fx_setup();
	if (net_raw_permitted()) {
		net_raw_effective(false);
		ck_assert_int_eq(fx_qp_replace_raw(0, 0), -EPERM);
		net_raw_effective(true);
		ck_assert_int_eq(fx_qp_replace_raw(0, 0), 0);
	} else {
		ck_assert_int_eq(fx_qp_replace_raw(0, 0), -EPERM);
	}
	fx_teardown();
}
END_TEST

/* A client whose process can no longer be vouched for (no pidfd) is refused: its PID may be another's. */
START_TEST(test_create_needs_live_pidfd)
{
	fx_setup();
	rocemu_client_unwatch_pid(fx.client);
	ck_assert_int_eq(fx_qp_replace_raw(0, 0), -EPERM);
	fx_teardown();
}
END_TEST

START_TEST(test_create_flags)
{
	fx_setup();
	ck_assert_int_eq(fx_qp_replace_raw(IBV_QP_CREATE_SCATTER_FCS |
					   IBV_QP_CREATE_CVLAN_STRIPPING |
					   IBV_QP_CREATE_PCI_WRITE_END_PADDING, 0), 0);
	ck_assert_int_eq(fx_qp_replace_raw(0, 4096), -EINVAL);	/* over the device's 256 */
	fx_teardown();
}
END_TEST

/* RESET -> INIT takes the port alone: a Q_Key or access flags are not RAW_PACKET's. */
START_TEST(test_modify_attrs)
{
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_INIT, .port_num = ROCEMU_PORT_NUM };

	fx_setup();
	ck_assert_int_eq(fx_qp_replace_raw(0, 0), 0);
	ck_assert_int_eq(fx_qp_modify(&attr, IBV_QP_STATE), -EINVAL);
	ck_assert_int_eq(fx_qp_modify(&attr, IBV_QP_STATE | IBV_QP_PORT | IBV_QP_QKEY), -EINVAL);
	fx_raw_to_rts();
	attr.qp_state = IBV_QPS_SQD;
	ck_assert_int_eq(fx_qp_modify(&attr, IBV_QP_STATE), -EINVAL);
	fx_teardown();
}
END_TEST

int main(void)
{
	Suite *s = suite_create("raw_send");
	TCase *tc = tcase_create("send");
	TCase *create = tcase_create("create");

	tcase_add_checked_fixture(tc, setup_raw, fx_teardown);
	tcase_add_test(tc, test_frame_header_and_data);
	tcase_add_test(tc, test_frame_header_only_inline);
	tcase_add_test(tc, test_frame_padded);
	tcase_add_test(tc, test_ip_csum);
	tcase_add_test(tc, test_no_csum_left_alone);
	tcase_add_test(tc, test_tso);
	tcase_add_test(tc, test_tso_mss_zero);
	tcase_add_test(tc, test_tso_header_over_max);
	tcase_add_test(tc, test_frame_over_mtu);
	tcase_add_test(tc, test_frame_at_mtu);
	tcase_add_test(tc, test_inline_header_past_wqe);
	tcase_add_test(tc, test_opcode_refused);
	suite_add_tcase(s, tc);
	tcase_add_test(create, test_create_needs_net_raw);
	tcase_add_test(create, test_create_needs_live_pidfd);
	tcase_add_test(create, test_create_flags);
	tcase_add_test(create, test_modify_attrs);
	suite_add_tcase(s, create);
	return fx_suite_run(s);
}
