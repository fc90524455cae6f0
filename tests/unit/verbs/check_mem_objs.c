/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Memory regions, device memory, memory windows and XRC domains on an
 * emulated device (lib/verbs/pd_mr.c, dm.c, mw.c, xrcd.c): the checks
 * libibverbs and libmlx5 make with their errno and return values
 * (ibv_rereg_mr's IBV_REREG_MR_ERR_*), the requests the shim makes of the
 * verbs' arguments, the answers taken into the objects, device memory
 * read and written word by word as mlx5_access_dm does, and a window
 * bound with the next rkey variant. The daemon is daemon_conn.h's
 * recording stand-in; ibv_bind_mw's post is recorded here.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/shim.h"
#include "tests/unit/verbs/daemon_conn.h"

#define PDN 13
#define MR_HANDLE 21
#define LKEY 0x00abcd01
#define RKEY 0x00abcd02
#define DM_HANDLE 5
#define DM_LEN 256
#define DM_MAP 4096

static struct rocemu_device device;
static struct ibv_device ibdev;
static struct rocemu_context rctx, other_rctx;
static struct ibv_context *const ctx = &rctx.vctx.context;
static struct rocemu_pd pd, pd2, other_pd;
static char region[8192];

/* What ibv_bind_mw posted, and what the post answers. */
static int posts, post_answer;
static struct ibv_send_wr posted;
static struct ibv_qp bind_qp;

struct rocemu_device *rocemu_device_of(struct ibv_device *dev)
{
	return dev == &ibdev ? &device : NULL;
}

/* Not reached: every object here is the emulated device's. */
void *rocemu_real(enum rocemu_real_fn fn)
{
	(void)fn;
	abort();
}

/* lib/datapath/post.c's ibv_post_send, recorded: the bind's work request. */
int rocemu_post_send_op(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr)
{
	ck_assert_ptr_eq(qp, &bind_qp);
	ck_assert_ptr_null(wr->next);
	posts++;
	posted = *wr;
	if (post_answer)
		*bad_wr = wr;
	return post_answer;
}

static void objs_open(void)
{
	struct rocemu_reg_mr_resp mr = { .handle = MR_HANDLE, .lkey = LKEY, .rkey = RKEY,
					  .length = sizeof(region) };

	memset(&rctx, 0, sizeof(rctx));
	memset(&other_rctx, 0, sizeof(other_rctx));
	ctx->device = &ibdev;
	other_rctx.vctx.context.device = &ibdev;
	pd = (struct rocemu_pd){ .ibpd = { .context = ctx, .handle = PDN }, .pdn = PDN };
	pd2 = (struct rocemu_pd){ .ibpd = { .context = ctx, .handle = PDN + 1 }, .pdn = PDN + 1 };
	other_pd = (struct rocemu_pd){ .ibpd = { .context = &other_rctx.vctx.context } };
	posts = post_answer = 0;
	bind_qp = (struct ibv_qp){ .context = ctx };
	conn_reset();
	conn_answer(ROCEMU_OP_REG_MR, 0, &mr, sizeof(mr), 0);
	conn_answer(ROCEMU_OP_REREG_MR, 0, &mr, sizeof(mr), 0);
	conn_answer(ROCEMU_OP_IMPORT_MR, 0, &mr, sizeof(mr), 0);
	conn_answer(ROCEMU_OP_REG_DM_MR, 0, &mr, sizeof(mr), 0);
}

static const struct rocemu_reg_mr_req *reg_req(void)
{
	return conn_last(ROCEMU_OP_REG_MR);
}

/* ibv_reg_mr and its iova forms: the request from the arguments, the MR from the answer. */
START_TEST(test_reg_mr)
{
	struct ibv_mr *mr = ibv_reg_mr(&pd.ibpd, region, sizeof(region),
				       IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_RELAXED_ORDERING);

	ck_assert_ptr_nonnull(mr);
	ck_assert_uint_eq(reg_req()->pdn, PDN);
	/* An optional access bit this device lacks is dropped, as libibverbs drops it. */
	ck_assert_uint_eq(reg_req()->access, IBV_ACCESS_LOCAL_WRITE);
	ck_assert_uint_eq(reg_req()->addr, (uintptr_t)region);
	ck_assert_uint_eq(reg_req()->length, sizeof(region));
	ck_assert_uint_eq(reg_req()->iova, (uintptr_t)region);
	ck_assert_ptr_eq(mr->addr, region);
	ck_assert_uint_eq(mr->length, sizeof(region));
	ck_assert_uint_eq(mr->lkey, LKEY);
	ck_assert_uint_eq(mr->rkey, RKEY);
	ck_assert_uint_eq(mr->handle, MR_HANDLE);
	ck_assert_ptr_eq(mr->pd, &pd.ibpd);
	ck_assert_ptr_eq(mr->context, ctx);
	ck_assert_int_eq(ibv_dereg_mr(mr), 0);
	ck_assert_uint_eq(((const struct rocemu_handle_req *)conn_last(ROCEMU_OP_DEREG_MR))->handle,
			  MR_HANDLE);
	mr = ibv_reg_mr_iova(&pd.ibpd, region, 64, 0x10000, IBV_ACCESS_REMOTE_READ);
	ck_assert_ptr_nonnull(mr);
	ck_assert_uint_eq(reg_req()->iova, 0x10000);
	ck_assert_uint_eq(reg_req()->addr, (uintptr_t)region);
	ck_assert_int_eq(ibv_dereg_mr(mr), 0);
	mr = ibv_reg_mr_iova2(&pd.ibpd, region, 64, 0, IBV_ACCESS_REMOTE_WRITE);
	ck_assert_ptr_nonnull(mr);
	ck_assert_uint_eq(reg_req()->iova, 0);
	ck_assert_uint_eq(reg_req()->access, IBV_ACCESS_REMOTE_WRITE);
	ck_assert_int_eq(ibv_dereg_mr(mr), 0);
}
END_TEST

/* The daemon's refusals are the errno: registration, and deregistration, which keeps the MR. */
START_TEST(test_reg_mr_refused)
{
	struct ibv_mr *mr;

	conn_answer(ROCEMU_OP_REG_MR, -EFAULT, NULL, 0, 0);
	errno = 0;
	ck_assert_ptr_null(ibv_reg_mr(&pd.ibpd, region, 64, 0));
	ck_assert_int_eq(errno, EFAULT);
	objs_open();
	mr = ibv_reg_mr(&pd.ibpd, region, 64, 0);
	ck_assert_ptr_nonnull(mr);
	conn_answer(ROCEMU_OP_DEREG_MR, -EBUSY, NULL, 0, 0);
	ck_assert_int_eq(ibv_dereg_mr(mr), EBUSY);
	conn_answer(ROCEMU_OP_DEREG_MR, 0, NULL, 0, 0);
	ck_assert_int_eq(ibv_dereg_mr(mr), 0);
}
END_TEST

/* ibv_rereg_mr's own checks: IBV_REREG_MR_ERR_INPUT with EINVAL, nothing asked of the daemon. */
START_TEST(test_rereg_input)
{
	struct ibv_mr *mr = ibv_reg_mr(&pd.ibpd, region, 64, 0);
	struct ibv_mr *imported;
	int calls;

	ck_assert_ptr_nonnull(mr);
	calls = conn_calls_all();
#define ASSERT_INPUT(flags, p, a, l, acc)                                                  \
	do {                                                                               \
		errno = 0;                                                                 \
		ck_assert_int_eq(ibv_rereg_mr(mr, flags, p, a, l, acc), IBV_REREG_MR_ERR_INPUT); \
		ck_assert_int_eq(errno, EINVAL);                                           \
	} while (0)
	ASSERT_INPUT(IBV_REREG_MR_FLAGS_SUPPORTED + 1, NULL, NULL, 0, 0);
	ASSERT_INPUT(IBV_REREG_MR_CHANGE_TRANSLATION, NULL, region, 0, 0);
	ASSERT_INPUT(IBV_REREG_MR_CHANGE_TRANSLATION, NULL, NULL, 64, 0);
	ASSERT_INPUT(IBV_REREG_MR_CHANGE_PD, NULL, NULL, 0, IBV_ACCESS_LOCAL_WRITE);
	ASSERT_INPUT(IBV_REREG_MR_CHANGE_PD, NULL, NULL, 0, 0);
	ASSERT_INPUT(IBV_REREG_MR_CHANGE_PD, &other_pd.ibpd, NULL, 0, 0);
	ck_assert_int_eq(conn_calls_all(), calls);
	/* An imported MR is not re-registered (libibverbs: mr_type IBV_MR_TYPE_IMPORTED_MR). */
	imported = ibv_import_mr(&pd.ibpd, MR_HANDLE);
	ck_assert_ptr_nonnull(imported);
	calls = conn_calls_all();
	errno = 0;
	ck_assert_int_eq(ibv_rereg_mr(imported, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
				      IBV_ACCESS_LOCAL_WRITE), IBV_REREG_MR_ERR_INPUT);
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_int_eq(conn_calls_all(), calls);
	ibv_unimport_mr(imported);
	ck_assert_int_eq(conn_calls_all(), calls);	/* the local object only */
#undef ASSERT_INPUT
	ck_assert_int_eq(ibv_dereg_mr(mr), 0);
}
END_TEST

/* ibv_rereg_mr: the request, then the MR as changed; the daemon's refusal IBV_REREG_MR_ERR_CMD. */
START_TEST(test_rereg)
{
	struct ibv_mr *mr = ibv_reg_mr(&pd.ibpd, region, 64, 0);
	struct rocemu_reg_mr_resp resp = { .handle = MR_HANDLE, .lkey = 0x77, .rkey = 0x78 };
	const struct rocemu_rereg_mr_req *req;
	int flags = IBV_REREG_MR_CHANGE_PD | IBV_REREG_MR_CHANGE_TRANSLATION |
		    IBV_REREG_MR_CHANGE_ACCESS;

	ck_assert_ptr_nonnull(mr);
	conn_answer(ROCEMU_OP_REREG_MR, 0, &resp, sizeof(resp), 0);
	ck_assert_int_eq(ibv_rereg_mr(mr, flags, &pd2.ibpd, region + 128, 256,
				      IBV_ACCESS_REMOTE_READ | IBV_ACCESS_RELAXED_ORDERING), 0);
	req = conn_last(ROCEMU_OP_REREG_MR);
	ck_assert_uint_eq(req->handle, MR_HANDLE);
	ck_assert_uint_eq(req->flags, (uint32_t)flags);
	ck_assert_uint_eq(req->pdn, PDN + 1);
	ck_assert_uint_eq(req->access, IBV_ACCESS_REMOTE_READ);
	ck_assert_uint_eq(req->addr, (uintptr_t)(region + 128));
	ck_assert_uint_eq(req->iova, (uintptr_t)(region + 128));
	ck_assert_uint_eq(req->length, 256);
	ck_assert_ptr_eq(mr->pd, &pd2.ibpd);
	ck_assert_ptr_eq(mr->addr, region + 128);
	ck_assert_uint_eq(mr->length, 256);
	ck_assert_uint_eq(mr->lkey, 0x77);
	ck_assert_uint_eq(mr->rkey, 0x78);
	/* Access alone: the PD asked of the daemon is the MR's own; addr and length stay. */
	ck_assert_int_eq(ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
				      IBV_ACCESS_LOCAL_WRITE), 0);
	ck_assert_uint_eq(((const struct rocemu_rereg_mr_req *)conn_last(ROCEMU_OP_REREG_MR))->pdn,
			  PDN + 1);
	ck_assert_ptr_eq(mr->addr, region + 128);
	conn_answer(ROCEMU_OP_REREG_MR, -EACCES, NULL, 0, 0);
	errno = 0;
	ck_assert_int_eq(ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_PD, &pd.ibpd, NULL, 0, 0),
			 IBV_REREG_MR_ERR_CMD);
	ck_assert_int_eq(errno, EACCES);
	ck_assert_ptr_eq(mr->pd, &pd2.ibpd);
	ck_assert_uint_eq(mr->lkey, 0x77);
	ck_assert_int_eq(ibv_dereg_mr(mr), 0);
}
END_TEST

/* ibv_import_mr: keys and length from the daemon, addr NULL as ibv_cmd_query_mr leaves it. */
START_TEST(test_import_mr)
{
	struct ibv_mr *mr = ibv_import_mr(&pd.ibpd, 77);

	ck_assert_ptr_nonnull(mr);
	ck_assert_uint_eq(((const struct rocemu_handle_req *)conn_last(ROCEMU_OP_IMPORT_MR))->handle,
			  77);
	ck_assert_ptr_null(mr->addr);
	ck_assert_uint_eq(mr->lkey, LKEY);
	ck_assert_uint_eq(mr->length, sizeof(region));
	ibv_unimport_mr(mr);
	conn_answer(ROCEMU_OP_IMPORT_MR, -ENOENT, NULL, 0, 0);
	errno = 0;
	ck_assert_ptr_null(ibv_import_mr(&pd.ibpd, 78));
	ck_assert_int_eq(errno, ENOENT);
}
END_TEST

static void answer_dm(enum rocemu_ctrl_op op, uint64_t length, uint64_t map_size)
{
	struct rocemu_dm_resp resp = { .handle = DM_HANDLE, .length = length, .map_size = map_size };

	conn_answer(op, 0, &resp, sizeof(resp), map_size);
}

/* alloc_dm: mlx5dv_alloc_dm's checks (comp_mask, max_dm_size) EINVAL; the request as asked. */
START_TEST(test_alloc_dm)
{
	struct ibv_alloc_dm_attr attr = { .length = DM_LEN, .log_align_req = 6 };
	const struct rocemu_alloc_dm_req *req;
	struct ibv_dm *dm;

	attr.comp_mask = 1;
	errno = 0;
	ck_assert_ptr_null(rocemu_alloc_dm_op(ctx, &attr));
	ck_assert_int_eq(errno, EINVAL);
	attr.comp_mask = 0;
	attr.length = ROCEMU_DM_MAX_SIZE + 1;
	errno = 0;
	ck_assert_ptr_null(rocemu_alloc_dm_op(ctx, &attr));
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_int_eq(conn_calls_all(), 0);
	attr.length = DM_LEN;
	answer_dm(ROCEMU_OP_ALLOC_DM, DM_LEN, DM_MAP);
	dm = rocemu_alloc_dm_op(ctx, &attr);
	ck_assert_ptr_nonnull(dm);
	req = conn_last(ROCEMU_OP_ALLOC_DM);
	ck_assert_uint_eq(req->length, DM_LEN);
	ck_assert_uint_eq(req->log_align_req, 6);
	ck_assert_uint_eq(dm->handle, DM_HANDLE);
	ck_assert_uint_eq(dm->comp_mask, IBV_DM_MASK_HANDLE);
	ck_assert_ptr_eq(dm->context, ctx);
	conn_answer(ROCEMU_OP_FREE_DM, -EBUSY, NULL, 0, 0);
	ck_assert_int_eq(rocemu_free_dm_op(dm), EBUSY);
	conn_answer(ROCEMU_OP_FREE_DM, 0, NULL, 0, 0);
	ck_assert_int_eq(rocemu_free_dm_op(dm), 0);
	ck_assert_uint_eq(((const struct rocemu_handle_req *)conn_last(ROCEMU_OP_FREE_DM))->handle,
			  DM_HANDLE);
	/* A region longer than its mapping is freed again and fails the allocation. */
	answer_dm(ROCEMU_OP_ALLOC_DM, DM_MAP + 4, DM_MAP);
	errno = 0;
	ck_assert_ptr_null(rocemu_alloc_dm_op(ctx, &attr));
	ck_assert_int_eq(errno, ENOMEM);
	ck_assert_int_eq(conn_calls(ROCEMU_OP_FREE_DM), 3);
	conn_answer(ROCEMU_OP_ALLOC_DM, -ENOSPC, NULL, 0, 0);
	errno = 0;
	ck_assert_ptr_null(rocemu_alloc_dm_op(ctx, &attr));
	ck_assert_int_eq(errno, ENOSPC);
}
END_TEST

/* mlx5_access_dm: past the end EFAULT, then unaligned EINVAL; 4-byte words, any host alignment. */
START_TEST(test_dm_copy)
{
	struct ibv_alloc_dm_attr attr = { .length = DM_LEN };
	char in[20], out[21] = { 0 };
	struct mlx5dv_dm dv = { .comp_mask = MLX5DV_DM_MASK_REMOTE_VA };
	struct ibv_dm *dm;

	answer_dm(ROCEMU_OP_ALLOC_DM, DM_LEN, DM_MAP);
	dm = rocemu_alloc_dm_op(ctx, &attr);
	ck_assert_ptr_nonnull(dm);
	memcpy(in, "0123456789abcdefghij", sizeof(in));
	ck_assert_int_eq(ibv_memcpy_to_dm(dm, 8, in + 1, 16), 0);
	ck_assert_int_eq(ibv_memcpy_from_dm(out + 1, dm, 8, 16), 0);
	ck_assert_mem_eq(out + 1, in + 1, 16);
	ck_assert_int_eq(ibv_memcpy_to_dm(dm, DM_LEN - 4, in, 8), EFAULT);
	ck_assert_int_eq(ibv_memcpy_from_dm(out, dm, DM_LEN + 4, 4), EFAULT);
	ck_assert_int_eq(ibv_memcpy_to_dm(dm, 2, in, 4), EINVAL);
	ck_assert_int_eq(ibv_memcpy_to_dm(dm, 0, in, 6), EINVAL);
	ck_assert_int_eq(ibv_memcpy_to_dm(dm, DM_LEN - 4, in, 4), 0);
	/* The region as mlx5dv_init_obj gives it: a MEMIC has no remote address. */
	ck_assert_int_eq(rocemu_dm_dv(dm, &dv), 0);
	ck_assert_uint_eq(dv.length, DM_LEN);
	ck_assert_mem_eq((const char *)dv.buf + 8, in + 1, 16);
	ck_assert_uint_eq(dv.comp_mask, MLX5DV_DM_MASK_REMOTE_VA);
	ck_assert_uint_eq(dv.remote_va, 0);
	dv.comp_mask = 0;
	ck_assert_int_eq(rocemu_dm_dv(dm, &dv), 0);
	ck_assert_uint_eq(dv.comp_mask, 0);
	ck_assert_int_eq(rocemu_free_dm_op(dm), 0);
}
END_TEST

/* ibv_import_dm maps what the daemon answers; one that cannot be mapped just fails. */
START_TEST(test_import_dm)
{
	struct ibv_dm *dm;

	answer_dm(ROCEMU_OP_IMPORT_DM, DM_LEN, DM_MAP);
	dm = ibv_import_dm(ctx, DM_HANDLE);
	ck_assert_ptr_nonnull(dm);
	ck_assert_uint_eq(((const struct rocemu_handle_req *)conn_last(ROCEMU_OP_IMPORT_DM))->handle,
			  DM_HANDLE);
	ck_assert_int_eq(ibv_memcpy_to_dm(dm, 0, "abcd", 4), 0);
	ibv_unimport_dm(dm);
	ck_assert_int_eq(conn_calls(ROCEMU_OP_FREE_DM), 0);
	answer_dm(ROCEMU_OP_IMPORT_DM, DM_MAP * 2, DM_MAP);
	errno = 0;
	ck_assert_ptr_null(ibv_import_dm(ctx, DM_HANDLE));
	ck_assert_int_eq(errno, ENOMEM);
	ck_assert_int_eq(conn_calls(ROCEMU_OP_FREE_DM), 0);
}
END_TEST

/* reg_dm_mr: mlx5's allowed access and ibv_cmd_reg_dm_mr's zero base, else EINVAL; the request. */
START_TEST(test_reg_dm_mr)
{
	struct ibv_alloc_dm_attr attr = { .length = DM_LEN };
	const struct rocemu_reg_dm_mr_req *req;
	struct ibv_dm *dm;
	struct ibv_mr *mr;

	answer_dm(ROCEMU_OP_ALLOC_DM, DM_LEN, DM_MAP);
	dm = rocemu_alloc_dm_op(ctx, &attr);
	ck_assert_ptr_nonnull(dm);
	errno = 0;
	ck_assert_ptr_null(rocemu_reg_dm_mr_op(&pd.ibpd, dm, 0, 64, IBV_ACCESS_LOCAL_WRITE));
	ck_assert_int_eq(errno, EINVAL);
	errno = 0;
	ck_assert_ptr_null(rocemu_reg_dm_mr_op(&pd.ibpd, dm, 0, 64,
					       IBV_ACCESS_ZERO_BASED | IBV_ACCESS_MW_BIND));
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_int_eq(conn_calls(ROCEMU_OP_REG_DM_MR), 0);
	mr = rocemu_reg_dm_mr_op(&pd.ibpd, dm, 64, 128,
				 IBV_ACCESS_ZERO_BASED | IBV_ACCESS_REMOTE_READ |
				 IBV_ACCESS_RELAXED_ORDERING);
	ck_assert_ptr_nonnull(mr);
	req = conn_last(ROCEMU_OP_REG_DM_MR);
	ck_assert_uint_eq(req->pdn, PDN);
	ck_assert_uint_eq(req->dm, DM_HANDLE);
	ck_assert_uint_eq(req->offset, 64);
	ck_assert_uint_eq(req->length, 128);
	ck_assert_uint_eq(req->access, IBV_ACCESS_ZERO_BASED | IBV_ACCESS_REMOTE_READ);
	ck_assert_ptr_null(mr->addr);
	ck_assert_uint_eq(mr->rkey, RKEY);
	ck_assert_int_eq(ibv_dereg_mr(mr), 0);
	ck_assert_int_eq(rocemu_free_dm_op(dm), 0);
}
END_TEST

/* ibv_alloc_mw and ibv_dealloc_mw: the request, the window from the answer, a refusal's errno. */
START_TEST(test_mw)
{
	struct rocemu_alloc_mw_resp resp = { .rkey = 0x00123400, .handle = 3 };
	const struct rocemu_alloc_mw_req *req;
	struct ibv_mw *mw;

	conn_answer(ROCEMU_OP_ALLOC_MW, 0, &resp, sizeof(resp), 0);
	mw = rocemu_alloc_mw_op(&pd.ibpd, IBV_MW_TYPE_2);
	ck_assert_ptr_nonnull(mw);
	req = conn_last(ROCEMU_OP_ALLOC_MW);
	ck_assert_uint_eq(req->pdn, PDN);
	ck_assert_uint_eq(req->type, IBV_MW_TYPE_2);
	ck_assert_uint_eq(mw->rkey, 0x00123400);
	ck_assert_uint_eq(mw->handle, 3);
	ck_assert_int_eq(mw->type, IBV_MW_TYPE_2);
	ck_assert_ptr_eq(mw->pd, &pd.ibpd);
	conn_answer(ROCEMU_OP_DEALLOC_MW, -EBUSY, NULL, 0, 0);
	ck_assert_int_eq(rocemu_dealloc_mw_op(mw), EBUSY);
	conn_answer(ROCEMU_OP_DEALLOC_MW, 0, NULL, 0, 0);
	ck_assert_int_eq(rocemu_dealloc_mw_op(mw), 0);
	ck_assert_uint_eq(((const struct rocemu_handle_req *)conn_last(ROCEMU_OP_DEALLOC_MW))->handle,
			  3);
	conn_answer(ROCEMU_OP_ALLOC_MW, -EINVAL, NULL, 0, 0);
	errno = 0;
	ck_assert_ptr_null(rocemu_alloc_mw_op(&pd.ibpd, IBV_MW_TYPE_1));
	ck_assert_int_eq(errno, EINVAL);
}
END_TEST

/* ibv_bind_mw: a BIND_MW with the next rkey variant, which the window takes once posted. */
START_TEST(test_bind_mw)
{
	struct ibv_mw mw = { .context = ctx, .pd = &pd.ibpd, .rkey = 0x001234ff,
			     .type = IBV_MW_TYPE_1 };
	struct ibv_mw_bind bind = {
		.wr_id = 9, .send_flags = IBV_SEND_SIGNALED,
		.bind_info = { .addr = (uintptr_t)region, .length = 64,
			       .mw_access_flags = IBV_ACCESS_REMOTE_READ },
	};

	ck_assert_int_eq(rocemu_bind_mw_op(&bind_qp, &mw, &bind), 0);
	ck_assert_int_eq(posts, 1);
	ck_assert_int_eq(posted.opcode, IBV_WR_BIND_MW);
	ck_assert_uint_eq(posted.wr_id, 9);
	ck_assert_uint_eq(posted.send_flags, IBV_SEND_SIGNALED);
	ck_assert_ptr_eq(posted.bind_mw.mw, &mw);
	ck_assert_uint_eq(posted.bind_mw.rkey, 0x00123400);	/* the key byte wraps */
	ck_assert_uint_eq(posted.bind_mw.bind_info.length, 64);
	ck_assert_uint_eq(mw.rkey, 0x00123400);
	/* A post that fails leaves the window's key as it was. */
	post_answer = ENOMEM;
	ck_assert_int_eq(rocemu_bind_mw_op(&bind_qp, &mw, &bind), ENOMEM);
	ck_assert_uint_eq(posted.bind_mw.rkey, 0x00123401);
	ck_assert_uint_eq(mw.rkey, 0x00123400);
}
END_TEST

/* ibv_cmd_open_xrcd's checks: unknown bits EOPNOTSUPP, fd and oflags both required EINVAL. */
START_TEST(test_open_xrcd_checks)
{
	struct ibv_xrcd_init_attr attr = { .comp_mask = IBV_XRCD_INIT_ATTR_RESERVED, .fd = -1 };

	errno = 0;
	ck_assert_ptr_null(rocemu_open_xrcd_op(ctx, &attr));
	ck_assert_int_eq(errno, EOPNOTSUPP);
	attr.comp_mask = IBV_XRCD_INIT_ATTR_FD;
	errno = 0;
	ck_assert_ptr_null(rocemu_open_xrcd_op(ctx, &attr));
	ck_assert_int_eq(errno, EINVAL);
	attr.comp_mask = IBV_XRCD_INIT_ATTR_OFLAGS;
	errno = 0;
	ck_assert_ptr_null(rocemu_open_xrcd_op(ctx, &attr));
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_int_eq(conn_calls_all(), 0);
}
END_TEST

/* A private domain (fd -1) or a file's: the fd goes along, the domain's numbers come back. */
START_TEST(test_open_xrcd)
{
	struct rocemu_open_xrcd_resp resp = { .handle = 6, .xrcdn = 60 };
	struct ibv_xrcd_init_attr attr = {
		.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS, .fd = -1,
		.oflags = O_CREAT,
	};
	const struct rocemu_open_xrcd_req *req;
	struct ibv_xrcd *xrcd;
	int fd = open("/dev/null", O_RDONLY);

	ck_assert_int_ge(fd, 0);
	conn_answer(ROCEMU_OP_OPEN_XRCD, 0, &resp, sizeof(resp), 0);
	xrcd = rocemu_open_xrcd_op(ctx, &attr);
	ck_assert_ptr_nonnull(xrcd);
	req = conn_last(ROCEMU_OP_OPEN_XRCD);
	ck_assert_uint_eq(req->shared, 0);
	ck_assert_uint_eq(req->oflags, O_CREAT);
	ck_assert_int_eq(conn_last_fd(ROCEMU_OP_OPEN_XRCD), -1);
	ck_assert_uint_eq(to_rxrcd(xrcd)->handle, 6);
	ck_assert_uint_eq(to_rxrcd(xrcd)->xrcdn, 60);
	ck_assert_ptr_eq(xrcd->context, ctx);
	ck_assert_int_eq(rocemu_close_xrcd_op(xrcd), 0);
	ck_assert_uint_eq(((const struct rocemu_handle_req *)conn_last(ROCEMU_OP_CLOSE_XRCD))->handle,
			  6);
	attr.fd = fd;
	attr.oflags = O_CREAT | O_EXCL;
	xrcd = rocemu_open_xrcd_op(ctx, &attr);
	ck_assert_ptr_nonnull(xrcd);
	req = conn_last(ROCEMU_OP_OPEN_XRCD);
	ck_assert_uint_eq(req->shared, 1);
	ck_assert_uint_eq(req->oflags, O_CREAT | O_EXCL);
	ck_assert_int_eq(conn_last_fd(ROCEMU_OP_OPEN_XRCD), fd);
	conn_answer(ROCEMU_OP_CLOSE_XRCD, -EBUSY, NULL, 0, 0);
	ck_assert_int_eq(rocemu_close_xrcd_op(xrcd), EBUSY);
	conn_answer(ROCEMU_OP_CLOSE_XRCD, 0, NULL, 0, 0);
	ck_assert_int_eq(rocemu_close_xrcd_op(xrcd), 0);
	conn_answer(ROCEMU_OP_OPEN_XRCD, -EEXIST, NULL, 0, 0);
	errno = 0;
	ck_assert_ptr_null(rocemu_open_xrcd_op(ctx, &attr));
	ck_assert_int_eq(errno, EEXIST);
	close(fd);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("mem_objs");
	TCase *mr = tcase_create("mr"), *dm = tcase_create("dm"), *mw = tcase_create("mw"),
	      *xrcd = tcase_create("xrcd");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(mr, objs_open, NULL);
	tcase_add_test(mr, test_reg_mr);
	tcase_add_test(mr, test_reg_mr_refused);
	tcase_add_test(mr, test_rereg_input);
	tcase_add_test(mr, test_rereg);
	tcase_add_test(mr, test_import_mr);
	suite_add_tcase(s, mr);
	tcase_add_checked_fixture(dm, objs_open, NULL);
	tcase_add_test(dm, test_alloc_dm);
	tcase_add_test(dm, test_dm_copy);
	tcase_add_test(dm, test_import_dm);
	tcase_add_test(dm, test_reg_dm_mr);
	suite_add_tcase(s, dm);
	tcase_add_checked_fixture(mw, objs_open, NULL);
	tcase_add_test(mw, test_mw);
	tcase_add_test(mw, test_bind_mw);
	suite_add_tcase(s, mw);
	tcase_add_checked_fixture(xrcd, objs_open, NULL);
	tcase_add_test(xrcd, test_open_xrcd_checks);
	tcase_add_test(xrcd, test_open_xrcd);
	suite_add_tcase(s, xrcd);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
