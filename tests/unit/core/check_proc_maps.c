/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Whether a range of a process's memory is mapped (emulator/base/proc_maps.c),
 * as REG_MR asks it of the registering process: a range over adjacent
 * mappings of other rights, a hole, a page without read or write, an
 * empty or wrapping range, and a process with no maps to read.
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "emulator/base/proc_maps.h"

static uint8_t *pages;	/* three pages: read-write, read-only, read-write */
static size_t page;

static void setup(void)
{
	page = (size_t)sysconf(_SC_PAGESIZE);
	pages = mmap(NULL, 3 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ck_assert_ptr_ne(pages, MAP_FAILED);
	ck_assert_int_eq(mprotect(pages + page, page, PROT_READ), 0);
}

static void teardown(void)
{
	munmap(pages, 3 * page);
}

static int check(size_t offset, size_t len, bool need_write)
{
	return rocemu_proc_range_check(getpid(), (uintptr_t)pages + offset, len, need_write);
}

START_TEST(test_rights)
{
	ck_assert_int_eq(check(0, 3 * page, false), 0);
	ck_assert_int_eq(check(0, 3 * page, true), -EFAULT);
	ck_assert_int_eq(check(0, page, true), 0);
	ck_assert_int_eq(check(page - 1, 2, true), -EFAULT);
	ck_assert_int_eq(check(2 * page, page, true), 0);
	ck_assert_int_eq(mprotect(pages, page, PROT_NONE), 0);
	ck_assert_int_eq(check(page - 1, 1, false), -EFAULT);
	ck_assert_int_eq(check(page, 1, false), 0);
}
END_TEST

START_TEST(test_hole)
{
	ck_assert_int_eq(munmap(pages + page, page), 0);
	ck_assert_int_eq(check(0, 3 * page, false), -EFAULT);
	ck_assert_int_eq(check(0, page, false), 0);
	ck_assert_int_eq(check(2 * page, page, false), 0);
	ck_assert_int_eq(check(page + 8, 8, false), -EFAULT);
}
END_TEST

START_TEST(test_bad_ranges)
{
	ck_assert_int_eq(check(0, 0, false), -EFAULT);
	ck_assert_int_eq(rocemu_proc_range_check(getpid(), UINT64_MAX - 8, 16, false), -EFAULT);
	/* No process 0 has maps to read. */
	ck_assert_int_eq(rocemu_proc_range_check(0, (uintptr_t)pages, 8, false), -ENOENT);
}
END_TEST

static Suite *proc_maps_suite(void)
{
	Suite *s = suite_create("proc_maps");
	TCase *tc = tcase_create("proc_maps");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_rights);
	tcase_add_test(tc, test_hole);
	tcase_add_test(tc, test_bad_ranges);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(proc_maps_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
