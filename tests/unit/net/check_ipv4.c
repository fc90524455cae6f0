/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The IPv4 and UDP headers of RoCEv2 datagrams (net/roce/ipv4.c) against
 * known vectors: the IPv4 header of RFC 1071's worked example as
 * Wikipedia's "IPv4 header checksum" gives it (checksum 0xb861), a UDP
 * checksum over an odd-length payload, and a sum of zero sent as 0xffff
 * (RFC 768), the vectors computed apart from the code under test.
 */
#include <arpa/inet.h>
#include <check.h>
#include <netinet/ip.h>
#include <netinet/udp.h>
#include <stdlib.h>

#include "net/roce/icrc.h"
#include "net/roce/ipv4.h"

START_TEST(test_ipv4_header)
{
	const struct rocemu_ipv4_udp flow = { .saddr = inet_addr("192.168.0.1"),
					      .daddr = inet_addr("192.168.0.199") };
	const struct rocemu_ipv4_fields f = { .id = 0, .df = true, .ttl = 64, .tos = 0 };
	struct iphdr ip;

	/* 0x73 bytes in all: 20 of IPv4, 8 of UDP, 87 of payload. */
	rocemu_ipv4_header(&ip, &flow, &f, 87);
	ck_assert_uint_eq(ip.version, 4);
	ck_assert_uint_eq(ip.ihl, 5);
	ck_assert_uint_eq(ntohs(ip.tot_len), 0x73);
	ck_assert_uint_eq(ntohs(ip.frag_off), IP_DF);
	ck_assert_uint_eq(ip.protocol, IPPROTO_UDP);
	ck_assert_uint_eq(ntohs(ip.check), 0xb861);
}
END_TEST

START_TEST(test_ipv4_fields)
{
	const struct rocemu_ipv4_udp flow = { .saddr = inet_addr("192.0.2.1"),
					      .daddr = inet_addr("192.0.2.2") };
	const struct rocemu_ipv4_fields f = { .id = 0x1234, .df = false, .ttl = 1, .tos = 0x60 };
	struct iphdr ip;

	rocemu_ipv4_header(&ip, &flow, &f, 0);
	ck_assert_uint_eq(ntohs(ip.id), 0x1234);
	ck_assert_uint_eq(ip.frag_off, 0);
	ck_assert_uint_eq(ip.ttl, 1);
	ck_assert_uint_eq(ip.tos, 0x60);
	ck_assert_uint_eq(ntohs(ip.tot_len), 28);
	ck_assert_uint_eq(ip.saddr, flow.saddr);
	ck_assert_uint_eq(ip.daddr, flow.daddr);
}
END_TEST

static struct rocemu_ipv4_udp udp_flow(void)
{
	return (struct rocemu_ipv4_udp){ .saddr = inet_addr("192.0.2.1"),
					 .daddr = inet_addr("192.0.2.2") };
}

/* A UDP header of the test's flow for len bytes of payload, its checksum field set to junk. */
static struct udphdr udp_of(size_t len)
{
	return (struct udphdr){ .source = htons(0xc123), .dest = htons(4791),
				.len = htons((uint16_t)(sizeof(struct udphdr) + len)),
				.check = 0x5a5a };
}

START_TEST(test_udp_checksum_odd_payload)
{
	const uint8_t payload[13] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13 };
	const struct udphdr udp = udp_of(sizeof(payload));
	const struct rocemu_ipv4_udp flow = udp_flow();

	/* The header's own checksum field counts as zero. */
	ck_assert_uint_eq(ntohs(rocemu_udp_checksum(&flow, &udp, payload, sizeof(payload))),
			  0x76bb);
}
END_TEST

START_TEST(test_udp_checksum_zero_sent_as_ffff)
{
	/* The last two bytes make the one's complement sum 0xffff: the checksum would be 0. */
	const uint8_t payload[14] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 0x83, 0xb9 };
	const struct udphdr udp = udp_of(sizeof(payload));
	const struct rocemu_ipv4_udp flow = udp_flow();

	ck_assert_uint_eq(rocemu_udp_checksum(&flow, &udp, payload, sizeof(payload)), 0xffff);
}
END_TEST

static Suite *ipv4_suite(void)
{
	Suite *s = suite_create("ipv4");
	TCase *tc = tcase_create("ipv4");

	tcase_add_test(tc, test_ipv4_header);
	tcase_add_test(tc, test_ipv4_fields);
	tcase_add_test(tc, test_udp_checksum_odd_payload);
	tcase_add_test(tc, test_udp_checksum_zero_sent_as_ffff);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(ipv4_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
