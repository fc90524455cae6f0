/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Completion queues and shared receive queues on an emulated device
 * (lib/verbs/cq.c, lib/verbs/srq.c): the checks libmlx5 makes of their
 * attributes with the errno it gives, the CREATE_CQ and CREATE_SRQ
 * requests, the layouts answered checked before they are mapped, a
 * channel's reference, the arm word, resize, the sweep of a QP's CQEs
 * (mlx5_cq_clean) giving its SRQ WQEs back, an XRC SRQ on its CQ, and
 * posting along an SRQ's free list. The daemon is daemon_conn.h's
 * recording stand-in.
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/shim.h"
#include "tests/unit/verbs/daemon_conn.h"

#define CQN 0x000021
#define NCQE 16
#define CQ_DBREC_OFFSET (NCQE * sizeof(struct mlx5_cqe64))
#define CQ_MAP_SIZE (CQ_DBREC_OFFSET + 64)
#define CHANNEL_HANDLE 3
#define PDN 9
#define SRQN 0x000031
#define SRQ_WQES 8
#define SRQ_SHIFT 5		/* next segment and one data segment */
#define SRQ_DBREC_OFFSET (SRQ_WQES << SRQ_SHIFT)
#define SRQ_MAP_SIZE (SRQ_DBREC_OFFSET + 64)
#define XRCD_HANDLE 4
#define QPN_A 0x000101
#define QPN_B 0x000102

static struct rocemu_device device;
static struct ibv_device ibdev;
static struct rocemu_context rctx, other_rctx;
static struct ibv_context *const ctx = &rctx.vctx.context;
static struct ibv_context *const other_ctx = &other_rctx.vctx.context;
static struct rocemu_channel channel, other_channel;
static struct rocemu_pd pd, other_pd;
static struct rocemu_xrcd xrcd;
static int doorbells, recv_doorbells;

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

/* Telling the daemon of an arm or a receive doorbell: counted. */
void rocemu_ctx_doorbell(struct rocemu_context *c)
{
	ck_assert_ptr_eq(c, &rctx);
	doorbells++;
}

void rocemu_ctx_recv_doorbell(struct rocemu_context *c)
{
	ck_assert_ptr_eq(c, &rctx);
	recv_doorbells++;
}

/* Not reached: no poll here waits on the daemon. */
void rocemu_conn_check(struct rocemu_conn *conn)
{
	(void)conn;
	abort();
}

static void ctx_init(struct rocemu_context *r)
{
	memset(r, 0, sizeof(*r));
	r->vctx.context.device = &ibdev;
	r->vctx.context.num_comp_vectors = 1;
	pthread_mutex_init(&r->vctx.context.mutex, NULL);
	rocemu_huge_pool_init(&r->huge_pool);
}

static struct rocemu_cq_layout cq_layout(uint32_t ncqe, uint32_t cqe_size)
{
	return (struct rocemu_cq_layout){
		.cqn = CQN, .ncqe = ncqe, .cqe_size = cqe_size,
		.size = (uint64_t)ncqe * cqe_size + 64, .buf_offset = 0,
		.dbrec_offset = (uint64_t)ncqe * cqe_size,
	};
}

static void answer_cq(struct rocemu_cq_layout layout)
{
	struct rocemu_create_cq_resp resp = { .layout = layout };

	conn_answer(ROCEMU_OP_CREATE_CQ, 0, &resp, sizeof(resp), layout.size);
}

static struct rocemu_srq_layout srq_layout(uint32_t wqe_cnt)
{
	return (struct rocemu_srq_layout){
		.srqn = SRQN, .wqe_cnt = wqe_cnt, .wqe_shift = SRQ_SHIFT, .size = SRQ_MAP_SIZE,
		.buf_offset = 0, .dbrec_offset = SRQ_DBREC_OFFSET,
	};
}

static void answer_srq(struct rocemu_srq_layout layout, uint32_t max_wr, uint32_t max_sge)
{
	struct rocemu_create_srq_resp resp = { .layout = layout,
					       .attr = { .max_wr = max_wr, .max_sge = max_sge } };

	conn_answer(ROCEMU_OP_CREATE_SRQ, 0, &resp, sizeof(resp), layout.size);
}

static void objs_open(void)
{
	ctx_init(&rctx);
	ctx_init(&other_rctx);
	channel = (struct rocemu_channel){ .ibch = { .context = ctx }, .handle = CHANNEL_HANDLE };
	other_channel = (struct rocemu_channel){ .ibch = { .context = other_ctx } };
	pd = (struct rocemu_pd){ .ibpd = { .context = ctx }, .pdn = PDN };
	other_pd = (struct rocemu_pd){ .ibpd = { .context = other_ctx }, .pdn = PDN };
	xrcd = (struct rocemu_xrcd){ .ibxrcd = { .context = ctx }, .handle = XRCD_HANDLE };
	doorbells = recv_doorbells = 0;
	unsetenv("MLX5_CQE_SIZE");
	conn_reset();
	answer_cq(cq_layout(NCQE, sizeof(struct mlx5_cqe64)));
	answer_srq(srq_layout(SRQ_WQES), SRQ_WQES - 1, 1);
}

static const struct rocemu_create_cq_req *cq_req(void)
{
	return conn_last(ROCEMU_OP_CREATE_CQ);
}

/* A refused CQ create: NULL, errno err, the daemon never asked. */
static void assert_cq_refused(struct ibv_cq_init_attr_ex attr, int err)
{
	errno = 0;
	ck_assert_ptr_null(rocemu_create_cq_ex_op(ctx, &attr));
	ck_assert_int_eq(errno, err);
	ck_assert_int_eq(conn_calls_all(), 0);
}

/* ibv_create_cq: the request as asked; the CQ as answered, its channel referenced. */
START_TEST(test_create_cq)
{
	struct ibv_cq *cq = ibv_create_cq(ctx, 10, &pd, &channel.ibch, 0);
	const struct rocemu_create_cq_req *req = cq_req();

	ck_assert_ptr_nonnull(cq);
	ck_assert_uint_eq(req->cqe, 10);
	ck_assert_uint_eq(req->channel, CHANNEL_HANDLE);
	ck_assert_uint_eq(req->comp_vector, 0);
	ck_assert_uint_eq(req->cqe_size, sizeof(struct mlx5_cqe64));
	ck_assert_uint_eq(req->user_cq, (uintptr_t)cq);
	ck_assert_int_eq(cq->cqe, NCQE - 1);	/* mlx5: one entry less than the ring */
	ck_assert_ptr_eq(cq->cq_context, &pd);
	ck_assert_ptr_eq(cq->channel, &channel.ibch);
	ck_assert_uint_eq(cq->handle, CQN);
	ck_assert_uint_eq(to_rcq(cq)->cqn, CQN);
	ck_assert_int_eq(channel.ibch.refcnt, 1);
	ck_assert_int_eq(ibv_destroy_cq(cq), 0);
	ck_assert_uint_eq(((const struct rocemu_handle_req *)conn_last(ROCEMU_OP_DESTROY_CQ))->handle,
			  CQN);
	ck_assert_int_eq(channel.ibch.refcnt, 0);
	/* A negative size asks for none, which the daemon refuses as the kernel does. */
	cq = ibv_create_cq(ctx, -1, NULL, NULL, 0);
	ck_assert_ptr_nonnull(cq);
	ck_assert_uint_eq(cq_req()->cqe, 0);
	ck_assert_uint_eq(cq_req()->channel, ROCEMU_NO_HANDLE);
	ck_assert_int_eq(ibv_destroy_cq(cq), 0);
}
END_TEST

/* libmlx5's MLX5_CQE_SIZE: 64 or 128, anything else fails the create with EINVAL. */
START_TEST(test_cqe_size_env)
{
	struct ibv_cq *cq;

	setenv("MLX5_CQE_SIZE", "128", 1);
	answer_cq(cq_layout(NCQE, 128));
	cq = ibv_create_cq(ctx, 4, NULL, NULL, 0);
	ck_assert_ptr_nonnull(cq);
	ck_assert_uint_eq(cq_req()->cqe_size, 128);
	ck_assert_uint_eq(to_rcq(cq)->cqe_size, 128);
	ck_assert_int_eq(ibv_destroy_cq(cq), 0);
	setenv("MLX5_CQE_SIZE", "100", 1);
	errno = 0;
	ck_assert_ptr_null(ibv_create_cq(ctx, 4, NULL, NULL, 0));
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_int_eq(conn_calls(ROCEMU_OP_CREATE_CQ), 1);
}
END_TEST

/* A channel of another context and a vector past num_comp_vectors: EINVAL (uverbs). */
START_TEST(test_create_cq_checks)
{
	struct ibv_cq_init_attr_ex attr = { .cqe = 8, .wc_flags = IBV_WC_STANDARD_FLAGS };

	errno = 0;
	ck_assert_ptr_null(ibv_create_cq(ctx, 8, NULL, &other_channel.ibch, 0));
	ck_assert_int_eq(errno, EINVAL);
	errno = 0;
	ck_assert_ptr_null(ibv_create_cq(ctx, 8, NULL, NULL, 1));
	ck_assert_int_eq(errno, EINVAL);
	errno = 0;
	ck_assert_ptr_null(ibv_create_cq(ctx, 8, NULL, NULL, -1));
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_int_eq(conn_calls_all(), 0);
	/* mlx5's create_cq: no CQE, an unknown comp_mask bit or create flag EINVAL; wc_flags ENOTSUP. */
	attr.cqe = 0;
	assert_cq_refused(attr, EINVAL);
	attr.cqe = 8;
	attr.comp_mask = IBV_CQ_INIT_ATTR_MASK_PD << 1;
	assert_cq_refused(attr, EINVAL);
	attr.comp_mask = IBV_CQ_INIT_ATTR_MASK_FLAGS;
	attr.flags = IBV_CREATE_CQ_ATTR_IGNORE_OVERRUN;
	assert_cq_refused(attr, EINVAL);
	attr.comp_mask = 0;
	attr.wc_flags = IBV_WC_EX_WITH_TM_INFO;
	assert_cq_refused(attr, ENOTSUP);
	/* The PD of IBV_CQ_INIT_ATTR_MASK_PD must be a parent domain. */
	attr.wc_flags = IBV_WC_STANDARD_FLAGS;
	attr.comp_mask = IBV_CQ_INIT_ATTR_MASK_PD;
	attr.parent_domain = &pd.ibpd;
	assert_cq_refused(attr, EINVAL);
	attr.parent_domain = NULL;
	assert_cq_refused(attr, EINVAL);
}
END_TEST

/* create_cq_ex: wc_flags kept, single-threaded taken, a parent domain held for the CQ's life. */
START_TEST(test_create_cq_ex)
{
	struct ibv_parent_domain_init_attr pattr = { .pd = &pd.ibpd };
	struct ibv_pd *parent = rocemu_alloc_parent_domain_op(ctx, &pattr);
	struct ibv_cq_init_attr_ex attr = {
		.cqe = 8, .cq_context = &xrcd, .channel = &channel.ibch,
		.wc_flags = IBV_WC_STANDARD_FLAGS | IBV_WC_EX_WITH_COMPLETION_TIMESTAMP,
		.comp_mask = IBV_CQ_INIT_ATTR_MASK_FLAGS | IBV_CQ_INIT_ATTR_MASK_PD,
		.flags = IBV_CREATE_CQ_ATTR_SINGLE_THREADED, .parent_domain = parent,
	};
	struct ibv_cq_ex *cq;

	ck_assert_ptr_nonnull(parent);
	cq = rocemu_create_cq_ex_op(ctx, &attr);
	ck_assert_ptr_nonnull(cq);
	ck_assert_uint_eq(to_rcq_ex(cq)->wc_flags, attr.wc_flags);
	ck_assert_ptr_eq(cq->cq_context, &xrcd);
	ck_assert_ptr_nonnull(cq->start_poll);
	ck_assert_uint_eq(cq_req()->channel, CHANNEL_HANDLE);
	/* Held: the parent domain cannot go before the CQ. */
	ck_assert_int_eq(rocemu_parent_domain_dealloc(to_rparent_domain(parent)), EBUSY);
	ck_assert_int_eq(ibv_destroy_cq(ibv_cq_ex_to_cq(cq)), 0);
	ck_assert_int_eq(rocemu_parent_domain_dealloc(to_rparent_domain(parent)), 0);
}
END_TEST

/* Layouts the shim cannot poll are EPROTO, and the daemon's CQ is destroyed. */
START_TEST(test_create_cq_bad_layouts)
{
	struct rocemu_cq_layout bad[4];
	size_t i;

	bad[0] = cq_layout(12, sizeof(struct mlx5_cqe64));	/* not a power of two */
	bad[1] = cq_layout(NCQE, 32);				/* no such CQE size */
	bad[2] = cq_layout(1, sizeof(struct mlx5_cqe64));	/* fewer than 2 */
	bad[3] = cq_layout(NCQE, sizeof(struct mlx5_cqe64));
	bad[3].dbrec_offset = bad[3].size - 4;			/* the record past the memfd */
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		answer_cq(bad[i]);
		errno = 0;
		ck_assert_ptr_null(ibv_create_cq(ctx, 8, NULL, &channel.ibch, 0));
		ck_assert_int_eq(errno, EPROTO);
		ck_assert_int_eq(conn_calls(ROCEMU_OP_DESTROY_CQ), (int)i + 1);
		ck_assert_int_eq(channel.ibch.refcnt, 0);
	}
	conn_answer(ROCEMU_OP_CREATE_CQ, -ENOMEM, NULL, 0, 0);
	errno = 0;
	ck_assert_ptr_null(ibv_create_cq(ctx, 8, NULL, NULL, 0));
	ck_assert_int_eq(errno, ENOMEM);
	ck_assert_int_eq(conn_calls(ROCEMU_OP_DESTROY_CQ), 4);
}
END_TEST

/* ibv_req_notify_cq: mlx5's arm word (sn, command, consumer index), then the daemon is told. */
START_TEST(test_arm)
{
	struct ibv_cq *cq = ibv_create_cq(ctx, 8, NULL, NULL, 0);
	struct rocemu_cq *rcq = to_rcq(cq);

	ck_assert_ptr_nonnull(cq);
	rcq->cons_index = 0x1000005;
	ck_assert_int_eq(rocemu_req_notify_cq_op(cq, 0), 0);
	/* The first arm carries sn 1: the daemon's fired sn starts at 0. */
	ck_assert_uint_eq(be32toh(rcq->dbrec[ROCEMU_CQ_DBR_ARM]),
			  1u << 28 | MLX5_CQ_DB_REQ_NOT | 0x000005);
	ck_assert_int_eq(doorbells, 1);
	rcq->arm_sn = 2;
	ck_assert_int_eq(rocemu_req_notify_cq_op(cq, 1), 0);
	ck_assert_uint_eq(be32toh(rcq->dbrec[ROCEMU_CQ_DBR_ARM]),
			  2u << 28 | MLX5_CQ_DB_REQ_NOT_SOL | 0x000005);
	ck_assert_int_eq(doorbells, 2);
	ck_assert_int_eq(ibv_destroy_cq(cq), 0);
}
END_TEST

/* ibv_resize_cq: the new ring mapped, polling resumes where the daemon's record says. */
START_TEST(test_resize)
{
	struct ibv_cq *cq = ibv_create_cq(ctx, 8, NULL, NULL, 0);
	struct rocemu_resize_cq_resp resp = { .layout = cq_layout(2 * NCQE, 64) };
	const __be32 ci = htobe32(7);
	const struct rocemu_resize_cq_req *req;

	ck_assert_ptr_nonnull(cq);
	conn_answer(ROCEMU_OP_RESIZE_CQ, 0, &resp, sizeof(resp), resp.layout.size);
	conn_answer_fill(ROCEMU_OP_RESIZE_CQ, resp.layout.dbrec_offset, &ci, sizeof(ci));
	ck_assert_int_eq(ibv_resize_cq(cq, 20), 0);
	req = conn_last(ROCEMU_OP_RESIZE_CQ);
	ck_assert_uint_eq(req->cqn, CQN);
	ck_assert_uint_eq(req->cqe, 20);
	ck_assert_int_eq(cq->cqe, 2 * NCQE - 1);
	ck_assert_uint_eq(to_rcq(cq)->ncqe, 2 * NCQE);
	ck_assert_uint_eq(to_rcq(cq)->cons_index, 7);
	/* Refused, or a ring that does not fit: the CQ is as it was. */
	conn_answer(ROCEMU_OP_RESIZE_CQ, -EINVAL, NULL, 0, 0);
	ck_assert_int_eq(ibv_resize_cq(cq, 1 << 30), EINVAL);
	ck_assert_int_eq(cq->cqe, 2 * NCQE - 1);
	resp.layout = cq_layout(24, 64);
	conn_answer(ROCEMU_OP_RESIZE_CQ, 0, &resp, sizeof(resp), resp.layout.size);
	ck_assert_int_eq(ibv_resize_cq(cq, 20), EPROTO);
	ck_assert_uint_eq(to_rcq(cq)->ncqe, 2 * NCQE);
	ck_assert_int_eq(ibv_destroy_cq(cq), 0);
}
END_TEST

/* ibv_destroy_cq refused by the daemon: the CQ stays, its channel still referenced. */
START_TEST(test_destroy_cq_refused)
{
	struct ibv_cq *cq = ibv_create_cq(ctx, 8, NULL, &channel.ibch, 0);

	ck_assert_ptr_nonnull(cq);
	conn_answer(ROCEMU_OP_DESTROY_CQ, -EBUSY, NULL, 0, 0);
	ck_assert_int_eq(ibv_destroy_cq(cq), EBUSY);
	ck_assert_int_eq(channel.ibch.refcnt, 1);
	conn_answer(ROCEMU_OP_DESTROY_CQ, 0, NULL, 0, 0);
	ck_assert_int_eq(ibv_destroy_cq(cq), 0);
	ck_assert_int_eq(channel.ibch.refcnt, 0);
}
END_TEST

/* A CQE at index i of qpn, as the daemon writes it in the first pass over the ring. */
static void cqe_put(struct rocemu_cq *cq, uint32_t i, uint8_t opcode, uint32_t qpn,
		    uint16_t wqe_counter)
{
	struct mlx5_cqe64 *cqe = rocemu_cqe_at(cq->buf, cq->cqe_size, cq->ncqe, i);

	memset(cqe, 0, sizeof(*cqe));
	cqe->sop_drop_qpn = htobe32(qpn);
	cqe->wqe_counter = htobe16(wqe_counter);
	cqe->byte_cnt = htobe32(i);
	cqe->op_own = (uint8_t)(opcode << 4 | ((i / cq->ncqe) & 1));
}

/* mlx5_cq_clean: qpn's CQEs go (its receives give their SRQ WQEs back), the others move up. */
START_TEST(test_cq_clean)
{
	struct ibv_cq *cq = ibv_create_cq(ctx, 8, NULL, NULL, 0);
	struct ibv_srq_init_attr sattr = { .attr = { .max_wr = 4, .max_sge = 1 } };
	struct ibv_srq *ibsrq = ibv_create_srq(&pd.ibpd, &sattr);
	struct rocemu_cq *rcq = to_rcq(cq);
	struct rocemu_srq *srq = to_rsrq(ibsrq);
	struct mlx5_cqe64 *kept;
	uint32_t i;

	ck_assert_ptr_nonnull(cq);
	ck_assert_ptr_nonnull(ibsrq);
	for (i = 0; i < NCQE; i++)	/* a fresh ring: every entry hardware's */
		rocemu_cqe_at(rcq->buf, rcq->cqe_size, NCQE, i)->op_own = MLX5_CQE_INVALID << 4 | 1;
	srq->wrid[3] = 0x33;
	srq->head = 4;		/* WQEs 0-3 posted */
	cqe_put(rcq, 0, MLX5_CQE_RESP_SEND, QPN_B, 0);
	cqe_put(rcq, 1, MLX5_CQE_REQ, QPN_A, 0);
	cqe_put(rcq, 2, MLX5_CQE_RESP_SEND, QPN_A, 3);
	cqe_put(rcq, 3, MLX5_CQE_RESP_SEND, QPN_B, 1);
	rocemu_cq_clean(rcq, QPN_A, srq);
	/* Two dropped: polling resumes at 2, where B's CQEs now are, in their order. */
	ck_assert_uint_eq(rcq->cons_index, 2);
	ck_assert_uint_eq(be32toh(rcq->dbrec[ROCEMU_CQ_DBR_SET_CI]), 2);
	kept = rocemu_cqe_at(rcq->buf, rcq->cqe_size, NCQE, 2);
	ck_assert_uint_eq(be32toh(kept->sop_drop_qpn), QPN_B);
	ck_assert_uint_eq(be32toh(kept->byte_cnt), 0);
	ck_assert_uint_eq(kept->op_own, MLX5_CQE_RESP_SEND << 4);
	kept = rocemu_cqe_at(rcq->buf, rcq->cqe_size, NCQE, 3);
	ck_assert_uint_eq(be32toh(kept->byte_cnt), 3);
	/* The SRQ WQE A's receive held is free again, linked after the old tail. */
	ck_assert_uint_eq(srq->tail, 3);
	ck_assert_uint_eq(be16toh(((struct mlx5_wqe_srq_next_seg *)(srq->buf + ((SRQ_WQES - 1)
			  << SRQ_SHIFT)))->next_wqe_index), 3);
	/* A CQ the program polls itself (mlx5dv_init_obj) is left alone, as mlx5 leaves it. */
	rcq->dv_owned = true;
	rocemu_cq_clean(rcq, QPN_B, NULL);
	ck_assert_uint_eq(rcq->cons_index, 2);
	ck_assert_int_eq(ibv_destroy_srq(ibsrq), 0);
	ck_assert_int_eq(ibv_destroy_cq(cq), 0);
}
END_TEST

/* A WQ's CQEs (ROCEMU_CQE_WQ_RECV) and a QP's of the same number: each sweep takes its own. */
START_TEST(test_cq_clean_wq)
{
	struct ibv_cq *cq = ibv_create_cq(ctx, 8, NULL, NULL, 0);
	struct rocemu_cq *rcq = to_rcq(cq);
	uint32_t i;

	ck_assert_ptr_nonnull(cq);
	for (i = 0; i < NCQE; i++)
		rocemu_cqe_at(rcq->buf, rcq->cqe_size, NCQE, i)->op_own = MLX5_CQE_INVALID << 4 | 1;
	cqe_put(rcq, 0, MLX5_CQE_RESP_SEND, QPN_B, 0);
	cqe_put(rcq, 1, MLX5_CQE_RESP_ERR, QPN_B, 0);
	rocemu_cqe_at(rcq->buf, rcq->cqe_size, NCQE, 1)->srqn_uidx = htobe32(ROCEMU_CQE_WQ_RECV);
	rocemu_cq_clean_wq(rcq, QPN_B);
	ck_assert_uint_eq(rcq->cons_index, 1);
	ck_assert(!rocemu_cqe_is_wq(rocemu_cqe_at(rcq->buf, rcq->cqe_size, NCQE, 1)));
	rocemu_cq_clean(rcq, QPN_B, NULL);
	ck_assert_uint_eq(rcq->cons_index, 2);
	ck_assert_int_eq(ibv_destroy_cq(cq), 0);
}
END_TEST

/* ibv_create_srq: the request as asked, the grant written back, every WQE on the free list. */
START_TEST(test_create_srq)
{
	struct ibv_srq_init_attr attr = { .srq_context = &xrcd,
					  .attr = { .max_wr = 5, .max_sge = 1, .srq_limit = 2 } };
	struct ibv_srq *ibsrq = ibv_create_srq(&pd.ibpd, &attr);
	const struct rocemu_create_srq_req *req = conn_last(ROCEMU_OP_CREATE_SRQ);
	struct rocemu_srq *srq;
	uint32_t srqn = 0, i;

	ck_assert_ptr_nonnull(ibsrq);
	srq = to_rsrq(ibsrq);
	ck_assert_uint_eq(req->pdn, PDN);
	ck_assert_uint_eq(req->attr.max_wr, 5);
	ck_assert_uint_eq(req->attr.max_sge, 1);
	ck_assert_uint_eq(req->srq_type, IBV_SRQT_BASIC);
	ck_assert_uint_eq(req->user_srq, (uintptr_t)ibsrq);
	ck_assert_uint_eq(attr.attr.max_wr, SRQ_WQES - 1);
	ck_assert_uint_eq(attr.attr.max_sge, 1);
	ck_assert_ptr_eq(ibsrq->srq_context, &xrcd);
	ck_assert_ptr_eq(ibsrq->pd, &pd.ibpd);
	ck_assert_uint_eq(ibsrq->handle, SRQN);
	ck_assert_int_eq(rocemu_get_srq_num_op(ibsrq, &srqn), 0);
	ck_assert_uint_eq(srqn, SRQN);
	/* mlx5_alloc_srq_buf: each WQE links to the next, the last to the first. */
	for (i = 0; i < SRQ_WQES; i++)
		ck_assert_uint_eq(be16toh(((struct mlx5_wqe_srq_next_seg *)(srq->buf + (i << SRQ_SHIFT)))
					  ->next_wqe_index), (i + 1) % SRQ_WQES);
	ck_assert_uint_eq(srq->head, 0);
	ck_assert_uint_eq(srq->tail, SRQ_WQES - 1);
	ck_assert_int_eq(ibv_destroy_srq(ibsrq), 0);
	ck_assert_uint_eq(((const struct rocemu_handle_req *)conn_last(ROCEMU_OP_DESTROY_SRQ))->handle,
			  SRQN);
}
END_TEST

/* A refused SRQ create: NULL, errno err, the daemon never asked. */
static void assert_srq_refused(struct ibv_srq_init_attr_ex attr, int err)
{
	errno = 0;
	ck_assert_ptr_null(rocemu_create_srq_ex_op(ctx, &attr));
	ck_assert_int_eq(errno, err);
	ck_assert_int_eq(conn_calls_all(), 0);
}

/* create_srq_ex: unknown bits and types EINVAL, tag matching EOPNOTSUPP, objects of this context. */
START_TEST(test_create_srq_ex_checks)
{
	struct ibv_cq *cq;
	struct rocemu_cq other_cq;
	struct ibv_srq_init_attr_ex attr = {
		.comp_mask = IBV_SRQ_INIT_ATTR_PD | IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_XRCD |
			     IBV_SRQ_INIT_ATTR_CQ,
		.srq_type = IBV_SRQT_XRC, .pd = &pd.ibpd, .xrcd = &xrcd.ibxrcd,
		.attr = { .max_wr = 4, .max_sge = 1 },
	}, bad;

	cq = ibv_create_cq(ctx, 8, NULL, NULL, 0);
	ck_assert_ptr_nonnull(cq);
	attr.cq = cq;
	memset(&other_cq, 0, sizeof(other_cq));
	other_cq.ibcq.context = other_ctx;
	conn_reset();
	answer_srq(srq_layout(SRQ_WQES), SRQ_WQES - 1, 1);

	bad = attr;
	bad.comp_mask |= IBV_SRQ_INIT_ATTR_RESERVED;
	assert_srq_refused(bad, EINVAL);
	bad = attr;
	bad.srq_type = IBV_SRQT_TM;
	assert_srq_refused(bad, EOPNOTSUPP);
	bad.srq_type = (enum ibv_srq_type)7;
	assert_srq_refused(bad, EINVAL);
	bad = attr;
	bad.comp_mask &= ~(uint32_t)IBV_SRQ_INIT_ATTR_PD;
	assert_srq_refused(bad, EINVAL);
	bad = attr;
	bad.pd = &other_pd.ibpd;
	assert_srq_refused(bad, EINVAL);
	bad = attr;
	bad.comp_mask &= ~(uint32_t)IBV_SRQ_INIT_ATTR_XRCD;
	assert_srq_refused(bad, EINVAL);
	bad = attr;
	bad.comp_mask &= ~(uint32_t)IBV_SRQ_INIT_ATTR_CQ;
	assert_srq_refused(bad, EINVAL);
	bad = attr;
	bad.cq = ibv_cq_ex_to_cq(&other_cq.ibcq);
	assert_srq_refused(bad, EINVAL);
	ck_assert_int_eq(ibv_destroy_cq(cq), 0);
}
END_TEST

/* An XRC SRQ names its domain and CQ, and its CQ finds it by number until it is destroyed. */
START_TEST(test_create_srq_xrc)
{
	struct ibv_cq *cq = ibv_create_cq(ctx, 8, NULL, NULL, 0);
	struct ibv_srq_init_attr_ex attr = {
		.comp_mask = IBV_SRQ_INIT_ATTR_PD | IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_XRCD |
			     IBV_SRQ_INIT_ATTR_CQ,
		.srq_type = IBV_SRQT_XRC, .pd = &pd.ibpd, .xrcd = &xrcd.ibxrcd, .cq = cq,
		.attr = { .max_wr = 4, .max_sge = 1 },
	};
	const struct rocemu_create_srq_req *req;
	struct ibv_srq *srq;

	ck_assert_ptr_nonnull(cq);
	srq = rocemu_create_srq_ex_op(ctx, &attr);
	ck_assert_ptr_nonnull(srq);
	req = conn_last(ROCEMU_OP_CREATE_SRQ);
	ck_assert_uint_eq(req->srq_type, IBV_SRQT_XRC);
	ck_assert_uint_eq(req->xrcd, XRCD_HANDLE);
	ck_assert_uint_eq(req->cqn, CQN);
	ck_assert_uint_eq(attr.attr.max_wr, SRQ_WQES - 1);
	ck_assert_ptr_eq(to_rcq(cq)->xrc_srqs, to_rsrq(srq));
	ck_assert_ptr_eq(to_rsrq(srq)->xrc_cq, to_rcq(cq));
	ck_assert_int_eq(ibv_destroy_srq(srq), 0);
	ck_assert_ptr_null(to_rcq(cq)->xrc_srqs);
	/* A basic one through create_srq_ex names neither. */
	attr.srq_type = IBV_SRQT_BASIC;
	attr.comp_mask = IBV_SRQ_INIT_ATTR_PD | IBV_SRQ_INIT_ATTR_TYPE;
	srq = rocemu_create_srq_ex_op(ctx, &attr);
	ck_assert_ptr_nonnull(srq);
	ck_assert_uint_eq(((const struct rocemu_create_srq_req *)conn_last(ROCEMU_OP_CREATE_SRQ))
				  ->srq_type, IBV_SRQT_BASIC);
	ck_assert_ptr_null(to_rcq(cq)->xrc_srqs);
	ck_assert_int_eq(ibv_destroy_srq(srq), 0);
	ck_assert_int_eq(ibv_destroy_cq(cq), 0);
}
END_TEST

/* An SRQ layout the shim cannot post to is EPROTO and destroyed; a refusal is its errno. */
START_TEST(test_create_srq_answers)
{
	struct ibv_srq_init_attr attr = { .attr = { .max_wr = 5, .max_sge = 1 } };
	struct rocemu_srq_layout bad = srq_layout(6);

	answer_srq(bad, 5, 1);
	errno = 0;
	ck_assert_ptr_null(ibv_create_srq(&pd.ibpd, &attr));
	ck_assert_int_eq(errno, EPROTO);
	ck_assert_int_eq(conn_calls(ROCEMU_OP_DESTROY_SRQ), 1);
	bad = srq_layout(SRQ_WQES);
	bad.wqe_shift = 4;	/* no room for the next segment and data */
	answer_srq(bad, 5, 1);
	errno = 0;
	ck_assert_ptr_null(ibv_create_srq(&pd.ibpd, &attr));
	ck_assert_int_eq(errno, EPROTO);
	ck_assert_int_eq(conn_calls(ROCEMU_OP_DESTROY_SRQ), 2);
	conn_answer(ROCEMU_OP_CREATE_SRQ, -EINVAL, NULL, 0, 0);
	errno = 0;
	ck_assert_ptr_null(ibv_create_srq(&pd.ibpd, &attr));
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_int_eq(conn_calls(ROCEMU_OP_DESTROY_SRQ), 2);
	ck_assert_uint_eq(attr.attr.max_wr, 5);
}
END_TEST

/* mlx5_post_srq_recv: along the free list, a terminator after fewer SGEs, one doorbell a call. */
START_TEST(test_post_srq_recv)
{
	struct ibv_srq_init_attr attr = { .attr = { .max_wr = 7, .max_sge = 2 } };
	struct ibv_sge sge = { .addr = 0x1000, .length = 64, .lkey = 0x55 };
	struct ibv_recv_wr wrs[SRQ_WQES], *bad = NULL, too_many = { .num_sge = 3, .sg_list = &sge };
	struct rocemu_srq_layout layout = srq_layout(SRQ_WQES);
	const struct mlx5_wqe_data_seg *scat;
	struct rocemu_srq *srq;
	struct ibv_srq *ibsrq;
	uint32_t i;

	/* Two data segments a WQE: 16 + 2 x 16 bytes, so a 64-byte stride. */
	layout.wqe_shift = 6;
	layout.dbrec_offset = SRQ_WQES << 6;
	layout.size = layout.dbrec_offset + 64;
	answer_srq(layout, SRQ_WQES - 1, 2);
	ibsrq = ibv_create_srq(&pd.ibpd, &attr);
	ck_assert_ptr_nonnull(ibsrq);
	srq = to_rsrq(ibsrq);
	ck_assert_int_eq(rocemu_post_srq_recv_op(ibsrq, &too_many, &bad), EINVAL);
	ck_assert_ptr_eq(bad, &too_many);
	ck_assert_int_eq(recv_doorbells, 0);
	for (i = 0; i < SRQ_WQES; i++)
		wrs[i] = (struct ibv_recv_wr){ .wr_id = 100 + i, .num_sge = 1, .sg_list = &sge,
					       .next = i + 1 < SRQ_WQES ? &wrs[i + 1] : NULL };
	/* Eight asked, seven fit: head meets tail (mlx5 keeps one WQE out of the list). */
	ck_assert_int_eq(rocemu_post_srq_recv_op(ibsrq, wrs, &bad), ENOMEM);
	ck_assert_ptr_eq(bad, &wrs[SRQ_WQES - 1]);
	ck_assert_uint_eq(srq->counter, SRQ_WQES - 1);
	ck_assert_uint_eq(be32toh(*srq->db), SRQ_WQES - 1);
	ck_assert_int_eq(recv_doorbells, 1);
	scat = (const struct mlx5_wqe_data_seg *)(srq->buf + (2u << 6) + 16);
	ck_assert_uint_eq(be32toh(scat[0].byte_count), 64);
	ck_assert_uint_eq(be32toh(scat[0].lkey), 0x55);
	ck_assert_uint_eq(be64toh(scat[0].addr), 0x1000);
	ck_assert_uint_eq(be32toh(scat[1].lkey), MLX5_INVALID_LKEY);
	ck_assert_uint_eq(be32toh(scat[1].byte_count), 0);
	/* A completion frees its WQE: its wr_id back, one more may be posted. */
	ck_assert_uint_eq(rocemu_srq_complete(srq, 2), 102);
	ck_assert_int_eq(rocemu_post_srq_recv_op(ibsrq, &wrs[SRQ_WQES - 1], &bad), 0);
	ck_assert_uint_eq(srq->wrid[SRQ_WQES - 1], 100 + SRQ_WQES - 1);
	ck_assert_uint_eq(srq->head, 2);
	ck_assert_int_eq(ibv_destroy_srq(ibsrq), 0);
}
END_TEST

/* ibv_modify_srq and ibv_query_srq: the request as given, the answer as the daemon gives it. */
START_TEST(test_modify_query_srq)
{
	struct ibv_srq_init_attr attr = { .attr = { .max_wr = 5, .max_sge = 1 } };
	struct ibv_srq *srq = ibv_create_srq(&pd.ibpd, &attr);
	struct ibv_srq_attr mod = { .srq_limit = 3 }, out;
	struct rocemu_query_srq_resp resp = { .attr = { .max_wr = 7, .max_sge = 1, .srq_limit = 3 } };
	const struct rocemu_modify_srq_req *req;

	ck_assert_ptr_nonnull(srq);
	ck_assert_int_eq(ibv_modify_srq(srq, &mod, IBV_SRQ_LIMIT), 0);
	req = conn_last(ROCEMU_OP_MODIFY_SRQ);
	ck_assert_uint_eq(req->srqn, SRQN);
	ck_assert_uint_eq(req->attr_mask, IBV_SRQ_LIMIT);
	ck_assert_uint_eq(req->attr.srq_limit, 3);
	conn_answer(ROCEMU_OP_MODIFY_SRQ, -EINVAL, NULL, 0, 0);
	ck_assert_int_eq(ibv_modify_srq(srq, &mod, IBV_SRQ_MAX_WR), EINVAL);
	conn_answer(ROCEMU_OP_QUERY_SRQ, 0, &resp, sizeof(resp), 0);
	ck_assert_int_eq(ibv_query_srq(srq, &out), 0);
	ck_assert_uint_eq(((const struct rocemu_handle_req *)conn_last(ROCEMU_OP_QUERY_SRQ))->handle,
			  SRQN);
	ck_assert_uint_eq(out.max_wr, 7);
	ck_assert_uint_eq(out.srq_limit, 3);
	conn_answer(ROCEMU_OP_QUERY_SRQ, -EIO, NULL, 0, 0);
	ck_assert_int_eq(ibv_query_srq(srq, &out), EIO);
	conn_answer(ROCEMU_OP_DESTROY_SRQ, -EBUSY, NULL, 0, 0);
	ck_assert_int_eq(ibv_destroy_srq(srq), EBUSY);
	conn_answer(ROCEMU_OP_DESTROY_SRQ, 0, NULL, 0, 0);
	ck_assert_int_eq(ibv_destroy_srq(srq), 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("cq_srq");
	TCase *cq = tcase_create("cq"), *srq = tcase_create("srq");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(cq, objs_open, NULL);
	tcase_add_test(cq, test_create_cq);
	tcase_add_test(cq, test_cqe_size_env);
	tcase_add_test(cq, test_create_cq_checks);
	tcase_add_test(cq, test_create_cq_ex);
	tcase_add_test(cq, test_create_cq_bad_layouts);
	tcase_add_test(cq, test_arm);
	tcase_add_test(cq, test_resize);
	tcase_add_test(cq, test_destroy_cq_refused);
	tcase_add_test(cq, test_cq_clean);
	tcase_add_test(cq, test_cq_clean_wq);
	suite_add_tcase(s, cq);
	tcase_add_checked_fixture(srq, objs_open, NULL);
	tcase_add_test(srq, test_create_srq);
	tcase_add_test(srq, test_create_srq_ex_checks);
	tcase_add_test(srq, test_create_srq_xrc);
	tcase_add_test(srq, test_create_srq_answers);
	tcase_add_test(srq, test_post_srq_recv);
	tcase_add_test(srq, test_modify_query_srq);
	suite_add_tcase(s, srq);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
