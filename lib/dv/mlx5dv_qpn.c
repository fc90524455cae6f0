/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The mlx5 direct verbs about QP numbers and UDP ports on the wire:
 * mlx5dv_modify_qp_udp_sport (an RC or UC QP in RTS sends from the port
 * given, emulator/obj/qp_path.c) and mlx5dv_reserved_qpn_alloc/dealloc (QPNs
 * no QP gets, emulator/obj/reserved_qpn.c). mlx5dv_map_ah_to_qp, a congestion
 * control hint, is refused as by a device without the AV-QP mapping object
 * (mlx5dv_refused.c).
 */
#include "lib/shim.h"
#include "lib/dv/dv.h"

int mlx5dv_modify_qp_udp_sport(struct ibv_qp *qp, uint16_t udp_sport)
{
	struct rocemu_qp_udp_sport_req req;

	if (!qp || !rocemu_ctx_is_ours(qp->context))
		return REAL(mlx5dv_modify_qp_udp_sport)(qp, udp_sport);
	if (!rocemu_dv_plays(qp->context->device, ROCEMU_MODEL_CX5))
		return EOPNOTSUPP;
	/* mlx5: RC and UC only, in RTS as the provider last set the state. */
	if ((qp->qp_type != IBV_QPT_RC && qp->qp_type != IBV_QPT_UC) || qp->state != IBV_QPS_RTS)
		return EOPNOTSUPP;
	req = (struct rocemu_qp_udp_sport_req){ .qpn = qp->qp_num, .udp_sport = udp_sport };
	return rocemu_errno_value(rocemu_conn_call(&to_rctx(qp->context)->conn,
						   ROCEMU_OP_QP_UDP_SPORT, &req, NULL, NULL, 0));
}

int mlx5dv_reserved_qpn_alloc(struct ibv_context *ctx, uint32_t *qpn)
{
	struct rocemu_reserved_qpn_resp resp;
	int err;

	if (!rocemu_ctx_is_ours(ctx))
		return REAL(mlx5dv_reserved_qpn_alloc)(ctx, qpn);
	if (!rocemu_dv_plays(ctx->device, ROCEMU_MODEL_CX5))
		return EOPNOTSUPP;
	err = rocemu_conn_call(&to_rctx(ctx)->conn, ROCEMU_OP_RESERVED_QPN_ALLOC, NULL, &resp,
			       NULL, 0);
	if (err)
		return rocemu_errno_value(err);
	*qpn = resp.qpn;
	return 0;
}

/* EINVAL for a QPN this context did not reserve, as mlx5 answers. */
int mlx5dv_reserved_qpn_dealloc(struct ibv_context *ctx, uint32_t qpn)
{
	struct rocemu_handle_req req = { .handle = qpn };

	if (!rocemu_ctx_is_ours(ctx))
		return REAL(mlx5dv_reserved_qpn_dealloc)(ctx, qpn);
	if (!rocemu_dv_plays(ctx->device, ROCEMU_MODEL_CX5))
		return EOPNOTSUPP;
	return rocemu_errno_value(rocemu_conn_call(&to_rctx(ctx)->conn,
						   ROCEMU_OP_RESERVED_QPN_DEALLOC, &req, NULL, NULL, 0));
}
