/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * PDs and MRs (emulator/mem/pd_mr.c) through the functions the control ops
 * call: a PD's life and its users, what REG_MR refuses (PD, access rights
 * of IBTA C10-20, length, unmapped or read-only memory, a wrapping range)
 * with uverbs' and mlx5's errno, the keys it hands out and their bounds,
 * IMPORT_MR, REREG_MR's flags and what it keeps, DEREG_MR and ADVISE_MR's
 * checks. Over the fixture's client and this process's own memory.
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>
#include <infiniband/mlx5dv.h>
#include <infiniband/verbs.h>

#include "emulator/mem/mkey.h"
#include "emulator/mem/pd_mr.h"
#include "emulator/obj/qp.h"
#include "tests/unit/fixture.h"

#define RW (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ)
#define LEN 4096u

static int reg(uint32_t pdn, uint64_t addr, uint64_t length, uint32_t access,
	       struct rocemu_reg_mr_resp *resp)
{
	const struct rocemu_reg_mr_req req = { .pdn = pdn, .access = access, .addr = addr,
					       .length = length, .iova = addr };

	return rocemu_mr_reg(fx.client, &req, resp);
}

/* Resolve key as fx.qp would, for rights access over [va, va + len). */
static int resolve(uint32_t key, enum rocemu_mkey_use use, uint64_t va, uint64_t len,
		   unsigned int access)
{
	struct rocemu_mkey_ref ref;

	return rocemu_mkey_resolve(fx_emu_qp()->mem, key, use, va, len, access,
				   &ref);
}

/* A page of memory this process no longer maps. */
static uint64_t unmapped_page(void)
{
	void *p = mmap(NULL, LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	ck_assert_ptr_ne(p, MAP_FAILED);
	ck_assert_int_eq(munmap(p, LEN), 0);
	return (uintptr_t)p;
}

START_TEST(test_pd_users)
{
	uint32_t pdn = fx_pd_alloc(fx.client);
	struct rocemu_reg_mr_resp mr;

	ck_assert_ptr_nonnull(rocemu_pd_lookup(fx.client, pdn));
	ck_assert_int_eq(reg(pdn, (uintptr_t)fx.buf, LEN, RW, &mr), 0);
	/* ibv_dealloc_pd: EBUSY while an MR (or the fixture's QP) uses it. */
	ck_assert_int_eq(rocemu_pd_dealloc(fx.client, pdn), -EBUSY);
	ck_assert_int_eq(rocemu_pd_dealloc(fx.client, fx.pdn), -EBUSY);
	ck_assert_int_eq(rocemu_mr_dereg(fx.client, mr.handle), 0);
	ck_assert_int_eq(rocemu_pd_dealloc(fx.client, pdn), 0);
	ck_assert_ptr_null(rocemu_pd_lookup(fx.client, pdn));
	ck_assert_int_eq(rocemu_pd_dealloc(fx.client, pdn), -EINVAL);
}
END_TEST

/* Another ufile's PD is none of this client's: not looked up, imported or freed. */
START_TEST(test_pd_of_another_ufile)
{
	struct rocemu_client *other = fx_client_new();
	uint32_t pdn = fx_pd_alloc(other);

	ck_assert_ptr_null(rocemu_pd_lookup(fx.client, pdn));
	ck_assert_int_eq(rocemu_pd_import(fx.client, pdn), -ENOENT);
	ck_assert_int_eq(rocemu_pd_import(other, pdn), 0);
	ck_assert_int_eq(rocemu_pd_dealloc(fx.client, pdn), -EINVAL);
	ck_assert_int_eq(rocemu_pd_dealloc(other, pdn), 0);
}
END_TEST

START_TEST(test_reg_refused)
{
	uint64_t addr = (uintptr_t)fx.buf;
	struct rocemu_reg_mr_resp mr;

	ck_assert_int_eq(reg(fx.pdn + 1000, addr, LEN, RW, &mr), -EINVAL);
	ck_assert_int_eq(reg(fx.pdn, addr, 0, RW, &mr), -EINVAL);
	/* ibv_reg_mr(3): remote write or atomic needs local write. */
	ck_assert_int_eq(reg(fx.pdn, addr, LEN, IBV_ACCESS_REMOTE_WRITE, &mr), -EINVAL);
	ck_assert_int_eq(reg(fx.pdn, addr, LEN, IBV_ACCESS_REMOTE_ATOMIC | IBV_ACCESS_REMOTE_READ,
			     &mr), -EINVAL);
	ck_assert_int_eq(rocemu_mr_access_check(IBV_ACCESS_REMOTE_READ | IBV_ACCESS_MW_BIND), 0);
	/* The optional-range bits are best effort: never refused. */
	ck_assert_int_eq(rocemu_mr_access_check(IBV_ACCESS_RELAXED_ORDERING), 0);
	ck_assert_int_eq(reg(fx.pdn, unmapped_page(), LEN, 0, &mr), -EFAULT);
	/* ib_umem_get: a range past the top of the address space. */
	ck_assert_int_eq(reg(fx.pdn, UINT64_MAX - LEN + 1, 2 * LEN, 0, &mr), -EINVAL);
}
END_TEST

/* Read-only memory registers for reading only (ib_umem_get asks FOLL_WRITE for writes). */
START_TEST(test_reg_read_only_memory)
{
	void *p = mmap(NULL, LEN, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct rocemu_reg_mr_resp mr;

	ck_assert_ptr_ne(p, MAP_FAILED);
	ck_assert_int_eq(reg(fx.pdn, (uintptr_t)p, LEN, IBV_ACCESS_LOCAL_WRITE, &mr), -EFAULT);
	ck_assert_int_eq(reg(fx.pdn, (uintptr_t)p, LEN, IBV_ACCESS_REMOTE_READ, &mr), 0);
	ck_assert_int_eq(rocemu_mr_dereg(fx.client, mr.handle), 0);
	ck_assert_int_eq(munmap(p, LEN), 0);
}
END_TEST

START_TEST(test_keys_and_bounds)
{
	uint64_t addr = (uintptr_t)fx.buf + LEN;
	struct rocemu_reg_mr_resp a, b, imported;

	ck_assert_int_eq(reg(fx.pdn, addr, LEN, IBV_ACCESS_LOCAL_WRITE, &a), 0);
	ck_assert_int_eq(reg(fx.pdn, addr, LEN, RW, &b), 0);
	ck_assert_uint_eq(a.lkey, a.rkey);
	ck_assert_uint_ne(a.lkey, b.lkey);
	ck_assert_uint_ne(a.lkey, MLX5_INVALID_LKEY);
	ck_assert_uint_eq(a.length, LEN);
	ck_assert_int_eq(rocemu_mr_import(fx.client, a.handle, &imported), 0);
	ck_assert_uint_eq(imported.lkey, a.lkey);
	ck_assert_uint_eq(imported.length, LEN);
	/* The whole range and its last byte, then one byte past either end. */
	ck_assert_int_eq(resolve(a.lkey, ROCEMU_MKEY_LOCAL, addr, LEN, IBV_ACCESS_LOCAL_WRITE), 0);
	ck_assert_int_eq(resolve(a.lkey, ROCEMU_MKEY_LOCAL, addr + LEN - 1, 1, 0), 0);
	ck_assert_int_eq(resolve(a.lkey, ROCEMU_MKEY_LOCAL, addr + LEN, 1, 0), -ERANGE);
	ck_assert_int_eq(resolve(a.lkey, ROCEMU_MKEY_LOCAL, addr - 1, 2, 0), -ERANGE);
	/* Rights: a remote read through an MR registered without it. */
	ck_assert_int_eq(resolve(a.rkey, ROCEMU_MKEY_REMOTE, addr, 8, IBV_ACCESS_REMOTE_READ),
			 -EACCES);
	ck_assert_int_eq(resolve(b.rkey, ROCEMU_MKEY_REMOTE, addr, 8, IBV_ACCESS_REMOTE_READ), 0);
	ck_assert_int_eq(rocemu_mr_dereg(fx.client, a.handle), 0);
	ck_assert_int_eq(resolve(a.lkey, ROCEMU_MKEY_LOCAL, addr, 8, 0), -ENOKEY);
	ck_assert_int_eq(rocemu_mr_import(fx.client, a.handle, &imported), -ENOENT);
	ck_assert_int_eq(rocemu_mr_dereg(fx.client, a.handle), -EINVAL);
	ck_assert_int_eq(rocemu_mr_dereg(fx.client, b.handle), 0);
}
END_TEST

/* An MR of another ufile: its keys reach nothing for this client's QP, its handle is unknown. */
START_TEST(test_mr_of_another_ufile)
{
	struct rocemu_client *other = fx_client_new();
	const struct rocemu_reg_mr_req req = { .pdn = fx_pd_alloc(other), .access = RW,
					       .addr = (uintptr_t)fx.buf, .length = LEN,
					       .iova = (uintptr_t)fx.buf };
	struct rocemu_reg_mr_resp mr, resp;

	ck_assert_int_eq(rocemu_mr_reg(other, &req, &mr), 0);
	ck_assert_int_eq(resolve(mr.lkey, ROCEMU_MKEY_LOCAL, (uintptr_t)fx.buf, 8, 0), -ENOKEY);
	ck_assert_int_eq(resolve(mr.rkey, ROCEMU_MKEY_REMOTE, (uintptr_t)fx.buf, 8, 0), -ENOKEY);
	ck_assert_int_eq(rocemu_mr_import(fx.client, mr.handle, &resp), -ENOENT);
	ck_assert_int_eq(rocemu_mr_dereg(fx.client, mr.handle), -EINVAL);
	ck_assert_int_eq(rocemu_mr_dereg(other, mr.handle), 0);
}
END_TEST

static int rereg(uint32_t handle, uint32_t flags, uint32_t pdn, uint32_t access, uint64_t addr,
		 struct rocemu_reg_mr_resp *resp)
{
	const struct rocemu_rereg_mr_req req = { .handle = handle, .flags = flags, .pdn = pdn,
						 .access = access, .addr = addr, .length = LEN,
						 .iova = addr };

	return rocemu_mr_rereg(fx.client, &req, resp);
}

START_TEST(test_rereg)
{
	uint64_t addr = (uintptr_t)fx.buf;
	uint32_t pdn = fx_pd_alloc(fx.client);
	struct rocemu_reg_mr_resp mr, after;

	ck_assert_int_eq(reg(fx.pdn, addr, LEN, IBV_ACCESS_LOCAL_WRITE, &mr), 0);
	ck_assert_int_eq(rereg(mr.handle, 0, 0, 0, 0, &after), -EINVAL);
	ck_assert_int_eq(rereg(mr.handle, 1u << 3, 0, 0, 0, &after), -EINVAL);
	ck_assert_int_eq(rereg(mr.handle + 1000, IBV_REREG_MR_CHANGE_ACCESS, 0, RW, 0, &after),
			 -EINVAL);
	ck_assert_int_eq(rereg(mr.handle, IBV_REREG_MR_CHANGE_PD, pdn + 1000, 0, 0, &after),
			 -EINVAL);
	ck_assert_int_eq(rereg(mr.handle, IBV_REREG_MR_CHANGE_ACCESS, 0, IBV_ACCESS_REMOTE_WRITE, 0,
			       &after), -EINVAL);
	ck_assert_int_eq(rereg(mr.handle, IBV_REREG_MR_CHANGE_TRANSLATION, 0, 0, unmapped_page(),
			       &after), -EFAULT);
	/* A refused rereg leaves the MR as it was. */
	ck_assert_int_eq(resolve(mr.lkey, ROCEMU_MKEY_LOCAL, addr, LEN, IBV_ACCESS_LOCAL_WRITE), 0);

	/* Access and PD changed: the keys stay, the MR moves to the new PD. */
	ck_assert_int_eq(rereg(mr.handle, IBV_REREG_MR_CHANGE_ACCESS | IBV_REREG_MR_CHANGE_PD, pdn,
			       RW, 0, &after), 0);
	ck_assert_uint_eq(after.lkey, mr.lkey);
	ck_assert_uint_eq(after.rkey, mr.rkey);
	ck_assert_int_eq(rocemu_pd_dealloc(fx.client, pdn), -EBUSY);
	/* fx.qp is on fx.pdn: the MR in another PD is refused to it. */
	ck_assert_int_eq(resolve(mr.lkey, ROCEMU_MKEY_LOCAL, addr, 8, 0), -EPERM);
	ck_assert_int_eq(rereg(mr.handle, IBV_REREG_MR_CHANGE_PD, fx.pdn, 0, 0, &after), 0);
	ck_assert_int_eq(resolve(mr.rkey, ROCEMU_MKEY_REMOTE, addr, 8, IBV_ACCESS_REMOTE_WRITE), 0);
	ck_assert_int_eq(rocemu_pd_dealloc(fx.client, pdn), 0);

	/* Translation changed: the old range is gone from the key, the new one is reached. */
	ck_assert_int_eq(rereg(mr.handle, IBV_REREG_MR_CHANGE_TRANSLATION, 0, 0, addr + LEN, &after),
			 0);
	ck_assert_int_eq(resolve(mr.lkey, ROCEMU_MKEY_LOCAL, addr, 8, 0), -ERANGE);
	ck_assert_int_eq(resolve(mr.lkey, ROCEMU_MKEY_LOCAL, addr + LEN, LEN, 0), 0);
	ck_assert_int_eq(rocemu_mr_dereg(fx.client, mr.handle), 0);
}
END_TEST

/* REREG makes an invalidated MR valid again, as a new registration would be. */
START_TEST(test_rereg_after_invalidate)
{
	uint64_t addr = (uintptr_t)fx.buf;
	struct rocemu_reg_mr_resp mr, after;

	ck_assert_int_eq(reg(fx.pdn, addr, LEN, RW, &mr), 0);
	ck_assert_int_eq(rocemu_mr_invalidate(fx_emu_qp()->mem, mr.lkey, false), 0);
	ck_assert_int_eq(resolve(mr.lkey, ROCEMU_MKEY_LOCAL, addr, 8, 0), -ENOKEY);
	ck_assert_int_eq(rereg(mr.handle, IBV_REREG_MR_CHANGE_ACCESS, 0, RW, 0, &after), 0);
	ck_assert_int_eq(resolve(mr.lkey, ROCEMU_MKEY_LOCAL, addr, 8, 0), 0);
	ck_assert_int_eq(rocemu_mr_dereg(fx.client, mr.handle), 0);
}
END_TEST

START_TEST(test_advise_refused)
{
	struct rocemu_advise_mr_req req = { .pdn = fx.pdn, .advice = IBV_ADVISE_MR_ADVICE_PREFETCH,
					    .num_sge = 1 };
	struct rocemu_advise_mr_resp resp;

	req.sge[0] = (struct ibv_sge){ .addr = (uintptr_t)fx.buf, .length = 64, .lkey = fx.lkey };
	req.pdn = fx.pdn + 1000;
	ck_assert_int_eq(rocemu_mr_advise(fx.client, &req, &resp), -EINVAL);
	req.pdn = fx.pdn;
	req.flags = 1u << 1;
	ck_assert_int_eq(rocemu_mr_advise(fx.client, &req, &resp), -EINVAL);
	req.flags = IBV_ADVISE_MR_FLAG_FLUSH;
	req.num_sge = 0;
	ck_assert_int_eq(rocemu_mr_advise(fx.client, &req, &resp), -EINVAL);
	req.num_sge = ROCEMU_ADVISE_MR_MAX_SGE + 1;
	ck_assert_int_eq(rocemu_mr_advise(fx.client, &req, &resp), -EINVAL);
	req.num_sge = 1;
	req.advice = IBV_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT + 1;
	ck_assert_int_eq(rocemu_mr_advise(fx.client, &req, &resp), -EOPNOTSUPP);
	/* get_prefetchable_mr: a pinned MR is no ODP MR to prefetch through. */
	req.advice = IBV_ADVISE_MR_ADVICE_PREFETCH;
	ck_assert_int_eq(rocemu_mr_advise(fx.client, &req, &resp), -ENOENT);
}
END_TEST

static Suite *pd_mr_suite(void)
{
	Suite *s = suite_create("pd_mr");
	TCase *pd = tcase_create("pd"), *mr = tcase_create("mr");

	tcase_add_checked_fixture(pd, fx_setup, fx_teardown);
	tcase_add_test(pd, test_pd_users);
	tcase_add_test(pd, test_pd_of_another_ufile);
	suite_add_tcase(s, pd);
	tcase_add_checked_fixture(mr, fx_setup, fx_teardown);
	tcase_add_test(mr, test_reg_refused);
	tcase_add_test(mr, test_reg_read_only_memory);
	tcase_add_test(mr, test_keys_and_bounds);
	tcase_add_test(mr, test_mr_of_another_ufile);
	tcase_add_test(mr, test_rereg);
	tcase_add_test(mr, test_rereg_after_invalidate);
	tcase_add_test(mr, test_advise_refused);
	suite_add_tcase(s, mr);
	return s;
}

int main(void)
{
	return fx_suite_run(pd_mr_suite());
}
