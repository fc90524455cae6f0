/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Memory windows (emulator/mem/mw.c) through ALLOC_MW, DEALLOC_MW and the
 * bind a BIND WQE executes: what alloc refuses, the checks of a bind
 * (IBTA 10.6.7.2: the window's owner and PD, its key's index, rights, the
 * MR's MW_BIND and local write, the range), type 1 rules (any QP of the PD,
 * unbound by a zero-length bind, never invalidated) and type 2 rules (the
 * binding QP alone, invalidated before it binds again). Real QPs of the
 * fixture's client; the windows' keys as a peer would use them.
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#include "emulator/mem/mkey.h"
#include "emulator/mem/mw.h"
#include "emulator/mem/pd_mr.h"
#include "emulator/obj/qp.h"
#include "tests/unit/fixture.h"

#define RW (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ)
#define LEN 4096u

/* A new RC QP of fx.client on pdn (its rings left unmapped): the window's user. */
static struct rocemu_qp *qp_new(uint32_t pdn)
{
	const struct rocemu_create_qp_req req = {
		.pdn = pdn, .qp_type = IBV_QPT_RC, .send_cqn = fx.scq.cqn, .recv_cqn = fx.rcq.cqn,
		.srqn = ROCEMU_NO_HANDLE, .user_qp = FX_USER_QP,
		.cap = { .max_send_wr = FX_QP_DEPTH, .max_recv_wr = FX_QP_DEPTH,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct rocemu_create_qp_resp resp;
	int fd;

	ck_assert_int_eq(rocemu_qp_create(fx.client, &req, &resp, &fd), 0);
	close(fd);
	return rocemu_qp_lookup(fx.client, resp.layout.qpn);
}

static uint32_t mw_alloc(uint32_t type)
{
	const struct rocemu_alloc_mw_req req = { .pdn = fx.pdn, .type = type };
	struct rocemu_alloc_mw_resp resp;

	ck_assert_int_eq(rocemu_mw_alloc(fx.client, &req, &resp), 0);
	ck_assert(rocemu_mw_is_key(resp.rkey));
	ck_assert_uint_eq(rocemu_mw_key_index(resp.rkey), resp.handle);
	return resp.rkey;
}

/* An MR over the fixture's buffer at offset LEN with access; its key. */
static uint32_t mr_key(uint32_t access, uint32_t *handle)
{
	const struct rocemu_reg_mr_req req = { .pdn = fx.pdn, .access = access,
					       .addr = (uintptr_t)fx.buf + LEN, .length = LEN,
					       .iova = (uintptr_t)fx.buf + LEN };
	struct rocemu_reg_mr_resp resp;

	ck_assert_int_eq(rocemu_mr_reg(fx.client, &req, &resp), 0);
	*handle = resp.handle;
	return resp.lkey;
}

/* The key the shim's bind would give the window next: same index, the next variant. */
static uint32_t next_rkey(uint32_t rkey)
{
	return (rkey & ~0xffu) | ((rkey + 1) & 0xffu);
}

/* Bind window *wkey by qp onto [va, va + len) of mr with access; on success *wkey is its new key. */
static int window_bind(struct rocemu_qp *qp, uint32_t *wkey, uint32_t mr, uint64_t va, uint64_t len,
		uint32_t access)
{
	const struct rocemu_mw_bind b = { .mw_key = *wkey, .new_rkey = next_rkey(*wkey),
					  .mr_key = mr, .access = access, .addr = va,
					  .length = len };
	int err = rocemu_mw_bind(qp->mem, &b);

	if (!err)
		*wkey = b.new_rkey;
	return err;
}

static int remote(struct rocemu_qp *qp, uint32_t key, uint64_t va, unsigned int access)
{
	struct rocemu_mkey_ref ref;

	return rocemu_mkey_resolve(qp->mem, key, ROCEMU_MKEY_REMOTE, va, 8, access,
				   &ref);
}

START_TEST(test_alloc)
{
	struct rocemu_client *other = fx_client_new();
	struct rocemu_alloc_mw_req req = { .pdn = fx.pdn + 1000, .type = IBV_MW_TYPE_1 };
	struct rocemu_alloc_mw_resp resp;
	uint32_t pdn = fx_pd_alloc(fx.client), w1 = mw_alloc(IBV_MW_TYPE_1), w2;

	ck_assert_int_eq(rocemu_mw_alloc(fx.client, &req, &resp), -EINVAL);
	req.pdn = fx.pdn;
	req.type = 0;
	ck_assert_int_eq(rocemu_mw_alloc(fx.client, &req, &resp), -EINVAL);
	req.type = IBV_MW_TYPE_2 + 1;
	ck_assert_int_eq(rocemu_mw_alloc(fx.client, &req, &resp), -EINVAL);
	w2 = mw_alloc(IBV_MW_TYPE_2);
	ck_assert_uint_ne(rocemu_mw_key_index(w1), rocemu_mw_key_index(w2));
	/* A window holds its PD. */
	req.pdn = pdn;
	req.type = IBV_MW_TYPE_1;
	ck_assert_int_eq(rocemu_mw_alloc(fx.client, &req, &resp), 0);
	ck_assert_int_eq(rocemu_pd_dealloc(fx.client, pdn), -EBUSY);
	ck_assert_int_eq(rocemu_mw_dealloc(other, resp.handle), -EINVAL);
	ck_assert_int_eq(rocemu_mw_dealloc(fx.client, resp.handle), 0);
	ck_assert_int_eq(rocemu_mw_dealloc(fx.client, resp.handle), -EINVAL);
	ck_assert_int_eq(rocemu_pd_dealloc(fx.client, pdn), 0);
}
END_TEST

START_TEST(test_bind_refused)
{
	struct rocemu_qp *qp = fx_emu_qp(), *qp_other_pd = qp_new(fx_pd_alloc(fx.client));
	uint32_t handle, nobind_handle, w = mw_alloc(IBV_MW_TYPE_1);
	uint32_t key = mr_key(RW | IBV_ACCESS_MW_BIND, &handle);
	uint32_t read_only = mr_key(IBV_ACCESS_MW_BIND, &handle);
	uint32_t nobind = mr_key(RW, &nobind_handle);
	uint64_t va = (uintptr_t)fx.buf + LEN;
	struct rocemu_mw_bind b = { .mw_key = key, .new_rkey = key, .mr_key = key,
				    .access = IBV_ACCESS_REMOTE_READ, .addr = va, .length = 64 };

	/* An MR's key names no window. */
	ck_assert_int_eq(rocemu_mw_bind(qp->mem, &b), -ENOKEY);
	/* The new key keeps the window's index. */
	b.mw_key = w;
	b.new_rkey = next_rkey(w) ^ 0x100u;
	ck_assert_int_eq(rocemu_mw_bind(qp->mem, &b), -EINVAL);
	ck_assert_int_eq(window_bind(qp, &w, key, va, 64, IBV_ACCESS_MW_BIND), -EINVAL);
	ck_assert_int_eq(window_bind(qp_other_pd, &w, key, va, 64, IBV_ACCESS_REMOTE_READ), -EPERM);
	ck_assert_int_eq(window_bind(qp, &w, nobind, va, 64, IBV_ACCESS_REMOTE_READ), -EACCES);
	/* Remote write or atomic through the window needs local write on the MR (C10-20). */
	ck_assert_int_eq(window_bind(qp, &w, read_only, va, 64, IBV_ACCESS_REMOTE_WRITE), -EACCES);
	ck_assert_int_eq(window_bind(qp, &w, read_only, va, 64, IBV_ACCESS_REMOTE_ATOMIC), -EACCES);
	ck_assert_int_eq(window_bind(qp, &w, key, va + LEN - 32, 64, IBV_ACCESS_REMOTE_READ), -ERANGE);
	ck_assert_int_eq(window_bind(qp, &w, key, va - 1, 64, IBV_ACCESS_REMOTE_READ), -ERANGE);
	/* Nothing refused changed the window: it still reaches nothing. */
	ck_assert_int_eq(remote(qp, w, va, IBV_ACCESS_REMOTE_READ), -ENOKEY);
	ck_assert_int_eq(rocemu_mr_dereg(fx.client, nobind_handle), 0);
}
END_TEST

START_TEST(test_type1)
{
	struct rocemu_qp *qp = fx_emu_qp(), *qp2 = qp_new(fx.pdn);
	uint32_t handle, key = mr_key(RW | IBV_ACCESS_MW_BIND, &handle);
	uint32_t w = mw_alloc(IBV_MW_TYPE_1), first;
	uint64_t va = (uintptr_t)fx.buf + LEN;
	struct rocemu_mw_bind again;

	ck_assert_int_eq(window_bind(qp, &w, key, va, 256, IBV_ACCESS_REMOTE_READ), 0);
	first = w;
	/* Any QP of the PD uses it, for the rights it was bound with only. */
	ck_assert_int_eq(remote(qp2, w, va + 248, IBV_ACCESS_REMOTE_READ), 0);
	ck_assert_int_eq(remote(qp2, w, va + 256, IBV_ACCESS_REMOTE_READ), -ERANGE);
	ck_assert_int_eq(remote(qp, w, va, IBV_ACCESS_REMOTE_WRITE), -EACCES);
	/* Its MR stays while it is bound; type 1 is never invalidated (C10-71.2.1). */
	ck_assert_int_eq(rocemu_mr_dereg(fx.client, handle), -EBUSY);
	ck_assert_int_eq(rocemu_mr_invalidate(qp->mem, w, false), -EINVAL);
	/* Rebinding replaces the key: the old one reaches nothing. */
	ck_assert_int_eq(window_bind(qp2, &w, key, va, 64, IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE),
			 0);
	ck_assert_int_eq(remote(qp, first, va, IBV_ACCESS_REMOTE_READ), -ENOKEY);
	ck_assert_int_eq(remote(qp, w, va, IBV_ACCESS_REMOTE_WRITE), 0);
	/* The same bind met again (its requester went back over it) changes nothing. */
	again = (struct rocemu_mw_bind){ .mw_key = first, .new_rkey = w, .mr_key = key,
					 .access = IBV_ACCESS_REMOTE_READ, .addr = va, .length = 64 };
	ck_assert_int_eq(rocemu_mw_bind(qp->mem, &again), 0);
	ck_assert_int_eq(remote(qp, w, va, IBV_ACCESS_REMOTE_WRITE), 0);
	/* A zero-length bind unbinds it and frees its MR. */
	ck_assert_int_eq(window_bind(qp, &w, 0, 0, 0, 0), 0);
	ck_assert_int_eq(remote(qp, w, va, 0), -ENOKEY);
	ck_assert_int_eq(rocemu_mr_dereg(fx.client, handle), 0);
}
END_TEST

START_TEST(test_type2)
{
	struct rocemu_qp *qp = fx_emu_qp(), *qp2 = qp_new(fx.pdn);
	uint32_t handle, key = mr_key(RW | IBV_ACCESS_MW_BIND, &handle);
	uint32_t w = mw_alloc(IBV_MW_TYPE_2);
	uint64_t va = (uintptr_t)fx.buf + LEN;

	ck_assert_int_eq(window_bind(qp, &w, key, va, 128, IBV_ACCESS_REMOTE_WRITE), 0);
	/* The binding QP alone uses it (IBTA 10.6.7.2.2). */
	ck_assert_int_eq(remote(qp, w, va, IBV_ACCESS_REMOTE_WRITE), 0);
	ck_assert_int_eq(remote(qp2, w, va, IBV_ACCESS_REMOTE_WRITE), -EPERM);
	/* Bound, it binds again only once invalidated. */
	ck_assert_int_eq(window_bind(qp, &w, key, va, 64, IBV_ACCESS_REMOTE_READ), -EBUSY);
	ck_assert_int_eq(rocemu_mr_dereg(fx.client, handle), -EBUSY);
	ck_assert_int_eq(rocemu_mr_invalidate(qp->mem, w, true), 0);
	ck_assert_int_eq(remote(qp, w, va, IBV_ACCESS_REMOTE_WRITE), -ENOKEY);
	/* Invalidated, it binds again, by another QP too, which alone uses it then. */
	ck_assert_int_eq(window_bind(qp2, &w, key, va, 64, IBV_ACCESS_REMOTE_READ), 0);
	ck_assert_int_eq(remote(qp2, w, va, IBV_ACCESS_REMOTE_READ), 0);
	ck_assert_int_eq(remote(qp, w, va, IBV_ACCESS_REMOTE_READ), -EPERM);
	/* Freed, it frees its MR. */
	ck_assert_int_eq(rocemu_mw_dealloc(fx.client, rocemu_mw_key_index(w)), 0);
	ck_assert_int_eq(rocemu_mr_dereg(fx.client, handle), 0);
}
END_TEST

static Suite *mw_suite(void)
{
	Suite *s = suite_create("mw");
	TCase *tc = tcase_create("mw");

	tcase_add_checked_fixture(tc, fx_setup, fx_teardown);
	tcase_add_test(tc, test_alloc);
	tcase_add_test(tc, test_bind_refused);
	tcase_add_test(tc, test_type1);
	tcase_add_test(tc, test_type2);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return fx_suite_run(mw_suite());
}
