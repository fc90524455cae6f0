/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Shared receive queues, as rdma-core's mlx5 provider keeps them
 * (providers/mlx5/srq.c): the daemon sizes the ring (ring.h) in a memfd
 * both sides map; the shim links the free list at creation, posts along
 * it and frees each WQE when its CQE is polled. The daemon takes WQEs
 * along the same links and fires the limit event.
 */
#include "lib/shim.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>

#include "rocemu/log.h"

static struct mlx5_wqe_srq_next_seg *srq_wqe(struct rocemu_srq *srq, uint32_t idx)
{
	return (struct mlx5_wqe_srq_next_seg *)(srq->buf + ((size_t)idx << srq->layout.wqe_shift));
}

/* The daemon's layout keeps to the ring contract and fits the memfd. */
static bool srq_layout_ok(const struct rocemu_srq_layout *l)
{
	return l->wqe_cnt && !(l->wqe_cnt & (l->wqe_cnt - 1)) && l->wqe_cnt <= ROCEMU_SRQ_MAX_WQES &&
	       l->wqe_shift >= 5 && (1u << l->wqe_shift) <= ROCEMU_RQ_MAX_STRIDE &&
	       l->buf_offset <= l->size &&
	       ((uint64_t)l->wqe_cnt << l->wqe_shift) <= l->size - l->buf_offset &&
	       l->dbrec_offset <= l->size && sizeof(__be32) <= l->size - l->dbrec_offset;
}

static void srq_destroy_in_daemon(struct rocemu_context *rctx, uint32_t srqn)
{
	struct rocemu_handle_req req = { .handle = srqn };

	rocemu_conn_call(&rctx->conn, ROCEMU_OP_DESTROY_SRQ, &req, NULL, NULL, 0);
}

/* Every WQE free and linked to the next, head 0, tail the last (mlx5_alloc_srq_buf). */
static void srq_links_init(struct rocemu_srq *srq)
{
	uint32_t i;

	for (i = 0; i < srq->layout.wqe_cnt; i++)
		srq_wqe(srq, i)->next_wqe_index = htobe16((uint16_t)((i + 1) &
								    (srq->layout.wqe_cnt - 1)));
	srq->head = 0;
	srq->tail = srq->layout.wqe_cnt - 1;
}

/* An XRC SRQ's receive CQEs name it, not a QP of this process: its CQ finds it by number. */
static void srq_xrc_attach(struct rocemu_srq *srq, struct rocemu_cq *cq)
{
	pthread_spin_lock(&cq->lock);
	srq->xrc_cq = cq;
	srq->xrc_next = cq->xrc_srqs;
	cq->xrc_srqs = srq;
	pthread_spin_unlock(&cq->lock);
}

static void srq_xrc_detach(struct rocemu_srq *srq)
{
	struct rocemu_cq *cq = srq->xrc_cq;
	struct rocemu_srq **p;

	pthread_spin_lock(&cq->lock);
	for (p = &cq->xrc_srqs; *p; p = &(*p)->xrc_next)
		if (*p == srq) {
			*p = srq->xrc_next;
			break;
		}
	pthread_spin_unlock(&cq->lock);
}

/* An SRQ on pd; xrc (NULL for a basic one) says its domain and CQ. */
static struct ibv_srq *srq_create(struct ibv_pd *pd, struct ibv_srq_init_attr *attr,
				  const struct ibv_srq_init_attr_ex *xrc)
{
	struct rocemu_context *rctx = to_rctx(pd->context);
	struct rocemu_create_srq_req req = {
		.pdn = to_rpd(pd)->pdn,
		.attr = attr->attr,
		.srq_type = xrc ? IBV_SRQT_XRC : IBV_SRQT_BASIC,
		.xrcd = xrc ? to_rxrcd(xrc->xrcd)->handle : 0,
		.cqn = xrc ? to_rcq(xrc->cq)->cqn : 0,
	};
	struct rocemu_create_srq_resp resp;
	struct rocemu_srq *srq;
	int fd, err;

	srq = calloc(1, sizeof(*srq));
	if (!srq) {
		errno = ENOMEM;
		return NULL;
	}
	req.user_srq = (uintptr_t)&srq->ibsrq;
	err = rocemu_conn_call(&rctx->conn, ROCEMU_OP_CREATE_SRQ, &req, &resp, &fd, 1);
	if (err) {
		free(srq);
		errno = -err;
		return NULL;
	}
	if (!srq_layout_ok(&resp.layout)) {
		close(fd);
		errno = EPROTO;
		goto err_daemon;
	}
	srq->map = rocemu_map_shared(fd, resp.layout.size);
	if (!srq->map)
		goto err_daemon;
	srq->wrid = calloc(resp.layout.wqe_cnt, sizeof(*srq->wrid));
	err = srq->wrid ? rocemu_domain_res_take(&srq->domain_res, pd->context, pd, MLX5DV_RES_TYPE_SRQ,
						 (size_t)resp.layout.wqe_cnt << resp.layout.wqe_shift)
			: ENOMEM;
	if (err) {
		free(srq->wrid);
		munmap(srq->map, resp.layout.size);
		errno = err;
		goto err_daemon;
	}
	srq->srqn = resp.layout.srqn;
	srq->layout = resp.layout;
	srq->buf = (char *)srq->map + resp.layout.buf_offset;
	srq->db = (__be32 *)((char *)srq->map + resp.layout.dbrec_offset);
	srq->max_gs = resp.attr.max_sge;
	srq_links_init(srq);
	pthread_spin_init(&srq->lock, PTHREAD_PROCESS_PRIVATE);
	srq->ibsrq.context = pd->context;
	srq->ibsrq.srq_context = attr->srq_context;
	srq->ibsrq.pd = pd;
	srq->ibsrq.handle = srq->srqn;
	srq->ibsrq.events_completed = 0;

	pthread_mutex_init(&srq->ibsrq.mutex, NULL);
	pthread_cond_init(&srq->ibsrq.cond, NULL);
	if (xrc)
		srq_xrc_attach(srq, to_rcq(xrc->cq));
	attr->attr.max_wr = resp.attr.max_wr;
	attr->attr.max_sge = resp.attr.max_sge;
	rocemu_log(ROCEMU_LOG_DEBUG, "%s srq 0x%06x created (%u x %u)", rctx->info.name,
		   srq->srqn, resp.attr.max_wr, resp.attr.max_sge);
	return &srq->ibsrq;

err_daemon:
	err = errno;
	srq_destroy_in_daemon(rctx, resp.layout.srqn);
	free(srq);
	errno = err;
	return NULL;
}

struct ibv_srq *ibv_create_srq(struct ibv_pd *pd, struct ibv_srq_init_attr *srq_init_attr)
{
	if (!rocemu_pd_is_ours(pd))
		return REAL(ibv_create_srq)(pd, srq_init_attr);
	return srq_create(pd, srq_init_attr, NULL);
}

/* mlx5_create_srq_ex: a basic SRQ as ibv_create_srq, an XRC one with its domain and CQ; no tag matching. */
struct ibv_srq *rocemu_create_srq_ex_op(struct ibv_context *context,
					struct ibv_srq_init_attr_ex *attr)
{
	struct ibv_srq_init_attr basic;
	struct ibv_srq *srq;
	bool xrc;

	if (attr->comp_mask & ~((uint32_t)IBV_SRQ_INIT_ATTR_RESERVED - 1)) {
		errno = EINVAL;
		return NULL;
	}
	xrc = (attr->comp_mask & IBV_SRQ_INIT_ATTR_TYPE) && attr->srq_type == IBV_SRQT_XRC;
	if ((attr->comp_mask & IBV_SRQ_INIT_ATTR_TYPE) && attr->srq_type != IBV_SRQT_BASIC && !xrc) {
		errno = attr->srq_type == IBV_SRQT_TM ? EOPNOTSUPP : EINVAL;
		return NULL;
	}
	if (!(attr->comp_mask & IBV_SRQ_INIT_ATTR_PD) || !attr->pd || attr->pd->context != context) {
		errno = EINVAL;
		return NULL;
	}
	/* ibv_cmd_create_srq_ex: an XRC SRQ names its domain and CQ. */
	if (xrc && (!(attr->comp_mask & IBV_SRQ_INIT_ATTR_XRCD) || !attr->xrcd ||
		    attr->xrcd->context != context || !(attr->comp_mask & IBV_SRQ_INIT_ATTR_CQ) ||
		    !attr->cq || attr->cq->context != context)) {
		errno = EINVAL;
		return NULL;
	}
	basic = (struct ibv_srq_init_attr){ .srq_context = attr->srq_context, .attr = attr->attr };
	srq = srq_create(attr->pd, &basic, xrc ? attr : NULL);
	if (srq)
		attr->attr = basic.attr;
	return srq;
}

int rocemu_get_srq_num_op(struct ibv_srq *srq, uint32_t *srq_num)
{
	*srq_num = to_rsrq(srq)->srqn;
	return 0;
}

int ibv_modify_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *srq_attr, int srq_attr_mask)
{
	struct rocemu_modify_srq_req req;

	if (!rocemu_ctx_is_ours(ibsrq->context))
		return REAL(ibv_modify_srq)(ibsrq, srq_attr, srq_attr_mask);
	memset(&req, 0, sizeof(req));
	req.srqn = to_rsrq(ibsrq)->srqn;
	req.attr_mask = (uint32_t)srq_attr_mask;
	req.attr = *srq_attr;
	return rocemu_errno_value(rocemu_conn_call(&to_rctx(ibsrq->context)->conn,
						   ROCEMU_OP_MODIFY_SRQ, &req, NULL, NULL, 0));
}

int ibv_query_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *srq_attr)
{
	struct rocemu_handle_req req;
	struct rocemu_query_srq_resp resp;
	int err;

	if (!rocemu_ctx_is_ours(ibsrq->context))
		return REAL(ibv_query_srq)(ibsrq, srq_attr);
	req = (struct rocemu_handle_req){ .handle = to_rsrq(ibsrq)->srqn };
	err = rocemu_conn_call(&to_rctx(ibsrq->context)->conn, ROCEMU_OP_QUERY_SRQ, &req, &resp,
			       NULL, 0);
	if (err)
		return rocemu_errno_value(err);
	*srq_attr = resp.attr;
	return 0;
}

int ibv_destroy_srq(struct ibv_srq *ibsrq)
{
	struct rocemu_handle_req req;
	struct rocemu_srq *srq;
	int err;

	if (!rocemu_ctx_is_ours(ibsrq->context))
		return REAL(ibv_destroy_srq)(ibsrq);
	srq = to_rsrq(ibsrq);
	req = (struct rocemu_handle_req){ .handle = srq->srqn };
	err = rocemu_conn_call(&to_rctx(ibsrq->context)->conn, ROCEMU_OP_DESTROY_SRQ, &req, NULL,
			       NULL, 0);
	if (err)
		return rocemu_errno_value(err);
	if (srq->xrc_cq)
		srq_xrc_detach(srq);
	munmap(srq->map, srq->layout.size);
	rocemu_domain_res_give(&srq->domain_res);
	free(srq->wrid);
	pthread_spin_destroy(&srq->lock);
	pthread_cond_destroy(&ibsrq->cond);
	pthread_mutex_destroy(&ibsrq->mutex);
	free(srq);
	return 0;
}

/* A ConnectX-3's SRQ WQE has the same bytes: its link at byte 2, the same invalid lkey. */
_Static_assert(offsetof(struct mlx4_wqe_srq_next_seg, next_wqe_index) ==
		       offsetof(struct mlx5_wqe_srq_next_seg, next_wqe_index) &&
	       sizeof(struct mlx4_wqe_srq_next_seg) == sizeof(struct mlx5_wqe_srq_next_seg) &&
	       sizeof(struct mlx4_wqe_data_seg) == sizeof(struct mlx5_wqe_data_seg) &&
	       (unsigned int)MLX4_INVALID_LKEY == (unsigned int)MLX5_INVALID_LKEY,
	       "mlx4 and mlx5 SRQ WQEs differ");

/* mlx5_post_srq_recv and mlx4_post_srq_recv: fill head, follow its link; one doorbell per call. */
int rocemu_srq_post(struct rocemu_srq *srq, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr,
		    int err_sge, int err_full)
{
	struct mlx5_wqe_srq_next_seg *next;
	struct mlx5_wqe_data_seg *scat;
	uint32_t nreq = 0;
	int i, err = 0;

	pthread_spin_lock(&srq->lock);
	for (; wr; wr = wr->next, nreq++) {
		if (__builtin_expect((unsigned int)wr->num_sge > srq->max_gs, 0)) {
			err = err_sge;
			*bad_wr = wr;
			break;
		}
		if (__builtin_expect(srq->head == srq->tail, 0)) {	/* full */
			err = err_full;
			*bad_wr = wr;
			break;
		}
		srq->wrid[srq->head] = wr->wr_id;
		next = srq_wqe(srq, srq->head);
		srq->head = be16toh(next->next_wqe_index) & (srq->layout.wqe_cnt - 1);
		scat = (struct mlx5_wqe_data_seg *)(next + 1);
		for (i = 0; i < wr->num_sge; i++) {
			scat[i].byte_count = htobe32(wr->sg_list[i].length);
			scat[i].lkey = htobe32(wr->sg_list[i].lkey);
			scat[i].addr = htobe64(wr->sg_list[i].addr);
		}
		if ((uint32_t)i < srq->max_gs) {
			scat[i].byte_count = 0;
			scat[i].lkey = htobe32(MLX5_INVALID_LKEY);
			scat[i].addr = 0;
		}
	}
	if (nreq) {
		srq->counter += nreq;
		/* Release: a daemon that reads the new counter reads whole WQEs. */
		__atomic_store_n(srq->db, rocemu_wq_dbrec_word(srq->counter), __ATOMIC_RELEASE);
		rocemu_ctx_recv_doorbell(to_rctx(srq->ibsrq.context));
	}
	pthread_spin_unlock(&srq->lock);
	return err;
}

int rocemu_post_srq_recv_op(struct ibv_srq *ibsrq, struct ibv_recv_wr *wr,
			    struct ibv_recv_wr **bad_wr)
{
	return rocemu_srq_post(to_rsrq(ibsrq), wr, bad_wr, EINVAL, ENOMEM);
}

uint64_t rocemu_srq_complete(struct rocemu_srq *srq, uint16_t wqe_counter)
{
	uint32_t idx = wqe_counter & (srq->layout.wqe_cnt - 1);
	uint64_t wr_id;

	pthread_spin_lock(&srq->lock);
	wr_id = srq->wrid[idx];
	srq_wqe(srq, srq->tail)->next_wqe_index = htobe16((uint16_t)idx);
	srq->tail = idx;
	pthread_spin_unlock(&srq->lock);
	return wr_id;
}
