/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Device memory (emulator/mem/dm.c) through ALLOC_DM, IMPORT_DM,
 * REG_DM_MR and RELEASE_DM: what alloc refuses and the MEMIC running out
 * (ENOMEM, as mlx5), the region's pages, an MR over it zero based and
 * bounded by it, the MEMIC's access rule, EBUSY while an MR uses it, and
 * another ufile's DM unknown (ENOENT).
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#include "emulator/mem/dm.h"
#include "emulator/mem/mkey.h"
#include "emulator/mem/pd_mr.h"
#include "emulator/obj/qp.h"
#include "tests/unit/fixture.h"

#define LEN 4096u
#define DM_RW (IBV_ACCESS_ZERO_BASED | IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ)

static int dm_alloc(struct rocemu_client *c, uint64_t length, uint32_t log_align,
		    struct rocemu_dm_resp *resp)
{
	const struct rocemu_alloc_dm_req req = { .length = length, .log_align_req = log_align };
	int fd, err = rocemu_dm_alloc(c, &req, resp, &fd);

	if (!err)
		close(fd);
	return err;
}

static int dm_reg(uint32_t pdn, uint32_t dm, uint64_t offset, uint64_t length, uint32_t access,
		  struct rocemu_reg_mr_resp *resp)
{
	const struct rocemu_reg_dm_mr_req req = { .pdn = pdn, .dm = dm, .offset = offset,
						  .length = length, .access = access };

	return rocemu_dm_reg_mr(fx.client, &req, resp);
}

START_TEST(test_alloc)
{
	struct rocemu_dm_resp dm, big;
	long page = sysconf(_SC_PAGESIZE);

	ck_assert_int_eq(dm_alloc(fx.client, 0, 0, &dm), -EINVAL);
	ck_assert_int_eq(dm_alloc(fx.client, ROCEMU_DM_MAX_SIZE + 1, 0, &dm), -EINVAL);
	ck_assert_int_eq(dm_alloc(fx.client, LEN, ROCEMU_DM_MAX_LOG_ALIGN + 1, &dm), -EINVAL);
	ck_assert_int_eq(dm_alloc(fx.client, 100, ROCEMU_DM_MAX_LOG_ALIGN, &dm), 0);
	ck_assert_uint_eq(dm.length, 100);
	ck_assert_uint_eq(dm.map_size % (uint64_t)page, 0);
	ck_assert_uint_ge(dm.map_size, 100);
	/* The region takes a page of the MEMIC: the whole of it no longer fits. */
	ck_assert_int_eq(dm_alloc(fx.client, ROCEMU_DM_MAX_SIZE, 0, &big), -ENOMEM);
	ck_assert_int_eq(rocemu_dm_release(fx.client, dm.handle), 0);
	ck_assert_int_eq(rocemu_dm_release(fx.client, dm.handle), -ENOENT);
	ck_assert_int_eq(dm_alloc(fx.client, ROCEMU_DM_MAX_SIZE, 0, &big), 0);
	ck_assert_int_eq(dm_alloc(fx.client, ROCEMU_DM_UNIT, 0, &dm), -ENOMEM);
}
END_TEST

START_TEST(test_import)
{
	struct rocemu_client *other = fx_client_new();
	struct rocemu_dm_resp dm, imported;
	int fd;

	ck_assert_int_eq(dm_alloc(fx.client, LEN, 0, &dm), 0);
	ck_assert_int_eq(rocemu_dm_import(fx.client, dm.handle, &imported, &fd), 0);
	close(fd);
	ck_assert_uint_eq(imported.handle, dm.handle);
	ck_assert_uint_eq(imported.length, LEN);
	ck_assert_int_eq(rocemu_dm_import(other, dm.handle, &imported, &fd), -ENOENT);
	ck_assert_int_eq(rocemu_dm_release(other, dm.handle), -ENOENT);
}
END_TEST

START_TEST(test_reg_refused)
{
	struct rocemu_reg_mr_resp mr;
	struct rocemu_dm_resp dm;

	ck_assert_int_eq(dm_alloc(fx.client, LEN, 0, &dm), 0);
	ck_assert_int_eq(dm_reg(fx.pdn + 1000, dm.handle, 0, LEN, DM_RW, &mr), -EINVAL);
	ck_assert_int_eq(dm_reg(fx.pdn, dm.handle + 1000, 0, LEN, DM_RW, &mr), -EINVAL);
	/* MEMIC MRs are zero based, and bind no windows (MLX5_IB_DM_MEMIC_ALLOWED_ACCESS). */
	ck_assert_int_eq(dm_reg(fx.pdn, dm.handle, 0, LEN, DM_RW & ~IBV_ACCESS_ZERO_BASED, &mr),
			 -EINVAL);
	ck_assert_int_eq(dm_reg(fx.pdn, dm.handle, 0, LEN, DM_RW | IBV_ACCESS_MW_BIND, &mr),
			 -EINVAL);
	ck_assert_int_eq(dm_reg(fx.pdn, dm.handle, 0, LEN,
				IBV_ACCESS_ZERO_BASED | IBV_ACCESS_REMOTE_WRITE, &mr), -EINVAL);
	ck_assert_int_eq(dm_reg(fx.pdn, dm.handle, 1, LEN, DM_RW, &mr), -EINVAL);
	ck_assert_int_eq(dm_reg(fx.pdn, dm.handle, LEN + 1, 0, DM_RW, &mr), -EINVAL);
}
END_TEST

START_TEST(test_mr_over_dm)
{
	const struct rocemu_rereg_mr_req rereg = { .flags = IBV_REREG_MR_CHANGE_ACCESS,
						   .access = DM_RW };
	struct rocemu_reg_mr_resp mr, after;
	struct rocemu_rereg_mr_req req = rereg;
	struct rocemu_mkey_ref ref;
	struct rocemu_dm_resp dm;

	ck_assert_int_eq(dm_alloc(fx.client, LEN, 0, &dm), 0);
	ck_assert_int_eq(dm_reg(fx.pdn, dm.handle, 1024, 2048, DM_RW, &mr), 0);
	ck_assert_uint_eq(mr.length, 2048);
	/* Zero based: addresses from 0 to its length. */
	ck_assert_int_eq(rocemu_mkey_resolve(fx_emu_qp()->mem, mr.lkey,
					     ROCEMU_MKEY_LOCAL, 0, 2048, IBV_ACCESS_LOCAL_WRITE,
					     &ref), 0);
	ck_assert_int_eq(rocemu_mkey_resolve(fx_emu_qp()->mem, mr.lkey,
					     ROCEMU_MKEY_LOCAL, 2048, 1, 0, &ref), -ERANGE);
	/* uverbs refuses rereg of a DM MR; the DM stays while the MR is there. */
	req.handle = mr.handle;
	ck_assert_int_eq(rocemu_mr_rereg(fx.client, &req, &after), -EINVAL);
	ck_assert_int_eq(rocemu_dm_release(fx.client, dm.handle), -EBUSY);
	ck_assert_int_eq(rocemu_mr_dereg(fx.client, mr.handle), 0);
	ck_assert_int_eq(rocemu_dm_release(fx.client, dm.handle), 0);
}
END_TEST

static Suite *dm_suite(void)
{
	Suite *s = suite_create("dm");
	TCase *tc = tcase_create("dm");

	tcase_add_checked_fixture(tc, fx_setup, fx_teardown);
	tcase_add_test(tc, test_alloc);
	tcase_add_test(tc, test_import);
	tcase_add_test(tc, test_reg_refused);
	tcase_add_test(tc, test_mr_over_dm);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return fx_suite_run(dm_suite());
}
