/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Reserved QP numbers (emulator/obj/reserved_qpn.c), as
 * mlx5dv_reserved_qpn_alloc and _dealloc reach them: numbers of a range of
 * their own above every QP's that no QP lookup meets, handed out
 * cyclically (a number given back is not the next one), given back only
 * by the context that holds them, each once.
 */
#include <check.h>
#include <errno.h>

#include "emulator/obj/qp.h"
#include "emulator/obj/reserved_qpn.h"
#include "net/roce/roce_hdr.h"
#include "tests/unit/fixture.h"

START_TEST(test_numbers_above_every_qp)
{
	uint32_t a, b;

	ck_assert_int_eq(rocemu_reserved_qpn_alloc(fx.client, &a), 0);
	ck_assert_int_eq(rocemu_reserved_qpn_alloc(fx.client, &b), 0);
	ck_assert_uint_ge(a, ROCEMU_FIRST_RESERVED_QPN);
	ck_assert_uint_le(a, ROCEMU_QPN_MASK);
	ck_assert_uint_ne(a, b);
	ck_assert_uint_lt(fx.qp.qpn, ROCEMU_FIRST_RESERVED_QPN);
	/* Not a QP: neither the QP table nor the receive path's lookup finds it. */
	ck_assert_ptr_null(rocemu_qp_lookup(fx.client, a));
	ck_assert_int_eq(rocemu_reserved_qpn_dealloc(fx.client, a), 0);
	ck_assert_int_eq(rocemu_reserved_qpn_dealloc(fx.client, b), 0);
}
END_TEST

/* The number just given back is not handed out again next (a stale peer may still name it). */
START_TEST(test_cyclic_reuse)
{
	uint32_t a, b;

	ck_assert_int_eq(rocemu_reserved_qpn_alloc(fx.client, &a), 0);
	ck_assert_int_eq(rocemu_reserved_qpn_dealloc(fx.client, a), 0);
	ck_assert_int_eq(rocemu_reserved_qpn_alloc(fx.client, &b), 0);
	ck_assert_uint_ne(a, b);
}
END_TEST

START_TEST(test_dealloc_checks)
{
	struct rocemu_client *other = fx_client_new();
	uint32_t qpn;

	ck_assert_int_eq(rocemu_reserved_qpn_alloc(fx.client, &qpn), 0);
	/* Another context's number, a QP's number and an unknown one are not c's to give back. */
	ck_assert_int_eq(rocemu_reserved_qpn_dealloc(other, qpn), -EINVAL);
	ck_assert_int_eq(rocemu_reserved_qpn_dealloc(fx.client, fx.qp.qpn), -EINVAL);
	ck_assert_int_eq(rocemu_reserved_qpn_dealloc(fx.client, qpn + 1), -EINVAL);
	ck_assert_int_eq(rocemu_reserved_qpn_dealloc(fx.client, qpn), 0);
	/* Each once. */
	ck_assert_int_eq(rocemu_reserved_qpn_dealloc(fx.client, qpn), -EINVAL);
}
END_TEST

static Suite *reserved_qpn_suite(void)
{
	Suite *s = suite_create("reserved_qpn");
	TCase *tc = tcase_create("reserved_qpn");

	tcase_add_checked_fixture(tc, fx_setup, fx_teardown);
	tcase_add_test(tc, test_numbers_above_every_qp);
	tcase_add_test(tc, test_cyclic_reuse);
	tcase_add_test(tc, test_dealloc_checks);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return fx_suite_run(reserved_qpn_suite());
}
