/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The mlx4 direct verbs of a context: on an emulated ConnectX-3 each
 * answers as libmlx4 does (mlx4dv_init_obj in mlx4dv_obj.c); on an
 * emulated device of another model EOPNOTSUPP, as for a context without
 * the op; real objects go to libmlx4.
 */
#include "lib/shim.h"
#include "lib/dv/dv.h"

/* libmlx4's MLX4_CREATE_QP_SUP_COMP_MASK: what its create_qp_ex takes besides RSS. */
#define MLX4_QP_COMP_MASK (IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_XRCD | \
			   IBV_QP_INIT_ATTR_CREATE_FLAGS | IBV_QP_INIT_ATTR_MAX_TSO_HEADER)

/* An emulated context the mlx4 direct verbs serve: one of a ConnectX-3. */
static bool mlx4dv_served(struct ibv_context *context)
{
	return rocemu_dv_plays(context->device, ROCEMU_MODEL_CX3);
}

/*
 * libmlx4's create_qp_ex with mlx4_qp_attr: the same comp_mask checks
 * (ENOTSUP, then EINVAL for mlx4dv's own), the QP made by the verbs
 * path, and the receive stride granted returned in inl_recv_sz whether
 * asked or not, as libmlx4 does. An RSS QP takes none of it.
 */
struct ibv_qp *mlx4dv_create_qp(struct ibv_context *context, struct ibv_qp_init_attr_ex *attr,
				struct mlx4dv_qp_init_attr *mlx4_qp_attr)
{
	uint32_t inl_recv_sz = 0;
	struct ibv_qp *qp;

	if (!rocemu_ctx_is_ours(context))
		return REAL(mlx4dv_create_qp)(context, attr, mlx4_qp_attr);
	if (!mlx4dv_served(context))
		return dv_refuse();
	if (attr->comp_mask & (IBV_QP_INIT_ATTR_RX_HASH | IBV_QP_INIT_ATTR_IND_TABLE))
		return rocemu_create_qp_ex_op(context, attr);
	if (attr->comp_mask & ~(uint32_t)MLX4_QP_COMP_MASK)
		return dv_refuse();
	if (mlx4_qp_attr) {
		if (mlx4_qp_attr->comp_mask & ~(uint64_t)(MLX4DV_QP_INIT_ATTR_MASK_RESERVED - 1))
			return dv_fail(EINVAL);
		if (mlx4_qp_attr->comp_mask & MLX4DV_QP_INIT_ATTR_MASK_INL_RECV)
			inl_recv_sz = mlx4_qp_attr->inl_recv_sz;
	}
	/* Past the request's field is past any stride: the daemon refuses it as too large. */
	qp = rocemu_qp_create_inl_recv(context, attr,
				       inl_recv_sz > UINT16_MAX ? UINT16_MAX : (uint16_t)inl_recv_sz);
	if (qp && mlx4_qp_attr)
		mlx4_qp_attr->inl_recv_sz = 1u << to_rqp(qp)->layout.rq_wqe_shift;
	return qp;
}

/* Version 0; a receive WQE may be as large as its most data segments (mlx4_ib's max_inl_recv_sz). */
int mlx4dv_query_device(struct ibv_context *ctx_in, struct mlx4dv_context *attrs_out)
{
	struct ibv_device_attr attr;
	int err;

	if (!rocemu_ctx_is_ours(ctx_in))
		return REAL(mlx4dv_query_device)(ctx_in, attrs_out);
	if (!mlx4dv_served(ctx_in))
		return EOPNOTSUPP;
	err = ibv_query_device(ctx_in, &attr);
	if (err)
		return err;
	attrs_out->version = 0;
	attrs_out->comp_mask = 0;
	attrs_out->max_inl_recv_sz = (uint32_t)attr.max_sge * sizeof(struct mlx4_wqe_data_seg);
	return 0;
}

/* Kept unchecked, as libmlx4 keeps them; an unknown type is ENOTSUP. */
int mlx4dv_set_context_attr(struct ibv_context *context, enum mlx4dv_set_ctx_attr_type attr_type,
			    void *attr)
{
	struct rocemu_context *rctx;

	if (!rocemu_ctx_is_ours(context))
		return REAL(mlx4dv_set_context_attr)(context, attr_type, attr);
	if (!mlx4dv_served(context))
		return EOPNOTSUPP;
	rctx = to_rctx(context);
	switch (attr_type) {
	case MLX4DV_SET_CTX_ATTR_LOG_WQS_RANGE_SZ:
		rctx->mlx4_log_wqs_range_sz = *(const uint8_t *)attr;
		return 0;
	case MLX4DV_SET_CTX_ATTR_BUF_ALLOCATORS:
		rctx->mlx4_allocators = *(const struct mlx4dv_ctx_allocators *)attr;
		return 0;
	default:
		return EOPNOTSUPP;
	}
}
