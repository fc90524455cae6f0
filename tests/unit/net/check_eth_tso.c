/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * TCP segmentation offload (net/eth/tso.c): a 64 KiB payload cut behind
 * IPv4 (with a VLAN tag) and IPv6 headers, each segment compared byte for
 * byte with one the test builds from scratch with eth_build.c (lengths,
 * IPv4 IDs, sequence numbers, flags, checksums summed apart); the headers
 * and sizes refused with EINVAL, and the callbacks' errors passed on.
 */
#include <check.h>
#include <errno.h>
#include <linux/if_ether.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include "eth_build.h"
#include "net/eth/tso.h"

#define PAYLOAD (64 * 1024)
#define MSS 1460
#define FLAGS 0x99	/* CWR, ACK, PSH, FIN */
#define SEQ 0xffff0000u	/* wraps within the send */

static uint8_t payload[PAYLOAD];
static uint8_t frame[MSS + 256];

struct run {
	bool v6;
	int vlan_tci;
	unsigned int segments;
	uint32_t sent;
	int gather_err, emit_err;
};

/* The headers of the segment of n payload bytes at off, as the model builds them; their length. */
static size_t model_headers(const struct run *r, uint8_t *p, uint32_t off, uint32_t n, bool last)
{
	size_t l2 = build_eth(p, r->vlan_tci, r->v6 ? ETH_P_IPV6 : ETH_P_IP), l3;
	uint8_t flags = FLAGS;

	if (r->v6)
		l3 = build_ipv6(p + l2, IPPROTO_TCP, (uint16_t)(28 + n), 0, 0x12345, "fe80::1",
				"fe80::2");
	else
		l3 = build_ipv4(p + l2, 6, IPPROTO_TCP, (uint16_t)(24 + 28 + n),
				(uint16_t)(0xfff0 + off / MSS), 0x4000, "10.1.0.1", "10.1.0.2");
	if (off)
		flags &= 0x7f;
	if (!last)
		flags &= 0xff & ~0x09;
	return l2 + l3 + build_tcp(p + l2 + l3, 5001, 6001, SEQ + off, flags, 7);
}

static int gather(void *arg, uint32_t off, uint8_t *dst, uint32_t len)
{
	struct run *r = arg;

	if (r->gather_err)
		return r->gather_err;
	ck_assert_uint_le(off + len, PAYLOAD);
	memcpy(dst, payload + off, len);
	return 0;
}

static int emit(void *arg, const uint8_t *seg, uint32_t len)
{
	struct run *r = arg;
	uint8_t want[sizeof(frame)];
	uint32_t n = PAYLOAD - r->sent < MSS ? PAYLOAD - r->sent : MSS;
	size_t hl = model_headers(r, want, r->sent, n, r->sent + n == PAYLOAD);

	if (r->emit_err)
		return r->emit_err;
	memcpy(want + hl, payload + r->sent, n);
	ref_l4_csum(want + hl - 28 - (r->v6 ? 40 : 24), want + hl - 28, IPPROTO_TCP, 28 + n);
	ck_assert_uint_eq(len, hl + n);
	ck_assert_mem_eq(seg, want, len);
	r->sent += n;
	r->segments++;
	return 0;
}

/* Segment the 64 KiB payload behind r's headers; rocemu_tso's return. */
static int run(struct run *r)
{
	const struct rocemu_tso_io io = { .gather = gather, .emit = emit, .arg = r };
	uint8_t hdr[256];
	size_t hl = model_headers(r, hdr, 0, PAYLOAD - 24 - 28 - 40, true);

	/* The whole send's headers: its IP length and flags, checksums not summed. */
	if (!r->v6)
		hdr[hl - 28 - 24 + 10] ^= 0x5a;
	return rocemu_tso(hdr, (uint32_t)hl, PAYLOAD, MSS, frame, sizeof(frame), &io);
}

static void setup(void)
{
	uint32_t i;

	for (i = 0; i < PAYLOAD; i++)
		payload[i] = (uint8_t)(i * 31 + (i >> 8));
}

START_TEST(test_ipv4_vlan)
{
	struct run r = { .v6 = false, .vlan_tci = 0x2005 };

	ck_assert_int_eq(run(&r), 0);
	ck_assert_uint_eq(r.sent, PAYLOAD);
	ck_assert_uint_eq(r.segments, (PAYLOAD + MSS - 1) / MSS);
}
END_TEST

START_TEST(test_ipv6)
{
	struct run r = { .v6 = true, .vlan_tci = BUILD_NO_VLAN };

	ck_assert_int_eq(run(&r), 0);
	ck_assert_uint_eq(r.sent, PAYLOAD);
	ck_assert_uint_eq(r.segments, (PAYLOAD + MSS - 1) / MSS);
}
END_TEST

START_TEST(test_io_errors)
{
	struct run r = { .vlan_tci = BUILD_NO_VLAN, .gather_err = -EFAULT };

	ck_assert_int_eq(run(&r), -EFAULT);
	ck_assert_uint_eq(r.segments, 0);
	r = (struct run){ .vlan_tci = BUILD_NO_VLAN, .emit_err = -ENOBUFS };
	ck_assert_int_eq(run(&r), -ENOBUFS);
}
END_TEST

static int count(void *arg, const uint8_t *seg, uint32_t len)
{
	(void)seg;
	*(uint32_t *)arg += len;
	return 0;
}

static int no_gather(void *arg, uint32_t off, uint8_t *dst, uint32_t len)
{
	(void)arg, (void)off, (void)dst, (void)len;
	return -EIO;
}

START_TEST(test_refused)
{
	uint32_t bytes = 0;
	const struct rocemu_tso_io io = { .gather = no_gather, .emit = count, .arg = &bytes };
	uint8_t hdr[128];
	size_t l2 = build_eth(hdr, BUILD_NO_VLAN, ETH_P_IP);
	size_t hl = l2 + build_ipv4(hdr + l2, 5, IPPROTO_TCP, 1000, 1, 0, "10.0.0.1", "10.0.0.2");

	hl += build_tcp(hdr + hl, 1, 2, 3, 0x10, 5);
	ck_assert_int_eq(rocemu_tso(hdr, (uint32_t)hl, 100, 0, frame, sizeof(frame), &io), -EINVAL);
	/* Headers claiming more than hdr_len, or ending before it. */
	ck_assert_int_eq(rocemu_tso(hdr, (uint32_t)hl - 4, 100, 10, frame, sizeof(frame), &io),
			 -EINVAL);
	ck_assert_int_eq(rocemu_tso(hdr, (uint32_t)hl + 4, 100, 10, frame, sizeof(frame), &io),
			 -EINVAL);
	/* A frame too small for one segment. */
	ck_assert_int_eq(rocemu_tso(hdr, (uint32_t)hl, 100, 10, frame, (uint32_t)hl + 9, &io),
			 -EINVAL);
	/* A fragment. */
	build_ipv4(hdr + l2, 5, IPPROTO_TCP, 1000, 1, 0x2000, "10.0.0.1", "10.0.0.2");
	ck_assert_int_eq(rocemu_tso(hdr, (uint32_t)hl, 100, 10, frame, sizeof(frame), &io), -EINVAL);
	/* UDP, not TCP. */
	build_ipv4(hdr + l2, 5, IPPROTO_UDP, 1000, 1, 0, "10.0.0.1", "10.0.0.2");
	build_udp(hdr + l2 + 20, 1, 2, 980);
	ck_assert_int_eq(rocemu_tso(hdr, (uint32_t)hl, 100, 10, frame, sizeof(frame), &io), -EINVAL);
	/* Not IP. */
	build_eth(hdr, BUILD_NO_VLAN, ETH_P_ARP);
	ck_assert_int_eq(rocemu_tso(hdr, (uint32_t)hl, 100, 10, frame, sizeof(frame), &io), -EINVAL);
	/* IPv6 with an extension header first. */
	build_eth(hdr, BUILD_NO_VLAN, ETH_P_IPV6);
	build_ipv6(hdr + l2, 0, 1000, 0, 0, "::1", "::2");
	build_tcp(hdr + l2 + 40, 1, 2, 3, 0x10, 5);
	ck_assert_int_eq(rocemu_tso(hdr, (uint32_t)l2 + 60, 100, 10, frame, sizeof(frame), &io),
			 -EINVAL);
	/* Shorter than Ethernet. */
	ck_assert_int_eq(rocemu_tso(hdr, 10, 100, 10, frame, sizeof(frame), &io), -EINVAL);
	ck_assert_uint_eq(bytes, 0);
	/* No payload: one segment, the headers, nothing gathered. */
	hdr[l2 + 6] = IPPROTO_TCP;
	ck_assert_int_eq(rocemu_tso(hdr, (uint32_t)l2 + 60, 0, 10, frame, sizeof(frame), &io), 0);
	ck_assert_uint_eq(bytes, l2 + 60);
	ck_assert_uint_eq(frame[l2 + 4], 0);
	ck_assert_uint_eq(frame[l2 + 5], 20);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("eth_tso");
	TCase *tc = tcase_create("eth_tso");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(tc, setup, NULL);
	tcase_add_test(tc, test_ipv4_vlan);
	tcase_add_test(tc, test_ipv6);
	tcase_add_test(tc, test_io_errors);
	tcase_add_test(tc, test_refused);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
