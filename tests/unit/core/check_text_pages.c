/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Text reports in pages (emulator/base/text_pages.c): a report larger than any
 * message is read whole, page by page, from the snapshot taken at offset 0
 * even when the report changes meanwhile; offsets with no snapshot of the
 * op behind them are refused.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emulator/base/text_pages.h"

/* The fake report: `lines` numbered lines, each mentioning the generation it was made in. */
static unsigned int lines, generation, renders;

static int render_lines(struct rocemu_emu *emu, char *buf, size_t size)
{
	size_t used = 0;
	unsigned int i;
	int n;

	renders++;
	for (i = 0; i < lines; i++) {
		n = snprintf(buf + used, size - used, "line %06u of generation %u\n", i, generation);
		if (n < 0 || (size_t)n >= size - used)
			return -ENOSPC;
		used += (size_t)n;
	}
	if (used == size)
		return -ENOSPC;
	buf[used] = '\0';
	return (int)used + 1;
}

static struct rocemu_text_pages pages;
static union {
	struct rocemu_text_resp resp;
	char bytes[ROCEMU_CTRL_MSG_MAX];
} page;

/* Serve op's page at offset into page; returns as rocemu_text_pages_serve, *len the body size. */
static int serve(uint16_t op, uint64_t offset, uint32_t *len)
{
	struct rocemu_text_req req = { .offset = offset };

	return rocemu_text_pages_serve(&pages, NULL, op, render_lines, &req, &page.resp, len);
}

static void setup(void)
{
	memset(&pages, 0, sizeof(pages));
	lines = 0;
	generation = 0;
	renders = 0;
}

static void teardown(void)
{
	rocemu_text_pages_free(&pages);
}

/* Read the whole report of op; returns it (malloc'd, NUL-terminated), the page count in *count. */
static char *read_all(uint16_t op, unsigned int *count)
{
	uint64_t total = 0, offset = 0;
	char *text = NULL;
	uint32_t len;

	*count = 0;
	do {
		ck_assert_int_eq(serve(op, offset, &len), 0);
		ck_assert_uint_ge(len, sizeof(page.resp));
		ck_assert_uint_le(len, ROCEMU_CTRL_MSG_MAX);
		if (!text) {
			total = page.resp.total;
			text = malloc(total + 1);
			ck_assert_ptr_nonnull(text);
		}
		ck_assert_uint_eq(page.resp.total, total);
		memcpy(text + offset, page.resp.text, len - sizeof(page.resp));
		offset += len - sizeof(page.resp);
		(*count)++;
		generation++;	/* the report changes between pages: the snapshot must not */
	} while (offset < total);
	text[total] = '\0';
	return text;
}

START_TEST(test_small_report_one_page)
{
	unsigned int count;
	char *text;

	lines = 3;
	text = read_all(ROCEMU_OP_STATUS, &count);
	ck_assert_uint_eq(count, 1);
	ck_assert_str_eq(text, "line 000000 of generation 0\nline 000001 of generation 0\n"
			       "line 000002 of generation 0\n");
	ck_assert_ptr_null(pages.text);	/* read to the end: dropped */
	free(text);
}
END_TEST

/* 30000 lines of 28 bytes: 840 KB, above what the render's first buffer and one page hold. */
START_TEST(test_large_report_from_one_snapshot)
{
	unsigned int count, i;
	char *text, want[64], *line;

	lines = 30000;
	text = read_all(ROCEMU_OP_STATUS, &count);
	ck_assert_uint_eq(strlen(text), 28u * lines);
	ck_assert_uint_eq(count, (28u * lines + ROCEMU_TEXT_PAGE_MAX - 1) / ROCEMU_TEXT_PAGE_MAX);
	ck_assert_uint_eq(renders, 5);	/* 64 KiB doubled to 1 MiB, once */
	for (i = 0, line = text; i < lines; i++, line += 28) {
		snprintf(want, sizeof(want), "line %06u of generation 0\n", i);
		ck_assert_int_eq(strncmp(line, want, 28), 0);
	}
	free(text);
}
END_TEST

START_TEST(test_offset_without_snapshot_refused)
{
	uint32_t len;

	lines = 30000;
	ck_assert_int_eq(serve(ROCEMU_OP_STATUS, 10, &len), -EINVAL);
	ck_assert_int_eq(serve(ROCEMU_OP_STATUS, 0, &len), 0);
	/* The snapshot is STATUS's: a STATS page from it is refused, as is one past its end. */
	ck_assert_int_eq(serve(ROCEMU_OP_STATS, 10, &len), -EINVAL);
	ck_assert_int_eq(serve(ROCEMU_OP_STATUS, page.resp.total + 1, &len), -EINVAL);
}
END_TEST

/* Offset 0 again starts over with a new snapshot. */
START_TEST(test_restart_takes_new_snapshot)
{
	uint32_t len;

	lines = 30000;
	ck_assert_int_eq(serve(ROCEMU_OP_STATUS, 0, &len), 0);
	lines = 1;
	generation = 9;
	ck_assert_int_eq(serve(ROCEMU_OP_STATUS, 0, &len), 0);
	ck_assert_uint_eq(page.resp.total, 28);
	ck_assert_int_eq(memcmp(page.resp.text, "line 000000 of generation 9\n", 28), 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("text_pages");
	TCase *tc = tcase_create("pages");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_small_report_one_page);
	tcase_add_test(tc, test_large_report_from_one_snapshot);
	tcase_add_test(tc, test_offset_without_snapshot_refused);
	tcase_add_test(tc, test_restart_takes_new_snapshot);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
