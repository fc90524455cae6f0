/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The VXLAN header (net/vxlan/vxlan_hdr.c): built as RFC 7348 lays it out
 * (I flag, VNI in bytes 4-6, reserved bytes zero), parsed back with the
 * reserved bits ignored, refused when short or without the I flag; and
 * the outer source port's index: the same for every frame of a flow,
 * within the count, and spread over it by the flow's addresses.
 */
#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <linux/if_ether.h>
#include <netinet/ip.h>
#include <stdlib.h>
#include <string.h>

#include "net/vxlan/vxlan_hdr.h"
#include "tests/unit/net/eth_build.h"

START_TEST(test_build_layout)
{
	static const uint8_t want[8] = { 0x08, 0, 0, 0, 0x12, 0x34, 0x56, 0 };
	struct rocemu_vxlan_hdr h;

	ck_assert_uint_eq(ROCEMU_VXLAN_HLEN, 8);
	memset(&h, 0xff, sizeof(h));
	rocemu_vxlan_hdr_build(&h, 0x123456);
	ck_assert_mem_eq(&h, want, sizeof(want));
}
END_TEST

START_TEST(test_parse)
{
	uint8_t d[8] = { 0x08, 0, 0, 0, 0xff, 0xff, 0xff, 0 };
	uint32_t vni = 0;

	ck_assert_int_eq(rocemu_vxlan_hdr_parse(d, sizeof(d), &vni), 0);
	ck_assert_uint_eq(vni, 0xffffff);
	/* Reserved bits and other flags: ignored on receipt (RFC 7348 section 5). */
	memset(d, 0xff, sizeof(d));
	d[4] = 0;
	d[5] = 0;
	d[6] = 42;
	ck_assert_int_eq(rocemu_vxlan_hdr_parse(d, sizeof(d), &vni), 0);
	ck_assert_uint_eq(vni, 42);
	/* No I flag: the VNI means nothing. */
	d[0] = 0xf7;
	ck_assert_int_eq(rocemu_vxlan_hdr_parse(d, sizeof(d), &vni), -EINVAL);
	d[0] = 0x08;
	ck_assert_int_eq(rocemu_vxlan_hdr_parse(d, 7, &vni), -EINVAL);
	ck_assert_int_eq(rocemu_vxlan_hdr_parse(d, 0, &vni), -EINVAL);
}
END_TEST

/* An Ethernet + IPv4 frame from saddr to daddr (host order), protocol proto. */
static void ipv4_frame(uint8_t *f, size_t len, uint32_t saddr, uint32_t daddr, uint8_t proto)
{
	frame_iphdr *ip = (frame_iphdr *)(f + ETH_HLEN);

	memset(f, 0, len);
	memcpy(f, "\x02\x00\x00\x00\x00\x01\x02\x00\x00\x00\x00\x02", 12);
	f[12] = ETH_P_IP >> 8;
	f[13] = ETH_P_IP & 0xff;
	ip->version = 4;
	ip->ihl = 5;
	ip->protocol = proto;
	ip->saddr = htonl(saddr);
	ip->daddr = htonl(daddr);
}

START_TEST(test_sport_index)
{
	uint8_t f[128], g[128];
	unsigned int seen[16] = { 0 }, used = 0, i;

	/* One flow, one port, whatever its payload. */
	ipv4_frame(f, sizeof(f), 0xc6120001, 0xc6120002, IPPROTO_ICMP);
	memcpy(g, f, sizeof(g));
	g[100] = 0x55;
	ck_assert_uint_eq(rocemu_vxlan_sport_index(f, sizeof(f), 16),
			  rocemu_vxlan_sport_index(g, sizeof(g), 16));
	/* 256 flows (by source address) reach most of 16 ports, never past the last. */
	for (i = 0; i < 256; i++) {
		unsigned int idx;

		ipv4_frame(f, sizeof(f), 0xc6120000 + i, 0xc6120002, IPPROTO_UDP);
		idx = rocemu_vxlan_sport_index(f, sizeof(f), 16);
		ck_assert_uint_lt(idx, 16);
		seen[idx]++;
	}
	for (i = 0; i < 16; i++)
		used += seen[i] > 0;
	ck_assert_uint_ge(used, 14);
	/* Frames too short for an IPv4 header, even for an Ethernet one, still get a port. */
	ck_assert_uint_lt(rocemu_vxlan_sport_index(f, ETH_HLEN + 3, 16), 16);
	ck_assert_uint_lt(rocemu_vxlan_sport_index(f, 3, 16), 16);
	ck_assert_uint_eq(rocemu_vxlan_sport_index(f, sizeof(f), 1), 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("vxlan_hdr");
	TCase *tc = tcase_create("hdr");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_build_layout);
	tcase_add_test(tc, test_parse);
	tcase_add_test(tc, test_sport_index);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
