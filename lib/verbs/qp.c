/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Queue pairs: the daemon sizes the queues (the caps it grants are
 * written back to the app) and creates SQ, RQ, doorbell record and
 * BlueFlame area in one memfd that both sides map. The daemon validates
 * every QP attribute and state transition; the shim keeps its own record
 * of what ibv_query_qp reports in init_attr.
 */
#include "lib/shim.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>

#include "rocemu/log.h"

/* The create flags a ConnectX Ethernet port takes (the daemon checks type and privilege). */
#define ROCEMU_QP_CREATE_FLAGS (IBV_QP_CREATE_BLOCK_SELF_MCAST_LB | IBV_QP_CREATE_SOURCE_QPN | \
				IBV_QP_CREATE_SCATTER_FCS | IBV_QP_CREATE_CVLAN_STRIPPING | \
				IBV_QP_CREATE_PCI_WRITE_END_PADDING)
#define QP_KNOWN_COMP_MASK ((uint32_t)IBV_QP_INIT_ATTR_SEND_OPS_FLAGS * 2 - 1)
#define QP_SUPPORTED_COMP_MASK ((uint32_t)(IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_XRCD | \
					   IBV_QP_INIT_ATTR_CREATE_FLAGS | \
					   IBV_QP_INIT_ATTR_MAX_TSO_HEADER | \
					   IBV_QP_INIT_ATTR_IND_TABLE | IBV_QP_INIT_ATTR_RX_HASH | \
					   IBV_QP_INIT_ATTR_SEND_OPS_FLAGS))

/* What libmlx4 takes (MLX4_CREATE_QP_SUP_COMP_MASK). */
#define QP_MLX4_COMP_MASK ((uint32_t)(IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_XRCD | \
				      IBV_QP_INIT_ATTR_CREATE_FLAGS | \
				      IBV_QP_INIT_ATTR_MAX_TSO_HEADER))

static const char *const qp_state_names[] = {
	[IBV_QPS_RESET] = "RESET", [IBV_QPS_INIT] = "INIT", [IBV_QPS_RTR] = "RTR",
	[IBV_QPS_RTS] = "RTS", [IBV_QPS_SQD] = "SQD", [IBV_QPS_SQE] = "SQE",
	[IBV_QPS_ERR] = "ERR",
};

static const char *qp_state_name(enum ibv_qp_state state)
{
	return (unsigned int)state <= IBV_QPS_ERR ? qp_state_names[state] : "?";
}

static bool cq_of(struct ibv_context *context, struct ibv_cq *cq)
{
	return cq && cq->context == context;
}

/* libibverbs/mlx5 checks of init_attr; returns 0 or the errno value. */
static int qp_init_attr_check(struct ibv_context *context,
			      const struct ibv_qp_init_attr_ex *attr)
{
	int err;

	if (attr->comp_mask & ~QP_KNOWN_COMP_MASK)
		return EINVAL;
	if (attr->comp_mask & ~QP_SUPPORTED_COMP_MASK)
		return EOPNOTSUPP;
	/* libmlx4's create_qp_ex: no ibv_wr_* API (nor RSS), ENOTSUP */
	if (rocemu_ctx_is_mlx4(context) && (attr->comp_mask & ~QP_MLX4_COMP_MASK))
		return EOPNOTSUPP;
	if ((attr->comp_mask & IBV_QP_INIT_ATTR_CREATE_FLAGS) &&
	    (attr->create_flags & ~ROCEMU_QP_CREATE_FLAGS))
		return EINVAL;
	err = rocemu_qp_raw_check(context, attr);
	if (err)
		return err;
	if ((attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) &&
	    (attr->send_ops_flags & ~rocemu_qp_type_send_ops(attr->qp_type)))
		return EOPNOTSUPP;
	/* ibv_cmd_create_qp_ex2: an XRC target is made in a domain, the rest on a PD. */
	if (attr->qp_type == IBV_QPT_XRC_RECV)
		return (attr->comp_mask & IBV_QP_INIT_ATTR_XRCD) && attr->xrcd &&
		       attr->xrcd->context == context ? 0 : EINVAL;
	if (!(attr->comp_mask & IBV_QP_INIT_ATTR_PD) || !attr->pd ||
	    attr->pd->context != context)
		return EINVAL;
	/* An XRC initiator (and a DCI) has a send queue only: no receive CQ or SRQ (uverbs ignores them). */
	if (attr->qp_type == IBV_QPT_XRC_SEND || attr->qp_type == ROCEMU_QPT_DCI)
		return cq_of(context, attr->send_cq) ? 0 : EINVAL;
	/* An RSS QP receives through its table's WQs: its CQs and SRQ mean nothing (uverbs). */
	if (rocemu_qp_is_rss(attr))
		return 0;
	/* A DCT receives through an SRQ (mlx5 create_dct). */
	if (attr->qp_type == ROCEMU_QPT_DCT && !attr->srq)
		return EINVAL;
	if ((attr->srq && attr->srq->context != context) || !cq_of(context, attr->send_cq) ||
	    !cq_of(context, attr->recv_cq))
		return EINVAL;
	return 0;
}

/* An XRC target or an RSS QP has no queue and no CQ: nothing of it is in the poller's QP table. */
static bool qp_has_cqs(const struct rocemu_qp *qp)
{
	return qp->type != IBV_QPT_XRC_RECV && !qp->rss;
}

/* The daemon's layout of a QP of context keeps to the ring contract and fits the memfd. */
static bool qp_layout_ok(struct ibv_context *context, const struct rocemu_qp_layout *l)
{
	uint32_t sq_shift = rocemu_sq_entry_shift(context, l);

	return l->rq_wqe_shift < 32 && l->sq_wqe_cnt <= ROCEMU_SQ_MAX_BBS &&
	       sq_shift >= ROCEMU_MLX4_SQ_MIN_SHIFT && sq_shift <= ROCEMU_MLX4_SQ_MAX_SHIFT &&
	       l->rq_wqe_cnt <= ROCEMU_RQ_MAX_WQES && l->sq_offset <= l->size &&
	       ((uint64_t)l->sq_wqe_cnt << sq_shift) <= l->size - l->sq_offset &&
	       l->rq_offset <= l->size &&
	       ((uint64_t)l->rq_wqe_cnt << l->rq_wqe_shift) <= l->size - l->rq_offset &&
	       l->dbrec_offset <= l->size && 2 * sizeof(__be32) <= l->size - l->dbrec_offset &&
	       l->bf_offset <= l->size && l->bf_size <= l->size - l->bf_offset;
}

/* The ibv_qp of qp (its number set) as libibverbs hands one out, created or opened. */
static void ibqp_fill(struct rocemu_qp *qp, struct ibv_context *context, void *qp_context,
		      enum ibv_qp_state state)
{
	struct ibv_qp *ibqp = &qp->qpx.qp_base;

	ibqp->context = context;
	ibqp->qp_context = qp_context;
	ibqp->handle = qp->qpn;
	ibqp->qp_num = qp->qpn;
	ibqp->state = state;
	pthread_mutex_init(&ibqp->mutex, NULL);
	pthread_cond_init(&ibqp->cond, NULL);
}

static void qp_destroy_in_daemon(struct rocemu_context *rctx, uint32_t qpn)
{
	struct rocemu_handle_req req = { .handle = qpn };

	rocemu_conn_call(&rctx->conn, ROCEMU_OP_DESTROY_QP, &req, NULL, NULL, 0);
}

uint32_t rocemu_qp_vendor_default(void)
{
	const char *env = getenv("MLX5_SCATTER_TO_CQE");

	/* mlx5's use_scatter_to_cqe: on unless the variable says "0". */
	return env && !strcmp(env, "0") ? 0 : ROCEMU_QP_VENDOR_SCATTER_CQE;
}

static struct ibv_qp *qp_create(struct ibv_context *context, struct ibv_qp_init_attr_ex *want,
				uint32_t vendor_flags, const struct rocemu_dc_attr *dc,
				uint16_t inl_recv_sz)
{
	struct ibv_qp_init_attr_ex a = *want, *attr = &a;	/* what the QP type keeps of it */
	struct rocemu_context *rctx = to_rctx(context);
	struct rocemu_create_qp_req req;
	struct rocemu_create_qp_resp resp;
	struct rocemu_qp *qp;
	struct ibv_qp *ibqp;
	int fd, err;

	if (dc)
		a.qp_type = dc->type;	/* laid out and checked as the DC type */
	err = qp_init_attr_check(context, attr);
	if (err) {
		errno = err;
		return NULL;
	}
	qp = calloc(1, sizeof(*qp));
	if (!qp)
		return NULL;	/* calloc set ENOMEM */
	ibqp = &qp->qpx.qp_base;
	ibqp->context = context;	/* the queues are laid out by its model */
	qp->type = attr->qp_type;	/* the queues are laid out by type */
	ibqp->qp_type = dc ? IBV_QPT_DRIVER : attr->qp_type;
	qp->rss = rocemu_qp_is_rss(attr);
	if (qp->rss) {	/* no queue: its WQs receive (mlx5: no scatter to CQE either) */
		attr->send_cq = attr->recv_cq = NULL;
		attr->srq = NULL;
		memset(&attr->cap, 0, sizeof(attr->cap));
		vendor_flags &= ~(uint32_t)ROCEMU_QP_VENDOR_SCATTER_CQE;
	} else if (attr->qp_type == IBV_QPT_XRC_RECV) {	/* the domain's: no PD, CQ or queue */
		attr->pd = NULL;
		attr->send_cq = attr->recv_cq = NULL;
		attr->srq = NULL;
		memset(&attr->cap, 0, sizeof(attr->cap));
	} else if (attr->qp_type == IBV_QPT_XRC_SEND || attr->qp_type == ROCEMU_QPT_DCI) {
		attr->recv_cq = NULL;
		attr->srq = NULL;
		attr->cap.max_recv_wr = attr->cap.max_recv_sge = 0;
	} else if (attr->qp_type == ROCEMU_QPT_DCT) {	/* no send queue */
		attr->cap.max_send_wr = attr->cap.max_send_sge = attr->cap.max_inline_data = 0;
	}
	req = (struct rocemu_create_qp_req){
		.pdn = attr->pd ? to_rpd(attr->pd)->pdn : ROCEMU_NO_HANDLE,
		.qp_type = attr->qp_type,
		.send_cqn = attr->send_cq ? to_rcq(attr->send_cq)->cqn : ROCEMU_NO_HANDLE,
		.recv_cqn = attr->recv_cq ? to_rcq(attr->recv_cq)->cqn : ROCEMU_NO_HANDLE,
		.srqn = attr->srq ? to_rsrq(attr->srq)->srqn : ROCEMU_NO_HANDLE,
		.sq_sig_all = attr->sq_sig_all ? 1 : 0,
		.cap = attr->cap,
		.user_qp = (uintptr_t)ibqp,
		.xrcd = attr->qp_type == IBV_QPT_XRC_RECV ? to_rxrcd(attr->xrcd)->handle
							  : ROCEMU_NO_HANDLE,
		.vendor_flags = vendor_flags,
		.inl_recv_sz = inl_recv_sz,
	};
	if (attr->comp_mask & IBV_QP_INIT_ATTR_CREATE_FLAGS) {
		req.create_flags = attr->create_flags;
		req.source_qpn = attr->source_qpn;
	}
	rocemu_qp_raw_req(&req, attr);
	qp->max_tso_header = req.max_tso_header;
	if (dc) {
		req.dct_access_key = dc->dct_access_key;
		req.dci_log_concurrent = dc->log_concurrent;
		req.dci_log_errored = dc->log_errored;
	}
	err = rocemu_conn_call(&rctx->conn, ROCEMU_OP_CREATE_QP, &req, &resp, &fd, 1);
	if (err) {
		free(qp);
		errno = -err;
		return NULL;
	}
	if (!qp_layout_ok(context, &resp.layout)) {
		close(fd);
		errno = EPROTO;
		goto err_daemon;
	}
	if (qp->rss) {	/* a TIR: the daemon's rings of it go unused, as mlx5 maps none */
		close(fd);
	} else {
		qp->map = rocemu_map_shared(fd, resp.layout.size);
		if (!qp->map)
			goto err_daemon;
	}
	qp->qpn = resp.layout.qpn;
	qp->layout = resp.layout;
	qp->cap = resp.cap;
	qp->sq_sig_all = req.sq_sig_all;
	if (attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) {
		qp->has_qpx = true;
		rocemu_qp_wr_ops_init(qp);
		if (qp->type == ROCEMU_QPT_DCI)
			rocemu_dci_wr_ops_init(qp);
	}
	err = rocemu_qp_queues_init(qp);
	if (err)
		goto err_unmap;
	if (qp->map && rocemu_ctx_is_mlx4(context))
		rocemu_mlx4_sq_init(qp);
	ibqp_fill(qp, context, attr->qp_context, IBV_QPS_RESET);
	/*
	 * What the caller gave, even where the type keeps none of it (an XRC
	 * target's PD and CQs), as libibverbs' set_qp records them: librdmacm
	 * takes an XRC target id's PD from its QP for the SRQ and MRs.
	 */
	ibqp->pd = want->pd;
	ibqp->send_cq = want->send_cq;
	ibqp->recv_cq = want->recv_cq;
	ibqp->srq = want->srq;
	err = rocemu_domain_res_take(&qp->domain_res, context, attr->pd, MLX5DV_RES_TYPE_QP,
				     ((size_t)qp->layout.sq_wqe_cnt << qp->sq.wqe_shift) +
				     ((size_t)qp->layout.rq_wqe_cnt << qp->layout.rq_wqe_shift));
	if (err)
		goto err_queues;
	err = qp_has_cqs(qp) ? rocemu_qp_table_insert(rctx, qp) : 0;
	if (err)
		goto err_domain;
	want->cap = resp.cap;
	rocemu_log(ROCEMU_LOG_DEBUG, "%s qp 0x%06x created (sq %u rq %u)", rctx->info.name,
		   qp->qpn, resp.cap.max_send_wr, resp.cap.max_recv_wr);
	return ibqp;

err_domain:
	rocemu_domain_res_give(&qp->domain_res);
err_queues:
	rocemu_qp_queues_free(qp);
err_unmap:
	if (qp->map)
		munmap(qp->map, resp.layout.size);
	errno = err;
err_daemon:
	err = errno;
	qp_destroy_in_daemon(rctx, resp.layout.qpn);
	free(qp);
	errno = err;
	return NULL;
}

struct ibv_qp *rocemu_qp_create(struct ibv_context *context, struct ibv_qp_init_attr_ex *want,
				uint32_t vendor_flags)
{
	return qp_create(context, want, vendor_flags, NULL, 0);
}

struct ibv_qp *rocemu_qp_create_inl_recv(struct ibv_context *context,
					 struct ibv_qp_init_attr_ex *want, uint16_t inl_recv_sz)
{
	return qp_create(context, want, 0, NULL, inl_recv_sz);
}

struct ibv_qp *rocemu_create_qp_dc(struct ibv_context *context, struct ibv_qp_init_attr_ex *attr,
				   uint32_t vendor_flags, const struct rocemu_dc_attr *dc)
{
	return qp_create(context, attr, vendor_flags, dc, 0);
}

/* The vendor flags a QP of context gets by default: mlx5's scatter to CQE; libmlx4 has none. */
static uint32_t qp_vendor_default(struct ibv_context *context)
{
	return rocemu_ctx_is_mlx4(context) ? 0 : rocemu_qp_vendor_default();
}

struct ibv_qp *rocemu_create_qp_ex_op(struct ibv_context *context,
				      struct ibv_qp_init_attr_ex *attr)
{
	return rocemu_qp_create(context, attr, qp_vendor_default(context));
}

struct ibv_qp *ibv_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *qp_init_attr)
{
	struct ibv_qp_init_attr_ex attr_ex;
	struct ibv_qp *qp;

	if (!rocemu_pd_is_ours(pd))
		return REAL(ibv_create_qp)(pd, qp_init_attr);
	memset(&attr_ex, 0, sizeof(attr_ex));
	memcpy(&attr_ex, qp_init_attr, sizeof(*qp_init_attr));
	attr_ex.comp_mask = IBV_QP_INIT_ATTR_PD;
	attr_ex.pd = pd;
	qp = rocemu_qp_create(pd->context, &attr_ex, qp_vendor_default(pd->context));
	if (qp)
		qp_init_attr->cap = attr_ex.cap;
	return qp;
}

struct ibv_qp_ex *ibv_qp_to_qp_ex(struct ibv_qp *ibqp)
{
	struct rocemu_qp *qp;

	if (!rocemu_ctx_is_ours(ibqp->context))
		return REAL(ibv_qp_to_qp_ex)(ibqp);
	qp = to_rqp(ibqp);
	return qp->has_qpx ? &qp->qpx : NULL;
}

int ibv_query_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr, int attr_mask,
		 struct ibv_qp_init_attr *init_attr)
{
	struct rocemu_query_qp_req req;
	struct rocemu_query_qp_resp resp;
	struct rocemu_qp *qp;
	int err;

	if (!rocemu_ctx_is_ours(ibqp->context))
		return REAL(ibv_query_qp)(ibqp, attr, attr_mask, init_attr);
	qp = to_rqp(ibqp);
	req = (struct rocemu_query_qp_req){ .qpn = qp->qpn, .attr_mask = (uint32_t)attr_mask };
	err = rocemu_conn_call(&to_rctx(ibqp->context)->conn, ROCEMU_OP_QUERY_QP, &req, &resp,
			       NULL, 0);
	if (err)
		return rocemu_errno_value(err);
	*attr = resp.attr;
	attr->cap = resp.cap;
	memset(init_attr, 0, sizeof(*init_attr));
	init_attr->qp_context = ibqp->qp_context;
	init_attr->send_cq = ibqp->send_cq;
	init_attr->recv_cq = ibqp->recv_cq;
	init_attr->srq = ibqp->srq;
	init_attr->cap = qp->cap;
	init_attr->qp_type = ibqp->qp_type;
	init_attr->sq_sig_all = qp->sq_sig_all;
	/* The daemon may have moved the QP (to ERR) on its own. */
	ibqp->state = resp.attr.qp_state;
	return 0;
}

/*
 * The QP's CQEs still unpolled go; SRQ WQEs they completed are free again.
 * An XRC target completes nothing of its own (its SRQ's CQEs name the SRQ),
 * whatever CQs its creator named.
 */
static void qp_clean_cqs(struct rocemu_qp *qp)
{
	struct ibv_qp *ibqp = &qp->qpx.qp_base;

	if (!qp_has_cqs(qp))
		return;
	if (ibqp->recv_cq)
		rocemu_cq_clean(to_rcq(ibqp->recv_cq), qp->qpn,
				ibqp->srq ? to_rsrq(ibqp->srq) : NULL);
	if (ibqp->send_cq && ibqp->send_cq != ibqp->recv_cq)
		rocemu_cq_clean(to_rcq(ibqp->send_cq), qp->qpn, NULL);
}

/* The daemon forgot the QP's queues at RESET: both start from 0 again (mlx5_modify_qp). */
static void qp_reset(struct rocemu_qp *qp)
{
	qp_clean_cqs(qp);
	if (!qp->map)	/* an XRC target opened by number has no rings here */
		return;
	rocemu_qp_queues_reset(qp);
	/* libmlx4 sets the owner bits again before the next INIT */
	if (rocemu_ctx_is_mlx4(qp->qpx.qp_base.context))
		rocemu_mlx4_sq_init(qp);
}

int ibv_modify_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr, int attr_mask)
{
	struct rocemu_modify_qp_req req;
	int err;

	if (!rocemu_ctx_is_ours(ibqp->context))
		return REAL(ibv_modify_qp)(ibqp, attr, attr_mask);
	/* libmlx5's mlx5_modify_qp: an RSS QP (a TIR) has no state to move */
	if (to_rqp(ibqp)->rss)
		return EOPNOTSUPP;
	memset(&req, 0, sizeof(req));
	req.qpn = to_rqp(ibqp)->qpn;
	req.attr_mask = (uint32_t)attr_mask;
	req.attr = *attr;
	err = rocemu_conn_call(&to_rctx(ibqp->context)->conn, ROCEMU_OP_MODIFY_QP, &req, NULL,
			       NULL, 0);
	if (err)
		return rocemu_errno_value(err);
	if (attr_mask & IBV_QP_STATE) {
		rocemu_log(ROCEMU_LOG_DEBUG, "%s qp 0x%06x %s->%s",
			   to_rctx(ibqp->context)->info.name, ibqp->qp_num,
			   qp_state_name(ibqp->state), qp_state_name(attr->qp_state));
		ibqp->state = attr->qp_state;
		if (attr_mask & IBV_QP_PORT)
			rocemu_qp_raw_port_set(to_rqp(ibqp));
		if (attr->qp_state == IBV_QPS_RESET)
			qp_reset(to_rqp(ibqp));
		rocemu_qp_queues_state(to_rqp(ibqp), attr->qp_state);
	}
	return 0;
}

int ibv_destroy_qp(struct ibv_qp *ibqp)
{
	struct rocemu_handle_req req;
	struct rocemu_qp *qp;
	int err;

	if (!rocemu_ctx_is_ours(ibqp->context))
		return REAL(ibv_destroy_qp)(ibqp);
	qp = to_rqp(ibqp);
	req = (struct rocemu_handle_req){ .handle = qp->qpn };
	err = rocemu_conn_call(&to_rctx(ibqp->context)->conn, ROCEMU_OP_DESTROY_QP, &req, NULL,
			       NULL, 0);
	if (err)
		return rocemu_errno_value(err);
	/* mlx5_destroy_qp: an SRQ must get back the WQEs of CQEs nobody will poll now. */
	if (ibqp->srq)
		qp_clean_cqs(qp);
	if (qp_has_cqs(qp))
		rocemu_qp_table_remove(to_rctx(ibqp->context), qp);
	/* Every QP this process created has queue state, an RSS QP's too; one opened by number has none. */
	if (qp->map || qp->rss)
		rocemu_qp_queues_free(qp);
	if (qp->map)
		munmap(qp->map, qp->layout.size);
	rocemu_domain_res_give(&qp->domain_res);
	pthread_cond_destroy(&ibqp->cond);
	pthread_mutex_destroy(&ibqp->mutex);
	free(qp->umr);
	free(qp);
	return 0;
}

/*
 * ibv_open_qp: another reference to an XRC target of the domain, by
 * number (mlx5_open_qp, ibv_cmd_open_qp). It has no rings here; modify,
 * query and destroy go to the daemon, destroy dropping this reference.
 */
struct ibv_qp *rocemu_open_qp_op(struct ibv_context *context, struct ibv_qp_open_attr *attr)
{
	struct rocemu_open_qp_req req;
	struct rocemu_qp *qp;
	struct ibv_qp *ibqp;
	int err;

	if (attr->comp_mask >= IBV_QP_OPEN_ATTR_RESERVED) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (!(attr->comp_mask & IBV_QP_OPEN_ATTR_XRCD) || !(attr->comp_mask & IBV_QP_OPEN_ATTR_NUM) ||
	    !(attr->comp_mask & IBV_QP_OPEN_ATTR_TYPE) || !attr->xrcd ||
	    attr->xrcd->context != context) {
		errno = EINVAL;
		return NULL;
	}
	qp = calloc(1, sizeof(*qp));
	if (!qp)
		return NULL;	/* calloc set ENOMEM */
	ibqp = &qp->qpx.qp_base;
	req = (struct rocemu_open_qp_req){
		.xrcd = to_rxrcd(attr->xrcd)->handle,
		.qpn = attr->qp_num,
		.qp_type = attr->qp_type,
		.user_qp = (uintptr_t)ibqp,
	};
	err = rocemu_conn_call(&to_rctx(context)->conn, ROCEMU_OP_OPEN_QP, &req, NULL, NULL, 0);
	if (err) {
		free(qp);
		errno = -err;
		return NULL;
	}
	qp->qpn = attr->qp_num;
	ibqp->qp_type = attr->qp_type;
	qp->type = attr->qp_type;
	ibqp_fill(qp, context, attr->qp_context, IBV_QPS_UNKNOWN);
	rocemu_log(ROCEMU_LOG_DEBUG, "%s qp 0x%06x opened", to_rctx(context)->info.name, qp->qpn);
	return ibqp;
}
