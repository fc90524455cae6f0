/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * mlx5dv_create_cq, mlx5dv_create_qp and mlx5dv_create_wq on an emulated
 * device: the mlx5 attributes are checked as mlx5's create_cq, create_qp
 * and create_wq check them on a ConnectX without CQE compression, CQE
 * padding, signature pipelining or striding RQ (create_flags:
 * mlx5dv_qp_flags.c); what is left is an ordinary CQ, WQ or QP, an RC QP
 * with the mkey send ops (mlx5dv_mkey.c) when asked, raw WQEs on any
 * (mlx5dv_raw_wqe.c), or a DC QP (mlx5dv_dc.c).
 */
#include "lib/shim.h"
#include "lib/dv/dv.h"

#define DV_CQ_SUPPORTED_COMP_MASK                                                     \
	((uint64_t)(MLX5DV_CQ_INIT_ATTR_MASK_COMPRESSED_CQE | MLX5DV_CQ_INIT_ATTR_MASK_FLAGS | \
		    MLX5DV_CQ_INIT_ATTR_MASK_CQE_SIZE))
#define DV_QP_SUPPORTED_COMP_MASK                                                        \
	((uint64_t)(MLX5DV_QP_INIT_ATTR_MASK_QP_CREATE_FLAGS | MLX5DV_QP_INIT_ATTR_MASK_DC | \
		    MLX5DV_QP_INIT_ATTR_MASK_SEND_OPS_FLAGS |                              \
		    MLX5DV_QP_INIT_ATTR_MASK_DCI_STREAMS))
/* mlx5's checks of mlx5cq_attr (create_cq, get_cqe_size). Returns 0 or the errno value. */
static int dv_cq_attr_check(const struct mlx5dv_cq_init_attr *attr)
{
	if (!attr)
		return 0;
	if (attr->comp_mask & ~DV_CQ_SUPPORTED_COMP_MASK)
		return EINVAL;
	if ((attr->comp_mask & MLX5DV_CQ_INIT_ATTR_MASK_CQE_SIZE) &&
	    attr->cqe_size != sizeof(struct mlx5_cqe64) &&
	    attr->cqe_size != 2 * sizeof(struct mlx5_cqe64))
		return EINVAL;
	/* No compression caps: "CQE Compression is not supported". */
	if (attr->comp_mask & MLX5DV_CQ_INIT_ATTR_MASK_COMPRESSED_CQE)
		return EINVAL;
	/* Unknown flags, or CQE padding, which needs 128-byte CQEs and the cap. */
	if ((attr->comp_mask & MLX5DV_CQ_INIT_ATTR_MASK_FLAGS) && attr->flags)
		return EINVAL;
	return 0;
}

struct ibv_cq_ex *mlx5dv_create_cq(struct ibv_context *context, struct ibv_cq_init_attr_ex *cq_attr,
				   struct mlx5dv_cq_init_attr *mlx5_cq_attr)
{
	int err;

	if (!rocemu_ctx_is_ours(context))
		return REAL(mlx5dv_create_cq)(context, cq_attr, mlx5_cq_attr);
	if (!rocemu_dv_plays(context->device, ROCEMU_MODEL_CX5))
		return dv_refuse();
	err = dv_cq_attr_check(mlx5_cq_attr);
	if (err)
		return dv_fail(err);
	return rocemu_cq_create_ex(context, cq_attr,
				   mlx5_cq_attr && (mlx5_cq_attr->comp_mask & MLX5DV_CQ_INIT_ATTR_MASK_CQE_SIZE) ?
					   mlx5_cq_attr->cqe_size : rocemu_cqe_size_env());
}

/*
 * mlx5's checks of mlx5_qp_attr (create_qp), and the vendor flags it
 * gives the kernel. Returns 0 or the errno value.
 */
static int dv_qp_attr_check(const struct ibv_qp_init_attr_ex *attr,
			    const struct mlx5dv_qp_init_attr *dv, uint32_t *vendor_flags)
{
	int err;

	if (attr->qp_type == IBV_QPT_DRIVER && !(dv && (dv->comp_mask & MLX5DV_QP_INIT_ATTR_MASK_DC)))
		return EINVAL;
	if (!dv)
		return 0;
	if (dv->comp_mask & ~DV_QP_SUPPORTED_COMP_MASK)
		return EINVAL;
	if ((dv->comp_mask & MLX5DV_QP_INIT_ATTR_MASK_DC) && attr->qp_type != IBV_QPT_DRIVER)
		return EINVAL;
	if (dv->comp_mask & MLX5DV_QP_INIT_ATTR_MASK_QP_CREATE_FLAGS) {
		err = rocemu_dv_qp_create_flags(attr, dv->create_flags, vendor_flags);
		if (err)
			return err;
	}
	/* Of the mlx5 send operations, raw WQEs on any type, the mkey ones on RC (mlx5_qp_fill_wr_pfns): no memcpy. */
	if ((dv->comp_mask & MLX5DV_QP_INIT_ATTR_MASK_SEND_OPS_FLAGS) &&
	    ((dv->send_ops_flags & ~(ROCEMU_DV_MKEY_OPS | MLX5DV_QP_EX_WITH_RAW_WQE)) ||
	     ((dv->send_ops_flags & ROCEMU_DV_MKEY_OPS) && attr->qp_type != IBV_QPT_RC)))
		return EOPNOTSUPP;
	return 0;
}

struct ibv_qp *mlx5dv_create_qp(struct ibv_context *context, struct ibv_qp_init_attr_ex *qp_attr,
				struct mlx5dv_qp_init_attr *mlx5_qp_attr)
{
	uint32_t vendor_flags = rocemu_qp_vendor_default();
	uint64_t dv_ops = 0;
	struct ibv_qp *qp;
	int err;

	if (!rocemu_ctx_is_ours(context))
		return REAL(mlx5dv_create_qp)(context, qp_attr, mlx5_qp_attr);
	if (!rocemu_dv_plays(context->device, ROCEMU_MODEL_CX5))
		return dv_refuse();
	err = dv_qp_attr_check(qp_attr, mlx5_qp_attr, &vendor_flags);
	if (err)
		return dv_fail(err);
	if (mlx5_qp_attr && (mlx5_qp_attr->comp_mask & MLX5DV_QP_INIT_ATTR_MASK_DC))
		return rocemu_dc_qp_create(context, qp_attr, mlx5_qp_attr, vendor_flags);
	if (mlx5_qp_attr && (mlx5_qp_attr->comp_mask & MLX5DV_QP_INIT_ATTR_MASK_SEND_OPS_FLAGS))
		dv_ops = mlx5_qp_attr->send_ops_flags;
	if (dv_ops & ROCEMU_DV_MKEY_OPS) {
		qp = rocemu_dv_mkey_qp_create(context, qp_attr, vendor_flags);
	} else if (dv_ops) {
		/* libmlx5 makes the QP's builders whenever mlx5 send ops are asked. */
		if (!(qp_attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS)) {
			qp_attr->comp_mask |= IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
			qp_attr->send_ops_flags = rocemu_qp_type_send_ops(qp_attr->qp_type);
		}
		qp = rocemu_qp_create(context, qp_attr, vendor_flags);
	} else {
		return rocemu_qp_create(context, qp_attr, vendor_flags);
	}
	if (qp && (dv_ops & MLX5DV_QP_EX_WITH_RAW_WQE))
		rocemu_dv_raw_wqe_enable(qp);
	return qp;
}

/*
 * mlx5's create_wq against striding_rq_caps, all 0 here (mlx5dv.c): a
 * stride or stride count past them is EINVAL in libmlx5, and what passes
 * (both logs 0) EOPNOTSUPP in the kernel, which has no striding RQ.
 */
struct ibv_wq *mlx5dv_create_wq(struct ibv_context *context, struct ibv_wq_init_attr *wq_init_attr,
				struct mlx5dv_wq_init_attr *mlx5_wq_attr)
{
	const struct mlx5dv_striding_rq_init_attr *striding;

	if (!rocemu_ctx_is_ours(context))
		return REAL(mlx5dv_create_wq)(context, wq_init_attr, mlx5_wq_attr);
	if (!rocemu_dv_plays(context->device, ROCEMU_MODEL_CX5))
		return dv_refuse();
	if (!wq_init_attr)
		return dv_fail(EINVAL);
	if (mlx5_wq_attr && (mlx5_wq_attr->comp_mask & MLX5DV_WQ_INIT_ATTR_MASK_STRIDING_RQ)) {
		striding = &mlx5_wq_attr->striding_rq_attrs;
		return dv_fail(striding->single_stride_log_num_of_bytes ||
			       striding->single_wqe_log_num_of_strides ? EINVAL : EOPNOTSUPP);
	}
	return rocemu_create_wq_op(context, wq_init_attr);
}
