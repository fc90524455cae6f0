/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Key resolution (emulator/mkey.c) and the lifetimes it relies on: every
 * check an lkey or rkey passes (ufile, PD, the QP of a type 2 window,
 * validity, rights, bounds) with its own errno; a bound window keeps its MR
 * from deregistration and reregistration (EBUSY) and releases it when
 * invalidated, rebound or freed; ODP MRs (explicit, implicit) and the
 * checks of a prefetch. MRs are registered over this process's own
 * memory; no daemon, no wire.
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#include "emulator/mkey.h"
#include "emulator/mw.h"
#include "emulator/pd_mr.h"
#include "emulator/qp.h"

#define RW (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ)
#define REMOTE ROCEMU_MKEY_REMOTE
#define LOCAL ROCEMU_MKEY_LOCAL
#define MEM_SIZE 8192

static struct rocemu_emu emu;
static struct rocemu_device dev = { .name = "rocemu0" };
static struct rocemu_client alice, bob;
static struct rocemu_ufile alice_file, bob_file;
static struct rocemu_qp qp, qp2, qp_other_pd, qp_bob;
static char mem[2][MEM_SIZE];

static void client_init(struct rocemu_client *c, struct rocemu_ufile *f)
{
	*f = (struct rocemu_ufile){ .emu = &emu, .dev = &dev, .sock = -1, .contexts = 1 };
	rocemu_list_init(&f->pds);
	rocemu_list_init(&f->mrs);
	rocemu_list_init(&f->dms);
	*c = (struct rocemu_client){ .emu = &emu, .dev = &dev, .pid = getpid(), .ufile = f };
	rocemu_list_init(&c->mws);
}

static struct rocemu_pd *pd_new(struct rocemu_client *c)
{
	uint32_t pdn;

	ck_assert_int_eq(rocemu_pd_alloc(c, &pdn), 0);
	return rocemu_pd_lookup(c, pdn);
}

/* Alice's QPs qp and qp2 share a PD, qp_other_pd has another; qp_bob is another client's. */
static void setup(void)
{
	struct rocemu_pd *pd;

	dev.num_pd = dev.num_mr = 0;
	rocemu_idtable_init(&emu.pds, 1, 64);
	rocemu_idtable_init(&emu.mrs, 1, 64);
	rocemu_idtable_init(&emu.mws, 1, 64);
	client_init(&alice, &alice_file);
	client_init(&bob, &bob_file);
	pd = pd_new(&alice);
	qp = (struct rocemu_qp){ .owner = &alice, .qpn = 0x100, .pd = pd };
	qp2 = (struct rocemu_qp){ .owner = &alice, .qpn = 0x101, .pd = pd };
	qp_other_pd = (struct rocemu_qp){ .owner = &alice, .qpn = 0x102, .pd = pd_new(&alice) };
	qp_bob = (struct rocemu_qp){ .owner = &bob, .qpn = 0x103, .pd = pd_new(&bob) };
}

/* Windows, then MRs, then PDs, as a closing connection frees them. */
static void client_objects_free(struct rocemu_client *c)
{
	struct rocemu_mw *mw, *mw_tmp;
	struct rocemu_mr *mr, *mr_tmp;
	struct rocemu_pd *pd, *pd_tmp;

	rocemu_list_for_each_safe(mw, mw_tmp, &c->mws, struct rocemu_mw, node)
		rocemu_mw_free(&emu, mw);
	rocemu_list_for_each_safe(mr, mr_tmp, &c->ufile->mrs, struct rocemu_mr, node)
		rocemu_mr_free(&emu, mr);
	rocemu_list_for_each_safe(pd, pd_tmp, &c->ufile->pds, struct rocemu_pd, node)
		rocemu_pd_free(&emu, pd);
}

static void teardown(void)
{
	client_objects_free(&alice);
	client_objects_free(&bob);
	rocemu_idtable_free(&emu.pds);
	rocemu_idtable_free(&emu.mrs);
	rocemu_idtable_free(&emu.mws);
}

/* An MR of qp's client and PD over mem[i] at iova 0x10000; its handle and key. */
static uint32_t mr_new(int i, uint32_t access, uint32_t *key)
{
	struct rocemu_reg_mr_req req = { .pdn = qp.pd->pdn, .access = access,
					 .addr = (uintptr_t)mem[i], .length = MEM_SIZE, .iova = 0x10000 };
	struct rocemu_reg_mr_resp resp;

	ck_assert_int_eq(rocemu_mr_reg(&alice, &req, &resp), 0);
	*key = resp.lkey;
	return resp.handle;
}

static int rereg_access(uint32_t handle, uint32_t access)
{
	struct rocemu_rereg_mr_req req = { .handle = handle, .flags = IBV_REREG_MR_CHANGE_ACCESS,
					   .access = access };
	struct rocemu_reg_mr_resp resp;

	return rocemu_mr_rereg(&alice, &req, &resp);
}

static uint32_t mw_new(enum ibv_mw_type type)
{
	struct rocemu_alloc_mw_req req = { .pdn = qp.pd->pdn, .type = type };
	struct rocemu_alloc_mw_resp resp;

	ck_assert_int_eq(rocemu_mw_alloc(&alice, &req, &resp), 0);
	return resp.rkey;
}

/* Bind window *rkey through bqp onto [va, va + len) of the MR of mr_key; *rkey is its new key. */
static int window_bind(struct rocemu_qp *bqp, uint32_t *rkey, uint32_t mr_key, uint64_t va,
		       uint64_t len, uint32_t access)
{
	struct rocemu_send_wqe w = {
		.bind_mw_key = *rkey, .bind_new_rkey = (*rkey & ~0xffu) | ((*rkey + 1) & 0xff),
		.bind_mr_key = mr_key, .bind_access = access, .bind_addr = va, .bind_length = len,
	};
	int err = rocemu_mw_bind(bqp, &w);

	if (!err)
		*rkey = w.bind_new_rkey;
	return err;
}

static int resolve(const struct rocemu_qp *q, uint32_t key, enum rocemu_mkey_use use, uint64_t va,
		   uint64_t len, unsigned int access, uint64_t *addr)
{
	struct rocemu_mkey_ref ref;
	int err = rocemu_mkey_resolve(q, key, use, va, len, access, &ref);

	*addr = ref.addr;
	return err;
}

START_TEST(test_mr_checks)
{
	uint32_t key, wkey = mw_new(IBV_MW_TYPE_1);
	uint64_t addr;

	mr_new(0, IBV_ACCESS_LOCAL_WRITE, &key);
	ck_assert_int_eq(resolve(&qp, key, LOCAL, 0x10100, 64, IBV_ACCESS_LOCAL_WRITE, &addr), 0);
	ck_assert_uint_eq(addr, (uintptr_t)mem[0] + 0x100);
	ck_assert_int_eq(resolve(&qp, key, REMOTE, 0x10100, 64, IBV_ACCESS_REMOTE_WRITE, &addr),
			 -EACCES);
	ck_assert_int_eq(resolve(&qp, key, LOCAL, 0x10000 + MEM_SIZE - 8, 16, 0, &addr), -ERANGE);
	ck_assert_int_eq(resolve(&qp, key, LOCAL, 0xff00, 512, 0, &addr), -ERANGE);
	ck_assert_int_eq(resolve(&qp, key, LOCAL, 0x10000, UINT64_MAX, 0, &addr), -ERANGE);
	ck_assert_int_eq(resolve(&qp, key ^ 0x80, LOCAL, 0x10000, 8, 0, &addr), -ENOKEY);
	ck_assert_int_eq(resolve(&qp_other_pd, key, LOCAL, 0x10000, 8, 0, &addr), -EPERM);
	ck_assert_int_eq(resolve(&qp_bob, key, REMOTE, 0x10000, 8, 0, &addr), -ENOKEY);
	/* A window's key is never an lkey, bound or not. */
	ck_assert_int_eq(resolve(&qp, wkey, LOCAL, 0x10000, 8, 0, &addr), -ENOKEY);
	ck_assert_int_eq(rocemu_mr_invalidate(&qp_other_pd, key, false), -EPERM);
	ck_assert_int_eq(rocemu_mr_invalidate(&qp, key, false), 0);
	ck_assert_int_eq(rocemu_mr_invalidate(&qp, key, false), 0);
	ck_assert_int_eq(resolve(&qp, key, LOCAL, 0x10000, 8, 0, &addr), -ENOKEY);
}
END_TEST

/* Another context of alice's ufile (an importer, another process) uses her keys on her PD. */
START_TEST(test_ufile_shares_keys)
{
	struct rocemu_client carol = { .emu = &emu, .dev = &dev, .pid = getpid() + 1,
				       .ufile = &alice_file };
	struct rocemu_qp qp_carol = { .owner = &carol, .qpn = 0x104, .pd = qp.pd };
	struct rocemu_mkey_ref ref;
	uint32_t key;

	mr_new(0, RW, &key);
	ck_assert_int_eq(rocemu_mkey_resolve(&qp_carol, key, LOCAL, 0x10010, 8, 0, &ref), 0);
	/* The memory is the registering process's, not the QP's. */
	ck_assert_int_eq(ref.pid, getpid());
	ck_assert_uint_eq(ref.addr, (uintptr_t)mem[0] + 0x10);
	ck_assert_ptr_eq(rocemu_pd_lookup(&carol, qp.pd->pdn), qp.pd);
	ck_assert_int_eq(rocemu_pd_import(&carol, qp.pd->pdn), 0);
	ck_assert_int_eq(rocemu_pd_import(&carol, qp_bob.pd->pdn), -ENOENT);
	ck_assert_int_eq(rocemu_pd_import(&bob, qp.pd->pdn), -ENOENT);
}
END_TEST

START_TEST(test_type2_window)
{
	uint32_t key, handle = mr_new(0, RW | IBV_ACCESS_MW_BIND, &key), wkey = mw_new(IBV_MW_TYPE_2);
	uint64_t addr;

	/* LOCAL_WRITE among the window's rights is taken; the window still gives remote rights only. */
	ck_assert_int_eq(window_bind(&qp, &wkey, key, 0x10400, 1024,
				     IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_LOCAL_WRITE), 0);
	ck_assert_int_eq(resolve(&qp, wkey, REMOTE, 0x10500, 64, IBV_ACCESS_REMOTE_WRITE, &addr), 0);
	ck_assert_uint_eq(addr, (uintptr_t)mem[0] + 0x500);
	ck_assert_int_eq(resolve(&qp, wkey, REMOTE, 0x10500, 64, IBV_ACCESS_REMOTE_READ, &addr),
			 -EACCES);
	ck_assert_int_eq(resolve(&qp, wkey, REMOTE, 0x10000, 64, IBV_ACCESS_REMOTE_WRITE, &addr),
			 -ERANGE);
	ck_assert_int_eq(resolve(&qp2, wkey, REMOTE, 0x10500, 64, IBV_ACCESS_REMOTE_WRITE, &addr),
			 -EPERM);
	ck_assert_int_eq(resolve(&qp_other_pd, wkey, REMOTE, 0x10500, 64, 0, &addr), -EPERM);
	ck_assert_int_eq(resolve(&qp_bob, wkey, REMOTE, 0x10500, 64, 0, &addr), -ENOKEY);
	/* Its MR stays while it is bound. */
	ck_assert_int_eq(rocemu_mr_dereg(&alice, handle), -EBUSY);
	ck_assert_int_eq(rereg_access(handle, RW), -EBUSY);
	ck_assert_int_eq(window_bind(&qp, &wkey, key, 0x10400, 1024, IBV_ACCESS_REMOTE_WRITE), -EBUSY);
	/* The MR invalidated: the window reaches nothing through it. */
	ck_assert_int_eq(rocemu_mr_invalidate(&qp, key, false), 0);
	ck_assert_int_eq(resolve(&qp, wkey, REMOTE, 0x10500, 64, 0, &addr), -ENOKEY);
	ck_assert_int_eq(rocemu_mr_invalidate(&qp, wkey, false), 0);
	ck_assert_int_eq(resolve(&qp, wkey, REMOTE, 0x10500, 64, 0, &addr), -ENOKEY);
	ck_assert_int_eq(rereg_access(handle, RW | IBV_ACCESS_MW_BIND), 0);
	ck_assert_int_eq(resolve(&qp, key, LOCAL, 0x10000, 8, 0, &addr), 0);
	ck_assert_int_eq(rocemu_mr_dereg(&alice, handle), 0);
}
END_TEST

START_TEST(test_type1_window)
{
	uint32_t key0, key1, h0 = mr_new(0, RW | IBV_ACCESS_MW_BIND, &key0);
	uint32_t h1 = mr_new(1, RW | IBV_ACCESS_MW_BIND, &key1), wkey = mw_new(IBV_MW_TYPE_1);
	uint64_t addr;

	ck_assert_int_eq(window_bind(&qp, &wkey, key0, 0x10000, 256, IBV_ACCESS_REMOTE_READ), 0);
	/* Any QP of the PD uses a type 1 window; type 1 windows are not invalidated. */
	ck_assert_int_eq(resolve(&qp2, wkey, REMOTE, 0x10000, 256, IBV_ACCESS_REMOTE_READ, &addr), 0);
	ck_assert_uint_eq(addr, (uintptr_t)mem[0]);
	ck_assert_int_eq(rocemu_mr_invalidate(&qp, wkey, false), -EINVAL);
	/* Rebound onto the other MR: the first is free to go, the second is held. */
	ck_assert_int_eq(window_bind(&qp, &wkey, key1, 0x10000, 256, IBV_ACCESS_REMOTE_READ), 0);
	ck_assert_int_eq(resolve(&qp, wkey, REMOTE, 0x10000, 8, IBV_ACCESS_REMOTE_READ, &addr), 0);
	ck_assert_uint_eq(addr, (uintptr_t)mem[1]);
	ck_assert_int_eq(rocemu_mr_dereg(&alice, h0), 0);
	ck_assert_int_eq(rocemu_mr_dereg(&alice, h1), -EBUSY);
	/* Unbound by a zero-length bind. */
	ck_assert_int_eq(window_bind(&qp, &wkey, 0, 0, 0, 0), 0);
	ck_assert_int_eq(resolve(&qp, wkey, REMOTE, 0x10000, 8, 0, &addr), -ENOKEY);
	ck_assert_int_eq(rocemu_mr_dereg(&alice, h1), 0);
}
END_TEST

START_TEST(test_bind_checks)
{
	uint32_t key, nobind, wkey = mw_new(IBV_MW_TYPE_2), handle = mr_new(0, RW | IBV_ACCESS_MW_BIND, &key);

	mr_new(1, RW, &nobind);
	ck_assert_int_eq(window_bind(&qp, &wkey, nobind, 0x10000, 64, IBV_ACCESS_REMOTE_READ), -EACCES);
	ck_assert_int_eq(window_bind(&qp, &wkey, key, 0x10000, MEM_SIZE + 1, IBV_ACCESS_REMOTE_READ), -ERANGE);
	ck_assert_int_eq(window_bind(&qp, &wkey, key, 0x10000, 64, IBV_ACCESS_MW_BIND), -EINVAL);
	ck_assert_int_eq(window_bind(&qp_other_pd, &wkey, key, 0x10000, 64, IBV_ACCESS_REMOTE_READ), -EPERM);
	ck_assert_int_eq(rereg_access(handle, IBV_ACCESS_MW_BIND), 0);
	/* Remote write through a window needs local write on its MR. */
	ck_assert_int_eq(window_bind(&qp, &wkey, key, 0x10000, 64, IBV_ACCESS_REMOTE_WRITE), -EACCES);
	ck_assert_int_eq(window_bind(&qp, &wkey, key, 0x10000, 64, IBV_ACCESS_REMOTE_READ), 0);
	/* Freeing the window releases its MR. */
	ck_assert_int_eq(rocemu_mr_dereg(&alice, handle), -EBUSY);
	ck_assert_int_eq(rocemu_mw_dealloc(&alice, rocemu_mw_key_index(wkey)), 0);
	ck_assert_int_eq(rocemu_mr_dereg(&alice, handle), 0);
}
END_TEST

static int reg(uint64_t addr, uint64_t length, uint64_t iova, uint32_t access, uint32_t *key)
{
	struct rocemu_reg_mr_req req = { .pdn = qp.pd->pdn, .access = access, .addr = addr,
					 .length = length, .iova = iova };
	struct rocemu_reg_mr_resp resp;
	int err = rocemu_mr_reg(&alice, &req, &resp);

	*key = resp.lkey;
	return err;
}

START_TEST(test_odp_registration)
{
	uint32_t odp = RW | IBV_ACCESS_ON_DEMAND, key;
	uint64_t addr;

	/* The implicit MR: the whole address space, at iova 0 only, ON_DEMAND only. */
	ck_assert_int_eq(reg(0, UINT64_MAX, 0x1000, odp, &key), -EINVAL);
	ck_assert_int_eq(reg(0, UINT64_MAX, 0, RW, &key), -EINVAL);
	ck_assert_int_eq(reg(0, UINT64_MAX, 0, odp, &key), 0);
	ck_assert_int_eq(resolve(&qp, key, REMOTE, 0x7f0000001234, 64, IBV_ACCESS_REMOTE_WRITE, &addr), 0);
	ck_assert_uint_eq(addr, 0x7f0000001234);
	/* An explicit ODP MR needs nothing mapped; a range that wraps does not register. */
	ck_assert_int_eq(reg(0x1000, 1 << 20, 0x1000, RW, &key), -EFAULT);
	ck_assert_int_eq(reg(0x1000, 1 << 20, 0x1000, odp, &key), 0);
	ck_assert_int_eq(reg(0x1000, UINT64_MAX - 0x800, 0x1000, odp, &key), -EOVERFLOW);
	ck_assert_int_eq(reg(0x1000, UINT64_MAX - 0x800, 0x1000, RW, &key), -EINVAL);
}
END_TEST

START_TEST(test_prefetch_checks)
{
	uint32_t plain, odp, ro;
	uint64_t addr;

	mr_new(0, RW, &plain);
	mr_new(1, RW | IBV_ACCESS_ON_DEMAND, &odp);
	ck_assert_int_eq(reg((uintptr_t)mem[0], MEM_SIZE, 0x10000,
			     IBV_ACCESS_REMOTE_READ | IBV_ACCESS_ON_DEMAND, &ro), 0);
	ck_assert_int_eq(rocemu_mkey_prefetch(&alice, qp.pd, odp, 0x10100, 64, true, &addr), 0);
	ck_assert_uint_eq(addr, (uintptr_t)mem[1] + 0x100);
	ck_assert_int_eq(rocemu_mkey_prefetch(&alice, qp.pd, plain, 0x10100, 64, false, &addr), -ENOENT);
	ck_assert_int_eq(rocemu_mkey_prefetch(&alice, qp.pd, odp ^ 0x80, 0x10100, 64, false, &addr),
			 -ENOENT);
	ck_assert_int_eq(rocemu_mkey_prefetch(&bob, qp_bob.pd, odp, 0x10100, 64, false, &addr), -ENOENT);
	ck_assert_int_eq(rocemu_mkey_prefetch(&alice, qp_other_pd.pd, odp, 0x10100, 64, false, &addr),
			 -EPERM);
	ck_assert_int_eq(rocemu_mkey_prefetch(&alice, qp.pd, ro, 0x10100, 64, true, &addr), -EPERM);
	ck_assert_int_eq(rocemu_mkey_prefetch(&alice, qp.pd, ro, 0x10100, 64, false, &addr), 0);
	ck_assert_int_eq(rocemu_mkey_prefetch(&alice, qp.pd, odp, 0x10000 + MEM_SIZE - 8, 16, false,
					      &addr), -EFAULT);
}
END_TEST

static Suite *mkey_suite(void)
{
	Suite *s = suite_create("mkey");
	TCase *tc = tcase_create("mkey");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_mr_checks);
	tcase_add_test(tc, test_ufile_shares_keys);
	tcase_add_test(tc, test_type2_window);
	tcase_add_test(tc, test_type1_window);
	tcase_add_test(tc, test_bind_checks);
	tcase_add_test(tc, test_odp_registration);
	tcase_add_test(tc, test_prefetch_checks);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(mkey_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
