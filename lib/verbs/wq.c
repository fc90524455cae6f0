/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Receive WQs and RSS indirection tables, as rdma-core's mlx5 provider
 * keeps them (mlx5_create_wq, mlx5_post_wq_recv, mlx5_modify_wq,
 * mlx5_create_rwq_ind_table): the daemon sizes the WQ's ring (mlx5's RQ
 * format) in a memfd both sides map; the shim posts into it as into a
 * QP's RQ. A table is the daemon's handle, which the create of an RSS QP
 * names (ibv_rwq_ind_table.ind_tbl_handle).
 */
#include "lib/shim.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "rocemu/log.h"

#define WQ_INIT_ATTRS (IBV_WQ_INIT_ATTR_FLAGS)

/* The daemon's answer keeps to the ring contract and fits the memfd. */
static bool wq_layout_ok(const struct rocemu_create_wq_resp *r)
{
	return r->wqe_cnt && !(r->wqe_cnt & (r->wqe_cnt - 1)) && r->wqe_cnt <= ROCEMU_RQ_MAX_WQES &&
	       r->wqe_shift >= 4 && (1u << r->wqe_shift) <= ROCEMU_RQ_MAX_STRIDE &&
	       ((uint64_t)r->wqe_cnt << r->wqe_shift) <= r->size && r->dbrec_offset <= r->size &&
	       sizeof(__be32) <= r->size - r->dbrec_offset &&
	       r->max_sge <= (1u << r->wqe_shift) / sizeof(struct mlx5_wqe_data_seg);
}

static int post_wq_recv(struct ibv_wq *ibwq, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr)
{
	struct rocemu_wq *wq = to_rwq(ibwq);

	return rocemu_rq_post(&wq->rq, wq->dbrec, ibwq->context, wr, bad_wr);
}

/* Map the ring the daemon made and set wq's RQ on it: 0 or an errno. */
static int wq_map(struct rocemu_wq *wq, const struct rocemu_create_wq_resp *resp, int fd)
{
	if (!wq_layout_ok(resp)) {
		close(fd);
		return EPROTO;
	}
	wq->map = rocemu_map_shared(fd, resp->size);
	if (!wq->map)
		return errno;
	wq->rq.wrid = calloc(resp->wqe_cnt, sizeof(*wq->rq.wrid));
	if (!wq->rq.wrid) {
		munmap(wq->map, resp->size);
		return ENOMEM;
	}
	wq->map_size = resp->size;
	wq->dbrec = (__be32 *)((char *)wq->map + resp->dbrec_offset);
	wq->rq.buf = wq->map;
	wq->rq.wqe_cnt = resp->wqe_cnt;
	wq->rq.wqe_shift = resp->wqe_shift;
	wq->rq.max_sge = resp->max_sge;
	/* A WQ takes posts in any state, as mlx5_post_wq_recv. */
	wq->rq.state_max_sge = (int32_t)resp->max_sge;
	pthread_spin_init(&wq->rq.lock, PTHREAD_PROCESS_PRIVATE);
	return 0;
}

/* A CQE of the WQ names it by number: its CQ finds it so (poll.c). */
static void wq_cq_attach(struct rocemu_wq *wq)
{
	struct rocemu_cq *cq = to_rcq(wq->ibwq.cq);

	pthread_spin_lock(&cq->lock);
	wq->cq_next = cq->wqs;
	cq->wqs = wq;
	pthread_spin_unlock(&cq->lock);
}

static void wq_cq_detach(struct rocemu_wq *wq)
{
	struct rocemu_cq *cq = to_rcq(wq->ibwq.cq);
	struct rocemu_wq **p;

	pthread_spin_lock(&cq->lock);
	for (p = &cq->wqs; *p; p = &(*p)->cq_next)
		if (*p == wq) {
			*p = wq->cq_next;
			break;
		}
	pthread_spin_unlock(&cq->lock);
}

struct ibv_wq *rocemu_create_wq_op(struct ibv_context *context, struct ibv_wq_init_attr *attr)
{
	struct rocemu_create_wq_req req = {
		.wq_type = attr->wq_type, .max_wr = attr->max_wr, .max_sge = attr->max_sge,
		.create_flags = attr->comp_mask & IBV_WQ_INIT_ATTR_FLAGS ? attr->create_flags : 0,
	};
	struct rocemu_create_wq_resp resp;
	struct rocemu_wq *wq;
	int fd, err;

	if ((attr->comp_mask & ~(uint32_t)WQ_INIT_ATTRS) || !attr->pd || !attr->cq ||
	    attr->pd->context != context || attr->cq->context != context) {
		errno = EINVAL;
		return NULL;
	}
	wq = calloc(1, sizeof(*wq));
	if (!wq) {
		errno = ENOMEM;
		return NULL;
	}
	req.pdn = to_rpd(attr->pd)->pdn;
	req.cqn = to_rcq(attr->cq)->cqn;
	req.user_wq = (uintptr_t)&wq->ibwq;
	err = rocemu_conn_call(&to_rctx(context)->conn, ROCEMU_OP_CREATE_WQ, &req, &resp, &fd, 1);
	if (err) {
		free(wq);
		errno = -err;
		return NULL;
	}
	err = wq_map(wq, &resp, fd);
	if (err) {
		struct rocemu_handle_req destroy = { .handle = resp.wqn };

		rocemu_conn_call(&to_rctx(context)->conn, ROCEMU_OP_DESTROY_WQ, &destroy, NULL, NULL, 0);
		free(wq);
		errno = err;
		return NULL;
	}
	wq->ibwq = (struct ibv_wq){
		.context = context, .wq_context = attr->wq_context, .pd = attr->pd, .cq = attr->cq,
		.wq_num = resp.wqn, .handle = resp.wqn, .state = IBV_WQS_RESET,
		.wq_type = attr->wq_type, .post_recv = post_wq_recv,
	};
	wq_cq_attach(wq);
	attr->max_wr = resp.max_wr;
	attr->max_sge = resp.max_sge;
	rocemu_log(ROCEMU_LOG_DEBUG, "%s wq 0x%06x created (%u x %u)", to_rctx(context)->info.name,
		   resp.wqn, resp.max_wr, resp.max_sge);
	return &wq->ibwq;
}

int rocemu_modify_wq_op(struct ibv_wq *ibwq, struct ibv_wq_attr *attr)
{
	struct rocemu_wq *wq = to_rwq(ibwq);
	const struct rocemu_modify_wq_req req = {
		.wqn = ibwq->wq_num, .attr_mask = attr->attr_mask, .wq_state = attr->wq_state,
		.curr_wq_state = attr->curr_wq_state, .flags = attr->flags,
		.flags_mask = attr->flags_mask,
	};
	int err = -rocemu_conn_call(&to_rctx(ibwq->context)->conn, ROCEMU_OP_MODIFY_WQ, &req, NULL,
				    NULL, 0);

	if (err || !(attr->attr_mask & IBV_WQ_ATTR_STATE))
		return err;
	/* To RESET the ring is empty again, as mlx5_init_rwq_indices leaves it, its CQEs gone. */
	if (attr->wq_state == IBV_WQS_RESET) {
		rocemu_cq_clean_wq(to_rcq(ibwq->cq), ibwq->wq_num);
		pthread_spin_lock(&wq->rq.lock);
		wq->rq.head = 0;
		__atomic_store_n(&wq->rq.tail, 0, __ATOMIC_RELEASE);
		*wq->dbrec = 0;
		pthread_spin_unlock(&wq->rq.lock);
	}
	ibwq->state = attr->wq_state;
	return 0;
}

int rocemu_destroy_wq_op(struct ibv_wq *ibwq)
{
	struct rocemu_wq *wq = to_rwq(ibwq);
	struct rocemu_handle_req req = { .handle = ibwq->wq_num };
	int err = rocemu_conn_call(&to_rctx(ibwq->context)->conn, ROCEMU_OP_DESTROY_WQ, &req, NULL,
				   NULL, 0);

	if (err)
		return -err;
	/* Its CQEs still in the CQ go, as mlx5_destroy_wq cleans them. */
	wq_cq_detach(wq);
	rocemu_cq_clean_wq(to_rcq(ibwq->cq), ibwq->wq_num);
	munmap(wq->map, wq->map_size);
	pthread_spin_destroy(&wq->rq.lock);
	free(wq->rq.wrid);
	free(wq);
	return 0;
}

struct ibv_rwq_ind_table *rocemu_create_rwq_ind_table_op(struct ibv_context *context,
							 struct ibv_rwq_ind_table_init_attr *attr)
{
	struct rocemu_create_rwq_ind_table_req *req;
	struct rocemu_create_rwq_ind_table_resp resp;
	struct ibv_rwq_ind_table *table;
	uint32_t i;
	int err;

	if (attr->comp_mask || attr->log_ind_tbl_size > ROCEMU_RWQ_IND_TABLE_MAX_LOG ||
	    !attr->ind_tbl) {
		errno = EINVAL;
		return NULL;
	}
	req = calloc(1, sizeof(*req));
	table = calloc(1, sizeof(*table));
	if (!req || !table) {
		free(req);
		free(table);
		errno = ENOMEM;
		return NULL;
	}
	req->log_size = attr->log_ind_tbl_size;
	for (i = 0; i < 1u << attr->log_ind_tbl_size; i++)
		req->wqns[i] = attr->ind_tbl[i]->wq_num;
	err = rocemu_conn_call(&to_rctx(context)->conn, ROCEMU_OP_CREATE_RWQ_IND_TABLE, req, &resp,
			       NULL, 0);
	free(req);
	if (err) {
		free(table);
		errno = -err;
		return NULL;
	}
	*table = (struct ibv_rwq_ind_table){
		.context = context, .ind_tbl_handle = (int)resp.handle, .ind_tbl_num = (int)resp.handle,
	};
	return table;
}

int rocemu_destroy_rwq_ind_table_op(struct ibv_rwq_ind_table *table)
{
	struct rocemu_handle_req req = { .handle = (uint32_t)table->ind_tbl_handle };
	int err = rocemu_conn_call(&to_rctx(table->context)->conn, ROCEMU_OP_DESTROY_RWQ_IND_TABLE,
				   &req, NULL, NULL, 0);

	if (err)
		return -err;
	free(table);
	return 0;
}
