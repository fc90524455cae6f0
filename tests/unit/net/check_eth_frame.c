/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The Ethernet frame parse (net/eth/eth_frame.c) and the checksum offload
 * (net/eth/inet_csum.c) on frames built by eth_build.c, whose checksums
 * are computed apart from the code under test: the fields of each layer,
 * the checksum verdicts, a length that lies ending the parse at its layer
 * (an IP length past the frame leaves the L4 ports, cut, as a ConnectX
 * steers by them, with no checksum verdict or fill),
 * fragments, VXLAN, and checksums filled as a ConnectX send does.
 */
#include <arpa/inet.h>
#include <check.h>
#include <linux/if_ether.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include "eth_build.h"
#include "net/eth/eth_frame.h"
#include "net/eth/inet_csum.h"

static uint8_t buf[2048];

/* An IPv4/UDP frame with n payload bytes (VLAN tci or none), its UDP checksum right; its length. */
static uint32_t ipv4_udp(int tci, uint16_t dport, uint32_t n)
{
	size_t l2 = build_eth(buf, tci, ETH_P_IP), l4 = l2 + 20;
	uint32_t i;

	build_ipv4(buf + l2, 5, IPPROTO_UDP, (uint16_t)(28 + n), 7, 0, "192.0.2.1", "192.0.2.2");
	build_udp(buf + l4, 1234, dport, (uint16_t)(8 + n));
	for (i = 0; i < n; i++)
		buf[l4 + 8 + i] = (uint8_t)(i * 7 + 3);
	ref_l4_csum(buf + l2, buf + l4, IPPROTO_UDP, 8 + n);
	return (uint32_t)(l4 + 8 + n);
}

/* An IPv6/TCP frame with n payload bytes, its TCP checksum right; its length. */
static uint32_t ipv6_tcp(uint32_t n)
{
	size_t l2 = build_eth(buf, BUILD_NO_VLAN, ETH_P_IPV6), l4 = l2 + 40;
	uint32_t i;

	build_ipv6(buf + l2, IPPROTO_TCP, (uint16_t)(24 + n), 0xb8, 0xabcde, "2001:db8::1",
		   "2001:db8::2");
	build_tcp(buf + l4, 40000, 80, 1000, 0x18, 6);
	for (i = 0; i < n; i++)
		buf[l4 + 24 + i] = (uint8_t)(i ^ 0x5a);
	ref_l4_csum(buf + l2, buf + l4, IPPROTO_TCP, 24 + n);
	return (uint32_t)(l4 + 24 + n);
}

START_TEST(test_short)
{
	struct rocemu_eth_frame f;

	ck_assert(!rocemu_eth_parse(&f, buf, 13));
	build_eth(buf, BUILD_NO_VLAN, 0x88b5);
	ck_assert(rocemu_eth_parse(&f, buf, 14));
	ck_assert_uint_eq(f.ethertype, 0x88b5);
	ck_assert_int_eq(f.l3, ROCEMU_ETH_L3_NONE);
	ck_assert(!f.vlan);
	ck_assert_uint_eq(f.smac[5], 1);
	ck_assert_uint_eq(f.dmac[5], 2);
	/* A tag cut short: the parse ends at the tag. */
	build_eth(buf, 5, ETH_P_IP);
	ck_assert(rocemu_eth_parse(&f, buf, 17));
	ck_assert(!f.vlan);
	ck_assert_uint_eq(f.ethertype, ETH_P_8021Q);
	ck_assert_int_eq(f.l3, ROCEMU_ETH_L3_NONE);
}
END_TEST

START_TEST(test_ipv4_udp)
{
	uint32_t len = ipv4_udp(BUILD_NO_VLAN, 5000, 33);
	struct rocemu_eth_frame f;

	ck_assert(rocemu_eth_parse(&f, buf, len));
	ck_assert_ptr_eq(f.data, buf);
	ck_assert_uint_eq(f.len, len);
	ck_assert_uint_eq(f.ethertype, ETH_P_IP);
	ck_assert_int_eq(f.l3, ROCEMU_ETH_L3_IPV4);
	ck_assert_uint_eq(f.l3_off, 14);
	ck_assert_uint_eq(f.l3_len, 20);
	ck_assert_uint_eq(f.ip_proto, IPPROTO_UDP);
	ck_assert_uint_eq(f.ttl, 64);
	ck_assert_mem_eq(f.saddr, "\xc0\x00\x02\x01", 4);
	ck_assert_mem_eq(f.daddr, "\xc0\x00\x02\x02", 4);
	ck_assert(!f.fragment);
	ck_assert_int_eq(f.l4, ROCEMU_ETH_L4_UDP);
	ck_assert_uint_eq(f.l4_off, 34);
	ck_assert_uint_eq(f.sport, 1234);
	ck_assert_uint_eq(f.dport, 5000);
	ck_assert(f.l3_csum_ok);
	ck_assert(f.l4_csum_ok);
	ck_assert(!f.vxlan);
	/* A byte of payload changed: the UDP sum is wrong, the header's still right. */
	buf[len - 1] ^= 1;
	ck_assert(rocemu_eth_parse(&f, buf, len));
	ck_assert(f.l3_csum_ok);
	ck_assert(!f.l4_csum_ok);
	/* The TTL changed: the header sum is wrong. */
	buf[len - 1] ^= 1;
	buf[14 + 8]--;
	ck_assert(rocemu_eth_parse(&f, buf, len));
	ck_assert(!f.l3_csum_ok);
	ck_assert(f.l4_csum_ok);
}
END_TEST

START_TEST(test_udp_csum_zero)
{
	uint32_t len = ipv4_udp(BUILD_NO_VLAN, 5000, 10);
	struct rocemu_eth_frame f;

	/* Unsummed UDP over IPv4 is fine. */
	buf[34 + 6] = buf[34 + 7] = 0;
	ck_assert(rocemu_eth_parse(&f, buf, len));
	ck_assert(f.l4_csum_ok);
	/* Over IPv6 it is not (RFC 8200 8.1). */
	build_eth(buf, BUILD_NO_VLAN, ETH_P_IPV6);
	build_ipv6(buf + 14, IPPROTO_UDP, 8, 0, 0, "::1", "::2");
	build_udp(buf + 54, 1, 2, 8);
	ck_assert(rocemu_eth_parse(&f, buf, 62));
	ck_assert_int_eq(f.l4, ROCEMU_ETH_L4_UDP);
	ck_assert(!f.l4_csum_ok);
}
END_TEST

START_TEST(test_padding)
{
	uint32_t len = ipv4_udp(BUILD_NO_VLAN, 5000, 1);
	struct rocemu_eth_frame f;

	/* Padded to Ethernet's 60 bytes with junk: the lengths are the IP header's. */
	ck_assert_uint_lt(len, 60);
	memset(buf + len, 0xee, 60 - len);
	ck_assert(rocemu_eth_parse(&f, buf, 60));
	ck_assert(f.l3_csum_ok);
	ck_assert(f.l4_csum_ok);
}
END_TEST

START_TEST(test_vlan_ipv4_tcp_options)
{
	size_t l4 = 18 + 24;
	struct rocemu_eth_frame f;
	uint32_t len;

	build_eth(buf, 0x6123, ETH_P_IP);
	build_ipv4(buf + 18, 6, IPPROTO_TCP, 24 + 32 + 5, 1, 0x4000, "10.0.0.1", "10.0.0.2");
	build_tcp(buf + l4, 443, 50000, 7, 0x12, 8);
	memcpy(buf + l4 + 32, "hello", 5);
	ref_l4_csum(buf + 18, buf + l4, IPPROTO_TCP, 32 + 5);
	len = (uint32_t)(l4 + 32 + 5);
	ck_assert(rocemu_eth_parse(&f, buf, len));
	ck_assert(f.vlan);
	ck_assert_uint_eq(f.vlan_tci, 0x6123);
	ck_assert_uint_eq(f.ethertype, ETH_P_IP);
	ck_assert_uint_eq(f.l3_off, 18);
	ck_assert_uint_eq(f.l3_len, 24);
	ck_assert(!f.fragment);		/* DF alone */
	ck_assert_int_eq(f.l4, ROCEMU_ETH_L4_TCP);
	ck_assert_uint_eq(f.l4_off, l4);
	ck_assert_uint_eq(f.sport, 443);
	ck_assert_uint_eq(f.dport, 50000);
	ck_assert_uint_eq(f.tcp_flags, 0x12);
	ck_assert(f.l3_csum_ok);
	ck_assert(f.l4_csum_ok);
}
END_TEST

START_TEST(test_ipv6_tcp)
{
	uint32_t len = ipv6_tcp(101);
	struct rocemu_eth_frame f;
	uint8_t addr[16];

	ck_assert(rocemu_eth_parse(&f, buf, len));
	ck_assert_int_eq(f.l3, ROCEMU_ETH_L3_IPV6);
	ck_assert_uint_eq(f.l3_len, 40);
	ck_assert_uint_eq(f.tos, 0xb8);
	ck_assert_uint_eq(f.flow_label, 0xabcde);
	ck_assert_uint_eq(f.ttl, 64);
	inet_pton(AF_INET6, "2001:db8::2", addr);
	ck_assert_mem_eq(f.daddr, addr, 16);
	ck_assert(f.l3_csum_ok);
	ck_assert_int_eq(f.l4, ROCEMU_ETH_L4_TCP);
	ck_assert_uint_eq(f.l4_off, 54);
	ck_assert_uint_eq(f.sport, 40000);
	ck_assert_uint_eq(f.tcp_flags, 0x18);
	ck_assert(f.l4_csum_ok);
	buf[60] ^= 0x80;
	ck_assert(rocemu_eth_parse(&f, buf, len));
	ck_assert(!f.l4_csum_ok);
	/* An extension header first: no L4. */
	buf[14 + 6] = 0;
	ck_assert(rocemu_eth_parse(&f, buf, len));
	ck_assert_int_eq(f.l3, ROCEMU_ETH_L3_IPV6);
	ck_assert_uint_eq(f.ip_proto, 0);
	ck_assert_int_eq(f.l4, ROCEMU_ETH_L4_NONE);
	ck_assert(!f.l4_csum_ok);
}
END_TEST

START_TEST(test_fragments)
{
	uint32_t len = ipv4_udp(BUILD_NO_VLAN, 5000, 16);
	struct rocemu_eth_frame f;

	/* The first fragment: ports, no L4 checksum verdict. */
	build_ipv4(buf + 14, 5, IPPROTO_UDP, (uint16_t)(len - 14), 9, 0x2000, "192.0.2.1",
		   "192.0.2.2");
	ck_assert(rocemu_eth_parse(&f, buf, len));
	ck_assert(f.fragment);
	ck_assert(f.l3_csum_ok);
	ck_assert_int_eq(f.l4, ROCEMU_ETH_L4_UDP);
	ck_assert_uint_eq(f.dport, 5000);
	ck_assert(!f.l4_csum_ok);
	/* A later one, the last: no L4 at all. */
	build_ipv4(buf + 14, 5, IPPROTO_UDP, (uint16_t)(len - 14), 9, 0x0003, "192.0.2.1",
		   "192.0.2.2");
	ck_assert(rocemu_eth_parse(&f, buf, len));
	ck_assert(f.fragment);
	ck_assert(f.l3_csum_ok);
	ck_assert_int_eq(f.l4, ROCEMU_ETH_L4_NONE);
}
END_TEST

START_TEST(test_lying_lengths)
{
	uint32_t len = ipv4_udp(5, 5000, 16);
	struct rocemu_eth_frame f;

	/* The frame cut inside the IPv4 header. */
	ck_assert(rocemu_eth_parse(&f, buf, 18 + 19));
	ck_assert(f.vlan);
	ck_assert_int_eq(f.l3, ROCEMU_ETH_L3_NONE);
	ck_assert(!f.l3_csum_ok);
	/* An IHL past the frame, then below 5. */
	buf[18] = 0x4f;
	ck_assert(rocemu_eth_parse(&f, buf, 18 + 40));
	ck_assert_int_eq(f.l3, ROCEMU_ETH_L3_NONE);
	buf[18] = 0x44;
	ck_assert(rocemu_eth_parse(&f, buf, len));
	ck_assert_int_eq(f.l3, ROCEMU_ETH_L3_NONE);
	/* Not version 4. */
	buf[18] = 0x55;
	ck_assert(rocemu_eth_parse(&f, buf, len));
	ck_assert_int_eq(f.l3, ROCEMU_ETH_L3_NONE);
	buf[18] = 0x45;
	/* A total length past the frame: IPv4, no L4. */
	ck_assert(rocemu_eth_parse(&f, buf, len - 1));
	ck_assert_int_eq(f.l3, ROCEMU_ETH_L3_IPV4);
	ck_assert(f.l3_csum_ok);
	ck_assert_int_eq(f.l4, ROCEMU_ETH_L4_NONE);
	ck_assert(!f.l4_csum_ok);
	/* A UDP length past the IP payload, then below the UDP header. */
	buf[38 + 5]++;
	ck_assert(rocemu_eth_parse(&f, buf, len + 10));
	ck_assert_int_eq(f.l3, ROCEMU_ETH_L3_IPV4);
	ck_assert_int_eq(f.l4, ROCEMU_ETH_L4_NONE);
	buf[38 + 4] = 0;
	buf[38 + 5] = 7;
	ck_assert(rocemu_eth_parse(&f, buf, len));
	ck_assert_int_eq(f.l4, ROCEMU_ETH_L4_NONE);
}
END_TEST

START_TEST(test_lying_tcp_ipv6)
{
	uint32_t len = ipv6_tcp(0);
	struct rocemu_eth_frame f;
	uint8_t check[2];

	/* A data offset past the segment, then below 5 words. */
	buf[54 + 12] = 0x70;
	ck_assert(rocemu_eth_parse(&f, buf, len + 20));
	ck_assert_int_eq(f.l4, ROCEMU_ETH_L4_NONE);
	buf[54 + 12] = 0x40;
	ck_assert(rocemu_eth_parse(&f, buf, len));
	ck_assert_int_eq(f.l4, ROCEMU_ETH_L4_NONE);
	/* A payload length past the frame: the ports still, cut, no checksum verdict or fill. */
	len = ipv6_tcp(40);
	ck_assert(rocemu_eth_parse(&f, buf, len));
	ck_assert_int_eq(f.l4, ROCEMU_ETH_L4_TCP);
	ck_assert(!f.l4_cut);
	ck_assert(f.l4_csum_ok);
	ck_assert(rocemu_eth_parse(&f, buf, len - 1));
	ck_assert_int_eq(f.l3, ROCEMU_ETH_L3_IPV6);
	ck_assert_int_eq(f.l4, ROCEMU_ETH_L4_TCP);
	ck_assert_uint_eq(f.sport, 40000);
	ck_assert(f.l4_cut);
	ck_assert(!f.l4_csum_ok);
	memcpy(check, buf + 54 + 16, 2);
	rocemu_csum_fill(buf, &f, true, true);
	ck_assert(!memcmp(check, buf + 54 + 16, 2));
	/* Cut inside the TCP header: no L4. */
	ck_assert(rocemu_eth_parse(&f, buf, 54 + 19));
	ck_assert_int_eq(f.l4, ROCEMU_ETH_L4_NONE);
	/* Cut inside the IPv6 header. */
	ck_assert(rocemu_eth_parse(&f, buf, 14 + 39));
	ck_assert_int_eq(f.l3, ROCEMU_ETH_L3_NONE);
}
END_TEST

START_TEST(test_vxlan)
{
	uint32_t len = ipv4_udp(BUILD_NO_VLAN, ROCEMU_VXLAN_PORT, 8 + 60);
	struct rocemu_eth_frame f, inner;

	memcpy(buf + 42, "\x08\x00\x00\x00\x12\x34\x56\x00", 8);
	build_eth(buf + 50, BUILD_NO_VLAN, ETH_P_IP);
	ref_l4_csum(buf + 14, buf + 34, IPPROTO_UDP, len - 34);
	ck_assert(rocemu_eth_parse(&f, buf, len));
	ck_assert(f.l4_csum_ok);
	ck_assert(f.vxlan);
	ck_assert_uint_eq(f.vni, 0x123456);
	ck_assert_uint_eq(f.inner_off, 50);
	ck_assert(rocemu_eth_parse(&inner, buf + f.inner_off, len - f.inner_off));
	ck_assert_uint_eq(inner.ethertype, ETH_P_IP);
	/* No I flag: plain UDP. */
	buf[42] = 0;
	ck_assert(rocemu_eth_parse(&f, buf, len));
	ck_assert(!f.vxlan);
	ck_assert_int_eq(f.l4, ROCEMU_ETH_L4_UDP);
	/* A UDP payload shorter than a VXLAN header. */
	len = ipv4_udp(BUILD_NO_VLAN, ROCEMU_VXLAN_PORT, 7);
	buf[42] = 0x08;
	ck_assert(rocemu_eth_parse(&f, buf, len));
	ck_assert(!f.vxlan);
}
END_TEST

/* RFC 1071's IPv4 header as Wikipedia works it: its checksum is 0xb861. */
START_TEST(test_known_vector)
{
	static const uint8_t hdr[20] = { 0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11,
					 0x00, 0x00, 0xc0, 0xa8, 0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7 };

	ck_assert_uint_eq(ntohs(rocemu_csum_fold(rocemu_csum_add(0, hdr, sizeof(hdr)))), 0xb861);
	ck_assert_uint_eq(ref_csum(hdr, sizeof(hdr), 0), 0xb861);
}
END_TEST

START_TEST(test_fill)
{
	uint32_t len = ipv4_udp(7, 5000, 41), i;
	struct rocemu_eth_frame f;
	uint8_t want[sizeof(buf)];

	memcpy(want, buf, len);
	buf[18 + 10] = buf[18 + 11] = 0x33;
	buf[38 + 6] = buf[38 + 7] = 0x44;
	ck_assert(rocemu_eth_parse(&f, buf, len));
	/* Only the IPv4 header's asked. */
	rocemu_csum_fill(buf, &f, true, false);
	ck_assert_mem_eq(buf, want, 38);
	ck_assert_uint_eq(buf[38 + 6], 0x44);
	rocemu_csum_fill(buf, &f, false, true);
	ck_assert_mem_eq(buf, want, len);
	/* TCP over IPv6. */
	len = ipv6_tcp(77);
	memcpy(want, buf, len);
	buf[54 + 16] = buf[54 + 17] = 0x99;
	ck_assert(rocemu_eth_parse(&f, buf, len));
	rocemu_csum_fill(buf, &f, true, true);
	ck_assert_mem_eq(buf, want, len);
	/* A UDP sum of 0 goes as 0xffff: the last two payload bytes make the sum 0xffff. */
	len = ipv4_udp(BUILD_NO_VLAN, 5000, 10);
	buf[len - 2] = buf[len - 1] = buf[34 + 6] = buf[34 + 7] = 0;
	i = (uint16_t)~ref_csum(buf + 34, len - 34, ref_pseudo(buf + 14, IPPROTO_UDP, len - 34));
	buf[len - 2] = (uint8_t)((0xffff - i) >> 8);
	buf[len - 1] = (uint8_t)(0xffff - i);
	ck_assert(rocemu_eth_parse(&f, buf, len));
	rocemu_csum_fill(buf, &f, true, true);
	ck_assert_uint_eq(buf[34 + 6], 0xff);
	ck_assert_uint_eq(buf[34 + 7], 0xff);
	ck_assert(rocemu_eth_parse(&f, buf, len));
	ck_assert(f.l4_csum_ok);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("eth_frame");
	TCase *tc = tcase_create("eth_frame");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_short);
	tcase_add_test(tc, test_ipv4_udp);
	tcase_add_test(tc, test_udp_csum_zero);
	tcase_add_test(tc, test_padding);
	tcase_add_test(tc, test_vlan_ipv4_tcp_options);
	tcase_add_test(tc, test_ipv6_tcp);
	tcase_add_test(tc, test_fragments);
	tcase_add_test(tc, test_lying_lengths);
	tcase_add_test(tc, test_lying_tcp_ipv6);
	tcase_add_test(tc, test_vxlan);
	tcase_add_test(tc, test_known_vector);
	tcase_add_test(tc, test_fill);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
