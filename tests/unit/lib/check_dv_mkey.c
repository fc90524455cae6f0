/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Indirect mkeys and their UMR send ops (lib/dv/mlx5dv_mkey.c) over the
 * send queue writer (lib/datapath/wr.c, wqe.c): mlx5dv_wr_mr_list,
 * mlx5dv_wr_mr_interleaved and mlx5dv_wr_mkey_configure with its setters
 * write the UMR WQE libmlx5 writes, checked through mlx5dv.h's UMR
 * segments and by the daemon's parser (daemon_rings.h); their arguments
 * fail the batch with libmlx5's errno. The daemon's answers to
 * CREATE_MKEY and DESTROY_MKEY, and the QP create under the mkey QP, are
 * played here.
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/shim.h"
#include "tests/unit/lib/daemon_rings.h"

#define QPN 0x0000e1
#define SQ_BBS 16
#define MAX_SGE 1
#define DBREC_OFFSET (SQ_BBS * ROCEMU_WQE_BB)
#define BF_OFFSET (DBREC_OFFSET + ROCEMU_WQE_BB)
#define BF_SIZE (2 * ROCEMU_WQE_BB)
#define MAP_SIZE (BF_OFFSET + BF_SIZE)

#define MKEY_KEY 0x00abcd12
#define MKEY_HANDLE 7
#define MKEY_ENTRIES 8
#define LKEY 0x1111
#define LADDR 0x600000ull
#define KLM_BYTES 16
#define UMR_HEAD_BYTES (sizeof(struct mlx5_wqe_umr_ctrl_seg) + \
			sizeof(struct mlx5_wqe_mkey_context_seg))

static struct rocemu_device device;
static struct ibv_device ibdev;
static struct rocemu_context rctx;
static struct ibv_context *const ctx = &rctx.vctx.context;
static struct rocemu_pd pd;
static struct rocemu_qp qp;
static struct ibv_qp_ex *const qpx = &qp.qpx;
static struct mlx5dv_qp_ex *dvx;
static _Alignas(ROCEMU_WQE_BB) char map[MAP_SIZE];
static struct daemon_qp *dqp;
static struct mlx5dv_mkey *mkey;
static uint32_t asked_max_inline;
static int destroyed_handle;

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
	ck_assert_ptr_eq(c, &rctx);
}

/* The daemon: an mkey of MKEY_ENTRIES entries for CREATE_MKEY, DESTROY_MKEY noted. */
int rocemu_conn_call(struct rocemu_conn *conn, enum rocemu_ctrl_op op, const void *req,
		     void *resp, int *fds, int nfds)
{
	ck_assert_ptr_eq(conn, &rctx.conn);
	ck_assert_ptr_null(fds);
	ck_assert_int_eq(nfds, 0);
	if (op == ROCEMU_OP_CREATE_MKEY) {
		const struct rocemu_create_mkey_req *r = req;

		ck_assert_uint_eq(r->pdn, pd.pdn);
		*(struct rocemu_create_mkey_resp *)resp = (struct rocemu_create_mkey_resp){
			.handle = MKEY_HANDLE, .key = MKEY_KEY, .max_entries = MKEY_ENTRIES };
		return 0;
	}
	ck_assert_int_eq(op, ROCEMU_OP_DESTROY_MKEY);
	destroyed_handle = (int)((const struct rocemu_handle_req *)req)->handle;
	return 0;
}

/* lib/verbs/qp.c's create, which asks the daemon: the test's RC QP, with the caps asked. */
struct ibv_qp *rocemu_qp_create(struct ibv_context *context, struct ibv_qp_init_attr_ex *want,
				uint32_t vendor_flags)
{
	(void)vendor_flags;
	ck_assert_ptr_eq(context, ctx);
	ck_assert(want->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS);
	asked_max_inline = want->cap.max_inline_data;
	qpx->qp_base.context = ctx;
	qpx->qp_base.qp_type = IBV_QPT_RC;
	qp.type = IBV_QPT_RC;
	qp.qpn = QPN;
	qp.cap = (struct ibv_qp_cap){ .max_send_sge = MAX_SGE,
				      .max_inline_data = want->cap.max_inline_data };
	qp.layout = (struct rocemu_qp_layout){
		.qpn = QPN, .sq_wqe_cnt = SQ_BBS, .size = MAP_SIZE, .sq_offset = 0,
		.dbrec_offset = DBREC_OFFSET, .bf_offset = BF_OFFSET, .bf_size = BF_SIZE,
	};
	qp.map = map;
	ck_assert_int_eq(rocemu_qp_queues_init(&qp), 0);
	rocemu_qp_queues_state(&qp, IBV_QPS_RTS);
	rocemu_qp_wr_ops_init(&qp);
	return &qpx->qp_base;
}

static void mkey_open(void)
{
	struct ibv_qp_init_attr_ex attr = { .qp_type = IBV_QPT_RC, .cap = { .max_send_sge = MAX_SGE } };
	struct mlx5dv_mkey_init_attr mattr;

	memset(&rctx, 0, sizeof(rctx));
	memset(&qp, 0, sizeof(qp));
	memset(map, 0, sizeof(map));
	ctx->device = &ibdev;
	pd = (struct rocemu_pd){ .ibpd = { .context = ctx }, .pdn = 3 };
	ck_assert_ptr_eq(rocemu_dv_mkey_qp_create(ctx, &attr, 0), &qpx->qp_base);
	ck_assert_uint_eq(attr.cap.max_inline_data, asked_max_inline);
	dvx = mlx5dv_qp_ex_from_ibv_qp_ex(qpx);
	ck_assert_ptr_eq(dvx, &qp.dv_qpx);
	dqp = daemon_qp_new(map, &qp.layout, IBV_QPT_RC);
	mattr = (struct mlx5dv_mkey_init_attr){ .pd = &pd.ibpd, .max_entries = 5 };
	mkey = mlx5dv_create_mkey(&mattr);
	ck_assert_ptr_nonnull(mkey);
	ck_assert_uint_eq(mkey->lkey, MKEY_KEY);
	ck_assert_uint_eq(mattr.max_entries, MKEY_ENTRIES);
	destroyed_handle = -1;
}

static void mkey_close(void)
{
	if (mkey)
		ck_assert_int_eq(mlx5dv_destroy_mkey(mkey), 0);
	daemon_qp_free(dqp);
	free(qp.umr);
	rocemu_qp_queues_free(&qp);
}

/* The UMR WQE at bb as the daemon parses it, which must succeed. */
static struct daemon_send_wqe *umr_at(uint32_t bb)
{
	static struct daemon_send_wqe w;

	ck_assert_int_eq(daemon_parse_send(dqp, bb, (uint32_t)daemon_sq_posted(dqp, bb), &w), 0);
	ck_assert(w.umr);
	return &w;
}

/* The mkey QP's inline room holds the UMR heads and 4 KLMs, as mlx5 sizes it. */
START_TEST(test_qp_room_for_a_umr)
{
	ck_assert_uint_ge(asked_max_inline + sizeof(struct mlx5_wqe_raddr_seg) +
			  sizeof(struct mlx5_wqe_inl_data_seg), UMR_HEAD_BYTES + 4 * KLM_BYTES);
	ck_assert_uint_ge(qp.sq.max_wqe_bbs * ROCEMU_WQE_BB,
			  sizeof(struct mlx5_wqe_ctrl_seg) + UMR_HEAD_BYTES + 4 * KLM_BYTES);
}
END_TEST

/* mlx5dv_wr_mr_list: ctrl (UMR, the mkey in imm, small fence), UMR ctrl, mkey context, KLMs. */
START_TEST(test_mr_list)
{
	struct ibv_sge sges[2] = { { LADDR, 4096, LKEY }, { LADDR + 8192, 100, LKEY + 1 } };
	const struct mlx5_wqe_ctrl_seg *ctrl = (const void *)map;
	const struct mlx5_wqe_umr_ctrl_seg *uc = (const void *)(ctrl + 1);
	const struct mlx5_wqe_mkey_context_seg *mkc = (const void *)(uc + 1);
	const struct mlx5_wqe_data_seg *klm = (const void *)(mkc + 1);
	uint32_t ds = 1 + (UMR_HEAD_BYTES + 4 * KLM_BYTES) / ROCEMU_WQE_SEG;
	struct daemon_send_wqe *w;

	qpx->wr_start(qpx);
	qpx->wr_id = 31;
	qpx->wr_flags = IBV_SEND_INLINE | IBV_SEND_SIGNALED;
	mlx5dv_wr_mr_list(dvx, mkey, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ, 2, sges);
	ck_assert_int_eq(qpx->wr_complete(qpx), 0);

	ck_assert_uint_eq(be32toh(ctrl->opmod_idx_opcode), MLX5_OPCODE_UMR);
	ck_assert_uint_eq(be32toh(ctrl->qpn_ds), (uint32_t)QPN << 8 | ds);
	ck_assert_uint_eq(be32toh(ctrl->imm), MKEY_KEY);
	ck_assert_uint_eq(ctrl->fm_ce_se,
			  MLX5_WQE_CTRL_INITIATOR_SMALL_FENCE | MLX5_WQE_CTRL_CQ_UPDATE);
	ck_assert_uint_eq(uc->flags, MLX5_WQE_UMR_CTRL_FLAG_INLINE);
	ck_assert_uint_eq(be16toh(uc->klm_octowords), 4);
	ck_assert_uint_eq(be64toh(uc->mkey_mask),
			  MLX5_WQE_UMR_CTRL_MKEY_MASK_FREE | MLX5_WQE_UMR_CTRL_MKEY_MASK_MKEY |
			  MLX5_WQE_UMR_CTRL_MKEY_MASK_LEN |
			  MLX5_WQE_UMR_CTRL_MKEY_MASK_ACCESS_LOCAL_WRITE |
			  MLX5_WQE_UMR_CTRL_MKEY_MASK_ACCESS_REMOTE_READ |
			  MLX5_WQE_UMR_CTRL_MKEY_MASK_ACCESS_REMOTE_WRITE |
			  MLX5_WQE_UMR_CTRL_MKEY_MASK_ACCESS_ATOMIC);
	ck_assert_uint_eq(mkc->access_flags, MLX5_WQE_MKEY_CONTEXT_ACCESS_FLAGS_LOCAL_WRITE |
					     MLX5_WQE_MKEY_CONTEXT_ACCESS_FLAGS_REMOTE_READ);
	ck_assert_uint_eq(be32toh(mkc->qpn_mkey), 0xffffff00 | (MKEY_KEY & 0xff));
	ck_assert_uint_eq(be64toh(mkc->len), 4196);
	ck_assert_uint_eq(be64toh(klm[0].addr), LADDR);
	ck_assert_uint_eq(be32toh(klm[0].lkey), LKEY);
	ck_assert_uint_eq(be32toh(klm[0].byte_count), 4096);
	ck_assert_uint_eq(be32toh(klm[1].byte_count), 100);
	ck_assert_uint_eq(klm[2].byte_count | klm[3].byte_count, 0);	/* padding to 4 */
	ck_assert_uint_eq(qp.sq.wr_opcode[0], IBV_WR_DRIVER1);
	ck_assert_uint_eq(qp.sq.wrid[0], 31);

	w = umr_at(0);
	ck_assert_uint_eq(w->opcode, MLX5_OPCODE_UMR);
	ck_assert(w->fence && w->signaled);
	ck_assert_uint_eq(w->umr_key, MKEY_KEY);
	ck_assert_mem_eq(&w->umr_ctrl, uc, sizeof(*uc));
	ck_assert_mem_eq(&w->umr_mkc, mkc, sizeof(*mkc));
	ck_assert_uint_eq(w->umr_xlat_len, 4 * KLM_BYTES);
	ck_assert_mem_eq(w->umr_xlat, klm, 4 * KLM_BYTES);
}
END_TEST

/* mlx5dv_wr_mr_interleaved: a repeat block, then its entries with their strides. */
START_TEST(test_mr_interleaved)
{
	struct mlx5dv_mr_interleaved data[2] = {
		{ .addr = LADDR, .bytes_count = 512, .bytes_skip = 8, .lkey = LKEY },
		{ .addr = LADDR + 65536, .bytes_count = 8, .bytes_skip = 0, .lkey = LKEY + 1 },
	};
	const struct mlx5_wqe_umr_repeat_block_seg *rb;
	const struct mlx5_wqe_umr_repeat_ent_seg *ent;
	struct daemon_send_wqe *w;

	qpx->wr_start(qpx);
	qpx->wr_flags = IBV_SEND_INLINE;
	mlx5dv_wr_mr_interleaved(dvx, mkey, IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC,
				 10, 2, data);
	ck_assert_int_eq(qpx->wr_complete(qpx), 0);

	w = umr_at(0);
	ck_assert_uint_eq(be16toh(w->umr_ctrl.klm_octowords), 4);
	ck_assert_uint_eq(be64toh(w->umr_mkc.len), (512 + 8) * 10);
	ck_assert_uint_eq(w->umr_mkc.access_flags,
			  MLX5_WQE_MKEY_CONTEXT_ACCESS_FLAGS_REMOTE_WRITE |
			  MLX5_WQE_MKEY_CONTEXT_ACCESS_FLAGS_ATOMIC);
	rb = (const void *)w->umr_xlat;
	ck_assert_uint_eq(be32toh(rb->op), 0x400);
	ck_assert_uint_eq(be16toh(rb->num_ent), 2);
	ck_assert_uint_eq(be32toh(rb->repeat_count), 10);
	ck_assert_uint_eq(be32toh(rb->byte_count), 520);
	ent = (const void *)(w->umr_xlat + KLM_BYTES);
	ck_assert_uint_eq(be64toh(ent[0].va), LADDR);
	ck_assert_uint_eq(be16toh(ent[0].byte_count), 512);
	ck_assert_uint_eq(be16toh(ent[0].stride), 520);
	ck_assert_uint_eq(be32toh(ent[0].memkey), LKEY);
	ck_assert_uint_eq(be16toh(ent[1].stride), 8);
	ck_assert_uint_eq(be32toh(ent[1].memkey), LKEY + 1);
}
END_TEST

/* mkey_configure with its setters in any order; with no setter, the mkey is only made free again. */
START_TEST(test_mkey_configure)
{
	struct mlx5dv_mkey_conf_attr conf = { 0 };
	struct ibv_sge sge = { LADDR, 64, LKEY };
	struct daemon_send_wqe *w;

	qpx->wr_start(qpx);
	qpx->wr_flags = IBV_SEND_INLINE;
	mlx5dv_wr_mkey_configure(dvx, mkey, 2, &conf);
	mlx5dv_wr_set_mkey_layout_list(dvx, 1, &sge);
	mlx5dv_wr_set_mkey_access_flags(dvx, IBV_ACCESS_LOCAL_WRITE);
	mlx5dv_wr_mkey_configure(dvx, mkey, 0, &conf);
	ck_assert_int_eq(qpx->wr_complete(qpx), 0);

	w = umr_at(0);
	ck_assert_uint_eq(be64toh(w->umr_mkc.len), 64);
	ck_assert_uint_eq(w->umr_mkc.access_flags, MLX5_WQE_MKEY_CONTEXT_ACCESS_FLAGS_LOCAL_WRITE);
	/* The first took ctrl, the heads and 4 KLMs: 12 units, 3 BBs. */
	w = umr_at(3);
	ck_assert_uint_eq(be64toh(w->umr_ctrl.mkey_mask),
			  MLX5_WQE_UMR_CTRL_MKEY_MASK_FREE | MLX5_WQE_UMR_CTRL_MKEY_MASK_MKEY);
	ck_assert_uint_eq(w->umr_xlat_len, 0);
}
END_TEST

/* What libmlx5 refuses, each failing the whole batch with its errno. */
START_TEST(test_umr_refusals)
{
	struct mlx5dv_mkey_conf_attr conf = { 0 };
	struct ibv_sge sges[5] = { { LADDR, 8, LKEY } };
	struct mlx5dv_sig_block_attr sig = { 0 };

	/* The translation is inline: without IBV_SEND_INLINE, EOPNOTSUPP. */
	qpx->wr_start(qpx);
	qpx->wr_flags = 0;
	mlx5dv_wr_mr_list(dvx, mkey, 0, 1, sges);
	ck_assert_int_eq(qpx->wr_complete(qpx), EOPNOTSUPP);
	/* conf_flags it does not know: EOPNOTSUPP. */
	qpx->wr_start(qpx);
	qpx->wr_flags = IBV_SEND_INLINE;
	conf.conf_flags = 1u << 7;
	mlx5dv_wr_mkey_configure(dvx, mkey, 0, &conf);
	ck_assert_int_eq(qpx->wr_complete(qpx), EOPNOTSUPP);
	conf.conf_flags = 0;
	/* More entries than the WQE holds (4 here): ENOMEM. */
	qpx->wr_start(qpx);
	mlx5dv_wr_mr_list(dvx, mkey, 0, 5, sges);
	ck_assert_int_eq(qpx->wr_complete(qpx), ENOMEM);
	/* An access flag a UMR cannot set, or set twice: EINVAL. */
	qpx->wr_start(qpx);
	mlx5dv_wr_mr_list(dvx, mkey, IBV_ACCESS_MW_BIND, 1, sges);
	ck_assert_int_eq(qpx->wr_complete(qpx), EINVAL);
	qpx->wr_start(qpx);
	mlx5dv_wr_mkey_configure(dvx, mkey, 2, &conf);
	mlx5dv_wr_set_mkey_access_flags(dvx, 0);
	mlx5dv_wr_set_mkey_access_flags(dvx, 0);
	ck_assert_int_eq(qpx->wr_complete(qpx), EINVAL);
	/* A layout twice: EINVAL. */
	qpx->wr_start(qpx);
	mlx5dv_wr_mkey_configure(dvx, mkey, 2, &conf);
	mlx5dv_wr_set_mkey_layout_list(dvx, 1, sges);
	mlx5dv_wr_set_mkey_layout_list(dvx, 1, sges);
	ck_assert_int_eq(qpx->wr_complete(qpx), EINVAL);
	/* A setter without mkey_configure, or a signature the mkey has not: EINVAL. */
	qpx->wr_start(qpx);
	mlx5dv_wr_set_mkey_access_flags(dvx, 0);
	ck_assert_int_eq(qpx->wr_complete(qpx), EINVAL);
	qpx->wr_start(qpx);
	mlx5dv_wr_mkey_configure(dvx, mkey, 1, &conf);
	mlx5dv_wr_set_mkey_sig_block(dvx, &sig);
	ck_assert_int_eq(qpx->wr_complete(qpx), EINVAL);
	/* Another builder before the last setter: EINVAL. */
	qpx->wr_start(qpx);
	mlx5dv_wr_mkey_configure(dvx, mkey, 1, &conf);
	qpx->wr_send(qpx);
	qpx->wr_set_sge(qpx, LKEY, LADDR, 8);
	ck_assert_int_eq(qpx->wr_complete(qpx), EINVAL);
	/* None of them reached the ring. */
	ck_assert_uint_eq(qp.sq.cur_post, 0);
	ck_assert_uint_eq(qp.dbrec[MLX5_SND_DBR], 0);
}
END_TEST

/* An mkey the shim made has no signature context: mkey_check says EINVAL; destroy tells the daemon. */
START_TEST(test_mkey_check_and_destroy)
{
	struct mlx5dv_mkey_err err;

	ck_assert_int_eq(mlx5dv_mkey_check(mkey, &err), EINVAL);
	ck_assert_int_eq(mlx5dv_destroy_mkey(mkey), 0);
	ck_assert_int_eq(destroyed_handle, MKEY_HANDLE);
	mkey = NULL;
}
END_TEST

int main(void)
{
	Suite *s = suite_create("dv_mkey");
	TCase *tc = tcase_create("umr");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(tc, mkey_open, mkey_close);
	tcase_add_test(tc, test_qp_room_for_a_umr);
	tcase_add_test(tc, test_mr_list);
	tcase_add_test(tc, test_mr_interleaved);
	tcase_add_test(tc, test_mkey_configure);
	tcase_add_test(tc, test_umr_refusals);
	tcase_add_test(tc, test_mkey_check_and_destroy);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
