/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Queue pairs on an emulated device (lib/verbs/qp.c): the init_attr
 * checks libibverbs, the kernel's uverbs and libmlx5 make, each with the
 * errno they give, before anything reaches the daemon; the CREATE_QP
 * request each QP type makes of its attributes (an XRC target in its
 * domain, an XRC initiator and a DCI with a send queue only, a DCT with
 * no send queue), the layout answered checked and the caps written back;
 * modify, query and destroy as the daemon answers them, and ibv_open_qp.
 * The daemon is daemon_conn.h's recording stand-in.
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/shim.h"
#include "tests/unit/verbs/daemon_conn.h"

#define QPN 0x0004d2
#define PDN 7
#define SEND_CQN 0x21
#define RECV_CQN 0x22
#define SRQN 0x31
#define XRCD_HANDLE 5
#define SQ_BBS 8
#define RQ_WQES 4
#define RQ_SHIFT 6
#define RQ_OFFSET (SQ_BBS * ROCEMU_WQE_BB)
#define DBREC_OFFSET (RQ_OFFSET + (RQ_WQES << RQ_SHIFT))
#define BF_OFFSET (DBREC_OFFSET + ROCEMU_WQE_BB)
#define BF_SIZE (2 * ROCEMU_WQE_BB)
#define MAP_SIZE (BF_OFFSET + BF_SIZE)

static struct rocemu_device device;
static struct ibv_device ibdev;
static struct rocemu_context rctx, other_rctx;
static struct ibv_context *const ctx = &rctx.vctx.context;
static struct ibv_context *const other_ctx = &other_rctx.vctx.context;
static struct rocemu_pd pd, other_pd;
static struct rocemu_cq send_cq, recv_cq, other_cq;
static struct rocemu_srq srq, other_srq;
static struct rocemu_xrcd xrcd, other_xrcd;

/* The CQs rocemu_cq_clean was asked to sweep of a QP's CQEs, and the SRQ given along. */
static int cleans;
static struct rocemu_cq *cleaned[2];
static struct rocemu_srq *cleaned_srq[2];
static uint32_t cleaned_qpn;

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

/* lib/verbs/cq.c's sweep of a QP's CQEs, recorded: which CQs a RESET or destroy sweeps. */
void rocemu_cq_clean(struct rocemu_cq *cq, uint32_t qpn, struct rocemu_srq *s)
{
	ck_assert_int_lt(cleans, 2);
	cleaned[cleans] = cq;
	cleaned_srq[cleans] = s;
	cleans++;
	cleaned_qpn = qpn;
}

/* Not reached: nothing is posted here. */
void rocemu_ctx_doorbell(struct rocemu_context *c)
{
	(void)c;
	abort();
}

static void ctx_init(struct rocemu_context *r, struct ibv_device *dev)
{
	memset(r, 0, sizeof(*r));
	r->vctx.context.device = dev;
	r->vctx.context.num_comp_vectors = 1;
	pthread_mutex_init(&r->vctx.context.mutex, NULL);
	rocemu_huge_pool_init(&r->huge_pool);
}

/* The daemon grants SQ_BBS BBs and RQ_WQES receives in a layout that fits. */
static void answer_create(uint32_t qpn)
{
	struct rocemu_create_qp_resp resp = {
		.layout = { .qpn = qpn, .sq_wqe_cnt = SQ_BBS, .rq_wqe_cnt = RQ_WQES,
			    .rq_wqe_shift = RQ_SHIFT, .size = MAP_SIZE, .sq_offset = 0,
			    .rq_offset = RQ_OFFSET, .dbrec_offset = DBREC_OFFSET,
			    .bf_offset = BF_OFFSET, .bf_size = BF_SIZE },
		.cap = { .max_send_wr = SQ_BBS, .max_recv_wr = RQ_WQES, .max_send_sge = 2,
			 .max_recv_sge = 3, .max_inline_data = 60 },
	};

	conn_answer(ROCEMU_OP_CREATE_QP, 0, &resp, sizeof(resp), MAP_SIZE);
}

static void objs_open(void)
{
	ctx_init(&rctx, &ibdev);
	ctx_init(&other_rctx, &ibdev);
	pd = (struct rocemu_pd){ .ibpd = { .context = ctx }, .pdn = PDN };
	other_pd = (struct rocemu_pd){ .ibpd = { .context = other_ctx }, .pdn = PDN };
	memset(&send_cq, 0, sizeof(send_cq));
	memset(&recv_cq, 0, sizeof(recv_cq));
	memset(&other_cq, 0, sizeof(other_cq));
	send_cq.ibcq.context = ctx;
	send_cq.cqn = SEND_CQN;
	recv_cq.ibcq.context = ctx;
	recv_cq.cqn = RECV_CQN;
	other_cq.ibcq.context = other_ctx;
	/* The poller's QP table takes the CQs' locks as a QP comes and goes. */
	pthread_spin_init(&send_cq.lock, PTHREAD_PROCESS_PRIVATE);
	pthread_spin_init(&recv_cq.lock, PTHREAD_PROCESS_PRIVATE);
	memset(&srq, 0, sizeof(srq));
	memset(&other_srq, 0, sizeof(other_srq));
	srq.ibsrq.context = ctx;
	srq.srqn = SRQN;
	other_srq.ibsrq.context = other_ctx;
	memset(&xrcd, 0, sizeof(xrcd));
	memset(&other_xrcd, 0, sizeof(other_xrcd));
	xrcd.ibxrcd.context = ctx;
	xrcd.handle = XRCD_HANDLE;
	other_xrcd.ibxrcd.context = other_ctx;
	cleans = 0;
	cleaned_qpn = 0;
	unsetenv("MLX5_SCATTER_TO_CQE");
	conn_reset();
	answer_create(QPN);
}

static void objs_close(void)
{
	rocemu_qp_table_free(&rctx);
}

static struct ibv_cq *ib(struct rocemu_cq *cq)
{
	return ibv_cq_ex_to_cq(&cq->ibcq);
}

/* An RC QP's attributes on this context: PD, both CQs, no SRQ. */
static struct ibv_qp_init_attr_ex rc_attr(void)
{
	return (struct ibv_qp_init_attr_ex){
		.qp_type = IBV_QPT_RC, .comp_mask = IBV_QP_INIT_ATTR_PD, .pd = &pd.ibpd,
		.send_cq = ib(&send_cq), .recv_cq = ib(&recv_cq),
		.cap = { .max_send_wr = 5, .max_recv_wr = 3, .max_send_sge = 2, .max_recv_sge = 1,
			 .max_inline_data = 16 },
	};
}

static const struct rocemu_create_qp_req *create_req(void)
{
	return conn_last(ROCEMU_OP_CREATE_QP);
}

/* A refused create: NULL, errno err, and the daemon never asked. */
static void assert_refused(struct ibv_qp_init_attr_ex attr, int err)
{
	errno = 0;
	ck_assert_ptr_null(rocemu_create_qp_ex_op(ctx, &attr));
	ck_assert_int_eq(errno, err);
	ck_assert_int_eq(conn_calls_all(), 0);
}

static void destroy(struct ibv_qp *qp)
{
	ck_assert_int_eq(ibv_destroy_qp(qp), 0);
}

/* ibv_create_qp: the request says what was asked, the caps granted come back, the QP is RESET. */
START_TEST(test_create_rc)
{
	struct ibv_qp_init_attr init = {
		.qp_context = &pd, .send_cq = ib(&send_cq), .recv_cq = ib(&recv_cq),
		.cap = { .max_send_wr = 5, .max_recv_wr = 3, .max_send_sge = 2, .max_recv_sge = 1,
			 .max_inline_data = 16 },
		.qp_type = IBV_QPT_RC, .sq_sig_all = 5,
	};
	struct ibv_qp *qp = ibv_create_qp(&pd.ibpd, &init);
	const struct rocemu_create_qp_req *req = create_req();

	ck_assert_ptr_nonnull(qp);
	ck_assert_int_eq(conn_calls(ROCEMU_OP_CREATE_QP), 1);
	ck_assert_uint_eq(req->pdn, PDN);
	ck_assert_uint_eq(req->qp_type, IBV_QPT_RC);
	ck_assert_uint_eq(req->send_cqn, SEND_CQN);
	ck_assert_uint_eq(req->recv_cqn, RECV_CQN);
	ck_assert_uint_eq(req->srqn, ROCEMU_NO_HANDLE);
	ck_assert_uint_eq(req->xrcd, ROCEMU_NO_HANDLE);
	ck_assert_uint_eq(req->sq_sig_all, 1);	/* any nonzero is "all" */
	ck_assert_uint_eq(req->cap.max_send_wr, 5);
	ck_assert_uint_eq(req->cap.max_recv_wr, 3);
	ck_assert_uint_eq(req->cap.max_inline_data, 16);
	ck_assert_uint_eq(req->user_qp, (uintptr_t)qp);
	ck_assert_uint_eq(req->vendor_flags, ROCEMU_QP_VENDOR_SCATTER_CQE);
	ck_assert_uint_eq(req->create_flags, 0);
	/* The granted caps, written back as libmlx5 writes them. */
	ck_assert_uint_eq(init.cap.max_send_wr, SQ_BBS);
	ck_assert_uint_eq(init.cap.max_recv_wr, RQ_WQES);
	ck_assert_uint_eq(init.cap.max_recv_sge, 3);
	ck_assert_uint_eq(init.cap.max_inline_data, 60);
	ck_assert_uint_eq(qp->qp_num, QPN);
	ck_assert_int_eq(qp->state, IBV_QPS_RESET);
	ck_assert_int_eq(qp->qp_type, IBV_QPT_RC);
	ck_assert_ptr_eq(qp->context, ctx);
	ck_assert_ptr_eq(qp->qp_context, &pd);
	ck_assert_ptr_eq(qp->pd, &pd.ibpd);
	ck_assert_ptr_eq(qp->send_cq, ib(&send_cq));
	ck_assert_ptr_eq(qp->recv_cq, ib(&recv_cq));
	/* Without send_ops_flags there is no ibv_qp_ex (libibverbs: NULL). */
	ck_assert_ptr_null(ibv_qp_to_qp_ex(qp));
	/* The poller finds it by number. */
	ck_assert_ptr_eq(rocemu_qp_table_find(&rctx, QPN), to_rqp(qp));
	destroy(qp);
	ck_assert_ptr_null(rocemu_qp_table_find(&rctx, QPN));
}
END_TEST

/* mlx5's use_scatter_to_cqe: MLX5_SCATTER_TO_CQE=0 turns the vendor flag off, any other value not. */
START_TEST(test_scatter_to_cqe_env)
{
	struct ibv_qp_init_attr_ex attr = rc_attr();
	struct ibv_qp *qp;

	setenv("MLX5_SCATTER_TO_CQE", "0", 1);
	qp = rocemu_create_qp_ex_op(ctx, &attr);
	ck_assert_ptr_nonnull(qp);
	ck_assert_uint_eq(create_req()->vendor_flags, 0);
	destroy(qp);
	setenv("MLX5_SCATTER_TO_CQE", "1", 1);
	qp = rocemu_create_qp_ex_op(ctx, &attr);
	ck_assert_ptr_nonnull(qp);
	ck_assert_uint_eq(create_req()->vendor_flags, ROCEMU_QP_VENDOR_SCATTER_CQE);
	destroy(qp);
}
END_TEST

/* comp_mask: unknown bits EINVAL, known ones this device lacks EOPNOTSUPP; create flags EINVAL. */
START_TEST(test_create_mask_checks)
{
	struct ibv_qp_init_attr_ex attr = rc_attr();

	attr.comp_mask |= (uint32_t)IBV_QP_INIT_ATTR_SEND_OPS_FLAGS << 1;
	assert_refused(attr, EINVAL);
	/* RAW_PACKET's parts on another type (check_qp_raw has them on a RAW_PACKET QP). */
	attr = rc_attr();
	attr.comp_mask |= IBV_QP_INIT_ATTR_MAX_TSO_HEADER;
	assert_refused(attr, EINVAL);
	attr = rc_attr();
	attr.comp_mask |= IBV_QP_INIT_ATTR_RX_HASH;
	assert_refused(attr, EINVAL);
	attr = rc_attr();
	attr.comp_mask |= IBV_QP_INIT_ATTR_CREATE_FLAGS;
	attr.create_flags = IBV_QP_CREATE_SCATTER_FCS;
	assert_refused(attr, EOPNOTSUPP);
	attr.create_flags = 1u << 12;	/* no flag libibverbs knows */
	assert_refused(attr, EINVAL);
	/* A UC QP has no READ (mlx5's MLX5_SUPPORTED_SEND_OPS_FLAGS_UC). */
	attr = rc_attr();
	attr.qp_type = IBV_QPT_UC;
	attr.comp_mask |= IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
	attr.send_ops_flags = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_RDMA_READ;
	assert_refused(attr, EOPNOTSUPP);
}
END_TEST

/* The objects named must be there and of this context (uverbs' lookups fail with EINVAL). */
START_TEST(test_create_object_checks)
{
	struct ibv_qp_init_attr_ex attr = rc_attr();

	attr.comp_mask = 0;
	assert_refused(attr, EINVAL);
	attr = rc_attr();
	attr.pd = NULL;
	assert_refused(attr, EINVAL);
	attr = rc_attr();
	attr.pd = &other_pd.ibpd;
	assert_refused(attr, EINVAL);
	attr = rc_attr();
	attr.send_cq = NULL;
	assert_refused(attr, EINVAL);
	attr = rc_attr();
	attr.recv_cq = NULL;
	assert_refused(attr, EINVAL);
	attr = rc_attr();
	attr.recv_cq = ib(&other_cq);
	assert_refused(attr, EINVAL);
	attr = rc_attr();
	attr.srq = &other_srq.ibsrq;
	assert_refused(attr, EINVAL);
	/* An XRC target is made in a domain of this context. */
	attr = rc_attr();
	attr.qp_type = IBV_QPT_XRC_RECV;
	assert_refused(attr, EINVAL);
	attr.comp_mask = IBV_QP_INIT_ATTR_XRCD;
	attr.xrcd = &other_xrcd.ibxrcd;
	assert_refused(attr, EINVAL);
	attr.xrcd = NULL;
	assert_refused(attr, EINVAL);
	/* An XRC initiator needs its send CQ only. */
	attr = rc_attr();
	attr.qp_type = IBV_QPT_XRC_SEND;
	attr.send_cq = ib(&other_cq);
	assert_refused(attr, EINVAL);
}
END_TEST

/* An RC QP with an SRQ names it; the shared QP's CQEs are swept with the SRQ at RESET. */
START_TEST(test_create_with_srq_and_reset)
{
	struct ibv_qp_init_attr_ex attr = rc_attr();
	struct ibv_qp_attr mod = { .qp_state = IBV_QPS_INIT };
	struct ibv_qp *qp;

	attr.srq = &srq.ibsrq;
	qp = rocemu_create_qp_ex_op(ctx, &attr);
	ck_assert_ptr_nonnull(qp);
	ck_assert_uint_eq(create_req()->srqn, SRQN);
	ck_assert_ptr_eq(qp->srq, &srq.ibsrq);
	ck_assert_int_eq(ibv_modify_qp(qp, &mod, IBV_QP_STATE), 0);
	ck_assert_int_eq(cleans, 0);
	mod.qp_state = IBV_QPS_RESET;
	ck_assert_int_eq(ibv_modify_qp(qp, &mod, IBV_QP_STATE), 0);
	/* mlx5_modify_qp to RESET: the receive CQ with the SRQ, then the other send CQ. */
	ck_assert_int_eq(cleans, 2);
	ck_assert_ptr_eq(cleaned[0], &recv_cq);
	ck_assert_ptr_eq(cleaned_srq[0], &srq);
	ck_assert_ptr_eq(cleaned[1], &send_cq);
	ck_assert_ptr_null(cleaned_srq[1]);
	ck_assert_uint_eq(cleaned_qpn, QPN);
	/* mlx5_destroy_qp: a QP with an SRQ gives back the WQEs of its unpolled CQEs. */
	cleans = 0;
	destroy(qp);
	ck_assert_int_eq(cleans, 2);
}
END_TEST

/* One CQ for both queues is swept once. */
START_TEST(test_reset_one_cq)
{
	struct ibv_qp_init_attr_ex attr = rc_attr();
	struct ibv_qp_attr mod = { .qp_state = IBV_QPS_RESET };
	struct ibv_qp *qp;

	attr.recv_cq = attr.send_cq;
	qp = rocemu_create_qp_ex_op(ctx, &attr);
	ck_assert_ptr_nonnull(qp);
	ck_assert_int_eq(ibv_modify_qp(qp, &mod, IBV_QP_STATE), 0);
	ck_assert_int_eq(cleans, 1);
	ck_assert_ptr_eq(cleaned[0], &send_cq);
	/* Without an SRQ, destroy leaves the CQs to the daemon's flush (as mlx5). */
	cleans = 0;
	destroy(qp);
	ck_assert_int_eq(cleans, 0);
}
END_TEST

/* An XRC target: no PD, CQ, SRQ or queue reach the daemon, but ibv_qp keeps what was given. */
START_TEST(test_create_xrc_target)
{
	struct ibv_qp_init_attr_ex attr = {
		.qp_type = IBV_QPT_XRC_RECV, .comp_mask = IBV_QP_INIT_ATTR_XRCD | IBV_QP_INIT_ATTR_PD,
		.xrcd = &xrcd.ibxrcd, .pd = &pd.ibpd, .send_cq = ib(&send_cq),
		.recv_cq = ib(&recv_cq), .cap = { .max_send_wr = 4, .max_recv_wr = 4 },
	};
	struct ibv_qp_attr mod = { .qp_state = IBV_QPS_RESET };
	const struct rocemu_create_qp_req *req;
	struct ibv_qp *qp = rocemu_create_qp_ex_op(ctx, &attr);

	ck_assert_ptr_nonnull(qp);
	req = create_req();
	ck_assert_uint_eq(req->xrcd, XRCD_HANDLE);
	ck_assert_uint_eq(req->pdn, ROCEMU_NO_HANDLE);
	ck_assert_uint_eq(req->send_cqn, ROCEMU_NO_HANDLE);
	ck_assert_uint_eq(req->recv_cqn, ROCEMU_NO_HANDLE);
	ck_assert_uint_eq(req->srqn, ROCEMU_NO_HANDLE);
	ck_assert_uint_eq(req->cap.max_send_wr, 0);
	ck_assert_uint_eq(req->cap.max_recv_wr, 0);
	/* libibverbs' set_qp records what was given: librdmacm takes the PD from it. */
	ck_assert_ptr_eq(qp->pd, &pd.ibpd);
	ck_assert_ptr_eq(qp->send_cq, ib(&send_cq));
	/* It completes nothing of its own: not in the poller's table, nothing swept. */
	ck_assert_ptr_null(rocemu_qp_table_find(&rctx, QPN));
	ck_assert_int_eq(ibv_modify_qp(qp, &mod, IBV_QP_STATE), 0);
	ck_assert_int_eq(cleans, 0);
	destroy(qp);
}
END_TEST

/* An XRC initiator: a send queue only, whatever receive side was given. */
START_TEST(test_create_xrc_initiator)
{
	struct ibv_qp_init_attr_ex attr = rc_attr();
	const struct rocemu_create_qp_req *req;
	struct ibv_qp *qp;

	attr.qp_type = IBV_QPT_XRC_SEND;
	attr.srq = &srq.ibsrq;	/* ignored with the receive CQ, as uverbs ignores them */
	qp = rocemu_create_qp_ex_op(ctx, &attr);
	ck_assert_ptr_nonnull(qp);
	req = create_req();
	ck_assert_uint_eq(req->qp_type, IBV_QPT_XRC_SEND);
	ck_assert_uint_eq(req->send_cqn, SEND_CQN);
	ck_assert_uint_eq(req->recv_cqn, ROCEMU_NO_HANDLE);
	ck_assert_uint_eq(req->srqn, ROCEMU_NO_HANDLE);
	ck_assert_uint_eq(req->cap.max_recv_wr, 0);
	ck_assert_uint_eq(req->cap.max_recv_sge, 0);
	ck_assert_uint_eq(req->cap.max_send_wr, 5);
	destroy(qp);
}
END_TEST

/* DC QPs: IBV_QPT_DRIVER to the program; a DCT needs an SRQ and has no send queue. */
START_TEST(test_create_dc)
{
	struct ibv_qp_init_attr_ex attr = rc_attr();
	struct rocemu_dc_attr dct = { .type = ROCEMU_QPT_DCT, .dct_access_key = 0x1234567890ull };
	struct rocemu_dc_attr dci = { .type = ROCEMU_QPT_DCI, .log_concurrent = 2,
				      .log_errored = 1 };
	const struct rocemu_create_qp_req *req;
	struct ibv_qp *qp;

	attr.qp_type = IBV_QPT_DRIVER;
	errno = 0;
	ck_assert_ptr_null(rocemu_create_qp_dc(ctx, &attr, 0, &dct));
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_int_eq(conn_calls_all(), 0);
	attr.srq = &srq.ibsrq;
	qp = rocemu_create_qp_dc(ctx, &attr, 0, &dct);
	ck_assert_ptr_nonnull(qp);
	req = create_req();
	ck_assert_uint_eq(req->qp_type, ROCEMU_QPT_DCT);
	ck_assert_uint_eq(req->dct_access_key, 0x1234567890ull);
	ck_assert_uint_eq(req->srqn, SRQN);
	ck_assert_uint_eq(req->cap.max_send_wr, 0);
	ck_assert_uint_eq(req->cap.max_inline_data, 0);
	ck_assert_int_eq(qp->qp_type, IBV_QPT_DRIVER);
	ck_assert_int_eq(to_rqp(qp)->type, ROCEMU_QPT_DCT);
	destroy(qp);

	attr = rc_attr();
	attr.qp_type = IBV_QPT_DRIVER;
	qp = rocemu_create_qp_dc(ctx, &attr, ROCEMU_QP_VENDOR_PACKET_BASED_CREDIT, &dci);
	ck_assert_ptr_nonnull(qp);
	req = create_req();
	ck_assert_uint_eq(req->qp_type, ROCEMU_QPT_DCI);
	ck_assert_uint_eq(req->recv_cqn, ROCEMU_NO_HANDLE);
	ck_assert_uint_eq(req->cap.max_recv_wr, 0);
	ck_assert_uint_eq(req->dci_log_concurrent, 2);
	ck_assert_uint_eq(req->dci_log_errored, 1);
	ck_assert_uint_eq(req->vendor_flags, ROCEMU_QP_VENDOR_PACKET_BASED_CREDIT);
	destroy(qp);
}
END_TEST

/* send_ops_flags and create flags travel; the QP then has its ibv_qp_ex. */
START_TEST(test_create_qpx_and_flags)
{
	struct ibv_qp_init_attr_ex attr = rc_attr();
	struct ibv_qp *qp;

	attr.qp_type = IBV_QPT_UD;
	attr.comp_mask |= IBV_QP_INIT_ATTR_SEND_OPS_FLAGS | IBV_QP_INIT_ATTR_CREATE_FLAGS;
	attr.send_ops_flags = IBV_QP_EX_WITH_SEND;
	attr.create_flags = IBV_QP_CREATE_SOURCE_QPN;
	attr.source_qpn = 0x77;
	qp = rocemu_create_qp_ex_op(ctx, &attr);
	ck_assert_ptr_nonnull(qp);
	ck_assert_uint_eq(create_req()->create_flags, IBV_QP_CREATE_SOURCE_QPN);
	ck_assert_uint_eq(create_req()->source_qpn, 0x77);
	ck_assert_ptr_eq(ibv_qp_to_qp_ex(qp), &to_rqp(qp)->qpx);
	destroy(qp);
}
END_TEST

/* The daemon's refusal is the errno; a layout past its memfd is EPROTO and the QP destroyed there. */
START_TEST(test_create_daemon_answers)
{
	struct ibv_qp_init_attr_ex attr = rc_attr();
	struct rocemu_create_qp_resp bad = {
		.layout = { .qpn = QPN, .sq_wqe_cnt = SQ_BBS, .size = SQ_BBS * ROCEMU_WQE_BB,
			    .dbrec_offset = SQ_BBS * ROCEMU_WQE_BB },
	};

	conn_answer(ROCEMU_OP_CREATE_QP, -ENOMEM, NULL, 0, 0);
	errno = 0;
	ck_assert_ptr_null(rocemu_create_qp_ex_op(ctx, &attr));
	ck_assert_int_eq(errno, ENOMEM);
	ck_assert_int_eq(conn_calls(ROCEMU_OP_DESTROY_QP), 0);
	ck_assert_uint_eq(attr.cap.max_send_wr, 5);	/* untouched */

	conn_answer(ROCEMU_OP_CREATE_QP, 0, &bad, sizeof(bad), MAP_SIZE);
	errno = 0;
	ck_assert_ptr_null(rocemu_create_qp_ex_op(ctx, &attr));
	ck_assert_int_eq(errno, EPROTO);
	ck_assert_int_eq(conn_calls(ROCEMU_OP_DESTROY_QP), 1);
	ck_assert_uint_eq(((const struct rocemu_handle_req *)conn_last(ROCEMU_OP_DESTROY_QP))->handle,
			  QPN);
	ck_assert_ptr_null(rocemu_qp_table_find(&rctx, QPN));
}
END_TEST

/* MLX_QP_ALLOC_TYPE=CONTIG: libmlx5's create fails with ENOSYS, and the daemon's QP goes. */
START_TEST(test_create_alloc_type_fails)
{
	struct ibv_qp_init_attr_ex attr = rc_attr();

	setenv("MLX_QP_ALLOC_TYPE", "CONTIG", 1);
	errno = 0;
	ck_assert_ptr_null(rocemu_create_qp_ex_op(ctx, &attr));
	unsetenv("MLX_QP_ALLOC_TYPE");
	ck_assert_int_eq(errno, ENOSYS);
	ck_assert_int_eq(conn_calls(ROCEMU_OP_DESTROY_QP), 1);
	ck_assert_ptr_null(rocemu_qp_table_find(&rctx, QPN));
}
END_TEST

/* ibv_modify_qp: the request as given; the state follows only what the daemon took. */
START_TEST(test_modify)
{
	struct ibv_qp_init_attr_ex attr = rc_attr();
	struct ibv_qp *qp = rocemu_create_qp_ex_op(ctx, &attr);
	struct ibv_qp_attr mod = { .qp_state = IBV_QPS_INIT, .pkey_index = 0, .port_num = 1,
				   .qp_access_flags = IBV_ACCESS_REMOTE_WRITE };
	const struct rocemu_modify_qp_req *req;
	int mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS;

	ck_assert_ptr_nonnull(qp);
	ck_assert_int_eq(ibv_modify_qp(qp, &mod, mask), 0);
	req = conn_last(ROCEMU_OP_MODIFY_QP);
	ck_assert_uint_eq(req->qpn, QPN);
	ck_assert_uint_eq(req->attr_mask, (uint32_t)mask);
	ck_assert_int_eq(req->attr.qp_state, IBV_QPS_INIT);
	ck_assert_uint_eq(req->attr.port_num, 1);
	ck_assert_uint_eq(req->attr.qp_access_flags, IBV_ACCESS_REMOTE_WRITE);
	ck_assert_int_eq(qp->state, IBV_QPS_INIT);
	/* A transition the daemon refuses: its errno returned, the state as it was. */
	conn_answer(ROCEMU_OP_MODIFY_QP, -EINVAL, NULL, 0, 0);
	mod.qp_state = IBV_QPS_RTS;
	ck_assert_int_eq(ibv_modify_qp(qp, &mod, IBV_QP_STATE), EINVAL);
	ck_assert_int_eq(qp->state, IBV_QPS_INIT);
	/* Without IBV_QP_STATE the state stays. */
	conn_answer(ROCEMU_OP_MODIFY_QP, 0, NULL, 0, 0);
	mod.qp_state = IBV_QPS_ERR;
	ck_assert_int_eq(ibv_modify_qp(qp, &mod, IBV_QP_ACCESS_FLAGS), 0);
	ck_assert_int_eq(qp->state, IBV_QPS_INIT);
	destroy(qp);
}
END_TEST

/* ibv_query_qp: attr and cap from the daemon; init_attr from what the QP was created with. */
START_TEST(test_query)
{
	struct ibv_qp_init_attr_ex attr = rc_attr();
	struct ibv_qp *qp;
	struct rocemu_query_qp_resp resp = {
		.attr = { .qp_state = IBV_QPS_ERR, .path_mtu = IBV_MTU_1024, .dest_qp_num = 0x99 },
		.cap = { .max_send_wr = 1, .max_recv_wr = 2 },
	};
	struct ibv_qp_attr out;
	struct ibv_qp_init_attr init;
	const struct rocemu_query_qp_req *req;

	attr.sq_sig_all = 1;
	attr.qp_context = &srq;
	qp = rocemu_create_qp_ex_op(ctx, &attr);
	ck_assert_ptr_nonnull(qp);
	conn_answer(ROCEMU_OP_QUERY_QP, 0, &resp, sizeof(resp), 0);
	memset(&init, 0xee, sizeof(init));
	ck_assert_int_eq(ibv_query_qp(qp, &out, IBV_QP_STATE | IBV_QP_PATH_MTU, &init), 0);
	req = conn_last(ROCEMU_OP_QUERY_QP);
	ck_assert_uint_eq(req->qpn, QPN);
	ck_assert_uint_eq(req->attr_mask, IBV_QP_STATE | IBV_QP_PATH_MTU);
	ck_assert_int_eq(out.qp_state, IBV_QPS_ERR);
	ck_assert_int_eq(out.path_mtu, IBV_MTU_1024);
	ck_assert_uint_eq(out.dest_qp_num, 0x99);
	ck_assert_uint_eq(out.cap.max_recv_wr, 2);
	ck_assert_ptr_eq(init.qp_context, &srq);
	ck_assert_ptr_eq(init.send_cq, ib(&send_cq));
	ck_assert_ptr_eq(init.recv_cq, ib(&recv_cq));
	ck_assert_ptr_null(init.srq);
	ck_assert_uint_eq(init.cap.max_send_wr, SQ_BBS);	/* as granted at create */
	ck_assert_int_eq(init.qp_type, IBV_QPT_RC);
	ck_assert_int_eq(init.sq_sig_all, 1);
	/* The daemon moved it to ERR on its own: the QP says so now. */
	ck_assert_int_eq(qp->state, IBV_QPS_ERR);
	conn_answer(ROCEMU_OP_QUERY_QP, -EIO, NULL, 0, 0);
	ck_assert_int_eq(ibv_query_qp(qp, &out, IBV_QP_STATE, &init), EIO);
	destroy(qp);
}
END_TEST

/* ibv_destroy_qp: a refusal keeps the QP whole, usable and destroyable. */
START_TEST(test_destroy_refused)
{
	struct ibv_qp_init_attr_ex attr = rc_attr();
	struct ibv_qp *qp = rocemu_create_qp_ex_op(ctx, &attr);

	ck_assert_ptr_nonnull(qp);
	conn_answer(ROCEMU_OP_DESTROY_QP, -EBUSY, NULL, 0, 0);
	ck_assert_int_eq(ibv_destroy_qp(qp), EBUSY);
	ck_assert_ptr_eq(rocemu_qp_table_find(&rctx, QPN), to_rqp(qp));
	ck_assert_uint_eq(((const struct rocemu_handle_req *)conn_last(ROCEMU_OP_DESTROY_QP))->handle,
			  QPN);
	conn_answer(ROCEMU_OP_DESTROY_QP, 0, NULL, 0, 0);
	destroy(qp);
	ck_assert_int_eq(conn_calls(ROCEMU_OP_DESTROY_QP), 2);
}
END_TEST

/* ibv_open_qp as ibv_cmd_open_qp: unknown bits EOPNOTSUPP, a missing domain, number or type EINVAL. */
START_TEST(test_open_qp)
{
	struct ibv_qp_open_attr open = {
		.comp_mask = IBV_QP_OPEN_ATTR_XRCD | IBV_QP_OPEN_ATTR_NUM | IBV_QP_OPEN_ATTR_TYPE |
			     IBV_QP_OPEN_ATTR_CONTEXT,
		.xrcd = &xrcd.ibxrcd, .qp_num = 0x345, .qp_type = IBV_QPT_XRC_RECV,
		.qp_context = &pd,
	};
	struct ibv_qp_open_attr bad;
	const struct rocemu_open_qp_req *req;
	struct ibv_qp_attr mod = { .qp_state = IBV_QPS_RESET };
	struct ibv_qp *qp;

	bad = open;
	bad.comp_mask = IBV_QP_OPEN_ATTR_RESERVED;
	errno = 0;
	ck_assert_ptr_null(rocemu_open_qp_op(ctx, &bad));
	ck_assert_int_eq(errno, EOPNOTSUPP);
	bad.comp_mask = IBV_QP_OPEN_ATTR_XRCD | IBV_QP_OPEN_ATTR_NUM;
	errno = 0;
	ck_assert_ptr_null(rocemu_open_qp_op(ctx, &bad));
	ck_assert_int_eq(errno, EINVAL);
	bad = open;
	bad.xrcd = &other_xrcd.ibxrcd;
	errno = 0;
	ck_assert_ptr_null(rocemu_open_qp_op(ctx, &bad));
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_int_eq(conn_calls_all(), 0);

	qp = rocemu_open_qp_op(ctx, &open);
	ck_assert_ptr_nonnull(qp);
	req = conn_last(ROCEMU_OP_OPEN_QP);
	ck_assert_uint_eq(req->xrcd, XRCD_HANDLE);
	ck_assert_uint_eq(req->qpn, 0x345);
	ck_assert_uint_eq(req->qp_type, IBV_QPT_XRC_RECV);
	ck_assert_uint_eq(req->user_qp, (uintptr_t)qp);
	ck_assert_uint_eq(qp->qp_num, 0x345);
	ck_assert_int_eq(qp->state, IBV_QPS_UNKNOWN);
	ck_assert_ptr_eq(qp->qp_context, &pd);
	/* No rings here: a RESET touches none and sweeps nothing. */
	ck_assert_int_eq(ibv_modify_qp(qp, &mod, IBV_QP_STATE), 0);
	ck_assert_int_eq(cleans, 0);
	destroy(qp);
	ck_assert_uint_eq(((const struct rocemu_handle_req *)conn_last(ROCEMU_OP_DESTROY_QP))->handle,
			  0x345);

	conn_answer(ROCEMU_OP_OPEN_QP, -ENOENT, NULL, 0, 0);
	errno = 0;
	ck_assert_ptr_null(rocemu_open_qp_op(ctx, &open));
	ck_assert_int_eq(errno, ENOENT);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("qp_attr");
	TCase *tc = tcase_create("qp");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(tc, objs_open, objs_close);
	tcase_add_test(tc, test_create_rc);
	tcase_add_test(tc, test_scatter_to_cqe_env);
	tcase_add_test(tc, test_create_mask_checks);
	tcase_add_test(tc, test_create_object_checks);
	tcase_add_test(tc, test_create_with_srq_and_reset);
	tcase_add_test(tc, test_reset_one_cq);
	tcase_add_test(tc, test_create_xrc_target);
	tcase_add_test(tc, test_create_xrc_initiator);
	tcase_add_test(tc, test_create_dc);
	tcase_add_test(tc, test_create_qpx_and_flags);
	tcase_add_test(tc, test_create_daemon_answers);
	tcase_add_test(tc, test_create_alloc_type_fails);
	tcase_add_test(tc, test_modify);
	tcase_add_test(tc, test_query);
	tcase_add_test(tc, test_destroy_refused);
	tcase_add_test(tc, test_open_qp);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
