/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Thread domains, parent domains and the memory a queue takes
 * (lib/verbs/domain.c, lib/verbs/queue_buf.c, the PD side of
 * lib/verbs/pd_mr.c): the checks of mlx5_alloc_td and
 * mlx5_alloc_parent_domain with their errno, the holds that make a TD, a
 * PD or a parent domain EBUSY while used, a parent domain's allocators
 * called as libmlx5 calls them (buffer page aligned, then the 8-byte
 * doorbell record; IBV_ALLOCATOR_USE_DEFAULT; NULL for ENOMEM), and
 * MLX_*_ALLOC_TYPE's kinds with the errno libmlx5's create would give.
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/shm.h>
#include <unistd.h>

#include "lib/shim.h"
#include "tests/unit/verbs/daemon_conn.h"

#define PDN 11
#define HUGE_SEG (2UL << 20)
#define CHUNK (32UL << 10)

static struct rocemu_device device;
static struct ibv_device ibdev;
static struct rocemu_context rctx, other_rctx;
static struct ibv_context *const ctx = &rctx.vctx.context;
static struct ibv_context *const other_ctx = &other_rctx.vctx.context;
static struct ibv_pd *pd;
static struct rocemu_pd other_pd;
static int pd_context_mark;

/* What the parent domain's allocators were called with, and what alloc gives back in turn. */
struct alloc_call {
	struct ibv_pd *pd;
	void *pd_context;
	size_t size, alignment;
	uint64_t type;
	void *ptr;
};
static struct alloc_call allocs[4], frees[4];
static int nallocs, nfrees;
static void *alloc_answers[4];	/* per call: NULL, IBV_ALLOCATOR_USE_DEFAULT, or (void *)1: malloc */

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

static void *test_alloc(struct ibv_pd *p, void *pd_context, size_t size, size_t alignment,
			uint64_t resource_type)
{
	struct alloc_call *c;
	void *answer;

	ck_assert_int_lt(nallocs, 4);
	c = &allocs[nallocs];
	answer = alloc_answers[nallocs++];
	*c = (struct alloc_call){ .pd = p, .pd_context = pd_context, .size = size,
				  .alignment = alignment, .type = resource_type, .ptr = answer };
	if (answer == (void *)1)
		ck_assert_int_eq(posix_memalign(&c->ptr, alignment, size), 0);
	return c->ptr;
}

static void test_free(struct ibv_pd *p, void *pd_context, void *ptr, uint64_t resource_type)
{
	ck_assert_int_lt(nfrees, 4);
	frees[nfrees++] = (struct alloc_call){ .pd = p, .pd_context = pd_context, .ptr = ptr,
					       .type = resource_type };
	free(ptr);
}

static void ctx_init(struct rocemu_context *r)
{
	memset(r, 0, sizeof(*r));
	r->vctx.context.device = &ibdev;
	pthread_mutex_init(&r->vctx.context.mutex, NULL);
	rocemu_huge_pool_init(&r->huge_pool);
}

static void domain_open(void)
{
	struct rocemu_alloc_pd_resp resp = { .pdn = PDN };

	ctx_init(&rctx);
	ctx_init(&other_rctx);
	other_pd = (struct rocemu_pd){ .ibpd = { .context = other_ctx } };
	nallocs = nfrees = 0;
	memset(allocs, 0, sizeof(allocs));
	memset(frees, 0, sizeof(frees));
	for (int i = 0; i < 4; i++)
		alloc_answers[i] = (void *)1;
	unsetenv("MLX_QP_ALLOC_TYPE");
	unsetenv("MLX_CQ_ALLOC_TYPE");
	unsetenv("MLX_SRQ_ALLOC_TYPE");
	conn_reset();
	conn_answer(ROCEMU_OP_ALLOC_PD, 0, &resp, sizeof(resp), 0);
	pd = ibv_alloc_pd(ctx);
	ck_assert_ptr_nonnull(pd);
}

static void domain_close(void)
{
	if (pd)
		ck_assert_int_eq(ibv_dealloc_pd(pd), 0);
}

static struct ibv_pd *parent_of(uint32_t comp_mask, struct ibv_td *td)
{
	struct ibv_parent_domain_init_attr attr = {
		.pd = pd, .td = td, .comp_mask = comp_mask, .alloc = test_alloc,
		.free = test_free, .pd_context = &pd_context_mark,
	};

	return rocemu_alloc_parent_domain_op(ctx, &attr);
}

/* mlx5_alloc_td: comp_mask EINVAL; a TD a parent domain holds is EBUSY until that goes. */
START_TEST(test_td)
{
	struct ibv_td_init_attr bad = { .comp_mask = 1 }, attr = { 0 };
	struct ibv_td *td;
	struct ibv_pd *parent;

	errno = 0;
	ck_assert_ptr_null(rocemu_alloc_td_op(ctx, &bad));
	ck_assert_int_eq(errno, EINVAL);
	td = rocemu_alloc_td_op(ctx, &attr);
	ck_assert_ptr_nonnull(td);
	ck_assert_ptr_eq(td->context, ctx);
	parent = parent_of(0, td);
	ck_assert_ptr_nonnull(parent);
	ck_assert_int_eq(rocemu_dealloc_td_op(td), EBUSY);
	ck_assert_int_eq(ibv_dealloc_pd(parent), 0);
	ck_assert_int_eq(rocemu_dealloc_td_op(td), 0);
	ck_assert_int_eq(conn_calls_all(), 1);	/* the PD's ALLOC_PD alone: TDs are userspace's */
}
END_TEST

/* A parent domain needs a PD (ibv_check_alloc_parent_domain) and known comp_mask bits (mlx5). */
START_TEST(test_parent_domain_checks)
{
	struct ibv_td_init_attr tattr = { 0 };
	struct ibv_td *other_td = rocemu_alloc_td_op(other_ctx, &tattr);
	struct ibv_parent_domain_init_attr attr = { .pd = pd };

	attr.pd = NULL;
	errno = 0;
	ck_assert_ptr_null(rocemu_alloc_parent_domain_op(ctx, &attr));
	ck_assert_int_eq(errno, EINVAL);
	attr.pd = pd;
	attr.comp_mask = IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT << 1;
	errno = 0;
	ck_assert_ptr_null(rocemu_alloc_parent_domain_op(ctx, &attr));
	ck_assert_int_eq(errno, EINVAL);
	attr.comp_mask = 0;
	attr.pd = &other_pd.ibpd;
	errno = 0;
	ck_assert_ptr_null(rocemu_alloc_parent_domain_op(ctx, &attr));
	ck_assert_int_eq(errno, EINVAL);
	attr.pd = pd;
	attr.td = other_td;
	errno = 0;
	ck_assert_ptr_null(rocemu_alloc_parent_domain_op(ctx, &attr));
	ck_assert_int_eq(errno, EINVAL);
	/* Nothing was held by the refusals. */
	ck_assert_uint_eq(to_rpd(pd)->holders, 0);
	ck_assert_int_eq(rocemu_dealloc_td_op(other_td), 0);
}
END_TEST

/* A parent domain is its PD to every verb; the PD stays while it does (mlx5_free_pd: EBUSY). */
START_TEST(test_parent_domain_holds_pd)
{
	struct ibv_pd *parent = parent_of(IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT, NULL);
	const struct rocemu_handle_req *req;

	ck_assert_ptr_nonnull(parent);
	ck_assert_ptr_eq(to_rparent_domain(parent)->rpd.protection_domain, to_rpd(pd));
	ck_assert_uint_eq(to_rpd(parent)->pdn, PDN);
	ck_assert_uint_eq(parent->handle, pd->handle);
	ck_assert_ptr_eq(parent->context, ctx);
	ck_assert_ptr_eq(to_rparent_domain(parent)->pd_context, &pd_context_mark);
	ck_assert_ptr_null(to_rparent_domain(pd));
	ck_assert_int_eq(ibv_dealloc_pd(pd), EBUSY);
	/* ibv_unimport_pd leaves a held PD and a parent domain alone (mlx5_unimport_pd). */
	ibv_unimport_pd(pd);
	ibv_unimport_pd(parent);
	ck_assert_int_eq(conn_calls(ROCEMU_OP_DEALLOC_PD), 0);
	ck_assert_int_eq(ibv_dealloc_pd(parent), 0);
	ck_assert_int_eq(conn_calls(ROCEMU_OP_DEALLOC_PD), 0);	/* the daemon never knew it */
	ck_assert_int_eq(ibv_dealloc_pd(pd), 0);
	req = conn_last(ROCEMU_OP_DEALLOC_PD);
	ck_assert_uint_eq(req->handle, PDN);
	pd = NULL;
}
END_TEST

/* A PD the daemon will not free stays ours; ALLOC_PD refused is its errno. */
START_TEST(test_pd_daemon_answers)
{
	conn_answer(ROCEMU_OP_DEALLOC_PD, -EBUSY, NULL, 0, 0);
	ck_assert_int_eq(ibv_dealloc_pd(pd), EBUSY);
	conn_answer(ROCEMU_OP_DEALLOC_PD, 0, NULL, 0, 0);
	conn_answer(ROCEMU_OP_ALLOC_PD, -ENOMEM, NULL, 0, 0);
	errno = 0;
	ck_assert_ptr_null(ibv_alloc_pd(ctx));
	ck_assert_int_eq(errno, ENOMEM);
}
END_TEST

/* The allocators as mlx5 calls them: the buffer page aligned and rounded, then the doorbell record. */
START_TEST(test_allocators)
{
	struct ibv_pd *parent = parent_of(IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS |
					  IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT, NULL);
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	struct rocemu_domain_res res;

	ck_assert_ptr_nonnull(parent);
	ck_assert_int_eq(rocemu_domain_res_take(&res, ctx, parent, MLX5DV_RES_TYPE_QP, page + 1), 0);
	ck_assert_int_eq(nallocs, 2);
	ck_assert_ptr_eq(allocs[0].pd, parent);
	ck_assert_ptr_eq(allocs[0].pd_context, &pd_context_mark);
	ck_assert_uint_eq(allocs[0].size, 2 * page);
	ck_assert_uint_eq(allocs[0].alignment, page);
	ck_assert_uint_eq(allocs[0].type, MLX5DV_RES_TYPE_QP);
	ck_assert_uint_eq(allocs[1].size, 8);
	ck_assert_uint_eq(allocs[1].alignment, 8);
	ck_assert_uint_eq(allocs[1].type, MLX5DV_RES_TYPE_DBR);
	ck_assert_ptr_eq(res.buf, allocs[0].ptr);
	ck_assert_ptr_eq(res.dbr, allocs[1].ptr);
	/* Held: the parent domain cannot go while the resource has its memory. */
	ck_assert_int_eq(ibv_dealloc_pd(parent), EBUSY);
	rocemu_domain_res_give(&res);
	ck_assert_int_eq(nfrees, 2);
	ck_assert_ptr_eq(frees[0].ptr, allocs[1].ptr);
	ck_assert_uint_eq(frees[0].type, MLX5DV_RES_TYPE_DBR);
	ck_assert_ptr_eq(frees[1].ptr, allocs[0].ptr);
	ck_assert_uint_eq(frees[1].type, MLX5DV_RES_TYPE_QP);
	ck_assert_ptr_eq(frees[1].pd_context, &pd_context_mark);
	ck_assert_int_eq(ibv_dealloc_pd(parent), 0);
}
END_TEST

/* IBV_ALLOCATOR_USE_DEFAULT for the buffer: mlx5's own (ANON, whatever the env says). */
START_TEST(test_allocator_use_default)
{
	struct ibv_pd *parent = parent_of(IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS, NULL);
	struct rocemu_domain_res res;

	ck_assert_ptr_nonnull(parent);
	alloc_answers[0] = IBV_ALLOCATOR_USE_DEFAULT;
	setenv("MLX_CQ_ALLOC_TYPE", "CONTIG", 1);
	ck_assert_int_eq(rocemu_domain_res_take(&res, ctx, parent, MLX5DV_RES_TYPE_CQ, 100), 0);
	ck_assert_ptr_null(res.buf);
	ck_assert_ptr_nonnull(res.dbr);
	rocemu_domain_res_give(&res);
	ck_assert_int_eq(nfrees, 1);	/* the doorbell record's only */
	ck_assert_uint_eq(frees[0].type, MLX5DV_RES_TYPE_DBR);
	ck_assert_int_eq(ibv_dealloc_pd(parent), 0);
}
END_TEST

/* An allocator's NULL fails the create with ENOMEM, giving back what it took and holding nothing. */
START_TEST(test_allocator_null)
{
	struct ibv_pd *parent = parent_of(IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS, NULL);
	struct rocemu_domain_res res;

	ck_assert_ptr_nonnull(parent);
	alloc_answers[0] = NULL;
	ck_assert_int_eq(rocemu_domain_res_take(&res, ctx, parent, MLX5DV_RES_TYPE_SRQ, 64), ENOMEM);
	ck_assert_int_eq(nallocs, 1);
	alloc_answers[1] = (void *)1;
	alloc_answers[2] = NULL;	/* the doorbell record's */
	ck_assert_int_eq(rocemu_domain_res_take(&res, ctx, parent, MLX5DV_RES_TYPE_SRQ, 64), ENOMEM);
	ck_assert_int_eq(nfrees, 1);
	ck_assert_ptr_eq(frees[0].ptr, allocs[1].ptr);
	ck_assert_uint_eq(frees[0].type, MLX5DV_RES_TYPE_SRQ);
	ck_assert_int_eq(ibv_dealloc_pd(parent), 0);
}
END_TEST

/* mlx5_is_custom_alloc: without both functions, or without the mask bit, no allocator is called. */
START_TEST(test_allocators_not_custom)
{
	struct ibv_parent_domain_init_attr attr = {
		.pd = pd, .comp_mask = IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS, .alloc = test_alloc,
	};
	struct ibv_pd *parent = rocemu_alloc_parent_domain_op(ctx, &attr);
	struct ibv_pd *no_mask = parent_of(0, NULL);
	struct rocemu_domain_res res;

	ck_assert_ptr_nonnull(parent);
	ck_assert_ptr_nonnull(no_mask);
	ck_assert_int_eq(rocemu_domain_res_take(&res, ctx, parent, MLX5DV_RES_TYPE_QP, 64), 0);
	ck_assert_ptr_null(res.buf);
	ck_assert_ptr_eq(res.domain, to_rparent_domain(parent));	/* held all the same */
	rocemu_domain_res_give(&res);
	ck_assert_int_eq(rocemu_domain_res_take(&res, ctx, no_mask, MLX5DV_RES_TYPE_QP, 64), 0);
	rocemu_domain_res_give(&res);
	ck_assert_int_eq(nallocs, 0);
	ck_assert_int_eq(ibv_dealloc_pd(parent), 0);
	ck_assert_int_eq(ibv_dealloc_pd(no_mask), 0);
	/* On a plain PD, nothing is held. */
	ck_assert_int_eq(rocemu_domain_res_take(&res, ctx, pd, MLX5DV_RES_TYPE_QP, 64), 0);
	ck_assert_ptr_null(res.domain);
	rocemu_domain_res_give(&res);
}
END_TEST

/* MLX_*_ALLOC_TYPE, each read for its own resource: contiguous pages required fail with ENOSYS. */
START_TEST(test_alloc_types)
{
	struct rocemu_queue_buf buf;

	setenv("MLX_CQ_ALLOC_TYPE", "CONTIG", 1);
	ck_assert_int_eq(rocemu_queue_buf_take(&rctx, MLX5DV_RES_TYPE_CQ, 4096, &buf), ENOSYS);
	ck_assert_int_eq(rocemu_queue_buf_take(&rctx, MLX5DV_RES_TYPE_QP, 4096, &buf), 0);
	ck_assert_int_eq(rocemu_queue_buf_take(&rctx, MLX5DV_RES_TYPE_SRQ, 4096, &buf), 0);
	setenv("MLX_QP_ALLOC_TYPE", "contig", 1);	/* mlx5 compares without case */
	ck_assert_int_eq(rocemu_queue_buf_take(&rctx, MLX5DV_RES_TYPE_QP, 4096, &buf), ENOSYS);
	setenv("MLX_SRQ_ALLOC_TYPE", "CONTIG", 1);
	ck_assert_int_eq(rocemu_queue_buf_take(&rctx, MLX5DV_RES_TYPE_SRQ, 4096, &buf), ENOSYS);
	/* Preferred kinds fall back to ordinary pages; an unknown name is ANON. */
	setenv("MLX_CQ_ALLOC_TYPE", "PREFER_CONTIG", 1);
	ck_assert_int_eq(rocemu_queue_buf_take(&rctx, MLX5DV_RES_TYPE_CQ, 4096, &buf), 0);
	ck_assert_ptr_null(buf.seg);
	setenv("MLX_CQ_ALLOC_TYPE", "ALL", 1);
	ck_assert_int_eq(rocemu_queue_buf_take(&rctx, MLX5DV_RES_TYPE_CQ, 4096, &buf), 0);
	rocemu_queue_buf_give(&buf);
	setenv("MLX_CQ_ALLOC_TYPE", "PREFER_HUGE", 1);
	ck_assert_int_eq(rocemu_queue_buf_take(&rctx, MLX5DV_RES_TYPE_CQ, 4096, &buf), 0);
	rocemu_queue_buf_give(&buf);
	setenv("MLX_CQ_ALLOC_TYPE", "NOSUCH", 1);
	ck_assert_int_eq(rocemu_queue_buf_take(&rctx, MLX5DV_RES_TYPE_CQ, 4096, &buf), 0);
	ck_assert_ptr_null(buf.seg);
}
END_TEST

/*
 * HUGE: 32 KiB chunks of shared 2 MiB SysV huge page segments, as
 * alloc_huge_buf; where this machine gives none, shmget's errno, which is
 * what libmlx5's create fails with.
 */
START_TEST(test_alloc_huge)
{
	struct rocemu_queue_buf a, b;
	int probe = shmget(IPC_PRIVATE, HUGE_SEG, SHM_HUGETLB | SHM_R | SHM_W);
	int probe_err = errno;

	if (probe >= 0)
		shmctl(probe, IPC_RMID, NULL);
	setenv("MLX_SRQ_ALLOC_TYPE", "HUGE", 1);
	ck_assert_int_eq(rocemu_queue_buf_take(&rctx, MLX5DV_RES_TYPE_SRQ, 0, &a), 0);
	ck_assert_ptr_null(a.seg);
	if (probe < 0) {
		ck_assert_int_eq(rocemu_queue_buf_take(&rctx, MLX5DV_RES_TYPE_SRQ, CHUNK + 1, &a),
				 probe_err);
		ck_assert_ptr_null(a.seg);
		ck_assert_ptr_null(rctx.huge_pool.segs);
		return;
	}
	ck_assert_int_eq(rocemu_queue_buf_take(&rctx, MLX5DV_RES_TYPE_SRQ, CHUNK + 1, &a), 0);
	ck_assert_ptr_nonnull(a.seg);
	ck_assert_uint_eq(a.first, 0);
	ck_assert_uint_eq(a.count, 2);
	ck_assert_int_eq(rocemu_queue_buf_take(&rctx, MLX5DV_RES_TYPE_SRQ, CHUNK, &b), 0);
	ck_assert_ptr_eq(b.seg, a.seg);		/* the same segment, the next chunk */
	ck_assert_uint_eq(b.first, 2);
	rocemu_queue_buf_give(&a);
	ck_assert_ptr_nonnull(rctx.huge_pool.segs);
	rocemu_queue_buf_give(&b);
	ck_assert_ptr_null(rctx.huge_pool.segs);	/* the last chunk given back detaches it */
}
END_TEST

int main(void)
{
	Suite *s = suite_create("domain");
	TCase *tc = tcase_create("domain");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(tc, domain_open, domain_close);
	tcase_add_test(tc, test_td);
	tcase_add_test(tc, test_parent_domain_checks);
	tcase_add_test(tc, test_parent_domain_holds_pd);
	tcase_add_test(tc, test_pd_daemon_answers);
	tcase_add_test(tc, test_allocators);
	tcase_add_test(tc, test_allocator_use_default);
	tcase_add_test(tc, test_allocator_null);
	tcase_add_test(tc, test_allocators_not_custom);
	tcase_add_test(tc, test_alloc_types);
	tcase_add_test(tc, test_alloc_huge);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
