/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * mlx5dv_init_obj: the real rings of emulated objects, as mlx5's
 * mlx5dv_get_qp/cq/srq/av/pd give them. The daemon is told of each QP and
 * CQ handed out, since the program will ring their doorbells without the
 * shim (emulator/sched/direct.c); a CQ handed out is the program's for the
 * consumer index, so the shim no longer cleans it.
 */
#include "lib/shim.h"
#include "lib/dv/dv.h"

#include "rocemu/log.h"

static int dv_get_qp(struct ibv_qp *qp_in, struct mlx5dv_qp *out)
{
	struct rocemu_qp *qp = to_rqp(qp_in);
	uint64_t mask_out = 0;

	out->dbrec = qp->dbrec;
	out->sq.buf = qp->sq.buf;
	out->sq.wqe_cnt = qp->sq.wqe_cnt;
	out->sq.stride = ROCEMU_WQE_BB;
	out->rq.buf = qp->rq.buf;
	out->rq.wqe_cnt = qp->rq.wqe_cnt;
	out->rq.stride = qp->rq.wqe_cnt ? 1u << qp->rq.wqe_shift : 0;
	out->bf.reg = qp->sq.bf;
	/* Two halves, as mlx5 alternates between them (bf.size is one half). */
	out->bf.size = qp->sq.bf_half;
	/* No UAR to mmap: the register lives in the QP's memfd. */
	if (out->comp_mask & MLX5DV_QP_MASK_RAW_QP_HANDLES) {
		/* TIR, TIS, RQ and SQ objects exist only for raw packet QPs: here all the QP's number. */
		out->tirn = out->tisn = out->rqn = out->sqn =
			qp->type == IBV_QPT_RAW_PACKET ? qp->qpn : 0;
		mask_out |= MLX5DV_QP_MASK_RAW_QP_HANDLES;
	}
	if (out->comp_mask & MLX5DV_QP_MASK_RAW_QP_TIR_ADDR) {
		out->tir_icm_addr = 0;
		mask_out |= MLX5DV_QP_MASK_RAW_QP_TIR_ADDR;
	}
	out->comp_mask = mask_out;
	/* The doorbell record and both BlueFlame halves: one page of the QP's memfd. */
	return rocemu_dv_direct_doorbells(qp_in->context, &qp->dv_direct, ROCEMU_DIRECT_QP, qp->qpn,
					  qp->map ? (void *)qp->dbrec : NULL,
					  qp->map ? qp->sq.bf + 2 * qp->sq.bf_half : NULL);
}

static int dv_get_cq(struct ibv_cq *cq_in, struct mlx5dv_cq *out)
{
	struct rocemu_cq *cq = to_rcq(cq_in);
	int err;

	/* Its arm word is in the doorbell record; the cq_uar writes land in a page nobody reads. */
	err = rocemu_dv_direct_doorbells(cq_in->context, &cq->dv_owned, ROCEMU_DIRECT_CQ, cq->cqn,
					 cq->dbrec, cq->dbrec + 2);
	if (err)
		return err;
	out->comp_mask = 0;
	out->cqn = cq->cqn;
	out->cqe_cnt = cq->ncqe;
	out->cqe_size = cq->cqe_size;
	out->buf = cq->buf;
	out->dbrec = cq->dbrec;
	out->cq_uar = rocemu_dv_cq_uar_sink;
	return 0;
}

static int dv_get_srq(struct ibv_srq *srq_in, struct mlx5dv_srq *out)
{
	struct rocemu_srq *srq = to_rsrq(srq_in);
	uint64_t mask_out = 0;

	out->buf = srq->buf;
	out->dbrec = srq->db;
	out->stride = 1u << srq->layout.wqe_shift;
	out->head = srq->head;
	out->tail = srq->tail;
	if (out->comp_mask & MLX5DV_SRQ_MASK_SRQN) {
		out->srqn = srq->srqn;
		mask_out |= MLX5DV_SRQ_MASK_SRQN;
	}
	out->comp_mask = mask_out;
	return 0;
}

/*
 * mlx5dv_get_rwq: the WQ's RQ ring and its doorbell record's receive
 * counter; the program posts there itself (the daemon reads the record
 * whenever a frame comes, no doorbell to watch).
 */
static int dv_get_rwq(struct ibv_wq *wq_in, struct mlx5dv_rwq *out)
{
	struct rocemu_wq *wq = to_rwq(wq_in);

	out->comp_mask = 0;
	out->buf = wq->rq.buf;
	out->dbrec = wq->dbrec;
	out->wqe_cnt = wq->rq.wqe_cnt;
	out->stride = 1u << wq->rq.wqe_shift;
	return 0;
}

/* The first object's context decides, as in mlx5's get_context_from_obj. */
static struct ibv_context *obj_context(const struct mlx5dv_obj *obj, uint64_t obj_type)
{
	if (obj_type & MLX5DV_OBJ_QP)
		return obj->qp.in->context;
	if (obj_type & MLX5DV_OBJ_CQ)
		return obj->cq.in->context;
	if (obj_type & MLX5DV_OBJ_SRQ)
		return obj->srq.in->context;
	if (obj_type & MLX5DV_OBJ_RWQ)
		return obj->rwq.in->context;
	if (obj_type & MLX5DV_OBJ_DM)
		return obj->dm.in->context;
	if (obj_type & MLX5DV_OBJ_AH)
		return obj->ah.in->context;
	if (obj_type & MLX5DV_OBJ_PD)
		return obj->pd.in->context;
	return NULL;
}

int mlx5dv_init_obj(struct mlx5dv_obj *obj, uint64_t obj_type)
{
	struct ibv_context *context = obj_context(obj, obj_type);
	int ret = 0;

	if (!context)
		return EINVAL;
	if (!rocemu_ctx_is_ours(context))
		return REAL(mlx5dv_init_obj)(obj, obj_type);
	if (!rocemu_dv_plays(context->device, ROCEMU_MODEL_CX5))
		return EOPNOTSUPP;
	if (obj_type & MLX5DV_OBJ_QP)
		ret = dv_get_qp(obj->qp.in, obj->qp.out);
	if (!ret && (obj_type & MLX5DV_OBJ_CQ))
		ret = dv_get_cq(obj->cq.in, obj->cq.out);
	if (!ret && (obj_type & MLX5DV_OBJ_SRQ))
		ret = dv_get_srq(obj->srq.in, obj->srq.out);
	if (!ret && (obj_type & MLX5DV_OBJ_RWQ))
		ret = dv_get_rwq(obj->rwq.in, obj->rwq.out);
	if (!ret && (obj_type & MLX5DV_OBJ_DM))
		ret = rocemu_dm_dv(obj->dm.in, obj->dm.out);
	if (!ret && (obj_type & MLX5DV_OBJ_AH)) {
		obj->ah.out->comp_mask = 0;
		obj->ah.out->av = &to_rah(obj->ah.in)->av;
	}
	if (!ret && (obj_type & MLX5DV_OBJ_PD)) {
		obj->pd.out->comp_mask = 0;
		obj->pd.out->pdn = to_rpd(obj->pd.in)->pdn;
	}
	return ret;
}
