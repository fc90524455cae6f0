/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Per-client limits (emulator/core/limits.c): ROCEMU_LIMITS parsed over the
 * defaults or refused with a reason; each charge counted against the
 * account's limits and the device's with the kernel's errno (EAGAIN,
 * ENOMEM, EMFILE), nothing held after a refusal, a change refused as a
 * whole; an account shared by a process's connections and gone with its
 * last charge.
 */
#include <check.h>
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "emulator/core/emu.h"
#include "emulator/core/limits.h"

static struct rocemu_emu emu;
static struct rocemu_device dev;

static void setup(void)
{
	memset(&emu, 0, sizeof(emu));
	memset(&dev, 0, sizeof(dev));
	rocemu_list_init(&emu.accounts);
	rocemu_limits_default(&emu.limits);
	emu.limits.fds = 4;
}

static struct rocemu_account *account(pid_t pid)
{
	struct rocemu_account *a = rocemu_account_of(&emu, pid, "check_limits");

	ck_assert_ptr_nonnull(a);
	return a;
}

START_TEST(test_parse)
{
	struct rocemu_limits l;
	char err[160];

	rocemu_limits_default(&l);
	ck_assert_uint_eq(l.objs[ROCEMU_RES_QP], 8192);
	ck_assert_uint_eq(l.mem, 1ull << 30);
	ck_assert_int_eq(rocemu_limits_parse("qp=16384,mem=4G,cm_id=max,fds=100", &l, err,
					     sizeof(err)), 0);
	ck_assert_uint_eq(l.objs[ROCEMU_RES_QP], 16384);
	ck_assert_uint_eq(l.mem, 4ull << 30);
	ck_assert_uint_eq(l.objs[ROCEMU_RES_CM_ID], ROCEMU_LIMIT_NONE);
	ck_assert_uint_eq(l.fds, 100);
	ck_assert_uint_eq(l.objs[ROCEMU_RES_CQ], 8192);
	ck_assert_int_eq(rocemu_limits_parse("", &l, err, sizeof(err)), 0);
	ck_assert_int_eq(rocemu_limits_parse("qps=1", &l, err, sizeof(err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "\"qps\" is no limit"));
	ck_assert_int_eq(rocemu_limits_parse("qp=1k", &l, err, sizeof(err)), -EINVAL);
	ck_assert_int_eq(rocemu_limits_parse("qp", &l, err, sizeof(err)), -EINVAL);
	ck_assert_int_eq(rocemu_limits_parse("mem=-1", &l, err, sizeof(err)), -EINVAL);
	ck_assert_int_eq(rocemu_limits_parse("mem=1T", &l, err, sizeof(err)), -EINVAL);
	ck_assert_int_eq(rocemu_limits_parse("mem=99999999999G", &l, err, sizeof(err)), -EINVAL);
}
END_TEST

START_TEST(test_objects)
{
	struct rocemu_account *a = account(100);
	struct rocemu_charge ch[3];

	emu.limits.objs[ROCEMU_RES_CQ] = 2;
	ck_assert_int_eq(rocemu_charge_account(a, &dev, &ch[0], ROCEMU_RES_CQ, ROCEMU_OBJ_ONLY), 0);
	ck_assert_int_eq(rocemu_charge_account(a, &dev, &ch[1], ROCEMU_RES_CQ, ROCEMU_OBJ_ONLY), 0);
	ck_assert_int_eq(rocemu_charge_account(a, &dev, &ch[2], ROCEMU_RES_CQ, ROCEMU_OBJ_ONLY),
			 -EAGAIN);
	ck_assert_uint_eq(a->objs[ROCEMU_RES_CQ], 2);
	ck_assert_uint_eq(dev.objs[ROCEMU_RES_CQ], 2);
	/* Another process has limits of its own; the device's are everyone's. */
	dev.objs[ROCEMU_RES_CQ] = ROCEMU_MAX_CQ;
	ck_assert_int_eq(rocemu_charge_account(account(101), &dev, &ch[2], ROCEMU_RES_CQ,
					       ROCEMU_OBJ_ONLY), -ENOMEM);
	dev.objs[ROCEMU_RES_CQ] = 2;
	rocemu_uncharge(&ch[1]);
	ck_assert_int_eq(rocemu_charge_account(a, &dev, &ch[1], ROCEMU_RES_CQ, ROCEMU_OBJ_ONLY), 0);
	rocemu_uncharge(&ch[0]);
	rocemu_uncharge(&ch[1]);
	ck_assert_uint_eq(dev.objs[ROCEMU_RES_CQ], 0);
	ck_assert(rocemu_list_empty(&emu.accounts));
}
END_TEST

START_TEST(test_amounts)
{
	struct rocemu_account *a = account(100);
	struct rocemu_charge conn, ring, mr;

	a->memlock = 8192;
	emu.limits.mem = 16384;
	ck_assert_int_eq(rocemu_charge_account(a, NULL, &conn, ROCEMU_RES_CONN,
					       (struct rocemu_amount){ .fds = 3 }), 0);
	ck_assert_int_eq(rocemu_charge_change(&conn, (struct rocemu_amount){ .fds = 5 }), -EMFILE);
	ck_assert_uint_eq(a->used.fds, 3);
	ck_assert_int_eq(rocemu_charge_account(a, NULL, &ring, ROCEMU_RES_CQ,
					       rocemu_ring_amount(8192)), 0);
	/* Past RLIMIT_MEMLOCK, though within the daemon's memory: ENOMEM, nothing held. */
	ck_assert_int_eq(rocemu_charge_account(a, NULL, &mr, ROCEMU_RES_MR,
					       (struct rocemu_amount){ .pinned = 4096 }), -ENOMEM);
	ck_assert_uint_eq(a->objs[ROCEMU_RES_MR], 0);
	ck_assert_uint_eq(a->used.pinned, 8192);
	/* A resize past the daemon's memory: refused whole. */
	a->memlock = ROCEMU_LIMIT_NONE;
	ck_assert_int_eq(rocemu_charge_change(&ring, rocemu_ring_amount(32768)), -ENOMEM);
	ck_assert_uint_eq(a->used.mem, 8192);
	ck_assert_int_eq(rocemu_charge_change(&ring, rocemu_ring_amount(16384)), 0);
	ck_assert_uint_eq(a->used.mem, 16384);
	ck_assert_int_eq(rocemu_charge_account(a, NULL, &mr, ROCEMU_RES_MR,
					       (struct rocemu_amount){ .pinned = 1ull << 40 }), 0);
	rocemu_uncharge(&mr);
	rocemu_uncharge(&ring);
	ck_assert_uint_eq(a->used.mem, 0);
	ck_assert_uint_eq(a->used.pinned, 0);
	ck_assert_ptr_eq(account(100), a);
	rocemu_uncharge(&conn);
	ck_assert(rocemu_list_empty(&emu.accounts));
	/* A charge refused on a new account leaves none behind. */
	ck_assert_int_eq(rocemu_charge_account(account(102), NULL, &conn, ROCEMU_RES_CONN,
					       (struct rocemu_amount){ .fds = 5 }), -EMFILE);
	ck_assert(rocemu_list_empty(&emu.accounts));
}
END_TEST

static Suite *limits_suite(void)
{
	Suite *s = suite_create("limits");
	TCase *tc = tcase_create("limits");

	tcase_add_checked_fixture(tc, setup, NULL);
	tcase_add_test(tc, test_parse);
	tcase_add_test(tc, test_objects);
	tcase_add_test(tc, test_amounts);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(limits_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
