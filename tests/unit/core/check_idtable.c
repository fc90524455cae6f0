/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Handle tables (emulator/base/idtable.c): next-fit ids; a cyclic table (QP
 * numbers) hands out every id of its range before one comes back, however
 * few objects live at a time, and skips the ids still held when it wraps.
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>

#include "emulator/base/idtable.h"

#define FIRST 0x100u
#define MAX 1024u

/* Create and destroy one object at a time: the ids of the first MAX are
 * FIRST, FIRST + 1, ..., and the next is FIRST again. */
START_TEST(test_cyclic_goes_round_the_range)
{
	struct rocemu_idtable t;
	int obj;
	uint32_t id, i;

	rocemu_idtable_init_cyclic(&t, FIRST, MAX);
	for (i = 0; i < 2 * MAX + 3; i++) {
		ck_assert_int_eq(rocemu_idtable_alloc(&t, &obj, &id), 0);
		ck_assert_uint_eq(id, FIRST + i % MAX);
		ck_assert_ptr_eq(rocemu_idtable_get(&t, id), &obj);
		rocemu_idtable_remove(&t, id);
		ck_assert_ptr_null(rocemu_idtable_get(&t, id));
	}
	rocemu_idtable_free(&t);
	ck_assert(t.cyclic);
}
END_TEST

/* Ids held across the wrap are skipped; a full table is ENOMEM. */
START_TEST(test_cyclic_skips_held_ids)
{
	struct rocemu_idtable t;
	int held, obj;
	uint32_t id, first_held, second_held, i;

	rocemu_idtable_init_cyclic(&t, FIRST, MAX);
	ck_assert_int_eq(rocemu_idtable_alloc(&t, &held, &first_held), 0);
	ck_assert_int_eq(rocemu_idtable_alloc(&t, &held, &second_held), 0);
	for (i = 2; i < MAX; i++) {
		ck_assert_int_eq(rocemu_idtable_alloc(&t, &obj, &id), 0);
		rocemu_idtable_remove(&t, id);
	}
	rocemu_idtable_remove(&t, first_held);
	/* Past the wrap: FIRST, freed meanwhile, then FIRST + 2 past the one still held. */
	ck_assert_int_eq(rocemu_idtable_alloc(&t, &obj, &id), 0);
	ck_assert_uint_eq(id, FIRST);
	ck_assert_int_eq(rocemu_idtable_alloc(&t, &obj, &id), 0);
	ck_assert_uint_eq(id, FIRST + 2);
	for (i = 3; i < MAX; i++)
		ck_assert_int_eq(rocemu_idtable_alloc(&t, &obj, &id), 0);
	ck_assert_int_eq(rocemu_idtable_alloc(&t, &obj, &id), -ENOMEM);
	ck_assert_ptr_eq(rocemu_idtable_get(&t, second_held), &held);
	rocemu_idtable_free(&t);
}
END_TEST

/* A table that is not cyclic reuses its ids once its slots went round (64 at first). */
START_TEST(test_plain_wraps_at_its_slots)
{
	struct rocemu_idtable t;
	int obj;
	uint32_t id, i;

	rocemu_idtable_init(&t, 1, MAX);
	for (i = 0; i < 64; i++) {
		ck_assert_int_eq(rocemu_idtable_alloc(&t, &obj, &id), 0);
		ck_assert_uint_eq(id, 1 + i);
		rocemu_idtable_remove(&t, id);
	}
	ck_assert_int_eq(rocemu_idtable_alloc(&t, &obj, &id), 0);
	ck_assert_uint_eq(id, 1);
	rocemu_idtable_free(&t);
}
END_TEST

static Suite *idtable_suite(void)
{
	Suite *s = suite_create("idtable");
	TCase *tc = tcase_create("idtable");

	tcase_add_test(tc, test_cyclic_goes_round_the_range);
	tcase_add_test(tc, test_cyclic_skips_held_ids);
	tcase_add_test(tc, test_plain_wraps_at_its_slots);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(idtable_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
