/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Checks of the e2e programs that print one line each: "ok: ..." or
 * "FAIL: ...", the failures counted in `failed` for the "N failed" line.
 */
#ifndef ROCEMU_TESTS_E2E_CHECK_LINE_H
#define ROCEMU_TESTS_E2E_CHECK_LINE_H

#include <stdio.h>

static int failed;

#define CHECK(cond, ...)						\
	do {								\
		if (cond) {						\
			printf("ok: ");					\
		} else {						\
			printf("FAIL: ");				\
			failed++;					\
		}							\
		printf(__VA_ARGS__);					\
		printf("\n");						\
	} while (0)

#endif /* ROCEMU_TESTS_E2E_CHECK_LINE_H */
