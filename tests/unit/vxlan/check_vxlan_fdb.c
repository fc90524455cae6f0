/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The MACs a VXLAN wire learns (emulator/vxlan/vxlan_fdb.c): a MAC is
 * found behind the VTEP it last came from, moves when it comes from
 * another, ages out after Linux's 300 s, and a flood of new MACs never
 * grows the table past its bound: the newest are kept, the oldest go.
 */
#include <arpa/inet.h>
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "emulator/vxlan/vxlan_fdb.h"

#define SEC 1000000000ull

static struct rocemu_vxlan_port v;

static void setup(void)
{
	rocemu_vxlan_port_init(&v);
	v.on = true;
}

static void mac_of(uint8_t mac[6], unsigned int n)
{
	mac[0] = 0x02;
	mac[1] = 0x42;
	mac[2] = (uint8_t)(n >> 24);
	mac[3] = (uint8_t)(n >> 16);
	mac[4] = (uint8_t)(n >> 8);
	mac[5] = (uint8_t)n;
}

START_TEST(test_learn_move_age)
{
	const uint32_t a = inet_addr("198.18.0.2"), b = inet_addr("198.18.0.3");
	uint8_t m[6], other[6];

	mac_of(m, 1);
	mac_of(other, 2);
	ck_assert_uint_eq(rocemu_vxlan_fdb_lookup(&v, m, 10 * SEC), 0);
	rocemu_vxlan_fdb_learn(&v, m, a, 10 * SEC);
	ck_assert_uint_eq(rocemu_vxlan_fdb_lookup(&v, m, 11 * SEC), a);
	ck_assert_uint_eq(rocemu_vxlan_fdb_lookup(&v, other, 11 * SEC), 0);
	ck_assert_uint_eq(v.counters.fdb_learned, 1);
	/* Seen again behind the same VTEP: refreshed, nothing new learned. */
	rocemu_vxlan_fdb_learn(&v, m, a, 200 * SEC);
	ck_assert_uint_eq(v.counters.fdb_learned, 1);
	ck_assert_uint_eq(rocemu_vxlan_fdb_lookup(&v, m, 450 * SEC), a);
	/* Behind another: it moved. */
	rocemu_vxlan_fdb_learn(&v, m, b, 450 * SEC);
	ck_assert_uint_eq(v.counters.fdb_learned, 2);
	ck_assert_uint_eq(rocemu_vxlan_fdb_lookup(&v, m, 451 * SEC), b);
	ck_assert_uint_eq(rocemu_vxlan_fdb_live(&v, 451 * SEC), 1);
	/* 300 s without a frame from it: unknown again, flooded. */
	ck_assert_uint_eq(rocemu_vxlan_fdb_lookup(&v, m, 750 * SEC), 0);
	ck_assert_uint_eq(rocemu_vxlan_fdb_live(&v, 750 * SEC), 0);
}
END_TEST

START_TEST(test_bounded)
{
	const uint32_t a = inet_addr("198.18.0.2");
	unsigned int n, found = 0, newest_found = 0;
	uint8_t m[6];

	/* Ten times the table's size in new MACs, one a microsecond. */
	for (n = 0; n < 10 * ROCEMU_VXLAN_FDB_SIZE; n++) {
		mac_of(m, n);
		rocemu_vxlan_fdb_learn(&v, m, a, SEC + n * 1000ull);
	}
	ck_assert_uint_le(rocemu_vxlan_fdb_live(&v, 2 * SEC), ROCEMU_VXLAN_FDB_SIZE);
	for (n = 0; n < 10 * ROCEMU_VXLAN_FDB_SIZE; n++) {
		mac_of(m, n);
		if (rocemu_vxlan_fdb_lookup(&v, m, 2 * SEC) == a) {
			found++;
			newest_found += n >= 9 * ROCEMU_VXLAN_FDB_SIZE;
		}
	}
	ck_assert_uint_eq(found, rocemu_vxlan_fdb_live(&v, 2 * SEC));
	/* Most slots hold one of the latest MACs: the oldest of its probe is what a new one replaces. */
	ck_assert_uint_ge(found, ROCEMU_VXLAN_FDB_SIZE * 3 / 4);
	ck_assert_uint_ge(newest_found, found / 2);
	/* The newest of all is there. */
	mac_of(m, 10 * ROCEMU_VXLAN_FDB_SIZE - 1);
	ck_assert_uint_eq(rocemu_vxlan_fdb_lookup(&v, m, 2 * SEC), a);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("vxlan_fdb");
	TCase *tc = tcase_create("fdb");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(tc, setup, NULL);
	tcase_add_test(tc, test_learn_move_age);
	tcase_add_test(tc, test_bounded);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
