/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The Toeplitz hash and the RSS hash of a frame (net/eth/toeplitz.c)
 * against Microsoft's published RSS verification suite ("Verifying the RSS
 * Hash Calculation": its key, IPv4 and IPv6 addresses and ports, the
 * expected hashes over the addresses and over addresses and TCP ports),
 * both on the raw input and on frames parsed; then what is not hashed:
 * a field asked that the frame lacks, a fragment's ports, and VXLAN's inner frame.
 */
#include <arpa/inet.h>
#include <check.h>
#include <infiniband/verbs.h>
#include <linux/if_ether.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include "eth_build.h"
#include "net/eth/eth_frame.h"
#include "net/eth/toeplitz.h"

static const uint8_t ms_key[40] = {
	0x6d, 0x5a, 0x56, 0xda, 0x25, 0x5b, 0x0e, 0xc2, 0x41, 0x67, 0x25, 0x3d, 0x43, 0xa3,
	0x8f, 0xb0, 0xd0, 0xca, 0x2b, 0xcb, 0xae, 0x7b, 0x30, 0xb4, 0x77, 0xcb, 0x2d, 0xa3,
	0x80, 0x30, 0xf2, 0x0c, 0x6a, 0x42, 0xb7, 0x3b, 0xbe, 0xac, 0x01, 0xfa,
};

struct vector {
	const char *src, *dst;
	uint16_t sport, dport;
	uint32_t ip_hash, tcp_hash;
};

static const struct vector v4[] = {
	{ "66.9.149.187", "161.142.100.80", 2794, 1766, 0x323e8fc2, 0x51ccc178 },
	{ "199.92.111.2", "65.69.140.83", 14230, 4739, 0xd718262a, 0xc626b0ea },
	{ "24.19.198.95", "12.22.207.184", 12898, 38024, 0xd2d0a5de, 0x5c2b394a },
	{ "38.27.205.30", "209.142.163.6", 48228, 2217, 0x82989176, 0xafc7327f },
	{ "153.39.163.191", "202.188.127.2", 44251, 1303, 0x5d1809c5, 0x10e828a2 },
};

static const struct vector v6[] = {
	{ "3ffe:2501:200:1fff::7", "3ffe:2501:200:3::1", 2794, 1766, 0x2cc18cd5, 0x40207d3d },
	{ "3ffe:501:8::260:97ff:fe40:efab", "ff02::1", 14230, 4739, 0x0f0c461c, 0xdde51bbf },
	{ "3ffe:1900:4545:3:200:f8ff:fe21:67cf", "fe80::200:f8ff:fe21:67cf", 44251, 38024,
	  0x4b61e985, 0x02d1feef },
};

static uint8_t buf[256];

#define RSS_IPV4 (IBV_RX_HASH_SRC_IPV4 | IBV_RX_HASH_DST_IPV4)
#define RSS_IPV6 (IBV_RX_HASH_SRC_IPV6 | IBV_RX_HASH_DST_IPV6)
#define RSS_TCP (IBV_RX_HASH_SRC_PORT_TCP | IBV_RX_HASH_DST_PORT_TCP)
#define RSS_UDP (IBV_RX_HASH_SRC_PORT_UDP | IBV_RX_HASH_DST_PORT_UDP)

/* A TCP (or UDP) frame of v over IPv4 or IPv6, parsed into f. */
static void frame_of(struct rocemu_eth_frame *f, const struct vector *v, bool ipv6, uint8_t proto)
{
	size_t l3 = build_eth(buf, BUILD_NO_VLAN, ipv6 ? ETH_P_IPV6 : ETH_P_IP), l4, len;

	l4 = l3 + (ipv6 ? build_ipv6(buf + l3, proto, 20, 0, 0, v->src, v->dst)
			: build_ipv4(buf + l3, 5, proto, 40, 1, 0, v->src, v->dst));
	if (proto == IPPROTO_TCP)
		len = l4 + build_tcp(buf + l4, v->sport, v->dport, 1, 0x10, 5);
	else
		len = l4 + build_udp(buf + l4, v->sport, v->dport, 20) + 12;
	ck_assert(rocemu_eth_parse(f, buf, (uint32_t)len));
}

static struct rocemu_rss_hash hash_of(const struct rocemu_eth_frame *f, uint64_t fields, bool ok)
{
	const struct rocemu_rss_conf conf = { .key = ms_key, .key_len = sizeof(ms_key), .fields = fields };
	struct rocemu_rss_hash h;

	ck_assert_int_eq(rocemu_rss_hash(f, &conf, &h), ok);
	if (!ok) {
		ck_assert_uint_eq(h.value, 0);
		ck_assert_uint_eq(h.type, 0);
	}
	return h;
}

START_TEST(test_toeplitz_ipv4)
{
	uint8_t in[12];
	size_t i;

	for (i = 0; i < sizeof(v4) / sizeof(v4[0]); i++) {
		inet_pton(AF_INET, v4[i].src, in);
		inet_pton(AF_INET, v4[i].dst, in + 4);
		in[8] = (uint8_t)(v4[i].sport >> 8), in[9] = (uint8_t)v4[i].sport;
		in[10] = (uint8_t)(v4[i].dport >> 8), in[11] = (uint8_t)v4[i].dport;
		ck_assert_uint_eq(rocemu_toeplitz(ms_key, sizeof(ms_key), in, 8), v4[i].ip_hash);
		ck_assert_uint_eq(rocemu_toeplitz(ms_key, sizeof(ms_key), in, 12), v4[i].tcp_hash);
	}
}
END_TEST

START_TEST(test_rss_ipv4)
{
	struct rocemu_eth_frame f;
	struct rocemu_rss_hash h;
	size_t i;

	for (i = 0; i < sizeof(v4) / sizeof(v4[0]); i++) {
		frame_of(&f, &v4[i], false, IPPROTO_TCP);
		h = hash_of(&f, RSS_IPV4, true);
		ck_assert_uint_eq(h.value, v4[i].ip_hash);
		ck_assert_uint_eq(h.type, ROCEMU_RSS_HTYPE_IPV4);
		h = hash_of(&f, RSS_IPV4 | RSS_TCP, true);
		ck_assert_uint_eq(h.value, v4[i].tcp_hash);
		ck_assert_uint_eq(h.type, ROCEMU_RSS_HTYPE_IPV4 | ROCEMU_RSS_HTYPE_TCP);
		/* UDP ports hash as TCP's do. */
		frame_of(&f, &v4[i], false, IPPROTO_UDP);
		h = hash_of(&f, RSS_IPV4 | RSS_UDP, true);
		ck_assert_uint_eq(h.value, v4[i].tcp_hash);
		ck_assert_uint_eq(h.type, ROCEMU_RSS_HTYPE_IPV4 | ROCEMU_RSS_HTYPE_UDP);
	}
}
END_TEST

START_TEST(test_rss_ipv6)
{
	struct rocemu_eth_frame f;
	struct rocemu_rss_hash h;
	size_t i;

	for (i = 0; i < sizeof(v6) / sizeof(v6[0]); i++) {
		frame_of(&f, &v6[i], true, IPPROTO_TCP);
		h = hash_of(&f, RSS_IPV6, true);
		ck_assert_uint_eq(h.value, v6[i].ip_hash);
		ck_assert_uint_eq(h.type, ROCEMU_RSS_HTYPE_IPV6);
		h = hash_of(&f, RSS_IPV6 | RSS_TCP, true);
		ck_assert_uint_eq(h.value, v6[i].tcp_hash);
		ck_assert_uint_eq(h.type, ROCEMU_RSS_HTYPE_IPV6 | ROCEMU_RSS_HTYPE_TCP);
	}
}
END_TEST

/* A field alone: the input is that field, in the order source IP, destination IP, ports. */
START_TEST(test_rss_field_subsets)
{
	struct rocemu_eth_frame f;
	uint8_t in[4];

	frame_of(&f, &v4[0], false, IPPROTO_TCP);
	inet_pton(AF_INET, v4[0].dst, in);
	ck_assert_uint_eq(hash_of(&f, IBV_RX_HASH_DST_IPV4, true).value,
			  rocemu_toeplitz(ms_key, sizeof(ms_key), in, 4));
	in[0] = (uint8_t)(v4[0].sport >> 8), in[1] = (uint8_t)v4[0].sport;
	in[2] = (uint8_t)(v4[0].dport >> 8), in[3] = (uint8_t)v4[0].dport;
	ck_assert_uint_eq(hash_of(&f, RSS_TCP, true).value,
			  rocemu_toeplitz(ms_key, sizeof(ms_key), in, 4));
	ck_assert_uint_eq(hash_of(&f, RSS_TCP, true).type, ROCEMU_RSS_HTYPE_TCP);
	ck_assert_uint_eq(hash_of(&f, IBV_RX_HASH_DST_PORT_TCP, true).value,
			  rocemu_toeplitz(ms_key, sizeof(ms_key), in + 2, 2));
}
END_TEST

START_TEST(test_rss_lacking)
{
	struct rocemu_eth_frame f;

	/* TCP ports asked of a UDP frame, UDP's of TCP, IPv6 addresses of IPv4. */
	frame_of(&f, &v4[0], false, IPPROTO_UDP);
	hash_of(&f, RSS_IPV4 | RSS_TCP, false);
	hash_of(&f, RSS_IPV4, true);
	frame_of(&f, &v4[0], false, IPPROTO_TCP);
	hash_of(&f, RSS_UDP, false);
	hash_of(&f, RSS_IPV6, false);
	frame_of(&f, &v6[0], true, IPPROTO_TCP);
	hash_of(&f, RSS_IPV4, false);
	/* Nothing asked; a field not hashed (IPsec SPI). */
	hash_of(&f, 0, false);
	hash_of(&f, RSS_IPV6 | IBV_RX_HASH_IPSEC_SPI, false);
	/* Not IP. */
	build_eth(buf, BUILD_NO_VLAN, ETH_P_ARP);
	ck_assert(rocemu_eth_parse(&f, buf, 60));
	hash_of(&f, RSS_IPV4, false);
	hash_of(&f, IBV_RX_HASH_SRC_PORT_TCP, false);
	/* A first fragment: its addresses, not its ports. */
	frame_of(&f, &v4[1], false, IPPROTO_TCP);
	build_ipv4(buf + 14, 5, IPPROTO_TCP, 40, 1, 0x2000, v4[1].src, v4[1].dst);
	ck_assert(rocemu_eth_parse(&f, buf, 54));
	ck_assert(f.fragment);
	ck_assert_uint_eq(hash_of(&f, RSS_IPV4, true).value, v4[1].ip_hash);
	hash_of(&f, RSS_IPV4 | RSS_TCP, false);
}
END_TEST

START_TEST(test_rss_inner)
{
	struct rocemu_eth_frame f, inner;
	uint8_t frame[256];
	size_t len;

	/* The vector's TCP frame carried in VXLAN over IPv4/UDP. */
	frame_of(&inner, &v4[2], false, IPPROTO_TCP);
	len = 14 + 20 + 8 + 8 + 54;
	build_eth(frame, BUILD_NO_VLAN, ETH_P_IP);
	build_ipv4(frame + 14, 5, IPPROTO_UDP, (uint16_t)(len - 14), 1, 0, "10.0.0.1", "10.0.0.2");
	build_udp(frame + 34, 33333, 4789, (uint16_t)(len - 34));
	memcpy(frame + 42, "\x08\x00\x00\x00\x00\x00\x07\x00", 8);
	memcpy(frame + 50, buf, 54);
	ck_assert(rocemu_eth_parse(&f, frame, (uint32_t)len));
	ck_assert(f.vxlan);
	ck_assert_uint_eq(hash_of(&f, RSS_IPV4 | RSS_TCP | IBV_RX_HASH_INNER, true).value,
			  v4[2].tcp_hash);
	/* The outer frame has no TCP ports; a frame not VXLAN has no inner one. */
	hash_of(&f, RSS_IPV4 | RSS_TCP, false);
	hash_of(&inner, RSS_IPV4 | IBV_RX_HASH_INNER, false);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("eth_rss");
	TCase *tc = tcase_create("eth_rss");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_toeplitz_ipv4);
	tcase_add_test(tc, test_rss_ipv4);
	tcase_add_test(tc, test_rss_ipv6);
	tcase_add_test(tc, test_rss_field_subsets);
	tcase_add_test(tc, test_rss_lacking);
	tcase_add_test(tc, test_rss_inner);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
