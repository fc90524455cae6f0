/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * mlx5dv_create_cq, mlx5dv_create_qp and mlx5dv_create_wq on an emulated device
 * (lib/dv/mlx5dv_create.c, the DC part in lib/dv/mlx5dv_dc.c, the
 * create_flags in lib/dv/mlx5dv_qp_flags.c): the attributes mlx5 refuses
 * with the errno it gives, and which create each accepted call becomes,
 * with what. The creates themselves (lib/verbs/), which ask the daemon,
 * are recorded here instead; so are the requests of
 * mlx5dv_dci_stream_id_reset and mlx5dv_modify_qp_udp_sport
 * (lib/dv/mlx5dv_qpn.c), after the QP checks they make first.
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/shim.h"
#include "lib/dv/dv.h"

#define CQE_SIZE_ENV 64u
#define VENDOR_DEFAULT ROCEMU_QP_VENDOR_SCATTER_CQE

static struct rocemu_device device;
static struct ibv_device ibdev_ours;
static struct rocemu_context rctx;
static struct ibv_context *const ctx = &rctx.vctx.context;

/* Which create an accepted call became, and with what. */
enum created { CREATED_NONE, CREATED_CQ, CREATED_QP, CREATED_DC_QP, CREATED_MKEY_QP, CREATED_WQ };
static enum created created;
static uint32_t created_cqe_size, created_vendor_flags;
static struct rocemu_dc_attr created_dc;
static struct ibv_cq_ex cq_made;
static struct ibv_qp qp_made;
static struct ibv_wq wq_made;

/* The daemon's answer to the next request, and the request it got. */
static int conn_answer, conn_calls;
static enum rocemu_ctrl_op conn_op;
static struct rocemu_dci_stream_reset_req conn_stream_req;
static struct rocemu_qp_udp_sport_req conn_sport_req;

struct rocemu_device *rocemu_device_of(struct ibv_device *dev)
{
	return dev == &ibdev_ours ? &device : NULL;
}

/* Not reached: every object here is the emulated device's. */
void *rocemu_real(enum rocemu_real_fn fn)
{
	(void)fn;
	abort();
}

uint32_t rocemu_qp_vendor_default(void)
{
	return VENDOR_DEFAULT;
}

uint32_t rocemu_cqe_size_env(void)
{
	return CQE_SIZE_ENV;
}

struct ibv_cq_ex *rocemu_cq_create_ex(struct ibv_context *context,
				      struct ibv_cq_init_attr_ex *attr, uint32_t cqe_size)
{
	ck_assert_ptr_eq(context, ctx);
	ck_assert_ptr_nonnull(attr);
	created = CREATED_CQ;
	created_cqe_size = cqe_size;
	return &cq_made;
}

struct ibv_qp *rocemu_qp_create(struct ibv_context *context, struct ibv_qp_init_attr_ex *want,
				uint32_t vendor_flags)
{
	ck_assert_ptr_eq(context, ctx);
	ck_assert_ptr_nonnull(want);
	created = CREATED_QP;
	created_vendor_flags = vendor_flags;
	return &qp_made;
}

struct ibv_qp *rocemu_create_qp_dc(struct ibv_context *context, struct ibv_qp_init_attr_ex *attr,
				   uint32_t vendor_flags, const struct rocemu_dc_attr *dc)
{
	ck_assert_ptr_eq(context, ctx);
	ck_assert_ptr_nonnull(attr);
	created = CREATED_DC_QP;
	created_vendor_flags = vendor_flags;
	created_dc = *dc;
	return &qp_made;
}

struct ibv_wq *rocemu_create_wq_op(struct ibv_context *context, struct ibv_wq_init_attr *attr)
{
	ck_assert_ptr_eq(context, ctx);
	ck_assert_ptr_nonnull(attr);
	created = CREATED_WQ;
	return &wq_made;
}

struct ibv_qp *rocemu_dv_mkey_qp_create(struct ibv_context *context,
					struct ibv_qp_init_attr_ex *attr, uint32_t vendor_flags)
{
	ck_assert_ptr_eq(context, ctx);
	ck_assert_ptr_nonnull(attr);
	created = CREATED_MKEY_QP;
	created_vendor_flags = vendor_flags;
	return &qp_made;
}

static struct ibv_qp *raw_wqe_qp;	/* the QP rocemu_dv_raw_wqe_enable was given */

void rocemu_dv_raw_wqe_enable(struct ibv_qp *qp)
{
	raw_wqe_qp = qp;
}

uint64_t rocemu_qp_type_send_ops(enum ibv_qp_type type)
{
	return type == IBV_QPT_UD ? IBV_QP_EX_WITH_SEND : ROCEMU_QP_SEND_OPS_FLAGS;
}

int rocemu_conn_call(struct rocemu_conn *conn, enum rocemu_ctrl_op op, const void *req,
		     void *resp, int *fds, int nfds)
{
	ck_assert_ptr_eq(conn, &rctx.conn);
	ck_assert_ptr_null(resp);
	ck_assert_ptr_null(fds);
	ck_assert_int_eq(nfds, 0);
	conn_calls++;
	conn_op = op;
	if (op == ROCEMU_OP_DCI_STREAM_RESET)
		memcpy(&conn_stream_req, req, sizeof(conn_stream_req));
	if (op == ROCEMU_OP_QP_UDP_SPORT)
		memcpy(&conn_sport_req, req, sizeof(conn_sport_req));
	return conn_answer;
}

static void ctx_open(void)
{
	memset(&rctx, 0, sizeof(rctx));
	ctx->device = &ibdev_ours;
	created = CREATED_NONE;
	created_cqe_size = created_vendor_flags = 0;
	memset(&created_dc, 0, sizeof(created_dc));
	conn_answer = conn_calls = 0;
}

/* A refused create: NULL, errno err, no create asked for. */
#define assert_refused(call, err)                    \
	do {                                         \
		errno = 0;                           \
		ck_assert_ptr_null(call);            \
		ck_assert_int_eq(errno, (err));      \
		ck_assert_int_eq(created, CREATED_NONE); \
	} while (0)

static struct ibv_cq_ex *dv_cq(uint64_t comp_mask, uint8_t cqe_size, uint32_t flags)
{
	struct ibv_cq_init_attr_ex attr = { .cqe = 16 };
	struct mlx5dv_cq_init_attr dv = { .comp_mask = comp_mask, .cqe_size = cqe_size,
					  .flags = flags,
					  .cqe_comp_res_format = MLX5DV_CQE_RES_FORMAT_HASH };

	return mlx5dv_create_cq(ctx, &attr, &dv);
}

/* The CQE size asked for, or without one libmlx5's default (MLX5_CQE_SIZE). */
START_TEST(test_cq_cqe_size)
{
	struct ibv_cq_init_attr_ex attr = { .cqe = 16 };

	ck_assert_ptr_eq(dv_cq(MLX5DV_CQ_INIT_ATTR_MASK_CQE_SIZE, 128, 0), &cq_made);
	ck_assert_uint_eq(created_cqe_size, 128);
	ck_assert_ptr_eq(dv_cq(MLX5DV_CQ_INIT_ATTR_MASK_CQE_SIZE, 64, 0), &cq_made);
	ck_assert_uint_eq(created_cqe_size, 64);
	ck_assert_ptr_eq(dv_cq(0, 128, 0), &cq_made);
	ck_assert_uint_eq(created_cqe_size, CQE_SIZE_ENV);
	ck_assert_ptr_eq(mlx5dv_create_cq(ctx, &attr, NULL), &cq_made);
	ck_assert_uint_eq(created_cqe_size, CQE_SIZE_ENV);
}
END_TEST

/* A CQE size mlx5 has not, compression, padding or unknown bits: EINVAL, as mlx5's create_cq. */
START_TEST(test_cq_attr_refused)
{
	assert_refused(dv_cq(MLX5DV_CQ_INIT_ATTR_MASK_CQE_SIZE, 32, 0), EINVAL);
	assert_refused(dv_cq(MLX5DV_CQ_INIT_ATTR_MASK_CQE_SIZE, 0, 0), EINVAL);
	assert_refused(dv_cq(MLX5DV_CQ_INIT_ATTR_MASK_COMPRESSED_CQE, 64, 0), EINVAL);
	assert_refused(dv_cq(MLX5DV_CQ_INIT_ATTR_MASK_FLAGS, 64, MLX5DV_CQ_INIT_ATTR_FLAGS_CQE_PAD),
		       EINVAL);
	assert_refused(dv_cq(1ull << 40, 64, 0), EINVAL);
	/* Flags given as none are no flags. */
	ck_assert_ptr_eq(dv_cq(MLX5DV_CQ_INIT_ATTR_MASK_FLAGS, 64, 0), &cq_made);
}
END_TEST

static struct ibv_qp *dv_qp(enum ibv_qp_type type, struct mlx5dv_qp_init_attr *dv)
{
	struct ibv_qp_init_attr_ex attr = { .qp_type = type, .comp_mask = IBV_QP_INIT_ATTR_PD };

	return mlx5dv_create_qp(ctx, &attr, dv);
}

/* No mlx5 attributes, or only create_flags: an ordinary create with the vendor flags they give. */
START_TEST(test_qp_plain_and_flags)
{
	struct mlx5dv_qp_init_attr dv = {
		.comp_mask = MLX5DV_QP_INIT_ATTR_MASK_QP_CREATE_FLAGS,
		.create_flags = MLX5DV_QP_CREATE_DISABLE_SCATTER_TO_CQE,
	};

	ck_assert_ptr_eq(dv_qp(IBV_QPT_RC, NULL), &qp_made);
	ck_assert_int_eq(created, CREATED_QP);
	ck_assert_uint_eq(created_vendor_flags, VENDOR_DEFAULT);
	ck_assert_ptr_eq(dv_qp(IBV_QPT_UC, &dv), &qp_made);
	ck_assert_uint_eq(created_vendor_flags, 0);
	/* create_flags left out of comp_mask are not read */
	dv.comp_mask = 0;
	dv.create_flags = 1u << 31;
	ck_assert_ptr_eq(dv_qp(IBV_QPT_RC, &dv), &qp_made);
	ck_assert_uint_eq(created_vendor_flags, VENDOR_DEFAULT);
}
END_TEST

/* Unknown comp_mask bits, DC on a QP type not IBV_QPT_DRIVER, a driver QP without DC: EINVAL. */
START_TEST(test_qp_attr_refused)
{
	struct mlx5dv_qp_init_attr dv = { .comp_mask = 1ull << 40 };

	assert_refused(dv_qp(IBV_QPT_RC, &dv), EINVAL);
	dv = (struct mlx5dv_qp_init_attr){ .comp_mask = MLX5DV_QP_INIT_ATTR_MASK_DC,
					   .dc_init_attr = { .dc_type = MLX5DV_DCTYPE_DCI } };
	assert_refused(dv_qp(IBV_QPT_RC, &dv), EINVAL);
	assert_refused(dv_qp(IBV_QPT_DRIVER, NULL), EINVAL);
	dv.comp_mask = 0;
	assert_refused(dv_qp(IBV_QPT_DRIVER, &dv), EINVAL);
	/* A create_flags refusal is the create's. */
	dv = (struct mlx5dv_qp_init_attr){ .comp_mask = MLX5DV_QP_INIT_ATTR_MASK_QP_CREATE_FLAGS,
					   .create_flags = MLX5DV_QP_CREATE_SIG_PIPELINING };
	assert_refused(dv_qp(IBV_QPT_RC, &dv), EOPNOTSUPP);
}
END_TEST

/* The mkey send ops make an RC QP of the mkey builder, raw WQEs any QP; on another type, other ops: EOPNOTSUPP. */
START_TEST(test_qp_send_ops)
{
	struct mlx5dv_qp_init_attr dv = { .comp_mask = MLX5DV_QP_INIT_ATTR_MASK_SEND_OPS_FLAGS,
					  .send_ops_flags = MLX5DV_QP_EX_WITH_MR_LIST };

	ck_assert_ptr_eq(dv_qp(IBV_QPT_RC, &dv), &qp_made);
	ck_assert_int_eq(created, CREATED_MKEY_QP);
	ck_assert_uint_eq(created_vendor_flags, VENDOR_DEFAULT);
	created = CREATED_NONE;
	assert_refused(dv_qp(IBV_QPT_UC, &dv), EOPNOTSUPP);
	ck_assert_ptr_null(raw_wqe_qp);
	/* Raw WQEs on any type: an ordinary QP with the raw WQE op, alone or beside the mkey ops. */
	dv.send_ops_flags = MLX5DV_QP_EX_WITH_RAW_WQE;
	ck_assert_ptr_eq(dv_qp(IBV_QPT_UD, &dv), &qp_made);
	ck_assert_int_eq(created, CREATED_QP);
	ck_assert_ptr_eq(raw_wqe_qp, &qp_made);
	raw_wqe_qp = NULL;
	dv.send_ops_flags = MLX5DV_QP_EX_WITH_RAW_WQE | MLX5DV_QP_EX_WITH_MR_LIST;
	ck_assert_ptr_eq(dv_qp(IBV_QPT_RC, &dv), &qp_made);
	ck_assert_int_eq(created, CREATED_MKEY_QP);
	ck_assert_ptr_eq(raw_wqe_qp, &qp_made);
	raw_wqe_qp = NULL;
	created = CREATED_NONE;
	assert_refused(dv_qp(IBV_QPT_UC, &dv), EOPNOTSUPP);
	dv.send_ops_flags = MLX5DV_QP_EX_WITH_MEMCPY;
	assert_refused(dv_qp(IBV_QPT_RC, &dv), EOPNOTSUPP);
	/* None asked: an ordinary QP. */
	dv.send_ops_flags = 0;
	ck_assert_ptr_eq(dv_qp(IBV_QPT_UD, &dv), &qp_made);
	ck_assert_int_eq(created, CREATED_QP);
	ck_assert_ptr_null(raw_wqe_qp);
}
END_TEST

static struct ibv_qp *dc_qp(struct ibv_srq *srq, uint64_t comp_mask,
			    struct mlx5dv_dc_init_attr dc)
{
	struct ibv_qp_init_attr_ex attr = { .qp_type = IBV_QPT_DRIVER, .srq = srq,
					    .comp_mask = IBV_QP_INIT_ATTR_PD };
	struct mlx5dv_qp_init_attr dv = { .comp_mask = MLX5DV_QP_INIT_ATTR_MASK_DC | comp_mask,
					  .dc_init_attr = dc };

	return mlx5dv_create_qp(ctx, &attr, &dv);
}

/* A DCT on an SRQ with its access key; without an SRQ, or with DCI streams: EINVAL. */
START_TEST(test_dct)
{
	struct ibv_srq srq;
	const struct mlx5dv_dc_init_attr dct = { .dc_type = MLX5DV_DCTYPE_DCT,
						 .dct_access_key = 0xabcdef0123ull };

	ck_assert_ptr_eq(dc_qp(&srq, 0, dct), &qp_made);
	ck_assert_int_eq(created, CREATED_DC_QP);
	ck_assert_int_eq(created_dc.type, ROCEMU_QPT_DCT);
	ck_assert_uint_eq(created_dc.dct_access_key, 0xabcdef0123ull);
	ck_assert_uint_eq(created_vendor_flags, VENDOR_DEFAULT);
	created = CREATED_NONE;
	assert_refused(dc_qp(NULL, 0, dct), EINVAL);
	assert_refused(dc_qp(&srq, MLX5DV_QP_INIT_ATTR_MASK_DCI_STREAMS, dct), EINVAL);
}
END_TEST

/* A DCI, with streams up to 2^ROCEMU_DCI_MAX_LOG_STREAMS; more, or a DC type mlx5 has not: EINVAL. */
START_TEST(test_dci)
{
	struct mlx5dv_dc_init_attr dci = { .dc_type = MLX5DV_DCTYPE_DCI,
					   .dci_streams = { .log_num_concurent = 3,
							    .log_num_errored = 2 } };

	/* Streams not in comp_mask are not read. */
	ck_assert_ptr_eq(dc_qp(NULL, 0, dci), &qp_made);
	ck_assert_int_eq(created_dc.type, ROCEMU_QPT_DCI);
	ck_assert_uint_eq(created_dc.log_concurrent, 0);
	ck_assert_ptr_eq(dc_qp(NULL, MLX5DV_QP_INIT_ATTR_MASK_DCI_STREAMS, dci), &qp_made);
	ck_assert_uint_eq(created_dc.log_concurrent, 3);
	ck_assert_uint_eq(created_dc.log_errored, 2);
	dci.dci_streams.log_num_concurent = ROCEMU_DCI_MAX_LOG_STREAMS;
	ck_assert_ptr_eq(dc_qp(NULL, MLX5DV_QP_INIT_ATTR_MASK_DCI_STREAMS, dci), &qp_made);
	created = CREATED_NONE;
	dci.dci_streams.log_num_concurent = ROCEMU_DCI_MAX_LOG_STREAMS + 1;
	assert_refused(dc_qp(NULL, MLX5DV_QP_INIT_ATTR_MASK_DCI_STREAMS, dci), EINVAL);
	dci.dci_streams.log_num_concurent = 1;
	dci.dci_streams.log_num_errored = ROCEMU_DCI_MAX_LOG_STREAMS + 1;
	assert_refused(dc_qp(NULL, MLX5DV_QP_INIT_ATTR_MASK_DCI_STREAMS, dci), EINVAL);
	dci.dc_type = (enum mlx5dv_dc_type)7;
	assert_refused(dc_qp(NULL, 0, dci), EINVAL);
}
END_TEST

/* A stream is reset only on a DCI in RTS (else EOPNOTSUPP, unasked); the daemon's errno returns. */
START_TEST(test_dci_stream_reset)
{
	struct ibv_qp dci = { .context = ctx, .qp_num = 0x000123, .state = IBV_QPS_RTR };

	ck_assert_int_eq(mlx5dv_dci_stream_id_reset(&dci, 5), EOPNOTSUPP);
	ck_assert_int_eq(conn_calls, 0);
	dci.state = IBV_QPS_RTS;
	ck_assert_int_eq(mlx5dv_dci_stream_id_reset(&dci, 5), 0);
	ck_assert_int_eq(conn_calls, 1);
	ck_assert_int_eq(conn_op, ROCEMU_OP_DCI_STREAM_RESET);
	ck_assert_uint_eq(conn_stream_req.qpn, 0x000123);
	ck_assert_uint_eq(conn_stream_req.stream_id, 5);
	conn_answer = -EINVAL;
	ck_assert_int_eq(mlx5dv_dci_stream_id_reset(&dci, 99), EINVAL);
}
END_TEST

/* A UDP source port for RC and UC QPs in RTS only (else EOPNOTSUPP, unasked), as mlx5. */
START_TEST(test_udp_sport)
{
	struct ibv_qp rc = { .context = ctx, .qp_num = 0x000456, .qp_type = IBV_QPT_RC,
			     .state = IBV_QPS_RTS };
	struct ibv_qp ud = rc, rtr = rc;

	ud.qp_type = IBV_QPT_UD;
	rtr.state = IBV_QPS_RTR;
	ck_assert_int_eq(mlx5dv_modify_qp_udp_sport(&ud, 50000), EOPNOTSUPP);
	ck_assert_int_eq(mlx5dv_modify_qp_udp_sport(&rtr, 50000), EOPNOTSUPP);
	ck_assert_int_eq(conn_calls, 0);
	ck_assert_int_eq(mlx5dv_modify_qp_udp_sport(&rc, 50000), 0);
	ck_assert_int_eq(conn_op, ROCEMU_OP_QP_UDP_SPORT);
	ck_assert_uint_eq(conn_sport_req.qpn, 0x000456);
	ck_assert_uint_eq(conn_sport_req.udp_sport, 50000);
	conn_answer = -EINVAL;
	ck_assert_int_eq(mlx5dv_modify_qp_udp_sport(&rc, 0), EINVAL);
}
END_TEST

/* No striding RQ: a stride past the caps (all 0) EINVAL as libmlx5, within them EOPNOTSUPP as the kernel. */
START_TEST(test_wq_striding_refused)
{
	struct ibv_wq_init_attr attr = { .wq_type = IBV_WQT_RQ, .max_wr = 4, .max_sge = 1 };
	struct mlx5dv_wq_init_attr dv = { .comp_mask = MLX5DV_WQ_INIT_ATTR_MASK_STRIDING_RQ,
					  .striding_rq_attrs = { .single_stride_log_num_of_bytes = 6 } };

	created = CREATED_NONE;
	errno = 0;
	ck_assert_ptr_null(mlx5dv_create_wq(ctx, &attr, &dv));
	ck_assert_int_eq(errno, EINVAL);
	dv.striding_rq_attrs = (struct mlx5dv_striding_rq_init_attr){ .single_wqe_log_num_of_strides = 9 };
	ck_assert_ptr_null(mlx5dv_create_wq(ctx, &attr, &dv));
	ck_assert_int_eq(errno, EINVAL);
	dv.striding_rq_attrs = (struct mlx5dv_striding_rq_init_attr){ 0 };
	ck_assert_ptr_null(mlx5dv_create_wq(ctx, &attr, &dv));
	ck_assert_int_eq(errno, EOPNOTSUPP);
	ck_assert_ptr_null(mlx5dv_create_wq(ctx, NULL, NULL));
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_int_eq(created, CREATED_NONE);
	dv.comp_mask = 0;
	ck_assert_ptr_eq(mlx5dv_create_wq(ctx, &attr, &dv), &wq_made);
	ck_assert_ptr_eq(mlx5dv_create_wq(ctx, &attr, NULL), &wq_made);
	ck_assert_int_eq(created, CREATED_WQ);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("dv_create");
	TCase *tc = tcase_create("create");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(tc, ctx_open, NULL);
	tcase_add_test(tc, test_cq_cqe_size);
	tcase_add_test(tc, test_cq_attr_refused);
	tcase_add_test(tc, test_qp_plain_and_flags);
	tcase_add_test(tc, test_qp_attr_refused);
	tcase_add_test(tc, test_qp_send_ops);
	tcase_add_test(tc, test_dct);
	tcase_add_test(tc, test_dci);
	tcase_add_test(tc, test_dci_stream_reset);
	tcase_add_test(tc, test_udp_sport);
	tcase_add_test(tc, test_wq_striding_refused);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
