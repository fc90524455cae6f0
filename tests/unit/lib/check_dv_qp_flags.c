/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * mlx5dv_create_qp's create_flags (lib/dv/mlx5dv_qp_flags.c) into the
 * vendor flags the daemon takes, on top of the default a plain create
 * has: what mlx5's create_qp and the kernel's process_vendor_flags refuse
 * and with which errno, and what each flag turns on or off.
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>

#include "lib/shim.h"
#include "lib/dv/dv.h"

/* lib/verbs/qp.c's default (scatter to CQE unless MLX5_SCATTER_TO_CQE=0): the test sets it. */
static uint32_t vendor_default;

uint32_t rocemu_qp_vendor_default(void)
{
	return vendor_default;
}

/* What create_flags give on a QP of type; *vendor is left as it was on an error. */
static int flags_of(enum ibv_qp_type type, uint32_t create_flags, uint32_t *vendor)
{
	struct ibv_qp_init_attr_ex attr = { .qp_type = type };

	*vendor = 0xdead;
	return rocemu_dv_qp_create_flags(&attr, create_flags, vendor);
}

/* No flags: the default, whichever it is. */
START_TEST(test_no_flags_keep_the_default)
{
	uint32_t vendor;

	vendor_default = ROCEMU_QP_VENDOR_SCATTER_CQE;
	ck_assert_int_eq(flags_of(IBV_QPT_RC, 0, &vendor), 0);
	ck_assert_uint_eq(vendor, ROCEMU_QP_VENDOR_SCATTER_CQE);
	vendor_default = 0;
	ck_assert_int_eq(flags_of(IBV_QPT_RC, 0, &vendor), 0);
	ck_assert_uint_eq(vendor, 0);
}
END_TEST

/* A bit mlx5dv.h has no flag for: EINVAL, as mlx5's create_qp. */
START_TEST(test_unknown_flag_einval)
{
	uint32_t vendor;

	vendor_default = ROCEMU_QP_VENDOR_SCATTER_CQE;
	ck_assert_int_eq(flags_of(IBV_QPT_RC, 1u << 31, &vendor), EINVAL);
	ck_assert_uint_eq(vendor, 0xdead);
}
END_TEST

/* DISABLE_SCATTER_TO_CQE turns the default off; ALLOW turns it on, for READ/atomic replies too. */
START_TEST(test_scatter_to_cqe_flags)
{
	uint32_t vendor;

	vendor_default = ROCEMU_QP_VENDOR_SCATTER_CQE;
	ck_assert_int_eq(flags_of(IBV_QPT_RC, MLX5DV_QP_CREATE_DISABLE_SCATTER_TO_CQE, &vendor), 0);
	ck_assert_uint_eq(vendor, 0);
	vendor_default = 0;
	ck_assert_int_eq(flags_of(IBV_QPT_RC, MLX5DV_QP_CREATE_ALLOW_SCATTER_TO_CQE, &vendor), 0);
	ck_assert_uint_eq(vendor, ROCEMU_QP_VENDOR_SCATTER_CQE | ROCEMU_QP_VENDOR_ALLOW_SCATTER_CQE);
}
END_TEST

/* Both scatter flags at once contradict each other: EINVAL. */
START_TEST(test_disable_and_allow_scatter_einval)
{
	uint32_t vendor;

	vendor_default = ROCEMU_QP_VENDOR_SCATTER_CQE;
	ck_assert_int_eq(flags_of(IBV_QPT_RC, MLX5DV_QP_CREATE_DISABLE_SCATTER_TO_CQE |
					      MLX5DV_QP_CREATE_ALLOW_SCATTER_TO_CQE, &vendor),
			 EINVAL);
	ck_assert_uint_eq(vendor, 0xdead);
}
END_TEST

/* Packet-based credits are passed on (the daemon refuses them on other types than RC). */
START_TEST(test_packet_based_credit)
{
	uint32_t vendor;

	vendor_default = ROCEMU_QP_VENDOR_SCATTER_CQE;
	ck_assert_int_eq(flags_of(IBV_QPT_RC, MLX5DV_QP_CREATE_PACKET_BASED_CREDIT_MODE, &vendor),
			 0);
	ck_assert_uint_eq(vendor, ROCEMU_QP_VENDOR_SCATTER_CQE | ROCEMU_QP_VENDOR_PACKET_BASED_CREDIT);
}
END_TEST

/* Signature pipelining needs SQD->RTS, which the device lacks: EOPNOTSUPP before the kernel is asked. */
START_TEST(test_sig_pipelining_eopnotsupp)
{
	uint32_t vendor;

	ck_assert_int_eq(flags_of(IBV_QPT_RC, MLX5DV_QP_CREATE_SIG_PIPELINING, &vendor), EOPNOTSUPP);
	ck_assert_uint_eq(vendor, 0xdead);
}
END_TEST

/* Tunnel offloads and TIR self-loopback are a raw packet QP's: EINVAL on any other type. */
START_TEST(test_raw_packet_flags)
{
	static const uint32_t raw_flags[] = {
		MLX5DV_QP_CREATE_TUNNEL_OFFLOADS,
		MLX5DV_QP_CREATE_TIR_ALLOW_SELF_LOOPBACK_UC,
		MLX5DV_QP_CREATE_TIR_ALLOW_SELF_LOOPBACK_MC,
	};
	uint32_t vendor;

	vendor_default = ROCEMU_QP_VENDOR_SCATTER_CQE;
	for (unsigned int i = 0; i < sizeof(raw_flags) / sizeof(raw_flags[0]); i++) {
		ck_assert_int_eq(flags_of(IBV_QPT_RC, raw_flags[i], &vendor), EINVAL);
		ck_assert_int_eq(flags_of(IBV_QPT_UD, raw_flags[i], &vendor), EINVAL);
		ck_assert_uint_eq(vendor, 0xdead);
		ck_assert_int_eq(flags_of(IBV_QPT_RAW_PACKET, raw_flags[i], &vendor), 0);
		ck_assert_uint_eq(vendor, ROCEMU_QP_VENDOR_SCATTER_CQE);
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("dv_qp_flags");
	TCase *tc = tcase_create("create_flags");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_no_flags_keep_the_default);
	tcase_add_test(tc, test_unknown_flag_einval);
	tcase_add_test(tc, test_scatter_to_cqe_flags);
	tcase_add_test(tc, test_disable_and_allow_scatter_einval);
	tcase_add_test(tc, test_packet_based_credit);
	tcase_add_test(tc, test_sig_pipelining_eopnotsupp);
	tcase_add_test(tc, test_raw_packet_flags);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
