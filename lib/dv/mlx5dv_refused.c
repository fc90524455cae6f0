/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Direct verbs an emulated device does not offer: DevX, steering and
 * flows (but for the matchers of mlx5dv_flow_matcher.c), crypto,
 * scheduling elements, LAG, device memory, VAR/PP, AV-QP mappings, VFIO,
 * and all of mlx4dv. On an emulated object each
 * answers as mlx5 does for a device without the capability or a context
 * whose ops lack it: EOPNOTSUPP (the errno value, or NULL with errno).
 * Real objects go to the real provider.
 */
#include "lib/shim.h"
#include "lib/dv/dv.h"

int _mlx5dv_query_port(struct ibv_context *context, uint32_t port_num,
		       struct mlx5_ib_uapi_query_port *info, size_t info_len)
{
	if (rocemu_ctx_is_ours(context))
		return EOPNOTSUPP;
	return REAL(_mlx5dv_query_port)(context, port_num, info, info_len);
}

struct ibv_dm *mlx5dv_alloc_dm(struct ibv_context *context, struct ibv_alloc_dm_attr *dm_attr,
			       struct mlx5dv_alloc_dm_attr *mlx5_dm_attr)
{
	if (rocemu_ctx_is_ours(context))
		return dv_refuse();
	return REAL(mlx5dv_alloc_dm)(context, dm_attr, mlx5_dm_attr);
}

struct mlx5dv_var *mlx5dv_alloc_var(struct ibv_context *context, uint32_t flags)
{
	if (rocemu_ctx_is_ours(context))
		return dv_refuse();
	return REAL(mlx5dv_alloc_var)(context, flags);
}

struct ibv_flow_action *mlx5dv_create_flow_action_esp(struct ibv_context *ctx,
						      struct ibv_flow_action_esp_attr *esp,
						      struct mlx5dv_flow_action_esp *mlx5_attr)
{
	if (rocemu_ctx_is_ours(ctx))
		return dv_refuse();
	return REAL(mlx5dv_create_flow_action_esp)(ctx, esp, mlx5_attr);
}

struct ibv_flow_action *
mlx5dv_create_flow_action_modify_header(struct ibv_context *ctx, size_t actions_sz,
					uint64_t actions[],
					enum mlx5_ib_uapi_flow_table_type ft_type)
{
	if (rocemu_ctx_is_ours(ctx))
		return dv_refuse();
	return REAL(mlx5dv_create_flow_action_modify_header)(ctx, actions_sz, actions, ft_type);
}

struct ibv_flow_action *mlx5dv_create_flow_action_packet_reformat(
	struct ibv_context *ctx, size_t data_sz, void *data,
	enum mlx5_ib_uapi_flow_action_packet_reformat_type reformat_type,
	enum mlx5_ib_uapi_flow_table_type ft_type)
{
	if (rocemu_ctx_is_ours(ctx))
		return dv_refuse();
	return REAL(mlx5dv_create_flow_action_packet_reformat)(ctx, data_sz, data, reformat_type,
							       ft_type);
}

struct mlx5dv_steering_anchor *
mlx5dv_create_steering_anchor(struct ibv_context *context, struct mlx5dv_steering_anchor_attr *attr)
{
	if (rocemu_ctx_is_ours(context))
		return dv_refuse();
	return REAL(mlx5dv_create_steering_anchor)(context, attr);
}

int mlx5dv_crypto_login(struct ibv_context *context, struct mlx5dv_crypto_login_attr *login_attr)
{
	if (rocemu_ctx_is_ours(context))
		return EOPNOTSUPP;
	return REAL(mlx5dv_crypto_login)(context, login_attr);
}

struct mlx5dv_crypto_login_obj *
mlx5dv_crypto_login_create(struct ibv_context *context,
			   struct mlx5dv_crypto_login_attr_ex *login_attr)
{
	if (rocemu_ctx_is_ours(context))
		return dv_refuse();
	return REAL(mlx5dv_crypto_login_create)(context, login_attr);
}

int mlx5dv_crypto_login_query_state(struct ibv_context *context,
				    enum mlx5dv_crypto_login_state *state)
{
	if (rocemu_ctx_is_ours(context))
		return EOPNOTSUPP;
	return REAL(mlx5dv_crypto_login_query_state)(context, state);
}

int mlx5dv_crypto_logout(struct ibv_context *context)
{
	if (rocemu_ctx_is_ours(context))
		return EOPNOTSUPP;
	return REAL(mlx5dv_crypto_logout)(context);
}

struct mlx5dv_dek *mlx5dv_dek_create(struct ibv_context *context,
				     struct mlx5dv_dek_init_attr *init_attr)
{
	if (rocemu_ctx_is_ours(context))
		return dv_refuse();
	return REAL(mlx5dv_dek_create)(context, init_attr);
}

struct mlx5dv_devx_msi_vector *mlx5dv_devx_alloc_msi_vector(struct ibv_context *ibctx)
{
	if (rocemu_ctx_is_ours(ibctx))
		return dv_refuse();
	return REAL(mlx5dv_devx_alloc_msi_vector)(ibctx);
}

struct mlx5dv_devx_uar *mlx5dv_devx_alloc_uar(struct ibv_context *context, uint32_t flags)
{
	if (rocemu_ctx_is_ours(context))
		return dv_refuse();
	return REAL(mlx5dv_devx_alloc_uar)(context, flags);
}

int mlx5dv_devx_cq_modify(struct ibv_cq *cq, const void *in, size_t inlen, void *out, size_t outlen)
{
	if (cq && rocemu_ctx_is_ours(cq->context))
		return EOPNOTSUPP;
	return REAL(mlx5dv_devx_cq_modify)(cq, in, inlen, out, outlen);
}

int mlx5dv_devx_cq_query(struct ibv_cq *cq, const void *in, size_t inlen, void *out, size_t outlen)
{
	if (cq && rocemu_ctx_is_ours(cq->context))
		return EOPNOTSUPP;
	return REAL(mlx5dv_devx_cq_query)(cq, in, inlen, out, outlen);
}

struct mlx5dv_devx_cmd_comp *mlx5dv_devx_create_cmd_comp(struct ibv_context *context)
{
	if (rocemu_ctx_is_ours(context))
		return dv_refuse();
	return REAL(mlx5dv_devx_create_cmd_comp)(context);
}

struct mlx5dv_devx_eq *mlx5dv_devx_create_eq(struct ibv_context *ibctx, const void *in,
					     size_t inlen, void *out, size_t outlen)
{
	if (rocemu_ctx_is_ours(ibctx))
		return dv_refuse();
	return REAL(mlx5dv_devx_create_eq)(ibctx, in, inlen, out, outlen);
}

struct mlx5dv_devx_event_channel *
mlx5dv_devx_create_event_channel(struct ibv_context *context,
				 enum mlx5_ib_uapi_devx_create_event_channel_flags flags)
{
	if (rocemu_ctx_is_ours(context))
		return dv_refuse();
	return REAL(mlx5dv_devx_create_event_channel)(context, flags);
}

int mlx5dv_devx_general_cmd(struct ibv_context *context, const void *in, size_t inlen, void *out,
			    size_t outlen)
{
	if (rocemu_ctx_is_ours(context))
		return EOPNOTSUPP;
	return REAL(mlx5dv_devx_general_cmd)(context, in, inlen, out, outlen);
}

int mlx5dv_devx_ind_tbl_modify(struct ibv_rwq_ind_table *ind_tbl, const void *in, size_t inlen,
			       void *out, size_t outlen)
{
	if (ind_tbl && rocemu_ctx_is_ours(ind_tbl->context))
		return EOPNOTSUPP;
	return REAL(mlx5dv_devx_ind_tbl_modify)(ind_tbl, in, inlen, out, outlen);
}

int mlx5dv_devx_ind_tbl_query(struct ibv_rwq_ind_table *ind_tbl, const void *in, size_t inlen,
			      void *out, size_t outlen)
{
	if (ind_tbl && rocemu_ctx_is_ours(ind_tbl->context))
		return EOPNOTSUPP;
	return REAL(mlx5dv_devx_ind_tbl_query)(ind_tbl, in, inlen, out, outlen);
}

struct mlx5dv_devx_obj *mlx5dv_devx_obj_create(struct ibv_context *context, const void *in,
					       size_t inlen, void *out, size_t outlen)
{
	if (rocemu_ctx_is_ours(context))
		return dv_refuse();
	return REAL(mlx5dv_devx_obj_create)(context, in, inlen, out, outlen);
}

int mlx5dv_devx_qp_modify(struct ibv_qp *qp, const void *in, size_t inlen, void *out, size_t outlen)
{
	if (qp && rocemu_ctx_is_ours(qp->context))
		return EOPNOTSUPP;
	return REAL(mlx5dv_devx_qp_modify)(qp, in, inlen, out, outlen);
}

int mlx5dv_devx_qp_query(struct ibv_qp *qp, const void *in, size_t inlen, void *out, size_t outlen)
{
	if (qp && rocemu_ctx_is_ours(qp->context))
		return EOPNOTSUPP;
	return REAL(mlx5dv_devx_qp_query)(qp, in, inlen, out, outlen);
}

int mlx5dv_devx_query_eqn(struct ibv_context *context, uint32_t vector, uint32_t *eqn)
{
	if (rocemu_ctx_is_ours(context))
		return EOPNOTSUPP;
	return REAL(mlx5dv_devx_query_eqn)(context, vector, eqn);
}

int mlx5dv_devx_srq_modify(struct ibv_srq *srq, const void *in, size_t inlen, void *out,
			   size_t outlen)
{
	if (srq && rocemu_ctx_is_ours(srq->context))
		return EOPNOTSUPP;
	return REAL(mlx5dv_devx_srq_modify)(srq, in, inlen, out, outlen);
}

int mlx5dv_devx_srq_query(struct ibv_srq *srq, const void *in, size_t inlen, void *out,
			  size_t outlen)
{
	if (srq && rocemu_ctx_is_ours(srq->context))
		return EOPNOTSUPP;
	return REAL(mlx5dv_devx_srq_query)(srq, in, inlen, out, outlen);
}

struct mlx5dv_devx_umem *mlx5dv_devx_umem_reg(struct ibv_context *ctx, void *addr, size_t size,
					      uint32_t access)
{
	if (rocemu_ctx_is_ours(ctx))
		return dv_refuse();
	return REAL(mlx5dv_devx_umem_reg)(ctx, addr, size, access);
}

struct mlx5dv_devx_umem *mlx5dv_devx_umem_reg_ex(struct ibv_context *ctx,
						 struct mlx5dv_devx_umem_in *umem_in)
{
	if (rocemu_ctx_is_ours(ctx))
		return dv_refuse();
	return REAL(mlx5dv_devx_umem_reg_ex)(ctx, umem_in);
}

int mlx5dv_devx_wq_modify(struct ibv_wq *wq, const void *in, size_t inlen, void *out, size_t outlen)
{
	if (wq && rocemu_ctx_is_ours(wq->context))
		return EOPNOTSUPP;
	return REAL(mlx5dv_devx_wq_modify)(wq, in, inlen, out, outlen);
}

int mlx5dv_devx_wq_query(struct ibv_wq *wq, const void *in, size_t inlen, void *out, size_t outlen)
{
	if (wq && rocemu_ctx_is_ours(wq->context))
		return EOPNOTSUPP;
	return REAL(mlx5dv_devx_wq_query)(wq, in, inlen, out, outlen);
}

void *mlx5dv_dm_map_op_addr(struct ibv_dm *dm, uint8_t op)
{
	if (dm && rocemu_ctx_is_ours(dm->context))
		return dv_refuse();
	return REAL(mlx5dv_dm_map_op_addr)(dm, op);
}

struct mlx5dv_dr_action *mlx5dv_dr_action_create_dest_ibv_qp(struct ibv_qp *ibqp)
{
	if (ibqp && rocemu_ctx_is_ours(ibqp->context))
		return dv_refuse();
	return REAL(mlx5dv_dr_action_create_dest_ibv_qp)(ibqp);
}

struct mlx5dv_dr_domain *mlx5dv_dr_domain_create(struct ibv_context *ctx,
						 enum mlx5dv_dr_domain_type type)
{
	if (rocemu_ctx_is_ours(ctx))
		return dv_refuse();
	return REAL(mlx5dv_dr_domain_create)(ctx, type);
}

int mlx5dv_map_ah_to_qp(struct ibv_ah *ah, uint32_t qp_num)
{
	if (ah && rocemu_ctx_is_ours(ah->context))
		return EOPNOTSUPP;
	return REAL(mlx5dv_map_ah_to_qp)(ah, qp_num);
}

int mlx5dv_modify_qp_lag_port(struct ibv_qp *qp, uint8_t port_num)
{
	if (qp && rocemu_ctx_is_ours(qp->context))
		return EOPNOTSUPP;
	return REAL(mlx5dv_modify_qp_lag_port)(qp, port_num);
}

int mlx5dv_modify_qp_sched_elem(struct ibv_qp *qp, const struct mlx5dv_sched_leaf *requestor,
				const struct mlx5dv_sched_leaf *responder)
{
	if (qp && rocemu_ctx_is_ours(qp->context))
		return EOPNOTSUPP;
	return REAL(mlx5dv_modify_qp_sched_elem)(qp, requestor, responder);
}

struct mlx5dv_pp *mlx5dv_pp_alloc(struct ibv_context *context, size_t pp_context_sz,
				  const void *pp_context, uint32_t flags)
{
	if (rocemu_ctx_is_ours(context))
		return dv_refuse();
	return REAL(mlx5dv_pp_alloc)(context, pp_context_sz, pp_context, flags);
}

int mlx5dv_query_qp_lag_port(struct ibv_qp *qp, uint8_t *port_num, uint8_t *active_port_num)
{
	if (qp && rocemu_ctx_is_ours(qp->context))
		return EOPNOTSUPP;
	return REAL(mlx5dv_query_qp_lag_port)(qp, port_num, active_port_num);
}

struct mlx5dv_sched_leaf *mlx5dv_sched_leaf_create(struct ibv_context *context,
						   const struct mlx5dv_sched_attr *sched_attr)
{
	if (rocemu_ctx_is_ours(context))
		return dv_refuse();
	return REAL(mlx5dv_sched_leaf_create)(context, sched_attr);
}

struct mlx5dv_sched_node *mlx5dv_sched_node_create(struct ibv_context *context,
						   const struct mlx5dv_sched_attr *sched_attr)
{
	if (rocemu_ctx_is_ours(context))
		return dv_refuse();
	return REAL(mlx5dv_sched_node_create)(context, sched_attr);
}

int mlx5dv_set_context_attr(struct ibv_context *context, enum mlx5dv_set_ctx_attr_type type,
			    void *attr)
{
	if (rocemu_ctx_is_ours(context))
		return EOPNOTSUPP;
	return REAL(mlx5dv_set_context_attr)(context, type, attr);
}

int mlx5dv_vfio_process_events(struct ibv_context *context)
{
	if (rocemu_ctx_is_ours(context))
		return EOPNOTSUPP;
	return REAL(mlx5dv_vfio_process_events)(context);
}
