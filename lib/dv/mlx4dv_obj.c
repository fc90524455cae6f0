/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * mlx4dv_init_obj on an emulated ConnectX-3: the real rings, as libmlx4's
 * mlx4dv_get_qp/cq/srq/rwq give them. A QP's SQ and RQ lie in its memfd
 * mapping (buf covers both, offsets relative to it), its send doorbell in
 * the UAR page there, which cmd_fd also maps at uar_mmap_offset; the
 * daemon is told of each QP and CQ handed out, and a CQ handed out is the
 * program's (libmlx4's DV-owned CQ: the shim no longer cleans it).
 */
#include "lib/shim.h"
#include "lib/dv/dv.h"

static int dv_get_qp(struct ibv_qp *qp_in, struct mlx4dv_qp *out)
{
	struct rocemu_qp *qp = to_rqp(qp_in);
	const struct rocemu_qp_layout *l = &qp->layout;
	uint64_t sq_end = l->sq_offset + ((uint64_t)l->sq_wqe_cnt << l->sq_wqe_shift);
	uint64_t rq_end = l->rq_offset + ((uint64_t)l->rq_wqe_cnt << l->rq_wqe_shift);
	uint64_t start = l->sq_offset < l->rq_offset ? l->sq_offset : l->rq_offset;
	uint64_t mask_out = 0;

	out->buf.buf = (char *)qp->map + start;
	out->buf.length = (size_t)((sq_end > rq_end ? sq_end : rq_end) - start);
	out->rdb = (__be32 *)((char *)qp->map + l->dbrec_offset);
	out->sdb = (uint32_t *)((char *)qp->map + l->bf_offset + MLX4_SEND_DOORBELL);
	out->doorbell_qpn = htobe32(qp->qpn << 8);
	out->sq.wqe_cnt = l->sq_wqe_cnt;
	out->sq.wqe_shift = (int)l->sq_wqe_shift;
	out->sq.offset = (int)(l->sq_offset - start);
	out->rq.wqe_cnt = l->rq_wqe_cnt;
	out->rq.wqe_shift = (int)l->rq_wqe_shift;
	out->rq.offset = (int)(l->rq_offset - start);
	if (out->comp_mask & MLX4DV_QP_MASK_UAR_MMAP_OFFSET) {
		/* Where mmap of cmd_fd finds this QP's UAR page, BlueFlame one page on (uar_map.c). */
		out->uar_mmap_offset = rocemu_mlx4_uar_offset(qp->qpn);
		mask_out |= MLX4DV_QP_MASK_UAR_MMAP_OFFSET;
	}
	out->comp_mask = mask_out;
	/* Polled: BlueFlame posts ring no register, and cmd_fd maps the UAR a second time. */
	return rocemu_dv_direct_doorbells(qp_in->context, &qp->dv_direct, ROCEMU_DIRECT_QP, qp->qpn,
					  NULL, NULL);
}

static int dv_get_cq(struct ibv_cq *cq_in, struct mlx4dv_cq *out)
{
	struct rocemu_cq *cq = to_rcq(cq_in);
	uint64_t mask_out = 0;
	int err;

	err = rocemu_dv_direct_doorbells(cq_in->context, &cq->dv_owned, ROCEMU_DIRECT_CQ, cq->cqn,
					 cq->dbrec, cq->dbrec + 2);
	if (err)
		return err;
	out->buf.buf = cq->buf;
	out->buf.length = (size_t)cq->ncqe * cq->cqe_size;
	out->cqn = cq->cqn;
	/* The doorbell record: consumer index, then the arm word (ring_mlx4.h). */
	out->set_ci_db = &cq->dbrec[0];
	out->arm_db = &cq->dbrec[1];
	out->arm_sn = (int)cq->arm_sn;
	out->cqe_size = (int)cq->cqe_size;
	out->cqe_cnt = cq->ncqe;
	if (out->comp_mask & MLX4DV_CQ_MASK_UAR) {
		out->cq_uar = rocemu_dv_cq_uar_sink;
		mask_out |= MLX4DV_CQ_MASK_UAR;
	}
	out->comp_mask = mask_out;
	return 0;
}

static void dv_get_srq(struct ibv_srq *srq_in, struct mlx4dv_srq *out)
{
	struct rocemu_srq *srq = to_rsrq(srq_in);

	out->comp_mask = 0;
	out->buf.buf = srq->buf;
	out->buf.length = (size_t)srq->layout.wqe_cnt << srq->layout.wqe_shift;
	out->wqe_shift = (int)srq->layout.wqe_shift;
	out->head = (int)srq->head;
	out->tail = (int)srq->tail;
	out->db = srq->db;
}

/* A WQ's ring is its RQ alone, at the start of its buffer. */
static void dv_get_rwq(struct ibv_wq *wq_in, struct mlx4dv_rwq *out)
{
	struct rocemu_wq *wq = to_rwq(wq_in);

	out->comp_mask = 0;
	out->buf.buf = wq->rq.buf;
	out->buf.length = (size_t)wq->rq.wqe_cnt << wq->rq.wqe_shift;
	out->rdb = wq->dbrec;
	out->rq.wqe_cnt = wq->rq.wqe_cnt;
	out->rq.wqe_shift = (int)wq->rq.wqe_shift;
	out->rq.offset = 0;
}

/* The first object names the context, as in libmlx4. */
static struct ibv_context *obj_context(const struct mlx4dv_obj *obj, uint64_t obj_type)
{
	if (obj_type & MLX4DV_OBJ_QP)
		return obj->qp.in->context;
	if (obj_type & MLX4DV_OBJ_CQ)
		return obj->cq.in->context;
	if (obj_type & MLX4DV_OBJ_SRQ)
		return obj->srq.in->context;
	if (obj_type & MLX4DV_OBJ_RWQ)
		return obj->rwq.in->context;
	return NULL;
}

int mlx4dv_init_obj(struct mlx4dv_obj *obj, uint64_t obj_type)
{
	struct ibv_context *context = obj_context(obj, obj_type);
	int ret = 0;

	if (!rocemu_ctx_is_ours(context))
		return REAL(mlx4dv_init_obj)(obj, obj_type);
	if (!rocemu_dv_plays(context->device, ROCEMU_MODEL_CX3))
		return EOPNOTSUPP;
	if (obj_type & MLX4DV_OBJ_QP)
		ret = dv_get_qp(obj->qp.in, obj->qp.out);
	if (!ret && (obj_type & MLX4DV_OBJ_CQ))
		ret = dv_get_cq(obj->cq.in, obj->cq.out);
	if (!ret && (obj_type & MLX4DV_OBJ_SRQ))
		dv_get_srq(obj->srq.in, obj->srq.out);
	if (!ret && (obj_type & MLX4DV_OBJ_RWQ))
		dv_get_rwq(obj->rwq.in, obj->rwq.out);
	return ret;
}
