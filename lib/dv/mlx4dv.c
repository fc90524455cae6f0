/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * mlx4 direct verbs: an emulated device is no ConnectX-3, so each answers
 * EOPNOTSUPP on its objects, as libmlx4 answers for a context without
 * the op; real objects go to libmlx4.
 */
#include "lib/shim.h"
#include "lib/dv/dv.h"

#include <infiniband/mlx4dv.h>

struct ibv_qp *mlx4dv_create_qp(struct ibv_context *context, struct ibv_qp_init_attr_ex *attr,
				struct mlx4dv_qp_init_attr *mlx4_qp_attr)
{
	if (rocemu_ctx_is_ours(context))
		return dv_refuse();
	return REAL(mlx4dv_create_qp)(context, attr, mlx4_qp_attr);
}

int mlx4dv_query_device(struct ibv_context *ctx_in, struct mlx4dv_context *attrs_out)
{
	if (rocemu_ctx_is_ours(ctx_in))
		return EOPNOTSUPP;
	return REAL(mlx4dv_query_device)(ctx_in, attrs_out);
}

int mlx4dv_set_context_attr(struct ibv_context *context, enum mlx4dv_set_ctx_attr_type attr_type,
			    void *attr)
{
	if (rocemu_ctx_is_ours(context))
		return EOPNOTSUPP;
	return REAL(mlx4dv_set_context_attr)(context, attr_type, attr);
}

/* The first object names the context, as in libmlx4. */
int mlx4dv_init_obj(struct mlx4dv_obj *obj, uint64_t obj_type)
{
	struct ibv_context *ctx = NULL;

	if (obj_type & MLX4DV_OBJ_QP)
		ctx = obj->qp.in->context;
	else if (obj_type & MLX4DV_OBJ_CQ)
		ctx = obj->cq.in->context;
	else if (obj_type & MLX4DV_OBJ_SRQ)
		ctx = obj->srq.in->context;
	else if (obj_type & MLX4DV_OBJ_RWQ)
		ctx = obj->rwq.in->context;
	return rocemu_ctx_is_ours(ctx) ? EOPNOTSUPP : REAL(mlx4dv_init_obj)(obj, obj_type);
}
