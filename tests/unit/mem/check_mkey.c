/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Key resolution (emulator/mem/mkey.c) and the lifetimes it relies on: every
 * check an lkey or rkey passes (ufile, PD, the QP of a type 2 window,
 * validity, rights, bounds) with its own errno; a bound window keeps its MR
 * from deregistration and reregistration (EBUSY) and releases it when
 * invalidated, rebound or freed; ODP MRs (explicit, implicit) and the
 * checks of a prefetch; indirect mkeys laid out by UMRs (list,
 * interleaved, translation by pointer) as segments, and what a UMR
 * refuses. MRs are registered over this process's own memory; no daemon,
 * no wire.
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <infiniband/mlx5dv.h>
#include <infiniband/verbs.h>

#include "emulator/mem/dma.h"
#include "emulator/mem/mkey.h"
#include "emulator/mem/mkey_indirect.h"
#include "emulator/mem/mm.h"
#include "emulator/mem/mw.h"
#include "emulator/mem/pd_mr.h"

#define RW (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ)
#define REMOTE ROCEMU_MKEY_REMOTE
#define LOCAL ROCEMU_MKEY_LOCAL
#define MEM_SIZE 8192

static struct rocemu_emu emu;
static struct rocemu_device dev = { .name = "rocemu0" };
static struct rocemu_client alice, bob;
static struct rocemu_ufile alice_file, bob_file;
static struct rocemu_mem_owner qp, qp2, qp_other_pd, qp_bob;
static char mem[2][MEM_SIZE];

static void client_init(struct rocemu_client *c, struct rocemu_ufile *f)
{
	*f = (struct rocemu_ufile){ .emu = &emu, .dev = &dev, .sock = -1, .contexts = 1 };
	rocemu_list_init(&f->pds);
	rocemu_list_init(&f->mrs);
	rocemu_list_init(&f->dms);
	*c = (struct rocemu_client){ .emu = &emu, .dev = &dev, .pid = getpid(), .ufile = f };
	rocemu_list_init(&c->mws);
	ck_assert_int_eq(rocemu_charge_account(rocemu_account_of(&emu, c->pid, "check_mkey"), NULL,
					       &c->charge, ROCEMU_RES_CONN, ROCEMU_OBJ_ONLY), 0);
}

static struct rocemu_pd *pd_new(struct rocemu_client *c)
{
	uint32_t pdn;

	ck_assert_int_eq(rocemu_pd_alloc(c, &pdn), 0);
	return rocemu_pd_lookup(c, pdn);
}

/*
 * Owners of memory as QPs name them: Alice's qp and qp2 share a PD,
 * qp_other_pd has another; qp_bob is another client's.
 */
static void setup(void)
{
	struct rocemu_pd *pd;

	memset(dev.objs, 0, sizeof(dev.objs));
	rocemu_list_init(&emu.accounts);
	rocemu_limits_default(&emu.limits);
	rocemu_limits_fds_setup(&emu.limits);
	rocemu_idtable_init(&emu.pds, 1, 64);
	rocemu_idtable_init(&emu.mrs, 1, 64);
	rocemu_idtable_init(&emu.mws, 1, 64);
	rocemu_list_init(&emu.mms);
	client_init(&alice, &alice_file);
	client_init(&bob, &bob_file);
	alice.mm = rocemu_mm_self(&emu);
	bob.mm = rocemu_mm_self(&emu);
	pd = pd_new(&alice);
	qp = (struct rocemu_mem_owner){ .client = &alice, .qpn = 0x100, .pd = pd };
	qp2 = (struct rocemu_mem_owner){ .client = &alice, .qpn = 0x101, .pd = pd };
	qp_other_pd = (struct rocemu_mem_owner){ .client = &alice, .qpn = 0x102, .pd = pd_new(&alice) };
	qp_bob = (struct rocemu_mem_owner){ .client = &bob, .qpn = 0x103, .pd = pd_new(&bob) };
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
	rocemu_mm_put(alice.mm);
	rocemu_mm_put(bob.mm);
	rocemu_uncharge(&alice.charge);
	rocemu_uncharge(&bob.charge);
	ck_assert(rocemu_list_empty(&emu.accounts));
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
static int window_bind(const struct rocemu_mem_owner *bqp, uint32_t *rkey, uint32_t mr_key, uint64_t va,
		       uint64_t len, uint32_t access)
{
	struct rocemu_mw_bind b = {
		.mw_key = *rkey, .new_rkey = (*rkey & ~0xffu) | ((*rkey + 1) & 0xff),
		.mr_key = mr_key, .access = access, .addr = va, .length = len,
	};
	int err = rocemu_mw_bind(*bqp, &b);

	if (!err)
		*rkey = b.new_rkey;
	return err;
}

static int resolve(const struct rocemu_mem_owner *q, uint32_t key, enum rocemu_mkey_use use, uint64_t va,
		   uint64_t len, unsigned int access, uint64_t *addr)
{
	struct rocemu_mkey_ref ref;
	int err = rocemu_mkey_resolve(*q, key, use, va, len, access, &ref);

	*addr = ref.addr;
	return err;
}

/* rocemu_dma_rkey for Alice's qp. */
static int rkey_segs(uint32_t key, uint64_t va, uint64_t len, unsigned int access,
		     struct rocemu_dma_seg *segs, unsigned int max, unsigned int *n)
{
	return rocemu_dma_rkey(qp, key, va, len, access, segs, max, n);
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
	ck_assert_int_eq(rocemu_mr_invalidate(qp_other_pd, key, false),
			 -EPERM);
	ck_assert_int_eq(rocemu_mr_invalidate(qp, key, false), 0);
	ck_assert_int_eq(rocemu_mr_invalidate(qp, key, false), 0);
	ck_assert_int_eq(resolve(&qp, key, LOCAL, 0x10000, 8, 0, &addr), -ENOKEY);
}
END_TEST

/* Another context of alice's ufile (an importer, another process) uses her keys on her PD. */
START_TEST(test_ufile_shares_keys)
{
	struct rocemu_client carol = { .emu = &emu, .dev = &dev, .pid = getpid() + 1,
				       .ufile = &alice_file };
	struct rocemu_mem_owner qp_carol = { .client = &carol, .qpn = 0x104, .pd = qp.pd };
	struct rocemu_mkey_ref ref;
	uint32_t key;

	mr_new(0, RW, &key);
	ck_assert_int_eq(rocemu_mkey_resolve(qp_carol, key, LOCAL, 0x10010, 8,
					     0, &ref), 0);
	/* The memory is the registering process's, not the QP's. */
	ck_assert_ptr_eq(ref.mm, alice.mm);
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
	ck_assert_int_eq(rocemu_mr_invalidate(qp, key, false), 0);
	ck_assert_int_eq(resolve(&qp, wkey, REMOTE, 0x10500, 64, 0, &addr), -ENOKEY);
	ck_assert_int_eq(rocemu_mr_invalidate(qp, wkey, false), 0);
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
	ck_assert_int_eq(rocemu_mr_invalidate(qp, wkey, false), -EINVAL);
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

/* ---- indirect mkeys (emulator/mem/mkey_indirect.c) ---- */

#define KLM 16
#define UMR_MASK_LAYOUT                                                                      \
	(MLX5_WQE_UMR_CTRL_MKEY_MASK_FREE | MLX5_WQE_UMR_CTRL_MKEY_MASK_MKEY |                \
	 MLX5_WQE_UMR_CTRL_MKEY_MASK_LEN | MLX5_WQE_UMR_CTRL_MKEY_MASK_ACCESS_LOCAL_WRITE |   \
	 MLX5_WQE_UMR_CTRL_MKEY_MASK_ACCESS_REMOTE_READ |                                     \
	 MLX5_WQE_UMR_CTRL_MKEY_MASK_ACCESS_REMOTE_WRITE |                                    \
	 MLX5_WQE_UMR_CTRL_MKEY_MASK_ACCESS_ATOMIC)

/* An indirect mkey of qp's PD with room for entries; its key. */
static uint32_t indirect_new(uint32_t entries, uint32_t flags)
{
	struct rocemu_create_mkey_req req = { .pdn = qp.pd->pdn, .max_entries = entries,
					      .create_flags = MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT | flags };
	struct rocemu_create_mkey_resp resp;

	ck_assert_int_eq(rocemu_mkey_create(&alice, &req, &resp), 0);
	ck_assert_uint_eq(resp.key & 0xff, 0);
	return resp.key;
}

static void klm_put(uint8_t *t, unsigned int i, uint32_t bytes, uint32_t key, uint64_t addr)
{
	struct mlx5_wqe_umr_klm_seg k = { .byte_count = htobe32(bytes), .mkey = htobe32(key),
					  .address = htobe64(addr) };

	memcpy(t + i * KLM, &k, sizeof(k));
}

/*
 * Through qp, the UMR libmlx5 writes for key: remote read and write, length
 * len, the translation t of xlat bytes inline, or (ptr_key) by pointer at
 * ptr_va of that lkey; extra mask bits added. Parsed as the daemon parses it.
 */
static int umr_run(uint32_t key, const uint8_t *t, uint32_t xlat, uint64_t len, uint32_t ptr_key,
		   uint64_t ptr_va, uint64_t extra_mask)
{
	uint8_t wqe[sizeof(struct mlx5_wqe_umr_ctrl_seg) + sizeof(struct mlx5_wqe_mkey_context_seg) +
		    256] = { 0 };
	struct mlx5_wqe_umr_ctrl_seg *c = (void *)wqe;
	struct mlx5_wqe_mkey_context_seg *mk = (void *)(c + 1);
	uint8_t *data = (uint8_t *)(mk + 1);
	static struct rocemu_umr u;
	struct mlx5_wqe_data_seg d;
	size_t size = xlat;
	int err;

	c->flags = ptr_key ? 0 : MLX5_WQE_UMR_CTRL_FLAG_INLINE;
	c->klm_octowords = htobe16((uint16_t)(xlat / KLM));
	c->mkey_mask = htobe64(UMR_MASK_LAYOUT | extra_mask);
	mk->qpn_mkey = htobe32(0xffffff00 | (key & 0xff));
	mk->access_flags = MLX5_WQE_MKEY_CONTEXT_ACCESS_FLAGS_REMOTE_READ |
			   MLX5_WQE_MKEY_CONTEXT_ACCESS_FLAGS_REMOTE_WRITE;
	mk->len = htobe64(len);
	if (ptr_key) {
		d = (struct mlx5_wqe_data_seg){ .byte_count = htobe32(xlat), .lkey = htobe32(ptr_key),
						.addr = htobe64(ptr_va) };
		memcpy(data, &d, sizeof(d));
		size = sizeof(d);
	} else {
		memcpy(data, t, xlat);
	}
	memset(&u, 0, sizeof(u));
	u.key = key;
	err = rocemu_umr_parse(wqe, data + size, &u);
	return err ? err : rocemu_mkey_umr(qp, &u);
}

/* Remote access through key as segments; each must be want[i] bytes at where[i]. */
static void expect_segs(uint32_t key, uint64_t va, uint64_t len, unsigned int n,
			char *const *where, const size_t *want)
{
	struct rocemu_dma_seg segs[8];
	unsigned int got, i;

	ck_assert_int_eq(rkey_segs(key, va, len, IBV_ACCESS_REMOTE_WRITE, segs, 8, &got), 0);
	ck_assert_uint_eq(got, n);
	for (i = 0; i < n; i++) {
		ck_assert_ptr_eq(segs[i].iov.iov_base, where[i]);
		ck_assert_uint_eq(segs[i].iov.iov_len, want[i]);
		ck_assert_ptr_eq(segs[i].mm, alice.mm);
	}
}

START_TEST(test_indirect_list)
{
	uint32_t k0, k1, key = indirect_new(2, 0);
	uint8_t t[4 * KLM] = { 0 };
	struct rocemu_dma_seg seg;
	unsigned int n;

	mr_new(0, RW, &k0);
	mr_new(1, RW, &k1);
	/* Free until a UMR. */
	ck_assert_int_eq(rkey_segs(key, 0, 1, 0, &seg, 1, &n), -ENOKEY);
	klm_put(t, 0, 100, k0, 0x10000 + 10);
	klm_put(t, 1, 50, k1, 0x10000 + 200);
	ck_assert_int_eq(umr_run(key, t, sizeof(t), 150, 0, 0, 0), 0);
	expect_segs(key, 90, 20, 2, (char *[]){ mem[0] + 100, mem[1] + 200 }, (size_t[]){ 10, 10 });
	ck_assert_int_eq(rkey_segs(key, 140, 11, IBV_ACCESS_REMOTE_WRITE, &seg, 1, &n),
			 -ERANGE);
	ck_assert_int_eq(rkey_segs(key, 0, 8, IBV_ACCESS_REMOTE_ATOMIC, &seg, 1, &n),
			 -EACCES);
	/* Two pieces do not fit one segment: an atomic may not straddle entries. */
	ck_assert_int_eq(rkey_segs(key, 96, 8, IBV_ACCESS_REMOTE_WRITE, &seg, 1, &n),
			 -EMSGSIZE);
	/* Remote invalidation needs the key made with it; local invalidation frees it. */
	ck_assert_int_eq(rocemu_mr_invalidate(qp, key, true), -EACCES);
	ck_assert_int_eq(rocemu_mr_invalidate(qp, key, false), 0);
	ck_assert_int_eq(rkey_segs(key, 0, 1, 0, &seg, 1, &n), -ENOKEY);
}
END_TEST

START_TEST(test_indirect_interleaved)
{
	uint32_t k0, k1, key = indirect_new(3, 0);
	struct mlx5_wqe_umr_repeat_block_seg rb = { .byte_count = htobe32(12), .op = htobe32(0x400),
						    .repeat_count = htobe32(3), .num_ent = htobe16(2) };
	struct mlx5_wqe_umr_repeat_ent_seg e[3] = { 0 };
	uint8_t t[4 * KLM] = { 0 };

	mr_new(0, RW, &k0);
	mr_new(1, RW, &k1);
	e[0] = (struct mlx5_wqe_umr_repeat_ent_seg){ .stride = htobe16(10), .byte_count = htobe16(8),
						     .memkey = htobe32(k0), .va = htobe64(0x10000) };
	e[1] = (struct mlx5_wqe_umr_repeat_ent_seg){ .stride = htobe16(4), .byte_count = htobe16(4),
						     .memkey = htobe32(k1), .va = htobe64(0x10064) };
	memcpy(t, &rb, sizeof(rb));
	memcpy(t + KLM, e, 2 * sizeof(e[0]));
	ck_assert_int_eq(umr_run(key, t, sizeof(t), 36, 0, 0, 0), 0);
	expect_segs(key, 0, 36, 6,
		    (char *[]){ mem[0], mem[1] + 100, mem[0] + 10, mem[1] + 104, mem[0] + 20,
				mem[1] + 108 },
		    (size_t[]){ 8, 4, 8, 4, 8, 4 });
	expect_segs(key, 14, 8, 2, (char *[]){ mem[0] + 12, mem[1] + 104 }, (size_t[]){ 6, 2 });
	/* The header's bytes per repetition must add up. */
	rb.byte_count = htobe32(13);
	memcpy(t, &rb, sizeof(rb));
	ck_assert_int_eq(umr_run(key, t, sizeof(t), 39, 0, 0, 0), -EINVAL);
}
END_TEST

START_TEST(test_indirect_by_pointer)
{
	uint32_t k0, k1, key = indirect_new(4, 0);
	uint8_t *t = (uint8_t *)mem[0] + 4096;

	mr_new(0, RW, &k0);
	mr_new(1, RW, &k1);
	memset(t, 0, 4 * KLM);
	klm_put(t, 0, 7, k1, 0x10000 + 1);
	klm_put(t, 1, 9, k0, 0x10000 + 3);
	ck_assert_int_eq(umr_run(key, NULL, 4 * KLM, 16, k0, 0x10000 + 4096, 0), 0);
	expect_segs(key, 0, 16, 2, (char *[]){ mem[1] + 1, mem[0] + 3 }, (size_t[]){ 7, 9 });
	/* The pointer's key is checked as any lkey. */
	ck_assert_int_eq(umr_run(key, NULL, 4 * KLM, 16, k0 ^ 1, 0x10000 + 4096, 0), -ENOKEY);
}
END_TEST

START_TEST(test_indirect_refused)
{
	uint32_t k0, kb, key = indirect_new(2, 0), other = indirect_new(2, 0);
	uint32_t h1 = 0, k1;
	struct rocemu_create_mkey_req req = { .pdn = qp.pd->pdn, .max_entries = 17,
					      .create_flags = MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT };
	struct rocemu_create_mkey_resp resp;
	struct rocemu_reg_mr_req breq = { .access = RW, .addr = (uintptr_t)mem[1],
					  .length = MEM_SIZE, .iova = 0x10000 };
	struct rocemu_reg_mr_resp bresp;
	uint8_t t[8 * KLM] = { 0 };
	struct rocemu_dma_seg seg;
	unsigned int n;

	ck_assert_int_eq(rocemu_mkey_create(&alice, &req, &resp), -EINVAL);
	req.max_entries = 4;
	req.create_flags |= MLX5DV_MKEY_INIT_ATTR_FLAGS_BLOCK_SIGNATURE;
	ck_assert_int_eq(rocemu_mkey_create(&alice, &req, &resp), -EOPNOTSUPP);
	/* Not an MR: DEREG_MR and IMPORT_MR do not see it. */
	ck_assert_int_eq(rocemu_mr_dereg(&alice, key >> 8), -EINVAL);
	mr_new(0, RW, &k0);
	h1 = mr_new(1, RW, &k1);
	breq.pdn = qp_bob.pd->pdn;
	ck_assert_int_eq(rocemu_mr_reg(&bob, &breq, &bresp), 0);
	kb = bresp.lkey;
	klm_put(t, 0, 8, other, 0);
	ck_assert_int_eq(umr_run(key, t, KLM * 4, 8, 0, 0, 0), -ENOKEY);	/* no nesting */
	klm_put(t, 0, 8, kb, 0x10000);
	ck_assert_int_eq(umr_run(key, t, KLM * 4, 8, 0, 0, 0), -ENOKEY);	/* another client's */
	klm_put(t, 0, 8, k0, 0x10000 + MEM_SIZE - 4);
	ck_assert_int_eq(umr_run(key, t, KLM * 4, 8, 0, 0, 0), -ERANGE);
	klm_put(t, 0, 8, k0, 0x10000);
	ck_assert_int_eq(umr_run(key, t, KLM * 4, 8, 0, 0, MLX5_WQE_UMR_CTRL_MKEY_MASK_BSF_ENABLE),
			 -EOPNOTSUPP);
	ck_assert_int_eq(umr_run(key, t, KLM * 4, 9, 0, 0, 0), -EINVAL);	/* len disagrees */
	ck_assert_int_eq(umr_run(key, t, KLM * 8, 8, 0, 0, 0), -EINVAL);	/* past its entries */
	klm_put(t, 1, 8, k1, 0x10000);
	ck_assert_int_eq(umr_run(key, t, KLM * 4, 16, 0, 0, 0), 0);
	/* The MR under the second entry deregistered: nothing reaches where it was. */
	ck_assert_int_eq(rocemu_mr_dereg(&alice, h1), 0);
	ck_assert_int_eq(rkey_segs(key, 0, 8, IBV_ACCESS_REMOTE_WRITE, &seg, 1, &n), 0);
	ck_assert_int_eq(rkey_segs(key, 4, 8, IBV_ACCESS_REMOTE_WRITE, &seg, 2, &n),
			 -ENOKEY);
	ck_assert_int_eq(rocemu_mkey_destroy(&alice, key >> 8), 0);
	ck_assert_int_eq(rocemu_mkey_destroy(&alice, key >> 8), -EINVAL);
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
	tcase_add_test(tc, test_indirect_list);
	tcase_add_test(tc, test_indirect_interleaved);
	tcase_add_test(tc, test_indirect_by_pointer);
	tcase_add_test(tc, test_indirect_refused);
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
