/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Receive WQs and RSS indirection tables on an emulated device
 * (lib/verbs/wq.c): the CREATE_WQ request from ibv_wq_init_attr and the
 * WQ as answered, a layout that breaks the ring contract refused (EPROTO,
 * the daemon's WQ destroyed), the daemon's errno passed on, posting to the
 * WQ in mlx5's RQ format with its doorbell record, ibv_modify_wq's state
 * and the ring emptied at RESET, and a table's request and handle. The
 * daemon is daemon_conn.h's recording stand-in.
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/shim.h"
#include "tests/unit/verbs/daemon_conn.h"

#define PDN 9
#define CQN 0x000021
#define WQN 0x000051
#define WQES 8
#define SHIFT 5			/* two data segments */
#define DBREC_OFFSET (WQES << SHIFT)
#define MAP_SIZE (DBREC_OFFSET + 64)
#define TABLE 7

static struct rocemu_device device;
static struct ibv_device ibdev;
static struct rocemu_context rctx;
static struct ibv_context *const ctx = &rctx.vctx.context;
static struct rocemu_pd pd;
static struct rocemu_cq cq;
static int recv_doorbells;
static uint32_t cleaned_wqn;	/* the WQ whose CQEs rocemu_cq_clean_wq swept last */

/* The sweep of a CQ (lib/verbs/cq.c), recorded. */
void rocemu_cq_clean_wq(struct rocemu_cq *c, uint32_t wqn)
{
	ck_assert_ptr_eq(c, &cq);
	cleaned_wqn = wqn;
}

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

void rocemu_ctx_doorbell(struct rocemu_context *c)
{
	(void)c;
	abort();
}

void rocemu_ctx_recv_doorbell(struct rocemu_context *c)
{
	ck_assert_ptr_eq(c, &rctx);
	recv_doorbells++;
}

static void answer_wq(uint32_t wqe_cnt, uint32_t wqe_shift, uint64_t size)
{
	const struct rocemu_create_wq_resp resp = {
		.wqn = WQN, .wqe_cnt = wqe_cnt, .wqe_shift = wqe_shift, .max_wr = wqe_cnt,
		.max_sge = 2, .size = size, .dbrec_offset = DBREC_OFFSET,
	};

	conn_answer(ROCEMU_OP_CREATE_WQ, 0, &resp, sizeof(resp), size);
}

static void objs_open(void)
{
	memset(&rctx, 0, sizeof(rctx));
	rctx.vctx.context.device = &ibdev;
	pthread_mutex_init(&rctx.vctx.context.mutex, NULL);
	/* The ops context.c sets, which ibv_create_wq and the others call. */
	rctx.vctx.sz = sizeof(rctx.vctx);
	rctx.vctx.context.abi_compat = __VERBS_ABI_IS_EXTENDED;
	rctx.vctx.create_wq = rocemu_create_wq_op;
	rctx.vctx.modify_wq = rocemu_modify_wq_op;
	rctx.vctx.destroy_wq = rocemu_destroy_wq_op;
	rctx.vctx.create_rwq_ind_table = rocemu_create_rwq_ind_table_op;
	rctx.vctx.destroy_rwq_ind_table = rocemu_destroy_rwq_ind_table_op;
	pd = (struct rocemu_pd){ .ibpd = { .context = ctx }, .pdn = PDN };
	memset(&cq, 0, sizeof(cq));
	cq.ibcq.context = ctx;
	cq.cqn = CQN;
	pthread_spin_init(&cq.lock, PTHREAD_PROCESS_PRIVATE);	/* a WQ joins its CQ's list */
	recv_doorbells = 0;
	conn_reset();
	answer_wq(WQES, SHIFT, MAP_SIZE);
}

static struct ibv_wq_init_attr wq_attr(void)
{
	return (struct ibv_wq_init_attr){
		.wq_context = &pd, .wq_type = IBV_WQT_RQ, .max_wr = 5, .max_sge = 2, .pd = &pd.ibpd,
		.cq = ibv_cq_ex_to_cq(&cq.ibcq), .comp_mask = IBV_WQ_INIT_ATTR_FLAGS,
		.create_flags = IBV_WQ_FLAGS_SCATTER_FCS,
	};
}

START_TEST(test_create_destroy)
{
	struct ibv_wq_init_attr attr = wq_attr();
	const struct rocemu_create_wq_req *req;
	struct ibv_wq *wq = ibv_create_wq(ctx, &attr);

	ck_assert_ptr_nonnull(wq);
	req = conn_last(ROCEMU_OP_CREATE_WQ);
	ck_assert_uint_eq(req->pdn, PDN);
	ck_assert_uint_eq(req->cqn, CQN);
	ck_assert_uint_eq(req->wq_type, IBV_WQT_RQ);
	ck_assert_uint_eq(req->max_wr, 5);
	ck_assert_uint_eq(req->max_sge, 2);
	ck_assert_uint_eq(req->create_flags, IBV_WQ_FLAGS_SCATTER_FCS);
	ck_assert_uint_eq(req->user_wq, (uintptr_t)wq);
	ck_assert_uint_eq(wq->wq_num, WQN);
	ck_assert_int_eq(wq->state, IBV_WQS_RESET);
	ck_assert_ptr_eq(wq->wq_context, &pd);
	ck_assert_ptr_eq(wq->cq, ibv_cq_ex_to_cq(&cq.ibcq));
	ck_assert_uint_eq(attr.max_wr, WQES);
	ck_assert_uint_eq(attr.max_sge, 2);
	ck_assert_ptr_eq(cq.wqs, to_rwq(wq));	/* its CQ finds it by number */
	ck_assert_int_eq(ibv_destroy_wq(wq), 0);
	ck_assert_ptr_null(cq.wqs);
	ck_assert_uint_eq(((const struct rocemu_handle_req *)conn_last(ROCEMU_OP_DESTROY_WQ))->handle,
			  WQN);
}
END_TEST

START_TEST(test_create_refused)
{
	struct ibv_wq_init_attr attr = wq_attr();

	/* An unknown attribute: the daemon never asked. */
	attr.comp_mask = IBV_WQ_INIT_ATTR_RESERVED;
	errno = 0;
	ck_assert_ptr_null(ibv_create_wq(ctx, &attr));
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_int_eq(conn_calls_all(), 0);
	/* The daemon's errno. */
	attr = wq_attr();
	conn_answer(ROCEMU_OP_CREATE_WQ, -EOPNOTSUPP, NULL, 0, 0);
	ck_assert_ptr_null(ibv_create_wq(ctx, &attr));
	ck_assert_int_eq(errno, EOPNOTSUPP);
	ck_assert_int_eq(conn_calls(ROCEMU_OP_DESTROY_WQ), 0);
	/* A ring past its memfd, a stride not a power of two of segments: EPROTO, undone. */
	answer_wq(WQES, SHIFT, DBREC_OFFSET / 2);
	ck_assert_ptr_null(ibv_create_wq(ctx, &attr));
	ck_assert_int_eq(errno, EPROTO);
	ck_assert_int_eq(conn_calls(ROCEMU_OP_DESTROY_WQ), 1);
	answer_wq(WQES - 1, SHIFT, MAP_SIZE);
	ck_assert_ptr_null(ibv_create_wq(ctx, &attr));
	ck_assert_int_eq(errno, EPROTO);
	ck_assert_int_eq(conn_calls(ROCEMU_OP_DESTROY_WQ), 2);
}
END_TEST

START_TEST(test_post_and_reset)
{
	struct ibv_wq_init_attr attr = wq_attr();
	struct ibv_wq *wq = ibv_create_wq(ctx, &attr);
	struct ibv_sge sge[3] = { { 0x1000, 64, 0x11 }, { 0x2000, 0, 0x22 }, { 0x3000, 32, 0x33 } };
	struct ibv_recv_wr wr = { .wr_id = 42, .sg_list = sge, .num_sge = 1 }, *bad = NULL;
	struct ibv_wq_attr mod = { .attr_mask = IBV_WQ_ATTR_STATE, .wq_state = IBV_WQS_RDY };
	struct rocemu_wq *rwq = to_rwq(wq);
	const struct mlx5_wqe_data_seg *seg = (const void *)rwq->rq.buf;
	int i;

	ck_assert_int_eq(ibv_post_wq_recv(wq, &wr, &bad), 0);
	ck_assert_uint_eq(be32toh(seg[0].byte_count), 64);
	ck_assert_uint_eq(be32toh(seg[0].lkey), 0x11);
	ck_assert_uint_eq(be64toh(seg[0].addr), 0x1000);
	/* Fewer segments than the stride holds: an invalid lkey ends the list. */
	ck_assert_uint_eq(be32toh(seg[1].lkey), MLX5_INVALID_LKEY);
	ck_assert_uint_eq(be32toh(*rwq->dbrec), 1);
	ck_assert_uint_eq(rwq->rq.wrid[0], 42);
	ck_assert_int_eq(recv_doorbells, 1);
	/* More SGEs than granted; then the ring full. */
	wr.num_sge = 3;
	ck_assert_int_eq(ibv_post_wq_recv(wq, &wr, &bad), EINVAL);
	ck_assert_ptr_eq(bad, &wr);
	wr.num_sge = 2;
	for (i = 1; i < WQES; i++)
		ck_assert_int_eq(ibv_post_wq_recv(wq, &wr, &bad), 0);
	ck_assert_int_eq(ibv_post_wq_recv(wq, &wr, &bad), ENOMEM);
	ck_assert_uint_eq(be32toh(*rwq->dbrec), WQES);
	/* The state as the daemon took it; at RESET the ring is empty again. */
	ck_assert_int_eq(ibv_modify_wq(wq, &mod), 0);
	ck_assert_int_eq(wq->state, IBV_WQS_RDY);
	ck_assert_uint_eq(((const struct rocemu_modify_wq_req *)conn_last(ROCEMU_OP_MODIFY_WQ))->wq_state,
			  IBV_WQS_RDY);
	conn_answer(ROCEMU_OP_MODIFY_WQ, -EINVAL, NULL, 0, 0);
	mod.wq_state = IBV_WQS_ERR;
	ck_assert_int_eq(ibv_modify_wq(wq, &mod), EINVAL);
	ck_assert_int_eq(wq->state, IBV_WQS_RDY);
	conn_answer(ROCEMU_OP_MODIFY_WQ, 0, NULL, 0, 0);
	mod.wq_state = IBV_WQS_RESET;
	cleaned_wqn = 0;
	ck_assert_int_eq(ibv_modify_wq(wq, &mod), 0);
	ck_assert_uint_eq(*rwq->dbrec, 0);
	ck_assert_uint_eq(cleaned_wqn, WQN);	/* its CQEs swept, as mlx5_modify_wq */
	ck_assert_int_eq(ibv_post_wq_recv(wq, &wr, &bad), 0);
	ck_assert_int_eq(ibv_destroy_wq(wq), 0);
}
END_TEST

START_TEST(test_ind_table)
{
	struct ibv_wq_init_attr attr = wq_attr();
	struct ibv_wq *wqs[2] = { ibv_create_wq(ctx, &attr), ibv_create_wq(ctx, &attr) };
	const struct rocemu_create_rwq_ind_table_resp resp = { .handle = TABLE };
	struct ibv_rwq_ind_table_init_attr init = { .log_ind_tbl_size = 1, .ind_tbl = wqs };
	const struct rocemu_create_rwq_ind_table_req *req;
	struct ibv_rwq_ind_table *t;

	conn_answer(ROCEMU_OP_CREATE_RWQ_IND_TABLE, 0, &resp, sizeof(resp), 0);
	t = ibv_create_rwq_ind_table(ctx, &init);
	ck_assert_ptr_nonnull(t);
	req = conn_last(ROCEMU_OP_CREATE_RWQ_IND_TABLE);
	ck_assert_uint_eq(req->log_size, 1);
	ck_assert_uint_eq(req->wqns[0], WQN);
	ck_assert_uint_eq(req->wqns[1], WQN);
	ck_assert_int_eq(t->ind_tbl_handle, TABLE);
	/* The daemon's EBUSY; then gone. */
	conn_answer(ROCEMU_OP_DESTROY_RWQ_IND_TABLE, -EBUSY, NULL, 0, 0);
	ck_assert_int_eq(ibv_destroy_rwq_ind_table(t), EBUSY);
	conn_answer(ROCEMU_OP_DESTROY_RWQ_IND_TABLE, 0, NULL, 0, 0);
	ck_assert_int_eq(ibv_destroy_rwq_ind_table(t), 0);
	ck_assert_uint_eq(((const struct rocemu_handle_req *)
			   conn_last(ROCEMU_OP_DESTROY_RWQ_IND_TABLE))->handle, TABLE);
	/* Past the largest table. */
	init.log_ind_tbl_size = ROCEMU_RWQ_IND_TABLE_MAX_LOG + 1;
	errno = 0;
	ck_assert_ptr_null(ibv_create_rwq_ind_table(ctx, &init));
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_int_eq(conn_calls(ROCEMU_OP_CREATE_RWQ_IND_TABLE), 1);
	ck_assert_int_eq(ibv_destroy_wq(wqs[0]), 0);
	ck_assert_int_eq(ibv_destroy_wq(wqs[1]), 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("verbs_wq");
	TCase *tc = tcase_create("wq");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(tc, objs_open, NULL);
	tcase_add_test(tc, test_create_destroy);
	tcase_add_test(tc, test_create_refused);
	tcase_add_test(tc, test_post_and_reset);
	tcase_add_test(tc, test_ind_table);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
